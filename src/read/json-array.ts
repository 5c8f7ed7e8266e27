import { open } from "node:fs/promises";
import type { QuarantineEntry } from "../core/errors.ts";
import { openDecompressed } from "../io/open-input.ts";
import { isRemoteUri } from "../io/remote-uri.ts";
import { nestsTooDeep } from "./json-depth.ts";
import { parseSniffedJson } from "./json-line.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { frameColumnsOfText, frameColumnsRecordLines, INDEX_LABEL, mayBeFrameColumns, scanFrameColumns } from "./pandas-frame.ts";
import type { LineSource, ReaderOptions, ReadItem } from "./reader.ts";
import { compact, lineWithinLimit, type RecordLine, valueLine } from "./record-line.ts";

/**
 * JSON files that are not one record per line, for the readers that read one JSON object per line
 * (everything that goes through `recordLines` / `jsonObjectLines`):
 *
 * - a JSON array `[...]` (how Hub datasets are exported, often pretty-printed with indent=2): each
 *   element is one record, streamed element by element with stream-json (memory holds one element,
 *   never the file). Its source is the file and the element's 0-based index (`row`), like a line;
 *   `offset` is 0 (the whole array belongs to the task whose byte range starts the file: the planner
 *   does not cut such a file).
 * - a pretty-printed single JSON document (first line `{` alone, or a `{"key": …,` opening): one
 *   record, source line 1.
 * - text that holds no JSON line at all among its first lines: one quarantine entry for the file,
 *   naming the format and what the file looks like (a `--format X` on a log, Markdown, a cast
 *   file …) instead of one entry per line.
 *
 * `format: auto` uses the same layouts (src/read/registry.ts): a JSON array that no reader claims
 * as a whole document (chat-tool-rows, mini-swe-agent and OpenHands read their own arrays) is
 * detected by its elements: each element is offered to the readers' sniffs as a JSONL line.
 */

/**
 * Formats whose reader reads a JSON array element by element: those that read their records through
 * `recordLines` / `jsonObjectLines`, and those that read arrays of their own records themselves.
 * `format: auto` hands a JSON array to a reader by its elements only when the reader is listed
 * here; a reader of JSON lines added later belongs here once a test reads an array with it.
 */
export const ARRAY_ELEMENT_FORMATS: ReadonlySet<string> = new Set([
  "adp",
  "agentworldbench-jsonl",
  "android-control",
  "android-in-the-wild",
  "mind2web",
  "webarena",
  "os-a11y",
  "canonical-jsonl",
  "claude-code",
  "chat-tool-rows",
  "swe-smith",
  "openhands",
  // Arrays of OTLP exports, Zipkin span arrays, Jaeger's `{"data": [trace, …]}` (whole-file: its traces group all elements).
  "otel-traces",
  // Arrays of runs, Langfuse's `{"data": [observation, …]}` (whole-file: traces group all elements).
  "langsmith-runs",
  "langfuse-traces",
  "text-jsonl",
]);

/** How a JSON-record file holds its records. */
export type RecordLayout =
  | { kind: "lines" }
  | { kind: "array" }
  | { kind: "document" }
  /** One JSON document whose rows are the elements of one array under a container key (`{"data": [row, …]}`). */
  | ({ kind: "wrapped" } & WrappedRows)
  /** No JSON value among the first lines: `description` says what the file looks like. */
  | { kind: "text"; description: string };

/** The first bytes read to tell a layout (the same size format detection reads). */
export const LAYOUT_HEAD_BYTES = 64 << 10;
/** Non-empty lines looked at before a file is called text (as many as detection probes). */
const LAYOUT_PROBE_LINES = 8;

/** Does this line hold one whole JSON value? */
export function isJsonValueLine(text: string): boolean {
  const trimmed = text.trim();
  return /^[[{]/.test(trimmed) && parseSniffedJson(trimmed).ok;
}

/** The non-empty lines of a head, at most `max`; `cut` tells whether the last one may continue past the head. */
function headLines(head: string, max: number): { lines: string[]; lastCut: boolean } {
  const lines: string[] = [];
  let start = 0;
  let lastCut = false;
  while (start < head.length && lines.length < max) {
    const end = head.indexOf("\n", start);
    const text = head.slice(start, end === -1 ? head.length : end);
    if (text.trim() !== "") {
      lines.push(text);
      lastCut = end === -1;
    }
    if (end === -1) break;
    start = end + 1;
  }
  return { lines, lastCut };
}

/** Tells the layout from the start of the decompressed content. */
export function layoutOfHead(rawHead: string): RecordLayout {
  const head = rawHead.replace(/^\uFEFF/, "");
  const start = head.trimStart();
  if (start === "") return { kind: "lines" };
  const { lines, lastCut } = headLines(start, LAYOUT_PROBE_LINES);
  const first = lines[0] as string;
  if (start.startsWith("[")) {
    // JSONL whose lines are arrays: a whole first line and more lines after it.
    if (lines.length > 1 && isJsonValueLine(first)) return { kind: "lines" };
    // An array of records holds objects (`[` then `{`, or `]`), compact or pretty-printed. A first
    // line of nested arrays running past the head is a (hostile) JSONL line, not an array of records.
    if (!/^\[\s*[{\]]/.test(start) && lines.length === 1 && lastCut) return { kind: "lines" };
    return { kind: "array" };
  }
  if (start.startsWith("{")) {
    const opening = first.trim();
    const longFirst = lines.length === 1 && lastCut;
    if (opening === "{" || (!longFirst && !isJsonValueLine(first) && /^\{\s*"(?:[^"\\]|\\.)*"\s*:.*[,{[]$/.test(opening)))
      return { kind: "document" };
    return { kind: "lines" };
  }
  // A stray first line before JSON lines (a log banner) is a bad line, not a file of another kind.
  if (lines.some(isJsonValueLine) || (lines.length === 1 && lastCut && /^\s*[[{]/.test(first))) return { kind: "lines" };
  return { kind: "text", description: describeText(start, lines) };
}

function describeText(head: string, lines: readonly string[]): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: binary content is told by its control bytes.
  if ((head.slice(0, 4096).match(/[\u0000-\u0008\u000e-\u001a\u001c-\u001f\ufffd]/g) ?? []).length > 8)
    return "binary data (control bytes or invalid UTF-8 in its first 4 KiB)";
  const first = (lines[0] ?? "").trim();
  return `text with no JSON value among its first ${lines.length} non-empty line(s), starting ${JSON.stringify(first.slice(0, 60))}`;
}

/** The first `bytes` of a file's decompressed content, as text (a damaged file: what could be read). */
export async function readHead(path: string, bytes = LAYOUT_HEAD_BYTES): Promise<string> {
  if (!isRemoteUri(path)) {
    const plain = await plainLocalHead(path, bytes);
    if (plain !== undefined) return plain;
  }
  const { stream } = await openDecompressed(path);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= bytes) break;
    }
  } catch {
    // A damaged file still gets its readable start looked at; reading it reports the damage.
  } finally {
    stream.destroy();
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks).subarray(0, bytes));
}

/**
 * The head of an uncompressed local file, read with one buffer sized to the file (at most `bytes`):
 * format detection reads thousands of small files, and a 1 MiB stream buffer per file was most of
 * the cost of planning them (allocation and garbage collection). `undefined` for a gzip or zstd
 * file, read through the decompressing stream. The same text the stream gives: the first `bytes`
 * bytes (what could be read of a damaged file), decoded as UTF-8.
 */
async function plainLocalHead(path: string, bytes: number): Promise<string | undefined> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    // A file that reports no size (a FIFO, a /proc file) or grows while read still gets `bytes`.
    const buffer = Buffer.allocUnsafe(size > 0 ? Math.min(size, bytes) : Math.min(bytes, 1 << 16));
    let total = (await handle.read(buffer, 0, buffer.length, 0)).bytesRead;
    if (isCompressedStart(buffer.subarray(0, total))) return undefined;
    let head = buffer;
    try {
      while (total < bytes) {
        if (total === head.length) {
          const grown = Buffer.allocUnsafe(Math.min(bytes, Math.max(head.length * 2, 1 << 12)));
          head.copy(grown, 0, 0, total);
          head = grown;
        }
        const { bytesRead } = await handle.read(head, total, head.length - total, total);
        if (bytesRead === 0) break;
        total += bytesRead;
      }
    } catch {
      // A damaged file still gets its readable start looked at; reading it reports the damage.
    }
    return new TextDecoder("utf-8", { fatal: false }).decode(head.subarray(0, total));
  } finally {
    await handle.close();
  }
}

/** Starts with the gzip or zstd magic (as `detectCompression` tells them). */
function isCompressedStart(view: Uint8Array): boolean {
  if (view.length >= 2 && view[0] === 0x1f && view[1] === 0x8b) return true;
  return view.length >= 4 && view[0] === 0x28 && view[1] === 0xb5 && view[2] === 0x2f && view[3] === 0xfd;
}

/** The layout of a file (reads its first 64 KiB; more for rows wrapped in a document whose first row is longer). */
export async function recordLayout(path: string): Promise<RecordLayout> {
  const head = await readHead(path);
  const layout = layoutOfHead(head);
  if (layout.kind === "document" || layout.kind === "lines") {
    const wrapped = await wrappedLayout(head, path);
    if (wrapped) return { kind: "wrapped", ...wrapped };
  }
  return layout;
}

/**
 * The three ways a reader that assembles records itself takes a JSON file: lines (also a file
 * with no JSON at all, which its line reading quarantines once, and rows wrapped in one document,
 * which `recordLines` streams as lines), an array, one document.
 */
export async function jsonFileLayout(path: string): Promise<"jsonl" | "array" | "document"> {
  const layout = await recordLayout(path);
  return layout.kind === "array" || layout.kind === "document" ? layout.kind : "jsonl";
}

// ---------------------------------------------------------------------------------------------
// Elements in a head (detection)

export interface HeadElements {
  /** The elements whose text ends inside the head, parsed. */
  elements: unknown[];
  /** True when the array's closing `]` is inside the head: `elements` is all of it. */
  closed: boolean;
}

/**
 * The elements of a JSON array that lie whole inside a head (a scan for element boundaries that
 * tracks strings and nesting; each element is then parsed on its own). Stops at the first element
 * that does not parse.
 */
export function arrayElementsInHead(rawHead: string, max = 64): HeadElements {
  const head = rawHead.replace(/^\uFEFF/, "");
  const open = head.indexOf("[");
  const elements: unknown[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let elementStart = open + 1;
  for (let i = open + 1; i < head.length; i++) {
    const c = head.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) {
        // The array's own `]`.
        const last = head.slice(elementStart, i).trim();
        if (last !== "" && !pushParsed(elements, last)) return { elements, closed: false };
        return { elements, closed: true };
      }
      depth--;
    } else if (c === 0x2c && depth === 0) {
      if (!pushParsed(elements, head.slice(elementStart, i).trim())) return { elements, closed: false };
      if (elements.length >= max) return { elements, closed: false };
      elementStart = i + 1;
    }
  }
  return { elements, closed: false };
}

function pushParsed(into: unknown[], text: string): boolean {
  try {
    into.push(JSON.parse(text));
    return true;
  } catch {
    return false;
  }
}

/**
 * The first elements of a JSON array file, streamed with stream-json: for a first element longer
 * than the 64 KiB head. Stops once `bytes` of compact JSON are held (always after at least one
 * element) or after `max` elements; returns what it has when the array breaks.
 */
export async function firstArrayElements(path: string, max = 8, bytes = LAYOUT_HEAD_BYTES): Promise<unknown[]> {
  const { stream } = await openDecompressed(path);
  const elements: unknown[] = [];
  let held = 0;
  try {
    for await (const { value } of selectJson(stream, isElement)) {
      elements.push(value);
      held += JSON.stringify(value)?.length ?? 0;
      if (elements.length >= max || held >= bytes) break;
    }
  } catch {
    // A broken array still shows the elements before the break.
  }
  return elements;
}

/** The elements as a JSONL head: one compact element per line, as a line reader's sniff expects. */
export function elementsAsLines(elements: readonly unknown[]): string {
  const lines: string[] = [];
  let total = 0;
  for (const element of elements) {
    // Written back as a line for the sniffs: one nested too deep to write (JSON.stringify recurses)
    // votes for nothing; the reader chosen by the others quarantines it when it reads it.
    if (nestsTooDeep(element)) continue;
    const text = JSON.stringify(element) ?? "null";
    lines.push(text);
    total += text.length + 1;
    if (total >= LAYOUT_HEAD_BYTES) break;
  }
  return `${lines.join("\n")}\n`.slice(0, LAYOUT_HEAD_BYTES);
}

/** Characters of a string, and elements of an array, that sniffSample keeps. */
const SAMPLE_STRING = 2048;
const SAMPLE_ITEMS = 8;

/**
 * A document as a JSONL head of one line, for the sniffs: compact, or, when that is longer than a
 * head, its shape (sniffSample), so the sniffs see every key instead of a line cut before the last.
 */
export function documentAsLine(document: object): string {
  const text = JSON.stringify(document);
  return `${text.length < LAYOUT_HEAD_BYTES ? text : JSON.stringify(sniffSample(document))}\n`;
}

/** A value's shape: every key, each string's start, each array's first elements (nested likewise). */
function sniffSample(value: unknown): unknown {
  if (typeof value === "string") return value.length > SAMPLE_STRING ? value.slice(0, SAMPLE_STRING) : value;
  if (Array.isArray(value)) return value.slice(0, SAMPLE_ITEMS).map(sniffSample);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, element]) => [key, sniffSample(element)]));
  return value;
}

/** What a JSON array is, for a refusal: "a JSON array of 5 objects whose keys are a, b, c". */
export function describeArray(found: HeadElements): string {
  const { elements, closed } = found;
  if (elements.length === 0) return closed ? "an empty JSON array" : "a JSON array whose first element does not fit in its first 64 KiB";
  const kinds = new Set(elements.map(kindOf));
  const kind = kinds.size === 1 ? [...kinds][0] : "value";
  const count = closed ? `${elements.length}` : `more than 64 KiB of elements; the first ${elements.length} are`;
  const many = elements.length === 1 && closed ? kind : `${kind}s`;
  let text = closed ? `a JSON array of ${count} ${many}` : `a JSON array (${count} ${many})`;
  if (kind === "object") {
    const keys = new Set<string>();
    for (const element of elements) for (const key of Object.keys(element as object)) keys.add(key);
    const list = [...keys];
    text += ` whose keys are ${list.slice(0, 12).join(", ")}${list.length > 12 ? ", …" : ""}`;
  }
  return text;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : typeof value;
}

/** What a pretty-printed document is, for a refusal: its top-level keys as far as the head shows them. */
export function describeDocument(rawHead: string): string {
  const head = rawHead.replace(/^\uFEFF/, "").trimStart();
  try {
    const value: unknown = JSON.parse(head);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const keys = Object.keys(value);
      return `a pretty-printed JSON object with keys ${keys.slice(0, 12).join(", ")}${keys.length > 12 ? ", …" : ""}`;
    }
  } catch {
    // Longer than the head (or broken): the keys seen so far.
  }
  const keys: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let stringStart = 0;
  for (let i = 0; i < head.length && keys.length < 12; i++) {
    const c = head[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') {
        inString = false;
        if (depth === 1 && /^\s*:/.test(head.slice(i + 1, i + 16))) keys.push(head.slice(stringStart + 1, i));
      }
      continue;
    }
    if (c === '"') {
      inString = true;
      stringStart = i;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  return `a pretty-printed JSON document${keys.length > 0 ? ` (an object; keys in its first 64 KiB: ${keys.join(", ")})` : ""}`;
}

// ---------------------------------------------------------------------------------------------
// Reading (recordLines)

function isElement(at: JsonPath, _kind: JsonKind): boolean {
  return at.length === 1 && typeof at[0] === "number";
}

function quarantine(source: LineSource | { uri: string; format: string }, reason: string): Extract<ReadItem, { kind: "quarantine" }> {
  const entry: QuarantineEntry = { source, stage: "read", reason };
  return { kind: "quarantine", entry };
}

/**
 * The elements of a JSON array file as record lines: each element written back as compact JSON
 * (the line a JSONL file would hold), its source the element's index. An element over
 * `input.max_line_bytes` (as compact JSON) is quarantined like an over-long line; a break in the
 * array keeps the elements before it and quarantines the rest once.
 */
export async function* arrayRecordLines(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordLine> {
  const { stream } = await openDecompressed(path);
  let count = 0;
  try {
    for await (const { path: at, value } of selectJson(stream, isElement)) {
      const row = at[0] as number;
      count = row + 1;
      yield valueLine({ uri: path, row, offset: 0, format }, value, options.maxLineBytes, `element ${row}`);
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const where = count === 0 ? "before its first element" : `after element ${count - 1}`;
    yield quarantine({ uri: path, row: count, offset: 0, format }, `the JSON array breaks ${where}: ${err.message}`);
  }
}

/**
 * A pretty-printed single JSON document as one record line (source line 1). A document that does
 * not parse is one quarantine entry; so is one over `input.max_line_bytes` as compact JSON.
 */
export async function* documentRecordLine(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordLine> {
  const { stream } = await openDecompressed(path);
  const source: LineSource = { uri: path, line: 1, offset: 0, format };
  let value: unknown;
  try {
    for await (const selected of selectJson(stream, (at) => at.length === 0)) value = selected.value;
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    yield quarantine(source, `the file starts as a pretty-printed JSON document but is not one: ${err.message}`);
    return;
  }
  const text = compact(value);
  if (text === undefined) {
    yield quarantine(source, "the document nests too deep to write back as one JSON line");
    return;
  }
  yield lineWithinLimit(source, text, options.maxLineBytes, "the document");
}

/** The one quarantine entry of a file that holds no JSON lines, for a reader of JSON lines. */
export function notRecordsItem(path: string, format: string, description: string): Extract<ReadItem, { kind: "quarantine" }> {
  return quarantine(
    { uri: path, line: 1, offset: 0, format },
    `format ${format} reads one JSON object per line (or a JSON array of them, or one pretty-printed JSON document), ` +
      `but this file is ${description}: quarantined whole, as one entry (is --format / inputs[].format right?)`,
  );
}

// ---------------------------------------------------------------------------------------------
// Rows wrapped in one document: `{"version": …, "data": [row, row, …]}`

/** The keys a JSON document holds its rows under (pandas `orient="table"`, the Hub's datasets-server `/rows`, exporters). */
export const ROW_CONTAINER_KEYS: readonly string[] = ["data", "rows", "records", "examples", "instances", "items"];

/**
 * A JSON document (an object) whose records are the elements of one array of objects under a
 * container key (ROW_CONTAINER_KEYS); its other members (version, schema, features, counts) are
 * metadata. `unwrap`: each element's `row` is the record (the Hub's datasets-server `/rows` and
 * `/first-rows`: `{"row_idx", "row", "truncated_cells"}`); `drop`: a member every element carries
 * that is not the row's own (pandas `orient="table"` adds its index as `"index"`); `columns`: each
 * element is an array of values, zipped with these names (pandas `orient="split"`:
 * `{"columns": [...], "index": [...], "data": [[...], ...]}`).
 */
export interface WrappedRows {
  /** The container key; "" for a pandas frame by `orient` (the rows are the document's own members). */
  key: string;
  unwrap?: "row";
  drop?: string;
  columns?: string[];
  /**
   * pandas `DataFrame.to_json(orient="index")` (`{"0": {row}, "1": {row}}`: each member is a row,
   * keyed by its index label) or `orient="columns"` (`{"col": {"0": cell, "1": cell}, …}`: each
   * member is a column of cells keyed by index label; src/read/pandas-frame.ts).
   */
  orient?: "index" | "columns";
}

/** What a head shows of a wrapped-rows document: the shape, its elements (as records) and the document's other members. */
export interface WrappedRowsHead extends WrappedRows {
  /** The container's elements that lie whole in the head, unwrapped as records. */
  elements: HeadElements;
  /** The document as the head shows it, as one JSON line for the sniffs (the container holding its first elements). */
  documentLine: string;
  /** The same with the container empty: the document's own members only. */
  bareLine: string;
}

interface HeadMember {
  key: string;
  /** Index in the head where the value starts. */
  start: number;
  /** Index just past the value, when it ends inside the head. */
  end?: number;
}

/**
 * The top-level members of a JSON object at the start of a head (a scan that tracks strings and
 * nesting). `undefined` unless the head starts with `{` and holds nothing but that one value.
 */
function documentMembers(head: string): HeadMember[] | undefined {
  const members: HeadMember[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let stringStart = 0;
  let pendingKey: string | undefined;
  let current: HeadMember | undefined;
  for (let i = 0; i < head.length; i++) {
    const c = head.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) {
        inString = false;
        if (depth === 1 && current === undefined && pendingKey === undefined) {
          try {
            pendingKey = JSON.parse(head.slice(stringStart, i + 1)) as string;
          } catch {
            return undefined;
          }
        } else if (depth === 1 && current && current.end === undefined && current.start === stringStart) current.end = i + 1;
      }
      continue;
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (depth === 0) {
      // Only one value: the document's `{` first, nothing after its `}`.
      if (c !== 0x7b || i !== 0) return undefined;
      depth = 1;
      continue;
    }
    if (depth === 1 && c === 0x3a) {
      if (pendingKey === undefined) return undefined;
      current = { key: pendingKey, start: -1 };
      members.push(current);
      pendingKey = undefined;
      continue;
    }
    if (depth === 1 && current && current.start === -1) current.start = i;
    if (c === 0x22) {
      inString = true;
      stringStart = i;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) {
        if (current && current.end === undefined && current.start >= 0 && head[current.start] !== "{" && head[current.start] !== "[")
          current.end = i;
        if (head.slice(i + 1).trim() !== "") return undefined;
        return members;
      }
      if (depth === 1 && current && current.end === undefined) current.end = i + 1;
    } else if (depth === 1 && c === 0x2c) {
      // A scalar value ends at the comma.
      if (current && current.end === undefined && current.start >= 0) current.end = i;
      current = undefined;
    }
  }
  return members;
}

/** Parses a member's value from the head (undefined when cut by the head or not JSON). */
function memberValue(head: string, member: HeadMember | undefined): unknown {
  if (!member || member.end === undefined || member.start < 0) return undefined;
  try {
    return JSON.parse(head.slice(member.start, member.end));
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The shape of a wrapped-rows document, as far as a head shows it: a JSON object (compact on one
 * line or pretty-printed) with exactly one container key (ROW_CONTAINER_KEYS) whose value is an
 * array of objects, at least one of them whole in the head. Structure only: whether the document
 * is rows or one record of some format is the sniffs' call (src/read/registry.ts `wrappedRowsOf`).
 */
export function wrappedRowsInHead(rawHead: string): WrappedRowsHead | undefined {
  const head = rawHead.replace(/^\uFEFF/, "").trim();
  if (!head.startsWith("{")) return undefined;
  const members = documentMembers(head);
  if (!members) return undefined;
  const containers = members.filter((member) => ROW_CONTAINER_KEYS.includes(member.key) && head[member.start] === "[");
  if (containers.length !== 1) return frameRowsInHead(head, members);
  const container = containers[0] as HeadMember;
  const raw = arrayElementsInHead(head.slice(container.start));
  if (raw.elements.length === 0) return undefined;
  const shape: WrappedRows = { key: container.key };
  // pandas `to_json(orient="split")`: the rows are arrays of values, named by `columns`.
  const columns = memberValue(
    head,
    members.find((member) => member.key === "columns"),
  );
  if (
    container.key === "data" &&
    Array.isArray(columns) &&
    columns.length > 0 &&
    columns.every((name) => typeof name === "string") &&
    raw.elements.every((row) => Array.isArray(row) && row.length === columns.length)
  )
    shape.columns = columns as string[];
  else if (!raw.elements.every(isObject)) return undefined;
  const rows = shape.columns ? [] : (raw.elements as Record<string, unknown>[]);
  // The Hub's datasets-server `/rows`, `/first-rows`: {"row_idx": N, "row": {…}, "truncated_cells": […]}.
  if (container.key === "rows" && rows.length > 0 && rows.every((row) => typeof row.row_idx === "number" && isObject(row.row)))
    shape.unwrap = "row";
  // pandas `to_json(orient="table")`: {"schema": {"fields", "primaryKey": ["index"], "pandas_version"}, "data": [{"index": i, …}]}.
  const schema = memberValue(
    head,
    members.find((member) => member.key === "schema"),
  );
  if (
    container.key === "data" &&
    isObject(schema) &&
    "pandas_version" in schema &&
    JSON.stringify(schema.primaryKey) === '["index"]' &&
    rows.length > 0 &&
    rows.every((row) => "index" in row)
  )
    shape.drop = "index";
  const elements: HeadElements = { elements: raw.elements.map((row) => wrappedRecord(row, shape)), closed: raw.closed };
  // The document for the sniffs: its members the head holds whole, the container with its first elements.
  const document: Record<string, unknown> = {};
  for (const member of members) {
    if (member === container) document[member.key] = raw.elements;
    else {
      const value = memberValue(head, member);
      if (value !== undefined) document[member.key] = value;
    }
  }
  if (nestsTooDeep(document)) return undefined;
  const documentLine = documentAsLine(document);
  const bareLine = documentAsLine({ ...document, [container.key]: [] });
  return { ...shape, elements, documentLine, bareLine };
}

/**
 * pandas `to_json(orient="index")` — every member (as far as the head shows) keyed by an integer
 * index label and holding an object, the rows whole in the head all with the same columns — or
 * `orient="columns"` held whole by the head (a bigger one is scanned from the file:
 * `extendedRowsShape`). Structure only, like the container case: the sniffs decide.
 */
function frameRowsInHead(head: string, members: HeadMember[]): WrappedRowsHead | undefined {
  if (members.length === 0 || !members.every((member) => INDEX_LABEL.test(member.key) && (member.start < 0 || head[member.start] === "{")))
    return frameColumnsInHead(head);
  const rows: Record<string, unknown>[] = [];
  for (const member of members.slice(0, 64)) {
    const value = memberValue(head, member);
    if (!isObject(value)) break;
    rows.push(value);
  }
  const [first] = rows;
  if (!first || Object.keys(first).length === 0) return undefined;
  // pandas writes every row with the frame's columns.
  const columns = JSON.stringify(Object.keys(first));
  if (!rows.every((row) => JSON.stringify(Object.keys(row)) === columns)) return undefined;
  return frameShape(
    "index",
    rows,
    Object.fromEntries(rows.map((row, i) => [(members[i] as HeadMember).key, row])),
    rows.length === members.length && head.trimEnd().endsWith("}"),
  );
}

function frameColumnsInHead(head: string): WrappedRowsHead | undefined {
  const probe = frameColumnsOfText(head);
  return probe ? frameShape("columns", probe.rows, probe.document, true) : undefined;
}

function frameShape(
  orient: "index" | "columns",
  rows: Record<string, unknown>[],
  document: Record<string, unknown>,
  closed: boolean,
): WrappedRowsHead | undefined {
  if (rows.length === 0 || nestsTooDeep(document)) return undefined;
  return { key: "", orient, elements: { elements: rows, closed }, documentLine: documentAsLine(document), bareLine: "{}\n" };
}

/** Text read at most to find the first row of a wrapped-rows document longer than the head (as a long single document is read). */
export const WRAPPED_DETECT_BYTES = 16 << 20;

/**
 * The rows' shape of a JSON document the 64 KiB head does not show: a container (or a pandas
 * `orient="index"` frame) whose first row runs past the head — looked for again in the first
 * WRAPPED_DETECT_BYTES — or a pandas `orient="columns"` frame, whose rows are spread over the whole
 * file (streamed: src/read/pandas-frame.ts). Undefined when the head alone tells (or rules out) the
 * shape. Bounded: never more than WRAPPED_DETECT_BYTES of the file held at once.
 */
export async function extendedRowsShape(rawHead: string, path: string): Promise<WrappedRowsHead | undefined> {
  const head = rawHead.replace(/^\uFEFF/, "").trim();
  if (!head.startsWith("{") || wrappedRowsInHead(head) !== undefined) return undefined;
  const members = documentMembers(head);
  if (!members || members.length === 0) return undefined;
  const last = members[members.length - 1] as HeadMember;
  // A document the head holds whole was judged by the head.
  if (last.end !== undefined || Buffer.byteLength(rawHead) < LAYOUT_HEAD_BYTES) return undefined;
  const containers = members.filter((member) => ROW_CONTAINER_KEYS.includes(member.key) && head[member.start] === "[");
  const byIndex = members.every((member) => INDEX_LABEL.test(member.key)) && (last.start < 0 || head[last.start] === "{");
  // Its first row cut by the head: the same test on a longer head.
  if ((containers.length === 1 && containers[0] === last) || (byIndex && members.length === 1)) {
    const shape = wrappedRowsInHead(await readHead(path, WRAPPED_DETECT_BYTES));
    if (shape) return shape;
  }
  if (mayBeFrameColumns(head)) {
    const probe = await scanFrameColumns(path);
    if (probe) return frameShape("columns", probe.rows, probe.document, false);
  }
  return undefined;
}

/** What a wrapped-rows document is, for a refusal or a note: `a JSON document whose "data" member is …`. */
export function describeRows(shape: WrappedRowsHead): string {
  if (shape.orient === undefined) return `a JSON document whose "${shape.key}" member is ${describeArray(shape.elements)}`;
  const rows = shape.elements.elements;
  const columns = Object.keys((rows[0] ?? {}) as object);
  const list = `${columns.slice(0, 12).join(", ")}${columns.length > 12 ? ", …" : ""}`;
  return `a pandas DataFrame.to_json(orient="${shape.orient}") document (a frame whose first ${rows.length} row(s) have the columns ${list})`;
}

/** How to write a wrapped-rows document's rows as JSONL, for a refusal. */
export function rowsAsJsonlHint(shape: WrappedRows): string {
  if (shape.orient === "index") return "jq -c '.[]'";
  if (shape.orient === "columns") return `pandas.read_json(FILE, orient="columns").to_json(OUT, orient="records", lines=True)`;
  return `jq -c '.${shape.key}[]'`;
}

/**
 * A refusal note for pandas `to_json(orient="values")` (`[[cell, …], …]`, every element an array of
 * the same length): the column names were dropped, so no reader can tell a row's fields.
 */
export function pandasValuesNote(found: HeadElements): string | undefined {
  const { elements } = found;
  const [first] = elements;
  if (!Array.isArray(first) || first.length === 0 || !elements.every((row) => Array.isArray(row) && row.length === first.length))
    return undefined;
  return (
    ` (every element is an array of ${first.length} value(s): this looks like pandas DataFrame.to_json(orient="values"), which leaves out the column names, ` +
    `so no reader can tell what a row holds; write the frame with orient="records", lines=True (JSONL), or orient="split" / "table" / "index" / "columns", which keep them)`
  );
}

/** A container's element as its record: unwrapped (`row`), less the exporter's own member (`drop`), or its values named (`columns`). */
function wrappedRecord(element: unknown, shape: WrappedRows): unknown {
  const { columns } = shape;
  if (columns && Array.isArray(element) && element.length === columns.length)
    return Object.fromEntries(columns.map((name, i) => [name, element[i]]));
  if (!isObject(element)) return element;
  if (shape.unwrap === "row" && isObject(element.row)) return element.row;
  if (shape.drop !== undefined && shape.drop in element) {
    const { [shape.drop]: _dropped, ...rest } = element;
    return rest;
  }
  return element;
}

/**
 * The records of a wrapped-rows document as record lines, streamed with stream-json (only the
 * container's elements are assembled, one at a time; the other members are skipped token by
 * token): each element (unwrapped) written back as compact JSON, its source the element's index
 * (`file#row=N`). An element over `input.max_line_bytes` is quarantined like an over-long line; a
 * break in the document keeps the elements before it and quarantines the rest once.
 */
export async function* wrappedRecordLines(
  path: string,
  options: ReaderOptions,
  format: string,
  shape: WrappedRows,
): AsyncGenerator<RecordLine> {
  if (shape.orient === "columns") return yield* frameColumnsRecordLines(path, options, format);
  if (shape.orient === "index") return yield* frameIndexRecordLines(path, options, format);
  const { stream } = await openDecompressed(path);
  const { key } = shape;
  let count = 0;
  try {
    for await (const { path: at, value } of selectJson(stream, (at) => at.length === 2 && at[0] === key && typeof at[1] === "number")) {
      const row = at[1] as number;
      count = row + 1;
      yield valueLine({ uri: path, row, offset: 0, format }, wrappedRecord(value, shape), options.maxLineBytes, `"${key}" element ${row}`);
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const where = count === 0 ? `before the first element of its "${key}" array` : `after element ${count - 1} of its "${key}" array`;
    yield quarantine({ uri: path, row: count, offset: 0, format }, `the JSON document breaks ${where}: ${err.message}`);
  }
}

/**
 * The rows of a pandas `orient="index"` document (`{"0": {row}, "1": {row}}`) as record lines,
 * streamed (one row assembled at a time), in the order the file gives them (pandas writes its
 * index order; JSON.parse would put integer keys in numeric order instead); the source is the row's
 * 0-based position (`file#row=N`). Over-long rows and a break are quarantined as for a JSON array.
 */
async function* frameIndexRecordLines(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordLine> {
  const { stream } = await openDecompressed(path);
  let count = 0;
  try {
    for await (const { path: at, value } of selectJson(stream, (at) => at.length === 1)) {
      const row = count++;
      const label = JSON.stringify(at[0]);
      yield valueLine({ uri: path, row, offset: 0, format }, value, options.maxLineBytes, `row ${row} (index label ${label})`);
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const where = count === 0 ? "before its first row" : `after row ${count - 1}`;
    yield quarantine({ uri: path, row: count, offset: 0, format }, `the pandas orient="index" document breaks ${where}: ${err.message}`);
  }
}

/**
 * The wrapped-rows layout of a file whose head is one JSON object, when the sniffs read it as rows
 * (src/read/registry.ts `wrappedRowsOf`, loaded only for a head of that shape: the registry imports
 * the readers, which import this module).
 */
async function wrappedLayout(head: string, path: string): Promise<WrappedRows | undefined> {
  const shape = wrappedRowsInHead(head) ?? (await extendedRowsShape(head, path));
  if (shape === undefined) return undefined;
  const { wrappedRowsOf } = await import("./registry.ts");
  const found = wrappedRowsOf(head, path, shape);
  if (!found) return undefined;
  const { key, unwrap, drop, columns, orient } = found.shape;
  return {
    key,
    ...(unwrap ? { unwrap } : {}),
    ...(drop !== undefined ? { drop } : {}),
    ...(columns ? { columns } : {}),
    ...(orient ? { orient } : {}),
  };
}
