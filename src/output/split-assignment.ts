import { createHash } from "node:crypto";

/**
 * The bucket a sample goes to, from its id alone: the same id lands in the same bucket on any
 * machine, in any run, whatever the number of workers.
 */
export function bucketForId(id: string, numBuckets: number): number {
  const digest = createHash("sha256").update(id).digest();
  return digest.readUInt32BE(0) % numBuckets;
}

export const SPLITS = ["train", "validation"] as const;
export type Split = (typeof SPLITS)[number];

/**
 * The split of a trajectory, from a seeded hash of its id: every sample, SFT prompt or packed
 * piece made from one trajectory lands in the same split, on any machine, in any run. The hash
 * is independent of the bucket hash (seed prefix), so splits are not correlated with buckets.
 */
export function splitForTrajectory(trajectoryId: string, validationFraction: number, seed: number): Split {
  if (validationFraction <= 0) return "train";
  const digest = createHash("sha256").update(`split:${seed}:`).update(trajectoryId).digest();
  // 48 bits are plenty for a uniform draw in [0, 1).
  const draw = digest.readUIntBE(0, 6) / 2 ** 48;
  return draw < validationFraction ? "validation" : "train";
}

/**
 * Shard file name inside the output's `data/` folder: split, bucket, task, then the task's
 * segment (a task's output is cut into segments of about `output.max_shard_bytes` per bucket).
 * The split prefix is the pattern Hugging Face `datasets` recognises (`data/train-*`).
 */
export function shardFileName(split: Split, bucket: number, task: number, segment: number): string {
  return `${split}-${String(bucket).padStart(5, "0")}-${String(task).padStart(5, "0")}-${String(segment).padStart(4, "0")}.parquet`;
}
