import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, zstdDecompressSync } from "node:zlib";

/** Every file under `dir` (recursively) whose name passes `keep`, sorted. */
export function filesUnder(dir: string, keep: (name: string) => boolean = () => true): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && keep(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** A sample file's text, decompressed when it is `.gz` or `.zst` (the demo keeps both). */
export function readSampleText(path: string): string {
  const raw = readFileSync(path);
  if (path.endsWith(".gz")) return gunzipSync(raw).toString("utf8");
  if (path.endsWith(".zst")) return zstdDecompressSync(raw).toString("utf8");
  return raw.toString("utf8");
}
