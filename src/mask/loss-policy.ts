import type { Domain, Trajectory } from "../core/trajectory.ts";
import type { ChatMessage } from "../render/chat-template.ts";
import type { EncodedSequence } from "../tokenize/encode-segments.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
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
}

export interface PolicyResult {
  messages: ChatMessage[];
  /** Per-turn decisions, for policies that make them. */
  decisions?: TurnDecision[];
}

/**
 * Decides which messages carry the loss. Observations a policy switches off stay in the
 * sequence as context with loss 0.
 */
export interface LossPolicy {
  name: string;
  /** `encoded` (the rendered sequence) lets a policy count tokens without encoding again. */
  apply(trajectory: Trajectory, messages: ChatMessage[], encoded?: EncodedSequence): PolicyResult;
}

export interface TurnStatsSettings {
  seed: number;
  classes: ClassRule[];
  keep: Partial<Record<TurnClass, number>>;
  domain_keep: Partial<Record<Domain, Partial<Record<TurnClass, number>>>>;
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
    apply(trajectory, messages, encoded) {
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
      const ratios = { ...settings.keep, ...settings.domain_keep[trajectory.domain] };
      const decisions = stats.map((turnStats, turnIndex): TurnDecision => {
        const turnClass = classifyTurn(turnStats, settings.classes);
        const keepRatio = ratios[turnClass] ?? 1;
        const draw = keepDraw(settings.seed, trajectory.id, turnIndex);
        return { turnIndex, stats: turnStats, turnClass, keepRatio, draw, kept: draw < keepRatio };
      });
      return { messages: withTurnLoss(messages, decisions), decisions };
    },
  };
}

/**
 * The messages with `loss` set on observations whose turn is kept. A loop in a module-level
 * function, not a callback made per call: V8 recompiled that callback after every major GC.
 */
function withTurnLoss(messages: readonly ChatMessage[], decisions: readonly TurnDecision[]): ChatMessage[] {
  const result: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as ChatMessage;
    // messages[2 + 2k] is turn k's observation.
    const observation = message.role === "assistant";
    result.push({ ...message, loss: observation && decisions[(i - 2) / 2]?.kept === true });
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
