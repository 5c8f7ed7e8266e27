/**
 * HTTP errors and rate limits: status lines, the messages client libraries print, statuses in JSON
 * and HTML error bodies, and the wordings services use for rate limits.
 */
import { type Facts, type Hit, hit, inErrorContext, matchesOf, type PhraseContext, toInt, trimSpan } from "./spans.ts";

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
