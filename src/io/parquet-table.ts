import { openAsBlob } from "node:fs";
import { type Schema, type Table, tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";

/**
 * A Parquet file opened for reading one row group at a time. parquet-wasm's `ParquetFile` reads
 * from a Blob by byte ranges, and Node's `openAsBlob` is backed by the file on disk, so only the
 * footer and the row group being read are ever in memory, however large the shard.
 */
export interface ParquetTable {
  schema: Schema;
  /** The schema as an Arrow IPC stream: how it crosses to another thread. */
  schemaIpc: Uint8Array;
  rows: number;
  /** Rows in each row group, from the footer. */
  rowGroupRows: number[];
  /** Compressed bytes of each row group (its column chunks), from the footer. */
  rowGroupBytes: number[];
  /** The file's key-value metadata (`lwm_data`, `ARROW:schema`, …). */
  keyValue: Map<string, string>;
  /**
   * Row group `index` as an Arrow table; throws when it cannot be decoded. `columns` (top-level
   * names) limits what is decoded: the others' pages are never fetched. Default: every column.
   */
  readRowGroup(index: number, columns?: string[]): Promise<Table>;
  close(): void;
}

export async function openParquetTable(path: string): Promise<ParquetTable> {
  const file = await parquet.ParquetFile.fromFile(await openAsBlob(path));
  try {
    const metadata = file.metadata();
    const fileMetadata = metadata.fileMetadata();
    const schemaIpc = file.schema().intoIPCStream();
    const table: ParquetTable = {
      schema: tableFromIPC(schemaIpc).schema,
      schemaIpc,
      rows: fileMetadata.numRows(),
      rowGroupRows: metadata.rowGroups().map((group) => {
        const rows = group.numRows();
        group.free();
        return rows;
      }),
      rowGroupBytes: metadata.rowGroups().map((group) => {
        const bytes = group.compressedSize();
        group.free();
        return bytes;
      }),
      keyValue: new Map(fileMetadata.keyValueMetadata()),
      readRowGroup: async (index, columns) =>
        tableFromIPC((await file.read({ rowGroups: [index], ...(columns ? { columns } : {}) })).intoIPCStream()),
      close: () => file.free(),
    };
    fileMetadata.free();
    metadata.free();
    return table;
  } catch (err) {
    file.free();
    throw err;
  }
}
