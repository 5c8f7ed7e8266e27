/** What `lwm-data verify` compares; one name per kind of mismatch. */
export type VerifyCheck =
  | "missing"
  | "unlisted"
  | "bytes"
  | "sha256"
  | "rows"
  /** A filtered file's line that is not a sound entry (id, domain, stage, reason, what it matched). */
  | "entries"
  | "tokens"
  | "loss_tokens"
  | "schema"
  | "metadata"
  | "totals"
  | "manifest";

/** One mismatch between an output folder and its manifest. */
export interface VerifyProblem {
  /** Relative to the output folder, `/`-separated (`manifest.json` for problems of the manifest itself). */
  path: string;
  check: VerifyCheck;
  expected?: string | number;
  actual?: string | number;
  message: string;
}

export { MANIFEST_FILE } from "../output/manifest.ts";

/** A thrown value as text: parquet-wasm throws plain strings as well as Errors. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return (err as NodeJS.ErrnoException).code ?? err.message;
  return String(err);
}
