import type { Task } from "../../sharding/task-plan.ts";
import { runClustersUnit } from "../curate/clusters-stage.ts";
import { runSignaturesUnit } from "../curate/signatures-stage.ts";
import { runCountUnit } from "../mixture/count-stage.ts";
import { uploadUnit } from "../output/remote-stage-files.ts";
import { runTask } from "../records/records-stage.ts";
import type { JobPlan } from "./plan.ts";
import type { StopSignal } from "./stop-signal.ts";
import type { TaskProgress } from "./task-items.ts";

/** Stages whose units run on the worker pool (select and weights are one unit each, on the main thread). */
export type PooledStage = "signatures" | "clusters" | "count" | "records";

/**
 * Runs one unit of a pooled stage, on whichever thread took it: a record task, curation's
 * signatures of a task or clusters of a partition (`task.index` is then the partition), or the
 * mixture's count of a task. With an `s3://` output the unit's files are uploaded once it is done
 * (a record task uploads its own, segment by segment).
 */
export async function runPooledUnit(
  plan: JobPlan,
  stage: PooledStage,
  task: Task,
  onProgress: (progress: TaskProgress) => void,
  stop: StopSignal,
): Promise<void> {
  if (stage === "records") {
    await runTask(plan, task, onProgress, stop);
    return;
  }
  if (stage === "signatures") await runSignaturesUnit(plan, task, stop, onProgress);
  else if (stage === "clusters") await runClustersUnit(plan, task.index);
  else await runCountUnit(plan, task, stop, onProgress);
  if (plan.remote) await uploadUnit(plan.remote, stage, task.index);
}
