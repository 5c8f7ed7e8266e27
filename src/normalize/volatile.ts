import { type Counters, count } from "./normalizer.ts";

/**
 * Volatile values: parts of an observation that differ on every run of the same action
 * (timestamps, request ids, UUIDs). A world model cannot predict them from the history, so they
 * are worth knowing about when reading loss curves, but they ARE what the environment returned,
 * so by default they are only found and counted (`volatile.<kind>`), never rewritten.
 * `findVolatile` returns the spans for a caller that wants to mask or replace them.
 */
export type VolatileKind = "request_id" | "timestamp" | "epoch_ms" | "epoch_s" | "uuid";

export interface VolatileSpan {
  kind: VolatileKind;
  /** The value's UTF-16 offsets in the text: `text.slice(start, end)`. */
  start: number;
  end: number;
}

interface Rule {
  kind: VolatileKind;
  pattern: RegExp;
}

const MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec";

/**
 * Earlier rules win where matches overlap: a UUID under a `request_id` key is one request id,
 * not also a UUID. Each pattern's capture group 1 (when present) is the value itself.
 */
const RULES: readonly Rule[] = [
  // A value under a request/trace id key (JSON, header or assignment form).
  {
    kind: "request_id",
    pattern:
      /(?<![A-Za-z0-9])(?:x-)?(?:request[_-]?id|requestid|amzn-requestid|amz-request-id|trace[_-]?id|correlation[_-]?id|cf-ray)["']?\s*[:=]\s*["']?([A-Za-z0-9][A-Za-z0-9._:/+-]{5,})/gi,
  },
  // Request ids with a well-known prefix (OpenAI, Anthropic, Stripe: req_…; chat completion ids).
  { kind: "request_id", pattern: /(?<![A-Za-z0-9_-])(?:req_[A-Za-z0-9]{8,}|chatcmpl-[A-Za-z0-9]{10,})(?![A-Za-z0-9_-])/g },
  // ISO 8601 date-time (a bare date like a protocol version `2025-06-18` is not volatile).
  {
    kind: "timestamp",
    pattern: /(?<![0-9])\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![0-9])/g,
  },
  // HTTP dates (RFC 7231 IMF-fixdate): `Tue, 03 Jun 2025 10:00:00 GMT`.
  { kind: "timestamp", pattern: new RegExp(`(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} (?:${MONTHS}) \\d{4} \\d{2}:\\d{2}:\\d{2} GMT`, "g") },
  // Unix time in milliseconds, 2001-09 to 2033-05: 13 digits starting with 1, standing alone.
  { kind: "epoch_ms", pattern: /(?<![\w.])1\d{12}(?![\w.])/g },
  // Unix time in seconds only under a time-like key: bare 10-digit numbers are too often ids.
  {
    kind: "epoch_s",
    pattern:
      /(?<![A-Za-z0-9])(?:created(?:_at)?|updated(?:_at)?|timestamp|time|ts|expires(?:_at)?|iat|exp|nbf)["']?\s*[:=]\s*["']?(1\d{9})(?![\w.])/gi,
  },
  {
    kind: "uuid",
    pattern: /(?<![0-9A-Za-z-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z-])/g,
  },
];

/** Every volatile value in `text`, in text order, without overlaps. */
export function findVolatile(text: string): VolatileSpan[] {
  return findByRules(text, possibleRules(text));
}

/** findVolatile without the pre-check: every rule's regex run. Kept as the reference the fast path is tested against. */
export function findVolatileByAllRules(text: string): VolatileSpan[] {
  return findByRules(text, ALL_RULES);
}

const ALL_RULES = (1 << RULES.length) - 1;

function findByRules(text: string, rules: number): VolatileSpan[] {
  const spans: VolatileSpan[] = []; // kept sorted by start
  if (rules === 0) return spans;
  for (let r = 0; r < RULES.length; r++) {
    if ((rules & (1 << r)) === 0) continue; // cannot match (possibleRules)
    const { kind, pattern } = RULES[r] as Rule;
    for (const match of text.matchAll(pattern)) {
      const value = match[1] ?? match[0];
      const start = (match.index ?? 0) + match[0].lastIndexOf(value);
      const span = { kind, start, end: start + value.length };
      const at = insertionPoint(spans, start);
      const before = spans[at - 1];
      const after = spans[at];
      if ((before && before.end > span.start) || (after && after.start < span.end)) continue;
      spans.splice(at, 0, span);
    }
  }
  return spans;
}

/**
 * Per rule, a regex that matches wherever the rule does (the rule without its leading lookbehind,
 * value bounds or tail): a necessary condition. Each opens with a literal or a simple class, which
 * the engine scans for fast, where the rules' leading lookbehinds make it try every position.
 */
const PRE_CHECKS: readonly RegExp[] = [
  /(?:request[_-]?id|requestid|trace[_-]?id|correlation[_-]?id|cf-ray)["']?\s*[:=]/i,
  /req_|chatcmpl-/,
  /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/,
  / GMT/,
  /1\d{12}/,
  /[:=]\s*["']?1\d{9}/,
  /-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-/,
];

/**
 * The rules (bit r = RULES[r]) that could match `text`. Most texts hold no volatile value, and a
 * rule's regex costs a slow pass of its own, so only the rules whose pre-check matches are run;
 * those run in full, so the result is findVolatileByAllRules's (test/volatile-fast-path.test.ts).
 */
function possibleRules(text: string): number {
  let rules = 0;
  for (let r = 0; r < PRE_CHECKS.length; r++) if ((PRE_CHECKS[r] as RegExp).test(text)) rules |= 1 << r;
  return rules;
}

/** Index of the first span starting at or after `start` (binary search). */
function insertionPoint(spans: VolatileSpan[], start: number): number {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((spans[mid] as VolatileSpan).start < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Counts the volatile values of `text` into `volatile.<kind>`; returns how many were found. */
export function countVolatile(text: string, counters: Counters): number {
  const spans = findVolatile(text);
  for (const span of spans) count(counters, `volatile.${span.kind}`);
  return spans.length;
}
