import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { createGunzip, createZstdDecompress } from "node:zlib";

export type Compression = "none" | "gzip" | "zstd";

const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

function startsWith(head: Uint8Array, magic: number[]): boolean {
  return magic.every((byte, i) => head[i] === byte);
}

/** Detects compression from the file's first bytes, not its extension. */
export async function detectCompression(path: string): Promise<Compression> {
  const handle = await open(path, "r");
  try {
    const head = new Uint8Array(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    const view = head.subarray(0, bytesRead);
    if (startsWith(view, GZIP_MAGIC)) return "gzip";
    if (startsWith(view, ZSTD_MAGIC)) return "zstd";
    return "none";
  } finally {
    await handle.close();
  }
}

/** Opens a file as a stream of decompressed bytes. Node's zlib streams gzip and zstd itself. */
export async function openDecompressed(path: string): Promise<{ stream: Readable; compression: Compression }> {
  const compression = await detectCompression(path);
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  if (compression === "none") return { stream: raw, compression };
  const decoder = compression === "gzip" ? createGunzip() : createZstdDecompress();
  // Errors on the file stream (ENOENT, EIO) must reach the consumer of the decoded stream.
  raw.on("error", (err) => decoder.destroy(err));
  return { stream: raw.pipe(decoder), compression };
}
