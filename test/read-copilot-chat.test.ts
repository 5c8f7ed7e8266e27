/** The VS Code Copilot Chat reader (src/read/copilot-chat.ts) on the hand-written sessions in test/fixtures/handmade/copilot-chat/ and variants built here. */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { copilotChatReader, inferCopilotChatDomain, toolResultText } from "../src/read/copilot-chat.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS } from "../src/read/registry.ts";
import { collect, expectClaimsNoOtherFixture, READ_OPTIONS, ROOT, tempDir, validateAndRun, writeConfig } from "./helpers.ts";

const HANDMADE = join(ROOT, "test/fixtures/handmade/copilot-chat");
const SESSIONS = join(HANDMADE, "workspaceStorage/6c3f0a9e2b4d4e1f8a7c5b3d2e1f0a9b/chatSessions");
const S1 = "3b9d6f2e-7a41-4c8e-9f05-2d6e8a1c4b70";
const S2 = "9c2e4a6b-1d3f-4e5a-8b7c-0d2e4f6a8b1c";
const DOCUMENT = join(SESSIONS, `${S1}.json`);
const LOG = join(SESSIONS, `${S2}.jsonl`);
const EXPORT = join(HANDMADE, "exports/copilot-chat-export.json");

const read = (path: string, options = READ_OPTIONS): Promise<ReadItem[]> => collect(copilotChatReader.read(path, options));

async function only(path: string): Promise<Trajectory> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  const item = items[0] as ReadItem;
  if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
  expect(trajectoryInputSchema.safeParse(item.trajectory).success).toBe(true);
  return item.trajectory;
}

const session1 = (): Record<string, unknown> & { requests: Record<string, unknown>[] } => JSON.parse(readFileSync(DOCUMENT, "utf8"));

/** A file named `name` in a fresh folder holding `text`. */
function written(name: string, text: string): string {
  const path = join(tempDir("lwm-copilot-chat-"), name);
  writeFileSync(path, text);
  return path;
}
const logText = (entries: readonly (string | object)[]): string =>
  `${entries.map((entry) => (typeof entry === "string" ? entry : JSON.stringify(entry))).join("\n")}\n`;

/** The first session with its requests replaced: a small session to vary. */
function sessionWith(requests: unknown[], sessionId = S1): string {
  return JSON.stringify({ ...session1(), sessionId, requests });
}
const round = (response: string, calls: { id: string; name: string; args: unknown }[]) => ({
  response,
  toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.args) })),
  toolInputRetry: 0,
  id: `round-${response.length}`,
});
const text = (value: string) => ({ $mid: 21, value });
const request = (prompt: string, rounds: unknown[], results: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  requestId: `request_${prompt.length}`,
  message: { text: prompt, parts: [] },
  response: [],
  result: { metadata: { toolCallRounds: rounds, toolCallResults: results } },
  ...extra,
});

describe("copilot-chat reader: the hand-written sessions", () => {
  it("a .json session: each round's calls in order, answered by toolCallResults; run_in_terminal as its command; prompt-tsx and text parts", async () => {
    const t = await only(DOCUMENT);
    expect(t.id).toBe(S1);
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("The price rounding test in tests/test_pricing.py fails. Fix round_price and run the tests.");
    expect(t.turns.map((turn) => turn.action.split(" ")[0])).toEqual([
      "read_file",
      "python",
      "replace_string_in_file",
      "python",
      "ruff",
      "read_file",
    ]);
    expect(t.turns[1]?.action).toBe("python -m pytest -q tests/test_pricing.py");
    expect(JSON.parse(t.turns[0]?.action.slice("read_file ".length) ?? "")).toEqual({
      filePath: "/home/dev/shop/shop/pricing.py",
      startLine: 1,
      endLine: 40,
    });
    // The prompt-tsx tree's text nodes, a line break before each marked one (blank lines kept).
    expect(t.turns[0]?.observation).toBe(
      "File: `/home/dev/shop/shop/pricing.py`. Lines 1 to 12 (12 lines total): \n```python\nfrom decimal import Decimal, ROUND_HALF_UP\n\n\ndef round_price(amount: float) -> float:\n    return round(amount, 2)\n```",
    );
    expect(t.turns[1]?.observation).toMatch(/^F\. +\[100%\]\n[\s\S]*E {7}assert 2\.67 == 2\.68[\s\S]*1 failed, 1 passed in 0\.04s$/);
    expect(t.turns[3]?.observation).toMatch(/2 passed in 0\.03s$/);
    expect(t.turns.map((turn) => turn.meta?.tool_call_id)).toEqual([
      "toolu_01Hq7cR2wN5kT8vX3mB6pL9d__vscode-1",
      "toolu_01Jd4sF8gK2nQ6wE9rT3yU5i__vscode-2",
      "toolu_01Lm3vB7xC1zA5sD8fG2hJ4k__vscode-3",
      "toolu_01Np6qW9eR2tY4uI7oP1aS3d__vscode-4",
      "toolu_01Pz8xC4vB6nM2qW5eR7tY9u__vscode-5",
      "toolu_01Qa2sD4fG6hJ8kL1zX3cV5b__vscode-6",
    ]);
    // Copilot hands a failed call back as "ERROR while calling tool: …": an error turn.
    expect(t.turns.map((turn) => turn.meta?.is_error === true)).toEqual([false, false, false, false, false, true]);
  });

  it("thinking: a round's thinking and its text on its first call; later prompts are the next turn's user messages; the last text is the final message", async () => {
    const t = await only(DOCUMENT);
    expect(t.turns[0]?.thinking).toBe(
      "The test name says rounding; look at how round_price rounds before running anything.\n\nI'll read the pricing module first.",
    );
    expect(t.turns[1]?.thinking).toBeUndefined();
    expect(t.turns[2]?.thinking).toMatch(/^Python's round\(\) rounds half to even/);
    expect(t.turns[4]?.meta?.user_messages).toEqual(["Also run the linter on the package."]);
    expect(t.turns[4]?.thinking).toBe("Running ruff.");
    expect(t.meta?.final_message).toBe("ruff reports no problems in `shop`.");
    // The first request's closing answer was the agent's reply to the person, not a call's thinking.
    expect(t.meta?.skipped).toEqual({ assistant_reply: 1 });
  });

  it("meta: agent, session, title, responder, location, creation date, the resolved model, participants, tokens summed, requests", async () => {
    const t = await only(DOCUMENT);
    expect(t.meta).toMatchObject({
      agent: "copilot-chat",
      session_id: S1,
      title: "Fix price rounding",
      responder: "GitHub Copilot",
      location: "panel",
      creation_date: "2026-05-11T08:30:00.000Z",
      model: "claude-sonnet-4.5",
      chat_agents: ["github.copilot.editsAgent"],
      tokens: { input: 18211 + 19530, output: 742 + 96 },
      requests: 2,
    });
    expect(t.meta?.models).toBeUndefined();
  });

  it("a .jsonl operation log is replayed: sets, pushes (cut to i first) and deletes; what it builds is read as a session", async () => {
    const t = await only(LOG);
    expect(t.id).toBe(S2);
    expect(t.domain).toBe("terminal");
    expect(t.task).toBe("What is in the logs folder, and what failed last night?");
    expect(t.turns.map((turn) => [turn.action, turn.observation.split("\n").at(-1)])).toEqual([
      ["ls -1 logs", "nightly-2026-05-11.log"],
      ["tail -n 3 logs/nightly-2026-05-11.log", "02:00:03 backup: FAILED"],
    ]);
    expect(t.turns[0]?.thinking).toBe("Let me look.");
    expect(t.meta).toMatchObject({
      agent: "copilot-chat",
      session_id: S2,
      title: "Nightly log failure",
      creation_date: "2026-05-12T14:05:00.000Z",
      model: "gpt-5-mini",
      tokens: { input: 9120, output: 211 },
      requests: 1,
      final_message: "Last night's run failed: the backup step could not reach the database (connection refused on port 5432).",
    });
  });

  it("the same session written as a log, request by request, reads as its .json file does", async () => {
    const session = session1();
    const { requests, ...rest } = session;
    const entries: object[] = [{ kind: 0, v: { ...rest, requests: [] } }];
    requests.forEach((req, i) => {
      const { result, response, ...start } = req;
      entries.push({ kind: 2, k: ["requests"], v: [{ ...start, response: [] }] });
      // Streamed parts, one pushed at a time, the first replaced once (`i`), then the result set.
      for (const [p, part] of (response as unknown[]).entries()) entries.push({ kind: 2, k: ["requests", i, "response"], v: [part], i: p });
      entries.push({ kind: 1, k: ["requests", i, "result"], v: result });
    });
    const fromLog = await only(written(`${S1}.jsonl`, logText(entries)));
    const fromDocument = await only(DOCUMENT);
    expect({ ...fromLog, source: undefined }).toEqual({ ...fromDocument, source: undefined });
    // Negative control: a log that drops the last result set is not the same session.
    const short = await only(written(`${S1}.jsonl`, logText(entries.slice(0, -1))));
    expect(short.turns.length).toBeLessThan(fromDocument.turns.length);
  });

  it("an export (no session id, pretty-printed) whose requests kept no rounds: terminal cards with their output, MCP cards with result details", async () => {
    const t = await only(EXPORT);
    expect(t.id).toBe("copilot-chat-export");
    expect(t.meta?.session_id).toBeUndefined();
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["node --version", "v22.11.0"],
      [
        'mcp_github_search_issues {"q":"timeout is:open repo:acme/shop"}',
        '{"total_count":1,"items":[{"number":42,"title":"Checkout times out after 30s"}]}',
      ],
    ]);
    expect(t.turns[0]?.meta).toMatchObject({ tool: "run_in_terminal", exit_code: 0, tool_call_id: "call_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8" });
    expect(t.turns[0]?.thinking).toBe("Check node first, then search the tracker.");
    expect(t.meta).toMatchObject({ model: "copilot/gpt-4.1", skipped: { tool_card_without_result: 1 } });
    expect(t.meta?.final_message).toMatch(/^Node v22\.11\.0 is installed/);
  });
});

describe("copilot-chat reader: variants", () => {
  it("a result keyed without Copilot's __vscode-N suffix still answers its call; an unanswered call (a cancelled request) is counted", async () => {
    const path = written(
      "a.json",
      sessionWith([
        request("go", [round("", [{ id: "call_1__vscode-7", name: "run_in_terminal", args: { command: "pwd" } }])], {
          call_1: { content: [text("/home/dev")] },
        }),
        request(
          "again",
          [round("", [{ id: "call_2__vscode-8", name: "run_in_terminal", args: { command: "sleep 100" } }])],
          {},
          {
            modelState: { value: 2 },
          },
        ),
      ]),
    );
    const t = await only(path);
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([["pwd", "/home/dev"]]);
    expect(t.meta?.skipped).toMatchObject({ call_without_result: 1, cancelled_request: 1 });
  });

  it("a round's call whose result the metadata lacks is answered by the output its terminal card kept (ids matched without __vscode-N)", async () => {
    const card = {
      kind: "toolInvocationSerialized",
      toolCallId: "call_9",
      toolId: "run_in_terminal",
      isComplete: true,
      toolSpecificData: {
        kind: "terminal",
        commandLine: { original: "ls" },
        terminalCommandOutput: { text: "a.txt" },
        terminalCommandState: { exitCode: 0 },
      },
    };
    const withCard = request(
      "list",
      [round("", [{ id: "call_9__vscode-3", name: "run_in_terminal", args: { command: "ls" } }])],
      {},
      { response: [card] },
    );
    const t = await only(written("d.json", sessionWith([withCard])));
    expect(t.turns.map((turn) => [turn.action, turn.observation, turn.meta?.exit_code])).toEqual([["ls", "a.txt", 0]]);
    // Negative control: without the card's output the call has no result.
    const bare = request(
      "list",
      [round("", [{ id: "call_9__vscode-3", name: "run_in_terminal", args: { command: "ls" } }])],
      {},
      {
        response: [{ ...card, toolSpecificData: { kind: "terminal", commandLine: { original: "ls" } } }],
      },
    );
    const items = await collect(copilotChatReader.read(written("e.json", sessionWith([bare])), READ_OPTIONS));
    expect(readFilterOf(items[0] as ReadItem)?.reason).toMatch(/1 call_without_result/);
  });

  it("older sessions: a message as a plain string, isCanceled; result parts as data, images and plain strings", async () => {
    const tree = {
      type: 1,
      ctor: 2,
      children: [
        { type: 2, text: "see" },
        { type: 1, ctor: 3, children: [] },
      ],
    };
    const path = written(
      "b.json",
      sessionWith([
        {
          requestId: "r1",
          message: "show the chart",
          isCanceled: false,
          response: [],
          result: {
            metadata: {
              toolCallRounds: [round("", [{ id: "c1", name: "mcp_charts_render", args: {} }])],
              toolCallResults: {
                c1: { content: [{ $mid: 24, mimeType: "image/png", data: {} }, { $mid: 23, value: { node: tree } }, "plain"] },
              },
            },
          },
        },
      ]),
    );
    const t = await only(path);
    expect(t.task).toBe("show the chart");
    expect(t.turns[0]?.observation).toBe("[data image/png]\nsee[image]\nplain");
    expect(t.domain).toBe("mcp");
    expect(toolResultText("as is", "x")).toBe("as is");
  });

  it("a session with no answered call (ask mode) is well-formed: no turns, and a read filter saying why", async () => {
    const path = written(
      "c.json",
      sessionWith([{ requestId: "r1", message: { text: "what is a monad?" }, response: [{ value: "A monoid in …" }] }]),
    );
    const items = await read(path);
    expect(items).toHaveLength(1);
    const filter = readFilterOf(items[0] as ReadItem);
    expect(filter?.rule).toBe("no-tool-calls");
    expect(filter?.reason).toMatch(/no tool call with a result in the session \(1 request\)/);
  });

  it("a log's last line cut while VS Code wrote it: every entry before it is read, and meta says which line was left out", async () => {
    const text = readFileSync(LOG, "utf8");
    const cut = `${text}{"kind":1,"k":["requests",0,"modelState"],"v":{"val`;
    const t = await only(written(`${S2}.jsonl`, cut));
    expect(t.turns).toHaveLength(2);
    expect(t.meta?.truncated_line).toEqual({
      line: text.split("\n").length,
      bytes: Buffer.byteLength('{"kind":1,"k":["requests",0,"modelState"],"v":{"val'),
    });
  });

  it("--domain overrides the tools' domain; the tools decide otherwise", async () => {
    const items = await read(LOG, { ...READ_OPTIONS, domain: "swe" });
    expect(items[0]?.kind === "trajectory" && items[0].trajectory.domain).toBe("swe");
    const tool = (name: string, mcp = false) => ({ name, mcp });
    expect(inferCopilotChatDomain([tool("run_in_terminal"), tool("get_terminal_output")])).toBe("terminal");
    expect(inferCopilotChatDomain([tool("run_in_terminal"), tool("read_file")])).toBe("swe");
    expect(inferCopilotChatDomain([tool("mcp_github_get_issue", true), tool("mcp_github_list_issues", true), tool("read_file")])).toBe(
      "mcp",
    );
    expect(inferCopilotChatDomain([tool("fetch_webpage"), tool("fetch_webpage"), tool("run_in_terminal")])).toBe("web");
  });
});

describe("copilot-chat reader: bad input is quarantined with the file, line and field (one entry: records in = out + quarantined)", () => {
  const init = { kind: 0, v: { version: 3, initialLocation: "panel", responderUsername: "GitHub Copilot", sessionId: S2, requests: [] } };
  const logCases: [string, (string | object)[], number | undefined, string | undefined, RegExp][] = [
    [
      "a line that is not JSON",
      [init, '{"kind":2,"k":["requests"],', { kind: 1, k: ["customTitle"], v: "t" }],
      2,
      undefined,
      /invalid JSON/,
    ],
    ["an unknown entry kind", [init, { kind: 7, k: ["x"] }], 2, "kind", /expected 0, 1, 2 or 3, got 7/],
    ["an update before the whole session", [{ kind: 1, k: ["customTitle"], v: "t" }, init], 1, "kind", /before the log's first entry/],
    ["a path that is not a list", [init, { kind: 1, k: "customTitle", v: "t" }], 2, "k", /expected a path/],
    ["a path through a string", [init, { kind: 1, k: ["responderUsername", "x"], v: 1 }], 2, "k.0", /goes through a string/],
    [
      "a push onto a string",
      [init, { kind: 2, k: ["inputState"], v: [1] }, { kind: 2, k: ["responderUsername"], v: [1] }],
      3,
      "k.0",
      /a push onto a string/,
    ],
    ["a push cut past the array's end", [init, { kind: 2, k: ["requests"], i: 5, v: [] }], 2, "i", /expected an index from 0 to 0, got 5/],
    ["an index far past an array's end", [init, { kind: 1, k: ["requests", 1000000000], v: {} }], 2, "k.1", /an index from 0 to 0/],
    [
      "a key that would change a prototype",
      [init, { kind: 1, k: ["__proto__", "polluted"], v: true }],
      2,
      "k.0",
      /an object key "__proto__"/,
    ],
    ["pushed items that are not a list", [init, { kind: 2, k: ["requests"], v: { requestId: "r" } }], 2, "v", /expected an array of items/],
    ["a kind nested thousands deep", [init, `{"kind":${"[".repeat(20000)}${"]".repeat(20000)}}`], 2, "kind", /nested deeper than/],
    ["a log with no whole-session entry", ['{"kind":3,"k":["customTitle"]}'], 1, "kind", /before the log's first entry/],
  ];
  for (const [what, entries, line, field, reason] of logCases)
    it(`log: ${what}`, async () => {
      const items = await read(written(`${S2}.jsonl`, logText(entries)));
      expect(items).toHaveLength(1);
      const item = items[0] as ReadItem;
      if (item.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(item)}`);
      expect(item.entry.source).toMatchObject({ format: "copilot-chat", ...(line !== undefined ? { line } : {}) });
      expect(item.entry.field).toBe(field);
      expect(item.entry.reason).toMatch(reason);
      expect(item.entry.stage).toBe("read");
    });
  it("a prototype key in a path pollutes nothing", () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  const documentCases: [string, unknown, string, RegExp][] = [
    ["requests that is an object", { requesterUsername: "dev", requests: { a: 1 } }, "requests", /expected an array, got an object/],
    ["a request that is a string", { requesterUsername: "dev", requests: ["hi"] }, "requests.0", /expected a request object, got a string/],
    [
      "a message of the wrong type",
      { requesterUsername: "dev", requests: [{ message: { text: 5 } }] },
      "requests.0.message",
      /got a number/,
    ],
    [
      "rounds that are an object",
      { requesterUsername: "dev", requests: [{ result: { metadata: { toolCallRounds: {} } } }] },
      "requests.0.result.metadata.toolCallRounds",
      /expected an array/,
    ],
    [
      "a call without a name",
      { requesterUsername: "dev", requests: [{ result: { metadata: { toolCallRounds: [{ toolCalls: [{ id: "c" }] }] } } }] },
      "requests.0.result.metadata.toolCallRounds.0.toolCalls.0.name",
      /expected a tool name, got nothing/,
    ],
    [
      "call arguments that are a number",
      {
        requesterUsername: "dev",
        requests: [{ result: { metadata: { toolCallRounds: [{ toolCalls: [{ id: "c", name: "x", arguments: 4 }] }] } } }],
      },
      "requests.0.result.metadata.toolCallRounds.0.toolCalls.0.arguments",
      /expected JSON text or an object, got a number/,
    ],
    [
      "a result without a content list",
      {
        requesterUsername: "dev",
        requests: [
          { result: { metadata: { toolCallRounds: [{ toolCalls: [{ id: "c", name: "x" }] }], toolCallResults: { c: { value: 1 } } } } },
        ],
      },
      "requests.0.result.metadata.toolCallResults.c",
      /expected a tool result with a content list, got an object/,
    ],
  ];
  for (const [what, document, field, reason] of documentCases)
    it(`document: ${what}`, async () => {
      const items = await read(written("bad.json", JSON.stringify(document)));
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ kind: "quarantine", entry: { stage: "read", field, source: { format: "copilot-chat" } } });
      expect(items[0]?.kind === "quarantine" && items[0].entry.reason).toMatch(reason);
    });

  it("a document cut mid-way is quarantined as not JSON", async () => {
    const text = readFileSync(DOCUMENT, "utf8");
    const items = await read(written("cut.json", text.slice(0, 3000)));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: "quarantine", entry: { reason: expect.stringMatching(/^not a VS Code chat session/) } });
  });

  it("a log line over input.max_line_bytes quarantines the session at that line", async () => {
    const big = { kind: 1, k: ["customTitle"], v: "x".repeat(5000) };
    const items = await read(written(`${S2}.jsonl`, logText([init, big])), { maxLineBytes: 1000 });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: "quarantine", entry: { source: { line: 2 } } });
  });
});

describe("copilot-chat reader: detection", () => {
  it("the fixtures are detected as copilot-chat and by no other reader; a log's every line is its own", async () => {
    for (const path of [DOCUMENT, LOG, EXPORT]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, path).toBe("copilot-chat");
      const head = readFileSync(path, "utf8").slice(0, 65536);
      expect(READERS.filter((reader) => reader.sniff(head, path)).map((reader) => reader.name)).toEqual(["copilot-chat"]);
    }
    const text = readFileSync(LOG, "utf8");
    for (const line of text.split("\n").filter((l) => l !== "")) expect(copilotChatReader.sniff(line, LOG), line.slice(0, 60)).toBe(true);
    // A first line longer than the head (a long session): its start is enough.
    const long = JSON.stringify({
      kind: 0,
      v: { version: 3, creationDate: 1, initialLocation: "panel", requests: [{ message: { text: "x".repeat(70000) } }] },
    });
    expect(copilotChatReader.sniff(long.slice(0, 65536), "s.jsonl")).toBe(true);
  });

  it("claims no other format's files (Copilot CLI logs, Claude Code, Gemini CLI, OpenCode, chat rows, …)", () => {
    expectClaimsNoOtherFixture(copilotChatReader, { own: "copilot-chat", also: ["test/fixtures/records"], atLeast: 201 });
  });

  it("near misses: other documents with requests or kind entries are not chat sessions", () => {
    const no = [
      '{"requests":[{"url":"https://example.com"}],"total":1}',
      '{"version":2,"requests":[]}',
      '{"kind":0,"v":{"count":1}}',
      '{"kind":1,"k":["title"],"v":"x"}',
      '{"kind":"message","requests":[]}',
    ];
    for (const text of no) expect(copilotChatReader.sniff(text, "x.json"), text).toBe(false);
  });

  it("lwm-data run over a workspaceStorage folder: records in = out + quarantined + filtered", async () => {
    const work = tempDir("lwm-copilot-chat-run-");
    const data = join(work, "data/chatSessions");
    cpSync(SESSIONS, data, { recursive: true });
    cpSync(EXPORT, join(data, "export.json"));
    writeFileSync(
      join(data, "0a0a0a0a-0000-4000-8000-000000000001.jsonl"),
      logText([
        { kind: 0, v: { version: 3, initialLocation: "panel", requests: [] } },
        "{not json",
        { kind: 1, k: ["customTitle"], v: "t" },
      ]),
    );
    writeFileSync(
      join(data, "0a0a0a0a-0000-4000-8000-000000000002.json"),
      sessionWith(
        [{ requestId: "r1", message: { text: "explain this file" }, response: [{ value: "It parses dates." }] }],
        "0a0a0a0a-0000-4000-8000-000000000002",
      ),
    );
    const config = writeConfig("inputs:\n  - path: data\noutput: { dir: out }\n", work);
    const { manifest } = await validateAndRun(config);
    // The .json session, the log, the export; the broken log (quarantined); the chat (filtered).
    expect(manifest.counts).toMatchObject({ records_in: 5, samples_out: 3, quarantined: 1, filtered: 1 });
    expect(manifest.counts.quarantined_by_stage).toEqual({ read: 1 });
  }, 120_000);
});
