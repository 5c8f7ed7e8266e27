/** Tool errors in chat rows (src/read/chat-rows/): Anthropic `tool_result.is_error` and a tool message's `error` are kept as `turn.meta.is_error`, as the agent-log readers keep them. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import { collect, tempDir } from "./helpers.ts";

async function read(row: unknown): Promise<Trajectory> {
  const path = join(tempDir("lwm-tool-errors-"), "rows.jsonl");
  writeFileSync(path, `${JSON.stringify(row)}\n`);
  const items = await collect(chatToolRowsReader.read(path, { maxLineBytes: 1 << 22 }));
  if (items[0]?.kind !== "trajectory") throw new Error(JSON.stringify(items));
  return items[0].trajectory;
}

const use = (id: string, command: string) => ({ type: "tool_use", id, name: "bash", input: { command } });
const result = (id: string, content: string, isError?: boolean) => ({
  type: "tool_result",
  tool_use_id: id,
  content,
  ...(isError !== undefined ? { is_error: isError } : {}),
});

describe("chat rows: tool errors", () => {
  it("records Anthropic tool_result.is_error in turn meta; a result without it (or false) is no error", async () => {
    const t = await read({
      messages: [
        { role: "user", content: "look around" },
        { role: "assistant", content: [use("a", "cat nope")] },
        { role: "user", content: [result("a", "cat: nope: No such file or directory", true)] },
        { role: "assistant", content: [use("b", "ls")] },
        { role: "user", content: [result("b", "x\n", false)] },
        { role: "assistant", content: [use("c", "ls a"), use("d", "ls b")] },
        { role: "user", content: [result("c", "a"), result("d", "ls: b: not found", true)] },
      ],
    });
    expect(t.turns.map((turn) => turn.meta)).toEqual([
      { tool: "bash", is_error: true },
      { tool: "bash" },
      { tools: ["bash", "bash"], parallel_calls: 2, is_error: true, error_results: [2] },
    ]);
    expect(t.turns[0]?.observation).toBe("cat: nope: No such file or directory");
  });

  it("records a tool message's error (a string, or Inspect-style {message}); its message is the result when the content is empty", async () => {
    const t = await read({
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", tool_calls: [{ id: "1", type: "function", function: { name: "bash", arguments: '{"command":"false"}' } }] },
        { role: "tool", tool_call_id: "1", content: "", error: { type: "unknown", message: "exit status 1" } },
        { role: "assistant", tool_calls: [{ id: "2", type: "function", function: { name: "bash", arguments: '{"command":"true"}' } }] },
        { role: "tool", tool_call_id: "2", content: "done", error: null },
      ],
    });
    expect(t.turns.map((turn) => [turn.observation, turn.meta?.is_error])).toEqual([
      ["exit status 1", true],
      ["done", undefined],
    ]);
  });
});
