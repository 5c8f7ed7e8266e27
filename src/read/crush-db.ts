import type { DatabaseSync, SQLOutputValue } from "node:sqlite";
import type { Domain, SourceRef } from "../core/trajectory.ts";
import { mostUsed, SessionTurns, sessionItem } from "./agent-log/session-turns.ts";
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

const FORMAT = "crush";

/*
 * Crush's session store (charmbracelet/crush; the Go OpenCode it grew from, opencode-ai/opencode,
 * kept the same): the SQLite database `.crush/crush.db` in the project (`.opencode/opencode.db` for
 * the Go OpenCode). Tables (its sqlc migrations): `sessions` (id, parent_session_id, title,
 * message_count, prompt_tokens, completion_tokens, cost, created_at, updated_at; later
 * summary_message_id, todos) and `messages` (id, session_id, role: user / assistant / tool /
 * system, parts: a JSON list, model, created_at, updated_at, finished_at; later provider,
 * is_summary_message). Each part is `{type, data}`: `text {text}`, `reasoning {thinking}`,
 * `image_url {url}`, `binary {path, mime_type, data}`, `tool_call {id, name, input: JSON text,
 * finished}`, `tool_result {tool_call_id, name, content, metadata, is_error}`, `finish {reason}`.
 * (Not the TypeScript OpenCode's `opencode.db`, whose tables are `session`, `message` and `part`:
 * src/read/opencode-db.ts.)
 *
 * - **Record**: one trajectory per session, in creation order; a sub-agent's session (a
 *   `parent_session_id`) is one of its own, naming its parent in `meta.parent_session`. Messages
 *   in the order Crush wrote them (`created_at`, then rowid); summary messages
 *   (`is_summary_message`) are counted.
 * - **Action**: an assistant `tool_call`: `bash` → its `command`; any other tool (view, edit,
 *   multiedit, write, ls, glob, grep, fetch, sourcegraph, diagnostics, an MCP server's) →
 *   `name {input}`. **Observation**: the `tool_result` with its `tool_call_id` (a tool message's),
 *   its `content` (`[binary data]` when it only holds data); `is_error` → `turn.meta.is_error`.
 * - **Thinking**, task, user messages and the final message as the other session logs
 *   (src/read/agent-log/session-turns.ts). **Id**: the session id. **Domain** (unless `--domain`):
 *   only bash → terminal; mostly MCP tools (`mcp_…`) → mcp; mostly fetch / sourcegraph → web;
 *   else swe. **Meta**: `agent: "crush"`, `title`, `model` (the most used), `provider`,
 *   `prompt_tokens`, `completion_tokens`, `cost`, `parent_session`, `skipped`, `final_message`.
 *
 * Read-only (`node:sqlite`) in one read transaction (a snapshot, its `-wal` included); rows
 * iterated, never loaded whole. A compressed or remote copy is first copied to a local file.
 * Quarantined, naming the session, the message row and the field: parts that are not a JSON list
 * of `{type}` objects, over `input.max_line_bytes`, or a call or result of the wrong shape; a
 * session without an answered call. A database whose tables are not Crush's is one entry.
 */
export const crushDbReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Crush's (and the Go OpenCode's) SQLite session store .crush/crush.db: sessions, messages with JSON parts",
  // A binary database: told by its tables in `detectFormat` (crushDatabaseKind), never by a text sniff.
  sniff: () => false,
  companions: (path: string): Promise<Companions> => sqliteStoreCompanions(path, "Crush database"),
  read: readCrushDatabase,
};

const REQUIRED = { sessions: ["id"], messages: ["id", "session_id", "role", "parts"] } as const;

/** What the database lacks of Crush's tables, in words; undefined when it has what is read here. */
function schemaProblem(db: DatabaseSync): string | undefined {
  const missing = Object.entries(REQUIRED).flatMap(([table, needed]) => missingColumns(db, table, needed));
  return missing.length > 0 ? missing.join(", ") : undefined;
}

/** The `CREATE TABLE` statements of Crush's two tables in an SQLite file's head (its schema page). */
function schemaInHead(head: string): boolean {
  return (
    /CREATE TABLE (?:IF NOT EXISTS )?[`"]?sessions[`"]?\s*\(/.test(head) &&
    /CREATE TABLE (?:IF NOT EXISTS )?[`"]?messages[`"]?\s*\([^)]*\bparts\b/.test(head)
  );
}

/** Whether an SQLite file is Crush's session store: "sessions", "empty" (the tables, no session), or undefined. Never throws. */
export function crushDatabaseKind(path: string, head: string): Promise<"sessions" | "empty" | undefined> {
  return sqliteStoreKind(path, head, {
    schemaProblem,
    hasRows: (db) => Boolean(db.prepare("SELECT 1 FROM sessions LIMIT 1").get() || db.prepare("SELECT 1 FROM messages LIMIT 1").get()),
    schemaInHead,
  });
}

/** A problem with one message row, named by the row and field. */
class PartsProblem extends Error {
  readonly rowId: string;
  readonly field: string;
  constructor(rowId: string, field: string, message: string) {
    super(message);
    this.rowId = rowId;
    this.field = field;
  }
}

type Row = Record<string, SQLOutputValue>;

const text = (value: SQLOutputValue | undefined): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const number = (value: SQLOutputValue | undefined): number | undefined =>
  typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : undefined;

async function* readCrushDatabase(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  if (options.range && options.range.start > 0) return;
  const source: SourceRef = { uri: path, format: FORMAT };
  yield* readSqliteSnapshot(path, source, CRUSH_STORE, (db) => readSessions(db, source, options));
}

/** Crush's database for readSqliteSnapshot. */
const CRUSH_STORE: SqliteStore = { name: "a Crush database", notThisStore: "not Crush's session database", schemaProblem };

/** Every session of the store, in creation order, each with its messages in the order Crush wrote them. */
function* readSessions(db: DatabaseSync, source: SourceRef, options: ReaderOptions): Generator<ReadItem> {
  try {
    const sessionColumns = tableColumns(db, "sessions");
    const messageColumns = tableColumns(db, "messages");
    const order = sessionColumns.has("created_at") ? "created_at, rowid" : "rowid";
    const messageOrder = messageColumns.has("created_at") ? "created_at, rowid" : "rowid";
    const optional = (columns: Set<unknown>, column: string) => (columns.has(column) ? column : `NULL AS ${column}`);
    const messages = db.prepare(
      `SELECT rowid AS rid, id, role, typeof(parts) AS parts_type, length(CAST(parts AS BLOB)) AS bytes, CASE WHEN length(CAST(parts AS BLOB)) <= ? THEN parts END AS parts, ${optional(messageColumns, "model")}, ${optional(messageColumns, "provider")}, ${optional(messageColumns, "is_summary_message")} FROM messages WHERE session_id = ? ORDER BY ${messageOrder}`,
    );
    const sessions = db.prepare(`SELECT * FROM sessions ORDER BY ${order}`);
    let at = 0;
    for (const session of sessions.iterate()) {
      yield readSession(session, messages.iterate(options.maxLineBytes, session.id ?? null), { ...source, row: at }, options);
      at += 1;
    }
  } catch (err) {
    yield unreadableDatabase(source, err);
  }
}

function readSession(session: Row, rows: Iterable<Row>, source: SourceRef, options: ReaderOptions): ReadItem {
  const id = text(session.id) ?? `rowid ${String(source.row)}`;
  const turns = new SessionTurns();
  const meta: Record<string, unknown> = { agent: "crush" };
  const title = text(session.title);
  if (title !== undefined) meta.title = title;
  const parent = text(session.parent_session_id);
  if (parent !== undefined) meta.parent_session = parent;
  for (const key of ["prompt_tokens", "completion_tokens", "cost"]) {
    const value = number(session[key]);
    if (value !== undefined && value > 0) meta[key] = value;
  }
  const models = new Map<string, number>();
  let messageCount = 0;
  try {
    for (const row of rows) {
      messageCount += 1;
      const rowId = text(row.id) ?? `rowid ${String(row.rid)}`;
      if (number(row.is_summary_message) === 1) {
        turns.count("summary_message");
        continue;
      }
      const parts = partsOf(row, rowId, options.maxLineBytes);
      const model = text(row.model);
      if (row.role === "assistant" && model !== undefined) models.set(model, (models.get(model) ?? 0) + 1);
      if (text(row.provider) !== undefined) meta.provider = row.provider;
      takeMessage(turns, String(row.role), parts, rowId);
    }
  } catch (err) {
    if (!(err instanceof PartsProblem)) throw err;
    const field = `messages.${err.rowId}.${err.field}`;
    return {
      kind: "quarantine",
      entry: { source, id, stage: "read", field, reason: `Crush session ${id}: message ${err.rowId}: ${err.field}: ${err.message}` },
    };
  }
  const built = turns.finish();
  const model = mostUsed(models);
  if (model !== undefined) meta.model = model;
  return sessionItem(built, {
    id,
    source,
    domain: options.domain ?? inferCrushDomain(built.tools),
    meta,
    messages: messageCount,
    field: "messages",
    prefix: `Crush session ${id}: `,
  });
}

/** A message row's parts: a JSON list of `{type, data}` objects, within `input.max_line_bytes`. */
function partsOf(row: Row, rowId: string, maxBytes: number): Record<string, unknown>[] {
  if (row.parts_type !== "text") throw new PartsProblem(rowId, "parts", `expected JSON text, got ${String(row.parts_type)}`);
  const bytes = number(row.bytes) ?? 0;
  if (bytes > maxBytes) throw new PartsProblem(rowId, "parts", `${bytes} bytes, over the ${maxBytes}-byte limit (input.max_line_bytes)`);
  let parts: unknown;
  try {
    parts = JSON.parse(row.parts as string);
  } catch (err) {
    throw new PartsProblem(rowId, "parts", `invalid JSON: ${errorText(err)}`);
  }
  if (!Array.isArray(parts)) throw new PartsProblem(rowId, "parts", `expected a JSON list of parts, got ${describeType(parts)}`);
  if (nestsTooDeep(parts)) throw new PartsProblem(rowId, "parts", `nested deeper than ${MAX_JSON_DEPTH} levels`);
  for (const [i, part] of parts.entries())
    if (!isRecord(part) || typeof part.type !== "string")
      throw new PartsProblem(rowId, `parts.${i}.type`, `expected a part with a string type, got ${describeType(part)}`);
  return parts as Record<string, unknown>[];
}

function takeMessage(turns: SessionTurns, role: string, parts: Record<string, unknown>[], rowId: string): void {
  const texts: string[] = [];
  for (const [i, part] of parts.entries()) {
    // Crush wraps each part's fields in `data`; a flat part is read the same.
    const data = isRecord(part.data) ? part.data : part;
    const at = `parts.${i}.data`;
    switch (part.type) {
      case "text":
        if (typeof data.text !== "string") throw new PartsProblem(rowId, `${at}.text`, `expected a string, got ${describeType(data.text)}`);
        if (role === "assistant") turns.text(data.text);
        else if (role === "user") texts.push(data.text);
        else turns.count(`${role}_text`);
        break;
      case "reasoning":
        if (typeof data.thinking === "string") turns.thinking(data.thinking);
        break;
      case "tool_call": {
        if (typeof data.id !== "string" || data.id === "")
          throw new PartsProblem(rowId, `${at}.id`, `expected a non-empty string, got ${describeType(data.id)}`);
        if (typeof data.name !== "string" || data.name === "")
          throw new PartsProblem(rowId, `${at}.name`, `expected a non-empty string, got ${describeType(data.name)}`);
        turns.call(data.id, data.name, crushAction(data.name, data.input));
        break;
      }
      case "tool_result": {
        if (typeof data.tool_call_id !== "string")
          throw new PartsProblem(rowId, `${at}.tool_call_id`, `expected a string, got ${describeType(data.tool_call_id)}`);
        if (data.content !== undefined && data.content !== null && typeof data.content !== "string")
          throw new PartsProblem(rowId, `${at}.content`, `expected a string, got ${describeType(data.content)}`);
        const content = typeof data.content === "string" && data.content !== "" ? data.content : data.data ? "[binary data]" : "";
        turns.answer(data.tool_call_id, content, data.is_error === true);
        break;
      }
      case "image_url":
      case "binary":
        if (role === "user") texts.push("[image]");
        else turns.count(`${role}_${part.type}`);
        break;
      case "finish":
        break;
      default:
        turns.count(`${role}_${part.type}`);
    }
  }
  if (texts.length > 0) turns.user(texts.join("\n"));
}

/** A call's action: bash's command, else the tool's name and its input (JSON text, parsed when it is JSON). */
function crushAction(name: string, input: unknown): string {
  let args: unknown = input;
  if (typeof input === "string") {
    try {
      args = input.trim() === "" ? {} : JSON.parse(input);
    } catch {
      args = input;
    }
  }
  if (name === "bash" && isRecord(args) && typeof args.command === "string") return args.command;
  return `${name} ${typeof args === "string" ? args : jsonTextOr(args ?? {}, "{}")}`;
}

/** The domain of a session from its tools (see the comment at the top). */
export function inferCrushDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (tools.length > 0 && tools.every((tool) => tool === "bash")) return "terminal";
  if (share((tool) => tool.startsWith("mcp_")) > 0.5) return "mcp";
  if (share((tool) => ["fetch", "agentic_fetch", "download", "sourcegraph", "web_fetch", "web_search"].includes(tool)) > 0.5) return "web";
  return "swe";
}
