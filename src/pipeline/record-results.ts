import type { Task } from "../../sharding/task-plan.ts";
import { counterfactualControls } from "../controls/apply-controls.ts";
import { type QuarantineEntry, RecordError } from "../core/errors.ts";
import { provenanceOf, redactedProvenance } from "../core/provenance.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { type FilteredEntry, filteredEntry } from "../curate/filtered-entry.ts";
import { escapeMessages, escaperFor } from "../export/special-literals.ts";
import { factsOfSamples } from "../filter/facts-of-samples.ts";
import { applyFilters } from "../filter/filters.ts";
import type { RecordFacts } from "../filter/record-facts.ts";
import { lossMask } from "../mask/loss-mask.ts";
import { lossWeights } from "../mask/loss-weights.ts";
import { sourceOf } from "../mixture/source-name.ts";
import { type FittedPiece, fitToLength } from "../pack/fit-to-length.ts";
import { readFilteredEntry, readFilterOf } from "../read/read-filter.ts";
import { countLossTokens, type Sample } from "../write/sample.ts";
import type { DuplicateIds } from "./duplicate-ids.ts";
import type { JobPlan } from "./plan.ts";
import { processDocument } from "./process-document.ts";
import { recordSource, shownSource } from "./record-labels.ts";
import { type Draft, RECORD_STAGES, type RecordStage, type StageContext } from "./stages.ts";
import type { TaskDecisions } from "./task-decisions.ts";
import { taskItems } from "./task-items.ts";

/** A record's documents, and the counterfactual's when controls give one (docs/controls.md "Controls"). */
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
  // mask.weights: the loss_weight column, from the weights the policy put on the messages.
  const weighted = plan.config.mask.weights.enabled;
  if (!pack.enabled) {
    return [
      {
        ...base,
        inputIds: draft.encoded.inputIds,
        lossMask: draft.lossMask,
        ...(weighted ? { lossWeight: lossWeights(draft.encoded, draft.messages) } : {}),
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
    { seqLen: pack.seq_len, overlong: pack.overlong, contextTurns: pack.context_turns, weights: weighted },
    { renderer: context.renderer, tokenizer: context.tokenizer },
  );
  return pieces.map((piece, part) => ({
    ...base,
    part,
    inputIds: piece.inputIds,
    lossMask: piece.lossMask,
    ...(piece.lossWeight ? { lossWeight: piece.lossWeight } : {}),
    numLossTokens: countLossTokens(piece.lossMask),
    numTurns: piece.numTurns,
    ...(piece.truncatedTokens > 0 ? { truncatedTokens: piece.truncatedTokens } : {}),
    ...(piece.untrainedPiecesDropped ? { untrainedPiecesDropped: piece.untrainedPiecesDropped } : {}),
    // The record's masking decisions go with its first piece, so they are counted once.
    ...(part === 0 && draft.decisions ? { decisions: draft.decisions } : {}),
  }));
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
      /** What filters and selection judge it by (with `wantFacts`, or when filters are configured). */
      facts?: RecordFacts;
    };

export interface RecordResultsOptions {
  /** input.duplicate_ids: quarantine. Sees the finished part's ids too, so a resumed task judges as one pass. */
  duplicates: DuplicateIds | undefined;
  /** What the stages before this one decided for the task's items: curation's removals, selection's drops, scores. */
  decisions: TaskDecisions;
  /** Attach each written record's facts (the selection's facts pass). */
  wantFacts?: boolean;
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
  const { duplicates, decisions, resumeAfter = 0 } = options;
  const { removals, drops, scores } = decisions;
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
    // Selection judged the record on its facts in an earlier pass: no need to process it again.
    const drop = drops.get(item - 1);
    if (drop) {
      const entry: FilteredEntry = {
        id: drop.id,
        domain: drop.domain,
        source: shownSource(plan, label),
        stage: "selection",
        rule: drop.rule,
        reason: drop.reason,
      };
      yield { result: { kind: "filtered", entry }, item, bytes };
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
    const source = sourceOf(read, file.spec) as string;
    const format = file.reader.name;
    const needFacts = options.wantFacts === true || plan.filters.length > 0;
    const facts = needFacts ? factsOfSamples(samples, { source, format }, scores.get(item - 1) ?? {}) : undefined;
    const filtered = facts && applyFilters(plan.filters, facts);
    if (filtered && facts) {
      const entry: FilteredEntry = {
        id: facts.id,
        domain: facts.domain,
        source: shownSource(plan, label),
        stage: "filter",
        rule: filtered.filter,
        reason: filtered.reason,
      };
      yield { result: { kind: "filtered", entry }, item, bytes };
      continue;
    }
    // With scorers, every document of the record (its pieces, its counterfactual) carries the record's scores.
    const recordScores = scores.get(item - 1) ?? {};
    const scored = (documents: Sample[]) =>
      plan.scorers.length > 0 ? documents.map((sample) => ({ ...sample, scores: recordScores })) : documents;
    yield {
      result: {
        kind: "samples",
        samples: scored(samples),
        ...(counterfactual ? { counterfactual: scored(counterfactual) } : {}),
        source,
        format,
        maskedTurns: maskTurns?.length ?? 0,
        ...(facts && options.wantFacts ? { facts } : {}),
      },
      item,
      bytes,
    };
  }
}

function isProcessed(result: RecordSamples | Sample[] | QuarantineEntry): result is RecordSamples | Sample[] {
  return Array.isArray(result) || "samples" in result;
}
