import type { MessagePort } from "node:worker_threads";
import type { Task } from "../../sharding/task-plan.ts";
import type { LoadedConfig } from "../config/load-config.ts";
import { readSharedDecisions } from "./input-decisions.ts";
import { jobStage } from "./job-stages.ts";
import { type JobPlan, planJob } from "./plan.ts";
import { runPooledUnit } from "./run-unit.ts";
import type { StopSignal } from "./stop-signal.ts";
import type { TaskProgress } from "./task-items.ts";
import { loggedTask } from "./timing-log.ts";

/** What the main thread sends per task; the plan is rebuilt here once per thread, from the config and the main thread's input decisions. */
export interface WorkerTaskRequest {
  /**
   * The config as the main thread loaded and validated it (plain data): a thread plans from it
   * instead of reading and validating the YAML again (~0.2 s of each thread's start-up), and
   * plans from the very settings the main thread planned, even if the file changed meanwhile.
   */
  loaded: LoadedConfig;
  taskPlanSha256: string;
  /** What the main thread's plan decided about each input file (shareDecisions): not sniffed again here. */
  inputDecisions: SharedArrayBuffer;
  /** The registered stage whose unit this is (`task.index` is the unit: a task, or a partition). */
  stage: string;
  task: Task;
  /** Receives TaskProgress messages. */
  progress: MessagePort;
  /** Shared with the main thread (a SharedArrayBuffer): set when the run is asked to stop. */
  stop: StopSignal;
}

let planned: Promise<JobPlan> | undefined;

/** Piscina entry point: runs one task in this worker thread; resolves to its `done` state's task index. */
export default async function runTaskInWorker(request: WorkerTaskRequest): Promise<number> {
  planned ??= planJob(request.loaded, { decisions: readSharedDecisions(request.inputDecisions) });
  const plan = await planned;
  // The inputs must be the very files the main thread planned (a glob can change under us).
  if (plan.taskPlanSha256 !== request.taskPlanSha256)
    throw new Error("the input files changed while the job was starting (task plan differs in a worker thread); rerun");
  try {
    const onProgress = (progress: TaskProgress) => request.progress.postMessage(progress);
    const stage = await jobStage(request.stage);
    await loggedTask(stage.name, request.task.index, () => runPooledUnit(plan, stage, request.task, onProgress, request.stop));
    return request.task.index;
  } finally {
    request.progress.close();
  }
}
