import { Worker } from "node:worker_threads";
import type { Schema } from "apache-arrow";
import { moduleFile } from "../core/package-files.ts";
import { arrow } from "../io/arrow.ts";
import type { ParquetReply, ParquetRequest } from "./parquet-worker.ts";
import { errorText } from "./problems.ts";
import type { ShardContent } from "./shard-content.ts";

/** A Parquet file as read in the worker: its footer, and for a shard what its rows hold. */
export interface ParquetInspection {
  /** Absent when the file could not be opened as Parquet. */
  opened?: { schema: Schema; rows: number; rowGroupRows: number[]; keyValue: Map<string, string> };
  content?: ShardContent;
  /** Why reading stopped: the file could not be opened, or the reader died in a row group. */
  failure?: { rowGroup?: number; error: string };
}

/** No reply for this long means the reader hangs; row groups are a few hundred rows, so this is generous. */
const STALL_MS = 120_000;

/**
 * Reads Parquet files in one worker thread at a time (see parquet-worker.ts for why), a file at
 * a time, so memory holds one row group. A worker that dies or stalls is replaced for the next file.
 */
export class ParquetReader {
  private worker: Worker | undefined;

  private start(): Worker {
    this.worker ??= new Worker(moduleFile("verify/parquet-worker"));
    return this.worker;
  }

  /** Ends the worker; the next read starts a fresh one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  read(path: string, scanRows: boolean): Promise<ParquetInspection> {
    const worker = this.start();
    const inspection: ParquetInspection = {};
    let rowGroup: number | undefined;
    return new Promise<ParquetInspection>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (failure?: ParquetInspection["failure"]) => {
        clearTimeout(timer);
        worker.off("message", onMessage).off("error", onError).off("exit", onExit);
        if (failure) {
          inspection.failure = failure;
          if (this.worker === worker) void this.close();
        }
        resolve(inspection);
      };
      const stalled = () => finish({ ...(rowGroup !== undefined ? { rowGroup } : {}), error: `no progress for ${STALL_MS / 1000} s` });
      const watch = () => {
        clearTimeout(timer);
        timer = setTimeout(stalled, STALL_MS);
      };
      const onMessage = (reply: ParquetReply) => {
        watch();
        if (reply.kind === "failed") finish({ error: reply.error });
        else if (reply.kind === "opened") {
          const { rows, rowGroupRows, keyValue } = reply;
          inspection.opened = { schema: arrow.tableFromIPC(reply.schemaIpc).schema, rows, rowGroupRows, keyValue };
        } else if (reply.kind === "row-group") rowGroup = reply.index;
        else {
          if (reply.content) inspection.content = reply.content;
          finish();
        }
      };
      const died = (error: string) => finish({ ...(rowGroup !== undefined ? { rowGroup } : {}), error });
      // parquet-wasm panics surface as `RuntimeError: unreachable`.
      const onError = (err: unknown) =>
        died(`the Parquet decoder crashed (${err instanceof Error ? `${err.name}: ${err.message}` : errorText(err)})`);
      const onExit = (code: number) => died(`the Parquet reader exited (${code})`);
      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
      watch();
      worker.postMessage({ path, scanRows } satisfies ParquetRequest);
    });
  }
}
