/**
 * Curation benchmark (issue 20): near-duplicate removal, side by side on the same planted corpus
 * (bench/curate/planted-corpus.ts: exact and near copies, leaks, hard negatives, ~50 MB):
 *   - lwm-data's curation stages, near dedup only (dedup.near on, exact off, no benchmarks), each
 *     stage a subprocess as a cluster runs it — `lwm-data run --stage signatures|clusters|select
 *     --workers 1` — timed on its own (wall, CPU, peak RSS by GNU time), and the same three in one
 *     process (`--stage signatures,clusters,select`), like for like with datatrove's one process;
 *   - datatrove's MinHash pipeline, its four stages (bench/datatrove/minhash.py: signatures,
 *     buckets, cluster, filter) with MinhashConfig's defaults (5-grams, 14 buckets × 8 hashes, the
 *     same as lwm-data's), one process, one task at a time, one core;
 *   - per core: documents and MB per CPU second of each, and the ratios (issue 36: ≥ 2× in one process);
 *   - peak RSS of the curation stages at 1× and 10× input, same task size (target ≤ 1.1×);
 *   - what each removed, against the plant's truth: recall of the copies, hard negatives kept.
 * Results: bench/results/curate.json, a markdown table on stdout and in docs/benchmarks.md.
 *
 *   node bench/curate.bench.ts [--bytes 50MB] [--quick] [--seed N] [--repeat N] [--no-datatrove]
 *                              [--no-10x] [--keep] [--results PATH] [--docs PATH]
 *
 * --quick (CI): a ~5 MB corpus, prints the table, writes bench/results/curate-quick.json and leaves
 * the docs alone. --repeat N times the 1× runs of both tools N times and judges the median ratio.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { generatePlantedCorpus, type PlantedCorpus } from "./curate/planted-corpus.ts";
import { datatroveVersion, ensureDatatrove, ROOT } from "./pipeline/runners.ts";
import { hasGnuTime, type Timed, timed } from "./pipeline/timed.ts";
import { parseBytes } from "./synthetic/generate.ts";

const { values } = parseArgs({
  options: {
    bytes: { type: "string", default: "50MB" },
    quick: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    repeat: { type: "string", default: "1" },
    "no-datatrove": { type: "boolean", default: false },
    "no-10x": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    results: { type: "string" },
    docs: { type: "string" },
  },
});
const resultsPath = values.results ?? join(ROOT, values.quick ? "bench/results/curate-quick.json" : "bench/results/curate.json");
const docsPath = values.docs ?? (values.quick ? undefined : join(ROOT, "docs/benchmarks.md"));
const bytes = values.quick ? 5e6 : parseBytes(values.bytes);
const seed = Number(values.seed);
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) {
  console.error(`bench/curate.bench.ts: --repeat must be a positive integer, got "${values.repeat}"`);
  process.exit(2);
}
// Per core: issue 20 asked for parity, issue 36 (item 3) for twice datatrove.
const TARGETS = { oursOverDatatrove: 2.0, rss10xOver1x: 1.1 } as const;
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");
const VENV_PYTHON = join(ROOT, ".venv-bench/bin/python");
const CURATION_STAGES = ["signatures", "clusters", "select"] as const;
const log = (message: string) => console.error(`[bench] ${message}`);

interface StageRun {
  wall_s: number;
  cpu_s: number | null;
  max_rss_mb: number | null;
}

interface ToolRun {
  stages: Record<string, StageRun>;
  wall_s: number;
  cpu_s: number | null;
  max_rss_mb: number | null;
  docs_per_cpu_s: number | null;
  mb_per_cpu_s: number | null;
  mb_per_s: number;
}

interface Quality {
  removed: number;
  /** Share of the exact and near copies removed (near dedup with exact off removes both). */
  copies_recall: number;
  /** Trajectories that must stay (originals, hard negatives, unique ones) that were removed. */
  must_stay_removed: number;
  hard_negatives_removed: number;
  /** Removed trajectories that are neither copies nor must-stay: benchmark leaks (decontamination is off here). */
  other_removed: number;
}

function stageRun(run: Timed): StageRun {
  return { wall_s: run.wallS, cpu_s: run.cpuS ?? null, max_rss_mb: run.maxRssMb ?? null };
}

function sum(runs: StageRun[], key: "wall_s" | "cpu_s"): number | null {
  let total = 0;
  for (const run of runs) {
    const value = run[key];
    if (value === null) return null;
    total += value;
  }
  return total;
}

function toolRun(stages: Record<string, StageRun>, corpusBytes: number, trajectories: number, processCpu?: number | null): ToolRun {
  const runs = Object.values(stages);
  const wall = sum(runs, "wall_s") as number;
  const cpu = processCpu !== undefined ? processCpu : sum(runs, "cpu_s");
  const rss = runs.map((r) => r.max_rss_mb).filter((v): v is number => v !== null);
  return {
    stages,
    wall_s: wall,
    cpu_s: cpu,
    max_rss_mb: rss.length ? Math.max(...rss) : null,
    docs_per_cpu_s: cpu ? trajectories / cpu : null,
    mb_per_cpu_s: cpu ? corpusBytes / 1e6 / cpu : null,
    mb_per_s: corpusBytes / 1e6 / wall,
  };
}

/** The near-dedup job: the planted training files, tasks of `taskBytes`, dedup.near only. */
function writeNearConfig(path: string, corpus: PlantedCorpus, taskBytes: number): string {
  const lines = [
    "# Written by bench/curate.bench.ts: near-duplicate removal only, as datatrove's MinHash does.",
    "inputs:",
    `  - path: ${corpus.trainDir}/*.jsonl`,
    "    format: canonical-jsonl",
    "input:",
    `  task_bytes: ${taskBytes}`,
    "dedup:",
    "  exact: false",
    "  near: true",
    "",
  ];
  writeFileSync(path, lines.join("\n"));
  return path;
}

/** `lwm-data run CONFIG --stage STAGES` into `out`, 1 worker, timed. */
function lwmRun(config: string, out: string, stages: readonly string[]): Timed {
  return timed(NODE, [CLI, "run", config, "--output", out, "--progress", "none", "--workers", "1", "--stage", stages.join(",")], {
    cwd: ROOT,
  });
}

/** lwm-data's three curation stages, one subprocess each (as a cluster runs them), 1 worker. */
function runLwmStages(config: string, out: string): Record<string, StageRun> {
  rmSync(out, { recursive: true, force: true });
  const stages: Record<string, StageRun> = {};
  for (const stage of CURATION_STAGES) stages[stage] = stageRun(lwmRun(config, out, [stage]));
  return stages;
}

/**
 * The same three stages in one process (`--stage signatures,clusters,select`), as datatrove's bench
 * runs its four: one start-up, the like-for-like comparison.
 */
function runLwmOneProcess(config: string, out: string): Record<string, StageRun> {
  rmSync(out, { recursive: true, force: true });
  return { [CURATION_STAGES.join(" → ")]: stageRun(lwmRun(config, out, CURATION_STAGES)) };
}

/** The records stage after the curation stages (not timed): filtered/ names what near dedup removed. */
function lwmRemovedIds(config: string, out: string): string[] {
  lwmRun(config, out, ["records"]);
  const dir = join(out, "filtered");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .flatMap((name) =>
      readFileSync(join(dir, name), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { id: string }).id),
    );
}

interface DatatroveOutput {
  stages: Record<string, { wall_s: number; cpu_s: number }>;
  max_rss_mb: number;
  config: string;
  tokenizer: string;
  removed: string[];
}

function runDatatroveMinhash(corpus: PlantedCorpus, out: string): { run: Timed; output: DatatroveOutput } {
  rmSync(out, { recursive: true, force: true });
  const env = { ...process.env, RAYON_NUM_THREADS: "1", OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1" };
  const run = timed(VENV_PYTHON, [join(ROOT, "bench/datatrove/minhash.py"), "--input", corpus.trainDir, "--output", out], { env });
  const output = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as DatatroveOutput;
  return { run, output };
}

function quality(corpus: PlantedCorpus, removedIds: string[]): Quality {
  const removed = new Set(removedIds);
  const copies = corpus.truth.must_go.filter((g) => g.stage === "exact" || g.stage === "near");
  const copyIds = new Set(copies.map((g) => g.id));
  const stay = corpus.truth.must_stay.filter((s) => removed.has(s.id));
  return {
    removed: removed.size,
    copies_recall: copies.filter((g) => removed.has(g.id)).length / Math.max(1, copies.length),
    must_stay_removed: stay.length,
    hard_negatives_removed: stay.filter((s) => s.kind === "hard-negative" || s.kind === "benchmark-negative").length,
    other_removed: [...removed].filter((id) => !copyIds.has(id) && !stay.some((s) => s.id === id)).length,
  };
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const f = (v: number | null | undefined, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(digits));
const x = (ratio: number | null | undefined) => (ratio === null || ratio === undefined ? "n/a" : `${f(ratio)}×`);
const check = (value: number | null | undefined, target: number, atLeast: boolean) =>
  value === null || value === undefined ? "" : (atLeast ? value >= target : value <= target) ? " ✓" : " ✗";

const work = mkdtempSync(join(tmpdir(), "lwm-bench-curate-"));
const notes: string[] = [];
if (!hasGnuTime()) notes.push("GNU time (/usr/bin/time) is missing: CPU time, per-core numbers and peak RSS were not measured.");
const loadStart = loadavg();
if ((loadStart[0] ?? 0) > cpus().length * 0.5)
  notes.push(
    `The machine was busy at the start (load average ${f(loadStart[0], 1)} on ${cpus().length} cores): wall-clock numbers are pessimistic; per-core (CPU-second) numbers are less affected.`,
  );

try {
  log(`generating the planted corpus, ~${f(bytes / 1e6, 1)} MB (seed ${seed}), in ${work}`);
  const corpus = generatePlantedCorpus(join(work, "corpus"), { bytes, seed });
  const trajectories = corpus.truth.counts.trajectories as number;
  // Tasks of 1/16 of the 1× corpus, for the 10× corpus too: same task size, 10× the tasks.
  const taskBytes = Math.max(256 << 10, Math.ceil(corpus.truth.bytes / 16));
  const config = writeNearConfig(join(work, "near.yaml"), corpus, taskBytes);
  const tiny = generatePlantedCorpus(join(work, "tiny"), { trajectories: 24, seed, benchmarkDomains: [], leakWhole: 0, leakPart: 0 });
  const tinyConfig = writeNearConfig(join(work, "tiny.yaml"), tiny, taskBytes);
  const datatroveProblem = values["no-datatrove"] ? "--no-datatrove" : ensureDatatrove();

  log("start-up: the three stages on a 24-trajectory input");
  const startupLwm = toolRun(runLwmStages(tinyConfig, join(work, "out-tiny")), tiny.truth.bytes, 24);
  const startupLwmOne = toolRun(runLwmOneProcess(tinyConfig, join(work, "out-tiny")), tiny.truth.bytes, 24);
  let startupDatatrove: ToolRun | null = null;
  if (!datatroveProblem) {
    const { run } = runDatatroveMinhash(tiny, join(work, "dt-tiny"));
    startupDatatrove = toolRun({ process: stageRun(run) }, tiny.truth.bytes, 24);
  }

  interface Pass {
    lwm: ToolRun;
    lwmOne: ToolRun;
    datatrove: ToolRun | null;
    ratio: number | null;
    steady: number | null;
    ratioOne: number | null;
    steadyOne: number | null;
  }
  const passes: Pass[] = [];
  let lwmQuality: Quality | null = null;
  let dtQuality: Quality | null = null;
  let dtOutput: DatatroveOutput | null = null;
  for (let pass = 1; pass <= repeat; pass++) {
    log(`pass ${pass} of ${repeat}: lwm-data signatures → clusters → select, 1 worker`);
    const out = join(work, "out");
    const lwm = toolRun(runLwmStages(config, out), corpus.truth.bytes, trajectories);
    if (!lwmQuality) lwmQuality = quality(corpus, lwmRemovedIds(config, out));
    log(`pass ${pass} of ${repeat}: lwm-data signatures,clusters,select in one process, 1 worker`);
    const lwmOne = toolRun(runLwmOneProcess(config, out), corpus.truth.bytes, trajectories);
    let datatrove: ToolRun | null = null;
    if (!datatroveProblem) {
      log(`pass ${pass} of ${repeat}: datatrove MinHash, 4 stages`);
      const { run, output } = runDatatroveMinhash(corpus, join(work, "dt"));
      // Per stage: datatrove's own timing of each; in all: the process (GNU time), start-up included.
      const stages = Object.fromEntries(
        Object.entries(output.stages).map(([name, s]) => [name, { wall_s: s.wall_s, cpu_s: s.cpu_s, max_rss_mb: null }]),
      );
      datatrove = { ...toolRun(stages, corpus.truth.bytes, trajectories, run.cpuS ?? null), max_rss_mb: run.maxRssMb ?? null };
      datatrove.wall_s = run.wallS;
      datatrove.mb_per_s = corpus.truth.bytes / 1e6 / run.wallS;
      dtOutput ??= output;
      dtQuality ??= quality(corpus, output.removed);
    }
    const perCore = (run: ToolRun) => (run.mb_per_cpu_s && datatrove?.mb_per_cpu_s ? run.mb_per_cpu_s / datatrove.mb_per_cpu_s : null);
    const steadyCpu = (run: ToolRun | null, start: ToolRun | null) =>
      run?.cpu_s && start?.cpu_s && run.cpu_s > start.cpu_s ? run.cpu_s - start.cpu_s : null;
    const theirs = steadyCpu(datatrove, startupDatatrove);
    const steady = (run: ToolRun, start: ToolRun) => {
      const ours = steadyCpu(run, start);
      return ours && theirs ? theirs / ours : null;
    };
    passes.push({
      lwm,
      lwmOne,
      datatrove,
      ratio: perCore(lwm),
      steady: steady(lwm, startupLwm),
      ratioOne: perCore(lwmOne),
      steadyOne: steady(lwmOne, startupLwmOne),
    });
  }

  let rss10x: ToolRun | null = null;
  let corpus10Bytes = 0;
  if (!values["no-10x"]) {
    log(`generating the 10× corpus (~${f((10 * bytes) / 1e6, 0)} MB)`);
    const corpus10 = generatePlantedCorpus(join(work, "corpus10"), { bytes: 10 * bytes, seed });
    corpus10Bytes = corpus10.truth.bytes;
    const config10 = writeNearConfig(join(work, "near10.yaml"), corpus10, taskBytes);
    log("lwm-data curation stages on the 10× corpus");
    rss10x = toolRun(runLwmStages(config10, join(work, "out10")), corpus10.truth.bytes, corpus10.truth.counts.trajectories as number);
    rmSync(join(work, "out10"), { recursive: true, force: true });
    rmSync(join(work, "corpus10"), { recursive: true, force: true });
  }

  const last = passes.at(-1) as (typeof passes)[number];
  const rss1x = passes[0]?.lwm.max_rss_mb ?? null;
  const rssRatio = rss1x && rss10x?.max_rss_mb ? rss10x.max_rss_mb / rss1x : null;
  const ratios = passes.map((p) => p.ratio).filter((r): r is number => r !== null);
  const steadies = passes.map((p) => p.steady).filter((r): r is number => r !== null);
  const ratiosOne = passes.map((p) => p.ratioOne).filter((r): r is number => r !== null);
  const steadiesOne = passes.map((p) => p.steadyOne).filter((r): r is number => r !== null);
  const results = {
    benchmark: "lwm-data curation (near dedup) vs datatrove MinHash, bench/curate.bench.ts (issue 20)",
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model.trim(),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      gnu_time: hasGnuTime(),
      loadavg_start: loadStart,
      loadavg_end: loadavg(),
    },
    corpus: {
      requested: values.quick ? "--quick" : `--bytes ${values.bytes}`,
      bytes: corpus.truth.bytes,
      trajectories,
      files: corpus.truth.train_files.length,
      seed,
      counts: corpus.truth.counts,
      generator: "bench/curate/planted-corpus.ts (text from bench/synthetic)",
    },
    config: { dedup: { exact: false, near: true, ngram: 5, bands: 14, rows: 8 }, task_bytes: taskBytes, partitions: "auto" },
    lwm_data: last.lwm,
    lwm_data_one_process: last.lwmOne,
    datatrove: last.datatrove
      ? { ...last.datatrove, version: datatroveVersion(), config: dtOutput?.config, tokenizer: dtOutput?.tokenizer }
      : { skipped: datatroveProblem ?? "" },
    startup: { lwm_data: startupLwm, lwm_data_one_process: startupLwmOne, datatrove: startupDatatrove },
    quality: { lwm_data: lwmQuality, datatrove: dtQuality },
    rss: { x1_mb: rss1x, x10_mb: rss10x?.max_rss_mb ?? null, x10_bytes: corpus10Bytes, x10_run: rss10x },
    ratios: {
      ours_over_datatrove: last.ratio,
      ours_over_datatrove_steady: last.steady,
      one_process_over_datatrove: last.ratioOne,
      one_process_over_datatrove_steady: last.steadyOne,
      rss_10x_over_1x: rssRatio,
      ...(repeat > 1
        ? {
            passes: passes.map((p) => p.ratio),
            median: median(ratios),
            passes_steady: passes.map((p) => p.steady),
            median_steady: median(steadies),
            passes_one_process: passes.map((p) => p.ratioOne),
            median_one_process: median(ratiosOne),
            median_one_process_steady: median(steadiesOne),
          }
        : {}),
    },
    targets: TARGETS,
    notes: [
      "Per core = input MB (or trajectories) per CPU second (user + system, GNU time). lwm-data as a cluster runs it: the three stage processes' CPU added up, each process's start-up included; lwm-data in one process: `--stage signatures,clusters,select`, like for like with datatrove, which runs its four stages in one process, start-up included. The verdict is on the one-process ratio. 'Start-up excluded' subtracts each side's CPU on a 24-trajectory corpus.",
      "lwm-data's signatures stage reads and normalizes every record (per-domain normalizers, secret redaction), canonicalizes volatile values and computes 112 MinHash values per trajectory; datatrove's hashes the raw text after its own normalization (lowercase, no punctuation) with a whitespace word split (datatrove's default English tokenizer is spaCy, slower). lwm-data's counterpart of datatrove's filter stage is its records stage, which also tokenizes and writes shards: not timed here.",
      `Peak RSS: the largest of the three stage processes, same task size (input.task_bytes ${taskBytes}) at 1× and 10×, partitions auto (one per task).`,
      ...notes,
    ],
  };

  const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const stageText = (run: ToolRun) =>
    Object.entries(run.stages)
      .map(([name, s]) => `${name} ${f(s.cpu_s, 1)}`)
      .join(" · ");
  const dt = last.datatrove;
  const qualityText = (q: Quality | null) =>
    q
      ? `removed ${q.removed} · copies found ${f(q.copies_recall * 100, 1)}% · must-stay removed ${q.must_stay_removed} (hard negatives ${q.hard_negatives_removed})`
      : "n/a";
  const lines = [
    "| measure | result | target |",
    "|---|---|---|",
    row([
      "input: planted corpus (bench/curate/planted-corpus.ts)",
      `${f(corpus.truth.bytes / 1e6, 1)} MB · ${trajectories} trajectories · ${corpus.truth.counts["exact-copy"] ?? 0} exact + ${corpus.truth.counts["near-copy"] ?? 0} near copies · ${corpus.truth.counts["hard-negative"] ?? 0} hard negatives`,
      "",
    ]),
    row([
      "lwm-data near dedup: signatures → clusters → select, 3 processes (as a cluster runs them), 1 worker",
      `${f(last.lwm.wall_s, 1)} s · per core ${f(last.lwm.docs_per_cpu_s, 0)} docs/s, ${f(last.lwm.mb_per_cpu_s)} MB/s · CPU-s per stage: ${stageText(last.lwm)} · peak RSS ${f(last.lwm.max_rss_mb, 0)} MB`,
      "",
    ]),
    row([
      "lwm-data near dedup: the same in 1 process (`--stage signatures,clusters,select`), 1 worker",
      `${f(last.lwmOne.wall_s, 1)} s · per core ${f(last.lwmOne.docs_per_cpu_s, 0)} docs/s, ${f(last.lwmOne.mb_per_cpu_s)} MB/s · ${f(last.lwmOne.cpu_s, 1)} CPU-s · peak RSS ${f(last.lwmOne.max_rss_mb, 0)} MB`,
      "",
    ]),
    row([
      `baseline: datatrove${dt ? ` ${datatroveVersion()}` : ""} MinHash, 4 stages (1 process, 1 core)`,
      dt
        ? `${f(dt.wall_s, 1)} s · per core ${f(dt.docs_per_cpu_s, 0)} docs/s, ${f(dt.mb_per_cpu_s)} MB/s · CPU-s per stage: ${stageText(dt)} · peak RSS ${f(dt.max_rss_mb, 0)} MB`
        : `skipped: ${datatroveProblem}`,
      "",
    ]),
    row([
      "start-up (24 trajectories), lwm-data 3 processes / 1 process / datatrove",
      `${f(startupLwm.cpu_s, 1)} CPU-s / ${f(startupLwmOne.cpu_s, 1)} CPU-s / ${startupDatatrove ? `${f(startupDatatrove.cpu_s, 1)} CPU-s` : "n/a"}`,
      "",
    ]),
    row(["lwm-data / datatrove, per core: 3 processes", `${x(last.ratio)} (start-up excluded: ${x(last.steady)})`, ""]),
    row([
      "lwm-data / datatrove, per core: 1 process each (like for like)",
      `${x(last.ratioOne)}${check(last.ratioOne, TARGETS.oursOverDatatrove, true)} (start-up excluded: ${x(last.steadyOne)})`,
      `≥ ${TARGETS.oursOverDatatrove}×`,
    ]),
    ...(repeat > 1
      ? [
          row([
            `… over ${repeat} passes, 3 processes`,
            `${passes.map((p) => x(p.ratio)).join(" · ")} → median ${x(median(ratios))} (start-up excluded: ${x(median(steadies))})`,
            "",
          ]),
          row([
            `… over ${repeat} passes, 1 process each (verdict on the median)`,
            `${passes.map((p) => x(p.ratioOne)).join(" · ")} → median ${x(median(ratiosOne))}${check(median(ratiosOne), TARGETS.oursOverDatatrove, true)} (start-up excluded: ${x(median(steadiesOne))})`,
            `≥ ${TARGETS.oursOverDatatrove}×`,
          ]),
        ]
      : []),
    row([
      "peak RSS of the curation stages at 1× / 10× input",
      rss10x
        ? `${f(rss1x, 0)} MB / ${f(rss10x.max_rss_mb, 0)} MB (${f(corpus10Bytes / 1e6, 0)} MB, ${rss10x.stages.signatures ? `${f(rss10x.mb_per_cpu_s)} MB/s per core` : ""}) · ${x(rssRatio)}${check(rssRatio, TARGETS.rss10xOver1x, false)}`
        : "not measured (--no-10x)",
      `≤ ${TARGETS.rss10xOver1x}×`,
    ]),
    row(["what lwm-data removed (near only; exact copies are near copies at similarity 1)", qualityText(lwmQuality), ""]),
    row(["what datatrove removed", qualityText(dtQuality), ""]),
  ];
  const table = lines.join("\n");

  mkdirSync(dirname(resultsPath), { recursive: true });
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  // bench/** is linted: leave the file the way the project's formatter writes JSON.
  const biome = join(ROOT, "node_modules/.bin/biome");
  if (existsSync(biome)) spawnSync(biome, ["format", "--write", resultsPath], { cwd: ROOT, stdio: "ignore" });
  // The command as run: a table without the 10× row or datatrove says why.
  const requested = [
    values.quick ? "--quick" : `--bytes ${values.bytes}`,
    ...(values["no-10x"] ? ["--no-10x"] : []),
    ...(values["no-datatrove"] ? ["--no-datatrove"] : []),
  ].join(" ");
  if (docsPath) writeDocs(docsPath, table, results.date, requested, results.notes, loadStart);
  console.log(table);
  log(`results: ${resultsPath}${docsPath ? `; table: ${docsPath}` : ""}`);
} finally {
  if (values.keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

function writeDocs(path: string, table: string, date: string, requested: string, notes: string[], load: number[]): void {
  const START = "<!-- curate-bench:start (written by bench/curate.bench.ts) -->";
  const END = "<!-- curate-bench:end -->";
  const section = [
    START,
    `Last run: ${date.slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, \`node bench/curate.bench.ts ${requested}${repeat > 1 ? ` --repeat ${repeat}` : ""}\` (load average at start ${load.map((v) => v.toFixed(1)).join(" ")}).`,
    "",
    table,
    "",
    ...notes.map((n) => `- ${n}`),
    END,
  ].join("\n");
  const current = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}`
      : `${current.trimEnd()}\n\n## Curation: near-duplicate removal (issue 20)\n\n${section}\n`;
  writeFileSync(path, next);
}
