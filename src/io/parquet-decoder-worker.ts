import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { tableToIPC } from "apache-arrow";
import { DECODER_ROLE, type DecoderReply, type DecoderRequest } from "./parquet-decoder.ts";
import { openParquetTable, ParquetInputError, type ParquetTable } from "./parquet-table.ts";
import { isRemoteUri } from "./remote-uri.ts";

/** The Parquet decoder's thread (started by `Decoder`, src/io/parquet-decoder.ts): opens the file once, then decodes the requested row groups, one at a time. */
function serveDecoder(port: MessagePort): void {
  let table: ParquetTable | undefined;
  const answer = async (request: DecoderRequest): Promise<DecoderReply> => {
    if (request.kind === "open") {
      // A remote file's failed read (after its retries) is answered at once, for the request
      // waiting on it; the decoder is then ended. A local file reads as it always has.
      const onReadFailure = (err: ParquetInputError) =>
        port.postMessage({ kind: "failed", error: err.message, input: true } satisfies DecoderReply);
      table = await openParquetTable(request.path, isRemoteUri(request.path) ? { onReadFailure } : {});
      return { kind: "opened", schemaIpc: table.schemaIpc, rowGroupRows: table.rowGroupRows, rowGroupBytes: table.rowGroupBytes };
    }
    if (!table) throw new Error("no file is open");
    return { kind: "group", ipc: tableToIPC(await table.readRowGroup(request.group, request.columns, request.limit), "stream") };
  };
  port.on("message", (request: DecoderRequest) => {
    answer(request).then(
      (reply) => {
        // The group's bytes move to the reading thread instead of being copied, when they own their buffer.
        const ipc = reply.kind === "group" ? reply.ipc : undefined;
        const owned = ipc && ipc.byteOffset === 0 && ipc.byteLength === ipc.buffer.byteLength;
        port.postMessage(reply, owned ? [ipc.buffer as ArrayBuffer] : []);
      },
      (err: unknown) =>
        port.postMessage({
          kind: "failed",
          error: err instanceof Error ? err.message : String(err),
          ...(err instanceof ParquetInputError ? { input: true } : {}),
        } satisfies DecoderReply),
    );
  });
}

if (parentPort && (workerData as { role?: unknown } | null)?.role === DECODER_ROLE) serveDecoder(parentPort);
