import type { VerifierResult } from "./result.ts";

/**
 * A teacher that was shown the real observation as a hint can "reason" by copying it. Such a
 * trace teaches the student nothing it could do at inference time, so when hints were given the
 * thinking must not quote the ground truth: no run of `minRunLines` consecutive ground-truth
 * lines, and, for a ground truth shorter than that, not the whole of it. Texts are compared with
 * whitespace collapsed (line breaks included), so re-indenting or re-wrapping a quote does not
 * hide it. Score 1 (no quote found) or 0.
 */
export interface LeakageOptions {
  /** This many consecutive non-blank ground-truth lines quoted in the thinking is a leak. */
  minRunLines: number;
  /** A run must hold this many letters or digits to count, so runs of `}` / `],` lines do not. */
  minRunChars: number;
  /** A ground truth of fewer lines than `minRunLines` is checked whole, when it is at least this long. */
  minWholeChars: number;
}

export interface LeakageInput {
  think: string | undefined;
  groundTruth: string;
  hintsGiven: boolean;
}

const flat = (text: string) => text.trim().replace(/\s+/g, " ");
const substance = (text: string) => text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;

function quote(text: string, max = 60): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

interface GroundTruthLine {
  text: string;
  /** 1-based line number in the ground truth. */
  line: number;
}

/** The longest quoted run starting at the first window of `minRunLines` lines the thinking contains. */
function findRun(lines: GroundTruthLine[], think: string, options: LeakageOptions): { from: number; to: number; text: string } | undefined {
  const n = options.minRunLines;
  for (let i = 0; i + n <= lines.length; i++) {
    let text = lines
      .slice(i, i + n)
      .map((l) => l.text)
      .join(" ");
    if (substance(text) < options.minRunChars || !think.includes(text)) continue;
    let end = i + n;
    while (end < lines.length && think.includes(`${text} ${(lines[end] as GroundTruthLine).text}`)) {
      text = `${text} ${(lines[end] as GroundTruthLine).text}`;
      end++;
    }
    return { from: (lines[i] as GroundTruthLine).line, to: (lines[end - 1] as GroundTruthLine).line, text };
  }
  return undefined;
}

export function leakageRule(input: LeakageInput, options: LeakageOptions, minScore = 1): VerifierResult {
  const result = (passed: boolean, reason: string): VerifierResult => {
    const score = passed ? 1 : 0;
    return { rule: "leakage", score, passed: score >= minScore, reason };
  };
  if (!input.hintsGiven) return result(true, "no hints given");
  if (!input.think) return result(true, "no thinking to check");
  const think = flat(input.think);
  const lines = input.groundTruth
    .split(/\r?\n/)
    .map((text, i) => ({ text: flat(text), line: i + 1 }))
    .filter((l) => l.text !== "");
  if (lines.length >= options.minRunLines) {
    const run = findRun(lines, think, options);
    if (run) return result(false, `thinking quotes ground-truth lines ${run.from}-${run.to} verbatim: ${quote(run.text)}`);
    return result(true, `thinking quotes no run of ${options.minRunLines} consecutive ground-truth lines (${lines.length} checked)`);
  }
  const whole = flat(input.groundTruth);
  if (whole.length < options.minWholeChars) {
    return result(true, `ground truth is ${whole.length} chars, too short to tell copying from prediction (< ${options.minWholeChars})`);
  }
  if (think.includes(whole))
    return result(false, `thinking contains the whole ${whole.length}-char ground truth verbatim: ${quote(whole)}`);
  return result(true, `thinking does not contain the ${whole.length}-char ground truth`);
}
