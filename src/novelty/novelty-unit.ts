import type { Task } from "../../sharding/task-plan.ts";
import type { JobConfig } from "../config/schema.ts";
import { hashBound } from "../core/hash-range.ts";
import { writeMarker } from "../curate/curate-files.ts";
import { PairBuffer, sortPairs } from "../curate/pairs.ts";
import { writeTextFile } from "../io/json-file.ts";
import { DuplicateIds } from "../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { recordSource } from "../pipeline/record-labels.ts";
import { preparedRecord, stageContext } from "../pipeline/stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "../pipeline/stop-signal.ts";
import { type TaskProgress, taskItems } from "../pipeline/task-items.ts";
import { readFilterOf } from "../read/read-filter.ts";
import { itemSource } from "../read/reader.ts";
import { type NoveltyTaskData, noveltyPaths, observationHash } from "./novelty-files.ts";

/*
 * The novelty stage's work (src/novelty/novelty-stage.ts is its scheduling), loaded by a process
 * that runs a novelty unit: the novelty-counts stage's process checks it finished without loading
 * the record pipeline.
 */

const noveltyPartitions = (config: JobConfig): number => config.mask.corpus_novelty.partitions;

/**
 * Per task: how often each canonical observation occurs in the records the records stage will
 * write (read, valid, normalized, not a repeated id), as (hash, count) pairs sorted by hash, cut
 * into hash partitions. Memory: the task's distinct observations.
 */
export async function runNoveltyTaskUnit(plan: JobPlan, task: Task, stop?: StopSignal, onProgress?: (p: TaskProgress) => void) {
  const { config } = plan;
  const context = stageContext(plan, new Map());
  const duplicates = config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;
  const counts = new Map<bigint, number>();
  let observations = 0;
  let item = -1;
  for await (const { item: read, file, bytes } of taskItems(plan, task)) {
    item += 1;
    if (item % 64 === 0) onProgress?.({ task: task.index, records: item, bytes });
    // Text documents have no observations; quarantined and filtered records are not written.
    if (read.kind !== "trajectory" || readFilterOf(read)) continue;
    if (duplicates?.check(read.trajectory, recordSource(file.displayPath, itemSource(read)))) continue;
    const record = await preparedRecord(read, plan.pipeline.recordStages, context);
    if (!record) continue;
    for (const turn of record.turns) {
      const hash = observationHash(turn.observation);
      counts.set(hash, (counts.get(hash) ?? 0) + 1);
      observations += 1;
    }
    if (stopRequested(stop)) throw new TaskStopped(task.index);
  }
  const pairs = new PairBuffer();
  for (const [hash, count] of counts) pairs.push(hash, BigInt(count));
  const sorted = sortPairs(pairs.view());
  const partitions = noveltyPartitions(config);
  const offsets: number[] = [];
  for (let p = 0, at = 0; p <= partitions; p++) {
    const bound = hashBound(p, partitions);
    while (at < sorted.length / 2 && (sorted[2 * at] as bigint) < bound) at++;
    offsets.push(p === partitions ? sorted.length / 2 : at);
  }
  const out = config.output.dir;
  await writeTextFile(noveltyPaths.taskCounts(out, task.index), new Uint8Array(sorted.buffer, sorted.byteOffset, sorted.byteLength));
  const data: NoveltyTaskData = { partitions: offsets, observations };
  await writeMarker(noveltyPaths.taskDone(out, task.index), jobShas(plan), "novelty", task.index, data);
  onProgress?.({ task: task.index, records: item + 1, bytes: task.bytes });
}
