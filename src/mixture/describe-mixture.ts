import { DEFAULT_TEXT_SOURCE } from "../core/text-document.ts";
import type { JobPlan } from "../pipeline/plan.ts";
import { readWeightsMarker } from "./mixture-factors.ts";
import type { MixtureSummary } from "./mixture-summary.ts";
import { type ResolvedMixture, usesShares } from "./resolve-factors.ts";

const percent = (value: number): string => `${(100 * value).toFixed(1)}%`;

/** Which source an input's records join: its `source`, `knowledge` for text files, else their domains. */
function inputSource(file: JobPlan["files"][number]): string {
  if (file.spec.source) return file.spec.source;
  if (file.reader.name.startsWith("text-")) return DEFAULT_TEXT_SOURCE;
  return file.spec.domain ?? "(each record's domain)";
}

/**
 * The planned mix for `validate` and `plan`: each source's weight, which inputs feed which source,
 * and in share mode the factors derived by an earlier run's weights stage, if the output has them.
 */
export async function plannedMixLines(plan: JobPlan): Promise<string[]> {
  const { mixture } = plan.config;
  const bySource = new Map<string, number>();
  for (const file of plan.files) bySource.set(inputSource(file), (bySource.get(inputSource(file)) ?? 0) + 1);
  const feeds = [...bySource].map(([source, files]) => `${source} ← ${files} file(s)`).join(", ");
  const weights = Object.entries(mixture.sources);
  if (weights.length === 0) return [`mixture      none: every source at factor 1 (sources: ${feeds})`];
  const lines = [
    `mixture      seed ${mixture.seed}; ${usesShares(mixture) ? `target shares of trained tokens (max_factor ${mixture.max_factor}, total ${mixture.total_tokens})` : "sampling factors"}; other sources factor 1`,
    ...weights.map(
      ([source, weight]) => `  ${source.padEnd(12)} ${"share" in weight ? `share ${percent(weight.share)}` : `factor ${weight.factor}`}`,
    ),
    `  inputs       ${feeds}`,
  ];
  if (!usesShares(mixture)) return lines;
  const marker = await readWeightsMarker(plan).catch(() => undefined);
  if (!marker)
    return [
      ...lines,
      `  factors      derived by the count stage (every record tokenized once, ${plan.tasks.length} unit(s)) and the weights stage, then printed`,
    ];
  return [...lines, ...derivedFactorLines(marker.data.resolved, marker.data.counts, "  derived      ")];
}

/** The factors the weights stage derived, with the trained tokens each source has. */
export function derivedFactorLines(
  resolved: ResolvedMixture,
  counts: Record<string, { loss_tokens: number }>,
  lead = "mixture      ",
): string[] {
  const total = resolved.total_loss_tokens;
  return [
    `${lead}factors for ${total ?? "?"} trained tokens:`,
    ...Object.entries(counts).map(([source, count]) => {
      const factor = resolved.factors[source] ?? 1;
      const target = resolved.targets[source];
      return `    ${source.padEnd(12)} ${String(count.loss_tokens).padStart(12)} trained tokens × ${factor.toFixed(3)}${target !== undefined ? ` → target ${percent(target)}` : ""}`;
    }),
  ];
}

/** The realised mix, for `run` and `stats`: per source, trained tokens before → after, share vs target. */
export function mixtureReportLines(summary: MixtureSummary, lead = "  "): string[] {
  const sources = Object.entries(summary.sources);
  if (sources.length === 0) return [];
  const width = Math.max(6, ...sources.map(([name]) => name.length));
  return [
    `${lead}${"source".padEnd(width)}  factor  trained tokens before → after   share before → after (target)`,
    ...sources.map(
      ([name, s]) =>
        `${lead}${name.padEnd(width)}  ${s.factor.toFixed(3).padStart(6)}  ${String(s.loss_tokens).padStart(12)} → ${String(s.loss_tokens_out).padEnd(12)}  ${percent(s.share_before).padStart(6)} → ${percent(s.share)}${s.target_share !== undefined ? ` (${percent(s.target_share)})` : ""}`,
    ),
    ...(summary.dropped_records > 0
      ? [`${lead}${summary.dropped_records} record(s) drawn out by factors below 1 (counted, not written)`]
      : []),
  ];
}
