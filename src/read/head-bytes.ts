import { inputPrefix } from "../io/input-bytes.ts";
import { openDecompressed } from "../io/open-input.ts";

/** gzip's and zstd's magic (as src/io/open-input.ts `detectCompression` tells them). */
function isCompressed(view: Uint8Array): boolean {
  return (view[0] === 0x1f && view[1] === 0x8b) || (view[0] === 0x28 && view[1] === 0xb5 && view[2] === 0x2f && view[3] === 0xfd);
}

/**
 * The first `bytes` bytes of an input as bytes, decompressed (gzip, zstd), and whether they are all
 * of it: what a check of a binary format (ttyrec frames) or of an encoding (UTF-16) looks at, where
 * the text head (`readHead`, decoded as UTF-8) has lost them. A local file, an S3 object or a Hub
 * file alike (a plain one read by one ranged read; a compressed one through the decompressing
 * stream, capped by the decompression limits). A damaged file gives what could be read of it.
 */
export async function readHeadBytes(path: string, bytes: number): Promise<{ bytes: Uint8Array; whole: boolean }> {
  const prefix = await inputPrefix(path, bytes + 1);
  if (!isCompressed(prefix)) return { bytes: prefix.subarray(0, bytes), whole: prefix.length <= bytes };
  const { stream } = await openDecompressed(path);
  const chunks: Buffer[] = [];
  let total = 0;
  let ended = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total > bytes) break;
    }
    ended = total <= bytes;
  } catch {
    // A damaged file: its readable start is looked at (reading it reports the damage); not known whole.
  } finally {
    stream.destroy();
  }
  const all = Buffer.concat(chunks);
  return { bytes: new Uint8Array(all.buffer, all.byteOffset, Math.min(all.length, bytes)), whole: ended };
}
