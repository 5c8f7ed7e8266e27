import type { Domain } from "../core/trajectory.ts";
import type { JudgeResult } from "./teacher/judge.ts";
import { type VerifierResult, type VerifyThresholds, verifyCandidateParsed } from "./verify/index.ts";

/** A candidate after the rules (and the judge, when it ran on it). */
export interface CandidateOutcome {
  index: number;
  text: string;
  results: VerifierResult[];
  /** Reasoning and prediction, when the format rule could read them. */
  think?: string;
  prediction?: string;
  judge?: JudgeResult;
  passed: boolean;
}

export interface JudgeSettings {
  enabled: boolean;
  mode: "gate" | "tiebreak";
  /** 0-100; the gate's bar. */
  minMean: number;
}

/** Runs the rules on one candidate; `passed` here means every rule passed (the judge comes later). */
export function checkCandidate(
  index: number,
  text: string,
  context: { domain: Domain; groundTruth: string; hintsGiven: boolean },
  thresholds: VerifyThresholds,
): CandidateOutcome {
  const { parsed, results } = verifyCandidateParsed(
    { domain: context.domain, candidateText: text, groundTruth: context.groundTruth, hintsGiven: context.hintsGiven },
    thresholds,
  );
  return {
    index,
    text,
    results,
    ...(parsed.think !== undefined ? { think: parsed.think } : {}),
    ...(parsed.prediction !== undefined ? { prediction: parsed.prediction } : {}),
    passed: results.every((result) => result.passed),
  };
}

/** Applies the judge's verdict: in gate mode a failed or low judgement fails the candidate. */
export function applyJudge(outcome: CandidateOutcome, judge: JudgeResult, settings: JudgeSettings): CandidateOutcome {
  const gated = settings.mode === "gate" && (!judge.ok || judge.mean < settings.minMean);
  return { ...outcome, judge, passed: outcome.passed && !gated };
}

export function fidelityScore(outcome: CandidateOutcome): number {
  return outcome.results.find((result) => result.rule === "fidelity")?.score ?? 0;
}

function judgeMean(outcome: CandidateOutcome): number {
  return outcome.judge?.ok ? outcome.judge.mean : -1;
}

/**
 * The best passing candidate: highest judge mean first when the judge ran, then highest
 * fidelity, then the earliest; undefined when none passed. Deterministic for given candidates.
 */
export function bestCandidate(outcomes: readonly CandidateOutcome[]): CandidateOutcome | undefined {
  let best: CandidateOutcome | undefined;
  for (const outcome of outcomes) {
    if (!outcome.passed) continue;
    if (
      !best ||
      judgeMean(outcome) > judgeMean(best) ||
      (judgeMean(outcome) === judgeMean(best) && fidelityScore(outcome) > fidelityScore(best))
    )
      best = outcome;
  }
  return best;
}

/** `rule: reason` lines for the candidates table, the judge's last. */
export function reasonsText(outcome: CandidateOutcome): string {
  const lines = outcome.results.map((result) => `${result.rule}: ${result.reason}`);
  if (outcome.judge) {
    lines.push(
      outcome.judge.ok
        ? `judge: mean ${outcome.judge.mean.toFixed(1)} (${Object.entries(outcome.judge.scores)
            .map(([dimension, score]) => `${dimension} ${score.toFixed(0)}`)
            .join(", ")})`
        : `judge: ${outcome.judge.reason}`,
    );
  }
  return lines.join("\n");
}
