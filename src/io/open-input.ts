import { Readable, Transform, type TransformCallback } from "node:stream";
import { createGunzip, createZstdDecompress } from "node:zlib";
import { inputPrefix, openRawInput } from "./input-bytes.ts";

export type Compression = "none" | "gzip" | "zstd";

const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

function startsWith(head: Uint8Array, magic: number[]): boolean {
  return magic.every((byte, i) => head[i] === byte);
}

/** Detects compression from the file's first bytes, not its extension. */
export async function detectCompression(path: string): Promise<Compression> {
  const view = await inputPrefix(path, 4);
  if (startsWith(view, GZIP_MAGIC)) return "gzip";
  if (startsWith(view, ZSTD_MAGIC)) return "zstd";
  return "none";
}

/** How far a compressed file may expand before it is treated as a decompression bomb. */
export interface DecompressionLimits {
  /** `input.max_decompressed_bytes`: most bytes one file may expand to. */
  maxBytes: number;
  /** `input.max_expansion_ratio`: most decompressed bytes per compressed byte read so far. */
  maxRatio: number;
}

export const DEFAULT_DECOMPRESSION_LIMITS: DecompressionLimits = { maxBytes: 64 * 2 ** 30, maxRatio: 1000 };

/** The ratio is only judged past this much output: small files' headers distort it. */
export const RATIO_GRACE_BYTES = 64 * 2 ** 20;

/**
 * Process-wide, set once from the job config (plan.ts) in every process and worker thread: the
 * readers open files in a dozen places and the limits are the job's, not a reader's.
 */
let limits: DecompressionLimits = DEFAULT_DECOMPRESSION_LIMITS;

export function setDecompressionLimits(next: DecompressionLimits): void {
  limits = next;
}

/** The job's decompression limits, for readers that decompress by other means (zip entries: src/io/zip-archive.ts). */
export function decompressionLimits(): DecompressionLimits {
  return limits;
}

/** Fails the stream once the output passes the limits, instead of filling memory or disk. */
function expansionGuard(raw: { bytesRead: number }, { maxBytes, maxRatio }: DecompressionLimits): Transform {
  let out = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      out += chunk.length;
      if (out > maxBytes)
        return done(
          new Error(`decompressed size passed ${maxBytes} bytes (input.max_decompressed_bytes); the rest of the file is not read`),
        );
      if (out > RATIO_GRACE_BYTES && out > maxRatio * raw.bytesRead)
        return done(
          new Error(
            `file expands more than ${maxRatio}× (${out} bytes from ${raw.bytesRead} compressed, input.max_expansion_ratio): a decompression bomb? The rest of the file is not read`,
          ),
        );
      done(null, chunk);
    },
  });
}

/**
 * Opens a file as a stream of decompressed bytes. Node's zlib streams gzip and zstd itself; the
 * output is capped by the decompression limits.
 */
export async function openDecompressed(path: string): Promise<{ stream: Readable; compression: Compression }> {
  const compression = await detectCompression(path);
  const raw = await openRawInput(path);
  if (compression === "none") return { stream: raw, compression };
  const decoder = compression === "gzip" ? createGunzip() : createZstdDecompress();
  // Compressed bytes read so far, for the expansion ratio (a file or an object stream alike).
  const read = { bytesRead: 0 };
  raw.on("data", (chunk: Buffer) => {
    read.bytesRead += chunk.length;
  });
  const guard = expansionGuard(read, limits);
  // Errors on the file stream (ENOENT, EIO) and the decoder (truncated or corrupt data) must
  // reach the consumer of the decoded stream, after what was decoded before them: destroying the
  // guard at once would drop what it still buffers (more of it the busier the machine: the
  // hostile-corpus test lost 80% of a truncated file's records on a loaded machine), so the guard
  // is ended instead and the error thrown once the consumer has read the rest. (The decoder's own
  // last output buffer, under 16 KiB before the cut, still goes with it.) A consumer that stops
  // early stops the file read.
  const failure: { error?: Error } = {};
  raw.on("error", (err) => decoder.destroy(err));
  decoder.on("error", (err) => {
    failure.error ??= err;
    guard.end();
  });
  guard.on("close", () => {
    decoder.destroy();
    raw.destroy();
  });
  raw.pipe(decoder).pipe(guard);
  return { stream: Readable.from(thenThrow(guard, failure), { objectMode: false }), compression };
}

/** The stream's chunks, then the error recorded while they were produced, if any. */
async function* thenThrow(stream: Readable, failure: { error?: Error }): AsyncGenerator<Buffer> {
  for await (const chunk of stream) yield chunk as Buffer;
  if (failure.error) throw failure.error;
}
