import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { zstdCompressSync } from "node:zlib";

/**
 * Writes a Zed threads database (`threads/threads.db`) for tests: the table zed-industries/zed
 * `crates/agent/src/db.rs` creates, with the columns its later migrations add (`parent_id`,
 * `folder_paths`, `folder_paths_order`, `created_at`); each thread's JSON zstd-compressed
 * (`data_type` "zstd", what Zed writes) unless the thread asks for plain `json`.
 */
export const ZED_DDL = `
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data_type TEXT NOT NULL,
    data BLOB NOT NULL
);
ALTER TABLE threads ADD COLUMN parent_id TEXT;
ALTER TABLE threads ADD COLUMN folder_paths TEXT;
ALTER TABLE threads ADD COLUMN folder_paths_order TEXT;
ALTER TABLE threads ADD COLUMN created_at TEXT;
`;

export interface ZedThreadRow {
  id: string;
  summary: string;
  createdAt: string;
  /** The thread's JSON (an object is serialized), or raw bytes to store as they are. */
  thread: unknown;
  dataType?: "zstd" | "json" | string;
  parent?: string;
}

export function writeZedDb(path: string, rows: ZedThreadRow[]): void {
  const db = new DatabaseSync(path);
  try {
    db.exec(ZED_DDL);
    const insert = db.prepare(
      "INSERT INTO threads (id, summary, updated_at, data_type, data, parent_id, folder_paths, folder_paths_order, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const row of rows) {
      const dataType = row.dataType ?? "zstd";
      const json = row.thread instanceof Uint8Array ? row.thread : new TextEncoder().encode(JSON.stringify(row.thread));
      const data = dataType === "zstd" && !(row.thread instanceof Uint8Array) ? zstdCompressSync(json) : json;
      insert.run(row.id, row.summary, row.createdAt, dataType, data, row.parent ?? null, "/home/dev/shop", "0", row.createdAt);
    }
  } finally {
    db.close();
  }
}

/** DbThread (version 0.3.0) messages, serde's externally tagged form. */
export const db3 = {
  user: (id: string, text: string) => ({ User: { id, content: [{ Text: text }] } }),
  agent: (content: unknown[], results: Record<string, unknown> = {}) => ({
    Agent: { content, tool_results: results, reasoning_details: null },
  }),
  text: (text: string) => ({ Text: text }),
  thinking: (text: string) => ({ Thinking: { text, signature: "sig" } }),
  use: (id: string, name: string, input: unknown, wrapped = true) => ({
    ToolUse: {
      id,
      name,
      raw_input: JSON.stringify(input),
      input: wrapped ? { type: "json", value: input } : input,
      is_input_complete: true,
      thought_signature: null,
    },
  }),
  result: (id: string, name: string, text: string, isError = false) => ({
    tool_use_id: id,
    tool_name: name,
    is_error: isError,
    content: [{ Text: text }],
    output: text,
  }),
};

/** A small database's bytes (a 0.3.0 thread and a 0.2.0 one): the fuzz campaign's seed for the zed reader. */
export function sampleZedDbBytes(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "lwm-zed-seed-"));
  try {
    const path = join(dir, "threads.db");
    writeZedDb(path, [
      {
        id: "0b1c2d3e-0000-4000-8000-000000000001",
        summary: "count lines",
        createdAt: "2026-05-01T09:00:00Z",
        thread: {
          version: "0.3.0",
          title: "count lines",
          updated_at: "2026-05-01T09:01:00Z",
          messages: [
            db3.user("u1", "how many lines in notes.md?"),
            db3.agent([db3.text("Counting."), db3.use("t1", "terminal", { command: "wc -l notes.md", cd: "notes" })], {
              t1: db3.result("t1", "terminal", "```\n12 notes.md\n```"),
            }),
            db3.agent([db3.text("12 lines.")]),
          ],
          model: { provider: "anthropic", model: "claude-sonnet-4-5" },
        },
      },
      {
        id: "0b1c2d3e-0000-4000-8000-000000000002",
        summary: "read it",
        createdAt: "2026-05-01T10:00:00Z",
        dataType: "json",
        thread: {
          version: "0.2.0",
          summary: "read it",
          updated_at: "2026-05-01T10:01:00Z",
          messages: [
            { id: 0, role: "user", segments: [{ type: "text", text: "show notes.md" }], tool_uses: [], tool_results: [], context: "" },
            {
              id: 1,
              role: "assistant",
              segments: [{ type: "text", text: "Reading." }],
              tool_uses: [{ id: "t2", name: "read_file", input: { path: "notes/notes.md" } }],
              tool_results: [{ tool_use_id: "t2", is_error: false, content: { Text: "# Notes" }, output: null }],
              context: "",
            },
          ],
        },
      },
    ]);
    return new Uint8Array(readFileSync(path));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
