import type { MixtureConfig } from "../config/schema.ts";
import { UserError } from "../core/errors.ts";

/** One source's records and tokens before weighting (one copy of each record). */
export interface SourceCount {
  records: number;
  tokens: number;
  loss_tokens: number;
}

/** The factor each source is kept with, and how it was arrived at. */
export interface ResolvedMixture {
  /** Sources with a factor other than 1, or named in the config; any other source keeps factor 1. */
  factors: Record<string, number>;
  /** Target shares of trained tokens, for the sources that have one. */
  targets: Record<string, number>;
  /** Trained tokens the shares are of (share mode only). */
  total_loss_tokens?: number;
}

export function usesShares(mixture: MixtureConfig): boolean {
  return Object.values(mixture.sources).some((weight) => "share" in weight);
}

export function factorOf(resolved: ResolvedMixture, source: string): number {
  return resolved.factors[source] ?? 1;
}

/** Factor mode: the config's factors as they are (no counting needed). */
export function fixedFactors(mixture: MixtureConfig): ResolvedMixture {
  const factors: Record<string, number> = {};
  for (const [source, weight] of Object.entries(mixture.sources)) if ("factor" in weight) factors[source] = weight.factor;
  return { factors, targets: {} };
}

const percent = (value: number): string => `${(value * 100).toFixed(2)}%`;

/**
 * Share mode: factors from the counted trained tokens of each source. Sources with a share get
 * factor share × total / their tokens; the others keep their configured factor (or 1). The total is
 * `total_tokens`, or auto: the counted total when every source has a share, else what the fixed
 * sources give divided by (1 − the shares). Throws a UserError saying what the data holds when a
 * target cannot be met within `max_factor`.
 */
export function resolveShares(mixture: MixtureConfig, counts: Readonly<Record<string, SourceCount>>): ResolvedMixture {
  const targets: Record<string, number> = {};
  const factors: Record<string, number> = {};
  for (const [source, weight] of Object.entries(mixture.sources)) {
    if ("share" in weight) targets[source] = weight.share;
    else factors[source] = weight.factor;
  }
  const found = Object.keys(counts).sort();
  const available = (source: string) => counts[source]?.loss_tokens ?? 0;
  const corpus = found.reduce((sum, source) => sum + available(source), 0);
  const shareSum = Object.values(targets).reduce((sum, share) => sum + share, 0);
  if (shareSum > 1 + 1e-9)
    throw new UserError(`mixture.sources: the shares sum to ${percent(shareSum)}, over 100% (${describeTargets(targets)})`);
  const unshared = found.filter((source) => targets[source] === undefined);
  let total: number;
  if (unshared.length === 0) {
    if (Math.abs(shareSum - 1) > 1e-6)
      throw new UserError(
        `mixture.sources: every source has a share, and they sum to ${percent(shareSum)}, not 100% (${describeTargets(targets)})`,
      );
    total = mixture.total_tokens === "auto" ? corpus : mixture.total_tokens;
  } else {
    if (mixture.total_tokens !== "auto")
      throw new UserError(
        `mixture.total_tokens: ${mixture.total_tokens} fixes the total, but source(s) ${unshared.join(", ")} have no share (their factors decide their tokens); give every source a share, or set total_tokens: auto`,
      );
    const fixed = unshared.reduce((sum, source) => sum + (factors[source] ?? 1) * available(source), 0);
    if (shareSum >= 1 - 1e-9)
      throw new UserError(
        `mixture.sources: the shares sum to 100%, leaving nothing for source(s) ${unshared.join(", ")} that have none; give them a share or a factor of 0`,
      );
    if (fixed === 0)
      throw new UserError(
        `mixture.sources: the sources without a share (${unshared.join(", ")}) give no trained tokens at their factors, so the shares have no total to be a share of; give every source a share, or set total_tokens`,
      );
    total = fixed / (1 - shareSum);
  }
  for (const [source, share] of Object.entries(targets).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const have = available(source);
    if (have === 0)
      throw new UserError(
        `mixture.sources.${source}.share: no trained tokens of source "${source}" were read (${counts[source] ? `${counts[source].records} record(s) with no loss tokens` : "no records"}); sources found: ${found.join(", ") || "none"}`,
      );
    const factor = (share * total) / have;
    if (factor > mixture.max_factor)
      throw new UserError(
        `mixture.sources.${source}.share: ${percent(share)} of ${Math.round(total)} trained tokens is ${Math.round(share * total)}, but source "${source}" has ${have} (${percent(have / corpus)} of the ${corpus} read): it would need factor ${factor.toFixed(2)}, over mixture.max_factor ${mixture.max_factor}. Lower the share, add data, or raise max_factor`,
      );
    factors[source] = factor;
  }
  return { factors, targets, total_loss_tokens: Math.round(total) };
}

function describeTargets(targets: Record<string, number>): string {
  return Object.entries(targets)
    .map(([source, share]) => `${source} ${percent(share)}`)
    .join(", ");
}
