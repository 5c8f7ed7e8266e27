import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Table } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { UserError } from "../core/errors.ts";
import { arrow } from "../io/arrow.ts";
import type { TurnDecision } from "../mask/loss-policy.ts";
import type { TurnStats } from "../mask/turn-stats.ts";

/** One row of a run's per-turn stats table (src/write/turn-stats-writer.ts): a decision and the statistics it stores. */
export type TurnStatsRow = Pick<TurnDecision, "turnIndex" | "kept" | "keepRatio" | "draw"> & { turnClass: string } & Pick<
    TurnStats,
    "overlap" | "novelty" | "jaccard" | "lengthRatio" | "historyNovelty" | "actTokens" | "obsTokens"
  >;

export interface SampleTurnStats {
  /** The stats files that were searched, relative to the output folder. */
  files: string[];
  /** The sample's rows, in turn order; empty when the table has none for it. */
  rows: TurnStatsRow[];
}

/** Shards live in `<out>/data/`, the stats table of the same run in `<out>/stats/`. */
function statsDirOf(shardPath: string): string {
  return join(dirname(dirname(resolve(shardPath))), "stats");
}

/**
 * The stats files, found by listing rather than by name since their names carry task and part
 * numbers; temporary files of a running job (`*.parquet.tmp`) are skipped.
 */
async function statsFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith(".parquet")).sort();
  } catch {
    return [];
  }
}

async function readTable(path: string): Promise<Table> {
  try {
    return arrow.tableFromIPC(parquet.readParquet(new Uint8Array(await readFile(path))).intoIPCStream());
  } catch (err) {
    throw new UserError(`${path} is not a readable stats table: ${(err as Error).message}`);
  }
}

/**
 * The stats-table rows of one sample (by id), read the way read-shard.ts reads a shard.
 * Undefined when the run wrote no stats table (mask policy all-observations makes no per-turn
 * decisions). Each file is read whole: inspect looks at one sample, not a dataset.
 */
export async function readSampleTurnStats(shardPath: string, id: string): Promise<SampleTurnStats | undefined> {
  const dir = statsDirOf(shardPath);
  const names = await statsFiles(dir);
  if (names.length === 0) return undefined;
  const rows: TurnStatsRow[] = [];
  for (const name of names) {
    const table = await readTable(join(dir, name));
    const ids = table.getChild("id");
    if (!ids) throw new UserError(`${join(dir, name)}: column "id" is missing; is this an lwm-data stats table?`);
    for (let i = 0; i < table.numRows; i++) {
      if (ids.get(i) !== id) continue;
      const r = table.get(i)?.toJSON() as Record<string, unknown>;
      rows.push({
        turnIndex: Number(r.turn_index),
        turnClass: String(r.class),
        kept: r.kept === true,
        keepRatio: Number(r.keep_ratio),
        draw: Number(r.draw),
        overlap: Number(r.overlap),
        novelty: Number(r.novelty),
        jaccard: Number(r.jaccard),
        lengthRatio: Number(r.length_ratio),
        historyNovelty: Number(r.history_novelty),
        actTokens: Number(r.act_tokens),
        obsTokens: Number(r.obs_tokens),
      });
    }
  }
  rows.sort((a, b) => a.turnIndex - b.turnIndex);
  return { files: names.map((name) => `stats/${name}`), rows };
}
