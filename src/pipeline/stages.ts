import { RecordError } from "../core/errors.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { lossMask } from "../mask/loss-mask.ts";
import type { LossPolicy, TurnDecision } from "../mask/loss-policy.ts";
import { normalizeTrajectory } from "../normalize/normalize-trajectory.ts";
import type { Counters, NormalizeSettings } from "../normalize/normalizer.ts";
import type { ChatMessage, ChatTemplateRenderer, Segment } from "../render/chat-template.ts";
import type { SystemPrompts } from "../render/system-prompts.ts";
import { trajectoryMessages } from "../render/trajectory-messages.ts";
import { type EncodedSequence, encodeSegments } from "../tokenize/encode-segments.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
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
}

export interface StageContext {
  normalizeSettings: NormalizeSettings;
  /** What normalization found and did, summed over the run. */
  counters: Counters;
  tokenizer: Tokenizer;
  renderer: ChatTemplateRenderer;
  systemPrompts: SystemPrompts;
  lossPolicy: LossPolicy;
}

/** The context a planned job's stages run in, summing what normalization finds into `counters`. */
export function stageContext(plan: JobPlan, counters: Counters): StageContext {
  return {
    normalizeSettings: plan.config.normalize,
    counters,
    tokenizer: plan.tokenizer,
    renderer: plan.renderer,
    systemPrompts: plan.systemPrompts,
    lossPolicy: plan.lossPolicy,
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

const normalize: RecordStage = async (draft, { normalizeSettings, counters }) => {
  draft.trajectory = await normalizeTrajectory(draft.trajectory, normalizeSettings, counters);
};

const render: RecordStage = (draft, { renderer, systemPrompts }) => {
  draft.messages = trajectoryMessages(draft.trajectory, systemPrompts);
  draft.segments = renderer.renderSegments(draft.messages);
};

const tokenize: RecordStage = (draft, { tokenizer }) => {
  draft.encoded = encodeSegments(need(draft.segments, "rendered segments", "tokenize"), tokenizer);
};

const mask: RecordStage = (draft, { lossPolicy }) => {
  const encoded = need(draft.encoded, "token ids", "mask");
  const { messages, decisions } = lossPolicy.apply(draft.trajectory, need(draft.messages, "messages", "mask"), encoded);
  draft.messages = messages;
  if (decisions) draft.decisions = decisions;
  draft.lossMask = lossMask(encoded, messages);
};

/** Stages a pipeline YAML may list between `read` and `write`. */
export const RECORD_STAGES: Readonly<Record<string, RecordStage>> = { validate, normalize, render, tokenize, mask };

/**
 * The trajectory as the records stage sees it before rendering: the pipeline's validate and
 * normalize stages applied (what curation compares records by and names them with). Undefined
 * when they reject it: the records stage quarantines such a record.
 */
export async function preparedTrajectory(
  trajectory: Trajectory,
  recordStages: readonly string[],
  context: StageContext,
): Promise<Trajectory | undefined> {
  const draft: Draft = { trajectory };
  try {
    for (const stage of recordStages)
      if (stage === "validate" || stage === "normalize") await (RECORD_STAGES[stage] as RecordStage)(draft, context);
  } catch (err) {
    if (err instanceof RecordError) return undefined;
    throw err;
  }
  return draft.trajectory;
}
