import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/**
 * Writes a Crush session database (`.crush/crush.db`) for tests. The DDL is the one Crush's sqlc
 * migrations create, inherited from the Go OpenCode (opencode-ai/opencode
 * `internal/db/migrations/20250424200609_initial.sql`: sessions, files, messages), with the columns
 * Crush added later (`sessions.summary_message_id`, `messages.provider`, `messages.is_summary_message`).
 * Parts are written as Crush marshals them: `[{"type": …, "data": {…}}]`.
 */
export const CRUSH_DDL = `
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    prompt_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens>= 0),
    cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
    updated_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    summary_message_id TEXT
);
CREATE TABLE IF NOT EXISTS files (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    version TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    UNIQUE(path, session_id, version)
);
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL default '[]',
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    provider TEXT,
    is_summary_message INTEGER DEFAULT 0 NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
`;

export interface CrushSession {
  id: string;
  title: string;
  parent?: string;
  createdAt: number;
  messages: { id: string; role: string; parts: unknown; model?: string; summary?: boolean }[];
}

export function writeCrushDb(path: string, sessions: CrushSession[]): void {
  const db = new DatabaseSync(path);
  try {
    db.exec(CRUSH_DDL);
    const session = db.prepare(
      "INSERT INTO sessions (id, parent_session_id, title, message_count, prompt_tokens, completion_tokens, cost, updated_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const message = db.prepare(
      "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider, is_summary_message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const s of sessions) {
      session.run(s.id, s.parent ?? null, s.title, s.messages.length, 1200, 340, 0.0123, s.createdAt + 60, s.createdAt);
      for (const [i, m] of s.messages.entries()) {
        const at = s.createdAt + i;
        const parts = typeof m.parts === "string" ? m.parts : JSON.stringify(m.parts);
        message.run(m.id, s.id, m.role, parts, m.model ?? null, at, at, at, m.model ? "anthropic" : null, m.summary ? 1 : 0);
      }
    }
  } finally {
    db.close();
  }
}

/** Crush's part wrappers. */
export const part = {
  text: (text: string) => ({ type: "text", data: { text } }),
  reasoning: (thinking: string) => ({ type: "reasoning", data: { thinking, signature: "" } }),
  call: (id: string, name: string, input: Record<string, unknown>) => ({
    type: "tool_call",
    data: { id, name, input: JSON.stringify(input), type: "", finished: true },
  }),
  result: (toolCallId: string, name: string, content: string, isError = false) => ({
    type: "tool_result",
    data: { tool_call_id: toolCallId, name, content, metadata: "", is_error: isError },
  }),
  finish: (reason: string) => ({ type: "finish", data: { reason, time: 1764590400 } }),
};

/** A small store's bytes (two sessions, calls and results, a sub-agent): the fuzz campaign's seed for the crush reader. */
export function sampleCrushDbBytes(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "lwm-crush-seed-"));
  try {
    const path = join(dir, "crush.db");
    writeCrushDb(path, [
      {
        id: "s1",
        title: "count lines",
        createdAt: 1764590000,
        messages: [
          { id: "m1", role: "user", parts: [part.text("how many lines in a.txt?")] },
          { id: "m2", role: "assistant", model: "m", parts: [part.reasoning("wc"), part.call("c1", "bash", { command: "wc -l a.txt" })] },
          { id: "m3", role: "tool", parts: [part.result("c1", "bash", "3 a.txt")] },
          { id: "m4", role: "assistant", model: "m", parts: [part.text("3 lines."), part.finish("end_turn")] },
        ],
      },
      {
        id: "s2",
        title: "sub-agent",
        parent: "s1",
        createdAt: 1764590100,
        messages: [
          { id: "n1", role: "user", parts: [part.text("view a.txt")] },
          { id: "n2", role: "assistant", parts: [part.call("c2", "view", { file_path: "a.txt" })] },
          { id: "n3", role: "tool", parts: [part.result("c2", "view", "1|a\n2|b\n3|c", true)] },
        ],
      },
    ]);
    return new Uint8Array(readFileSync(path));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
