import { setImmediate } from "node:timers/promises";
import { isMainThread } from "node:worker_threads";

/** Longest stretch of work the main thread does without letting queued events in. */
const TURN_MS = 5;
let lastTurn = performance.now();

/**
 * On the main thread, which runs tasks itself and also hands the pool threads their next task:
 * lets queued events (a pool thread that finished and waits for work) in at least every few
 * milliseconds. Awaiting resolved promises never does that, so a long task on the main thread
 * otherwise left finished pool threads idle until its next I/O (up to 0.7 s per handout,
 * measured with 8 workers). A no-op on pool threads and between turns.
 */
export async function letEventsIn(): Promise<void> {
  if (!isMainThread) return;
  const now = performance.now();
  if (now - lastTurn < TURN_MS) return;
  await setImmediate();
  lastTurn = performance.now();
}
