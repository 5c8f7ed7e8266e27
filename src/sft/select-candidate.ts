import type { Domain } from "../core/trajectory.ts";
import type { JudgeResult } from "./teacher/judge.ts";
import type { TeacherAnswerForm } from "./teacher/teacher-answer.ts";
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
  /** How the teacher returned the thinking (src/sft/teacher/teacher-answer.ts); null when unknown (an old cache entry). */
  teacherForm?: TeacherAnswerForm | null;
}

export interface JudgeSettings {
  enabled: boolean;
  mode: "gate" | "tiebreak";
  /** 0-100; the gate's bar. */
  minMean: number;
}

/**
 * Runs the rules on one candidate; `passed` here means every rule passed (the judge comes later).
 * `context.quotable`: the prompt's contents, whose tags and control strings the answer may quote
 * (the ground truth always counts); `finishReason`: the server's, when it gave one.
 */
export function checkCandidate(
  index: number,
  text: string,
  context: { domain: Domain; groundTruth: string; hintsGiven: boolean; quotable?: readonly string[] },
  thresholds: VerifyThresholds,
  finishReason?: string | null,
): CandidateOutcome {
  const { parsed, results } = verifyCandidateParsed(
    {
      domain: context.domain,
      candidateText: text,
      groundTruth: context.groundTruth,
      hintsGiven: context.hintsGiven,
      ...(context.quotable ? { quotable: context.quotable } : {}),
      ...(finishReason != null ? { finishReason } : {}),
    },
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

/** Which of several equally good passing candidates to keep (`sft.prefer`, `sft.equal_within`). */
export interface Preference {
  /** `shortest`: the shortest thinking (then the strict order); `first`: the earliest candidate. */
  prefer: "shortest" | "first";
  /** Fidelity scores at most this far apart count as equal. */
  fidelityEpsilon: number;
  /** Judge means (0-100) at most this far apart count as equal. */
  judgeEpsilon: number;
}

/** The strict order alone: judge mean, fidelity, earliest (what `bestCandidate` uses). */
export const STRICT_ORDER: Preference = { prefer: "first", fidelityEpsilon: 0, judgeEpsilon: 0 };

/** Negative when `a` comes first in the strict order: higher judge mean, then higher fidelity, then earlier. */
function strictCompare(a: CandidateOutcome, b: CandidateOutcome): number {
  return judgeMean(b) - judgeMean(a) || fidelityScore(b) - fidelityScore(a) || a.index - b.index;
}

/**
 * Whether two passing candidates are equally good: they passed the same rules (every one: only
 * passing candidates are ranked), the judge judged both (means within `judgeEpsilon`) or
 * neither, and their fidelity scores are within `fidelityEpsilon`.
 */
export function equallyGood(a: CandidateOutcome, b: CandidateOutcome, preference: Preference): boolean {
  const [ja, jb] = [judgeMean(a), judgeMean(b)];
  const judgeEqual = ja < 0 || jb < 0 ? ja === jb : Math.abs(ja - jb) <= preference.judgeEpsilon;
  return judgeEqual && Math.abs(fidelityScore(a) - fidelityScore(b)) <= preference.fidelityEpsilon;
}

/** Thinking length in UTF-16 code units (like `sft.verify.max_think_chars`). */
export function thinkChars(outcome: CandidateOutcome): number {
  return outcome.think?.length ?? 0;
}

/**
 * The passing candidates, best first. Repeatedly: the first of the rest in the strict order
 * (judge mean, fidelity, earliest), and every candidate equally good to it, ordered by the
 * preference (`shortest`: thinking length, then the strict order; `first`: candidate index).
 * With `STRICT_ORDER` this is the strict order. Deterministic for given candidates.
 */
export function rankCandidates(outcomes: readonly CandidateOutcome[], preference: Preference = STRICT_ORDER): CandidateOutcome[] {
  let rest = outcomes.filter((outcome) => outcome.passed).sort(strictCompare);
  const ranked: CandidateOutcome[] = [];
  while (rest.length > 0) {
    const top = rest[0] as CandidateOutcome;
    const tied = rest.filter((outcome) => outcome === top || equallyGood(outcome, top, preference));
    tied.sort((a, b) => (preference.prefer === "shortest" ? thinkChars(a) - thinkChars(b) || strictCompare(a, b) : a.index - b.index));
    ranked.push(...tied);
    rest = rest.filter((outcome) => !tied.includes(outcome));
  }
  return ranked;
}

/**
 * The best passing candidate: highest judge mean first when the judge ran, then highest
 * fidelity, then the earliest (or, with a preference, the preferred one of those equally good
 * to it); undefined when none passed. Deterministic for given candidates.
 */
export function bestCandidate(outcomes: readonly CandidateOutcome[], preference: Preference = STRICT_ORDER): CandidateOutcome | undefined {
  return rankCandidates(outcomes, preference)[0];
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
