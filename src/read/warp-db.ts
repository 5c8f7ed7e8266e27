import type { DatabaseSync, SQLOutputValue } from "node:sqlite";
import { stripVTControlCharacters } from "node:util";
import type { SourceRef, Turn } from "../core/trajectory.ts";
import {
  missingColumns,
  readSqliteSnapshot,
  type SqliteStore,
  sqliteStoreCompanions,
  sqliteStoreKind,
  tableColumns,
  unreadableDatabase,
} from "./agent-log/sqlite-snapshot.ts";
import type { Companions, Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { isRecord } from "./record-helpers.ts";

const FORMAT = "warp";

/*
 * The Warp terminal's command blocks (warpdotdev/Warp `crates/persistence`): the SQLite database
 * `warp.sqlite` (macOS `~/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application
 * Support/dev.warp.Warp-Stable/`, Linux `~/.local/state/warp-terminal/`, Windows
 * `%LOCALAPPDATA%\warp\Warp\data\`). Its `blocks` table keeps each pane's recent commands as Warp
 * shows them, one block per command: `pane_leaf_uuid`, `stylized_command` and `stylized_output`
 * (the terminal's text with its style escapes, as BLOBs), `exit_code`, `did_execute`, `pwd`,
 * `git_branch`, `shell`, `user`, `host`, `start_ts`, `completed_ts`, `block_id`, and `ai_metadata`
 * (JSON naming the agent conversation when Warp's agent ran the command).
 *
 * - **Record**: one trajectory per pane (`pane_leaf_uuid`), its blocks in the order they started.
 *   Id `warp-pane-<uuid hex>`. Domain terminal.
 * - **Action**: the block's command, its escapes taken out. **Observation**: its output, escapes
 *   taken out (`[exit code N, no output]` / `[no output]` when it printed nothing); `exit_code` →
 *   `turn.meta.exit_code`; `pwd`, `git_branch` and the times in `turn.meta`; a command Warp's agent
 *   ran → `turn.meta.agent_conversation`. A block that never ran (`did_execute` false) or has no
 *   command (the prompt before the first command) makes no turn (counted).
 * - **Meta**: `agent: "warp"`, `pane`, `shell`, `user`, `host` (the pane's first block),
 *   `skipped`.
 *
 * Warp keeps at most 100 blocks a pane and drops a pane's blocks when the pane closes: these are the
 * open panes' recent commands, not a history. Its agent conversations (`agent_tasks`, protobuf)
 * and the `commands` history (no output) are not read. Read-only, one read transaction; rows
 * iterated. A block whose command or output is over `input.max_line_bytes` quarantines its pane.
 */
export const warpDbReader: Reader = {
  name: FORMAT,
  domain: "terminal",
  description: "Warp terminal's warp.sqlite: each pane's command blocks (command, output, exit code)",
  // A binary database: told by its blocks table in `detectFormat` (warpDatabaseKind), never by a text sniff.
  sniff: () => false,
  companions: (path: string): Promise<Companions> => sqliteStoreCompanions(path, "Warp database"),
  read: readWarpDatabase,
};

const REQUIRED = ["pane_leaf_uuid", "stylized_command", "stylized_output", "exit_code"];

function schemaProblem(db: DatabaseSync): string | undefined {
  const missing = missingColumns(db, "blocks", REQUIRED);
  return missing.length > 0 ? missing.join(", ") : undefined;
}

/** Whether an SQLite file is Warp's: "sessions", "empty" (no block), or undefined. Never throws. */
export function warpDatabaseKind(path: string, head: string): Promise<"sessions" | "empty" | undefined> {
  return sqliteStoreKind(path, head, {
    schemaProblem,
    hasRows: (db) => Boolean(db.prepare("SELECT 1 FROM blocks LIMIT 1").get()),
    schemaInHead: (text) => /CREATE TABLE (?:IF NOT EXISTS )?[`"]?blocks[`"]?\s*\([^)]*\bstylized_output\b/.test(text),
  });
}

type Row = Record<string, SQLOutputValue>;

async function* readWarpDatabase(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  if (options.range && options.range.start > 0) return;
  const source: SourceRef = { uri: path, format: FORMAT };
  yield* readSqliteSnapshot(path, source, WARP_STORE, (db) => readPanes(db, source, options));
}

const WARP_STORE: SqliteStore = { name: "a Warp database", notThisStore: "not Warp's database (warp.sqlite)", schemaProblem };

function* readPanes(db: DatabaseSync, source: SourceRef, options: ReaderOptions): Generator<ReadItem> {
  try {
    const columns = tableColumns(db, "blocks");
    const optional = (column: string) => (columns.has(column) ? column : `NULL AS ${column}`);
    const sized = (column: string) =>
      `length(CAST(${column} AS BLOB)) AS ${column}_bytes, CASE WHEN length(CAST(${column} AS BLOB)) <= ? THEN ${column} END AS ${column}`;
    // Panes in the order their first block started; blocks in the order they started.
    const blocks = db.prepare(
      `SELECT rowid AS rid, hex(pane_leaf_uuid) AS pane, ${sized("stylized_command")}, ${sized("stylized_output")}, exit_code, ${[
        "did_execute",
        "pwd",
        "git_branch",
        "shell",
        "user",
        "host",
        "start_ts",
        "completed_ts",
        "block_id",
        "ai_metadata",
      ]
        .map(optional)
        .join(
          ", ",
        )} FROM blocks ORDER BY (SELECT min(coalesce(b2.start_ts, '')) FROM blocks b2 WHERE b2.pane_leaf_uuid = blocks.pane_leaf_uuid), pane, coalesce(start_ts, ''), rowid`,
    );
    let pane: Pane | undefined;
    let at = 0;
    for (const row of blocks.iterate(options.maxLineBytes, options.maxLineBytes)) {
      const key = String(row.pane);
      if (pane && pane.key !== key) {
        yield pane.finish({ ...source, row: at++ }, options);
        pane = undefined;
      }
      pane ??= new Pane(key);
      pane.add(row, options.maxLineBytes);
    }
    if (pane) yield pane.finish({ ...source, row: at }, options);
    // A database without blocks (or cut short) says so rather than yield nothing.
    else
      yield {
        kind: "quarantine",
        entry: { source, stage: "read", field: "blocks", reason: "no command block in the database: Warp keeps only open panes' blocks" },
      };
  } catch (err) {
    yield unreadableDatabase(source, err);
  }
}

/** A BLOB or text column as text, lossy UTF-8, its terminal escapes taken out. */
function terminalText(value: SQLOutputValue | undefined): string {
  const raw = typeof value === "string" ? value : value instanceof Uint8Array ? Buffer.from(value).toString("utf8") : "";
  return stripVTControlCharacters(raw).replace(/\r\n?/g, "\n");
}

const str = (value: SQLOutputValue | undefined): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

class Pane {
  readonly key: string;
  private readonly turns: Turn[] = [];
  private readonly skipped: Record<string, number> = {};
  private readonly header: Record<string, unknown> = {};
  private problem: { field: string; reason: string } | undefined;

  constructor(key: string) {
    this.key = key;
  }

  add(row: Row, maxBytes: number): void {
    if (this.problem) return;
    for (const column of ["stylized_command", "stylized_output"]) {
      const bytes = Number(row[`${column}_bytes`] ?? 0);
      if (bytes > maxBytes) {
        this.problem = {
          field: `blocks.${String(row.rid)}.${column}`,
          reason: `${bytes} bytes, over the ${maxBytes}-byte limit (input.max_line_bytes)`,
        };
        return;
      }
    }
    for (const key of ["shell", "user", "host"])
      if (this.header[key] === undefined && str(row[key]) !== undefined) this.header[key] = row[key];
    const command = terminalText(row.stylized_command).trim();
    if (row.did_execute === 0) {
      this.count("block_not_executed");
      return;
    }
    if (command === "") {
      this.count("block_without_command");
      return;
    }
    const output = terminalText(row.stylized_output).replace(/\n+$/, "");
    const exitCode =
      typeof row.exit_code === "number" ? row.exit_code : typeof row.exit_code === "bigint" ? Number(row.exit_code) : undefined;
    const meta: Record<string, unknown> = {};
    if (exitCode !== undefined) meta.exit_code = exitCode;
    for (const [column, key] of [
      ["pwd", "cwd"],
      ["git_branch", "git_branch"],
      ["start_ts", "start_time"],
      ["completed_ts", "end_time"],
      ["block_id", "block_id"],
    ] as const)
      if (str(row[column]) !== undefined) meta[key] = row[column];
    const conversation = agentConversation(row.ai_metadata);
    if (conversation !== undefined) meta.agent_conversation = conversation;
    const observation =
      output.trim() !== "" ? output : exitCode !== undefined && exitCode !== 0 ? `[exit code ${exitCode}, no output]` : "[no output]";
    this.turns.push({ action: command, observation, meta });
  }

  private count(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  finish(source: SourceRef, options: ReaderOptions): ReadItem {
    const id = `warp-pane-${this.key.toLowerCase()}`;
    if (this.problem)
      return {
        kind: "quarantine",
        entry: {
          source,
          id,
          stage: "read",
          field: this.problem.field,
          reason: `Warp pane ${id}: ${this.problem.field}: ${this.problem.reason}`,
        },
      };
    const meta: Record<string, unknown> = { agent: "warp", pane: this.key.toLowerCase(), ...this.header };
    if (Object.keys(this.skipped).length > 0) meta.skipped = this.skipped;
    if (this.turns.length === 0) {
      const counts = Object.entries(this.skipped).map(([what, n]) => `${n} ${what}`);
      meta.read_filter = { stage: "no-tool-calls", reason: `no command ran in the pane (${counts.join(", ") || "no block"})` };
    }
    return { kind: "trajectory", trajectory: { id, domain: options.domain ?? "terminal", source, turns: this.turns, meta } };
  }
}

/** The agent conversation a block's `ai_metadata` names (Warp's agent ran the command), if any. */
function agentConversation(value: SQLOutputValue | undefined): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) && typeof parsed.conversation_id === "string" && parsed.conversation_id !== ""
      ? parsed.conversation_id
      : undefined;
  } catch {
    return undefined;
  }
}
