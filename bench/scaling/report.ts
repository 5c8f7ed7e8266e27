/**
 * bench/scaling.bench.ts's results: the JSON shape, the markdown tables (stdout and, for a full
 * run, the scaling section of docs/benchmarks.md between its markers) and the projection to
 * 10M trajectories (~5 TB) on 1,000 cores.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../pipeline/runners.ts";
import { LANE_PARTS, type LaneSummary, type LaneTimes } from "./lanes.ts";

/** `--workers N` needs at most 1/0.95 of the CPU per input MB of N independent single-worker processes. */
export const TARGETS = { cpuPerMbRatio: 0.95 } as const;

/** The job the issue sizes: 10M trajectories, ~5 TB, on 1,000 cores. */
export const PROJECTION = { trajectories: 10e6, bytes: 5e12, cores: 1000 } as const;

export type Mode = "workers" | "processes";

export interface Run {
  /** `workers`: one process, `--workers n`; `processes`: n single-worker processes (`--rank r --world-size n`) at once. */
  mode: Mode;
  n: number;
  wall_s: number;
  /** user + system CPU seconds of every process (bash `times`: its waited-for children). */
  cpu_s: number;
  mb_per_s: number;
  cpu_s_per_mb: number;
  mb_per_cpu_s: number;
  trajectories_per_cpu_s: number;
  trajectories: number;
  tokens: number;
  /** Bytes of everything the run wrote (shards, stats, manifest). */
  output_bytes: number;
  lanes: LaneSummary;
}

export interface Ratio {
  values: (number | null)[];
  median: number | null;
}

export interface Comparison {
  n: number;
  /** Wall time of the n processes / of `--workers n`: above 1, `--workers` is faster. */
  wall_processes_over_workers: Ratio;
  /** CPU-s per MB of the n processes / of `--workers n` (target ≥ 0.95). */
  cpu_processes_over_workers: Ratio;
  /** Wall time of 1 worker / of n (speed-up), each way. */
  speedup_workers: Ratio;
  speedup_processes: Ratio;
}

export interface Projection {
  /** Input MB per CPU second of the 1-worker run (median over passes), start-up and finalize included. */
  mb_per_cpu_s_1: number;
  trajectories_per_cpu_s_1: number;
  /** The same with the start-up run's CPU (a 7-trajectory input) taken out of each 1-worker run: the steady state of a long job. */
  mb_per_cpu_s_1_steady: number | null;
  /** The same with all of this machine's cores busy (`--workers busy_n`), median. */
  busy_n: number | null;
  mb_per_cpu_s_busy: number | null;
  corpus_bytes_per_trajectory: number;
  target_bytes_per_trajectory: number;
  core_hours: number;
  core_hours_steady: number | null;
  /** On PROJECTION.cores cores, every one busy until the end, at the 1-worker and at the busy rate. */
  wall_s_1: number;
  wall_s_busy: number | null;
  wall_s_steady: number | null;
  /** Input bytes per second that the cores together read at the 1-worker rate. */
  input_bytes_per_s: number;
  output_bytes: number;
  /** 256 MiB tasks (the default input.task_bytes): how many, per core, and how long one takes at the 1-worker rate. */
  tasks: number;
  task_s: number;
  /** 10M trajectories of this corpus's average size instead: wall on PROJECTION.cores at the 1-worker rate. */
  same_count_corpus_size_wall_s: number;
}

export interface Results {
  benchmark: string;
  date: string;
  command: string;
  machine: { cpus: number; cpu_model: string | undefined; node: string; platform: string; loadavg_start: number[]; loadavg_end: number[] };
  corpus: { requested: string; bytes: number; trajectories: number; files: number; seed: number; task_bytes: number; tasks: number };
  workers_list: number[];
  /** Per pass: CPU seconds of the 1-worker job on a 7-trajectory input (start-up, plan, finalize). */
  startup_cpu_s: number[];
  passes: Run[][];
  comparisons: Comparison[];
  projection: Projection;
  targets: typeof TARGETS;
  notes: string[];
}

export function median(values: readonly (number | null)[]): number | null {
  const measured = values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (measured.length === 0) return null;
  const mid = measured.length >> 1;
  return measured.length % 2 === 1 ? (measured[mid] as number) : ((measured[mid - 1] as number) + (measured[mid] as number)) / 2;
}

export const ratio = (values: (number | null)[]): Ratio => ({ values, median: median(values) });

const TASK_BYTES_DEFAULT = 268435456;

export function project(
  passes: readonly Run[][],
  corpus: Results["corpus"],
  busyN: number | null,
  startupCpuS: readonly number[],
): Projection {
  const runsOf = (mode: Mode, n: number) => passes.map((runs) => runs.find((r) => r.mode === mode && r.n === n) ?? null);
  const one = runsOf("workers", 1);
  const rate1 = median(one.map((r) => r?.mb_per_cpu_s ?? null)) ?? Number.NaN;
  const traj1 = median(one.map((r) => r?.trajectories_per_cpu_s ?? null)) ?? Number.NaN;
  const steady = median(
    one.map((r, pass) => {
      const startup = startupCpuS[pass];
      return r && startup !== undefined && r.cpu_s > startup ? corpus.bytes / 1e6 / (r.cpu_s - startup) : null;
    }),
  );
  const outRatio = median(one.map((r) => (r ? r.output_bytes / corpus.bytes : null))) ?? Number.NaN;
  const busy = busyN && busyN > 1 ? median(runsOf("workers", busyN).map((r) => r?.mb_per_cpu_s ?? null)) : null;
  const mb = PROJECTION.bytes / 1e6;
  const coreSeconds = mb / rate1;
  const wall1 = coreSeconds / PROJECTION.cores;
  const perTrajectory = corpus.bytes / corpus.trajectories;
  return {
    mb_per_cpu_s_1: rate1,
    trajectories_per_cpu_s_1: traj1,
    busy_n: busy ? busyN : null,
    mb_per_cpu_s_busy: busy,
    corpus_bytes_per_trajectory: perTrajectory,
    target_bytes_per_trajectory: PROJECTION.bytes / PROJECTION.trajectories,
    mb_per_cpu_s_1_steady: steady,
    core_hours: coreSeconds / 3600,
    core_hours_steady: steady ? mb / steady / 3600 : null,
    wall_s_1: wall1,
    wall_s_busy: busy ? mb / busy / PROJECTION.cores : null,
    wall_s_steady: steady ? mb / steady / PROJECTION.cores : null,
    input_bytes_per_s: PROJECTION.bytes / wall1,
    output_bytes: outRatio * PROJECTION.bytes,
    tasks: Math.ceil(PROJECTION.bytes / TASK_BYTES_DEFAULT),
    task_s: TASK_BYTES_DEFAULT / 1e6 / rate1,
    same_count_corpus_size_wall_s: (PROJECTION.trajectories * perTrajectory) / 1e6 / rate1 / PROJECTION.cores,
  };
}

const f = (v: number | null | undefined, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(digits));
const x = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? "n/a" : `${f(v)}×`);
const check = (v: number | null, target: number) => (v === null ? "" : v >= target ? " ✓" : " ✗");
const duration = (s: number) =>
  !Number.isFinite(s) ? "n/a" : s < 120 ? `${s.toFixed(0)} s` : s < 7200 ? `${(s / 60).toFixed(0)} min` : `${(s / 3600).toFixed(1)} h`;
const bytes = (b: number) =>
  !Number.isFinite(b) ? "n/a" : b >= 1e12 ? `${f(b / 1e12, 1)} TB` : b >= 1e9 ? `${f(b / 1e9, 1)} GB` : `${f(b / 1e6, 0)} MB`;

const how = (run: Pick<Run, "mode" | "n">) =>
  run.n === 1
    ? "1 worker (baseline)"
    : run.mode === "workers"
      ? `one process, \`--workers ${run.n}\``
      : `${run.n} processes × 1 worker (ranks)`;

const PART_LABELS: Record<keyof LaneTimes, string> = {
  startup: "start-up",
  on_cpu: "on CPU",
  no_core: "no free core",
  io_wait: "I/O wait",
  between: "between tasks",
  others: "waiting for the others",
  finish: "finalize + exit",
};

/** Every (mode, n) the passes ran, in the order of the first pass. */
function configs(passes: readonly Run[][]): Pick<Run, "mode" | "n">[] {
  const seen = new Map<string, Pick<Run, "mode" | "n">>();
  for (const runs of passes) for (const r of runs) seen.set(`${r.mode}:${r.n}`, { mode: r.mode, n: r.n });
  return [...seen.values()].sort((a, b) => a.n - b.n || (a.mode === "workers" ? -1 : 1));
}

export function markdownTables(r: Results): string {
  const all = (c: Pick<Run, "mode" | "n">) => r.passes.map((runs) => runs.find((run) => run.mode === c.mode && run.n === c.n) ?? null);
  const med = (c: Pick<Run, "mode" | "n">, pick: (run: Run) => number) => median(all(c).map((run) => (run ? pick(run) : null)));
  const passes = r.passes.length;
  const medianNote = passes > 1 ? ` (median of ${passes} passes)` : "";
  const runRows = configs(r.passes).map((c) => {
    const cmp = r.comparisons.find((k) => k.n === c.n);
    const speedup = c.n === 1 ? "1.00×" : x((c.mode === "workers" ? cmp?.speedup_workers : cmp?.speedup_processes)?.median);
    return `| ${c.n} | ${how(c)} | ${f(med(c, (run) => run.wall_s))} | ${f(med(c, (run) => run.mb_per_s))} | ${f(
      med(c, (run) => run.cpu_s),
      1,
    )} | ${f(
      med(c, (run) => run.cpu_s_per_mb),
      3,
    )} | ${speedup} |`;
  });
  const runs = [
    `Runs${medianNote}: input ${f(r.corpus.bytes / 1e6, 1)} MB, ${r.corpus.trajectories} trajectories, ${r.corpus.tasks} tasks of ${f(r.corpus.task_bytes / 1e6, 2)} MB.`,
    "",
    "| N | how | wall s | MB/s | CPU-s | CPU-s per MB | speed-up over 1 worker (wall) |",
    "|---|---|---|---|---|---|---|",
    ...runRows,
  ].join("\n");

  // Lane time over all passes together: shares of lanes × wall, and seconds per lane.
  const laneRows = configs(r.passes).map((c) => {
    const done = all(c).filter((run): run is Run => run !== null);
    const laneS = done.reduce((sum, run) => sum + run.lanes.lane_s, 0);
    const lanes = done.reduce((sum, run) => sum + run.lanes.lanes, 0);
    const cells = LANE_PARTS.map((part) => {
      const s = done.reduce((sum, run) => sum + run.lanes.parts[part], 0);
      return `${f(laneS ? (100 * s) / laneS : null, 0)}% (${f(lanes ? s / lanes : null, 2)} s)`;
    });
    const last = done.at(-1);
    const spread = last ? `${last.lanes.lanes} · ${last.lanes.tasks_per_lane[0]}–${last.lanes.tasks_per_lane[1]}` : "n/a";
    return `| ${c.n} | ${how(c)} | ${spread} | ${cells.join(" | ")} |`;
  });
  const lanes = [
    `Where each worker's time went (lane = a thread that runs tasks; share of lanes × wall, and seconds per lane${passes > 1 ? `, over all ${passes} passes` : ""}):`,
    "",
    `| N | how | lanes · tasks per lane | ${LANE_PARTS.map((p) => PART_LABELS[p]).join(" | ")} |`,
    `|---|---|---|${LANE_PARTS.map(() => "---").join("|")}|`,
    ...laneRows,
  ].join("\n");

  const verdictRows = r.comparisons.map((k) => {
    const each = (ratioOf: Ratio) => (passes > 1 ? `${ratioOf.values.map(x).join(" · ")} → ` : "");
    return [
      `| ${k.n} | CPU-s per MB: ${k.n} processes / \`--workers ${k.n}\` | ${each(k.cpu_processes_over_workers)}${x(k.cpu_processes_over_workers.median)}${check(k.cpu_processes_over_workers.median, TARGETS.cpuPerMbRatio)} | ≥ ${TARGETS.cpuPerMbRatio}× |`,
      `| ${k.n} | wall: ${k.n} processes / \`--workers ${k.n}\` | ${each(k.wall_processes_over_workers)}${x(k.wall_processes_over_workers.median)} |  |`,
    ].join("\n");
  });
  const verdicts = [
    `\`--workers N\` against N independent single-worker processes${passes > 1 ? " (each pass → median; the verdict is on the median)" : ""}:`,
    "",
    "| N | ratio | result | target |",
    "|---|---|---|---|",
    ...verdictRows,
  ].join("\n");

  const p = r.projection;
  const proj = [
    `Projection: ${PROJECTION.trajectories / 1e6}M trajectories, ~${PROJECTION.bytes / 1e12} TB, on ${PROJECTION.cores.toLocaleString("en")} cores, from the per-core rate measured here:`,
    "",
    "| quantity | value |",
    "|---|---|",
    `| per-core rate, 1 worker (input per CPU second, start-up and finalize included) | ${f(p.mb_per_cpu_s_1)} MB/s · ${f(p.trajectories_per_cpu_s_1, 0)} trajectories/s |`,
    `| … start-up excluded (the CPU of a 7-trajectory run taken out): the steady state of a long job | ${f(p.mb_per_cpu_s_1_steady)} MB/s |`,
    ...(p.busy_n
      ? [
          `| per-core rate with all of this machine's cores busy (\`--workers ${p.busy_n}\`, start-up included) | ${f(p.mb_per_cpu_s_busy)} MB/s |`,
        ]
      : []),
    `| trajectory size: this corpus / the issue's 5 TB ÷ 10M | ${f(p.corpus_bytes_per_trajectory / 1e3, 1)} KB / ${f(p.target_bytes_per_trajectory / 1e3, 0)} KB (${f(p.target_bytes_per_trajectory / p.corpus_bytes_per_trajectory, 0)}×): scaled by bytes |`,
    `| CPU time for 5 TB | ${f(p.core_hours, 0)} core-hours (start-up excluded: ${f(p.core_hours_steady, 0)}) |`,
    `| wall time on ${PROJECTION.cores.toLocaleString("en")} cores | **${duration(p.wall_s_1)}** at the 1-worker rate; ${p.wall_s_steady ? duration(p.wall_s_steady) : "n/a"} start-up excluded${p.wall_s_busy ? `; ${duration(p.wall_s_busy)} at the all-cores-busy rate` : ""} |`,
    `| input read by all cores together | ${bytes(p.input_bytes_per_s)}/s (${f(p.input_bytes_per_s / 1e6 / PROJECTION.cores, 1)} MB/s per core) |`,
    `| output (shards + stats, at this corpus's output/input ratio) | ${bytes(p.output_bytes)} |`,
    `| tasks at the default input.task_bytes (256 MiB) | ${p.tasks.toLocaleString("en")} (${f(p.tasks / PROJECTION.cores, 1)} per core), ${duration(p.task_s)} each: the last wave's imbalance is at most one task |`,
    `| for contrast: 10M trajectories of this corpus's size (${bytes(PROJECTION.trajectories * p.corpus_bytes_per_trajectory)}) | ${duration(p.same_count_corpus_size_wall_s)} on ${PROJECTION.cores.toLocaleString("en")} cores |`,
  ].join("\n");
  return [runs, lanes, verdicts, proj].join("\n\n");
}

export function writeResults(r: Results, jsonPath: string): void {
  mkdirSync(dirname(jsonPath), { recursive: true });
  writeFileSync(jsonPath, `${JSON.stringify(r, null, 2)}\n`);
  // bench/** is linted: leave the file the way the project's formatter writes JSON.
  const biome = join(ROOT, "node_modules/.bin/biome");
  if (jsonPath.startsWith(ROOT) && existsSync(biome)) spawnSync(biome, ["format", "--write", jsonPath], { cwd: ROOT, stdio: "ignore" });
}

const START = "<!-- scaling-bench:start (written by bench/scaling.bench.ts) -->";
const END = "<!-- scaling-bench:end -->";

/** Replaces the scaling section of the docs page between its markers (appending one when missing). */
export function writeDocs(r: Results, docsPath: string, tables: string): void {
  const m = r.machine;
  const section = [
    START,
    `Last run: ${r.date.slice(0, 10)}, ${m.cpus} × ${m.cpu_model}, Node ${m.node}, \`${r.command}\` (load average at start ${m.loadavg_start.map((v) => v.toFixed(1)).join(" ")}, at the end ${m.loadavg_end.map((v) => v.toFixed(1)).join(" ")}).`,
    "",
    tables,
    "",
    ...r.notes.map((n) => `- ${n}`),
    END,
  ].join("\n");
  mkdirSync(dirname(docsPath), { recursive: true });
  const current = existsSync(docsPath) ? readFileSync(docsPath, "utf8") : "# Benchmarks\n";
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}`
      : `${current.trimEnd()}\n\n## Scaling: \`--workers N\` against N independent processes: \`node bench/scaling.bench.ts\`\n\n${section}\n`;
  writeFileSync(docsPath, next);
}
