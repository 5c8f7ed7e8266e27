/**
 * Turns the measurements into bench/results/pipeline.json and a short markdown table, which
 * also replaces the pipeline section of docs/benchmarks.md (between its markers) so the
 * committed docs always show the last run's numbers next to the targets of issue 5.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { writeResultsJson } from "../bench-files.ts";
import type { FloorResult } from "./floor.ts";
import type { JobRun } from "./runners.ts";

export const TARGETS = { endToEndOverFloor: 0.8, oursOverDatatrove: 1.5, speedup1To2: 1.9, rss10xOver1x: 1.1 } as const;

export interface Throughput {
  wall_s: number;
  cpu_s: number | null;
  max_rss_mb: number | null;
  trajectories: number;
  tokens: number;
  tasks: number | null;
  /** Input MB (10^6 bytes) per wall-clock second. */
  mb_per_s: number;
  /** Input MB per CPU second (user + system): throughput per core, unaffected by other load. */
  mb_per_cpu_s: number | null;
  trajectories_per_s: number;
  trajectories_per_cpu_s: number | null;
}

export function throughput(run: JobRun, inputBytes: number): Throughput {
  const mb = inputBytes / 1e6;
  const cpu = run.cpuS ?? null;
  return {
    wall_s: run.wallS,
    cpu_s: cpu,
    max_rss_mb: run.maxRssMb ?? null,
    trajectories: run.trajectories,
    tokens: run.tokens,
    tasks: run.tasks ?? null,
    mb_per_s: mb / run.wallS,
    mb_per_cpu_s: cpu ? mb / cpu : null,
    trajectories_per_s: run.trajectories / run.wallS,
    trajectories_per_cpu_s: cpu ? run.trajectories / cpu : null,
  };
}

export interface Results {
  benchmark: string;
  date: string;
  machine: Record<string, unknown>;
  corpus: { requested: string; bytes: number; trajectories: number; files: number; seed: number; generator: string };
  config: Record<string, unknown>;
  lwm_data: {
    workers_1: Throughput;
    workers_2: Throughput | null;
    /** The job over two single-worker rank processes at once: the machine's 2-core ceiling. */
    two_ranks?: Throughput | null;
    rss_1x: Throughput;
    rss_10x: Throughput | null;
    rss_workers: number | null;
  };
  /** The same jobs on a 7-trajectory input: what start-up costs. */
  startup: { lwm_data: Throughput; datatrove: Throughput | null };
  floor: FloorResult & { mb_per_s: number; mb_per_cpu_s: number; text_mb_per_cpu_s: number };
  datatrove: (Throughput & { version: string; setup: string }) | { skipped: string };
  ratios: {
    end_to_end_over_floor: number | null;
    speedup_1_to_2: number | null;
    speedup_two_processes?: number | null;
    rss_10x_over_1x: number | null;
    ours_over_datatrove: number | null;
    end_to_end_over_floor_steady: number | null;
    /** The 10× memory run's per-core throughput over the floor's: start-up amortized, 2 workers. */
    end_to_end_over_floor_10x?: number | null;
    ours_over_datatrove_steady: number | null;
  };
  targets: typeof TARGETS;
  notes: string[];
  /** With --repeat N > 1: every pass's target ratios (this object is the last pass). */
  repeats?: Repeats;
}

type RatioName = keyof Results["ratios"];

/** Each ratio over the passes, in pass order, with its median (what the verdicts use). */
export interface Repeats {
  passes: number;
  ratios: Partial<Record<RatioName, { values: (number | null)[]; median: number | null; min: number | null; max: number | null }>>;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function summarizeRepeats(passes: readonly Results[]): Repeats {
  const names = Object.keys(passes[0]?.ratios ?? {}) as RatioName[];
  const ratios: Repeats["ratios"] = {};
  for (const name of names) {
    const values = passes.map((pass) => pass.ratios[name] ?? null);
    const measured = values.filter((value): value is number => value !== null);
    ratios[name] = {
      values,
      median: median(measured),
      min: measured.length ? Math.min(...measured) : null,
      max: measured.length ? Math.max(...measured) : null,
    };
  }
  return { passes: passes.length, ratios };
}

const f = (x: number | null | undefined, digits = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(digits));
/** A ratio as `1.23×`, or n/a. */
const x = (ratio: number | null) => (ratio === null ? "n/a" : `${f(ratio)}×`);
const check = (value: number | null, target: number, atLeast: boolean) =>
  value === null ? "" : (atLeast ? value >= target : value <= target) ? " ✓" : " ✗";

export function markdownTable(r: Results): string {
  const { workers_1: w1, workers_2: w2, rss_1x, rss_10x } = r.lwm_data;
  const dt = "skipped" in r.datatrove ? undefined : r.datatrove;
  const rows = [
    [
      "input: synthetic, 7 domains (bench/synthetic)",
      `${f(r.corpus.bytes / 1e6, 1)} MB · ${r.corpus.trajectories} trajectories · ${r.corpus.files} files · ${w1.tasks ?? "?"} tasks`,
      "",
    ],
    [
      "lwm-data `run`, 1 worker",
      `${f(w1.mb_per_s)} MB/s · ${f(w1.trajectories_per_s, 0)} traj/s · per core ${f(w1.mb_per_cpu_s)} MB/s · ${w1.tokens} tokens`,
      "",
    ],
    [
      "baseline: tokenizer-only floor (same Qwen3 tokenizer, same text, in-process)",
      `per core ${f(r.floor.mb_per_cpu_s)} MB/s of input (${f(r.floor.text_mb_per_cpu_s)} MB/s of text) · ${r.floor.tokens} tokens`,
      "",
    ],
    [
      "end-to-end / floor, per core",
      `${x(r.ratios.end_to_end_over_floor)}${check(r.ratios.end_to_end_over_floor, TARGETS.endToEndOverFloor, true)} (start-up excluded: ${x(r.ratios.end_to_end_over_floor_steady)}; the 10× run, ${r.lwm_data.rss_workers ?? "default"} worker(s): ${x(r.ratios.end_to_end_over_floor_10x ?? null)})`,
      `≥ ${TARGETS.endToEndOverFloor}×`,
    ],
    [
      "lwm-data `run`, 2 workers: speed-up over 1",
      w2
        ? `${f(w2.mb_per_s)} MB/s · ${x(r.ratios.speedup_1_to_2)}${check(r.ratios.speedup_1_to_2, TARGETS.speedup1To2, true)}`
        : "n/a (no --workers)",
      `≥ ${TARGETS.speedup1To2}×`,
    ],
    [
      "reference: the same job as 2 separate single-worker processes (ranks 0/1 at once): this machine's 2-core ceiling",
      r.lwm_data.two_ranks && r.ratios.speedup_two_processes
        ? `${f(r.lwm_data.two_ranks.mb_per_s)} MB/s · ${x(r.ratios.speedup_two_processes)} over 1 worker${
            r.ratios.speedup_1_to_2
              ? ` · 2 workers reach ${f((r.ratios.speedup_1_to_2 / r.ratios.speedup_two_processes) * 100, 0)}% of it`
              : ""
          }`
        : "n/a",
      "",
    ],
    [
      `peak RSS at 1× / 10× input (${r.lwm_data.rss_workers ?? "default"} worker(s))`,
      rss_10x
        ? `${f(rss_1x.max_rss_mb, 0)} MB / ${f(rss_10x.max_rss_mb, 0)} MB · ${x(r.ratios.rss_10x_over_1x)}${check(r.ratios.rss_10x_over_1x, TARGETS.rss10xOver1x, false)}`
        : "n/a",
      `≤ ${TARGETS.rss10xOver1x}×`,
    ],
    [
      `baseline: datatrove${dt ? ` ${dt.version} (1 task, 1 worker, 1 thread)` : ""}`,
      dt
        ? `${f(dt.mb_per_s)} MB/s · per core ${f(dt.mb_per_cpu_s)} MB/s · ${dt.tokens} tokens · peak RSS ${f(dt.max_rss_mb, 0)} MB`
        : `skipped: ${(r.datatrove as { skipped: string }).skipped}`,
      "",
    ],
    [
      "start-up (7-trajectory input), lwm-data / datatrove",
      `${f(r.startup.lwm_data.wall_s, 1)} s (${f(r.startup.lwm_data.cpu_s, 1)} CPU-s) / ${r.startup.datatrove ? `${f(r.startup.datatrove.wall_s, 1)} s (${f(r.startup.datatrove.cpu_s, 1)} CPU-s)` : "n/a"}`,
      "",
    ],
    [
      "lwm-data / datatrove, per core",
      `${x(r.ratios.ours_over_datatrove)}${check(r.ratios.ours_over_datatrove, TARGETS.oursOverDatatrove, true)} (start-up excluded: ${x(r.ratios.ours_over_datatrove_steady)})`,
      `≥ ${TARGETS.oursOverDatatrove}×`,
    ],
  ];
  const table = ["| measure | result | target |", "|---|---|---|", ...rows.map((cells) => `| ${cells.join(" | ")} |`)].join("\n");
  return r.repeats ? `${table}\n\n${repeatsTable(r.repeats)}` : table;
}

/** The target ratios over every pass: the values, and the verdict on their median. */
function repeatsTable(repeats: Repeats): string {
  const row = (label: string, name: RatioName, target?: { value: number; atLeast: boolean }) => {
    const ratio = repeats.ratios[name];
    if (!ratio) return `| ${label} | n/a | n/a | |`;
    const verdict = target ? check(ratio.median, target.value, target.atLeast) : "";
    return `| ${label} | ${ratio.values.map(x).join(" · ")} | ${x(ratio.median)}${verdict} | ${target ? `${target.atLeast ? "≥" : "≤"} ${target.value}×` : ""} |`;
  };
  return [
    `Over ${repeats.passes} passes of every measurement (the table above is the last; verdicts on the median):`,
    "",
    "| ratio | each pass | median | target |",
    "|---|---|---|---|",
    row("end-to-end / floor, per core", "end_to_end_over_floor", { value: TARGETS.endToEndOverFloor, atLeast: true }),
    row("… start-up excluded", "end_to_end_over_floor_steady"),
    row("… the 10× run (start-up amortized)", "end_to_end_over_floor_10x"),
    row("2 workers: speed-up over 1", "speedup_1_to_2", { value: TARGETS.speedup1To2, atLeast: true }),
    row("… the 2-core ceiling (2 separate processes)", "speedup_two_processes"),
    row("peak RSS 10× / 1×", "rss_10x_over_1x", { value: TARGETS.rss10xOver1x, atLeast: false }),
    row("lwm-data / datatrove, per core", "ours_over_datatrove", { value: TARGETS.oursOverDatatrove, atLeast: true }),
    row("… start-up excluded", "ours_over_datatrove_steady"),
  ].join("\n");
}

export function writeResults(r: Results, jsonPath: string): void {
  writeResultsJson(jsonPath, r);
}

const START = "<!-- pipeline-bench:start (written by bench/pipeline.bench.ts) -->";
const END = "<!-- pipeline-bench:end -->";

/** Replaces the pipeline section of the docs page (creating the page when missing). */
export function writeDocs(r: Results, docsPath: string, table: string): void {
  const machine = r.machine as { cpu_model?: string; cpus?: number; loadavg_start?: number[] };
  const section = [
    START,
    `Last run: ${r.date.slice(0, 10)}, ${machine.cpus} × ${machine.cpu_model}, \`node bench/pipeline.bench.ts ${r.corpus.requested}\` (load average at start ${machine.loadavg_start?.map((x) => x.toFixed(1)).join(" ")}).`,
    "",
    table,
    "",
    ...r.notes.map((n) => `- ${n}`),
    END,
  ].join("\n");
  mkdirSync(dirname(docsPath), { recursive: true });
  const current = existsSync(docsPath) ? readFileSync(docsPath, "utf8") : "";
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}`
      : `${current || "# Benchmarks\n"}\n## Pipeline (issue 5)\n\n${section}\n`;
  writeFileSync(docsPath, next);
}
