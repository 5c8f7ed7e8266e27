import type { SourceRef } from "../core/trajectory.ts";
import { Decoder, failIfUnreadable, groupOffsets, replyError } from "../io/parquet-decoder.ts";
import type { Reader, ReaderOptions, ReadItem } from "./reader.ts";

const FORMAT = "text-parquet";

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
    // The row conversion (and apache-arrow with it), loaded by the first such file read.
    const { tableFromIPC, groupItems, quarantine, describeColumns, TEXT_COLUMN, ID_COLUMN } = await import("./text-parquet-rows.ts");
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
