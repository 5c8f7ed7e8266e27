import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, rm, truncate } from "node:fs/promises";
import { join } from "node:path";
import type { QuarantineEntry } from "../core/errors.ts";
import { writeError } from "../io/write-error.ts";

/**
 * Appends a task's quarantined records, one JSON line each, to `<output>/quarantine/<task>.jsonl`
 * (and, as the same kind of file, the records curation removed to `<output>/filtered/<task>.jsonl`).
 * Tracks its byte length so a checkpoint can record it and a resumed task can cut the file back
 * to that point (entries after the checkpoint are written again by the rerun).
 */
export class QuarantineWriter {
  private stream: WriteStream | undefined;
  private failure: NodeJS.ErrnoException | undefined;
  readonly path: string;
  /** Bytes in the file so far (including those kept from before a resume). */
  bytes: number;

  constructor(dir: string, name: string, resumeBytes = 0) {
    this.path = join(dir, `${name}.jsonl`);
    this.bytes = resumeBytes;
  }

  /** Makes the file match the checkpoint: cut back to its length, or gone when it had none. */
  async open(): Promise<void> {
    if (this.bytes === 0) await rm(this.path, { force: true });
    else await truncate(this.path, this.bytes);
  }

  async write(entry: QuarantineEntry | object): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.stream) {
      await mkdir(join(this.path, ".."), { recursive: true });
      const stream = createWriteStream(this.path, { flags: "a" });
      // A failed write (ENOSPC, EIO) is kept and thrown by the next call, never left unhandled.
      stream.on("error", (err: NodeJS.ErrnoException) => {
        this.failure ??= writeError(this.path, err);
      });
      this.stream = stream;
    }
    const stream = this.stream;
    const line = `${JSON.stringify(entry)}\n`;
    this.bytes += Buffer.byteLength(line);
    if (!stream.write(line))
      await new Promise<void>((resolve, reject) => {
        const failed = () => reject(this.failure);
        stream.once("drain", () => {
          stream.off("close", failed);
          resolve();
        });
        stream.once("close", failed);
      });
  }

  /** Resolves once everything written so far has reached the file (before a checkpoint). */
  async flush(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    await new Promise<void>((resolve, reject) => stream.write("", (err) => (err ? reject(this.failure ?? err) : resolve())));
  }

  async close(): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    if (!stream) return;
    if (this.failure) throw this.failure;
    await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(this.failure ?? err) : resolve())));
  }
}
