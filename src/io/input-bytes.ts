import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { openS3, s3Size } from "./s3/s3-objects.ts";
import { isS3Uri } from "./s3/s3-uri.ts";

/**
 * Where an input's bytes come from: a local file, or an object in S3-compatible storage
 * (`s3://bucket/key`, src/io/s3/). Every reader opens inputs through these, so a format read from
 * a disk reads the same from a bucket.
 */

/** The raw bytes of an input, whole or from `start` (to the end; a byte-range task stops reading itself). */
export async function openRawInput(path: string, range: { start?: number } = {}): Promise<Readable> {
  if (isS3Uri(path)) return openS3(path, range.start !== undefined ? { start: range.start } : {});
  return createReadStream(path, { highWaterMark: 1 << 20, ...(range.start !== undefined ? { start: range.start } : {}) });
}

/** The first `bytes` bytes of an input (fewer when it is shorter). */
export async function inputPrefix(path: string, bytes: number): Promise<Uint8Array> {
  if (isS3Uri(path)) {
    const stream = await openS3(path, { start: 0, end: bytes });
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return new Uint8Array(Buffer.concat(chunks).subarray(0, bytes));
  }
  const handle = await open(path, "r");
  try {
    const head = new Uint8Array(bytes);
    const { bytesRead } = await handle.read(head, 0, bytes, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** An input's size in bytes. */
export async function inputSize(path: string): Promise<number> {
  return isS3Uri(path) ? s3Size(path) : (await stat(path)).size;
}
