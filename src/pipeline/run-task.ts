import { join, relative } from "node:path";
import { type Task, taskLabel } from "../../sharding/task-plan.ts";
import { counterfactualControls } from "../controls/apply-controls.ts";
import { type QuarantineEntry, RecordError } from "../core/errors.ts";
import { provenanceOf, redactedProvenance } from "../core/provenance.ts";
import type { SourceRef, Trajectory } from "../core/trajectory.ts";
import { FILTERED_DIR } from "../curate/curate-files.ts";
import { type FilteredEntry, filteredEntry } from "../curate/filtered-entry.ts";
import { type Removal, readRemovals } from "../curate/select-stage.ts";
import { escapeMessages, escaperFor, textRuleMetadata } from "../export/special-literals.ts";
import { fileSha256 } from "../io/file-sha256.ts";
import { lossMask } from "../mask/loss-mask.ts";
import { copyId, keptCopies } from "../mixture/draw.ts";
import { resolvedMixture } from "../mixture/mixture-factors.ts";
import { factorOf } from "../mixture/resolve-factors.ts";
import { sourceOf } from "../mixture/source-name.ts";
import { redactLabel, redactQuarantineEntry } from "../normalize/redact-output.ts";
import { pullTaskFiles, uploadTaskFiles } from "../output/remote-task-files.ts";
import { splitForTrajectory } from "../output/split-assignment.ts";
import {
  isCurrent,
  type OutputFile,
  readTaskState,
  TASK_STATE_FORMAT,
  type TaskState,
  writeTaskIds,
  writeTaskState,
} from "../output/task-state.ts";
import {
  countControls,
  countExtraDocuments,
  countFiltered,
  countProvenance,
  countQuarantine,
  countSample,
  countSource,
  emptyTotals,
} from "../output/task-totals.ts";
import { type FittedPiece, fitToLength } from "../pack/fit-to-length.ts";
import { readFilteredEntry, readFilterOf } from "../read/read-filter.ts";
import { itemSource, type ReaderOptions, type ReadItem } from "../read/reader.ts";
import { ParquetShardWriter, packOption, type ShardInfo } from "../write/parquet-shard-writer.ts";
import { QuarantineWriter } from "../write/quarantine-writer.ts";
import { countLossTokens, type Sample } from "../write/sample.ts";
import { TurnStatsWriter } from "../write/turn-stats-writer.ts";
import { DuplicateIds } from "./duplicate-ids.ts";
import { letEventsIn } from "./event-loop-turn.ts";
import { curationEnabled } from "./job-stages.ts";
import { type InputFile, type JobPlan, jobShas, labelPath } from "./plan.ts";
import { processDocument } from "./process-document.ts";
import { type Draft, RECORD_STAGES, type RecordStage, type StageContext, stageContext } from "./stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "./stop-signal.ts";

/** How far a task has got: records read and input bytes behind them (for rate and ETA). */
export interface TaskProgress {
  task: number;
  records: number;
  bytes: number;
}

/**
 * `file:line` or `file@offset` of a record. Paths relative to the config keep shards identical
 * wherever the data is checked out; inside a byte-range task line numbers are unknown, so the
 * byte offset locates the record.
 */
export function recordSource(displayPath: string, { line, offset, row }: SourceRef): string {
  const at = line !== undefined ? `:${line}` : row !== undefined ? `#row=${row}` : offset !== undefined ? `@${offset}` : "";
  return `${displayPath}${at}`;
}

/** A record's `recordSource` label as outputs show it: secrets redacted when the job redacts them. */
export function shownSource(plan: JobPlan, label: string): string {
  const { redact_secrets, pii } = plan.config.normalize;
  return redactLabel(label, { secrets: redact_secrets, pii });
}

/** A record's documents, and the counterfactual's when controls give one (README "Controls"). */
interface RecordSamples {
  samples: Sample[];
  counterfactual?: Sample[];
}

/** The stages that make a normalized trajectory into tokens: a counterfactual's (its turns are already normalized). */
const RENDERING_STAGES = new Set(["render", "tokenize", "mask"]);

/**
 * Runs the per-record stages; returns the record's documents — one sample, or with packing the
 * pieces it was cut into to fit `pack.seq_len` — or the reason the record is quarantined.
 */
async function processRecord(
  trajectory: Trajectory,
  /** The record's `recordSource` label. */
  label: string,
  plan: JobPlan,
  context: StageContext,
  /** decontaminate.action mask: turns whose observations lose their loss (they matched a benchmark). */
  maskTurns?: readonly number[],
): Promise<RecordSamples | QuarantineEntry> {
  const draft: Draft = { trajectory };
  let stage = "validate";
  const quarantined = (err: RecordError): QuarantineEntry => ({
    source: trajectory.source,
    id: trajectory.id,
    stage,
    ...(err.field ? { field: err.field } : {}),
    reason: err.message,
  });
  try {
    for (stage of plan.pipeline.recordStages) await (RECORD_STAGES[stage] as RecordStage)(draft, context);
    stage = "pack";
    const samples = draftSamples(draft, label, plan, context, maskTurns);
    if (!draft.counterfactual) return { samples };
    // The counterfactual: the normal turns before the first edge case, told to behave normally.
    // Its turns are the record's, and so are their masking decisions: the loss policy draws per
    // (trajectory id, turn), so it runs under the record's id (turn statistics only look back,
    // so turns 0..k-1 get the record's classes and draws); the sample keeps its `#normal` id.
    const counterfactual: Draft = {
      trajectory: { ...draft.counterfactual, id: draft.trajectory.id },
      controls: counterfactualControls(draft.counterfactual),
    };
    stage = "controls";
    for (const name of plan.pipeline.recordStages)
      if (RENDERING_STAGES.has(name)) await (RECORD_STAGES[name] as RecordStage)(counterfactual, context);
    counterfactual.trajectory = draft.counterfactual;
    // Their masking decisions are counted once, with the record.
    delete counterfactual.decisions;
    return { samples, counterfactual: draftSamples(counterfactual, label, plan, context, maskTurns) };
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    return quarantined(err);
  }
}

/** The samples of a draft that went through the stages: one, or with packing its pieces. Throws a RecordError for a record packing cannot fit. */
function draftSamples(
  draft: Draft,
  label: string,
  plan: JobPlan,
  context: StageContext,
  maskTurns: readonly number[] | undefined,
): Sample[] {
  if (!draft.encoded || !draft.lossMask || !draft.messages)
    throw new Error(`pipeline ${plan.pipeline.name} produced no tokens: it needs render, tokenize and mask stages`);
  if (maskTurns && maskTurns.length > 0) {
    // Turn i's observation is message 2 + 2i (after the system message and its action).
    const masked = new Set(maskTurns.map((turn) => 2 + 2 * turn));
    draft.messages = draft.messages.map((message, index) => (masked.has(index) ? { ...message, loss: false } : message));
    draft.lossMask = lossMask(draft.encoded, draft.messages);
  }
  // The normalized trajectory's id (redacted when it held a secret), and a redacted source label.
  const base = {
    id: draft.trajectory.id,
    domain: draft.trajectory.domain,
    source: shownSource(plan, label),
    // Redacted as source labels are: a task id or a failure message can hold a secret.
    provenance: redactedProvenance(provenanceOf(draft.trajectory.meta), (text) => shownSource(plan, text)),
    ...(draft.controls ? { controls: draft.controls } : {}),
  };
  const { pack, output } = plan.config;
  if (!pack.enabled) {
    return [
      {
        ...base,
        inputIds: draft.encoded.inputIds,
        lossMask: draft.lossMask,
        numLossTokens: countLossTokens(draft.lossMask),
        numTurns: draft.trajectory.turns.length,
        // The text form neutralizes special-token literals in contents (src/export/special-literals.ts).
        ...(output.include_messages
          ? { messages: escapeMessages(draft.messages, escaperFor(plan.tokenizer, plan.renderer.template)) }
          : {}),
        ...(draft.decisions ? { decisions: draft.decisions } : {}),
      },
    ];
  }
  const pieces: FittedPiece[] = fitToLength(
    { messages: draft.messages, encoded: draft.encoded, lossMask: draft.lossMask },
    { seqLen: pack.seq_len, overlong: pack.overlong, contextTurns: pack.context_turns },
    { renderer: context.renderer, tokenizer: context.tokenizer },
  );
  return pieces.map((piece, part) => ({
    ...base,
    part,
    inputIds: piece.inputIds,
    lossMask: piece.lossMask,
    numLossTokens: countLossTokens(piece.lossMask),
    numTurns: piece.numTurns,
    ...(piece.truncatedTokens > 0 ? { truncatedTokens: piece.truncatedTokens } : {}),
    // The record's masking decisions go with its first piece, so they are counted once.
    ...(part === 0 && draft.decisions ? { decisions: draft.decisions } : {}),
  }));
}

/**
 * A file that breaks mid-way (truncated archive, I/O error) keeps the records read so far; the
 * break itself becomes one quarantine entry naming the file and the last good position.
 */
async function* readSafely(file: InputFile, options: ReaderOptions): AsyncGenerator<ReadItem> {
  let last: SourceRef = { uri: file.path, format: file.reader.name };
  try {
    for await (const item of file.reader.read(file.path, options)) {
      last = itemSource(item);
      yield item;
    }
  } catch (err) {
    const after =
      last.line !== undefined
        ? ` after line ${last.line}`
        : last.row !== undefined
          ? ` after row ${last.row}`
          : last.offset !== undefined
            ? ` after byte ${last.offset}`
            : "";
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

/** Every read item of a task, in order, with the input bytes behind it so far. */
export async function* taskItems(plan: JobPlan, task: Task): AsyncGenerator<{ item: ReadItem; file: InputFile; bytes: number }> {
  let bytesBefore = 0;
  for (const piece of task.pieces) {
    const file = plan.files[piece.file] as InputFile;
    const start = piece.start ?? 0;
    const end = piece.end ?? file.bytes;
    const options: ReaderOptions = {
      maxLineBytes: plan.config.input.max_line_bytes,
      ...(file.spec.domain ? { domain: file.spec.domain } : {}),
      ...(piece.start !== undefined ? { range: { start, end } } : {}),
    };
    for await (const item of readSafely(file, options)) {
      await letEventsIn();
      const source = itemSource(item);
      const within = source.offset !== undefined ? Math.min(Math.max(source.offset - start, 0), end - start) : 0;
      yield { item, file, bytes: bytesBefore + within };
    }
    bytesBefore += end - start;
  }
}

/** What became of one read record (after a resumed task's finished part). */
export type RecordResult =
  | { kind: "filtered"; entry: FilteredEntry }
  | { kind: "quarantine"; entry: QuarantineEntry }
  | {
      kind: "samples";
      /** One sample, or the pieces packing cut the record into. */
      samples: Sample[];
      /** The counterfactual's documents, when the controls' draw gives one (written beside the record's, in its split). */
      counterfactual?: Sample[];
      /** The mixture source it belongs to. */
      source: string;
      /** The input format it was read from (the manifest's provenance counts go by it). */
      format: string;
      /** decontaminate.action mask: turns that lost their loss. */
      maskedTurns: number;
    };

export interface RecordResultsOptions {
  /** input.duplicate_ids: quarantine. Sees the finished part's ids too, so a resumed task judges as one pass. */
  duplicates: DuplicateIds | undefined;
  /** Curation's removals for the task, by item (0-based). */
  removals: ReadonlyMap<number, Removal>;
  /** Items already in finished segments: read (for their ids) but not processed again. */
  resumeAfter?: number;
}

/**
 * Every record of a task through the per-record stages, in input order: what the records stage
 * writes, and what the mixture's counting pass counts (the same records, the same tokens).
 * `item` is the record's 1-based position among the task's read items.
 */
export async function* recordResults(
  plan: JobPlan,
  task: Task,
  context: StageContext,
  options: RecordResultsOptions,
): AsyncGenerator<{ result: RecordResult; item: number; bytes: number }> {
  const { duplicates, removals, resumeAfter = 0 } = options;
  let item = 0;
  for await (const { item: read, file, bytes } of taskItems(plan, task)) {
    item += 1;
    if (read.kind === "quarantine") {
      if (item > resumeAfter) yield { result: { kind: "quarantine", entry: read.entry }, item, bytes };
      continue;
    }
    const record = read.kind === "trajectory" ? read.trajectory : read.document;
    const label = recordSource(file.displayPath, record.source);
    const duplicate = duplicates?.check(record, label);
    if (item <= resumeAfter) continue; // already in a finished segment
    if (duplicate) {
      yield { result: { kind: "quarantine", entry: duplicate }, item, bytes };
      continue;
    }
    const readFilter = readFilterOf(read);
    if (readFilter) {
      yield { result: { kind: "filtered", entry: readFilteredEntry(record, shownSource(plan, label), readFilter) }, item, bytes };
      continue;
    }
    const removal = removals.get(item - 1);
    if (removal?.action === "remove") {
      yield { result: { kind: "filtered", entry: await filteredEntry(read, label, removal, plan) }, item, bytes };
      continue;
    }
    const maskTurns = removal?.stage === "decontaminate" ? removal.turns : undefined;
    const result =
      read.kind === "trajectory"
        ? await processRecord(read.trajectory, label, plan, context, maskTurns)
        : await processDocument(read.document, shownSource(plan, label), plan, context);
    if (!isProcessed(result)) {
      yield { result: { kind: "quarantine", entry: result }, item, bytes };
      continue;
    }
    const { samples, counterfactual } = Array.isArray(result) ? { samples: result, counterfactual: undefined } : result;
    yield {
      result: {
        kind: "samples",
        samples,
        ...(counterfactual ? { counterfactual } : {}),
        source: sourceOf(read, file.spec) as string,
        format: file.reader.name,
        maskedTurns: maskTurns?.length ?? 0,
      },
      item,
      bytes,
    };
  }
}

function isProcessed(result: RecordSamples | Sample[] | QuarantineEntry): result is RecordSamples | Sample[] {
  return Array.isArray(result) || "samples" in result;
}

/**
 * A quarantine entry naming its file as the shards do when `input.root` is set: relative to the
 * root, so the same inputs in a folder or a bucket give the same bytes. Without a root it keeps
 * the file's full path, which finds it from anywhere.
 */
function locatedEntry(entry: QuarantineEntry, root: string | undefined): QuarantineEntry {
  return root === undefined ? entry : { ...entry, source: { ...entry.source, uri: labelPath(entry.source.uri, root) } };
}

export function outputFile(info: ShardInfo): OutputFile {
  return {
    path: info.path,
    ...(info.split ? { split: info.split } : {}),
    rows: info.rows,
    documents: info.documents,
    bytes: info.bytes,
    sha256: info.sha256,
    tokens: info.tokens,
    loss_tokens: info.lossTokens,
  };
}

/**
 * Runs one task into its own files (shards, stats table, quarantine), resuming from its last
 * checkpoint if a previous attempt died. Output depends only on the task's input and the config:
 * segments are cut where a bucket's shard fills, a point fixed by the data, so a resumed or
 * re-run task writes byte-identical files. Returns the task's completion marker.
 */
export async function runTask(
  plan: JobPlan,
  task: Task,
  onProgress?: (progress: TaskProgress) => void,
  stop?: StopSignal,
): Promise<TaskState> {
  const { config } = plan;
  const outputDir = config.output.dir;
  const checkpoint = await readTaskState(outputDir, task.index, "checkpoint");
  const state: TaskState =
    checkpoint && isCurrent(checkpoint, jobShas(plan))
      ? checkpoint
      : {
          format: TASK_STATE_FORMAT,
          task: task.index,
          config_sha256: plan.configSha256,
          plan_sha256: plan.taskPlanSha256,
          segment: 0,
          items: 0,
          totals: emptyTotals(),
          shards: [],
          stats_files: [],
          quarantine: null,
          filtered: null,
        };

  // A task resumed on another machine (or in a fresh staging folder) appends to its files from the bucket.
  if (plan.remote && state === checkpoint) await pullTaskFiles(plan.remote, state);

  const writer = new ParquetShardWriter({
    dir: join(outputDir, "data"),
    numBuckets: config.output.num_buckets,
    maxShardBytes: config.output.max_shard_bytes,
    rowGroupRows: config.output.row_group_rows,
    includeMessages: config.output.include_messages,
    includeControls: config.controls.enabled,
    includeProvenance: true,
    ...packOption(config.pack),
    task: task.index,
    segment: state.segment,
    metadata: {
      pipeline: plan.pipeline.name,
      tokenizer: plan.tokenizer.identity.name,
      vocab_sha256: plan.tokenizer.identity.vocabSha256,
      template_sha256: plan.renderer.sha256,
      config_sha256: plan.configSha256,
      ...(config.output.include_messages && !config.pack.enabled
        ? textRuleMetadata(escaperFor(plan.tokenizer, plan.renderer.template))
        : {}),
    },
  });
  const turnStats = new TurnStatsWriter(outputDir, task.index, state.segment);
  const quarantine = new QuarantineWriter(join(outputDir, "quarantine"), taskLabel(task.index), state.quarantine?.bytes ?? 0);
  // Records curation removed: the same kind of file as quarantine, resumed the same way.
  const filtered = new QuarantineWriter(join(outputDir, FILTERED_DIR), taskLabel(task.index), state.filtered?.bytes ?? 0);
  const removals: Map<number, Removal> = curationEnabled(config) ? await readRemovals(outputDir, task.index) : new Map();
  await writer.open();
  await turnStats.open();
  await quarantine.open();
  await filtered.open();

  // Counters start from the checkpoint's, so a resumed task sums to what one pass would.
  const counters = new Map(Object.entries(state.totals.normalize));
  const context = stageContext(plan, counters);
  const totals = state.totals;

  /** Files of finished segments not yet uploaded (an `s3://` output). */
  const unuploaded: string[] = [];
  /** Ends the segment and records a checkpoint: everything up to `items` is in finished files. */
  const cutSegment = async (items: number): Promise<void> => {
    const shards = await writer.cut();
    const statsFile = await turnStats.cut();
    unuploaded.push(...shards.map((shard) => shard.path), ...(statsFile ? [statsFile.path] : []));
    await quarantine.flush();
    await filtered.flush();
    state.segment += 1;
    state.items = items;
    state.shards.push(...shards.map(outputFile));
    if (statsFile) state.stats_files.push(outputFile(statsFile));
    totals.normalize = Object.fromEntries(counters);
    state.quarantine =
      totals.quarantined > 0 ? { path: relative(outputDir, quarantine.path), bytes: quarantine.bytes, entries: totals.quarantined } : null;
    state.filtered =
      totals.filtered > 0 ? { path: relative(outputDir, filtered.path), bytes: filtered.bytes, entries: totals.filtered } : null;
  };

  const duplicates = config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;
  const mixture = await resolvedMixture(outputDir, config.mixture, jobShas(plan));
  const { seed } = config.mixture;
  let items = state.items;
  try {
    for await (const { result, item, bytes } of recordResults(plan, task, context, { duplicates, removals, resumeAfter: state.items })) {
      items = item;
      totals.records_in += 1;
      if (result.kind === "filtered") {
        await filtered.write(result.entry);
        countFiltered(totals, result.entry.stage, result.entry.domain);
        if (items % 64 === 0) onProgress?.({ task: task.index, records: items, bytes });
        if (stopRequested(stop)) throw new TaskStopped(task.index);
        continue;
      }
      if (result.kind === "samples" && result.maskedTurns > 0) {
        totals.masked_records += 1;
        totals.masked_turns += result.maskedTurns;
      }
      let full = false;
      if (result.kind === "quarantine") {
        // Quarantine is output too: no secret may reach it.
        const entry = locatedEntry(result.entry, config.input.root);
        await quarantine.write(redactQuarantineEntry(entry, { secrets: config.normalize.redact_secrets, pii: config.normalize.pii }));
        countQuarantine(totals, result.entry.stage);
      } else {
        const { samples, source } = result;
        const id = samples[0]?.id ?? "";
        // By the id written to the shards (the normalized one), as SFT does for its prompts.
        const split = splitForTrajectory(id, config.output.validation_fraction, config.output.split_seed);
        const factor = factorOf(mixture, source);
        const copies = factor === 1 ? [0] : keptCopies(seed, id, factor);
        countSource(totals, source, samples, copies.length);
        countProvenance(totals, result.format, samples[0]?.provenance);
        if (copies.length === 0) totals.dropped_by_mixture += 1;
        for (const copy of copies) {
          // Later copies are rows of their own: their own id, so their own bucket and shard (the
          // split is the record's); its masking decisions are counted once, with copy 0.
          const documents: Sample[] =
            copy === 0 ? samples : samples.map(({ decisions: _decisions, ...sample }) => ({ ...sample, id: copyId(id, copy) }));
          for (const sample of documents) {
            if (await writer.add({ ...sample, mixtureSource: source }, split)) full = true;
            if (sample.decisions) await turnStats.add(sample.id, sample.domain, sample.decisions, sample.controls?.labels);
          }
          countSample(totals, documents, split, copy);
        }
        // A record's controls count once, when it is written at all.
        const controls = samples[0]?.controls;
        if (controls && copies.length > 0) countControls(totals, samples[0]?.domain ?? "", controls);
        // The counterfactual goes with the record's first copy, in its split; its tokens count as output of the record's source.
        if (result.counterfactual && copies.includes(0)) {
          for (const sample of result.counterfactual) if (await writer.add({ ...sample, mixtureSource: source }, split)) full = true;
          countSample(totals, result.counterfactual, split, 1);
          countExtraDocuments(totals, source, result.counterfactual);
          countControls(totals, result.counterfactual[0]?.domain ?? "", { kind: "counterfactual", labels: [] });
        }
      }
      if (full) {
        await cutSegment(items);
        await writeTaskState(outputDir, state, "checkpoint");
        if (plan.remote) await uploadTaskFiles(plan.remote, state, unuploaded.splice(0), "checkpoint");
      }
      if (items % 64 === 0) onProgress?.({ task: task.index, records: items, bytes });
      // Stop between records: the unfinished segment is dropped (its temporary files removed
      // below) and the last checkpoint stands, so a rerun redoes that segment and the output is
      // the same bytes as a run never stopped. Cutting early instead would move a data-determined cut.
      if (stopRequested(stop)) throw new TaskStopped(task.index);
    }
    await cutSegment(items);
    await quarantine.close();
    await filtered.close();
  } catch (err) {
    await writer.abort();
    await turnStats.abort();
    await quarantine.close();
    await filtered.close();
    throw err;
  }
  onProgress?.({ task: task.index, records: items, bytes: task.bytes });

  const shardDocuments = state.shards.reduce((sum, shard) => sum + (shard.documents ?? shard.rows), 0);
  if (
    totals.records_in !== items ||
    items !== totals.samples_out + totals.quarantined + totals.filtered + totals.dropped_by_mixture ||
    shardDocuments !== totals.documents
  ) {
    throw new Error(
      `${taskLabel(task.index)}: accounting mismatch: ${items} records read, ${totals.samples_out} samples out, ${totals.quarantined} quarantined, ${totals.filtered} filtered, ${totals.dropped_by_mixture} not drawn by the mixture, ${totals.documents} documents made, ${shardDocuments} documents in shards`,
    );
  }
  if (state.quarantine) {
    // Streamed: a badly broken input can make a large quarantine file.
    state.quarantine.sha256 = await fileSha256(quarantine.path);
  }
  if (state.filtered) state.filtered.sha256 = await fileSha256(filtered.path);
  if (duplicates) await writeTaskIds(outputDir, task.index, duplicates.hashes());
  await writeTaskState(outputDir, state, "done");
  if (plan.remote) await uploadTaskFiles(plan.remote, state, unuploaded.splice(0), "done", duplicates !== undefined);
  return state;
}
