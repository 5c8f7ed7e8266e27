import { open } from "node:fs/promises";
import { UserError } from "../core/errors.ts";
import { writeTextFile } from "../io/json-file.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { curatePaths, readMarker, writeMarker } from "./curate-files.ts";
import { PairBuffer, pairsFromBytes, sortPairs } from "./pairs.ts";
import { EXACT_BIT, type SignaturesMarkerData } from "./signatures-stage.ts";
import { UnionFind } from "./union-find.ts";

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

/**
 * The partial forest of a set of edges: (node, root) for every node that is not a root, where a
 * root is the smallest key of its tree — so forests of different partitions merge by union alone.
 */
function forest(edges: PairBuffer): { pairs: BigUint64Array; nodes: number } {
  const flat = edges.view();
  if (flat.length === 0) return { pairs: new BigUint64Array(0), nodes: 0 };
  const nodes = BigUint64Array.from(flat).sort();
  let n = 1;
  for (let i = 1; i < nodes.length; i++) if (nodes[i] !== nodes[n - 1]) nodes[n++] = nodes[i] as bigint;
  const unique = nodes.subarray(0, n);
  const indexOf = (key: bigint): number => {
    let low = 0;
    let high = unique.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((unique[mid] as bigint) < key) low = mid + 1;
      else high = mid;
    }
    return low;
  };
  const sets = new UnionFind(unique.length);
  for (let i = 0; i < flat.length; i += 2) sets.union(indexOf(flat[i] as bigint), indexOf(flat[i + 1] as bigint));
  const out = new PairBuffer();
  for (let i = 0; i < unique.length; i++) {
    const root = sets.find(i);
    if (root !== i) out.push(unique[i] as bigint, unique[root] as bigint);
  }
  return { pairs: BigUint64Array.from(out.view()), nodes: unique.length };
}

/**
 * Stage 2 of curation, one hash-range partition: the pairs of that range from every task's sorted
 * `.keys` file, grouped by hash. Records sharing an exact hash, or (near) a MinHash band key, are
 * joined; the result is written as two partial forests — every edge ("all") and exact edges only
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
  // Runs of one hash are sorted by key: the first is the group's smallest key, joined to each other.
  for (let i = 0; i < sorted.length; ) {
    const hash = sorted[i] as bigint;
    let j = i + 2;
    while (j < sorted.length && sorted[j] === hash) j += 2;
    for (let k = i + 2; k < j; k += 2) {
      const first = sorted[i + 1] as bigint;
      const other = sorted[k + 1] as bigint;
      // Exact-hash pairs carry EXACT_BIT; a band key equal to an exact hash (p ≈ 2^-64) is not an edge.
      if ((first & EXACT_BIT) !== (other & EXACT_BIT)) continue;
      const a = first & ~EXACT_BIT;
      const b = other & ~EXACT_BIT;
      if (a === b) continue; // one record's two bands can share a key
      edges.push(a, b);
      if (first & EXACT_BIT) exactEdges.push(a, b);
    }
    i = j;
  }
  const joined = forest(edges);
  const exact = forest(exactEdges);
  await writeTextFile(curatePaths.forest(out, part, "all"), bytesOf(joined.pairs));
  await writeTextFile(curatePaths.forest(out, part, "exact"), bytesOf(exact.pairs));
  const data: ClustersMarkerData = { nodes: joined.nodes, exact_nodes: exact.nodes };
  await writeMarker(curatePaths.clustersDone(out, part), job, "clusters", part, data);
}

export function bytesOf(pairs: BigUint64Array): Uint8Array {
  return new Uint8Array(pairs.buffer, pairs.byteOffset, pairs.byteLength);
}
