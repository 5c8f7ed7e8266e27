import { relative } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { curationEnabled, jobStages } from "../curate/job-stages.ts";
import { lshThreshold } from "../curate/minhash.ts";
import { type JobPlan, planJob } from "../pipeline/plan.ts";
import { formatBytes } from "./format-bytes.ts";

interface ValidateOptions {
  input: string[];
  benchmark: string[];
  output?: string;
}

export async function validateCommand(configPath: string, options: ValidateOptions): Promise<void> {
  const loaded = loadConfig(configPath, {
    inputs: options.input,
    benchmarks: options.benchmark,
    ...(options.output ? { output: options.output } : {}),
  });
  const plan = await planJob(loaded);
  const { config, tokenizer, renderer } = plan;
  const cwdRelative = (path: string) => relative(process.cwd(), path) || ".";
  const totalBytes = plan.files.reduce((sum, file) => sum + file.bytes, 0);
  const out = [
    `config ${cwdRelative(plan.configPath)} is valid`,
    `pipeline     ${plan.pipeline.name}: read → ${plan.pipeline.recordStages.join(" → ")} → write`,
    `inputs       ${plan.files.length} file(s), ${formatBytes(totalBytes)}`,
    ...plan.files.map(
      (f) =>
        `  ${cwdRelative(f.path)}  ${formatBytes(f.bytes)}  format=${f.reader.name}${f.detected ? " (detected)" : ""}${f.spec.domain ? ` domain=${f.spec.domain}` : ""}`,
    ),
    `tasks        ${plan.tasks.length} of about ${formatBytes(config.input.task_bytes)} (input.task_bytes; \`lwm-data plan\` lists them)`,
    `stages       ${jobStages(config, plan.tasks.length)
      .map(({ stage, units }) => `${stage} (${units} unit${units === 1 ? "" : "s"})`)
      .join(" → ")}`,
    ...curationLines(plan, cwdRelative),
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

/** What curation will do: dedup settings with the similarity they imply, the benchmarks. */
function curationLines(plan: JobPlan, cwdRelative: (path: string) => string): string[] {
  const { dedup, decontaminate } = plan.config;
  if (!curationEnabled(plan.config)) return ["curation     off (dedup and decontaminate; configs/curate.yaml turns them on)"];
  const kinds = [dedup.exact ? "exact" : "", dedup.near ? "near" : ""].filter(Boolean);
  return [
    `dedup        ${kinds.length > 0 ? kinds.join(" + ") : "off"}${dedup.near ? `: MinHash over word ${dedup.ngram}-grams, ${dedup.bands} bands × ${dedup.rows} rows (50% candidate chance at Jaccard ${lshThreshold(dedup.bands, dedup.rows).toFixed(2)})` : ""}`,
    `benchmarks   ${plan.benchmarks.length === 0 ? "none (no decontamination)" : `${plan.benchmarks.length} file(s), ${decontaminate.ngram}-gram overlap ≥ ${decontaminate.min_overlap} per turn → ${decontaminate.action}`}`,
    ...plan.benchmarks.map(
      (f) => `  ${cwdRelative(f.path)}  ${formatBytes(f.bytes)}  format=${f.reader.name}${f.detected ? " (detected)" : ""}`,
    ),
  ];
}
