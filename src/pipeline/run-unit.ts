import type { Task } from "../../sharding/task-plan.ts";
import { uploadUnit } from "../output/remote-stage-files.ts";
import type { JobPlan } from "./plan.ts";
import type { JobStage } from "./stage-contract.ts";
import type { StopSignal } from "./stop-signal.ts";
import type { TaskProgress } from "./task-items.ts";

/**
 * Runs one unit of a pooled stage, on whichever thread took it (`task.index` is the unit). With
 * an `s3://` output the unit's files are uploaded once it is done (a stage without `unitFiles`,
 * such as records, uploads its own as it goes).
 */
export async function runPooledUnit(
  plan: JobPlan,
  stage: JobStage,
  task: Task,
  onProgress: (progress: TaskProgress) => void,
  stop: StopSignal,
): Promise<void> {
  await stage.run({ plan, task, stop, onProgress });
  if (plan.remote) await uploadUnit(plan.remote, stage, task.index);
}
