import type { JobConfig } from "../config/schema.ts";
import { usesShares } from "../mixture/resolve-factors.ts";

/**
 * The stages of a job, in the order they run. Without curation a job is one stage, `records`
 * (today's record pipeline). With `dedup` or `decontaminate` on, three curation stages come first
 * (README "Curation", "Stages"):
 *
 * - `signatures` (one unit per task): read + normalize each record; its exact hash, MinHash band
 *   keys and benchmark matches, spilled to sorted files per task;
 * - `clusters` (one unit per hash-range partition): the band keys and exact hashes of one
 *   partition, across all tasks → a partial union-find forest;
 * - `select` (one unit): the partial forests merged, the keeper of each cluster picked (the first
 *   in input order), and the removal list written per task;
 * - `records` (one unit per task): the record pipeline, consulting its task's removal list.
 *
 * With mixture target shares (`mixture.sources.X.share`), two stages come before `records`
 * (README "Mixtures"):
 *
 * - `count` (one unit per task): every record processed as `records` would, its tokens and trained
 *   tokens summed per source;
 * - `weights` (one unit): the counts summed, and the factors that meet the shares derived.
 *
 * Each stage's units are a plain array: a rank runs every `worldSize`-th unit, each unit leaves a
 * completion marker, and a stage starts only once the stage before it is complete.
 */
export const JOB_STAGES = ["signatures", "clusters", "select", "count", "weights", "records"] as const;
export type JobStage = (typeof JOB_STAGES)[number];

export interface StagePlan {
  stage: JobStage;
  /** Units of work (array size on a cluster). */
  units: number;
}

export function curationEnabled(config: Pick<JobConfig, "dedup" | "decontaminate">): boolean {
  return config.dedup.exact || config.dedup.near || config.decontaminate.benchmarks.length > 0;
}

/** Hash-range partitions of the clustering stage. */
export function partitionCount(config: Pick<JobConfig, "dedup">, tasks: number): number {
  return config.dedup.partitions === "auto" ? Math.max(4, tasks) : config.dedup.partitions;
}

/** The stages a job runs and their sizes. */
export function jobStages(config: Pick<JobConfig, "dedup" | "decontaminate" | "mixture">, tasks: number): StagePlan[] {
  const stages: StagePlan[] = [];
  if (curationEnabled(config))
    stages.push(
      { stage: "signatures", units: tasks },
      { stage: "clusters", units: partitionCount(config, tasks) },
      { stage: "select", units: 1 },
    );
  if (usesShares(config.mixture)) stages.push({ stage: "count", units: tasks }, { stage: "weights", units: 1 });
  stages.push({ stage: "records", units: tasks });
  return stages;
}
