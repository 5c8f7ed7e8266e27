import { closeSync, openSync, readSync } from "node:fs";
import type { DatabaseSync, SQLOutputValue, StatementSync } from "node:sqlite";
import type { SourceRef } from "../core/trajectory.ts";
import { detectCompression } from "../io/open-input.ts";
import { isRemoteUri } from "../io/remote-uri.ts";
import { baseName, sideFileSize } from "../io/side-files.ts";
import { errorText, isSqliteHead, openReadOnly, readSqliteSnapshot, type SqliteStore } from "./agent-log/sqlite-snapshot.ts";
import { checkInfo, checkPart, OpenCodeProblem, OpenCodeSessionBuilder } from "./opencode-session.ts";
import { normalized } from "./opencode-storage.ts";
import type { Companions, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, FieldError, isRecord } from "./record-helpers.ts";

/*
 * OpenCode ≥ 1.2's session store: the SQLite database `~/.local/share/opencode/opencode.db`
 * (Drizzle ORM). Its schema, from OpenCode's source:
 *
 * - `packages/opencode/src/session/session.sql.ts` (anomalyco/opencode @ 063e8306d9895af9bdd175306cfa4fa3291fd83a):
 *   `session` (id, project_id, parent_id, slug, directory, title, version, share_url, summary_*,
 *   revert (JSON), permission (JSON), time_created, time_updated, time_compacting, time_archived;
 *   later workspace_id, path, agent, model, cost, tokens_*); `message` (id, session_id,
 *   time_created, time_updated, data: the MessageV2 info as JSON without `id` / `sessionID`);
 *   `part` (id, message_id, session_id, time_created, time_updated, data: the MessageV2 part as
 *   JSON without `id` / `sessionID` / `messageID`).
 * - the first migration, `packages/opencode/migration/20260127222353_familiar_lady_ursula/migration.sql`
 *   (read in the mirror panyw5/opencode @ 1518bd8345d923d17b0be88e1a805da2e7f595d8, and the same
 *   DDL in exa-labs/opencoded @ b322efdf74cedade186b50effbadd4bb7138de18): the tables above, every
 *   `data` column `text NOT NULL`; test/fixtures/generated/opencode-db/make-db.ts writes that DDL.
 * - `packages/opencode/src/storage/json-migration.ts` (anomalyco/opencode @ 062aa8c024a00b7348dd3160c0b4fbbfce074ee2),
 *   which moved the storage folder (src/read/opencode-storage.ts) into the database: a message
 *   file's JSON less `id` and `sessionID` became `message.data`, a part file's less `id`,
 *   `messageID` and `sessionID` `part.data`, ids taken from the file paths; a session file's fields
 *   became the session's columns (`parentID` → parent_id, `time.created` → time_created, …).
 * - `Session.fromRow` and `getPart` in `packages/opencode/src/session/index.ts` read them back:
 *   `{...row.data, id: row.id, sessionID: row.session_id(, messageID: row.message_id)}`.
 *
 * So a session read here is the `{info, messages: [{info, parts}]}` an `opencode export` writes,
 * rebuilt row by row and handed to the same turn builder (src/read/opencode-session.ts): one
 * trajectory per session (a task's child session is one of its own, `parent_id` naming its
 * parent), sessions in creation order (`time_created`, then id), messages as OpenCode lists them
 * (`time_created`, id), parts by id. The source names the session's place in that order (`row`).
 *
 * The file is opened read-only (`node:sqlite`) inside one read transaction, so a database OpenCode
 * is writing to is read as one snapshot; what OpenCode wrote to `opencode.db-wal` beside it and
 * has not checkpointed yet is read too (SQLite reads the WAL; it needs to be able to create or
 * open `opencode.db-shm` there). Rows are iterated (`StatementSync.iterate`), never loaded whole:
 * memory holds one session's turns. An object in S3 or on the Hub, or a compressed copy
 * (`opencode.db.zst`), is first copied, decompressed, to a temporary file (with a `-wal` beside a
 * remote one), removed after the read.
 *
 * Quarantined, naming the session, the table and row id and the field (`message.msg_….data.role`):
 * a row whose `data` is not JSON text, is over `input.max_line_bytes`, or whose message / part
 * has the wrong shape (the same checks as an export's), a session column of the wrong type, a
 * damaged page met while reading a session. A database whose schema cannot be read, or that has
 * no OpenCode tables, is one entry for the file; message rows whose session row is missing, one
 * per session id. A database with no session is no record.
 */

const FORMAT = "opencode";
const TABLES = ["session", "message", "part"] as const;
/** The columns read from each table (present since the first migration). */
const REQUIRED: Record<(typeof TABLES)[number], string[]> = {
  session: ["id", "time_created"],
  message: ["id", "session_id", "time_created", "data"],
  part: ["id", "message_id", "data"],
};

/** The schema's `CREATE TABLE` of each OpenCode table, as SQLite keeps it in `sqlite_master` (near the file's start). */
function schemaInHead(head: string): boolean {
  return (
    TABLES.every((table) => new RegExp(`CREATE TABLE (?:IF NOT EXISTS )?[\`"]?${table}[\`"]?\\s*\\(`).test(head)) &&
    /[`"]?message_id[`"]? text/.test(head)
  );
}

/** What the database lacks of OpenCode's schema, in words; undefined when it has the tables and columns read here. */
function schemaProblem(db: DatabaseSync): string | undefined {
  const columns = db.prepare("SELECT name FROM pragma_table_info(?)");
  const missing: string[] = [];
  for (const table of TABLES) {
    const have = new Set(columns.all(table).map((row) => row.name));
    if (have.size === 0) missing.push(`no table \`${table}\``);
    else for (const column of REQUIRED[table]) if (!have.has(column)) missing.push(`no column \`${table}.${column}\``);
  }
  return missing.length > 0 ? missing.join(", ") : undefined;
}

/**
 * Whether an SQLite file is OpenCode's session database: "sessions", "empty" (OpenCode's tables,
 * no row in them, and the file checks out whole), "unconfirmed" (a compressed or remote file whose
 * head shows no OpenCode table: its schema may lie further in), or undefined. A local
 * uncompressed file is opened and its schema read; one that cannot be (damaged), a compressed one
 * or a remote one is told by the `CREATE TABLE` statements in its head. Never throws.
 */
export async function openCodeDatabaseKind(path: string, head: string): Promise<"sessions" | "empty" | "unconfirmed" | undefined> {
  if (!isSqliteHead(head)) return undefined;
  let local = true;
  try {
    local = !isRemoteUri(path) && (await detectCompression(path)) === "none";
    if (local) {
      const db = await openReadOnly(path);
      try {
        if (schemaProblem(db) !== undefined) return undefined;
        if (db.prepare("SELECT 1 FROM session LIMIT 1").get() || db.prepare("SELECT 1 FROM message LIMIT 1").get()) return "sessions";
        return quickCheck(db) === undefined ? "empty" : "sessions";
      } finally {
        db.close();
      }
    }
  } catch {
    // A damaged or unreadable database: told by its head; reading it reports the damage.
  }
  return schemaInHead(head) ? "sessions" : local ? undefined : "unconfirmed";
}

/** SQLite's `quick_check`: undefined when the file is sound, else what it found (the first lines). */
function quickCheck(db: DatabaseSync): string | undefined {
  const rows = db.prepare("PRAGMA quick_check(5)").all();
  const found = rows.map((row) => String(Object.values(row)[0]));
  return found.length === 1 && found[0] === "ok" ? undefined : found.join("; ");
}

/** A database's `-wal` and `-shm` files are its own: a glob over OpenCode's data folder reads the database once. */
export async function databaseCompanions(path: string): Promise<Companions> {
  const file = normalized(path);
  const own = (await sideFileSize(file)) ?? 0;
  const wal = (await sideFileSize(`${file}-wal`)) ?? 0;
  return { dirs: [], files: [`${file}-wal`, `${file}-shm`], bytes: own + wal, label: `OpenCode database ${baseName(path)}` };
}

/** A problem with one row: its table, its id (or `rowid N`), the field (a column, or `data.<path>`) and why. */
class RowProblem extends FieldError {
  readonly table: string;
  readonly rowId: string;
  constructor(table: string, rowId: string, field: string | undefined, message: string) {
    super(field, message);
    this.table = table;
    this.rowId = rowId;
  }
}

type Row = Record<string, SQLOutputValue>;

/** A value as JSON sees it: SQLite integers are read as BigInt (a damaged one may not fit a number). */
function plain(value: SQLOutputValue): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

function sqlType(value: SQLOutputValue): string {
  if (value === null) return "null";
  if (value instanceof Uint8Array) return "a blob";
  return typeof value === "string" ? "text" : typeof value === "number" ? "a real" : "an integer";
}

/** A row's id column, or `rowid N` naming it when the id is not text (a damaged row). */
function rowIdOf(row: Row): string {
  return typeof row.id === "string" && row.id !== "" ? row.id : `rowid ${String(row.rid)}`;
}

/** A row's `data` column parsed: a JSON object, within `input.max_line_bytes`. */
function rowData(table: string, row: Row, maxBytes: number): Record<string, unknown> {
  const id = rowIdOf(row);
  if (typeof row.id !== "string" || row.id === "")
    throw new RowProblem(table, id, "id", `expected a text id, got ${sqlType(row.id ?? null)}`);
  const bytes = Number(row.bytes ?? 0);
  if (row.data_type !== "text")
    throw new RowProblem(
      table,
      id,
      "data",
      `expected JSON text, got ${row.data_type === "null" ? "null" : `${String(row.data_type)} data`}`,
    );
  if (bytes > maxBytes) throw new RowProblem(table, id, "data", `${bytes} bytes, over the ${maxBytes}-byte limit (input.max_line_bytes)`);
  let data: unknown;
  try {
    data = JSON.parse(row.data as string);
  } catch (err) {
    throw new RowProblem(table, id, "data", `invalid JSON: ${errorText(err)}`);
  }
  if (!isRecord(data)) throw new RowProblem(table, id, "data", `expected a JSON object, got ${describeType(data)}`);
  return data;
}

/** An export-shape check (checkInfo, checkPart) of a row's data, its problem named in the row. */
function checked<T>(table: string, row: Row, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof OpenCodeProblem)) throw err;
    const field = err.field === "info" || err.field === "part" ? "data" : `data.${err.field}`;
    throw new RowProblem(table, rowIdOf(row), field, err.message.slice(err.field.length + 2));
  }
}

/** The session row as OpenCode's `Session.Info` (`Session.fromRow`), as far as the turn builder reads it. */
function sessionInfo(row: Row, id: string): Record<string, unknown> {
  const text = (column: string): string | undefined => {
    const value = row[column];
    if (value === null || value === undefined) return undefined;
    if (typeof value !== "string") throw new RowProblem("session", id, column, `expected text, got ${sqlType(value)}`);
    return value;
  };
  let revert: unknown;
  const revertText = text("revert");
  if (revertText !== undefined) {
    try {
      revert = JSON.parse(revertText);
    } catch (err) {
      throw new RowProblem("session", id, "revert", `invalid JSON: ${errorText(err)}`);
    }
    if (revert !== null && !isRecord(revert))
      throw new RowProblem("session", id, "revert", `expected a JSON object, got ${describeType(revert)}`);
  }
  const share = text("share_url");
  const info: Record<string, unknown> = {
    id,
    slug: text("slug"),
    projectID: text("project_id"),
    workspaceID: text("workspace_id"),
    directory: text("directory"),
    path: text("path"),
    parentID: text("parent_id"),
    title: text("title"),
    version: text("version"),
    share: share ? { url: share } : undefined,
    revert: revert ?? undefined,
    time: {
      created: plain(row.time_created ?? null),
      updated: plain(row.time_updated ?? null),
      ...(row.time_compacting != null ? { compacting: plain(row.time_compacting) } : {}),
      ...(row.time_archived != null ? { archived: plain(row.time_archived) } : {}),
    },
  };
  for (const key of Object.keys(info)) if (info[key] === undefined) delete info[key];
  return info;
}

interface Statements {
  session: StatementSync;
  messages: StatementSync;
  parts: StatementSync;
}

const DATA =
  "typeof(data) AS data_type, length(CAST(data AS BLOB)) AS bytes, CASE WHEN length(CAST(data AS BLOB)) <= ? THEN data END AS data";

/** One session: its row, its messages and their parts rebuilt as an export's, through the turn builder. */
function readSession(db: Statements, rid: bigint | number, at: number, path: string, options: ReaderOptions): ReadItem {
  const source: SourceRef = { uri: path, format: FORMAT, row: at };
  const builder = new OpenCodeSessionBuilder();
  let id = `rowid ${String(rid)}`;
  try {
    const row = db.session.get(rid);
    if (!row) throw new RowProblem("session", id, undefined, "the row went missing while the database was read");
    if (typeof row.id !== "string" || row.id === "")
      throw new RowProblem("session", id, "id", `expected a text id, got ${sqlType(row.id ?? null)}`);
    id = row.id;
    builder.sessionInfo(sessionInfo(row, id));
    for (const message of db.messages.iterate(options.maxLineBytes, id)) {
      const data = rowData("message", message, options.maxLineBytes);
      // Checked by rowData: a text id.
      const messageId = message.id as string;
      const info = checked("message", message, () => checkInfo({ ...data, id: messageId, sessionID: id }, ""));
      const parts: Record<string, unknown>[] = [];
      for (const part of db.parts.iterate(options.maxLineBytes, messageId)) {
        const value = rowData("part", part, options.maxLineBytes);
        parts.push(checked("part", part, () => checkPart({ ...value, id: part.id, sessionID: id, messageID: messageId }, "")));
      }
      builder.message({ info, parts });
    }
  } catch (err) {
    const entry =
      err instanceof RowProblem
        ? {
            ...(err.field !== undefined ? { field: `${err.table}.${err.rowId}.${err.field}` } : {}),
            reason: `OpenCode session ${id}: table ${err.table}, row ${err.rowId}: ${err.field !== undefined ? `${err.field}: ` : ""}${err.message}`,
          }
        : { reason: `OpenCode session ${id}: the database could not be read on (a damaged file?): ${errorText(err)}` };
    return { kind: "quarantine", entry: { source, id, stage: "read", ...entry } };
  }
  const item = builder.finish(source, id, options.domain);
  if (item.kind === "trajectory") item.trajectory.source = source;
  return item;
}

/** Is the file in WAL mode (header bytes 18–19 = 2)? Then the latest writes may be in its `-wal` file. */
async function walHint(path: string, file: string): Promise<string> {
  try {
    const fd = openSync(file, "r");
    const header = Buffer.alloc(20);
    try {
      readSync(fd, header, 0, 20, 0);
    } finally {
      closeSync(fd);
    }
    // Opening a WAL database creates an empty -wal (and -shm) beside it when there is none.
    if (header[18] !== 2 || ((await sideFileSize(`${normalized(path)}-wal`)) ?? 0) > 0) return "";
    return ` (the file is in WAL mode and no ${baseName(path)}-wal is beside it: OpenCode keeps its latest writes there until a checkpoint; copy both files, or quit OpenCode before copying)`;
  } catch {
    return "";
  }
}

/**
 * The sessions of an OpenCode database, one item each (see the comment at the top), then one
 * quarantine entry per session whose message rows have no session row.
 */
export function readOpenCodeDatabase(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  return readSqliteSnapshot(path, { uri: path, format: FORMAT }, OPENCODE_STORE, (db) => readSessions(db, path, options));
}

/** OpenCode's database for readSqliteSnapshot: its tables, and what to give when it cannot be read. */
const OPENCODE_STORE: SqliteStore = {
  name: "an OpenCode database",
  notThisStore: "not OpenCode's session database",
  schemaProblem,
  unreadableHint: "; give a whole copy of the file (with its -wal, if any), or export its sessions with `opencode export <sessionID>`",
  schemaHint: walHint,
};

function* readSessions(db: DatabaseSync, path: string, options: ReaderOptions): Generator<ReadItem> {
  const source: SourceRef = { uri: path, format: FORMAT };
  const statements: Statements = {
    session: db.prepare("SELECT * FROM session WHERE rowid = ?"),
    messages: db.prepare(`SELECT rowid AS rid, id, ${DATA} FROM message WHERE session_id = ? ORDER BY time_created, id, rowid`),
    parts: db.prepare(`SELECT rowid AS rid, id, ${DATA} FROM part WHERE message_id = ? ORDER BY id, rowid`),
  };
  for (const statement of Object.values(statements)) statement.setReadBigInts(true);
  const seen = new Set<string>();
  let at = 0;
  let last: string | undefined;
  try {
    const order = db.prepare("SELECT rowid AS rid, id FROM session ORDER BY time_created, id, rowid");
    order.setReadBigInts(true);
    for (const row of order.iterate()) {
      if (typeof row.id === "string") seen.add(row.id);
      const item = readSession(statements, row.rid as bigint, at, path, options);
      at += 1;
      last = typeof row.id === "string" ? row.id : last;
      yield item;
    }
  } catch (err) {
    const after = last === undefined ? "" : ` after session ${last}`;
    yield {
      kind: "quarantine",
      entry: { source, stage: "read", reason: `the sessions${after} could not be read (a damaged database?): ${errorText(err)}` },
    };
  }
  let orphans = 0;
  try {
    const bySession = db.prepare("SELECT session_id, count(*) AS n FROM message GROUP BY session_id ORDER BY session_id");
    for (const row of bySession.iterate()) {
      const id = typeof row.session_id === "string" ? row.session_id : undefined;
      if (id !== undefined && seen.has(id)) continue;
      orphans += 1;
      yield {
        kind: "quarantine",
        entry: {
          source,
          ...(id !== undefined ? { id } : {}),
          stage: "read",
          field: "message.session_id",
          reason: `OpenCode session ${id ?? String(row.session_id)}: ${String(row.n)} message row(s) but no readable session row (a damaged or partly copied database)`,
        },
      };
    }
  } catch (err) {
    yield {
      kind: "quarantine",
      entry: { source, stage: "read", reason: `the message table could not be read (a damaged database?): ${errorText(err)}` },
    };
    return;
  }
  if (at > 0 || orphans > 0) return;
  // No session at all: a fresh OpenCode's database, or one whose damage hides its rows.
  let damage: string | undefined;
  try {
    damage = quickCheck(db);
  } catch (err) {
    damage = errorText(err);
  }
  if (damage !== undefined)
    yield {
      kind: "quarantine",
      entry: { source, stage: "read", reason: `no session could be read, and the database is damaged: ${damage}` },
    };
}
