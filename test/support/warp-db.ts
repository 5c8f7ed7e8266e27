import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/**
 * Writes a Warp terminal database (`warp.sqlite`) for tests: the `blocks` table as warpdotdev/Warp's
 * Diesel migrations leave it (`crates/persistence/migrations/2022-01-10-225517_change_block_content_to_binary`
 * and the later ALTERs: times, prompt, shell, user, host, `block_id`, `ai_metadata`), and the
 * `commands` history beside it. Commands and outputs are stored as BLOBs of the terminal's text
 * with its style escapes, as Warp serializes a block.
 */
export const WARP_DDL = `
CREATE TABLE blocks (id INTEGER PRIMARY KEY, pane_leaf_uuid BLOB NOT NULL, stylized_command BLOB NOT NULL,
  stylized_output BLOB NOT NULL, pwd TEXT, git_branch TEXT, virtual_env TEXT, conda_env TEXT,
  exit_code INTEGER NOT NULL, did_execute BOOLEAN NOT NULL, completed_ts DATETIME, start_ts DATETIME, ps1 TEXT,
  honor_ps1 BOOLEAN NOT NULL DEFAULT FALSE, shell TEXT, user TEXT, host TEXT, is_background BOOLEAN NOT NULL DEFAULT FALSE,
  rprompt TEXT, prompt_snapshot TEXT, block_id TEXT NOT NULL DEFAULT '', ai_metadata TEXT, is_local BOOLEAN,
  agent_view_visibility TEXT, git_branch_name TEXT);
CREATE TABLE commands (id INTEGER NOT NULL PRIMARY KEY, command TEXT NOT NULL, exit_code INTEGER,
  start_ts DATETIME, completed_ts DATETIME, pwd TEXT, shell TEXT, username TEXT, hostname TEXT,
  session_id BIGINTEGER, git_branch TEXT, cloud_workflow_id TEXT, workflow_command TEXT, is_agent_executed BOOLEAN);
`;

export interface WarpBlock {
  pane: string;
  command: string;
  output: string;
  exitCode?: number;
  executed?: boolean;
  start: string;
  pwd?: string;
  aiConversation?: string;
}

/** A pane's 16-byte uuid from its 32-hex name. */
const uuidBytes = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, "hex"));

export function writeWarpDb(path: string, blocks: WarpBlock[]): void {
  const db = new DatabaseSync(path);
  try {
    db.exec(WARP_DDL);
    const insert = db.prepare(
      "INSERT INTO blocks (pane_leaf_uuid, stylized_command, stylized_output, pwd, git_branch, exit_code, did_execute, start_ts, completed_ts, shell, user, host, block_id, ai_metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const history = db.prepare("INSERT INTO commands (command, exit_code, start_ts, pwd, shell) VALUES (?, ?, ?, ?, ?)");
    for (const [i, block] of blocks.entries()) {
      const ai = block.aiConversation
        ? JSON.stringify({ requested_command_action_id: `action-${i}`, conversation_id: block.aiConversation })
        : null;
      insert.run(
        uuidBytes(block.pane),
        new TextEncoder().encode(block.command),
        new TextEncoder().encode(block.output),
        block.pwd ?? "/home/dev/notes",
        "main",
        block.exitCode ?? 0,
        block.executed === false ? 0 : 1,
        block.start,
        block.start,
        "zsh",
        "dev",
        "laptop",
        `precmd-${i}`,
        ai,
      );
      if (block.command !== "") history.run(block.command, block.exitCode ?? 0, block.start, block.pwd ?? "/home/dev/notes", "zsh");
    }
  } finally {
    db.close();
  }
}

/** A small database's bytes (two panes): the fuzz campaign's seed for the warp reader. */
export function sampleWarpDbBytes(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "lwm-warp-seed-"));
  try {
    const path = join(dir, "warp.sqlite");
    writeWarpDb(path, [
      { pane: "5a1b2c3d4e5f60718293a4b5c6d7e8f9", command: "", output: "", start: "2026-05-01 09:00:00" },
      {
        pane: "5a1b2c3d4e5f60718293a4b5c6d7e8f9",
        command: "ls",
        output: "\u001b[01;34mdocs\u001b[0m  notes.md\n",
        start: "2026-05-01 09:00:05",
      },
      { pane: "5a1b2c3d4e5f60718293a4b5c6d7e8f9", command: "wc -l notes.md", output: "12 notes.md\n", start: "2026-05-01 09:00:09" },
      {
        pane: "0f9e8d7c6b5a49382716a5b4c3d2e1f0",
        command: "git status --short",
        output: " M notes.md\n",
        start: "2026-05-01 10:00:00",
        aiConversation: "conv-1",
      },
    ]);
    return new Uint8Array(readFileSync(path));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
