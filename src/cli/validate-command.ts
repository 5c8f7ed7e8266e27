import { dirname, relative } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { curationEnabled } from "../curate/curation-settings.ts";
import { lshThreshold } from "../curate/minhash.ts";
import { plannedMixLines } from "../mixture/describe-mixture.ts";
import { jobStages } from "../pipeline/job-stages.ts";
import { type CoveredInput, type InputFile, type JobPlan, planJob } from "../pipeline/plan.ts";
import { estimateJobScoring, scoringEstimateLines } from "../score/score-estimate.ts";
import { selectionLines } from "../select/describe-selection.ts";
import { formatBytes } from "./format-bytes.ts";
import { type InputOptions, inputOverrides } from "./input-overrides.ts";
import { sniffDisplay } from "./progress-display.ts";
import { shownPath } from "./shown-path.ts";

export async function validateCommand(configPath: string, options: InputOptions): Promise<void> {
  const loaded = loadConfig(configPath, inputOverrides(options));
  const sniffing = sniffDisplay("auto");
  const plan = await planJob(loaded, sniffing ? { onSniff: sniffing.onSniff } : {}).finally(() => sniffing?.stop());
  const { config, tokenizer, renderer } = plan;
  const cwdRelative = shownPath;
  const totalBytes = plan.files.reduce((sum, file) => sum + file.bytes, 0);
  const out = [
    `config ${cwdRelative(plan.configPath)} is valid`,
    ...inputWarnings(plan, cwdRelative),
    `pipeline     ${plan.pipeline.name}: read → ${plan.pipeline.recordStages.join(" → ")} → write`,
    `inputs       ${plan.files.length} file(s), ${formatBytes(totalBytes)}`,
    ...formatTable(plan.files),
    ...fileLines(plan.files, cwdRelative),
    ...coveredLines(plan, cwdRelative),
    `tasks        ${plan.tasks.length} of about ${formatBytes(config.input.task_bytes)} (input.task_bytes; \`lwm-data plan\` lists them)`,
    `stages       ${(await jobStages(config, plan.tasks.length))
      .map(({ stage, units }) => `${stage.name} (${units} unit${units === 1 ? "" : "s"})`)
      .join(" → ")}`,
    ...curationLines(plan, cwdRelative),
    ...selectionLines(plan),
    ...(plan.scorers.length > 0 ? ["scoring      estimate:", ...scoringEstimateLines(await estimateJobScoring(plan))] : []),
    ...(await plannedMixLines(plan)),
    `tokenizer    ${tokenizer.identity.name}  vocab=${tokenizer.identity.vocabSize}  sha256=${tokenizer.identity.vocabSha256.slice(0, 16)}…  (${tokenizer.identity.source})`,
    `template     ${renderer.source}  sha256=${renderer.sha256.slice(0, 16)}…`,
    `mask policy  ${plan.lossPolicy.name}`,
    `output       ${cwdRelative(config.output.dir)}`,
    `shards       ${config.output.num_buckets} id-hashed buckets per task, segments cut at ${formatBytes(config.output.max_shard_bytes)}, ${config.output.row_group_rows} rows per row group, zstd${config.output.include_messages ? ", with messages column" : ""}`,
    `splits       ${config.output.validation_fraction > 0 ? `train / validation ${(100 * config.output.validation_fraction).toFixed(1)}% of trajectories (seed ${config.output.split_seed})` : "train only"}`,
    `packing      ${config.pack.enabled ? `${config.pack.strategy}, rows of ≤ ${config.pack.seq_len} tokens, longer records: ${config.pack.overlong}` : "off (one sample per row)"}`,
    `config hash  ${plan.configSha256}`,
  ];
  console.log(out.join("\n"));
}

/** Per-file lines shown in full up to this many files; past it, the first ones and a count. */
export const MAX_FILE_LINES = 50;

/** The domain a file's records get: set by the input, else its format's (docs/input-formats.md "Input formats"). */
function domainOf(file: InputFile): string {
  return file.spec.domain ?? file.reader.domain;
}

/** A domain as a per-file line shows it: `swe`, or `(from the tools)`. */
function shownDomain(domain: string): string {
  return domain.includes(" ") ? `(${domain})` : domain;
}

/** One row per format and domain: how many files and bytes (tidy for thousands of files). */
function formatTable(files: readonly InputFile[]): string[] {
  const rows = new Map<string, { format: string; domain: string; files: number; bytes: number }>();
  for (const file of files) {
    const format = file.reader.name;
    const domain = file.empty || file.unrecognized ? "-" : domainOf(file);
    const key = `${format}\u0000${domain}`;
    const row = rows.get(key) ?? { format, domain, files: 0, bytes: 0 };
    row.files += 1;
    row.bytes += file.bytes;
    rows.set(key, row);
  }
  const sorted = [...rows.values()].sort((a, b) => b.files - a.files || (a.format < b.format ? -1 : a.format > b.format ? 1 : 0));
  const formatWidth = Math.max(6, ...sorted.map((r) => r.format.length));
  const domainWidth = Math.max(6, ...sorted.map((r) => r.domain.length));
  return [
    `  ${"format".padEnd(formatWidth)}  ${"domain".padEnd(domainWidth)}  ${"files".padStart(7)}  bytes`,
    ...sorted.map(
      (r) => `  ${r.format.padEnd(formatWidth)}  ${r.domain.padEnd(domainWidth)}  ${String(r.files).padStart(7)}  ${formatBytes(r.bytes)}`,
    ),
  ];
}

function fileLines(files: readonly InputFile[], cwdRelative: (path: string) => string): string[] {
  const line = (f: InputFile) => `  ${cwdRelative(f.path)}  ${formatBytes(f.bytes)}  ${describeInput(f)}`;
  if (files.length <= MAX_FILE_LINES) return files.map(line);
  return [
    ...files.slice(0, MAX_FILE_LINES).map(line),
    `  … and ${files.length - MAX_FILE_LINES} more file(s) (the table above counts them all; \`lwm-data plan\` lists every file)`,
  ];
}

/** How an input file will be read: its format, how it was chosen, what detection noticed. */
function describeInput(file: InputFile): string {
  if (file.empty) return `empty: 0 records${file.emptyNote ? ` (${file.emptyNote})` : ""}`;
  if (file.unrecognized) return "unrecognized: quarantined whole, as one entry (stage detect)";
  const skipped = file.skippedLines ?? [];
  const notes = [
    ...(file.detected ? ["detected"] : []),
    ...(file.layout === "json-array" ? ["a JSON array, read element by element"] : []),
    ...(file.layout === "wrapped-rows" ? ["rows under one key of a JSON document, read element by element"] : []),
    ...(file.layout === "parquet-rows" ? ["Parquet rows, read row by row"] : []),
    ...(file.layout === "arrow-rows" ? ["Arrow IPC rows, read row by row"] : []),
    ...(file.layout === "csv-rows" ? ["CSV rows, read row by row"] : []),
    ...(skipped.length > 0
      ? [
          `${skipped.length === 1 ? "line" : "lines"} ${skipped.map((s) => s.line).join(", ")} looked like ${skipped.every((s) => !s.format) ? "no format" : skipped.map((s) => s.format ?? "no format").join(" / ")}: quarantined when read`,
        ]
      : []),
  ];
  return `format=${file.reader.name}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}${` domain=${shownDomain(domainOf(file))}`}${file.spec.source ? ` source=${file.spec.source}` : ""}`;
}

/**
 * Files the inputs matched that are not read on their own, by the input that reads them: one line
 * per reading input (a terminal-bench trial: its recording, commands, panes, logs).
 */
function coveredLines(plan: JobPlan, cwdRelative: (path: string) => string): string[] {
  if (plan.covered.length === 0) return [];
  const groups = new Map<string, CoveredInput[]>();
  for (const covered of plan.covered.filter((c) => c.kind === "companion"))
    groups.set(covered.by, [...(groups.get(covered.by) ?? []), covered]);
  return [
    `covered      ${plan.covered.length} file(s) the inputs matched are read with another input, not on their own:`,
    ...plan.covered.filter((c) => c.kind === "stands-for").map((c) => `  ${cwdRelative(c.path)}  (${c.label})`),
    ...[...groups].map(([by, list]) => {
      const names = list.map((c) => relative(dirname(by), c.path) || c.path);
      return `  ${cwdRelative(dirname(by))}: ${names.slice(0, 6).join(", ")}${names.length > 6 ? `, … (${names.length})` : ""}  (${list[0]?.label})`;
    }),
  ];
}

/** Inputs `run` cannot read (quarantined whole) and empty ones, listed before anything else. */
function inputWarnings(plan: JobPlan, cwdRelative: (path: string) => string): string[] {
  const unrecognized = plan.files.filter((f) => f.unrecognized);
  const empty = plan.files.filter((f) => f.empty);
  return [
    ...(unrecognized.length > 0
      ? [
          `warning      ${unrecognized.length} input file(s) no reader recognizes: \`run\` quarantines each whole, as one entry (stage detect), and goes on:`,
          ...unrecognized.map((f) => `  ${cwdRelative(f.path)}: ${f.unrecognized}`),
        ]
      : []),
    ...(empty.length > 0
      ? [`note         ${empty.length} empty input file(s), 0 records: ${empty.map((f) => cwdRelative(f.path)).join(", ")}`]
      : []),
  ];
}

/** What curation will do: dedup settings with the similarity they imply, the benchmarks. */
function curationLines(plan: JobPlan, cwdRelative: (path: string) => string): string[] {
  const { dedup, decontaminate } = plan.config;
  if (!curationEnabled(plan.config)) return ["curation     off (dedup and decontaminate; configs/curate.yaml turns them on)"];
  const kinds = [dedup.exact ? "exact" : "", dedup.near ? "near" : ""].filter(Boolean);
  return [
    `dedup        ${kinds.length > 0 ? kinds.join(" + ") : "off"}${dedup.near ? `: MinHash over word ${dedup.ngram}-grams, ${dedup.bands} bands × ${dedup.rows} rows (50% candidate chance at Jaccard ${lshThreshold(dedup.bands, dedup.rows).toFixed(2)}; joined at estimated Jaccard ≥ ${dedup.min_similarity})` : ""}`,
    `benchmarks   ${plan.benchmarks.length === 0 ? "none (no decontamination)" : `${plan.benchmarks.length} file(s), ${decontaminate.ngram}-gram overlap ≥ ${decontaminate.min_overlap} per turn → ${decontaminate.action}`}`,
    ...plan.benchmarks.map(
      (f) => `  ${cwdRelative(f.path)}  ${formatBytes(f.bytes)}  format=${f.reader.name}${f.detected ? " (detected)" : ""}`,
    ),
  ];
}
