import { createHash } from "node:crypto";

/**
 * The bucket a sample goes to, from its id alone: the same id lands in the same bucket on any
 * machine, in any run, whatever the number of workers.
 */
export function bucketForId(id: string, numBuckets: number): number {
  const digest = createHash("sha256").update(id).digest();
  return digest.readUInt32BE(0) % numBuckets;
}

/**
 * Shard file name inside the output's `data/` folder: bucket, task, then the task's segment
 * (a task's output is cut into segments of about `output.max_shard_bytes` per bucket).
 */
export function shardFileName(bucket: number, task: number, segment: number): string {
  return `shard-${String(bucket).padStart(5, "0")}-${String(task).padStart(5, "0")}-${String(segment).padStart(4, "0")}.parquet`;
}
