import cliProgress from "cli-progress";
import type { SniffProgress } from "../pipeline/plan.ts";
import type { JobProgress } from "../pipeline/run-job.ts";

export type ProgressMode = "auto" | "bar" | "json" | "none";

export interface ProgressDisplay {
  update(progress: JobProgress): void;
  stop(): void;
}

const MB = 1e6;
const JSON_INTERVAL_MS = 10_000;

function rates(progress: JobProgress, started: number) {
  const seconds = Math.max((Date.now() - started) / 1000, 0.001);
  const bytesPerSecond = progress.bytes / seconds;
  return {
    seconds,
    recordsPerSecond: progress.records / seconds,
    mbPerSecond: bytesPerSecond / MB,
    etaSeconds: bytesPerSecond > 0 ? Math.max(0, (progress.bytesTotal - progress.bytes) / bytesPerSecond) : undefined,
  };
}

/** A terminal bar (cli-progress): MB of input, records/s, MB/s, tasks and ETA. */
function barDisplay(): ProgressDisplay {
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format:
        "{stage} {bar} {percentage}% | {value}/{total} MB | {records} records, {rate} rec/s, {mbps} MB/s | tasks {tasksDone}/{tasksTotal} | ETA {eta_formatted}",
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let begun = false;
  return {
    update(progress) {
      const { recordsPerSecond, mbPerSecond } = rates(progress, started);
      const payload = {
        stage: progress.stage.padEnd(10),
        records: progress.records,
        rate: recordsPerSecond.toFixed(0),
        mbps: mbPerSecond.toFixed(2),
        tasksDone: progress.tasksDone,
        tasksTotal: progress.tasksTotal,
      };
      const total = Number((progress.bytesTotal / MB).toFixed(1));
      const value = Number((progress.bytes / MB).toFixed(1));
      if (!begun) {
        bar.start(total, value, payload);
        begun = true;
      } else {
        bar.setTotal(total);
        bar.update(value, payload);
      }
    },
    stop() {
      if (begun) bar.stop();
    },
  };
}

/** One JSON object per line on stderr, every 10 s and when a task finishes: for cluster logs. */
function jsonDisplay(): ProgressDisplay {
  const started = Date.now();
  let lastWrite = 0;
  let lastTasksDone = -1;
  let lastStage = "";
  let last: JobProgress | undefined;
  const write = (progress: JobProgress, event: string) => {
    const { seconds, recordsPerSecond, mbPerSecond, etaSeconds } = rates(progress, started);
    const line = {
      event,
      stage: progress.stage,
      time: new Date().toISOString(),
      elapsed_s: Number(seconds.toFixed(1)),
      tasks_done: progress.tasksDone,
      tasks_total: progress.tasksTotal,
      records: progress.records,
      bytes: progress.bytes,
      bytes_total: progress.bytesTotal,
      records_per_s: Number(recordsPerSecond.toFixed(1)),
      mb_per_s: Number(mbPerSecond.toFixed(3)),
      eta_s: etaSeconds === undefined ? null : Number(etaSeconds.toFixed(0)),
    };
    process.stderr.write(`${JSON.stringify(line)}\n`);
    lastWrite = Date.now();
  };
  return {
    update(progress) {
      const first = last === undefined;
      last = progress;
      const taskEnded = !first && (progress.tasksDone !== lastTasksDone || progress.stage !== lastStage);
      if (first || taskEnded || Date.now() - lastWrite >= JSON_INTERVAL_MS)
        write(progress, first ? "start" : taskEnded ? "task" : "progress");
      lastTasksDone = progress.tasksDone;
      lastStage = progress.stage;
    },
    stop() {
      if (last) write(last, "end");
    },
  };
}

/** `auto`: a bar on a terminal, nothing when stderr is a pipe or a log file. */
export function progressDisplay(mode: ProgressMode): ProgressDisplay | undefined {
  if (mode === "json") return jsonDisplay();
  if (mode === "bar" || (mode === "auto" && process.stderr.isTTY)) return barDisplay();
  return undefined;
}

/** Format detection while planning: one line on stderr, `sniffing formats 1,234/5,600 files`. */
export interface SniffDisplay {
  onSniff(progress: SniffProgress): void;
  /** Clears the line (what the command prints next starts on a clean line). */
  stop(): void;
}

/** Redraws at most this often (10×/s, and once more at the total); nothing is drawn before it has passed once. */
const SNIFF_REDRAW_MS = 100;

/** The line shown for the progress of format detection. */
export function sniffProgressLine(progress: SniffProgress): string {
  const what = progress.key === "inputs" ? "formats" : `${progress.key} formats`;
  return `sniffing ${what} ${progress.sniffed.toLocaleString("en-US")}/${progress.total.toLocaleString("en-US")} files`;
}

/**
 * The sniffing line: on a terminal (`auto`, which `plan` and `validate` use) or always (`bar`);
 * nothing with `none`, nor with `json` (its lines are the job's progress events), nor when stderr
 * is a pipe or a log file. A plan that takes under 100 ms never draws it.
 */
export function sniffDisplay(
  mode: ProgressMode,
  stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr,
  now: () => number = Date.now,
): SniffDisplay | undefined {
  if (mode === "json") return jsonSniffDisplay(stream, now);
  if (!(mode === "bar" || (mode === "auto" && stream.isTTY))) return undefined;
  const started = now();
  let drawn = false;
  let lastDraw = started;
  const draw = (progress: SniffProgress) => {
    stream.write(`\r\x1b[2K${sniffProgressLine(progress)}`);
    drawn = true;
    lastDraw = now();
  };
  return {
    onSniff(progress) {
      // The last file of a line already shown is drawn too: the count does not stop short of the total.
      if (now() - lastDraw >= SNIFF_REDRAW_MS || (drawn && progress.sniffed === progress.total)) draw(progress);
    },
    stop() {
      if (drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}

/**
 * `--progress json`: sniffing as JSON lines among the job's progress events (cluster logs), one
 * when it starts, one every 10 s, and one when the last file is sniffed.
 */
function jsonSniffDisplay(stream: { write(text: string): unknown }, now: () => number): SniffDisplay {
  const started = now();
  let lastWrite = Number.NEGATIVE_INFINITY;
  const write = (progress: SniffProgress) => {
    const line = {
      event: "sniff",
      time: new Date(now()).toISOString(),
      elapsed_s: Number(((now() - started) / 1000).toFixed(1)),
      inputs: progress.key,
      sniffed: progress.sniffed,
      total: progress.total,
    };
    stream.write(`${JSON.stringify(line)}\n`);
    lastWrite = now();
  };
  return {
    onSniff(progress) {
      if (progress.sniffed === progress.total || now() - lastWrite >= JSON_INTERVAL_MS) write(progress);
    },
    stop() {},
  };
}
