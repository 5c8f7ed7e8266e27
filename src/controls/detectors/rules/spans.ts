/**
 * Hits and the text helpers every rule module builds on: bounded regex matches, trimmed line spans,
 * hits with their facts, and whether a phrase stands where an error message stands.
 *
 * The modules beside this one hold the rules several domains share: the shapes real tools print
 * for HTTP and JSON-RPC errors, rate limits, shell failures (missing files, permissions, full
 * disks, timeouts, kills, exit codes), stack traces, compiler and test-runner failures, pagination
 * and empty results, and the dialogs and error pages of accessibility trees.
 *
 * Precision over recall: every rule is anchored on a shape a tool prints — a line start with a
 * program prefix (`cat: x: No such file or directory`), a status line (`HTTP/1.1 429 …`), a JSON
 * key (`"status": 429`), a role at the start of a tree node (`[56] dialog "…"`) — never on a bare
 * word like "error" or "timeout" in running text. Every hit's span is the minimal text that proves
 * it (the message line, the key/value pair, the final exception line) in JS string indices, and
 * its facts are read from that span only.
 *
 * Cost: each rule is one precompiled regex pass whose quantifiers are bounded (no nested unbounded
 * repetition), usually behind a cheap `includes` gate, and stops after `MAX_MATCHES` matches.
 */
import type { ControlLabelName, DomainDetector } from "../../control-label.ts";

export type Hit = ReturnType<DomainDetector["detect"]>[number];
export type Facts = Record<string, string | number>;

/** At most this many matches of one rule in one observation: 10,000 `Permission denied` lines are one condition for an instruction. */
export const MAX_MATCHES = 16;

/** The matches of a global regex, at most MAX_MATCHES of them. */
export function* matchesOf(re: RegExp, text: string, max = MAX_MATCHES): Generator<RegExpExecArray> {
  let n = 0;
  for (const m of text.matchAll(re)) {
    if (m[0] === "") continue;
    yield m as RegExpExecArray;
    if (++n >= max) return;
  }
}

export function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13 || code === 12 || code === 11;
}

/** [start, end) without surrounding whitespace. */
export function trimSpan(text: string, start: number, end: number): [number, number] {
  let s = start;
  let e = end;
  while (s < e && isSpace(text.charCodeAt(s))) s++;
  while (e > s && isSpace(text.charCodeAt(e - 1))) e--;
  return [s, e];
}

export function lineStartAt(text: string, index: number): number {
  return index <= 0 ? 0 : text.lastIndexOf("\n", index - 1) + 1;
}

export function lineEndAt(text: string, index: number): number {
  const newline = text.indexOf("\n", index);
  let end = newline === -1 ? text.length : newline;
  if (end > index && text.charCodeAt(end - 1) === 13) end--;
  return end;
}

/** The trimmed line around `index`; a line longer than `max` is cut to `max` characters from its start. */
export function lineSpanAt(text: string, index: number, max = 400): [number, number] {
  const start = lineStartAt(text, index);
  const end = Math.min(lineEndAt(text, index), Math.max(start + max, index + 1));
  return trimSpan(text, start, end);
}

export function hit(label: ControlLabelName, text: string, start: number, end: number, facts?: Facts): Hit {
  const [s, e] = trimSpan(text, start, end);
  return facts === undefined || Object.keys(facts).length === 0 ? { label, start: s, end: e } : { label, start: s, end: e, facts };
}

/**
 * The hits of a family of rules: nothing unless `gate` (a cheap test of the whole text) matches;
 * then each match of each rule is a hit of `label` on its trimmed span, with the facts `factsOf`
 * reads from that span's text.
 */
export function ruleHits(
  text: string,
  gate: RegExp,
  rules: readonly RegExp[],
  label: ControlLabelName,
  factsOf: (evidence: string) => Facts | undefined,
): Hit[] {
  if (!gate.test(text)) return [];
  const out: Hit[] = [];
  for (const re of rules) {
    for (const m of matchesOf(re, text)) {
      const [s, e] = trimSpan(text, m.index, m.index + m[0].length);
      out.push(hit(label, text, s, e, factsOf(text.slice(s, e))));
    }
  }
  return out;
}

/** A hit whose evidence is the whole (trimmed, length-capped) line the match is on. */
export function lineHit(label: ControlLabelName, text: string, index: number, facts?: Facts): Hit {
  const [s, e] = lineSpanAt(text, index);
  return hit(label, text, s, e, facts);
}

export function toInt(value: string): number {
  return Number.parseInt(value.replace(/,/g, ""), 10);
}

/** The first `lines` lines of the text (at most `maxChars`), for rules that only trust the head of a response. */
export function headOf(text: string, lines: number, maxChars = 2000): string {
  let end = 0;
  for (let i = 0; i < lines; i++) {
    const next = text.indexOf("\n", end);
    if (next === -1) return text.slice(0, Math.min(text.length, maxChars));
    end = next + 1;
  }
  return text.slice(0, Math.min(end, maxChars));
}

/** Hits of a rule run on `text.slice(offset)`, shifted back to `text`'s indices. */
export function shifted(hits: Hit[], offset: number): Hit[] {
  if (offset === 0) return hits;
  return hits.map((h) => ({ ...h, start: h.start + offset, end: h.end + offset }));
}

// Where a phrase may stand for the rules that match phrases rather than fixed shapes: at the start
// of a line after at most three short words (`Error: Rate limit exceeded`, `API rate limit
// exceeded`); inside the value of a JSON key that only errors use (`"error"`, `"detail"`,
// `"reason"`, …); inside the value of a key errors share with data (`"message"`, `"code"`,
// `"type"`, `"status"`) only near the top of an indented response (a GitHub error body's
// `"message"`, not the `"message"` of the 40th commit in a list); or at the start of an MCP text
// value. Not inside running prose or a search result's title or description, where "429 Too Many
// Requests" is a topic, not an event.
const LINE_HEAD = /^[ \t]*(?:[^\s"]{1,40}[ \t]+){0,3}$/;
const ERROR_VALUE_HEAD =
  /\\?"(?:error|errors|detail|details|reason|statusText|error_?message|errorMessage|error_?description|error_?code|errorCode|fault|faultstring)\\?"[ \t]*:[ \t]*\\?"[^"]{0,200}$/;
const SHALLOW_VALUE_HEAD = /^[ \t]{0,4}"(?:message|msg|code|type|status)"[ \t]*:[ \t]*"[^"]{0,200}$/;
const TEXT_VALUE_HEAD = /\\?"(?:text|result|output)\\?"[ \t]*:[ \t]*\\?"[^"]{0,60}$/;

/** Which contexts a phrase rule accepts: see above; `json-error` only the error-carrying JSON values. */
export type PhraseContext = "error" | "json-error" | "anywhere";

/** Whether a phrase found at `index` stands where an error message stands (see above). */
export function inErrorContext(text: string, index: number, context: PhraseContext = "error"): boolean {
  if (context === "anywhere") return true;
  const lineStart = lineStartAt(text, index);
  const start = Math.max(lineStart, index - 300);
  const before = text.slice(start, index);
  if (ERROR_VALUE_HEAD.test(before) || (start === lineStart && SHALLOW_VALUE_HEAD.test(before))) return true;
  return context === "error" && (LINE_HEAD.test(before) || TEXT_VALUE_HEAD.test(before));
}
