import type { Task } from "../../sharding/task-plan.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { itemSource, type ReaderOptions, type ReadItem } from "../read/reader.ts";
import { letEventsIn } from "./event-loop-turn.ts";
import type { InputFile, JobPlan } from "./plan.ts";

/** How far a task has got: records read and input bytes behind them (for rate and ETA). */
export interface TaskProgress {
  task: number;
  records: number;
  /** Of `records`, those a resumed task found in its checkpoint (not processed again). */
  resumed?: number;
  bytes: number;
}

/**
 * A file that breaks mid-way (truncated archive, I/O error) keeps the records read so far; the
 * break itself becomes one quarantine entry naming the file and the last good position.
 */
async function* readSafely(file: InputFile, options: ReaderOptions): AsyncGenerator<ReadItem> {
  let last: SourceRef = { uri: file.path, format: file.reader.name };
  try {
    for await (const item of file.reader.read(file.path, options)) {
      last = itemSource(item);
      yield item;
    }
  } catch (err) {
    const after =
      last.line !== undefined
        ? ` after line ${last.line}`
        : last.row !== undefined
          ? ` after row ${last.row}`
          : last.offset !== undefined
            ? ` after byte ${last.offset}`
            : "";
    yield {
      kind: "quarantine",
      entry: {
        source: { uri: file.path, format: file.reader.name },
        stage: "read",
        reason: `file unreadable${after}: ${(err as Error).message}`,
      },
    };
  }
}

/** Every read item of a task, in order, with the input bytes behind it so far. */
export async function* taskItems(plan: JobPlan, task: Task): AsyncGenerator<{ item: ReadItem; file: InputFile; bytes: number }> {
  let bytesBefore = 0;
  for (const piece of task.pieces) {
    const file = plan.files[piece.file] as InputFile;
    const start = piece.start ?? 0;
    const end = piece.end ?? file.bytes;
    const options: ReaderOptions = {
      maxLineBytes: plan.config.input.max_line_bytes,
      ...(file.spec.domain ? { domain: file.spec.domain } : {}),
      ...(piece.start !== undefined ? { range: { start, end } } : {}),
    };
    for await (const item of readSafely(file, options)) {
      await letEventsIn();
      const source = itemSource(item);
      const within = source.offset !== undefined ? Math.min(Math.max(source.offset - start, 0), end - start) : 0;
      yield { item, file, bytes: bytesBefore + within };
    }
    bytesBefore += end - start;
  }
}
