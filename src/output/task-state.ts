import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import { UserError } from "../core/errors.ts";
import { readJsonFile, writeJsonFile, writeTextFile } from "../io/json-file.ts";
import type { TaskTotals } from "./task-totals.ts";

export const TASK_STATE_FORMAT = "lwm-data/task-state";

/** The two hashes that identify a job's output: its config and its task cut. */
export interface JobShas {
  config_sha256: string;
  plan_sha256: string;
}

/** A finished output file, as the manifest lists it. */
export interface OutputFile {
  path: string;
  /** Shards: train / validation. */
  split?: string;
  rows: number;
  /** Shards: samples inside (more than rows when packed). */
  documents?: number;
  bytes: number;
  sha256: string;
  tokens?: number;
  loss_tokens?: number;
}

/**
 * Where a task stands, in `<output>/tasks/`: `task-NNNNN.checkpoint.json` after each finished
 * segment (everything before `items` is in finished files) or mid-segment (with `journal`: in
 * finished files and the journal), `task-NNNNN.done.json` when the
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
  /** The task's filtered/ file (records curation removed), kept like the quarantine file. Absent in states written before curation. */
  filtered?: { path: string; bytes: number; entries: number; sha256?: string } | null;
  /**
   * A checkpoint inside the open segment (`output.checkpoint`): the first `bytes` of the task's
   * journal and its held file number `held` rebuild the segment's files up to `items`. Absent:
   * the checkpoint is at a segment cut.
   */
  journal?: { bytes: number; held: number };
}

export type TaskStateKind = "checkpoint" | "done";

/**
 * A task's distinct trajectory ids as sorted 64-bit hashes (native byte order), written with its
 * done marker under `input.duplicate_ids: quarantine`: finalize counts ids repeated across tasks.
 */
export function taskIdsPath(outputDir: string, task: number): string {
  return join(outputDir, "tasks", `${taskLabel(task)}.ids`);
}

export async function writeTaskIds(outputDir: string, task: number, hashes: BigUint64Array): Promise<void> {
  await writeTextFile(taskIdsPath(outputDir, task), new Uint8Array(hashes.buffer, hashes.byteOffset, hashes.byteLength));
}

/** The task's id hashes, or undefined when it has none (policy `keep`) or the file is damaged. */
export async function readTaskIds(outputDir: string, task: number): Promise<BigUint64Array | undefined> {
  const bytes = await readFile(taskIdsPath(outputDir, task)).catch(() => undefined);
  if (!bytes || bytes.length % 8 !== 0) return undefined;
  return new BigUint64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

/** The open segment's journal (src/write/segment-journal.ts). */
export function taskJournalPath(outputDir: string, task: number): string {
  return join(outputDir, "tasks", `${taskLabel(task)}.journal`);
}

export function taskStatePath(outputDir: string, task: number, kind: TaskStateKind): string {
  return join(outputDir, "tasks", `${taskLabel(task)}.${kind}.json`);
}

export async function readTaskState(outputDir: string, task: number, kind: TaskStateKind): Promise<TaskState | undefined> {
  const path = taskStatePath(outputDir, task, kind);
  const state = await readJsonFile<TaskState>(path);
  if (state && (state.format !== TASK_STATE_FORMAT || state.task !== task))
    throw new UserError(`${path} is not lwm-data's state for task ${task}`);
  return state;
}

/** Whether a task state (or output plan) was written for this job — same config and task cut — not an earlier one. */
export function isCurrent(state: JobShas | undefined, job: JobShas): boolean {
  return state !== undefined && state.config_sha256 === job.config_sha256 && state.plan_sha256 === job.plan_sha256;
}

/** Written under a temporary name and renamed: a state file is whole or absent. */
export async function writeTaskState(outputDir: string, state: TaskState, kind: TaskStateKind): Promise<void> {
  // One writer per task at a time, so one fixed temporary name.
  await writeJsonFile(taskStatePath(outputDir, state.task, kind), state, { indent: 1 });
  if (kind === "done") await rm(taskStatePath(outputDir, state.task, "checkpoint"), { force: true });
}
