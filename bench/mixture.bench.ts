/**
 * Mixture benchmark: text documents and the token mix, in one run:
 *   1. text throughput per core: the same FineWeb-style Parquet text (bench/mixture/text-corpus.ts,
 *      ~50 MB of text, zstd, row groups of 1,000 rows, columns text/id/url) through
 *      (a) `lwm-data run` with that one Parquet input (text-parquet, --workers 1, unpacked, no
 *          mixture) and
 *      (b) datatrove's ParquetReader → DocumentTokenizer with the same Qwen3 tokenizer.json and
 *          <|endoftext|> after every document (bench/datatrove/text.py), 1 task, 1 worker;
 *      text MB per CPU second of each, the ratio (target ≥ 2×), and both token counts;
 *   2. lwm-data's peak RSS on the 1× and on a 10× Parquet file (other documents, same shape, same
 *      row-group size), 1 worker (target 10×/1× ≤ 1.15);
 *   3. realised shares: a ~50 MB synthetic mixture (swe, terminal and mcp trajectories from
 *      bench/synthetic, text JSONL documents) run with `mixture.sources` knowledge {share 0.3},
 *      mcp {share 0.2}, terminal {factor 1.5}: per source the target (or what its factor gives)
 *      against the share of trained tokens in the manifest (target within ±1 pp);
 *   4. what the shares cost: CPU-s of that share-mode job over the same job with the factors its
 *      shares resolved to (factor mode: no count or weights stage), target ≤ 1.3×, and the size of
 *      the spool the count stage leaves for the records stage (src/mixture/spool.ts).
 * Results: bench/results/mixture.json, a markdown table on stdout and in docs/benchmarks.md.
 *
 *   node bench/mixture.bench.ts [--bytes 50MB] [--mixture-bytes 50MB] [--quick] [--seed N] [--repeat N]
 *                               [--no-datatrove] [--no-10x] [--keep] [--results PATH] [--docs PATH]
 *
 * --quick (CI): 2 MB of text (20 MB at 10×) and a 2 MB mixture, one pass, so the code cannot rot (no
 * measurement: its numbers are start-up more than steady state); prints the table, writes
 * bench/results/mixture-quick.json, leaves the docs alone. --repeat N runs the 1× text runs of both
 * tools N times and judges the median ratio, and runs the share/factor pair N times (median); the
 * 10× run once (not a timing verdict).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bundledQwen3Dir } from "../src/tokenize/load-tokenizer.ts";
import { generateMixtureCorpus, type MixtureCorpus, WEIGHTS, writeMixtureConfig } from "./mixture/mixture-corpus.ts";
import {
  type CorpusInfo,
  type CpuPair,
  markdownTable,
  median,
  type Results,
  type ShareRow,
  type ShareVsFactor,
  TARGETS,
  type TextPass,
  type TextRun,
  textRun,
  writeDocs,
  writeResults,
} from "./mixture/report.ts";
import { writeTextJsonl } from "./mixture/text-corpus.ts";
import { datatroveVersion, ensureDatatrove, ROOT, runFlags } from "./pipeline/runners.ts";
import { hasGnuTime, timed } from "./pipeline/timed.ts";
import { parseBytes } from "./synthetic/generate.ts";

const { values } = parseArgs({
  options: {
    bytes: { type: "string", default: "50MB" },
    "mixture-bytes": { type: "string", default: "50MB" },
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
const resultsPath = values.results ?? join(ROOT, values.quick ? "bench/results/mixture-quick.json" : "bench/results/mixture.json");
const docsPath = values.docs ?? (values.quick ? undefined : join(ROOT, "docs/benchmarks.md"));
const textBytes = values.quick ? 2e6 : parseBytes(values.bytes);
const mixtureBytes = values.quick ? 2e6 : parseBytes(values["mixture-bytes"]);
const seed = Number(values.seed);
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) {
  console.error(`bench/mixture.bench.ts: --repeat must be a positive integer, got "${values.repeat}"`);
  process.exit(2);
}
/** FineWeb's own shards hold ~1k rows per row group; the brief's range is 1-2k. */
const ROW_GROUP_ROWS = 1000;
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");
const VENV_BENCH_PYTHON = join(ROOT, ".venv-bench/bin/python");
const VENV_TEST_PYTHON = join(ROOT, ".venv/bin/python");
const TOKENIZER_JSON = join(bundledQwen3Dir(), "tokenizer.json");
const log = (message: string) => console.error(`[bench] ${message}`);

/** A Python with pyarrow to write the Parquet files: the bench venv (setup.sh), else the test venv. */
function pyarrowPython(): string {
  for (const python of [VENV_BENCH_PYTHON, VENV_TEST_PYTHON])
    if (spawnSync(python, ["-c", "import pyarrow"], { stdio: "ignore" }).status === 0) return python;
  throw new Error("no Python with pyarrow: run bash bench/datatrove/setup.sh (or npm test's pretest, which makes .venv)");
}

/** Generates `bytes` of text documents into `<dir>/text.parquet` (the folder holds only that file). */
function textParquet(dir: string, bytes: number, stream: string, python: string): CorpusInfo {
  mkdirSync(dir, { recursive: true });
  const jsonl = join(work, `${stream}.jsonl`);
  const corpus = writeTextJsonl(jsonl, bytes, seed, stream);
  const out = spawnSync(
    python,
    [
      join(ROOT, "bench/mixture/write-parquet.py"),
      "--input",
      jsonl,
      "--output",
      join(dir, "text.parquet"),
      "--row-group-rows",
      String(ROW_GROUP_ROWS),
    ],
    { encoding: "utf8" },
  );
  rmSync(jsonl, { force: true });
  if (out.status !== 0) throw new Error(`bench/mixture/write-parquet.py failed:\n${out.stderr}`);
  const written = JSON.parse(out.stdout.trim().split("\n").at(-1) ?? "{}") as { rows: number; row_groups: number; bytes: number };
  return {
    text_bytes: corpus.textBytes,
    jsonl_bytes: corpus.bytes,
    parquet_bytes: written.bytes,
    documents: written.rows,
    row_groups: written.row_groups,
    row_group_rows: ROW_GROUP_ROWS,
  };
}

function writeTextConfig(path: string, parquetDir: string): string {
  const lines = [
    "# Written by bench/mixture.bench.ts: one FineWeb-style Parquet file of text documents, Qwen3, unpacked, no mixture.",
    "inputs:",
    `  - path: ${parquetDir}/text.parquet`,
    "    format: text-parquet",
    "tokenizer:",
    "  name: qwen3",
    "output:",
    `  dir: ${join(work, "out-unused")}`,
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

interface Manifest {
  counts: { records_in: number; samples_out: number; documents: number; dropped_by_mixture?: number };
  tokens: { total: number; loss: number };
  mixture?: {
    settings: Record<string, unknown>;
    total_loss_tokens: number;
    sources: Record<
      string,
      { factor: number; target_share?: number; loss_tokens: number; loss_tokens_out: number; share: number; share_before: number }
    >;
  };
}

const readManifest = (outDir: string) => JSON.parse(readFileSync(join(outDir, "manifest.json"), "utf8")) as Manifest;
const flags = runFlags();

/** `lwm-data run` as a user runs it (subprocess under GNU time). */
function runLwm(config: string, outDir: string, workers: number) {
  rmSync(outDir, { recursive: true, force: true });
  const args = [CLI, "run", config, "--output", outDir, "--progress", "none", "--workers", String(workers)];
  if (flags.overwrite) args.push("--overwrite");
  const run = timed(NODE, args, { cwd: ROOT });
  return { run, manifest: readManifest(outDir) };
}

function lwmText(config: string, outDir: string, info: { text_bytes: number }): TextRun {
  const { run, manifest } = runLwm(config, outDir, 1);
  rmSync(outDir, { recursive: true, force: true });
  return textRun(run, manifest.counts.documents, manifest.tokens.total, info.text_bytes);
}

function datatroveText(parquetDir: string, outDir: string, info: { text_bytes: number }): TextRun {
  rmSync(outDir, { recursive: true, force: true });
  // One core, as in text.py; set here too so nothing in the venv can widen it.
  const env = { ...process.env, RAYON_NUM_THREADS: "1", TOKENIZERS_PARALLELISM: "false", OMP_NUM_THREADS: "1" };
  const run = timed(
    VENV_BENCH_PYTHON,
    [join(ROOT, "bench/datatrove/text.py"), "--input", parquetDir, "--output", outDir, "--tokenizer", TOKENIZER_JSON],
    { env },
  );
  rmSync(outDir, { recursive: true, force: true });
  const parsed = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as { documents: number; tokens: number };
  return textRun(run, parsed.documents, parsed.tokens, info.text_bytes);
}

/** Bytes and files under a folder (recursively), 0 when it is missing. */
function folderBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, files };
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())) {
    bytes += statSync(join(entry.parentPath, entry.name)).size;
    files += 1;
  }
  return { bytes, files };
}

/**
 * Share mode against factor mode on the same mixture: the share run given, a factor-mode job with
 * the factors it resolved, `repeat` pairs (the first share run is the one given), and the spool
 * one count stage leaves. Null without GNU time (no CPU numbers).
 */
function compareWithFactors(
  share: ReturnType<typeof runLwm>,
  shareConfig: string,
  mix: NonNullable<Manifest["mixture"]>,
  workers: number,
): ShareVsFactor | null {
  if (share.run.cpuS === undefined) return null;
  const factors = Object.fromEntries(Object.entries(mix.sources).map(([name, s]) => [name, s.factor]));
  const weights = Object.fromEntries(Object.entries(factors).map(([name, factor]) => [name, { factor }]));
  const factorOut = join(work, "out-factors");
  const factorConfig = writeMixtureConfig(join(work, "mixture-factors.yaml"), mixtureCorpus(), factorOut, seed, weights);
  const shardBytes = folderBytes(join(work, "out-mixture", "data")).bytes;
  const pairs: CpuPair[] = [];
  for (let pass = 1; pass <= repeat; pass++) {
    const shareRun = pass === 1 ? share.run : runLwm(shareConfig, join(work, "out-mixture"), workers).run;
    log(`share vs factor, pass ${pass} of ${repeat}: the mixture with the resolved factors, ${workers} workers`);
    const factorRun = runLwm(factorConfig, factorOut, workers).run;
    const shareCpu = shareRun.cpuS ?? 0;
    const factorCpu = factorRun.cpuS ?? 0;
    pairs.push({
      share_cpu_s: shareCpu,
      factor_cpu_s: factorCpu,
      share_wall_s: shareRun.wallS,
      factor_wall_s: factorRun.wallS,
      ratio: shareCpu / factorCpu,
    });
  }
  log("the count stage alone, to size its spool");
  const countOut = join(work, "out-count");
  rmSync(countOut, { recursive: true, force: true });
  const args = [CLI, "run", shareConfig, "--output", countOut, "--stage", "count", "--progress", "none", "--workers", String(workers)];
  const count = timed(NODE, args, { cwd: ROOT });
  const spool = folderBytes(join(countOut, "mixture", "spool"));
  rmSync(countOut, { recursive: true, force: true });
  return {
    factors,
    pairs,
    median_ratio: median(pairs.map((p) => p.ratio)),
    count_stage: { cpu_s: count.cpuS ?? null, spool_bytes: spool.bytes, spool_files: spool.files },
    shard_bytes: shardBytes,
  };
}

const work = mkdtempSync(join(tmpdir(), "lwm-bench-mixture-"));
let corpusMade: MixtureCorpus | undefined;
const mixtureCorpus = (): MixtureCorpus => {
  if (!corpusMade) throw new Error("the mixture corpus is not generated yet");
  return corpusMade;
};
const notes: string[] = [];
if (!hasGnuTime()) notes.push("GNU time (/usr/bin/time) is missing: CPU time, per-core numbers and peak RSS were not measured.");
const loadStart = loadavg();
if ((loadStart[0] ?? 0) > cpus().length * 0.5)
  notes.push(
    `The machine was busy at the start (load average ${(loadStart[0] ?? 0).toFixed(1)} on ${cpus().length} cores): wall-clock numbers are pessimistic; per-core (CPU-second) numbers are less affected.`,
  );

try {
  const datatroveProblem = values["no-datatrove"] ? "--no-datatrove" : ensureDatatrove();
  const python = pyarrowPython();

  log(`generating ${(textBytes / 1e6).toFixed(1)} MB of FineWeb-style text as Parquet (seed ${seed}) in ${work}`);
  const textDir = join(work, "text");
  const text = textParquet(textDir, textBytes, "x1", python);
  const tinyDir = join(work, "tiny");
  // 16 documents: what start-up (process, tokenizer, reader, writer) costs each tool.
  const tiny = textParquet(tinyDir, 20_000, "tiny", python);
  const textConfig = writeTextConfig(join(work, "text.yaml"), textDir);
  const tinyConfig = writeTextConfig(join(work, "tiny.yaml"), tinyDir);

  log("start-up: lwm-data and datatrove on a 16-document Parquet file");
  const startupLwm = lwmText(tinyConfig, join(work, "out-tiny"), tiny);
  const startupDatatrove = datatroveProblem ? null : datatroveText(tinyDir, join(work, "dt-tiny"), tiny);

  const passes: TextPass[] = [];
  for (let pass = 1; pass <= repeat; pass++) {
    log(`pass ${pass} of ${repeat}: lwm-data run, text-parquet, 1 worker`);
    const lwm = lwmText(textConfig, join(work, "out-text"), text);
    let datatrove: TextRun | null = null;
    if (!datatroveProblem) {
      log(`pass ${pass} of ${repeat}: datatrove ParquetReader → DocumentTokenizer`);
      datatrove = datatroveText(textDir, join(work, "dt-text"), text);
    }
    const steady = (run: TextRun | null, start: TextRun | null) =>
      run?.cpu_s && start?.cpu_s && run.cpu_s > start.cpu_s ? run.cpu_s - start.cpu_s : null;
    const ours = steady(lwm, startupLwm);
    const theirs = steady(datatrove, startupDatatrove);
    passes.push({
      lwm_data: lwm,
      datatrove,
      ratio: lwm.mb_per_cpu_s && datatrove?.mb_per_cpu_s ? lwm.mb_per_cpu_s / datatrove.mb_per_cpu_s : null,
      ratio_steady: ours && theirs ? theirs / ours : null,
    });
  }
  const last = passes.at(-1) as TextPass;
  text.bytes_per_token = text.text_bytes / (last.lwm_data.tokens - last.lwm_data.documents);

  let text10: CorpusInfo | null = null;
  let run10: TextRun | null = null;
  if (!values["no-10x"]) {
    log(`generating the 10× text (~${((10 * textBytes) / 1e6).toFixed(0)} MB, other documents) as one Parquet file`);
    const dir10 = join(work, "text10");
    text10 = textParquet(dir10, 10 * textBytes, "x10", python);
    rmSync(textDir, { recursive: true, force: true });
    log("lwm-data run on the 10× Parquet file, 1 worker");
    run10 = lwmText(writeTextConfig(join(work, "text10.yaml"), dir10), join(work, "out-text10"), text10);
    rmSync(dir10, { recursive: true, force: true });
  }
  const rss1 = last.lwm_data.max_rss_mb;
  const rss10 = run10?.max_rss_mb ?? null;

  log(`generating the ~${(mixtureBytes / 1e6).toFixed(0)} MB mixture (swe, terminal, mcp trajectories; text JSONL)`);
  const mixture = generateMixtureCorpus(join(work, "mixture"), mixtureBytes, seed);
  corpusMade = mixture;
  const mixtureConfig = writeMixtureConfig(join(work, "mixture.yaml"), mixture, join(work, "out-mixture"), seed);
  const mixtureWorkers = Math.min(2, cpus().length);
  log(`lwm-data run on the mixture (count → weights → records), ${mixtureWorkers} workers`);
  const mixed = runLwm(mixtureConfig, join(work, "out-mixture"), mixtureWorkers);
  const mix = mixed.manifest.mixture;
  if (!mix) throw new Error("the mixture run's manifest has no mixture block");
  const weighted = Object.values(mix.sources).reduce((sum, s) => sum + s.factor * s.loss_tokens, 0);
  const totalOut = Object.values(mix.sources).reduce((sum, s) => sum + s.loss_tokens_out, 0);
  const sources: ShareRow[] = Object.entries(mix.sources)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, s]) => {
      const w = WEIGHTS[name];
      const target = s.target_share ?? (s.factor * s.loss_tokens) / weighted;
      return {
        source: name,
        weight: w ? ("share" in w ? `share ${w.share}` : `factor ${w.factor}`) : "not listed: factor 1",
        factor: s.factor,
        loss_tokens: s.loss_tokens,
        loss_tokens_out: s.loss_tokens_out,
        target,
        target_kind: s.target_share !== undefined ? "share" : "factor",
        realised: s.share,
        diff_pp: (s.share - target) * 100,
      };
    });

  const shareVsFactor = compareWithFactors(mixed, mixtureConfig, mix, mixtureWorkers);

  const results: Results = {
    benchmark: "lwm-data text documents and mixtures, bench/mixture.bench.ts",
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
      requested: values.quick ? "--quick" : `--bytes ${values.bytes} --mixture-bytes ${values["mixture-bytes"]}`,
      seed,
      text,
      text_10x: text10,
      mixture: {
        bytes: mixture.bytes,
        files: mixture.files,
        records: mixture.records,
        part_bytes: mixture.partBytes,
        generator: "bench/mixture/mixture-corpus.ts: bench/synthetic's swe/terminal/mcp generators, bench/mixture/text-corpus.ts",
      },
    },
    text: {
      passes,
      startup: { lwm_data: startupLwm, datatrove: startupDatatrove },
      median_ratio: median(passes.map((p) => p.ratio)),
      median_ratio_steady: median(passes.map((p) => p.ratio_steady)),
      tokens: {
        lwm_data: last.lwm_data.tokens,
        datatrove: last.datatrove?.tokens ?? null,
        equal: last.datatrove ? last.datatrove.tokens === last.lwm_data.tokens : null,
      },
      datatrove: datatroveProblem
        ? { skipped: datatroveProblem }
        : {
            version: datatroveVersion(),
            setup:
              "ParquetReader (text, id; read_metadata=False; batch 1000) → DocumentTokenizer (eos <|endoftext|>, no shuffle, batch 10000); LocalPipelineExecutor tasks=1 workers=1; RAYON_NUM_THREADS=1",
          },
    },
    rss: {
      x1_mb: rss1,
      x10_mb: rss10,
      ratio: rss1 && rss10 ? rss10 / rss1 : null,
      run_10x: run10,
      x1_each_pass: passes.map((p) => p.lwm_data.max_rss_mb),
    },
    mixture: {
      config: { sources: WEIGHTS, seed, workers: mixtureWorkers, other: "configs/defaults.yaml (turn-stats masking, unpacked)" },
      run: { wall_s: mixed.run.wallS, cpu_s: mixed.run.cpuS ?? null, max_rss_mb: mixed.run.maxRssMb ?? null, workers: mixtureWorkers },
      records_in: mixed.manifest.counts.records_in,
      dropped_by_mixture: mixed.manifest.counts.dropped_by_mixture ?? 0,
      total_loss_tokens_before: mix.total_loss_tokens,
      total_loss_tokens_out: totalOut,
      sources,
      max_abs_diff_pp: Math.max(...sources.map((s) => Math.abs(s.diff_pp))),
      share_vs_factor: shareVsFactor,
    },
    targets: TARGETS,
    notes: [
      "Per core = MB of document text (UTF-8 bytes of the text column) per CPU second (user + system, GNU time) of the whole process, start-up included; 'start-up excluded' subtracts each tool's CPU on a 16-document file. The Parquet file is smaller (zstd); both tools read the same file.",
      "lwm-data runs `bin/lwm-data.js run` on the one Parquet file (format text-parquet: one row group at a time, text and id columns, decoded in a worker thread), --workers 1, configs/defaults.yaml otherwise (Qwen3, unpacked): every document checked/repaired for Unicode, secrets redacted, tokenized as plain text + <|endoftext|>, every token trained, written as zstd Parquet shards with a loss mask.",
      "datatrove (bench/datatrove/text.py) reads the same file's text and id columns and tokenizes with HF `tokenizers` (Rust) and the same tokenizer.json, writing its token files; it does no normalization or redaction and writes no loss mask or Parquet.",
      "Peak RSS: GNU time's maximum resident set of the `lwm-data run` process (its worker threads included) on the 1× file (the last pass) and on a 10× file of other documents of the same shape, same row-group size, 1 worker.",
      `Share mode / factor mode: the mixture job as above (target shares: count → weights → records) against the same job with every source at the factor the share run resolved (records stage only), ${mixtureWorkers} workers each, CPU = user + system of the whole process (GNU time); ${repeat > 1 ? `${repeat} pairs, alternating, verdict on the median` : "one pair"}. The count stage spools each task's record results (src/mixture/spool.ts) and the records stage replays them instead of processing every record again; the spool size is from a separate \`--stage count\` run.`,
      `Shares: of the trained (loss) tokens of the output, from the manifest's mixture block (sources[name].share). A source with a share has it as its target; a source with a fixed factor (terminal 1.5, swe 1 by default) is compared with what that factor gives, factor × its trained tokens / Σ factor × trained tokens. The draw keeps or drops whole records, so the realised share moves by the records' sizes; the mixture runs ${mixtureWorkers} workers (the output is the same with any number).`,
      ...(values.quick
        ? [
            "--quick: the 1× text is small enough that its run ends before lwm-data's memory has reached its plateau, so the RSS ratio overstates growth; judge it on a full run.",
          ]
        : []),
      ...notes,
    ],
  };

  const table = markdownTable(results);
  writeResults(results, resultsPath);
  if (docsPath)
    writeDocs(
      results,
      docsPath,
      table,
      `node bench/mixture.bench.ts ${results.corpus.requested}${repeat > 1 ? ` --repeat ${repeat}` : ""}`,
    );
  console.log(table);
  log(`results: ${resultsPath}${docsPath ? `; table: ${docsPath}` : ""}`);
} finally {
  if (values.keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
