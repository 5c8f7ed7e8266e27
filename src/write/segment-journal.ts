import { type FileHandle, open, readdir, readFile, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { UserError } from "../core/errors.ts";
import { writeTextFile } from "../io/json-file.ts";
import { writeError } from "../io/write-error.ts";

/** What a row group adds to its file's totals (the ShardInfo counts). */
export interface RowGroupCounts {
  rows: number;
  documents: number;
  tokens: number;
  lossTokens: number;
  estimatedBytes: number;
}

/** One journal frame: a row group of a segment file. */
export interface JournalFrame {
  file: string;
  counts: RowGroupCounts;
  ipc: Uint8Array;
}

/** A frame's header as written: its file, counts and the compressed body's length. */
interface Header {
  file: string;
  counts: RowGroupCounts;
  bytes: number;
}

/** Length prefixes are 4 bytes, little-endian. */
const PREFIX = 4;

/**
 * The open segment's journal, `tasks/task-NNNNN.journal`, so a checkpoint can be taken at any
 * record without cutting the segment (docs/clusters.md "Resume"). Segment cuts are
 * data-determined, so shard files do not depend on when a run was stopped; but a task whose output
 * never fills a shard would otherwise have no checkpoint before its end.
 *
 * Every row group the segment's Parquet files get is appended as the Arrow IPC stream handed to
 * the encoder (zstd level 1). A checkpoint syncs it and writes what the writers still hold in
 * memory (rows not yet in a row group, the packer's buffer) beside it, as `<journal>.held-N`, a
 * structured clone; N counts the segment's checkpoints, so the file the last checkpoint names is
 * never the one being replaced. A resumed task feeds the row groups to fresh encoders, which
 * write the same bytes, restores the held rows and goes on from the checkpoint's record: the
 * records before it are not normalized, tokenized or masked again.
 *
 * Frame: u32 header length, header JSON (file, counts, body length), zstd body. The journal is
 * cut back to the checkpoint's length on resume, emptied at each segment cut, and deleted (with
 * its held files) when the task is done.
 */
export class SegmentJournal {
  readonly path: string;
  private readonly handle: FileHandle;
  private position: number;

  private constructor(path: string, handle: FileHandle, position: number) {
    this.path = path;
    this.handle = handle;
    this.position = position;
  }

  /** Opens the journal, keeping its first `keepBytes` (a checkpoint's) and dropping what came after. */
  static async open(path: string, keepBytes: number): Promise<SegmentJournal> {
    let handle: FileHandle;
    try {
      handle = await open(path, keepBytes > 0 ? "r+" : "w+");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT")
        throw new UserError(`${path} is missing, though the task's checkpoint needs it; delete the checkpoint beside it to redo the task`);
      throw writeError(path, err as NodeJS.ErrnoException);
    }
    const { size } = await handle.stat();
    if (size < keepBytes) {
      await handle.close();
      throw new UserError(
        `${path} has ${size} bytes, but the task's checkpoint was taken at byte ${keepBytes}; delete the checkpoint beside it to redo the task`,
      );
    }
    await handle.truncate(keepBytes);
    return new SegmentJournal(path, handle, keepBytes);
  }

  get bytes(): number {
    return this.position;
  }

  /** Appends one row group of `file` (its Arrow IPC stream) with its counts. */
  async appendRows(file: string, counts: RowGroupCounts, ipc: Uint8Array): Promise<void> {
    const packed = zstdCompressSync(ipc, { params: { [constants.ZSTD_c_compressionLevel]: 1 } });
    const headerBytes = Buffer.from(JSON.stringify({ file, counts, bytes: packed.length } satisfies Header));
    const prefix = Buffer.alloc(PREFIX);
    prefix.writeUInt32LE(headerBytes.length);
    const frame = Buffer.concat([prefix, headerBytes, packed]);
    try {
      await this.handle.write(frame, 0, frame.length, this.position);
    } catch (err) {
      throw writeError(this.path, err as NodeJS.ErrnoException);
    }
    this.position += frame.length;
  }

  private heldPath(sequence: number): string {
    return `${this.path}.held-${sequence}`;
  }

  /** Writes what the writers hold at checkpoint `sequence` (a structured clone: plain objects and typed arrays). */
  async writeHeld(sequence: number, state: unknown): Promise<void> {
    await writeTextFile(this.heldPath(sequence), zstdCompressSync(serialize(state)));
  }

  async readHeld(sequence: number): Promise<unknown> {
    const path = this.heldPath(sequence);
    const bytes = await readFile(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT")
        throw new UserError(`${path} is missing, though the task's checkpoint needs it; delete the checkpoint beside it to redo the task`);
      throw err;
    });
    return deserialize(zstdDecompressSync(bytes));
  }

  /** Deletes the held files of checkpoints other than `keep` (superseded ones; all of them without `keep`). */
  async dropHeld(keep?: number): Promise<void> {
    const prefix = `${basename(this.path)}.held-`;
    const names = await readdir(dirname(this.path)).catch(() => [] as string[]);
    for (const name of names)
      if (name.startsWith(prefix) && name !== `${prefix}${keep}`) await rm(join(dirname(this.path), name), { force: true });
  }

  /** Makes everything appended durable; returns the length a checkpoint records. */
  async sync(): Promise<number> {
    await this.handle.sync();
    return this.position;
  }

  /** Empties the journal: the segment it described is cut and listed in the checkpoint. */
  async reset(): Promise<void> {
    await this.handle.truncate(0);
    this.position = 0;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  /** Closes and deletes the journal and its held files (the task is done). */
  async remove(): Promise<void> {
    await this.close();
    await rm(this.path, { force: true });
    await this.dropHeld();
  }

  /** The frames in the journal's first `bytes`, in the order they were appended. */
  async *frames(bytes: number): AsyncGenerator<JournalFrame> {
    let at = 0;
    while (at < bytes) {
      const prefix = await this.read(at, PREFIX, bytes);
      const headerLength = prefix.readUInt32LE(0);
      const header = this.parseHeader(await this.read(at + PREFIX, headerLength, bytes), at);
      const body = zstdDecompressSync(await this.read(at + PREFIX + headerLength, header.bytes, bytes));
      at += PREFIX + headerLength + header.bytes;
      yield { file: header.file, counts: header.counts, ipc: body };
    }
  }

  private async read(at: number, length: number, end: number): Promise<Buffer> {
    if (at + length > end) throw new UserError(`${this.path}: a frame at byte ${at} runs past the checkpoint's length ${end}`);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await this.handle.read(buffer, 0, length, at);
    if (bytesRead !== length) throw new UserError(`${this.path}: truncated at byte ${at + bytesRead}`);
    return buffer;
  }

  private parseHeader(bytes: Buffer, at: number): Header {
    try {
      return JSON.parse(bytes.toString("utf8")) as Header;
    } catch {
      throw new UserError(`${this.path}: the frame header at byte ${at} is damaged; delete the checkpoint beside it to redo the task`);
    }
  }
}
