import { createHash } from "node:crypto";
import { basename } from "node:path";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { type CutNote, withoutCutLastRecordLine } from "./cut-last-line.ts";
import { MAX_JSON_DEPTH, nestsTooDeep } from "./json-depth.ts";
import { excerpt, parseJsonLine, type ReaderOptions, recordLines } from "./reader.ts";

/** Shared pieces of the SWE readers: type checks for quarantine reasons, ids, JSONL records. */

/**
 * A wrong-typed or missing field of one record: the reader that throws it quarantines the record,
 * naming the field (and its line, where it knows it). The one class for every reader's field
 * problems; a reader whose catch must not take another module's (its message says more, or it
 * carries more) throws a subclass of its own and catches that.
 */
export class FieldError extends Error {
  readonly field: string | undefined;
  readonly line: number | undefined;
  constructor(field: string | undefined, message: string, line?: number) {
    super(message);
    this.field = field;
    this.line = line;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "a string", "an array", "null": for reasons such as `expected a string, got an array`. */
/**
 * The source text of a JSON line's top-level `id` (JSON.parse's reviver sees each value's source):
 * JSON.parse rounds integers past 2^53 (19-digit ids are common), the line holds the digits.
 */
export function topLevelIdSource(line: string): string | undefined {
  const sources = new WeakMap<object, string>();
  const root: unknown = JSON.parse(line, function (this: object, key: string, parsed: unknown, context?: { source?: string }) {
    if (key === "id" && context?.source !== undefined) sources.set(this, context.source);
    return parsed;
  });
  return isRecord(root) ? sources.get(root) : undefined;
}

export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

// The JSON depth limit lives in json-depth.ts (no imports, so json-array.ts can use it too); re-exported for the readers.
export { MAX_JSON_DEPTH, nestsTooDeep };

/** A value for a quarantine reason: its JSON, or its type when it nests too deep to write. */
export function describeJson(value: unknown): string {
  return nestsTooDeep(value) ? `${describeType(value)} nested deeper than ${MAX_JSON_DEPTH} levels` : String(JSON.stringify(value));
}

/** The file name without compression suffixes and the given format suffix (`/x/a.traj.gz` → `a`). */
export function fileStem(path: string, formatSuffix: RegExp): string {
  return basename(path)
    .replace(/\.(gz|zst|zstd)$/i, "")
    .replace(formatSuffix, "");
}

/** A stable id for a record that names none: a prefix and the first 16 hex digits of its sha256. */
export function contentId(prefix: string, text: string): string {
  return `${prefix}-${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
}

export type JsonObjectLine =
  | { kind: "record"; record: Record<string, unknown>; text: string; source: SourceRef }
  | { kind: "quarantine"; entry: QuarantineEntry };

/**
 * The JSON-object lines of a JSONL file, with their source (line, byte offset). A line that is
 * over the size limit, not JSON, or not an object comes out as a quarantine entry instead.
 * With `cut` (a reader of one-session logs, reading the whole file), a last line cut mid-write is
 * left out and noted there instead (cut-last-line.ts).
 */
export async function* jsonObjectLines(
  path: string,
  options: ReaderOptions,
  format: string,
  cut?: CutNote,
): AsyncGenerator<JsonObjectLine> {
  const lines = recordLines(path, options, format);
  for await (const line of cut ? withoutCutLastRecordLine(lines, cut) : lines) {
    if (line.kind === "quarantine") {
      yield line;
      continue;
    }
    const { source } = line;
    const parsed = parseJsonLine(line.text);
    if (!parsed.ok) yield lineQuarantine(source, line.text, { reason: parsed.reason });
    else if (!isRecord(parsed.value))
      yield lineQuarantine(source, line.text, { reason: `expected a JSON object, got ${describeType(parsed.value)}` });
    else yield { kind: "record", record: parsed.value, text: line.text, source };
  }
}

/** A read-stage quarantine entry for one line, with the line's start as the excerpt. */
export function lineQuarantine(
  source: SourceRef,
  text: string,
  entry: Omit<QuarantineEntry, "source" | "stage">,
): { kind: "quarantine"; entry: QuarantineEntry } {
  return { kind: "quarantine", entry: { source, stage: "read", ...entry, excerpt: excerpt(text) } };
}

/** `{"name": …, "arguments": {…}}` with keys in that order, compact: an action as a tool call. */
export function canonicalAction(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ name, arguments: args });
}

/** JSON text of a value; `fallback` when it nests too deep for JSON.stringify (a hostile record). */
export function jsonTextOr(value: unknown, fallback: string): string {
  try {
    return JSON.stringify(value) ?? fallback;
  } catch (err) {
    if (err instanceof RangeError) return fallback;
    throw err;
  }
}
