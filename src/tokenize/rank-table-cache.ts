import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { threadId } from "node:worker_threads";
import { RankTable } from "./rank-table.ts";

/** Where a tokenizer's built rank table is kept, and the key that names its vocabulary (the sha256 vocab-cache.ts uses). */
export interface RankTableCache {
  dir: string;
  key: string;
}

/**
 * The rank table of `ranksText`, read from the on-disk cache when it holds a good copy (a few
 * milliseconds), else built (~70–90 ms of CPU for 150k–200k entries, paid by every process and
 * pool thread that encodes text) and written there for the next one. Only a cache: a damaged entry
 * (RankTable.fromBytes checks its header, sizes and checksum) is rebuilt, and a folder that
 * cannot be written just means no cache.
 */
export function cachedRankTable(ranksText: string, cache: RankTableCache | undefined): RankTable {
  if (!cache) return RankTable.parse(ranksText);
  // The text's length in the name too: a key reused for other ranks (a conversion changed without a new format) misses.
  const path = join(cache.dir, `rank-table-${cache.key}-${ranksText.length}.bin`);
  let bytes: Uint8Array | undefined;
  try {
    bytes = readFileSync(path);
  } catch {
    // Not built yet (or unreadable): build it below.
  }
  const cached = bytes ? RankTable.fromBytes(bytes) : undefined;
  if (cached) return cached;
  const table = RankTable.parse(ranksText);
  // Threads and ranks may build the same entry at once: each writes its own temporary, then renames it.
  const temp = `${path}.${process.pid}-${threadId}-${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(cache.dir, { recursive: true });
    writeFileSync(temp, table.toBytes());
    renameSync(temp, path);
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The folder itself is unusable: there is no temporary to remove.
    }
  }
  return table;
}
