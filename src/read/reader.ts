import type { QuarantineEntry } from "../core/errors.ts";
import type { TEXT_DOMAIN, TextDocument } from "../core/text-document.ts";
import type { Domain, SourceRef, Trajectory } from "../core/trajectory.ts";
import { openRawInput } from "../io/input-bytes.ts";
import { openDecompressed } from "../io/open-input.ts";
import { type Line, readLines } from "../io/read-lines.ts";
import { arrowRecordLines, columnarKind } from "./arrow-ipc.ts";
import { csvDialectOf, csvRecordLines } from "./csv-rows.ts";
import { arrayRecordLines, documentRecordLine, notRecordsItem, recordLayout, wrappedRecordLines } from "./json-array.ts";
import { parquetRecordLines } from "./parquet-rows.ts";

/** What a reader yields per source record: a trajectory, a text document (text sources), or why the record is neither. */
export type ReadItem =
  | { kind: "trajectory"; trajectory: Trajectory }
  | { kind: "document"; document: TextDocument }
  | { kind: "quarantine"; entry: QuarantineEntry };

/** The source (file and position) of any read item. */
export function itemSource(item: ReadItem): SourceRef {
  return item.kind === "trajectory" ? item.trajectory.source : item.kind === "document" ? item.document.source : item.entry.source;
}

export interface ReaderOptions {
  /** Lines longer than this are quarantined without being held in memory. */
  maxLineBytes: number;
  /** Domain for formats whose records do not name one. */
  domain?: Domain;
  /**
   * Only the records whose line starts in [start, end) (byte offsets of an uncompressed file);
   * passed only to `splittable` readers. Line numbers are unknown past the file's start.
   */
  range?: ByteRange;
}

export interface ByteRange {
  start: number;
  end: number;
}

/**
 * One source format. `read` streams a file and yields exactly one item per source record:
 * a trajectory, or a quarantine entry saying why the record could not become one.
 */
export interface Reader {
  name: string;
  description: string;
  /**
   * The domain of every record this format yields, when the format fixes it (DroidBot: android).
   * A string saying how it is decided when records differ (`"from the tools"` for chat rows).
   * `validate` prints it per file; `--domain` / `inputs[].domain` overrides it where the format
   * has no domain of its own.
   */
  domain: Domain | typeof TEXT_DOMAIN | `from ${string}`;
  /**
   * True when the file looks like this format (used by `format: auto`). `head` is the start of
   * the decompressed content (up to 64 KiB, possibly cut mid-line or mid-character); `path` is
   * only a hint — decide by content, use the name at most to break a tie.
   */
  sniff(head: string, path: string): boolean;
  /**
   * True when a big file can be split by byte range: every line is a record of its own (JSONL), or
   * records come in blocks whose byte offsets the reader knows (Parquet row groups). `read` then
   * yields only the records that start in `options.range`.
   */
  splittable?: boolean;
  read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem>;
  /**
   * The other files reading `path` consumes (a terminal-bench trial's recording, panes and logs):
   * `planJob` skips inputs among them, with a note, so a glob over a whole folder reads each
   * record once. `bytes` (all of them, `path` included) sizes the task the file lands in.
   */
  companions?(path: string): Promise<Companions>;
  /**
   * Files a file stands for (a terminal-bench run's `results.json` lists its trials'): `planJob`
   * reads those instead of it. Undefined when it stands for none.
   */
  expand?(path: string): Promise<string[] | undefined>;
}

export interface Companions {
  /** Folders whose every file the record covers. */
  dirs: string[];
  /** Single files it covers besides those (a run's metadata beside the trial folders). */
  files: string[];
  /** Bytes read for the record, `path` and its companions together. */
  bytes: number;
  /** What covers them, for the note: e.g. `terminal-bench trial t.1-of-1.run`. */
  label: string;
}

const EXCERPT_CHARS = 200;

export function excerpt(text: string): string {
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/** The quarantine item for a line over `input.max_line_bytes` (its text was never held). */
export function oversizedLineItem(source: SourceRef, bytes: number, limit: number): Extract<ReadItem, { kind: "quarantine" }> {
  const reason = `line is ${bytes} bytes, over the ${limit}-byte limit (input.max_line_bytes)`;
  return { kind: "quarantine", entry: { source, stage: "read", reason } };
}

/** A problem with a whole-file record, located at one of its lines (and the field to blame). */
export class RecordLineError extends Error {
  readonly field: string | undefined;
  readonly line: Line | undefined;
  constructor(message: string, field?: string, line?: Line) {
    super(message);
    this.field = field;
    this.line = line;
  }
}

/**
 * For a whole-file record (a cast, a tmux log, a Codex rollout): a line over
 * `input.max_line_bytes` (its text was never held) fails the record at that line.
 */
export function refuseOversizedLine(line: Line, maxLineBytes: number): void {
  if (line.oversizedBytes !== undefined)
    throw new RecordLineError(
      `line ${line.lineNo} is ${line.oversizedBytes} bytes, over the ${maxLineBytes}-byte limit (input.max_line_bytes)`,
      undefined,
      line,
    );
}

/** Where a line-oriented record starts (no line number inside a byte range past the start). */
export type LineSource = SourceRef & { offset: number };

/**
 * The non-empty lines of a line-oriented file, each with its source (line, byte offset); a line
 * over `input.max_line_bytes` comes out as its quarantine item instead. Blank lines are not records.
 * A JSON array file yields its elements (source: `row` = element index), and so does a document
 * of rows under one key (`{"data": [row, …]}`); a pretty-printed single document yields one line,
 * a file with no JSON lines one quarantine entry (src/read/json-array.ts).
 * A Parquet file yields its rows, each as one JSON object (source: `row`, and its row group's
 * byte `offset`; a byte range takes the row groups starting in it: src/read/parquet-rows.ts).
 * An Arrow IPC file or stream yields its rows the same way (source: `row`, `offset` 0; read whole
 * by the task whose range starts the file: src/read/arrow-ipc.ts).
 * A CSV / TSV file of rows (a text file whose head is a header and rows) yields its data rows, each
 * as one JSON object (source: `row`, `line`, byte `offset`; read whole by the task whose range
 * starts the file: src/read/csv-rows.ts).
 */
export async function* recordLines(
  path: string,
  options: ReaderOptions,
  format: string,
): AsyncGenerator<{ kind: "line"; text: string; source: LineSource } | Extract<ReadItem, { kind: "quarantine" }>> {
  const { range } = options;
  // Parquet rows (the Hub's datasets) and Arrow IPC rows (`datasets`' own files): told by the
  // file's raw magic, whatever the range (src/read/parquet-rows.ts, src/read/arrow-ipc.ts).
  const columnar = await columnarKind(path);
  if (columnar === "parquet") return yield* parquetRecordLines(path, options, format);
  if (columnar) return yield* arrowRecordLines(path, options, format);
  if (range && range.start > 0) {
    // Only a file of lines is cut by range: a JSON array, a document (rows wrapped in it too) or a
    // CSV file is read whole by the task whose range starts the file, so the others yield nothing.
    if ((await recordLayout(path)).kind !== "lines") return;
    yield* rangeLines(path, options, format, range);
    return;
  }
  // A JSON array, one pretty-printed document, or no JSON lines at all (src/read/json-array.ts).
  const layout = await recordLayout(path);
  if (layout.kind === "array") return yield* arrayRecordLines(path, options, format);
  if (layout.kind === "document") return yield* documentRecordLine(path, options, format);
  if (layout.kind === "wrapped") return yield* wrappedRecordLines(path, options, format, layout);
  if (layout.kind === "text") {
    // CSV / TSV rows, one JSON object per data row (src/read/csv-rows.ts).
    const dialect = await csvDialectOf(path);
    if (dialect) return yield* csvRecordLines(path, options, format, dialect);
    yield notRecordsItem(path, format, layout.description);
    return;
  }
  const { stream } = await openDecompressed(path);
  for await (const line of readLines(stream, options.maxLineBytes)) {
    if (range && line.offset >= range.end) return;
    const source: LineSource = { uri: path, line: line.lineNo, offset: line.offset, format };
    if (line.oversizedBytes !== undefined) yield oversizedLineItem(source, line.oversizedBytes, options.maxLineBytes);
    else if (line.text.trim() !== "") yield { kind: "line", text: line.text, source };
  }
}

/**
 * Lines of an uncompressed file starting in [start, end): reading begins one byte early so a line
 * that starts exactly at `start` is seen whole, and the line cut by `start` belongs to the task before.
 */
async function* rangeLines(
  path: string,
  options: ReaderOptions,
  format: string,
  range: ByteRange,
): AsyncGenerator<{ kind: "line"; text: string; source: LineSource } | Extract<ReadItem, { kind: "quarantine" }>> {
  const stream = await openRawInput(path, { start: range.start - 1 });
  let first = true;
  for await (const line of readLines(stream, options.maxLineBytes, range.start - 1)) {
    if (first) {
      first = false;
      continue;
    }
    if (line.offset >= range.end) break;
    const source: LineSource = { uri: path, offset: line.offset, format };
    if (line.oversizedBytes !== undefined) yield oversizedLineItem(source, line.oversizedBytes, options.maxLineBytes);
    else if (line.text.trim() !== "") yield { kind: "line", text: line.text, source };
  }
  stream.destroy();
}

/** The first non-empty line of a file head (for line-oriented formats). */
export function firstLine(head: string): string {
  // Line by line with indexOf: every sniff asks, and splitting a 64 KiB head made an array of all its lines.
  for (let start = 0; start <= head.length; ) {
    const newline = head.indexOf("\n", start);
    const end = newline === -1 ? head.length : newline;
    const line = head.slice(start, end);
    if (line.trim() !== "") return line;
    start = end + 1;
  }
  return "";
}

// JSON lines and sniffs' JSON live in json-line.ts (json-array.ts needs them, and reader.ts imports json-array.ts).
export { parseJsonLine, parseSniffedJson } from "./json-line.ts";
