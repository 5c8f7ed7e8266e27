/**
 * Every core (issue 36): lwm-data against datatrove on one many-core machine, in one run.
 *
 *   (a) N workers: `lwm-data run --workers N` (one process, N threads) and datatrove's
 *       `LocalPipelineExecutor(tasks=N, workers=N)` (bench/datatrove/run.py: N processes) on the
 *       whole corpus;
 *   (b) 1 worker on 1/N of the corpus: each tool on one of the N parts, one worker, one task's
 *       worth of cores;
 *
 * with, for every run: MB/s (wall), CPU-s, **cores busy** (CPU-s ÷ wall ÷ N: 100% is every core
 * working from the command's start to its end), peak RSS of the whole process tree and per
 * worker, and for lwm-data where each lane's time went (bench/scaling/lanes.ts: start-up, on CPU,
 * no free core, I/O wait, between tasks, waiting for the others, finalize). The corpus is N
 * independent parts generated in parallel (bench/synthetic, seeds S..S+N-1: every part has all
 * seven domains), so part 0 is exactly 1/N of the whole.
 *
 * `--variants` runs the N-worker lwm-data job more than once, each with its own environment, to
 * compare settings in the same run: `name[:KEY=VALUE,...]`, separated by ";"; the key `tasks`
 * sets tasks per worker (input.task_bytes = corpus ÷ (N × tasks)), any other key is an
 * environment variable (e.g. `arenas:MALLOC_ARENA_MAX=16`). The first variant is the one the
 * comparison with datatrove uses.
 *
 *   node bench/cores.bench.ts [--bytes 1200MB] [--workers N] [--tasks-per-worker 8] [--variants SPEC]
 *                             [--seed S] [--no-datatrove] [--python PATH] [--keep]
 *                             [--results PATH] [--docs PATH | --no-docs] [--quick]
 *
 * Targets (issue 36): lwm-data ≥ 2.5× datatrove's MB/s at N workers and ≥ 3× at 1, ≥ 90% of cores
 * busy at N, peak RSS per worker ≤ datatrove's. bench/device-scaling.sh runs it on a lent machine.
 * On a 2-core machine it runs too (N = 2), but wall clock there says little (docs/benchmarks.md).
 */
import { spawn } from "node:child_process";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bundledQwen3Dir } from "../src/tokenize/load-tokenizer.ts";
import { argumentError, positiveArgument, replaceDocsSection, writeResultsJson } from "./bench-files.ts";
import { writeJobConfig } from "./pipeline/job-config.ts";
import { ROOT } from "./pipeline/runners.ts";
import { type LaneSummary, parseLog, summarizeLanes } from "./scaling/lanes.ts";
import { type Measured, runMeasured } from "./scaling/run-measured.ts";
import { parseBytes } from "./synthetic/generate.ts";

const { values } = parseArgs({
  options: {
    bytes: { type: "string", default: "1200MB" },
    workers: { type: "string" },
    "tasks-per-worker": { type: "string", default: "8" },
    variants: { type: "string", default: "default" },
    seed: { type: "string", default: "1" },
    "no-datatrove": { type: "boolean", default: false },
    python: { type: "string" },
    keep: { type: "boolean", default: false },
    results: { type: "string" },
    docs: { type: "string" },
    "no-docs": { type: "boolean", default: false },
    quick: { type: "boolean", default: false },
  },
});
const fail = (message: string): never => argumentError("bench/cores.bench.ts", message);
const positive = (name: string, text: string) => positiveArgument("bench/cores.bench.ts", name, text);
const workers = values.workers === undefined ? availableParallelism() : positive("--workers", values.workers);
const tasksPerWorker = positive("--tasks-per-worker", values["tasks-per-worker"]);
const bytes = values.quick ? 4e6 : parseBytes(values.bytes);
const seed = Number(values.seed);
const resultsPath = values.results ?? join(ROOT, values.quick ? "bench/results/cores-quick.json" : "bench/results/cores.json");
const docsPath = values["no-docs"] || values.quick ? undefined : (values.docs ?? join(ROOT, "docs/benchmarks.md"));
const command = `node bench/cores.bench.ts ${process.argv.slice(2).join(" ")}`.trim();
const log = (message: string) => console.error(`[cores] ${message}`);
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");
const TARGETS = { mbPerSAtN: 2.5, mbPerSAt1: 3, coresBusy: 0.9, rssPerWorker: 1 } as const;

interface Variant {
  name: string;
  tasksPerWorker: number;
  env: Record<string, string>;
}

/** `name[:KEY=VALUE,...]` separated by ";" (see the header). */
export function parseVariants(spec: string, defaultTasks: number): Variant[] {
  return spec
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const [name = "", settings = ""] = part.split(/:(.*)/s);
      const variant: Variant = { name, tasksPerWorker: defaultTasks, env: {} };
      for (const setting of settings.split(",").filter((s) => s.trim() !== "")) {
        const eq = setting.indexOf("=");
        if (eq < 1) fail(`--variants: "${setting}" in "${part}" is not KEY=VALUE`);
        const key = setting.slice(0, eq).trim();
        const value = setting.slice(eq + 1);
        if (key === "tasks") variant.tasksPerWorker = positive("--variants tasks", value);
        else variant.env[key] = value;
      }
      return variant;
    });
}

interface RunResult {
  tool: "lwm-data" | "datatrove";
  variant?: string;
  workers: number;
  input_mb: number;
  trajectories: number;
  tasks: number;
  wall_s: number;
  /** The larger of cpu_waited_s (bash `times`) and cpu_sampled_s (/proc): see run-measured.ts. */
  cpu_s: number;
  cpu_waited_s: number;
  cpu_sampled_s: number;
  mb_per_s: number;
  mb_per_cpu_s: number;
  cores_busy: number;
  peak_rss_mb: number;
  peak_rss_per_worker_mb: number;
  env?: Record<string, string>;
  lanes?: LaneSummary;
}

/** Runs `node bench/synthetic/generate.ts` for every part at once (at most `parallel` at a time). */
async function generateParts(dir: string, parts: number, partBytes: number, parallel: number): Promise<void> {
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < parts) {
      const part = next++;
      const out = join(dir, `part-${part}`);
      await new Promise<void>((resolve, reject) => {
        const child = spawn(
          NODE,
          [join(ROOT, "bench/synthetic/generate.ts"), "--bytes", String(partBytes), "--out", out, "--seed", String(seed + part)],
          {
            stdio: ["ignore", "ignore", "inherit"],
          },
        );
        child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`generating part ${part} exited with ${code}`))));
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, parts) }, one));
}

/** Hard-links every part's files into `whole/` (prefixed by part) and part 0's into `one/`. */
function assemble(partsDir: string, whole: string, one: string, parts: number): { bytes: number; oneBytes: number; files: number } {
  mkdirSync(whole, { recursive: true });
  mkdirSync(one, { recursive: true });
  let total = 0;
  let oneBytes = 0;
  let files = 0;
  for (let part = 0; part < parts; part++) {
    const dir = join(partsDir, `part-${part}`);
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) {
      const size = statSync(join(dir, name)).size;
      linkSync(join(dir, name), join(whole, `p${String(part).padStart(3, "0")}-${name}`));
      total += size;
      files += 1;
      if (part === 0) {
        linkSync(join(dir, name), join(one, name));
        oneBytes += size;
      }
    }
  }
  return { bytes: total, oneBytes, files };
}

function countLines(dir: string): number {
  let lines = 0;
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name));
    for (let i = text.indexOf(10); i !== -1; i = text.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

function summarize(
  base: Omit<
    RunResult,
    | "wall_s"
    | "cpu_s"
    | "cpu_waited_s"
    | "cpu_sampled_s"
    | "mb_per_s"
    | "mb_per_cpu_s"
    | "cores_busy"
    | "peak_rss_mb"
    | "peak_rss_per_worker_mb"
  >,
  m: Measured,
): RunResult {
  return {
    ...base,
    wall_s: m.wallS,
    cpu_s: m.cpuS,
    cpu_waited_s: m.waitedCpuS,
    cpu_sampled_s: m.sampledCpuS,
    mb_per_s: base.input_mb / m.wallS,
    mb_per_cpu_s: base.input_mb / m.cpuS,
    cores_busy: m.cpuS / m.wallS / base.workers,
    peak_rss_mb: m.peakRssBytes / 2 ** 20,
    peak_rss_per_worker_mb: m.peakRssBytes / 2 ** 20 / base.workers,
  };
}

async function runLwm(
  corpusDir: string,
  inputBytes: number,
  trajectories: number,
  n: number,
  variant: Variant,
  work: string,
): Promise<RunResult> {
  const out = join(work, "out-lwm");
  rmSync(out, { recursive: true, force: true });
  const taskBytes = Math.max(1 << 20, Math.ceil(inputBytes / (n * variant.tasksPerWorker)));
  const config = writeJobConfig(join(work, `job-${n}.yaml`), corpusDir, out, taskBytes);
  const report = join(work, "timing.jsonl");
  rmSync(report, { force: true });
  const { NODE_OPTIONS: _, ...env } = process.env;
  const m = await runMeasured([[NODE, CLI, "run", config, "--progress", "none", "--workers", String(n)]], {
    env: { ...env, ...variant.env, LWM_BENCH_REPORT: report },
    cwd: ROOT,
    sampleMs: 100,
  });
  const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as { counts: { records_in: number } };
  if (manifest.counts.records_in !== trajectories)
    throw new Error(`lwm-data: ${manifest.counts.records_in} records in, the corpus has ${trajectories}`);
  const lanes = summarizeLanes(existsSync(report) ? parseLog(readFileSync(report, "utf8")) : [], m.t0, m.t1);
  return summarize(
    {
      tool: "lwm-data",
      variant: variant.name,
      workers: n,
      input_mb: inputBytes / 1e6,
      trajectories,
      tasks: lanes.tasks,
      env: variant.env,
      lanes,
    },
    m,
  );
}

async function runDatatrove(
  python: string,
  corpusDir: string,
  inputBytes: number,
  trajectories: number,
  n: number,
  work: string,
): Promise<RunResult> {
  const out = join(work, "out-datatrove");
  rmSync(out, { recursive: true, force: true });
  const tokenizer = join(bundledQwen3Dir(), "tokenizer.json");
  // One thread per process for the Rust tokenizer, as run.py does: N processes, N cores.
  const env = { ...process.env, RAYON_NUM_THREADS: "1", TOKENIZERS_PARALLELISM: "false", OMP_NUM_THREADS: "1" };
  const args = [python, join(ROOT, "bench/datatrove/run.py"), "--input", corpusDir, "--output", out, "--tokenizer", tokenizer];
  const m = await runMeasured([[...args, "--tasks", String(n), "--workers", String(n)]], { env, cwd: ROOT, sampleMs: 100 });
  const parsed = JSON.parse(m.stdout.trim().split("\n").at(-1) ?? "{}") as { trajectories: number };
  if (parsed.trajectories !== trajectories)
    throw new Error(`datatrove: ${parsed.trajectories} documents written, the corpus has ${trajectories}`);
  return summarize({ tool: "datatrove", workers: n, input_mb: inputBytes / 1e6, trajectories, tasks: n }, m);
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const fx = (x: number, digits = 2) => x.toFixed(digits);

function laneRow(r: RunResult): string {
  const l = r.lanes;
  if (!l || l.lanes === 0) return "";
  const share = (s: number) => `${pct(s / l.lane_s)} (${fx(s / l.lanes)} s)`;
  const p = l.parts;
  return `| ${r.variant} | ${r.workers} | ${l.lanes} · ${l.tasks_per_lane[0]}–${l.tasks_per_lane[1]} | ${share(p.startup)} | ${share(p.on_cpu)} | ${share(p.no_core)} | ${share(p.io_wait)} | ${share(p.between)} | ${share(p.others)} | ${share(p.finish)} |`;
}

function markdown(results: Results): string {
  const { runs, ratios, machine, corpus } = results;
  const lines = [
    `Last run: ${results.date.slice(0, 10)}, ${machine.cpus} × ${machine.cpu_model}, ${machine.memory_gb} GB, Node ${machine.node}, \`${results.command}\` (load average at start ${machine.loadavg_start.map((x) => x.toFixed(1)).join(" ")}).`,
    "",
    `Corpus: ${fx(corpus.bytes / 1e6, 1)} MB, ${corpus.trajectories} trajectories, ${corpus.files} files, ${workers} parts (seeds ${seed}–${seed + workers - 1}); 1/${workers} of it (part 0): ${fx(corpus.one_bytes / 1e6, 1)} MB, ${corpus.one_trajectories} trajectories.`,
    "",
    "| tool | run | workers | tasks | wall s | MB/s | CPU-s | MB per CPU-s | cores busy | peak RSS (all) | peak RSS per worker |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...runs.map(
      (r) =>
        `| ${r.tool} | ${r.variant ?? "—"}${
          r.env && Object.keys(r.env).length > 0
            ? ` (${Object.entries(r.env)
                .map(([k, v]) => `${k}=${v}`)
                .join(", ")})`
            : ""
        } | ${r.workers} | ${r.tasks} | ${fx(r.wall_s)} | ${fx(r.mb_per_s)} | ${fx(r.cpu_s, 1)} | ${fx(r.mb_per_cpu_s)} | ${pct(r.cores_busy)} | ${fx(r.peak_rss_mb, 0)} MB | ${fx(r.peak_rss_per_worker_mb, 0)} MB |`,
    ),
    "",
  ];
  if (ratios.length > 0) {
    lines.push("| measure | result | target |", "|---|---|---|");
    for (const r of ratios) lines.push(`| ${r.measure} | ${r.result} ${r.pass === undefined ? "" : r.pass ? "✓" : "✗"} | ${r.target} |`);
    lines.push("");
  }
  const lanes = runs.filter((r) => r.tool === "lwm-data" && r.lanes && r.lanes.lanes > 0);
  if (lanes.length > 0) {
    lines.push(
      "Where each lwm-data lane's time went (share of lanes × wall, seconds per lane):",
      "",
      "| run | workers | lanes · tasks per lane | start-up | on CPU | no free core | I/O wait | between tasks | waiting for the others | finalize + exit |",
      "|---|---|---|---|---|---|---|---|---|---|",
      ...lanes.map(laneRow),
      "",
    );
  }
  lines.push(...results.notes.map((note) => `- ${note}`));
  return lines.join("\n");
}

interface Results {
  benchmark: string;
  date: string;
  command: string;
  machine: { cpus: number; cpu_model: string; memory_gb: number; node: string; loadavg_start: number[]; loadavg_end: number[] };
  corpus: { bytes: number; trajectories: number; files: number; one_bytes: number; one_trajectories: number };
  runs: RunResult[];
  ratios: { measure: string; result: string; target: string; value: number; pass?: boolean }[];
  targets: typeof TARGETS;
  notes: string[];
}

function compare(runs: RunResult[], n: number): Results["ratios"] {
  const find = (tool: RunResult["tool"], w: number) => runs.find((r) => r.tool === tool && r.workers === w);
  const ours = find("lwm-data", n);
  const theirs = find("datatrove", n);
  const ours1 = find("lwm-data", 1);
  const theirs1 = find("datatrove", 1);
  const ratios: Results["ratios"] = [];
  if (ours)
    ratios.push({
      measure: `lwm-data cores busy at ${n} workers (CPU-s ÷ wall ÷ ${n})`,
      result: pct(ours.cores_busy),
      target: `≥ ${pct(TARGETS.coresBusy)}`,
      value: ours.cores_busy,
      pass: ours.cores_busy >= TARGETS.coresBusy,
    });
  if (theirs)
    ratios.push({ measure: `datatrove cores busy at ${n} workers`, result: pct(theirs.cores_busy), target: "", value: theirs.cores_busy });
  if (ours && theirs) {
    const v = ours.mb_per_s / theirs.mb_per_s;
    ratios.push({
      measure: `lwm-data / datatrove, MB/s at ${n} workers`,
      result: `${fx(v)}×`,
      target: `≥ ${TARGETS.mbPerSAtN}×`,
      value: v,
      pass: v >= TARGETS.mbPerSAtN,
    });
    const rss = ours.peak_rss_per_worker_mb / theirs.peak_rss_per_worker_mb;
    ratios.push({
      measure: `peak RSS per worker at ${n}, lwm-data / datatrove`,
      result: `${fx(ours.peak_rss_per_worker_mb, 0)} / ${fx(theirs.peak_rss_per_worker_mb, 0)} MB = ${fx(rss)}×`,
      target: `≤ ${TARGETS.rssPerWorker}×`,
      value: rss,
      pass: rss <= TARGETS.rssPerWorker,
    });
  }
  if (ours1 && theirs1) {
    const v = ours1.mb_per_s / theirs1.mb_per_s;
    ratios.push({
      measure: `lwm-data / datatrove, MB/s at 1 worker on 1/${n} of the corpus`,
      result: `${fx(v)}×`,
      target: `≥ ${TARGETS.mbPerSAt1}×`,
      value: v,
      pass: v >= TARGETS.mbPerSAt1,
    });
  }
  if (ours && ours1) {
    const v = ours.mb_per_s / ours1.mb_per_s;
    ratios.push({
      measure: `lwm-data speed-up, ${n} workers on the whole / 1 worker on 1/${n}`,
      result: `${fx(v)}× (ideal ${n}×)`,
      target: "",
      value: v,
    });
  }
  if (theirs && theirs1) {
    const v = theirs.mb_per_s / theirs1.mb_per_s;
    ratios.push({
      measure: `datatrove speed-up, ${n} workers on the whole / 1 worker on 1/${n}`,
      result: `${fx(v)}× (ideal ${n}×)`,
      target: "",
      value: v,
    });
  }
  return ratios;
}

const variants = parseVariants(values.variants, tasksPerWorker);
if (variants.length === 0) fail("--variants names no variant");
const python = values.python ?? process.env.DATATROVE_PYTHON ?? join(ROOT, ".venv-bench/bin/python");
const withDatatrove = !values["no-datatrove"];
if (withDatatrove && !existsSync(python) && !values.python && !process.env.DATATROVE_PYTHON)
  fail(`no datatrove Python at ${python}: run bash bench/datatrove/setup.sh, pass --python, or --no-datatrove`);

const work = mkdtempSync(join(tmpdir(), "lwm-bench-cores-"));
try {
  const loadStart = loadavg();
  log(`generating ${fx(bytes / 1e6, 1)} MB in ${workers} parts (seed ${seed}…), ${Math.min(workers, availableParallelism())} at a time`);
  await generateParts(join(work, "parts"), workers, Math.ceil(bytes / workers), availableParallelism());
  const wholeDir = join(work, "corpus");
  const oneDir = join(work, "corpus-1");
  const sizes = assemble(join(work, "parts"), wholeDir, oneDir, workers);
  const trajectories = countLines(wholeDir);
  const oneTrajectories = countLines(oneDir);
  log(
    `corpus: ${fx(sizes.bytes / 1e6, 1)} MB, ${trajectories} trajectories, ${sizes.files} files; part 0: ${fx(sizes.oneBytes / 1e6, 1)} MB`,
  );

  // Warm-up, untimed: a fresh machine's first lwm-data run fills Node's compile cache (start-up
  // and exit ~1 s slower each) and datatrove's first run compiles its .pyc files; neither is a
  // cost of the job. A 1 MB part through both tools, once.
  log("warm-up (untimed): 1 MB through each tool");
  await generateParts(join(work, "warm"), 1, 1e6, 1);
  const warmDir = join(work, "warm", "part-0");
  const warmLines = countLines(warmDir);
  await runLwm(warmDir, 1e6, warmLines, 1, { name: "warm-up", tasksPerWorker: 1, env: {} }, work);
  if (withDatatrove) await runDatatrove(python, warmDir, 1e6, warmLines, 1, work);

  const runs: RunResult[] = [];
  const note = (r: RunResult) => {
    runs.push(r);
    log(
      `  ${r.tool}${r.variant ? ` ${r.variant}` : ""} × ${r.workers}: ${fx(r.wall_s)} s · ${fx(r.mb_per_s)} MB/s · ${fx(r.cpu_s, 1)} CPU-s · cores busy ${pct(r.cores_busy)} · peak RSS ${fx(r.peak_rss_mb, 0)} MB`,
    );
  };
  const [first, ...others] = variants as [Variant, ...Variant[]];
  log(`lwm-data, ${workers} workers (${first.name})`);
  note(await runLwm(wholeDir, sizes.bytes, trajectories, workers, first, work));
  if (withDatatrove) {
    log(`datatrove, ${workers} tasks × ${workers} workers`);
    note(await runDatatrove(python, wholeDir, sizes.bytes, trajectories, workers, work));
  }
  log("lwm-data, 1 worker on part 0");
  note(await runLwm(oneDir, sizes.oneBytes, oneTrajectories, 1, first, work));
  if (withDatatrove) {
    log("datatrove, 1 worker on part 0");
    note(await runDatatrove(python, oneDir, sizes.oneBytes, oneTrajectories, 1, work));
  }
  for (const variant of others) {
    log(`lwm-data, ${workers} workers (${variant.name})`);
    note(await runLwm(wholeDir, sizes.bytes, trajectories, workers, variant, work));
  }

  const results: Results = {
    benchmark: "lwm-data against datatrove on every core, bench/cores.bench.ts (issue 36)",
    date: new Date().toISOString(),
    command,
    machine: {
      cpus: availableParallelism(),
      cpu_model: cpus()[0]?.model.trim() ?? "unknown",
      memory_gb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadavg_start: loadStart,
      loadavg_end: loadavg(),
    },
    corpus: { bytes: sizes.bytes, trajectories, files: sizes.files, one_bytes: sizes.oneBytes, one_trajectories: oneTrajectories },
    runs,
    ratios: compare(runs, workers),
    targets: TARGETS,
    notes: [
      `lwm-data: \`lwm-data run --workers N\` (one process: the main thread and N − 1 pool threads), configs/defaults.yaml (Qwen3, turn-stats masking, zstd Parquet), canonical-jsonl, input.task_bytes = input ÷ (N × tasks per worker). It normalizes per domain, computes turn statistics, renders, tokenizes, masks and writes Parquet.`,
      "datatrove: bench/datatrove/run.py, JsonlReader → ChatML render with no_loss_ranges → DocumentTokenizer (same Qwen3 tokenizer.json, RAYON_NUM_THREADS=1) → its token files; `LocalPipelineExecutor(tasks=N, workers=N)`: N processes, the input files split among the tasks. It does no normalization, turn statistics or Parquet.",
      "Cores busy = CPU-s ÷ wall ÷ N. CPU-s = user + system of every process and thread: the larger of bash's `times` (children waited for) and the last /proc sample of every descendant (datatrove's workers are forked by a fork server that does not reap them, so `times` misses them). Peak RSS = the largest sum of VmRSS over the run's whole process tree, sampled every 100 ms from /proc; per worker = that ÷ N.",
      "Lanes (lwm-data): see the scaling benchmark's notes; 'no free core' includes a thread paused by V8 or blocked on a lock.",
    ],
  };
  const tables = markdown(results);
  writeResultsJson(resultsPath, results);
  if (docsPath) replaceDocsSection(docsPath, "cores-bench", "bench/cores.bench.ts", [tables], "## Every core: lwm-data against datatrove");
  console.log(tables);
  log(`results: ${resultsPath}${docsPath ? `; tables: ${docsPath}` : ""}`);
} finally {
  if (values.keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
