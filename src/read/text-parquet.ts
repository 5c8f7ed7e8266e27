import type { SourceRef } from "../core/trajectory.ts";
import { fromIpc, GroupDecoder, groupsInRange, replyError } from "../io/parquet-decoder.ts";
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
    const groups = new GroupDecoder(path);
    try {
      const opened = await groups.open();
      if (opened.kind !== "opened") {
        if (reportsFile) yield quarantine(file, { reason: `cannot read the file as Parquet: ${replyError(opened)}` });
        return;
      }
      const schema = fromIpc((ipc) => tableFromIPC(ipc), opened.schemaIpc);
      if ("why" in schema) {
        if (reportsFile) yield quarantine(file, { reason: `cannot read the file as Parquet: ${schema.why}` });
        return;
      }
      const names = schema.value.schema.fields.map((field) => field.name);
      if (!names.includes(TEXT_COLUMN)) {
        if (reportsFile) yield quarantine(file, { field: TEXT_COLUMN, reason: `no "${TEXT_COLUMN}" column; ${describeColumns(names)}` });
        return;
      }
      const columns = names.includes(ID_COLUMN) ? [TEXT_COLUMN, ID_COLUMN] : [TEXT_COLUMN];
      for (const { group, rows, first, offset } of groupsInRange(opened, range)) {
        const at = (row: number): SourceRef => ({ uri: path, row, offset, format: FORMAT });
        const read = await groups.read(group, columns);
        const decoded = "why" in read ? read : fromIpc((ipc) => tableFromIPC(ipc), read.ipc);
        if ("why" in decoded) {
          const span = `row group ${group} (rows ${first}–${first + rows - 1})`;
          for (let row = first; row < first + rows; row++)
            yield quarantine(at(row), { reason: `${span} could not be decoded: ${decoded.why}` });
        } else yield* groupItems(decoded.value, first, rows, at);
      }
    } finally {
      await groups.close();
    }
  },
};
