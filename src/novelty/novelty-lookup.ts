import { readFile } from "node:fs/promises";
import { lowerBound } from "../core/hash-range.ts";
import { readMarker } from "../curate/curate-files.ts";
import { pairsFromBytes } from "../curate/pairs.ts";
import type { JobShas } from "../output/task-state.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { type NoveltyPartitionData, type NoveltyTaskData, noveltyPaths, observationHash } from "./novelty-files.ts";

/**
 * One task's view of the job-wide observation counts: the counts of the observations its own
 * records hold (looked up once, when the task starts), and N, every observation counted.
 * `selfInformation` is the turn statistic `corpus_novelty`: -log2(count / N), in bits.
 */
export class CorpusNovelty {
  /** The task's distinct observation hashes, sorted. */
  private readonly hashes: BigUint64Array;
  /** Job-wide count of each, aligned with `hashes`. */
  private readonly counts: Float64Array;
  /** Observations counted job-wide. */
  readonly total: number;

  constructor(hashes: BigUint64Array, counts: Float64Array, total: number) {
    this.hashes = hashes;
    this.counts = counts;
    this.total = total;
  }

  /** How often the observation occurs job-wide (at least 1: it is one of them; 1 for one the stage did not see). */
  count(observation: string): number {
    const hash = observationHash(observation);
    const at = lowerBound(this.hashes, hash);
    return at < this.hashes.length && this.hashes[at] === hash ? Math.max(1, this.counts[at] as number) : 1;
  }

  /** -log2(count / N): 0 for an observation every turn has, log2(N) for one seen once. */
  selfInformation(observation: string): number {
    return this.total <= 0 ? 0 : -Math.log2(this.count(observation) / Math.max(this.total, 1));
  }
}

/**
 * The task's lookup from the novelty stages' files: its own sorted hashes, merge-joined with each
 * partition's job-wide counts (one partition in memory at a time).
 */
export async function taskNovelty(plan: JobPlan, task: number): Promise<CorpusNovelty> {
  const out = plan.config.output.dir;
  const job = jobShas(plan);
  const marker = await readMarker<NoveltyTaskData>(noveltyPaths.taskDone(out, task), job);
  if (!marker) throw new Error(`novelty: task ${task} has no current counts; run the novelty stages first`);
  const own = pairsFromBytes(new Uint8Array(await readFile(noveltyPaths.taskCounts(out, task))));
  const hashes = new BigUint64Array(own.length / 2);
  for (let i = 0; i < hashes.length; i++) hashes[i] = own[2 * i] as bigint;
  const counts = new Float64Array(hashes.length);
  let total = 0;
  const partitions = marker.data.partitions.length - 1;
  for (let p = 0; p < partitions; p++) {
    const done = await readMarker<NoveltyPartitionData>(noveltyPaths.partitionDone(out, p), job);
    if (!done) throw new Error(`novelty: partition ${p} has no current counts; run the novelty-counts stage first`);
    total += done.data.observations;
    const start = marker.data.partitions[p] as number;
    const end = marker.data.partitions[p + 1] as number;
    if (end <= start) continue;
    const merged = pairsFromBytes(new Uint8Array(await readFile(noveltyPaths.partitionCounts(out, p))));
    // Both sorted by hash: one pass.
    let j = 0;
    for (let i = start; i < end; i++) {
      const hash = hashes[i] as bigint;
      while (j < merged.length && (merged[j] as bigint) < hash) j += 2;
      if (j < merged.length && merged[j] === hash) counts[i] = Number(merged[j + 1] as bigint);
    }
  }
  return new CorpusNovelty(hashes, counts, total);
}

/** The manifest's `novelty` block (mask.corpus_novelty). */
export interface NoveltySummary {
  /** Observations counted job-wide (N). */
  observations: number;
  /** Distinct canonical observations. */
  distinct: number;
  /** Distinct observations by how often they occur: `1`, `2-3`, `4-7`, … */
  by_count: Record<string, number>;
}

/** The `novelty` block from the novelty-counts markers: observations counted, distinct ones, and how many occur how often. */
export async function noveltySummary(out: string, job: JobShas, partitions: number): Promise<NoveltySummary> {
  const summary = { observations: 0, distinct: 0, by_count: {} as Record<string, number> };
  for (let p = 0; p < partitions; p++) {
    const done = await readMarker<NoveltyPartitionData>(noveltyPaths.partitionDone(out, p), job);
    if (!done) continue;
    summary.observations += done.data.observations;
    summary.distinct += done.data.distinct;
    for (const [bucket, n] of Object.entries(done.data.by_count)) summary.by_count[bucket] = (summary.by_count[bucket] ?? 0) + n;
  }
  // Buckets in count order (1, 2-3, 4-7, …), whatever order the partitions met them in.
  const ordered = Object.entries(summary.by_count).sort(([a], [b]) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
  return { ...summary, by_count: Object.fromEntries(ordered) };
}
