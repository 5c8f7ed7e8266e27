import { createHash } from "node:crypto";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { inputSize } from "../io/input-bytes.ts";
import { openDecompressed } from "../io/open-input.ts";
import { baseName, beside, listFolder, parentOf } from "../io/side-files.ts";
import { isTerminalSize, MAX_TERMINAL_SIZE, type RecordedEvent, terminalTrajectory } from "./asciicast.ts";
import { readHead } from "./json-array.ts";
import { type Companions, excerpt, type Reader, type ReaderOptions, type ReadItem, RecordLineError } from "./reader.ts";

const FORMAT = "script";

/*
 * util-linux `script` recordings (term-utils/script.c, script-playutils.c; script(1), scriptreplay(1)).
 *
 * The typescript (log) file: a header line, the raw bytes the session wrote, a footer line.
 *
 *   Script started on 2026-11-29 15:30:27+00:00 [COMMAND="bash -i" TERM="xterm-256color" TTY="/dev/pts/0" COLUMNS="100" LINES="30"]
 *   …raw output (and, with --log-io, input) bytes…
 *   \nScript done on 2026-11-29 15:30:30+00:00 [COMMAND_EXIT_CODE="3"]
 *
 * (`[<not executed on terminal>]` when script's stdin was not a terminal; older versions write
 * `Script started on <date>` alone.) scriptreplay skips the first line and takes the data from there.
 *
 * The timing file, classic (`script -t 2>timing`, `--timing=file`, `-T file` when only output is
 * logged): one `<delay seconds> <byte count>` line per write of the output. Advanced (multi-stream:
 * `-T file` with `--log-io`, or `--log-in` and `--log-out`, or `-m advanced`): `O <delay> <bytes>`,
 * `I <delay> <bytes>`, `S <delay> SIG<name> [ROWS=r COLS=c]`, `H <delay> <NAME> <value>` (START_TIME,
 * TERM, TTY, COLUMNS, LINES, SHELL, COMMAND, TIMING_LOG, OUTPUT_LOG, INPUT_LOG, DURATION, EXIT_CODE).
 * scriptreplay tells the two apart by the first character (a digit: classic). Delays are since the
 * previous entry; byte counts are bytes of the log they name, read in order (with --log-io, input
 * and output interleave in one file).
 */

/** The terminal size when neither the header nor the timing gives one (a VT100's). */
const DEFAULT_SIZE = { cols: 80, rows: 24 };
const STARTED = "Script started on ";
const DONE = "Script done on ";

interface TypescriptHeader {
  started: string;
  command?: string;
  term?: string;
  tty?: string;
  cols?: number;
  rows?: number;
  notOnTerminal?: boolean;
}

interface Typescript {
  header: TypescriptHeader;
  /** The recorded bytes between the header line and the footer. */
  data: Buffer;
  /** The footer: `COMMAND_EXIT_CODE`, or script's message (`max output size exceeded`). */
  exitCode?: number;
  doneMessage?: string;
  done?: string;
  /** No `Script done` line: the recorder was killed (or the file cut) before it wrote one. */
  cut: boolean;
}

type TimingEntry =
  | { kind: "O" | "I"; delay: number; bytes: number; line: number }
  | { kind: "S"; delay: number; signal: string; value?: string; line: number }
  | { kind: "H"; delay: number; name: string; value: string; line: number };

interface Timing {
  format: "classic" | "advanced";
  entries: TimingEntry[];
  headers: Map<string, string>;
  /** A last line cut while it was written (no line end, does not parse), left out. */
  truncatedLine?: number;
}

const NUMBER = String.raw`(\d+(?:\.\d+)?)`;
/** What script writes (`%ld.%06ld`), and the older `%f`: the sniff asks for it, the parser takes any decimal. */
const SNIFF_CLASSIC = /^\d+\.\d{6} \d+$/;
const SNIFF_MULTI = /^(?:[IO] \d+\.\d{6} \d+|S \d+\.\d{6} SIG[A-Z0-9]+(?: .*)?|H \d+\.\d{6} [A-Z_]+(?: .*)?)$/;
const CLASSIC_LINE = new RegExp(`^${NUMBER} (\\d+)$`);
const IO_LINE = new RegExp(`^([IO]) ${NUMBER} (\\d+)$`);
const SIGNAL_LINE = new RegExp(`^S ${NUMBER} (SIG[A-Z0-9]+|\\S+)(?: (.*))?$`);
const HEADER_LINE = new RegExp(`^H ${NUMBER} (\\S+)(?: (.*))?$`);

/** Is this line a timing line of either format? (For the sniff.) */
function isTimingLine(line: string): boolean {
  return CLASSIC_LINE.test(line) || IO_LINE.test(line) || SIGNAL_LINE.test(line) || HEADER_LINE.test(line);
}

/** The fields of the header line `Script started on <date> [KEY="value" …]`. */
export function parseStartLine(line: string): TypescriptHeader {
  const rest = line.slice(STARTED.length).replace(/\r$/, "");
  const open = rest.indexOf(" [");
  const started = (open === -1 ? rest : rest.slice(0, open)).trim();
  const fields = open === -1 ? "" : rest.slice(open + 2).replace(/\]$/, "");
  const field = (name: string) => new RegExp(`(?:^| )${name}="([^"]*)"`).exec(fields)?.[1];
  // COMMAND is written unescaped: it runs to the quote before the next field (or the end).
  const command = /^COMMAND="(.*?)"(?= TERM="| TTY="| COLUMNS="| <not executed on terminal>|$)/.exec(fields)?.[1];
  const cols = Number(field("COLUMNS"));
  const rows = Number(field("LINES"));
  const term = field("TERM");
  const tty = field("TTY");
  return {
    started,
    ...(command !== undefined ? { command } : {}),
    ...(term !== undefined ? { term } : {}),
    ...(tty !== undefined ? { tty } : {}),
    ...(isTerminalSize(cols) ? { cols } : {}),
    ...(isTerminalSize(rows) ? { rows } : {}),
    ...(fields.includes("<not executed on terminal>") ? { notOnTerminal: true } : {}),
  };
}

/** Splits a typescript into header, data and footer; `what` names it in errors. */
function parseTypescript(bytes: Buffer, what: string): Typescript {
  const lineEnd = bytes.indexOf(0x0a);
  const first = bytes.subarray(0, lineEnd === -1 ? bytes.length : lineEnd).toString("utf8");
  if (!first.startsWith(STARTED))
    throw new RecordLineError(`${what} line 1: expected "${STARTED}<date> […]", got ${JSON.stringify(excerpt(first))}`, "header");
  const header = parseStartLine(first);
  const start = lineEnd === -1 ? bytes.length : lineEnd + 1;
  // The footer: "\nScript done on … [COMMAND_EXIT_CODE="N"]\n" ends the file (script writes it on close).
  const footerAt = bytes.lastIndexOf(`\n${DONE}`);
  if (footerAt >= start - 1 && footerAt !== -1) {
    const footer = bytes
      .subarray(footerAt + 1)
      .toString("utf8")
      .replace(/\r?\n$/, "");
    if (!footer.includes("\n")) {
      const code = /\[COMMAND_EXIT_CODE="(-?\d+)"\]/.exec(footer)?.[1];
      const message = /\[<(.*)>\]$/.exec(footer)?.[1];
      const done = footer.slice(DONE.length).replace(/ \[.*$/, "");
      return {
        header,
        data: bytes.subarray(start, Math.max(start, footerAt)),
        done,
        ...(code !== undefined ? { exitCode: Number(code) } : {}),
        ...(message !== undefined ? { doneMessage: message } : {}),
        cut: false,
      };
    }
  }
  return { header, data: bytes.subarray(start), cut: true };
}

/** One session of a typescript: `script -a` appends each run's header, bytes and footer to the file. */
interface Session {
  typescript: Typescript;
  /** The session's own bytes (header to footer), where they start in the file, and the line there. */
  bytes: Buffer;
  offset: number;
  line: number;
}

/** A header as util-linux 2.35+ writes it (ISO date, [fields]), ending in script's own bare line feed, not a terminal's \r\n. */
const HEADER_AT = /^Script started on \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[^\n[]* \[[^\n]*\]\n/;

/** Does the "Script started on" at `at` follow a footer line (`\nScript done on …\n`, bare line feeds) that ends the session before it? */
function followsFooter(bytes: Buffer, at: number): boolean {
  if (bytes[at - 1] !== 0x0a) return false;
  const lineStart = bytes.lastIndexOf(0x0a, at - 2) + 1;
  if (lineStart < 1 || bytes[lineStart - 1] !== 0x0a) return false;
  const line = bytes.subarray(lineStart, at - 1).toString("utf8");
  return line.startsWith(DONE) && !line.endsWith("\r");
}

/**
 * The sessions of a typescript, in order. A session starts at the file's start, after a footer
 * (`script -a` appends the next run's header right after the last one's footer), or at a 2.35+
 * header line wherever it is (a run killed before its footer, then appended to). What a session
 * shows (`cat typescript` on its terminal) has the terminal's \r\n line ends, so is never taken for a header.
 */
function parseSessions(bytes: Buffer, what: string): Session[] {
  const starts = [0];
  const marker = Buffer.from(STARTED);
  for (let at = bytes.indexOf(marker, 1); at !== -1; at = bytes.indexOf(marker, at + 1))
    if (followsFooter(bytes, at) || HEADER_AT.test(bytes.subarray(at, at + 4096).toString("utf8"))) starts.push(at);
  let line = 1;
  return starts.map((offset, i) => {
    const end = starts[i + 1] ?? bytes.length;
    const own = bytes.subarray(offset, end);
    const session = { typescript: parseTypescript(own, what), bytes: own, offset, line };
    for (let at = own.indexOf(0x0a); at !== -1; at = own.indexOf(0x0a, at + 1)) line += 1;
    return session;
  });
}

/** Parses a timing file; a line that is neither format's fails the recording at that line. */
export function parseTiming(text: string, name: string): Timing {
  const lines = text.split("\n");
  const endsInNewline = text.endsWith("\n");
  if (endsInNewline) lines.pop();
  const firstText = lines.find((line) => line.trim() !== "") ?? "";
  const format = /^\d/.test(firstText) ? "classic" : "advanced";
  const entries: TimingEntry[] = [];
  const headers = new Map<string, string>();
  let truncatedLine: number | undefined;
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, "");
    const lineNo = i + 1;
    if (line.trim() === "") continue;
    const fail = (why: string, field: string) => {
      // The last line, without a line end: written when the recorder was killed.
      if (i === lines.length - 1 && !endsInNewline && entries.length > 0) {
        truncatedLine = lineNo;
        return;
      }
      throw new RecordLineError(`${name} line ${lineNo}: ${why}, got ${JSON.stringify(excerpt(line))}`, field, {
        lineNo,
        offset: 0,
        text: line,
      });
    };
    if (format === "classic") {
      const match = CLASSIC_LINE.exec(line);
      if (!match) {
        fail('expected "<delay seconds> <byte count>" (classic timing)', "timing.delay");
        continue;
      }
      entries.push({ kind: "O", delay: Number(match[1]), bytes: Number(match[2]), line: lineNo });
      continue;
    }
    const type = line[0];
    if (type === "O" || type === "I") {
      const match = IO_LINE.exec(line);
      if (!match) {
        fail(`expected "${type} <delay seconds> <byte count>"`, "timing.bytes");
        continue;
      }
      entries.push({ kind: type, delay: Number(match[2]), bytes: Number(match[3]), line: lineNo });
    } else if (type === "S") {
      const match = SIGNAL_LINE.exec(line);
      if (!match) {
        fail('expected "S <delay seconds> SIG<name> [info]"', "timing.signal");
        continue;
      }
      entries.push({
        kind: "S",
        delay: Number(match[1]),
        signal: match[2] as string,
        ...(match[3] ? { value: match[3] } : {}),
        line: lineNo,
      });
    } else if (type === "H") {
      const match = HEADER_LINE.exec(line);
      if (!match) {
        fail('expected "H <delay seconds> <NAME> <value>"', "timing.header");
        continue;
      }
      const value = match[3] ?? "";
      headers.set(match[2] as string, value);
      entries.push({ kind: "H", delay: Number(match[1]), name: match[2] as string, value, line: lineNo });
    } else fail("expected an entry of type I, O, S or H (advanced timing)", "timing.type");
  }
  return { format, entries, headers, ...(truncatedLine !== undefined ? { truncatedLine } : {}) };
}

/** An advanced timing's sessions (a new one at each `H START_TIME`, which script writes first); a classic timing is one. */
function timingSegments(timing: Timing): Timing[] {
  if (timing.format === "classic") return [timing];
  const segments: Timing[] = [];
  let current: Timing | undefined;
  for (const entry of timing.entries) {
    if (!current || (entry.kind === "H" && entry.name === "START_TIME" && current.entries.length > 0)) {
      current = { format: timing.format, entries: [], headers: new Map() };
      segments.push(current);
    }
    current.entries.push(entry);
    if (entry.kind === "H") current.headers.set(entry.name, entry.value);
  }
  const last = segments.at(-1);
  if (!last) return [timing];
  if (timing.truncatedLine !== undefined) last.truncatedLine = timing.truncatedLine;
  return segments;
}

/** The bytes of the log a timing's entries read (output; input too when both streams share the log, --log-io). */
function bytesRead(entries: TimingEntry[], shared: boolean): number {
  let sum = 0;
  for (const entry of entries) if (entry.kind === "O" || (entry.kind === "I" && shared)) sum += entry.bytes;
  return sum;
}

/**
 * A classic timing cut at the sessions' byte counts: it covers the last sessions from some one on
 * (all of them when it was appended too), each exactly — the last may be cut, and then takes the rest.
 * Undefined when no such cut exists.
 */
function splitClassic(timing: Timing, sessions: Session[]): (Timing | undefined)[] | undefined {
  for (let from = 0; from < sessions.length; from++) {
    const parts: Timing[] = [];
    let i = 0;
    for (const [k, session] of sessions.slice(from).entries()) {
      const part: Timing = { format: timing.format, entries: [], headers: new Map() };
      const length = session.typescript.data.length;
      const last = from + k === sessions.length - 1;
      let sum = 0;
      while (i < timing.entries.length && (sum < length || (last && session.typescript.cut))) {
        const entry = timing.entries[i] as TimingEntry;
        sum += entry.kind === "O" ? entry.bytes : 0;
        part.entries.push(entry);
        i += 1;
      }
      if (sum !== length && !(last && session.typescript.cut)) break;
      parts.push(part);
    }
    if (parts.length === sessions.length - from && i === timing.entries.length) {
      const lastPart = parts.at(-1);
      if (lastPart && timing.truncatedLine !== undefined) lastPart.truncatedLine = timing.truncatedLine;
      return [...Array<undefined>(from).fill(undefined), ...parts];
    }
  }
  return undefined;
}

/**
 * Each session's timing. `script -a` appends to the typescript but opens its timing file anew
 * ("w"), so a timing written by -T holds the last session's alone; one appended too (-t through a
 * pipe) holds them all: an advanced one with each session's H entries, a classic one continuing.
 * Timings go to the last sessions; the ones before get none. An advanced timing with more sessions
 * than the log is not its timing.
 */
function sessionTimings(timing: Timing | undefined, sessions: Session[], timingName: string): (Timing | undefined)[] {
  const before = (count: number) => sessions.slice(0, sessions.length - count).map(() => undefined);
  if (!timing) return before(0);
  if (timing.format === "classic") return (sessions.length > 1 ? splitClassic(timing, sessions) : undefined) ?? [...before(1), timing];
  const segments = timingSegments(timing);
  if (segments.length > sessions.length)
    throw new RecordLineError(
      `${timingName}: ${segments.length} sessions (H START_TIME entries), but the log holds ${sessions.length} (Script started lines): not its timing`,
      "timing.header",
    );
  return segments.length === 1 ? [...before(1), timing] : [...before(segments.length), ...segments];
}

// ---------- side files ----------

/** The timing file names tried beside a typescript `<name>` (stem: the name without its extension), in order. */
function timingNames(name: string): string[] {
  const stem = name.includes(".") ? name.slice(0, name.lastIndexOf(".")) : name;
  const names = [`${name}.timing`, `${name}.tm`, `${stem}.timing`, `${stem}.tm`, `${stem}.time`, `${stem}-timing`, `${stem}_timing`];
  // script's default log is `typescript`; its man pages pair it with `timingfile` (`script -t 2> timingfile`).
  if (name === "typescript") names.push("timing", "timingfile", "timing.log");
  return [...new Set(names)].filter((candidate) => candidate !== name);
}

/** The first lines of a small text file (the head of a side file). */
async function readText(path: string, maxBytes: number): Promise<string> {
  return (await readBytes(path, maxBytes)).toString("utf8");
}

async function readBytes(path: string, maxBytes: number): Promise<Buffer> {
  const { stream } = await openDecompressed(path);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new RecordLineError(`${baseName(path)} is over the ${maxBytes}-byte limit (input.max_line_bytes)`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** The `H` entries of an advanced timing's head (its OUTPUT_LOG, INPUT_LOG), or undefined for a classic one. */
async function timingHeaders(path: string): Promise<Map<string, string> | undefined> {
  let text: string;
  try {
    text = await readHead(path);
  } catch {
    return undefined;
  }
  if (/^\s*\d/.test(text)) return undefined;
  const headers = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = HEADER_LINE.exec(line.replace(/\r$/, ""));
    if (match) headers.set(match[2] as string, match[3] ?? "");
  }
  return headers;
}

interface SideFiles {
  timing?: string;
  /** The input log of a `--log-in` + `--log-out` recording (a file of its own). */
  inputLog?: string;
  /** The output log, when `path` is the input log of such a pair. */
  outputLog?: string;
  /** `path` is an input log recorded alone (`--log-in` without `--log-out`): its timing names it INPUT_LOG and no OUTPUT_LOG. */
  inputOnly?: boolean;
}

/**
 * A typescript's timing file (by name beside it; an advanced timing whose OUTPUT_LOG or INPUT_LOG
 * names another file is not its), and, for an advanced timing, the other log it names.
 */
async function sideFiles(path: string): Promise<SideFiles> {
  const dir = parentOf(path);
  const name = baseName(path);
  const listing = await listFolder(dir);
  const byName = timingNames(name).filter((candidate) => listing.files.has(candidate));
  const found = await matchTiming(dir, name, byName, true);
  if (found) return found;
  // An advanced timing names its logs (OUTPUT_LOG, INPUT_LOG): one elsewhere in the folder that names this file is its timing.
  const others = [...listing.files.keys()].filter((file) => !byName.includes(file) && file !== name && /\.(timing|tm)$|^timing/.test(file));
  return (await matchTiming(dir, name, others, false)) ?? {};
}

/** The most read of a log and a timing to tell whether the timing is the log's (found by content, not by name). */
const FIT_LIMIT = 256 << 20;

/**
 * Does this timing read this log (a timing found by the log name it holds, not by its own name)?
 * The log name alone is not enough: a later run with the same log name (and a timing of its own)
 * overwrote the log. Script's timing reads exactly the log's bytes: each of its sessions the bytes
 * of one of the log's last sessions (`sessionTimings`); a session cut short may differ.
 */
async function timingFits(log: string, timing: string, shared: boolean): Promise<boolean> {
  try {
    const sessions = parseSessions(await readBytes(log, FIT_LIMIT), baseName(log));
    const parsed = parseTiming(await readText(timing, FIT_LIMIT), baseName(timing));
    if (parsed.format === "classic") return splitClassic(parsed, sessions) !== undefined;
    const segments = timingSegments(parsed);
    if (segments.length > sessions.length) return false;
    const tail = sessions.slice(sessions.length - segments.length);
    return segments.every((segment, i) => {
      const { typescript } = tail[i] as Session;
      return bytesRead(segment.entries, shared) === typescript.data.length || (typescript.cut && i === segments.length - 1);
    });
  } catch (err) {
    if (err instanceof RecordLineError) return false;
    throw err;
  }
}

/** The first of `candidates` that is this log's timing: by name (a classic timing, or an advanced one naming no logs) or by the logs it names. */
async function matchTiming(dir: string, name: string, candidates: string[], byName: boolean): Promise<SideFiles | undefined> {
  const listing = await listFolder(dir);
  const own = (log: string | undefined) => log !== undefined && baseName(log) === name;
  for (const candidate of candidates) {
    const timing = beside(dir, candidate);
    const headers = await timingHeaders(timing);
    const output = headers?.get("OUTPUT_LOG");
    const input = headers?.get("INPUT_LOG");
    if (output === undefined && input === undefined) {
      if (byName) return { timing };
      continue;
    }
    if (own(output)) {
      const inputName = input !== undefined ? baseName(input) : undefined;
      const separate = inputName !== undefined && inputName !== name && listing.files.has(inputName);
      if (!byName && !(await timingFits(beside(dir, name), timing, inputName === name))) continue;
      return { timing, ...(separate ? { inputLog: beside(dir, inputName) } : {}) };
    }
    if (own(input) && output === undefined) return { timing, inputOnly: true };
    if (own(input) && output !== undefined && listing.files.has(baseName(output)))
      return { timing, outputLog: beside(dir, baseName(output)) };
  }
  return undefined;
}

/** The typescript a timing file belongs to: the log its OUTPUT_LOG names, else one whose timing it is by name. */
async function typescriptOfTiming(path: string): Promise<string | undefined> {
  const dir = parentOf(path);
  const name = baseName(path);
  const listing = await listFolder(dir);
  const headers = await timingHeaders(path);
  const named = headers?.get("OUTPUT_LOG") ?? headers?.get("INPUT_LOG");
  const candidates = named !== undefined ? [baseName(named)] : [...listing.files.keys()].filter((file) => timingNames(file).includes(name));
  for (const candidate of candidates) {
    if (!listing.files.has(candidate)) continue;
    const typescript = beside(dir, candidate);
    const sides = await sideFiles(typescript);
    if (sides.timing !== undefined && baseName(sides.timing) === name) return sides.outputLog ?? typescript;
  }
  return undefined;
}

/** Is the file a typescript (by its first bytes)? */
async function startsAsTypescript(path: string): Promise<boolean> {
  try {
    const { stream } = await openDecompressed(path);
    for await (const chunk of stream) {
      stream.destroy();
      return (chunk as Buffer).subarray(0, STARTED.length).toString("utf8") === STARTED;
    }
  } catch {
    return false;
  }
  return false;
}

// ---------- events ----------

interface Streams {
  events: RecordedEvent[];
  cols: number;
  rows: number;
  /** Bytes of a log the timing never reached (read as one last output event). */
  untimedBytes: number;
  /** The timing ran past the end of a cut typescript: its last entries were not written to the log. */
  timingPastCut: boolean;
  signals: number;
}

/** Decodes one stream's bytes chunk by chunk (a UTF-8 character may be split between two writes). */
class StreamText {
  private readonly decoder = new TextDecoder("utf-8");
  decode(bytes: Uint8Array): string {
    return this.decoder.decode(bytes, { stream: true });
  }
  end(): string {
    return this.decoder.decode();
  }
}

/**
 * Output with no timing: cut after every prompt-like ending (`$ `, `# `, `% `, `> `, `❯ `, `» `),
 * as a timing would have cut it where the shell stopped to wait, so the prompt splitter sees them.
 */
function untimedOutput(text: string): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  let from = 0;
  for (const match of text.matchAll(/[$#%>❯»] /gu)) {
    const end = match.index + match[0].length;
    events.push({ time: 0, code: "o", data: text.slice(from, end) });
    from = end;
  }
  if (from < text.length) events.push({ time: 0, code: "o", data: text.slice(from) });
  return events;
}

/** The events of a recording: the timing's entries over the logs' bytes, in order. */
function eventsOf(
  typescript: Typescript,
  input: Typescript | undefined,
  timing: Timing | undefined,
  names: { log: string; timing?: string; input?: string },
): Streams {
  const headerCols = Number(timing?.headers.get("COLUMNS"));
  const headerRows = Number(timing?.headers.get("LINES"));
  const cols = typescript.header.cols ?? (isTerminalSize(headerCols) ? headerCols : DEFAULT_SIZE.cols);
  const rows = typescript.header.rows ?? (isTerminalSize(headerRows) ? headerRows : DEFAULT_SIZE.rows);
  const streams: Streams = { events: [], cols, rows, untimedBytes: 0, timingPastCut: false, signals: 0 };
  const output = new StreamText();
  if (!timing) {
    streams.events = untimedOutput(output.decode(typescript.data) + output.end());
    return streams;
  }
  const inputText = new StreamText();
  // With --log-io both streams read one file; with --log-in + --log-out each its own.
  const cursors = { O: 0, I: 0 };
  const shared = input === undefined;
  let clock = 0;
  for (const entry of timing.entries) {
    clock += entry.delay;
    if (entry.kind === "H") continue;
    if (entry.kind === "S") {
      streams.signals += 1;
      const size = /ROWS=(\d+) COLS=(\d+)/.exec(entry.value ?? "");
      if (entry.signal === "SIGWINCH" && size) {
        const [winRows, winCols] = [Number(size[1]), Number(size[2])];
        if (!isTerminalSize(winRows) || !isTerminalSize(winCols))
          throw new RecordLineError(
            `${names.timing} line ${entry.line}: window size ROWS=${size[1]} COLS=${size[2]}: each must be 1 to ${MAX_TERMINAL_SIZE}`,
            "timing.signal",
          );
        streams.events.push({ time: clock, code: "r", data: `${winCols}x${winRows}` });
      }
      continue;
    }
    const log = entry.kind === "I" && input ? input : typescript;
    const key = shared ? "O" : entry.kind;
    const at = cursors[key];
    if (at + entry.bytes > log.data.length) {
      if (log.cut) {
        // The log was cut: the timing got further than the bytes written. Keep what was written.
        streams.timingPastCut = true;
        const rest = log.data.subarray(at);
        cursors[key] = log.data.length;
        if (rest.length > 0) push(streams, entry.kind, clock, (entry.kind === "I" ? inputText : output).decode(rest));
        continue;
      }
      const file = entry.kind === "I" && input ? names.input : names.log;
      throw new RecordLineError(
        `${names.timing} line ${entry.line}: ${entry.kind === "I" ? "input" : "output"} entry of ${entry.bytes} bytes runs past the end of ${file} ` +
          `(${log.data.length} bytes recorded, ${at} read before it)`,
        "timing.bytes",
      );
    }
    cursors[key] = at + entry.bytes;
    const text = (entry.kind === "I" ? inputText : output).decode(log.data.subarray(at, at + entry.bytes));
    push(streams, entry.kind, clock, text);
  }
  const rest = typescript.data.subarray(cursors.O);
  streams.untimedBytes = rest.length;
  const tail = output.decode(rest) + output.end();
  if (tail !== "") push(streams, "O", clock, tail);
  return streams;
}

function push(streams: Streams, kind: "O" | "I", time: number, data: string): void {
  if (data !== "") streams.events.push({ time, code: kind === "I" ? "i" : "o", data });
}

// ---------- the reader ----------

/** Output alone with no prompt and no command: nothing in it is an action. */
const NO_ACTION = {
  stage: "terminal-no-action",
  reason: "a script typescript with no input log, no repeated shell prompt and no recorded command: no action is known",
};

/** The refusal of an input log recorded alone: keystrokes with nothing they did. */
function inputOnly(name: string, evidence: string): RecordLineError {
  return new RecordLineError(
    `${name} is an input-only log (script --log-in without --log-out; ${evidence}): no output to observe; record with --log-io or --log-out`,
    "input",
  );
}

/**
 * Keystrokes, not a terminal's output: line ends, and none of them the \r\n a terminal writes
 * (Enter is a bare \r from a keyboard, a bare \n from a pipe; a pty's output line ends are \r\n).
 */
function looksLikeKeystrokes(sessions: Session[]): boolean {
  const data = sessions.map((session) => session.typescript.data);
  return data.some((bytes) => bytes.includes(0x0a) || bytes.includes(0x0d)) && !data.some((bytes) => bytes.includes("\r\n"));
}

/** A recording's files, read: the typescript's sessions, its timing, its input log's sessions. */
interface Recording {
  name: string;
  sessions: Session[];
  timing: Timing | undefined;
  timings: (Timing | undefined)[];
  inputSessions: Session[] | undefined;
  sides: SideFiles;
}

async function readFiles(path: string, options: ReaderOptions): Promise<Recording> {
  const name = baseName(path);
  const bytes = await readBytes(path, options.maxLineBytes);
  const head = bytes.subarray(0, STARTED.length).toString("utf8");
  if (head !== STARTED) {
    // A timing file given alone (its typescript not found beside it).
    const first = bytes.subarray(0, 200).toString("utf8").split("\n")[0] ?? "";
    if (isTimingLine(first.replace(/\r$/, "")))
      throw new RecordLineError(
        `${name} is a script timing file, and no typescript beside it is its log (by name: <log>.timing, <log>.tm, …; or the OUTPUT_LOG it names): ` +
          "give the typescript as the input; its timing is read with it",
        "timing",
      );
  }
  const sides = await sideFiles(path);
  if (sides.outputLog)
    throw new RecordLineError(
      `${name} is the input log (--log-in) of the recording whose output log is ${baseName(sides.outputLog)}: give that file as the input; this one is read with it`,
      "header",
    );
  const sessions = parseSessions(bytes, name);
  if (sides.inputOnly && sides.timing)
    throw inputOnly(name, `its timing ${baseName(sides.timing)} names it as INPUT_LOG and names no OUTPUT_LOG`);
  if (!sides.timing && looksLikeKeystrokes(sessions))
    throw inputOnly(name, "its line ends are keystrokes, a bare \\r or \\n, never a terminal's \\r\\n");
  const timing = sides.timing ? parseTiming(await readText(sides.timing, options.maxLineBytes), baseName(sides.timing)) : undefined;
  const inputSessions = sides.inputLog
    ? parseSessions(await readBytes(sides.inputLog, options.maxLineBytes), baseName(sides.inputLog))
    : undefined;
  const timings = sessionTimings(timing, sessions, sides.timing ? baseName(sides.timing) : name);
  return { name, sessions, timing, timings, inputSessions, sides };
}

/** One session of a recording as a trajectory. */
function readSession(path: string, recording: Recording, index: number): ReadItem {
  const { name, sessions, sides, inputSessions } = recording;
  const { typescript, bytes, offset, line } = sessions[index] as Session;
  const many = sessions.length > 1;
  const source: SourceRef = { uri: path, line, offset, format: FORMAT };
  // The input log's sessions pair with the output log's, the last with the last.
  const input = inputSessions?.[index - (sessions.length - inputSessions.length)]?.typescript;
  const timing = recording.timings[index];
  const streams = eventsOf(typescript, input, timing, {
    log: name,
    ...(sides.timing ? { timing: baseName(sides.timing) } : {}),
    ...(sides.inputLog ? { input: baseName(sides.inputLog) } : {}),
  });
  const command = typescript.header.command ?? timing?.headers.get("COMMAND");
  // The session's own bytes: a session keeps its id when more are appended after it.
  const hash = createHash("sha256").update(bytes);
  if (input) hash.update(input.data);
  if (index > 0) hash.update(`\0session ${index + 1}`);
  const exitCode = typescript.exitCode ?? (timing?.headers.has("EXIT_CODE") ? Number(timing.headers.get("EXIT_CODE")) : undefined);
  const cut = typescript.cut || input?.cut === true;
  const timed = timing !== undefined;
  return terminalTrajectory(
    { header: { cols: streams.cols, rows: streams.rows, ...(command !== undefined ? { command } : {}) }, events: streams.events },
    { id: `script-${hash.digest("hex").slice(0, 32)}`, source },
    NO_ACTION,
    {
      name: "script",
      meta: {
        started: typescript.header.started,
        ...(typescript.done !== undefined ? { done: typescript.done } : {}),
        ...(command !== undefined ? { command } : {}),
        ...(typescript.header.term !== undefined ? { term: typescript.header.term } : {}),
        ...(typescript.header.tty !== undefined ? { tty: typescript.header.tty } : {}),
        ...(typescript.header.notOnTerminal ? { notOnTerminal: true } : {}),
        ...(exitCode !== undefined && Number.isFinite(exitCode) ? { exitCode } : {}),
        ...(typescript.doneMessage !== undefined ? { doneMessage: typescript.doneMessage } : {}),
        timing: timing ? timing.format : "none",
        ...(sides.timing && timed ? { timingFile: baseName(sides.timing) } : {}),
        ...(sides.inputLog && input ? { inputLog: baseName(sides.inputLog) } : {}),
        ...(timing?.headers.has("INPUT_LOG") && !sides.inputLog ? { inputLog: name } : {}),
        ...(cut ? { cut: true } : {}),
        ...(streams.timingPastCut ? { timingPastCut: true } : {}),
        ...(timing?.truncatedLine !== undefined ? { timingTruncatedLine: timing.truncatedLine } : {}),
        ...(timing && streams.untimedBytes > 0 ? { untimedBytes: streams.untimedBytes } : {}),
        ...(streams.signals > 0 ? { signals: streams.signals } : {}),
        ...(many ? { session: index + 1, sessions: sessions.length } : {}),
      },
    },
  );
}

function quarantine(source: SourceRef, err: RecordLineError): ReadItem {
  // The reason names the file (typescript, timing or input log), its line and the field.
  const entry: QuarantineEntry = {
    source,
    stage: "read",
    ...(err.field ? { field: err.field } : {}),
    reason: err.message,
    ...(err.line?.text ? { excerpt: excerpt(err.line.text) } : {}),
  };
  return { kind: "quarantine", entry };
}

/**
 * util-linux `script` recordings: a typescript (`Script started on …`), with its timing file (classic
 * or advanced) and, for `--log-in` + `--log-out`, its input log read beside it as companions. Each
 * session of a typescript (`script -a` appends them, each with its header and footer) is one
 * trajectory (domain `terminal`), id `script-` + the first 32 hex digits of the sha256 of the
 * session's bytes (and the input log's data; and its number from the second on), source at its
 * header line; the timing goes to the sessions it reads (`sessionTimings`). An input log recorded
 * alone (`--log-in` without `--log-out`) holds no output and is refused. Turns are cut as asciicast's are
 * (`splitRecording`): input (`I` entries) up to Enter, else shell prompts in the output, else one
 * turn (the recorded COMMAND). A typescript without its `Script done` line was cut: what it holds
 * is read and `meta.script.cut` says so. A timing line that is neither format's, or byte counts
 * past the end of a finished log, quarantine the recording at that line and field.
 */
export const scriptReader: Reader = {
  name: FORMAT,
  domain: "terminal",
  description:
    "util-linux script recordings (typescript + classic or multi-stream timing): keystrokes up to Enter, else shell prompts → terminal output",

  sniff(head) {
    // "Script started on <date and time>", with or without the [fields] of util-linux 2.35+.
    if (/^\uFEFF?Script started on [^\n]*\d{1,2}:\d{2}/.test(head)) return true;
    // A timing file: its first lines (at most 8 whole ones) are all timing lines of one format.
    const lines = head.split("\n").slice(0, 9);
    if (!head.includes("\n")) return false;
    const whole = head.endsWith("\n") ? lines.filter((line) => line !== "") : lines.slice(0, -1);
    const probed = whole.slice(0, 8).map((line) => line.replace(/\r$/, ""));
    if (probed.length === 0) return false;
    const classic = /^\d/.test(probed[0] as string);
    return probed.every((line) => (classic ? SNIFF_CLASSIC : SNIFF_MULTI).test(line));
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    let recording: Recording;
    try {
      recording = await readFiles(path, options);
    } catch (err) {
      if (!(err instanceof RecordLineError)) throw err;
      yield quarantine({ uri: path, line: 1, offset: 0, format: FORMAT }, err);
      return;
    }
    // Each session (`script -a` appends them) is a trajectory of its own, or is quarantined alone, at its header.
    for (const [index, session] of recording.sessions.entries()) {
      try {
        yield readSession(path, recording, index);
      } catch (err) {
        if (!(err instanceof RecordLineError)) throw err;
        yield quarantine({ uri: path, line: session.line, offset: session.offset, format: FORMAT }, err);
      }
    }
  },

  async companions(path: string): Promise<Companions> {
    const own = await inputSize(path).catch(() => 0);
    const label = `script typescript ${baseName(path)}`;
    if (!(await startsAsTypescript(path))) return { dirs: [], files: [], bytes: own, label };
    const sides = await sideFiles(path);
    if (sides.outputLog) return { dirs: [], files: [], bytes: own, label };
    const files = [sides.timing, sides.inputLog].filter((file): file is string => file !== undefined);
    const sizes = await Promise.all(files.map((file) => inputSize(file).catch(() => 0)));
    return { dirs: [], files, bytes: sizes.reduce((sum, size) => sum + size, own), label };
  },

  async expand(path: string): Promise<string[] | undefined> {
    if (await startsAsTypescript(path)) {
      // The input log of a --log-in + --log-out pair stands for its output log.
      const sides = await sideFiles(path);
      return sides.outputLog ? [sides.outputLog] : undefined;
    }
    const typescript = await typescriptOfTiming(path);
    return typescript ? [typescript] : undefined;
  },
};
