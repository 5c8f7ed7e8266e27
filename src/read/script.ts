import { createHash } from "node:crypto";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { inputSize } from "../io/input-bytes.ts";
import { openDecompressed } from "../io/open-input.ts";
import { baseName, beside, listFolder, parentOf } from "../io/side-files.ts";
import { isTerminalSize, MAX_TERMINAL_SIZE, type RecordedEvent, splitRecording, type TerminalRecordingMeta } from "./asciicast.ts";
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
      return { timing, ...(separate ? { inputLog: beside(dir, inputName) } : {}) };
    }
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

async function readRecording(path: string, options: ReaderOptions): Promise<ReadItem> {
  const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
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
  const typescript = parseTypescript(bytes, name);
  const timing = sides.timing ? parseTiming(await readText(sides.timing, options.maxLineBytes), baseName(sides.timing)) : undefined;
  const input = sides.inputLog
    ? parseTypescript(await readBytes(sides.inputLog, options.maxLineBytes), baseName(sides.inputLog))
    : undefined;
  const streams = eventsOf(typescript, input, timing, {
    log: name,
    ...(sides.timing ? { timing: baseName(sides.timing) } : {}),
    ...(sides.inputLog ? { input: baseName(sides.inputLog) } : {}),
  });
  const command = typescript.header.command ?? timing?.headers.get("COMMAND");
  const segmentation = splitRecording({
    header: { cols: streams.cols, rows: streams.rows, ...(command !== undefined ? { command } : {}) },
    events: streams.events,
  });
  const { before, turns, split, prompt, terminalReplies, unmatchedEchoes } = segmentation;
  const terminal: TerminalRecordingMeta = { cols: streams.cols, rows: streams.rows, events: before };
  const hash = createHash("sha256").update(bytes);
  if (input) hash.update(input.data);
  const exitCode = typescript.exitCode ?? (timing?.headers.has("EXIT_CODE") ? Number(timing.headers.get("EXIT_CODE")) : undefined);
  const cut = typescript.cut || input?.cut === true;
  return {
    kind: "trajectory",
    trajectory: {
      id: `script-${hash.digest("hex").slice(0, 32)}`,
      domain: "terminal",
      source,
      turns,
      meta: {
        terminal,
        split,
        ...(prompt !== undefined ? { prompt } : {}),
        ...(split === "single-turn" && command === undefined ? { read_filter: NO_ACTION } : {}),
        script: {
          started: typescript.header.started,
          ...(typescript.done !== undefined ? { done: typescript.done } : {}),
          ...(command !== undefined ? { command } : {}),
          ...(typescript.header.term !== undefined ? { term: typescript.header.term } : {}),
          ...(typescript.header.tty !== undefined ? { tty: typescript.header.tty } : {}),
          ...(typescript.header.notOnTerminal ? { notOnTerminal: true } : {}),
          ...(exitCode !== undefined && Number.isFinite(exitCode) ? { exitCode } : {}),
          ...(typescript.doneMessage !== undefined ? { doneMessage: typescript.doneMessage } : {}),
          timing: timing ? timing.format : "none",
          ...(sides.timing ? { timingFile: baseName(sides.timing) } : {}),
          ...(sides.inputLog ? { inputLog: baseName(sides.inputLog) } : {}),
          ...(timing?.headers.has("INPUT_LOG") && !sides.inputLog ? { inputLog: name } : {}),
          ...(cut ? { cut: true } : {}),
          ...(streams.timingPastCut ? { timingPastCut: true } : {}),
          ...(timing?.truncatedLine !== undefined ? { timingTruncatedLine: timing.truncatedLine } : {}),
          ...(timing && streams.untimedBytes > 0 ? { untimedBytes: streams.untimedBytes } : {}),
          ...(streams.signals > 0 ? { signals: streams.signals } : {}),
          ...(terminalReplies ? { terminalReplies } : {}),
          ...(unmatchedEchoes ? { unmatchedEchoes } : {}),
        },
      },
    },
  };
}

/**
 * util-linux `script` recordings: a typescript (`Script started on …`), with its timing file (classic
 * or advanced) and, for `--log-in` + `--log-out`, its input log read beside it as companions. One
 * typescript is one trajectory (domain `terminal`), id `script-` + the first 32 hex digits of the
 * sha256 of its bytes (and the input log's data). Turns are cut as asciicast's are
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
    try {
      yield await readRecording(path, options);
    } catch (err) {
      if (!(err instanceof RecordLineError)) throw err;
      // The reason names the file (typescript, timing or input log), its line and the field.
      const entry: QuarantineEntry = {
        source: { uri: path, line: 1, offset: 0, format: FORMAT },
        stage: "read",
        ...(err.field ? { field: err.field } : {}),
        reason: err.message,
        ...(err.line?.text ? { excerpt: excerpt(err.line.text) } : {}),
      };
      yield { kind: "quarantine", entry };
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
