import { createHash, type Hash } from "node:crypto";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { type Line, readLines } from "../io/read-lines.ts";
import {
  excerpt,
  firstLine,
  parseJsonLine,
  parseSniffedJson,
  type Reader,
  type ReaderOptions,
  type ReadItem,
  RecordLineError,
  refuseOversizedLine,
} from "./reader.ts";
import { describeJson } from "./record-helpers.ts";
import {
  CommandLines,
  choosePrompt,
  findEcho,
  newInputState,
  OutputScanner,
  promptShape,
  type StreamPosition,
  terminalKeys,
  visibleText,
} from "./terminal-stream.ts";

const FORMAT = "asciicast";

/**
 * What this reader leaves in `meta.terminal` for the terminal normalizer, which replays it through
 * a terminal emulator. Only output (`o`) and resize (`r`, data `COLSxROWS`) events are kept: they
 * are all a screen depends on.
 */
export type TerminalEvent = ["o" | "r", string];

/** `trajectory.meta.terminal`: the size the recording starts at and the output before the first turn. */
export interface TerminalRecordingMeta {
  cols: number;
  rows: number;
  events: TerminalEvent[];
}

/** `turn.meta.terminal`. */
export interface TerminalTurnMeta {
  /** Terminal size when the action was sent. */
  cols: number;
  rows: number;
  /** Output while the action was being typed (the shell's echo): replayed, not observed. */
  typing: TerminalEvent[];
  /** Output from the action until the next action starts: what the turn observes. */
  events: TerminalEvent[];
}

export interface RecordedEvent {
  /** Seconds since the start of the recording. */
  time: number;
  code: string;
  data: string;
}

interface Header {
  version: 1 | 2 | 3;
  cols: number;
  rows: number;
  command?: string;
  title?: string;
  timestamp?: number;
}

/** What the turn splitters read: the size the recording starts at, its command, its events. */
export interface SplitInput {
  header: Pick<Header, "cols" | "rows" | "command">;
  events: RecordedEvent[];
}

interface Recording {
  header: Header;
  events: RecordedEvent[];
  exitStatus?: string;
  /** The line number of a last event line cut off mid-way (the recorder was killed while writing it), left out. */
  truncatedLine?: number;
}

const ENTER = /\r\n|\r|\n/;
const RESIZE = /^(\d+)x(\d+)$/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isSize = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value > 0;

/**
 * The largest terminal side, in cells, a recording may have. The terminal normalizer replays it
 * in an emulator whose buffers grow with cols × rows: a corrupt `"width": 4294967296` or resize
 * to `7x99999999` would exhaust memory (or throw) instead of rendering anything.
 */
export const MAX_TERMINAL_SIZE = 1000;
export const isTerminalSize = (value: unknown): value is number => isSize(value) && value <= MAX_TERMINAL_SIZE;

/** A resize event's `COLSxROWS`, or undefined when it is malformed or over MAX_TERMINAL_SIZE. */
export function parseResize(data: string): { cols: number; rows: number } | undefined {
  const match = RESIZE.exec(data);
  if (!match) return undefined;
  const cols = Number(match[1]);
  const rows = Number(match[2]);
  return isTerminalSize(cols) && isTerminalSize(rows) ? { cols, rows } : undefined;
}

const SIZE_REASON = `expected a positive integer up to ${MAX_TERMINAL_SIZE}`;

/** Header of any version, or the reason it is not one. */
function parseHeader(value: unknown): Header {
  if (!isObject(value)) throw new RecordLineError("header is not a JSON object");
  const optional = {
    ...(typeof value.command === "string" ? { command: value.command } : {}),
    ...(typeof value.title === "string" ? { title: value.title } : {}),
    ...(typeof value.timestamp === "number" ? { timestamp: value.timestamp } : {}),
  };
  if (value.version === 1 || value.version === 2) {
    if (!isTerminalSize(value.width)) throw new RecordLineError(`width: ${SIZE_REASON}`, "width");
    if (!isTerminalSize(value.height)) throw new RecordLineError(`height: ${SIZE_REASON}`, "height");
    return { version: value.version, cols: value.width, rows: value.height, ...optional };
  }
  if (value.version === 3) {
    const term = value.term;
    if (!isObject(term)) throw new RecordLineError("term: expected an object with cols and rows", "term");
    if (!isTerminalSize(term.cols)) throw new RecordLineError(`term.cols: ${SIZE_REASON}`, "term.cols");
    if (!isTerminalSize(term.rows)) throw new RecordLineError(`term.rows: ${SIZE_REASON}`, "term.rows");
    return { version: 3, cols: term.cols, rows: term.rows, ...optional };
  }
  throw new RecordLineError(`version: expected 1, 2 or 3, got ${describeJson(value.version)}`, "version");
}

/** One `[time, code, data]` event line of v2/v3. */
function parseEventLine(line: Line, parsed = parseJsonLine(line.text)): [number, string, string] {
  if (!parsed.ok) throw new RecordLineError(`line ${line.lineNo}: ${parsed.reason}`, "events", line);
  const value = parsed.value;
  if (!Array.isArray(value) || value.length !== 3)
    throw new RecordLineError(`line ${line.lineNo}: an event is a [time, code, data] array`, "events", line);
  const [time, code, data] = value as unknown[];
  if (typeof time !== "number" || !Number.isFinite(time) || time < 0)
    throw new RecordLineError(`line ${line.lineNo}: event time must be a non-negative number`, "events", line);
  if (typeof code !== "string" || typeof data !== "string")
    throw new RecordLineError(`line ${line.lineNo}: event code and data must be strings`, "events", line);
  if (code === "r" && !parseResize(data))
    throw new RecordLineError(
      `line ${line.lineNo}: resize data must be COLSxROWS, each up to ${MAX_TERMINAL_SIZE}, got ${JSON.stringify(data)}`,
      "events",
      line,
    );
  return [time, code, data];
}

/** v1: one JSON object with `stdout: [[delay, data], ...]`. */
function parseV1(value: unknown, header: Header): Recording {
  const stdout = (value as Record<string, unknown>).stdout;
  if (!Array.isArray(stdout)) throw new RecordLineError("stdout: expected an array of [delay, data] frames", "stdout");
  const events: RecordedEvent[] = [];
  let time = 0;
  stdout.forEach((frame: unknown, i) => {
    const [delay, data] = Array.isArray(frame) ? (frame as unknown[]) : [];
    if (!Array.isArray(frame) || frame.length !== 2 || typeof delay !== "number" || !(delay >= 0) || typeof data !== "string")
      throw new RecordLineError(`stdout.${i}: expected a [delay, data] frame`, `stdout.${i}`);
    time += delay;
    events.push({ time, code: "o", data });
  });
  return { header, events };
}

/**
 * Reads the whole recording. v2/v3 stream line by line; v1 is a single JSON document (asciinema 1.x,
 * usually pretty-printed) and is parsed whole — v1 recordings are small, and the document is capped
 * at `maxLineBytes` like any record. The hash covers every line, so the id follows the content.
 */
async function readRecording(lines: AsyncGenerator<Line>, maxLineBytes: number, hash: Hash): Promise<Recording> {
  let header: Header | undefined;
  let document: string[] | undefined; // a v1 document whose first line is not JSON on its own
  let documentBytes = 0;
  const events: RecordedEvent[] = [];
  let exitStatus: string | undefined;
  let clock = 0;
  /** An event line that is not JSON: the recording's cut-off end if no event line follows it, else a hole. */
  let torn: { line: Line; error: RecordLineError } | undefined;
  for await (const line of lines) {
    refuseOversizedLine(line, maxLineBytes);
    hash.update(line.text).update("\n");
    if (document) {
      documentBytes += Buffer.byteLength(line.text) + 1;
      if (documentBytes > maxLineBytes)
        throw new RecordLineError(`the v1 document is over the ${maxLineBytes}-byte limit (input.max_line_bytes)`);
      document.push(line.text);
      continue;
    }
    if (line.text.trim() === "") continue;
    if (!header) {
      const parsed = parseJsonLine(line.text);
      if (!parsed.ok) {
        document = [line.text];
        documentBytes = Buffer.byteLength(line.text) + 1;
        continue;
      }
      header = parseHeader(parsed.value);
      if (header.version === 1) return parseV1(parsed.value, header);
      continue;
    }
    if (header.version === 3 && line.text.startsWith("#")) continue; // v3 comment line
    if (torn) throw torn.error;
    const json = parseJsonLine(line.text);
    if (!json.ok && line.text.startsWith("[")) {
      torn = { line, error: new RecordLineError(`line ${line.lineNo}: ${json.reason}`, "events", line) };
      continue;
    }
    const [time, code, data] = parseEventLine(line, json);
    clock = header.version === 3 ? clock + time : time; // v3 times are intervals, v2 times absolute
    if (code === "x") exitStatus = data;
    else events.push({ time: clock, code, data });
  }
  if (document) {
    const parsed = parseJsonLine(document.join("\n"));
    if (!parsed.ok) throw new RecordLineError(`line 1 is not a JSON header and the file is not one JSON document: ${parsed.reason}`);
    const v1Header = parseHeader(parsed.value);
    if (v1Header.version !== 1) throw new RecordLineError("a multi-line JSON document must be an asciicast v1 object", "version");
    return parseV1(parsed.value, v1Header);
  }
  if (!header) throw new RecordLineError("the file has no asciicast header");
  return {
    header,
    events,
    ...(exitStatus !== undefined ? { exitStatus } : {}),
    ...(torn !== undefined ? { truncatedLine: torn.line.lineNo } : {}),
  };
}

export interface Segmentation {
  before: TerminalEvent[];
  turns: Turn[];
  /** How the turns were cut (`meta.split`): keystrokes, markers, prompts, or one turn. */
  split: "keystrokes" | "markers" | "prompt" | "single-turn";
  /** For `prompt`: the prompt's shape (`promptShape`), as `meta.prompt`. */
  prompt?: string;
  /** Terminal-generated sequences taken out of the keystrokes (`terminalKeys`). */
  terminalReplies?: number;
  /** Commands sent whole whose echo was not found in the output after them. */
  unmatchedEchoes?: number;
}

function outputEvent(event: RecordedEvent): TerminalEvent | undefined {
  return event.code === "o" || event.code === "r" ? [event.code, event.data] : undefined;
}

function newTurn(
  action: string,
  size: { cols: number; rows: number },
  time: number,
  typing: TerminalEvent[],
): Turn & { meta: { terminal: TerminalTurnMeta } } {
  return { action, observation: "", meta: { time, terminal: { cols: size.cols, rows: size.rows, typing, events: [] } } };
}

/** Pasted text is text: its line breaks (a terminal pastes them as `\r`) read as `\n`. */
const pastedText = (text: string) => text.replace(/\r\n?/g, "\n");

/**
 * Turns from keystrokes. What the terminal sent by itself (replies to the program's queries, focus
 * reports, bracketed-paste markers: `terminalKeys`) is not a keystroke and is left out; an input
 * event that held nothing else is no input at all.
 *
 * At a shell (the normal screen), an Enter (`\r`, `\n` or `\r\n`) submits the line typed since
 * the previous Enter; a pasted text is part of the line, its line breaks included. A turn is one
 * command as the shell runs it (`CommandLines`): lines join while the command is incomplete (an
 * open quote, a here-document before its delimiter, a trailing `\`…), so a command is never cut
 * at its quoted line breaks; an Enter on an empty line submits nothing and makes no turn. Several
 * commands sent in one input event (tmux send-keys, an agent's keystrokes) are several turns.
 *
 * One convention for the echo, whether keys were typed one by one or sent whole: the shell's echo
 * of the command is the turn's `typing` (replayed, never observed), the output after it is the
 * turn's `events` (observed). Typed key by key, the echo arrives while typing; sent whole, it comes
 * after the input event, before the output, and is found there (`splitSentWhole`). Output after the
 * Enter belongs to the turn until the next keystroke. Keystrokes never sent are not a turn.
 *
 * While a full-screen program has the alternate screen (vim, less, htop, a TUI), every key acts at
 * once: each input event is a turn whose action is its keys as sent (Enter included, as `\r`) and
 * whose output runs to the next input, so the observation is the screen as it stood when the next
 * keys came. Keys sent before the program drew anything in answer to the previous ones join them.
 */
function turnsFromInput(recording: SplitInput): Segmentation | undefined {
  if (!recording.events.some((event) => event.code === "i")) return undefined;
  const size = { cols: recording.header.cols, rows: recording.header.rows };
  const input = newInputState();
  const output = new OutputScanner(input);
  const before: TerminalEvent[] = [];
  const turns: Turn[] = [];
  let current: TerminalEvent[] = before;
  let typed: string | undefined;
  let typing: TerminalEvent[] = [];
  const commands = new CommandLines();
  /** The last turn, while it is one of a full-screen program and nothing was drawn since its keys. */
  let openKeysTurn: Turn | undefined;
  /** Commands the last input event submitted, with the part of each it sent (whose echo follows it). */
  let batch: SentCommand[] = [];
  let unmatched = 0;
  const endBatch = () => {
    if (batch.length > 0) unmatched += splitSentWhole(batch);
    batch = [];
  };
  for (const event of recording.events) {
    const out = outputEvent(event);
    if (out) {
      if (event.code === "r") Object.assign(size, parseResize(event.data));
      else {
        output.feed(event.data, 0);
        openKeysTurn = undefined;
      }
      (typed === undefined && !commands.open ? current : typing).push(out);
      continue;
    }
    if (event.code !== "i") continue;
    const segments = terminalKeys(event.data, input);
    if (segments.length === 0) continue; // only what the terminal sent by itself
    endBatch();
    if (output.altScreen) {
      const keys = (typed ?? "") + segments.map((segment) => (segment.pasted ? pastedText(segment.text) : segment.text)).join("");
      if (openKeysTurn) openKeysTurn.action += keys;
      else {
        const turn = newTurn(keys, size, event.time, typing);
        turns.push(turn);
        current = turn.meta.terminal.events;
        openKeysTurn = turn;
      }
      typed = undefined;
      typing = [];
      continue;
    }
    openKeysTurn = undefined;
    /** What of the command being entered was there before this event (its echo is not in this event's output). */
    let prior = [commands.pendingText, typed].filter((part) => part !== undefined).join("\n");
    for (const segment of segments) {
      if (segment.pasted) {
        typed = (typed ?? "") + pastedText(segment.text);
        continue;
      }
      segment.text.split(ENTER).forEach((keys, i) => {
        if (i > 0) {
          const command = commands.push(typed ?? "");
          typed = undefined;
          if (command !== undefined) {
            const turn = newTurn(command, size, event.time, typing);
            turns.push(turn);
            current = turn.meta.terminal.events;
            typing = [];
            const sent = command.length > prior.length ? command.slice(prior.length).replace(/^\n/, "") : "";
            batch.push({ turn, sent, atStart: batch.length === 0 });
            prior = "";
          } else if (!commands.open) typing = []; // an empty line: its output is the previous turn's
        }
        if (keys !== "") typed = (typed ?? "") + keys;
      });
    }
  }
  endBatch();
  const rest = commands.flush();
  if (rest !== undefined && typed === undefined) {
    // The recording ended inside an unfinished command (an open quote, a here-document): it was sent.
    const turn = newTurn(rest, size, recording.events.at(-1)?.time ?? 0, typing);
    turns.push(turn);
  }
  if (turns.length === 0) return undefined;
  return { before, turns, split: "keystrokes", terminalReplies: input.replies, ...(unmatched > 0 ? { unmatchedEchoes: unmatched } : {}) };
}

/** A command submitted by an input event: its turn, the part of it the event sent, whether it is the event's first. */
export interface SentCommand {
  turn: Turn & { meta: { terminal: TerminalTurnMeta } };
  sent: string;
  atStart: boolean;
}

/** Echoes not found in a row after which the rest of a batch is not searched for (each search reads the whole output). */
const MAX_ECHO_MISSES = 3;

/** Splits output events at positions (chunk index, offset); chunk index = events.length is the end. */
function cutEvents(events: TerminalEvent[], cuts: [number, number][]): TerminalEvent[][] {
  const parts: TerminalEvent[][] = [[]];
  let cut = 0;
  events.forEach((event, index) => {
    let from = 0;
    while (cut < cuts.length && (cuts[cut] as [number, number])[0] === index) {
      const offset = (cuts[cut] as [number, number])[1];
      if (event[0] === "o" && offset > from) (parts.at(-1) as TerminalEvent[]).push(["o", event[1].slice(from, offset)]);
      from = Math.max(from, offset);
      parts.push([]);
      cut += 1;
    }
    if (event[0] === "r") (parts.at(-1) as TerminalEvent[]).push(event);
    else if (from < event[1].length) (parts.at(-1) as TerminalEvent[]).push(["o", event[1].slice(from)]);
  });
  while (parts.length <= cuts.length) parts.push([]);
  return parts;
}

/**
 * The output after an input event that sent commands whole, shared out among their turns: each
 * command's echo (the shell's prompt before it stays with the turn before) becomes its turn's
 * typing, the output after the echo its events (`findEcho`). Returns how many echoes were not found
 * (their output stays where it was).
 */
export function splitSentWhole(batch: SentCommand[]): number {
  const last = batch.at(-1)?.turn;
  if (!last) return 0;
  const events = [...last.meta.terminal.events];
  const view = visibleText(events.map((event) => (event[0] === "o" ? event[1] : "")));
  const raw = (p: number): [number, number] => view.at[p] ?? [events.length, 0];
  /** Where each part of the output starts (in view.text) and whose typing or events it goes to. */
  let parts: { at: number; to: TerminalEvent[] }[] = [];
  let from = 0;
  let unmatched = 0;
  let misses = 0; // consecutive: past a few, the output is not the echoes (a program read the lines), stop searching
  batch.forEach((command, k) => {
    const search = command.sent !== "" && misses < MAX_ECHO_MISSES;
    const echo = search ? findEcho(view, command.sent, from, command.atStart && parts.length === 0) : undefined;
    if (!echo) {
      if (command.sent !== "") unmatched += 1;
      if (search) misses += 1;
      return;
    }
    misses = 0;
    const terminal = command.turn.meta.terminal;
    if (parts.length === 0) parts = k === 0 ? [] : [{ at: 0, to: (batch[k - 1] as SentCommand).turn.meta.terminal.events }];
    parts.push({ at: parts.length === 0 ? 0 : echo[0], to: terminal.typing }, { at: echo[1], to: terminal.events });
    from = echo[1];
  });
  if (parts.length === 0) return unmatched;
  last.meta.terminal.events.length = 0;
  cutEvents(
    events,
    parts.slice(1).map((part) => raw(part.at)),
  ).forEach((piece, i) => {
    (parts[i] as (typeof parts)[number]).to.push(...piece);
  });
  return unmatched;
}

/** Turns from markers: each labelled `m` event's label is the action, the output up to the next such marker its observation. */
function turnsFromMarkers(recording: SplitInput): Segmentation | undefined {
  if (!recording.events.some((event) => event.code === "m" && event.data.trim() !== "")) return undefined;
  const size = { cols: recording.header.cols, rows: recording.header.rows };
  const before: TerminalEvent[] = [];
  const turns: Turn[] = [];
  let current = before;
  for (const event of recording.events) {
    const output = outputEvent(event);
    if (output) {
      if (event.code === "r") Object.assign(size, parseResize(event.data));
      current.push(output);
    } else if (event.code === "m" && event.data.trim() !== "") {
      // A marker without a label names no action: the output after it stays with the turn before.
      const turn = newTurn(event.data, size, event.time, []);
      turns.push(turn);
      current = turn.meta.terminal.events;
    }
  }
  return { before, turns, split: "markers" };
}

/** The output events between two positions (an event cut at an offset contributes its part). */
function sliceEvents(events: RecordedEvent[], from: StreamPosition, to: StreamPosition | undefined): TerminalEvent[] {
  const sliced: TerminalEvent[] = [];
  const last = to ?? { index: events.length, offset: 0 };
  for (let index = from.index; index <= last.index && index < events.length; index++) {
    const event = events[index] as RecordedEvent;
    const start = index === from.index ? from.offset : 0;
    const end = index === last.index ? last.offset : event.data.length;
    if (event.code === "r") {
      if (index < last.index) sliced.push(["r", event.data]);
    } else if (end > start) sliced.push(["o", event.data.slice(start, end)]);
  }
  return sliced;
}

/**
 * Turns from shell prompts, for recordings of output only (`asciinema rec` without `--stdin`).
 * A prompt is text left of the cursor when an output event ends (the shell has written it and
 * waits for keys) that ends like one (`$ `, `# `, `% `, `> `, `>>> `, `❯ `, `» `); the prompt is the
 * shape (`promptShape`: paths and numbers generalized) seen on the most lines, at least two. Each
 * line that showed it and then ended is a turn: the action is the rest of the line as it finally
 * read (the command's echo, with backspaces and erasures applied), the echo is the turn's typing,
 * and its events run from the line break to the next prompt, which they include — as with
 * keystrokes. Output before the first prompt, and the prompt, come before the first turn.
 * Lines drawn on the alternate screen are never prompts.
 */
function turnsFromPrompts(recording: SplitInput): Segmentation | undefined {
  const outputs = recording.events.filter((event) => event.code === "o" || event.code === "r");
  const scanner = new OutputScanner(undefined, true);
  outputs.forEach((event, index) => {
    if (event.code === "o") scanner.feed(event.data, index);
  });
  const prompt = choosePrompt(scanner.lines, scanner.openCandidates);
  if (prompt === undefined) return undefined;
  const prompts = scanner.lines.flatMap((line) => {
    const candidate = line.candidates.filter((c) => promptShape(c.text) === prompt).at(-1); // the last redraw before the keys
    return candidate ? [{ candidate, line }] : [];
  });
  const first = prompts[0];
  if (!first) return undefined;
  const sizes = [{ cols: recording.header.cols, rows: recording.header.rows }];
  for (const event of outputs)
    sizes.push(event.code === "r" ? (parseResize(event.data) ?? (sizes.at(-1) as Size)) : (sizes.at(-1) as Size));
  const afterPrompt = (index: number): StreamPosition => ({ index: index + 1, offset: 0 });
  const turns = prompts.map(({ candidate, line }, i): Turn => {
    const next = prompts[i + 1];
    const action = (line.text.startsWith(candidate.text) ? line.text.slice(candidate.text.length) : line.text).trimEnd();
    const size = sizes[line.lineBreak.index] as Size;
    const typing = sliceEvents(outputs, afterPrompt(candidate.index), line.lineBreak);
    const turn = newTurn(action, size, (outputs[line.lineBreak.index] as RecordedEvent).time, typing);
    turn.meta.terminal.events = sliceEvents(outputs, line.lineBreak, next ? afterPrompt(next.candidate.index) : undefined);
    return turn;
  });
  return { before: sliceEvents(outputs, { index: 0, offset: 0 }, afterPrompt(first.candidate.index)), turns, split: "prompt", prompt };
}

type Size = { cols: number; rows: number };

/** Nothing to cut at: the whole recording is one turn whose action is the recorded command (or ""). */
function singleTurn(recording: SplitInput): Segmentation {
  const { header } = recording;
  const turn = newTurn(header.command ?? "", { cols: header.cols, rows: header.rows }, 0, []);
  for (const event of recording.events) {
    const output = outputEvent(event);
    if (output) turn.meta.terminal.events.push(output);
  }
  return { before: [], turns: [turn], split: "single-turn" };
}

/**
 * A recording of output alone (no keystrokes, no labelled marker, no shell prompt that repeats, no
 * recorded command) shows what happened but not what was done: nothing in it is an action.
 */
const NO_ACTION = {
  stage: "terminal-no-action",
  reason:
    "an asciicast recording with no keystrokes, no labelled markers, no repeated shell prompt and no recorded command: no action is known",
};

/**
 * Turns of a terminal recording by the first rule that applies: keystrokes, else labelled markers,
 * else shell prompts (output only), else one turn. Shared with the other terminal recorders' readers (script).
 */
export function splitRecording(recording: SplitInput): Segmentation {
  return turnsFromInput(recording) ?? turnsFromMarkers(recording) ?? turnsFromPrompts(recording) ?? singleTurn(recording);
}

/**
 * A terminal recording as a trajectory (domain `terminal`): its turns cut by `splitRecording`;
 * `meta.terminal` (the size it starts at and the output before the first turn), `meta.split`,
 * `meta.prompt`; the `terminal-no-action` read filter (`noAction`) when nothing in it is an action
 * (one turn and no recorded command); and the recorder's own notes as `meta[format.name]`, the
 * splitter's `terminalReplies` and `unmatchedEchoes` after them. Shared by the terminal recorders'
 * readers (asciicast, script), so their trajectories have one shape.
 */
export function terminalTrajectory(
  recording: SplitInput,
  at: { id: string; source: SourceRef },
  noAction: { stage: string; reason: string },
  format: { name: string; meta: Record<string, unknown> },
): ReadItem {
  const { header } = recording;
  const { before, turns, split, prompt, terminalReplies, unmatchedEchoes } = splitRecording(recording);
  const terminal: TerminalRecordingMeta = { cols: header.cols, rows: header.rows, events: before };
  return {
    kind: "trajectory",
    trajectory: {
      id: at.id,
      domain: "terminal",
      source: at.source,
      turns,
      meta: {
        terminal,
        split,
        ...(prompt !== undefined ? { prompt } : {}),
        ...(split === "single-turn" && header.command === undefined ? { read_filter: noAction } : {}),
        [format.name]: {
          ...format.meta,
          ...(terminalReplies ? { terminalReplies } : {}),
          ...(unmatchedEchoes ? { unmatchedEchoes } : {}),
        },
      },
    },
  };
}

function toTrajectory(recording: Recording, source: SourceRef, id: string): ReadItem {
  const { header } = recording;
  return terminalTrajectory(recording, { id, source }, NO_ACTION, {
    name: "asciicast",
    meta: {
      version: header.version,
      ...(header.title !== undefined ? { title: header.title } : {}),
      ...(header.command !== undefined ? { command: header.command } : {}),
      ...(header.timestamp !== undefined ? { timestamp: header.timestamp } : {}),
      ...(recording.exitStatus !== undefined ? { exitStatus: recording.exitStatus } : {}),
      ...(recording.truncatedLine !== undefined ? { truncatedLine: recording.truncatedLine } : {}),
    },
  });
}

/**
 * asciinema recordings, v1, v2 and v3. One file is one recording is one trajectory (domain
 * `terminal`); its id is `asciicast-` + the first 32 hex digits of the sha256 of the decompressed
 * content, so it survives renames and recompression. A turn is, in order of preference: the
 * keystrokes up to Enter (each key event while a full-screen program shows; terminal replies left
 * out), a marker, a shell prompt's command line (output-only recordings), or the whole recording;
 * `meta.split` says which (`keystrokes`, `markers`, `prompt` with `meta.prompt`, `single-turn`).
 * The raw output is kept in `meta.terminal` for the terminal normalizer, which renders what the
 * screen showed. A recording
 * with any malformed line is quarantined whole, at that line: a recording with a hole is not a
 * faithful trajectory. The one exception is a last event line cut off mid-way (not JSON, nothing
 * after it: the recorder was killed while writing it): the events before it are the recording,
 * and the cut line's number is `meta.asciicast.truncatedLine`. Events are held in memory one recording at a time.
 */
export const asciicastReader: Reader = {
  name: FORMAT,
  domain: "terminal",
  description: "asciinema recordings (asciicast v1, v2, v3): keystrokes up to Enter (or markers, or shell prompts) → terminal output",

  sniff(head) {
    const line = firstLine(head);
    const parsed = parseSniffedJson(line);
    if (parsed.ok) {
      const value = parsed.value;
      if (!isObject(value)) return false;
      if (value.version === 2) return isSize(value.width) && isSize(value.height);
      if (value.version === 3) return isObject(value.term);
      return value.version === 1 && Array.isArray(value.stdout);
    }
    // A pretty-printed v1 document: its first line is just "{".
    return line.trim() === "{" && /"version"\s*:\s*1\s*[,}]/.test(head) && /"stdout"\s*:\s*\[/.test(head);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { stream } = await openDecompressed(path);
    const lines = readLines(stream, options.maxLineBytes);
    const hash = createHash("sha256");
    const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
    let recording: Recording;
    try {
      recording = await readRecording(lines, options.maxLineBytes, hash);
    } catch (err) {
      if (!(err instanceof RecordLineError)) throw err;
      stream.destroy();
      const where = err.line ? { ...source, line: err.line.lineNo, offset: err.line.offset } : source;
      const entry: QuarantineEntry = {
        source: where,
        stage: "read",
        ...(err.field ? { field: err.field } : {}),
        reason: err.message,
        ...(err.line?.text ? { excerpt: excerpt(err.line.text) } : {}),
      };
      yield { kind: "quarantine", entry };
      return;
    }
    yield toTrajectory(recording, source, `asciicast-${hash.digest("hex").slice(0, 32)}`);
  },
};
