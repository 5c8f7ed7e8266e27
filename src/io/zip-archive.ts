import { Readable } from "node:stream";
import { crc32 } from "node:zlib";
import yauzl from "yauzl";
import { isHfUri } from "./hf/hf-uri.ts";
import { inputBlob } from "./input-bytes.ts";
import { type DecompressionLimits, decompressionLimits, RATIO_GRACE_BYTES } from "./open-input.ts";
import type { RangeBlob } from "./range-blob.ts";
import { isS3Uri } from "./s3/s3-uri.ts";

/**
 * Zip archives read entry by entry with yauzl (thejoshwolfe/yauzl): the central directory is read
 * lazily, one entry at a time, and each entry's data is inflated as a stream, so memory never grows
 * with the archive. A local file is read through its file descriptor; an object in S3 or a Hub file
 * through ranged reads (src/io/range-blob.ts), in blocks cached a few at a time, so the central
 * directory's small reads do not each become a request. yauzl checks every entry's size against the
 * central directory; the CRC-32 it leaves to its callers is checked here.
 */
export type ZipFile = yauzl.ZipFile;
export type ZipEntry = yauzl.Entry;

/** An entry that cannot be read (bad CRC, corrupt deflate data, a size that lies, a method yauzl cannot decode): the rest of the archive may still be. */
export class ZipEntryError extends Error {}

/** The archive cannot be read on (central directory unreadable, I/O error, decompression limits passed). */
export class ZipArchiveError extends Error {}

const OPTIONS: yauzl.Options = {
  lazyEntries: true,
  autoClose: false,
  decodeStrings: true,
  validateEntrySizes: true,
  strictFileNames: false,
};

/** Opens a zip archive (local path, s3:// or hf:// URI); close it with `zip.close()`. Throws ZipArchiveError when it is no zip archive. */
export async function openZip(path: string): Promise<ZipFile> {
  try {
    if (isS3Uri(path) || isHfUri(path)) return await openZipFromBlob(await inputBlob(path));
    return await yauzl.openPromise(path, OPTIONS);
  } catch (err) {
    throw new ZipArchiveError(`not a readable zip archive: ${(err as Error).message}`);
  }
}

/** A zip archive read by byte ranges from a RangeBlob (an S3 object, a Hub file, or a local file's Blob). */
export async function openZipFromBlob(blob: RangeBlob): Promise<ZipFile> {
  return yauzl.fromRandomAccessReaderPromise(new BlobReader(blob), blob.size, OPTIONS);
}

const BLOCK_BYTES = 1 << 20;
const CACHED_BLOCKS = 4;

/** yauzl's RandomAccessReader over a RangeBlob, reading whole 1 MiB blocks and keeping the last few. */
class BlobReader extends yauzl.RandomAccessReader {
  readonly #blob: RangeBlob;
  readonly #blocks = new Map<number, Promise<Buffer>>();

  constructor(blob: RangeBlob) {
    super();
    this.#blob = blob;
  }

  #block(index: number): Promise<Buffer> {
    const cached = this.#blocks.get(index);
    if (cached) return cached;
    const start = index * BLOCK_BYTES;
    const read = this.#blob
      .slice(start, Math.min(start + BLOCK_BYTES, this.#blob.size))
      .arrayBuffer()
      .then((bytes) => Buffer.from(bytes));
    read.catch(() => this.#blocks.delete(index));
    this.#blocks.set(index, read);
    if (this.#blocks.size > CACHED_BLOCKS) this.#blocks.delete(this.#blocks.keys().next().value as number);
    return read;
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const self = this;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let index = Math.floor(start / BLOCK_BYTES); index * BLOCK_BYTES < end; index++) {
        const block = await self.#block(index);
        const from = Math.max(0, start - index * BLOCK_BYTES);
        const to = Math.min(block.length, end - index * BLOCK_BYTES);
        if (to <= from) throw new Error(`bytes ${start}–${end - 1}: the file ends at ${index * BLOCK_BYTES + block.length}`);
        yield block.subarray(from, to);
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }
}

/** Decompressed bytes read so far from one archive, against the job's decompression limits. */
export interface ZipBudget {
  out: number;
  compressed: number;
  limits: DecompressionLimits;
}

export function zipBudget(limits: DecompressionLimits = decompressionLimits()): ZipBudget {
  return { out: 0, compressed: 0, limits };
}

/**
 * One entry's decompressed bytes, checked against its CRC-32. An entry larger than `maxEntryBytes`
 * is a ZipEntryError before any of it is inflated (yauzl holds the entry to the size the central
 * directory declares); past the archive's decompression limits (`input.max_decompressed_bytes`,
 * `input.max_expansion_ratio`, as for .gz/.zst files) a ZipArchiveError: a zip bomb is refused by
 * its declared sizes, and a size that lies fails the entry as soon as it is passed.
 */
export async function readZipEntry(zip: ZipFile, entry: ZipEntry, budget: ZipBudget, maxEntryBytes: number): Promise<Buffer> {
  const { maxBytes, maxRatio } = budget.limits;
  if (entry.uncompressedSize > maxEntryBytes)
    throw new ZipEntryError(
      `entry is ${entry.uncompressedSize} bytes decompressed, over the ${maxEntryBytes}-byte limit (input.max_line_bytes)`,
    );
  const out = budget.out + entry.uncompressedSize;
  const compressed = budget.compressed + entry.compressedSize;
  if (out > maxBytes)
    throw new ZipArchiveError(
      `decompressed size passed ${maxBytes} bytes (input.max_decompressed_bytes); the rest of the archive is not read`,
    );
  if (out > RATIO_GRACE_BYTES && out > maxRatio * compressed)
    throw new ZipArchiveError(
      `archive expands more than ${maxRatio}× (${out} bytes from ${compressed} compressed, input.max_expansion_ratio): a decompression bomb? The rest of the archive is not read`,
    );
  budget.out = out;
  budget.compressed = compressed;
  if (entry.isEncrypted()) throw new ZipEntryError("entry is encrypted");
  if (!entry.canDecodeFileData())
    throw new ZipEntryError(`entry uses compression method ${entry.compressionMethod}, which cannot be decoded`);
  const chunks: Buffer[] = [];
  let crc = 0;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      crc = crc32(chunk, crc);
      chunks.push(chunk);
    }
  } catch (err) {
    throw new ZipEntryError(`entry cannot be read: ${(err as Error).message}`);
  }
  if (crc >>> 0 !== entry.crc32 >>> 0)
    throw new ZipEntryError(
      `entry fails its CRC-32 check (${(crc >>> 0).toString(16).padStart(8, "0")}, the archive says ${(entry.crc32 >>> 0).toString(16).padStart(8, "0")}): its data is damaged`,
    );
  return Buffer.concat(chunks);
}
