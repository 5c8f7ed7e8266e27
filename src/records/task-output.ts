import { join, relative } from "node:path";
import { type Task, taskLabel } from "../../sharding/task-plan.ts";
import type { QuarantineEntry } from "../core/errors.ts";
import { FILTERED_DIR } from "../curate/curate-files.ts";
import type { FilteredEntry } from "../curate/filtered-entry.ts";
import { escaperFor, textRuleMetadata } from "../export/special-literals.ts";
import { fileSha256 } from "../io/file-sha256.ts";
import type { Counters } from "../normalize/normalizer.ts";
import { redactQuarantineEntry } from "../normalize/redact-output.ts";
import { pullTaskFiles, uploadTaskFiles } from "../output/remote-task-files.ts";
import type { Split } from "../output/split-assignment.ts";
import {
  isCurrent,
  type OutputFile,
  readTaskState,
  TASK_STATE_FORMAT,
  type TaskState,
  taskJournalPath,
  writeTaskIds,
  writeTaskState,
} from "../output/task-state.ts";
import { emptyTotals, type TaskTotals } from "../output/task-totals.ts";
import type { DuplicateIds } from "../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas, labelPath } from "../pipeline/plan.ts";
import { ParquetShardWriter, type PendingBucket, packOption, type ShardInfo } from "../write/parquet-shard-writer.ts";
import { QuarantineWriter } from "../write/quarantine-writer.ts";
import type { Sample } from "../write/sample.ts";
import { SegmentJournal } from "../write/segment-journal.ts";
import { STATS_JOURNAL_FILE, type TurnRow, TurnStatsWriter } from "../write/turn-stats-writer.ts";

/** What the writers hold in memory at a mid-segment checkpoint (the journal's `pending` frame). */
interface PendingWriters {
  shards: PendingBucket[];
  stats: readonly TurnRow[];
}

/**
 * Whether this job's tasks keep a journal for checkpoints between segment cuts: on unless both
 * intervals are 0, and local outputs only (a journal that grows all segment long is not an object
 * to upload at every checkpoint).
 */
export function checkpointsBetweenCuts(plan: JobPlan): boolean {
  const { seconds, records } = plan.config.output.checkpoint;
  return !plan.remote && (seconds > 0 || records > 0);
}

export function outputFile(info: ShardInfo): OutputFile {
  return {
    path: info.path,
    ...(info.split ? { split: info.split } : {}),
    rows: info.rows,
    documents: info.documents,
    bytes: info.bytes,
    sha256: info.sha256,
    tokens: info.tokens,
    loss_tokens: info.lossTokens,
  };
}

/**
 * A quarantine entry naming its file as the shards do when `input.root` is set: relative to the
 * root, so the same inputs in a folder or a bucket give the same bytes. Without a root it keeps
 * the file's full path, which finds it from anywhere.
 */
function locatedEntry(entry: QuarantineEntry, root: string | undefined): QuarantineEntry {
  return root === undefined ? entry : { ...entry, source: { ...entry.source, uri: labelPath(entry.source.uri, root) } };
}

function freshState(plan: JobPlan, task: Task): TaskState {
  return {
    format: TASK_STATE_FORMAT,
    task: task.index,
    config_sha256: plan.configSha256,
    plan_sha256: plan.taskPlanSha256,
    segment: 0,
    items: 0,
    totals: emptyTotals(),
    shards: [],
    stats_files: [],
    quarantine: null,
    filtered: null,
  };
}

/**
 * The files one record task writes — shards, the turn-stats table, quarantine and filtered — and
 * its checkpoints. Segments are cut where a bucket's shard fills (a point fixed by the data), and
 * a checkpoint records everything up to a cut, so a resumed task appends to the same files and
 * writes the same bytes as one never stopped.
 */
export class TaskOutput {
  /** Normalization counters, starting from the checkpoint's so a resumed task sums to one pass. */
  readonly counters: Counters;
  /** Files of finished segments not yet uploaded (an `s3://` output). */
  private readonly unuploaded: string[] = [];

  private readonly plan: JobPlan;
  private readonly task: Task;
  readonly state: TaskState;
  private readonly shards: ParquetShardWriter;
  private readonly turnStats: TurnStatsWriter;
  private readonly quarantine: QuarantineWriter;
  private readonly filtered: QuarantineWriter;
  private readonly journal: SegmentJournal | undefined;
  /** Read items already in finished files or the journal when the task opened (a resume). */
  readonly resumedItems: number;

  private constructor(
    plan: JobPlan,
    task: Task,
    state: TaskState,
    writers: {
      shards: ParquetShardWriter;
      turnStats: TurnStatsWriter;
      quarantine: QuarantineWriter;
      filtered: QuarantineWriter;
      journal: SegmentJournal | undefined;
    },
  ) {
    this.plan = plan;
    this.task = task;
    this.state = state;
    this.shards = writers.shards;
    this.turnStats = writers.turnStats;
    this.quarantine = writers.quarantine;
    this.filtered = writers.filtered;
    this.journal = writers.journal;
    this.counters = new Map(Object.entries(state.totals.normalize));
    this.resumedItems = state.items;
  }

  /** Opens a task's files, resuming from its last checkpoint if a previous attempt died. */
  static async open(plan: JobPlan, task: Task): Promise<TaskOutput> {
    const { config } = plan;
    const outputDir = config.output.dir;
    const checkpoint = await readTaskState(outputDir, task.index, "checkpoint");
    const resumed = checkpoint !== undefined && isCurrent(checkpoint, jobShas(plan));
    const state = resumed ? checkpoint : freshState(plan, task);
    // A task resumed on another machine (or in a fresh staging folder) appends to its files from the bucket.
    if (plan.remote && resumed) await pullTaskFiles(plan.remote, state);
    // A mid-segment checkpoint needs its journal whatever the settings now (they are not part of the job).
    const journal =
      state.journal !== undefined || checkpointsBetweenCuts(plan)
        ? await SegmentJournal.open(taskJournalPath(outputDir, task.index), state.journal?.bytes ?? 0)
        : undefined;
    const shards = new ParquetShardWriter({
      dir: join(outputDir, "data"),
      numBuckets: config.output.num_buckets,
      maxShardBytes: config.output.max_shard_bytes,
      rowGroupRows: config.output.row_group_rows,
      includeMessages: config.output.include_messages,
      includeControls: config.controls.enabled,
      includeProvenance: true,
      includeScores: plan.scorers.map((scorer) => scorer.name),
      includeLossWeight: config.mask.weights.enabled,
      ...packOption(config.pack),
      task: task.index,
      segment: state.segment,
      ...(journal ? { journal } : {}),
      metadata: {
        pipeline: plan.pipeline.name,
        tokenizer: plan.tokenizer.identity.name,
        vocab_sha256: plan.tokenizer.identity.vocabSha256,
        template_sha256: plan.renderer.sha256,
        config_sha256: plan.configSha256,
        ...(config.output.include_messages && !config.pack.enabled
          ? textRuleMetadata(escaperFor(plan.tokenizer, plan.renderer.template))
          : {}),
      },
    });
    const turnStats = new TurnStatsWriter(outputDir, task.index, state.segment, journal);
    const quarantine = new QuarantineWriter(join(outputDir, "quarantine"), taskLabel(task.index), state.quarantine?.bytes ?? 0);
    // Records curation and filters removed: the same kind of file as quarantine, resumed the same way.
    const filtered = new QuarantineWriter(join(outputDir, FILTERED_DIR), taskLabel(task.index), state.filtered?.bytes ?? 0);
    await shards.open();
    await turnStats.open();
    await quarantine.open();
    await filtered.open();
    if (journal && state.journal) await replayJournal(journal, state.journal, shards, turnStats);
    return new TaskOutput(plan, task, state, { shards, turnStats, quarantine, filtered, journal });
  }

  get totals(): TaskTotals {
    return this.state.totals;
  }

  /** Adds a document to its split's shard; true when a shard filled (the segment should be cut). */
  addSample(sample: Sample & { mixtureSource: string }, split: Split): Promise<boolean> {
    return this.shards.add(sample, split);
  }

  async addTurnStats(sample: Sample): Promise<void> {
    if (sample.decisions) await this.turnStats.add(sample.id, sample.domain, sample.decisions, sample.controls?.labels);
  }

  /** Quarantine is output too: no secret may reach it. */
  async addQuarantined(entry: QuarantineEntry): Promise<void> {
    const { config } = this.plan;
    const located = locatedEntry(entry, config.input.root);
    await this.quarantine.write(redactQuarantineEntry(located, { secrets: config.normalize.redact_secrets, pii: config.normalize.pii }));
  }

  async addFiltered(entry: FilteredEntry): Promise<void> {
    await this.filtered.write(entry);
  }

  /** Ends the segment: everything up to `items` is in finished files. */
  async cutSegment(items: number): Promise<void> {
    const { state } = this;
    const shards = await this.shards.cut();
    const statsFile = await this.turnStats.cut();
    this.unuploaded.push(...shards.map((shard) => shard.path), ...(statsFile ? [statsFile.path] : []));
    state.segment += 1;
    state.shards.push(...shards.map(outputFile));
    if (statsFile) state.stats_files.push(outputFile(statsFile));
    delete state.journal;
    await this.recordProgress(items);
  }

  /** The counts and appended files' lengths as of `items` read items, into the state. */
  private async recordProgress(items: number): Promise<void> {
    const outputDir = this.plan.config.output.dir;
    const { state } = this;
    const totals = state.totals;
    await this.quarantine.flush();
    await this.filtered.flush();
    state.items = items;
    totals.normalize = Object.fromEntries(this.counters);
    state.quarantine =
      totals.quarantined > 0
        ? { path: relative(outputDir, this.quarantine.path), bytes: this.quarantine.bytes, entries: totals.quarantined }
        : null;
    state.filtered =
      totals.filtered > 0 ? { path: relative(outputDir, this.filtered.path), bytes: this.filtered.bytes, entries: totals.filtered } : null;
  }

  /** Cuts the segment and records the checkpoint a rerun resumes from. */
  async checkpoint(items: number): Promise<void> {
    await this.cutSegment(items);
    await writeTaskState(this.plan.config.output.dir, this.state, "checkpoint");
    // Only once the state no longer needs it: a kill before this resumes from the journal, whose segment files are then rewritten alike.
    await this.journal?.reset();
    await this.journal?.dropHeld();
    if (this.plan.remote) await uploadTaskFiles(this.plan.remote, this.state, this.unuploaded.splice(0), "checkpoint");
  }

  /** Whether checkpoints between segment cuts are kept (the task has a journal). */
  get checkpointsMidSegment(): boolean {
    return this.journal !== undefined;
  }

  /**
   * A checkpoint inside the segment: what the writers hold goes into the journal, which is
   * synced, and the state names its length. A rerun resumes after `items` without cutting
   * the segment, so the output is the same wherever this was called.
   */
  async checkpointMidSegment(items: number): Promise<void> {
    const journal = this.journal;
    if (!journal) return;
    const pending: PendingWriters = { shards: this.shards.pendingState(), stats: this.turnStats.pending };
    const held = (this.state.journal?.held ?? 0) + 1;
    await journal.writeHeld(held, pending);
    const bytes = await journal.sync();
    await this.recordProgress(items);
    this.state.journal = { bytes, held };
    await writeTaskState(this.plan.config.output.dir, this.state, "checkpoint");
    await journal.dropHeld(held);
  }

  /** After a failure or a stop: the unfinished segment's temporary files go, the last checkpoint (and the journal it needs) stands. */
  async abort(): Promise<void> {
    await this.shards.abort();
    await this.turnStats.abort();
    await this.quarantine.close();
    await this.filtered.close();
    await this.journal?.close();
  }

  /** The last segment cut and the files closed (inside the task's failure handling, like any write). */
  async close(items: number): Promise<void> {
    await this.cutSegment(items);
    await this.quarantine.close();
    await this.filtered.close();
  }

  /**
   * The books checked (records in = out + quarantined + filtered + not drawn; documents made =
   * documents in shards), and the task's completion marker written.
   */
  async seal(items: number, duplicates: Pick<DuplicateIds, "hashes"> | undefined): Promise<TaskState> {
    const outputDir = this.plan.config.output.dir;
    const { state, task } = this;
    const totals = state.totals;
    const shardDocuments = state.shards.reduce((sum, shard) => sum + (shard.documents ?? shard.rows), 0);
    if (
      totals.records_in !== items ||
      items !== totals.samples_out + totals.quarantined + totals.filtered + totals.dropped_by_mixture ||
      shardDocuments !== totals.documents
    ) {
      throw new Error(
        `${taskLabel(task.index)}: accounting mismatch: ${items} records read, ${totals.samples_out} samples out, ${totals.quarantined} quarantined, ${totals.filtered} filtered, ${totals.dropped_by_mixture} not drawn by the mixture, ${totals.documents} documents made, ${shardDocuments} documents in shards`,
      );
    }
    // Streamed: a badly broken input can make a large quarantine file.
    if (state.quarantine) state.quarantine.sha256 = await fileSha256(this.quarantine.path);
    if (state.filtered) state.filtered.sha256 = await fileSha256(this.filtered.path);
    if (duplicates) await writeTaskIds(outputDir, task.index, duplicates.hashes());
    await writeTaskState(outputDir, state, "done");
    await this.journal?.remove();
    if (this.plan.remote) await uploadTaskFiles(this.plan.remote, state, this.unuploaded.splice(0), "done", duplicates !== undefined);
    return state;
  }
}

/**
 * Rebuilds the open segment from the journal's first `bytes`: every row group into a fresh
 * encoder (the same bytes as first written), then what the writers held at the checkpoint.
 */
async function replayJournal(
  journal: SegmentJournal,
  at: { bytes: number; held: number },
  shards: ParquetShardWriter,
  turnStats: TurnStatsWriter,
): Promise<void> {
  const held = (await journal.readHeld(at.held)) as PendingWriters;
  for await (const frame of journal.frames(at.bytes)) {
    if (frame.file === STATS_JOURNAL_FILE) await turnStats.replayRowGroup(frame.counts, frame.ipc);
    else await shards.replayRowGroup(frame.file, frame.counts, frame.ipc);
  }
  shards.restorePending(held.shards);
  turnStats.pending = held.stats;
}
