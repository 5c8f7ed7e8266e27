import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { threadId } from "node:worker_threads";

/**
 * An on-disk cache of a tokenizer.json converted for the tiktoken core. Parsing an 11 MB
 * tokenizer.json and converting 150k vocabulary entries takes ~0.3 s, paid by every process
 * and worker thread of a job (and every rank of a cluster job); reading the converted form back
 * takes a few milliseconds. Entries are keyed by the sha256 of the tokenizer.json bytes, so an
 * edited file is never served stale. It is only a cache: an unreadable or damaged entry is
 * rebuilt, and a folder that cannot be written just means no cache.
 */

/** `LWM_DATA_CACHE_DIR`, else `$XDG_CACHE_HOME/lwm-data`, else `~/.cache/lwm-data`. */
export function defaultCacheDir(): string {
  return process.env.LWM_DATA_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "lwm-data");
}

/** Bumped when the cached shape changes, so an older entry is rebuilt rather than misread. */
const FORMAT = 1;
/** The cache's format, for entries derived from a cached one (rank-table-cache.ts names its files with it). */
export const VOCAB_CACHE_FORMAT = FORMAT;

export function readVocabCache<T>(cacheDir: string, kind: string, sha256: string, isValid: (value: unknown) => value is T): T | undefined {
  try {
    const value = JSON.parse(readFileSync(entryPath(cacheDir, kind, sha256), "utf8")) as {
      format?: number;
      sha256?: string;
      data?: unknown;
    };
    return value.format === FORMAT && value.sha256 === sha256 && isValid(value.data) ? value.data : undefined;
  } catch {
    return undefined;
  }
}

export function writeVocabCache(cacheDir: string, kind: string, sha256: string, data: unknown): void {
  const path = entryPath(cacheDir, kind, sha256);
  // Worker threads and ranks may build the same entry at once: each writes its own temporary.
  const temp = `${path}.${process.pid}-${threadId}-${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(temp, JSON.stringify({ format: FORMAT, sha256, data }));
    renameSync(temp, path);
  } catch {
    // Read-only or full cache folder: the tokenizer works the same without a cache.
    try {
      rmSync(temp, { force: true });
    } catch {
      // The folder itself is unusable: there is no temporary to remove.
    }
  }
}

function entryPath(cacheDir: string, kind: string, sha256: string): string {
  return join(cacheDir, `${kind}-${sha256}.json`);
}
