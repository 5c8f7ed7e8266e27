/**
 * Where each worker's time went in one timed run, from the timing log that `lwm-data run` writes
 * when LWM_BENCH_REPORT names a file (src/pipeline/timing-log.ts): one line per task, saying which
 * process and thread ran it, when, how long the thread's event loop sat idle in it (waiting for
 * I/O) and how much CPU the thread used in it.
 *
 * A lane is one thread that ran tasks: with `--workers N`, the main thread and the N-1 pool
 * threads of one process; with N independent processes, each process's main thread. Every lane's
 * time from the run's start (T0, the bench spawning the command) to its end (T1, the last process
 * exiting) is split into parts that add up to T1 − T0:
 *   start-up    T0 → the lane's first task: process or thread start, modules, the job's plan;
 *   on CPU      in tasks, the thread's own CPU time;
 *   no core     in tasks, ready to run but not on a CPU (event loop busy, thread CPU not advancing:
 *               more runnable threads than cores, or V8 pausing the thread);
 *   I/O wait    in tasks, the event loop idle: waiting for reads, writes, timers;
 *   between     between two tasks of the lane: taking the next one from the queue;
 *   others      the lane's last task end → the last task end of any lane: waiting for the others;
 *   finish      the last task end → T1: the manifest (finalize) and process exit.
 */

export interface TaskLine {
  pid: number;
  thread: number;
  event: "task";
  stage: string;
  task: number;
  start: number;
  end: number;
  idle_ms: number;
  active_ms: number;
  cpu_ms: number;
}

export interface StageLine {
  pid: number;
  thread: number;
  event: "stage";
  stage: string;
  workers: number;
  process_start: number;
  start: number;
  end: number;
}

export type LogLine = TaskLine | StageLine;

export function parseLog(text: string): LogLine[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as LogLine);
}

/** Seconds, summed over the lanes. */
export interface LaneTimes {
  startup: number;
  on_cpu: number;
  no_core: number;
  io_wait: number;
  between: number;
  others: number;
  finish: number;
}

export const LANE_PARTS: readonly (keyof LaneTimes)[] = ["startup", "on_cpu", "no_core", "io_wait", "between", "others", "finish"];

export interface LaneSummary {
  /** Threads that ran at least one task, and the tasks they ran. */
  lanes: number;
  tasks: number;
  /** lanes × (T1 − T0), seconds: what the parts below add up to. */
  lane_s: number;
  parts: LaneTimes;
  /** Tasks per lane, fewest and most. */
  tasks_per_lane: [number, number];
}

/** Splits every lane's time between T0 and T1 (epoch milliseconds) into the parts above. */
export function summarizeLanes(lines: readonly LogLine[], t0: number, t1: number): LaneSummary {
  const byLane = new Map<string, TaskLine[]>();
  for (const line of lines) {
    if (line.event !== "task") continue;
    const key = `${line.pid}:${line.thread}`;
    const list = byLane.get(key) ?? [];
    list.push(line);
    byLane.set(key, list);
  }
  const parts: LaneTimes = { startup: 0, on_cpu: 0, no_core: 0, io_wait: 0, between: 0, others: 0, finish: 0 };
  const all = [...byLane.values()].flat();
  if (all.length === 0) return { lanes: 0, tasks: 0, lane_s: 0, parts, tasks_per_lane: [0, 0] };
  const lastEnd = Math.max(...all.map((t) => t.end));
  for (const tasks of byLane.values()) {
    tasks.sort((a, b) => a.start - b.start);
    const first = tasks[0] as TaskLine;
    const last = tasks.at(-1) as TaskLine;
    parts.startup += first.start - t0;
    for (const [i, task] of tasks.entries()) {
      const span = task.end - task.start;
      // The loop's idle time is measured over the task; what is left is the thread running JS or
      // native code, on a core (its CPU time) or waiting for one.
      const idle = Math.min(task.idle_ms, span);
      const cpu = Math.min(task.cpu_ms, span - idle);
      parts.io_wait += idle;
      parts.on_cpu += cpu;
      parts.no_core += span - idle - cpu;
      const next = tasks[i + 1];
      if (next) parts.between += next.start - task.end;
    }
    parts.others += lastEnd - last.end;
    parts.finish += t1 - lastEnd;
  }
  for (const key of LANE_PARTS) parts[key] /= 1000;
  const counts = [...byLane.values()].map((tasks) => tasks.length);
  return {
    lanes: byLane.size,
    tasks: all.length,
    lane_s: (byLane.size * (t1 - t0)) / 1000,
    parts,
    tasks_per_lane: [Math.min(...counts), Math.max(...counts)],
  };
}
