import { mkdir, rm } from "node:fs/promises";
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

const ROW_GROUP_ROWS = 65_536;

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

/** `stats/turns-TTTTT-SSSS.parquet`: the task and segment, like the shards beside it. */
function statsFileName(task: number, segment: number): string {
  return `turns-${String(task).padStart(5, "0")}-${String(segment).padStart(4, "0")}.parquet`;
}

/**
 * Writes a task's per-turn stats table (zstd Parquet) that the dashboard and notebooks read;
 * one file per segment, cut together with the shards so a checkpoint covers both.
 */
export class TurnStatsWriter {
  private readonly dir: string;
  private readonly task: number;
  private segment: number;
  private buffer: TurnRow[] = [];
  private file: OpenShard | undefined;

  constructor(outputDir: string, task: number, segment: number) {
    this.dir = join(outputDir, "stats");
    this.task = task;
    this.segment = segment;
  }

  /** Creates the folder and removes the temporary file a killed run left for this segment. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await rm(`${join(this.dir, statsFileName(this.task, this.segment))}.tmp`, { force: true });
  }

  async add(id: string, domain: string, decisions: readonly TurnDecision[]): Promise<void> {
    for (const decision of decisions) this.buffer.push({ id, domain, decision });
    if (this.buffer.length >= ROW_GROUP_ROWS) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    if (!this.file) {
      const name = statsFileName(this.task, this.segment);
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
  }

  /** Ends the segment's file (if it has rows) and returns it. */
  async cut(): Promise<ShardInfo | undefined> {
    await this.flush();
    const file = this.file;
    this.file = undefined;
    this.segment += 1;
    return file ? await file.finish() : undefined;
  }

  async abort(): Promise<void> {
    await this.file?.abort();
  }
}
