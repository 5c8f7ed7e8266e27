import { type Counters, count } from "./normalizer.ts";

/**
 * Per-domain size cap on one observation. A 2 MB build log is mostly noise to a world model,
 * but its start (the command's first reaction) and its end (the verdict, the prompt) are what
 * matter, so both are kept and the middle is replaced by a marker that says exactly how much was
 * cut — the model learns that outputs get elided, never that they silently shrink.
 *
 * Lengths are in UTF-16 code units (`String.length`, what `max_observation_chars` compares); a
 * surrogate pair is never split. The result, marker included, is at most `maxChars` long (unless
 * `maxChars` is smaller than the marker itself: then it is the marker alone).
 */

/** The text that replaces the elided middle. */
export function elisionMarker(elidedChars: number): string {
  return `\n[… ${elidedChars} characters elided …]\n`;
}

/**
 * `text` unchanged when it fits in `maxChars` (0 or Infinity: no cap), else head + marker + tail.
 * Counts `truncated.observations` and `truncated.chars`.
 */
export function capLength(text: string, maxChars: number, counters: Counters): string {
  if (!Number.isFinite(maxChars) || maxChars <= 0 || text.length <= maxChars) return text;
  // The marker's length depends on the number it prints; shrink the kept budget until it fits.
  let budget = Math.max(0, maxChars - elisionMarker(text.length - maxChars).length);
  for (;;) {
    const head = keepHead(text, Math.ceil(budget / 2));
    const tailStart = keepTailFrom(text, text.length - Math.floor(budget / 2));
    const elided = tailStart - head;
    const marker = elisionMarker(elided);
    if (head + (text.length - tailStart) + marker.length <= maxChars || budget === 0) {
      count(counters, "truncated.observations");
      count(counters, "truncated.chars", elided);
      return text.slice(0, head) + marker + text.slice(tailStart);
    }
    budget -= 1;
  }
}

/** End of a head of about `n` units that does not end on the first half of a surrogate pair. */
function keepHead(text: string, n: number): number {
  return n > 0 && isHighSurrogate(text.charCodeAt(n - 1)) ? n - 1 : n;
}

/** Start of a tail from about `start` that does not begin on the second half of a surrogate pair. */
function keepTailFrom(text: string, start: number): number {
  return start < text.length && isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
