import { access } from "node:fs/promises";
import { join, resolve } from "node:path";
import { UserError } from "../core/errors.ts";
import { readJsonFile } from "../io/json-file.ts";
import type { Manifest } from "../output/manifest.ts";
import { type DuckSession, sqlStringList } from "./duckdb-session.ts";

/** A finished CPT output folder as the dashboard sees it: its manifest and its files' absolute paths. */
export interface RunOutput {
  dir: string;
  label: string;
  manifest: Manifest;
  statsFiles: string[];
  shardFiles: string[];
  quarantineFiles: string[];
  /** The filtered/ files (records removed by read filters, curation, filters or selection); none when nothing was filtered. */
  filteredFiles: string[];
  /** SQL view of the stats table (`turns_0`, `turns_1`, … one per run). */
  turnsView: string;
  /** SQL view of the shards' id / token columns. */
  shardsView: string;
}

async function mustExist(path: string, what: string): Promise<void> {
  try {
    await access(path);
  } catch {
    throw new UserError(`${path}: ${what} listed in the manifest is missing; run \`lwm-data verify\` on the folder`);
  }
}

/**
 * Reads the manifest (only a finished run has one) and declares views over its files. The files
 * are the manifest's own lists, not a glob, so a half-written or stray file is never counted.
 */
export async function openRunOutput(db: DuckSession, dir: string, index: number): Promise<RunOutput> {
  const manifestPath = join(dir, "manifest.json");
  const manifest = await readJsonFile<Manifest>(manifestPath);
  if (!manifest)
    throw new UserError(
      `${manifestPath} not found: the dashboard reads a finished output folder of \`lwm-data run\` (the manifest is written last; \`lwm-data finalize\` names unfinished tasks)`,
    );
  if (manifest.format !== "lwm-data/shards")
    throw new UserError(
      `${manifestPath}: format ${JSON.stringify(manifest.format)} is not a CPT output (lwm-data/shards); the dashboard shows a run's turn statistics`,
    );
  const absolute = (path: string) => resolve(dir, path);
  const statsFiles = (manifest.masking?.stats_files ?? []).map((f) => absolute(f.path));
  const shardFiles = manifest.shards.map((f) => absolute(f.path));
  const quarantineFiles = manifest.quarantine.filter((q) => q.entries > 0).map((q) => absolute(q.path));
  for (const file of statsFiles) await mustExist(file, "stats table");
  for (const file of shardFiles) await mustExist(file, "shard");
  // filtered_files lists every task's file (read filters, curation, the config's filters, selection); older manifests have curation.files only.
  const filteredFiles = (manifest.filtered_files ?? manifest.curation?.files ?? [])
    .filter((f) => f.entries > 0)
    .map((f) => absolute(f.path));
  for (const file of quarantineFiles) await mustExist(file, "quarantine file");
  for (const file of filteredFiles) await mustExist(file, "filtered file");

  const turnsView = `turns_${index}`;
  const shardsView = `shards_${index}`;
  // A run without per-turn decisions (mask policy all-observations) gets an empty view of the same shape.
  await db.run(
    statsFiles.length > 0
      ? `CREATE VIEW ${turnsView} AS SELECT * FROM read_parquet(${sqlStringList(statsFiles)})`
      : `CREATE VIEW ${turnsView} AS SELECT * FROM (VALUES ('', '', 0, '', false, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0))
           t(id, domain, turn_index, class, kept, keep_ratio, draw, overlap, novelty, jaccard, length_ratio, history_novelty, act_tokens, obs_tokens) WHERE false`,
  );
  if (shardFiles.length > 0) await db.run(`CREATE VIEW ${shardsView} AS SELECT * FROM read_parquet(${sqlStringList(shardFiles)})`);
  return { dir, label: dir, manifest, statsFiles, shardFiles, quarantineFiles, filteredFiles, turnsView, shardsView };
}
