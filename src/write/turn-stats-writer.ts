import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import type { TurnDecision } from "../mask/loss-policy.ts";
import { BufferedTableFile } from "./buffered-table-file.ts";
import type { ShardInfo } from "./parquet-shard-writer.ts";

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
  private file: BufferedTableFile<TurnRow>;

  constructor(outputDir: string, task: number, segment: number) {
    this.dir = join(outputDir, "stats");
    this.task = task;
    this.segment = segment;
    this.file = this.segmentFile();
  }

  private segmentFile(): BufferedTableFile<TurnRow> {
    const name = statsFileName(this.task, this.segment);
    return new BufferedTableFile(join(this.dir, name), `stats/${name}`, ROW_GROUP_ROWS, table);
  }

  /** Creates the folder and removes the temporary file a killed run left for this segment. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await rm(this.file.tempPath, { force: true });
  }

  async add(id: string, domain: string, decisions: readonly TurnDecision[]): Promise<void> {
    await this.file.add(decisions.map((decision) => ({ id, domain, decision })));
  }

  /** Ends the segment's file (if it has rows) and returns it. */
  async cut(): Promise<ShardInfo | undefined> {
    const finished = await this.file.finish();
    this.segment += 1;
    this.file = this.segmentFile();
    return finished;
  }

  async abort(): Promise<void> {
    await this.file.abort();
  }
}
