import { parentPort } from "node:worker_threads";
import { openParquetTable } from "../io/parquet-table.ts";
import { errorText } from "./problems.ts";
import { type ShardContent, scanShardContent } from "./shard-content.ts";

/** What the main thread asks: open a Parquet file and, for a shard, read every row group. */
export interface ParquetRequest {
  path: string;
  scanRows: boolean;
}

/** Replies to one request, in order: `opened` (or `failed`), a `row-group` before each group is decoded, then `done`. */
export type ParquetReply =
  | { kind: "opened"; schemaIpc: Uint8Array; rows: number; rowGroupRows: number[]; keyValue: Map<string, string> }
  | { kind: "row-group"; index: number }
  | { kind: "done"; content?: ShardContent }
  | { kind: "failed"; error: string };

/**
 * Runs in a worker thread: parquet-wasm panics on some damaged pages, and a panic inside its
 * async reader never settles the promise and kills the thread's WebAssembly instance. Here it
 * only kills this worker, which the main thread notices and replaces.
 */
async function inspect(request: ParquetRequest, reply: (message: ParquetReply) => void): Promise<void> {
  let table: Awaited<ReturnType<typeof openParquetTable>>;
  try {
    table = await openParquetTable(request.path);
  } catch (err) {
    reply({ kind: "failed", error: errorText(err) });
    return;
  }
  try {
    const { schemaIpc, rows, rowGroupRows, keyValue } = table;
    reply({ kind: "opened", schemaIpc, rows, rowGroupRows, keyValue });
    const content = request.scanRows ? await scanShardContent(table, (index) => reply({ kind: "row-group", index })) : undefined;
    reply(content ? { kind: "done", content } : { kind: "done" });
  } finally {
    table.close();
  }
}

const port = parentPort;
if (port) port.on("message", (request: ParquetRequest) => inspect(request, (message) => port.postMessage(message)));
