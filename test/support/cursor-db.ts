import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/**
 * Writes a Cursor conversation store (`globalStorage/state.vscdb`) for tests, in the layout the
 * public exporters of these databases read (cursor-history `src/core/storage.ts`, dataclaw
 * `dataclaw/parsers/cursor.py`, chatrxiv's storage notes, which dump the schema): VS Code's
 * `ItemTable` and Cursor's `cursorDiskKV`, both `(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`;
 * a conversation under `composerData:<id>`, each message under `bubbleId:<id>:<bubbleId>`, values
 * JSON text (stored as text, or as a BLOB of it, as Cursor does both).
 */
export const CURSOR_DDL = `
CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
`;

export interface CursorConversation {
  id: string;
  /** The composerData value (headers are made from `bubbles` unless given). */
  composer: Record<string, unknown>;
  /** Messages in order: `[bubbleId, value]`; a value of `undefined` is named in the headers but not stored. */
  bubbles: [string, unknown][];
  /** Store the bubbles inline (`conversation`) as older Cursor versions did, not as rows. */
  inline?: boolean;
  /** Store values as BLOBs of UTF-8 JSON text instead of text. */
  asBlob?: boolean;
}

export function writeCursorDb(path: string, conversations: CursorConversation[], items: Record<string, string> = {}): void {
  const db = new DatabaseSync(path);
  try {
    db.exec(CURSOR_DDL);
    const item = db.prepare("INSERT INTO ItemTable (key, value) VALUES (?, ?)");
    for (const [key, value] of Object.entries(items)) item.run(key, value);
    const kv = db.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)");
    for (const c of conversations) {
      const stored = (value: unknown) => {
        const text = typeof value === "string" ? value : JSON.stringify(value);
        return c.asBlob ? new TextEncoder().encode(text) : text;
      };
      const composer = c.inline
        ? { ...c.composer, conversation: c.bubbles.map(([, bubble]) => bubble) }
        : {
            fullConversationHeadersOnly: c.bubbles.map(([bubbleId, bubble]) => ({
              bubbleId,
              type: typeof bubble === "object" && bubble !== null ? (bubble as { type?: number }).type : 2,
            })),
            ...c.composer,
          };
      kv.run(`composerData:${c.id}`, stored(composer));
      if (!c.inline)
        for (const [bubbleId, bubble] of c.bubbles) if (bubble !== undefined) kv.run(`bubbleId:${c.id}:${bubbleId}`, stored(bubble));
    }
  } finally {
    db.close();
  }
}

/** Cursor's message shapes (`_v: 3` bubbles). */
export const bubble = {
  user: (bubbleId: string, text: string) => ({ _v: 3, type: 1, bubbleId, text, richText: "", createdAt: "2026-04-02T09:00:00.000Z" }),
  text: (bubbleId: string, text: string, thinking?: string) => ({
    _v: 3,
    type: 2,
    bubbleId,
    text,
    ...(thinking !== undefined ? { thinking: { text: thinking, signature: "sig" } } : {}),
    createdAt: "2026-04-02T09:00:01.000Z",
  }),
  /** A tool call with its result, as Cursor stores it: arguments and result as JSON text. */
  tool: (
    bubbleId: string,
    call: { id: string; name: string; args: unknown; result?: unknown; status?: string; extra?: Record<string, unknown> },
    text = "",
  ) => ({
    _v: 3,
    type: 2,
    bubbleId,
    text,
    capabilityType: 15,
    toolFormerData: {
      tool: 15,
      toolIndex: 0,
      modelCallId: `${call.id}-model`,
      toolCallId: call.id,
      status: call.status ?? "completed",
      name: call.name,
      rawArgs: JSON.stringify(call.args),
      params: JSON.stringify(call.args),
      ...(call.result !== undefined ? { result: typeof call.result === "string" ? call.result : JSON.stringify(call.result) } : {}),
      additionalData: { status: "success" },
      ...call.extra,
    },
    workspaceUris: ["file:///home/dev/notes-app"],
    createdAt: "2026-04-02T09:00:02.000Z",
  }),
};

/** A small store's bytes (a terminal and file conversation, an MCP call, a draft): the fuzz campaign's seed for the cursor reader. */
export function sampleCursorDbBytes(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "lwm-cursor-seed-"));
  try {
    const path = join(dir, "state.vscdb");
    writeCursorDb(
      path,
      [
        {
          id: "c0a1",
          composer: {
            _v: 10,
            composerId: "c0a1",
            name: "count lines",
            createdAt: 1775120400000,
            unifiedMode: "agent",
            modelConfig: { modelName: "claude-4-sonnet" },
          },
          bubbles: [
            ["b1", bubble.user("b1", "how many lines in notes.md?")],
            [
              "b2",
              bubble.tool("b2", {
                id: "t1",
                name: "run_terminal_cmd",
                args: { command: "wc -l notes.md", is_background: false },
                result: { output: "12 notes.md\n", exitCode: 0 },
              }),
            ],
            [
              "b3",
              bubble.tool("b3", { id: "t2", name: "read_file", args: { target_file: "notes.md" }, result: { contents: "# Notes\n" } }),
            ],
            ["b4", bubble.text("b4", "12 lines.")],
          ],
        },
        {
          id: "c0a2",
          composer: { _v: 10, composerId: "c0a2", name: "issue", createdAt: 1775120500000 },
          asBlob: true,
          bubbles: [
            ["b1", bubble.user("b1", "open issues?")],
            [
              "b2",
              bubble.tool("b2", {
                id: "t3",
                name: "mcp_github_list_issues",
                args: { tools: [{ name: "list_issues", parameters: JSON.stringify({ repo: "acme/notes" }), serverName: "github" }] },
                result: { content: [{ type: "text", text: "[]" }] },
              }),
            ],
          ],
        },
        { id: "c0a3", composer: { _v: 10, composerId: "c0a3", name: "", createdAt: 1775120600000 }, bubbles: [] },
      ],
      { "cursorAuth/accessToken": "not-a-real-token" },
    );
    return new Uint8Array(readFileSync(path));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
