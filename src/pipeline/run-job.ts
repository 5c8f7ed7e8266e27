import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type DomainTotals,
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  type Manifest,
  shardEntries,
  writeManifest,
} from "../../sharding/manifest.ts";
import { type QuarantineEntry, RecordError } from "../core/errors.ts";
import type { SourceRef, Trajectory } from "../core/trajectory.ts";
import { redactSecrets } from "../normalize/secrets.ts";
import type { ReaderOptions, ReadItem } from "../read/reader.ts";
import { ParquetShardWriter } from "../write/parquet-shard-writer.ts";
import { QuarantineWriter } from "../write/quarantine-writer.ts";
import { countLossTokens, type Sample } from "../write/sample.ts";
import { TurnStatsWriter } from "../write/turn-stats-writer.ts";
import type { InputFile, JobPlan } from "./plan.ts";
import { type Draft, RECORD_STAGES, type RecordStage, type StageContext } from "./stages.ts";

export interface Progress {
  file: string;
  fileIndex: number;
  fileCount: number;
  recordsIn: number;
  samplesOut: number;
  quarantined: number;
}

export interface RunResult {
  outputDir: string;
  manifestPath: string;
  manifest: Manifest;
  quarantinePath: string | undefined;
}

/** Runs the per-record stages; returns a sample, or the reason the record is quarantined. */
async function processRecord(
  trajectory: Trajectory,
  displayPath: string,
  plan: JobPlan,
  context: StageContext,
): Promise<Sample | QuarantineEntry> {
  const draft: Draft = { trajectory };
  let stage = "validate";
  try {
    for (stage of plan.pipeline.recordStages) await (RECORD_STAGES[stage] as RecordStage)(draft, context);
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    return { source: trajectory.source, id: trajectory.id, stage, ...(err.field ? { field: err.field } : {}), reason: err.message };
  }
  if (!draft.encoded || !draft.lossMask)
    throw new Error(`pipeline ${plan.pipeline.name} produced no tokens: it needs tokenize and mask stages`);
  // Paths relative to the config keep shards identical wherever the data is checked out.
  const { line } = trajectory.source;
  return {
    id: trajectory.id,
    domain: trajectory.domain,
    source: line !== undefined ? `${displayPath}:${line}` : displayPath,
    inputIds: draft.encoded.inputIds,
    lossMask: draft.lossMask,
    numLossTokens: countLossTokens(draft.lossMask),
    numTurns: trajectory.turns.length,
    ...(plan.config.output.include_messages && draft.messages ? { messages: draft.messages } : {}),
    ...(draft.decisions ? { decisions: draft.decisions } : {}),
  };
}

/**
 * A file that breaks mid-way (truncated archive, I/O error) keeps the records read so far; the
 * break itself becomes one quarantine entry naming the file and the last good position.
 */
async function* readSafely(file: InputFile, options: ReaderOptions): AsyncGenerator<ReadItem> {
  let last: SourceRef = { uri: file.path, format: file.reader.name };
  try {
    for await (const item of file.reader.read(file.path, options)) {
      last = item.kind === "trajectory" ? item.trajectory.source : item.entry.source;
      yield item;
    }
  } catch (err) {
    const after = last.line !== undefined ? ` after line ${last.line}` : "";
    yield {
      kind: "quarantine",
      entry: {
        source: { uri: file.path, format: file.reader.name },
        stage: "read",
        reason: `file unreadable${after}: ${(err as Error).message}`,
      },
    };
  }
}

function isSample(result: Sample | QuarantineEntry): result is Sample {
  return "inputIds" in result;
}

/**
 * Streams every input through the pipeline into shards. Memory holds one record per stage and
 * one row group per open bucket, whatever the input size. Every record read ends up as exactly
 * one sample or one quarantine entry; the run fails loudly if that ever does not add up.
 */
export async function runJob(plan: JobPlan, onProgress?: (progress: Progress) => void): Promise<RunResult> {
  const { config } = plan;
  const outputDir = config.output.dir;
  // Clear only what a previous run of ours wrote, never anything else in the folder.
  for (const owned of ["data", "stats", "quarantine", "manifest.json"]) await rm(join(outputDir, owned), { recursive: true, force: true });

  const writer = new ParquetShardWriter({
    dir: join(outputDir, "data"),
    numBuckets: config.output.num_buckets,
    maxShardBytes: config.output.max_shard_bytes,
    rowGroupRows: config.output.row_group_rows,
    includeMessages: config.output.include_messages,
    metadata: {
      pipeline: plan.pipeline.name,
      tokenizer: plan.tokenizer.identity.name,
      vocab_sha256: plan.tokenizer.identity.vocabSha256,
      template_sha256: plan.renderer.sha256,
      config_sha256: plan.configSha256,
    },
  });
  const quarantine = new QuarantineWriter(join(outputDir, "quarantine"));
  const turnStats = new TurnStatsWriter(outputDir);
  const context: StageContext = {
    normalizeSettings: config.normalize,
    counters: new Map(),
    tokenizer: plan.tokenizer,
    renderer: plan.renderer,
    systemPrompts: plan.systemPrompts,
    lossPolicy: plan.lossPolicy,
  };

  let recordsIn = 0;
  let samplesOut = 0;
  let tokens = 0;
  let lossTokens = 0;
  const domains: Record<string, DomainTotals> = {};

  await writer.open();
  try {
    for (const [fileIndex, file] of plan.files.entries()) {
      const report = () =>
        onProgress?.({
          file: file.displayPath,
          fileIndex,
          fileCount: plan.files.length,
          recordsIn,
          samplesOut,
          quarantined: quarantine.count,
        });
      const options = { maxLineBytes: config.input.max_line_bytes, ...(file.spec.domain ? { domain: file.spec.domain } : {}) };
      for await (const item of readSafely(file, options)) {
        recordsIn += 1;
        const result = item.kind === "quarantine" ? item.entry : await processRecord(item.trajectory, file.displayPath, plan, context);
        if (!isSample(result)) {
          // Quarantine is output too: no secret may reach it.
          const excerpt =
            result.excerpt !== undefined && config.normalize.redact_secrets ? redactSecrets(result.excerpt, new Map()) : result.excerpt;
          await quarantine.write(excerpt === undefined ? result : { ...result, excerpt });
        } else {
          await writer.add(result);
          if (result.decisions) await turnStats.add(result.id, result.domain, result.decisions);
          samplesOut += 1;
          const sampleLoss = result.numLossTokens;
          tokens += result.inputIds.length;
          lossTokens += sampleLoss;
          const totals = domains[result.domain] ?? { samples: 0, tokens: 0, loss_tokens: 0 };
          domains[result.domain] = totals;
          totals.samples += 1;
          totals.tokens += result.inputIds.length;
          totals.loss_tokens += sampleLoss;
        }
        if (recordsIn % 256 === 0) report();
      }
      report();
    }
  } catch (err) {
    await writer.abort();
    await turnStats.abort();
    await quarantine.close();
    throw err;
  }
  const shards = await writer.close();
  const statsFiles = await turnStats.close();
  await quarantine.close();

  const shardRows = shards.reduce((sum, shard) => sum + shard.rows, 0);
  if (recordsIn !== samplesOut + quarantine.count || shardRows !== samplesOut) {
    throw new Error(
      `accounting mismatch: ${recordsIn} records in, ${samplesOut} samples out, ${quarantine.count} quarantined, ${shardRows} rows in shards`,
    );
  }

  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    pipeline: { name: plan.pipeline.name, stages: ["read", ...plan.pipeline.recordStages, "write"] },
    config_sha256: plan.configSha256,
    tokenizer: {
      name: plan.tokenizer.identity.name,
      vocab_sha256: plan.tokenizer.identity.vocabSha256,
      vocab_size: plan.tokenizer.identity.vocabSize,
      source: plan.tokenizer.identity.source,
    },
    template: { source: plan.renderer.source, sha256: plan.renderer.sha256 },
    mask_policy: plan.lossPolicy.name,
    masking: {
      by_domain_class: turnStats.totals,
      stats_files: shardEntries(statsFiles).map(({ path, rows, bytes, sha256 }) => ({ path, rows, bytes, sha256 })),
    },
    inputs: plan.files.map((f) => ({ path: f.displayPath, format: f.reader.name, detected: f.detected, bytes: f.bytes })),
    counts: { records_in: recordsIn, samples_out: samplesOut, quarantined: quarantine.count, quarantined_by_stage: quarantine.byStage },
    tokens: { total: tokens, loss: lossTokens },
    domains: Object.fromEntries(Object.entries(domains).sort(([a], [b]) => a.localeCompare(b))),
    normalize: Object.fromEntries([...context.counters].sort(([a], [b]) => a.localeCompare(b))),
    shards: shardEntries(shards),
  };
  const manifestPath = await writeManifest(outputDir, manifest);
  return { outputDir, manifestPath, manifest, quarantinePath: quarantine.count > 0 ? quarantine.path : undefined };
}
