/** The Zed reader (src/read/zed-threads.ts) on threads databases written with Zed's schema (test/support/zed-db.ts). */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { inferZedDomain, zedThreadsReader } from "../src/read/zed-threads.ts";
import { collect, READ_OPTIONS, tempDir, validateAndRun, writeConfig } from "./helpers.ts";
import { db3, sampleZedDbBytes, writeZedDb, type ZedThreadRow } from "./support/zed-db.ts";

const T1 = "7c2e9a41-5b3d-4f6e-8a1c-2d4f6b8e0a13";
/** A 0.3.0 thread: terminal runs (one failing), a read, an edit, a follow-up prompt, a stopped call. */
const MAIN: ZedThreadRow = {
  id: T1,
  summary: "Fix the flaky date test",
  createdAt: "2026-05-02T08:00:00Z",
  thread: {
    version: "0.3.0",
    title: "Fix the flaky date test",
    updated_at: "2026-05-02T08:09:00Z",
    messages: [
      db3.user("u1", "tests/test_dates.py fails on the last day of the month. Fix it."),
      db3.agent(
        [
          db3.thinking("Run the test first."),
          db3.text("Running the date tests."),
          db3.use("toolu_01", "terminal", { command: "python -m pytest -q tests/test_dates.py", cd: "shop" }),
        ],
        {
          toolu_01: db3.result(
            "toolu_01",
            "terminal",
            'Command "python -m pytest -q tests/test_dates.py" failed with exit code 1.\n\n```\nE   ValueError: day is out of range for month\n1 failed in 0.03s\n```',
          ),
        },
      ),
      db3.agent([db3.use("toolu_02", "read_file", { path: "shop/dates.py", start_line: 1, end_line: 20 }, false)], {
        toolu_02: {
          tool_use_id: "toolu_02",
          tool_name: "read_file",
          is_error: false,
          content: { Text: "     1\tdef next_month(d):\n     2\t    return d.replace(month=d.month + 1)" },
          output: null,
        },
      }),
      db3.agent([db3.use("toolu_03", "edit_file", { display_description: "Clamp the day", path: "shop/dates.py", mode: "edit" })], {
        toolu_03: db3.result(
          "toolu_03",
          "edit_file",
          "Edited shop/dates.py:\n\n```diff\n-    return d.replace(month=d.month + 1)\n+    return (d.replace(day=1) + timedelta(days=32)).replace(day=1)\n```",
        ),
      }),
      db3.agent([db3.use("toolu_04", "grep", { regex: "next_month", include_pattern: "**/*.py" })], {
        toolu_04: db3.result("toolu_04", "grep", "regex parse error", true),
      }),
      db3.agent([db3.text("next_month now rolls over through the first of the month.")]),
      db3.user("u2", "Run the whole suite."),
      "Resume",
      db3.agent([db3.use("toolu_05", "terminal", { command: "python -m pytest -q", cd: "shop" })]),
    ],
    model: { provider: "zed.dev", model: "claude-sonnet-4-5" },
    profile: "write",
    cumulative_token_usage: { input_tokens: 18342, output_tokens: 913, cache_read_input_tokens: 12000 },
  },
};

function store(rows: ZedThreadRow[]): string {
  const dir = tempDir("lwm-zed-");
  mkdirSync(join(dir, "threads"));
  const path = join(dir, "threads/threads.db");
  writeZedDb(path, rows);
  return path;
}
const read = (path: string, options = READ_OPTIONS): Promise<ReadItem[]> => collect(zedThreadsReader.read(path, options));
function trajectories(items: readonly ReadItem[]): Trajectory[] {
  return items.map((item) => {
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(trajectoryInputSchema.safeParse(item.trajectory).success).toBe(true);
    return item.trajectory;
  });
}

describe("zed reader: DbThread (0.3.0)", () => {
  it("each tool use answered by its result is a turn: terminal commands (cd kept), a read, an edit's diff, an error", async () => {
    const [t] = trajectories(await read(store([MAIN])));
    expect(t?.id).toBe(T1);
    expect(t?.domain).toBe("swe");
    expect(t?.task).toBe("tests/test_dates.py fails on the last day of the month. Fix it.");
    expect(t?.turns.map((turn) => turn.action)).toEqual([
      "python -m pytest -q tests/test_dates.py",
      'read_file {"path":"shop/dates.py","start_line":1,"end_line":20}',
      'edit_file {"display_description":"Clamp the day","path":"shop/dates.py","mode":"edit"}',
      'grep {"regex":"next_month","include_pattern":"**/*.py"}',
    ]);
    expect(t?.turns[0]?.meta).toMatchObject({ tool: "terminal", tool_call_id: "toolu_01", cd: "shop" });
    expect(t?.turns[0]?.observation).toMatch(/^Command "python -m pytest -q tests\/test_dates\.py" failed with exit code 1\./);
    // A result's content given as one part (older builds) and as a list.
    expect(t?.turns[1]?.observation).toBe("     1\tdef next_month(d):\n     2\t    return d.replace(month=d.month + 1)");
    expect(t?.turns[2]?.observation).toMatch(/^Edited shop\/dates\.py:/);
    expect(t?.turns[3]).toMatchObject({ observation: "regex parse error", meta: { is_error: true } });
    expect(t?.turns[0]?.thinking).toBe("Run the test first.\n\nRunning the date tests.");
  });

  it("a stopped call, Resume and later prompts are counted; meta: thread, title, model, profile, tokens", async () => {
    const [t] = trajectories(await read(store([MAIN])));
    expect(t?.meta?.skipped).toEqual({ assistant_reply: 1, resume: 1, call_without_result: 1 });
    expect(t?.meta).toMatchObject({
      agent: "zed",
      thread_id: T1,
      title: "Fix the flaky date test",
      version: "0.3.0",
      model: "claude-sonnet-4-5",
      provider: "zed.dev",
      profile: "write",
      tokens: { input: 18342, output: 913, cache_read: 12000 },
      created_at: "2026-05-02T08:00:00Z",
    });
  });

  it("a sub-agent's thread names its parent; a chat is filtered; threads oldest first", async () => {
    const chat: ZedThreadRow = {
      id: "chat",
      summary: "chat",
      createdAt: "2026-05-01T00:00:00Z",
      thread: { version: "0.3.0", title: "chat", updated_at: "x", messages: [db3.user("u", "hi"), db3.agent([db3.text("Hello.")])] },
    };
    const sub: ZedThreadRow = { ...MAIN, id: "sub", createdAt: "2026-05-03T00:00:00Z", parent: T1 };
    const items = await read(store([sub, MAIN, chat]));
    expect(items.map((item) => item.kind === "trajectory" && item.trajectory.id)).toEqual(["chat", T1, "sub"]);
    expect(readFilterOf(items[0] as ReadItem)?.reason).toMatch(/no tool call with a result in the thread \(2 messages\)/);
    expect(items[2]?.kind === "trajectory" && items[2].trajectory.meta?.parent_thread).toBe(T1);
  });
});

describe("zed reader: SerializedThread (0.2.0, 0.1.0) and the oldest threads", () => {
  it("0.2.0: segments, tool uses and their results on the assistant message; a plain json row", async () => {
    const [t] = trajectories(
      await read(
        store([
          {
            id: "old2",
            summary: "Where is the port?",
            createdAt: "2025-06-01T00:00:00Z",
            dataType: "json",
            thread: {
              version: "0.2.0",
              summary: "Where is the port?",
              updated_at: "2025-06-01T00:05:00Z",
              messages: [
                {
                  id: 0,
                  role: "user",
                  segments: [{ type: "text", text: "Which port does the server use?" }],
                  tool_uses: [],
                  tool_results: [],
                  context: "",
                },
                {
                  id: 1,
                  role: "assistant",
                  segments: [
                    { type: "thinking", text: "Search for listen." },
                    { type: "text", text: "Searching." },
                  ],
                  tool_uses: [{ id: "t1", name: "regex_search", input: { regex: "listen\\(" } }],
                  tool_results: [{ tool_use_id: "t1", is_error: false, content: { Text: "server.js:14: app.listen(8080)" }, output: null }],
                  context: "",
                },
                {
                  id: 2,
                  role: "assistant",
                  segments: [{ type: "text", text: "Port 8080." }],
                  tool_uses: [],
                  tool_results: [],
                  context: "",
                },
              ],
              model: { provider: "anthropic", model: "claude-3-7-sonnet" },
            },
          },
        ]),
      ),
    );
    expect(t?.turns.map((turn) => [turn.action, turn.observation, turn.thinking])).toEqual([
      ['regex_search {"regex":"listen\\\\("}', "server.js:14: app.listen(8080)", "Search for listen.\n\nSearching."],
    ]);
    expect(t?.meta).toMatchObject({
      title: "Where is the port?",
      version: "0.2.0",
      model: "claude-3-7-sonnet",
      final_message: "Port 8080.",
    });
  });

  it("0.1.0 (results on the next user message) and the oldest (no version, text and bash) read the same way", async () => {
    const v1: ZedThreadRow = {
      id: "old1",
      summary: "pwd",
      createdAt: "2025-03-01T00:00:00Z",
      thread: {
        version: "0.1.0",
        summary: "pwd",
        updated_at: "u",
        messages: [
          { id: 0, role: "user", segments: [{ type: "text", text: "where am I?" }], tool_uses: [], tool_results: [] },
          { id: 1, role: "assistant", segments: [], tool_uses: [{ id: "b1", name: "bash", input: { command: "pwd" } }], tool_results: [] },
          {
            id: 2,
            role: "user",
            segments: [],
            tool_uses: [],
            tool_results: [{ tool_use_id: "b1", is_error: false, content: "/home/dev" }],
          },
        ],
      },
    };
    const oldest: ZedThreadRow = {
      id: "old0",
      summary: "ls",
      createdAt: "2025-02-01T00:00:00Z",
      thread: {
        summary: "ls",
        updated_at: "u",
        messages: [
          { id: 0, role: "user", text: "list it", tool_uses: [], tool_results: [] },
          { id: 1, role: "assistant", text: "", tool_uses: [{ id: "b2", name: "bash", input: { command: "ls" } }], tool_results: [] },
          { id: 2, role: "user", text: "", tool_uses: [], tool_results: [{ tool_use_id: "b2", is_error: false, content: "a.txt" }] },
        ],
      },
    };
    const [first, second] = trajectories(await read(store([v1, oldest])));
    expect(first?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls", "a.txt"]]);
    expect(second?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["pwd", "/home/dev"]]);
    expect(first?.domain).toBe("terminal");
  });

  it("a later version with DbThread's messages is read as DbThread", async () => {
    const later = { ...(MAIN.thread as Record<string, unknown>), version: "0.4.0" };
    const [t] = trajectories(await read(store([{ ...MAIN, thread: later }])));
    const [same] = trajectories(await read(store([MAIN])));
    expect(t?.turns).toEqual(same?.turns);
  });

  it("the domain from the tools", () => {
    expect(inferZedDomain(["terminal", "terminal"])).toBe("terminal");
    expect(inferZedDomain(["github_list_issues", "github_get_issue", "read_file"])).toBe("mcp");
    expect(inferZedDomain(["web_search", "web_search", "fetch"])).toBe("search");
    expect(inferZedDomain(["fetch", "fetch", "read_file"])).toBe("web");
    expect(inferZedDomain(["read_file", "terminal"])).toBe("swe");
  });
});

describe("zed reader: bad threads are quarantined naming the thread and field; the others are read", () => {
  const good: ZedThreadRow = { ...MAIN, id: "zz-good", createdAt: "2026-06-01T00:00:00Z" };
  const cases: [string, Partial<ZedThreadRow>, string, RegExp][] = [
    ["data that is not zstd", { thread: new TextEncoder().encode("not zstd"), dataType: "zstd" }, "data", /does not decompress/],
    ["an unknown data type", { dataType: "brotli" }, "data_type", /expected "zstd" or "json", got a string "brotli"/],
    ["JSON that does not parse", { thread: new TextEncoder().encode("{"), dataType: "json" }, "data", /invalid JSON/],
    ["messages that are not a list", { thread: { version: "0.3.0", messages: {} } }, "data.messages", /expected an array, got an object/],
    [
      "a message of another variant",
      { thread: { version: "0.3.0", messages: [{ Robot: {} }] } },
      "data.messages.0",
      /expected a User or Agent message/,
    ],
    [
      "a tool use without a name",
      { thread: { version: "0.3.0", messages: [db3.agent([{ ToolUse: { id: "x", input: {} } }])] } },
      "data.messages.0.Agent.content.0.ToolUse.name",
      /expected a tool name, got nothing/,
    ],
    [
      "a 0.2.0 message without a role",
      { thread: { version: "0.2.0", messages: [{ id: 0, segments: [] }] } },
      "data.messages.0.role",
      /expected user, assistant or system/,
    ],
  ];
  for (const [what, change, field, reason] of cases)
    it(what, async () => {
      const items = await read(store([{ ...MAIN, ...change }, good]));
      expect(items).toHaveLength(2);
      const [bad, ok] = items;
      if (bad?.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(bad)}`);
      expect(bad.entry).toMatchObject({ id: T1, field, stage: "read", source: { format: "zed", row: 0 } });
      expect(bad.entry.reason).toMatch(reason);
      expect(ok?.kind === "trajectory" && ok.trajectory.id).toBe("zz-good");
    });

  it("zstd data that would decompress past input.max_line_bytes is refused, not expanded", async () => {
    const bomb = zstdCompressSync(Buffer.from(JSON.stringify({ version: "0.3.0", messages: [db3.user("u", "x".repeat(200_000))] })));
    const items = await read(store([{ ...MAIN, thread: new Uint8Array(bomb), dataType: "zstd" }]), { maxLineBytes: 50_000 });
    expect(items[0]).toMatchObject({
      kind: "quarantine",
      entry: { field: "data", reason: expect.stringMatching(/does not decompress within 50000 bytes/) },
    });
  });
});

describe("zed reader: detection", () => {
  it("a database with threads is zed's; one without is empty; a gzipped copy is told by its schema and read the same", async () => {
    const path = store([MAIN]);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("zed");
    expect(await detectFormat(store([]))).toMatchObject({ kind: "empty", note: "a Zed threads database with no thread" });
    expect(await read(store([]))).toEqual([
      expect.objectContaining({
        kind: "quarantine",
        entry: expect.objectContaining({ field: "threads", reason: "no thread in the database" }),
      }),
    ]);
    const gz = join(tempDir("lwm-zed-"), "threads.db.gz");
    writeFileSync(gz, gzipSync(readFileSync(path)));
    const zipped = await detectFormat(gz);
    expect(zipped.kind === "format" && zipped.reader.name).toBe("zed");
    const [plain] = trajectories(await read(path));
    const [unzipped] = trajectories(await read(gz));
    expect({ ...unzipped, source: undefined }).toEqual({ ...plain, source: undefined });
  });

  it("another database with a threads table is not Zed's", async () => {
    const path = join(tempDir("lwm-zed-"), "forum.db");
    const db = new DatabaseSync(path);
    db.exec("CREATE TABLE threads (id INTEGER PRIMARY KEY, title TEXT, body TEXT); INSERT INTO threads (title, body) VALUES ('a', 'b');");
    db.close();
    expect((await detectFormat(path)).kind).toBe("unrecognized");
  });

  it("lwm-data run: records in = out + quarantined + filtered", async () => {
    const work = tempDir("lwm-zed-run-");
    mkdirSync(join(work, "data"));
    writeFileSync(join(work, "data/threads.db"), sampleZedDbBytes());
    const config = writeConfig("inputs:\n  - path: data/threads.db\noutput: { dir: out }\n", work);
    const { manifest } = await validateAndRun(config);
    expect(manifest.counts).toMatchObject({ records_in: 2, samples_out: 2, quarantined: 0, filtered: 0 });
  }, 120_000);
});
