import { findVolatile } from "../normalize/volatile.ts";

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
const PATTERN = new RegExp(ALTERNATIVES.join("|"), "g");

const CLOCK_IN_RUN = new RegExp(CLOCK, "g");

interface Groups {
  tmp_path?: string;
  date?: string;
  clocks?: string;
  up_pre?: string;
  addr?: string;
  hex?: string;
  tmp_name?: string;
  mktemp_pre?: string;
  pid_pre?: string;
  pid_tag_pre?: string;
  port_host_pre?: string;
  port_pre?: string;
  duration?: string;
  rate?: string;
}

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

function replace(match: string, ...args: unknown[]): string {
  const g = args[args.length - 1] as Groups;
  if (g.tmp_path !== undefined || g.tmp_name !== undefined) return "<tmp>";
  if (g.mktemp_pre !== undefined) return `${g.mktemp_pre}<tmp>`;
  if (g.date !== undefined) return "<timestamp>";
  if (g.clocks !== undefined) return replaceClocks(match);
  if (g.up_pre !== undefined) return `${g.up_pre}<duration>`;
  if (g.addr !== undefined) return "<addr>";
  if (g.hex !== undefined) return "<hex>";
  if (g.pid_pre !== undefined) return `${g.pid_pre}<pid>`;
  if (g.pid_tag_pre !== undefined) return `${g.pid_tag_pre}<pid>`;
  if (g.port_host_pre !== undefined) return `${g.port_host_pre}<port>`;
  if (g.port_pre !== undefined) return `${g.port_pre}<port>`;
  if (g.duration !== undefined) return "<duration>";
  if (g.rate !== undefined) return "<rate>";
  return match;
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
  return out.replace(PATTERN, replace);
}

/** The canonical text of a trajectory's turns: what its exact hash covers. */
export function trajectoryHashText(turns: readonly { action: string; observation: string }[]): string {
  const parts: string[] = [];
  for (const turn of turns) parts.push(canonicalForHashing(turn.action), "\u001f", canonicalForHashing(turn.observation), "\u001e");
  return parts.join("");
}

const WORD = new RegExp(`<(?:${PLACEHOLDERS.join("|")})>|[\\p{L}\\p{M}\\p{N}_]+`, "gu");

/**
 * The lower-cased words of (canonical) text: runs of Unicode letters, marks, digits and `_`, a
 * placeholder (`<timestamp>`) one word. Punctuation and whitespace separate words.
 */
export function hashWords(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}
