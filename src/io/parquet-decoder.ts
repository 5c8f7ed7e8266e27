import { Worker } from "node:worker_threads";
import { moduleFile } from "../core/package-files.ts";

/**
 * A Parquet file decoded in a worker thread, one row group per request (src/read/text-parquet.ts,
 * src/read/parquet-rows.ts): parquet-wasm panics on some damaged pages, which kills its
 * WebAssembly instance and, on the calling thread, the process (see src/verify/parquet-worker.ts).
 * A panic only costs the request in flight; GroupDecoder starts a fresh Decoder for the next group.
 */

/**
 * A remote file's bytes could not be fetched (after the retries): the read stops with that error
 * (the task records the file as unreadable from there, as for any reader whose input breaks),
 * instead of quarantining each row of the group as undecodable when its data is fine.
 */
export function failIfUnreadable(path: string, reply: DecoderReply): void {
  if (reply.kind === "failed" && reply.input) throw new Error(`${path}: ${reply.error}`);
}

/**
 * Where each row group starts, for byte-range tasks: after the 4-byte magic, each group's
 * compressed size after the last (as writers lay them out). Every task computes the same offsets
 * from the same footer, so each group lands in exactly one task's range whatever the layout.
 */
export function groupOffsets(groupBytes: readonly number[]): number[] {
  const offsets: number[] = [];
  let at = 4;
  for (const bytes of groupBytes) {
    offsets.push(at);
    at += bytes;
  }
  return offsets;
}

/** `read`: one row group, those columns (all when absent), its first `limit` rows when given. */
export type DecoderRequest =
  | { kind: "open"; path: string }
  | { kind: "read"; group: number; columns?: string[]; limit?: number }
  /** Frees the open file: the thread can open another (see releaseDecoder). */
  | { kind: "close" };

export type DecoderReply =
  | { kind: "opened"; schemaIpc: Uint8Array; rowGroupRows: number[]; rowGroupBytes: number[] }
  | { kind: "group"; ipc: Uint8Array }
  /** `memoryBytes`: what the thread's parquet-wasm memory holds (see KEEP_MAX_MEMORY_BYTES). */
  | { kind: "closed"; memoryBytes: number }
  /**
   * `input`: the file's bytes could not be read (ParquetInputError), not decoded. `aborted`:
   * parquet-wasm panicked; its instance (the thread's) is unusable from then on.
   */
  | { kind: "failed"; error: string; input?: boolean; aborted?: boolean }
  /** The worker crashed (a parquet-wasm panic) or exited: it answers nothing more. */
  | { kind: "died"; error: string };

/**
 * Arrow IPC bytes from the decoder (a schema, a row group) read by the reading thread's
 * apache-arrow, or why they cannot be (a type parquet-wasm writes that apache-arrow refuses): the
 * reader quarantines, as for a row group that could not be decoded.
 */
export function fromIpc<T>(read: (ipc: Uint8Array) => T, ipc: Uint8Array): { value: T } | { why: string } {
  try {
    return { value: read(ipc) };
  } catch (err) {
    return { why: `apache-arrow cannot read what parquet-wasm decoded: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Marks the decoder's worker thread, so its module serves only a thread started as one. */
export const DECODER_ROLE = "lwm-data:parquet-decoder";

export function replyError(reply: DecoderReply): string {
  return "error" in reply ? reply.error : `unexpected reply "${reply.kind}"`;
}

/**
 * A decoder whose parquet-wasm memory grew past this (a large row group) is not kept for the next
 * file: WebAssembly memory never shrinks, and an idle thread should not hold a big file's worth.
 */
const KEEP_MAX_MEMORY_BYTES = 128 << 20;

/** One worker thread holding one open Parquet file at a time; one request at a time. */
export class Decoder {
  private readonly worker: Worker;
  private pending: ((reply: DecoderReply) => void) | undefined;
  private death: string | undefined;
  /**
   * Whether the thread may serve another file: not after a parquet-wasm panic (its instance is
   * unusable) or a failed remote read (it leaves a read pending for ever). A decode error that
   * parquet-wasm returns (damaged bytes) leaves it sound.
   */
  reusable = true;

  constructor() {
    // The worker's side is a module of its own: a process that only plans or sniffs never loads
    // parquet-wasm and apache-arrow (~150 modules) with this one.
    this.worker = new Worker(moduleFile("io/parquet-decoder-worker"), { workerData: { role: DECODER_ROLE } });
    // Held only while a request waits: a reader its consumer abandons never keeps the process alive.
    this.worker.unref();
    this.worker.on("message", (reply: DecoderReply) => this.settle(reply));
    // parquet-wasm panics surface here as `RuntimeError: unreachable`.
    this.worker.on("error", (err: unknown) =>
      this.die(`the Parquet decoder crashed (${err instanceof Error ? `${err.name}: ${err.message}` : String(err)})`),
    );
    this.worker.on("exit", (code: number) => this.die(`the Parquet decoder exited (${code})`));
  }

  request(message: DecoderRequest): Promise<DecoderReply> {
    if (this.death !== undefined) return Promise.resolve({ kind: "died", error: this.death });
    return new Promise((resolve) => {
      this.pending = resolve;
      this.worker.ref();
      this.worker.postMessage(message);
    });
  }

  private settle(reply: DecoderReply): void {
    if (reply.kind === "died" || (reply.kind === "failed" && (reply.input || reply.aborted))) this.reusable = false;
    if (reply.kind === "closed" && reply.memoryBytes > KEEP_MAX_MEMORY_BYTES) this.reusable = false;
    const resolve = this.pending;
    this.pending = undefined;
    this.worker.unref();
    resolve?.(reply);
  }

  private die(error: string): void {
    this.death ??= error;
    this.settle({ kind: "died", error: this.death });
  }

  async close(): Promise<void> {
    this.death ??= "closed";
    this.reusable = false;
    await this.worker.terminate();
  }
}

/**
 * The thread's idle decoder, kept from the last file read: starting one costs ~0.4 CPU-s
 * (parquet-wasm compiled, apache-arrow loaded), which a job of many small Parquet files, or a
 * file sniffed at detection and then read, would otherwise pay per file. Unref'd while idle.
 */
let idleDecoder: Decoder | undefined;

/** A decoder for one file: the idle one when there is one, else a new thread. Give it back with releaseDecoder. */
export function acquireDecoder(): Decoder {
  const decoder = idleDecoder ?? new Decoder();
  idleDecoder = undefined;
  return decoder;
}

/** Ends a file's decoding: a healthy decoder closes the file and is kept for the next (one at most); any other ends. */
export async function releaseDecoder(decoder: Decoder): Promise<void> {
  if (decoder.reusable && !idleDecoder) {
    const closed = await decoder.request({ kind: "close" });
    if (closed.kind === "closed" && decoder.reusable && !idleDecoder) {
      idleDecoder = decoder;
      return;
    }
  }
  await decoder.close();
}

/** A row group of a byte-range task: its index, its rows, its first row's number in the file and its first byte. */
export interface RangeGroup {
  group: number;
  rows: number;
  first: number;
  offset: number;
}

/** The row groups whose first byte falls in `range` (see groupOffsets; every group without one), in file order. */
export function* groupsInRange(
  opened: { rowGroupRows: readonly number[]; rowGroupBytes: readonly number[] },
  range?: { start: number; end: number },
): Generator<RangeGroup> {
  const offsets = groupOffsets(opened.rowGroupBytes);
  let first = 0;
  for (const [group, rows] of opened.rowGroupRows.entries()) {
    const offset = offsets[group] as number;
    if (!range || (offset >= range.start && offset < range.end)) yield { group, rows, first, offset };
    first += rows;
  }
}

/**
 * A row reader's decoding of one Parquet file: `open`, then its row groups one by one. A panic
 * leaves a decoder's WebAssembly instance unusable, so the group after one starts a fresh Decoder;
 * once a fresh decoder cannot even open the file, the rest of it is unreadable. `close` when done.
 */
export class GroupDecoder {
  private readonly path: string;
  private decoder: Decoder | undefined = acquireDecoder();
  private unreadable: string | undefined;

  constructor(path: string) {
    this.path = path;
  }

  /** Opens the file: the reply ("opened" or why not); a remote file whose bytes cannot be fetched throws. */
  async open(): Promise<DecoderReply> {
    const opened = await (this.decoder as Decoder).request({ kind: "open", path: this.path });
    failIfUnreadable(this.path, opened);
    return opened;
  }

  /** Row group `group` (those columns, all when absent) as Arrow IPC bytes, or why it could not be decoded. */
  async read(group: number, columns?: string[]): Promise<{ ipc: Uint8Array } | { why: string }> {
    const { path } = this;
    if (!this.decoder && !this.unreadable) {
      this.decoder = acquireDecoder();
      const reopened = await this.decoder.request({ kind: "open", path });
      failIfUnreadable(path, reopened);
      if (reopened.kind !== "opened") this.unreadable = `the file could not be opened again: ${replyError(reopened)}`;
    }
    const reply =
      this.unreadable || !this.decoder
        ? undefined
        : await this.decoder.request(columns ? { kind: "read", group, columns } : { kind: "read", group });
    if (reply) failIfUnreadable(path, reply);
    if (reply?.kind === "group") return { ipc: reply.ipc };
    if (reply?.kind === "died" || (reply?.kind === "failed" && !this.decoder?.reusable)) {
      await this.decoder?.close();
      this.decoder = undefined;
    }
    return { why: reply ? replyError(reply) : (this.unreadable as string) };
  }

  async close(): Promise<void> {
    if (this.decoder) await releaseDecoder(this.decoder);
    this.decoder = undefined;
  }
}
