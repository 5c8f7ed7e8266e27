import { createHash } from "node:crypto";

/**
 * The bucket a sample goes to, from its id alone: the same id lands in the same bucket on any
 * machine, in any run, whatever the number of workers.
 */
export function bucketForId(id: string, numBuckets: number): number {
  const digest = createHash("sha256").update(id).digest();
  return digest.readUInt32BE(0) % numBuckets;
}

/** Shard file name inside the output's `data/` folder: bucket, then rollover part. */
export function shardFileName(bucket: number, part: number): string {
  return `shard-${String(bucket).padStart(5, "0")}-${String(part).padStart(4, "0")}.parquet`;
}
