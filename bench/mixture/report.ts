/**
 * bench/mixture.bench.ts's results: the JSON shape, the markdown table (stdout and, for a full
 * run, the mixture section of docs/benchmarks.md between its markers).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../pipeline/runners.ts";

export const TARGETS = { oursOverDatatrove: 2.0, rss10xOver1x: 1.15, sharePp: 1.0, shareOverFactorCpu: 1.3 } as const;

/** One timed run over text documents. */
export interface TextRun {
  wall_s: number;
  cpu_s: number | null;
  max_rss_mb: number | null;
  documents: number;
  tokens: number;
  /** MB (10^6 bytes) of document text (UTF-8) per wall-clock second. */
  mb_per_s: number;
  /** MB of document text per CPU second (user + system): per core. */
  mb_per_cpu_s: number | null;
  docs_per_cpu_s: number | null;
}

export function textRun(
  run: { wallS: number; cpuS: number | undefined; maxRssMb: number | undefined },
  documents: number,
  tokens: number,
  textBytes: number,
): TextRun {
  const mb = textBytes / 1e6;
  const cpu = run.cpuS ?? null;
  return {
    wall_s: run.wallS,
    cpu_s: cpu,
    max_rss_mb: run.maxRssMb ?? null,
    documents,
    tokens,
    mb_per_s: mb / run.wallS,
    mb_per_cpu_s: cpu ? mb / cpu : null,
    docs_per_cpu_s: cpu ? documents / cpu : null,
  };
}

export interface TextPass {
  lwm_data: TextRun;
  datatrove: TextRun | null;
  /** lwm-data / datatrove, text MB per CPU second. */
  ratio: number | null;
  /** The same with each side's start-up CPU (its run on a 16-document file) taken out. */
  ratio_steady: number | null;
}

export interface ShareRow {
  source: string;
  weight: string;
  factor: number;
  loss_tokens: number;
  loss_tokens_out: number;
  /** The share the config asks for; for a fixed factor, what that factor gives: F·T_s / Σ F·T. */
  target: number;
  target_kind: "share" | "factor";
  realised: number;
  diff_pp: number;
}

export interface Results {
  benchmark: string;
  date: string;
  machine: Record<string, unknown>;
  corpus: {
    requested: string;
    seed: number;
    text: CorpusInfo;
    text_10x: CorpusInfo | null;
    mixture: {
      bytes: number;
      files: number;
      records: Record<string, number>;
      part_bytes: Record<string, number>;
      generator: string;
    };
  };
  text: {
    passes: TextPass[];
    startup: { lwm_data: TextRun; datatrove: TextRun | null };
    median_ratio: number | null;
    median_ratio_steady: number | null;
    tokens: { lwm_data: number; datatrove: number | null; equal: boolean | null };
    datatrove: { version: string; setup: string } | { skipped: string };
  };
  rss: { x1_mb: number | null; x10_mb: number | null; ratio: number | null; run_10x: TextRun | null; x1_each_pass: (number | null)[] };
  mixture: {
    config: Record<string, unknown>;
    run: { wall_s: number; cpu_s: number | null; max_rss_mb: number | null; workers: number };
    records_in: number;
    dropped_by_mixture: number;
    total_loss_tokens_before: number;
    total_loss_tokens_out: number;
    sources: ShareRow[];
    max_abs_diff_pp: number;
    /** The same corpus with target shares and with the factors they resolved to, CPU of each. */
    share_vs_factor: ShareVsFactor | null;
  };
  targets: typeof TARGETS;
  notes: string[];
}

/** One pair of runs: the share-mode job and the factor-mode job (the share run's resolved factors). */
export interface CpuPair {
  share_cpu_s: number;
  factor_cpu_s: number;
  share_wall_s: number;
  factor_wall_s: number;
  ratio: number;
}

export interface ShareVsFactor {
  /** Each source's factor in the factor-mode job: what the share run resolved. */
  factors: Record<string, number>;
  pairs: CpuPair[];
  median_ratio: number | null;
  /** A count stage alone (`--stage count`), to size the spool it leaves for the records stage. */
  count_stage: { cpu_s: number | null; spool_bytes: number; spool_files: number } | null;
  /** Bytes of the share run's shards (data/), beside the spool's. */
  shard_bytes: number;
}

export interface CorpusInfo {
  text_bytes: number;
  jsonl_bytes: number;
  parquet_bytes: number;
  documents: number;
  row_groups: number;
  row_group_rows: number;
  bytes_per_token?: number;
}

export function median(values: readonly (number | null)[]): number | null {
  const xs = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = xs.length >> 1;
  return xs.length % 2 ? (xs[mid] as number) : ((xs[mid - 1] as number) + (xs[mid] as number)) / 2;
}

const f = (v: number | null | undefined, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(digits));
const x = (ratio: number | null | undefined) => (ratio === null || ratio === undefined ? "n/a" : `${f(ratio)}×`);
const check = (value: number | null | undefined, target: number, atLeast: boolean) =>
  value === null || value === undefined ? "" : (atLeast ? value >= target : value <= target) ? " ✓" : " ✗";
const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

export function markdownTable(r: Results): string {
  const last = r.text.passes.at(-1) as TextPass;
  const dt = last.datatrove;
  const t = r.corpus.text;
  const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const repeat = r.text.passes.length;
  const lines = [
    "| measure | result | target |",
    "|---|---|---|",
    row([
      "text input: FineWeb-style Parquet (bench/mixture/text-corpus.ts)",
      `${f(t.text_bytes / 1e6, 1)} MB of text · ${t.documents} documents · ${f(t.parquet_bytes / 1e6, 1)} MB Parquet (zstd, ${t.row_groups} row groups of ${t.row_group_rows} rows) · ${f(t.bytes_per_token, 2)} bytes of text per token`,
      "",
    ]),
    row([
      "lwm-data `run`, text-parquet, 1 worker, unpacked",
      `${f(last.lwm_data.mb_per_s)} MB/s · per core ${f(last.lwm_data.mb_per_cpu_s)} MB/s, ${f(last.lwm_data.docs_per_cpu_s, 0)} docs/s · ${last.lwm_data.tokens} tokens · peak RSS ${f(last.lwm_data.max_rss_mb, 0)} MB`,
      "",
    ]),
    row([
      `baseline: datatrove${"version" in r.text.datatrove ? ` ${r.text.datatrove.version}` : ""} ParquetReader → DocumentTokenizer (1 task, 1 worker, 1 thread)`,
      dt
        ? `${f(dt.mb_per_s)} MB/s · per core ${f(dt.mb_per_cpu_s)} MB/s, ${f(dt.docs_per_cpu_s, 0)} docs/s · ${dt.tokens} tokens · peak RSS ${f(dt.max_rss_mb, 0)} MB`
        : `skipped: ${(r.text.datatrove as { skipped: string }).skipped}`,
      "",
    ]),
    row([
      "same tokens? lwm-data / datatrove",
      r.text.tokens.datatrove === null
        ? "n/a"
        : `${r.text.tokens.lwm_data} / ${r.text.tokens.datatrove}${r.text.tokens.equal ? " (identical)" : ` (${f(((r.text.tokens.lwm_data - r.text.tokens.datatrove) / r.text.tokens.datatrove) * 100, 3)}%)`}`,
      "",
    ]),
    row([
      "start-up (16 documents), lwm-data / datatrove",
      `${f(r.text.startup.lwm_data.cpu_s, 1)} CPU-s / ${r.text.startup.datatrove ? `${f(r.text.startup.datatrove.cpu_s, 1)} CPU-s` : "n/a"}`,
      "",
    ]),
    row([
      "lwm-data / datatrove, text MB per core",
      `${x(last.ratio)}${repeat > 1 ? "" : check(last.ratio, TARGETS.oursOverDatatrove, true)} (start-up excluded: ${x(last.ratio_steady)})`,
      `≥ ${TARGETS.oursOverDatatrove}×`,
    ]),
    ...(repeat > 1
      ? [
          row([
            `… over ${repeat} passes (verdict on the median)`,
            `${r.text.passes.map((p) => x(p.ratio)).join(" · ")} → median ${x(r.text.median_ratio)}${check(r.text.median_ratio, TARGETS.oursOverDatatrove, true)} (start-up excluded: ${r.text.passes.map((p) => x(p.ratio_steady)).join(" · ")} → ${x(r.text.median_ratio_steady)})`,
            `≥ ${TARGETS.oursOverDatatrove}×`,
          ]),
        ]
      : []),
    row([
      "peak RSS, lwm-data text-parquet at 1× / 10× input (1 worker)",
      r.rss.run_10x && r.corpus.text_10x
        ? `${f(r.rss.x1_mb, 0)} MB / ${f(r.rss.x10_mb, 0)} MB (${f(r.corpus.text_10x.text_bytes / 1e6, 0)} MB of text, ${r.corpus.text_10x.documents} documents, ${f(r.rss.run_10x.wall_s, 0)} s, per core ${f(r.rss.run_10x.mb_per_cpu_s)} MB/s) · ${x(r.rss.ratio)}${check(r.rss.ratio, TARGETS.rss10xOver1x, false)}`
        : "not measured (--no-10x)",
      `≤ ${TARGETS.rss10xOver1x}×`,
    ]),
    row([
      "mixture input: swe + terminal + mcp trajectories, text JSONL",
      `${f(r.corpus.mixture.bytes / 1e6, 1)} MB · ${Object.entries(r.corpus.mixture.records)
        .map(([part, n]) => `${part} ${n} (${f((r.corpus.mixture.part_bytes[part] ?? 0) / 1e6, 1)} MB)`)
        .join(" · ")} · lwm-data ${f(r.mixture.run.wall_s, 0)} s with ${r.mixture.run.workers} workers`,
      "",
    ]),
    ...r.mixture.sources.map((s) =>
      row([
        `share of trained tokens: ${s.source} (${s.weight})`,
        `${s.target_kind === "share" ? "target" : "factor gives"} ${pct(s.target)} · realised ${pct(s.realised)} · ${s.diff_pp >= 0 ? "+" : ""}${f(s.diff_pp)} pp${check(Math.abs(s.diff_pp), TARGETS.sharePp, false)} (factor ${f(s.factor, 3)}, ${s.loss_tokens} → ${s.loss_tokens_out} trained tokens)`,
        `± ${TARGETS.sharePp} pp`,
      ]),
    ),
    ...shareVsFactorRows(r, row),
  ];
  return lines.join("\n");
}

function shareVsFactorRows(r: Results, row: (cells: string[]) => string): string[] {
  const cmp = r.mixture.share_vs_factor;
  if (!cmp) return [row(["share mode / factor mode, CPU", "not measured (no GNU time)", `≤ ${TARGETS.shareOverFactorCpu}×`])];
  const pairs = cmp.pairs.map((p) => `${f(p.share_cpu_s, 1)} / ${f(p.factor_cpu_s, 1)} CPU-s = ${x(p.ratio)}`).join(" · ");
  const spool = cmp.count_stage
    ? ` · spool ${f(cmp.count_stage.spool_bytes / 1e6, 1)} MB (${cmp.count_stage.spool_files} files; shards ${f(cmp.shard_bytes / 1e6, 1)} MB)`
    : "";
  return [
    row([
      "share mode / factor mode, CPU (same mixture; factors = those the shares resolved)",
      `${pairs}${cmp.pairs.length > 1 ? ` → median ${x(cmp.median_ratio)}` : ""}${check(cmp.median_ratio, TARGETS.shareOverFactorCpu, false)}${spool}`,
      `≤ ${TARGETS.shareOverFactorCpu}×`,
    ]),
  ];
}

export function writeResults(r: Results, jsonPath: string): void {
  mkdirSync(dirname(jsonPath), { recursive: true });
  writeFileSync(jsonPath, `${JSON.stringify(r, null, 2)}\n`);
  // bench/** is linted: leave the file the way the project's formatter writes JSON.
  const biome = join(ROOT, "node_modules/.bin/biome");
  if (existsSync(biome)) spawnSync(biome, ["format", "--write", jsonPath], { cwd: ROOT, stdio: "ignore" });
}

const START = "<!-- mixture-bench:start (written by bench/mixture.bench.ts) -->";
const END = "<!-- mixture-bench:end -->";

/** Replaces the mixture section of the docs page (appending it when missing). */
export function writeDocs(r: Results, docsPath: string, table: string, command: string): void {
  const machine = r.machine as { cpu_model?: string; cpus?: number; loadavg_start?: number[] };
  const section = [
    START,
    `Last run: ${r.date.slice(0, 10)}, ${machine.cpus} × ${machine.cpu_model}, \`${command}\` (load average at start ${machine.loadavg_start?.map((v) => v.toFixed(1)).join(" ")}).`,
    "",
    table,
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
      : `${current.trimEnd()}\n\n## Mixtures: text throughput, memory and realised shares: \`node bench/mixture.bench.ts\`\n\n${section}\n`;
  writeFileSync(docsPath, next);
}
