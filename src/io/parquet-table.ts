import type { Schema, Table } from "apache-arrow";
import { arrow } from "./arrow.ts";
import { type OpenParquetOptions, openParquetFile, type ParquetFileBytes } from "./parquet-file.ts";

export { type OpenParquetOptions, ParquetInputError } from "./parquet-file.ts";

/** A Parquet file opened for reading one row group at a time, as Arrow tables (src/io/parquet-file.ts reads the bytes). */
export interface ParquetTable extends Omit<ParquetFileBytes, "readRowGroupIpc"> {
  schema: Schema;
  /** Row group `index` as an Arrow table (see ParquetFileBytes.readRowGroupIpc). */
  readRowGroup(index: number, columns?: string[], limit?: number): Promise<Table>;
}

/** Opens a Parquet file: a local path, or an `s3://` / `hf://` URI (read by ranges, never copied whole). */
export async function openParquetTable(path: string, options: OpenParquetOptions = {}): Promise<ParquetTable> {
  const file = await openParquetFile(path, options);
  let schema: Schema;
  try {
    schema = arrow.tableFromIPC(file.schemaIpc).schema;
  } catch (err) {
    file.close();
    throw err;
  }
  return {
    schema,
    schemaIpc: file.schemaIpc,
    rows: file.rows,
    rowGroupRows: file.rowGroupRows,
    rowGroupBytes: file.rowGroupBytes,
    keyValue: file.keyValue,
    readRowGroup: async (index, columns, limit) => arrow.tableFromIPC(await file.readRowGroupIpc(index, columns, limit)),
    close: () => file.close(),
  };
}
