import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { QuarantineEntry } from "../core/errors.ts";

/** Appends quarantined records, one JSON line each, to `<output>/quarantine/records.jsonl`. */
export class QuarantineWriter {
  private stream: WriteStream | undefined;
  count = 0;
  readonly byStage: Record<string, number> = {};

  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  get path(): string {
    return join(this.dir, "records.jsonl");
  }

  async write(entry: QuarantineEntry): Promise<void> {
    if (!this.stream) {
      await mkdir(this.dir, { recursive: true });
      this.stream = createWriteStream(this.path);
    }
    this.count += 1;
    this.byStage[entry.stage] = (this.byStage[entry.stage] ?? 0) + 1;
    if (!this.stream.write(`${JSON.stringify(entry)}\n`)) {
      await new Promise<void>((resolve) => this.stream?.once("drain", resolve));
    }
  }

  async close(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}
