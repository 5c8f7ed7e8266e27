import type { Task } from "../../sharding/task-plan.ts";
import { writeMarker } from "../curate/curate-files.ts";
import { DuplicateIds } from "../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { recordResults } from "../pipeline/record-results.ts";
import { stageContext } from "../pipeline/stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "../pipeline/stop-signal.ts";
import { loadTaskDecisions } from "../pipeline/task-decisions.ts";
import type { TaskProgress } from "../pipeline/task-items.ts";
import type { CountMarkerData } from "./count-stage.ts";
import { mixturePaths } from "./mixture-files.ts";
import type { SourceCount } from "./resolve-factors.ts";
import { SpoolWriter } from "./spool.ts";

/*
 * The count stage's work (src/mixture/count-stage.ts is its scheduling), loaded by a process that
 * runs a count unit: the weights stage's process reads the count markers without loading the
 * record pipeline.
 */

/**
 * The mixture's counting pass, one task (share mode): every record through the same per-record
 * stages as the records stage (curation's removals and masks applied, packing's fitting included),
 * its tokens and trained tokens summed per source and domain into the marker. So the factors are
 * derived from exactly what the records stage would write at factor 1. Every result is also
 * spooled (spool.ts), for the records stage to replay instead of processing the task again.
 */
export async function runCountUnit(
  plan: JobPlan,
  task: Task,
  stop?: StopSignal,
  onProgress?: (progress: TaskProgress) => void,
): Promise<void> {
  const { config } = plan;
  const out = config.output.dir;
  const counters = new Map<string, number>();
  // The records stage's context (records-stage.ts runTask) exactly: it replays these results as its own.
  const context = stageContext(plan, counters);
  const duplicates = config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;
  const decisions = await loadTaskDecisions(plan, task.index);
  const sources: CountMarkerData["sources"] = {};
  const spool = await SpoolWriter.create(out, task.index, jobShas(plan));
  try {
    for await (const { result, item, bytes } of recordResults(plan, task, context, { duplicates, decisions })) {
      await spool.add(result, item, bytes, counters);
      if (item % 64 === 0) onProgress?.({ task: task.index, records: item, bytes });
      if (stopRequested(stop)) throw new TaskStopped(task.index);
      if (result.kind !== "samples") continue;
      const first = result.samples[0];
      if (!first) continue;
      sources[result.source] ??= {};
      const bySource = sources[result.source] as Record<string, SourceCount>;
      bySource[first.domain] ??= { records: 0, tokens: 0, loss_tokens: 0 };
      const count = bySource[first.domain] as SourceCount;
      count.records += 1;
      for (const sample of result.samples) {
        count.tokens += sample.inputIds.length;
        count.loss_tokens += sample.numLossTokens;
      }
    }
    // Whole and named before the marker: a current marker's spool is complete, or absent.
    await spool.finish(duplicates?.hashes());
  } catch (err) {
    await spool.abort();
    throw err;
  }
  await writeMarker(mixturePaths.countDone(out, task.index), jobShas(plan), "count", task.index, { sources } satisfies CountMarkerData);
  onProgress?.({ task: task.index, records: 0, bytes: task.bytes });
}
