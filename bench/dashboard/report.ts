/**
 * The dashboard benchmark's results: repeated timings (median, warm-up apart), the JSON file
 * (bench/results/dashboard.json, or dashboard-quick.json for --quick) and a markdown table.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../pipeline/runners.ts";

/** Repetitions of one measurement: the first (warm-up) apart, the median of the others. */
export interface Timing {
  warmup_s: number | null;
  runs_s: number[];
  median_s: number;
  min_s: number;
  max_s: number;
  /** Median CPU seconds (user + system, all threads) of the timed runs, where measured. */
  cpu_s: number | null;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Timing of a repeated measurement: wall times of the runs after the warm-up, their CPU seconds. */
export function timingOf(measured: { warmup: { wallS: number }; runs: readonly { wallS: number; cpuS?: number | undefined }[] }): Timing {
  return timing(
    measured.runs.map((r) => r.wallS),
    measured.warmup.wallS,
    measured.runs.map((r) => r.cpuS),
  );
}

export function timing(runs: readonly number[], warmup: number | null, cpu: readonly (number | undefined)[] = []): Timing {
  const cpuKnown = cpu.filter((c): c is number => c !== undefined);
  return {
    warmup_s: warmup,
    runs_s: [...runs],
    median_s: median(runs),
    min_s: Math.min(...runs),
    max_s: Math.max(...runs),
    cpu_s: cpuKnown.length > 0 ? median(cpuKnown) : null,
  };
}

/** CPU seconds of this process (all threads: DuckDB's included) spent in `fn`, and its wall time. */
export async function measured<T>(fn: () => Promise<T> | T): Promise<{ value: T; wallS: number; cpuS: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const wallS = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { value, wallS, cpuS: (used.user + used.system) / 1e6 };
}

export interface Results {
  benchmark: string;
  date: string;
  machine: Record<string, unknown>;
  input: {
    requested: string;
    turns: number;
    records: number;
    stats_files: number;
    stats_bytes: number;
    turns_per_file: number;
    row_group_rows: number;
    seed: number;
    small_turns: number;
    generate_s: number;
    template: string;
    generator: string;
  };
  repetitions: number;
  /** Dashboard.open + data({ live: false }) + dashboardHtml, in this process. */
  dashboard_load: Timing & {
    open_s: number;
    data_s: number;
    html_s: number;
    html_bytes: number;
    histogram_bins: number;
    class_rows: number;
    examples: number;
  };
  /** Median seconds of each part of data(), one at a time on an open session. */
  parts: Record<string, number>;
  /** Only the aggregations the baseline does: session, views, classRows, histograms. */
  duckdb_aggregations: Timing;
  /** `node bin/lwm-data.js dashboard <dir> --out <file>` as a subprocess. */
  cli: Timing & { max_rss_mb: number | null; aggregated_s: number | null };
  cli_small: Timing & { turns: number; max_rss_mb: number | null };
  /** `lwm-data dashboard --help`: Node start-up and loading the CLI's modules, no work. */
  cli_startup: Timing & { max_rss_mb: number | null };
  browser:
    | (Timing & { browser: string; launch_s: number; in_page_median_s: number; errors: string[]; html_bytes: number })
    | { skipped: string };
  baseline: Timing & { read_s: number; loop_s: number; rows: number; equal_to_duckdb: boolean; what: string };
  ratios: {
    baseline_over_duckdb_aggregations: number;
    baseline_over_dashboard_load: number;
    baseline_cpu_over_duckdb_cpu: number | null;
    cli_over_in_process: number;
    rss_n_over_n10: number | null;
    turns_n_over_n10: number;
  };
  notes: string[];
}

const f = (x: number | null | undefined, digits = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(digits));
const s = (t: Timing) =>
  `${f(t.median_s, 3)} s (min ${f(t.min_s, 3)}, max ${f(t.max_s, 3)}${t.cpu_s !== null ? `; ${f(t.cpu_s, 2)} CPU-s` : ""})`;
const warm = (t: Timing) => (t.warmup_s === null ? "" : `${f(t.warmup_s, 3)} s`);
const mb = (bytes: number) => `${f(bytes / 1e6, 1)} MB`;

export function markdownTable(r: Results): string {
  const n = r.input.turns.toLocaleString("en-US");
  const small = r.input.small_turns.toLocaleString("en-US");
  const d = r.dashboard_load;
  const b = r.browser;
  const rows: string[][] = [
    [
      "input: synthetic stats table (bench/dashboard/synthetic-run.ts)",
      `${n} turns · ${r.input.records.toLocaleString("en-US")} records · ${r.input.stats_files} file${r.input.stats_files === 1 ? "" : "s"} · ${mb(r.input.stats_bytes)} zstd Parquet`,
      "",
    ],
    [
      "dashboard load (DuckDB): Dashboard.open + data() + dashboardHtml(), in-process",
      `${s(d)} · open ${f(d.open_s, 3)} / data ${f(d.data_s, 3)} / html ${f(d.html_s, 3)} s · page ${mb(d.html_bytes)}`,
      warm(d),
    ],
    ...Object.entries(r.parts).map(([part, seconds]) => [`  part: ${part}`, `${f(seconds, 3)} s`, ""]),
    [
      "`lwm-data dashboard <dir> --out <file>` (CLI subprocess, wall)",
      `${s(r.cli)} · peak RSS ${f(r.cli.max_rss_mb, 0)} MB · it reports aggregation ${f(r.cli.aggregated_s, 2)} s`,
      warm(r.cli),
    ],
    [
      "  of which start-up: `lwm-data dashboard --help` (Node + the CLI's modules)",
      `${s(r.cli_startup)} · peak RSS ${f(r.cli_startup.max_rss_mb, 0)} MB`,
      warm(r.cli_startup),
    ],
    [
      "page load in headless Chromium: goto(file://) → body[data-ready=true]",
      "skipped" in b
        ? `skipped: ${b.skipped}`
        : `${s(b)} · in-page clock ${f(b.in_page_median_s, 3)} s · ${b.browser}${b.errors.length > 0 ? ` · ${b.errors.length} console/page errors` : ""}`,
      "skipped" in b ? "" : warm(b),
    ],
    [
      "DuckDB, the baseline's aggregations only (session + views + classRows + histograms)",
      s(r.duckdb_aggregations),
      warm(r.duckdb_aggregations),
    ],
    [
      "baseline: parquet-wasm → apache-arrow → JS loop (1 thread), same aggregations",
      `${s(r.baseline)} · read ${f(r.baseline.read_s, 3)} / loop ${f(r.baseline.loop_s, 3)} s · class rows and histogram bins ${r.baseline.equal_to_duckdb ? "equal DuckDB's ✓" : "DIFFER ✗"}`,
      warm(r.baseline),
    ],
    [
      "baseline / DuckDB (same aggregations; whole dashboard load)",
      `${f(r.ratios.baseline_over_duckdb_aggregations)}× wall; ${f(r.ratios.baseline_over_dashboard_load)}×; CPU ${f(r.ratios.baseline_cpu_over_duckdb_cpu)}×`,
      "",
    ],
    [
      `peak RSS of the CLI at ${n} / ${small} turns`,
      `${f(r.cli.max_rss_mb, 0)} MB / ${f(r.cli_small.max_rss_mb, 0)} MB · ${f(r.ratios.rss_n_over_n10)}× for ${f(r.ratios.turns_n_over_n10, 0)}× the turns (CLI ${f(r.cli_small.median_s, 3)} s at ${small})`,
      "",
    ],
  ];
  return ["| measure | median of timed runs | warm-up run |", "|---|---|---|", ...rows.map((cells) => `| ${cells.join(" | ")} |`)].join(
    "\n",
  );
}

export function writeResults(r: Results, jsonPath: string): void {
  mkdirSync(dirname(jsonPath), { recursive: true });
  writeFileSync(jsonPath, `${JSON.stringify(r, null, 2)}\n`);
  // bench/** is linted: leave the file the way the project's formatter writes JSON.
  const biome = join(ROOT, "node_modules/.bin/biome");
  if (existsSync(biome)) spawnSync(biome, ["format", "--write", jsonPath], { cwd: ROOT, stdio: "ignore" });
}
