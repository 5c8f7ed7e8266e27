/**
 * Rules several domains share: the shapes real tools print for HTTP and JSON-RPC errors, rate
 * limits, shell failures (missing files, permissions, full disks, timeouts, kills, exit codes),
 * stack traces, compiler and test-runner failures, pagination and empty results, and the dialogs
 * and error pages of accessibility trees.
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
import type { ControlLabelName, DomainDetector } from "../control-label.ts";

export type Hit = ReturnType<DomainDetector["detect"]>[number];
export type Facts = Record<string, string | number>;

/** At most this many matches of one rule in one observation: 10,000 `Permission denied` lines are one condition for an instruction. */
export const MAX_MATCHES = 16;

// ---------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------

/** The matches of a global regex, at most MAX_MATCHES of them. */
export function* matchesOf(re: RegExp, text: string, max = MAX_MATCHES): Generator<RegExpExecArray> {
  let n = 0;
  for (const m of text.matchAll(re)) {
    if (m[0] === "") continue;
    yield m as RegExpExecArray;
    if (++n >= max) return;
  }
}

function isSpace(code: number): boolean {
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

// ---------------------------------------------------------------------------------------------
// HTTP: status lines, client-library messages, JSON error shapes, rate limits
// ---------------------------------------------------------------------------------------------

/** `HTTP/1.1 429 Too Many Requests` (curl -i, wget -S, `< ` of curl -v), `HTTP 404 Not Found`: a short line, nothing else. */
const HTTP_STATUS_LINE = /^[ \t]*(?:< )?HTTP(?:\/\d(?:\.\d)?)?[ \t]+([1-5]\d\d)\b[^\r\n]{0,60}$/gm;
const RETRY_AFTER_HEADER = /^[ \t]*(?:< )?retry-after:[ \t]*([^\r\n]{1,60}?)[ \t]*\r?$/im;
const BLANK_LINE = /\n[ \t]*\r?\n/g;

/** The labels an HTTP status stands for: 429 → rate_limit; other 4xx/5xx → http_error (408/504 also timeout). */
export function statusHits(text: string, start: number, end: number, status: number, extra?: Facts): Hit[] {
  if (status === 429) return [hit("rate_limit", text, start, end, { status, ...extra })];
  if (status < 400 || status > 599) return [];
  const hits = [hit("http_error", text, start, end, { status, ...extra })];
  if (status === 408 || status === 504) hits.push(hit("timeout", text, start, end, { status }));
  return hits;
}

/** The Retry-After header in the header block that follows a status line ending at `from`. */
function retryAfterHeader(text: string, from: number): { end: number; value: string } | undefined {
  BLANK_LINE.lastIndex = from;
  const blank = BLANK_LINE.exec(text);
  const blockEnd = Math.min(blank === null ? text.length : blank.index, from + 4000);
  const block = text.slice(from, blockEnd);
  const m = RETRY_AFTER_HEADER.exec(block);
  if (m === null || m[1] === undefined) return undefined;
  return { end: from + m.index + m[0].length, value: m[1] };
}

/** HTTP status lines of 4xx/5xx responses; a 429's span runs to its Retry-After header when the block has one. */
export function httpStatusLines(text: string): Hit[] {
  if (!text.includes("HTTP")) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(HTTP_STATUS_LINE, text)) {
    const status = toInt(m[1] ?? "0");
    if (status < 400) continue;
    const [s, e] = trimSpan(text, m.index, m.index + m[0].length);
    if (status === 429) {
      const retry = retryAfterHeader(text, e);
      out.push(hit("rate_limit", text, s, retry?.end ?? e, retry ? { status, retry_after: retry.value } : { status }));
    } else out.push(...statusHits(text, s, e, status));
  }
  return out;
}

const REASON_PHRASES =
  "Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|Not Acceptable|Request Time-?out|Conflict|Gone|Precondition Failed|Payload Too Large|Request Entity Too Large|Unsupported Media Type|Unprocessable (?:Entity|Content)|Too Many Requests|Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable|Gateway Time-?out";
/** Messages HTTP clients print: requests' HTTPError, axios, urllib, curl -f, wget, and a code with its reason phrase at a line start. */
const HTTP_PHRASES: RegExp[] = [
  /\b([45]\d\d) (?:Client|Server) Error: [^\r\n"]{0,300}/g,
  /\bRequest failed with status code ([45]\d\d)\b/g,
  /\bHTTP Error ([45]\d\d): [^\r\n"]{0,200}/g,
  /\bThe requested URL returned error: ([45]\d\d)\b[^\r\n"]{0,100}/g,
  /\bERROR ([45]\d\d): [^\r\n"]{0,100}/g,
  new RegExp(
    `^[ \\t]*(?:[A-Za-z][\\w.-]{0,40}:[ \\t]*){0,2}(?:HTTP(?:/\\d(?:\\.\\d)?)?[ \\t]+)?([45]\\d\\d)[ \\t]+(?:${REASON_PHRASES})\\b[^\\r\\n]{0,200}`,
    "gm",
  ),
];
const HTTP_PHRASE_GATE = /\b[45]\d\d\b/;

/** HTTP errors as client libraries and tools word them (see HTTP_PHRASES). */
export function httpStatusPhrases(text: string): Hit[] {
  if (!HTTP_PHRASE_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const re of HTTP_PHRASES) {
    for (const m of matchesOf(re, text)) out.push(...statusHits(text, m.index, m.index + m[0].length, toInt(m[1] ?? "0")));
  }
  return out;
}

/** `"status": 429`, `"status_code": 503`, `"statusCode": "404"` — a JSON key that carries an HTTP status (also in escaped JSON inside a string). */
const JSON_STATUS =
  /\\?"(?:status|status_?code|statusCode|http_?status|httpStatus|http_?code|httpCode)\\?"[ \t]*:[ \t]*\\?"?([45]\d\d)\b\\?"?/g;
/** `"error": {"code": 429, …}` (Google APIs): the code member of an error object. */
const JSON_ERROR_CODE = /\\?"error\\?"[ \t]*:[ \t]*\{[^{}]{0,600}?(\\?"code\\?"[ \t]*:[ \t]*([45]\d\d))\b/dg;
const JSON_RETRY_AFTER =
  /\\?"(?:retry[_-]?after(?:[_-]?(?:seconds|ms))?|retryAfter(?:Seconds|Ms)?|Retry-After)\\?"[ \t]*:[ \t]*(?:\\?"([^"\\\r\n]{1,40})\\?"|(\d+(?:\.\d+)?))/gi;

/** A JSON retry-after member near [start, end) (within 600 characters), for a 429's span and facts. */
function jsonRetryAfter(text: string, start: number, end: number): { start: number; end: number; value: string } | undefined {
  const from = Math.max(0, start - 600);
  const window = text.slice(from, Math.min(text.length, end + 600));
  for (const m of window.matchAll(JSON_RETRY_AFTER)) {
    const value = m[1] ?? m[2];
    if (value !== undefined) return { start: from + m.index, end: from + m.index + m[0].length, value };
  }
  return undefined;
}

const HTML_ERROR_TITLE = /<(title|h1)>[ \t]*([45]\d\d)\b[^<\r\n]{0,100}<\/\1>/gi;

/** An error page an HTTP client printed (`<title>404 Not Found</title>`, nginx's `<h1>502 Bad Gateway</h1>`): one per response. */
export function htmlErrorTitles(text: string): Hit[] {
  if (!/<(?:title|h1)>/i.test(text)) return [];
  for (const m of matchesOf(HTML_ERROR_TITLE, text, 1)) return statusHits(text, m.index, m.index + m[0].length, toInt(m[2] ?? "0"));
  return [];
}

/** HTTP statuses in JSON bodies: status keys and error-object codes; a 429 takes a nearby retry-after member into its span. */
export function jsonHttpErrors(text: string): Hit[] {
  if (!HTTP_PHRASE_GATE.test(text)) return [];
  const out: Hit[] = [];
  const add = (start: number, end: number, status: number): void => {
    if (status === 429) {
      const retry = jsonRetryAfter(text, start, end);
      if (retry) {
        out.push(hit("rate_limit", text, Math.min(start, retry.start), Math.max(end, retry.end), { status, retry_after: retry.value }));
        return;
      }
    }
    out.push(...statusHits(text, start, end, status));
  };
  for (const m of matchesOf(JSON_STATUS, text)) add(m.index, m.index + m[0].length, toInt(m[1] ?? "0"));
  if (text.includes("error")) {
    for (const m of matchesOf(JSON_ERROR_CODE, text)) {
      const span = m.indices?.[1];
      if (span) add(span[0], span[1], toInt(m[2] ?? "0"));
    }
  }
  return out;
}

/** `"error": "HTTP 503 Service Unavailable"`, `"text": "Error: 404 Not Found"`: a status at the head of an error or text value. */
const JSON_VALUE_STATUS = new RegExp(
  `\\\\?"(?:text|message|error|detail|result|output)\\\\?"[ \\t]*:[ \\t]*\\\\?"(?:[A-Za-z][\\w .-]{0,40}: ?){0,2}(?:HTTP(?:/\\d(?:\\.\\d)?)?[ :]+([45]\\d\\d)\\b|([45]\\d\\d)[ \\t]+(?:${REASON_PHRASES})\\b)[^"\\\\\\r\\n]{0,200}`,
  "g",
);

/** HTTP statuses that open an error or text value of a JSON response; the evidence is the value's text. */
export function jsonValueHttpStatus(text: string): Hit[] {
  if (!HTTP_PHRASE_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(JSON_VALUE_STATUS, text)) {
    const colon = m[0].indexOf(":");
    const open = m[0].indexOf('"', colon);
    out.push(...statusHits(text, m.index + open + 1, m.index + m[0].length, toInt(m[1] ?? m[2] ?? "0")));
  }
  return out;
}

/** Rate-limit wordings services use (GitHub, OpenAI, Brave, generic 429 bodies); matched only in an error context. */
const RATE_LIMIT_PHRASE =
  /\b(?:[Rr]ate[ _-]?[Ll]imit(?:ed\b|[ _-](?:exceeded|reached)\b)|RATE_?LIMIT(?:ED|_EXCEEDED)\b|RateLimit(?:Error|Exceeded)\b|Too Many Requests\b|[Tt]oo many requests\b)/g;
const RATE_LIMIT_GATE = /rate[ _-]?limit|too many requests/i;
const RETRY_TEXT =
  /^[^\r\n]{0,200}?\b(?:[Rr]etry|[Tt]ry again)(?: after| in)? (\d+(?:\.\d+)?) ?(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)\b/;

/** Rate-limit messages in the given context (`anywhere`: inside a result already known to be an error). */
export function rateLimitPhrases(text: string, context: PhraseContext = "error"): Hit[] {
  if (!RATE_LIMIT_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(RATE_LIMIT_PHRASE, text)) {
    if (!inErrorContext(text, m.index, context)) continue;
    const end = m.index + m[0].length;
    const retry = RETRY_TEXT.exec(text.slice(end, end + 260));
    if (retry) out.push(hit("rate_limit", text, m.index, end + retry[0].length, { retry_after: `${retry[1]} ${retry[2]}` }));
    else out.push(hit("rate_limit", text, m.index, end));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON: a tiny member scanner for error objects
// ---------------------------------------------------------------------------------------------

export interface JsonMember {
  key: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
}

function skipWs(text: string, i: number): number {
  let j = i;
  while (j < text.length && isSpace(text.charCodeAt(j))) j++;
  return j;
}

function skipString(text: string, i: number, limit: number): number {
  // text[i] === '"'
  let j = i + 1;
  while (j < limit) {
    const c = text.charCodeAt(j);
    if (c === 92) j += 2;
    else if (c === 34) return j + 1;
    else j++;
  }
  return -1;
}

function skipValue(text: string, i: number, limit: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i, limit);
  if (c === "{" || c === "[") {
    let depth = 0;
    let j = i;
    while (j < limit) {
      const d = text[j];
      if (d === '"') {
        j = skipString(text, j, limit);
        if (j === -1) return -1;
        continue;
      }
      if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return -1;
  }
  let j = i;
  while (j < limit && !/[,}\]\s]/.test(text[j] ?? "")) j++;
  return j === i ? -1 : j;
}

/** The members of the JSON object whose `{` is at `open` (scanning at most `maxChars`); undefined if it is not well-formed there. */
export function jsonMembers(text: string, open: number, maxChars = 16_384): JsonMember[] | undefined {
  const limit = Math.min(text.length, open + maxChars);
  const members: JsonMember[] = [];
  let i = skipWs(text, open + 1);
  while (i < limit) {
    const c = text[i];
    if (c === "}") return members;
    if (c === ",") {
      i = skipWs(text, i + 1);
      continue;
    }
    if (c !== '"') return undefined;
    const keyEnd = skipString(text, i, limit);
    if (keyEnd === -1) return undefined;
    const key = text.slice(i + 1, keyEnd - 1);
    let j = skipWs(text, keyEnd);
    if (text[j] !== ":") return undefined;
    j = skipWs(text, j + 1);
    const valueEnd = skipValue(text, j, limit);
    if (valueEnd === -1) return undefined;
    members.push({ key, keyStart: i, valueStart: j, valueEnd });
    i = skipWs(text, valueEnd);
  }
  return undefined;
}

const JSON_ERROR_OBJECT = /"error"[ \t\r\n]*:[ \t\r\n]*\{/g;

/** A JSON string literal's content when it has no escapes (so the fact is the evidence's own text), else undefined. */
export function plainJsonString(literal: string): string | undefined {
  if (literal.length < 2 || literal[0] !== '"' || literal[literal.length - 1] !== '"') return undefined;
  const content = literal.slice(1, -1);
  return content.includes("\\") || content.trim() === "" ? undefined : content;
}

export interface ErrorObject {
  hits: Hit[];
  /** Where the error's message value lies, for rules that look inside the message (timeouts, missing files). */
  message?: [number, number];
}

/**
 * JSON-RPC error objects (`"error": {"code": -32602, "message": "…"}`): rpc_error with the code,
 * the span running from the code to the message. An error object whose code is an HTTP status
 * (Google APIs: `{"error": {"code": 429, …}}`) is left to jsonHttpErrors.
 */
export function jsonRpcErrors(text: string): ErrorObject[] {
  if (!text.includes('"error"')) return [];
  const out: ErrorObject[] = [];
  for (const m of matchesOf(JSON_ERROR_OBJECT, text)) {
    const members = jsonMembers(text, m.index + m[0].length - 1);
    if (!members) continue;
    const code = members.find((member) => member.key === "code");
    if (!code) continue;
    const codeText = text.slice(code.valueStart, code.valueEnd);
    if (!/^-?\d+$/.test(codeText)) continue;
    const value = Number(codeText);
    if (value >= 400 && value <= 599) continue;
    const message = members.find((member) => member.key === "message");
    const start = Math.min(code.keyStart, message?.keyStart ?? code.keyStart);
    const end = Math.max(code.valueEnd, message?.valueEnd ?? code.valueEnd);
    const facts: Facts = { code: value };
    const messageText = message ? plainJsonString(text.slice(message.valueStart, message.valueEnd)) : undefined;
    if (messageText !== undefined) facts.message = messageText;
    out.push({
      hits: [hit("rpc_error", text, start, end, facts)],
      message: message ? [message.valueStart, message.valueEnd] : undefined,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Operating-system errors (strerror texts and what shells print)
// ---------------------------------------------------------------------------------------------

const NOT_FOUND_RULES: RegExp[] = [
  // `cat: x: No such file or directory`, `python: can't open file 'x': [Errno 2] No such file or directory`, `FileNotFoundError: …`
  /^[^\s:][^:\r\n]{0,200}:[^\r\n]{0,400}?\bNo such file or directory\b[^\r\n]{0,300}/gm,
  // Node: `Error: ENOENT: no such file or directory, open '/x'`
  /\bENOENT: no such file or directory[^\r\n"]{0,300}/g,
  // bash: `bash: foo: command not found`, `bash: line 1: foo: command not found`, `foo: command not found`
  /^[^\s:][^\r\n]{0,200}?: command not found\r?$/gm,
  // zsh: `zsh: command not found: foo`
  /^zsh: command not found: [^\r\n]{1,200}/gm,
  // dash: `/bin/sh: 1: foo: not found`
  /^(?:\/bin\/)?(?:sh|dash|bash)(?:: \d+| line \d+)?: [^\r\n]{1,200}?: not found\r?$/gm,
  // zsh's cd: `cd: no such file or directory: x`
  /^(?:[^\s:]{1,40}: )?cd: no such file or directory: [^\r\n]{1,300}/gm,
  // cmd.exe
  /^'[^'\r\n]{1,200}' is not recognized as an internal or external command[^\r\n]{0,100}/gm,
];
const NOT_FOUND_GATE = /No such file|no such file|not found|not recognized/;
const COMMAND_NOT_FOUND = /(?:^|: )(?:line \d+: )?([^\s:]{1,200}): (?:command )?not found\s*$|command not found: (\S{1,200})/;
/** The quoted path inside a message part (`cannot access 'x'` → `x`), else the part itself. */
function quotedPath(part: string | undefined): string | undefined {
  if (part === undefined) return undefined;
  return /['‘"]([^'‘’"\r\n]{1,200})['’"]/.exec(part)?.[1] ?? part;
}

const MISSING_PATH =
  /: ([^:\r\n]{1,200}): No such file or directory|[Nn]o such file or directory(?::|,) (?:open |stat |scandir |lstat )?'([^'\r\n]{1,200})'/;

/** Missing files, directories and commands, as shells and programs report them. */
export function notFound(text: string): Hit[] {
  if (!NOT_FOUND_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const re of NOT_FOUND_RULES) {
    for (const m of matchesOf(re, text)) {
      const [s, e] = trimSpan(text, m.index, m.index + m[0].length);
      const evidence = text.slice(s, e);
      const command = COMMAND_NOT_FOUND.exec(evidence);
      const path = MISSING_PATH.exec(evidence);
      const facts: Facts = {};
      if (command && (command[1] ?? command[2])) facts.command = (command[1] ?? command[2]) as string;
      else if (path?.[1] ?? path?.[2]) facts.path = quotedPath(path[1] ?? path[2]) as string;
      out.push(hit("not_found", text, s, e, facts));
    }
  }
  return out;
}

const PERMISSION_RULES: RegExp[] = [
  /^[^\s:][^:\r\n]{0,200}:[^\r\n]{0,400}?\b(?:Permission denied|Operation not permitted)\b[^\r\n]{0,300}/gm,
  /\bEACCES: permission denied[^\r\n"]{0,300}/g,
  /\bEPERM: operation not permitted[^\r\n"]{0,300}/g,
  /^sudo: [^\r\n]{0,200}?(?:is not in the sudoers file|a password is required|a terminal is required)[^\r\n]{0,100}/gm,
];
const PERMISSION_GATE = /Permission denied|Operation not permitted|EACCES|EPERM|sudo: /;

const DENIED_PATH =
  /(?:^|: )([^:\r\n]{1,200}): (?:Permission denied|Operation not permitted)|(?:Permission denied|permission denied|operation not permitted)(?::|,) (?:open |mkdir |unlink |scandir |access )?'([^'\r\n]{1,200})'/;

/** Permission errors (EACCES/EPERM strerror texts, sudo refusals); facts.path when the message names it. */
export function permissionDenied(text: string): Hit[] {
  if (!PERMISSION_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const re of PERMISSION_RULES) {
    for (const m of matchesOf(re, text)) {
      const [s, e] = trimSpan(text, m.index, m.index + m[0].length);
      const path = DENIED_PATH.exec(text.slice(s, e));
      const value = quotedPath(path?.[2] ?? path?.[1]);
      out.push(hit("permission_denied", text, s, e, value ? { path: value } : undefined));
    }
  }
  return out;
}

const DISK_FULL =
  /\b(?:No space left on device|Disk quota exceeded|There is not enough space on the disk|database or disk is full|ENOSPC)\b/g;

/** A full disk or exhausted quota (ENOSPC, EDQUOT, SQLite's SQLITE_FULL); the evidence is the message line. */
export function diskFull(text: string): Hit[] {
  if (!/space|quota|disk is full|ENOSPC/.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(DISK_FULL, text)) out.push(lineHit("disk_full", text, m.index));
  return out;
}

/** Timeout wordings of programs, libraries and the OS (ETIMEDOUT, curl 28, requests' ReadTimeout, Go deadlines, pytest-timeout). */
const TIMEOUT_RULES: RegExp[] = [
  /\b(?:[Oo]peration|[Cc]onnection|[Rr]ead|[Ww]rite|[Rr]equest|[Cc]ommand|[Ee]xecution|[Hh]andshake|[Ss]ocket|[Cc]onnect|[Pp]rocess|[Qq]uery|[Ss]ession|[Ll]ock|[Ss]ubprocess) (?:has )?timed out\b/g,
  /\btimed out after \d/g,
  /\bTIMED OUT\b/g,
  /^(?:[\w]{1,40}\.){0,4}(?:TimeoutError|TimeoutExpired|ReadTimeout(?:Error)?|ConnectTimeout(?:Error)?|ConnectionTimeout|Timeout)(?::[^\r\n]{0,300})?\r?$/gm,
  /\bETIMEDOUT\b/g,
  /\bcontext deadline exceeded\b/g,
  /^(?:E[ \t]+)?Failed: Timeout >[\d.]+s/gm,
  /^Timeout: command '[^\r\n]{1,300}' timed out/gm,
];
const TIMEOUT_GATE = /timed out|TIMED OUT|Timeout|ETIMEDOUT|deadline exceeded/;

const TIMEOUT_SECONDS =
  /\btimeout=(\d{1,7})(?:\.0+)?\b(?!\.\d)|(?:\bafter|\btimeout of|>)[ \t]*\(?(\d{1,7})(?:\.0+)?[ \t]*(?:s|secs?|seconds?)\b/i;

/** A timeout's message line, with facts.seconds when the line states the limit in whole seconds. */
export function timeoutHit(text: string, index: number): Hit {
  const [s, e] = lineSpanAt(text, index);
  const seconds = TIMEOUT_SECONDS.exec(text.slice(s, e));
  const value = seconds?.[1] ?? seconds?.[2];
  return hit("timeout", text, s, e, value ? { seconds: toInt(value) } : undefined);
}

/** Timeouts reported by programs and libraries; the evidence is the message line. */
export function timeouts(text: string): Hit[] {
  if (!TIMEOUT_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const re of TIMEOUT_RULES) for (const m of matchesOf(re, text)) out.push(timeoutHit(text, m.index));
  return out;
}

/** Timeouts an agent harness reports about the command it ran (mini-swe-agent, SWE-agent, OpenHands). */
const HARNESS_TIMEOUT_RULES: RegExp[] = [
  /\btimed out and (?:has been|was) (?:killed|terminated)\b/g,
  /\bEXECUTION TIMED OUT\b/g,
  /\bcommand took too long to (?:execute|run|complete)\b/gi,
  /\[Command timed out after [^\r\n\]]{1,100}/g,
  /\bhas no new output after \d+ seconds\b/g,
];

export function harnessTimeouts(text: string): Hit[] {
  if (!/timed out|TIMED OUT|too long|no new output/i.test(text)) return [];
  const out: Hit[] = [];
  for (const re of HARNESS_TIMEOUT_RULES) for (const m of matchesOf(re, text)) out.push(timeoutHit(text, m.index));
  return out;
}

/** SIGKILL: bash's `Killed` lines, OOM-killer messages, Go's `signal: killed`, Kubernetes' OOMKilled. */
const KILLED_RULES: RegExp[] = [
  /^[ \t]*(?:\[\d+\][+-]?[ \t]+)?Killed(?:[ \t]+[^\r\n]{0,200})?\r?$/gm,
  /\b\d+ Killed[ \t]+[^\r\n]{1,200}/g,
  /\b(?:Out of memory: Kill(?:ed)? process|OOMKilled|oom-kill(?:er)?|signal: killed|SIGKILL|killed by signal 9|terminated by signal (?:9|SIGKILL)|received signal 9)\b/g,
];

export function killed(text: string): Hit[] {
  if (!/Killed|killed|SIGKILL|oom-kill|signal 9/.test(text)) return [];
  const out: Hit[] = [];
  for (const re of KILLED_RULES) {
    for (const m of matchesOf(re, text)) {
      const [s, e] = lineSpanAt(text, m.index);
      out.push(hit("killed", text, s, e, text.slice(s, e).includes("SIGKILL") ? { signal: "SIGKILL" } : undefined));
    }
  }
  return out;
}

/** Exit statuses an agent harness appends to a command's output (mini-swe-agent, OpenHands, SWE-agent's marker). */
const HARNESS_EXIT_RULES: RegExp[] = [
  /<returncode>(-?\d+)<\/returncode>/g,
  /\[(?:The )?[Cc]ommand(?: -?\d+)? (?:finished|completed) with exit code (-?\d+)\.?\]/g,
  /\[exit code (-?\d+), no output\]/g,
  /\/\/\/PROCESS-DONE:(-?\d+):PROCESS-DONE\/\/\//g,
];
/** Exit statuses shells, runners and tool JSON print; in a file's content they are data, so these count only outside file views. */
const PRINTED_EXIT_RULES: RegExp[] = [
  /^[ \t]*\[?(?:[Ee]xit|EXIT)[ _]?(?:[Cc]ode|[Ss]tatus|CODE|STATUS)[:= ]+(-?\d+)\]?[ \t]*\r?$/gm,
  /^(?:Process|Command|Program) (?:exited|finished|terminated|failed) with (?:exit )?(?:code|status) (-?\d+)\b[^\r\n]{0,100}/gm,
  /\\?"(?:returncode|return_code|exit_?code|exitCode|exit_?status|exitStatus)\\?"[ \t]*:[ \t]*(-?\d+)/g,
  /^exit status (\d+)\r?$/gm,
];
const EXIT_GATE = /returncode|exit|Exit|EXIT|PROCESS-DONE|return_code/;
const TIMEOUT_COMMAND = /(?:^|[\s;&|(])timeout(?:\s+-\S+)*\s+\d/;
/**
 * Non-zero exit statuses (`printed`: also those a program prints, not only the harness's); 137
 * (128 + SIGKILL) is also `killed`, and 124 is also `timeout` when the action ran GNU `timeout`
 * (its exit status for a command that ran out of time).
 */
export function exitStatuses(text: string, action: string, printed = true): Hit[] {
  if (!EXIT_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const re of printed ? [...HARNESS_EXIT_RULES, ...PRINTED_EXIT_RULES] : HARNESS_EXIT_RULES) {
    for (const m of matchesOf(re, text)) {
      const code = toInt(m[1] ?? "0");
      if (code === 0 || Number.isNaN(code)) continue;
      const start = m.index;
      const end = m.index + m[0].length;
      out.push(hit("nonzero_exit", text, start, end, { exit_code: code }));
      if (code === 137) out.push(hit("killed", text, start, end, { exit_code: code }));
      if (code === 124 && TIMEOUT_COMMAND.test(action)) out.push(hit("timeout", text, start, end, { exit_code: code }));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stack traces, compilers, test runners
// ---------------------------------------------------------------------------------------------

const TRACEBACK_HEADER = "Traceback (most recent call last):";
const EXCEPTION_LINE = /^([A-Za-z_][\w.]{0,200})(?::|\r?$)/;
const CHAIN_LINE = /^(?:During handling of the above exception|The above exception was the direct cause)/;

/**
 * Python tracebacks: from each `Traceback (most recent call last):` header, the final exception
 * line (`ZeroDivisionError: division by zero`), following chained tracebacks to the last one. A
 * traceback cut off before its exception line is evidenced by its header.
 */
export function pythonTracebacks(text: string): Hit[] {
  const out: Hit[] = [];
  let from = 0;
  while (out.length < MAX_MATCHES) {
    const header = text.indexOf(TRACEBACK_HEADER, from);
    if (header === -1) break;
    const headerLine = lineStartAt(text, header);
    if (text.slice(headerLine, header).trim() !== "") {
      from = header + TRACEBACK_HEADER.length;
      continue;
    }
    let p = lineEndAt(text, header) + 1;
    let final: [number, number, string] | undefined;
    let lines = 0;
    while (p < text.length && lines++ < 5000) {
      const end = lineEndAt(text, p);
      const next = text.indexOf("\n", p);
      const code = text.charCodeAt(p);
      const line = text.slice(p, end);
      if (line.trim() === "" || code === 32 || code === 9) {
        // frames, source lines, carets, blank lines
      } else if (line.startsWith(TRACEBACK_HEADER) || CHAIN_LINE.test(line)) {
        final = undefined;
      } else {
        const m = EXCEPTION_LINE.exec(line);
        if (m) final = [p, end, m[1] ?? ""];
        if (!m || !chainFollows(text, next === -1 ? text.length : next + 1)) break;
      }
      if (next === -1) break;
      p = next + 1;
    }
    if (final) out.push(hit("traceback", text, final[0], final[1], { exception: final[2] }));
    else out.push(hit("traceback", text, header, header + TRACEBACK_HEADER.length));
    from = final ? final[1] : header + TRACEBACK_HEADER.length;
  }
  return out;
}

/** Whether the next non-blank line starts a chained traceback. */
function chainFollows(text: string, from: number): boolean {
  let p = from;
  for (let i = 0; i < 4 && p < text.length; i++) {
    const end = lineEndAt(text, p);
    const line = text.slice(p, end);
    if (line.trim() !== "") return CHAIN_LINE.test(line) || line.startsWith(TRACEBACK_HEADER);
    const next = text.indexOf("\n", p);
    if (next === -1) return false;
    p = next + 1;
  }
  return false;
}

/** JVM and Node stack traces: an exception line followed by an indented `at …` frame. */
const STACK_TRACE =
  /^(?:Exception in thread "[^"\r\n]{0,100}" |Caused by: |Uncaught )?((?:[A-Za-z_$][\w$]{0,80}\.){0,12}(?:[A-Z][\w$]{0,80})?(?:Error|Exception))\b(?: \[[A-Z_]+\])?(?::[^\r\n]{0,1000})?\r?\n[ \t]+at \S/gm;

export function stackTraces(text: string): Hit[] {
  if (!/[ \t]at \S/.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(STACK_TRACE, text))
    out.push(hit("traceback", text, m.index, lineEndAt(text, m.index), { exception: m[1] ?? "" }));
  return out;
}

interface CompileRule {
  re: RegExp;
  /** Facts from the match's groups. */
  facts(m: RegExpExecArray): Facts;
  /** The group whose span is the evidence, when not the whole match. */
  group?: number;
}

const COMPILE_RULES: CompileRule[] = [
  // gcc, clang, javac, mypy: `src/main.c:12:5: error: …`, `Main.java:3: error: ';' expected`
  {
    re: /^([^\s:][^:\r\n]{0,300}):(\d+):(?:(\d+):)? (?:fatal )?error: [^\r\n]{0,500}/gm,
    facts: (m) => ({ file: m[1] ?? "", line: toInt(m[2] ?? "0") }),
  },
  // tsc: `src/a.ts(3,7): error TS2322: …` and `src/a.ts:3:7 - error TS2322: …`; pyright's `- error:`
  {
    re: /^([^\s(][^(\r\n]{0,300})\((\d+),\d+\): error (TS\d+): [^\r\n]{0,500}/gm,
    facts: (m) => ({ file: m[1] ?? "", line: toInt(m[2] ?? "0"), code: m[3] ?? "" }),
  },
  {
    re: /^[ \t]*([^\s:][^:\r\n]{0,300}):(\d+):\d+ - error(?: (TS\d+))?: [^\r\n]{0,500}/gm,
    facts: (m): Facts =>
      m[3] ? { file: m[1] ?? "", line: toInt(m[2] ?? "0"), code: m[3] } : { file: m[1] ?? "", line: toInt(m[2] ?? "0") },
  },
  { re: /^error (TS\d+): [^\r\n]{0,500}/gm, facts: (m) => ({ code: m[1] ?? "" }) },
  // rustc: `error[E0308]: mismatched types` + ` --> src/main.rs:4:18`
  {
    re: /^error(?:\[(E\d{4})\])?: [^\r\n]{1,500}\r?\n[ \t]*--> ([^\r\n:]{1,300}):(\d+):\d+/gm,
    facts: (m): Facts =>
      m[1] ? { code: m[1], file: m[2] ?? "", line: toInt(m[3] ?? "0") } : { file: m[2] ?? "", line: toInt(m[3] ?? "0") },
  },
  {
    re: /^error: could not compile `[^`\r\n]{1,200}`[^\r\n]{0,200}/gm,
    facts: (m): Facts => {
      const count = /due to (\d+) previous errors?/.exec(m[0]);
      return count?.[1] ? { errors: toInt(count[1]) } : {};
    },
  },
  // go build: `# pkg` + `./main.go:5:2: undefined: x`
  {
    re: /^# [^\s]{1,200}\r?\n((?:\.\/)?[^\s:]{1,300}\.go):(\d+):\d+: [^\r\n]{1,500}/dgm,
    facts: (m) => ({ file: m[1] ?? "", line: toInt(m[2] ?? "0") }),
    group: 0,
  },
  // the linker
  { re: /^collect2: error: ld returned \d+ exit status\r?$/gm, facts: () => ({}) },
  { re: /^[^\r\n]{0,300}: undefined reference to `[^\r\n]{1,300}/gm, facts: () => ({}) },
];
const COMPILE_GATE = /error|Error|\.go:\d/;
const PY_SYNTAX_ERROR = /^(SyntaxError|IndentationError|TabError): [^\r\n]{0,500}/gm;
const PY_FILE_LINE = /^[ \t]*File "[^"\r\n]{1,500}", line \d+/m;

/** Compiler errors (gcc/clang/javac/tsc/rustc/go/ld) and Python's SyntaxError under its `File "…", line N` frame. */
export function compileErrors(text: string): Hit[] {
  if (!COMPILE_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const rule of COMPILE_RULES) {
    for (const m of matchesOf(rule.re, text)) {
      let start = m.index;
      if (rule.group === 0 && m.indices?.[1]) start = m.indices[1][0];
      out.push(hit("compile_error", text, start, m.index + m[0].length, rule.facts(m)));
    }
  }
  for (const m of matchesOf(PY_SYNTAX_ERROR, text)) {
    const before = text.slice(Math.max(0, m.index - 1200), m.index);
    const recent = before.split("\n").slice(-7).join("\n");
    if (PY_FILE_LINE.test(recent)) out.push(hit("compile_error", text, m.index, m.index + m[0].length, { exception: m[1] ?? "" }));
  }
  return out;
}

interface TestRule {
  re: RegExp;
  counts: boolean;
}

/** Test-runner failures, most telling first: summaries with counts, then a failing test's line, then a bare AssertionError. */
const TEST_RULES: TestRule[] = [
  { re: /^=+ [^=\r\n]{0,300}?\b\d+ (?:failed|errors?)\b[^=\r\n]{0,300} =+\r?$/gm, counts: true }, // pytest
  { re: /^\d+ failed\b(?:, \d+ \w+){0,6}(?: in [\d.]+s)?[^\r\n]{0,60}\r?$/gm, counts: true }, // pytest -q
  { re: /^FAILED \((?:failures|errors)=\d+(?:, [a-z ]+=\d+){0,4}\)\r?$/gm, counts: true }, // unittest
  { re: /^Tests:[ \t]+[^\r\n]{0,100}?\b\d+ failed\b[^\r\n]{0,200}/gm, counts: true }, // jest
  { re: /^[ \t]*Tests[ \t]+\d+ failed\b[^\r\n]{0,200}/gm, counts: true }, // vitest
  { re: /^test result: FAILED\.[^\r\n]{0,300}/gm, counts: true }, // cargo test
  { re: /^[ \t]*\d+ failing\r?$/gm, counts: true }, // mocha
  { re: /^FAILED [^\s:]{1,300}::[^\r\n]{0,500}/gm, counts: false }, // pytest's short summary line
  { re: /^(?:FAIL|ERROR): \w+ \([^\r\n)]{1,300}\)[^\r\n]{0,100}/gm, counts: false }, // unittest
  { re: /^--- FAIL: [^\r\n]{1,300}/gm, counts: false }, // go test
  { re: /^FAIL[ \t]+\S+[ \t]+[\d.]+s\r?$/gm, counts: false }, // go test's package line
  { re: /^[ \t]*FAIL[ \t]+\S+\.(?:test|spec)\.[cm]?[jt]sx?\b[^\r\n]{0,300}/gm, counts: false }, // jest/vitest file line
  { re: /^AssertionError\b(?::[^\r\n]{0,500})?/gm, counts: false },
];
const TEST_GATE = /failed|FAIL|failing|AssertionError|ERROR: /;

function testCounts(evidence: string): Facts {
  const facts: Facts = {};
  const failed = /(?:\b(\d+) failed\b|failures=(\d+)|\b(\d+) failing\b)/.exec(evidence);
  if (failed) facts.failed = toInt(failed[1] ?? failed[2] ?? failed[3] ?? "0");
  const passed = /\b(\d+) passed\b/.exec(evidence);
  if (passed) facts.passed = toInt(passed[1] ?? "0");
  const errors = /(?:\b(\d+) errors?\b|errors=(\d+))/.exec(evidence);
  if (errors) facts.errors = toInt(errors[1] ?? errors[2] ?? "0");
  return facts;
}

/** One test_failure per observation: the first rule of TEST_RULES that matches (a run is one event). */
export function testFailures(text: string): Hit[] {
  if (!TEST_GATE.test(text)) return [];
  for (const rule of TEST_RULES) {
    rule.re.lastIndex = 0;
    const m = rule.re.exec(text);
    rule.re.lastIndex = 0;
    if (m === null) continue;
    const [s, e] = trimSpan(text, m.index, m.index + m[0].length);
    return [hit("test_failure", text, s, e, rule.counts ? testCounts(text.slice(s, e)) : undefined)];
  }
  return [];
}

// ---------------------------------------------------------------------------------------------
// Pagination and empty results
// ---------------------------------------------------------------------------------------------

const JSON_CURSOR =
  /\\?"(next_?[Cc]ursor|nextcursor|next_?page_?token|nextPageToken|next_?token|nextToken|cursor_?next)\\?"[ \t]*:[ \t]*(?:\\?"([^"\\\r\n]{1,200})\\?"|(\d+))/g;
const JSON_MORE =
  /\\?"(?:has_?more|hasMore|has_?next(?:_?page)?|hasNext(?:Page)?|more_results_available|moreResultsAvailable|is_?truncated|isTruncated|IsTruncated)\\?"[ \t]*:[ \t]*true\b/g;
const JSON_NEXT_LINK =
  /\\?"(?:next|next_?page(?:_?url)?|nextPage(?:Url)?|next_?url|nextUrl|next_?link|nextLink|@odata\.nextLink)\\?"[ \t]*:[ \t]*\\?"(?:https?:\/\/|\/|\?)[^"\\\r\n]{0,300}\\?"/g;
const JSON_NEXT_PAGE = /\\?"(?:next_?page|nextPage)\\?"[ \t]*:[ \t]*(?:\d+|\[)/g;
const JSON_PAGE = /\\?"(?:page|current_?page|currentPage|page_?number|pageNumber|pageIndex)\\?"[ \t]*:[ \t]*(\d+)/g;
const JSON_PAGE_SIZE = /\\?"(?:per_?page|perPage|page_?size|pageSize|limit)\\?"[ \t]*:[ \t]*(\d+)/;
const JSON_TOTAL_PAGES = /\\?"(?:total_?pages|totalPages|page_?count|pageCount|last_?page|lastPage)\\?"[ \t]*:[ \t]*(\d+)/;
const JSON_TOTAL = /\\?"(?:total|total_?count|totalCount|total_?results|totalResults|total_?items|totalItems)\\?"[ \t]*:[ \t]*(\d+)/;
const LINK_NEXT = /^[ \t]*(?:< )?[Ll]ink:[^\r\n]{0,1000}?rel="?next"?[^\r\n]{0,300}/gm;
const PAGINATION_GATE = /cursor|Cursor|[Mm]ore|[Nn]ext|page|Page|[Tt]runcated|rel=/;

/** Pagination in JSON responses and HTTP Link headers: cursors, has-more flags, next links, page/page-size members. */
export function jsonPagination(text: string): Hit[] {
  if (!PAGINATION_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(JSON_CURSOR, text))
    out.push(hit("pagination", text, m.index, m.index + m[0].length, { cursor: m[2] ?? m[3] ?? "" }));
  for (const re of [JSON_MORE, JSON_NEXT_LINK, JSON_NEXT_PAGE, LINK_NEXT])
    for (const m of matchesOf(re, text)) out.push(hit("pagination", text, m.index, m.index + m[0].length));
  for (const m of matchesOf(JSON_PAGE, text, 4)) {
    const from = Math.max(0, m.index - 400);
    const window = text.slice(from, m.index + m[0].length + 400);
    const spans: [number, number][] = [[m.index, m.index + m[0].length]];
    const facts: Facts = { page: toInt(m[1] ?? "0") };
    const size = JSON_PAGE_SIZE.exec(window);
    const pages = JSON_TOTAL_PAGES.exec(window);
    if (!size && !pages) continue;
    if (size) {
      facts.page_size = toInt(size[1] ?? "0");
      spans.push([from + size.index, from + size.index + size[0].length]);
    }
    if (pages) {
      facts.total_pages = toInt(pages[1] ?? "0");
      spans.push([from + pages.index, from + pages.index + pages[0].length]);
      if (facts.total_pages <= 1) continue;
    }
    const total = JSON_TOTAL.exec(window);
    if (total) {
      facts.total = toInt(total[1] ?? "0");
      spans.push([from + total.index, from + total.index + total[0].length]);
    }
    out.push(hit("pagination", text, Math.min(...spans.map((s) => s[0])), Math.max(...spans.map((s) => s[1])), facts));
  }
  return out;
}

const SHOWING =
  /\b(?:Showing|Displaying|Viewing|Results|Items|Entries|Rows|Records)(?: (?:results|items|entries|rows|records))?:? (\d[\d,]{0,12}) ?(?:-|–|—|to) ?(\d[\d,]{0,12}) of (?:about |approximately |~ ?)?(\d[\d,]{0,15})/gi;
const PAGE_OF = /\bPage (\d{1,6}) ?(?:of|\/) ?(\d{1,6})\b/gi;
/** A pagination phrase counts only on a short line (a pager, a status bar), not inside prose. */
const MAX_PAGER_LINE = 160;

/** "Showing 1–10 of 57", "Results 11 - 20 of about 300", "Page 2 of 5": facts page_size/total or page/total_pages; one page of one is not pagination. */
export function textPagination(text: string): Hit[] {
  if (!/of/.test(text)) return [];
  const out: Hit[] = [];
  const short = (index: number): boolean => lineEndAt(text, index) - lineStartAt(text, index) <= MAX_PAGER_LINE;
  for (const m of matchesOf(SHOWING, text)) {
    if (!short(m.index)) continue;
    const first = toInt(m[1] ?? "0");
    const last = toInt(m[2] ?? "0");
    const total = toInt(m[3] ?? "0");
    if (last < first || last >= total) continue;
    out.push(hit("pagination", text, m.index, m.index + m[0].length, { first, last, page_size: last - first + 1, total }));
  }
  for (const m of matchesOf(PAGE_OF, text)) {
    if (!short(m.index)) continue;
    const page = toInt(m[1] ?? "0");
    const pages = toInt(m[2] ?? "0");
    if (pages <= 1 || page > pages || page < 1) continue;
    out.push(hit("pagination", text, m.index, m.index + m[0].length, { page, total_pages: pages }));
  }
  return out;
}

const COLLECTION_KEYS = [
  "results",
  "items",
  "data",
  "hits",
  "documents",
  "docs",
  "matches",
  "entries",
  "records",
  "organic",
  "organic_results",
  "web_results",
  "value",
  "tools",
  "resources",
  "resourceTemplates",
  "prompts",
  "content",
  "contents",
  "files",
  "rows",
];
/** MCP's content wrappers: a `content` list that carries the (empty) answer is not itself a result with items. */
const WRAPPER_KEYS = new Set(["content", "contents"]);
const EMPTY_COLLECTION = new RegExp(`\\\\?"(${COLLECTION_KEYS.join("|")})\\\\?"[ \\t]*:[ \\t]*\\[\\s*\\]`, "g");
const NON_EMPTY_COLLECTION = new Map(COLLECTION_KEYS.map((key) => [key, new RegExp(`\\\\?"${key}\\\\?"[ \\t]*:[ \\t]*\\[\\s*[^\\s\\]]`)]));

const EMPTY_PHRASE =
  'No (?:search )?(?:results|matches|items|records|documents|entries|hits|products)(?: were)? (?:found|returned|match(?:ed|es)?|to (?:show|display))\\b[^\\r\\n"]{0,120}|0 (?:results|matches|hits)(?: (?:found|returned))?\\b[^\\r\\n"]{0,80}|Your search[^\\r\\n"]{0,200}? did not match any (?:documents|results)[^\\r\\n"]{0,40}|No matches found for [^\\r\\n"]{1,300}|Found 0 matches\\b[^\\r\\n"]{0,200}';
const EMPTY_LINE = new RegExp(`^[ \\t]*(?:[\\w.-]{1,40}:[ \\t]*)?(?:${EMPTY_PHRASE})`, "gm");
const EMPTY_VALUE = new RegExp(`\\\\?"(?:text|message|result|output)\\\\?"[ \\t]*:[ \\t]*\\\\?"(?:${EMPTY_PHRASE})`, "g");
const EMPTY_GATE = /\[\s*\]|No |0 (?:results|matches|hits)|did not match|Found 0/;

/**
 * Empty results: a response that is `[]`, a result collection that is `[]` while no result
 * collection of the response has items (`"results": []`, MCP `"tools": []`; MCP's `content`
 * wrapper aside), or "No results found"-style messages at a line start or starting a text value.
 */
export function emptyResults(text: string): Hit[] {
  if (!EMPTY_GATE.test(text)) return [];
  const out: Hit[] = [];
  const [s, e] = trimSpan(text, 0, text.length);
  if (e - s >= 2 && text[s] === "[" && text[e - 1] === "]" && text.slice(s + 1, e - 1).trim() === "")
    return [hit("empty_result", text, s, e)];
  let others: boolean | undefined;
  for (const m of matchesOf(EMPTY_COLLECTION, text)) {
    others ??= [...NON_EMPTY_COLLECTION].some(([key, re]) => !WRAPPER_KEYS.has(key) && re.test(text));
    if (others || NON_EMPTY_COLLECTION.get(m[1] ?? "")?.test(text)) continue;
    out.push(hit("empty_result", text, m.index, m.index + m[0].length));
  }
  for (const m of matchesOf(EMPTY_LINE, text)) out.push(hit("empty_result", text, m.index, m.index + m[0].length));
  for (const m of matchesOf(EMPTY_VALUE, text)) {
    const quote = m[0].indexOf(":");
    const open = m[0].indexOf('"', quote);
    out.push(hit("empty_result", text, m.index + open + 1, m.index + m[0].length));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shell observations (terminal, swe): what the action ran decides which rules apply
// ---------------------------------------------------------------------------------------------

/** Programs and agent tools whose output is a file's (or a diff's, a search's) content: its text is data, not events. */
const VIEWERS = new Set([
  "cat",
  "tac",
  "head",
  "tail",
  "less",
  "more",
  "nl",
  "bat",
  "batcat",
  "sed",
  "awk",
  "gawk",
  "cut",
  "grep",
  "egrep",
  "fgrep",
  "zgrep",
  "rg",
  "ag",
  "ack",
  "diff",
  "xxd",
  "hexdump",
  "od",
  "strings",
  "jq",
  "yq",
  "view",
  "vim",
  "vi",
  "nvim",
  "nano",
  "emacs",
  "zcat",
  // SWE-agent and OpenHands (agentskills) file tools
  "open",
  "goto",
  "scroll_up",
  "scroll_down",
  "search_file",
  "search_dir",
  "find_file",
  "create",
  "edit",
  "insert",
  "submit",
  "str_replace_editor",
  "open_file",
  "goto_line",
  "edit_file_by_replace",
  "append_file",
  "insert_content_at_line",
]);
const GIT_VIEWERS = new Set(["diff", "show", "log", "blame", "grep", "cat-file"]);
const SHELL_TOOLS = new Set(["bash", "execute_bash", "shell", "run", "run_command", "terminal", "cmd"]);
const NETWORK_CLIENTS = new Set(["curl", "wget", "http", "https", "httpie", "xh", "gh", "aws", "gcloud"]);
const FILE_VIEW_OBSERVATION = /^\s*\[File: |Here's the result of running `cat -n`|\(this is the beginning of the file\)/;

export interface ShellCommand {
  /** The program of the command whose output the observation is (the last command of a chain, the first of its pipeline). */
  program: string;
  /** Whether the observation shows a file's content (a viewer, an editor tool, a diff) rather than a run's output. */
  fileView: boolean;
  /** Whether the program is an HTTP client (curl, wget, gh, …): JSON status members in its output are responses. */
  network: boolean;
}

/** The command an action ran: shell text, SWE-smith `<function=bash>` XML, OpenHands JSON, or an agent tool call. */
export function shellCommand(action: string, observation: string): ShellCommand {
  const viewObservation = FILE_VIEW_OBSERVATION.test(observation.slice(0, 400));
  let command = action;
  const fn = /^\s*<function=([\w.-]+)>/.exec(action);
  if (fn) {
    const name = fn[1] ?? "";
    if (!SHELL_TOOLS.has(name)) return { program: name, fileView: true, network: false };
    command = /<parameter=command>([\s\S]*?)(?:<\/parameter>|$)/.exec(action)?.[1] ?? "";
  } else if (/^\s*\{\s*"action"\s*:\s*"(?:read|edit|write)"/.test(action)) {
    return { program: "file_editor", fileView: true, network: false };
  }
  const call = /^\s*([A-Za-z_]\w*)\(/.exec(command);
  if (call && VIEWERS.has(call[1] ?? "")) return { program: call[1] ?? "", fileView: true, network: false };
  const segments = command.split(/&&|\|\||;|\n/);
  let last = "";
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = (segments[i] ?? "").trim();
    if (segment !== "") {
      last = segment;
      break;
    }
  }
  const head = (last.split("|")[0] ?? "")
    .trim()
    .replace(/^[({]\s*/, "")
    .replace(/^(?:\w+=\S*\s+)+/, "")
    .replace(/^(?:sudo|time|command|exec|nohup|env)\s+(?:-\S+\s+)*/, "")
    .replace(/^timeout\s+(?:-\S+\s+)*\S+\s+/, "");
  const words = head.split(/\s+/);
  const program = (words[0] ?? "").replace(/^.*\//, "");
  let fileView = viewObservation || VIEWERS.has(program);
  if (program === "git") {
    const sub = words.slice(1).find((w) => !w.startsWith("-") && !/^(?:\.|\/)/.test(w));
    if (sub && GIT_VIEWERS.has(sub)) fileView = true;
  }
  return { program, fileView, network: NETWORK_CLIENTS.has(program) };
}

/** In a file view, only the viewer's own complaints count: `cat: x: No such file or directory`, `sed: can't read x: …`. */
function viewerErrors(text: string, program: string): Hit[] {
  if (program === "" || !/^[\w.-]+$/.test(program)) return [];
  const prefix = `${program}:`;
  return [...notFound(text), ...permissionDenied(text)].filter((h) => text.startsWith(prefix, lineStartAt(text, h.start)));
}

/**
 * A test runner's report (`FAILED (failures=2)`, `2 failed, 3 passed`) prints each failing test's
 * traceback (an AssertionError, or an error the test hit): the run is a test failure, not a crashed
 * program, so those tracebacks are no label of their own. A bare AssertionError with no runner
 * summary (a script's assert) still counts as a traceback.
 */
function withoutTestReportTracebacks(text: string, tracebacks: Hit[], tests: readonly Hit[]): Hit[] {
  const runnerReport = tests.some((test) => !text.startsWith("AssertionError", test.start));
  return runnerReport ? [] : tracebacks;
}

/**
 * The rules for a shell's output (terminal and swe): exit statuses and harness timeouts always;
 * for a file view (cat, sed -n, an editor tool, git diff, grep) only the viewer's own errors;
 * otherwise the OS errors, stack traces, compiler and test failures, HTTP status lines and
 * rate-limit messages, and, after an HTTP client, JSON status members.
 */
export function shellHits(action: string, text: string): Hit[] {
  const command = shellCommand(action, text);
  const out: Hit[] = [...exitStatuses(text, action, !command.fileView), ...harnessTimeouts(text)];
  if (command.fileView) {
    out.push(...viewerErrors(text, command.program));
    return out;
  }
  const tests = testFailures(text);
  out.push(
    ...notFound(text),
    ...permissionDenied(text),
    ...diskFull(text),
    ...timeouts(text),
    ...killed(text),
    ...withoutTestReportTracebacks(text, pythonTracebacks(text), tests),
    ...stackTraces(text),
    ...compileErrors(text),
    ...tests,
    ...httpStatusLines(text),
    ...httpStatusPhrases(text),
    ...rateLimitPhrases(text),
  );
  if (command.network) out.push(...jsonHttpErrors(text), ...htmlErrorTitles(text));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Screens (web, os, android): accessibility-tree text
// ---------------------------------------------------------------------------------------------

/** A tree node's role at the start of its line, after its indentation and an optional `[bid]`. */
export const NODE_PREFIX = "^[ \\t]*(?:\\[[^\\]\\r\\n]{0,40}\\][ \\t]+)?";

/** Browser error pages as their text shows (Chrome, Firefox, Android WebView), as a node's whole quoted name. */
const BROWSER_ERROR_TEXT =
  /"((?:This site can(?:'|’)t be reached|This site can(?:'|’)t provide a secure connection|This page isn(?:'|’)t working|This page isn(?:'|’)t available|Hmm\. We(?:'|’)re having trouble finding that site\.?|Unable to connect|Problem loading page|Server [Nn]ot [Ff]ound|Secure Connection Failed|Your connection is not private|Webpage not available|Web page not available|You(?:'|’)re offline|No internet|[^"\r\n]{1,80} refused to connect\.?|[^"\r\n]{1,80} took too long to respond\.?)|HTTP ERROR (\d{3})|(?:net::)?(ERR_[A-Z][A-Z_]{2,60}|DNS_PROBE_[A-Z_]{2,60}))"/g;

/** A screen shows one error page: of several hits (a title and its heading, a phrase and its ERR_ code), the first with facts, else the first. */
export function oneErrorPage(hits: Hit[]): Hit[] {
  const pages = hits.filter((h) => h.label === "error_page");
  if (pages.length <= 1) return hits;
  const chosen = pages.find((h) => h.facts !== undefined) ?? pages.reduce((a, b) => (b.start < a.start ? b : a));
  return hits.filter((h) => h.label !== "error_page" || h === chosen);
}

/** Browser error pages shown in a tree: facts net_error (ERR_…) or status (HTTP ERROR 500). */
export function browserErrorPages(text: string): Hit[] {
  if (
    !/can(?:'|’)t|isn(?:'|’)t|trouble|Unable|Problem|Not Found|not found|Failed|not private|not available|offline|internet|refused|too long|ERROR|ERR_|DNS_/.test(
      text,
    )
  )
    return [];
  const out: Hit[] = [];
  for (const m of matchesOf(BROWSER_ERROR_TEXT, text)) {
    const facts: Facts = {};
    if (m[2]) facts.status = toInt(m[2]);
    if (m[3]) facts.net_error = m[3];
    out.push(hit("error_page", text, m.index + 1, m.index + m[0].length - 1, facts));
  }
  return out;
}
