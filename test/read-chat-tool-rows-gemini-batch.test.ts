/**
 * The chat-tool-rows reader on Google Gemini API `contents` rows (logged generateContent requests,
 * Vertex AI supervised-tuning rows, the Python SDK's snake_case dumps), on Gemini batch-prediction
 * lines (`{request, response}` as Vertex AI writes them, `{key, request}` as the Gemini API takes
 * them) and on OpenAI Batch API lines (input `{custom_id, method, url, body}`, output `{id,
 * custom_id, response, error}`, or both joined). Fixtures in test/fixtures/handmade/chat-tool-rows/
 * (gemini-*.jsonl, openai-batch-*.jsonl), hand-written from each API's documentation; README.md
 * there says what each line exercises.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { chatToolRowsReader, isChatRow } from "../src/read/chat-tool-rows.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const DIR = join(ROOT, "test/fixtures/handmade/chat-tool-rows");
const at = (name: string) => join(DIR, name);
const OPTIONS = { maxLineBytes: 1 << 22 };

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const pairs = (t: Trajectory | undefined) => (t?.turns ?? []).map((turn) => [turn.action, turn.observation]);
const call = (name: string, args: unknown) => JSON.stringify({ name, arguments: args });

async function read(path: string): Promise<ReadItem[]> {
  return collect(chatToolRowsReader.read(path, OPTIONS));
}

async function format(path: string): Promise<string> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}

function writeJsonl(rows: unknown[], name = "rows.jsonl"): string {
  const path = join(tempDir("lwm-gemini-batch-"), name);
  writeFileSync(path, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return path;
}

describe("chat-tool-rows: Gemini API contents", () => {
  it("reads functionCall → functionResponse (by name) as a turn; thought parts are reasoning, text the thought; systemInstruction and functionDeclarations are the agent's system", async () => {
    expect(await format(at("gemini-contents.jsonl"))).toBe("chat-tool-rows");
    const items = await read(at("gemini-contents.jsonl"));
    expect(quarantined(items)).toEqual([]);
    const [first] = trajectories(items);
    expect(first?.id).toBe("gem-req-001");
    expect(first?.task).toBe("Can we sail out of Port Vellin on Saturday?");
    expect(pairs(first)).toEqual([[call("get_forecast", { town: "Port Vellin", days: 3 }), "Saturday: wind W 12 kn, gusts 18 kn, dry."]]);
    expect(first?.turns[0]?.meta).toEqual({
      tool: "get_forecast",
      agent_thought: "Let me check the forecast first.",
      agent_reasoning: "The user needs wind and tide for Port Vellin.",
    });
    expect(first?.meta).toMatchObject({
      model: "gemini-2.5-flash",
      final_answer: "Saturday looks good: westerly 12 knots, dry. Leave before noon.",
    });
    // The declarations flattened out of `tools[].functionDeclarations`, one spec a line.
    const system = first?.meta?.agent_system as string;
    expect(system.split("\n\n## Tools\n\n")[0]).toBe("You plan sailing trips. Use the tools before answering.");
    expect(
      system
        .split("\n\n## Tools\n\n")[1]
        ?.split("\n")
        .map((l) => JSON.parse(l).name),
    ).toEqual(["get_forecast", "get_tide_table"]);
  });

  it("matches parallel calls by id (results in the other order), marks an `error` response, and reads role function results and snake_case parts", async () => {
    const [, second, third, fourth] = trajectories(await read(at("gemini-contents.jsonl")));
    expect(second?.turns).toHaveLength(1);
    expect(second?.turns[0]?.action).toBe(
      `[call 1/2]\n${call("get_forecast", { town: "Skarholm", days: 1 })}\n[call 2/2]\n${call("get_tide_table", { harbour: "Skarholm" })}`,
    );
    expect(second?.turns[0]?.observation).toBe('[result 1/2]\n{"wind":"S 20 kn","rain_mm":4}\n[result 2/2]\nharbour not found: Skarholm');
    expect(second?.turns[0]?.meta).toMatchObject({ is_error: true, error_results: [2] });
    // Vertex tuning row: role "function", two steps, matched by name; no id of its own (a hash).
    expect(third?.id).toMatch(/^chat-[0-9a-f]{16}$/);
    expect(pairs(third)).toEqual([
      [call("get_tide_table", { harbour: "Orren" }), '{"high":["08:40","21:05"],"low":["02:30","14:50"]}'],
      [call("get_forecast", { town: "Orren" }), "calm, fog until 10"],
    ]);
    expect(third?.turns[0]?.meta?.observation_format).toBe("json");
    expect(third?.meta?.agent_system).toBe("You are a harbour assistant.");
    // snake_case (Python SDK), system_instruction as a string; code-execution parts counted, never turns.
    expect(pairs(fourth)).toEqual([[call("lookup_distance", { a: "Orren", b: "Skarholm" }), "27 nautical miles"]]);
    expect(fourth?.meta).toMatchObject({
      final_answer: "About 4.5 hours.",
      skipped: { executable_code_part: 1, code_execution_result_part: 1 },
    });
    expect(fourth?.meta?.agent_system).toMatch(/^Answer with numbers\.\n\n## Tools\n\n\{"name":"lookup_distance"/);
  });

  it("quarantines a bad part naming its file, line and field; a call with no response is counted", async () => {
    const tools = [{ functionDeclarations: [{ name: "f" }] }];
    const path = writeJsonl([
      {
        id: "ok",
        tools,
        contents: [
          { role: "user", parts: [{ text: "go" }] },
          { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
          { role: "user", parts: [{ functionResponse: { name: "f", response: { output: "done" } } }] },
        ],
      },
      {
        id: "no-name",
        tools,
        contents: [
          { role: "user", parts: [{ text: "go" }] },
          { role: "model", parts: [{ functionCall: { args: {} } }] },
        ],
      },
      {
        id: "parts-string",
        tools,
        contents: [
          { role: "user", parts: [{ text: "go" }] },
          { role: "model", parts: "f()" },
          { role: "user", parts: [] },
        ],
      },
      {
        id: "part-number",
        tools,
        contents: [
          { role: "user", parts: [{ text: "go" }] },
          { role: "model", parts: [{ functionCall: { name: "f" } }] },
          { role: "user", parts: [7] },
        ],
      },
      {
        id: "response-array",
        tools,
        contents: [
          { role: "model", parts: [{ functionCall: { name: "f" } }] },
          { role: "user", parts: [{ functionResponse: { name: "f", response: [1, 2] } }] },
        ],
      },
      {
        id: "unanswered",
        tools,
        contents: [
          { role: "user", parts: [{ text: "go" }] },
          { role: "model", parts: [{ functionCall: { name: "f" } }] },
        ],
      },
    ]);
    expect(await format(path)).toBe("chat-tool-rows");
    const items = await read(path);
    expect(trajectories(items).map((t) => t.id)).toEqual(["ok"]);
    expect(quarantined(items).map((q) => [q.source.uri, q.source.line, q.id, q.field, q.reason])).toEqual([
      [
        path,
        2,
        "no-name",
        "contents.1.parts.0.functionCall.name",
        "contents.1.parts.0.functionCall.name: expected a non-empty string, got nothing",
      ],
      [path, 3, "parts-string", "contents.1.parts", "contents.1.parts: expected a list of parts, got a string"],
      [path, 4, "part-number", "contents.2.parts.0", "contents.2.parts.0: expected a part object, got a number"],
      [
        path,
        5,
        "response-array",
        "contents.1.parts.0.functionResponse.response",
        "contents.1.parts.0.functionResponse.response: expected a JSON object, got an array",
      ],
      [path, 6, "unanswered", "contents", "contents: no tool call was followed by its result (call_without_result 1)"],
    ]);
  });

  it("negative controls: a row whose `contents` is no Gemini conversation, or a Gemini chat without tools, is not claimed", () => {
    expect(isChatRow({ contents: "Chapter 1: the harbour" })).toBe(false);
    expect(isChatRow({ title: "Atlas", contents: [{ title: "Maps", page: 3 }] })).toBe(false);
    expect(
      isChatRow({
        contents: [
          { role: "user", parts: [{ text: "hi" }] },
          { role: "model", parts: [{ text: "hello" }] },
        ],
      }),
    ).toBe(false);
    // With a function call, or declared functions, it is.
    expect(isChatRow({ contents: [{ role: "model", parts: [{ functionCall: { name: "f" } }] }] })).toBe(true);
    expect(isChatRow({ tools: [{ functionDeclarations: [{ name: "f" }] }], contents: [{ role: "user", parts: [{ text: "hi" }] }] })).toBe(
      true,
    );
  });

  it("negative control: a file of plain JSON objects with a `contents` field is not chat-tool-rows", async () => {
    const path = writeJsonl(
      [
        { book: "Tides", contents: [{ chapter: 1, title: "Moon" }] },
        { book: "Winds", contents: "none" },
      ],
      "books.jsonl",
    );
    expect(await format(path)).not.toBe("chat-tool-rows");
  });
});

describe("chat-tool-rows: Gemini batch prediction lines", () => {
  it("reads a Vertex AI output line's request and takes its first candidate as the model's last turn; a Gemini API input line by its key", async () => {
    const path = at("gemini-batch-output.jsonl");
    expect(await format(path)).toBe("chat-tool-rows");
    const items = await read(path);
    const [first, second, third] = trajectories(items);
    expect(pairs(first)).toEqual([[call("get_tide_table", { harbour: "Orren" }), "high 09:20 and 21:45"]]);
    expect(first?.meta).toMatchObject({ model: "gemini-2.0-flash-001", final_answer: "High water at 09:20 and 21:45." });
    expect(first?.task).toBe("Tides at Orren tomorrow?");
    // The candidate is a new call: not a turn (no result), counted.
    expect(pairs(second)).toEqual([[call("get_forecast", { town: "Orren" }), "light winds all day"]]);
    expect(second?.meta?.skipped).toEqual({ call_without_result: 1 });
    expect(second?.meta?.final_answer).toBeUndefined();
    expect(third?.id).toBe("trip-0003");
    expect(pairs(third)).toEqual([[call("get_forecast", { town: "Port Vellin" }), "fresh breeze, showers"]]);
  });

  it("names a bad field by the line's own path, and quarantines a response without its request with the reason", async () => {
    const path = at("gemini-batch-output.jsonl");
    expect(quarantined(await read(path)).map((q) => [q.source.uri, q.source.line, q.id, q.field, q.reason])).toEqual([
      [
        path,
        4,
        "trip-0004",
        "request.contents.1.parts.0.functionCall.name",
        "request.contents.1.parts.0.functionCall.name: expected a non-empty string, got nothing",
      ],
      [
        path,
        5,
        "trip-0005",
        "response",
        expect.stringMatching(/^a Gemini batch prediction output without its request: .*join them by `key`$/),
      ],
    ]);
    // A bad candidate part is named under `response`.
    const bad = writeJsonl([
      {
        request: {
          contents: [
            { role: "user", parts: [{ text: "go" }] },
            { role: "model", parts: [{ functionCall: { name: "f" } }] },
            { role: "user", parts: [{ functionResponse: { name: "f", response: { output: "ok" } } }] },
          ],
        },
        response: { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "" } }] } }] },
      },
    ]);
    expect(quarantined(await read(bad)).map((q) => q.field)).toEqual(["response.candidates.0.content.parts.0.functionCall.name"]);
  });
});

describe("chat-tool-rows: OpenAI Batch API lines", () => {
  it("reads an input line's body as the chat row (Chat Completions messages, Responses input items), custom_id as the id", async () => {
    const path = at("openai-batch-input.jsonl");
    expect(await format(path)).toBe("chat-tool-rows");
    const items = await read(path);
    const [chat, responses] = trajectories(items);
    expect(chat?.id).toBe("ticket-7-turn-2");
    expect(chat?.task).toBe("Where is my order T-1042?");
    expect(pairs(chat)).toEqual([
      [call("lookup_order", { order_id: "T-1042" }), '{"status": "shipped", "carrier": "Posta", "eta": "2025-03-14"}'],
    ]);
    expect(chat?.meta).toMatchObject({ model: "gpt-4o-mini" });
    expect(chat?.meta?.agent_system).toMatch(/^You are the support agent of the Lumen tea shop\.\n\n## Tools\n\n/);
    expect(responses?.id).toBe("ticket-8-turn-2");
    expect(pairs(responses)).toEqual([[call("refund_order", { order_id: "T-0999" }), "refund issued: 18.50 EUR"]]);
    expect(responses?.meta?.agent_system).toMatch(/^You are the support agent/);
    // A request to another endpoint: quarantined, named.
    expect(quarantined(items).map((q) => [q.source.line, q.field, q.reason])).toEqual([
      [3, "url", 'an OpenAI Batch API request to "/v1/embeddings": not a chat conversation'],
    ]);
  });

  it("an output line alone is claimed when its reply calls a tool, and quarantined: no request, no tool result; join by custom_id", async () => {
    const path = at("openai-batch-output.jsonl");
    expect(await format(path)).toBe("chat-tool-rows");
    const items = await read(path);
    expect(trajectories(items)).toEqual([]);
    expect(quarantined(items).map((q) => [q.source.uri, q.source.line, q.id, q.field, q.reason])).toEqual([
      [
        path,
        1,
        "batch_req_01",
        "response",
        "an OpenAI Batch API output line (custom_id \"ticket-9-turn-1\"): it holds the model's reply but not the request's messages, so no tool result; join it with its input line by custom_id (the input line with this line's `response` added) to read it",
      ],
      [
        path,
        2,
        "batch_req_02",
        "error",
        'an OpenAI Batch API output line (custom_id "ticket-10-turn-1") for a request that failed (batch_expired: This request could not be executed before the completion window expired.): no reply and no conversation to read',
      ],
    ]);
  });

  it("an input line joined with its output's response: the reply is the last message (a final answer, or a call counted); a failed response leaves the request alone", async () => {
    const items = await read(at("openai-batch-joined.jsonl"));
    const [answered, calling, failed] = trajectories(items);
    expect(answered?.meta?.final_answer).toBe("Your order T-1042 shipped with Posta and should arrive on 14 March.");
    expect(pairs(answered)).toHaveLength(1);
    expect(calling?.meta?.skipped).toEqual({ call_without_result: 1 });
    expect(failed?.meta?.skipped).toEqual({ batch_response_without_reply: 1 });
    expect(failed?.meta?.final_answer).toBeUndefined();
    // A Responses request whose response only calls: no answered call, quarantined naming the request's field.
    expect(quarantined(items).map((q) => [q.source.line, q.id, q.field, q.reason])).toEqual([
      [4, "ticket-13-turn-1", "body.input", "body.input: no tool call was followed by its result (call_without_result 1)"],
    ]);
  });

  it("negative controls: a batch file of plain chat requests, or of plain-text replies, is not claimed; other rows read as before", async () => {
    const plain = writeJsonl([
      {
        custom_id: "r1",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "m", messages: [{ role: "user", content: "Hello" }] },
      },
    ]);
    expect(await format(plain)).not.toBe("chat-tool-rows");
    const replies = writeJsonl([
      {
        id: "batch_req_1",
        custom_id: "r1",
        response: { status_code: 200, body: { choices: [{ message: { role: "assistant", content: "Hi" } }] } },
        error: null,
      },
    ]);
    expect(await format(replies)).not.toBe("chat-tool-rows");
    // A chat row that happens to carry a custom_id but no body is read as the chat row it is.
    const row = {
      custom_id: "x",
      messages: [
        { role: "user", content: "ls" },
        { role: "assistant", tool_calls: [{ id: "c1", function: { name: "bash", arguments: '{"command":"ls"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "a.txt" },
      ],
    };
    expect(isChatRow(row)).toBe(true);
    expect(pairs(trajectories(await read(writeJsonl([row])))[0])).toEqual([["ls", "a.txt"]]);
  });
});
