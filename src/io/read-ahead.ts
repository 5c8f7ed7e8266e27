import { stat } from "node:fs/promises";

/** How much a local file's stream reads at a time: 1 MiB, or what is left of a smaller file. */
const READ_AHEAD_BYTES = 1 << 20;
const MIN_READ_AHEAD_BYTES = 1 << 12;

/**
 * The read size for a local file. Node allocates a buffer of the full read size for every read of a
 * file stream, the last (empty) one included, and V8 counts that memory toward its next full GC:
 * at 1 MiB a small file cost 2 MiB, and reading many small files (a session per file, a sniff per
 * file) ran a full mark-compact every ~30 files. A file that cannot be stat'ed keeps the default
 * (the stream then reports why it cannot be read, as before).
 */
export async function readAhead(path: string, start = 0): Promise<number> {
  try {
    const { size } = await stat(path);
    return Math.max(MIN_READ_AHEAD_BYTES, Math.min(READ_AHEAD_BYTES, size - start));
  } catch {
    return READ_AHEAD_BYTES;
  }
}
