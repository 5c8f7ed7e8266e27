import { createReadStream, openAsBlob } from "node:fs";
import { open, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { hfBlob, hfSize, openHf } from "./hf/hf-files.ts";
import { isHfUri } from "./hf/hf-uri.ts";
import type { RangeBlob } from "./range-blob.ts";
import { readAhead } from "./read-ahead.ts";
import { openS3, s3Size } from "./s3/s3-objects.ts";
import { s3Blob } from "./s3/s3-ranges.ts";
import { isS3Uri } from "./s3/s3-uri.ts";

/**
 * Where an input's bytes come from: a local file, an object in S3-compatible storage
 * (`s3://bucket/key`, src/io/s3/), or a file of a Hub dataset repo (`hf://datasets/…`, src/io/hf/).
 * Every reader opens inputs through these, so a format read from a disk reads the same from a
 * bucket or the Hub.
 */

/** The raw bytes of an input, whole or from `start` (to the end; a byte-range task stops reading itself). */
export async function openRawInput(path: string, range: { start?: number } = {}): Promise<Readable> {
  const from = range.start !== undefined ? { start: range.start } : {};
  if (isS3Uri(path)) return openS3(path, from);
  if (isHfUri(path)) return openHf(path, from);
  return createReadStream(path, { highWaterMark: await readAhead(path, range.start ?? 0), ...from });
}

/** The first `bytes` bytes of an input (fewer when it is shorter). */
export async function inputPrefix(path: string, bytes: number): Promise<Uint8Array> {
  if (isS3Uri(path) || isHfUri(path)) {
    const stream = isS3Uri(path) ? await openS3(path, { start: 0, end: bytes }) : await openHf(path, { start: 0, end: bytes });
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
  if (isS3Uri(path)) return s3Size(path);
  if (isHfUri(path)) return hfSize(path);
  return (await stat(path)).size;
}

/**
 * An input as a RangeBlob, read by byte ranges on demand (how the Parquet decoder reads a file):
 * a local file's Blob, or ranged GETs of an object or a Hub file. Nothing is copied first.
 */
export async function inputBlob(path: string): Promise<RangeBlob> {
  if (isS3Uri(path)) return s3Blob(path);
  if (isHfUri(path)) return hfBlob(path);
  return openAsBlob(path);
}
