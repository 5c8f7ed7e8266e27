import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ShardInfo } from "../src/write/parquet-shard-writer.ts";

export const MANIFEST_FORMAT = "lwm-data/shards";
export const MANIFEST_VERSION = 1;

export interface DomainTotals {
  samples: number;
  tokens: number;
  loss_tokens: number;
}

/** `manifest.json`: what was made, from what, and how to check it. See README "Output". */
export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  version: typeof MANIFEST_VERSION;
  pipeline: { name: string; stages: string[] };
  config_sha256: string;
  tokenizer: { name: string; vocab_sha256: string; vocab_size: number; source: string };
  template: { source: string; sha256: string };
  mask_policy: string;
  /** turn-stats policy: per domain and class, turns and kept turns, observation tokens before/after; the stats table files. */
  masking: {
    by_domain_class: Record<string, Record<string, { turns: number; kept: number; obs_tokens: number; kept_obs_tokens: number }>>;
    stats_files: { path: string; rows: number; bytes: number; sha256: string }[];
  };
  inputs: { path: string; format: string; detected: boolean; bytes: number }[];
  counts: {
    records_in: number;
    samples_out: number;
    quarantined: number;
    quarantined_by_stage: Record<string, number>;
  };
  tokens: { total: number; loss: number };
  domains: Record<string, DomainTotals>;
  /** What normalization found and did: secrets redacted per type, volatile values, truncations… */
  normalize: Record<string, number>;
  shards: {
    path: string;
    rows: number;
    tokens: number;
    loss_tokens: number;
    bytes: number;
    sha256: string;
  }[];
}

export function shardEntries(shards: ShardInfo[]): Manifest["shards"] {
  return shards.map((s) => ({ path: s.path, rows: s.rows, tokens: s.tokens, loss_tokens: s.lossTokens, bytes: s.bytes, sha256: s.sha256 }));
}

/** Written last, under a temporary name: a manifest's presence means the output is complete. */
export async function writeManifest(outputDir: string, manifest: Manifest): Promise<string> {
  const path = join(outputDir, "manifest.json");
  await writeFile(`${path}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
  return path;
}
