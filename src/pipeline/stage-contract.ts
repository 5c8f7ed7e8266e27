import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Task } from "../../sharding/task-plan.ts";
import type { JobConfig } from "../config/schema.ts";
import type { JobPlan } from "./plan.ts";
import type { StopSignal } from "./stop-signal.ts";
import type { TaskProgress } from "./task-items.ts";

/**
 * The contract every corpus-level stage of a job keeps (docs/contributing.md "Job stages, and adding one"). A stage module exports
 * one `JobStage`; `job-stages.ts` registers them in order, by name and a dynamic `import()` of the
 * module, which is loaded only when a process needs that stage (a `--stage clusters` process loads
 * the clusters and signatures stages' code, not the records stage's writers); the runner,
 * completion markers, remote staging, `plan`/`validate`, `launch slurm` (dependent arrays) and
 * `launch k8s` (sequential Indexed Jobs) all work from that list and never name a stage. Stage
 * modules import this file, never the runner.
 *
 * Like datatrove's PipelineStep/executor split: a stage says what one unit does and what it
 * touches; the executor decides where units run (threads, ranks, array tasks) and when.
 */
export interface JobStage {
  /** Its name: `--stage`, markers, array names, progress. */
  name: string;
  /** One line for `--help`, `plan` and the README. */
  summary: string;
  /** Whether this job runs the stage (its config turns it on). */
  enabled(config: JobConfig): boolean;
  /**
   * Its units: one per task (`task`), per hash partition (`partition`) or one (`one`). A rank
   * runs every world-size-th unit; each unit leaves a completion marker.
   */
  scope: "task" | "partition" | "one";
  /** How many units (for `partition` scope; `task` is the job's tasks, `one` is 1). */
  partitions?(config: JobConfig, tasks: number): number;
  /** Units run on the worker threads (they read records); otherwise on the main thread. */
  pooled: boolean;
  /** Output files it reads itself (mirrored from a bucket before its units run): its own markers, and its predecessors' working files. */
  reads: readonly OutputFiles[];
  /** Output files every later stage and finalize read of it (mirrored before each of them). */
  provides: readonly OutputFiles[];
  /** The files one finished unit wrote, relative to the output (uploaded, markers last). Absent: the unit uploads its own. */
  unitFiles?(outputDir: string, unit: number): Promise<string[]>;
  /** Whether the unit's completion marker is there and belongs to this job. */
  isDone(plan: JobPlan, unit: number): Promise<boolean>;
  /** Runs one unit; what it returns is what `report` describes. */
  run(unit: StageUnit): Promise<unknown>;
  /** Lines `run` prints about a unit that ran in this process (e.g. the factors target shares derived). */
  report?(result: unknown): string[];
}

/** A part of the output folder: a folder (ending in `/`) or one file, optionally only some names in it. */
export interface OutputFiles {
  path: string;
  include?: (name: string) => boolean;
}

/** One unit as a stage's `run` gets it. */
export interface StageUnit {
  plan: JobPlan;
  /** The task (for `task` scope), or a stand-in naming the partition or unit 0 (`task.index` is the unit). */
  task: Task;
  stop: StopSignal;
  onProgress: (progress: TaskProgress) => void;
}

/** A completion marker's file name. */
export const isMarker = (name: string): boolean => name.endsWith(".done.json");

/** Units of a stage in a job of `tasks` tasks. */
export function stageUnits(stage: JobStage, config: JobConfig, tasks: number): number {
  if (stage.scope === "task") return tasks;
  if (stage.scope === "one") return 1;
  if (!stage.partitions) throw new Error(`stage ${stage.name}: a partition-scoped stage must say how many partitions`);
  return stage.partitions(config, tasks);
}

/** The files of one output folder whose names start with `prefix` (finished ones: no `.tmp`), relative to the output. */
export async function filesUnder(outputDir: string, folder: string, prefix = ""): Promise<string[]> {
  const names = await readdir(join(outputDir, folder)).catch(() => [] as string[]);
  return names.filter((name) => name.startsWith(prefix) && !name.endsWith(".tmp")).map((name) => `${folder}${name}`);
}
