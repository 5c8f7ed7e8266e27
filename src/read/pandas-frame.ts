import { createReadStream } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { QuarantineEntry } from "../core/errors.ts";
import { openDecompressed } from "../io/open-input.ts";
import { type Line, readLines } from "../io/read-lines.ts";
import { JsonSyntaxError, selectJson } from "./json-select.ts";
import type { LineSource, ReaderOptions, ReadItem } from "./reader.ts";
import { compact, lineWithinLimit, type RecordLine } from "./record-line.ts";

/**
 * pandas `DataFrame.to_json(orient="columns")` (pandas' default orient): one JSON object whose
 * members are the frame's columns, each an object of cells keyed by the row's index label —
 * `{"messages": {"0": […], "1": […]}, "tools": {"0": …, "1": …}}`. The rows are spread over the
 * whole file (row 0's cells are at the start of every column), so:
 *
 * - detection streams the file once with a scanner that keeps only the first FRAME_PROBE_ROWS cells of
 *   each column (FRAME_HELD_CHARS at most) and skips the rest, up to FRAME_SCAN_CHARS of text;
 * - reading streams the file once with stream-json, writing each column's cells to a temporary
 *   file of its own (one cell per line), then reads the columns side by side, one row at a time:
 *   memory holds one cell per column, never the frame.
 *
 * Only numeric index labels (a RangeIndex, an integer or datetime index as pandas writes it) are a
 * frame: an ordinary JSON object of objects (a config, a map keyed by name) is not.
 */

/** Rows shown to the sniffs (as many as detection probes). */
export const FRAME_PROBE_ROWS = 8;
/** Text scanned at most to find every column's first cells (a frame with bigger columns before its last one is not detected). */
export const FRAME_SCAN_CHARS = 256 << 20;
/** Text of the first cells held at most while scanning. */
const FRAME_HELD_CHARS = 16 << 20;
/** Columns at most: an object with more top-level members is not taken for a frame. */
const FRAME_MAX_COLUMNS = 4096;

/** A pandas index label as `to_json` writes one: an integer (RangeIndex, Int64Index, epoch-ms datetimes). */
export const INDEX_LABEL = /^-?\d+$/;

interface ScannedColumn {
  name: string;
  /** The first FRAME_PROBE_ROWS index labels and cells (cells as JSON text). */
  labels: string[];
  cells: string[];
  count: number;
}

/** What a scan of a `{column: {label: cell}}` document found: every column, its first cells. */
export interface FrameColumnsProbe {
  columns: string[];
  /** The first rows (at most FRAME_PROBE_ROWS), each `{column: cell}` in column order. */
  rows: Record<string, unknown>[];
  /** The document as far as the rows go: `{column: {label: cell}}`. */
  document: Record<string, Record<string, unknown>>;
}

const WHITESPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);

/**
 * A character scanner of a `{column: {label: cell, …}, …}` document, fed text in chunks. Fails (and
 * stops) at the first thing that is not that shape: a top-level value that is not an object, a
 * non-numeric label among a column's first ones, too many columns or held cells.
 */
class FrameColumnsScanner {
  state: "open" | "done" | "failed" = "open";
  readonly columns: ScannedColumn[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** What depth 1 or 2 awaits next, outside a cell. */
  private next: "start" | "key" | "colon" | "value" | "comma" = "start";
  /** Reading a cell (depth 2 value); `scalar` for a bare number / true / false / null. */
  private inCell = false;
  private scalar = false;
  /** Held text of the key or cell being read (undefined: not held). */
  private held: string[] | undefined;
  private heldFrom = -1;
  private heldKind: "key" | "cell" | undefined;
  private heldChars = 0;

  feed(chunk: string): void {
    for (let i = 0; i < chunk.length && this.state !== "failed"; i++) this.step(chunk, i);
    if (this.held && this.heldFrom >= 0) {
      this.held.push(chunk.slice(this.heldFrom));
      this.heldFrom = 0;
    }
  }

  private fail(): void {
    this.state = "failed";
    this.held = undefined;
  }

  private startHeld(kind: "key" | "cell", at: number): void {
    this.held = [];
    this.heldFrom = at;
    this.heldKind = kind;
  }

  private endHeld(chunk: string, end: number): string | undefined {
    if (!this.held) return undefined;
    this.held.push(chunk.slice(this.heldFrom, end));
    const text = this.held.join("");
    this.held = undefined;
    this.heldFrom = -1;
    return text;
  }

  private endKey(chunk: string, end: number): void {
    const text = this.endHeld(chunk, end);
    let key: string;
    try {
      key = JSON.parse(text ?? "") as string;
    } catch {
      this.fail();
      return;
    }
    if (this.depth === 1) {
      if (this.columns.length >= FRAME_MAX_COLUMNS) {
        this.fail();
        return;
      }
      this.columns.push({ name: key, labels: [], cells: [], count: 0 });
    } else {
      const column = this.columns[this.columns.length - 1] as ScannedColumn;
      if (column.count < FRAME_PROBE_ROWS) {
        if (!INDEX_LABEL.test(key)) {
          this.fail();
          return;
        }
        column.labels.push(key);
      }
    }
    this.next = "colon";
  }

  private endCell(chunk: string, end: number): void {
    const column = this.columns[this.columns.length - 1] as ScannedColumn;
    const text = this.endHeld(chunk, end);
    if (text !== undefined) {
      column.cells.push(text);
      this.heldChars += text.length;
      if (this.heldChars > FRAME_HELD_CHARS) {
        this.fail();
        return;
      }
    }
    column.count++;
    this.inCell = false;
    this.scalar = false;
    this.next = "comma";
  }

  private step(chunk: string, i: number): void {
    const c = chunk.charCodeAt(i);
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === 0x5c) this.escaped = true;
      else if (c === 0x22) {
        this.inString = false;
        if (this.heldKind === "key" && this.held) this.endKey(chunk, i + 1);
        else if (this.inCell && this.depth === 2) this.endCell(chunk, i + 1);
      }
      return;
    }
    if (this.inCell && this.scalar) {
      if (c !== 0x2c && c !== 0x7d && !WHITESPACE.has(c)) return;
      this.endCell(chunk, i);
      // The `,` or `}` that ended the scalar is read below.
    }
    if (WHITESPACE.has(c)) return;
    // Nothing but whitespace after the document (a JSONL file of such objects is not one frame).
    if (this.state === "done") {
      this.fail();
      return;
    }
    if (this.inCell) {
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth === 2) this.endCell(chunk, i + 1);
      }
      return;
    }
    if (this.depth === 0) {
      if (this.next !== "start" || c !== 0x7b) {
        this.fail();
        return;
      }
      this.depth = 1;
      this.next = "key";
      return;
    }
    switch (this.next) {
      case "key":
        if (c === 0x22) {
          this.inString = true;
          this.heldKind = "key";
          this.startHeld("key", i);
        } else if (c === 0x7d && this.depth === 2) this.closeColumn();
        else this.fail();
        return;
      case "colon":
        if (c === 0x3a) this.next = "value";
        else this.fail();
        return;
      case "value":
        if (this.depth === 1) {
          // A column: an object of cells.
          if (c !== 0x7b) {
            this.fail();
            return;
          }
          this.depth = 2;
          this.next = "key";
          return;
        }
        this.inCell = true;
        this.heldKind = "cell";
        if ((this.columns[this.columns.length - 1] as ScannedColumn).count < FRAME_PROBE_ROWS) this.startHeld("cell", i);
        else this.heldKind = undefined;
        if (c === 0x22) this.inString = true;
        else if (c === 0x7b || c === 0x5b) this.depth++;
        else this.scalar = true;
        return;
      case "comma":
        if (c === 0x2c) this.next = "key";
        else if (c === 0x7d && this.depth === 2) this.closeColumn();
        else if (c === 0x7d && this.depth === 1) {
          this.depth = 0;
          this.state = "done";
        } else this.fail();
        return;
      default:
        this.fail();
    }
  }

  private closeColumn(): void {
    this.depth = 1;
    this.next = "comma";
  }
}

/** The probe of a scanner that read a whole document, or undefined when it is not a frame by columns. */
function probeOf(scanner: FrameColumnsScanner): FrameColumnsProbe | undefined {
  if (scanner.state !== "done" || scanner.columns.length === 0) return undefined;
  const [first] = scanner.columns as [ScannedColumn];
  if (first.count === 0) return undefined;
  const labels = JSON.stringify(first.labels);
  // pandas writes every column with the same index labels, in the same order.
  if (scanner.columns.some((column) => column.count !== first.count || JSON.stringify(column.labels) !== labels)) return undefined;
  if (new Set(scanner.columns.map((column) => column.name)).size !== scanner.columns.length) return undefined;
  try {
    const parsed = scanner.columns.map((column) => column.cells.map((cell) => JSON.parse(cell) as unknown));
    const rows = first.labels.map((_, i) => Object.fromEntries(scanner.columns.map((column, c) => [column.name, parsed[c]?.[i]])));
    const document = Object.fromEntries(
      scanner.columns.map((column, c) => [column.name, Object.fromEntries(column.labels.map((label, i) => [label, parsed[c]?.[i]]))]),
    );
    return { columns: scanner.columns.map((column) => column.name), rows, document };
  } catch {
    return undefined;
  }
}

/** Could this head start a frame by columns (`{"name": {"<integer>":`)? A cheap test before any scan. */
export function mayBeFrameColumns(head: string): boolean {
  return /^\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*\{\s*"-?\d+"\s*:/.test(head.replace(/^\uFEFF/, ""));
}

/** The frame by columns a whole document's text holds (a head that holds the whole file). */
export function frameColumnsOfText(text: string): FrameColumnsProbe | undefined {
  if (!mayBeFrameColumns(text)) return undefined;
  const scanner = new FrameColumnsScanner();
  scanner.feed(text.replace(/^\uFEFF/, ""));
  return probeOf(scanner);
}

/** The frame by columns a file holds, scanned streaming (at most FRAME_SCAN_CHARS of its text). */
export async function scanFrameColumns(path: string): Promise<FrameColumnsProbe | undefined> {
  const { stream } = await openDecompressed(path);
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const scanner = new FrameColumnsScanner();
  let chars = 0;
  let first = true;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let text = decoder.decode(chunk, { stream: true });
      if (first) {
        text = text.replace(/^\uFEFF/, "");
        first = false;
      }
      scanner.feed(text);
      chars += text.length;
      if (scanner.state === "failed" || chars > FRAME_SCAN_CHARS) break;
    }
  } catch {
    // A damaged file: not detected as a frame (reading it reports the damage).
  } finally {
    stream.destroy();
  }
  // Read to its end within the bound: a longer file is not detected.
  return chars > FRAME_SCAN_CHARS ? undefined : probeOf(scanner);
}

// ---------------------------------------------------------------------------------------------
// Reading

function quarantine(source: LineSource, reason: string): Extract<ReadItem, { kind: "quarantine" }> {
  const entry: QuarantineEntry = { source, stage: "read", reason };
  return { kind: "quarantine", entry };
}

/** A cell that nests too deep for JSON.stringify, in a column's spill file. */
const TOO_DEEP = "!";
/** Spilled text kept in memory per column before it is written. */
const SPILL_CHUNK = 1 << 20;

interface SpilledColumn {
  name: string;
  file: string;
  pending: string[];
  pendingChars: number;
  count: number;
  /** Set when the member is not an object of cells: why. */
  bad?: string;
}

/**
 * The rows of a pandas `orient="columns"` document as record lines, in index order (the order of
 * the first column's labels): each row `{column: cell, …}` in column order, the line a JSONL file
 * of the frame (`orient="records", lines=True`) holds; its source the row's 0-based position
 * (`file#row=N`). A row over `input.max_line_bytes`, a row some column has no cell for or whose
 * index labels differ between columns, and a cell nested too deep are quarantined one by one; a
 * break in the JSON (no row is whole before the last column) and a member that is not a column are
 * quarantined once for the file.
 */
export async function* frameColumnsRecordLines(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordLine> {
  const dir = await mkdtemp(join(tmpdir(), "lwm-frame-"));
  try {
    const columns: SpilledColumn[] = [];
    const byName = new Map<string, SpilledColumn>();
    const flush = async (column: SpilledColumn) => {
      if (column.pending.length === 0) return;
      const handle = await open(column.file, "a");
      try {
        await handle.write(column.pending.join(""));
      } finally {
        await handle.close();
      }
      column.pending = [];
      column.pendingChars = 0;
    };
    const { stream } = await openDecompressed(path);
    try {
      for await (const { path: at, value } of selectJson(stream, (at, kind) => at.length === 2 || (at.length === 1 && kind === "scalar"))) {
        const name = String(at[0]);
        let column = byName.get(name);
        if (!column) {
          column = { name, file: join(dir, `${columns.length}.jsonl`), pending: [], pendingChars: 0, count: 0 };
          columns.push(column);
          byName.set(name, column);
        }
        if (at.length === 1 || typeof at[1] === "number") {
          column.bad ??= `member "${name}" is ${at.length === 1 ? "a scalar" : "an array"}, not a column (an object of cells keyed by index label)`;
          continue;
        }
        const cell = compact(value) ?? TOO_DEEP;
        const line = `${JSON.stringify(at[1])}\t${cell}\n`;
        column.pending.push(line);
        column.pendingChars += line.length;
        column.count++;
        if (column.pendingChars >= SPILL_CHUNK) await flush(column);
      }
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
      const last = columns[columns.length - 1];
      const where = last ? `in or after column "${last.name}" (after its ${last.count} cell(s))` : "before its first column";
      yield quarantine(
        { uri: path, row: 0, offset: 0, format },
        `the pandas orient="columns" document breaks ${where}: ${err.message}; a frame by columns holds no whole row before its last column, so the file is quarantined whole`,
      );
      return;
    }
    for (const column of columns) await flush(column);
    const bad = columns.filter((column) => column.bad !== undefined);
    for (const column of bad) yield quarantine({ uri: path, row: 0, offset: 0, format }, column.bad as string);
    const good = columns.filter((column) => column.bad === undefined && column.count > 0);
    if (good.length === 0) return;
    yield* zipColumns(path, options, format, good);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The spilled columns read side by side, one row at a time. */
async function* zipColumns(path: string, options: ReaderOptions, format: string, columns: SpilledColumn[]): AsyncGenerator<RecordLine> {
  const limit = options.maxLineBytes + 1024;
  const streams = columns.map((column) => createReadStream(column.file));
  const cursors = streams.map((stream) => readLines(stream, limit)[Symbol.asyncIterator]());
  const rows = Math.max(...columns.map((column) => column.count));
  const first = columns[0] as SpilledColumn;
  try {
    for (let row = 0; row < rows; row++) {
      const source: LineSource = { uri: path, row, offset: 0, format };
      const cells = await Promise.all(
        cursors.map(async (cursor, c) => (row < (columns[c] as SpilledColumn).count ? ((await cursor.next()).value as Line) : undefined)),
      );
      const problem = rowProblem(columns, cells, row, first, options.maxLineBytes);
      if (typeof problem === "string") {
        yield quarantine(source, problem);
        continue;
      }
      const text = `{${problem.map(([name, cell]) => `${JSON.stringify(name)}:${cell}`).join(",")}}`;
      yield lineWithinLimit(source, text, options.maxLineBytes, `row ${row}`);
    }
  } finally {
    for (const stream of streams) stream.destroy();
  }
}

/** A row's cells, `[column, cell JSON]` in column order, or why the row cannot be made. */
function rowProblem(
  columns: readonly SpilledColumn[],
  lines: readonly (Line | undefined)[],
  row: number,
  first: SpilledColumn,
  maxLineBytes: number,
): [string, string][] | string {
  const cells: [string, string][] = [];
  let label: string | undefined;
  for (const [c, column] of columns.entries()) {
    const line = lines[c];
    if (!line)
      return `row ${row}: column "${column.name}" has no cell for it (it has ${column.count} cell(s), column "${first.name}" ${first.count})`;
    if (line.oversizedBytes !== undefined)
      return `row ${row}: its "${column.name}" cell is over the ${maxLineBytes}-byte limit (input.max_line_bytes)`;
    const tab = line.text.indexOf("\t");
    const at = line.text.slice(0, tab);
    const cell = line.text.slice(tab + 1);
    if (label === undefined) label = at;
    else if (at !== label)
      return `row ${row}: column "${column.name}" has index label ${at} where column "${first.name}" has ${label} (the columns' index labels differ)`;
    if (cell === TOO_DEEP)
      return `row ${row} (index label ${label}): its "${column.name}" cell nests too deep to write back as one JSON line`;
    cells.push([column.name, cell]);
  }
  return cells;
}
