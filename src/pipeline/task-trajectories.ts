/**
 * The trajectories of one task as the records stage will see them, for the stages that ask a model
 * about them before it runs (`score`, `rephrase`, `synthesis-teacher`): so what a model is asked
 * about is what is trained on.
 */
import type { Task } from "../../sharding/task-plan.ts";
import { RecordError } from "../core/errors.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { readFilterOf } from "../read/read-filter.ts";
import { itemSource } from "../read/reader.ts";
import { DuplicateIds } from "./duplicate-ids.ts";
import type { JobPlan } from "./plan.ts";
import { recordSource } from "./record-labels.ts";
import { normalizedTrajectory, stageContext } from "./stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "./stop-signal.ts";
import type { TaskDecisions } from "./task-decisions.ts";
import { type TaskProgress, taskItems } from "./task-items.ts";

/** A trajectory of the task and its 0-based position among the task's read items (the key the stages' files use). */
export interface TaskTrajectory {
  item: number;
  trajectory: Trajectory;
}

/**
 * The task's trajectories, normalized by the per-record stages, that are not quarantined, filtered
 * by the reader, a repeated id (with `input.duplicate_ids: quarantine`), removed by curation or
 * dropped by selection (`decisions`; a stage that runs before selection passes no drops). Text
 * documents are skipped. Progress is reported every 64 items; a stop request ends the task.
 */
export async function* taskTrajectories(
  plan: JobPlan,
  task: Task,
  decisions: Pick<TaskDecisions, "removals" | "drops">,
  stop: StopSignal | undefined,
  onProgress?: (progress: TaskProgress) => void,
): AsyncGenerator<TaskTrajectory> {
  const duplicates = plan.config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;
  const context = stageContext(plan, new Map());
  let item = -1;
  for await (const { item: read, file, bytes } of taskItems(plan, task)) {
    item += 1;
    if (item % 64 === 0) onProgress?.({ task: task.index, records: item, bytes });
    if (stopRequested(stop)) throw new TaskStopped(task.index);
    if (read.kind === "quarantine" || readFilterOf(read)) continue;
    const label = recordSource(file.displayPath, itemSource(read));
    if (duplicates?.check(read.kind === "trajectory" ? read.trajectory : read.document, label)) continue;
    if (read.kind !== "trajectory" || decisions.removals.get(item)?.action === "remove" || decisions.drops.has(item)) continue;
    let trajectory: Trajectory;
    try {
      trajectory = await normalizedTrajectory(read.trajectory, plan.pipeline.recordStages, context);
    } catch (err) {
      if (err instanceof RecordError) continue; // quarantined by the records stage
      throw err;
    }
    yield { item, trajectory };
  }
}
