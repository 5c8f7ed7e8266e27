import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import {
  excerpt,
  firstLine,
  parseJsonLine,
  parseSniffedJson,
  type Reader,
  type ReaderOptions,
  type ReadItem,
  recordLines,
} from "./reader.ts";
import { contentId, describeType, isRecord, topLevelIdSource } from "./record-helpers.ts";

const FORMAT = "text-jsonl";

/** Keys named in a quarantine reason at most: enough to recognize the layout, short enough to read. */
const SHOWN_KEYS = 12;

/**
 * Top-level keys of the trajectory formats' records. A line with any of them is not claimed as
 * a plain document: text-jsonl is tried last and must never take a trajectory file whose own
 * sniff missed it (a damaged first line, an unusual layout).
 */
const TRAJECTORY_KEYS = new Set([
  "turns",
  "messages",
  "trajectory",
  "history",
  "steps",
  "events",
  "conversations",
  "observation",
  "action",
  "info",
  "instance_id",
  "episode",
  "domain",
  // agentworldbench-jsonl, mcp-jsonrpc, terminal-bench, mini-swe-agent records.
  "prompt",
  "response",
  "turn_idx",
  "jsonrpc",
  "trial_name",
  "trajectory_format",
  // chat-tool-rows (tau-bench's `traj`, OpenAI `tools`).
  "traj",
  "tools",
]);

/**
 * The `type`s of event lines in line-per-event trajectory formats: a search-api trace's `extract`
 * (a page's `text`) and a tmux-log's `capture` (the screen's `text`) look like documents, but
 * only the format's first line tells it, and detection votes over later lines too.
 */
const EVENT_TYPES = new Set(["search", "extract", "task", "header", "capture", "keys"]);

/** Any of those keys followed by a colon: a trajectory record's field, for heads too long to parse. */
const TRAJECTORY_KEY_PATTERN = new RegExp(`"(${[...TRAJECTORY_KEYS].join("|")})"\\s*:`);

/**
 * Plain text documents, one JSON object per line with a string `text` field: the JSONL layout of
 * FineWeb, Dolma and RedPajama dumps. Every other field is ignored. The id is the `id` field when
 * it is a non-blank string or a number (its decimal digits as written), else `text-` + the first
 * 16 hex digits of the text's sha256, so the same text always gets the same id. An empty text is
 * passed on: normalization quarantines it, like any other record's empty content.
 */
export const textJsonlReader: Reader = {
  name: FORMAT,
  domain: "text",
  description: "one plain text document per line: a JSON object with a string `text` (FineWeb/Dolma/RedPajama JSONL); `id` optional",
  splittable: true,

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, ""));
    const parsed = parseSniffedJson(line);
    if (parsed.ok) return isRecord(parsed.value) && isDocumentRecord(parsed.value);
    // A first document longer than the head: `text` (after an `id` at most) leads the record, and
    // no trajectory key appears anywhere in the head.
    return (
      !head.includes("\n") &&
      /^\s*\{\s*("id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*,\s*)?"text"\s*:\s*"/.test(line) &&
      !TRAJECTORY_KEY_PATTERN.test(head)
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    for await (const line of recordLines(path, options, FORMAT)) {
      if (line.kind === "quarantine") yield line;
      // A byte-order mark can only start the file; JSON.parse refuses it.
      else yield lineItem(line.source.offset === 0 ? line.text.replace(/^\uFEFF/, "") : line.text, line.source);
    }
  },
};

/** A string `text`, and nothing that a trajectory format's record has. */
function isDocumentRecord(record: Record<string, unknown>): boolean {
  if (typeof record.text !== "string" || Object.keys(record).some((key) => TRAJECTORY_KEYS.has(key))) return false;
  return !(typeof record.type === "string" && EVENT_TYPES.has(record.type));
}

/** One line's document, or why it is none. */
function lineItem(text: string, source: SourceRef): ReadItem {
  const quarantine = (entry: Omit<QuarantineEntry, "source" | "stage" | "excerpt">): ReadItem => ({
    kind: "quarantine",
    entry: { source, stage: "read", ...entry, excerpt: excerpt(text) },
  });
  const parsed = parseJsonLine(text);
  if (!parsed.ok) return quarantine({ reason: parsed.reason });
  const record = parsed.value;
  if (!isRecord(record)) return quarantine({ reason: `expected a JSON object with a "text" field, got ${describeType(record)}` });
  const id = documentId(record.id, text);
  const named = "id" in id ? { id: id.id } : {};
  if (!("text" in record)) return quarantine({ ...named, field: "text", reason: `no "text" field; ${describeKeys(Object.keys(record))}` });
  if (typeof record.text !== "string")
    return quarantine({ ...named, field: "text", reason: `text is ${describeType(record.text)}, not a string` });
  if ("error" in id) return quarantine({ field: "id", reason: id.error });
  return { kind: "document", document: { id: id.id ?? contentId("text", record.text), text: record.text, source } };
}

/** The record's own id (undefined when it names none), or why its `id` cannot be one. */
function documentId(value: unknown, line: string): { id?: string } | { error: string } {
  if (value === undefined || value === null) return {};
  if (typeof value === "string") return value.trim() === "" ? {} : { id: value };
  if (typeof value === "number") return { id: numberText(value, line) };
  return { error: `id is ${describeType(value)}, not a string or a number` };
}

/**
 * A numeric id as written. JSON.parse rounds integers past 2^53 (19-digit ids are common) to the
 * nearest double, so for those the digits are taken from the line itself (JSON.parse's reviver
 * sees each value's source text).
 */
function numberText(value: number, line: string): string {
  if (Number.isSafeInteger(value)) return String(value);
  return topLevelIdSource(line) || String(value);
}

/** "the object has keys a, b, c" (the first SHOWN_KEYS), or that it has none. */
function describeKeys(keys: readonly string[]): string {
  if (keys.length === 0) return "the object is empty";
  const shown = keys.slice(0, SHOWN_KEYS).map((key) => (key.length > 40 ? `${key.slice(0, 40)}…` : key));
  return `the object has keys ${shown.join(", ")}${keys.length > SHOWN_KEYS ? `, … (${keys.length} in all)` : ""}`;
}
