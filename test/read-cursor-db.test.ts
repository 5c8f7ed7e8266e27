/** The Cursor reader (src/read/cursor-db.ts) on conversation stores written with Cursor's layout (test/support/cursor-db.ts). */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { cursorDbReader, inferCursorDomain } from "../src/read/cursor-db.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, READ_OPTIONS, tempDir, validateAndRun, writeConfig } from "./helpers.ts";
import { bubble, type CursorConversation, sampleCursorDbBytes, writeCursorDb } from "./support/cursor-db.ts";

const COMPOSER = {
  _v: 10,
  composerId: "5f0e",
  name: "Fix the date test",
  createdAt: Date.UTC(2026, 3, 2, 9, 0, 0),
  unifiedMode: "agent",
  modelConfig: { modelName: "claude-4.5-sonnet", maxMode: false },
};

/** The main conversation: terminal runs, a read, an edit, a follow-up prompt, an error, a rejected and an unfinished call. */
const MAIN: CursorConversation = {
  id: "5f0e",
  composer: { ...COMPOSER, blobEncryptionKey: "do-not-copy", speculativeSummarizationEncryptionKey: "do-not-copy" },
  bubbles: [
    ["u1", bubble.user("u1", "The date test fails. Fix parse_date and run the tests.")],
    ["a1", bubble.text("a1", "", "Run the tests first to see the failure.")],
    [
      "a2",
      bubble.tool(
        "a2",
        {
          id: "toolu_01",
          name: "run_terminal_cmd",
          args: { command: "python -m pytest -q tests/test_dates.py", is_background: false, explanation: "Run the date tests" },
          result: {
            output: "F\nE   ValueError: unconverted data remains: Z\n1 failed in 0.02s\n",
            exitCode: 1,
            rejected: false,
            notInterrupted: true,
          },
        },
        "I'll run the date tests.",
      ),
    ],
    [
      "a3",
      bubble.tool("a3", {
        id: "toolu_02",
        name: "read_file",
        args: { target_file: "dates.py", should_read_entire_file: true },
        result: { contents: "def parse_date(s):\n    return datetime.strptime(s, '%Y-%m-%dT%H:%M:%S')\n" },
      }),
    ],
    [
      "a4",
      bubble.tool("a4", {
        id: "toolu_03",
        name: "edit_file",
        args: {
          target_file: "dates.py",
          instructions: "accept a trailing Z",
          code_edit: "    return datetime.fromisoformat(s.replace('Z', '+00:00'))",
        },
        result: {
          diff: {
            chunks: [
              {
                diffString:
                  "-    return datetime.strptime(s, '%Y-%m-%dT%H:%M:%S')\n+    return datetime.fromisoformat(s.replace('Z', '+00:00'))",
                oldStart: 2,
                newStart: 2,
                oldLines: 1,
                newLines: 1,
              },
            ],
          },
          isApplied: true,
        },
      }),
    ],
    [
      "a5",
      bubble.tool("a5", {
        id: "toolu_04",
        name: "run_terminal_command_v2",
        args: { command: "python -m pytest -q tests/test_dates.py" },
        result: { output: "", exitCode: 0 },
      }),
    ],
    ["a6", bubble.text("a6", "parse_date now accepts a trailing Z; the date tests pass.")],
    ["u2", bubble.user("u2", "Also delete the build folder.")],
    [
      "a7",
      bubble.tool("a7", {
        id: "toolu_05",
        name: "run_terminal_cmd",
        args: { command: "rm -rf build" },
        result: { rejected: true },
        extra: { userDecision: "rejected" },
      }),
    ],
    [
      "a8",
      bubble.tool("a8", {
        id: "toolu_06",
        name: "grep_search",
        args: { query: "build/" },
        status: "error",
        extra: {
          error: {
            clientVisibleErrorMessage: "ripgrep failed: regex parse error",
            modelVisibleErrorMessage: "Error: regex parse error near build/",
          },
        },
      }),
    ],
    ["a9", bubble.tool("a9", { id: "toolu_07", name: "list_dir", args: { relative_workspace_path: "." }, status: "loading" })],
    ["gone", undefined],
    ["a10", bubble.text("a10", "I left the build folder alone.")],
  ],
};

function store(conversations: CursorConversation[], items?: Record<string, string>): string {
  const path = join(tempDir("lwm-cursor-"), "state.vscdb");
  writeCursorDb(path, conversations, items);
  return path;
}
const read = (path: string, options = READ_OPTIONS): Promise<ReadItem[]> => collect(cursorDbReader.read(path, options));

function trajectories(items: readonly ReadItem[]): Trajectory[] {
  return items.map((item) => {
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(trajectoryInputSchema.safeParse(item.trajectory).success).toBe(true);
    return item.trajectory;
  });
}

describe("cursor reader: a conversation store", () => {
  it("each tool call with a result is a turn, in the headers' order: terminal commands, a read's contents, an edit's diff, an error", async () => {
    const [t] = trajectories(await read(store([MAIN])));
    expect(t?.id).toBe("5f0e");
    expect(t?.domain).toBe("swe");
    expect(t?.task).toBe("The date test fails. Fix parse_date and run the tests.");
    expect(t?.turns.map((turn) => turn.action)).toEqual([
      "python -m pytest -q tests/test_dates.py",
      'read_file {"target_file":"dates.py","should_read_entire_file":true}',
      `edit_file ${JSON.stringify({ target_file: "dates.py", instructions: "accept a trailing Z", code_edit: "    return datetime.fromisoformat(s.replace('Z', '+00:00'))" })}`,
      "python -m pytest -q tests/test_dates.py",
      'grep_search {"query":"build/"}',
    ]);
    expect(t?.turns[0]?.observation).toBe("F\nE   ValueError: unconverted data remains: Z\n1 failed in 0.02s\n");
    expect(t?.turns[0]?.meta).toMatchObject({ tool: "run_terminal_cmd", tool_call_id: "toolu_01", exit_code: 1 });
    expect(t?.turns[1]?.observation).toMatch(/^def parse_date\(s\):/);
    expect(t?.turns[2]?.observation).toMatch(/^- {4}return datetime\.strptime[\s\S]*\n\+ {4}return datetime\.fromisoformat/);
    // Nothing printed, exit 0: no output.
    expect(t?.turns[3]?.observation).toBe("[no output]");
    expect(t?.turns[4]).toMatchObject({ observation: "Error: regex parse error near build/", meta: { is_error: true } });
    expect(t?.turns.slice(0, 4).every((turn) => turn.meta?.is_error === undefined)).toBe(true);
  });

  it("thinking, user messages, the final message; rejected, unfinished and deleted messages counted", async () => {
    const [t] = trajectories(await read(store([MAIN])));
    expect(t?.turns[0]?.thinking).toBe("Run the tests first to see the failure.\n\nI'll run the date tests.");
    expect(t?.turns[4]?.meta?.user_messages).toEqual(["Also delete the build folder."]);
    expect(t?.meta?.final_message).toBe("I left the build folder alone.");
    expect(t?.meta?.skipped).toEqual({ assistant_reply: 1, rejected_call: 1, call_without_result: 1, missing_bubble: 1 });
  });

  it("meta: agent, composer, title, creation time, mode, model, workspace; never the conversation's keys", async () => {
    const [t] = trajectories(await read(store([MAIN], { "cursorAuth/accessToken": "secret-token-value" })));
    expect(t?.meta).toMatchObject({
      agent: "cursor",
      composer_id: "5f0e",
      title: "Fix the date test",
      created_at: "2026-04-02T09:00:00.000Z",
      mode: "agent",
      model: "claude-4.5-sonnet",
      workspace: "/home/dev/notes-app",
    });
    const text = JSON.stringify(t);
    expect(text).not.toContain("do-not-copy");
    expect(text).not.toContain("secret-token-value");
  });

  it("older stores: messages inline in the conversation, values as BLOBs, a model named only by the messages", async () => {
    const inline: CursorConversation = {
      id: "aa01",
      inline: true,
      asBlob: true,
      composer: { _v: 3, composerId: "aa01", createdAt: 1700000000000, modelConfig: { modelName: "default" } },
      bubbles: [
        ["u1", bubble.user("u1", "list files")],
        [
          "a1",
          {
            ...bubble.tool("a1", {
              id: "t1",
              name: "run_terminal_cmd",
              args: { command: "ls" },
              result: JSON.stringify(JSON.stringify({ output: "a.txt\n", exitCode: 0 })),
            }),
            modelInfo: { modelName: "gpt-5" },
          },
        ],
      ],
    };
    const [t] = trajectories(await read(store([inline])));
    // The result was encoded twice: decoded until it is the object.
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls", "a.txt\n"]]);
    expect(t?.domain).toBe("terminal");
    expect(t?.meta?.model).toBe("gpt-5");
  });

  it("a message the rows lack is taken from the conversation's conversationMap", async () => {
    const call = bubble.tool("a1", {
      id: "t1",
      name: "run_terminal_cmd",
      args: { command: "uptime" },
      result: { output: "up 3 days", exitCode: 0 },
    });
    const mapped: CursorConversation = {
      id: "cm01",
      composer: {
        composerId: "cm01",
        fullConversationHeadersOnly: [
          { bubbleId: "u1", type: 1 },
          { bubbleId: "a1", type: 2 },
        ],
        conversationMap: { a1: call },
      },
      bubbles: [["u1", bubble.user("u1", "how long has it been up?")]],
    };
    const [t] = trajectories(await read(store([mapped])));
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["uptime", "up 3 days"]]);
    expect(t?.meta?.skipped).toBeUndefined();
  });

  it("an MCP call's arguments come out of params.tools[0].parameters; a call with only params; a string result", async () => {
    const mcp: CursorConversation = {
      id: "bb01",
      composer: { composerId: "bb01" },
      bubbles: [
        ["u1", bubble.user("u1", "what is issue 7?")],
        [
          "a1",
          {
            type: 2,
            bubbleId: "a1",
            toolFormerData: {
              toolCallId: "m1",
              name: "mcp_github_get_issue",
              status: "completed",
              params: JSON.stringify({
                tools: [
                  {
                    name: "get_issue",
                    parameters: JSON.stringify({ owner: "acme", repo: "notes", issue_number: 7 }),
                    serverName: "github",
                  },
                ],
              }),
              result: JSON.stringify({ content: "Issue 7: crash on empty note" }),
            },
          },
        ],
        [
          "a2",
          {
            type: 2,
            bubbleId: "a2",
            toolFormerData: {
              toolCallId: "m2",
              name: "mcp_github_add_comment",
              rawArgs: "",
              params: { owner: "acme" },
              result: "commented",
            },
          },
        ],
      ],
    };
    const [t] = trajectories(await read(store([mcp])));
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ['mcp_github_get_issue {"owner":"acme","repo":"notes","issue_number":7}', "Issue 7: crash on empty note"],
      ['mcp_github_add_comment {"owner":"acme"}', "commented"],
    ]);
    expect(t?.domain).toBe("mcp");
  });

  it("conversations in key order; a sub-agent names its parent; a draft and a chat are filtered with the reason", async () => {
    const path = store([
      { ...MAIN, id: "b2", composer: { composerId: "b2", subagentInfo: { parentComposerId: "a1" } } },
      { id: "a1", composer: { composerId: "a1", name: "draft" }, bubbles: [] },
      {
        id: "c3",
        composer: { composerId: "c3" },
        bubbles: [
          ["u", bubble.user("u", "what is a monad?")],
          ["a", bubble.text("a", "A monoid in …")],
        ],
      },
    ]);
    const items = await read(path);
    expect(items.map((item) => item.kind === "trajectory" && item.trajectory.id)).toEqual(["a1", "b2", "c3"]);
    expect(readFilterOf(items[0] as ReadItem)?.reason).toMatch(/no tool call with a result in the conversation \(0 messages\)/);
    expect(readFilterOf(items[2] as ReadItem)?.reason).toMatch(/\(2 messages\): a chat without actions$/);
    expect(readFilterOf(items[1] as ReadItem)).toBeUndefined();
    expect(items[1]?.kind === "trajectory" && items[1].trajectory.meta?.parent_composer).toBe("a1");
  });

  it("--domain overrides the tools' domain; the tools decide otherwise", async () => {
    const items = await read(store([MAIN]), { ...READ_OPTIONS, domain: "terminal" });
    expect(items[0]?.kind === "trajectory" && items[0].trajectory.domain).toBe("terminal");
    expect(inferCursorDomain(["run_terminal_cmd", "run_terminal_command_v2"])).toBe("terminal");
    expect(inferCursorDomain(["mcp_x_a", "mcp_x_b", "read_file"])).toBe("mcp");
    expect(inferCursorDomain(["web_search", "web_search", "read_file"])).toBe("search");
    expect(inferCursorDomain(["read_file", "run_terminal_cmd"])).toBe("swe");
  });
});

describe("cursor reader: bad values are quarantined naming the conversation and key (one entry each: records in = out + quarantined)", () => {
  function storeWith(key: string, value: string | Uint8Array | null): string {
    const path = store([MAIN, { id: "zz", composer: { composerId: "zz" }, bubbles: [["u", bubble.user("u", "hi")]] }]);
    const db = new DatabaseSync(path);
    db.prepare("INSERT OR REPLACE INTO cursorDiskKV (key, value) VALUES (?, ?)").run(key, value);
    db.close();
    return path;
  }
  const cases: [string, string, string | Uint8Array, string, RegExp][] = [
    ["a conversation that is not JSON", "composerData:5f0e", "{not json", "composerData:5f0e", /invalid JSON/],
    ["a conversation that is a list", "composerData:5f0e", "[1]", "composerData:5f0e", /expected a conversation object, got an array/],
    [
      "headers that are an object",
      "composerData:5f0e",
      '{"fullConversationHeadersOnly":{"a":1}}',
      "composerData:5f0e.fullConversationHeadersOnly",
      /expected an array/,
    ],
    [
      "a header without a bubble id",
      "composerData:5f0e",
      '{"fullConversationHeadersOnly":[{"type":1}]}',
      "composerData:5f0e.fullConversationHeadersOnly.0.bubbleId",
      /expected a bubble id, got nothing/,
    ],
    ["a message that is not JSON", "bubbleId:5f0e:a3", new Uint8Array([0xff, 0x00, 0x7b]), "bubbleId:5f0e:a3", /invalid JSON/],
    ["a message that is a string", "bubbleId:5f0e:a3", '"hello"', "bubbleId:5f0e:a3", /expected a message object, got a string/],
    [
      "a message text that is a number",
      "bubbleId:5f0e:a3",
      '{"type":2,"text":5}',
      "bubbleId:5f0e:a3.text",
      /expected a string, got a number/,
    ],
    [
      "a tool call that is a list",
      "bubbleId:5f0e:a3",
      '{"type":2,"toolFormerData":[]}',
      "bubbleId:5f0e:a3.toolFormerData",
      /expected an object, got an array/,
    ],
    [
      "a tool name that is a number",
      "bubbleId:5f0e:a3",
      '{"type":2,"toolFormerData":{"name":4}}',
      "bubbleId:5f0e:a3.toolFormerData.name",
      /expected a string/,
    ],
  ];
  for (const [what, key, value, field, reason] of cases)
    it(what, async () => {
      const items = await read(storeWith(key, value));
      expect(items).toHaveLength(2);
      const [bad, good] = items;
      if (bad?.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(bad)}`);
      expect(bad.entry).toMatchObject({ id: "5f0e", field, stage: "read", source: { format: "cursor", row: 0 } });
      expect(bad.entry.reason).toMatch(reason);
      // The store's other conversation is read.
      expect(good?.kind === "trajectory" && good.trajectory.id).toBe("zz");
    });

  it("a message stored as JSON null is counted, not quarantined", async () => {
    const [t] = trajectories((await read(storeWith("bubbleId:5f0e:a3", "null"))).slice(0, 1));
    expect(t?.meta?.skipped).toMatchObject({ null_bubble: 1 });
    expect(t?.turns).toHaveLength(4);
  });

  it("a message over input.max_line_bytes quarantines its conversation", async () => {
    const path = storeWith("bubbleId:5f0e:a3", JSON.stringify(bubble.text("a3", "x".repeat(5000))));
    const items = await read(path, { maxLineBytes: 2000 });
    expect(items[0]).toMatchObject({
      kind: "quarantine",
      entry: { field: "bubbleId:5f0e:a3", reason: expect.stringMatching(/5\d{3} bytes, over the 2000-byte limit/) },
    });
  });

  it("a database with another key-value table is one entry saying it is not Cursor's", async () => {
    const path = join(tempDir("lwm-cursor-"), "state.vscdb");
    const db = new DatabaseSync(path);
    db.exec("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB); CREATE TABLE cursorDiskKV (k TEXT, v BLOB);");
    db.close();
    const items = await read(path);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      kind: "quarantine",
      entry: { reason: expect.stringMatching(/^not Cursor's conversation store.*no column `cursorDiskKV.key`/) },
    });
  });
});

describe("cursor reader: detection", () => {
  it("a store with conversations is cursor's; a workspace's state.vscdb (no conversation) is empty; VS Code's own state.vscdb is refused", async () => {
    const detection = await detectFormat(store([MAIN]));
    expect(detection.kind === "format" && detection.reader.name).toBe("cursor");
    const empty = await detectFormat(store([], { "composer.composerData": JSON.stringify({ allComposers: [] }) }));
    expect(empty).toMatchObject({ kind: "empty", note: expect.stringMatching(/a Cursor database with no conversation/) });
    // Read anyway (format: cursor): one entry saying where the conversations are, not nothing.
    const forced = await read(store([], {}));
    expect(forced).toEqual([
      expect.objectContaining({
        kind: "quarantine",
        entry: expect.objectContaining({ reason: expect.stringMatching(/^no conversation in the store .*globalStorage\/state\.vscdb$/) }),
      }),
    ]);
    const vscode = join(tempDir("lwm-cursor-"), "state.vscdb");
    const db = new DatabaseSync(vscode);
    db.exec("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)");
    db.close();
    const refused = await detectFormat(vscode);
    expect(refused.kind).toBe("unrecognized");
  });

  it("a gzipped copy is told by its schema page, copied to a local file and read the same", async () => {
    const path = store([MAIN]);
    const gz = join(tempDir("lwm-cursor-"), "state.vscdb.gz");
    writeFileSync(gz, gzipSync(readFileSync(path)));
    const detection = await detectFormat(gz);
    expect(detection.kind === "format" && detection.reader.name).toBe("cursor");
    const [plain] = trajectories(await read(path));
    const [unzipped] = trajectories(await read(gz));
    expect({ ...unzipped, source: undefined }).toEqual({ ...plain, source: undefined });
  });

  it("lwm-data run over a globalStorage folder: records in = out + quarantined + filtered; the -wal and -shm are companions", async () => {
    const work = tempDir("lwm-cursor-run-");
    mkdirSync(join(work, "data"));
    writeFileSync(join(work, "data/state.vscdb"), sampleCursorDbBytes());
    const db = join(work, "data/state.vscdb");
    expect((await cursorDbReader.companions?.(db))?.files).toEqual([`${db}-wal`, `${db}-shm`]);
    const config = writeConfig("inputs:\n  - path: data/state.vscdb\noutput: { dir: out }\n", work);
    const { manifest } = await validateAndRun(config);
    // Two conversations with calls, the draft filtered.
    expect(manifest.counts).toMatchObject({ records_in: 3, samples_out: 2, quarantined: 0, filtered: 1 });
  }, 120_000);
});
