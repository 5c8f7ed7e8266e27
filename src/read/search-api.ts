import { createHash, type Hash } from "node:crypto";
import { basename } from "node:path";
import { streamArray } from "stream-json/streamers/stream-array.js";
import type { Domain, SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readLines } from "../io/read-lines.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { canonicalJson } from "../normalize/json-canonical.ts";
import { excerpt, firstLine, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

/**
 * Web-search environments. Two kinds of input:
 *
 * 1. Search-API responses, Brave style: `{"type": "search" | "news" | …, "query": {"original": …},
 *    "web": {"results": [{title, url, description, …}]}, …}`. One response = one one-turn
 *    trajectory: action = the call that produced it, `{"name": "web_search", "arguments":
 *    {"query": <query.original>}}` (`news_search`, `image_search`, `video_search` by `type`);
 *    observation = the whole response as canonical JSON (the search normalizer decodes the HTML
 *    of its snippets). A file may hold one response (pretty-printed or not), one per line, or a
 *    JSON array of them — streamed element by element with stream-json, never parsed whole.
 *
 * 2. Agent search/extract traces (JSONL), one step per line:
 *      {"type": "task", "id"?: "t1", "task"?: "Who wrote …?"}      starts a trajectory (optional)
 *      {"type": "search", "query": "…", "results": [{…}, …]}       → turn
 *      {"type": "extract", "url": "…", "text": "…"}                → turn
 *    A step may carry `"error": "…"` instead of results/text (the observation is then the
 *    error text), `"tool"` to name the tool (default `web_search` / `web_extract`) and
 *    `"thinking"`. Action = `{"name": tool, "arguments": {"query"|"url": …}}`; observation = the
 *    results as canonical JSON, or the page text verbatim. Lines before the first task line form
 *    one trajectory; a trajectory with a bad line is quarantined whole, naming the line.
 *
 * Ids: the task line's id, else `<file stem>-<sha256 of the record, 12 hex>` (stable, unique).
 */

const FORMAT = "search-api";

type Json = Record<string, unknown>;

const TOOL_BY_TYPE: Record<string, string> = { search: "web_search", news: "news_search", images: "image_search", videos: "video_search" };

export const searchApiReader: Reader = {
  name: FORMAT,
  description: "search-API JSON responses (Brave style: query.original, web.results[]) and agent search/extract trace JSONL",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    const parsed = parseJsonLine(firstLine(text));
    if (parsed.ok) return isSearchResponse(parsed.value) || isTraceLine(parsed.value);
    // Pretty-printed (or longer than the head): look for a response's query object.
    return /^\s*[[{]/.test(text) && /"query"\s*:\s*\{[^{}]*"original"\s*:\s*"/.test(text);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const stem = basename(path).replace(/\.[^.]*$/, "");
    const domain = options.domain ?? "search";
    // A top-level array may be one enormous line: decide on its first character, then stream it.
    if ((await firstCharacter(path)) === "[") {
      yield* readResponseArray(path, stem, domain);
      return;
    }
    // The layout is the first record line's: a damaged first line (a truncated write) is then
    // quarantined like any bad line instead of making the file one unreadable response.
    const first = await firstRecordLine(path, options.maxLineBytes);
    if (first === undefined) yield* readResponseFile(path, options, stem, domain);
    else yield* isSearchResponse(first) ? readResponseLines(path, options, stem, domain) : readTrace(path, options, stem, domain);
  },
};

/** One response in the whole file (typically pretty-printed). */
async function* readResponseFile(path: string, options: ReaderOptions, stem: string, domain: Domain): AsyncGenerator<ReadItem> {
  const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
  const whole = await readWholeText(path, options.maxLineBytes);
  if ("error" in whole) {
    yield quarantine(source, `${whole.error}; the file holds one response`);
    return;
  }
  yield responseItem(whole.text.replace(/^\uFEFF/, "").trim(), source, stem, domain);
}

/** One response per line. */
async function* readResponseLines(path: string, options: ReaderOptions, stem: string, domain: Domain): AsyncGenerator<ReadItem> {
  const { stream } = await openDecompressed(path);
  for await (const line of readLines(stream, options.maxLineBytes)) {
    const source: SourceRef = { uri: path, line: line.lineNo, offset: line.offset, format: FORMAT };
    if (line.oversizedBytes !== undefined)
      yield quarantine(source, `line is ${line.oversizedBytes} bytes, over the ${options.maxLineBytes}-byte limit`);
    else if (line.text.trim() !== "") yield responseItem(line.text.replace(/^\uFEFF/, ""), source, stem, domain);
  }
}

/** A JSON array of responses, streamed: memory holds one element at a time. */
async function* readResponseArray(path: string, stem: string, domain: Domain): AsyncGenerator<ReadItem> {
  const { stream } = await openDecompressed(path);
  const elements = streamArray.withParserAsStream();
  stream.on("error", (err) => elements.destroy(err));
  stream.pipe(elements);
  let index = 0;
  try {
    for await (const { value } of elements as AsyncIterable<{ value: unknown }>) {
      const source: SourceRef = { uri: path, format: FORMAT };
      // Each element is written back as JSON text: refuse what JSON.stringify cannot recurse through.
      yield nestsTooDeep(value)
        ? quarantine(source, `element ${index}: JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
        : responseItem(JSON.stringify(value), source, `${stem}[${index}]`, domain);
      index += 1;
    }
  } catch (err) {
    yield quarantine({ uri: path, format: FORMAT }, `JSON array breaks after element ${index}: ${(err as Error).message}`);
  }
}

/** A response's text → its one-turn trajectory, or a quarantine entry saying what is missing. */
function responseItem(text: string, source: SourceRef, stem: string, domain: Domain): ReadItem {
  const parsed = parseJsonLine(text);
  if (!parsed.ok) return quarantine(source, parsed.reason, text);
  if (!isSearchResponse(parsed.value))
    return quarantine(source, 'not a search-API response: needs "type" and "query": {"original": "…"}', text);
  const response = parsed.value;
  const type = response.type as string;
  const query = (response.query as Json).original as string;
  const action = toolCall(TOOL_BY_TYPE[type] ?? `${type}_search`, { query });
  const trajectory: Trajectory = {
    id: `${stem}-${sha12(text)}`,
    domain,
    source,
    turns: [{ action, observation: canonicalJson(text) ?? text, meta: { endpoint: type } }],
  };
  return { kind: "trajectory", trajectory };
}

interface OpenTrace {
  source: SourceRef;
  id?: string;
  task?: string;
  turns: Turn[];
  hash: Hash;
  problem?: { line: number; reason: string; text: string };
}

/** Agent search/extract trace: steps → turns, `task` lines start a new trajectory. */
async function* readTrace(path: string, options: ReaderOptions, stem: string, domain: Domain): AsyncGenerator<ReadItem> {
  const { stream } = await openDecompressed(path);
  let trace: OpenTrace | undefined;
  const finish = (open: OpenTrace): ReadItem => {
    const id = open.id ?? `${stem}-${open.hash.digest("hex").slice(0, 12)}`;
    if (open.problem) return quarantine(open.source, `line ${open.problem.line}: ${open.problem.reason}`, open.problem.text, id);
    if (open.turns.length === 0) return quarantine(open.source, "trace has no search or extract step", undefined, id);
    return {
      kind: "trajectory",
      trajectory: { id, domain, source: open.source, ...(open.task ? { task: open.task } : {}), turns: open.turns },
    };
  };
  for await (const line of readLines(stream, options.maxLineBytes)) {
    if (line.oversizedBytes === undefined && line.text.trim() === "") continue;
    const parsed = line.oversizedBytes === undefined ? parseJsonLine(line.text) : undefined;
    const value = parsed?.ok ? parsed.value : undefined;
    if (isObject(value) && value.type === "task") {
      if (trace) yield finish(trace);
      trace = undefined;
    }
    trace ??= { source: { uri: path, line: line.lineNo, offset: line.offset, format: FORMAT }, turns: [], hash: createHash("sha256") };
    trace.hash.update(line.text).update("\n");
    if (trace.problem) continue;
    const step =
      line.oversizedBytes !== undefined
        ? { error: `line is ${line.oversizedBytes} bytes, over the ${options.maxLineBytes}-byte limit` }
        : parsed && !parsed.ok
          ? { error: parsed.reason }
          : traceStep(value, trace);
    if ("error" in step) trace.problem = { line: line.lineNo, reason: step.error, text: line.text };
    else if (step.turn) trace.turns.push(step.turn);
  }
  if (trace) yield finish(trace);
}

/** One parsed trace line → a turn, nothing (task line), or the reason it is not a step. */
function traceStep(value: unknown, trace: OpenTrace): { turn?: Turn } | { error: string } {
  if (!isObject(value)) return { error: "a trace line must be a JSON object" };
  if (nestsTooDeep(value)) return { error: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
  const thinking = typeof value.thinking === "string" ? { thinking: value.thinking } : {};
  const error = typeof value.error === "string" ? value.error : undefined;
  switch (value.type) {
    case "task": {
      if (value.id !== undefined && typeof value.id !== "string" && typeof value.id !== "number")
        return { error: "task id must be a string or number" };
      if (value.id !== undefined) trace.id = String(value.id);
      if (typeof value.task === "string") trace.task = value.task;
      return {};
    }
    case "search": {
      const query = typeof value.query === "string" ? value.query : undefined;
      if (query === undefined) return { error: 'a search step needs "query" (string)' };
      if (error === undefined && !Array.isArray(value.results)) return { error: 'a search step needs "results" (array) or "error"' };
      const observation = error ?? canonicalJson(JSON.stringify(value.results)) ?? "[]";
      return { turn: { action: toolCall(toolName(value, "web_search"), { query }), observation, ...thinking } };
    }
    case "extract": {
      if (typeof value.url !== "string") return { error: 'an extract step needs "url" (string)' };
      if (error === undefined && typeof value.text !== "string") return { error: 'an extract step needs "text" (string) or "error"' };
      return {
        turn: {
          action: toolCall(toolName(value, "web_extract"), { url: value.url }),
          observation: error ?? (value.text as string),
          ...thinking,
        },
      };
    }
    default:
      return { error: `unknown step type ${JSON.stringify(value.type)} (expected "task", "search" or "extract")` };
  }
}

function toolName(step: Json, fallback: string): string {
  return typeof step.tool === "string" && step.tool !== "" ? step.tool : fallback;
}

/** The agent's call as canonical JSON: `{"name": …, "arguments": {…}}`. */
function toolCall(name: string, args: Json): string {
  const text = JSON.stringify({ name, arguments: args });
  return canonicalJson(text) ?? text;
}

function isSearchResponse(value: unknown): value is Json {
  return isObject(value) && typeof value.type === "string" && isObject(value.query) && typeof value.query.original === "string";
}

function isTraceLine(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (value.type === "search") return typeof value.query === "string";
  if (value.type === "extract") return typeof value.url === "string";
  return value.type === "task";
}

/** The first character of the decompressed content that is not whitespace or a BOM. */
async function firstCharacter(path: string): Promise<string | undefined> {
  const { stream } = await openDecompressed(path);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const found = /[^\s\uFEFF]/.exec(chunk.toString("utf8"));
      if (found) return found[0];
    }
    return undefined;
  } finally {
    stream.destroy();
  }
}

/**
 * The first line among the first few that is a response or a trace line (undefined when none is,
 * or a line is over the limit: the file is then one, typically pretty-printed, response).
 */
async function firstRecordLine(path: string, maxLineBytes: number): Promise<Json | undefined> {
  const { stream } = await openDecompressed(path);
  try {
    let probed = 0;
    for await (const line of readLines(stream, maxLineBytes)) {
      if (line.oversizedBytes !== undefined) return undefined;
      if (line.text.trim() === "") continue;
      const parsed = parseJsonLine(line.text.replace(/^\uFEFF/, ""));
      if (parsed.ok && (isSearchResponse(parsed.value) || isTraceLine(parsed.value))) return parsed.value as Json;
      // As many lines as format detection probes (src/read/registry.ts PROBE_LINES).
      if (++probed >= 8) return undefined;
    }
    return undefined;
  } finally {
    stream.destroy();
  }
}

function quarantine(source: SourceRef, reason: string, text?: string, id?: string): ReadItem {
  return {
    kind: "quarantine",
    entry: { source, ...(id ? { id } : {}), stage: "read", reason, ...(text ? { excerpt: excerpt(text) } : {}) },
  };
}

const sha12 = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
