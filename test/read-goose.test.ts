/** The Goose session reader (src/read/goose.ts) on the hand-written session in test/fixtures/handmade/goose/ and variants built here. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { gooseReader, inferGooseDomain } from "../src/read/goose.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const SESSION = join(ROOT, "test/fixtures/handmade/goose/20250612_093000.jsonl");

async function only(path: string): Promise<ReadItem> {
  const items = await collect(gooseReader.read(path, OPTIONS));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

function write(lines: unknown[], name = "session.jsonl", tail = "\n"): string {
  const path = join(tempDir("lwm-goose-"), name);
  writeFileSync(path, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + tail);
  return path;
}

const META = { working_dir: "/w", description: "", schedule_id: null, message_count: 3, total_tokens: null };
const USER = {
  role: "user",
  created: 1,
  content: [{ type: "text", text: "list files" }],
  metadata: { userVisible: true, agentVisible: true },
};
const CALL = {
  role: "assistant",
  created: 2,
  content: [
    { type: "toolRequest", id: "t1", toolCall: { status: "success", value: { name: "developer__shell", arguments: { command: "ls" } } } },
  ],
};
const RESULT = {
  role: "user",
  created: 3,
  content: [{ type: "toolResponse", id: "t1", toolResult: { status: "success", value: [{ type: "text", text: "a\nb\n" }] } }],
};

describe("goose reader", () => {
  it("reads a session: calls by id, the assistant's copy of each result, errors, summaries and invalid calls counted", async () => {
    const item = await only(SESSION);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("20250612_093000");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("The sum test fails, please fix it.");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["pytest -q", "F\nE   assert 5 == 4\n1 failed in 0.01s\n"],
      ['developer__text_editor {"command":"view","path":"/home/dev/calc/sum.py"}', "def add(a, b):\n    return a + b + 1\n"],
      ["cat missing.txt", "Execution failed: cat: missing.txt: No such file or directory"],
      [
        'developer__text_editor {"command":"str_replace","path":"/home/dev/calc/sum.py","old_str":"a + b + 1","new_str":"a + b"}',
        "The file /home/dev/calc/sum.py has been edited.",
      ],
      ["pytest -q", ".\n1 passed in 0.01s\n"],
    ]);
    expect(t.turns[0]?.thinking).toBe("Run the tests first.\n\nLet me run the tests.");
    expect(t.turns[2]?.meta).toEqual({ tool: "developer__shell", tool_call_id: "toolu_03", is_error: true });
    expect(t.turns[4]?.meta?.user_messages).toEqual(["Also run the tests again."]);
    expect(t.meta).toEqual({
      agent: "goose",
      working_dir: "/home/dev/calc",
      description: "Fix the failing sum test",
      total_tokens: 5120,
      input_tokens: 4800,
      output_tokens: 320,
      final_message: "Fixed: add() no longer adds 1, and the test passes.",
      skipped: { user_only_content: 3, invalid_tool_call: 1, result_without_call: 1, agent_only_message: 1 },
    });
  });

  it("reads a file whose first line is a message, an isError result, and a cut last line", async () => {
    const errorResult = {
      ...RESULT,
      content: [
        {
          type: "toolResponse",
          id: "t1",
          toolResult: { status: "success", value: { content: [{ type: "text", text: "boom" }], isError: true } },
        },
      ],
    };
    const item = await only(write([USER, CALL, errorResult, '{"role":"assistant","created":4,"content":[{"type":"te'], "s.jsonl", ""));
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns).toEqual([
      { action: "ls", observation: "boom", meta: { tool: "developer__shell", tool_call_id: "t1", is_error: true } },
    ]);
    expect(item.trajectory.meta?.truncated_line).toEqual({ line: 4, bytes: 54 });
  });

  it("detects goose sessions by the metadata line or a message line; not other formats' lines", async () => {
    for (const path of [SESSION, write([USER, CALL, RESULT])]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name).toBe("goose");
    }
    // Negative controls: a chat-row message and a Claude Code entry are not goose messages.
    expect(gooseReader.sniff(JSON.stringify({ role: "user", content: [{ type: "text", text: "hi" }] }), "/x.jsonl")).toBe(false);
    expect(gooseReader.sniff(JSON.stringify({ type: "user", message: { role: "user", content: "hi" }, sessionId: "s" }), "/x.jsonl")).toBe(
      false,
    );
  });

  it("quarantines a bad line naming it and the field, and a session without results", async () => {
    const badRole = await only(write([META, USER, { ...CALL, role: "tool" }]));
    expect(badRole).toMatchObject({
      kind: "quarantine",
      entry: { field: "role", source: { line: 3 }, reason: expect.stringMatching(/^line 3: role/) },
    });
    const badItem = await only(write([META, USER, { ...CALL, content: [{ id: "x" }] }]));
    expect(badItem).toMatchObject({ kind: "quarantine", entry: { field: "content.0.type", source: { line: 3 } } });
    const notJson = await only(write([META, "{nope}", USER]));
    expect(notJson).toMatchObject({
      kind: "quarantine",
      entry: { source: { line: 2 }, reason: expect.stringMatching(/^line 2: invalid JSON/) },
    });
    const chat = await only(write([META, USER, CALL]));
    expect(chat).toMatchObject({ kind: "quarantine", entry: { field: "content", reason: expect.stringMatching(/1 call_without_result/) } });
  });

  it("infers the domain from the tools", () => {
    expect(inferGooseDomain(["developer__shell"])).toBe("terminal");
    expect(inferGooseDomain(["developer__shell", "developer__text_editor"])).toBe("swe");
    expect(inferGooseDomain(["computercontroller__web_scrape", "computercontroller__web_search"])).toBe("web");
    expect(inferGooseDomain(["github__list_issues", "github__get_issue"])).toBe("mcp");
  });
});
