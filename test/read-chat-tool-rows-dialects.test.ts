/**
 * The chat-tool-rows reader (src/read/chat-tool-rows.ts) on the chat dialects public tool-use
 * datasets ship beyond OpenAI Chat Completions, and swe-smith (src/read/swe-smith.ts) on rows whose
 * `messages` is a JSON string. Every row here is written by hand from the format's documentation
 * (the tools, tasks and outputs are invented): the Anthropic Messages API (`tool_use` / `tool_result`
 * content blocks, `thinking`, `system` as a string or text blocks, `tools` with `input_schema`), the
 * OpenAI Responses API (`input` / `output` items: `message`, `function_call`, `function_call_output`,
 * `reasoning`, `local_shell_call`, `mcp_call`, hosted-tool items), ToolBench (`conversations` with
 * from system / user / assistant / function and "Thought / Action / Action Input" replies, `Finish`),
 * Glaive function-calling v2 (`system` + a `chat` transcript with `<functioncall>` and
 * `FUNCTION RESPONSE:`), xLAM / APIGen (`query`, `answers`, `tools` as JSON strings: no results),
 * Qwen-Agent (role `function` + `name`, content items `{text}`, `functions`), APIGen-MT (ShareGPT
 * function_call / observation, `tools` as a JSON string) and Mistral (9-character call ids), and
 * SWE-smith trajectories (XML `<function=…>` calls) whose `messages` column is a JSON string.
 * Each file is written in the layouts real exports use: JSONL, a JSON array, a pretty-printed row.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { sweSmithReader } from "../src/read/swe-smith.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const OPTIONS = { maxLineBytes: 1 << 22 };

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const pairs = (t: Pick<Trajectory, "turns"> | undefined) => (t?.turns ?? []).map((turn) => [turn.action, turn.observation]);
const call = (name: string, args: unknown) => JSON.stringify({ name, arguments: args });

type Row = Record<string, unknown>;

/** Writes rows as JSONL, a pretty-printed JSON array, or (one row) a pretty-printed document. */
function write(rows: Row[], layout: "jsonl" | "array" | "document", dir = tempDir("lwm-chat-dialects-")): string {
  const path = join(dir, `rows.${layout === "jsonl" ? "jsonl" : "json"}`);
  const text =
    layout === "jsonl" ? rows.map((r) => `${JSON.stringify(r)}\n`).join("") : JSON.stringify(layout === "array" ? rows : rows[0], null, 2);
  writeFileSync(path, text);
  return path;
}

async function read(path: string): Promise<ReadItem[]> {
  return collect(chatToolRowsReader.read(path, OPTIONS));
}

async function detected(path: string): Promise<string | undefined> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : undefined;
}

/** Trajectories without their source (the same rows read from two layouts). */
const sourceless = (items: ReadItem[]) => trajectories(items).map((t) => ({ ...t, source: undefined }));

// ---------------------------------------------------------------------------------------------
// Anthropic Messages API

const ANTHROPIC_WEATHER: Row = {
  id: "anthropic-weather-1",
  model: "claude-sonnet-4-5",
  system: "You are a weather assistant.",
  tools: [
    {
      name: "get_weather",
      description: "Get the current weather in a given location",
      input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    },
  ],
  messages: [
    { role: "user", content: "What is the weather in Lisbon?" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "I will look up the weather in Lisbon." },
        { type: "tool_use", id: "toolu_01Lisbon", name: "get_weather", input: { location: "Lisbon, PT" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01Lisbon", content: "19 C, clear sky" }] },
    { role: "assistant", content: [{ type: "text", text: "It is 19 C and clear in Lisbon." }] },
  ],
};

const ANTHROPIC_SHELL: Row = {
  id: "anthropic-shell-2",
  system: [{ type: "text", text: "You are a careful shell agent.", cache_control: { type: "ephemeral" } }],
  tools: [{ name: "bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } } } }],
  stop_reason: null,
  messages: [
    { role: "user", content: [{ type: "text", text: "How many lines does notes.txt have, and what is in the folder?" }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Both commands are independent.", signature: "c2lnbmF0dXJl" },
        { type: "tool_use", id: "toolu_A", name: "bash", input: { command: "wc -l notes.txt" } },
        { type: "tool_use", id: "toolu_B", name: "bash", input: { command: "ls" } },
      ],
    },
    {
      role: "user",
      content: [
        // Answered in the other order; a result given as content blocks, one of them an image.
        {
          type: "tool_result",
          tool_use_id: "toolu_B",
          content: [
            { type: "text", text: "notes.txt\nplot.png" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
        { type: "tool_result", tool_use_id: "toolu_A", content: [{ type: "text", text: "3 notes.txt" }] },
      ],
    },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_C", name: "bash", input: { command: "cat missing.txt" } }] },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_C", content: "cat: missing.txt: No such file or directory", is_error: true },
        { type: "text", text: "Never mind that file." },
      ],
    },
    { role: "assistant", content: "notes.txt has 3 lines; the folder holds notes.txt and plot.png." },
  ],
};

describe("chat-tool-rows: Anthropic Messages API rows", () => {
  it("pairs tool_use blocks with the tool_result blocks of the next user turn by tool_use_id", async () => {
    const items = await read(write([ANTHROPIC_WEATHER, ANTHROPIC_SHELL], "jsonl"));
    expect(quarantined(items)).toEqual([]);
    const [weather, shell] = trajectories(items);
    expect(weather?.task).toBe("What is the weather in Lisbon?");
    expect(pairs(weather)).toEqual([[call("get_weather", { location: "Lisbon, PT" }), "19 C, clear sky"]]);
    expect(weather?.turns[0]?.meta).toEqual({ tool: "get_weather", agent_thought: "I will look up the weather in Lisbon." });
    expect(weather?.meta?.final_answer).toBe("It is 19 C and clear in Lisbon.");
    expect(weather?.meta?.agent_system).toBe(
      `You are a weather assistant.\n\n## Tools\n\n${JSON.stringify((ANTHROPIC_WEATHER.tools as unknown[])[0])}`,
    );
    expect(shell?.domain).toBe("terminal");
    expect(shell?.task).toBe("How many lines does notes.txt have, and what is in the folder?");
    expect(pairs(shell)).toEqual([
      ["[call 1/2]\nwc -l notes.txt\n[call 2/2]\nls", "[result 1/2]\n3 notes.txt\n[result 2/2]\nnotes.txt\nplot.png\n[image]"],
      ["cat missing.txt", "cat: missing.txt: No such file or directory"],
    ]);
    expect(shell?.turns[0]?.meta).toEqual({
      tools: ["bash", "bash"],
      parallel_calls: 2,
      agent_reasoning: "Both commands are independent.",
    });
    // The system as a list of text blocks; the user's words after a result are dialogue, not output.
    expect(String(shell?.meta?.agent_system).startsWith("You are a careful shell agent.\n\n## Tools\n\n")).toBe(true);
    expect(shell?.meta?.final_answer).toBe("notes.txt has 3 lines; the folder holds notes.txt and plot.png.");
    expect(shell?.meta?.skipped).toEqual({ dialogue_after_last_turn: 1 });
  });

  it("is detected without a tools list, and reads the same from JSONL, a JSON array, a pretty-printed row and messages as a JSON string", async () => {
    const { tools: _tools, ...bare } = ANTHROPIC_WEATHER;
    const asString = { ...ANTHROPIC_SHELL, messages: JSON.stringify(ANTHROPIC_SHELL.messages), metadata: { user_id: null } };
    const jsonl = write([bare, ANTHROPIC_SHELL], "jsonl");
    expect(await detected(jsonl)).toBe("chat-tool-rows");
    const expected = sourceless(await read(jsonl));
    expect(expected.map((t) => t.turns.length)).toEqual([1, 2]);
    const array = write([bare, ANTHROPIC_SHELL], "array");
    expect(await detected(array)).toBe("chat-tool-rows");
    expect(sourceless(await read(array))).toEqual(expected);
    const document = write([ANTHROPIC_SHELL], "document");
    expect(await detected(document)).toBe("chat-tool-rows");
    expect(sourceless(await read(document))).toEqual([expected[1]]);
    const stringMessages = write([asString], "jsonl");
    expect(await detected(stringMessages)).toBe("chat-tool-rows");
    expect(pairs(trajectories(await read(stringMessages))[0])).toEqual(pairs(expected[1]));
  });

  it("counts server-tool and redacted-thinking blocks, and quarantines a malformed block naming its field", async () => {
    const serverTools: Row = {
      id: "anthropic-server-tools",
      system: null,
      tools: null,
      messages: [
        { role: "user", content: "Which Node.js line is current, and which one is installed here?" },
        {
          role: "assistant",
          content: [
            { type: "redacted_thinking", data: "RW5jcnlwdGVk" },
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "current Node.js release" } },
            {
              type: "web_search_tool_result",
              tool_use_id: "srvtoolu_1",
              content: [{ type: "web_search_result", url: "https://nodejs.org/", title: "Node.js", encrypted_content: "ZW5j" }],
            },
            { type: "tool_use", id: "toolu_local", name: "bash", input: { command: "node -v" } },
          ],
        },
        // A tool_result with no content: the command printed nothing.
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_local" }] },
      ],
    };
    const objectContent: Row = {
      id: "anthropic-bad-result",
      messages: [
        { role: "user", content: "Go." },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "lookup", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: { value: 1 } }] },
      ],
    };
    const noName: Row = {
      id: "anthropic-bad-call",
      messages: [
        { role: "user", content: "Go." },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
      ],
    };
    const items = await read(write([serverTools, objectContent, noName], "jsonl"));
    const [t] = trajectories(items);
    expect(pairs(t)).toEqual([["node -v", ""]]);
    expect(t?.meta?.skipped).toEqual({ redacted_thinking_block: 1, server_tool_use_block: 1, web_search_tool_result_block: 1 });
    expect(t?.meta?.agent_system).toBeUndefined();
    expect(quarantined(items).map((q) => [q.source.line, q.id, q.field, q.reason])).toEqual([
      [
        2,
        "anthropic-bad-result",
        "messages.2.content.0.content",
        "messages.2.content.0.content: expected a string or content blocks, got an object",
      ],
      [3, "anthropic-bad-call", "messages.1.content.0.name", "messages.1.content.0.name: expected a non-empty string, got nothing"],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// OpenAI Responses API

const RESPONSE_WEATHER: Row = {
  id: "resp_weather_1",
  object: "response",
  model: "gpt-4.1",
  instructions: "You answer with the weather tool.",
  tools: [
    {
      type: "function",
      name: "get_weather",
      description: "Current temperature for a location.",
      parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
      strict: true,
    },
  ],
  previous_response_id: null,
  input: [
    { role: "user", content: "Is it warmer in Oslo or in Rome?" },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look up both cities at once." }] },
    { type: "function_call", id: "fc_1", call_id: "call_oslo", name: "get_weather", arguments: '{"location":"Oslo"}', status: "completed" },
    { type: "function_call", id: "fc_2", call_id: "call_rome", name: "get_weather", arguments: '{"location":"Rome"}', status: "completed" },
    // The outputs came back in the other order: matched by call_id.
    { type: "function_call_output", call_id: "call_rome", output: '{"celsius": 24}' },
    { type: "function_call_output", call_id: "call_oslo", output: '{"celsius": 9}' },
  ],
  output: [
    {
      type: "message",
      id: "msg_1",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Rome is warmer: 24 C against 9 C.", annotations: [] }],
    },
  ],
  usage: { input_tokens: 120, output_tokens: 16 },
};

describe("chat-tool-rows: OpenAI Responses API rows", () => {
  it("reads input then output items: function_call → function_call_output by call_id, reasoning and instructions as context", async () => {
    const items = await read(write([RESPONSE_WEATHER], "jsonl"));
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.id).toBe("resp_weather_1");
    expect(t?.task).toBe("Is it warmer in Oslo or in Rome?");
    expect(pairs(t)).toEqual([
      [
        `[call 1/2]\n${call("get_weather", { location: "Oslo" })}\n[call 2/2]\n${call("get_weather", { location: "Rome" })}`,
        '[result 1/2]\n{"celsius": 9}\n[result 2/2]\n{"celsius": 24}',
      ],
    ]);
    expect(t?.turns[0]?.meta).toEqual({
      tools: ["get_weather", "get_weather"],
      parallel_calls: 2,
      agent_reasoning: "Look up both cities at once.",
    });
    expect(t?.meta).toMatchObject({ model: "gpt-4.1", final_answer: "Rome is warmer: 24 C against 9 C." });
    expect(t?.meta?.skipped).toBeUndefined();
    expect(String(t?.meta?.agent_system).startsWith("You answer with the weather tool.\n\n## Tools\n\n")).toBe(true);
  });

  it("is detected in JSONL, a JSON array and a pretty-printed response, and reads the same from each", async () => {
    const jsonl = write([RESPONSE_WEATHER], "jsonl");
    const expected = sourceless(await read(jsonl));
    expect(expected).toHaveLength(1);
    for (const path of [jsonl, write([RESPONSE_WEATHER], "array"), write([RESPONSE_WEATHER], "document")]) {
      expect(await detected(path)).toBe("chat-tool-rows");
      expect(sourceless(await read(path))).toEqual(expected);
    }
  });

  it("reads local_shell_call, mcp_call and output content parts; counts hosted-tool items and encrypted reasoning", async () => {
    const row: Row = {
      id: "resp_tools_2",
      input: "What is in the current folder, and what is issue 7 about?",
      // `output` as a JSON string, as a Parquet string column holds it.
      output: JSON.stringify([
        { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "Z0FBQUFB" },
        {
          type: "local_shell_call",
          id: "lsh_1",
          call_id: "call_ls",
          action: { type: "exec", command: ["bash", "-lc", "ls -a"], env: {} },
          status: "completed",
        },
        { type: "local_shell_call_output", call_id: "call_ls", output: ".\n..\nREADME.md\n" },
        { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "issue 7" } },
        {
          type: "mcp_call",
          id: "mcp_1",
          server_label: "tracker",
          name: "get_issue",
          arguments: '{"number":7}',
          output: '{"title":"Crash on start"}',
          error: null,
        },
        { type: "function_call", call_id: "call_shot", name: "screenshot", arguments: "{}" },
        {
          type: "function_call_output",
          call_id: "call_shot",
          output: [
            { type: "input_text", text: "captured" },
            { type: "input_image", image_url: "data:image/png;base64,AAAA" },
          ],
        },
      ]),
    };
    const items = await read(write([row], "jsonl"));
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.task).toBe("What is in the current folder, and what is issue 7 about?");
    expect(pairs(t)).toEqual([
      ["ls -a", ".\n..\nREADME.md\n"],
      [call("get_issue", { number: 7 }), '{"title":"Crash on start"}'],
      [call("screenshot", {}), "captured\n[image]"],
    ]);
    expect(t?.meta?.skipped).toEqual({ encrypted_reasoning_item: 1, web_search_call_item: 1 });
  });

  it("quarantines an item without its name, an output that is no text, and a response whose call has no output yet", async () => {
    const noName: Row = {
      id: "resp_bad_1",
      input: [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "c1", arguments: "{}" },
      ],
    };
    const numberOutput: Row = {
      id: "resp_bad_2",
      input: [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "c1", name: "count", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: 42 },
      ],
    };
    const pending: Row = {
      id: "resp_pending",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Free disk space?" }] }],
      output: [
        { type: "function_call", id: "fc_9", call_id: "call_df", name: "shell", arguments: '{"command":"df -h"}', status: "completed" },
      ],
    };
    const items = await read(write([noName, numberOutput, pending], "jsonl"));
    expect(trajectories(items)).toEqual([]);
    expect(quarantined(items).map((q) => [q.id, q.field, q.reason])).toEqual([
      ["resp_bad_1", "input.1.name", "input.1.name: expected a non-empty string, got nothing"],
      ["resp_bad_2", "input.2.output", "input.2.output: expected a string or content parts, got a number"],
      ["resp_pending", "input", "input: no tool call was followed by its result (call_without_result 1)"],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// ToolBench / StableToolBench

const TOOLBENCH: Row = {
  id: "Step 2: Convert 5 miles to km and tell me a fact about cats.",
  conversations: [
    {
      from: "system",
      value:
        "You are AutoGPT, you can use many tools(functions) to do the following task.\nSpecifically, you have access to the following APIs: [{'name': 'convert_for_units', 'parameters': {'type': 'object', 'properties': {'value': {'type': 'number'}}}}, {'name': 'Finish', 'parameters': {'type': 'object', 'properties': {'return_type': {'type': 'string', 'enum': ['give_answer', 'give_up_and_restart']}, 'final_answer': {'type': 'string'}}}}]",
    },
    { from: "user", value: "\nConvert 5 miles to km and tell me a fact about cats.\nBegin!\n" },
    {
      from: "assistant",
      value:
        '\nThought: First convert the distance.\nAction: convert_for_units\nAction Input: {\n  "value": 5,\n  "from": "mi",\n  "to": "km"\n}',
    },
    { from: "function", value: '{"error": "", "response": "8.04672"}' },
    { from: "assistant", value: "\nThought: Now a cat fact.\nAction: fact_for_catfacts\nAction Input: {}" },
    { from: "function", value: '{"error": "", "response": "Cats sleep 12 to 16 hours a day."}' },
    {
      from: "assistant",
      value:
        '\nThought: I have both answers.\nAction: Finish\nAction Input: {\n  "return_type": "give_answer",\n  "final_answer": "5 miles is 8.05 km. Cats sleep 12 to 16 hours a day."\n}',
    },
  ],
};

describe("chat-tool-rows: ToolBench ReAct conversations", () => {
  it("reads Thought / Action / Action Input replies answered by function messages; Finish is the final answer, not a call", async () => {
    for (const path of [write([TOOLBENCH], "array"), write([TOOLBENCH], "jsonl")]) {
      expect(await detected(path)).toBe("chat-tool-rows");
      const items = await read(path);
      expect(quarantined(items)).toEqual([]);
      const [t] = trajectories(items);
      expect(t?.task).toBe("\nConvert 5 miles to km and tell me a fact about cats.\nBegin!\n");
      expect(pairs(t)).toEqual([
        [call("convert_for_units", { value: 5, from: "mi", to: "km" }), '{"error": "", "response": "8.04672"}'],
        [call("fact_for_catfacts", {}), '{"error": "", "response": "Cats sleep 12 to 16 hours a day."}'],
      ]);
      expect(t?.turns.map((turn) => turn.meta?.agent_thought)).toEqual(["First convert the distance.", "Now a cat fact."]);
      expect(t?.meta?.final_answer).toBe("5 miles is 8.05 km. Cats sleep 12 to 16 hours a day.");
      expect(t?.meta?.skipped).toBeUndefined();
      expect(String(t?.meta?.agent_system).startsWith("You are AutoGPT")).toBe(true);
    }
  });

  it("keeps an Action Input that is not JSON as written; ReAct text in a chat without function messages is no call", async () => {
    const pythonQuoting: Row = {
      id: "tb-python-quoting",
      conversations: [
        { from: "user", value: "Look up item 1." },
        { from: "assistant", value: "Thought: query it\nAction: item_for_store\nAction Input: {'id': 1}" },
        { from: "function", value: '{"error": "", "response": "a lamp"}' },
      ],
    };
    const talk: Row = {
      id: "react-talk",
      tools: [{ name: "search" }],
      conversations: [
        { from: "user", value: "How does a ReAct prompt look?" },
        { from: "assistant", value: 'Like this:\nAction: search\nAction Input: {"q": "cats"}' },
        { from: "user", value: "Thanks." },
      ],
    };
    const items = await read(write([pythonQuoting, talk], "jsonl"));
    expect(pairs(trajectories(items)[0])).toEqual([
      [JSON.stringify({ name: "item_for_store", arguments: "{'id': 1}" }), '{"error": "", "response": "a lamp"}'],
    ]);
    expect(quarantined(items).map((q) => [q.id, q.reason])).toEqual([
      ["react-talk", "conversations: no tool call was followed by its result (dialogue_after_last_turn 2)"],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Glaive function calling v2

const GLAIVE_SYSTEM =
  'SYSTEM: You are a helpful assistant with access to the following functions. Use them if required -\n{\n    "name": "convert_currency",\n    "description": "Convert an amount between currencies",\n    "parameters": {\n        "type": "object",\n        "properties": {\n            "amount": {"type": "number"},\n            "from": {"type": "string"},\n            "to": {"type": "string"}\n        },\n        "required": ["amount", "from", "to"]\n    }\n}\n';
const GLAIVE_CALLS: Row = {
  system: GLAIVE_SYSTEM,
  chat:
    "USER: How much is 100 USD in JPY?\n\n\n" +
    'ASSISTANT: <functioncall> {"name": "convert_currency", "arguments": \'{"amount": 100, "from": "USD", "to": "JPY"}\'} <|endoftext|>\n\n\n' +
    'FUNCTION RESPONSE: {"converted_amount": 15012.5, "currency": "JPY"}\n\n\n' +
    "ASSISTANT: 100 USD is about 15012.5 JPY. <|endoftext|>\n\n\n" +
    "USER: And 20 EUR in GBP?\n\n\n" +
    'ASSISTANT: Let me convert that. <functioncall> {"name": "convert_currency", "arguments": \'{"amount": 20, "from": "EUR", "to": "GBP"}\'} <|endoftext|>\n\n\n' +
    'FUNCTION RESPONSE: {"converted_amount": 17.1, "currency": "GBP"}\n\n\n' +
    "ASSISTANT: 20 EUR is about 17.1 GBP. <|endoftext|>\n",
};
const GLAIVE_PLAIN: Row = {
  system: "SYSTEM: You are a helpful assistant, with no access to external functions.\n",
  chat: "USER: What is the boiling point of water?\n\n\nASSISTANT: 100 degrees Celsius at sea level. <|endoftext|>\n",
};

describe("chat-tool-rows: Glaive function-calling chats", () => {
  it("reads the chat transcript: <functioncall> (arguments a single-quoted JSON string) → FUNCTION RESPONSE; a chat without a call is quarantined", async () => {
    for (const layout of ["jsonl", "array"] as const) {
      const path = write([GLAIVE_PLAIN, GLAIVE_CALLS], layout);
      expect(await detected(path)).toBe("chat-tool-rows");
      const items = await read(path);
      const [t] = trajectories(items);
      expect(t?.task).toBe("How much is 100 USD in JPY?");
      expect(pairs(t)).toEqual([
        [call("convert_currency", { amount: 100, from: "USD", to: "JPY" }), '{"converted_amount": 15012.5, "currency": "JPY"}'],
        [call("convert_currency", { amount: 20, from: "EUR", to: "GBP" }), '{"converted_amount": 17.1, "currency": "GBP"}'],
      ]);
      expect(t?.turns[1]?.meta).toEqual({
        tool: "convert_currency",
        observation_format: "json",
        agent_thought: "Let me convert that.",
        dialogue: [
          { role: "assistant", text: "100 USD is about 15012.5 JPY." },
          { role: "user", text: "And 20 EUR in GBP?" },
        ],
      });
      expect(t?.meta?.final_answer).toBe("20 EUR is about 17.1 GBP.");
      expect(String(t?.meta?.agent_system).startsWith("You are a helpful assistant with access to the following functions.")).toBe(true);
      expect(quarantined(items).map((q) => [q.field, q.reason.replace(/^element \d+: /, "")])).toEqual([
        ["chat", "chat: no tool call was followed by its result"],
      ]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// xLAM / APIGen

const XLAM: Row[] = [
  {
    id: 0,
    query: "Show me live giveaways of beta keys and of games.",
    answers: JSON.stringify([
      { name: "live_giveaways_by_type", arguments: { type: "beta" } },
      { name: "live_giveaways_by_type", arguments: { type: "game" } },
    ]),
    tools: JSON.stringify([
      {
        name: "live_giveaways_by_type",
        description: "Live giveaways of one type.",
        parameters: { type: { description: "game, loot or beta", type: "str", default: "game" } },
      },
    ]),
  },
  {
    id: 1,
    query: "Order 42's details, please.",
    answers: [{ name: "get_order", arguments: { order_id: "42" } }],
    tools: [{ name: "get_order", description: "One order.", parameters: { order_id: { type: "str" } } }],
  },
];

describe("chat-tool-rows: xLAM / APIGen single-turn rows", () => {
  it("are detected and each quarantined with the reason (calls but no tool results), never read as empty turns", async () => {
    for (const layout of ["jsonl", "array"] as const) {
      const path = write(XLAM, layout);
      expect(await detected(path)).toBe("chat-tool-rows");
      const detection = await detectFormat(path);
      const items = await collect((detection.kind === "format" ? detection.reader : chatToolRowsReader).read(path, OPTIONS));
      expect(trajectories(items)).toEqual([]);
      expect(quarantined(items).map((q) => [q.id, q.field, q.reason.replace(/^element \d+: /, "")])).toEqual(
        ["0", "1"].map((id) => [
          id,
          "answers",
          "an xLAM / APIGen function-calling row (query, answers, tools): it holds the calls a model should make but no tool results, so there is no environment output to learn from; not read",
        ]),
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Qwen-Agent and other OpenAI-style variants

describe("chat-tool-rows: Qwen-Agent function messages", () => {
  it("reads content items {text} as their text, matches role function results to calls by name, takes `functions` as the tool specs", async () => {
    const row: Row = {
      functions: [
        { name: "get_time", description: "Local time in a city", parameters: { type: "object", properties: { city: { type: "string" } } } },
        { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } } } },
      ],
      messages: [
        { role: "system", content: [{ text: "You are a helpful assistant." }] },
        { role: "user", content: [{ text: "What time is it in Paris, and what is the weather there?" }] },
        {
          role: "assistant",
          content: "",
          reasoning_content: "Two lookups.",
          function_call: { name: "get_time", arguments: '{"city": "Paris"}' },
        },
        { role: "assistant", content: "", function_call: { name: "get_weather", arguments: '{"city": "Paris"}' } },
        // The weather came back first: the result names its function.
        { role: "function", name: "get_weather", content: [{ text: "light rain, 12 C" }] },
        { role: "function", name: "get_time", content: [{ text: "14:05" }, { image: "https://example.com/clock.png" }] },
        { role: "assistant", content: [{ text: "It is 14:05 in Paris, with light rain at 12 C." }] },
      ],
    };
    const items = await read(write([row], "jsonl"));
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.task).toBe("What time is it in Paris, and what is the weather there?");
    expect(pairs(t)).toEqual([
      [
        `[call 1/2]\n${call("get_time", { city: "Paris" })}\n[call 2/2]\n${call("get_weather", { city: "Paris" })}`,
        "[result 1/2]\n14:05\n[image]\n[result 2/2]\nlight rain, 12 C",
      ],
    ]);
    expect(t?.meta?.agent_system).toBe(
      `You are a helpful assistant.\n\n## Tools\n\n${(row.functions as unknown[]).map((f) => JSON.stringify(f)).join("\n")}`,
    );
  });

  it("still reads a list of values that are not content items as JSON text", async () => {
    const row: Row = {
      messages: [
        { role: "user", content: "Search for lamps." },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "search_items", arguments: "{}" } }],
        },
        {
          role: "tool",
          tool_call_id: "call_1",
          content: [
            { text: "lamp", price: 12 },
            { text: "desk lamp", price: 30 },
          ],
        },
      ],
    };
    const [t] = trajectories(await read(write([row], "jsonl")));
    expect(pairs(t)).toEqual([[call("search_items", {}), '[{"text":"lamp","price":12},{"text":"desk lamp","price":30}]']]);
  });
});

describe("chat-tool-rows: dialects read before these fixes (regression)", () => {
  it("APIGen-MT ShareGPT rows (tools as a JSON string, system) and Mistral rows (9-character ids, object arguments, text-part results)", async () => {
    const apigenMt: Row = {
      conversations: [
        { from: "human", value: "I want to return a lamp. My email is ana.lima@example.com." },
        { from: "function_call", value: '{"name": "find_user_id_by_email", "arguments": {"email": "ana.lima@example.com"}}' },
        { from: "observation", value: "ana_lima_4821" },
        { from: "gpt", value: "Thanks. Which order is it?" },
        { from: "human", value: "#W100" },
        { from: "function_call", value: '{"name": "get_order_details", "arguments": {"order_id": "#W100"}}' },
        { from: "observation", value: '{"order_id": "#W100", "status": "delivered"}' },
        { from: "gpt", value: "Order #W100 is delivered and can be returned." },
      ],
      tools: JSON.stringify([
        { name: "find_user_id_by_email", parameters: {} },
        { name: "get_order_details", parameters: {} },
      ]),
      system: "# Retail agent policy",
    };
    const mistral: Row = {
      messages: [
        { role: "user", content: "Status of payment T1001?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "D681PevKs", function: { name: "retrieve_payment_status", arguments: { transaction_id: "T1001" } } },
            { id: "A2b3C4d5E", function: { name: "retrieve_payment_date", arguments: { transaction_id: "T1001" } } },
          ],
        },
        {
          role: "tool",
          name: "retrieve_payment_date",
          tool_call_id: "A2b3C4d5E",
          content: [{ type: "text", text: '{"date": "2021-10-05"}' }],
        },
        {
          role: "tool",
          name: "retrieve_payment_status",
          tool_call_id: "D681PevKs",
          content: [{ type: "text", text: '{"status": "Paid"}' }],
        },
        { role: "assistant", content: "Paid on 2021-10-05.", tool_calls: null },
      ],
    };
    const items = await read(write([apigenMt, mistral], "array"));
    expect(quarantined(items)).toEqual([]);
    const [a, m] = trajectories(items);
    expect(pairs(a)).toEqual([
      [call("find_user_id_by_email", { email: "ana.lima@example.com" }), "ana_lima_4821"],
      [call("get_order_details", { order_id: "#W100" }), '{"order_id": "#W100", "status": "delivered"}'],
    ]);
    expect(String(a?.meta?.agent_system).startsWith("# Retail agent policy\n\n## Tools\n\n")).toBe(true);
    expect(pairs(m)).toEqual([
      [
        `[call 1/2]\n${call("retrieve_payment_status", { transaction_id: "T1001" })}\n[call 2/2]\n${call("retrieve_payment_date", { transaction_id: "T1001" })}`,
        '[result 1/2]\n{"status": "Paid"}\n[result 2/2]\n{"date": "2021-10-05"}',
      ],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// SWE-smith rows whose `messages` is a JSON string

describe("swe-smith: messages as a JSON string (the Hub's string column)", () => {
  const messages = [
    { role: "system", content: "You are a helpful assistant that can interact with a computer to solve tasks." },
    { role: "user", content: "<uploaded_files>\n/testbed\n</uploaded_files>\nslugify keeps trailing dashes." },
    { role: "assistant", content: "Let me read it.\n\n<function=bash>\n<parameter=command>cat /testbed/slug.py</parameter>\n</function>" },
    { role: "user", content: "OBSERVATION:\ndef slugify(s):\n    return s.lower()\n" },
    { role: "assistant", content: "<function=submit>\n</function>" },
  ];
  const rows: Row[] = [
    {
      messages: JSON.stringify(messages),
      instance_id: "acme__slug.1a2b3c.func_pm__x1",
      resolved: true,
      model: "m",
      traj_id: "acme__slug.1a2b3c.func_pm__x1.k9",
    },
    { messages: "[not json", instance_id: "acme__slug.1a2b3c.func_pm__x1", traj_id: "broken" },
  ];

  it("is detected as swe-smith (JSONL and a JSON array) and read like its list form; a string that is not JSON is quarantined", async () => {
    for (const layout of ["jsonl", "array"] as const) {
      const path = write(rows, layout);
      expect(await detected(path)).toBe("swe-smith");
      const items = await collect(sweSmithReader.read(path, OPTIONS));
      const listForm = await collect(sweSmithReader.read(write([{ ...rows[0], messages }], layout), OPTIONS));
      expect(sourceless(items)).toEqual(sourceless(listForm));
      const [t] = trajectories(items);
      expect(pairs(t)).toEqual([
        ["<function=bash>\n<parameter=command>cat /testbed/slug.py</parameter>\n</function>", "def slugify(s):\n    return s.lower()\n"],
      ]);
      expect(t?.meta).toMatchObject({ task_id: "acme__slug.1a2b3c.func_pm__x1", outcome: { resolved: true } });
      expect(quarantined(items).map((q) => [q.id, q.field, q.reason])).toEqual([
        ["broken", "messages", expect.stringMatching(/^messages: a string that is not a JSON list of messages \(invalid JSON: /)],
      ]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The CLI on a folder of these files

describe("chat-tool-rows: SWE-agent chat transcripts (nebius/SWE-agent-trajectories)", () => {
  // As the dataset card lists the columns: a trajectory of {cutoff_date, mask, role, system_prompt,
  // text} with roles system / user / ai, SWE-agent's state footer after every observation, no tool API.
  const footer = (file: string) => `\n(Open file: ${file})\n(Current directory: /repo)\nbash-$`;
  const message = (role: string, text: string | null, system_prompt: string | null = null) => ({
    cutoff_date: role === "system" ? "01.01.2023" : null,
    mask: role === "ai",
    role,
    system_prompt,
    text,
  });
  const row = (systemPrompt = "SETTING: You are an autonomous programmer working in a special command-line interface."): Row => ({
    instance_id: "acme__widgets-17",
    model_name: "swe-agent-llama-70b",
    target: true,
    trajectory: [
      message("system", null, systemPrompt),
      message("user", `ISSUE:\nwidgets.count() is off by one\n\nINSTRUCTIONS: solve it.${footer("n/a")}`),
      message("ai", 'Let me find the function.\n```\nsearch_dir "def count"\n```'),
      message("user", `Found 1 matches for "def count" in /repo:\n/repo/widgets.py (1 matches)${footer("n/a")}`),
      message(
        "ai",
        "The bug is on line 12; an example of the fix:\n```python\nreturn len(items)\n```\nEditing it:\n```\nedit 12:12\n    return len(items)\nend_of_edit\n```",
      ),
      message("user", `[File: /repo/widgets.py (20 lines total)]\n12:    return len(items)${footer("/repo/widgets.py")}`),
      message("ai", "Done.\n```\nsubmit\n```"),
    ],
    exit_status: "submitted",
    generated_patch: "diff --git a/widgets.py b/widgets.py\n",
    eval_logs: "",
  });

  it("each reply's last code block is the command, the next user message its output; task, system prompt, outcome", async () => {
    for (const layout of ["jsonl", "array", "document"] as const) {
      const path = write([row()], layout);
      expect(await detected(path), layout).toBe("chat-tool-rows");
      const [t] = trajectories(await read(path));
      expect(t?.domain).toBe("swe");
      expect(pairs(t)).toEqual([
        ['search_dir "def count"', `Found 1 matches for "def count" in /repo:\n/repo/widgets.py (1 matches)${footer("n/a")}`],
        [
          "edit 12:12\n    return len(items)\nend_of_edit",
          `[File: /repo/widgets.py (20 lines total)]\n12:    return len(items)${footer("/repo/widgets.py")}`,
        ],
      ]);
      // The text before the command (an earlier example block included) is the thought, not the action.
      expect(t?.turns[1]?.meta?.agent_thought).toBe(
        "The bug is on line 12; an example of the fix:\n```python\nreturn len(items)\n```\nEditing it:",
      );
      expect(t?.task).toContain("widgets.count() is off by one");
      expect(t?.meta).toMatchObject({
        agent_system: expect.stringContaining("autonomous programmer"),
        outcome: { resolved: true },
        task_id: "acme__widgets-17",
        model: "swe-agent-llama-70b",
        skipped: { call_without_result: 1 },
      });
    }
  });

  it("a row whose line is longer than the head (a long observation later on) is detected by its keys and the first state footer", async () => {
    const long = row();
    const messages = long.trajectory as Row[];
    messages[5] = message("user", `[File: /repo/widgets.py (4000 lines total)]\n${"x = 1\n".repeat(20_000)}${footer("/repo/widgets.py")}`);
    const path = write([long], "jsonl");
    expect(readFileSync(path, "utf8").indexOf("\n")).toBeGreaterThan(64 * 1024);
    expect(await detected(path)).toBe("chat-tool-rows");
    expect(trajectories(await read(path))[0]?.turns).toHaveLength(2);
  });

  it("negative control: a chat that quotes code without SWE-agent's state footer is no transcript of commands", async () => {
    const chat = row();
    chat.trajectory = (chat.trajectory as Row[]).map((m) =>
      typeof m.text === "string" ? { ...m, text: m.text.replace(/\n\(Open file:[\s\S]*$/, "") } : m,
    );
    const path = write([chat], "jsonl");
    expect(await detected(path)).not.toBe("chat-tool-rows");
    const [entry] = quarantined(await read(path));
    expect(entry?.reason).toMatch(/no tool call was followed by its result/);
  });
});

describe("lwm-data on a folder of these dialects", () => {
  it("validate detects each file, and a run accounts for every row: records in = samples out + quarantined", async () => {
    const work = tempDir("lwm-chat-dialects-run-");
    const files: [string, Row[], "jsonl" | "array" | "document"][] = [
      ["anthropic", [ANTHROPIC_WEATHER, ANTHROPIC_SHELL], "jsonl"],
      ["responses", [RESPONSE_WEATHER], "document"],
      ["toolbench", [TOOLBENCH], "array"],
      ["glaive", [GLAIVE_CALLS, GLAIVE_PLAIN], "jsonl"],
      ["xlam", XLAM, "array"],
    ];
    for (const [name, rows, layout] of files) {
      const dir = join(work, "in", name);
      mkdirSync(dir, { recursive: true });
      write(rows, layout, dir);
    }
    const config = writeConfig("inputs:\n  - path: in/*/*\noutput: { dir: out }\n", work);
    const env = { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}` };
    const validate = await exec(process.execPath, [CLI, "validate", config], { env });
    for (const [name] of files)
      expect(validate.stdout).toMatch(new RegExp(`in/${name}/rows\\.json[l]? .*format=chat-tool-rows \\(detected`));
    await exec(process.execPath, [CLI, "run", config, "--progress", "none"], { env });
    const manifest = JSON.parse(readFileSync(join(work, "out/manifest.json"), "utf8")) as {
      counts: { records_in: number; samples_out: number; quarantined: number; filtered: number };
    };
    // 2 Anthropic + 1 Responses + 1 ToolBench + 1 Glaive read; the plain Glaive chat and the 2 xLAM rows quarantined.
    expect(manifest.counts).toMatchObject({ records_in: 8, samples_out: 5, quarantined: 3 });
    expect(manifest.counts.records_in).toBe(manifest.counts.samples_out + manifest.counts.quarantined + manifest.counts.filtered);
  });
});
