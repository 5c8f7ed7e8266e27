import type { Table } from "apache-arrow";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { inputPrefix } from "../io/input-bytes.ts";
import { acquireDecoder, fromIpc, GroupDecoder, groupsInRange, releaseDecoder, replyError } from "../io/parquet-decoder.ts";
import type { LineSource, ReaderOptions, ReadItem } from "./reader.ts";
import { lineWithinLimit, type RecordLine } from "./record-line.ts";

/**
 * Parquet files of dataset rows (issue 34): the Hub's agent corpora (SWE-rebench-OpenHands,
 * SWE-Gym, Toucan-1.5M, tau-bench exports, SWE-smith) ship as Parquet whose rows are the objects
 * the JSONL row readers read. Such a file is read by the reader its rows belong to, row by row:
 *
 * - Each row becomes one record line: the row as a plain JSON object (column → key; structs →
 *   objects, lists → arrays, maps → objects (keys as text), 64-bit integers as numbers when within
 *   ±2^53 and as exact decimal strings beyond, binary as UTF-8 text when valid (base64 otherwise),
 *   timestamps and dates as ISO 8601 text), written as compact JSON. A null column is null; a null
 *   field inside a struct is left out, since Parquet cannot tell it from a key the object lacked
 *   and writers (the `datasets` library) give each struct the union of its rows' keys, filled with
 *   null (tool schemas' `properties`, messages' `tool_calls`); a null list element stays null.
 * - Its source is `{ uri, row, offset, format }`: the 0-based row in the file and its row group's
 *   byte offset, as text-parquet names rows. A byte-range task reads the row groups whose first
 *   byte falls in its range (the offsets text-parquet uses), so a 2 GB shard is split.
 * - Memory holds one row group; decoding runs in a worker thread (src/io/parquet-decoder.ts): a
 *   damaged row group quarantines its rows, each once, and reading goes on with the next group.
 *
 * `format: auto` (src/read/registry.ts `detectFormat`): a Parquet file with a `text` string column
 * and none of the trajectory columns below goes to text-parquet as before; otherwise the first
 * rows of the first row group vote like JSONL lines, among the readers that read JSON arrays
 * element by element (ARRAY_ELEMENT_FORMATS).
 */

/** Column names that make a file of rows trajectories even beside a `text` column. */
export const TRAJECTORY_COLUMNS: ReadonlySet<string> = new Set([
  "messages",
  "conversations",
  "conversation",
  "trajectory",
  "traj",
  "turns",
  "steps",
  "history",
  "events",
  "actions",
  "interactions",
  "tool_calls",
]);

/** Rows converted for detection, at most (as many lines as detection probes). */
export const PROBE_ROWS = 8;
/** Compact JSON held for detection, at most (the size of a detection head). */
const PROBE_BYTES = 64 << 10;

/** The Parquet magic at a head's start (the decompressed head a sniff sees). */
export function isParquetHead(head: string): boolean {
  return head.startsWith("PAR1");
}

/** Whether a file's raw bytes start with the Parquet magic (a compressed Parquet is not one: it cannot be read by ranges). */
export async function isParquetFile(path: string): Promise<boolean> {
  try {
    const prefix = await inputPrefix(path, 4);
    return Buffer.from(prefix).toString("latin1") === "PAR1";
  } catch {
    return false;
  }
}

/** What a Parquet file holds, for detection. */
export type ParquetShape =
  /** A `text` string column and no trajectory column: text-parquet's. */
  | { kind: "text" }
  /** Rows: the first ones (at most PROBE_ROWS, from the first row group) as plain JSON values. */
  | { kind: "rows"; rows: unknown[]; description: string }
  /** The footer or the first row group cannot be read: text-parquet reports it as today. */
  | { kind: "unreadable"; reason: string };

/** Reads a Parquet file's footer and, unless it is text-parquet's, its first few rows (never more than one row group's). */
export async function parquetShape(path: string): Promise<ParquetShape> {
  const decoder = acquireDecoder();
  try {
    const { tableFromIPC, isTextType, describeParquet, rowObject } = await rowValues();
    const opened = await decoder.request({ kind: "open", path });
    if (opened.kind !== "opened") return { kind: "unreadable", reason: replyError(opened) };
    const schemaTable = fromIpc((ipc) => tableFromIPC(ipc), opened.schemaIpc);
    if ("why" in schemaTable) return { kind: "unreadable", reason: schemaTable.why };
    const schema = schemaTable.value.schema;
    const text = schema.fields.find((field) => field.name === "text");
    const trajectoryColumn = schema.fields.some((field) => TRAJECTORY_COLUMNS.has(field.name));
    if (text && isTextType(text.type) && !trajectoryColumn) return { kind: "text" };
    const total = opened.rowGroupRows.reduce((sum, rows) => sum + rows, 0);
    const description = describeParquet(schema, total, opened.rowGroupRows.length);
    const firstGroup = opened.rowGroupRows.findIndex((rows) => rows > 0);
    if (firstGroup === -1) return { kind: "rows", rows: [], description };
    const reply = await decoder.request({ kind: "read", group: firstGroup, limit: PROBE_ROWS });
    if (reply.kind !== "group") return { kind: "unreadable", reason: `row group ${firstGroup} could not be decoded: ${replyError(reply)}` };
    const group = fromIpc((ipc) => tableFromIPC(ipc), reply.ipc);
    if ("why" in group) return { kind: "unreadable", reason: `row group ${firstGroup} could not be decoded: ${group.why}` };
    const table = group.value;
    const rows: unknown[] = [];
    let held = 0;
    for (let i = 0; i < Math.min(table.numRows, PROBE_ROWS) && held < PROBE_BYTES; i++) {
      const row = rowObject(table, i);
      rows.push(row);
      held += JSON.stringify(row).length;
    }
    return { kind: "rows", rows, description };
  } finally {
    await releaseDecoder(decoder);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading (recordLines)

type RowValues = typeof import("./parquet-row-values.ts");
/** The row conversion (and apache-arrow with it), loaded by the first Parquet file read. */
const rowValues = (): Promise<RowValues> => import("./parquet-row-values.ts");

function quarantine(source: SourceRef, reason: string, field?: string): Extract<ReadItem, { kind: "quarantine" }> {
  const entry: QuarantineEntry = { source, stage: "read", ...(field ? { field } : {}), reason };
  return { kind: "quarantine", entry };
}

/**
 * The rows of a Parquet file as record lines (one compact JSON object per row), row group by row
 * group; with `options.range`, only the groups whose first byte falls in it. Every row yields one
 * item: its line, or a quarantine entry (its group could not be decoded, it is over
 * `input.max_line_bytes` as JSON). A file that is not readable Parquet is one quarantine entry,
 * from the task whose range starts the file.
 */
export async function* parquetRecordLines(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordLine> {
  const { range } = options;
  const reportsFile = !range || range.start === 0;
  const file: SourceRef = { uri: path, offset: 0, format };
  const groups = new GroupDecoder(path);
  try {
    const values = await rowValues();
    const opened = await groups.open();
    if (opened.kind !== "opened") {
      if (reportsFile)
        yield quarantine(file, `the file starts with the Parquet magic but cannot be read as Parquet: ${replyError(opened)}`);
      return;
    }
    for (const { group, rows, first, offset } of groupsInRange(opened, range)) {
      const at = (row: number): LineSource => ({ uri: path, row, offset, format });
      const read = await groups.read(group);
      const decoded = "why" in read ? read : fromIpc((ipc) => values.tableFromIPC(ipc), read.ipc);
      if ("why" in decoded) {
        const span = `row group ${group} (rows ${first}–${first + rows - 1})`;
        for (let row = first; row < first + rows; row++) yield quarantine(at(row), `${span} could not be decoded: ${decoded.why}`);
      } else yield* rowLines(values, decoded.value, first, rows, at, options.maxLineBytes);
    }
  } finally {
    await groups.close();
  }
}

/**
 * One record line per row of a decoded table (a Parquet row group, an Arrow record batch): the row
 * as compact JSON, or its quarantine entry (rows the table lacks, nested too deep, too long).
 */
export function* rowLines(
  values: RowValues,
  table: Table,
  first: number,
  rows: number,
  at: (row: number) => LineSource,
  maxLineBytes: number,
): Generator<RecordLine> {
  for (let i = 0; i < rows; i++) {
    const source = at(first + i);
    if (i >= table.numRows) {
      yield quarantine(source, `the row group decoded to ${table.numRows} rows, but the file's footer says ${rows}`);
      continue;
    }
    let text: string;
    try {
      text = JSON.stringify(values.rowObject(table, i));
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      yield quarantine(source, `row ${first + i}: nests too deep to write as one JSON line`);
      continue;
    }
    yield lineWithinLimit(source, text, maxLineBytes, `row ${first + i}`);
  }
}
