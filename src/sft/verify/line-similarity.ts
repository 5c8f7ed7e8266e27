import { diffArrays } from "diff";
import type { FidelityScore } from "./result.ts";

/**
 * Terminal and SWE output is read line by line, in order: the score is the Dice/F1 of the
 * longest common line subsequence, 2·matched / (predicted lines + ground-truth lines).
 *
 * Lines are compared after trimming trailing whitespace (terminals pad, editors strip), and
 * blank lines at the start and end of either text are dropped (the block's layout, not output).
 */

// Past this many line edits two texts are plainly different; the exact count stops mattering
// and Myers' O(N·D) cost would start to. Then the score uses an upper bound on the matched lines.
const MAX_EDIT_LENGTH = 4000;

export function outputLines(text: string): string[] {
  const lines = text.split(/\r?\n/).map((line) => line.trimEnd());
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start] === "") start++;
  while (end > start && lines[end - 1] === "") end--;
  return lines.slice(start, end);
}

/** Size of the multiset intersection: an upper bound on the in-order match. */
function multisetOverlap(a: string[], b: string[]): number {
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let shared = 0;
  for (const line of b) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      shared++;
      counts.set(line, left - 1);
    }
  }
  return shared;
}

/**
 * Lines of `b` matched in order by lines of `a`. `exact` is false when the texts are too far apart
 * to diff: `matched` is then an upper bound (the multiset overlap, and no more than an edit
 * distance over the limit allows), so such a pair scores at most (N + M − 4001) / (N + M).
 */
export function matchedLines(a: string[], b: string[]): { matched: number; exact: boolean } {
  const overlap = multisetOverlap(a, b);
  // Every line outside the in-order match is an edit, so a diff that must exceed the limit is not tried.
  const changes = a.length + b.length - 2 * overlap <= MAX_EDIT_LENGTH ? diffArrays(a, b, { maxEditLength: MAX_EDIT_LENGTH }) : undefined;
  if (!changes) return { matched: Math.min(overlap, Math.floor((a.length + b.length - MAX_EDIT_LENGTH - 1) / 2)), exact: false };
  const matched = changes.filter((c) => !c.added && !c.removed).reduce((sum, c) => sum + c.count, 0);
  return { matched, exact: true };
}

export function lineSimilarity(prediction: string, groundTruth: string): FidelityScore {
  const predicted = outputLines(prediction);
  const truth = outputLines(groundTruth);
  if (predicted.length + truth.length === 0) return { score: 1, detail: "prediction and ground truth are both empty" };
  const { matched, exact } = matchedLines(predicted, truth);
  const score = (2 * matched) / (predicted.length + truth.length);
  const detail = exact
    ? `prediction matches ${matched}/${truth.length} ground-truth lines in order (prediction has ${predicted.length})`
    : `prediction matches at most ${matched}/${truth.length} ground-truth lines (over ${MAX_EDIT_LENGTH} line edits apart; prediction has ${predicted.length})`;
  return { score, detail };
}
