/** The Crush session-store reader (src/read/crush-db.ts) on databases written with Crush's DDL (test/support/crush-db.ts). */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { crushDbReader, inferCrushDomain } from "../src/read/crush-db.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, tempDir } from "./helpers.ts";
import { type CrushSession, part, writeCrushDb } from "./support/crush-db.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };

function database(sessions: CrushSession[]): string {
  const path = join(tempDir("lwm-crush-"), "crush.db");
  writeCrushDb(path, sessions);
  return path;
}

const FIX: CrushSession = {
  id: "7e2c9a41-0b6d-4f38-9d12-5a3e8c7b1f20",
  title: "Fix the flaky date test",
  createdAt: 1764590000,
  messages: [
    { id: "m1", role: "user", parts: [part.text("test_dates.py fails on Mondays. Fix it.")] },
    {
      id: "m2",
      role: "assistant",
      model: "claude-sonnet-4-5",
      parts: [
        part.reasoning("Run the test first."),
        part.text("Running it."),
        part.call("call_1", "bash", { command: "pytest -q test_dates.py", timeout: 60000 }),
        part.finish("tool_use"),
      ],
    },
    { id: "m3", role: "tool", parts: [part.result("call_1", "bash", "F\nE   AssertionError: 0 != 7\n1 failed in 0.03s", true)] },
    {
      id: "m4",
      role: "assistant",
      model: "claude-sonnet-4-5",
      parts: [part.call("call_2", "view", { file_path: "/w/dates.py" }), part.call("call_3", "grep", { pattern: "weekday", path: "/w" })],
    },
    {
      id: "m5",
      role: "tool",
      parts: [
        part.result("call_2", "view", "<file>\n     1|def days_until(d):\n     2|    return (7 - d.weekday()) % 7\n</file>"),
        part.result("call_3", "grep", "Found 1 matches\n/w/dates.py:\n  Line 2: d.weekday()"),
      ],
    },
    { id: "m6", role: "assistant", model: "claude-sonnet-4-5", parts: [part.text("Summary of the work so far.")], summary: true },
    { id: "m7", role: "user", parts: [part.text("Keep Monday as 7, not 0.")] },
    {
      id: "m8",
      role: "assistant",
      model: "claude-sonnet-4-5",
      parts: [part.call("call_4", "edit", { file_path: "/w/dates.py", old_string: "% 7", new_string: "% 7 or 7" })],
    },
    { id: "m9", role: "tool", parts: [part.result("call_4", "edit", "")] },
    {
      id: "m10",
      role: "assistant",
      model: "claude-sonnet-4-5",
      parts: [part.text("Fixed: Monday now counts 7 days."), part.finish("end_turn")],
    },
  ],
};

async function items(path: string): Promise<ReadItem[]> {
  return collect(crushDbReader.read(path, OPTIONS));
}

describe("crush-db reader", () => {
  it("reads each session: calls and results by id, reasoning, a summary message counted, the session's title and tokens", async () => {
    const path = database([FIX]);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("crush");
    const [item] = await items(path);
    if (item?.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe(FIX.id);
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("test_dates.py fails on Mondays. Fix it.");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["pytest -q test_dates.py", "F\nE   AssertionError: 0 != 7\n1 failed in 0.03s"],
      ['view {"file_path":"/w/dates.py"}', "<file>\n     1|def days_until(d):\n     2|    return (7 - d.weekday()) % 7\n</file>"],
      ['grep {"pattern":"weekday","path":"/w"}', "Found 1 matches\n/w/dates.py:\n  Line 2: d.weekday()"],
      ['edit {"file_path":"/w/dates.py","old_string":"% 7","new_string":"% 7 or 7"}', "[no output]"],
    ]);
    expect(t.turns[0]?.meta).toEqual({ tool: "bash", tool_call_id: "call_1", is_error: true });
    expect(t.turns[0]?.thinking).toBe("Run the test first.\n\nRunning it.");
    expect(t.turns[3]?.meta?.user_messages).toEqual(["Keep Monday as 7, not 0."]);
    expect(t.meta).toEqual({
      agent: "crush",
      title: "Fix the flaky date test",
      prompt_tokens: 1200,
      completion_tokens: 340,
      cost: 0.0123,
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      final_message: "Fixed: Monday now counts 7 days.",
      skipped: { summary_message: 1 },
    });
    expect(t.source).toMatchObject({ format: "crush", row: 0 });
  });

  it("one trajectory per session in creation order, a sub-agent's naming its parent; a chat and a bad parts row quarantined by session and row", async () => {
    const child: CrushSession = {
      id: "child-1",
      title: "Find the weekday helper",
      parent: FIX.id,
      createdAt: 1764590100,
      messages: [
        { id: "c1", role: "user", parts: [part.text("find weekday uses")] },
        { id: "c2", role: "assistant", parts: [part.call("k1", "bash", { command: "grep -rn weekday ." })] },
        { id: "c3", role: "tool", parts: [part.result("k1", "bash", "./dates.py:2: d.weekday()")] },
      ],
    };
    const chat: CrushSession = {
      id: "chat",
      title: "hi",
      createdAt: 1764590200,
      messages: [{ id: "h1", role: "user", parts: [part.text("hello")] }],
    };
    const bad: CrushSession = {
      id: "bad",
      title: "broken",
      createdAt: 1764590300,
      messages: [
        { id: "b1", role: "user", parts: [part.text("go")] },
        { id: "b2", role: "assistant", parts: '[{"type": "tool_call", "data": {"id": 3' },
      ],
    };
    const badCall: CrushSession = {
      id: "bad-call",
      title: "broken call",
      createdAt: 1764590400,
      messages: [{ id: "x1", role: "assistant", parts: [{ type: "tool_call", data: { id: "q", name: 5 } }] }],
    };
    const got = await items(database([badCall, chat, FIX, child, bad].sort((a, b) => a.createdAt - b.createdAt)));
    const named = (item: ReadItem) =>
      item.kind === "trajectory" ? item.trajectory.id : item.kind === "quarantine" ? `quarantine ${item.entry.id}` : "a document";
    expect(got.map(named)).toEqual([FIX.id, "child-1", "quarantine chat", "quarantine bad", "quarantine bad-call"]);
    const [, sub, quiet, broken, brokenCall] = got;
    if (sub?.kind !== "trajectory") throw new Error("child");
    expect(sub.trajectory.meta?.parent_session).toBe(FIX.id);
    expect(sub.trajectory.domain).toBe("terminal");
    expect(quiet?.kind === "quarantine" && quiet.entry.reason).toMatch(/^Crush session chat: no tool call with a result \(1 messages\)/);
    expect(broken?.kind === "quarantine" && broken.entry).toMatchObject({ field: "messages.b2.parts" });
    expect(broken?.kind === "quarantine" && broken.entry.reason).toMatch(/^Crush session bad: message b2: parts: invalid JSON/);
    expect(brokenCall?.kind === "quarantine" && brokenCall.entry.reason).toBe(
      "Crush session bad-call: message x1: parts.0.data.name: expected a non-empty string, got a number",
    );
  });

  it("is told by its tables: another SQLite file is not Crush's; an empty store is no record", async () => {
    const { DatabaseSync } = await import("node:sqlite");
    const other = join(tempDir("lwm-crush-"), "other.db");
    const db = new DatabaseSync(other);
    db.exec("CREATE TABLE sessions (id TEXT); CREATE TABLE notes (id TEXT, body TEXT)");
    db.close();
    const detection = await detectFormat(other);
    expect(detection.kind === "format" && detection.reader.name).not.toBe("crush");
    const empty = database([]);
    expect((await detectFormat(empty)).kind).toBe("empty");
    // Read as crush anyway (format: crush), the other database is one entry saying what it lacks.
    const [refused] = await items(other);
    expect(refused?.kind === "quarantine" && refused.entry.reason).toBe("not Crush's session database: no table `messages`");
    const notDb = join(tempDir("lwm-crush-"), "crush.db");
    writeFileSync(notDb, "SQLite format 3\u0000 then nothing");
    const [damaged] = await items(notDb);
    expect(damaged?.kind === "quarantine" && damaged.entry.reason).toMatch(/^an SQLite database whose schema cannot be read/);
  });

  it("infers the domain from the tools", () => {
    expect(inferCrushDomain(["bash", "bash"])).toBe("terminal");
    expect(inferCrushDomain(["bash", "view", "edit"])).toBe("swe");
    expect(inferCrushDomain(["mcp_github_search_issues", "mcp_github_get_issue", "bash"])).toBe("mcp");
    expect(inferCrushDomain(["fetch", "sourcegraph"])).toBe("web");
  });
});
