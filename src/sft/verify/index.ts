import type { Domain } from "../../core/trajectory.ts";
import { formatRule, type LengthBounds, type ParsedCandidate, parseCandidate } from "./candidate-format.ts";
import { fidelityFor } from "./fidelity.ts";
import { type LeakageOptions, leakageRule } from "./leakage.ts";
import { type VerifierResult, versus } from "./result.ts";
import { truncationRule } from "./truncation.ts";

/**
 * The rejection-sampling verifiers for SFT candidates: a teacher's `<think>…</think>
 * <predicted_observation>…</predicted_observation>` answer is kept only when every rule passes.
 * `truncated` first when the server said why it stopped (a candidate cut at the token limit),
 * then `format` (is there a prediction at all), `fidelity` (does it match what the environment
 * really returned) and `leakage` (did the thinking copy a hint).
 */

export type { LengthBounds, ParsedCandidate } from "./candidate-format.ts";
export { formatRule, parseCandidate } from "./candidate-format.ts";
export type { FidelityMeasure } from "./fidelity.ts";
export { fidelityFor } from "./fidelity.ts";
export { jsonStructure, TYPE_CREDIT, VALUE_CREDIT } from "./json-structure.ts";
export type { LeakageInput, LeakageOptions } from "./leakage.ts";
export { leakageRule } from "./leakage.ts";
export { lineSimilarity } from "./line-similarity.ts";
export type { FidelityScore, VerifierResult } from "./result.ts";
export { STRUCTURE_WEIGHT, searchFidelity } from "./search-overlap.ts";
export { PARTIAL_NODE_CREDIT, treeSimilarity } from "./tree-similarity.ts";
export { truncationRule } from "./truncation.ts";

export interface VerifyThresholds {
  /** Lowest passing score of the binary rules (fidelity's is per domain, below). */
  minScore: { format: number; leakage: number };
  /** Lowest passing fidelity score, per domain. */
  fidelity: Record<Domain, number>;
  lengths: LengthBounds;
  leakage: LeakageOptions;
}

export const DEFAULT_VERIFY_THRESHOLDS: VerifyThresholds = {
  minScore: { format: 1, leakage: 1 },
  fidelity: {
    // Output lines: one wrong line in ten still passes (2·9/20); two in eleven do not (2·9/22).
    terminal: 0.9,
    swe: 0.9,
    // JSON leaves: every value is meant. One wrong value of 37 passes (73/74); of 5 it does not (0.9).
    mcp: 0.95,
    // Half structure, half which results come back: a different result page lands far below.
    search: 0.8,
    // Tree nodes: one changed node of 15 passes (28/30); consecutive screens share many nodes, so the bar sits high.
    android: 0.9,
    web: 0.9,
    os: 0.9,
  },
  lengths: {
    // A real trace, not a token; long enough for a big diff's worth of reasoning.
    thinkMinChars: 20,
    thinkMaxChars: 32_768,
    // Observations can be empty (`sed -i`); the cap is the largest per-domain observation cap.
    predictionMinChars: 0,
    predictionMaxChars: 131_072,
  },
  leakage: { minRunLines: 3, minRunChars: 20, minWholeChars: 40 },
};

export interface VerifyInput {
  domain: Domain;
  /** The teacher's whole answer. */
  candidateText: string;
  /** The observation the environment really returned (as normalized). */
  groundTruth: string;
  /** Whether the teacher's prompt contained the ground truth or part of it. */
  hintsGiven: boolean;
  /**
   * Further texts the answer may quote tags and control strings from (the prompt's contents);
   * the ground truth always counts. See candidate-format.ts.
   */
  quotable?: readonly string[];
  /** The server's `finish_reason` for this candidate; absent or null: not reported (no `truncated` rule). */
  finishReason?: string | null;
}

/** Every rule's verdict on one candidate, in order: truncated (when a finish reason is known), format, fidelity, leakage. */
export function verifyCandidate(input: VerifyInput, thresholds: VerifyThresholds = DEFAULT_VERIFY_THRESHOLDS): VerifierResult[] {
  return verifyCandidateParsed(input, thresholds).results;
}

/** The verdicts together with the parsed reasoning and prediction they were made on. */
export function verifyCandidateParsed(
  input: VerifyInput,
  thresholds: VerifyThresholds = DEFAULT_VERIFY_THRESHOLDS,
): { parsed: ParsedCandidate; results: VerifierResult[] } {
  const parsed = parseCandidate(input.candidateText, [input.groundTruth, ...(input.quotable ?? [])]);
  const format = formatRule(parsed, thresholds.lengths, thresholds.minScore.format);
  const min = thresholds.fidelity[input.domain];
  let fidelity: VerifierResult;
  if (!format.passed || parsed.prediction === undefined) {
    // A prediction cut out of a malformed answer is not what the student would be trained on.
    fidelity = { rule: "fidelity", score: 0, passed: false, reason: `format failed: ${format.reason}`, skipped: true };
  } else {
    const { score, detail } = fidelityFor(input.domain)(parsed.prediction, input.groundTruth);
    fidelity = { rule: "fidelity", score, passed: score >= min, reason: `${input.domain}: ${detail} (${versus(score, min)})` };
  }
  const leakage = leakageRule(
    { think: parsed.think, groundTruth: input.groundTruth, hintsGiven: input.hintsGiven },
    thresholds.leakage,
    thresholds.minScore.leakage,
  );
  const truncated = input.finishReason == null ? [] : [truncationRule(input.finishReason)];
  return { parsed, results: [...truncated, format, fidelity, leakage] };
}

/** True when the candidate passed every rule. */
export function passedAll(results: VerifierResult[]): boolean {
  return results.every((r) => r.passed);
}
