import { type FileHandle, open } from "node:fs/promises";
import { UserError } from "../core/errors.ts";
import { writeTextFile } from "../io/json-file.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../pipeline/stage-contract.ts";
import { curatePaths, keyItem, keyTask, partLabel, readMarker, writeMarker } from "./curate-files.ts";
import { curationEnabled, partitionCount } from "./curation-settings.ts";
import { EXACT_BIT } from "./exact-bit.ts";
import { Forest } from "./forest.ts";
import { PairBuffer, pairsFromBytes, sortPairs } from "./pairs.ts";
import type { SignaturesMarkerData } from "./signatures-stage.ts";

export interface ClustersMarkerData {
  /** Records in a cluster of this partition's candidate pairs, and the (key, root) pairs written. */
  nodes: number;
  exact_nodes: number;
}

/** Pairs [start, end) of a task's `.keys` file. */
async function readPairRange(path: string, start: number, end: number): Promise<BigUint64Array> {
  if (end <= start) return new BigUint64Array(0);
  const handle = await open(path, "r");
  try {
    const bytes = new Uint8Array((end - start) * 16);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, start * 16);
    if (bytesRead !== bytes.length)
      throw new UserError(`${path}: shorter than its marker says; delete the curate/ folder's markers and rerun`);
    return pairsFromBytes(bytes);
  } finally {
    await handle.close();
  }
}

/** The partial forest of a set of edges: (node, root) for every node that is not a root, and the node count. */
function forest(edges: PairBuffer): { pairs: BigUint64Array; nodes: number } {
  const joined = new Forest(edges.view());
  return { pairs: joined.pairs(), nodes: joined.keys.length };
}

/**
 * Stage 2 of curation, one hash-range partition: the pairs of that range from every task's sorted
 * `.keys` file, grouped by hash. Records sharing an exact hash are joined, and records sharing a
 * MinHash band key whose signatures are similar enough (`dedup.min_similarity`); the result is written as two partial forests — every edge ("all") and exact edges only
 * ("exact", to tell exact copies from near ones). Memory: one partition, about 1/partitions of the
 * job's pairs.
 */
export async function runClustersUnit(plan: JobPlan, part: number): Promise<void> {
  const out = plan.config.output.dir;
  const job = jobShas(plan);
  const slices: BigUint64Array[] = [];
  for (const task of plan.tasks) {
    const marker = await readMarker<SignaturesMarkerData>(curatePaths.signaturesDone(out, task.index), job);
    if (!marker) throw new UserError(`curation: task ${task.index} has no signatures yet; run the signatures stage first`);
    const start = marker.data.partitions[part] as number;
    const end = marker.data.partitions[part + 1] as number;
    slices.push(await readPairRange(curatePaths.keys(out, task.index), start, end));
  }
  const all = new BigUint64Array(slices.reduce((sum, s) => sum + s.length, 0));
  let at = 0;
  for (const slice of slices) {
    all.set(slice, at);
    at += slice.length;
  }
  const sorted = sortPairs(all);

  const edges = new PairBuffer();
  const exactEdges = new PairBuffer();
  const similar = new SignatureCheck(plan);
  try {
    for (let i = 0; i < sorted.length; ) {
      const hash = sorted[i] as bigint;
      let j = i + 2;
      while (j < sorted.length && sorted[j] === hash) j += 2;
      if (j - i > 2) await joinGroup(sorted.subarray(i, j), edges, exactEdges, similar);
      i = j;
    }
  } finally {
    await similar.close();
  }
  const joined = forest(edges);
  const exact = forest(exactEdges);
  await writeTextFile(curatePaths.forest(out, part, "all"), bytesOf(joined.pairs));
  await writeTextFile(curatePaths.forest(out, part, "exact"), bytesOf(exact.pairs));
  const data: ClustersMarkerData = { nodes: joined.nodes, exact_nodes: exact.nodes };
  await writeMarker(curatePaths.clustersDone(out, part), job, "clusters", part, data);
}

/**
 * The records sharing one hash (sorted by key). Exact-hash groups are joined as they are. Records
 * sharing a band key are candidates: each is joined to the first earlier member whose full
 * signature agrees on `dedup.min_similarity` of its values, so a pair that collided in one band
 * by chance is not joined, and a group is never joined through its least similar member.
 */
async function joinGroup(group: BigUint64Array, edges: PairBuffer, exactEdges: PairBuffer, similar: SignatureCheck): Promise<void> {
  const members: bigint[] = [];
  let exact = false;
  for (let k = 1; k < group.length; k += 2) {
    const key = group[k] as bigint;
    // Exact-hash pairs carry EXACT_BIT; a band key equal to an exact hash (p ≈ 2^-64) is not an edge.
    if (k === 1) exact = (key & EXACT_BIT) !== 0n;
    else if (((key & EXACT_BIT) !== 0n) !== exact) continue;
    const bare = key & ~EXACT_BIT;
    if (members[members.length - 1] !== bare) members.push(bare); // one record's two bands can share a key
  }
  const first = members[0] as bigint;
  for (let m = 1; m < members.length; m++) {
    const key = members[m] as bigint;
    if (exact) {
      edges.push(first, key);
      exactEdges.push(first, key);
      continue;
    }
    // Large groups (thousands of copies of one boilerplate session) compare with a bounded number of earlier members.
    for (let earlier = 0; earlier < Math.min(m, MAX_COMPARISONS); earlier++) {
      if (await similar.check(members[earlier] as bigint, key)) {
        edges.push(members[earlier] as bigint, key);
        break;
      }
    }
  }
}

/** Earlier members a candidate is compared with before it is left unjoined in that band. */
const MAX_COMPARISONS = 16;

/** Reads records' MinHash signatures from their tasks' files, cached for the partition. */
class SignatureCheck {
  private readonly width: number;
  private readonly threshold: number;
  private readonly out: string;
  private readonly files = new Map<number, FileHandle>();
  private readonly cache = new Map<bigint, Uint32Array>();

  constructor(plan: JobPlan) {
    this.width = plan.config.dedup.bands * plan.config.dedup.rows;
    this.threshold = plan.config.dedup.min_similarity;
    this.out = plan.config.output.dir;
  }

  /** Whether two records' signatures agree on at least `min_similarity` of their values. */
  async check(a: bigint, b: bigint): Promise<boolean> {
    if (this.threshold <= 0) return true;
    const sa = await this.signature(a);
    const sb = await this.signature(b);
    let same = 0;
    for (let i = 0; i < this.width; i++) if (sa[i] === sb[i]) same++;
    return same >= this.threshold * this.width;
  }

  private async signature(key: bigint): Promise<Uint32Array> {
    const cached = this.cache.get(key);
    if (cached) return cached;
    const task = keyTask(key);
    let file = this.files.get(task);
    if (!file) {
      file = await open(curatePaths.signatures(this.out, task), "r");
      this.files.set(task, file);
    }
    const bytes = new Uint8Array(this.width * 4);
    const { bytesRead } = await file.read(bytes, 0, bytes.length, keyItem(key) * this.width * 4);
    if (bytesRead !== bytes.length)
      throw new UserError(`${curatePaths.signatures(this.out, task)}: no signature for item ${keyItem(key)}; delete curate/ and rerun`);
    const signature = new Uint32Array(bytes.buffer);
    this.cache.set(key, signature);
    return signature;
  }

  async close(): Promise<void> {
    for (const file of this.files.values()) await file.close();
  }
}

export function bytesOf(pairs: BigUint64Array): Uint8Array {
  return new Uint8Array(pairs.buffer, pairs.byteOffset, pairs.byteLength);
}

/** Curation, stage 2: per hash partition, every task's keys in that range joined into a partial union-find forest. */
export const clustersStage: JobStage = {
  name: "clusters",
  summary: "per hash partition: the band keys and exact hashes of every task in that range → a partial union-find forest",
  enabled: curationEnabled,
  scope: "partition",
  partitions: partitionCount,
  pooled: true,
  // A partition reads every task's signatures.
  reads: [{ path: "curate/signatures/" }, { path: "curate/clusters/", include: isMarker }],
  provides: [],
  unitFiles: (out, unit) => filesUnder(out, "curate/clusters/", `${partLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(curatePaths.clustersDone(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: ({ plan, task }) => runClustersUnit(plan, task.index),
};
