/**
 * Dashboard benchmark: how long the mask-statistics dashboard takes to load on a big run, one
 * run, side by side, each measurement repeated (median; the first run is a warm-up, reported apart):
 *   - dashboard load (DuckDB): Dashboard.open + data() + dashboardHtml() in-process, i.e. what
 *     `lwm-data dashboard --out` spends before writing, with a breakdown by query;
 *   - the same through the CLI as users run it (`node bin/lwm-data.js dashboard <dir> --out`);
 *   - page load of the written file in headless Chromium, until body[data-ready=true];
 *   - baseline: the same aggregations (class rows, histograms) without DuckDB, parquet-wasm +
 *     apache-arrow + a JS loop (bench/dashboard/baseline.ts), checked equal to DuckDB's;
 *   - peak RSS of the CLI at N and N/10 turns (GNU time).
 * Input: a synthetic output folder (bench/dashboard/synthetic-run.ts) whose manifest is built on
 * a real one (`lwm-data run configs/demo.yaml`, run here into the temp dir, or --template).
 * Results: bench/results/dashboard.json (--quick: dashboard-quick.json) and a markdown table.
 *
 *   node bench/dashboard.bench.ts [--turns 1000000] [--quick] [--reps N] [--seed N]
 *                                 [--per-file 250000] [--template manifest.json] [--keep] [--results PATH]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Dashboard } from "../src/dashboard/build-dashboard.ts";
import { DuckSession } from "../src/dashboard/duckdb-session.ts";
import { attachTokens, sampleExamples } from "../src/dashboard/example-turns.ts";
import { dashboardHtml } from "../src/dashboard/page-html.ts";
import { openRunOutput } from "../src/dashboard/run-output.ts";
import { classRows, histograms, quarantineReasons } from "../src/dashboard/stats-queries.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";
import { baselineAggregations, differences } from "./dashboard/baseline.ts";
import { CHROMIUM, pageLoads } from "./dashboard/browser.ts";
import { markdownTable, measured, median, type Results, timing, timingOf, writeResults } from "./dashboard/report.ts";
import { ROW_GROUP_ROWS, type SyntheticRun, writeSyntheticRun } from "./dashboard/synthetic-run.ts";
import { ROOT } from "./pipeline/runners.ts";
import { hasGnuTime, type Timed, timed } from "./pipeline/timed.ts";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "1000000" },
    quick: { type: "boolean", default: false },
    reps: { type: "string" },
    seed: { type: "string", default: "1" },
    "per-file": { type: "string", default: "250000" },
    template: { type: "string" },
    keep: { type: "boolean", default: false },
    results: { type: "string" },
  },
});

/** `1000000`, `1e6`, `1M`, `250k`. */
function parseCount(text: string, flag: string): number {
  const match = /^([\d.e+]+)\s*([kKmM]?)$/.exec(text.trim());
  const n = match ? Number(match[1]) * ({ k: 1e3, m: 1e6 }[(match[2] ?? "").toLowerCase()] ?? 1) : Number.NaN;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${flag} must be a positive whole number (e.g. 1000000, 1e6, 1M), got ${JSON.stringify(text)}`);
  return n;
}

// --quick (CI): 100k turns, small enough to finish well under a minute.
const turns = values.quick ? 100_000 : parseCount(values.turns, "--turns");
const smallTurns = Math.max(1, Math.round(turns / 10));
const reps = values.reps ? parseCount(values.reps, "--reps") : values.quick ? 3 : 7;
const seed = Number(values.seed);
const turnsPerFile = parseCount(values["per-file"], "--per-file");
const resultsPath = values.results ?? join(ROOT, values.quick ? "bench/results/dashboard-quick.json" : "bench/results/dashboard.json");
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");
const log = (message: string) => console.error(`[bench] ${message}`);

const notes: string[] = [];
if (!hasGnuTime())
  notes.push("GNU time (/usr/bin/time, Debian package `time`) is missing: the CLI's peak RSS and CPU time were not measured.");
const loadStart = loadavg();
if (loadStart[0] !== undefined && loadStart[0] > cpus().length * 0.5)
  notes.push(
    `The machine was busy at the start (load average ${loadStart[0].toFixed(1)} on ${cpus().length} cores): wall-clock numbers are pessimistic.`,
  );

/** The manifest to build on: --template, or a fresh run of the demo job (about 2 s). */
function templateManifest(work: string): { manifest: Manifest; source: string } {
  if (values.template) return { manifest: JSON.parse(readFileSync(values.template, "utf8")) as Manifest, source: values.template };
  const out = join(work, "demo");
  log("template manifest: lwm-data run configs/demo.yaml");
  const child = spawnSync(NODE, [CLI, "run", "configs/demo.yaml", "--output", out, "--progress", "none"], { cwd: ROOT, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`lwm-data run configs/demo.yaml failed:\n${child.stdout}${child.stderr}`);
  return {
    manifest: JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest,
    source: "manifest of `lwm-data run configs/demo.yaml` (this checkout)",
  };
}

/** runs + 1 calls of `fn`: the first is the warm-up. */
async function repeat<T>(label: string, fn: () => Promise<T>): Promise<{ warmup: T; runs: T[] }> {
  log(`${label}: warm-up + ${reps} runs`);
  const warmup = await fn();
  const runs: T[] = [];
  for (let i = 0; i < reps; i++) runs.push(await fn());
  return { warmup, runs };
}

const work = mkdtempSync(join(tmpdir(), "lwm-bench-dashboard-"));
try {
  const template = templateManifest(work);
  log(
    `generating ${turns.toLocaleString("en-US")} synthetic turns (+ ${smallTurns.toLocaleString("en-US")} for the memory run) in ${work}`,
  );
  const synth = (dir: string, n: number): Promise<SyntheticRun> =>
    writeSyntheticRun({ dir: join(work, dir), turns: n, turnsPerFile, template: template.manifest, seed });
  const big = await synth("run", turns);
  const small = await synth("run-small", smallTurns);
  log(`${big.files} stats file(s), ${(big.statsBytes / 1e6).toFixed(1)} MB, ${big.records} records, in ${big.seconds.toFixed(1)} s`);
  const statsFiles = (JSON.parse(readFileSync(join(big.dir, "manifest.json"), "utf8")) as Manifest).masking.stats_files.map((f) =>
    join(big.dir, f.path),
  );

  // 1. In-process: what `lwm-data dashboard --out` does before it writes the file.
  const loads = await repeat("dashboard load (DuckDB), in-process", async () => {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const dashboard = await Dashboard.open([big.dir]);
    const t1 = performance.now();
    try {
      const data = await dashboard.data({ live: false });
      const t2 = performance.now();
      const html = dashboardHtml(data);
      const t3 = performance.now();
      const used = process.cpuUsage(cpu);
      return {
        wallS: (t3 - t0) / 1000,
        openS: (t1 - t0) / 1000,
        dataS: (t2 - t1) / 1000,
        htmlS: (t3 - t2) / 1000,
        cpuS: (used.user + used.system) / 1e6,
        htmlBytes: Buffer.byteLength(html),
        run: data.runs[0],
      };
    } finally {
      dashboard.close();
    }
  });
  const first = loads.runs[0]?.run;
  if (!first || first.summary.turns !== big.turns) throw new Error(`the dashboard saw ${first?.summary.turns} turns, not ${big.turns}`);

  // 2. data()'s parts one at a time, on a fresh session each time.
  log(`parts of data(): ${reps} runs`);
  const parts: Record<string, number[]> = {};
  const part = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
    const { value, wallS } = await measured(fn);
    parts[name] = [...(parts[name] ?? []), wallS];
    return value;
  };
  for (let i = 0; i < reps; i++) {
    const tokenizer = await part("loadTokenizer (in Dashboard.open; run without shards: decodes nothing)", () =>
      loadTokenizer({ name: template.manifest.tokenizer.name }),
    );
    const db = await part("DuckSession.open", () => DuckSession.open());
    try {
      const run = await part("openRunOutput (manifest, file checks, view)", () => openRunOutput(db, big.dir, 0));
      await part("classRows", () => classRows(db, run));
      const sampled = await part("sampleExamples (6 per domain × class × decision)", () => sampleExamples(db, run, undefined, 6));
      await part("histograms (5 stats × domain, UNPIVOT)", () => histograms(db, run));
      await part("quarantineReasons (no files)", () => quarantineReasons(db, run));
      await part("attachTokens (no shards)", () => attachTokens(db, run, tokenizer, sampled));
    } finally {
      db.close();
    }
  }

  // 3. DuckDB doing only what the baseline does.
  const duckAgg = await repeat("DuckDB, the baseline's aggregations only", () =>
    measured(async () => {
      const db = await DuckSession.open();
      try {
        const run = await openRunOutput(db, big.dir, 0);
        return { classes: await classRows(db, run), histograms: await histograms(db, run) };
      } finally {
        db.close();
      }
    }),
  );

  // 4. The CLI, as users run it; then at N/10 turns for the memory ratio.
  const cliRun = (dir: string, out: string): Timed => timed(NODE, [CLI, "dashboard", dir, "--out", out], { cwd: ROOT });
  const pagePath = join(work, "dashboard.html");
  const cli = await repeat("lwm-data dashboard --out (CLI)", async () => cliRun(big.dir, pagePath));
  const cliSmall = await repeat(`lwm-data dashboard --out (CLI), ${smallTurns.toLocaleString("en-US")} turns`, async () =>
    cliRun(small.dir, join(work, "dashboard-small.html")),
  );
  const startup = await repeat("CLI start-up: lwm-data dashboard --help (Node + module loading)", async () =>
    timed(NODE, [CLI, "dashboard", "--help"], { cwd: ROOT }),
  );
  const aggregated = cli.runs.map((run) => Number(/aggregated in ([\d.]+) s/.exec(run.stdout)?.[1])).filter(Number.isFinite);

  // 5. The written page in Chromium (first load = warm-up).
  log(`page load in Chromium: warm-up + ${reps} loads`);
  const browser = await pageLoads(pagePath, reps + 1);
  if (!browser) notes.push(`No Chromium at ${CHROMIUM} (apt-get install chromium, or set LWM_CHROMIUM): page load not measured.`);
  const pageErrors = [...new Set(browser?.loads.flatMap((l) => l.errors) ?? [])];
  if (pageErrors.length > 0) notes.push(`The page reported errors in Chromium: ${pageErrors.slice(0, 5).join(" | ")}`);

  // 6. Baseline, last (parquet-wasm's WebAssembly memory only grows), and the equal-work check.
  const baseline = await repeat("baseline: parquet-wasm + apache-arrow + JS loop", () => measured(() => baselineAggregations(statsFiles)));
  const duckRows = duckAgg.runs[0]?.value;
  const baseRows = baseline.runs[0]?.value;
  if (!duckRows || !baseRows) throw new Error("no runs");
  const diff = differences(duckRows, baseRows);
  if (diff.length > 0)
    throw new Error(`the baseline's aggregations differ from DuckDB's (${diff.length} rows):\n${diff.slice(0, 20).join("\n")}`);
  if (baseRows.rows !== big.turns) throw new Error(`the baseline read ${baseRows.rows} rows, not ${big.turns}`);
  log(`baseline equals DuckDB: ${duckRows.classes.length} class rows, ${duckRows.histograms.length} histogram bins`);

  const l = loads.runs;
  const dashboardLoad = timingOf(loads);
  const duckTiming = timingOf(duckAgg);
  const baselineTiming = timingOf(baseline);
  const cliTiming = timingOf(cli);
  const cliSmallTiming = timingOf(cliSmall);
  const rss = (runs: Timed[]) => {
    const known = runs.map((r) => r.maxRssMb).filter((m): m is number => m !== undefined);
    return known.length > 0 ? median(known) : null;
  };
  const rssBig = rss(cli.runs);
  const rssSmall = rss(cliSmall.runs);
  const browserLoads = browser?.loads.slice(1) ?? [];

  const allNotes = [
    `Each measurement ran ${reps + 1} times; the first is the warm-up (cold JIT, tokenizer file, OS page cache for the CLI's first start) and is reported apart; the table shows the median of the other ${reps}.`,
    "The synthetic folder has no shards and no quarantine files (manifest `shards: []`, `quarantine: []`): the embedded example turns carry no tokens (each says “no shard row has this id”), attachTokens reads nothing and quarantineReasons returns at once. On a real run, attachTokens also reads the sampled ids' token rows from the shards.",
    "Dashboard.open loads the run's tokenizer (qwen3) to decode examples even when there are no shards; its cost is the loadTokenizer part above.",
    `DuckDB runs on all ${cpus().length} cores; the baseline is one JavaScript thread. CPU seconds (process.cpuUsage, all threads) give the per-core comparison. The baseline reads only the 10 columns it needs, with parquet-wasm's default 1,024-row batches, and decodes the string columns row by row with Vector.get.`,
    "The CLI wall time includes Node start-up and module loading; the page load starts a fresh browser context per load (one browser process for all) and ends when the page script has drawn every chart.",
    ...notes,
  ];

  const results: Results = {
    benchmark: "lwm-data mask-statistics dashboard load, bench/dashboard.bench.ts",
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model.trim(),
      memory_gb: Math.round(totalmem() / 1e9),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      gnu_time: hasGnuTime(),
      chromium: browser?.browser ?? null,
      loadavg_start: loadStart,
      loadavg_end: loadavg(),
    },
    input: {
      requested: values.quick ? "--quick" : `--turns ${values.turns}`,
      turns: big.turns,
      records: big.records,
      stats_files: big.files,
      stats_bytes: big.statsBytes,
      turns_per_file: turnsPerFile,
      row_group_rows: ROW_GROUP_ROWS,
      seed,
      small_turns: small.turns,
      generate_s: big.seconds,
      template: template.source,
      generator:
        "bench/dashboard/synthetic-run.ts: DuckDB COPY … FROM range(N), values from hashes of the row; classes by the template's class rules, kept = draw < keep ratio",
    },
    repetitions: reps,
    dashboard_load: {
      ...dashboardLoad,
      open_s: median(l.map((r) => r.openS)),
      data_s: median(l.map((r) => r.dataS)),
      html_s: median(l.map((r) => r.htmlS)),
      html_bytes: l[0]?.htmlBytes ?? 0,
      histogram_bins: first.histograms.length,
      class_rows: first.classes.length,
      examples: first.examples.length,
    },
    parts: Object.fromEntries(Object.entries(parts).map(([name, runs]) => [name, median(runs)])),
    duckdb_aggregations: duckTiming,
    cli: { ...cliTiming, max_rss_mb: rssBig, aggregated_s: aggregated.length > 0 ? median(aggregated) : null },
    cli_startup: {
      ...timingOf(startup),
      max_rss_mb: rss(startup.runs),
    },
    cli_small: { ...cliSmallTiming, turns: small.turns, max_rss_mb: rssSmall },
    browser: browser
      ? {
          ...timing(
            browserLoads.map((b) => b.wallS),
            browser.loads[0]?.wallS ?? null,
          ),
          browser: browser.browser,
          launch_s: browser.launchS,
          in_page_median_s: median(browserLoads.map((b) => b.inPageS)),
          errors: pageErrors,
          html_bytes: l[0]?.htmlBytes ?? 0,
        }
      : { skipped: `no ${CHROMIUM}` },
    baseline: {
      ...baselineTiming,
      read_s: median(baseline.runs.map((r) => r.value.readS)),
      loop_s: median(baseline.runs.map((r) => r.value.loopS)),
      rows: baseRows.rows,
      equal_to_duckdb: true,
      what: "per domain × class turns / kept / obs_tokens / kept_obs_tokens / mean keep_ratio, and the 5 histograms per domain (same bins as stats-queries.ts)",
    },
    ratios: {
      baseline_over_duckdb_aggregations: baselineTiming.median_s / duckTiming.median_s,
      baseline_over_dashboard_load: baselineTiming.median_s / dashboardLoad.median_s,
      baseline_cpu_over_duckdb_cpu: baselineTiming.cpu_s && duckTiming.cpu_s ? baselineTiming.cpu_s / duckTiming.cpu_s : null,
      cli_over_in_process: cliTiming.median_s / dashboardLoad.median_s,
      rss_n_over_n10: rssBig && rssSmall ? rssBig / rssSmall : null,
      turns_n_over_n10: big.turns / small.turns,
    },
    notes: allNotes,
  };
  const table = markdownTable(results);
  writeResults(results, resultsPath);
  console.log(table);
  console.log("");
  for (const note of results.notes) console.log(`- ${note}`);
  log(`results: ${resultsPath}`);
} finally {
  if (values.keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
