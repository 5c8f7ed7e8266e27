/**
 * Amp threads (`~/.local/share/amp/threads/T-<id>.json`, `amp threads export <id>`) read by the
 * chat-tool-rows reader's Anthropic dialect: `tool_result` blocks written `{toolUseID, run: {status,
 * result | error}}` (src/read/chat-rows/anthropic-blocks.ts `ampRunResult`). Before, their results
 * were read as empty observations, and a rejected call took the user's next words as its output.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, READ_OPTIONS, ROOT, tempDir } from "./helpers.ts";

const THREAD = join(ROOT, "test/fixtures/handmade/chat-tool-rows/amp-thread-T-5f1e2d3c-4b5a-4978-8a6b-1c2d3e4f5a6b.json");

async function only(path: string): Promise<Trajectory> {
  const items: ReadItem[] = await collect(chatToolRowsReader.read(path, READ_OPTIONS));
  expect(items).toHaveLength(1);
  const item = items[0] as ReadItem;
  if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
  return item.trajectory;
}
function written(thread: unknown): string {
  const path = join(tempDir("lwm-amp-"), "T-0000.json");
  writeFileSync(path, JSON.stringify(thread, null, 2));
  return path;
}

describe("Amp threads: tool results written as runs", () => {
  it("each done run is its call's observation: a list of lines, a read's content, a diff, a shell's output or its exit code", async () => {
    expect(await detectFormat(THREAD)).toMatchObject({ kind: "format", reader: { name: "chat-tool-rows" } });
    const t = await only(THREAD);
    expect(t.id).toBe("T-5f1e2d3c-4b5a-4978-8a6b-1c2d3e4f5a6b");
    expect(t.task).toBe("sum([1,2,3]) returns 3 instead of 6. Fix sum.js and run its test.");
    expect(t.turns.map((turn) => turn.observation)).toEqual([
      "sum.js:7:  for (let i = 1; i < xs.length; i++) {",
      "1: export function sum(xs) {\n2:   let total = xs[0];\n7:   for (let i = 1; i < xs.length; i++) {",
      '[result 1/2]\n{"diff":"-  let total = xs[0];\\n+  let total = 0;","lineRange":[2,2]}\n[result 2/2]\nold_str not found in file: "let i = 1;"',
      "[exit code 1, no output]",
    ]);
    expect(t.turns[3]?.action).toBe("node --test sum.test.js");
    // The failed edit of the parallel pair is an error result.
    expect(t.turns[2]?.meta).toMatchObject({ is_error: true, error_results: [2] });
    expect(t.turns[0]?.meta).toMatchObject({ agent_thought: "Let me find the loop.", agent_reasoning: "Find the loop bound first." });
  });

  it("a call the user rejected ran nothing: no turn, and the user's words beside it stay dialogue (not its output)", async () => {
    const t = await only(THREAD);
    expect(t.turns.some((turn) => turn.action.includes("rm -rf"))).toBe(false);
    expect(t.meta?.skipped).toMatchObject({ rejected_by_user_call: 1, dialogue_after_last_turn: 1 });
    expect(t.meta?.skipped).not.toHaveProperty("user_message_as_result");
  });

  it("meta: agent amp, the thread's title, the model its messages name", async () => {
    const t = await only(THREAD);
    expect(t.meta).toMatchObject({ agent: "amp", title: "Fix the off-by-one in sum.js", model: "claude-sonnet-4-5-20250929" });
    expect(t.meta?.final_answer).toMatch(/^total now starts at 0/);
  });

  it("an export's shape (TU- ids, shell_command, a cancelled call among answered ones, the model from env tags)", async () => {
    const thread = JSON.parse(readFileSync(THREAD, "utf8"));
    const path = written({
      id: "T-export",
      created: 1767254400000,
      title: "Export",
      agentMode: "smart",
      env: { initial: { tags: ["model:gpt-5.1"] } },
      messages: [
        { role: "user", messageId: 1, protocolMessageID: "M-1", content: [{ type: "text", text: "Where am I?" }] },
        {
          role: "assistant",
          messageId: 2,
          content: [
            { type: "tool_use", id: "TU-a1", name: "shell_command", input: { command: "pwd", workdir: "/srv" } },
            { type: "tool_use", id: "TU-a2", name: "shell_command", input: { command: "sleep 600", workdir: "/srv" } },
          ],
        },
        {
          role: "user",
          messageId: 3,
          content: [
            { type: "tool_result", toolUseID: "TU-a2", run: { status: "cancelled", reason: "user interrupted" } },
            { type: "tool_result", toolUseID: "TU-a1", run: { status: "done", result: { output: "/srv\n", exitCode: 0 } } },
          ],
        },
      ],
    });
    const t = await only(path);
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([["pwd", "/srv\n"]]);
    expect(t.meta).toMatchObject({ agent: "amp", model: "gpt-5.1", skipped: { cancelled_call: 1 } });
    // Negative control: the same thread with the runs left out has no answered call.
    const bare = written({
      ...thread,
      messages: thread.messages.filter((m: { content: { type: string }[] }) => !m.content.some((b) => b.type === "tool_result")),
    });
    const items = await collect(chatToolRowsReader.read(bare, READ_OPTIONS));
    expect(items[0]?.kind).toBe("quarantine");
  });

  it("a run that is not an object quarantines the thread naming it", async () => {
    const path = written({
      id: "T-bad",
      agentMode: "smart",
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { cmd: "ls" } }] },
        { role: "user", content: [{ type: "tool_result", toolUseID: "t1", run: "done" }] },
      ],
    });
    const items = await collect(chatToolRowsReader.read(path, READ_OPTIONS));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      kind: "quarantine",
      entry: { field: "messages.2.content.0.run", reason: expect.stringMatching(/expected a run object, got a string/) },
    });
  });
});
