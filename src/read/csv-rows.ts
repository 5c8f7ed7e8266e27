import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readHeadBytes } from "./head-bytes.ts";
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
 * - Fields follow RFC 4180: quoted fields hold delimiters, quotes (`""`) and newlines; a UTF-8 byte
 *   order mark is passed over (offsets count it), and LF, CRLF and bare CR line ends (old Mac, some
 *   Excel exports) all end a record, as Python's csv reader and pandas take them. Excel's `sep=X`
 *   first line declares the delimiter and is passed over. Record boundaries are found here, byte by byte, so memory
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
 * recognizes: a header of column names, then rows with as many fields as the header (at least half
 * of the first rows in the head, and one; the head read up to 16 MiB when the first row is longer
 * than the 64 KiB head), delimiter `,`, tab or `;` (or the one a `sep=` line declares, `|` too). A
 * file with a `text` column and none of the trajectory columns is text-jsonl's (as text-parquet
 * takes such a Parquet file); otherwise the first good rows vote like JSONL lines, among the
 * readers that read rows one by one (ARRAY_ELEMENT_FORMATS); a bad row among them (ragged, quotes
 * that do not parse, a Python literal) does not vote and is quarantined when read. A file that is a
 * header and no data row is an empty input (0 records, with a note naming its columns). A UTF-16
 * CSV (Excel's "Unicode Text" export) is refused, saying how to convert it (`utf16CsvRefusal`).
 */

/** The delimiters told apart, in the order they are tried. */
const DELIMITERS = ["\t", ",", ";"] as const;
/** The delimiters Excel's `sep=X` first line may declare: those, and `|` (never sniffed: Markdown tables have it). */
const DECLARED_DELIMITERS = [...DELIMITERS, "|"] as const;
export type CsvDelimiter = (typeof DECLARED_DELIMITERS)[number];

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
  /** The file starts with Excel's `sep=X` line, which declares the delimiter: passed over, not a row. */
  sepLine?: true;
}

/**
 * A CSV head: its dialect and its first good rows as JSON objects (detection; none for a file that
 * holds a header and no data row), or why its rows cannot be read.
 */
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
 * Cuts a byte stream into CSV records (RFC 4180): a line end outside quotes ends a record — LF,
 * CRLF, or a CR alone (old Mac and some Excel exports write those; Python's csv reader and pandas
 * take all three) — and a quote at a field's start opens a quoted field, `""` inside one is a
 * quote, and a quote elsewhere is text (as csv-parse's `relax_quotes` and Python's csv reader take
 * it). Line ends inside quoted fields are the field's text, kept as written; they count as lines
 * (CRLF as one). Holds at most `maxBytes` of a record; past that it only counts. Delimiters,
 * quotes and line ends are ASCII, so UTF-8 text is never split inside a character.
 */
class RecordSplitter {
  private inQuotes = false;
  private quotePending = false;
  private atFieldStart = true;
  /** The byte before was a CR (a line end): an LF now is the rest of a CRLF, not a line of its own. */
  private afterCr = false;
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
      const afterCr = this.afterCr;
      this.afterCr = false;
      if (this.inQuotes) {
        if (!this.quotePending) {
          if (byte === QUOTE) this.quotePending = true;
          else if (byte === CR) {
            this.currentLine += 1;
            this.afterCr = true;
          } else if (byte === LF && !afterCr) this.currentLine += 1;
          continue;
        }
        this.quotePending = false;
        if (byte === QUOTE) continue;
        this.inQuotes = false;
      }
      if (byte === LF && afterCr) {
        // The LF of a CRLF whose CR ended the record: the next record starts after it.
        from = i + 1;
        this.offset += 1;
      } else if (byte === QUOTE && this.atFieldStart) {
        this.inQuotes = true;
        this.atFieldStart = false;
        this.quoteField = this.fields - 1;
      } else if (byte === this.delimiter) {
        this.fields += 1;
        this.atFieldStart = true;
      } else if (byte === LF || byte === CR) {
        this.hold(chunk.subarray(from, i));
        from = i + 1;
        yield this.take(this.position + i + 1);
        this.currentLine += 1;
        this.line = this.currentLine;
        this.afterCr = byte === CR;
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
    const bytes = this.size > this.maxBytes ? undefined : Buffer.concat(this.parts);
    const record: RawRecord = { bytes, size: this.size, offset: this.offset, line: this.line, fields: this.fields };
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

/** One record's fields, or why they cannot be read (csv-parse's message, and the 0-based field it stopped in). */
function parseFields(parse: CsvParse["parse"], text: string, delimiter: CsvDelimiter): string[] | { error: string; field?: number } {
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
    const { column } = err as { column?: unknown };
    return { error: (err as Error).message, ...(typeof column === "number" ? { field: column } : {}) };
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

/**
 * The records of a head for one delimiter: whole ones only (a head cut mid-record loses its last),
 * at most a header and CSV_PROBE_ROWS rows after the first `skip` (Excel's `sep=` line).
 */
function headRecords(head: Buffer, delimiter: CsvDelimiter, whole: boolean, skip = 0): RawRecord[] {
  const splitter = new RecordSplitter(delimiter.charCodeAt(0), Number.MAX_SAFE_INTEGER);
  const records: RawRecord[] = [];
  for (const record of splitter.feed(head)) {
    if (!isBlank(record)) records.push(record);
    if (records.length > CSV_PROBE_ROWS + skip) return records;
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
    // Control characters (a NUL, an escape) are in binary data, never in a column's name.
    !/[\p{Cc}"{}[\]]/u.test(name) &&
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
 * Excel's first line `sep=X` (X one of `,` `;` tab `|`), which declares the delimiter to Excel
 * (Excel reads it and shows the rest; some exporters write it): the delimiter, if the head starts
 * with one. Python's csv module and pandas do not know it (they would take it for the header).
 */
function declaredDelimiter(head: Buffer): CsvDelimiter | undefined {
  const match = /^sep=(.)(?:\r\n?|\n)/i.exec(head.subarray(0, 8).toString("latin1"));
  return DECLARED_DELIMITERS.find((delimiter) => delimiter === match?.[1]);
}

/** A delimiter that may cut a head into CSV records: its records (after a `sep=` line) and how many probed rows line up. */
interface HeadCut {
  delimiter: CsvDelimiter;
  /** The header, then the probed rows. */
  records: RawRecord[];
  sepLine: boolean;
  /** Probed rows with the header's field count. */
  agreeing: number;
}

/**
 * The delimiters whose fields line up: at least half of the probed rows (and one) have the
 * header's field count — a ragged row among them is a bad row, quarantined when read, not a sign
 * of another format — or, in a head that is the whole file, the header is all there is. Those that
 * cut the header into several fields come first (a file without tabs is one column as TSV), then
 * those with more rows lining up. A `sep=` first line names the one delimiter tried.
 */
function headDelimiters(head: Buffer, whole: boolean): HeadCut[] {
  const found: HeadCut[] = [];
  const declared = declaredDelimiter(head);
  const skip = declared ? 1 : 0;
  for (const delimiter of declared ? [declared] : DELIMITERS) {
    const records = headRecords(head, delimiter, whole, skip).slice(skip);
    const [header, ...rows] = records;
    if (!header) continue;
    const probed = rows.slice(0, CSV_PROBE_ROWS);
    const agreeing = probed.filter((row) => row.fields === header.fields).length;
    if (probed.length === 0 ? whole : agreeing > 0 && agreeing * 2 >= probed.length)
      found.push({ delimiter, records, sepLine: declared !== undefined, agreeing });
  }
  const split = (cut: HeadCut) => Number((cut.records[0] as RawRecord).fields > 1);
  return found.sort((a, b) => split(b) - split(a) || b.agreeing - a.agreeing);
}

/** What a CSV file's delimiter is called in descriptions. */
function delimiterName(delimiter: CsvDelimiter): string {
  if (delimiter === "\t") return "tab-separated (TSV)";
  return delimiter === "," ? "comma-separated" : delimiter === ";" ? "semicolon-separated" : "pipe-separated";
}

function describeCsv(dialect: CsvDialect): string {
  const named = dialect.columns.filter((name) => name !== "");
  const shown = named.slice(0, 12).join(", ") + (named.length > 12 ? ", …" : "");
  const hint = dialect.sepLine ? `, declared by a "sep=" first line` : "";
  return `CSV rows (${delimiterName(dialect.delimiter)}${hint}, ${named.length} column(s): ${shown})`;
}

/** What detection says of a CSV file that holds a header and no data row: 0 records. */
export function headerOnlyNote(shape: CsvShape): string {
  return `${shape.description.replace(/^CSV rows/, "a CSV header")} and no data rows`;
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
  for (const cut of candidates) {
    const shape = shapeOf(parse, cut);
    if (shape) return shape;
  }
  return undefined;
}

/**
 * The shape of a head's records cut by one delimiter, if its first is a header and the rows after
 * it parse: the good rows vote, and a bad one (its field count, its quotes, a Python-literal cell)
 * is left out here and quarantined when read. Refused when Python-literal rows outnumber good ones
 * (pandas' to_csv of list columns); not CSV when no probed row is good.
 */
function shapeOf(parse: CsvParse["parse"], { delimiter, records, sepLine }: HeadCut): CsvShape | undefined {
  const fieldsOf = (record: RawRecord) => parseFields(parse, (record.bytes as Buffer).toString("utf8"), delimiter);
  const columns = fieldsOf(records[0] as RawRecord);
  if (!Array.isArray(columns) || !isHeader(columns)) return undefined;
  const dialect: CsvDialect = { delimiter, columns, ...(sepLine ? { sepLine: true as const } : {}) };
  const description = describeCsv(dialect);
  const rows: Record<string, unknown>[] = [];
  const probed = records.slice(1, 1 + CSV_PROBE_ROWS);
  let refusal: string | undefined;
  let refused = 0;
  for (const record of probed) {
    const fields = fieldsOf(record);
    // Quotes that do not balance as CSV's, or a ragged row: a bad row, not a vote.
    if (!Array.isArray(fields) || fields.length !== columns.length) continue;
    const row = rowObject(columns, fields);
    if (row.ok) rows.push(row.value);
    else {
      refused += 1;
      refusal ??= row.reason;
    }
  }
  if (refusal !== undefined && refused > rows.length)
    return { kind: "refused", dialect, description, reason: `the file is ${description}: ${refusal}` };
  if (probed.length > 0 && rows.length === 0) return undefined;
  // A header with no rows is evidence only when it names a column the readers know (a text or a
  // conversation column): one line such as `a,b` is as likely a word list or a damaged record.
  if (probed.length === 0 && !columns.some((name) => name === "text" || TRAJECTORY_COLUMNS.has(name))) return undefined;
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
  const declared = declaredDelimiter(head);
  const skip = declared ? 1 : 0;
  return (declared ? [declared] : DELIMITERS).some((delimiter) => {
    const records = headRecords(head, delimiter, false, skip).slice(skip);
    const [header] = records;
    if (records.length !== 1 || !header?.bytes) return false;
    // One column: only a name the readers know (as `isHeader` asks).
    const name = header.bytes.toString("utf8").replace(/^"|"$/g, "");
    return header.fields > 1 || name === "text" || TRAJECTORY_COLUMNS.has(name);
  });
}

/**
 * Why a UTF-16 file of CSV or TSV rows is refused, when it is one: Excel's "Unicode Text" export
 * writes a sheet as UTF-16 (little-endian, with a byte order mark), tab-separated. lwm-data reads
 * UTF-8 (rows are cut byte by byte at ASCII delimiters and line ends, and sources name byte
 * offsets), so the reason says how to convert it. Told from the head's bytes, decoded as UTF-16:
 * a byte order mark (FF FE, FE FF), or ASCII with a NUL after or before each character; undefined
 * for anything else (a UTF-16 file that is not CSV keeps the refusal detection gives it).
 */
export async function utf16CsvRefusal(head: string, path: string): Promise<string | undefined> {
  // Cheap test first, on the text head: a byte order mark reads as two U+FFFD, ASCII UTF-16 as NULs between characters.
  if (!head.startsWith("\uFFFD\uFFFD") && !(head.length >= 8 && (head.charCodeAt(0) === 0 || head.charCodeAt(1) === 0))) return undefined;
  const read = await readHeadBytes(path, LAYOUT_HEAD_BYTES).catch(() => undefined);
  if (!read) return undefined;
  const { bytes, whole } = read;
  const bom = bytes[0] === 0xff && bytes[1] === 0xfe ? "le" : bytes[0] === 0xfe && bytes[1] === 0xff ? "be" : undefined;
  const byteOrder = bom ?? (bytes[0] === 0 && bytes[1] !== 0 ? "be" : bytes[0] !== 0 && bytes[1] === 0 ? "le" : undefined);
  if (!byteOrder) return undefined;
  const text = new TextDecoder(byteOrder === "le" ? "utf-16le" : "utf-16be").decode(bytes.subarray(0, bytes.length & ~1));
  // Whole or not as the bytes were (the text is shorter than the bytes it came from).
  const shape = await csvShapeOfHead(text, whole ? Number.POSITIVE_INFINITY : Buffer.byteLength(text));
  if (!shape) return undefined;
  const encoding = `UTF-16 (${byteOrder === "le" ? "little" : "big"}-endian${bom ? ", with a byte order mark" : ""})`;
  const name = path.split("/").pop() ?? path;
  return (
    `the file is ${shape.description} in ${encoding}, as Excel's "Unicode Text" export writes a sheet; lwm-data reads UTF-8 text: ` +
    `convert it first (\`iconv -f UTF-16 -t UTF-8 ${name} > ${name.replace(/\.[^.]*$/, "")}.utf8${shape.dialect.delimiter === "\t" ? ".tsv" : ".csv"}\`), ` +
    'or save the sheet from Excel as "CSV UTF-8 (Comma delimited)"'
  );
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
  // Excel's `sep=` line, then the header: read by detection (the same bytes), only passed over here.
  let before = dialect.sepLine ? 2 : 1;
  let row = 0;
  const itemOf = (record: RawRecord): RecordLine | undefined => {
    if (isBlank(record)) return undefined;
    if (before > 0) {
      before -= 1;
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
    if (!Array.isArray(fields)) {
      const column = fields.field === undefined ? undefined : (columns[fields.field] ?? `field ${fields.field + 1}`);
      return quarantine(source, `CSV row that does not parse: ${where}${column ? `, column "${column}"` : ""}: ${fields.error}`, column);
    }
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
