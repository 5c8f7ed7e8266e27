import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import type { TaskTotals } from "./task-totals.ts";

export const TASK_STATE_FORMAT = "lwm-data/task-state";

/** A finished output file, as the manifest lists it. */
export interface OutputFile {
  path: string;
  rows: number;
  bytes: number;
  sha256: string;
  tokens?: number;
  loss_tokens?: number;
}

/**
 * Where a task stands, in `<output>/tasks/`: `task-NNNNN.checkpoint.json` after each finished
 * segment (everything before `items` is in finished files), `task-NNNNN.done.json` when the
 * task is complete — its completion marker, with every output's checksum.
 */
export interface TaskState {
  format: typeof TASK_STATE_FORMAT;
  task: number;
  config_sha256: string;
  plan_sha256: string;
  /** Next segment number. */
  segment: number;
  /** Read items (records, including quarantined ones) already in finished files. */
  items: number;
  totals: TaskTotals;
  shards: OutputFile[];
  stats_files: OutputFile[];
  /** The task's quarantine file: bytes so far (a resume cuts it back to this) and, when done, its checksum. */
  quarantine: { path: string; bytes: number; entries: number; sha256?: string } | null;
}

export type TaskStateKind = "checkpoint" | "done";

export function taskStatePath(outputDir: string, task: number, kind: TaskStateKind): string {
  return join(outputDir, "tasks", `${taskLabel(task)}.${kind}.json`);
}

export async function readTaskState(outputDir: string, task: number, kind: TaskStateKind): Promise<TaskState | undefined> {
  const path = taskStatePath(outputDir, task, kind);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const state = JSON.parse(text) as TaskState;
  if (state.format !== TASK_STATE_FORMAT || state.task !== task) throw new Error(`${path} is not lwm-data's state for task ${task}`);
  return state;
}

/** Written under a temporary name and renamed: a state file is whole or absent. */
export async function writeTaskState(outputDir: string, state: TaskState, kind: TaskStateKind): Promise<void> {
  const path = taskStatePath(outputDir, state.task, kind);
  await writeFile(`${path}.tmp`, `${JSON.stringify(state, null, 1)}\n`);
  await rename(`${path}.tmp`, path);
  if (kind === "done") await rm(taskStatePath(outputDir, state.task, "checkpoint"), { force: true });
}
