import * as parquet from "parquet-wasm";
import { inputBlob } from "./input-bytes.ts";
import type { RangeBlob } from "./range-blob.ts";

/**
 * A Parquet file opened for reading one row group at a time, as Arrow IPC bytes: parquet-wasm's
 * `ParquetFile` reads from a Blob by byte ranges (Node's `openAsBlob` for a file on disk, ranged
 * GETs for an `s3://` object or an `hf://` file, src/io/range-blob.ts), so only the footer and the
 * row group being read are ever in memory. No apache-arrow here: the Parquet decoder's thread
 * (src/io/parquet-decoder-worker.ts) hands the bytes on as they come; src/io/parquet-table.ts
 * reads them as Arrow tables.
 */
export interface ParquetFileBytes {
  /** The schema as an Arrow IPC stream. */
  schemaIpc: Uint8Array;
  rows: number;
  /** Rows in each row group, from the footer. */
  rowGroupRows: number[];
  /** Compressed bytes of each row group (its column chunks), from the footer. */
  rowGroupBytes: number[];
  /** The file's key-value metadata (`lwm_data`, `ARROW:schema`, …). */
  keyValue: Map<string, string>;
  /**
   * Row group `index` as an Arrow IPC stream; throws when it cannot be decoded. `columns`
   * (top-level names) limits what is decoded: the others' pages are never fetched. Default: every
   * column. `limit`: only the group's first rows (format detection looks at a few).
   */
  readRowGroupIpc(index: number, columns?: string[], limit?: number): Promise<Uint8Array>;
  close(): void;
}

/**
 * Reading the file's bytes failed (a network or disk error, after the retries), as opposed to bytes
 * that are not valid Parquet: the reader's caller should fail and be rerun, not blame the data.
 */
export class ParquetInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ParquetInputError";
  }
}

export interface OpenParquetOptions {
  /**
   * Opts into telling unreadable bytes from undecodable ones: when getting the file's size or one
   * of its ranges fails (after the retries), this is called with that failure as a
   * ParquetInputError, and a failed range read then never settles: parquet-wasm aborts its
   * WebAssembly instance (`RuntimeError: unreachable`) when a read it awaits rejects, so a caller
   * running it in a worker thread reports the failure from here and ends the worker. Without it,
   * a failed read reaches parquet-wasm as is (a decode error or an abort).
   */
  onReadFailure?: (err: ParquetInputError) => void;
}

/** The bytes parquet-wasm's WebAssembly memory holds now (it grows with the largest row group decoded, never shrinks). */
export function decoderMemoryBytes(): number {
  return parquet.wasmMemory().buffer.byteLength;
}

function inputError(err: unknown): ParquetInputError {
  return new ParquetInputError(`reading the file failed: ${err instanceof Error ? err.message : String(err)}`);
}

/** The blob, each failed read reported (the first only) and left pending instead of rejecting into parquet-wasm. */
function watched(blob: RangeBlob, onReadFailure: (err: ParquetInputError) => void): RangeBlob {
  let failed = false;
  return {
    size: blob.size,
    slice: (start, end) => ({
      arrayBuffer: () =>
        blob
          .slice(start, end)
          .arrayBuffer()
          .catch((err: unknown) => {
            if (!failed) onReadFailure(inputError(err));
            failed = true;
            return new Promise<ArrayBuffer>(() => {});
          }),
    }),
  };
}

/** Opens a Parquet file's footer: a local path, or an `s3://` / `hf://` URI (read by ranges, never copied whole). */
export async function openParquetFile(path: string, options: OpenParquetOptions = {}): Promise<ParquetFileBytes> {
  const { onReadFailure } = options;
  const source = onReadFailure
    ? await inputBlob(path).catch((err: unknown) => {
        throw inputError(err);
      })
    : await inputBlob(path);
  // parquet-wasm reads any object with `size` and `slice(start, end).arrayBuffer()`, as it reads a Blob.
  const blob = onReadFailure ? watched(source, onReadFailure) : source;
  const file = await parquet.ParquetFile.fromFile(blob as unknown as Blob);
  try {
    const metadata = file.metadata();
    const fileMetadata = metadata.fileMetadata();
    const opened: ParquetFileBytes = {
      schemaIpc: file.schema().intoIPCStream(),
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
      readRowGroupIpc: async (index, columns, limit) =>
        (
          await file.read({ rowGroups: [index], ...(columns ? { columns } : {}), ...(limit !== undefined ? { limit } : {}) })
        ).intoIPCStream(),
      close: () => file.free(),
    };
    fileMetadata.free();
    metadata.free();
    return opened;
  } catch (err) {
    file.free();
    throw err;
  }
}
