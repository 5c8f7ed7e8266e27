/*
 * Record lines made from values a reader assembled or decoded (a JSON array's elements, a pandas
 * frame's rows, a Parquet or Arrow table's rows): each written back as one compact JSON line, or
 * quarantined as a JSONL line over `input.max_line_bytes` is. Its own module, importing only types,
 * so json-array.ts, pandas-frame.ts and parquet-rows.ts share it without an import cycle.
 */
import type { LineSource, ReadItem } from "./reader.ts";

/** A record's JSON line, or the quarantine entry of a record that cannot be one. */
export type RecordLine = { kind: "line"; text: string; source: LineSource } | Extract<ReadItem, { kind: "quarantine" }>;

/** Compact JSON of a value, or undefined when it nests too deep for JSON.stringify. */
export function compact(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) ?? "null";
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}

/**
 * `text` as the record line at `source`; over `maxLineBytes`, the record's quarantine entry instead,
 * naming it as `what` ("row 3", "element 3", "the document").
 */
export function lineWithinLimit(source: LineSource, text: string, maxLineBytes: number, what: string): RecordLine {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxLineBytes) return { kind: "line", text, source };
  const reason = `${what} is ${bytes} bytes as one JSON line, over the ${maxLineBytes}-byte limit (input.max_line_bytes)`;
  return { kind: "quarantine", entry: { source, stage: "read", reason } };
}

/**
 * A parsed value as the record line at `source`, written back as compact JSON; a value that nests
 * too deep to write back, or is over `maxLineBytes` as JSON, is quarantined, named as `what`.
 */
export function valueLine(source: LineSource, value: unknown, maxLineBytes: number, what: string): RecordLine {
  const text = compact(value);
  if (text === undefined)
    return { kind: "quarantine", entry: { source, stage: "read", reason: `${what}: nests too deep to write back as one JSON line` } };
  return lineWithinLimit(source, text, maxLineBytes, what);
}
