import { createHash } from "node:crypto";
import type { SourceRef, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { type Line, readLines } from "../io/read-lines.ts";
import { type CutNote, truncatedLineMeta, withoutCutLastRawLine } from "./cut-last-line.ts";
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
import { CommandLines, findEcho, visibleText } from "./terminal-stream.ts";

const FORMAT = "tmux-log";

/*
 * tmux keystroke logs with pane captures. There is no public standard, so lwm-data defines one:
 * JSON lines, the first a header, then one event per line, in time order.
 *
 *   {"type":"header","format":"tmux-log","version":1,"cols":80,"rows":24,"session":"agent-1","pane":"%0"}
 *   {"type":"capture","t":0.1,"text":"user@box:~$ "}
 *   {"type":"keys","t":1.0,"data":"ls -la\r"}
 *   {"type":"capture","t":1.4,"text":"user@box:~$ ls -la\ntotal 0\nuser@box:~$ "}
 *
 * `keys` is what was sent to the pane, literally (`tmux send-keys -l`; Enter is "\r" or "\n").
 * `capture` is `tmux capture-pane -p` output: the screen as plain text. `t` (seconds) is
 * optional; `pane`, when the header and an event both give one, must agree (one log is one pane).
 */

interface Header {
  cols: number;
  rows: number;
  session?: string;
  pane?: string;
}

const ENTER = /\r\n|\r|\n/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isSize = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value > 0;

function isHeader(value: unknown): value is Record<string, unknown> {
  return isObject(value) && value.type === "header" && value.format === FORMAT;
}

function parseHeader(line: Line): Header {
  const parsed = parseJsonLine(line.text);
  if (!parsed.ok || !isHeader(parsed.value))
    throw new RecordLineError(`line ${line.lineNo}: expected the header {"type":"header","format":"tmux-log",...}`, "header", line);
  const { cols, rows, session, pane, version } = parsed.value;
  if (version !== 1) throw new RecordLineError(`header.version: expected 1, got ${describeJson(version)}`, "header.version", line);
  if (!isSize(cols)) throw new RecordLineError("header.cols: expected a positive integer", "header.cols", line);
  if (!isSize(rows)) throw new RecordLineError("header.rows: expected a positive integer", "header.rows", line);
  return { cols, rows, ...(typeof session === "string" ? { session } : {}), ...(typeof pane === "string" ? { pane } : {}) };
}

/** A capture as the screen showed it: no padding spaces, no empty rows below the last text. */
function screenText(capture: string): string {
  return capture
    .split("\n")
    .map((row) => row.trimEnd())
    .join("\n")
    .replace(/\n+$/, "");
}

/**
 * The part of a capture a turn observes: the screen below the command's echo (the last place the
 * prompt shows it, `findEcho`), as the terminal normalizer observes a recording from the line
 * after the command; the whole screen when the echo is not on it (cleared, scrolled away).
 */
function afterEcho(screen: string, action: string): string {
  const view = visibleText([screen]);
  let last: [number, number] | undefined;
  for (let echo = findEcho(view, action, 0, false); echo; echo = findEcho(view, action, echo[1], false)) last = echo;
  return last ? screen.slice(last[1] + 1) : screen;
}

/**
 * Builds turns while the events stream in: the keys up to Enter are a line; a turn is one command
 * as the shell runs it (`CommandLines`: lines join while a quote, a here-document or a `\`
 * continuation is open; an empty line is no turn). Its observation is the last capture after the
 * command was sent and before the next keystroke, from below the command's echo (`afterEcho`:
 * the typed command is not observed, as in a recording). Captures taken while an action is being
 * typed are skipped: they show its echo, not a result.
 */
class TurnBuilder {
  readonly turns: Turn[] = [];
  initialObservation: string | undefined;
  private typed: string | undefined;
  private waitingSince: Line | undefined;
  private readonly commands = new CommandLines();

  keys(data: string, time: number | undefined, line: Line): void {
    data.split(ENTER).forEach((keys, i) => {
      if (i > 0) this.send(time, line);
      if (keys !== "") {
        this.requireObservation();
        this.typed = (this.typed ?? "") + keys;
      }
    });
  }

  capture(text: string): void {
    if (this.typed !== undefined || this.commands.open) return;
    const last = this.turns.at(-1);
    if (last) last.observation = afterEcho(screenText(text), last.action);
    else this.initialObservation = screenText(text);
    this.waitingSince = undefined;
  }

  /**
   * Called at the end of the log: the last turn needs its capture too — unless the log's last line
   * was cut (`truncated`): then a last turn still waiting for its capture (the cut line was likely
   * it) is no turn, and its command is returned, for `meta.unobserved_final_action`.
   */
  finish(truncated: boolean): string | undefined {
    let unobserved: string | undefined;
    if (truncated && this.waitingSince) {
      unobserved = this.turns.pop()?.action;
      this.waitingSince = undefined;
    }
    this.requireObservation();
    if (this.turns.length === 0) throw new RecordLineError("no keystrokes end in Enter: the log has no turns", "events");
    return unobserved;
  }

  private send(time: number | undefined, line: Line): void {
    this.requireObservation();
    const command = this.commands.push(this.typed ?? "");
    this.typed = undefined;
    if (command === undefined) return;
    this.turns.push({ action: command, observation: "", ...(time !== undefined ? { meta: { time } } : {}) });
    this.waitingSince = line;
  }

  private requireObservation(): void {
    const line = this.waitingSince;
    if (line)
      throw new RecordLineError(
        `line ${line.lineNo}: turn ${this.turns.length} has no pane capture after its Enter`,
        `turns.${this.turns.length - 1}.observation`,
        line,
      );
  }
}

function applyEvent(value: unknown, line: Line, header: Header, builder: TurnBuilder): void {
  if (!isObject(value)) throw new RecordLineError(`line ${line.lineNo}: an event is a JSON object`, "events", line);
  if (value.t !== undefined && (typeof value.t !== "number" || !Number.isFinite(value.t)))
    throw new RecordLineError(`line ${line.lineNo}: t must be a number of seconds`, "events.t", line);
  if (header.pane !== undefined && value.pane !== undefined && value.pane !== header.pane)
    throw new RecordLineError(
      `line ${line.lineNo}: pane ${describeJson(value.pane)} is not the header's pane ${JSON.stringify(header.pane)}`,
      "events.pane",
      line,
    );
  if (value.type === "keys") {
    if (typeof value.data !== "string") throw new RecordLineError(`line ${line.lineNo}: keys.data must be a string`, "events.data", line);
    builder.keys(value.data, value.t as number | undefined, line);
  } else if (value.type === "capture") {
    if (typeof value.text !== "string")
      throw new RecordLineError(`line ${line.lineNo}: capture.text must be a string`, "events.text", line);
    builder.capture(value.text);
  } else {
    throw new RecordLineError(
      `line ${line.lineNo}: unknown event type ${describeJson(value.type)}; expected keys or capture`,
      "events.type",
      line,
    );
  }
}

/**
 * A tmux keystroke log with pane captures (format above). One file is one pane's session is one
 * trajectory (domain `terminal`), id `tmux-` + the first 32 hex digits of the sha256 of the
 * decompressed content. Captures are already screen text, so there is nothing to replay. Any
 * malformed line, or a turn without a capture, quarantines the whole log at that line — except a
 * last line cut while it was written (cut-last-line.ts): the log before it is read (its id hashes
 * those lines), `meta.truncated_line` says which line was left out, and a last command still
 * waiting for its capture is `meta.unobserved_final_action`, not a turn.
 */
export const tmuxLogReader: Reader = {
  name: FORMAT,
  domain: "terminal",
  description: "tmux keystroke logs with pane captures (lwm-data's JSONL layout): keys up to Enter → the pane after",

  sniff(head) {
    const parsed = parseSniffedJson(firstLine(head));
    return parsed.ok && isHeader(parsed.value);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { stream } = await openDecompressed(path);
    const hash = createHash("sha256");
    const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
    let header: Header | undefined;
    const builder = new TurnBuilder();
    const cut: CutNote = {};
    let unobserved: string | undefined;
    try {
      for await (const line of withoutCutLastRawLine(readLines(stream, options.maxLineBytes), cut)) {
        refuseOversizedLine(line, options.maxLineBytes);
        hash.update(line.text).update("\n");
        if (line.text.trim() === "") continue;
        if (!header) {
          header = parseHeader(line);
          continue;
        }
        const parsed = parseJsonLine(line.text);
        if (!parsed.ok) throw new RecordLineError(`line ${line.lineNo}: ${parsed.reason}`, "events", line);
        applyEvent(parsed.value, line, header, builder);
      }
      if (!header) throw new RecordLineError("the file has no tmux-log header");
      unobserved = builder.finish(cut.truncated !== undefined);
    } catch (err) {
      if (!(err instanceof RecordLineError)) throw err;
      stream.destroy();
      const where = err.line ? { ...source, line: err.line.lineNo, offset: err.line.offset } : source;
      yield {
        kind: "quarantine",
        entry: {
          source: where,
          stage: "read",
          ...(err.field ? { field: err.field } : {}),
          reason: err.message,
          ...(err.line?.text ? { excerpt: excerpt(err.line.text) } : {}),
        },
      };
      return;
    }
    yield {
      kind: "trajectory",
      trajectory: {
        id: `tmux-${hash.digest("hex").slice(0, 32)}`,
        domain: "terminal",
        source,
        ...(builder.initialObservation !== undefined ? { initialObservation: builder.initialObservation } : {}),
        turns: builder.turns,
        meta: {
          tmux: {
            cols: header.cols,
            rows: header.rows,
            ...(header.session ? { session: header.session } : {}),
            ...(header.pane ? { pane: header.pane } : {}),
          },
          ...(unobserved !== undefined ? { unobserved_final_action: unobserved } : {}),
          ...truncatedLineMeta(cut),
        },
      },
    };
  },
};
