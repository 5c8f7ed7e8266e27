import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { openDecompressed } from "../io/open-input.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, type SelectedValue, selectJson } from "./json-select.ts";

/**
 * Attempt ids for formats that write one file per run of one instance (mini-swe-agent
 * `<instance_id>.traj.json`, SWE-agent `<instance_id>.traj`): two runs' folders hold files of one
 * name, so the instance id alone names the task (`meta.task_id`), not the attempt. The attempt's id
 * is the instance id, a hyphen and the first 16 hex digits of the sha256 of the file's
 * (decompressed) content: the same for the same file wherever it lives (local, bucket, Hub,
 * gzip or zstd), different for two runs that differ in any byte.
 */
export function attemptId(instance: string, digest: string): string {
  return `${instance}-${digest.slice(0, 16)}`;
}

/**
 * Like json-select's `forEachSelected`, and the sha256 (hex) of the decompressed bytes, hashed as
 * they stream past (memory does not grow with the file).
 */
export async function forEachSelectedHashed(
  path: string,
  wanted: (path: JsonPath, kind: JsonKind) => boolean,
  take: (selected: SelectedValue) => void,
): Promise<{ ok: true; digest: string } | { ok: false; reason: string }> {
  const { stream } = await openDecompressed(path);
  const hash = createHash("sha256");
  async function* hashed(): AsyncGenerator<Buffer> {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      hash.update(chunk);
      yield chunk;
    }
  }
  try {
    for await (const selected of selectJson(Readable.from(hashed(), { objectMode: false }), wanted)) take(selected);
    return { ok: true, digest: hash.digest("hex") };
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false, reason: err.message };
    throw err;
  }
}
