/** The Factory Droid session reader (src/read/factory-droid.ts) on the hand-written session in test/fixtures/handmade/factory-droid/ and variants built here. */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { factoryDroidReader, inferDroidDomain } from "../src/read/factory-droid.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/handmade/factory-droid/-home-dev-todo-api");
const SESSION = join(DIR, "3f6b2a10-8c4d-4e5f-9a7b-1c2d3e4f5a6b.jsonl");

async function only(path: string): Promise<ReadItem> {
  const items = await collect(factoryDroidReader.read(path, OPTIONS));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

function write(lines: unknown[], tail = "\n"): string {
  const path = join(tempDir("lwm-droid-"), "0a1b2c3d-0000-4000-8000-000000000001.jsonl");
  writeFileSync(path, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + tail);
  return path;
}

const START = { type: "session_start", id: "s1", title: "t", sessionTitle: "t", owner: "dev", version: 2, cwd: "/w" };
const message = (id: string, parentId: string | undefined, role: string, content: unknown) => ({
  type: "message",
  id,
  timestamp: "2025-12-01T14:00:00.000Z",
  ...(parentId !== undefined ? { parentId } : {}),
  message: { role, content },
});
const execute = (id: string, command: string) => [{ type: "tool_use", id, name: "Execute", input: { command } }];
const result = (id: string, content: unknown, extra: Record<string, unknown> = {}) => [
  { type: "tool_result", tool_use_id: id, content, ...extra },
];

describe("factory-droid reader", () => {
  it("reads a session: calls by id, parallel calls, errors, reminders and bookkeeping counted, the settings file's model", async () => {
    const item = await only(SESSION);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("3f6b2a10-8c4d-4e5f-9a7b-1c2d3e4f5a6b");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("GET /todos/<id> returns 500 for an unknown id. It should be 404.");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "npm test -- --silent",
      'Grep {"pattern":"todos/:id","path":"src"}',
      'Read {"file_path":"/home/dev/todo-api/src/routes.js"}',
      expect.stringMatching(/^Edit \{"file_path":"\/home\/dev\/todo-api\/src\/routes.js"/),
      "npm test -- --silent",
    ]);
    expect(t.turns[0]?.observation).toMatch(/expected 404, got 500[\s\S]*\[Process exited with code 1\]$/);
    expect(t.turns[0]?.meta).toEqual({ tool: "Execute", tool_call_id: "toolu_01", is_error: true });
    expect(t.turns[0]?.thinking).toBe("Reproduce with the test suite first.\n\nI'll run the tests.");
    expect(t.turns[1]?.observation).toBe("src/routes.js:14:router.get('/todos/:id', (req, res) => {");
    expect(t.turns[3]?.observation).toBe("[no output]");
    expect(t.turns[4]?.meta?.user_messages).toEqual(["Also make sure the 404 body is JSON."]);
    expect(t.meta).toEqual({
      agent: "factory-droid",
      session_id: "3f6b2a10-8c4d-4e5f-9a7b-1c2d3e4f5a6b",
      title: "404 for unknown todo ids",
      cwd: "/home/dev/todo-api",
      version: 2,
      model: "claude-sonnet-4-5-20250929",
      token_usage: { inputTokens: 18240, outputTokens: 1312, cacheCreationTokens: 9120, cacheReadTokens: 40220, thinkingTokens: 96 },
      compactions: 1,
      final_message: 'Done: unknown ids now get a 404 with {"error": "not found"}; all 7 tests pass.',
      skipped: { system_reminder: 1, todo_state: 1, call_without_result: 1 },
    });
  });

  it("names the settings file as the session's companion", async () => {
    const companions = await factoryDroidReader.companions?.(SESSION);
    expect(companions?.files).toEqual([join(DIR, "3f6b2a10-8c4d-4e5f-9a7b-1c2d3e4f5a6b.settings.json")]);
    const alone = await factoryDroidReader.companions?.(write([START]));
    expect(alone?.files).toEqual([]);
  });

  it("follows the last message's branch after a rewind; bookkeeping lines stay; a file of messages alone is read in order", async () => {
    const branched = write([
      START,
      message("u1", undefined, "user", [{ type: "text", text: "count lines" }]),
      message("a1", "u1", "assistant", execute("c1", "wc -l a.txt")),
      message("r1", "a1", "user", result("c1", "3 a.txt")),
      message("a2", "u1", "assistant", execute("c2", "wc -l b.txt")),
      { type: "todo_state", id: "td", timestamp: "t", todos: "1. [pending] x" },
      message("r2", "a2", "user", result("c2", "5 b.txt")),
    ]);
    const item = await only(branched);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual([["wc -l b.txt", "5 b.txt"]]);
    expect(item.trajectory.domain).toBe("terminal");
    expect(item.trajectory.meta?.off_branch).toBe(2);
    expect(item.trajectory.meta?.skipped).toEqual({ todo_state: 1 });

    const bare = write([
      message("u1", undefined, "user", [{ type: "text", text: "list files" }]),
      message("a1", undefined, "assistant", [{ type: "tool_use", id: "c1", name: "LS", input: { directory_path: "/w" } }]),
      message("r1", undefined, "user", [
        { type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "a.txt" }], isError: false },
      ]),
    ]);
    expect(factoryDroidReader.sniff(await readHead(bare), bare)).toBe(true);
    const linear = await only(bare);
    if (linear.kind !== "trajectory") throw new Error(JSON.stringify(linear));
    expect(linear.trajectory.id).toBe("0a1b2c3d-0000-4000-8000-000000000001");
    expect(linear.trajectory.task).toBe("list files");
    expect(linear.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual([['LS {"directory_path":"/w"}', "a.txt"]]);
  });

  it("quarantines bad input naming the line and field, and a chat without calls", async () => {
    const badRole = await only(write([START, message("u1", undefined, "system", [{ type: "text", text: "x" }])]));
    expect(badRole.kind === "quarantine" && badRole.entry.reason).toBe(
      'line 2: message.role: expected "user" or "assistant", got "system"',
    );
    expect(badRole.kind === "quarantine" && badRole.entry.source.line).toBe(2);

    const badResult = await only(
      write([
        START,
        message("a1", undefined, "assistant", execute("c1", "ls")),
        message("r1", "a1", "user", [{ type: "tool_result", content: "x" }]),
      ]),
    );
    expect(badResult.kind === "quarantine" && badResult.entry.reason).toBe(
      "line 3: message.content.0.tool_use_id: expected a string, got nothing",
    );

    const notJson = await only(write([START, "{not json", message("u1", undefined, "user", "hi")]));
    expect(notJson.kind === "quarantine" && notJson.entry.reason).toMatch(/^line 2: /);

    const chat = await only(
      write([START, message("u1", undefined, "user", "hi"), message("a1", "u1", "assistant", [{ type: "text", text: "hello" }])]),
    );
    expect(chat.kind === "quarantine" && chat.entry.reason).toMatch(
      /no tool call with a result in the session \(2 messages\): a chat without actions/,
    );
  });

  it("leaves out a last line cut while Droid wrote it", async () => {
    const last = JSON.stringify(message("r2", "a2", "user", result("c2", "late")));
    const item = await only(
      write(
        [
          START,
          message("u1", undefined, "user", "go"),
          message("a1", "u1", "assistant", execute("c1", "ls")),
          message("r1", "a1", "user", result("c1", "a.txt")),
          message("a2", "r1", "assistant", execute("c2", "sleep 9")),
          last.slice(0, last.length / 2),
        ],
        "",
      ),
    );
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns.map((turn) => turn.action)).toEqual(["ls"]);
    expect(item.trajectory.meta?.truncated_line).toMatchObject({ line: 6 });
  });

  it("is detected by its first line, and claims no other format's fixture", async () => {
    const detection = await detectFormat(SESSION);
    expect(detection.kind === "format" && detection.reader.name).toBe("factory-droid");
    const handmade = join(ROOT, "test/fixtures/handmade");
    const claimed: string[] = [];
    for (const entry of readdirSync(handmade, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(jsonl?|ndjson)$/.test(entry.name) || entry.parentPath.includes("factory-droid")) continue;
      const path = join(entry.parentPath, entry.name);
      if (factoryDroidReader.sniff(await readHead(path), path)) claimed.push(path);
    }
    expect(claimed).toEqual([]);
    expect(factoryDroidReader.sniff(`${JSON.stringify({ ...START, type: "session" })}\n`, "x.jsonl")).toBe(false);
  });

  it("infers the domain from the tools", () => {
    expect(inferDroidDomain(["Execute", "Execute"])).toBe("terminal");
    expect(inferDroidDomain(["Execute", "Read", "Edit"])).toBe("swe");
    expect(inferDroidDomain(["github___search_issues", "github___get_issue", "Execute"])).toBe("mcp");
    expect(inferDroidDomain(["WebSearch", "FetchUrl"])).toBe("web");
  });
});
