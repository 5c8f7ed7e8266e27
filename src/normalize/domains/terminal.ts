import xterm from "@xterm/headless";
import { RecordError } from "../../core/errors.ts";
import type { Trajectory, Turn } from "../../core/trajectory.ts";
import {
  isTerminalSize,
  MAX_TERMINAL_SIZE,
  parseResize,
  type TerminalEvent,
  type TerminalRecordingMeta,
  type TerminalTurnMeta,
} from "../../read/asciicast.ts";
import { type Counters, count, type DomainNormalizer } from "../normalizer.ts";

// @xterm/headless is CommonJS; under Node ESM its exports arrive on the default import.
const { Terminal } = xterm;
type Terminal = InstanceType<typeof Terminal>;
type Marker = NonNullable<ReturnType<Terminal["registerMarker"]>>;

/**
 * Lines of history the emulator keeps. A turn that prints more than this loses its head (counted
 * as `terminal.scrollback_overflow`); the per-domain size cap would cut such an observation anyway.
 */
export const SCROLLBACK_LINES = 10_000;

function isEventList(value: unknown): value is TerminalEvent[] {
  return (
    Array.isArray(value) &&
    value.every(
      (event) =>
        Array.isArray(event) &&
        event.length === 2 &&
        typeof event[1] === "string" &&
        (event[0] === "o" || (event[0] === "r" && parseResize(event[1]) !== undefined)),
    )
  );
}

/** The recording a reader left in `meta.terminal`, undefined when there is none (observations already text). */
function recordingOf(trajectory: Trajectory): TerminalRecordingMeta | undefined {
  const terminal = trajectory.meta?.terminal;
  if (terminal === undefined) return undefined;
  const { cols, rows, events } = terminal as Partial<TerminalRecordingMeta>;
  if (!isTerminalSize(cols) || !isTerminalSize(rows) || !isEventList(events))
    throw new RecordError(`meta.terminal: expected {cols, rows, events}, sizes up to ${MAX_TERMINAL_SIZE}`, "meta.terminal");
  return { cols, rows, events };
}

function turnStreamOf(turn: Turn, index: number): TerminalTurnMeta {
  const { cols, rows, typing, events } = (turn.meta?.terminal ?? {}) as Partial<TerminalTurnMeta>;
  if (!isTerminalSize(cols) || !isTerminalSize(rows) || !isEventList(typing) || !isEventList(events))
    throw new RecordError(
      `turns.${index}.meta.terminal: expected {cols, rows, typing, events}, sizes up to ${MAX_TERMINAL_SIZE}`,
      `turns.${index}.meta.terminal`,
    );
  return { cols, rows, typing, events };
}

/**
 * The largest number a CSI sequence may carry. xterm.js carries out a count one step at a time
 * (scroll up n lines, insert n lines, repeat the last character n times), so one `ESC[999999999S`
 * in a corrupt recording takes minutes. No program asks for more than the screen plus its
 * scrollback, so larger parameters are lowered to that before the emulator sees them.
 */
export const MAX_CSI_PARAM = SCROLLBACK_LINES + MAX_TERMINAL_SIZE;

/**
 * Lowers CSI parameters over MAX_CSI_PARAM in a stream of output chunks. A sequence may be split
 * across chunks, so the scanner's state carries over, and a parameter's digits are held back until
 * the parameter ends (the emulator does nothing with an unfinished sequence either).
 */
class CsiParamClamp {
  private state: "text" | "escape" | "csi" = "text";
  private digits = "";

  apply(data: string, counters: Counters): string {
    if (this.state === "text" && !data.includes("\u001b") && !data.includes("\u009b")) return data;
    let out = "";
    let from = 0; // start of the text not yet copied to `out`
    for (let i = 0; i < data.length; i++) {
      const c = data.charCodeAt(i);
      if (this.state === "csi" && c >= 0x30 && c <= 0x39) {
        out += data.slice(from, i);
        this.digits += data[i];
        if (this.digits.length > 12) this.digits = String(MAX_CSI_PARAM + 1); // already over; keep it short
        from = i + 1;
        continue;
      }
      if (this.digits !== "") {
        out += data.slice(from, i) + this.flushDigits(counters);
        from = i;
      }
      // ESC [ or the 8-bit CSI opens a sequence; its final byte, CAN or SUB ends it.
      const ends = (c >= 0x40 && c <= 0x7e) || c === 0x18 || c === 0x1a;
      if (c === 0x1b) this.state = "escape";
      else if (c === 0x9b) this.state = "csi";
      else if (this.state === "escape") this.state = c === 0x5b ? "csi" : "text";
      else if (this.state === "csi" && ends) this.state = "text";
    }
    return out + data.slice(from);
  }

  private flushDigits(counters: Counters): string {
    const digits = this.digits;
    this.digits = "";
    if (Number(digits) <= MAX_CSI_PARAM) return digits;
    count(counters, "terminal.clamped_sequence_params");
    return String(MAX_CSI_PARAM);
  }
}

/** Writes output in order and honours resizes; resolves once the emulator has parsed all of it. */
async function play(terminal: Terminal, clamp: CsiParamClamp, events: TerminalEvent[], counters: Counters): Promise<void> {
  let parsed: Promise<void> = Promise.resolve();
  for (const [code, data] of events) {
    if (code === "o") {
      // Writes are queued and parsed in order; only the last callback needs waiting for.
      const output = clamp.apply(data, counters);
      parsed = new Promise((resolve) => terminal.write(output, resolve));
      continue;
    }
    await parsed; // a resize applies at once, so the output before it must be parsed first
    const size = parseResize(data);
    if (size) terminal.resize(size.cols, size.rows);
    count(counters, "terminal.resizes");
  }
  await parsed;
}

type ScreenBuffer = Terminal["buffer"]["active"];

/** One line as the program wrote it: a row the terminal wrapped is joined with its continuation rows. */
interface LogicalLine {
  /** Buffer row where the line starts. */
  row: number;
  text: string;
}

function* logicalLines(buffer: ScreenBuffer, from: number): Generator<LogicalLine> {
  let row = from;
  while (row > 0 && buffer.getLine(row)?.isWrapped) row--;
  let current: LogicalLine | undefined;
  for (; row < buffer.length; row++) {
    const line = buffer.getLine(row);
    if (!line) break;
    if (!line.isWrapped && current) {
      yield { row: current.row, text: current.text.trimEnd() };
      current = undefined;
    }
    // A wide character that did not fit leaves the wrapped row's last cell empty: not a space.
    const next = buffer.getLine(row + 1);
    const end = next?.isWrapped && line.getCell(line.length - 1)?.getChars() === "" ? line.length - 1 : line.length;
    const text = line.translateToString(false, 0, end);
    current = current ? { row: current.row, text: current.text + text } : { row, text };
  }
  if (current) yield { row: current.row, text: current.text.trimEnd() };
}

function trimTrailingBlankLines(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1] === "") end--;
  return lines.slice(0, end);
}

/** The normal screen when a turn starts, to tell afterwards which lines the turn changed. */
interface Checkpoint {
  /** The screen's first line, tracked through scrolling, trimming and reflow. */
  top: Marker;
  /** Its logical lines, from `top` to the bottom of the screen. */
  lines: string[];
}

/** Undefined while a full-screen program has the alternate screen (markers live on the active buffer). */
function checkpoint(terminal: Terminal): Checkpoint | undefined {
  const buffer = terminal.buffer.active;
  if (buffer.type !== "normal") return undefined;
  const lines = [...logicalLines(buffer, buffer.baseY)];
  const topRow = lines[0]?.row ?? buffer.baseY;
  const top = terminal.registerMarker(topRow - (buffer.baseY + buffer.cursorY));
  return top ? { top, lines: lines.map((line) => line.text) } : undefined;
}

/**
 * What the terminal showed for a turn. In a full-screen program (alternate screen): its whole
 * screen. Otherwise the lines the turn wrote, as rendered: from the first line that differs from
 * the screen at the turn's start (so an unchanged command line is not repeated, blank lines before
 * the output are not kept, and a `clear` shows the new screen from its top) to the last non-blank
 * line, scrollback included. Wrapped rows are joined into the line the program wrote; trailing
 * spaces and blank lines go.
 */
function observedSince(terminal: Terminal, start: Checkpoint | undefined, counters: Counters): string {
  const buffer = terminal.buffer.active;
  if (buffer.type === "alternate" || !start) {
    start?.top.dispose();
    count(counters, "terminal.alt_screen_observations");
    return screenText(buffer);
  }
  const overflowed = start.top.isDisposed; // the turn pushed its own start out of the scrollback
  if (overflowed) count(counters, "terminal.scrollback_overflow");
  const after = [...logicalLines(buffer, overflowed ? 0 : start.top.line)].map((line) => line.text);
  start.top.dispose();
  let first = 0;
  if (!overflowed) while (first < after.length && after[first] === (start.lines[first] ?? "")) first++;
  return trimTrailingBlankLines(after.slice(first)).join("\n");
}

const ALT_SCREEN_MODES = [47, 1047, 1049];

/** The screen's text as the observation shows it: logical lines from the top of the screen, trailing blank lines dropped. */
function screenText(buffer: ScreenBuffer): string {
  return trimTrailingBlankLines([...logicalLines(buffer, buffer.baseY)].map((line) => line.text)).join("\n");
}

/**
 * Plays one turn's output and returns what it showed. A turn that starts inside a full-screen
 * program takes its checkpoint when the program gives the normal screen back. A full-screen
 * program that starts and ends within the turn (its keys were all sent before, or it needed none)
 * would leave no trace: the screen it showed last, read just before it gave the normal screen
 * back (the emulator clears the alternate screen then), comes first in the observation.
 */
async function observeTurn(terminal: Terminal, clamp: CsiParamClamp, events: TerminalEvent[], counters: Counters): Promise<string> {
  let start = checkpoint(terminal);
  const startedInAlt = !start;
  const waitForNormal = start
    ? undefined
    : terminal.buffer.onBufferChange((buffer) => {
        if (!start && buffer.type === "normal") start = checkpoint(terminal);
      });
  const transient: string[] = [];
  let altSinceStart = false;
  const altEntered = terminal.buffer.onBufferChange((buffer) => {
    if (buffer.type === "alternate") altSinceStart = true;
  });
  const leaving = terminal.parser.registerCsiHandler({ prefix: "?", final: "l" }, (params) => {
    const buffer = terminal.buffer.active;
    if (buffer.type === "alternate" && (altSinceStart || !startedInAlt) && params.some((p) => ALT_SCREEN_MODES.includes(Number(p)))) {
      const text = screenText(buffer);
      if (text !== "") transient.push(text);
      count(counters, "terminal.transient_alt_screens");
    }
    return false; // the emulator still switches screens
  });
  try {
    await play(terminal, clamp, events, counters);
  } finally {
    waitForNormal?.dispose();
    altEntered.dispose();
    leaving.dispose();
  }
  const observed = observedSince(terminal, start, counters);
  return [...transient, ...(observed !== "" ? [observed] : [])].join("\n");
}

function newTerminal(cols: number, rows: number): Terminal {
  // Markers (registerMarker) are still behind xterm.js's proposed-API switch. Parse errors of a
  // damaged recording are not news for the job's log (xterm.js would print each one).
  return new Terminal({ cols, rows, scrollback: SCROLLBACK_LINES, allowProposedApi: true, logLevel: "off" });
}

/** The text a fresh terminal of this size shows after the chunks (strings or UTF-8 bytes, in order). */
export async function renderScreen(chunks: (string | Uint8Array)[], cols: number, rows: number): Promise<string> {
  const terminal = newTerminal(cols, rows);
  try {
    const start = checkpoint(terminal);
    let parsed: Promise<void> = Promise.resolve();
    for (const chunk of chunks) parsed = new Promise((resolve) => terminal.write(chunk, resolve));
    await parsed;
    return observedSince(terminal, start, new Map());
  } finally {
    terminal.dispose();
  }
}

/**
 * Replays a recording through one xterm.js emulator at the recorded size and replaces each turn's
 * observation by what the terminal showed (see `observedSince`): `\r` progress bars end in their
 * final state, backspaces and cursor moves apply, colours and other attributes vanish, trailing
 * spaces and blank lines go. The screen carries over from turn to turn, as on a real terminal.
 * The raw events are dropped from `meta.terminal` afterwards; the sizes stay.
 */
export async function renderTerminalTrajectory(trajectory: Trajectory, counters: Counters): Promise<Trajectory> {
  const recording = recordingOf(trajectory);
  if (!recording) {
    count(counters, "terminal.text_observations"); // read as text already, nothing to replay
    return trajectory;
  }
  const streams = trajectory.turns.map(turnStreamOf);
  const terminal = newTerminal(recording.cols, recording.rows);
  const clamp = new CsiParamClamp();
  try {
    const initialObservation = await observeTurn(terminal, clamp, recording.events, counters);
    const turns: Turn[] = [];
    for (const [i, turn] of trajectory.turns.entries()) {
      const stream = streams[i] as TerminalTurnMeta;
      await play(terminal, clamp, stream.typing, counters);
      const observation = await observeTurn(terminal, clamp, stream.events, counters);
      turns.push({ ...turn, observation, meta: { ...turn.meta, terminal: { cols: stream.cols, rows: stream.rows } } });
      count(counters, "terminal.turns_rendered");
    }
    count(counters, "terminal.trajectories_rendered");
    const { initialObservation: _replaced, ...rest } = trajectory;
    return {
      ...(recording.events.length > 0 ? rest : trajectory),
      ...(initialObservation !== "" ? { initialObservation } : {}),
      turns,
      meta: { ...trajectory.meta, terminal: { cols: recording.cols, rows: recording.rows } },
    };
  } finally {
    terminal.dispose();
  }
}

/** The terminal domain: observations become the screen text a real terminal emulator shows. */
export const terminalNormalizer: DomainNormalizer = {
  domain: "terminal",
  normalize: (trajectory, _settings, counters) => renderTerminalTrajectory(trajectory, counters),
};
