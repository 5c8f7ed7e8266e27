import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import { UserError } from "../core/errors.ts";
import { canonicalForHashing } from "../curate/canonical-text.ts";
import { partLabel } from "../curate/curate-files.ts";
import { pairsFromBytes } from "../curate/pairs.ts";

/**
 * Corpus novelty's working files (docs/masking.md "Rendering, tokenization and the loss mask"), under
 * `<output>/novelty/`: per task, the sorted (observation hash, count) pairs of its records; per
 * hash partition, the job-wide counts of that hash range. Pairs are two little-endian uint64s.
 */
export const NOVELTY_DIR = "novelty";

export const noveltyPaths = {
  taskCounts: (out: string, task: number) => join(out, NOVELTY_DIR, "tasks", `${taskLabel(task)}.counts`),
  taskDone: (out: string, task: number) => join(out, NOVELTY_DIR, "tasks", `${taskLabel(task)}.done.json`),
  partitionCounts: (out: string, p: number) => join(out, NOVELTY_DIR, "partitions", `${partLabel(p)}.counts`),
  partitionDone: (out: string, p: number) => join(out, NOVELTY_DIR, "partitions", `${partLabel(p)}.done.json`),
};

/** A task unit's marker data: where each hash partition starts in its `.counts` pairs, and its observations. */
export interface NoveltyTaskData {
  /** Pair index where partition p starts, p = 0..partitions (the last is the pair count). */
  partitions: number[];
  observations: number;
}

/** A partition unit's marker data: observations counted, distinct ones, and a histogram of their counts. */
export interface NoveltyPartitionData {
  observations: number;
  distinct: number;
  /** Distinct observations by how often they occur: `1`, `2-3`, `4-7`, … (powers of two). */
  by_count: Record<string, number>;
}

/** The 64-bit hash of an observation as curation canonicalizes it (volatile values, temp names, pids … as placeholders). */
export function observationHash(observation: string): bigint {
  return createHash("sha256").update(canonicalForHashing(observation)).digest().readBigUInt64BE(0);
}

/** Pairs [start, end) of a `.counts` file. */
export async function readPairRange(path: string, start: number, end: number): Promise<BigUint64Array> {
  if (end <= start) return new BigUint64Array(0);
  const handle = await open(path, "r");
  try {
    const bytes = new Uint8Array((end - start) * 16);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, start * 16);
    if (bytesRead !== bytes.length) throw new UserError(`${path}: shorter than its marker says; delete the novelty/ folder and rerun`);
    return pairsFromBytes(bytes);
  } finally {
    await handle.close();
  }
}

/** The histogram bucket of a count: 1, 2-3, 4-7, 8-15, … */
export function countBucket(count: number): string {
  const low = 2 ** Math.floor(Math.log2(count));
  return low === 1 ? "1" : `${low}-${2 * low - 1}`;
}
