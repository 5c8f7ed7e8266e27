import { createHash, type Hash } from "node:crypto";
import { basename } from "node:path";
import type { Domain, SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readLines } from "../io/read-lines.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { canonicalJson } from "../normalize/json-canonical.ts";
import { excerpt, firstLine, parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

/**
 * Web-search environments. Two kinds of input:
 *
 * 1. Search-API responses. One response = one one-turn trajectory: action = the call that
 *    produced it, `{"name": "web_search", "arguments": {"query": <the query the response names>}}`
 *    (`news_search`, `image_search`, `video_search`, … when the response names that endpoint; a
 *    later page of results adds the paging parameter the response echoes — Serper / SearchApi /
 *    serpstack `page`, SerpAPI `start` / `page` / `first` / `offset`, Google CSE `start` — so page 1
 *    and page 2 of a query are different calls);
 *    observation = the whole response as canonical JSON (the search normalizer decodes the HTML
 *    of its snippets and elides base64 `data:` URIs; volatile ids and timings are kept and counted).
 *    The API is told from the content and recorded as `trajectory.meta.search_api`:
 *      brave      `type`, `query.original`                      (endpoint = type)
 *      serper     `searchParameters.q`                          (endpoint = searchParameters.type)
 *      searxng    `query`, `number_of_results`, `results[]`
 *      google-cse `kind: "customsearch#search"`, `queries.request[0].searchTerms`
 *      serpapi    `search_metadata` (json_endpoint, raw_html_file, …), `search_parameters.q`
 *      searchapi  `search_metadata` (id `search_…`, json_url, html_url), `search_parameters.q`
 *                 (both: `search_query`, `p`, `text`, `query` for engines that name it so; endpoint = engine)
 *      serpstack  `request`, `search_parameters.query`           (endpoint = search_parameters.type)
 *      serply     `results[]`, `ts` — the response does not name its query
 *      tavily     `query`, `results[]`, `response_time` / `follow_up_questions` / `answer`
 *      bing       `_type: SearchResponse | News | Images | Videos`, `queryContext.originalQuery`
 *      exa        `requestId`, `results[]` — the query is `autopromptString` when Exa recorded one
 *                 (the query it ran), else unknown
 *    Error responses are observations too (turn `meta.error` = the message): Brave and Bing
 *    `ErrorResponse`, Serper `{message, statusCode}`, Tavily `{detail: {error}}`, serpstack
 *    `{success: false, error: {info}}`, Exa `{requestId, error}`, Google `{error: {code, message}}`,
 *    SerpAPI / SearchApi / Serply `{error: "…"}`, Azure's gateway before Bing `{error: {code: "401", message}}`. An error response rarely names its query: the
 *    action is then the call without arguments. Only the error shapes that name their API are
 *    detected by `format: auto` (Brave, Bing, serpstack, Exa with `tag`); the others are read in a
 *    file of that API's responses, or with `format: search-api` (bare `{"error": …}` → `search_api`
 *    of the file's previous response, else "unknown").
 *    A successful response that does not name its query (Serply; Exa without an autoprompt) is
 *    read with `meta.read_filter` (stage `search-query-unknown`): its results cannot be predicted
 *    from a call whose query is unknown, so it is not trained on.
 *    A file may hold one response (pretty-printed or not), one per line, several pretty-printed
 *    one after another (`jq . responses.jsonl`; the file is held whole, up to max_line_bytes), or a
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
  domain: "search",
  description: "search-API JSON responses (Brave style: query.original, web.results[]) and agent search/extract trace JSONL",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    const parsed = parseSniffedJson(firstLine(text));
    if (parsed.ok) return sniffable(parsed.value) || isTraceLine(parsed.value);
    if (!/^\s*[[{]/.test(text)) return false;
    // A pretty-printed document that fits in the head: decide on its structure.
    const whole = parseSniffedJson(text);
    if (whole.ok) return sniffable(whole.value);
    // Longer than the head: look for the keys that name an API near a response's start.
    return HEAD_PATTERNS.some((patterns) => patterns.every((pattern) => pattern.test(text)));
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
    else yield* identify(first) ? readResponseLines(path, options, stem, domain) : readTrace(path, options, stem, domain);
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
  const text = whole.text.replace(/^\uFEFF/, "");
  const pieces = parseJsonLine(text).ok ? undefined : concatenatedValues(text);
  if (!pieces) {
    yield responseItem(text.trim(), source, stem, domain, {});
    return;
  }
  // Several pretty-printed responses one after another (`jq . responses.jsonl > out.json`).
  const context: FileContext = {};
  const bomBytes = (await startsWithBom(path)) ? 3 : 0; // the decoder dropped it; offsets count it
  for (const piece of pieces)
    yield responseItem(piece.text, { ...source, line: piece.line, offset: piece.offset + bomBytes }, stem, domain, context);
}

/**
 * The top-level JSON objects and arrays written one after another in `text`, each at the start of
 * a line (whitespace between), each with its line and byte offset; undefined unless there are at
 * least two, or when anything else stands between them or one starts mid-line. The last may be cut off: it is then its own (unparsable) piece.
 */
function concatenatedValues(text: string): { text: string; line: number; offset: number }[] | undefined {
  const pieces: { text: string; line: number; offset: number }[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let counted = 0; // text[0, counted) is `bytes` bytes of UTF-8
  let bytes = 0;
  const offsetOf = (index: number) => {
    bytes += Buffer.byteLength(text.slice(counted, index));
    counted = index;
    return bytes;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") line += 1;
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (depth === 0) {
      // Each value starts a line (as `jq .` writes them), so its source is a line like any other.
      if ((c === "{" || c === "[") && i > 0 && text[i - 1] !== "\n") return undefined;
      if (c === "{" || c === "[") {
        start = i;
        startLine = line;
        depth = 1;
      } else if (!/\s/.test(c as string)) return undefined;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) pieces.push({ text: text.slice(start, i + 1), line: startLine, offset: offsetOf(start) });
    }
  }
  if (depth > 0) pieces.push({ text: text.slice(start), line: startLine, offset: offsetOf(start) });
  return pieces.length >= 2 ? pieces : undefined;
}

/** One response per line. */
async function* readResponseLines(path: string, options: ReaderOptions, stem: string, domain: Domain): AsyncGenerator<ReadItem> {
  const { stream } = await openDecompressed(path);
  const context: FileContext = {};
  for await (const line of readLines(stream, options.maxLineBytes)) {
    const source: SourceRef = { uri: path, line: line.lineNo, offset: line.offset, format: FORMAT };
    if (line.oversizedBytes !== undefined)
      yield quarantine(source, `line is ${line.oversizedBytes} bytes, over the ${options.maxLineBytes}-byte limit`);
    else if (line.text.trim() !== "") yield responseItem(line.text.replace(/^\uFEFF/, ""), source, stem, domain, context);
  }
}

/** A JSON array of responses, streamed: memory holds one element at a time. */
async function* readResponseArray(path: string, stem: string, domain: Domain): AsyncGenerator<ReadItem> {
  // stream-json loads with the first array streamed, not with the reader registry.
  const { streamArray } = await import("stream-json/streamers/stream-array.js");
  const { stream } = await openDecompressed(path);
  const elements = streamArray.withParserAsStream();
  stream.on("error", (err) => elements.destroy(err));
  stream.pipe(elements);
  let index = 0;
  const context: FileContext = {};
  try {
    for await (const { value } of elements as AsyncIterable<{ value: unknown }>) {
      const source: SourceRef = { uri: path, format: FORMAT };
      // Each element is written back as JSON text: refuse what JSON.stringify cannot recurse through.
      yield nestsTooDeep(value)
        ? quarantine(source, `element ${index}: JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
        : responseItem(JSON.stringify(value), source, `${stem}[${index}]`, domain, context);
      index += 1;
    }
  } catch (err) {
    yield quarantine({ uri: path, format: FORMAT }, `JSON array breaks after element ${index}: ${(err as Error).message}`);
  }
}

/** What the file's earlier responses said (the API an anonymous error response belongs to). */
interface FileContext {
  api?: string;
}

/** A response's text → its one-turn trajectory, or a quarantine entry saying what is missing. */
function responseItem(text: string, source: SourceRef, stem: string, domain: Domain, context: FileContext): ReadItem {
  const parsed = parseJsonLine(text);
  if (!parsed.ok) return quarantine(source, parsed.reason, text);
  const found = identify(parsed.value);
  if (!found)
    return quarantine(
      source,
      `not a search-API response: ${describeShape(parsed.value)} matches none of the known responses (e.g. Brave "type" and "query": {"original": "…"}, Serper "searchParameters", SerpAPI "search_metadata", Tavily "query" and "results")`,
      text,
    );
  const api = found.api === UNKNOWN ? (context.api ?? UNKNOWN) : found.api;
  if (found.api !== UNKNOWN) context.api = found.api;
  const args: Json = { ...(found.query === undefined ? {} : { query: found.query }), ...found.page };
  const turnMeta: Json = {
    ...(found.endpoint !== undefined ? { endpoint: found.endpoint } : {}),
    ...(found.error !== undefined ? { error: found.error } : {}),
  };
  const meta: Json = { search_api: api };
  if (found.query === undefined && found.error === undefined)
    meta.read_filter = {
      stage: "search-query-unknown",
      reason: `the ${api} response does not record the query it answers, so the call that produced it is unknown`,
    };
  const trajectory: Trajectory = {
    id: `${stem}-${sha12(text)}`,
    domain,
    source,
    turns: [
      {
        action: toolCall(found.tool, args),
        observation: canonicalJson(text) ?? text,
        ...(Object.keys(turnMeta).length > 0 ? { meta: turnMeta } : {}),
      },
    ],
    meta,
  };
  return { kind: "trajectory", trajectory };
}

const UNKNOWN = "unknown";

/** A value's shape for a quarantine reason: an object's first keys, else its type. */
function describeShape(value: unknown): string {
  if (!isObject(value)) return describeType(value);
  const keys = Object.keys(value);
  if (keys.length === 0) return "an empty object";
  return `an object with keys ${keys
    .slice(0, 8)
    .map((key) => JSON.stringify(key))
    .join(", ")}${keys.length > 8 ? ", …" : ""}`;
}

/** What a response says about the call that produced it. */
interface Identified {
  /** The API (`trajectory.meta.search_api`). */
  api: string;
  /** The tool name of the action. */
  tool: string;
  query?: string;
  /**
   * Which page of results the call asked for, as the request parameter that asks for it
   * (`{"page": 2}`, `{"start": 10}`), when the response records one past the first: page 1 and
   * page 2 of a query are different calls with different results. Absent for a first page.
   */
  page?: Json;
  /** The endpoint / engine / result type, as the response names it. */
  endpoint?: string;
  /** The error message of an error response. */
  error?: string;
  /** Whether `format: auto` may claim a file on this shape alone (false for generic error shapes). */
  distinctive: boolean;
}

/** Which API wrote this response, and the call it answers; undefined when it is none of them. */
function identify(value: unknown): Identified | undefined {
  // A trace step (`{"type": "search", "query": "…", "error": "…"}`) is never a response.
  if (!isObject(value) || isTraceLine(value)) return undefined;
  const v = value;
  // Brave: {"type": "search", "query": {"original": …}}; errors {"type": "ErrorResponse", "error": {detail, code}}.
  if (typeof v.type === "string" && isObject(v.query) && typeof v.query.original === "string")
    return { api: "brave", tool: TOOL_BY_TYPE[v.type] ?? `${v.type}_search`, query: v.query.original, endpoint: v.type, distinctive: true };
  if (v.type === "ErrorResponse" && isObject(v.error))
    return { api: "brave", tool: "web_search", error: message(v.error.detail, v.error.code), distinctive: true };
  // Bing Web Search v7: {"_type": "SearchResponse", "queryContext": {"originalQuery": …}}; {"_type": "ErrorResponse", "errors": […]}.
  if (typeof v._type === "string") {
    const tool = BING_TOOLS[v._type];
    if (tool && isObject(v.queryContext) && typeof v.queryContext.originalQuery === "string")
      return { api: "bing", tool, query: v.queryContext.originalQuery, endpoint: v._type, distinctive: true };
    if (v._type === "ErrorResponse" && Array.isArray(v.errors))
      return {
        api: "bing",
        tool: "web_search",
        error:
          v.errors
            .map((e) => (isObject(e) ? message(e.message, e.code) : undefined))
            .filter((m) => m !== undefined)
            .join("; ") || "error",
        distinctive: true,
      };
  }
  // Google Programmable Search (Custom Search JSON API).
  if (v.kind === "customsearch#search") {
    const request = isObject(v.queries) && Array.isArray(v.queries.request) ? v.queries.request[0] : undefined;
    const searchType = isObject(request) && typeof request.searchType === "string" ? request.searchType : undefined;
    return {
      api: "google-cse",
      tool: searchType === "image" ? "image_search" : "web_search",
      ...(isObject(request) && typeof request.searchTerms === "string" ? { query: request.searchTerms } : {}),
      // The request's `start` (1-based), which the response echoes as `startIndex`.
      ...(isObject(request) ? pageFrom({ start: request.startIndex }, CSE_PAGING) : {}),
      ...(searchType ? { endpoint: searchType } : {}),
      ...errorField(v),
      distinctive: true,
    };
  }
  // SerpAPI and SearchApi.io: {"search_metadata": {…}, "search_parameters": {"engine", "q"}, …}.
  if (isObject(v.search_metadata) && isObject(v.search_parameters)) {
    const metadata = v.search_metadata;
    const params = v.search_parameters;
    const searchApi =
      (typeof metadata.id === "string" && metadata.id.startsWith("search_")) || "json_url" in metadata || "html_url" in metadata;
    const engine = typeof params.engine === "string" ? params.engine : undefined;
    return {
      api: searchApi ? "searchapi" : "serpapi",
      tool: engineTool(engine, params.tbm),
      ...queryFrom(params, ["q", "query", "search_query", "p", "text", "k", "_nkw", "term"]),
      ...pageFrom(params, SERPAPI_PAGING),
      ...(engine ? { endpoint: engine } : {}),
      ...errorField(v),
      distinctive: true,
    };
  }
  // serpstack: {"request": {success, search_url, …}, "search_parameters": {"query", "type"}, …}.
  if (isObject(v.request) && isObject(v.search_parameters) && typeof v.search_parameters.query === "string") {
    const type = typeof v.search_parameters.type === "string" ? v.search_parameters.type : undefined;
    return {
      api: "serpstack",
      tool: engineTool(type, undefined),
      query: v.search_parameters.query,
      ...pageFrom(v.search_parameters, PAGE_PAGING),
      ...(type ? { endpoint: type } : {}),
      ...errorField(v),
      distinctive: true,
    };
  }
  // serpstack (apilayer) errors: {"success": false, "error": {"code", "type", "info"}}.
  if (v.success === false && isObject(v.error) && typeof v.error.info === "string")
    return { api: "serpstack", tool: "web_search", error: v.error.info, distinctive: true };
  // Serper: {"searchParameters": {"q", "type", "engine"}, "organic": […], …}.
  if (isObject(v.searchParameters) && typeof v.searchParameters.q === "string") {
    const type = typeof v.searchParameters.type === "string" ? v.searchParameters.type : undefined;
    return {
      api: "serper",
      tool: engineTool(type, undefined),
      query: v.searchParameters.q,
      ...pageFrom(v.searchParameters, PAGE_PAGING),
      ...(type ? { endpoint: type } : {}),
      distinctive: true,
    };
  }
  // SearXNG /search?format=json: {"query", "number_of_results", "results": […], "unresponsive_engines", …}.
  if (typeof v.query === "string" && typeof v.number_of_results === "number" && Array.isArray(v.results))
    return { api: "searxng", tool: "web_search", query: v.query, distinctive: true };
  // Exa: {"requestId", "results": [{id, url, title, …}], "resolvedSearchType"?, "autopromptString"?}.
  if (typeof v.requestId === "string" && Array.isArray(v.results))
    return {
      api: "exa",
      tool: "web_search",
      ...(typeof v.autopromptString === "string" ? { query: v.autopromptString } : {}),
      ...(typeof v.resolvedSearchType === "string" ? { endpoint: v.resolvedSearchType } : {}),
      distinctive: true,
    };
  if (typeof v.requestId === "string" && typeof v.error === "string")
    return { api: "exa", tool: "web_search", error: v.error, distinctive: typeof v.tag === "string" };
  // Tavily: {"query", "answer"?, "images"?, "results": [{title, url, content, score}], "response_time", …}.
  if (
    typeof v.query === "string" &&
    Array.isArray(v.results) &&
    ("response_time" in v || "follow_up_questions" in v || "answer" in v || "images" in v)
  )
    return { api: "tavily", tool: "web_search", query: v.query, distinctive: true };
  // Serply: {"results": […], "answers", "ads", …, "ts": 2.49} — no query field.
  if (typeof v.ts === "number" && Array.isArray(v.results))
    return { api: "serply", tool: "web_search", ...queryFrom(v, ["query", "q", "search_query"]), distinctive: true };
  // Error shapes that do not name their API (read in a file already chosen, never sniffed alone).
  if (isObject(v.detail) && typeof v.detail.error === "string" && Object.keys(v).length === 1)
    return { api: "tavily", tool: "web_search", error: v.detail.error, distinctive: false };
  if (typeof v.message === "string" && typeof v.statusCode === "number")
    return { api: "serper", tool: "web_search", error: v.message, distinctive: false };
  if (isObject(v.error) && typeof v.error.code === "number" && typeof v.error.message === "string")
    return { api: "google-cse", tool: "web_search", error: v.error.message, distinctive: false };
  // Azure's gateway in front of Bing (a bad key, a quota): {"error": {"code": "401", "message": …}}.
  if (isObject(v.error) && typeof v.error.code === "string" && typeof v.error.message === "string" && Object.keys(v).length === 1)
    return { api: UNKNOWN, tool: "web_search", error: v.error.message, distinctive: false };
  if (typeof v.error === "string" && Object.keys(v).length <= 3)
    return { api: UNKNOWN, tool: "web_search", ...queryFrom(v, ["query", "q"]), error: v.error, distinctive: false };
  return undefined;
}

const BING_TOOLS: Record<string, string> = {
  SearchResponse: "web_search",
  News: "news_search",
  Images: "image_search",
  Videos: "video_search",
};

/** The action's tool from an engine or result-type name (SerpAPI `google_news`, Serper `news`, Google `tbm=nws`). */
function engineTool(engine: string | undefined, tbm: unknown): string {
  const name = `${engine ?? ""} ${typeof tbm === "string" ? tbm : ""}`.toLowerCase();
  if (/news|\bnws\b/.test(name)) return "news_search";
  if (/image|\bisch\b/.test(name)) return "image_search";
  if (/video|youtube|\bvid\b/.test(name)) return "video_search";
  if (/scholar/.test(name)) return "scholar_search";
  if (/shopping|\bshop\b/.test(name)) return "shopping_search";
  if (/maps|places|local/.test(name)) return "places_search";
  return "web_search";
}

/** Paging parameters a response's echoed request may hold, each with its first page's value. */
const PAGE_PAGING: readonly (readonly [string, number])[] = [["page", 1]];
// SerpAPI and SearchApi engines: Google's `start` (a result offset), `page`, Bing's `first`, `offset`.
const SERPAPI_PAGING: readonly (readonly [string, number])[] = [
  ["start", 0],
  ["page", 1],
  ["first", 1],
  ["offset", 0],
];
const CSE_PAGING: readonly (readonly [string, number])[] = [["start", 1]];

/**
 * `{page}`: the first of `keys` that `object` holds as a whole number (or its decimal text, as
 * SerpAPI echoes parameters), under that key, when it is not the first page's value; else nothing.
 */
function pageFrom(object: Json, keys: readonly (readonly [string, number])[]): { page?: Json } {
  for (const [key, first] of keys) {
    const raw = object[key];
    const value = typeof raw === "number" ? raw : typeof raw === "string" && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
    if (value === undefined || !Number.isInteger(value)) continue;
    return value === first ? {} : { page: { [key]: value } };
  }
  return {};
}

/** `{query}` from the first of `keys` that holds a non-empty string. */
function queryFrom(object: Json, keys: readonly string[]): { query?: string } {
  for (const key of keys) {
    const value = object[key];
    if (typeof value === "string" && value !== "") return { query: value };
  }
  return {};
}

/** `{error}` when a response carries a top-level error (SerpAPI's "Google hasn't returned any results…"). */
function errorField(v: Json): { error?: string } {
  if (typeof v.error === "string") return { error: v.error };
  if (isObject(v.error) && typeof v.error.message === "string") return { error: v.error.message };
  return {};
}

function message(text: unknown, code: unknown): string {
  if (typeof text === "string" && text !== "") return text;
  return typeof code === "string" || typeof code === "number" ? String(code) : "error";
}

/** Shapes `format: auto` may claim a file on: every success shape, and the error shapes that name their API. */
function sniffable(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && sniffable(value[0]);
  return identify(value)?.distinctive === true;
}

/**
 * Keys near the start of a response longer than the detection head (each row: all must match).
 * Only top-level-looking keys of one API each; an escaped JSON string (`\"query\"`) never matches.
 */
const HEAD_PATTERNS: readonly (readonly RegExp[])[] = [
  [/"query"\s*:\s*\{[^{}]*"original"\s*:\s*"/],
  [/"_type"\s*:\s*"(?:SearchResponse|News|Images|Videos)"/, /"queryContext"\s*:\s*\{/],
  [/"kind"\s*:\s*"customsearch#search"/],
  [/"search_metadata"\s*:\s*\{/, /"search_parameters"\s*:\s*\{/],
  [/"request"\s*:\s*\{/, /"search_parameters"\s*:\s*\{/, /"search_url"\s*:/],
  [/"searchParameters"\s*:\s*\{[^{}]*"q"\s*:\s*"/],
  [/"query"\s*:\s*"/, /"number_of_results"\s*:\s*\d/, /"results"\s*:\s*\[/],
  [/"requestId"\s*:\s*"/, /"results"\s*:\s*\[/, /"(?:resolvedSearchType|autopromptString|searchType|costDollars)"\s*:/],
  [/"query"\s*:\s*"/, /"results"\s*:\s*\[/, /"(?:follow_up_questions|response_time)"\s*:/],
  [/"results"\s*:\s*\[/, /"realPosition"\s*:/, /"ads_count"\s*:/],
];

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

function isTraceLine(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (value.type === "search") return typeof value.query === "string";
  if (value.type === "extract") return typeof value.url === "string";
  return value.type === "task";
}

/** Whether the decompressed content starts with a UTF-8 byte order mark. */
async function startsWithBom(path: string): Promise<boolean> {
  const { stream } = await openDecompressed(path);
  try {
    let head = Buffer.alloc(0);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      head = Buffer.concat([head, chunk]);
      if (head.length >= 3) break;
    }
    return head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
  } finally {
    stream.destroy();
  }
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
      if (parsed.ok && (identify(parsed.value) || isTraceLine(parsed.value))) return parsed.value as Json;
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
