import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream";
import { finished } from "node:stream/promises";
import { deserialize, serialize } from "node:v8";
import { constants, createZstdCompress, createZstdDecompress } from "node:zlib";
import { taskLabel } from "../../sharding/task-plan.ts";
import type { Counters } from "../normalize/normalizer.ts";
import type { JobShas } from "../output/task-state.ts";
import type { RecordResult } from "../pipeline/record-results.ts";
import { MIXTURE_DIR } from "./mixture-files.ts";

/**
 * The count unit's record results, kept for the records stage (share mode): the counting pass
 * processes every record exactly as the records stage would, so instead of tokenizing the task a
 * second time the records stage replays what the count unit spooled (docs/mixtures.md "Mixtures").
 *
 * One file per task, `mixture/spool/task-NNNNN.spool.zst`: zstd over length-prefixed frames, each
 * a structured clone (node:v8; typed arrays as their bytes): a header naming the job, one frame per
 * read item in input order (its result, input bytes behind it, and what it added to normalization's
 * counters), and an end frame (the task's id hashes). Written under `.tmp` and renamed before the
 * count marker, so a spool is whole; one from another job, or none, means the records stage
 * processes the records itself. The records stage deletes it when its task is done.
 */
export const SPOOL_FOLDER = `${MIXTURE_DIR}/spool/`;
const FORMAT = 1;

/** The spool's name relative to the output folder. */
export const spoolName = (task: number) => `${SPOOL_FOLDER}${taskLabel(task)}.spool.zst`;

/** One read item's result as the records stage takes it from `recordResults`, and its effect on the counters. */
export interface SpooledItem {
  result: RecordResult;
  item: number;
  bytes: number;
  /** Normalization's counters this record moved, and by how much. */
  counted?: [string, number][];
}

interface Header {
  format: number;
  config_sha256: string;
  plan_sha256: string;
}

interface End {
  end: true;
  items: number;
  /** The task's distinct id hashes (`DuplicateIds.hashes()`), when duplicate ids are checked. */
  idHashes?: BigUint64Array;
}

/** Frames are gathered into chunks of about this many bytes before compression. */
const CHUNK_BYTES = 1 << 20;

/** Writes one task's spool, streaming (memory holds one chunk). */
export class SpoolWriter {
  private readonly zstd = createZstdCompress({ params: { [constants.ZSTD_c_compressionLevel]: 1 } });
  private readonly file;
  private readonly done: Promise<void>;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private items = 0;
  /** The counters as of the last record, to spool what each record added. */
  private readonly seen = new Map<string, number>();

  private readonly path: string;

  private constructor(path: string, job: JobShas) {
    this.path = path;
    this.file = createWriteStream(`${path}.tmp`);
    this.zstd.pipe(this.file);
    this.done = finished(this.file);
    // Surfaced by the next write or by finish.
    this.done.catch(() => {});
    this.frame({ format: FORMAT, config_sha256: job.config_sha256, plan_sha256: job.plan_sha256 } satisfies Header);
  }

  static async create(outputDir: string, task: number, job: JobShas): Promise<SpoolWriter> {
    const path = join(outputDir, spoolName(task));
    await mkdir(join(outputDir, SPOOL_FOLDER), { recursive: true });
    return new SpoolWriter(path, job);
  }

  /** Adds one read item's result; `counters` are the context's (what the record added is spooled). */
  async add(result: RecordResult, item: number, bytes: number, counters: Counters): Promise<void> {
    const counted: [string, number][] = [];
    for (const [key, value] of counters) {
      const before = this.seen.get(key) ?? 0;
      if (value !== before) {
        counted.push([key, value - before]);
        this.seen.set(key, value);
      }
    }
    this.items = item;
    this.frame({ result, item, bytes, ...(counted.length > 0 ? { counted } : {}) } satisfies SpooledItem);
    if (this.pendingBytes >= CHUNK_BYTES) await this.flush();
  }

  /** Ends the spool and gives it its name: from here on it is current. */
  async finish(idHashes: BigUint64Array | undefined): Promise<void> {
    this.frame({ end: true, items: this.items, ...(idHashes ? { idHashes } : {}) } satisfies End);
    await this.flush();
    this.zstd.end();
    await this.done;
    await rename(`${this.path}.tmp`, this.path);
  }

  /** After a failure: the unfinished file goes. */
  async abort(): Promise<void> {
    this.zstd.destroy();
    this.file.destroy();
    await rm(`${this.path}.tmp`, { force: true });
  }

  private frame(value: unknown): void {
    const body = serialize(value);
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32LE(body.length);
    this.pending.push(length, body);
    this.pendingBytes += 4 + body.length;
  }

  private async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const chunk = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.zstd.write(chunk)) await Promise.race([once(this.zstd, "drain"), this.done]);
  }
}

/** The frames of a zstd stream of length-prefixed frames, in order, each decoded. */
async function* frames(path: string): AsyncGenerator<unknown> {
  const chunks: Buffer[] = [];
  let buffered = 0;
  /** The next n bytes; a frame's in a buffer of its own (its typed arrays are views into it, and must not hold a whole chunk). */
  const take = (n: number, own: boolean): Buffer => {
    const whole = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, buffered);
    chunks.length = 0;
    if (whole.length > n) chunks.push(whole.subarray(n));
    buffered = whole.length - n;
    if (!own) return whole.subarray(0, n);
    const frame = Buffer.allocUnsafeSlow(n);
    whole.copy(frame, 0, 0, n);
    return frame;
  };
  let need = 4;
  let inFrame = false;
  const decompressed = createZstdDecompress();
  // A read error destroys the decompressor with it, so the loop below throws it.
  pipeline(createReadStream(path), decompressed, () => {});
  for await (const chunk of decompressed) {
    chunks.push(chunk as Buffer);
    buffered += (chunk as Buffer).length;
    while (buffered >= need) {
      const bytes = take(need, inFrame);
      if (inFrame) {
        yield deserialize(bytes);
        need = 4;
      } else need = bytes.readUInt32LE(0);
      inFrame = !inFrame;
    }
  }
  if (buffered > 0 || inFrame) throw new Error(`${path}: the spool ends mid-frame`);
}

/** A current spool, opened for the records stage. */
export interface Spool {
  /** The task's results after the first `resumeAfter` items, each record's counts added to `counters`. */
  results(resumeAfter: number, counters: Counters): AsyncGenerator<{ result: RecordResult; item: number; bytes: number }>;
  /** After `results` ran to its end: the id hashes the count unit's duplicate check collected. */
  idHashes(): BigUint64Array | undefined;
}

/**
 * The task's spool, when there is one from this job (checked on its header); otherwise undefined,
 * and the records stage processes the task's records itself.
 */
export async function openSpool(outputDir: string, task: number, job: JobShas): Promise<Spool | undefined> {
  const path = join(outputDir, spoolName(task));
  if (!(await stat(path).catch(() => undefined))) return undefined;
  const stream = frames(path);
  const first = await stream.next().catch(() => undefined);
  const header = first?.value as Header | undefined;
  if (!header || header.format !== FORMAT || header.config_sha256 !== job.config_sha256 || header.plan_sha256 !== job.plan_sha256) {
    await stream.return(undefined);
    return undefined;
  }
  let end: End | undefined;
  return {
    async *results(resumeAfter, counters) {
      for await (const frame of stream) {
        if ((frame as End).end === true) {
          end = frame as End;
          continue;
        }
        const { result, item, bytes, counted } = frame as SpooledItem;
        if (item <= resumeAfter) continue; // already in a finished segment (its counts with it)
        for (const [key, n] of counted ?? []) counters.set(key, (counters.get(key) ?? 0) + n);
        yield { result, item, bytes };
      }
      if (!end) throw new Error(`${path}: the spool has no end frame`);
    },
    idHashes: () => {
      if (!end) throw new Error(`${path}: the spool was not read to its end`);
      return end.idHashes;
    },
  };
}

/** Deletes the task's spool (and an unfinished one). */
export async function removeSpool(outputDir: string, task: number): Promise<void> {
  const path = join(outputDir, spoolName(task));
  await rm(path, { force: true });
  await rm(`${path}.tmp`, { force: true });
}
