import type { JobConfig } from "../config/schema.ts";

export function curationEnabled(config: Pick<JobConfig, "dedup" | "decontaminate">): boolean {
  return config.dedup.exact || config.dedup.near || config.decontaminate.benchmarks.length > 0;
}

/** Hash-range partitions of the clustering stage. */
export function partitionCount(config: Pick<JobConfig, "dedup">, tasks: number): number {
  return config.dedup.partitions === "auto" ? Math.max(4, tasks) : config.dedup.partitions;
}
