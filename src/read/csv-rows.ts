import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { LAYOUT_HEAD_BYTES, layoutOfHead, readHead } from "./json-array.ts";
import { nestsTooDeep } from "./json-depth.ts";
import { packedFileKind } from "./packed-file-kind.ts";
import { TRAJECTORY_COLUMNS } from "./parquet-rows.ts";
import type { LineSource, ReaderOptions, ReadItem } from "./reader.ts";

/**
 * CSV and TSV files of dataset rows: Hugging Face dataset repos and exports ship rows as
 * `train.csv` / `data.tsv`, a chat conversation in a column as a JSON string (`messages`,
 * `conversations`), or knowledge text in a `text` column. Such a file is read by the reader its
 * rows belong to, row by row, as Parquet files of rows are (src/read/parquet-rows.ts):
 *
 * - The first record is the header (column names); each later record becomes one record line: a
 *   JSON object {column: value}, written as compact JSON. A cell whose text is a JSON array or
 *   object (starts with `[` or `{` and parses) is that value, so a `messages` column written with
 *   `json.dumps` reads as the list; every other cell stays a string (numbers and booleans are not
 *   guessed: `17` and `True` stay text). The `text` column is always a string (a document's text).
 *   An empty cell is left out of the row (CSV writers write a missing value or None as an empty
 *   cell: csv.DictWriter's restval, pandas' NaN), and so is a column with an empty name (pandas' index).
 * - A cell that is a Python literal (`[{'role': 'user', …}]`, `True`/`None`), as pandas
 *   `DataFrame.to_csv` writes list and dict columns, is refused: the row's quarantine entry (and,
 *   for `format: auto`, the file's) names the column and says how to write JSON instead.
 * - Fields follow RFC 4180: quoted fields hold delimiters, quotes (`""`) and newlines; a byte order
 *   mark and CRLF line ends are accepted. Record boundaries are found here, byte by byte, so memory
 *   holds one row (a row over `input.max_line_bytes` is quarantined without being held) and a bad
 *   row does not end the file; each row's fields are parsed by `csv-parse` (node-csv), loaded with
 *   the first CSV file sniffed or read.
 * - Its source is `{ uri, row, line, offset, format }`: the 0-based data row, the 1-based line it
 *   starts on, its byte offset. A row whose field count differs from the header's, one that does
 *   not parse, or a quoted field still open at the end of the file is quarantined (file, row, line
 *   and column named); the rows before it are kept.
 * - A file is read by one task: quoted newlines make a cut at a byte offset unsafe, so the task
 *   whose range starts the file reads it whole and the others yield nothing.
 *
 * `format: auto` (src/read/registry.ts `detectFormat`) looks for CSV only in a text file no reader
 * recognizes: a header of column names, then rows with as many fields as the header (each of the
 * first rows in the head, read up to 16 MiB when the first row is longer than the 64 KiB head),
 * delimiter `,`, tab or `;`. A file with a `text` column and none of the
 * trajectory columns is text-jsonl's (as text-parquet takes such a Parquet file); otherwise the
 * first rows vote like JSONL lines, among the readers that read rows one by one (ARRAY_ELEMENT_FORMATS).
 */

/** The delimiters told apart, in the order they are tried. */
const DELIMITERS = ["\t", ",", ";"] as const;
export type CsvDelimiter = (typeof DELIMITERS)[number];

/** Data rows that must each have the header's field count for a head to be CSV (and that vote). */
export const CSV_PROBE_ROWS = 8;
/** Longest column name a header may hold. */
const MAX_COLUMN_NAME = 128;

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** What a file's head says about it as CSV. */
export interface CsvDialect {
  delimiter: CsvDelimiter;
  /** The header's column names, as written (an empty one is pandas' index, left out of the rows). */
  columns: string[];
}

/** A CSV head: its dialect and its first rows as JSON objects (detection), or why its rows cannot be read. */
export type CsvShape =
  | { kind: "rows"; dialect: CsvDialect; rows: Record<string, unknown>[]; description: string; textOnly: boolean }
  | { kind: "refused"; dialect: CsvDialect; description: string; reason: string };

// ---------------------------------------------------------------------------------------------
// Record boundaries

/** One record of the file: its bytes (without the line end), or only its size when over the limit. */
interface RawRecord {
  /** The record's bytes, without its line end; undefined when it is over the limit (never held). */
  bytes: Buffer | undefined;
  /** Bytes in the record, without its line end. */
  size: number;
  /** Byte offset of its first byte. */
  offset: number;
  /** 1-based line it starts on. */
  line: number;
  /** Fields counted outside quotes. */
  fields: number;
  /** Set at the end of the file when a quoted field is still open: the 0-based field it opened in. */
  openQuoteField?: number;
}

/**
 * Cuts a byte stream into CSV records (RFC 4180): a line feed outside quotes ends a record; a quote
 * at a field's start opens a quoted field, `""` inside one is a quote, and a quote elsewhere is
 * text (as csv-parse's `relax_quotes` and Python's csv reader take it). Holds at most `maxBytes` of
 * a record; past that it only counts. Delimiters, quotes and line feeds are ASCII, so UTF-8 text is
 * never split inside a character.
 */
class RecordSplitter {
  private inQuotes = false;
  private quotePending = false;
  private atFieldStart = true;
  private fields = 1;
  private quoteField = 0;
  private parts: Buffer[] = [];
  private size = 0;
  private offset = 0;
  private line = 1;
  private position = 0;
  private currentLine = 1;

  private readonly delimiter: number;
  private readonly maxBytes: number;

  constructor(delimiter: number, maxBytes: number) {
    this.delimiter = delimiter;
    this.maxBytes = maxBytes;
  }

  /** Passes over `bytes` bytes before the first record (a byte order mark): offsets count them. */
  skip(bytes: number): void {
    this.position += bytes;
    this.offset += bytes;
  }

  /** The records that end in `chunk`. */
  *feed(chunk: Buffer): Generator<RawRecord> {
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      if (this.inQuotes) {
        if (!this.quotePending) {
          if (byte === QUOTE) this.quotePending = true;
          else if (byte === LF) this.currentLine += 1;
          continue;
        }
        this.quotePending = false;
        if (byte === QUOTE) continue;
        this.inQuotes = false;
      }
      if (byte === QUOTE && this.atFieldStart) {
        this.inQuotes = true;
        this.atFieldStart = false;
        this.quoteField = this.fields - 1;
      } else if (byte === this.delimiter) {
        this.fields += 1;
        this.atFieldStart = true;
      } else if (byte === LF) {
        this.hold(chunk.subarray(from, i));
        from = i + 1;
        yield this.take(this.position + i + 1);
        this.currentLine += 1;
        this.line = this.currentLine;
      } else this.atFieldStart = false;
    }
    this.hold(chunk.subarray(from));
    this.position += chunk.length;
  }

  /** The last record (one with no line end after it), if it holds anything. */
  finish(): RawRecord | undefined {
    if (this.size === 0 && !this.inQuotes) return undefined;
    const open = this.inQuotes && !this.quotePending ? this.quoteField : undefined;
    const record = this.take(this.position);
    return open === undefined ? record : { ...record, openQuoteField: open };
  }

  private hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.size > this.maxBytes) this.parts = [];
    else this.parts.push(Buffer.from(bytes));
  }

  private take(next: number): RawRecord {
    let bytes: Buffer | undefined = this.size > this.maxBytes ? undefined : Buffer.concat(this.parts);
    let { size } = this;
    // A CRLF line end: its CR is not part of the record.
    if (bytes && bytes.length > 0 && bytes[bytes.length - 1] === CR) {
      bytes = bytes.subarray(0, bytes.length - 1);
      size -= 1;
    }
    const record: RawRecord = { bytes, size, offset: this.offset, line: this.line, fields: this.fields };
    this.parts = [];
    this.size = 0;
    this.offset = next;
    this.fields = 1;
    this.atFieldStart = true;
    this.inQuotes = false;
    this.quotePending = false;
    return record;
  }
}

/** A record that holds nothing but spaces (a blank line): not a row. */
function isBlank(record: RawRecord): boolean {
  return record.bytes !== undefined && /^[ \t\r]*$/.test(record.bytes.toString("latin1"));
}

/** The UTF-8 byte order mark at a buffer's start. */
function withoutBom(bytes: Buffer): Buffer {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

// ---------------------------------------------------------------------------------------------
// Fields and cells (csv-parse, loaded on demand)

type CsvParse = typeof import("csv-parse/sync");
let csvParse: Promise<CsvParse> | undefined;
/** csv-parse, loaded by the first CSV file sniffed or read (a stage that reads none never loads it). */
const loadCsvParse = (): Promise<CsvParse> => {
  csvParse ??= import("csv-parse/sync");
  return csvParse;
};

/** One record's fields, or why they cannot be read (csv-parse's message). */
function parseFields(parse: CsvParse["parse"], text: string, delimiter: CsvDelimiter): string[] | { error: string } {
  try {
    const records = parse(text, {
      delimiter,
      record_delimiter: "\n",
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: false,
      bom: false,
    }) as string[][];
    if (records.length !== 1) return { error: `it parses as ${records.length} CSV records, not one` };
    return records[0] as string[];
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * A cell that looks like a Python literal rather than JSON: a list or dict as pandas `to_csv`
 * writes it (`str(value)`: single-quoted strings, True/False/None).
 */
export function isPythonLiteral(cell: string): boolean {
  const text = cell.trim();
  if (!/^[[{(]/.test(text) || !/[\]})]$/.test(text)) return false;
  return /[[{(,:]\s*'/.test(text) || /[[{(,:]\s*(True|False|None)\s*[\]}),]/.test(text);
}

/** Why a row with Python-literal cells is refused: the column, and how to write JSON instead. */
export function pythonLiteralReason(column: string, cell: string): string {
  const shown = cell.length > 60 ? `${cell.slice(0, 60)}…` : cell;
  return (
    `column "${column}" holds a Python literal (${shown}), as pandas DataFrame.to_csv writes list and dict columns, not JSON; ` +
    'lwm-data does not evaluate Python. Write the rows as JSONL (df.to_json(path, orient="records", lines=True)), ' +
    "or json.dumps such columns before to_csv"
  );
}

type Row = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string; field?: string };

/** A data row's fields as its JSON object (column → cell value), or why it is not one. */
function rowObject(columns: readonly string[], fields: readonly string[]): Row {
  if (fields.length < columns.length) {
    const missing = columns[fields.length] as string;
    return {
      ok: false,
      reason: `fewer fields than the header's ${columns.length} columns (${fields.length}): column "${missing}" and any after it are missing`,
      field: missing,
    };
  }
  if (fields.length > columns.length)
    return {
      ok: false,
      reason: `more fields than the header's ${columns.length} columns (${fields.length}): field ${columns.length + 1} has no column`,
      field: `field ${columns.length + 1}`,
    };
  const value: Record<string, unknown> = {};
  for (const [index, column] of columns.entries()) {
    if (column === "") continue;
    const cell = fields[index] as string;
    // An empty cell is how CSV writers write a missing value (csv.DictWriter's restval, pandas' NaN and None).
    if (cell === "") continue;
    const parsed = cellValue(column, cell);
    if (parsed === PYTHON_LITERAL) return { ok: false, reason: pythonLiteralReason(column, cell), field: column };
    value[column] = parsed;
  }
  return { ok: true, value };
}

const PYTHON_LITERAL = Symbol("python literal");

/** A cell as a JSON value: a JSON array or object is that value; anything else stays text. */
function cellValue(column: string, cell: string): unknown {
  if (column === "text") return cell;
  const text = cell.trimStart();
  if (text.startsWith("[") || text.startsWith("{")) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === "object" && value !== null && !nestsTooDeep(value)) return value;
    } catch {
      if (isPythonLiteral(cell)) return PYTHON_LITERAL;
    }
  }
  return cell;
}

// ---------------------------------------------------------------------------------------------
// Detection

/** The records of a head for one delimiter: whole ones only (a head cut mid-record loses its last). */
function headRecords(head: Buffer, delimiter: CsvDelimiter, whole: boolean): RawRecord[] {
  const splitter = new RecordSplitter(delimiter.charCodeAt(0), Number.MAX_SAFE_INTEGER);
  const records: RawRecord[] = [];
  for (const record of splitter.feed(head)) {
    if (!isBlank(record)) records.push(record);
    if (records.length > CSV_PROBE_ROWS) return records;
  }
  const last = whole ? splitter.finish() : undefined;
  if (last && last.openQuoteField === undefined && !isBlank(last)) records.push(last);
  return records;
}

/** A header cell that names a column: short, one line, not padded, not JSON or prose. */
function isColumnName(name: string, index: number): boolean {
  // pandas writes its index under an empty name, first.
  if (name === "") return index === 0;
  return (
    name.length <= MAX_COLUMN_NAME &&
    // A number, a date or a time is a value, not a column name (a log line's timestamp).
    !/^[-+\d]/.test(name) &&
    name.trim() === name &&
    !/[\r\n"{}[\]]/.test(name) &&
    // A sentence is not a column name.
    !/[.!?]\s|:\s+\D/.test(name) &&
    name.split(/\s+/).length <= 4
  );
}

function isHeader(columns: readonly string[]): boolean {
  const named = columns.filter((name) => name !== "");
  if (named.length === 0 || new Set(named).size !== named.length) return false;
  if (!columns.every(isColumnName)) return false;
  // One column is a CSV only when it is one the readers know (a text or a conversation column).
  return named.length >= 2 || named[0] === "text" || TRAJECTORY_COLUMNS.has(named[0] as string);
}

/**
 * The delimiters whose fields line up: the header and every probed row with the same count. Those
 * that cut the header into several fields come first (a file without tabs is one column as TSV).
 */
function headDelimiters(head: Buffer, whole: boolean): { delimiter: CsvDelimiter; records: RawRecord[] }[] {
  const found: { delimiter: CsvDelimiter; records: RawRecord[] }[] = [];
  for (const delimiter of DELIMITERS) {
    const records = headRecords(head, delimiter, whole);
    const [header, ...rows] = records;
    if (!header || rows.length === 0) continue;
    if (rows.slice(0, CSV_PROBE_ROWS).every((row) => row.fields === header.fields)) found.push({ delimiter, records });
  }
  return found.sort((a, b) => Number((b.records[0] as RawRecord).fields > 1) - Number((a.records[0] as RawRecord).fields > 1));
}

/** What a CSV file's delimiter is called in descriptions. */
function delimiterName(delimiter: CsvDelimiter): string {
  return delimiter === "\t" ? "tab-separated (TSV)" : delimiter === "," ? "comma-separated" : "semicolon-separated";
}

function describeCsv(dialect: CsvDialect): string {
  const named = dialect.columns.filter((name) => name !== "");
  const shown = named.slice(0, 12).join(", ") + (named.length > 12 ? ", …" : "");
  return `CSV rows (${delimiterName(dialect.delimiter)}, ${named.length} column(s): ${shown})`;
}

/**
 * The dialect and first rows of a head that is CSV: a header of column names, then rows with as
 * many fields each (the first CSV_PROBE_ROWS of them, as far as the head holds them whole).
 * Undefined for anything else: JSON, a packed file, prose with commas, a log.
 */
export async function csvShapeOfHead(rawHead: string, headBytes = LAYOUT_HEAD_BYTES): Promise<CsvShape | undefined> {
  if (layoutOfHead(rawHead).kind !== "text" || packedFileKind(rawHead)) return undefined;
  const head = withoutBom(Buffer.from(rawHead));
  const whole = Buffer.byteLength(rawHead) < headBytes;
  const candidates = headDelimiters(head, whole);
  if (candidates.length === 0) return undefined;
  const { parse } = await loadCsvParse();
  for (const { delimiter, records } of candidates) {
    const shape = shapeOf(parse, delimiter, records);
    if (shape) return shape;
  }
  return undefined;
}

/** The shape of a head's records cut by one delimiter, if its first is a header and the next parse as rows. */
function shapeOf(parse: CsvParse["parse"], delimiter: CsvDelimiter, records: readonly RawRecord[]): CsvShape | undefined {
  const fieldsOf = (record: RawRecord) => parseFields(parse, (record.bytes as Buffer).toString("utf8"), delimiter);
  const columns = fieldsOf(records[0] as RawRecord);
  if (!Array.isArray(columns) || !isHeader(columns)) return undefined;
  const dialect: CsvDialect = { delimiter, columns };
  const description = describeCsv(dialect);
  const rows: Record<string, unknown>[] = [];
  for (const record of records.slice(1, 1 + CSV_PROBE_ROWS)) {
    const fields = fieldsOf(record);
    // Quotes that do not balance as CSV's: not a CSV file after all.
    if (!Array.isArray(fields) || fields.length !== columns.length) return undefined;
    const row = rowObject(columns, fields);
    if (!row.ok) return { kind: "refused", dialect, description, reason: `the file is ${description}: ${row.reason}` };
    rows.push(row.value);
  }
  const textOnly = columns.includes("text") && !columns.some((name) => TRAJECTORY_COLUMNS.has(name));
  return { kind: "rows", dialect, rows, description, textOnly };
}

/** A file's CSV dialect, when its head is CSV (what `recordLines` asks before reading a text file as rows). */
export async function csvDialectOf(path: string): Promise<CsvDialect | undefined> {
  const head = await readHead(path);
  // (Cheap checks first: most files that get here are JSON, which is never CSV.)
  if (layoutOfHead(head).kind !== "text") return undefined;
  return (await csvShapeOf(head, path))?.dialect;
}

/** A head read further when its first row is longer than the 64 KiB head (an agent's conversation in one cell). */
const CSV_DETECT_BYTES = 16 << 20;

/**
 * `csvShapeOfHead`, reading up to CSV_DETECT_BYTES of the file when the head is cut inside the first
 * row after a header (a row's one long cell); what both detection and reading ask.
 */
export async function csvShapeOf(head: string, path: string): Promise<CsvShape | undefined> {
  const shape = await csvShapeOfHead(head);
  if (shape || !cutInFirstRow(head)) return shape;
  return csvShapeOfHead(await readHead(path, CSV_DETECT_BYTES), CSV_DETECT_BYTES);
}

/** A cut head (the file goes on) that holds one whole record and no more, for some delimiter: a header whose first row is long. */
function cutInFirstRow(rawHead: string): boolean {
  if (Buffer.byteLength(rawHead) < LAYOUT_HEAD_BYTES || layoutOfHead(rawHead).kind !== "text" || packedFileKind(rawHead)) return false;
  const head = withoutBom(Buffer.from(rawHead));
  return DELIMITERS.some((delimiter) => {
    const records = headRecords(head, delimiter, false);
    const [header] = records;
    if (records.length !== 1 || !header?.bytes) return false;
    // One column: only a name the readers know (as `isHeader` asks).
    const name = header.bytes.toString("utf8").replace(/^"|"$/g, "");
    return header.fields > 1 || name === "text" || TRAJECTORY_COLUMNS.has(name);
  });
}

// ---------------------------------------------------------------------------------------------
// Reading (recordLines)

type RecordLine = { kind: "line"; text: string; source: LineSource } | Extract<ReadItem, { kind: "quarantine" }>;

function quarantine(source: SourceRef, reason: string, field?: string): Extract<ReadItem, { kind: "quarantine" }> {
  const entry: QuarantineEntry = { source, stage: "read", ...(field ? { field } : {}), reason };
  return { kind: "quarantine", entry };
}

/**
 * The rows of a CSV file as record lines (one compact JSON object per data row), streamed: memory
 * holds one row. Every data row yields one item: its line, or its quarantine entry (too long, a
 * field count other than the header's, fields that do not parse, a Python-literal cell, a quoted
 * field open at the end of the file). With `options.range`, only the task whose range starts the
 * file reads it (quoted newlines make byte cuts unsafe).
 */
export async function* csvRecordLines(
  path: string,
  options: ReaderOptions,
  format: string,
  dialect: CsvDialect,
): AsyncGenerator<RecordLine> {
  if (options.range && options.range.start > 0) return;
  const { parse } = await loadCsvParse();
  const { delimiter, columns } = dialect;
  const { maxLineBytes } = options;
  const { stream } = await openDecompressed(path);
  const splitter = new RecordSplitter(delimiter.charCodeAt(0), maxLineBytes);
  let header = true;
  let row = 0;
  const itemOf = (record: RawRecord): RecordLine | undefined => {
    if (isBlank(record)) return undefined;
    if (header) {
      // The header was read by detection (the same bytes): only passed over here.
      header = false;
      return undefined;
    }
    const index = row;
    row += 1;
    const source: LineSource = { uri: path, row: index, line: record.line, offset: record.offset, format };
    const where = `row ${index} (line ${record.line})`;
    if (record.openQuoteField !== undefined) {
      const column = columns[record.openQuoteField] ?? `field ${record.openQuoteField + 1}`;
      return quarantine(
        source,
        `quoted field still open at the end of the file: ${where}, column "${column}" (the file is cut, or a quote in it is not doubled)`,
        column,
      );
    }
    if (!record.bytes)
      return quarantine(source, `CSV row over the ${maxLineBytes}-byte limit (input.max_line_bytes): ${where} is ${record.size} bytes`);
    const fields = parseFields(parse, record.bytes.toString("utf8"), delimiter);
    if (!Array.isArray(fields)) return quarantine(source, `CSV row that does not parse: ${where}: ${fields.error}`);
    const object = rowObject(columns, fields);
    // The cause first (what `run` groups its top reasons by), then where.
    if (!object.ok) return quarantine(source, `${object.reason} (row ${index}, line ${record.line})`, object.field);
    const text = JSON.stringify(object.value);
    const bytes = Buffer.byteLength(text);
    if (bytes > maxLineBytes)
      return quarantine(
        source,
        `CSV row over the ${maxLineBytes}-byte limit as one JSON line (input.max_line_bytes): ${where} is ${bytes} bytes as JSON`,
      );
    return { kind: "line", text, source };
  };
  let first = true;
  try {
    for await (const raw of stream as AsyncIterable<Buffer>) {
      const chunk = first ? withoutBom(raw) : raw;
      if (first) splitter.skip(raw.length - chunk.length);
      first = false;
      for (const record of splitter.feed(chunk)) {
        const item = itemOf(record);
        if (item) yield item;
      }
    }
    const last = splitter.finish();
    const item = last && itemOf(last);
    if (item) yield item;
  } finally {
    stream.destroy();
  }
}
