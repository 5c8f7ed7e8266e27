/**
 * Preloaded with `node --import` into an `lwm-data` process (and its worker threads) to make
 * writes fail the way a dying disk does. `LWM_FAULT=<CODE>:<path substring>:<bytes>`: once more
 * than <bytes> have been written to files whose path contains the substring, every further write
 * to such a file fails with <CODE> (EIO, ENOSPC, …), as the kernel would report it. A file is
 * watched from its open to its close (descriptor numbers are reused).
 *
 * Node's write streams call the `fs` module's own `open`/`write`/`writev`, so patching them here
 * reaches every streamed writer (shards, stats tables, quarantine) without touching the code under test.
 */
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const spec = process.env.LWM_FAULT;
if (spec) {
  const [code = "EIO", needle = "", budgetText = "0"] = spec.split(":");
  let budget = Number(budgetText);
  const watched = new Set<number>();
  const errno: Record<string, number> = { EIO: -5, ENOSPC: -28 };

  const open = fs.open;
  fs.open = ((path: fs.PathLike, ...rest: unknown[]) => {
    const callback = rest.pop() as (err: NodeJS.ErrnoException | null, fd: number) => void;
    return (open as (...args: unknown[]) => void)(path, ...rest, (err: NodeJS.ErrnoException | null, fd: number) => {
      if (!err && String(path).includes(needle)) watched.add(fd);
      callback(err, fd);
    });
  }) as typeof fs.open;

  // A closed descriptor's number is reused by the next open (any file, any thread): it stops being watched.
  const close = fs.close;
  fs.close = ((fd: number, ...rest: unknown[]) => {
    watched.delete(fd);
    return (close as (...args: unknown[]) => void)(fd, ...rest);
  }) as typeof fs.close;

  const fail = (fd: number, bytes: number): NodeJS.ErrnoException | null => {
    if (!watched.has(fd)) return null;
    budget -= bytes;
    if (budget >= 0) return null;
    const err: NodeJS.ErrnoException = new Error(`${code}: injected fault, write`);
    err.code = code;
    err.errno = errno[code] ?? -5;
    err.syscall = "write";
    return err;
  };

  const write = fs.write;
  fs.write = ((fd: number, buffer: NodeJS.ArrayBufferView, ...rest: unknown[]) => {
    const callback = rest.pop() as (err: NodeJS.ErrnoException | null, written?: number) => void;
    const err = fail(fd, buffer.byteLength);
    if (err) return process.nextTick(callback, err);
    return (write as (...args: unknown[]) => void)(fd, buffer, ...rest, callback);
  }) as typeof fs.write;

  const writev = fs.writev;
  fs.writev = ((fd: number, buffers: NodeJS.ArrayBufferView[], ...rest: unknown[]) => {
    const callback = rest.pop() as (err: NodeJS.ErrnoException | null, written?: number) => void;
    const err = fail(
      fd,
      buffers.reduce((sum, b) => sum + b.byteLength, 0),
    );
    if (err) return process.nextTick(callback, err);
    return (writev as (...args: unknown[]) => void)(fd, buffers, ...rest, callback);
  }) as typeof fs.writev;

  syncBuiltinESMExports();
}
