import type { Task } from "../../sharding/task-plan.ts";
import { writeMarker } from "../curate/curate-files.ts";
import { writeTextFile } from "../io/json-file.ts";
import { DuplicateIds } from "../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { recordResults } from "../pipeline/record-results.ts";
import { stageContext } from "../pipeline/stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "../pipeline/stop-signal.ts";
import { loadTaskDecisions } from "../pipeline/task-decisions.ts";
import type { TaskProgress } from "../pipeline/task-items.ts";
import type { FactsLine } from "./facts-stage.ts";
import { selectionPaths } from "./selection-files.ts";

/*
 * The facts stage's work (src/select/facts-stage.ts is its scheduling), loaded by a process that
 * runs a facts unit: the selection stage's process checks facts finished without loading the
 * record pipeline.
 */

/**
 * Selection's first pass, one task: every record through the same per-record stages as the
 * records stage (curation's removals, the scores and the filters applied), and the facts of each
 * one that would be written, in item order. Nothing else is written, so selection decides on
 * exactly what the records stage would write without it.
 */
export async function runFactsUnit(plan: JobPlan, task: Task, stop?: StopSignal, onProgress?: (p: TaskProgress) => void): Promise<void> {
  const { config } = plan;
  const out = config.output.dir;
  const decisions = await loadTaskDecisions(plan, task.index, { selection: false });
  const duplicates = config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;
  const lines: string[] = [];
  const results = recordResults(plan, task, stageContext(plan, new Map()), { duplicates, decisions, wantFacts: true });
  for await (const { result, item, bytes } of results) {
    if (item % 64 === 0) onProgress?.({ task: task.index, records: item, bytes });
    if (stopRequested(stop)) throw new TaskStopped(task.index);
    if (result.kind === "samples" && result.facts)
      lines.push(`${JSON.stringify({ item: item - 1, facts: result.facts } satisfies FactsLine)}\n`);
  }
  await writeTextFile(selectionPaths.facts(out, task.index), lines.join(""));
  await writeMarker(selectionPaths.factsDone(out, task.index), jobShas(plan), "facts", task.index, { records: lines.length });
  onProgress?.({ task: task.index, records: 0, bytes: task.bytes });
}
