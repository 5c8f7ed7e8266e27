import type { DatabaseSync, SQLOutputValue } from "node:sqlite";
import { zstdDecompressSync } from "node:zlib";
import type { Domain, SourceRef } from "../core/trajectory.ts";
import { SessionTurns } from "./agent-log/session-turns.ts";
import {
  errorText,
  missingColumns,
  readSqliteSnapshot,
  type SqliteStore,
  sqliteStoreCompanions,
  sqliteStoreKind,
  tableColumns,
  unreadableDatabase,
} from "./agent-log/sqlite-snapshot.ts";
import type { Companions, Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, isRecord, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "zed";

/*
 * The Zed editor's agent threads (zed-industries/zed `crates/agent/src/db.rs`): the SQLite database
 * `threads/threads.db` in Zed's data folder (`~/.local/share/zed` on Linux, `~/Library/Application
 * Support/Zed` on macOS, `%LOCALAPPDATA%\Zed` on Windows). Table `threads (id, summary,
 * updated_at, data_type, data, parent_id?, folder_paths?, created_at?)`; `data` is the thread as
 * JSON, zstd-compressed when `data_type` is `zstd` (what Zed writes), plain when `json`.
 *
 * Three generations of the JSON, told by `version` (a later version is read as `DbThread`):
 * - `"0.3.0"` (`DbThread`, crates/agent/src/db.rs): `{title, messages, updated_at, model?, profile?,
 *   cumulative_token_usage?, …}`; each message serde-tagged by its variant: `{"User": {id, content:
 *   [{"Text": s} | {"Mention": {uri, content}} | {"Image": …}]}}`, `{"Agent": {content: [{"Text": s} |
 *   {"Thinking": {text, signature}} | {"RedactedThinking": s} | {"ToolUse": {id, name, raw_input,
 *   input, …}}], tool_results: {<tool use id>: {tool_use_id, tool_name, is_error, content, output}}}}`,
 *   or `"Resume"`. A tool use's `input` is `{"type": "json" | "text", "value"}` in newer builds, the
 *   bare JSON before; a result's `content` a list of `{"Text": s}` / `{"Image": …}`, one of them
 *   alone in older builds, or a string.
 * - `"0.1.0"` / `"0.2.0"` (`SerializedThread`, crates/agent/src/legacy_thread.rs): `{summary,
 *   updated_at, messages: [{id, role, segments: [{type: "text" | "thinking", text} |
 *   {type: "RedactedThinking", data}], tool_uses: [{id, name, input}], tool_results: [{tool_use_id,
 *   is_error, content, output}], context, is_hidden}], model?, …}` (0.1.0 keeps results on the
 *   next user message, 0.2.0 on the assistant message that made the calls: both read in order).
 * - no `version`: the oldest, messages `{id, role, text, tool_uses, tool_results}`.
 *
 * - **Record**: one trajectory per thread, oldest first; a sub-agent's thread (`parent_id`) is one of
 *   its own, naming its parent in `meta.parent_thread`.
 * - **Action**: each tool use: `terminal` → its `command` (`cd` in `turn.meta.cd`); any other tool
 *   (read_file, edit_file, grep, find_path, list_directory, fetch, web_search, diagnostics, an MCP
 *   server's) → `name {input}`. **Observation**: its result's content, the text the model was
 *   given (images `[image]`); `is_error` → `turn.meta.is_error`. A tool use without a result (the
 *   thread was stopped) makes no turn (`call_without_result`).
 * - **Thinking**, task, user messages (`"Resume"` counted), the final message: as the other
 *   session logs (src/read/agent-log/session-turns.ts). **Domain** (unless `--domain`): only the
 *   terminal → terminal; mostly tools that are not Zed's own (MCP servers) → mcp; mostly fetch /
 *   web_search → web / search; else swe. **Meta**: `agent: "zed"`, `thread_id`, `title`,
 *   `updated_at`, `created_at`, `version`, `model`, `profile`, `tokens`, `parent_thread`,
 *   `skipped`, `final_message`.
 *
 * Read-only (`node:sqlite`) in one read transaction; rows iterated, each thread decompressed on its
 * own, never past `input.max_line_bytes`. Quarantined, naming the thread and the field: data that
 * does not decompress or parse, a message or tool use of the wrong shape. A thread with no answered
 * call (a chat) is yielded without turns and filtered (`no-tool-calls`).
 */
export const zedThreadsReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Zed's agent threads (threads/threads.db in Zed's data folder: zstd-compressed JSON per thread)",
  // A binary database: told by its table in `detectFormat` (zedDatabaseKind), never by a text sniff.
  sniff: () => false,
  companions: (path: string): Promise<Companions> => sqliteStoreCompanions(path, "Zed threads database"),
  read: readZedDatabase,
};

const REQUIRED = ["id", "data_type", "data"];

function schemaProblem(db: DatabaseSync): string | undefined {
  const missing = missingColumns(db, "threads", REQUIRED);
  return missing.length > 0 ? missing.join(", ") : undefined;
}

/** Whether an SQLite file is Zed's threads database: "sessions", "empty" (the table, no thread), or undefined. Never throws. */
export function zedDatabaseKind(path: string, head: string): Promise<"sessions" | "empty" | undefined> {
  return sqliteStoreKind(path, head, {
    schemaProblem,
    hasRows: (db) => Boolean(db.prepare("SELECT 1 FROM threads LIMIT 1").get()),
    schemaInHead: (text) => /CREATE TABLE (?:IF NOT EXISTS )?[`"]?threads[`"]?\s*\([^)]*\bdata_type\b/.test(text),
  });
}

/** A problem with one thread, named by its field. */
class ThreadProblem extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

type Row = Record<string, SQLOutputValue>;

async function* readZedDatabase(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  if (options.range && options.range.start > 0) return;
  const source: SourceRef = { uri: path, format: FORMAT };
  yield* readSqliteSnapshot(path, source, ZED_STORE, (db) => readThreads(db, source, options));
}

const ZED_STORE: SqliteStore = {
  name: "a Zed threads database",
  notThisStore: "not Zed's threads database (threads/threads.db)",
  schemaProblem,
};

function* readThreads(db: DatabaseSync, source: SourceRef, options: ReaderOptions): Generator<ReadItem> {
  try {
    const columns = tableColumns(db, "threads");
    const optional = (column: string) => (columns.has(column) ? column : `NULL AS ${column}`);
    const order = columns.has("created_at") ? "created_at, rowid" : columns.has("updated_at") ? "updated_at, rowid" : "rowid";
    const threads = db.prepare(
      `SELECT id, ${optional("summary")}, ${optional("updated_at")}, ${optional("created_at")}, ${optional("parent_id")}, data_type, typeof(data) AS data_kind, length(CAST(data AS BLOB)) AS bytes, CASE WHEN length(CAST(data AS BLOB)) <= ? THEN data END AS data FROM threads ORDER BY ${order}`,
    );
    let at = 0;
    for (const row of threads.iterate(options.maxLineBytes)) {
      yield readThread(row, { ...source, row: at }, options);
      at += 1;
    }
    // A database without threads (or cut short) says so rather than yield nothing.
    if (at === 0) yield { kind: "quarantine", entry: { source, stage: "read", field: "threads", reason: "no thread in the database" } };
  } catch (err) {
    yield unreadableDatabase(source, err);
  }
}

const text = (value: SQLOutputValue | undefined): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** The thread's JSON: the `data` column, zstd-decompressed (never past the line limit) when `data_type` says so. */
function threadJson(row: Row, maxBytes: number): unknown {
  const bytes = typeof row.bytes === "number" ? row.bytes : Number(row.bytes ?? 0);
  if (bytes > maxBytes) throw new ThreadProblem("data", `${bytes} bytes, over the ${maxBytes}-byte limit (input.max_line_bytes)`);
  const raw = row.data;
  const buffer = typeof raw === "string" ? Buffer.from(raw, "utf8") : raw instanceof Uint8Array ? Buffer.from(raw) : undefined;
  if (buffer === undefined) throw new ThreadProblem("data", `expected a BLOB or text, got an SQL ${String(row.data_kind)}`);
  let json: string;
  if (row.data_type === "zstd") {
    try {
      json = zstdDecompressSync(buffer, { maxOutputLength: maxBytes }).toString("utf8");
    } catch (err) {
      throw new ThreadProblem(
        "data",
        `zstd data that does not decompress within ${maxBytes} bytes (input.max_line_bytes): ${errorText(err)}`,
      );
    }
  } else if (row.data_type === "json") json = buffer.toString("utf8");
  else
    throw new ThreadProblem(
      "data_type",
      `expected "zstd" or "json", got ${describeType(row.data_type)}${typeof row.data_type === "string" ? ` "${row.data_type}"` : ""}`,
    );
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new ThreadProblem("data", `invalid JSON: ${errorText(err)}`);
  }
  if (nestsTooDeep(value)) throw new ThreadProblem("data", `nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

function readThread(row: Row, source: SourceRef, options: ReaderOptions): ReadItem {
  const id = text(row.id) ?? `rowid ${String(source.row)}`;
  const turns = new SessionTurns();
  const tools: string[] = [];
  const meta: Record<string, unknown> = { agent: "zed", thread_id: id };
  let messages = 0;
  try {
    const thread = threadJson(row, options.maxLineBytes);
    if (!isRecord(thread)) throw new ThreadProblem("data", `expected a thread object, got ${describeType(thread)}`);
    const list = thread.messages;
    if (!Array.isArray(list)) throw new ThreadProblem("data.messages", `expected an array, got ${describeType(list)}`);
    threadMeta(thread, row, meta);
    // DbThread is 0.3.0 (and, by its messages' shape, any later version); 0.1.0, 0.2.0 and the unversioned are SerializedThread.
    const legacy = thread.version === undefined || thread.version === "0.1.0" || thread.version === "0.2.0";
    for (const [i, message] of list.entries()) {
      messages += 1;
      if (legacy && !isTaggedMessage(message)) serializedMessage(turns, tools, message, `data.messages.${i}`);
      else dbMessage(turns, tools, message, `data.messages.${i}`);
    }
  } catch (err) {
    if (!(err instanceof ThreadProblem)) throw err;
    return {
      kind: "quarantine",
      entry: { source, id, stage: "read", field: err.field, reason: `Zed thread ${id}: ${err.field}: ${err.message}` },
    };
  }
  const built = turns.finish();
  if (built.finalMessage !== undefined) meta.final_message = built.finalMessage;
  if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
  if (built.turns.length === 0) {
    const counts = Object.entries(built.skipped).map(([what, n]) => `${n} ${what}`);
    const what = [`${messages} message${messages === 1 ? "" : "s"}`, ...counts].join(", ");
    meta.read_filter = { stage: "no-tool-calls", reason: `no tool call with a result in the thread (${what}): a chat without actions` };
  }
  return {
    kind: "trajectory",
    trajectory: {
      id,
      domain: options.domain ?? inferZedDomain(tools),
      source,
      ...(built.task !== undefined ? { task: built.task } : {}),
      turns: built.turns,
      meta,
    },
  };
}

function threadMeta(thread: Record<string, unknown>, row: Row, meta: Record<string, unknown>): void {
  const title = [thread.title, thread.summary, row.summary].find((value) => typeof value === "string" && value !== "");
  if (title !== undefined) meta.title = title;
  for (const [value, key] of [
    [thread.updated_at ?? row.updated_at, "updated_at"],
    [row.created_at, "created_at"],
    [thread.version, "version"],
    [thread.profile, "profile"],
  ] as const)
    if (typeof value === "string" && value !== "") meta[key] = value;
  const parent = text(row.parent_id);
  if (parent !== undefined) meta.parent_thread = parent;
  if (isRecord(thread.model) && typeof thread.model.model === "string" && thread.model.model !== "") {
    meta.model = thread.model.model;
    if (typeof thread.model.provider === "string" && thread.model.provider !== "") meta.provider = thread.model.provider;
  }
  const usage = thread.cumulative_token_usage;
  if (isRecord(usage)) {
    const tokens: Record<string, number> = {};
    for (const [key, name] of [
      ["input_tokens", "input"],
      ["output_tokens", "output"],
      ["cache_read_input_tokens", "cache_read"],
      ["cache_creation_input_tokens", "cache_write"],
    ] as const)
      if (typeof usage[key] === "number" && Number.isFinite(usage[key])) tokens[name] = usage[key] as number;
    if (Object.keys(tokens).length > 0) meta.tokens = tokens;
  }
}

/** A message in DbThread's serde-tagged form. */
function isTaggedMessage(message: unknown): boolean {
  return message === "Resume" || (isRecord(message) && (isRecord(message.User) || isRecord(message.Agent)));
}

/** A `DbThread` message: `{"User": …}`, `{"Agent": …}` or `"Resume"`. */
function dbMessage(turns: SessionTurns, tools: string[], message: unknown, field: string): void {
  if (message === "Resume") {
    turns.count("resume");
    return;
  }
  if (!isRecord(message)) throw new ThreadProblem(field, `expected a message, got ${describeType(message)}`);
  if (isRecord(message.User)) {
    const content = message.User.content;
    if (!Array.isArray(content)) throw new ThreadProblem(`${field}.User.content`, `expected an array, got ${describeType(content)}`);
    const texts: string[] = [];
    for (const part of content) {
      const value = variant(part);
      if (value?.tag === "Text" && typeof value.value === "string") texts.push(value.value);
      else if (value?.tag === "Image") texts.push("[image]");
      // A mention's `content` is the file or symbol it attached: context, not the user's words.
      else if (value?.tag === "Mention") turns.count("mention");
    }
    turns.user(texts.join("\n"));
    return;
  }
  if (!isRecord(message.Agent))
    throw new ThreadProblem(
      field,
      `expected a User or Agent message, got ${describeType(message)} with keys ${Object.keys(message).slice(0, 4).join(", ")}`,
    );
  const agent = message.Agent;
  const content = agent.content;
  if (!Array.isArray(content)) throw new ThreadProblem(`${field}.Agent.content`, `expected an array, got ${describeType(content)}`);
  const results = agent.tool_results ?? {};
  if (!isRecord(results)) throw new ThreadProblem(`${field}.Agent.tool_results`, `expected an object, got ${describeType(results)}`);
  for (const [i, part] of content.entries()) {
    const value = variant(part);
    const at = `${field}.Agent.content.${i}`;
    if (value === undefined) throw new ThreadProblem(at, `expected a content part, got ${describeType(part)}`);
    if (value.tag === "Text" && typeof value.value === "string") turns.text(value.value);
    else if (value.tag === "Thinking" && isRecord(value.value) && typeof value.value.text === "string") turns.thinking(value.value.text);
    else if (value.tag === "ToolUse") {
      if (!isRecord(value.value)) throw new ThreadProblem(`${at}.ToolUse`, `expected a tool use, got ${describeType(value.value)}`);
      openCall(turns, tools, value.value, `${at}.ToolUse`);
    } else if (value.tag !== "RedactedThinking") turns.count(`agent_${value.tag}`);
  }
  for (const [key, result] of Object.entries(results)) answer(turns, result, key, `${field}.Agent.tool_results.${key}`);
}

/** A `SerializedThread` message (0.1.0 / 0.2.0 segments, or the oldest `text`), its tool uses before its results. */
function serializedMessage(turns: SessionTurns, tools: string[], message: unknown, field: string): void {
  if (!isRecord(message)) throw new ThreadProblem(field, `expected a message, got ${describeType(message)}`);
  const role = message.role;
  if (role !== "user" && role !== "assistant" && role !== "system")
    throw new ThreadProblem(`${field}.role`, `expected user, assistant or system, got ${describeType(role)}`);
  const segments = message.segments;
  const texts: string[] = [];
  if (Array.isArray(segments)) {
    for (const segment of segments) {
      if (!isRecord(segment)) continue;
      if (segment.type === "text" && typeof segment.text === "string") texts.push(segment.text);
      else if (segment.type === "thinking" && typeof segment.text === "string" && role === "assistant") turns.thinking(segment.text);
    }
  } else if (typeof message.text === "string") texts.push(message.text);
  if (role === "system") turns.count("system_message");
  else if (role === "user") {
    if (message.is_hidden !== true) turns.user(texts.join("\n"));
  } else turns.text(texts.join("\n"));
  const uses = message.tool_uses ?? [];
  if (!Array.isArray(uses)) throw new ThreadProblem(`${field}.tool_uses`, `expected an array, got ${describeType(uses)}`);
  for (const [i, use] of uses.entries()) {
    if (!isRecord(use)) throw new ThreadProblem(`${field}.tool_uses.${i}`, `expected a tool use, got ${describeType(use)}`);
    openCall(turns, tools, use, `${field}.tool_uses.${i}`);
  }
  const results = message.tool_results ?? [];
  if (!Array.isArray(results)) throw new ThreadProblem(`${field}.tool_results`, `expected an array, got ${describeType(results)}`);
  for (const [i, result] of results.entries()) answer(turns, result, undefined, `${field}.tool_results.${i}`);
}

/** A serde externally tagged value: `{"Tag": value}` → {tag, value}; a bare string is a unit variant. */
function variant(part: unknown): { tag: string; value: unknown } | undefined {
  if (typeof part === "string") return { tag: part, value: undefined };
  if (!isRecord(part)) return undefined;
  const keys = Object.keys(part);
  if (keys.length !== 1) return undefined;
  const tag = keys[0] as string;
  return { tag, value: part[tag] };
}

function openCall(turns: SessionTurns, tools: string[], use: Record<string, unknown>, field: string): void {
  const { id, name } = use;
  if (typeof id !== "string" || id === "") throw new ThreadProblem(`${field}.id`, `expected a tool use id, got ${describeType(id)}`);
  if (typeof name !== "string" || name === "") throw new ThreadProblem(`${field}.name`, `expected a tool name, got ${describeType(name)}`);
  const input = toolInput(use);
  tools.push(name);
  const command = isRecord(input) ? input.command : undefined;
  if ((name === "terminal" || name === "bash") && typeof command === "string") {
    const cd = isRecord(input) && typeof input.cd === "string" && input.cd !== "" ? { cd: input.cd } : {};
    turns.call(id, name, command, cd);
  } else turns.call(id, name, `${name} ${typeof input === "string" ? input : jsonTextOr(input, "{}")}`);
}

/** A tool use's input: `{"type": "json" | "text", "value"}` (newer builds), the bare JSON, else its `raw_input` text. */
function toolInput(use: Record<string, unknown>): unknown {
  const input = use.input;
  if (isRecord(input) && (input.type === "json" || input.type === "text") && "value" in input && Object.keys(input).length === 2)
    return input.value;
  if (input !== undefined && input !== null) return input;
  if (typeof use.raw_input === "string" && use.raw_input !== "") {
    try {
      return JSON.parse(use.raw_input);
    } catch {
      return use.raw_input;
    }
  }
  return {};
}

function answer(turns: SessionTurns, result: unknown, key: string | undefined, field: string): void {
  if (!isRecord(result)) throw new ThreadProblem(field, `expected a tool result, got ${describeType(result)}`);
  const id = typeof result.tool_use_id === "string" && result.tool_use_id !== "" ? result.tool_use_id : key;
  if (id === undefined) throw new ThreadProblem(`${field}.tool_use_id`, `expected a tool use id, got ${describeType(result.tool_use_id)}`);
  turns.answer(id, resultText(result.content), result.is_error === true);
}

/** A tool result's content: `[{"Text": s} | {"Image": …}]`, one such part alone, a string, or `{type: "text", text}` / `{text}`. */
function resultText(content: unknown): string {
  const parts = Array.isArray(content) ? content : content === undefined || content === null ? [] : [content];
  const out: string[] = [];
  for (const part of parts) {
    if (typeof part === "string") out.push(part);
    else if (!isRecord(part)) continue;
    else if (typeof part.Text === "string") out.push(part.Text);
    else if ("Image" in part || "image" in part || part.type === "image") out.push("[image]");
    else if (typeof part.text === "string") out.push(part.text);
  }
  return out.join("\n");
}

/** Zed's own agent tools (crates/agent/src/tools): any other name is an MCP server's or an extension's. */
const ZED_TOOLS = new Set([
  "terminal",
  "read_file",
  "edit_file",
  "grep",
  "find_path",
  "list_directory",
  "copy_path",
  "move_path",
  "delete_path",
  "create_directory",
  "open",
  "fetch",
  "web_search",
  "diagnostics",
  "now",
  "thinking",
  "save_file",
  "restore_file_from_disk",
  "spawn_agent",
  "subagent",
  "write_file",
  "skill",
  // The first agent's names.
  "bash",
  "regex_search",
  "path_search",
]);

/** The domain of a thread from its tools (see the comment at the top). */
export function inferZedDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (tools.length > 0 && tools.every((tool) => tool === "terminal" || tool === "bash")) return "terminal";
  if (share((tool) => !ZED_TOOLS.has(tool)) > 0.5) return "mcp";
  if (share((tool) => tool === "fetch" || tool === "web_search") > 0.5)
    return share((tool) => tool === "web_search") > 0.5 ? "search" : "web";
  return "swe";
}
