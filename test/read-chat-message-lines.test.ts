/** The message-per-line conversation reader (src/read/chat-message-lines.ts) on the hand-written Kimi CLI session in test/fixtures/handmade/kimi-cli/ and variants built here. */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { chatMessageLinesReader } from "../src/read/chat-message-lines.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/handmade/kimi-cli/sessions/8f14e45fceea167a/0d3c7b52-6a91-4f5e-b1c2-9e8d7a6b5c4d");
const CONTEXT = join(DIR, "context.jsonl");

async function only(path: string, options = OPTIONS): Promise<ReadItem> {
  const items = await collect(chatMessageLinesReader.read(path, options));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

function write(lines: unknown[], tail = "\n"): string {
  const path = join(tempDir("lwm-msglines-"), "messages.jsonl");
  writeFileSync(path, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + tail);
  return path;
}

const call = (id: string, command: string) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } }],
});

describe("chat-message-lines reader", () => {
  it("reads a Kimi CLI context.jsonl: calls by id, think parts, pseudo-messages and checkpoint notes counted, the system prompt kept apart", async () => {
    const item = await only(CONTEXT);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("0d3c7b52-6a91-4f5e-b1c2-9e8d7a6b5c4d/context");
    // The checkpoint note is not the task, nor a later user message.
    expect(t.task).toBe("The build fails with a missing module. Find out why.");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "npm run build",
      '[call 1/2]\n{"name":"ReadFile","arguments":{"path":"package.json"}}\n[call 2/2]\n{"name":"Grep","arguments":{"pattern":"left-pad","path":"src"}}',
    ]);
    expect(t.turns[0]?.observation).toMatch(
      /^<system>ERROR: Command failed with exit code: 1\.<\/system>\nError: Cannot find module 'left-pad'/,
    );
    expect(t.turns[0]?.meta).toMatchObject({
      tool: "Shell",
      agent_thought: "Let me run the build.",
      agent_reasoning: "Run the build to see the error.",
    });
    expect(t.turns.every((turn) => turn.meta?.user_messages === undefined)).toBe(true);
    expect(t.meta).toMatchObject({
      agent: "kimi-cli",
      agent_system: "You are Kimi CLI, an interactive coding agent running on the user's computer.",
      pseudo_messages: { _system_prompt: 1, _checkpoint: 3, checkpoint_note: 1, _usage: 2 },
    });
  });

  it("names Kimi's metadata.json and wire.jsonl beside context.jsonl as companions; no companions for another file", async () => {
    const companions = await chatMessageLinesReader.companions?.(CONTEXT);
    expect(companions?.files).toEqual([join(DIR, "metadata.json")]);
    const other = await chatMessageLinesReader.companions?.(write([{ role: "user", content: "x" }]));
    expect(other?.files).toEqual([]);
  });

  it("reads a Mistral Vibe messages.jsonl: injected messages counted, not read; meta.json beside it gives the session's facts and is its companion", async () => {
    const dir = join(ROOT, "test/fixtures/handmade/mistral-vibe/logs/session/20251201_101500_8c1f2a3b");
    const path = join(dir, "messages.jsonl");
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-message-lines");
    const item = await only(path);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(t.task).toBe("Why does `make test` fail?");
    expect(t.turns.map((turn) => turn.action)).toEqual(["make test", '{"name":"read_file","arguments":{"path":"calc.py"}}']);
    // The injected reminder is neither a later user message nor the task.
    expect(t.turns.every((turn) => turn.meta?.user_messages === undefined)).toBe(true);
    expect(t.meta).toMatchObject({
      agent: "mistral-vibe",
      session_id: "8c1f2a3b-77d0-4c61-9e2f-0a1b2c3d4e5f",
      cwd: "/home/dev/calc",
      model: "devstral-medium-latest",
      title: "make test fails",
      git_branch: "main",
      agent_system: "You are Mistral Vibe, a CLI coding agent.",
      pseudo_messages: { injected: 1 },
    });
    expect((await chatMessageLinesReader.companions?.(path))?.files).toEqual([join(dir, "meta.json")]);
  });

  it("reads a plain messages.jsonl of OpenAI messages, and is what detection picks for one", async () => {
    const path = write([
      { role: "system", content: "You are a shell agent." },
      { role: "user", content: "how many lines in a.txt?" },
      call("c1", "wc -l a.txt"),
      { role: "tool", tool_call_id: "c1", content: "3 a.txt" },
      { role: "assistant", content: "3 lines." },
    ]);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-message-lines");
    const item = await only(path);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual([["wc -l a.txt", "3 a.txt"]]);
    expect(item.trajectory.meta?.agent).toBeUndefined();
  });

  it("quarantines a bad line, a conversation over max_line_bytes, a bad message and one without an answered call", async () => {
    const notJson = await only(write([{ role: "user", content: "x" }, "{oops", call("c1", "ls")]));
    expect(notJson.kind === "quarantine" && notJson.entry.reason).toMatch(/^line 2: /);

    const lines = [
      { role: "user", content: "x".repeat(600) },
      call("c1", "ls"),
      { role: "tool", tool_call_id: "c1", content: "y".repeat(600) },
    ];
    const big = await only(write(lines), { maxLineBytes: 1000 });
    expect(big.kind === "quarantine" && big.entry.reason).toMatch(/over 1000 bytes \(max_line_bytes\) by line 3/);
    // Negative control: the same conversation under the limit is read.
    expect((await only(write(lines))).kind).toBe("trajectory");

    const badContent = await only(
      write([
        { role: "user", content: "x" },
        { role: "assistant", content: 7 },
      ]),
    );
    expect(badContent.kind === "quarantine" && badContent.entry.field).toBe("messages.1.content");

    const chat = await only(
      write([
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ]),
    );
    expect(chat.kind === "quarantine" && chat.entry.reason).toMatch(/no tool call was followed by its result/);
  });

  it("claims no row, trajectory or other agent log among the handmade fixtures", async () => {
    const handmade = join(ROOT, "test/fixtures/handmade");
    const claimed: string[] = [];
    for (const entry of readdirSync(handmade, { recursive: true, withFileTypes: true })) {
      if (
        !entry.isFile() ||
        !/\.(jsonl?|ndjson)$/.test(entry.name) ||
        entry.parentPath.includes("kimi-cli") ||
        entry.parentPath.includes("mistral-vibe")
      )
        continue;
      const path = join(entry.parentPath, entry.name);
      if (chatMessageLinesReader.sniff(await readHead(path), path)) claimed.push(path);
    }
    expect(claimed).toEqual([]);
    expect(chatMessageLinesReader.sniff(`${JSON.stringify({ role: "user", content: "x", messages: [] })}\n`, "x.jsonl")).toBe(false);
    expect(chatMessageLinesReader.sniff(`${JSON.stringify({ role: "user", content: "x" })}\n`, "x.jsonl")).toBe(true);
  });
});
