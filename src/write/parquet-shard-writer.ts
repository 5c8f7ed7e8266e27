import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { Writable } from "node:stream";
import type { Table } from "apache-arrow";
import * as parquet from "parquet-wasm";
import type { JobConfig } from "../config/schema.ts";
import { arrow } from "../io/arrow.ts";
import { writeError } from "../io/write-error.ts";
import { bucketForId, SPLITS, type Split, shardFileName } from "../output/split-assignment.ts";
import type { PackedRow } from "../pack/packed-row.ts";
import { type PackerSnapshot, SequencePacker } from "../pack/sequence-packer.ts";
import { packedRowsToTable, samplesToTable } from "./arrow-batch.ts";
import type { Sample } from "./sample.ts";
import type { RowGroupCounts, SegmentJournal } from "./segment-journal.ts";

export const SHARD_METADATA_KEY = "lwm_data";

export interface ShardWriterOptions {
  /** Folder the shards go to (`<output>/data`). */
  dir: string;
  numBuckets: number;
  /** Once a bucket's open shard passes this (uncompressed estimate), the caller should cut the segment. */
  maxShardBytes: number;
  /** The task writing these shards (part of every file name). */
  task: number;
  /** First segment number: above 0 when a task resumes from a checkpoint. */
  segment: number;
  rowGroupRows: number;
  includeMessages: boolean;
  /** The controls columns (`controls.enabled`, unpacked shards). */
  includeControls?: boolean;
  /** The outcome and provenance columns (unpacked CPT shards). */
  includeProvenance?: boolean;
  /** Scorer names: one nullable column `score_<name>` each (`scorers`, unpacked shards; packed rows carry none, as for provenance). */
  includeScores?: readonly string[];
  /** The `loss_weight` column (mask.weights.enabled), unpacked and packed. */
  includeLossWeight?: boolean;
  /** Pack samples into rows of up to `seqLen` tokens; unset = one sample per row. */
  pack?: PackSettings;
  /** Written into every shard as one Parquet key-value entry, `lwm_data` (JSON). */
  metadata: Record<string, string>;
  /** Where each row group is also appended, so a checkpoint can be taken mid-segment (segment-journal.ts). */
  journal?: SegmentJournal;
}

export interface ShardInfo {
  /** Relative to the output folder, e.g. `data/train-00003-00000-0000.parquet`. */
  path: string;
  /** train / validation; unset for tables that are not split (turn stats, SFT candidates). */
  split?: Split;
  rows: number;
  /** Samples inside: equal to rows, or more when rows are packed. */
  documents: number;
  tokens: number;
  lossTokens: number;
  bytes: number;
  sha256: string;
}

/** Estimated in-memory size of a row, for shard rollover (Arrow layout: 4 B/id + 1 B/mask, +4 B/position packed). */
/**
 * A row group also ends once its rows pass this many bytes (uncompressed estimate), whatever
 * `output.row_group_rows` says: the Parquet encoder's WebAssembly memory grows to the largest row
 * group it was given and never shrinks, so 256 long documents (a 32K-token trajectory, a book)
 * would otherwise set a high-water mark that grows with the longest records seen. Data-determined,
 * so outputs stay byte-identical whatever runs them.
 */
const MAX_ROW_GROUP_BYTES = 4 << 20;

function rowBytes(row: Sample | PackedRow): number {
  // loss_weight (mask.weights): 4 B/token more.
  const weightBytes = row.lossWeight ? row.inputIds.length * 4 : 0;
  if ("cuSeqlens" in row) return row.inputIds.length * 9 + weightBytes + row.cuSeqlens.length * 4 + row.documentIds.join("").length + 32;
  let bytes = row.inputIds.length * 5 + weightBytes + row.id.length + row.source.length + 32;
  for (const message of row.messages ?? []) bytes += message.content.length + 16;
  return bytes;
}

/**
 * A stream of record batches that parquet-wasm pulls from; `push` waits while the writer is
 * behind, so memory stays at about one row group per open shard.
 */
class BatchChannel {
  private controller!: ReadableStreamDefaultController<parquet.RecordBatch>;
  private waiting: (() => void)[] = [];
  readonly stream = new ReadableStream<parquet.RecordBatch>(
    {
      start: (controller) => {
        this.controller = controller;
      },
      pull: () => {
        for (const resolve of this.waiting.splice(0)) resolve();
      },
    },
    { highWaterMark: 1 },
  );

  enqueue(batches: parquet.RecordBatch[]): void {
    for (const batch of batches) this.controller.enqueue(batch);
  }

  async push(batches: parquet.RecordBatch[]): Promise<void> {
    this.enqueue(batches);
    while ((this.controller.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  close(): void {
    this.controller.close();
  }
}

/** One Parquet file being written under a temporary name. */
export class OpenShard {
  rows = 0;
  documents = 0;
  split: Split | undefined;
  tokens = 0;
  lossTokens = 0;
  estimatedBytes = 0;
  private channel = new BatchChannel();
  private written: Promise<void> | undefined;
  private hash = createHash("sha256");
  private bytes = 0;

  readonly finalPath: string;
  readonly relativePath: string;
  private readonly properties: () => parquet.WriterProperties;

  constructor(finalPath: string, relativePath: string, properties: () => parquet.WriterProperties) {
    this.finalPath = finalPath;
    this.relativePath = relativePath;
    this.properties = properties;
  }

  get tempPath(): string {
    return `${this.finalPath}.tmp`;
  }

  async writeRowGroup(table: Table): Promise<void> {
    await this.writeIpc(arrow.tableToIPC(table, "stream"));
  }

  /** Adds what a row group's rows add to the file's totals (a row group replayed from a journal). */
  count(counts: RowGroupCounts): void {
    this.rows += counts.rows;
    this.documents += counts.documents;
    this.tokens += counts.tokens;
    this.lossTokens += counts.lossTokens;
    this.estimatedBytes += counts.estimatedBytes;
  }

  /** Writes one row group given as an Arrow IPC stream (the same bytes in give the same file). */
  async writeIpc(ipc: Uint8Array): Promise<void> {
    const batches = parquet.Table.fromIPCStream(ipc).recordBatches();
    if (this.written) {
      // A failed write (ENOSPC, EIO) stops the consumer: without the race, the push would wait forever.
      await Promise.race([this.channel.push(batches), this.written]);
      return;
    }
    // parquet-wasm reads the first batch (for the schema) before it hands back its output.
    this.channel.enqueue(batches);
    const output = await parquet.transformParquetStream(this.channel.stream, this.properties());
    const file = createWriteStream(this.tempPath);
    const counted = output.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          this.hash.update(chunk);
          this.bytes += chunk.length;
          controller.enqueue(chunk);
        },
      }),
    );
    this.written = counted.pipeTo(Writable.toWeb(file)).catch((err: NodeJS.ErrnoException) => {
      throw writeError(this.tempPath, err);
    });
    // Seen by the next push or by finish/abort; never an unhandled rejection that kills the process.
    this.written.catch(() => undefined);
  }

  /** Finishes the file and renames it into place: readers never see a partial shard. */
  async finish(): Promise<ShardInfo> {
    this.channel.close();
    await this.written;
    await rename(this.tempPath, this.finalPath);
    return {
      path: this.relativePath,
      ...(this.split ? { split: this.split } : {}),
      rows: this.rows,
      documents: this.documents,
      tokens: this.tokens,
      lossTokens: this.lossTokens,
      bytes: this.bytes,
      sha256: this.hash.digest("hex"),
    };
  }

  async abort(): Promise<void> {
    try {
      this.channel.close();
    } catch {
      // already closed
    }
    await this.written?.catch(() => undefined);
    await rm(this.tempPath, { force: true });
  }
}

/** A bucket's name in the journal: `train:3`. */
function bucketKey(split: Split, index: number): string {
  return `${split}:${index}`;
}

function parseBucketKey(key: string): [Split, number] {
  const [split, index] = key.split(":");
  if (!SPLITS.includes(split as Split) || index === undefined || !/^\d+$/.test(index))
    throw new Error(`journal: not a shard bucket: ${key}`);
  return [split as Split, Number(index)];
}

/** A bucket's rows held in memory at a checkpoint (a structured clone in the journal). */
export interface PendingBucket {
  split: Split;
  index: number;
  buffer: (Sample | PackedRow)[];
  bufferedBytes: number;
  packer?: PackerSnapshot;
}

interface Bucket {
  split: Split;
  index: number;
  /** Samples, or packed rows when packing, waiting for the next row group. */
  buffer: (Sample | PackedRow)[];
  /** rowBytes of the buffered rows. */
  bufferedBytes: number;
  packer: SequencePacker | undefined;
  shard: OpenShard | undefined;
}

export interface PackSettings {
  seqLen: number;
  strategy: "best-fit" | "in-order";
  bufferDocuments: number;
}

/** The writer's `pack` option from the config's `pack:` section: present only when packing is on. */
export function packOption(pack: JobConfig["pack"]): { pack?: PackSettings } {
  return pack.enabled ? { pack: { seqLen: pack.seq_len, strategy: pack.strategy, bufferDocuments: pack.buffer_documents } } : {};
}

/**
 * Routes a task's samples to buckets by split and id hash and writes each bucket as zstd
 * Parquet: one sample per row, or with `pack` packed rows of up to `seqLen` tokens. Output is
 * cut into segments: `cut` packs what is buffered and finishes every bucket's shard at once, so a
 * segment boundary is a consistent point to checkpoint at — everything before it is in
 * finished files.
 */
export class ParquetShardWriter {
  private readonly options: ShardWriterOptions;
  private readonly buckets = new Map<string, Bucket>();
  private segment: number;

  constructor(options: ShardWriterOptions) {
    this.options = options;
    this.segment = options.segment;
  }

  private properties = (): parquet.WriterProperties =>
    new parquet.WriterPropertiesBuilder()
      .setCompression(parquet.Compression.ZSTD)
      // Token ids are high-cardinality; dictionary pages would only cost time and space.
      .setDictionaryEnabled(false)
      .setMaxRowGroupSize(this.options.rowGroupRows)
      .setCreatedBy("lwm-data")
      // One key only: parquet-wasm keeps key-value metadata in a hash map, so several keys
      // would come out in a different order per writer and break byte-identical shards.
      .setKeyValueMetadata(new Map([[SHARD_METADATA_KEY, JSON.stringify(this.options.metadata)]]))
      .build();

  /** Creates the folder and removes temporary files a killed run left for this task's segment. */
  async open(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    for (const split of SPLITS) {
      for (let index = 0; index < this.options.numBuckets; index++) {
        await rm(`${join(this.options.dir, shardFileName(split, index, this.options.task, this.segment))}.tmp`, { force: true });
      }
    }
  }

  private bucket(split: Split, index: number): Bucket {
    const key = bucketKey(split, index);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      const pack = this.options.pack;
      bucket = { split, index, buffer: [], bufferedBytes: 0, shard: undefined, packer: pack ? new SequencePacker(pack) : undefined };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** Adds a sample to a split; true when a bucket's shard is full and the caller should `cut`. */
  async add(sample: Sample, split: Split = "train"): Promise<boolean> {
    const bucket = this.bucket(split, bucketForId(sample.trajectoryId ?? sample.id, this.options.numBuckets));
    const rows = bucket.packer ? bucket.packer.add(sample) : [sample];
    for (const row of rows) {
      bucket.buffer.push(row);
      bucket.bufferedBytes += rowBytes(row);
    }
    if (bucket.buffer.length >= this.options.rowGroupRows || bucket.bufferedBytes >= MAX_ROW_GROUP_BYTES) await this.flushRowGroup(bucket);
    return (bucket.shard?.estimatedBytes ?? 0) >= this.options.maxShardBytes;
  }

  private shardOf(bucket: Bucket): OpenShard {
    if (!bucket.shard) {
      const path = join(this.options.dir, shardFileName(bucket.split, bucket.index, this.options.task, this.segment));
      bucket.shard = new OpenShard(path, `data/${basename(path)}`, this.properties);
      bucket.shard.split = bucket.split;
    }
    return bucket.shard;
  }

  private async flushRowGroup(bucket: Bucket): Promise<void> {
    if (bucket.buffer.length === 0) return;
    const shard = this.shardOf(bucket);
    const rows = bucket.buffer;
    bucket.buffer = [];
    bucket.bufferedBytes = 0;
    const counts: RowGroupCounts = { rows: 0, documents: 0, tokens: 0, lossTokens: 0, estimatedBytes: 0 };
    for (const row of rows) {
      counts.rows += 1;
      counts.tokens += row.inputIds.length;
      counts.lossTokens += row.numLossTokens;
      counts.estimatedBytes += rowBytes(row);
      counts.documents += "cuSeqlens" in row ? row.documentIds.length : 1;
    }
    shard.count(counts);
    const lossWeight = this.options.includeLossWeight === true;
    const table = bucket.packer
      ? packedRowsToTable(rows as PackedRow[], lossWeight)
      : samplesToTable(rows as Sample[], {
          lossWeight,
          messages: this.options.includeMessages,
          controls: this.options.includeControls ?? false,
          provenance: this.options.includeProvenance ?? false,
          scores: this.options.includeScores ?? [],
        });
    const ipc = arrow.tableToIPC(table, "stream");
    await this.options.journal?.appendRows(bucketKey(bucket.split, bucket.index), counts, ipc);
    await shard.writeIpc(ipc);
  }

  /** A row group from the journal, into the bucket's open shard as it was first written (not journaled again). */
  async replayRowGroup(file: string, counts: RowGroupCounts, ipc: Uint8Array): Promise<void> {
    const [split, index] = parseBucketKey(file);
    const shard = this.shardOf(this.bucket(split, index));
    shard.count(counts);
    await shard.writeIpc(ipc);
  }

  /** What the buckets hold that is not yet in a row group, for a mid-segment checkpoint. */
  pendingState(): PendingBucket[] {
    return [...this.buckets.values()]
      .filter((bucket) => bucket.buffer.length > 0 || (bucket.packer?.buffered ?? 0) > 0)
      .map((bucket) => ({
        split: bucket.split,
        index: bucket.index,
        buffer: bucket.buffer,
        bufferedBytes: bucket.bufferedBytes,
        ...(bucket.packer ? { packer: bucket.packer.snapshot() } : {}),
      }));
  }

  /** Puts back what `pendingState` saved (a resumed task, after its row groups were replayed). */
  restorePending(pending: readonly PendingBucket[]): void {
    for (const saved of pending) {
      const bucket = this.bucket(saved.split, saved.index);
      bucket.buffer = [...saved.buffer];
      bucket.bufferedBytes = saved.bufferedBytes;
      if (saved.packer) bucket.packer?.restore(saved.packer);
    }
  }

  /** Ends the segment: packs what is buffered, finishes every bucket's shard; returns them in file-name order. */
  async cut(): Promise<ShardInfo[]> {
    const finished: ShardInfo[] = [];
    const ordered = [...this.buckets.values()].sort((a, b) => SPLITS.indexOf(a.split) - SPLITS.indexOf(b.split) || a.index - b.index);
    for (const bucket of ordered) {
      if (bucket.packer) bucket.buffer.push(...bucket.packer.flush());
      await this.flushRowGroup(bucket);
      if (bucket.shard) finished.push(await bucket.shard.finish());
      bucket.shard = undefined;
    }
    this.segment += 1;
    return finished;
  }

  /** Removes temporary files after a failure; finished shards stay. */
  async abort(): Promise<void> {
    for (const bucket of this.buckets.values()) await bucket.shard?.abort();
  }
}
