import type { DatabaseSync, SQLOutputValue } from "node:sqlite";
import type { Domain, SourceRef } from "../core/trajectory.ts";
import { answerCall, byUse, SessionTurns } from "./agent-log/session-turns.ts";
import {
  errorText,
  missingColumns,
  readSqliteSnapshot,
  type SqliteStore,
  sqliteStoreCompanions,
  sqliteStoreKind,
  unreadableDatabase,
} from "./agent-log/sqlite-snapshot.ts";
import type { Companions, Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, isRecord, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "cursor";

/*
 * Cursor's agent conversations (the Composer / Agent panel), as the editor keeps them: the SQLite
 * key-value store `<user data>/User/globalStorage/state.vscdb` (`~/.config/Cursor/User/…` on
 * Linux, `~/Library/Application Support/Cursor/User/…` on macOS, `%APPDATA%\Cursor\User\…` on
 * Windows). Cursor documents no format; this reader follows what the public exporters of these
 * databases agree on (cursor-history, dataclaw's Cursor parser, cursor-chat-export, chatrxiv's
 * storage notes): tables `ItemTable` and `cursorDiskKV`, both `(key TEXT UNIQUE, value BLOB)`
 * holding JSON text.
 *
 * - `composerData:<composerId>`: one conversation — `name`, `createdAt` (epoch ms),
 *   `unifiedMode` / `forceMode`, `modelConfig.modelName`, and its messages in order as
 *   `fullConversationHeadersOnly: [{bubbleId, type}]` (a message the rows lack may be in its
 *   `conversationMap`; older versions: the messages themselves inline, `conversation: [bubble]`).
 * - `bubbleId:<composerId>:<bubbleId>`: one message — `type` 1 (user) or 2 (assistant), `text`,
 *   `thinking.text`, and for a tool call `toolFormerData` `{toolCallId, name, status, rawArgs,
 *   params, result, error, userDecision, additionalData}`, whose `rawArgs`, `params` and `result`
 *   are JSON text (sometimes encoded twice, sometimes an object).
 *
 * - **Record**: one trajectory per conversation, in key order; a conversation with no message
 *   (a draft) is yielded with `meta.read_filter`. A sub-agent's conversation is one of its own
 *   (`subagentInfo.parentComposerId` → `meta.parent_composer`).
 * - **Action**: each assistant tool call: the terminal tools (`run_terminal_cmd`,
 *   `run_terminal_command_v2`) → the `command`; any other (`read_file`, `edit_file`,
 *   `codebase_search`, `grep_search`, `list_dir`, `web_search`, an MCP server's `mcp_…`, whose
 *   arguments are unwrapped from `params.tools[0].parameters`) → `name {arguments}`, the arguments
 *   from `rawArgs`, else `params`.
 * - **Observation**: the call's `result`: a terminal result's `output` (`exitCode` →
 *   `turn.meta.exit_code`; nothing printed reads `[exit code N, no output]`), a read's
 *   `contents`, an edit's `resultForModel` or diff, any other text as it is, an object as its JSON;
 *   an `error` → its message with `turn.meta.is_error`. A call the user rejected (`userDecision`
 *   or `result.rejected`) ran nothing and makes no turn (`rejected_call`); one with no result
 *   (cancelled, still running) none either (`call_without_result`).
 * - **Thinking**, task, user messages, the final message: as the other session logs
 *   (src/read/agent-log/session-turns.ts). **Domain** (unless `--domain`): only the terminal →
 *   terminal; mostly MCP tools → mcp; mostly web search / fetch → search / web; else swe.
 * - **Meta**: `agent: "cursor"`, `composer_id`, `title`, `created_at`, `mode`, `model`
 *   (`modelConfig.modelName` unless `default`, else the bubbles' most used), `workspace` (the
 *   first bubble's workspace folder), `parent_composer`, `skipped`, `final_message`.
 *
 * Only `cursorDiskKV`'s conversation keys are read: the store also holds the editor's settings
 * and, in `ItemTable`, its sign-in tokens, which are never read. Read-only (`node:sqlite`), one
 * read transaction; rows iterated, never loaded whole. Quarantined, naming the key: a conversation
 * or message that is not JSON, over `input.max_line_bytes`, or of the wrong shape. A message its
 * headers name but the store lacks (deleted), or stored as JSON null, is counted.
 */
export const cursorDbReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Cursor's conversation store globalStorage/state.vscdb (SQLite key-value: composerData and bubbleId JSON rows)",
  // A binary database: told by its tables in `detectFormat` (cursorDatabaseKind), never by a text sniff.
  sniff: () => false,
  companions: (path: string): Promise<Companions> => sqliteStoreCompanions(path, "Cursor database"),
  read: readCursorDatabase,
};

/** The first key after every `composerData:…` key (`;` follows `:`): a key range the UNIQUE index answers. */
const COMPOSERS = "key >= 'composerData:' AND key < 'composerData;'";

/** What the database lacks of Cursor's key-value table, in words; undefined when it has it. */
function schemaProblem(db: DatabaseSync): string | undefined {
  const missing = missingColumns(db, "cursorDiskKV", ["key", "value"]);
  return missing.length > 0 ? missing.join(", ") : undefined;
}

/**
 * Whether an SQLite file is Cursor's conversation store: "sessions", "empty" (the table, no
 * conversation: a workspace's own state.vscdb), or undefined. Never throws.
 */
export function cursorDatabaseKind(path: string, head: string): Promise<"sessions" | "empty" | undefined> {
  return sqliteStoreKind(path, head, {
    schemaProblem,
    hasRows: (db) => Boolean(db.prepare(`SELECT 1 FROM cursorDiskKV WHERE ${COMPOSERS} LIMIT 1`).get()),
    schemaInHead: (text) => /CREATE TABLE (?:IF NOT EXISTS )?[`"]?cursorDiskKV[`"]?\s*\(/.test(text),
  });
}

/** A problem with one stored value, named by its key and field. */
class ValueProblem extends Error {
  readonly key: string;
  readonly field: string | undefined;
  constructor(key: string, field: string | undefined, message: string) {
    super(message);
    this.key = key;
    this.field = field;
  }
}

type Row = Record<string, SQLOutputValue>;

async function* readCursorDatabase(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  if (options.range && options.range.start > 0) return;
  const source: SourceRef = { uri: path, format: FORMAT };
  yield* readSqliteSnapshot(path, source, CURSOR_STORE, (db) => readComposers(db, source, options));
}

/** Cursor's database for readSqliteSnapshot. */
const CURSOR_STORE: SqliteStore = {
  name: "a Cursor database",
  notThisStore: "not Cursor's conversation store (globalStorage/state.vscdb)",
  schemaProblem,
};

/** A value's row: its storage type, its size and, within the limit, the value itself. */
const VALUE_COLUMNS =
  "typeof(value) AS value_type, length(CAST(value AS BLOB)) AS bytes, CASE WHEN length(CAST(value AS BLOB)) <= ? THEN value END AS value";

function* readComposers(db: DatabaseSync, source: SourceRef, options: ReaderOptions): Generator<ReadItem> {
  try {
    const composers = db.prepare(`SELECT key, ${VALUE_COLUMNS} FROM cursorDiskKV WHERE ${COMPOSERS} ORDER BY key`);
    const bubble = db.prepare(`SELECT ${VALUE_COLUMNS} FROM cursorDiskKV WHERE key = ?`);
    let at = 0;
    for (const row of composers.iterate(options.maxLineBytes)) {
      const fetch = (key: string): Row | undefined => bubble.get(options.maxLineBytes, key) as Row | undefined;
      yield readComposer(row, fetch, { ...source, row: at }, options);
      at += 1;
    }
    // A store without conversations (a workspace's own state.vscdb, or one cut short) says so rather than yield nothing.
    if (at === 0)
      yield {
        kind: "quarantine",
        entry: {
          source,
          stage: "read",
          field: "cursorDiskKV",
          reason:
            "no conversation in the store (no composerData key): a workspace's state.vscdb holds none; Cursor keeps them in globalStorage/state.vscdb",
        },
      };
  } catch (err) {
    yield unreadableDatabase(source, err);
  }
}

/** A stored value as JSON: text, or a BLOB of UTF-8 JSON text; `undefined` for SQL NULL. */
function jsonValue(row: Row, key: string, maxBytes: number): unknown {
  const bytes = typeof row.bytes === "number" ? row.bytes : Number(row.bytes ?? 0);
  if (row.value_type === "null") return undefined;
  if (bytes > maxBytes) throw new ValueProblem(key, undefined, `${bytes} bytes, over the ${maxBytes}-byte limit (input.max_line_bytes)`);
  let text: string;
  if (typeof row.value === "string") text = row.value;
  else if (row.value instanceof Uint8Array) text = Buffer.from(row.value).toString("utf8");
  else throw new ValueProblem(key, undefined, `expected JSON text, got an SQL ${String(row.value_type)}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValueProblem(key, undefined, `invalid JSON: ${errorText(err)}`);
  }
  if (nestsTooDeep(value)) throw new ValueProblem(key, undefined, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

const TERMINAL_TOOLS = new Set(["run_terminal_cmd", "run_terminal_command", "run_terminal_command_v2"]);
const WEB_TOOLS = new Set(["web_fetch", "fetch_rules", "fetch_pull_request"]);
const SEARCH_TOOLS = new Set(["web_search"]);

function readComposer(row: Row, fetch: (key: string) => Row | undefined, source: SourceRef, options: ReaderOptions): ReadItem {
  const key = String(row.key);
  const id = key.slice("composerData:".length);
  const turns = new SessionTurns();
  const meta: Record<string, unknown> = { agent: "cursor", composer_id: id };
  const tools: string[] = [];
  const models = new Map<string, number>();
  let messages = 0;
  try {
    const composer = jsonValue(row, key, options.maxLineBytes);
    if (!isRecord(composer)) throw new ValueProblem(key, undefined, `expected a conversation object, got ${describeType(composer)}`);
    composerMeta(composer, meta);
    const headers = composer.fullConversationHeadersOnly;
    const inline = composer.conversation;
    const bubbles: [string, unknown][] = [];
    if (Array.isArray(headers) && headers.length > 0) {
      headers.forEach((header, i) => {
        const bubbleId = isRecord(header) ? header.bubbleId : undefined;
        if (typeof bubbleId !== "string" || bubbleId === "")
          throw new ValueProblem(key, `fullConversationHeadersOnly.${i}.bubbleId`, `expected a bubble id, got ${describeType(bubbleId)}`);
        const bubbleKey = `bubbleId:${id}:${bubbleId}`;
        const stored = fetch(bubbleKey);
        if (stored === undefined) {
          // Some versions keep a conversation's messages in its own `conversationMap` rather than as rows.
          const mapped =
            isRecord(composer.conversationMap) && Object.hasOwn(composer.conversationMap, bubbleId)
              ? composer.conversationMap[bubbleId]
              : undefined;
          if (mapped !== undefined) bubbles.push([`${key}.conversationMap.${bubbleId}`, mapped]);
          else turns.count("missing_bubble");
          return;
        }
        bubbles.push([bubbleKey, jsonValue(stored, bubbleKey, options.maxLineBytes)]);
      });
    } else if (Array.isArray(inline)) for (const [i, bubble] of inline.entries()) bubbles.push([`${key}.conversation.${i}`, bubble]);
    else if (headers !== undefined && headers !== null && !Array.isArray(headers))
      throw new ValueProblem(key, "fullConversationHeadersOnly", `expected an array, got ${describeType(headers)}`);
    for (const [bubbleKey, bubble] of bubbles) {
      if (bubble === null || bubble === undefined) {
        turns.count("null_bubble");
        continue;
      }
      messages += 1;
      meta.workspace ??= workspaceOf(bubble);
      if (meta.workspace === undefined) delete meta.workspace;
      takeBubble(turns, bubble, bubbleKey, tools, models);
    }
    if (meta.model === undefined) {
      const model = byUse(models)[0];
      if (model !== undefined) meta.model = model;
    }
  } catch (err) {
    if (!(err instanceof ValueProblem)) throw err;
    const field = err.field !== undefined ? `${err.key}.${err.field}` : err.key;
    return {
      kind: "quarantine",
      entry: { source, id, stage: "read", field, reason: `Cursor conversation ${id}: ${field}: ${err.message}` },
    };
  }
  const built = turns.finish();
  if (built.finalMessage !== undefined) meta.final_message = built.finalMessage;
  if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
  if (built.turns.length === 0) {
    // A chat, a draft, or a conversation whose calls never returned: well-formed, filtered with the reason.
    const counts = Object.entries(built.skipped).map(([what, n]) => `${n} ${what}`);
    const what = [`${messages} message${messages === 1 ? "" : "s"}`, ...counts].join(", ");
    meta.read_filter = {
      stage: "no-tool-calls",
      reason: `no tool call with a result in the conversation (${what}): a chat without actions`,
    };
  }
  return {
    kind: "trajectory",
    trajectory: {
      id,
      domain: options.domain ?? inferCursorDomain(tools),
      source,
      ...(built.task !== undefined ? { task: built.task } : {}),
      turns: built.turns,
      meta,
    },
  };
}

/** The folder a message was written in: its first `workspaceUris` entry, as a path when it is a file URI. */
function workspaceOf(bubble: unknown): string | undefined {
  const uri = isRecord(bubble) && Array.isArray(bubble.workspaceUris) ? bubble.workspaceUris[0] : undefined;
  if (typeof uri !== "string" || uri === "") return undefined;
  if (!uri.startsWith("file://")) return uri;
  try {
    return decodeURIComponent(uri.slice("file://".length));
  } catch {
    return uri;
  }
}

/** The conversation's own fields kept in meta (never its encryption keys or whole value). */
function composerMeta(composer: Record<string, unknown>, meta: Record<string, unknown>): void {
  if (typeof composer.name === "string" && composer.name !== "") meta.title = composer.name;
  if (typeof composer.createdAt === "number" && Number.isFinite(composer.createdAt)) {
    const date = new Date(composer.createdAt);
    if (!Number.isNaN(date.getTime())) meta.created_at = date.toISOString();
  }
  const mode = [composer.unifiedMode, composer.forceMode].find((value) => typeof value === "string" && value !== "");
  if (mode !== undefined) meta.mode = mode;
  const model = isRecord(composer.modelConfig) ? composer.modelConfig.modelName : undefined;
  if (typeof model === "string" && model !== "" && model !== "default") meta.model = model;
  const parent = isRecord(composer.subagentInfo) ? composer.subagentInfo.parentComposerId : undefined;
  if (typeof parent === "string" && parent !== "") meta.parent_composer = parent;
}

function takeBubble(turns: SessionTurns, bubble: unknown, key: string, tools: string[], models: Map<string, number>): void {
  if (!isRecord(bubble)) throw new ValueProblem(key, undefined, `expected a message object, got ${describeType(bubble)}`);
  const text = bubble.text;
  if (text !== undefined && text !== null && typeof text !== "string")
    throw new ValueProblem(key, "text", `expected a string, got ${describeType(text)}`);
  const model = isRecord(bubble.modelInfo) ? bubble.modelInfo.modelName : undefined;
  if (typeof model === "string" && model !== "" && model !== "default") models.set(model, (models.get(model) ?? 0) + 1);
  if (bubble.type === 1) {
    if (typeof text === "string") turns.user(text);
    return;
  }
  if (bubble.type !== 2) {
    turns.count(`bubble_type_${typeof bubble.type === "number" ? bubble.type : "unknown"}`);
    return;
  }
  const thinking = isRecord(bubble.thinking) ? bubble.thinking.text : undefined;
  if (typeof thinking === "string") turns.thinking(thinking);
  if (typeof text === "string") turns.text(text);
  const call = bubble.toolFormerData;
  if (call === undefined || call === null) return;
  if (!isRecord(call)) throw new ValueProblem(key, "toolFormerData", `expected an object, got ${describeType(call)}`);
  const name = call.name;
  // A tool call still being prepared names no tool yet.
  if (name === undefined || name === null || name === "") {
    turns.count("call_without_name");
    return;
  }
  if (typeof name !== "string") throw new ValueProblem(key, "toolFormerData.name", `expected a string, got ${describeType(name)}`);
  takeCall(turns, call, name, tools);
}

function takeCall(turns: SessionTurns, call: Record<string, unknown>, name: string, tools: string[]): void {
  const args = callArguments(call);
  const id = typeof call.toolCallId === "string" && call.toolCallId !== "" ? { tool_call_id: call.toolCallId } : {};
  const result = decoded(call.result);
  const additional = isRecord(call.additionalData) ? call.additionalData : {};
  const rejected =
    call.userDecision === "rejected" ||
    additional.userDecision === "rejected" ||
    additional.status === "rejected" ||
    (isRecord(result) && result.rejected === true);
  if (rejected) {
    turns.count("rejected_call");
    return;
  }
  const error = errorMessage(call.error);
  if (result === undefined && error === undefined) {
    turns.count("call_without_result");
    return;
  }
  tools.push(name);
  const terminal = TERMINAL_TOOLS.has(name);
  const command = isRecord(args) ? args.command : undefined;
  const action = terminal && typeof command === "string" ? command : `${name} ${typeof args === "string" ? args : jsonTextOr(args, "{}")}`;
  const turnMeta: Record<string, unknown> = { ...id };
  let observation: string;
  if (error !== undefined && (result === undefined || result === null || result === "")) observation = error;
  else if (terminal && isRecord(result)) {
    const exitCode = [result.exitCode, result.exitCodeV2].find((value) => typeof value === "number");
    const output = [result.output, result.outputRaw].find((value) => typeof value === "string" && value !== "") as string | undefined;
    if (exitCode !== undefined) turnMeta.exit_code = exitCode;
    if (result.isRunningInBackground === true || result.poppedOutIntoBackground === true) turnMeta.background = true;
    observation = output ?? (exitCode !== undefined && exitCode !== 0 ? `[exit code ${exitCode}, no output]` : "");
  } else observation = resultText(result);
  const open = turns.call(undefined, name, action, turnMeta);
  const failed = error !== undefined || call.status === "error" || additional.status === "error";
  answerCall(open, observation, failed);
}

/** A call's arguments: `rawArgs` (the model's JSON text), else `params`; an MCP call's unwrapped from its `tools[0].parameters`. */
function callArguments(call: Record<string, unknown>): unknown {
  const raw = decoded(call.rawArgs);
  const args = raw !== undefined && raw !== "" ? raw : (decoded(call.params) ?? {});
  if (isRecord(args) && Array.isArray(args.tools) && args.tools.length === 1 && isRecord(args.tools[0]) && "parameters" in args.tools[0]) {
    const inner = decoded(args.tools[0].parameters);
    if (isRecord(inner)) return inner;
  }
  return args;
}

/** A value stored as JSON text (possibly encoded more than once) decoded; other values as they are. */
function decoded(value: unknown): unknown {
  let current = value;
  for (let i = 0; i < 3 && typeof current === "string"; i++) {
    const trimmed = current.trim();
    if (!/^[[{"]/.test(trimmed)) break;
    try {
      current = JSON.parse(trimmed);
    } catch {
      break;
    }
  }
  return current === null ? undefined : current;
}

/** An error's message: a string, or `{clientVisibleErrorMessage | modelVisibleErrorMessage | message}`. */
function errorMessage(error: unknown): string | undefined {
  const value = decoded(error);
  if (typeof value === "string" && value !== "") return value;
  if (!isRecord(value)) return undefined;
  const message = [value.modelVisibleErrorMessage, value.clientVisibleErrorMessage, value.message].find(
    (text): text is string => typeof text === "string" && text !== "",
  );
  return message ?? jsonTextOr(value, "[error]");
}

/** A result's text: a read's contents, an edit's text for the model or its diff, other text, else its JSON. */
function resultText(result: unknown): string {
  if (typeof result === "string") return result;
  if (!isRecord(result)) return result === undefined ? "" : jsonTextOr(result, "[result]");
  for (const field of ["resultForModel", "contents", "output", "content", "text"])
    if (typeof result[field] === "string" && result[field] !== "") return result[field] as string;
  const chunks = isRecord(result.diff) && Array.isArray(result.diff.chunks) ? result.diff.chunks : undefined;
  if (chunks) {
    const diff = chunks.map((chunk) => (isRecord(chunk) && typeof chunk.diffString === "string" ? chunk.diffString : "")).join("\n");
    if (diff.trim() !== "") return diff;
  }
  return jsonTextOr(result, "[result]");
}

/** The domain of a conversation from its tools (see the comment at the top). */
export function inferCursorDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (tools.length > 0 && tools.every((tool) => TERMINAL_TOOLS.has(tool))) return "terminal";
  if (share((tool) => tool.startsWith("mcp_") || tool.startsWith("mcp-")) > 0.5) return "mcp";
  if (share((tool) => SEARCH_TOOLS.has(tool) || WEB_TOOLS.has(tool)) > 0.5)
    return share((tool) => SEARCH_TOOLS.has(tool)) > 0.5 ? "search" : "web";
  return "swe";
}
