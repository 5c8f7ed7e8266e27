import type { JobConfig } from "../config/schema.ts";

/** `manifest.packing`: how full the packed rows are. */
export interface PackingSummary {
  seq_len: number;
  strategy: JobConfig["pack"]["strategy"];
  overlong: JobConfig["pack"]["overlong"];
  rows: number;
  documents: number;
  tokens: number;
  /** tokens / (rows × seq_len): the share of a fixed-length batch that is real tokens. */
  efficiency: number;
  /** 1 − efficiency: what padding every row to seq_len would cost. */
  padding_share: number;
}

/** The packing summary over the shards of a packed output; undefined when packing is off. */
export function packingSummary(
  pack: JobConfig["pack"],
  shards: readonly { rows: number; documents?: number; tokens?: number }[],
): PackingSummary | undefined {
  if (!pack.enabled) return undefined;
  let rows = 0;
  let documents = 0;
  let tokens = 0;
  for (const shard of shards) {
    rows += shard.rows;
    documents += shard.documents ?? shard.rows;
    tokens += shard.tokens ?? 0;
  }
  const efficiency = rows === 0 ? 0 : tokens / (rows * pack.seq_len);
  // Rounded so the manifest reads well and stays byte-stable across platforms.
  const round = (value: number) => Math.round(value * 1e6) / 1e6;
  return {
    seq_len: pack.seq_len,
    strategy: pack.strategy,
    overlong: pack.overlong,
    rows,
    documents,
    tokens,
    efficiency: round(efficiency),
    padding_share: round(rows === 0 ? 0 : 1 - efficiency),
  };
}
