import type { MixtureConfig } from "../config/schema.ts";
import { type SourceTotals, sortedKeys, type TaskTotals } from "../output/task-totals.ts";
import { factorOf, type ResolvedMixture } from "./resolve-factors.ts";

/** One source in the manifest: its factor, its tokens before and after weighting, its share. */
export interface SourceSummary extends SourceTotals {
  factor: number;
  /** The target share of trained tokens, when the config set one. */
  target_share?: number;
  /** Share of the output's trained tokens before weighting (factor 1 for all) and as written. */
  share_before: number;
  share: number;
  /** The same counts per domain (a source may hold several: inputs[].source over mixed files). */
  domains: Record<string, SourceTotals>;
}

/** The manifest's `mixture` block (docs/mixtures.md "Mixtures"). */
export interface MixtureSummary {
  settings: MixtureConfig;
  /** Trained tokens the target shares were of (share mode). */
  total_loss_tokens?: number;
  /** Records the draw kept no copy of. */
  dropped_records: number;
  sources: Record<string, SourceSummary>;
}

const rounded = (value: number): number => Math.round(value * 1e6) / 1e6;

export function mixtureSummary(settings: MixtureConfig, resolved: ResolvedMixture, totals: TaskTotals): MixtureSummary {
  const sum = (source: Record<string, SourceTotals>): SourceTotals => {
    const into: SourceTotals = {
      records: 0,
      tokens: 0,
      loss_tokens: 0,
      records_out: 0,
      documents_out: 0,
      tokens_out: 0,
      loss_tokens_out: 0,
    };
    for (const counts of Object.values(source)) for (const key of Object.keys(into) as (keyof SourceTotals)[]) into[key] += counts[key];
    return into;
  };
  const bySource = Object.entries(sortedKeys(totals.sources)).map(([name, domains]) => [name, domains, sum(domains)] as const);
  const before = bySource.reduce((total, [, , counts]) => total + counts.loss_tokens, 0);
  const after = bySource.reduce((total, [, , counts]) => total + counts.loss_tokens_out, 0);
  const sources: Record<string, SourceSummary> = {};
  for (const [name, domains, counts] of bySource) {
    const target = resolved.targets[name];
    sources[name] = {
      factor: rounded(factorOf(resolved, name)),
      ...(target !== undefined ? { target_share: target } : {}),
      ...counts,
      share_before: before === 0 ? 0 : rounded(counts.loss_tokens / before),
      share: after === 0 ? 0 : rounded(counts.loss_tokens_out / after),
      domains,
    };
  }
  return {
    settings,
    ...(resolved.total_loss_tokens !== undefined ? { total_loss_tokens: resolved.total_loss_tokens } : {}),
    dropped_records: totals.dropped_by_mixture,
    sources,
  };
}
