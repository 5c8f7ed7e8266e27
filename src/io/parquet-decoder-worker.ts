import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { DECODER_ROLE, type DecoderReply, type DecoderRequest } from "./parquet-decoder.ts";
import { decoderMemoryBytes, openParquetFile, type ParquetFileBytes, ParquetInputError } from "./parquet-file.ts";
import { isRemoteUri } from "./remote-uri.ts";

/**
 * The Parquet decoder's thread (started by `Decoder`, src/io/parquet-decoder.ts): opens a file,
 * then decodes the requested row groups, one at a time; `close` frees it, and the thread may then
 * open the next file (a reused decoder).
 */
function serveDecoder(port: MessagePort): void {
  let file: ParquetFileBytes | undefined;
  const closeFile = () => {
    file?.close();
    file = undefined;
  };
  const answer = async (request: DecoderRequest): Promise<DecoderReply> => {
    if (request.kind === "close") {
      closeFile();
      return { kind: "closed", memoryBytes: decoderMemoryBytes() };
    }
    if (request.kind === "open") {
      closeFile();
      // A remote file's failed read (after its retries) is answered at once, for the request
      // waiting on it; the decoder is then ended. A local file reads as it always has.
      const onReadFailure = (err: ParquetInputError) =>
        port.postMessage({ kind: "failed", error: err.message, input: true } satisfies DecoderReply);
      file = await openParquetFile(request.path, isRemoteUri(request.path) ? { onReadFailure } : {});
      return { kind: "opened", schemaIpc: file.schemaIpc, rowGroupRows: file.rowGroupRows, rowGroupBytes: file.rowGroupBytes };
    }
    if (!file) throw new Error("no file is open");
    // parquet-wasm's own IPC bytes, handed on as they are (the reading thread decodes them).
    return { kind: "group", ipc: await file.readRowGroupIpc(request.group, request.columns, request.limit) };
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
          // parquet-wasm aborts on a panic (`RuntimeError: unreachable`): its instance is unusable from then on.
          ...(err instanceof Error && err.name === "RuntimeError" ? { aborted: true } : {}),
        } satisfies DecoderReply),
    );
  });
}

if (parentPort && (workerData as { role?: unknown } | null)?.role === DECODER_ROLE) serveDecoder(parentPort);
