/** The pi coding-agent session reader (src/read/pi-session.ts) on the hand-written session in test/fixtures/handmade/pi/ and variants built here. */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { inferPiDomain, piSessionReader } from "../src/read/pi-session.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const SESSION = join(ROOT, "test/fixtures/handmade/pi/2025-11-20T09-00-00-000Z_7c0a9e52-5b1e-4d3f-9a55-2f4c1d8e6b01.jsonl");

async function only(path: string): Promise<ReadItem> {
  const items = await collect(piSessionReader.read(path, OPTIONS));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

function write(lines: unknown[], tail = "\n"): string {
  const path = join(tempDir("lwm-pi-"), "2025-11-20T10-00-00-000Z_s1.jsonl");
  writeFileSync(path, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + tail);
  return path;
}

const HEADER = { type: "session", version: 3, id: "s1", timestamp: "2025-11-20T10:00:00.000Z", cwd: "/w" };
const entry = (id: string, parentId: string | null, message: Record<string, unknown>) => ({
  type: "message",
  id,
  parentId,
  timestamp: "2025-11-20T10:00:01.000Z",
  message,
});
const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const call = (id: string, name: string, args: Record<string, unknown>) => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name, arguments: args }],
  provider: "openai",
  model: "gpt-5",
  stopReason: "toolUse",
  timestamp: 2,
});
const result = (id: string, text: string, isError = false) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "bash",
  content: [{ type: "text", text }],
  isError,
  timestamp: 3,
});

describe("pi session reader", () => {
  it("reads the branch pi was on last: calls by id, errors, a ! command; the abandoned branch and bookkeeping entries counted", async () => {
    const item = await only(SESSION);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("7c0a9e52-5b1e-4d3f-9a55-2f4c1d8e6b01");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("wc.py counts one word too many on empty lines. Fix it.");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["python -m pytest -q", "F.\nE   assert 1 == 0\n1 failed, 1 passed in 0.02s\n"],
      ['read {"path":"wc.py"}', "def count(line):\n    return len(line.split(' '))\n"],
      ['edit {"path":"wc.py","oldText":"line.split(\' \')","newText":"line.splt()"}', "Successfully replaced text in wc.py."],
      [
        'edit {"path":"wc.py","oldText":"line.split(\' \')","newText":"line.split()"}',
        "Could not find the exact text in wc.py. The old text must match exactly including all whitespace and newlines.",
      ],
      ["sed -i 's/splt/split/' wc.py && git diff --stat", " wc.py | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"],
      ["python -m pytest -q", "..\n2 passed in 0.01s\n"],
    ]);
    // The abandoned branch's write is no turn.
    expect(t.turns.some((turn) => turn.action.startsWith("write"))).toBe(false);
    expect(t.turns[0]?.thinking).toBe("Look at the tests first.\n\nLet me run the tests.");
    expect(t.turns[2]?.meta?.user_messages).toEqual(["Just change the split, don't rewrite the file."]);
    expect(t.turns[3]?.meta).toEqual({ tool: "edit", tool_call_id: "toolu_05", is_error: true });
    expect(t.turns[4]?.meta).toEqual({ tool: "bash", user_command: true, exit_code: 0 });
    expect(t.meta).toEqual({
      agent: "pi",
      session_id: "7c0a9e52-5b1e-4d3f-9a55-2f4c1d8e6b01",
      cwd: "/home/dev/wordcount",
      version: 3,
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      session_name: "wc empty-line fix",
      compactions: 1,
      final_message: "Fixed: count() splits on any whitespace, so an empty line has no words.",
      skipped: { thinking_level_change: 1, branch_summary: 1, label: 1, custom: 1 },
      off_branch: 2,
    });
  });

  it("follows the last entry's branch wherever it was appended, and reads a version-1 file in order", async () => {
    // The second branch (from u1) was written last: its call is read, the first branch's is not.
    const branched = write([
      HEADER,
      entry("u1", null, user("count lines")),
      entry("a1", "u1", call("c1", "bash", { command: "wc -l a.txt" })),
      entry("r1", "a1", result("c1", "3 a.txt")),
      entry("a2", "u1", call("c2", "bash", { command: "wc -l b.txt" })),
      entry("r2", "a2", result("c2", "5 b.txt")),
    ]);
    const item = await only(branched);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual([["wc -l b.txt", "5 b.txt"]]);
    expect(item.trajectory.domain).toBe("terminal");
    expect(item.trajectory.meta?.off_branch).toBe(2);
    // Version 1: no ids or parents, entries in file order.
    const linear = write([
      { type: "session", id: "s1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" },
      { type: "message", timestamp: "t", message: user("count lines") },
      { type: "message", timestamp: "t", message: call("c1", "bash", { command: "wc -l a.txt" }) },
      { type: "message", timestamp: "t", message: result("c1", "3 a.txt") },
      { type: "message", timestamp: "t", message: call("c2", "bash", { command: "wc -l b.txt" }) },
      { type: "message", timestamp: "t", message: result("c2", "") },
    ]);
    const v1 = await only(linear);
    if (v1.kind !== "trajectory") throw new Error(JSON.stringify(v1));
    expect(v1.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["wc -l a.txt", "3 a.txt"],
      ["wc -l b.txt", "[no output]"],
    ]);
    expect(v1.trajectory.meta?.off_branch).toBeUndefined();
  });

  it("reads a fork's session: a header without cwd, entries without ids, a role of its own counted", async () => {
    const path = write([
      { type: "session", version: 3, id: "history-1", timestamp: "2026-08-14T08:00:00Z" },
      { type: "thinking_level_change", thinkingLevel: "high" },
      { type: "message", timestamp: "t", message: user("find the customers") },
      { type: "message", timestamp: "t", message: call("c1", "crm_search", { country: "DE" }) },
      { type: "message", timestamp: "t", message: result("c1", "2 customers") },
      { type: "message", timestamp: "t", message: { role: "tool", content: "internal" } },
    ]);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("pi");
    const item = await only(path);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.id).toBe("history-1");
    expect(item.trajectory.domain).toBe("mcp");
    expect(item.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual([['crm_search {"country":"DE"}', "2 customers"]]);
    expect(item.trajectory.meta?.skipped).toEqual({ thinking_level_change: 1, tool_message: 1 });
  });

  it("quarantines bad input naming the line and field, a chat without calls, and pi --mode json events", async () => {
    const badRole = await only(write([HEADER, entry("u1", null, user("x")), entry("a1", "u1", { role: 7, content: [] })]));
    expect(badRole.kind).toBe("quarantine");
    if (badRole.kind !== "quarantine") return;
    expect(badRole.entry.reason).toMatch(/^line 3: message\.role: expected a string such as user, assistant or toolResult, got a number/);
    expect(badRole.entry.field).toBe("message.role");
    expect(badRole.entry.source.line).toBe(3);

    const badCall = await only(
      write([
        HEADER,
        entry("u1", null, user("x")),
        entry("a1", "u1", { role: "assistant", content: [{ type: "toolCall", id: "c1", name: 7 }] }),
      ]),
    );
    expect(badCall.kind === "quarantine" && badCall.entry.reason).toMatch(
      /^line 3: message\.content\.0\.name: expected a non-empty string, got a number/,
    );

    const notJson = await only(write([HEADER, "{not json", entry("u1", null, user("x"))]));
    expect(notJson.kind === "quarantine" && notJson.entry.reason).toMatch(/^line 2: /);

    const chat = await only(
      write([HEADER, entry("u1", null, user("hi")), entry("a1", "u1", { role: "assistant", content: [{ type: "text", text: "hello" }] })]),
    );
    expect(chat.kind === "quarantine" && chat.entry.reason).toMatch(/no tool call with a result.*2 messages.*a chat without actions/);

    // Session entries with stray events among them: the entries are read, the events named.
    const mixed = await only(
      write([
        HEADER,
        entry("u1", null, user("hi")),
        { type: "agent_start" },
        { type: "message_end", message: { role: "assistant", content: [{ type: "text", text: "Done." }] } },
        entry("a1", "u1", { role: "assistant", content: [{ type: "text", text: "hello" }] }),
      ]),
    );
    expect(mixed.kind === "quarantine" && mixed.entry.reason).toMatch(
      /no tool call with a result.*2 lines are `pi --mode json` events among the session entries, left out: a chat without actions/,
    );
  });

  it("reads a `pi --mode json` stream (hand-written from docs/json.md and pi's agent loop): the message_end events in order, nothing twice", async () => {
    const item = await only(join(ROOT, "test/fixtures/handmade/pi/json-mode-2025-11-21T14-02-11.jsonl"));
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const { trajectory } = item;
    expect(trajectoryInputSchema.safeParse(trajectory).success).toBe(true);
    expect(trajectory.id).toBe("3f1c2b7a-9d4e-4c55-8a21-6b0e7d9c1f42");
    expect(trajectory.task).toBe("The tests in test_todos.py fail. Find out why and fix it.");
    // Each call once, though message_start, message_update, tool_execution_* and turn_end repeat it.
    expect(trajectory.turns.map((turn) => turn.action)).toEqual([
      "python -m pytest -q test_todos.py",
      'read {"path":"todos.py"}',
      'edit {"path":"todos.py","oldText":"item.done == True","newText":"item.done = True"}',
      "python -m pytest -q test_todos.py",
      "ruff check todos.py",
    ]);
    expect(trajectory.turns[0]?.observation).toMatch(/^F\.\n=+ FAILURES =+\n[\s\S]*Command exited with code 1$/);
    expect(trajectory.turns[0]?.meta).toMatchObject({ is_error: true });
    expect(trajectory.turns[0]?.thinking).toBe("Run the tests first to see the failure.");
    expect(trajectory.turns[3]?.observation).toBe("..\n2 passed in 0.02s");
    // The steering message queued while the agent worked goes with the turn after it.
    expect(trajectory.turns[4]?.meta).toMatchObject({ user_messages: ["also run the linter"] });
    expect(trajectory.meta).toMatchObject({
      agent: "pi",
      mode: "json",
      cwd: "/home/dev/todo-api",
      model: "claude-sonnet-4-5",
      compactions: 1,
      final_message: "The linter is clean too.",
    });
    expect(trajectory.domain).toBe("swe");
  });

  it("reads a stream saved without its header line, and quarantines a message_end without a message, naming the line", async () => {
    const assistant = call("c1", "bash", { command: "ls" });
    const events = [
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "message_start", message: user("list the files") },
      { type: "message_end", message: user("list the files") },
      { type: "message_start", message: { ...assistant, content: [] } },
      { type: "message_end", message: assistant },
      { type: "tool_execution_start", toolCallId: "c1", toolName: "bash", args: { command: "ls" } },
      {
        type: "tool_execution_end",
        toolCallId: "c1",
        toolName: "bash",
        result: { content: [{ type: "text", text: "a.txt" }] },
        isError: false,
      },
      { type: "message_end", message: result("c1", "a.txt") },
      { type: "turn_end", message: assistant, toolResults: [result("c1", "a.txt")] },
      { type: "agent_end", messages: [] },
    ];
    const path = write(events);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("pi");
    const item = await only(path);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.id).toBe("2025-11-20T10-00-00-000Z_s1");
    expect(item.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls", "a.txt"]]);
    expect(item.trajectory.domain).toBe("terminal");

    const broken = await only(write([HEADER, ...events.slice(0, 8), { type: "message_end" }, ...events.slice(9)]));
    expect(broken.kind === "quarantine" && broken.entry.reason).toMatch(/^line 10: message: expected an object, got nothing/);
    // Negative control: an agent_start line alone, or one with other keys (another tool's event), is not pi's.
    expect(piSessionReader.sniff(`${JSON.stringify({ type: "agent_start" })}\n`, "x.jsonl")).toBe(false);
    expect(piSessionReader.sniff(`${JSON.stringify({ type: "agent_start", agent: "x" })}\n{"type":"turn_start"}\n`, "x.jsonl")).toBe(false);
    expect(piSessionReader.sniff(`${JSON.stringify({ type: "agent_start" })}\n{"type":"turn_start"}\n`, "x.jsonl")).toBe(true);
  });

  it("leaves out a last line cut while pi wrote it, and an unanswered call", async () => {
    const full = JSON.stringify(entry("r2", "a2", result("c2", "late")));
    const path = write(
      [
        HEADER,
        entry("u1", null, user("count lines")),
        entry("a1", "u1", call("c1", "bash", { command: "wc -l a.txt" })),
        entry("r1", "a1", result("c1", "3 a.txt")),
        entry("a2", "r1", call("c2", "bash", { command: "sleep 100" })),
        full.slice(0, full.length / 2),
      ],
      "",
    );
    const item = await only(path);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns.map((turn) => turn.action)).toEqual(["wc -l a.txt"]);
    expect(item.trajectory.meta?.truncated_line).toMatchObject({ line: 6 });
    expect(item.trajectory.meta?.skipped).toEqual({ call_without_result: 1 });
  });

  it("is detected by its header, and claims no other format's fixture", async () => {
    const detection = await detectFormat(SESSION);
    expect(detection.kind === "format" && detection.reader.name).toBe("pi");
    const handmade = join(ROOT, "test/fixtures/handmade");
    const claimed: string[] = [];
    for (const entry of readdirSync(handmade, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(jsonl?|ndjson)$/.test(entry.name) || entry.parentPath.endsWith("/pi")) continue;
      const path = join(entry.parentPath, entry.name);
      if (piSessionReader.sniff(await readHead(path), path)) claimed.push(path);
    }
    expect(claimed).toEqual([]);
    // Negative control: the sniff does claim a header line.
    expect(piSessionReader.sniff(`${JSON.stringify(HEADER)}\n`, "x.jsonl")).toBe(true);
    expect(piSessionReader.sniff(`${JSON.stringify({ ...HEADER, type: "session_start" })}\n`, "x.jsonl")).toBe(false);
  });

  it("infers the domain from the tools", () => {
    expect(inferPiDomain(["bash", "bash"])).toBe("terminal");
    expect(inferPiDomain(["bash", "edit", "read"])).toBe("swe");
    expect(inferPiDomain(["github_search", "github_issue", "bash"])).toBe("mcp");
  });
});
