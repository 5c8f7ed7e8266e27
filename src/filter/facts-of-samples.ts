import { PROVENANCE_COLUMNS, type Provenance } from "../core/provenance.ts";
import type { Sample } from "../write/sample.ts";
import type { RecordFacts } from "./record-facts.ts";

const NO_PROVENANCE = Object.fromEntries(PROVENANCE_COLUMNS.map((column) => [column, null])) as unknown as Provenance;

/**
 * A processed record's facts, from the documents it is written as (one sample, or the pieces
 * packing cut it into): what filters and selection judge is what the shards would hold. Its
 * provenance is the redacted one the shards carry; turn classes come from the masking decisions.
 */
export function factsOfSamples(
  samples: readonly Sample[],
  origin: { source: string; format: string },
  scores: Readonly<Record<string, number | null>>,
): RecordFacts {
  const first = samples[0];
  if (!first) throw new Error("a processed record has at least one document");
  let tokens = 0;
  let lossTokens = 0;
  for (const sample of samples) {
    tokens += sample.inputIds.length;
    lossTokens += sample.numLossTokens;
  }
  const decisions = first.decisions ?? [];
  const classes: Record<string, number> = {};
  for (const decision of decisions) classes[decision.turnClass] = (classes[decision.turnClass] ?? 0) + 1 / decisions.length;
  return {
    ...(first.provenance ?? NO_PROVENANCE),
    id: first.id,
    domain: first.domain,
    source: origin.source,
    format: origin.format,
    // A packed record's pieces each count the turns they train (context turns not included).
    turns: first.part === undefined ? first.numTurns : samples.reduce((sum, sample) => sum + sample.numTurns, 0),
    tokens,
    loss_tokens: lossTokens,
    trained_share: tokens === 0 ? 0 : lossTokens / tokens,
    classes,
    // Each edge case once, sorted: a predicate asks which the record shows, not how often.
    labels: [...new Set((first.controls?.labels ?? []).map((label) => label.label))].sort(),
    scores,
  };
}
