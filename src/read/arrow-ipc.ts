import { stat } from "node:fs/promises";
import type { Table } from "apache-arrow";
import type { SourceRef } from "../core/trajectory.ts";
import { inputPrefix, openRawInput } from "../io/input-bytes.ts";
import { isRemoteUri } from "../io/remote-uri.ts";
import { PROBE_ROWS, rowLines } from "./parquet-rows.ts";
import type { LineSource, ReaderOptions, ReadItem } from "./reader.ts";
import type { RecordLine } from "./record-line.ts";

/**
 * Arrow IPC files of dataset rows: what the Hugging Face `datasets` library writes to disk —
 * `Dataset.save_to_disk` (`data-00000-of-00001.arrow`), `DatasetDict.save_to_disk` (one such
 * folder per split) and its cache (`~/.cache/huggingface/datasets/…/<name>-train.arrow`), all in
 * the IPC *stream* format — and `pyarrow.ipc.new_file` files (the IPC *file* format: `ARROW1`,
 * the same stream, a footer). Read exactly like a Parquet file of rows (src/read/parquet-rows.ts):
 *
 * - Each row becomes one record line, the row as a plain JSON object (the same conversion:
 *   src/read/parquet-row-values.ts; an `arrow.json` extension value — `datasets`' `Json` feature —
 *   is its JSON value), read by the reader the first rows vote for (`format: auto`, among
 *   ARRAY_ELEMENT_FORMATS). A `text` dataset's rows vote for text-jsonl, which reads their `text`.
 * - Its source is `{ uri, row, offset: 0, format }`: the 0-based row in the file. The file is read
 *   by one task (record batches carry no byte offsets before they are read): a byte-range task
 *   that does not start the file reads none of it.
 * - The file is streamed record batch by record batch (the file format read as the stream it holds,
 *   from its 8th byte, never through its footer), so memory holds one batch however large the file.
 *   A stream that breaks (a truncated or damaged file) keeps the rows read before the break and
 *   yields one quarantine entry naming the batch and row where it broke.
 */

/** The magic of the IPC file format (then two padding bytes; the stream starts at byte 8). */
const FILE_MAGIC = "ARROW1";
const FILE_BODY_OFFSET = 8;
/** Compact JSON held for detection, at most (as Parquet's). */
const PROBE_BYTES = 64 << 10;
/** A schema message longer than this is not believed (a stream's first 8 bytes decide nothing alone). */
const MAX_SCHEMA_BYTES = 64 << 20;

/** The cheap test on a decoded head: the file magic, or a stream's continuation marker (0xFFFFFFFF, four U+FFFD). */
export function isArrowIpcHead(head: string): boolean {
  return head.startsWith(FILE_MAGIC) || head.startsWith("\uFFFD\uFFFD\uFFFD\uFFFD");
}

/** What a file's raw first bytes say it is: Parquet, an Arrow IPC file or stream, or neither. */
export type ColumnarKind = "parquet" | "arrow-file" | "arrow-stream" | undefined;

/** Told from the first 8 raw bytes (a compressed file is neither: it cannot be read by ranges). */
export function columnarKindOf(prefix: Uint8Array): ColumnarKind {
  const text = Buffer.from(prefix.buffer, prefix.byteOffset, prefix.byteLength).toString("latin1");
  if (text.startsWith("PAR1")) return "parquet";
  if (text.startsWith(FILE_MAGIC)) return "arrow-file";
  if (prefix.byteLength < 8) return undefined;
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  // A stream's first message: the continuation marker, then its metadata's length (padded to 8 bytes).
  const length = view.getInt32(4, true);
  if (view.getUint32(0, true) === 0xffff_ffff && length > 0 && length % 8 === 0 && length <= MAX_SCHEMA_BYTES) return "arrow-stream";
  return undefined;
}

/** Reads the first 8 raw bytes of a file once and says what columnar kind it is. */
export async function columnarKind(path: string): Promise<ColumnarKind> {
  try {
    return columnarKindOf(await inputPrefix(path, 8));
  } catch {
    return undefined;
  }
}

/** An Arrow IPC file or stream. */
export async function isArrowIpcFile(path: string): Promise<boolean> {
  const kind = await columnarKind(path);
  return kind === "arrow-file" || kind === "arrow-stream";
}

type ArrowModule = typeof import("../io/arrow.ts").arrow;
type RowValues = typeof import("./parquet-row-values.ts");
type Framing = typeof import("./arrow-ipc-framing.ts");
type BatchCheck = typeof import("./arrow-batch-check.ts");

/** apache-arrow, the framing and batch checks and the row conversion, loaded by the first Arrow file read (never by a process reading none). */
async function arrowModules(): Promise<{ arrow: ArrowModule; values: RowValues; framing: Framing; check: BatchCheck }> {
  const [{ arrow }, values, framing, check] = await Promise.all([
    import("../io/arrow.ts"),
    import("./parquet-row-values.ts"),
    import("./arrow-ipc-framing.ts"),
    import("./arrow-batch-check.ts"),
  ]);
  return { arrow, values, framing, check };
}

/**
 * The record batches of an Arrow IPC file or stream, streamed (the file format from its body),
 * through the framing check (src/read/arrow-ipc-framing.ts): `guard.broken` says why the stream
 * was cut short, if it was.
 */
async function openBatches(arrow: ArrowModule, framing: Framing, path: string) {
  const fileFormat = (await columnarKind(path)) === "arrow-file";
  const start = fileFormat ? FILE_BODY_OFFSET : 0;
  const stream = await openRawInput(path, { start });
  const streamBytes = isRemoteUri(path) ? undefined : (await stat(path)).size - start;
  const guard = new framing.IpcFramingGuard({ streamBytes, fileFormat });
  stream.on("error", (err) => guard.destroy(err));
  stream.pipe(guard);
  try {
    const reader = await arrow.RecordBatchReader.from(guard);
    return { reader: await reader.open(), stream, guard };
  } catch (err) {
    if (guard.broken) throw new Error(guard.broken.reason);
    throw err;
  }
}

/** "an Arrow IPC stream whose columns are a, b, c" (for refusals: the row count is known only once read). */
function describeArrow(values: RowValues, kind: ColumnarKind, names: readonly string[]): string {
  const columns = names.length === 0 ? "with no columns" : `whose columns are ${values.shownColumns(names)}`;
  return `an Arrow IPC ${kind === "arrow-file" ? "file" : "stream"} ${columns}`;
}

/** What an Arrow IPC file holds, for detection: its first rows (as Parquet's `rows` shape), or why it cannot be read. */
export type ArrowShape = { kind: "rows"; rows: unknown[]; description: string } | { kind: "unreadable"; reason: string };

/** Reads an Arrow IPC file's schema and its first few rows (from the first batches that hold rows). */
export async function arrowShape(path: string): Promise<ArrowShape> {
  const { arrow, values, framing, check } = await arrowModules();
  const kind = await columnarKind(path);
  let opened: Awaited<ReturnType<typeof openBatches>> | undefined;
  const rows: unknown[] = [];
  let description = `an Arrow IPC ${kind === "arrow-file" ? "file" : "stream"}`;
  try {
    opened = await openBatches(arrow, framing, path);
    if (opened.guard.broken?.message === 0) throw new Error(opened.guard.broken.reason);
    description = describeArrow(
      values,
      kind,
      opened.reader.schema.fields.map((field) => field.name),
    );
    let held = 0;
    for await (const batch of opened.reader) {
      const problem = check.batchProblem(batch);
      if (problem) throw new Error(problem);
      const table = new arrow.Table(batch);
      for (let i = 0; i < table.numRows && rows.length < PROBE_ROWS && held < PROBE_BYTES; i++) {
        const row = values.rowObject(table, i);
        rows.push(row);
        held += JSON.stringify(row).length;
      }
      if (rows.length >= PROBE_ROWS || held >= PROBE_BYTES) break;
    }
    return { kind: "rows", rows, description };
  } catch (err) {
    // Rows read before a break still decide the format; reading reports the break.
    if (rows.length > 0) return { kind: "rows", rows, description };
    return { kind: "unreadable", reason: `the file starts like ${description} but cannot be read as one: ${(err as Error).message}` };
  } finally {
    opened?.stream.destroy();
  }
}

function quarantine(source: SourceRef, reason: string): Extract<ReadItem, { kind: "quarantine" }> {
  return { kind: "quarantine", entry: { source, stage: "read", reason } };
}

/**
 * The rows of an Arrow IPC file as record lines (one compact JSON object per row), batch by batch.
 * Every row yields one item: its line, or a quarantine entry (over `input.max_line_bytes` as JSON,
 * nested too deep). A stream that breaks yields one quarantine entry at the row where it broke.
 * With a byte range that does not start the file, nothing: the task starting it reads it whole.
 */
export async function* arrowRecordLines(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordLine> {
  if (options.range && options.range.start > 0) return;
  const { arrow, values, framing, check } = await arrowModules();
  const at = (row: number): LineSource => ({ uri: path, row, offset: 0, format });
  let opened: Awaited<ReturnType<typeof openBatches>> | undefined;
  let batchNo = 0;
  let first = 0;
  try {
    try {
      opened = await openBatches(arrow, framing, path);
      if (opened.guard.broken?.message === 0) throw new Error(opened.guard.broken.reason);
    } catch (err) {
      yield quarantine(at(0), `the file starts like an Arrow IPC file but its schema cannot be read: ${(err as Error).message}`);
      return;
    }
    const batches = opened.reader[Symbol.asyncIterator]();
    const { guard } = opened;
    for (;;) {
      let table: Table;
      try {
        const next = await batches.next();
        if (next.done) {
          // Cut short by the framing check: the rows before it are read, the break is reported.
          if (guard.broken) throw new Error(guard.broken.reason);
          return;
        }
        // Offsets past their buffers (a damaged body) would have a row read forever.
        const problem = check.batchProblem(next.value);
        if (problem) throw new Error(problem);
        table = new arrow.Table(next.value);
      } catch (err) {
        const read = first === 0 ? "no rows were read" : `rows 0–${first - 1} were read`;
        yield quarantine(
          at(first),
          `the Arrow IPC stream breaks at record batch ${batchNo} (row ${first}; ${read}, the rest of the file is lost): ${(err as Error).message}`,
        );
        return;
      }
      yield* rowLines(values, table, first, table.numRows, at, options.maxLineBytes);
      first += table.numRows;
      batchNo++;
    }
  } finally {
    opened?.stream.destroy();
  }
}
