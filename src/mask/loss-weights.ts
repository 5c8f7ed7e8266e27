import type { ControlLabel } from "../controls/control-label.ts";
import type { ChatMessage } from "../render/chat-template.ts";
import type { EncodedSequence } from "../tokenize/encode-segments.ts";
import type { RuleStat, TurnClass } from "./turn-classes.ts";
import { statValue } from "./turn-classes.ts";
import type { TurnStats } from "./turn-stats.ts";

/**
 * A linear ramp over one turn statistic: `low` at or below `from`, `high` at or above `to`,
 * linear between. Bounded by construction, whatever the statistic's range.
 */
export interface StatRamp {
  stat: RuleStat;
  from: number;
  to: number;
  low: number;
  high: number;
}

/** `mask.weights`: how much each trained observation counts in the loss (1 = as a 0/1 mask). */
export interface LossWeightSettings {
  enabled: boolean;
  by_class: Partial<Record<TurnClass, number>>;
  by_domain: Partial<Record<string, number>>;
  /** A turn whose observation holds one of these edge cases (docs/controls.md "Controls"); several multiply. */
  by_label: Partial<Record<string, number>>;
  by_stat: StatRamp[];
  /** The product is clamped into [min, max]. */
  min: number;
  max: number;
}

/** A message the policy gave a loss weight (only observations that carry the loss have one). */
export type WeightedMessage = ChatMessage & { weight?: number };

export function rampFactor(ramp: StatRamp, value: number): number {
  if (ramp.to <= ramp.from) return value >= ramp.to ? ramp.high : ramp.low;
  const t = Math.min(1, Math.max(0, (value - ramp.from) / (ramp.to - ramp.from)));
  return ramp.low + (ramp.high - ramp.low) * t;
}

/**
 * One turn's weight: the product of its class's, its domain's, its labels' and every ramp's
 * factor, clamped into [min, max], then rounded to float32 (what the column stores), so the
 * value a test or trainer reads back is the value decided here.
 */
export function turnWeight(
  settings: LossWeightSettings,
  turn: { stats?: TurnStats; turnClass?: TurnClass; domain: string; labels: readonly string[] },
): number {
  let weight = settings.by_domain[turn.domain] ?? 1;
  if (turn.turnClass !== undefined) weight *= settings.by_class[turn.turnClass] ?? 1;
  for (const label of turn.labels) weight *= settings.by_label[label] ?? 1;
  if (turn.stats) for (const ramp of settings.by_stat) weight *= rampFactor(ramp, statValue(turn.stats, ramp.stat));
  return Math.fround(Math.min(settings.max, Math.max(settings.min, weight)));
}

/** Control labels per turn index: the edge cases found in each turn's observation. */
export function labelsByTurn(labels: readonly ControlLabel[] | undefined): Map<number, string[]> {
  const byTurn = new Map<number, string[]>();
  for (const { label, turn } of labels ?? []) {
    const list = byTurn.get(turn) ?? [];
    // A label counts once per turn, however many spans show it.
    if (!list.includes(label)) list.push(label);
    byTurn.set(turn, list);
  }
  return byTurn;
}

/**
 * One float per token, aligned with input_ids: the owning message's weight where it carries
 * the loss (1 when it has none: a text document, an SFT answer), 0 elsewhere. So
 * `loss_weight > 0` exactly where `loss_mask == 1` (weights are at least `min` > 0).
 */
export function lossWeights(encoded: Pick<EncodedSequence, "owner">, messages: readonly WeightedMessage[]): Float32Array {
  const weights = new Float32Array(encoded.owner.length);
  for (let i = 0; i < weights.length; i++) {
    const owner = encoded.owner[i] as number;
    const message = owner >= 0 ? messages[owner] : undefined;
    weights[i] = message?.loss ? (message.weight ?? 1) : 0;
  }
  return weights;
}

/** A 0/1 mask as weights: what a sample without a weighting policy trains with. */
export function maskAsWeights(mask: Uint8Array): Float32Array {
  return Float32Array.from(mask);
}
