import type { JobConfig } from "../config/schema.ts";
import { partLabel, readMarker, writeMarker } from "../curate/curate-files.ts";
import { PairBuffer, sortPairs } from "../curate/pairs.ts";
import { writeTextFile } from "../io/json-file.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../pipeline/stage-contract.ts";
import { countBucket, type NoveltyPartitionData, type NoveltyTaskData, noveltyPaths, readPairRange } from "./novelty-files.ts";
import { noveltyEnabled, noveltyStage } from "./novelty-stage.ts";

const noveltyPartitions = (config: JobConfig): number => config.mask.corpus_novelty.partitions;

/** Per hash partition: every task's counts of that range summed. Memory: the partition's pairs. */
export async function runNoveltyPartitionUnit(plan: JobPlan, partition: number): Promise<NoveltyPartitionData> {
  const out = plan.config.output.dir;
  const job = jobShas(plan);
  const all = new PairBuffer();
  for (let task = 0; task < plan.tasks.length; task++) {
    const marker = await readMarker<NoveltyTaskData>(noveltyPaths.taskDone(out, task), job);
    if (!marker) throw new Error(`novelty: task ${task} has no current counts; run the novelty stage first`);
    const { partitions } = marker.data;
    const range = await readPairRange(
      noveltyPaths.taskCounts(out, task),
      partitions[partition] as number,
      partitions[partition + 1] as number,
    );
    for (let i = 0; i < range.length; i += 2) all.push(range[i] as bigint, range[i + 1] as bigint);
  }
  const sorted = sortPairs(all.view());
  const merged = new PairBuffer();
  const data: NoveltyPartitionData = { observations: 0, distinct: 0, by_count: {} };
  for (let i = 0; i < sorted.length; ) {
    const hash = sorted[i] as bigint;
    let count = 0n;
    for (; i < sorted.length && sorted[i] === hash; i += 2) count += sorted[i + 1] as bigint;
    merged.push(hash, count);
    data.observations += Number(count);
    data.distinct += 1;
    const bucket = countBucket(Number(count));
    data.by_count[bucket] = (data.by_count[bucket] ?? 0) + 1;
  }
  const pairs = merged.view();
  await writeTextFile(noveltyPaths.partitionCounts(out, partition), new Uint8Array(pairs.buffer, pairs.byteOffset, pairs.byteLength));
  await writeMarker(noveltyPaths.partitionDone(out, partition), job, "novelty-counts", partition, data);
  return data;
}

/** Corpus novelty, stage 2: per hash partition, the job-wide counts; the records stage looks its observations up in them. */
export const noveltyCountsStage: JobStage = {
  name: "novelty-counts",
  summary: "per hash partition (mask.corpus_novelty): every task's observation counts in that range, summed job-wide",
  enabled: noveltyEnabled,
  scope: "partition",
  partitions: (config) => noveltyPartitions(config),
  pooled: false,
  reads: [{ path: "novelty/tasks/" }, { path: "novelty/partitions/", include: isMarker }],
  // The records stage reads every task's counts and every partition's.
  provides: [{ path: "novelty/" }],
  unitFiles: (out, unit) => filesUnder(out, "novelty/partitions/", `${partLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(noveltyPaths.partitionDone(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: ({ plan, task }) => runNoveltyPartitionUnit(plan, task.index),
};

/** Both stages, in order (registered together in src/pipeline/job-stages.ts). */
export const NOVELTY_STAGES: readonly JobStage[] = [noveltyStage, noveltyCountsStage];
