import { createHash } from "node:crypto";
import type { TurnStats } from "./turn-stats.ts";

export const TURN_CLASSES = ["Retrieval", "Expansion", "Action", "Transform", "Boilerplate", "Echo", "Other"] as const;
export type TurnClass = (typeof TURN_CLASSES)[number];

/** Statistics a class rule can test, by their config names. */
export const RULE_STATS = [
  "overlap",
  "novelty",
  "jaccard",
  "length_ratio",
  "history_novelty",
  "obs_tokens",
  "act_tokens",
  "corpus_novelty",
] as const;
export type RuleStat = (typeof RULE_STATS)[number];

export interface ClassRule {
  name: TurnClass;
  /** Every listed statistic must lie within [min, max] (inclusive; a missing bound is open). */
  when: Partial<Record<RuleStat, { min?: number | undefined; max?: number | undefined }>>;
}

/** A statistic's value by its config name. */
export function statValue(stats: TurnStats, stat: RuleStat): number {
  switch (stat) {
    case "overlap":
      return stats.overlap;
    case "novelty":
      return stats.novelty;
    case "jaccard":
      return stats.jaccard;
    case "length_ratio":
      return stats.lengthRatio;
    case "history_novelty":
      return stats.historyNovelty;
    case "obs_tokens":
      return stats.obsTokens;
    case "act_tokens":
      return stats.actTokens;
    case "corpus_novelty":
      // 0 without mask.corpus_novelty (the config refuses rules on it then).
      return stats.corpusNovelty ?? 0;
  }
}

/** The first rule whose conditions all hold names the class; no rule matching means Other. */
export function classifyTurn(stats: TurnStats, rules: readonly ClassRule[]): TurnClass {
  for (const rule of rules) {
    const matches = Object.entries(rule.when).every(([stat, bounds]) => {
      const value = statValue(stats, stat as RuleStat);
      return (bounds?.min === undefined || value >= bounds.min) && (bounds?.max === undefined || value <= bounds.max);
    });
    if (matches) return rule.name;
  }
  return "Other";
}

/**
 * A uniform draw in [0, 1) from (seed, trajectory id, turn index): the same inputs give the
 * same draw on any machine and in any worker, so reruns mask the same turns.
 */
export function keepDraw(seed: number, trajectoryId: string, turnIndex: number): number {
  const digest = createHash("sha256").update(`${seed}\u0000${trajectoryId}\u0000${turnIndex}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}
