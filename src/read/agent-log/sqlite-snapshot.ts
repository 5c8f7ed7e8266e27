import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { pipeline } from "node:stream/promises";
import type { SourceRef } from "../../core/trajectory.ts";
import { detectCompression, openDecompressed } from "../../io/open-input.ts";
import { isRemoteUri } from "../../io/remote-uri.ts";
import { baseName, sideFileSize } from "../../io/side-files.ts";
import type { Companions, ReadItem } from "../reader.ts";

/*
 * What the readers of agents' SQLite session stores share (OpenCode's opencode.db, Crush's
 * crush.db): a local copy to open, read-only, and one read transaction around the whole read, so
 * the sessions are one snapshot however the agent writes meanwhile.
 */

const SQLITE_MAGIC = "SQLite format 3\u0000";

/** Does the (decoded) head start an SQLite database file? */
export function isSqliteHead(head: string): boolean {
  return head.startsWith(SQLITE_MAGIC);
}

/** node:sqlite, loaded by the first database opened: the reader registry is imported by every stage process. */
const sqlite = () => import("node:sqlite");

/** A database file opened read-only (waiting up to 5 s for a writer's lock). */
export async function openReadOnly(path: string): Promise<DatabaseSync> {
  const { DatabaseSync } = await sqlite();
  return new DatabaseSync(path, { readOnly: true, timeout: 5_000 });
}

/** The message of an error SQLite (or Node) raised. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A local, uncompressed copy of an SQLite database to open: the file itself, or a temporary copy,
 * with the `-wal` beside a remote one (removed by `dispose`).
 */
export async function localSqliteCopy(path: string): Promise<{ file: string; dispose: () => Promise<void> }> {
  if (!isRemoteUri(path) && (await detectCompression(path)) === "none") return { file: path, dispose: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), "lwm-sqlite-store-"));
  const dispose = () => rm(dir, { recursive: true, force: true });
  const file = join(dir, "store.db");
  try {
    await pipeline((await openDecompressed(path)).stream, createWriteStream(file));
    if (isRemoteUri(path) && (await sideFileSize(`${path}-wal`)) !== undefined)
      await pipeline((await openDecompressed(`${path}-wal`)).stream, createWriteStream(`${file}-wal`));
  } catch (err) {
    await dispose();
    throw err;
  }
  return { file, dispose };
}

/** One agent's session store, for readSqliteSnapshot. */
export interface SqliteStore {
  /** The database in the reasons, with its article: "an OpenCode database". */
  name: string;
  /** The reason's start when the tables are not this agent's: "not OpenCode's session database". */
  notThisStore: string;
  /** What the database lacks of the agent's tables, in words; undefined when it has what is read. */
  schemaProblem(db: DatabaseSync): string | undefined;
  /** Said after the reason when the schema cannot be read at all (what to give instead). */
  unreadableHint?: string;
  /** Said after a schema problem, from the local copy read (e.g. a missing -wal). */
  schemaHint?(path: string, copy: string): Promise<string>;
}

/**
 * Reads a session store as one snapshot: copy it local if it is compressed or remote, open it
 * read-only, begin one read transaction, check its schema, then yield what `read` yields from
 * it. The database is closed and a temporary copy removed however the read ends. A store that
 * cannot be copied, opened or is not the agent's is one quarantine entry naming why.
 */
export async function* readSqliteSnapshot(
  path: string,
  source: SourceRef,
  store: SqliteStore,
  read: (db: DatabaseSync) => Iterable<ReadItem>,
): AsyncGenerator<ReadItem> {
  const wholeFile = (reason: string): ReadItem => ({ kind: "quarantine", entry: { source, stage: "read", reason } });
  let copy: Awaited<ReturnType<typeof localSqliteCopy>>;
  try {
    copy = await localSqliteCopy(path);
  } catch (err) {
    yield wholeFile(`${store.name} that could not be copied to a local file to be read: ${errorText(err)}`);
    return;
  }
  let db: DatabaseSync | undefined;
  try {
    let problem: string | undefined;
    try {
      db = await openReadOnly(copy.file);
      // One read transaction: the sessions as one snapshot, however the agent writes meanwhile.
      db.exec("BEGIN");
      problem = store.schemaProblem(db);
    } catch (err) {
      yield wholeFile(
        `an SQLite database whose schema cannot be read (damaged, or not a database): ${errorText(err)}${store.unreadableHint ?? ""}`,
      );
      return;
    }
    if (problem !== undefined) {
      yield wholeFile(`${store.notThisStore}: ${problem}${(await store.schemaHint?.(path, copy.file)) ?? ""}`);
      return;
    }
    yield* read(db);
  } finally {
    try {
      db?.close();
    } catch {
      // Closing a damaged database may fail: nothing is left to read.
    }
    await copy.dispose();
  }
}

/** A table's column names; empty when the database has no such table. */
export function tableColumns(db: DatabaseSync, table: string): Set<unknown> {
  return new Set(
    db
      .prepare("SELECT name FROM pragma_table_info(?)")
      .all(table)
      .map((row) => row.name),
  );
}

/** What a table lacks of the columns read, in words (`no table \`t\``, `no column \`t.c\``); empty when it has them all. */
export function missingColumns(db: DatabaseSync, table: string, needed: readonly string[]): string[] {
  const have = tableColumns(db, table);
  if (have.size === 0) return [`no table \`${table}\``];
  return needed.filter((column) => !have.has(column)).map((column) => `no column \`${table}.${column}\``);
}

/** A store's companions: its `-wal` and `-shm`, the task sized by the database and its `-wal`. */
export async function sqliteStoreCompanions(path: string, label: string): Promise<Companions> {
  const own = (await sideFileSize(path)) ?? 0;
  const wal = (await sideFileSize(`${path}-wal`)) ?? 0;
  return { dirs: [], files: [`${path}-wal`, `${path}-shm`], bytes: own + wal, label: `${label} ${baseName(path)}` };
}

/**
 * Whether an SQLite file is one agent's store: "sessions", "empty" (its tables, no rows), or
 * undefined. A local uncompressed file is opened and its schema read; a compressed or remote one is
 * told by the `CREATE TABLE` statements in its head. Never throws.
 */
export async function sqliteStoreKind(
  path: string,
  head: string,
  store: { schemaProblem(db: DatabaseSync): string | undefined; hasRows(db: DatabaseSync): boolean; schemaInHead(head: string): boolean },
): Promise<"sessions" | "empty" | undefined> {
  if (!isSqliteHead(head)) return undefined;
  try {
    if (!isRemoteUri(path) && (await detectCompression(path)) === "none") {
      const db = await openReadOnly(path);
      try {
        if (store.schemaProblem(db) !== undefined) return undefined;
        return store.hasRows(db) ? "sessions" : "empty";
      } finally {
        db.close();
      }
    }
  } catch {
    // Damaged or unreadable: told by its head; reading it reports the damage.
  }
  return store.schemaInHead(head) ? "sessions" : undefined;
}

/** The one entry for a database whose rows stop reading part way (a damaged file). */
export function unreadableDatabase(source: SourceRef, err: unknown): ReadItem {
  return {
    kind: "quarantine",
    entry: { source, stage: "read", reason: `the database could not be read on (a damaged file?): ${errorText(err)}` },
  };
}
