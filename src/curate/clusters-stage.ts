import { closeSync, openSync, readSync } from "node:fs";
import { UserError } from "../core/errors.ts";
import { writeTextFile } from "../io/json-file.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../pipeline/stage-contract.ts";
import { type CurateMarker, curatePaths, keyItem, keyTask, partLabel, readMarker, writeMarker } from "./curate-files.ts";
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

// The reads below are synchronous: a partition reads a small range of every task's files, and
// hundreds of small reads cost more in hand-overs to libuv's thread pool than in reading.

/** Pairs [start, end) of a task's `.keys` file. */
function readPairRange(path: string, start: number, end: number): BigUint64Array {
  if (end <= start) return new BigUint64Array(0);
  const bytes = new Uint8Array((end - start) * 16);
  if (readRange(path, bytes, start * 16) !== bytes.length)
    throw new UserError(`${path}: shorter than its marker says; delete the curate/ folder's markers and rerun`);
  return pairsFromBytes(bytes);
}

/** Reads `into.length` bytes of a file from `position`; returns how many there were. */
function readRange(path: string, into: Uint8Array, position: number): number {
  const fd = openSync(path, "r");
  try {
    let done = 0;
    while (done < into.length) {
      const n = readSync(fd, into, done, into.length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  } finally {
    closeSync(fd);
  }
}

const signatureMarkers = new WeakMap<JobPlan, Map<number, CurateMarker<SignaturesMarkerData>>>();

/** A task's signatures marker, read once per job and process: every partition reads every task's. */
async function signaturesMarker(plan: JobPlan, task: number): Promise<CurateMarker<SignaturesMarkerData>> {
  let markers = signatureMarkers.get(plan);
  if (!markers) {
    markers = new Map();
    signatureMarkers.set(plan, markers);
  }
  const known = markers.get(task);
  if (known) return known;
  const marker = await readMarker<SignaturesMarkerData>(curatePaths.signaturesDone(plan.config.output.dir, task), jobShas(plan));
  if (!marker) throw new UserError(`curation: task ${task} has no signatures yet; run the signatures stage first`);
  markers.set(task, marker);
  return marker;
}

/** The partial forest of a set of edges: (node, root) for every node that is not a root, and the node count. */
function forest(edges: PairBuffer): { pairs: BigUint64Array; nodes: number } {
  const joined = new Forest(edges.view());
  return { pairs: joined.pairs(), nodes: joined.keys.length };
}

/**
 * Stage 2 of curation, one hash-range partition: the pairs of that range from every task's sorted
 * `.keys` file, grouped by hash. Records sharing an exact hash are joined, and records sharing a
 * MinHash band key whose signatures are similar enough (`dedup.min_similarity`); the result is
 * written as two partial forests — every edge ("all") and exact edges only ("exact", to tell exact
 * copies from near ones). Memory: one partition, about 1/partitions of the job's pairs, and the
 * signatures of its candidate records.
 */
export async function runClustersUnit(plan: JobPlan, part: number): Promise<void> {
  const out = plan.config.output.dir;
  const job = jobShas(plan);
  const slices: BigUint64Array[] = [];
  for (const task of plan.tasks) {
    const { partitions } = (await signaturesMarker(plan, task.index)).data;
    slices.push(readPairRange(curatePaths.keys(out, task.index), partitions[part] as number, partitions[part + 1] as number));
  }
  const all = new BigUint64Array(slices.reduce((sum, s) => sum + s.length, 0));
  let at = 0;
  for (const slice of slices) {
    all.set(slice, at);
    at += slice.length;
  }
  const sorted = sortPairs(all);

  // Every group's members first, so the signatures the similarity checks need are read in a few
  // large reads per task file rather than one small read per record.
  const groups: Group[] = [];
  for (let i = 0; i < sorted.length; ) {
    const hash = sorted[i] as bigint;
    let j = i + 2;
    while (j < sorted.length && sorted[j] === hash) j += 2;
    if (j - i > 2) groups.push(groupOf(sorted.subarray(i, j)));
    i = j;
  }
  const similar = SignatureCheck.read(plan, groups);
  const edges = new PairBuffer();
  const exactEdges = new PairBuffer();
  for (const group of groups) joinGroup(group, edges, exactEdges, similar);
  const joined = forest(edges);
  const exact = forest(exactEdges);
  await writeTextFile(curatePaths.forest(out, part, "all"), bytesOf(joined.pairs));
  await writeTextFile(curatePaths.forest(out, part, "exact"), bytesOf(exact.pairs));
  const data: ClustersMarkerData = { nodes: joined.nodes, exact_nodes: exact.nodes };
  await writeMarker(curatePaths.clustersDone(out, part), job, "clusters", part, data);
}

/** The records sharing one hash: exact copies (an exact hash) or candidates (a band key). */
interface Group {
  exact: boolean;
  /** Record keys, sorted, each once. */
  members: bigint[];
}

/** A run of (hash, key) pairs sharing one hash, sorted by key. */
function groupOf(pairs: BigUint64Array): Group {
  const members: bigint[] = [];
  let exact = false;
  for (let k = 1; k < pairs.length; k += 2) {
    const key = pairs[k] as bigint;
    // Exact-hash pairs carry EXACT_BIT; a band key equal to an exact hash (p ≈ 2^-64) is not an edge.
    if (k === 1) exact = (key & EXACT_BIT) !== 0n;
    else if (((key & EXACT_BIT) !== 0n) !== exact) continue;
    const bare = key & ~EXACT_BIT;
    if (members[members.length - 1] !== bare) members.push(bare); // one record's two bands can share a key
  }
  return { exact, members };
}

/**
 * Joins one group. Exact-hash groups are joined as they are. Records sharing a band key are
 * candidates: each is joined to the first earlier member whose full signature agrees on
 * `dedup.min_similarity` of its values, so a pair that collided in one band by chance is not
 * joined, and a group is never joined through its least similar member.
 */
function joinGroup({ exact, members }: Group, edges: PairBuffer, exactEdges: PairBuffer, similar: SignatureCheck): void {
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
      if (similar.check(members[earlier] as bigint, key)) {
        edges.push(members[earlier] as bigint, key);
        break;
      }
    }
  }
}

/** Earlier members a candidate is compared with before it is left unjoined in that band. */
const MAX_COMPARISONS = 16;
/** Needed signatures at most this many records apart are read in one read (the ones between are read and dropped). */
const READ_GAP_RECORDS = 64;
/** The most bytes one read takes. */
const MAX_READ_BYTES = 1 << 20;

/** The MinHash signatures of a partition's candidate records, read from their tasks' files up front. */
class SignatureCheck {
  private readonly width: number;
  private readonly threshold: number;
  private readonly signatures: Map<bigint, Uint32Array>;

  private constructor(width: number, threshold: number, signatures: Map<bigint, Uint32Array>) {
    this.width = width;
    this.threshold = threshold;
    this.signatures = signatures;
  }

  /** Reads the signature of every member of every candidate group (none when `min_similarity` is 0). */
  static read(plan: JobPlan, groups: readonly Group[]): SignatureCheck {
    const { bands, rows, min_similarity } = plan.config.dedup;
    const width = bands * rows;
    const needed = new Set<bigint>();
    if (min_similarity > 0) for (const group of groups) if (!group.exact) for (const key of group.members) needed.add(key);
    const keys = [...needed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); // by task, then item
    const signatures = new Map<bigint, Uint32Array>();
    for (let s = 0; s < keys.length; ) {
      const task = keyTask(keys[s] as bigint);
      let e = s + 1;
      while (e < keys.length && keyTask(keys[e] as bigint) === task) e++;
      readTaskSignatures(curatePaths.signatures(plan.config.output.dir, task), width, keys.slice(s, e), signatures);
      s = e;
    }
    return new SignatureCheck(width, min_similarity, signatures);
  }

  /** Whether two records' signatures agree on at least `min_similarity` of their values. */
  check(a: bigint, b: bigint): boolean {
    if (this.threshold <= 0) return true;
    const sa = this.signatures.get(a) as Uint32Array;
    const sb = this.signatures.get(b) as Uint32Array;
    let same = 0;
    for (let i = 0; i < this.width; i++) if (sa[i] === sb[i]) same++;
    return same >= this.threshold * this.width;
  }
}

/** One task's signatures of `keys` (sorted items of that task), in reads of nearby records, into `into`. */
function readTaskSignatures(path: string, width: number, keys: readonly bigint[], into: Map<bigint, Uint32Array>): void {
  const size = width * 4;
  for (let a = 0; a < keys.length; ) {
    const first = keyItem(keys[a] as bigint);
    let b = a + 1;
    while (b < keys.length) {
      const item = keyItem(keys[b] as bigint);
      if (item - keyItem(keys[b - 1] as bigint) > READ_GAP_RECORDS || (item - first + 1) * size > MAX_READ_BYTES) break;
      b++;
    }
    const last = keyItem(keys[b - 1] as bigint);
    const bytes = new Uint8Array((last - first + 1) * size);
    if (readRange(path, bytes, first * size) !== bytes.length)
      throw new UserError(`${path}: no signature for item ${last}; delete curate/ and rerun`);
    // Copied out, so the read's buffer (records between included) is not kept.
    for (let k = a; k < b; k++) {
      const item = keyItem(keys[k] as bigint);
      into.set(keys[k] as bigint, new Uint32Array(bytes.buffer.slice((item - first) * size, (item - first + 1) * size)));
    }
    a = b;
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
