import type { ControlLabel } from "../controls/control-label.ts";
import { UserError } from "../core/errors.ts";
import type { Domain, Trajectory } from "../core/trajectory.ts";
import type { ChatMessage } from "../render/chat-template.ts";
import type { EncodedSequence } from "../tokenize/encode-segments.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import { type LossWeightSettings, labelsByTurn, turnWeight, type WeightedMessage } from "./loss-weights.ts";
import { type ClassRule, classifyTurn, keepDraw, type TurnClass } from "./turn-classes.ts";
import { type TurnStats, trajectoryTurnStats } from "./turn-stats.ts";

/** What the policy decided for one turn: the row of the stats table. */
export interface TurnDecision {
  turnIndex: number;
  stats: TurnStats;
  turnClass: TurnClass;
  /** The class's keep ratio for this domain. */
  keepRatio: number;
  draw: number;
  /** Whether the observation carries the loss. */
  kept: boolean;
  /** With `mask.weights.enabled`: the loss weight of the observation's tokens when kept. */
  weight?: number;
}

export interface PolicyResult {
  messages: ChatMessage[];
  /** Per-turn decisions, for policies that make them. */
  decisions?: TurnDecision[];
}

/** What a policy may use beyond the record: its edge cases, and the job-wide observation counts. */
export interface PolicyExtras {
  /** controls' edge cases (weights by label). */
  labels?: readonly ControlLabel[] | undefined;
  /** mask.corpus_novelty: the task's lookup of job-wide observation counts. */
  corpusNovelty?: { selfInformation(observation: string): number } | undefined;
}

/**
 * Decides which messages carry the loss. Observations a policy switches off stay in the
 * sequence as context with loss 0.
 */
export interface LossPolicy {
  name: string;
  /**
   * `encoded` (the rendered sequence) lets a policy count tokens without encoding again;
   * `extras` carry what the record's other stages and the corpus stages found.
   */
  apply(trajectory: Trajectory, messages: ChatMessage[], encoded?: EncodedSequence, extras?: PolicyExtras): PolicyResult;
}

export interface TurnStatsSettings {
  seed: number;
  classes: ClassRule[];
  keep: Partial<Record<TurnClass, number>>;
  domain_keep: Partial<Record<Domain, Partial<Record<TurnClass, number>>>>;
  /** Float loss weights of kept turns; off (or absent) = 0/1 masks. */
  weights?: LossWeightSettings;
  /** mask.corpus_novelty: every pass that masks must then hand the policy the job-wide counts. */
  corpus_novelty?: { enabled: boolean };
}

/** Every observation is trained; system prompt and actions are context. */
export const allObservationsPolicy: LossPolicy = {
  name: "all-observations",
  apply: (_trajectory, messages) => ({ messages: messages.map((message) => ({ ...message, loss: message.role === "assistant" })) }),
};

/**
 * Turn-level masking from information-theoretic statistics: each turn is classified from its
 * statistics and kept in the loss when a deterministic draw falls under its class's keep ratio.
 * Expects the CPT message layout: system, then (user = action, assistant = observation) pairs.
 */
export function turnStatsPolicy(settings: TurnStatsSettings, tokenizer: Tokenizer): LossPolicy {
  const tokens = (text: string) => (text === "" ? 0 : tokenizer.encodeOrdinary(tokenizer.normalize(text)).length);
  // A lookup table, not a Set: it is consulted once per token of every sequence.
  const specialIds = new Uint8Array(Math.max(-1, ...tokenizer.addedTokens.values()) + 1);
  for (const id of tokenizer.addedTokens.values()) specialIds[id] = 1;
  return {
    name: "turn-stats",
    apply(trajectory, messages, encoded, extras) {
      // A pass without the counts would mask differently from the records stage: refuse, not guess.
      if (settings.corpus_novelty?.enabled && !extras?.corpusNovelty)
        throw new UserError(
          "mask.corpus_novelty: this pass has no job-wide observation counts (only the records stage reads them; mixture shares' count stage, selection's facts stage and SFT prompts do not yet): turn one of them off",
        );
      const context = [trajectory.task ?? "", trajectory.initialObservation ?? ""].join("\n");
      // Token counts as the trainer sees them: the tokens each message's content occupies in the
      // rendered sequence (its end-of-turn token excluded) — no second encoding pass. Without
      // the sequence (a policy used on its own), each text is encoded alone.
      const perMessage = encoded ? contentTokensPerMessage(encoded, messages.length, specialIds) : undefined;
      const stats = trajectoryTurnStats(
        trajectory.turns.map((turn, k) => ({
          ...turn,
          // messages[1 + 2k] is turn k's action, messages[2 + 2k] its observation.
          actTokens: perMessage ? (perMessage[1 + 2 * k] ?? 0) : tokens(turn.action),
          obsTokens: perMessage ? (perMessage[2 + 2 * k] ?? 0) : tokens(turn.observation),
        })),
        context,
      );
      const corpus = extras?.corpusNovelty;
      if (corpus)
        for (const [k, turn] of trajectory.turns.entries())
          (stats[k] as TurnStats).corpusNovelty = corpus.selfInformation(turn.observation);
      const ratios = { ...settings.keep, ...settings.domain_keep[trajectory.domain] };
      const weights = settings.weights?.enabled ? settings.weights : undefined;
      const turnLabels = weights ? labelsByTurn(extras?.labels) : undefined;
      const decisions = stats.map((turnStats, turnIndex): TurnDecision => {
        const turnClass = classifyTurn(turnStats, settings.classes);
        const keepRatio = ratios[turnClass] ?? 1;
        const draw = keepDraw(settings.seed, trajectory.id, turnIndex);
        const decision: TurnDecision = { turnIndex, stats: turnStats, turnClass, keepRatio, draw, kept: draw < keepRatio };
        if (weights) {
          const turnLabelNames = turnLabels?.get(turnIndex) ?? [];
          decision.weight = turnWeight(weights, { stats: turnStats, turnClass, domain: trajectory.domain, labels: turnLabelNames });
        }
        return decision;
      });
      return { messages: withTurnLoss(messages, decisions), decisions };
    },
  };
}

/**
 * The messages with `loss` set on observations whose turn is kept. A loop in a module-level
 * function, not a callback made per call: V8 recompiled that callback after every major GC.
 */
function withTurnLoss(messages: readonly ChatMessage[], decisions: readonly TurnDecision[]): WeightedMessage[] {
  const result: WeightedMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as ChatMessage;
    // messages[2 + 2k] is turn k's observation.
    const observation = message.role === "assistant";
    const decision = observation ? decisions[(i - 2) / 2] : undefined;
    const loss = decision?.kept === true;
    // The weight rides on the message, so pieces cut to fit pack.seq_len keep it (src/pack/fit-to-length.ts).
    result.push(loss && decision?.weight !== undefined ? { ...message, loss, weight: decision.weight } : { ...message, loss });
  }
  return result;
}

/** Per message, the content tokens it owns in the sequence (special tokens, e.g. its end token, not counted). */
function contentTokensPerMessage(encoded: EncodedSequence, messageCount: number, specialIds: Uint8Array): Int32Array {
  const counts = new Int32Array(messageCount);
  const { owner, inputIds } = encoded;
  for (let i = 0; i < owner.length; i++) {
    const message = owner[i] as number;
    if (message >= 0 && specialIds[inputIds[i] as number] !== 1) counts[message] = (counts[message] as number) + 1;
  }
  return counts;
}

export const LOSS_POLICY_NAMES = ["all-observations", "turn-stats"] as const;
