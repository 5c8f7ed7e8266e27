import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import type { TurnDecision } from "../mask/loss-policy.ts";
import { OpenShard, type ShardInfo } from "./parquet-shard-writer.ts";

/** One row of the stats table: a turn, its statistics and the masking decision. */
export interface TurnRow {
  id: string;
  domain: string;
  decision: TurnDecision;
}

export interface ClassTotals {
  turns: number;
  kept: number;
  obs_tokens: number;
  kept_obs_tokens: number;
}

const ROW_GROUP_ROWS = 65_536;
const ROWS_PER_FILE = 1_048_576;

function table(rows: readonly TurnRow[]): arrow.Table {
  const float = (pick: (d: TurnDecision) => number) => Float64Array.from(rows, (r) => pick(r.decision));
  const int = (pick: (d: TurnDecision) => number) => Int32Array.from(rows, (r) => pick(r.decision));
  return arrow.tableFromArrays({
    id: rows.map((r) => r.id),
    domain: rows.map((r) => r.domain),
    turn_index: int((d) => d.turnIndex),
    class: rows.map((r) => r.decision.turnClass),
    kept: rows.map((r) => r.decision.kept),
    keep_ratio: float((d) => d.keepRatio),
    draw: float((d) => d.draw),
    overlap: float((d) => d.stats.overlap),
    novelty: float((d) => d.stats.novelty),
    jaccard: float((d) => d.stats.jaccard),
    length_ratio: float((d) => d.stats.lengthRatio),
    history_novelty: float((d) => d.stats.historyNovelty),
    act_tokens: int((d) => d.stats.actTokens),
    obs_tokens: int((d) => d.stats.obsTokens),
  });
}

/**
 * Writes the per-turn stats table (`<output>/stats/turns-NNNN.parquet`, zstd) that the
 * dashboard and notebooks read, and sums it per domain and class for the manifest.
 */
export class TurnStatsWriter {
  private readonly dir: string;
  private buffer: TurnRow[] = [];
  private file: OpenShard | undefined;
  private fileIndex = 0;
  private readonly files: ShardInfo[] = [];
  readonly totals: Record<string, Record<string, ClassTotals>> = {};

  constructor(outputDir: string) {
    this.dir = join(outputDir, "stats");
  }

  async add(id: string, domain: string, decisions: readonly TurnDecision[]): Promise<void> {
    for (const decision of decisions) {
      this.buffer.push({ id, domain, decision });
      const byClass = this.totals[domain] ?? {};
      this.totals[domain] = byClass;
      const totals = byClass[decision.turnClass] ?? { turns: 0, kept: 0, obs_tokens: 0, kept_obs_tokens: 0 };
      byClass[decision.turnClass] = totals;
      totals.turns += 1;
      totals.obs_tokens += decision.stats.obsTokens;
      if (decision.kept) {
        totals.kept += 1;
        totals.kept_obs_tokens += decision.stats.obsTokens;
      }
    }
    if (this.buffer.length >= ROW_GROUP_ROWS) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    if (!this.file) {
      await mkdir(this.dir, { recursive: true });
      const name = `turns-${String(this.fileIndex).padStart(4, "0")}.parquet`;
      const properties = () =>
        new parquet.WriterPropertiesBuilder()
          .setCompression(parquet.Compression.ZSTD)
          .setMaxRowGroupSize(ROW_GROUP_ROWS)
          .setCreatedBy("lwm-data")
          .build();
      this.file = new OpenShard(join(this.dir, name), `stats/${name}`, properties);
    }
    const rows = this.buffer;
    this.buffer = [];
    this.file.rows += rows.length;
    await this.file.writeRowGroup(table(rows));
    if (this.file.rows >= ROWS_PER_FILE) await this.finishFile();
  }

  private async finishFile(): Promise<void> {
    if (!this.file) return;
    this.files.push(await this.file.finish());
    this.file = undefined;
    this.fileIndex += 1;
  }

  async close(): Promise<ShardInfo[]> {
    await this.flush();
    await this.finishFile();
    return this.files;
  }

  async abort(): Promise<void> {
    await this.file?.abort();
  }
}
