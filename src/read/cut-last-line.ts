import type { Line } from "../io/read-lines.ts";
import type { LineSource, ReadItem } from "./reader.ts";

/*
 * A one-session line log — a Codex rollout, a Gemini CLI `.jsonl`, an OSWorld `traj.jsonl`, a tmux
 * log, an MCP message stream, a Claude Desktop MCP log — is written a line at a time while the
 * session runs. When the agent or its recorder is killed mid-write, the file ends in a cut line: a
 * JSON object or array that never closes (usually without a line end), with nothing after it.
 *
 * The rule, the same for every reader of such a log: when that cut last line is the only unreadable
 * one and a line came before it, the record is built from the lines before it, and its meta says so
 * as `truncated_line: {line, bytes}` (the cut line's number and its length in bytes as read). A bad
 * line with anything after it (a hole in the middle, or a complete line that is not valid JSON) is
 * no cut write: the reader fails the file at that line and field, as it always did; a file whose only
 * line is cut is quarantined too. (The asciicast and claude-code readers had this rule first and keep
 * their own notes: `meta.asciicast.truncatedLine`, `meta.bad_lines`.)
 *
 * Readers that stream their lines wrap them in `withoutCutLastLine` (or the two shorthands below for
 * `readLines` lines and `recordLines` items) and spread `truncatedLineMeta(note)` into the record's
 * meta; a reader that holds the whole text uses `withoutCutLastLineOfText`.
 */

/** A log's last line, cut while it was written: its 1-based number and its length in bytes. */
export interface TruncatedLine {
  line: number;
  bytes: number;
}

/** Filled in by the filters below once the last line is read: the cut last line they left out, if any. */
export interface CutNote {
  truncated?: TruncatedLine;
}

/** The record meta for a log whose last line was cut: `{truncated_line: {line, bytes}}`, else nothing. */
export function truncatedLineMeta(note: CutNote): { truncated_line?: TruncatedLine } {
  return note.truncated ? { truncated_line: { ...note.truncated } } : {};
}

/**
 * Index just past the JSON object or array that starts at `start` (bracket depth outside strings),
 * or undefined when it never closes. JSON.parse still checks what it spans.
 */
export function jsonValueEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

/**
 * True when `text` (past blanks and a BOM) opens a JSON object or array that never closes: a write
 * cut short. A line that closes but is still not JSON (`{"a": 1,}`, `{"a": 1}}`) was written whole: it is corrupt, not cut.
 */
export function isCutJson(text: string): boolean {
  const start = text.search(/[^\s\uFEFF]/);
  return start !== -1 && (text[start] === "{" || text[start] === "[") && jsonValueEnd(text, start) === undefined;
}

/** The note for a line of text numbered `line`, when the text is a cut JSON value. */
export function cutLineAt(text: string, line: number | undefined): TruncatedLine | undefined {
  return line !== undefined && isCutJson(text) ? { line, bytes: Buffer.byteLength(text) } : undefined;
}

/**
 * `items` as they come, except the last: each item is passed on once the next non-blank one
 * arrives (blank items wait with it, in order). When none does, the last is left out if `cutAt`
 * says it is a cut line and a non-blank item came before it; `note.truncated` is then set. Any
 * other item, cut or not, reaches the reader, which fails on it as before. Holds one item at a time.
 */
export async function* withoutCutLastLine<T>(
  items: AsyncIterable<T>,
  cutAt: (item: T) => TruncatedLine | undefined,
  note: CutNote,
  blank: (item: T) => boolean = () => false,
): AsyncGenerator<T> {
  let held: T[] = [];
  let before = false;
  for await (const item of items) {
    if (blank(item)) {
      if (held.length > 0) held.push(item);
      else yield item;
      continue;
    }
    if (held.length > 0) {
      before = true;
      yield* held;
    }
    held = [item];
  }
  const [last, ...after] = held;
  if (last === undefined) return;
  const cut = before ? cutAt(last) : undefined;
  if (cut) note.truncated = cut;
  else yield last;
  yield* after;
}

/** `withoutCutLastLine` for the lines of `readLines` (an over-long line is never a cut one; blank lines wait). */
export function withoutCutLastRawLine(lines: AsyncIterable<Line>, note: CutNote): AsyncGenerator<Line> {
  return withoutCutLastLine(
    lines,
    (line) => (line.oversizedBytes === undefined ? cutLineAt(line.text, line.lineNo) : undefined),
    note,
    (line) => line.oversizedBytes === undefined && line.text.trim() === "",
  );
}

type RecordLineItem = { kind: "line"; text: string; source: LineSource } | Extract<ReadItem, { kind: "quarantine" }>;

/** `withoutCutLastLine` for the items of `recordLines` (a whole file's: their sources have line numbers). */
export function withoutCutLastRecordLine<T extends RecordLineItem>(items: AsyncIterable<T>, note: CutNote): AsyncGenerator<T> {
  return withoutCutLastLine(items, (item) => (item.kind === "line" ? cutLineAt(item.text, item.source.line) : undefined), note);
}

/**
 * The same rule for a log read whole: `text` without its last non-blank line when that line is cut
 * and a non-blank line comes before it (then `truncated` says where), else `text` as it is.
 */
export function withoutCutLastLineOfText(text: string): { text: string; truncated?: TruncatedLine } {
  const end = text.trimEnd().length;
  const lineStart = text.lastIndexOf("\n", end - 1) + 1;
  if (lineStart === 0 || text.slice(0, lineStart).trim() === "") return { text };
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < lineStart; i = text.indexOf("\n", i + 1)) line += 1;
  const lineEnd = text.indexOf("\n", lineStart);
  const truncated = cutLineAt(text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd).replace(/\r$/, ""), line);
  return truncated ? { text: text.slice(0, lineStart), truncated } : { text };
}
