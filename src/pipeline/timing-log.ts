/**
 * An optional timing log for benchmarks (bench/scaling.bench.ts). With `LWM_BENCH_REPORT=<file>`
 * in the environment, every thread that runs a task appends one JSON line per task to that file
 * (which process and thread, when it started and ended, how long the thread's event loop sat
 * idle meanwhile — waiting for I/O — and the thread's own CPU time), and each process one line
 * per stage it ran on its threads. Several processes may share the file (one short `O_APPEND`
 * write per line). Without the variable nothing is measured or written.
 */
import { appendFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { threadId } from "node:worker_threads";

const REPORT = process.env.LWM_BENCH_REPORT;

/** Wall-clock milliseconds since the epoch, comparable between threads and processes. */
const now = () => performance.timeOrigin + performance.now();

function threadCpuMs(): number {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
}

function append(line: Record<string, unknown>): void {
  appendFileSync(REPORT as string, `${JSON.stringify({ pid: process.pid, thread: threadId, ...line })}\n`);
}

/** Runs one task (or stage unit) of `stage`, logging its timing when the log is on. */
export async function loggedTask<T>(stage: string, task: number, run: () => Promise<T>): Promise<T> {
  if (!REPORT) return run();
  const start = now();
  const cpuStart = threadCpuMs();
  const loop = performance.eventLoopUtilization();
  try {
    return await run();
  } finally {
    const used = performance.eventLoopUtilization(loop);
    append({ event: "task", stage, task, start, end: now(), idle_ms: used.idle, active_ms: used.active, cpu_ms: threadCpuMs() - cpuStart });
  }
}

/** Runs one stage's tasks of this process on `workers` threads, logging its span when the log is on. */
export async function loggedStage<T>(stage: string, workers: number, run: () => Promise<T>): Promise<T> {
  if (!REPORT) return run();
  const start = now();
  try {
    return await run();
  } finally {
    append({ event: "stage", stage, workers, process_start: performance.timeOrigin, start, end: now() });
  }
}
