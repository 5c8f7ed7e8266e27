import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { openShard, shardRow } from "../../src/inspect/read-shard.ts";

/** Every file under `dir`, relative, sorted. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * Every shard row of an output as (shard/id → tokens and mask), and the rows' sources: what two
 * jobs over the same records in different places (a disk, a bucket, the Hub) must agree on.
 */
export async function shardRows(out: string): Promise<{ byId: Map<string, string>; sources: string[] }> {
  const byId = new Map<string, string>();
  const sources: string[] = [];
  for (const name of filesUnder(join(out, "data"))) {
    const shard = await openShard(join(out, "data", name));
    for (let r = 0; r < shard.numRows; r++) {
      const row = shardRow(shard, r);
      byId.set(`${name}/${row.id}`, `${Array.from(row.inputIds).join(",")}|${Array.from(row.lossMask).join("")}`);
      sources.push(row.source);
    }
  }
  return { byId, sources };
}
