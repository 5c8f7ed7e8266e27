import { findVolatile } from "../normalize/volatile.ts";
import { hashRange } from "./minhash.ts";

/**
 * The text curation hashes: what two runs of the same task have in common. Values that differ on
 * every run (timestamps, pids, temp names, ports, durations, hex ids, addresses) are replaced by a
 * typed placeholder (`<timestamp>`, `<pid>`, …) so the exact hash and the MinHash shingles see
 * the substance only. FOR HASHING ONLY: the records written keep what the environment returned.
 *
 * Substance stays: file names outside temp dirs, error messages, counts (`3 passed`), versions
 * (`1.2.3`), line numbers (`file.py:42`, `12:34` alone — an ESLint line:column).
 */

/** Every placeholder `canonicalForHashing` writes, so `hashWords` can keep each one a word. */
export const PLACEHOLDERS = [
  // findVolatile's kinds (src/normalize/volatile.ts)
  "request_id",
  "timestamp",
  "epoch_ms",
  "epoch_s",
  "uuid",
  // this file's
  "tmp",
  "addr",
  "hex",
  "pid",
  "port",
  "time",
  "duration",
  "rate",
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const WEEKDAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
/** A clock time, `H:MM`, `HH:MM:SS` or `HH:MM:SS.fff`, optionally `AM`/`PM`. */
const CLOCK = String.raw`\d{1,2}:[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?(?:[ \t]?[AaPp]\.?[Mm]\.?(?![A-Za-z]))?`;
/** Characters that end a path component. */
const PATH_END = String.raw`/\s"'${"`"}<>:,;|()\[\]{}=`;

/**
 * Alternatives that start a word: they share one leading lookbehind (below), which fails at once
 * inside words, so the pass costs about what one of findVolatile's does.
 */
const WORD_START = [
  // Dated times: `Jun  3 10:42`, `Tue Jun 3 10:42:01 UTC 2025`, `2025/06/03 10:42:01`,
  // `03/Jun/2025:10:42:01 +0000` (ISO 8601 is findVolatile's).
  String.raw`(?<date>(?:${WEEKDAY},?[ \t]+)?${MONTH}[ \t]+\d{1,2},?[ \t]+(?:\d{4}[ \t]+)?${CLOCK}(?:[ \t]+(?:[A-Z]{2,5}|[+-]\d{4})(?!\w))?(?:[ \t]+\d{4}(?!\w))?|\d{4}/\d{2}/\d{2}[ T]${CLOCK}|\d{2}/${MONTH}/\d{4}:\d{2}:\d{2}:\d{2}(?:[ \t][+-]\d{4})?)`,
  // Clock times: a run of them separated by blanks (`10:42   0:01` in a ps row); replaced only
  // when one has seconds or AM/PM, or there are two (see `replaceClocks`).
  String.raw`(?<clocks>(?<![.:/-])${CLOCK}(?:[ \t]+${CLOCK})*(?![\w:]|\.\d))`,
  // `up 2:17` (uptime, top).
  String.raw`(?<up_pre>up[ \t]+(?:\d+[ \t]+days?,[ \t]+)?)\d{1,2}:\d{2}(?![\w:])`,
  // Memory addresses and other 0x-prefixed long hex (`0x7ffd5e8c1a30`, Ethereum addresses).
  String.raw`(?<addr>0[xX][0-9a-fA-F]{6,}(?!\w))`,
  // Python tempfile names (`tmp` + 8 of [a-z0-9_]) and mktemp's default `tmp.XXXXXXXXXX`.
  String.raw`(?<tmp_name>tmp(?:[a-z0-9_]{8}(?![A-Za-z0-9_])|\.[A-Za-z0-9]{10}(?![A-Za-z0-9])))`,
  // Durations: `0.23s`, `12ms`, `1.5 seconds`, `0m0.012s`, `1h2m3.5s`.
  String.raw`(?<duration>(?<![.])(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?[ \t]?(?:[nuµμm]?s|nanoseconds?|microseconds?|milliseconds?|msecs?|secs?|seconds?|mins?|minutes?|hrs?|hours?)(?!\w))`,
  // Transfer rates: `3.4 MB/s`, `12.5it/s`.
  String.raw`(?<rate>(?<![.])\d+(?:\.\d+)?[ \t]?(?:[kKMGT]i?B|B|kB|bytes|it|items)/s(?!\w))`,
];

/**
 * One alternation, tried left to right at each position, so earlier kinds win where two could
 * match. Each alternative is a named group; a `*_pre` group is text kept before the placeholder.
 * Speed: the regex is tried at every position, so each top-level alternative opens with a
 * one-character test that fails at once at most positions (a class, or a consumed `/`, `.`, `[`,
 * `:` with the lookbehind after it).
 */
const ALTERNATIVES = [
  `(?=[0-9A-Za-fPptu])(?<![0-9A-Za-z])(?:${[
    `(?<!_)(?:${WORD_START.join("|")})`,
    // Hex ids: ≥7 hex digits with both a digit and a letter (git shas, container ids); `_` or
    // `-` may join one to a word (`build_3f2a9c1d`).
    `(?<hex>(?=[0-9a-fA-F]{7})(?:[0-9]+[a-fA-F]|[a-fA-F]+[0-9])[0-9a-fA-F]*(?![0-9A-Za-z]))`,
    // Pids: `pid 1234`, `PID: 1234`, `child_pid=1234`, `(pid #1234)`.
    String.raw`(?<pid_pre>[Pp][Ii][Dd][Ss]?["']?[ \t]*[:=#]?[ \t]*#?)\d+(?!\d)`,
    // `port 8080`, `--port=8080`, `"port": 8080`, `PORT=8080`.
    String.raw`(?<port_pre>[Pp][Oo][Rr][Tt][Ss]?["']?[ \t]*[:=]?[ \t]*)\d{1,5}(?!\d)`,
  ].join("|")})`,
  // Temp dirs: the root and its first component (`/tmp/tmpab12_x9`, `/var/folders/xy/…/T/abc`);
  // the rest of the path is kept.
  String.raw`(?<tmp_path>/(?<![\w.~-]/)(?:(?:private/)?var/folders/[^${PATH_END}]+/[^${PATH_END}]+/[A-Z]|(?:var/)?tmp|dev/shm)/[^${PATH_END}]+)`,
  // mktemp template suffixes (`name.XXXXXX` → `name.k3J9aB`): 6-10 letters and digits after
  // `.` or `-`, with an upper case letter, a lower case letter and a digit.
  `(?<mktemp_pre>[.-])(?<=[A-Za-z0-9_][.-])(?=[A-Za-z0-9]{0,9}[0-9])(?=[A-Za-z0-9]{0,9}[A-Z])(?=[A-Za-z0-9]{0,9}[a-z])[A-Za-z0-9]{6,10}(?![A-Za-z0-9])`,
  // A syslog process tag's pid: `sshd[1234]:`.
  String.raw`(?<pid_tag_pre>\[)(?<=[A-Za-z][\w.-]*\[)\d+(?=\]:)`,
  // Ports after a local or numeric host, or the host of a URL: `localhost:8080`,
  // `127.0.0.1:5432`, `[::1]:80`, `http://example.com:8000/`.
  String.raw`(?<port_host_pre>:)(?<=(?:(?<![\w.-])(?:localhost|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})|\[[0-9a-fA-F:.]*\]|://[^/\s:@]+):)\d{1,5}(?!\w)`,
];
/**
 * The alternatives' named groups, in order. The pattern itself numbers them instead: with named
 * groups the engine builds a groups object for every match, and tree and search observations
 * have tens of thousands of matches (hex ids, clock times) per 10 MB.
 */
const GROUP_NAMES = [...ALTERNATIVES.join("|").matchAll(/\(\?<([a-z_]+)>/g)].map((match) => match[1] as string);
const PATTERN = new RegExp(ALTERNATIVES.join("|").replace(/\(\?<([a-z_]+)>/g, "("), "g");
/** Each named group's number in PATTERN. */
const GROUP = Object.fromEntries(GROUP_NAMES.map((name, i) => [name, i + 1])) as Record<GroupName, number>;
type GroupName =
  | "tmp_path"
  | "date"
  | "clocks"
  | "up_pre"
  | "addr"
  | "hex"
  | "tmp_name"
  | "mktemp_pre"
  | "pid_pre"
  | "pid_tag_pre"
  | "port_host_pre"
  | "port_pre"
  | "duration"
  | "rate";
// Every group the replacement reads is in the pattern, and the pattern captures nothing else.
for (const name of Object.keys(GROUP) as GroupName[]) if (!GROUP_NAMES.includes(name)) throw new Error(`canonical-text: no group ${name}`);
if ((new RegExp(`${PATTERN.source}|`).exec("") as RegExpExecArray).length !== GROUP_NAMES.length + 1)
  throw new Error("canonical-text: the pattern captures more than its named groups");

const CLOCK_IN_RUN = new RegExp(CLOCK, "g");

/** A run of clock times, each replaced when the run is clearly times (see PATTERN). */
function replaceClocks(run: string): string {
  let times = 0;
  let clear = false;
  for (const match of run.matchAll(CLOCK_IN_RUN)) {
    times += 1;
    const clock = match[0];
    if (clock.length > 5 || /[AaPp]/.test(clock) || clock.indexOf(":") !== clock.lastIndexOf(":")) clear = true;
  }
  if (!clear && times < 2) return run;
  return run.replace(CLOCK_IN_RUN, "<time>");
}

/** What one PATTERN match becomes. */
function replacement(match: RegExpExecArray): string {
  const text = match[0];
  if (match[GROUP.tmp_path] !== undefined || match[GROUP.tmp_name] !== undefined) return "<tmp>";
  if (match[GROUP.mktemp_pre] !== undefined) return `${match[GROUP.mktemp_pre]}<tmp>`;
  if (match[GROUP.date] !== undefined) return "<timestamp>";
  if (match[GROUP.clocks] !== undefined) return replaceClocks(text);
  if (match[GROUP.up_pre] !== undefined) return `${match[GROUP.up_pre]}<duration>`;
  if (match[GROUP.addr] !== undefined) return "<addr>";
  if (match[GROUP.hex] !== undefined) return "<hex>";
  if (match[GROUP.pid_pre] !== undefined) return `${match[GROUP.pid_pre]}<pid>`;
  if (match[GROUP.pid_tag_pre] !== undefined) return `${match[GROUP.pid_tag_pre]}<pid>`;
  if (match[GROUP.port_host_pre] !== undefined) return `${match[GROUP.port_host_pre]}<port>`;
  if (match[GROUP.port_pre] !== undefined) return `${match[GROUP.port_pre]}<port>`;
  if (match[GROUP.duration] !== undefined) return "<duration>";
  if (match[GROUP.rate] !== undefined) return "<rate>";
  return text;
}

/** `text` with every PATTERN match replaced (`text.replace(PATTERN, …)`, without a groups object per match). */
function replacePattern(text: string): string {
  const parts: string[] = [];
  let at = 0;
  PATTERN.lastIndex = 0;
  for (let match = PATTERN.exec(text); match !== null; match = PATTERN.exec(text)) {
    parts.push(text.slice(at, match.index), replacement(match));
    at = match.index + match[0].length;
    if (match[0] === "") PATTERN.lastIndex += 1; // no alternative matches empty; never loop if one did
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(at));
  return parts.join("");
}

/**
 * `text` with its volatile values replaced by typed placeholders, for hashing only: two runs of
 * the same task that differ only in timestamps, pids, temp names, ports, durations, hex ids or
 * addresses give the same string.
 */
export function canonicalForHashing(text: string): string {
  let out = text;
  const spans = findVolatile(text);
  if (spans.length > 0) {
    const parts: string[] = [];
    let at = 0;
    for (const span of spans) {
      parts.push(text.slice(at, span.start), `<${span.kind}>`);
      at = span.end;
    }
    parts.push(text.slice(at));
    out = parts.join("");
  }
  return replacePattern(out);
}

/** The canonical text of a trajectory's turns: what its exact hash covers. */
export function trajectoryHashText(turns: readonly { action: string; observation: string }[]): string {
  return hashTextOfParts(canonicalTurnParts(turns));
}

/** Each turn's action and observation, canonicalized on its own: a0, o0, a1, o1, … */
export function canonicalTurnParts(turns: readonly { action: string; observation: string }[]): string[] {
  const parts: string[] = [];
  for (const turn of turns) parts.push(canonicalForHashing(turn.action), canonicalForHashing(turn.observation));
  return parts;
}

/** trajectoryHashText of the parts `canonicalTurnParts` made. */
export function hashTextOfParts(parts: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) out.push(parts[i] as string, "\u001f", parts[i + 1] as string, "\u001e");
  return out.join("");
}

/**
 * Whether `canonicalForHashing(parts.join("\n"))` is the canonical parts joined by "\n", so a
 * caller that has canonicalized each part can join them instead of canonicalizing the whole again.
 * It is unless a volatile value could span a joint: only findVolatile's keyed rules can (their
 * `\s*` around `:`/`=` may cross a newline; nothing else in either regex pass matches one), and
 * then the whitespace at the joint touches a `:` or `=`, so a part ends with one (before blanks)
 * or the next starts with one. Conservative: true means equal (test/curate-canonical-parts.test.ts).
 */
export function partsJoinCleanly(parts: readonly string[]): boolean {
  for (let i = 0; i + 1 < parts.length; i++) {
    if (endsWithKeySign(parts[i] as string) || startsWithKeySign(parts[i + 1] as string)) return false;
  }
  return true;
}

const SPACE = /\s/;

function endsWithKeySign(text: string): boolean {
  let i = text.length - 1;
  while (i >= 0 && SPACE.test(text[i] as string)) i--;
  const c = text.charCodeAt(i);
  return c === 58 || c === 61; // ":" or "="
}

function startsWithKeySign(text: string): boolean {
  let i = 0;
  while (i < text.length && SPACE.test(text[i] as string)) i++;
  const c = text.charCodeAt(i);
  return c === 58 || c === 61;
}

const WORD = new RegExp(`<(?:${PLACEHOLDERS.join("|")})>|[\\p{L}\\p{M}\\p{N}_]+`, "gu");

/**
 * The lower-cased words of (canonical) text: runs of Unicode letters, marks, digits and `_`, a
 * placeholder (`<timestamp>`) one word. Punctuation and whitespace separate words.
 */
export function hashWords(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

const PLACEHOLDER_NAMES: ReadonlySet<string> = new Set(PLACEHOLDERS);
/** The longest placeholder, `<request_id>`, in UTF-16 units. */
const PLACEHOLDER_MAX = Math.max(...PLACEHOLDERS.map((name) => name.length)) + 2;

/**
 * `hashWords(text).map((word) => hashWord(word, seed))` without making the word strings: the
 * MinHash input of a trajectory is thousands of words, and the strings cost more than the hashes.
 * Same word rule as WORD (test/curate-canonical-parts.test.ts holds them equal).
 */
export function wordHashes(text: string, seed: number): Int32Array {
  const lower = text.toLowerCase();
  const n = lower.length;
  let out = new Int32Array(Math.max(16, n >> 3));
  let count = 0;
  for (let i = 0; i < n; ) {
    const c = lower.charCodeAt(i);
    let end = i;
    if (c === 60 /* < */) {
      const close = placeholderEnd(lower, i);
      if (close > 0 && PLACEHOLDER_NAMES.has(lower.slice(i + 1, close))) end = close + 1;
    } else {
      while (end < n) {
        const width = wordCharWidth(lower, end);
        if (width === 0) break;
        end += width;
      }
    }
    if (end === i) {
      i += 1; // not a word: a lone surrogate half is never one, so stepping by code unit is safe
      continue;
    }
    if (count === out.length) {
      const grown = new Int32Array(out.length * 2);
      grown.set(out);
      out = grown;
    }
    out[count++] = hashRange(lower, i, end, seed);
    i = end;
  }
  return out.subarray(0, count);
}

/** The index of the `>` that could close a placeholder opened at `open`, or -1. */
function placeholderEnd(text: string, open: number): number {
  for (let j = open + 1, end = Math.min(text.length, open + PLACEHOLDER_MAX); j < end; j++) if (text.charCodeAt(j) === 62) return j;
  return -1;
}

const WORD_CHAR = /^[\p{L}\p{M}\p{N}_]$/u;
/** Per BMP code unit outside ASCII: 0 not yet known, 1 a word character, 2 not. */
const bmpWordChar = new Uint8Array(65536);

/** UTF-16 units of the word character (WORD's class) at `i`: 1 or 2, or 0 when there is none. */
function wordCharWidth(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || (c >= 65 && c <= 90) ? 1 : 0;
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return WORD_CHAR.test(text.slice(i, i + 2)) ? 2 : 0;
  }
  let known = bmpWordChar[c] as number;
  if (known === 0) {
    known = WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 2;
    bmpWordChar[c] = known;
  }
  return known === 1 ? 1 : 0;
}
