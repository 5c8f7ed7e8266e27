import type { Readable } from "node:stream";

/**
 * A file read by byte ranges, the way parquet-wasm reads a Blob: its size, then `slice(start,
 * end).arrayBuffer()` for the footer and for each column chunk it decodes. A local file's Blob
 * (`openAsBlob`) is one; `rangeBlob` makes one over any ranged reader (an S3 object, a Hub file),
 * so only the footer and the row group being read are ever in memory, wherever the file lives.
 */
export interface RangeBlob {
  readonly size: number;
  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

/**
 * A RangeBlob whose ranges are read with `open(start, end)` (end exclusive; the readers of
 * objects and Hub files retry and resume a broken body themselves), each collected into one
 * buffer of exactly its length. A body that still ends short is an error naming the range.
 */
export function rangeBlob(size: number, open: (start: number, end: number) => Promise<Readable>): RangeBlob {
  const read = async (start: number, end: number): Promise<ArrayBuffer> => {
    const from = Math.max(0, Math.min(start, size));
    const to = Math.max(from, Math.min(end, size));
    const out = new Uint8Array(to - from);
    let filled = 0;
    if (to > from)
      for await (const chunk of await open(from, to)) {
        const bytes = chunk as Uint8Array;
        const take = Math.min(bytes.length, out.length - filled);
        out.set(bytes.subarray(0, take), filled);
        filled += take;
        if (filled === out.length) break;
      }
    if (filled !== out.length) throw new Error(`bytes ${from}–${to - 1}: the body ended after ${filled} of ${out.length} bytes`);
    return out.buffer;
  };
  return { size, slice: (start, end) => ({ arrayBuffer: () => read(start, end) }) };
}
