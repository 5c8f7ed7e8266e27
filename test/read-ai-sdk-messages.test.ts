/**
 * Vercel AI SDK messages (src/read/chat-rows/ai-sdk-parts.ts) read by the chat-tool-rows reader and,
 * one message per line, by chat-message-lines: rows written from the AI SDK's documented
 * `ModelMessage` shapes (AI SDK 5 `input` / typed `output`, and the older `args` / `result`).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatMessageLinesReader } from "../src/read/chat-message-lines.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };

function file(lines: unknown[]): string {
  const path = join(tempDir("lwm-ai-sdk-"), "rows.jsonl");
  writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
  return path;
}

const call = (toolCallId: string, toolName: string, input: unknown) => ({ type: "tool-call", toolCallId, toolName, input });
const result = (toolCallId: string, toolName: string, output: unknown) => ({ type: "tool-result", toolCallId, toolName, output });

/** AI SDK 5: typed outputs of every kind, reasoning parts, two calls in one message. */
const V5 = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: [{ type: "text", text: "Why does the build fail?" }] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Build first, then read the config." },
      { type: "text", text: "Building." },
      call("c1", "bash", { command: "npm run build" }),
      call("c2", "readFile", { path: "tsconfig.json" }),
    ],
  },
  {
    role: "tool",
    content: [
      result("c1", "bash", { type: "error-text", value: "error TS2307: Cannot find module 'zod'." }),
      result("c2", "readFile", { type: "json", value: { compilerOptions: { strict: true } } }),
    ],
  },
  { role: "assistant", content: [call("c3", "listDir", { path: "node_modules" })] },
  {
    role: "tool",
    content: [
      result("c3", "listDir", {
        type: "content",
        value: [
          { type: "text", text: "typescript" },
          { type: "media", data: "AA==", mediaType: "image/png" },
        ],
      }),
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "zod is not installed: run npm install zod." }] },
];

async function only(path: string, reader = chatToolRowsReader): Promise<ReadItem> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

describe("Vercel AI SDK messages", () => {
  it("a row of AI SDK 5 messages: tool-call parts paired with tool-result parts by id, every output kind, reasoning apart from the text", async () => {
    const item = await only(file([{ messages: V5 }]));
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(t.task).toBe("Why does the build fail?");
    expect(t.turns.map((turn) => turn.observation)).toEqual([
      '[result 1/2]\nerror TS2307: Cannot find module \'zod\'.\n[result 2/2]\n{"compilerOptions":{"strict":true}}',
      "typescript\n[media]",
    ]);
    expect(t.turns[0]?.action).toContain('"name":"readFile"');
    expect(t.turns[0]?.meta).toMatchObject({ agent_thought: "Building.", agent_reasoning: "Build first, then read the config." });
    expect(t.turns[1]?.action).toBe('{"name":"listDir","arguments":{"path":"node_modules"}}');
    expect(t.meta?.final_answer).toBe("zod is not installed: run npm install zod.");
  });

  it("an error-text output marks the result an error; the older args / result / isError shape reads the same", async () => {
    const single = [
      { role: "user", content: "list files" },
      { role: "assistant", content: [call("c1", "bash", { command: "ls /nope" })] },
      { role: "tool", content: [result("c1", "bash", { type: "error-text", value: "ls: /nope: No such file or directory" })] },
    ];
    const v5 = await only(file([{ messages: single }]));
    if (v5.kind !== "trajectory") throw new Error(JSON.stringify(v5));
    expect(v5.trajectory.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error])).toEqual([
      ["ls /nope", "ls: /nope: No such file or directory", true],
    ]);
    const v4 = await only(
      file([
        {
          messages: [
            { role: "user", content: "list files" },
            { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", args: { command: "ls /nope" } }] },
            {
              role: "tool",
              content: [
                { type: "tool-result", toolCallId: "c1", toolName: "bash", result: "ls: /nope: No such file or directory", isError: true },
              ],
            },
          ],
        },
      ]),
    );
    if (v4.kind !== "trajectory") throw new Error(JSON.stringify(v4));
    expect(v4.trajectory.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error])).toEqual(
      v5.trajectory.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error]),
    );
  });

  it("the same messages one per line are one conversation (chat-message-lines)", async () => {
    const path = file(V5);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-message-lines");
    const lines = await only(path, chatMessageLinesReader);
    const row = await only(file([{ messages: V5 }]));
    if (lines.kind !== "trajectory" || row.kind !== "trajectory") throw new Error("not read");
    expect(lines.trajectory.turns).toEqual(row.trajectory.turns);
  });

  it("quarantines a call without a tool name and an output that is not {type, value}, naming the part", async () => {
    const noName = await only(
      file([
        {
          messages: [
            { role: "user", content: "x" },
            { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", input: {} }] },
          ],
        },
      ]),
    );
    expect(noName.kind === "quarantine" && noName.entry.field).toBe("messages.1.content.0.toolName");
    const badOutput = await only(
      file([
        {
          messages: [
            { role: "user", content: "x" },
            { role: "assistant", content: [call("c1", "bash", { command: "ls" })] },
            { role: "tool", content: [result("c1", "bash", 42)] },
          ],
        },
      ]),
    );
    expect(badOutput.kind === "quarantine" && badOutput.entry.field).toBe("messages.2.content.0.output");
    // Negative control: the same row with a typed output is read.
    const good = await only(
      file([
        {
          messages: [
            { role: "user", content: "x" },
            { role: "assistant", content: [call("c1", "bash", { command: "ls" })] },
            { role: "tool", content: [result("c1", "bash", { type: "text", value: "a" })] },
          ],
        },
      ]),
    );
    expect(good.kind).toBe("trajectory");
  });
});
