import { relative } from "node:path";
import type { RemoteOutput } from "./remote-output.ts";
import { type TaskState, type TaskStateKind, taskIdsPath, taskStatePath } from "./task-state.ts";

/**
 * A record task's files in an `s3://` output. The task writes to the staging folder as to a local
 * output; at each checkpoint and at the end its new files go up before the state that lists them.
 */

/** Uploads a checkpoint's or the task's end: new shards and stats tables (then dropped locally), the appended files, then the state. */
export async function uploadTaskFiles(
  remote: RemoteOutput,
  state: TaskState,
  /** Shards and stats tables of segments finished since the last upload. */
  finished: readonly string[],
  kind: TaskStateKind,
  withIds = false,
): Promise<void> {
  await remote.push(finished, { dropLocal: true });
  // Quarantine and filtered files grow segment by segment: whole again each time, kept locally to append to.
  const appended = [state.quarantine?.path, state.filtered?.path].filter((path): path is string => path !== undefined);
  await remote.push(appended);
  if (withIds) await remote.push([named(remote, taskIdsPath(remote.local, state.task))]);
  await remote.push([named(remote, taskStatePath(remote.local, state.task, kind))]);
  if (kind === "done") await remote.remove([named(remote, taskStatePath(remote.local, state.task, "checkpoint"))]);
}

/** Before a task resumes from a checkpoint: its quarantine and filtered files as the checkpoint left them. */
export async function pullTaskFiles(remote: RemoteOutput, state: TaskState): Promise<void> {
  for (const path of [state.quarantine?.path, state.filtered?.path]) {
    if (path !== undefined && !(await remote.pull(path)))
      throw new Error(
        `${remote.objectUri(path)} is missing, though the task's checkpoint lists it; delete the checkpoint to redo the task`,
      );
  }
}

function named(remote: RemoteOutput, path: string): string {
  return relative(remote.local, path).split("\\").join("/");
}
