/** A write failure that names the file and keeps the system error code (ENOSPC, EIO, …). */
export function writeError(path: string, err: NodeJS.ErrnoException): NodeJS.ErrnoException {
  const wrapped: NodeJS.ErrnoException = new Error(`cannot write ${path}: ${err.message}`, { cause: err });
  if (err.code !== undefined) wrapped.code = err.code;
  return wrapped;
}
