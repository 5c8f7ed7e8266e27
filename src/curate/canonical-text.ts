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
const CLOCK = "\\d{1,2}:[0-5]\\d(?::[0-5]\\d(?:[.,]\\d{1,9})?)?(?:[ \\t]?[AaPp]\\.?[Mm]\\.?(?![A-Za-z]))?";
/** Characters that end a path component. */
const PATH_END = "/\\s\"'`<>:,;|()\\[\\]{}=";

/**
 * One alternation, tried left to right at each position (so earlier kinds win where two could
 * match). Each alternative is a named group; a `*_pre` group is text kept before the placeholder.
 * Most alternatives start with a lookbehind, which fails on the first character checked at most
 * positions, so the pass stays close to a plain scan.
 */
const ALTS = [
    // Temp dirs: the root and its first component (`/tmp/tmpab12_x9`, `/var/folders/xy/…/T/abc`);
    // the rest of the path is kept.
    `(?<tmp_path>(?<![\\w.~-])(?:(?:/private)?/var/folders/[^${PATH_END}]+/[^${PATH_END}]+/[A-Z]|/(?:var/)?tmp|/dev/shm)/[^${PATH_END}]+)`,
    // Dated times: `Jun  3 10:42`, `Tue Jun 3 10:42:01 UTC 2025`, `2025/06/03 10:42:01`,
    // `03/Jun/2025:10:42:01 +0000` (ISO 8601 is findVolatile's).
    `(?<date>(?<![\\w])(?:(?:${WEEKDAY},?[ \\t]+)?${MONTH}[ \\t]+\\d{1,2},?[ \\t]+(?:\\d{4}[ \\t]+)?${CLOCK}(?:[ \\t]+(?:[A-Z]{2,5}|[+-]\\d{4})(?![\\w]))?(?:[ \\t]+\\d{4}(?![\\w]))?|\\d{4}/\\d{2}/\\d{2}[ T]${CLOCK}|\\d{2}/${MONTH}/\\d{4}:\\d{2}:\\d{2}:\\d{2}(?:[ \\t][+-]\\d{4})?))`,
    // Clock times: a run of them separated by blanks (`10:42   0:01` in a ps row); replaced only
    // when one has seconds or AM/PM, or there are two (see `replaceClocks`).
    `(?<clocks>(?<![\\w.:/-])${CLOCK}(?:[ \\t]+${CLOCK})*(?![\\w:]|\\.\\d))`,
    // `up 2:17` (uptime, top).
    `(?<up_pre>(?<![\\w])up[ \\t]+(?:\\d+[ \\t]+days?,[ \\t]+)?)(?<up>\\d{1,2}:\\d{2})(?![\\w:])`,
    // Memory addresses and other 0x-prefixed long hex (`0x7ffd5e8c1a30`, Ethereum addresses).
    "(?<addr>(?<![\\w])0[xX][0-9a-fA-F]{6,}(?![\\w]))",
    // Hex ids: ≥7 hex digits with both a digit and a letter, one case (git shas, container ids).
    "(?<hex>(?<![0-9A-Za-z])(?:(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,}|(?=[0-9A-F]*[A-F])(?=[0-9A-F]*[0-9])[0-9A-F]{7,})(?![0-9A-Za-z]))",
    // Python tempfile names (`tmp` + 8 of [a-z0-9_]) and mktemp's default `tmp.XXXXXXXXXX`.
    "(?<tmp_name>(?<![A-Za-z0-9])tmp(?:[a-z0-9_]{8}(?![A-Za-z0-9_])|\\.[A-Za-z0-9]{10}(?![A-Za-z0-9])))",
    // mktemp template suffixes (`name.XXXXXX` → `name.k3J9aB`): 6-10 letters and digits after
    // `.` or `-`, with an upper case letter, a lower case letter and a digit.
    "(?<mktemp>(?<=[A-Za-z0-9_][.-])(?=[A-Za-z0-9]{0,9}[0-9])(?=[A-Za-z0-9]{0,9}[A-Z])(?=[A-Za-z0-9]{0,9}[a-z])[A-Za-z0-9]{6,10}(?![A-Za-z0-9]))",
    // Pids: `pid 1234`, `PID: 1234`, `pid=1234`, `(pid #1234)`.
    "(?<pid_pre>(?<![A-Za-z])[Pp][Ii][Dd][Ss]?[\"']?[ \\t]*[:=#]?[ \\t]*#?)(?<pid>\\d+)(?!\\d)",
    // … and a syslog process tag: `sshd[1234]:`.
    "(?<pid_tag>(?<=[A-Za-z][\\w.-]*\\[)\\d+(?=\\]:))",
    // Ports after a local or numeric host, or the host of a URL: `localhost:8080`,
    // `127.0.0.1:5432`, `[::1]:80`, `http://example.com:8000/`.
    "(?<port_host>(?<=(?:(?<![\\w.-])(?:localhost|\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3})|\\[[0-9a-fA-F:.]*\\]|://[^/\\s:@]+):)\\d{1,5}(?![\\w]))",
    // `port 8080`, `--port=8080`, `"port": 8080`, `PORT=8080`.
    "(?<port_pre>(?<![A-Za-z])[Pp][Oo][Rr][Tt][Ss]?[\"']?[ \\t]*[:=]?[ \\t]*)(?<port>\\d{2,5})(?!\\d)",
    // Durations: `0.23s`, `12ms`, `1.5 seconds`, `0m0.012s`, `1h2m3.5s`.
    "(?<duration>(?<![\\w.])(?:(?:\\d+h)?(?:\\d+m)?\\d+(?:\\.\\d+)?[ \\t]?(?:ns|us|µs|μs|ms|s)|\\d+(?:\\.\\d+)?[ \\t]?(?:nanoseconds?|microseconds?|milliseconds?|msecs?|secs?|seconds?|mins?|minutes?|hrs?|hours?))(?![\\w]))",
    // Transfer rates: `3.4 MB/s`, `12.5it/s`.
    "(?<rate>(?<![\\w.])\\d+(?:\\.\\d+)?[ \\t]?(?:[kKMGT]i?B|B|kB|bytes|it|items)/s(?![\\w]))",
];
const PATTERN = new RegExp(ALTS.join("|"), "g");
export const __PATTERN = PATTERN;
export const __ALTS = ALTS;

const CLOCK_IN_RUN = new RegExp(CLOCK, "g");

interface Groups {
  tmp_path?: string;
  date?: string;
  clocks?: string;
  up_pre?: string;
  addr?: string;
  hex?: string;
  tmp_name?: string;
  mktemp?: string;
  pid_pre?: string;
  pid_tag?: string;
  port_host?: string;
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
  if (g.tmp_path !== undefined || g.tmp_name !== undefined || g.mktemp !== undefined) return "<tmp>";
  if (g.date !== undefined) return "<timestamp>";
  if (g.clocks !== undefined) return replaceClocks(match);
  if (g.up_pre !== undefined) return `${g.up_pre}<duration>`;
  if (g.addr !== undefined) return "<addr>";
  if (g.hex !== undefined) return "<hex>";
  if (g.pid_pre !== undefined) return `${g.pid_pre}<pid>`;
  if (g.pid_tag !== undefined) return "<pid>";
  if (g.port_host !== undefined) return "<port>";
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
