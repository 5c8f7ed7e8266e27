import type { ControlsConfig } from "../config/schema.ts";
import { applyControls, type SampleControls } from "../controls/apply-controls.ts";
import { withRephrasing } from "../controls/rephrase/apply-rephrasing.ts";
import type { RephraseLookup } from "../controls/rephrase/rephrase-files.ts";
import { RecordError } from "../core/errors.ts";
import { documentTurns, TEXT_DOMAIN } from "../core/text-document.ts";
import type { Trajectory, Turn } from "../core/trajectory.ts";
import { lossMask } from "../mask/loss-mask.ts";
import type { LossPolicy, PolicyExtras, TurnDecision } from "../mask/loss-policy.ts";
import { normalizeDocument } from "../normalize/normalize-document.ts";
import { normalizeTrajectory } from "../normalize/normalize-trajectory.ts";
import type { Counters, NormalizeSettings } from "../normalize/normalizer.ts";
import type { ReadItem } from "../read/reader.ts";
import type { ChatMessage, ChatTemplateRenderer, Segment } from "../render/chat-template.ts";
import type { SystemPrompts } from "../render/system-prompts.ts";
import { trajectoryMessages } from "../render/trajectory-messages.ts";
import { type EncodedSequence, encodeSegments } from "../tokenize/encode-segments.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import type { RecordStageName } from "./pipeline-graph.ts";
import type { JobPlan } from "./plan.ts";

/** A record on its way through the per-record stages; each stage fills in its part. */
export interface Draft {
  trajectory: Trajectory;
  messages?: ChatMessage[];
  segments?: Segment[];
  encoded?: EncodedSequence;
  lossMask?: Uint8Array;
  /** Per-turn masking decisions, when the loss policy makes them. */
  decisions?: TurnDecision[];
  /** With `controls.enabled`: the trajectory's edge cases and the instruction its system message states. */
  controls?: SampleControls;
  /** The counterfactual sample's trajectory, when the controls' draw gives one (docs/controls.md "Controls"). */
  counterfactual?: Trajectory;
}

export interface StageContext {
  normalizeSettings: NormalizeSettings;
  /** What normalization found and did, summed over the run. */
  counters: Counters;
  /** Only the normalized text is read, not `turn.meta` or the counters (curation's signatures). */
  textOnly?: boolean;
  tokenizer: Tokenizer;
  renderer: ChatTemplateRenderer;
  systemPrompts: SystemPrompts;
  lossPolicy: LossPolicy;
  /** The controls settings when `controls.enabled`. */
  controls?: ControlsConfig;
  /** controls.rephrase: the task's teacher rewordings (set by the records stage). */
  rephrasings?: RephraseLookup;
  /** mask.corpus_novelty: the task's job-wide observation counts (set by the records stage). */
  corpusNovelty?: PolicyExtras["corpusNovelty"];
}

/**
 * The context a planned job's stages run in, summing what normalization finds into `counters`.
 * The tokenizer, template and loss policy are the plan's, taken on first use: a stage that only
 * normalizes (curation's signatures) never builds them.
 */
export function stageContext(plan: JobPlan, counters: Counters, { textOnly }: Pick<StageContext, "textOnly"> = {}): StageContext {
  return {
    normalizeSettings: plan.config.normalize,
    counters,
    ...(textOnly ? { textOnly } : {}),
    get tokenizer() {
      return plan.tokenizer;
    },
    get renderer() {
      return plan.renderer;
    },
    systemPrompts: plan.systemPrompts,
    get lossPolicy() {
      return plan.lossPolicy;
    },
    ...(plan.config.controls.enabled ? { controls: plan.config.controls } : {}),
  };
}

/** A per-record stage; a RecordError sends the record to quarantine with its reason. */
export type RecordStage = (draft: Draft, context: StageContext) => void | Promise<void>;

function need<T>(value: T | undefined, what: string, stage: string): T {
  if (value === undefined) throw new Error(`pipeline misconfigured: stage "${stage}" needs ${what}; check the stage order`);
  return value;
}

/** Checks what no reader can be trusted to have checked. (Unicode is checked by normalize.) */
const validate: RecordStage = ({ trajectory }) => {
  if (trajectory.id.trim() === "") throw new RecordError("id is empty", "id");
  if (trajectory.turns.length === 0) throw new RecordError("a trajectory needs at least one turn", "turns");
};

const normalize: RecordStage = async (draft, { normalizeSettings, counters, textOnly }) => {
  draft.trajectory = await normalizeTrajectory(draft.trajectory, normalizeSettings, counters, { textOnly });
};

const render: RecordStage = (draft, context) => {
  const { renderer, systemPrompts, controls } = context;
  // Edge cases are read from the normalized turns; a counterfactual draft comes with its controls set.
  if (controls && draft.controls === undefined) {
    const applied = applyControls(draft.trajectory, controls);
    draft.controls = applied.controls;
    if (applied.counterfactual) draft.counterfactual = applied.counterfactual;
  }
  if (draft.controls && context.rephrasings) draft.controls = withRephrasing(draft.controls, draft.trajectory.id, context.rephrasings);
  draft.messages = trajectoryMessages(draft.trajectory, systemPrompts, draft.controls?.instruction);
  draft.segments = renderer.renderSegments(draft.messages);
};

const tokenize: RecordStage = (draft, { tokenizer }) => {
  draft.encoded = encodeSegments(need(draft.segments, "rendered segments", "tokenize"), tokenizer);
};

const mask: RecordStage = (draft, { lossPolicy, corpusNovelty }) => {
  const encoded = need(draft.encoded, "token ids", "mask");
  const { messages, decisions } = lossPolicy.apply(draft.trajectory, need(draft.messages, "messages", "mask"), encoded, {
    labels: draft.controls?.labels,
    corpusNovelty,
  });
  draft.messages = messages;
  if (decisions) draft.decisions = decisions;
  draft.lossMask = lossMask(encoded, messages);
};

/** Stages a pipeline YAML may list between `read` and `write` (by name: RECORD_STAGE_NAMES, which planning checks against). */
export const RECORD_STAGES: Readonly<Record<string, RecordStage>> = { validate, normalize, render, tokenize, mask } satisfies Record<
  RecordStageName,
  RecordStage
>;

/** A read record: a trajectory or a text document (not a quarantine entry). */
export type InputRecord = Exclude<ReadItem, { kind: "quarantine" }>;

/** What curation compares a record by and names it with: its normalized id, domain and turns. */
export interface PreparedRecord {
  id: string;
  domain: string;
  turns: Turn[];
}

/**
 * The record as the records stage sees it before rendering: for a trajectory, the pipeline's
 * validate and normalize stages applied; for a text document, its normalization, the text as one
 * turn. Undefined when they reject it: the records stage quarantines such a record.
 */
export async function preparedRecord(
  record: InputRecord,
  recordStages: readonly string[],
  context: StageContext,
): Promise<PreparedRecord | undefined> {
  try {
    if (record.kind === "document") {
      const document = await normalizeDocument(record.document, context.normalizeSettings, context.counters);
      return { id: document.id, domain: TEXT_DOMAIN, turns: documentTurns(document) };
    }
    return await normalizedTrajectory(record.trajectory, recordStages, context);
  } catch (err) {
    if (err instanceof RecordError) return undefined;
    throw err;
  }
}

/**
 * A trajectory through the pipeline's validate and normalize stages, as the records stage
 * applies them before rendering (what curation compares and a judge reads). Throws the
 * RecordError that quarantines the record.
 */
export async function normalizedTrajectory(
  trajectory: Trajectory,
  recordStages: readonly string[],
  context: StageContext,
): Promise<Trajectory> {
  const draft: Draft = { trajectory };
  for (const stage of recordStages)
    if (stage === "validate" || stage === "normalize") await (RECORD_STAGES[stage] as RecordStage)(draft, context);
  return draft.trajectory;
}
