import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type * as Arrow from "apache-arrow";
import type { ControlLabel } from "../controls/control-label.ts";
import { arrow } from "../io/arrow.ts";
import type { TurnDecision } from "../mask/loss-policy.ts";
import { BufferedTableFile } from "./buffered-table-file.ts";
import type { ShardInfo } from "./parquet-shard-writer.ts";
import type { RowGroupCounts, SegmentJournal } from "./segment-journal.ts";

/** One row of the stats table: a turn, its statistics and the masking decision. */
export interface TurnRow {
  id: string;
  domain: string;
  decision: TurnDecision;
  /** The turn's control labels (docs/controls.md "Controls"); empty without controls or edge cases. */
  labels: readonly string[];
}

const ROW_GROUP_ROWS = 65_536;

/** The stats file's name in the task's journal (shard buckets are `train:3` and the like). */
export const STATS_JOURNAL_FILE = "stats";

/**
 * The rows as an Arrow table, every column filled in one loop (plain arrays for strings and
 * booleans, typed arrays for numbers: the column types follow from those). No accessor closures
 * made per call: V8 compiled each of them again after every major GC.
 */
function table(rows: readonly TurnRow[]): Arrow.Table {
  const n = rows.length;
  const id: string[] = new Array(n);
  const domain: string[] = new Array(n);
  const turnClass: string[] = new Array(n);
  const kept: boolean[] = new Array(n);
  const turnIndex = new Int32Array(n);
  const keepRatio = new Float64Array(n);
  const draw = new Float64Array(n);
  const overlap = new Float64Array(n);
  const novelty = new Float64Array(n);
  const jaccard = new Float64Array(n);
  const lengthRatio = new Float64Array(n);
  const historyNovelty = new Float64Array(n);
  const actTokens = new Int32Array(n);
  const obsTokens = new Int32Array(n);
  // Optional columns, present when the job makes them (mask.corpus_novelty, mask.weights).
  const hasCorpus = rows[0]?.decision.stats.corpusNovelty !== undefined;
  const hasWeight = rows[0]?.decision.weight !== undefined;
  const corpusNovelty = new Float64Array(hasCorpus ? n : 0);
  const weight = new Float64Array(hasWeight ? n : 0);
  const labels: string[][] = new Array(n);
  for (let i = 0; i < n; i++) {
    const row = rows[i] as TurnRow;
    const { decision } = row;
    const { stats } = decision;
    id[i] = row.id;
    domain[i] = row.domain;
    turnIndex[i] = decision.turnIndex;
    turnClass[i] = decision.turnClass;
    kept[i] = decision.kept;
    keepRatio[i] = decision.keepRatio;
    draw[i] = decision.draw;
    overlap[i] = stats.overlap;
    novelty[i] = stats.novelty;
    jaccard[i] = stats.jaccard;
    lengthRatio[i] = stats.lengthRatio;
    historyNovelty[i] = stats.historyNovelty;
    actTokens[i] = stats.actTokens;
    obsTokens[i] = stats.obsTokens;
    if (hasCorpus) corpusNovelty[i] = stats.corpusNovelty ?? 0;
    if (hasWeight) weight[i] = decision.weight ?? 0;
    labels[i] = row.labels as string[];
  }
  const columns = arrow.tableFromArrays({
    id,
    domain,
    turn_index: turnIndex,
    class: turnClass,
    kept,
    keep_ratio: keepRatio,
    draw,
    overlap,
    novelty,
    jaccard,
    length_ratio: lengthRatio,
    history_novelty: historyNovelty,
    act_tokens: actTokens,
    obs_tokens: obsTokens,
    ...(hasCorpus ? { corpus_novelty: corpusNovelty } : {}),
    ...(hasWeight ? { weight } : {}),
  });
  return columns.assign(new arrow.Table({ labels: labelsVector(labels) }));
}

const LABELS_TYPE = new arrow.List(new arrow.Field("item", new arrow.Utf8(), false));

/** The `labels` column: a list of strings per turn. */
function labelsVector(labels: readonly string[][]): Arrow.Vector<Arrow.List<Arrow.Utf8>> {
  const builder = arrow.makeBuilder({ type: LABELS_TYPE, nullValues: [] });
  // The builder takes plain arrays for list values; its types ask for a Vector.
  for (const turn of labels) builder.append(turn as unknown as Arrow.Vector<Arrow.Utf8>);
  return arrow.makeVector(builder.finish().flush());
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
  private readonly journal: SegmentJournal | undefined;

  constructor(outputDir: string, task: number, segment: number, journal?: SegmentJournal) {
    this.dir = join(outputDir, "stats");
    this.task = task;
    this.segment = segment;
    this.journal = journal;
    this.file = this.segmentFile();
  }

  private segmentFile(): BufferedTableFile<TurnRow> {
    const name = statsFileName(this.task, this.segment);
    const journal = this.journal ? { journal: this.journal, file: STATS_JOURNAL_FILE } : undefined;
    return new BufferedTableFile(join(this.dir, name), `stats/${name}`, ROW_GROUP_ROWS, table, journal);
  }

  /** A row group of the segment's stats file, from the journal. */
  replayRowGroup(counts: RowGroupCounts, ipc: Uint8Array): Promise<void> {
    return this.file.replayRowGroup(counts, ipc);
  }

  /** Rows not yet in a row group, for a mid-segment checkpoint, and their restoring. */
  get pending(): readonly TurnRow[] {
    return this.file.pending;
  }

  set pending(rows: readonly TurnRow[]) {
    this.file.pending = rows;
  }

  /** Creates the folder and removes the temporary file a killed run left for this segment. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await rm(this.file.tempPath, { force: true });
  }

  async add(id: string, domain: string, decisions: readonly TurnDecision[], labels: readonly ControlLabel[] = []): Promise<void> {
    const rows: TurnRow[] = [];
    for (const decision of decisions)
      rows.push({ id, domain, decision, labels: labels.filter((label) => label.turn === decision.turnIndex).map((label) => label.label) });
    await this.file.add(rows);
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
