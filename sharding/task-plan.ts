import { createHash } from "node:crypto";

/** What the task planner needs to know about an input file. */
export interface PlannableFile {
  /** Path relative to the config, as recorded in the manifest. */
  displayPath: string;
  bytes: number;
  /** Uncompressed and read by a reader whose every line is a record (so it may be cut by byte range). */
  splittable: boolean;
}

/** A whole file, or the records whose lines start in [start, end) of one. */
export interface TaskPiece {
  file: number;
  start?: number;
  end?: number;
}

export interface Task {
  index: number;
  pieces: TaskPiece[];
  bytes: number;
}

/**
 * Cuts the inputs into tasks of about `taskBytes`: consecutive small files share a task, a big
 * splittable file is cut into equal byte ranges (its records are assigned by where their line
 * starts). Depends only on the file list and `taskBytes`, never on workers or ranks, which is
 * what makes the shards the same whatever runs them.
 */
export function planTasks(files: readonly PlannableFile[], taskBytes: number): Task[] {
  const tasks: Task[] = [];
  let current: TaskPiece[] = [];
  let currentBytes = 0;
  const close = () => {
    if (current.length === 0) return;
    tasks.push({ index: tasks.length, pieces: current, bytes: currentBytes });
    current = [];
    currentBytes = 0;
  };
  for (const [file, { bytes, splittable }] of files.entries()) {
    if (splittable && bytes > taskBytes) {
      close();
      const parts = Math.ceil(bytes / taskBytes);
      const step = Math.ceil(bytes / parts);
      for (let start = 0; start < bytes; start += step) {
        const end = Math.min(start + step, bytes);
        tasks.push({ index: tasks.length, pieces: [{ file, start, end }], bytes: end - start });
      }
      continue;
    }
    current.push({ file });
    currentBytes += bytes;
    if (currentBytes >= taskBytes) close();
  }
  close();
  return tasks;
}

/** Identifies a task plan: the inputs (paths and sizes) and how they were cut. */
export function taskPlanSha256(files: readonly PlannableFile[], tasks: readonly Task[]): string {
  const inputs = files.map((f) => [f.displayPath, f.bytes, f.splittable]);
  return createHash("sha256")
    .update(JSON.stringify({ inputs, tasks: tasks.map((t) => t.pieces) }))
    .digest("hex");
}

/** The tasks a rank runs: every `worldSize`-th, starting at `rank`. */
export function tasksForRank(tasks: readonly Task[], rank: number, worldSize: number): Task[] {
  return tasks.filter((task) => task.index % worldSize === rank);
}

export function taskLabel(index: number): string {
  return `task-${String(index).padStart(5, "0")}`;
}
