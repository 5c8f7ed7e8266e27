import { DataType, type Table, tableFromIPC, type Vector } from "apache-arrow";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { Decoder, failIfUnreadable, groupOffsets, replyError } from "../io/parquet-decoder.ts";
import { excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId } from "./record-helpers.ts";

const FORMAT = "text-parquet";
const TEXT_COLUMN = "text";
const ID_COLUMN = "id";
/** Columns named in a quarantine reason at most. */
const SHOWN_COLUMNS = 12;

/**
 * Plain text documents from a Parquet file (a FineWeb-style dataset shard, on a disk, in a bucket
 * as `s3://…` or on the Hub as `hf://datasets/…`): one document per row, from the `text` column
 * (a string, or binary holding UTF-8) and the `id` column when there is one (a string or an
 * integer; else, or when null or blank, `text-` + 16 hex of the text's sha256). Other columns
 * (url, dump, token_count, …) are never decoded. Rows are read one row group at a time, so memory
 * holds one group, however large the file; a remote file is read by ranged GETs of its footer and
 * of the column chunks decoded, never copied whole.
 *
 * Every row yields one item: a document, or a quarantine entry at its row (null text, binary
 * text that is not UTF-8, a text column of another type, a row group that cannot be decoded).
 * A file without a `text` column, or that is not Parquet at all, is one quarantine entry.
 *
 * Decoding runs in a worker thread: parquet-wasm panics on some damaged pages, which kills its
 * WebAssembly instance and, on the calling thread, the process (see src/verify/parquet-worker.ts).
 * A panic only costs the row group being decoded; the next group gets a fresh worker.
 */
export const textParquetReader: Reader = {
  name: FORMAT,
  domain: "text",
  description: "plain text documents from a Parquet file (FineWeb-style): a `text` column, an optional `id` column",

  sniff(head) {
    return head.startsWith("PAR1");
  },

  // A big Parquet file (a 2 GB FineWeb shard) is cut into byte-range tasks like a big JSONL file:
  // each row group belongs to the range its first byte falls in (see `groupOffsets`).
  splittable: true,

  async *read(path: string, options?: ReaderOptions): AsyncGenerator<ReadItem> {
    const range = options?.range;
    // A problem with the file as a whole is reported once: by the range that starts it.
    const reportsFile = !range || range.start === 0;
    const file: SourceRef = { uri: path, format: FORMAT };
    let decoder: Decoder | undefined = new Decoder();
    try {
      const opened = await decoder.request({ kind: "open", path });
      failIfUnreadable(path, opened);
      if (opened.kind !== "opened") {
        if (reportsFile) yield quarantine(file, { reason: `cannot read the file as Parquet: ${replyError(opened)}` });
        return;
      }
      const names = tableFromIPC(opened.schemaIpc).schema.fields.map((field) => field.name);
      if (!names.includes(TEXT_COLUMN)) {
        if (reportsFile) yield quarantine(file, { field: TEXT_COLUMN, reason: `no "${TEXT_COLUMN}" column; ${describeColumns(names)}` });
        return;
      }
      const offsets = groupOffsets(opened.rowGroupBytes);
      const columns = names.includes(ID_COLUMN) ? [TEXT_COLUMN, ID_COLUMN] : [TEXT_COLUMN];
      // Once a fresh decoder cannot even open the file, the rest of it is unreadable.
      let unreadable: string | undefined;
      let first = 0;
      for (const [group, rows] of opened.rowGroupRows.entries()) {
        const offset = offsets[group] as number;
        if (range && (offset < range.start || offset >= range.end)) {
          first += rows;
          continue;
        }
        const at = (row: number): SourceRef => ({ uri: path, row, offset, format: FORMAT });
        const span = `row group ${group} (rows ${first}–${first + rows - 1})`;
        if (!decoder && !unreadable) {
          decoder = new Decoder();
          const reopened = await decoder.request({ kind: "open", path });
          failIfUnreadable(path, reopened);
          if (reopened.kind !== "opened") unreadable = `the file could not be opened again: ${replyError(reopened)}`;
        }
        const reply = unreadable || !decoder ? undefined : await decoder.request({ kind: "read", group, columns });
        if (reply) failIfUnreadable(path, reply);
        if (reply?.kind !== "group") {
          const why = reply ? replyError(reply) : unreadable;
          // A panic leaves the decoder's WebAssembly instance unusable: the next group starts a new one.
          if (reply?.kind === "died") decoder = undefined;
          for (let row = first; row < first + rows; row++) yield quarantine(at(row), { reason: `${span} could not be decoded: ${why}` });
        } else yield* groupItems(tableFromIPC(reply.ipc), first, rows, at);
        first += rows;
      }
    } finally {
      await decoder?.close();
    }
  },
};

function quarantine(source: SourceRef, entry: Omit<QuarantineEntry, "source" | "stage">): Extract<ReadItem, { kind: "quarantine" }> {
  return { kind: "quarantine", entry: { source, stage: "read", ...entry } };
}

function describeColumns(names: readonly string[]): string {
  if (names.length === 0) return "the file has no columns";
  const shown = names.slice(0, SHOWN_COLUMNS).join(", ");
  return `the file has columns ${shown}${names.length > SHOWN_COLUMNS ? `, … (${names.length} in all)` : ""}`;
}

/** How a column's values read as text: strings as they are, binary as UTF-8, anything else not at all. */
type ValueKind = "string" | "binary" | "integer" | "float" | "other";

function valueKind(type: DataType): ValueKind {
  const values = DataType.isDictionary(type) ? type.dictionary : type;
  if (DataType.isUtf8(values) || DataType.isLargeUtf8(values) || DataType.isUtf8View(values)) return "string";
  if (DataType.isBinary(values) || DataType.isLargeBinary(values) || DataType.isBinaryView(values) || DataType.isFixedSizeBinary(values))
    return "binary";
  if (DataType.isInt(values)) return "integer";
  if (DataType.isFloat(values)) return "float";
  return "other";
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A binary value as text, or undefined when its bytes are not UTF-8. */
function utf8(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** One item per row of a decoded row group (`rows` from the footer: rows it lacks are quarantined). */
function* groupItems(table: Table, first: number, rows: number, at: (row: number) => SourceRef): Generator<ReadItem> {
  const text = table.getChild(TEXT_COLUMN) as Vector | null;
  const id = table.getChild(ID_COLUMN) as Vector | null;
  const textKind = text ? valueKind(text.type) : "other";
  const idKind = id ? valueKind(id.type) : undefined;
  const texts = text?.[Symbol.iterator]();
  const ids = id?.[Symbol.iterator]();
  for (let i = 0; i < rows; i++) {
    const source = at(first + i);
    if (i >= table.numRows) {
      yield quarantine(source, { reason: `the row group decoded to ${table.numRows} rows, but the file's footer says ${rows}` });
      continue;
    }
    const value: unknown = texts?.next().value;
    const own = idKind === undefined ? {} : rowId(ids?.next().value, idKind, id?.type);
    const named = "id" in own && own.id !== undefined ? { id: own.id } : {};
    let documentText: string;
    if (textKind !== "string" && textKind !== "binary") {
      yield quarantine(source, {
        ...named,
        field: TEXT_COLUMN,
        reason: `text column is ${text ? String(text.type) : "missing from the decoded row group"}, not a string`,
      });
      continue;
    }
    if (value === null || value === undefined) {
      yield quarantine(source, { ...named, field: TEXT_COLUMN, reason: "text is null" });
      continue;
    }
    if (textKind === "binary") {
      const decoded = utf8(value as Uint8Array);
      if (decoded === undefined) {
        yield quarantine(source, { ...named, field: TEXT_COLUMN, reason: "text is binary, not UTF-8 text" });
        continue;
      }
      documentText = decoded;
    } else documentText = value as string;
    if ("error" in own) {
      yield quarantine(source, { field: ID_COLUMN, reason: own.error, excerpt: excerpt(documentText) });
      continue;
    }
    yield { kind: "document", document: { id: own.id ?? contentId("text", documentText), text: documentText, source } };
  }
}

/** A row's own id (undefined when null or blank: the text's hash stands in), or why its value cannot be one. */
function rowId(value: unknown, kind: ValueKind, type: DataType | undefined): { id?: string } | { error: string } {
  if (kind === "other") return { error: `id column is ${String(type)}, not a string or an integer` };
  if (value === null || value === undefined) return {};
  if (kind === "string") return (value as string).trim() === "" ? {} : { id: value as string };
  if (kind === "binary") {
    const decoded = utf8(value as Uint8Array);
    if (decoded === undefined) return { error: "id is binary, not UTF-8 text" };
    return decoded.trim() === "" ? {} : { id: decoded };
  }
  // Integers: int64 comes as a bigint, exact. Floats: only finite ones name anything.
  if (typeof value === "number" && !Number.isFinite(value)) return { error: `id is ${value}, not a finite number` };
  return { id: String(value) };
}
