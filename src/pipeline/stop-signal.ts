/**
 * A request to stop a run early (SIGTERM, e.g. Slurm preemption or a time limit), shared by the
 * main thread and every worker thread: a flag in a SharedArrayBuffer, so a worker sees it between
 * two records without a message round trip.
 */
export type StopSignal = Int32Array;

export function createStopSignal(): StopSignal {
  return new Int32Array(new SharedArrayBuffer(4));
}

export function requestStop(signal: StopSignal): void {
  Atomics.store(signal, 0, 1);
}

export function stopRequested(signal: StopSignal | undefined): boolean {
  return signal !== undefined && Atomics.load(signal, 0) === 1;
}

/** Message of the error a task throws when it stops on request (it survives a worker boundary). */
const STOPPED = "stopped on request";

/** Thrown by a task that stopped at a record boundary; its last checkpoint stands. */
export class TaskStopped extends Error {
  constructor(task: number) {
    super(`task ${task}: ${STOPPED}`);
    this.name = "TaskStopped";
  }
}

/** True for a TaskStopped, also after a worker thread cloned it into a plain Error. */
export function isTaskStopped(err: unknown): boolean {
  return err instanceof Error && err.message.endsWith(STOPPED);
}
