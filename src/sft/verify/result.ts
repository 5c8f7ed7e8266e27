/** What one verifier rule says about one candidate. */
export interface VerifierResult {
  /** `format`, `fidelity` or `leakage`. */
  rule: string;
  /** In [0, 1]; 1 is best. */
  score: number;
  passed: boolean;
  /** Human-readable and specific: what was measured and against which bound. */
  reason: string;
  /**
   * The rule could not run on this candidate (fidelity when the format rule found no prediction):
   * `passed` is false so the candidate fails, but the manifest's `by_rule` counts neither an
   * evaluation nor a failure, and the candidates table has no score for it.
   */
  skipped?: true;
}

/** What a fidelity measure found: a score in [0, 1] and what it counted, in words. */
export interface FidelityScore {
  score: number;
  /** E.g. "prediction matches 12/20 ground-truth lines"; the caller adds the threshold. */
  detail: string;
}

/** A score and its bound as text: "0.60 < 0.80" / "0.91 ≥ 0.80", with more digits when 2 would hide the difference. */
export function versus(score: number, min: number): string {
  let digits = 2;
  while (digits < 6 && score !== min && score.toFixed(digits) === min.toFixed(digits)) digits++;
  return `${score.toFixed(digits)} ${score >= min ? "≥" : "<"} ${min.toFixed(digits)}`;
}
