/**
 * The Claude Code reader (src/read/claude-code.ts) on the hand-written sessions in
 * test/fixtures/handmade/claude-code/ (see its README.md: what each file exercises, written from
 * the format's documentation), on hostile variants of them built here, and on the real public
 * sample in ../shared/fixtures/real/formats-2026/claude_code/ (read in place).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { QuarantineEntry } from "../src/core/errors.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { claudeCodeReader, inferDomain } from "../src/read/claude-code.ts";
import type { ReaderOptions, ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS: ReaderOptions = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/claude-code");
const fixture = (name: string) => join(HANDMADE, name);
const SESSION = fixture("session-rewind-compact.jsonl");
const V1 = fixture("session-v1-task-sidechain.jsonl");
const AGENT = fixture("agent-7f3e9a21.jsonl");
const STREAM = fixture("stream-json-web.jsonl");
const SESSION_ID = "5d1c0b7e-2a43-4f19-9e0a-6c7d8e9f0a1b";

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const read = (path: string, options: ReaderOptions = OPTIONS) => collect(claudeCodeReader.read(path, options));

async function only(path: string, options: ReaderOptions = OPTIONS): Promise<Trajectory> {
  const items = await read(path, options);
  expect(quarantined(items)).toEqual([]);
  expect(items).toHaveLength(1);
  return trajectories(items)[0] as Trajectory;
}

async function quarantineOf(path: string): Promise<QuarantineEntry> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  expect(items[0]?.kind).toBe("quarantine");
  return quarantined(items)[0] as QuarantineEntry;
}

/** The session's lines as objects, to build hostile variants from. */
function sessionLines(path = SESSION): Record<string, unknown>[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function writeLines(lines: readonly (string | Record<string, unknown>)[], name = "session.jsonl"): string {
  const path = join(tempDir("lwm-claude-code-"), name);
  writeFileSync(path, `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`);
  return path;
}

const CALC_PY =
  "     1\u2192def add(a, b):\n     2\u2192\treturn a + b\n     3\u2192\n     4\u2192def divide(a, b):\n     5\u2192\treturn a / b\n     6\u2192\n";

/** The main chain of session-rewind-compact.jsonl: (action, observation) in call order. */
const SESSION_TURNS: [string, string][] = [
  ["git status --short && ls", " M README.md\ncalc.py\ntest_calc.py"],
  ['Read {"file_path":"/home/dev/calc/calc.py"}', CALC_PY],
  [
    'Grep {"pattern":"divide","path":"/home/dev/calc","output_mode":"files_with_matches"}',
    "Found 2 files\n/home/dev/calc/calc.py\n/home/dev/calc/test_calc.py",
  ],
  [
    'Edit {"file_path":"/home/dev/calc/calc.py","old_string":"    return a / b","new_string":"    if b == 0:\\n        return None\\n    return a / b"}',
    "<tool_use_error>String to replace not found in file.\nString:     return a / b</tool_use_error>",
  ],
  [
    'Edit {"file_path":"/home/dev/calc/calc.py","old_string":"\\treturn a / b","new_string":"\\tif b == 0:\\n\\t\\treturn None\\n\\treturn a / b"}',
    "The file /home/dev/calc/calc.py has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n     4\u2192def divide(a, b):\n     5\u2192\tif b == 0:\n     6\u2192\t\treturn None\n     7\u2192\treturn a / b",
  ],
  [
    'Write {"file_path":"/home/dev/calc/test_calc.py","content":"import unittest\\n\\nfrom calc import divide\\n\\n\\nclass DivideTest(unittest.TestCase):\\n    def test_zero(self):\\n        self.assertIsNone(divide(1, 0))\\n\\n    def test_half(self):\\n        self.assertEqual(divide(1, 2), 0.5)\\n"}',
    "File created successfully at: /home/dev/calc/test_calc.py",
  ],
  ["python -m unittest -q", "..\n----------------------------------------------------------------------\nRan 2 tests in 0.000s\n\nOK"],
  [
    'mcp__github__create_pull_request {"owner":"dev","repo":"calc","title":"divide: return None on zero","head":"fix-divide","base":"main"}',
    '{"number": 42, "html_url": "https://github.com/dev/calc/pull/42", "state": "open"}',
  ],
];

const pairs = (t: Trajectory) => t.turns.map((turn) => [turn.action, turn.observation]);

describe("claude-code: a 2.x session with a rewind, parallel calls and a compaction", () => {
  it("reads the main chain's tool calls in call order, with their results", async () => {
    const t = await only(SESSION);
    expect(t.id).toBe(SESSION_ID);
    expect(t.domain).toBe("swe");
    expect(t.source).toEqual({ uri: SESSION, format: "claude-code" });
    expect(pairs(t)).toEqual(SESSION_TURNS);
    // The rejected pytest run lies on the branch the person rewound past.
    expect(t.turns.some((turn) => turn.action.includes("pytest"))).toBe(false);
  });

  it("takes the first real prompt as the task, later prompts as context of the next call", async () => {
    const t = await only(SESSION);
    // Not the /model command, its isMeta caveat or its <local-command-stdout>.
    expect(t.task).toBe("calc.divide(1, 0) crashes with ZeroDivisionError; make it return None and add a test");
    expect(t.turns[5]?.meta?.user_messages).toEqual([
      "pytest is not installed here; write a unittest test and run it with python -m unittest",
    ]);
    expect(t.turns.filter((turn) => turn.meta?.user_messages !== undefined)).toHaveLength(1);
  });

  it("keeps the thinking and text before each call as its thinking, the last reply as final_message", async () => {
    const t = await only(SESSION);
    expect(t.turns[0]?.thinking).toBe(
      "The user wants divide to return None for a zero divisor. First look at the repository.\n\nLet me look at the code.",
    );
    expect(t.turns[4]?.thinking).toBe("The file is indented with tabs; retrying with a tab.");
    expect(t.turns.map((turn) => turn.thinking !== undefined)).toEqual([true, false, false, false, true, false, false, false]);
    expect(t.meta?.final_message).toBe("Done: divide returns None for b == 0, both tests pass, and PR #42 is open.");
  });

  it("marks errors and JSON tool results, and names the tool and call id", async () => {
    const t = await only(SESSION);
    expect(t.turns.map((turn) => turn.meta?.is_error === true)).toEqual([false, false, false, true, false, false, false, false]);
    expect(t.turns[7]?.meta).toEqual({ tool: "mcp__github__create_pull_request", tool_use_id: "toolu_09", observation_format: "json" });
    expect(t.turns.map((turn) => turn.meta?.tool)).toEqual([
      "Bash",
      "Read",
      "Grep",
      "Edit",
      "Edit",
      "Write",
      "Bash",
      "mcp__github__create_pull_request",
    ]);
  });

  it("records the session's provenance and what made no turn", async () => {
    const t = await only(SESSION);
    const { final_message: _final, ...meta } = t.meta ?? {};
    expect(meta).toEqual({
      agent: "claude-code",
      model: "claude-sonnet-4-5-20250929",
      version: "2.0.31",
      cwd: "/home/dev/calc",
      git_branch: "main",
      session_id: SESSION_ID,
      // The rejected call, its result and the interruption; the Read result written as a side
      // branch of its parallel call is used, not counted.
      chain: { off_chain: 3 },
      skipped: {
        slash_command: 1,
        meta_message: 1,
        harness_message: 1,
        system_compact_boundary: 1,
        compact_summary: 1,
        system_reminder: 1,
      },
    });
  });

  it("takes the domain from options when given", async () => {
    const t = await only(SESSION, { ...OPTIONS, domain: "terminal" });
    expect(t.domain).toBe("terminal");
  });

  it("reads a gzip-compressed session the same (both passes decompress)", async () => {
    const path = join(tempDir("lwm-claude-code-"), "session.jsonl.gz");
    writeFileSync(path, gzipSync(readFileSync(SESSION)));
    const t = await only(path);
    expect(pairs(t)).toEqual(SESSION_TURNS);
  });
});

describe("claude-code: several sessions in one file", () => {
  /** A two-entry-pair session: prompt, Bash call, its result, a reply. */
  const session = (id: string, command: string, output: string) => {
    const entry = (type: string, uuid: string, parentUuid: string | null, content: unknown) => ({
      type,
      uuid: `${id}-${uuid}`,
      parentUuid: parentUuid === null ? null : `${id}-${parentUuid}`,
      sessionId: id,
      isSidechain: false,
      cwd: "/w",
      message: { role: type, content },
    });
    return [
      entry("user", "u1", null, `run ${command}`),
      entry("assistant", "a1", "u1", [{ type: "tool_use", id: `${id}-t1`, name: "Bash", input: { command } }]),
      entry("user", "u2", "a1", [{ type: "tool_result", tool_use_id: `${id}-t1`, content: output }]),
      entry("assistant", "a2", "u2", [{ type: "text", text: `ran ${command}` }]),
    ];
  };

  it("reads sessions written one after another (cat *.jsonl) as one trajectory each, none lost", async () => {
    const items = await read(writeLines([...session("s-one", "ls", "a.txt"), ...session("s-two", "pwd", "/w")], "all.jsonl"));
    expect(quarantined(items)).toEqual([]);
    const ts = trajectories(items);
    expect(ts.map((t) => [t.id, t.task, pairs(t), t.meta?.final_message])).toEqual([
      ["s-one", "run ls", [["ls", "a.txt"]], "ran ls"],
      ["s-two", "run pwd", [["pwd", "/w"]], "ran pwd"],
    ]);
    expect(ts.map((t) => t.meta?.chain)).toEqual([undefined, undefined]);
  });

  it("keeps two trees of one session (a compaction without a logical parent) one conversation, as before", async () => {
    const [first, second] = [session("s-one", "ls", "a.txt"), session("s-one", "pwd", "/w")];
    const renamed = (second as Record<string, unknown>[]).map((line) => ({
      ...line,
      uuid: `x-${line.uuid}`,
      parentUuid: line.parentUuid === null ? null : `x-${line.parentUuid}`,
    }));
    const t = await only(writeLines([...first, ...renamed]));
    expect(pairs(t)).toEqual([["pwd", "/w"]]);
    expect(t.meta?.chain).toEqual({ off_chain: 4 });
  });
});

describe("claude-code: sidechains", () => {
  it("keeps a 1.x Task sub-agent written into the session file apart, as its own trajectory", async () => {
    const items = await read(V1);
    expect(quarantined(items)).toEqual([]);
    const [main, side] = trajectories(items) as [Trajectory, Trajectory];
    expect(items).toHaveLength(2);
    expect(main.id).toBe("0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b");
    expect(main.domain).toBe("terminal");
    expect(main.task).toBe("find where the log rotation for /srv/app is configured and rotate the logs now");
    expect(pairs(main)).toEqual([
      [
        'Task {"description":"Find log rotation config","prompt":"Find the logrotate configuration that covers /srv/app/logs and report its path and policy.","subagent_type":"general-purpose"}',
        "The configuration is /etc/logrotate.d/app: daily, keeping 7 rotations.",
      ],
      ["sudo logrotate -f /etc/logrotate.d/app && ls /srv/app/logs", "app.log\napp.log.1"],
      ["tail -n 1 /srv/app/logs/app.log.1", "Exit code 1\ntail: cannot open '/srv/app/logs/app.log.1' for reading: Permission denied"],
    ]);
    expect(main.turns[0]?.thinking).toBe("I'll have an agent search for the configuration.");
    expect(main.turns[2]?.meta).toEqual({
      tool: "Bash",
      tool_use_id: "toolu_A3",
      user_messages: ["go on, check the rotated file"],
      is_error: true,
    });
    // The first prompt's parent is in the session this one resumed; the synthetic API error is no model's.
    expect(main.meta?.chain).toEqual({ missing_parent: "9d8c7b6a-5f4e-4d3c-8b2a-19f8e7d6c5b4" });
    expect(main.meta?.skipped).toEqual({ api_error_message: 1 });
    expect(main.meta?.model).toBe("claude-opus-4-20250514");
    expect(main.meta?.models).toBeUndefined();
    expect(main.meta?.git_branch).toBeUndefined();

    expect(side.id).toBe("0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b/sidechain-a7e4c2d9-1b3f-4e6a-9c8d-000000000003");
    expect(side.source).toEqual({ uri: V1, line: 3, format: "claude-code" });
    expect(side.task).toBe("Find the logrotate configuration that covers /srv/app/logs and report its path and policy.");
    expect(pairs(side)).toEqual([
      ['Glob {"pattern":"/etc/logrotate.d/*"}', "/etc/logrotate.d/app\n/etc/logrotate.d/dpkg"],
      [
        'Read {"file_path":"/etc/logrotate.d/app"}',
        "     1\u2192/srv/app/logs/*.log {\n     2\u2192  daily\n     3\u2192  rotate 7\n     4\u2192}",
      ],
    ]);
    expect(side.meta?.sidechain).toEqual({ group: "sidechain-a7e4c2d9-1b3f-4e6a-9c8d-000000000003" });
    expect(side.meta?.model).toBe("claude-sonnet-4-20250514");
    expect(side.meta?.final_message).toBe("The configuration is /etc/logrotate.d/app: daily, keeping 7 rotations.");
  });

  it("reads a 2.x agent-<id>.jsonl file as the sidechain <sessionId>/agent-<id>", async () => {
    const t = await only(AGENT);
    expect(t.id).toBe(`${SESSION_ID}/agent-7f3e9a21`);
    expect(t.task).toBe("List every caller of divide() in the repository, with file and line.");
    expect(pairs(t)).toEqual([
      [
        'Grep {"pattern":"divide\\\\(","path":"/home/dev/calc","output_mode":"content","-n":true}',
        "/home/dev/calc/calc.py:4:def divide(a, b):\n/home/dev/calc/test_calc.py:8:        self.assertIsNone(divide(1, 0))",
      ],
    ]);
    expect(t.meta?.sidechain).toEqual({ agent_id: "7f3e9a21", group: "agent-7f3e9a21" });
    expect(t.meta?.model).toBe("claude-haiku-4-5-20251001");
  });

  it("names a Task call's sub-agent when the result records its agentId", async () => {
    const lines = sessionLines(V1);
    const taskResult = lines[8] as Record<string, unknown>;
    (taskResult.toolUseResult as Record<string, unknown>).agentId = "1a2b3c4d";
    const [main] = trajectories(await read(writeLines(lines)));
    expect(main?.turns[0]?.meta?.agent_id).toBe("1a2b3c4d");
  });
});

describe("claude-code: stream-json (claude -p --output-format stream-json)", () => {
  it("reads the messages in order and the result line's outcome", async () => {
    const t = await only(STREAM);
    expect(t.id).toBe("e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b");
    expect(t.domain).toBe("web");
    expect(t.task).toBeUndefined();
    expect(pairs(t)).toEqual([
      [
        'WebSearch {"query":"Python 3.13.0 release date"}',
        'Web search results for query: "Python 3.13.0 release date"\n\nLinks: [{"title":"Python Release Python 3.13.0","url":"https://www.python.org/downloads/release/python-3130/"}]',
      ],
      [
        'WebFetch {"url":"https://www.python.org/downloads/release/python-3130/","prompt":"When was Python 3.13.0 released?"}',
        "Python 3.13.0 was released on October 7, 2024.",
      ],
    ]);
    expect(t.meta?.outcome).toEqual({ success: true });
    expect(t.meta?.result).toEqual({ subtype: "success", is_error: false, num_turns: 5, duration_ms: 9342, total_cost_usd: 0.01873 });
    expect(t.meta?.cwd).toBe("/work/notes");
    expect(t.meta?.final_message).toBe("Python 3.13.0 was released on 7 October 2024.");
  });

  it("records a failed run's subtype as the failure mode", async () => {
    const lines = sessionLines(STREAM);
    const result = lines.at(-1) as Record<string, unknown>;
    Object.assign(result, { subtype: "error_max_turns", is_error: true });
    const t = await only(writeLines(lines));
    expect(t.meta?.outcome).toEqual({ success: false, failure_mode: "error_max_turns" });
  });
});

describe("claude-code: hostile and damaged files", () => {
  it("keeps the turns of a session whose last line was cut by a crash, and reports the line", async () => {
    const raw = readFileSync(SESSION, "utf8").split("\n").filter(Boolean);
    // Line 32 is the closing assistant reply; cut it in the middle.
    const cut = raw.slice(0, 32);
    cut[31] = (cut[31] as string).slice(0, 80);
    const t = await only(writeLines(cut));
    expect(pairs(t)).toEqual(SESSION_TURNS);
    expect(t.meta?.final_message).toBeUndefined();
    const bad = t.meta?.bad_lines as { count: number; first: { line: number; reason: string }[] };
    expect(bad.count).toBe(1);
    expect(bad.first[0]?.line).toBe(32);
    expect(bad.first[0]?.reason).toMatch(/^invalid JSON/);
  });

  it("steps over a parent lost with an unreadable line in the middle", async () => {
    const raw = readFileSync(SESSION, "utf8").split("\n").filter(Boolean);
    // Line 12 is the Grep call (U10), parent of its result on line 14: the chain steps over it to
    // the last entry before the unreadable line, the Read call (line 11).
    raw[11] = '{"parentUuid":"3f6b2a10-9c4e-4d7a-8b1e-000000000009","type":"assis';
    const t = await only(writeLines(raw));
    // The Grep call is lost with its line; its result answers no call and is counted.
    expect(pairs(t)).toEqual(SESSION_TURNS.filter((_, i) => i !== 2));
    expect(t.meta?.chain).toEqual({ off_chain: 3, bridged: 1 });
    expect(t.meta?.skipped).toMatchObject({ result_without_call: 1 });
    expect(t.meta?.bad_lines).toEqual({ count: 1, first: [{ line: 12, reason: expect.stringMatching(/^invalid JSON/) }] });
  });

  it("quarantines the session when a tool call on its chain has a name of the wrong type, naming line and field", async () => {
    const lines = sessionLines();
    const call = lines[8] as { message: { content: Record<string, unknown>[] } };
    (call.message.content[0] as Record<string, unknown>).name = 7;
    const path = writeLines(lines);
    const entry = await quarantineOf(path);
    expect(entry).toEqual({
      source: { uri: path, line: 9, format: "claude-code" },
      id: SESSION_ID,
      stage: "read",
      field: "message.content.0.name",
      reason: "message.content.0.name: expected a tool name, got a number",
    });
  });

  it("quarantines a chain entry without a message object, and a tool result of the wrong type", async () => {
    const noMessage = sessionLines();
    delete (noMessage[5] as Record<string, unknown>).message;
    const first = await quarantineOf(writeLines(noMessage));
    expect([first.source.line, first.field, first.reason]).toEqual([6, "message", "message: expected an object, got nothing"]);

    const badResult = sessionLines();
    const result = badResult[9] as { message: { content: Record<string, unknown>[] } };
    (result.message.content[0] as Record<string, unknown>).content = 12;
    const second = await quarantineOf(writeLines(badResult));
    expect([second.source.line, second.field]).toEqual([10, "message.content.0.content"]);
    expect(second.reason).toBe("message.content.0.content: expected a string or an array of blocks, got a number");
  });

  it("ignores a damaged entry on an abandoned branch", async () => {
    const lines = sessionLines();
    // Line 20: the rejected pytest call, on the branch the person rewound past.
    (lines[19] as { message: Record<string, unknown> }).message.content = 5;
    const t = await only(writeLines(lines));
    expect(pairs(t)).toEqual(SESSION_TURNS);
  });

  it("quarantines a conversation without a tool call, saying what it held", async () => {
    const path = writeLines(sessionLines().slice(0, 7));
    const entry = await quarantineOf(path);
    expect(entry.id).toBe(SESSION_ID);
    expect(entry.reason).toBe(
      'no tool call with a result in the conversation (5 entries on its chain: the prompt "calc.divide(1, 0) crashes with ZeroDivisionError; make it return None and add a test", 1 slash_command, 1 meta_message, 1 harness_message, 1 assistant_text): a chat without actions',
    );
  });

  it("quarantines a file with only bookkeeping entries, or with no readable line, as one entry", async () => {
    const bookkeeping = writeLines(sessionLines().slice(0, 2));
    expect((await quarantineOf(bookkeeping)).reason).toBe("no user or assistant entry: only 1 summary, 1 file-history-snapshot");

    const text = writeLines(["meeting notes", "nothing here", '{"type": 3}'], "notes.txt");
    const entry = await quarantineOf(text);
    expect(entry.source).toEqual({ uri: text, format: "claude-code" });
    expect(entry.reason).toMatch(
      /^no Claude Code user or assistant entry among the file's lines \(3 not read: line 1: invalid JSON.*; line 2: invalid JSON.*; line 3: "type": expected a string, got a number\)$/,
    );
  });

  it("reports a line over input.max_line_bytes without reading it", async () => {
    const lines = sessionLines();
    const big = lines[31] as { message: { content: { text: string }[] } };
    (big.message.content[0] as { text: string }).text = "x".repeat(5000);
    const t = await only(writeLines(lines), { maxLineBytes: 4096 });
    expect(pairs(t)).toEqual(SESSION_TURNS);
    const bad = t.meta?.bad_lines as { count: number; first: { line: number; reason: string }[] };
    expect(bad.first).toEqual([{ line: 32, reason: expect.stringMatching(/over the 4096-byte limit \(input\.max_line_bytes\)$/) }]);
  });

  it("says in a chat-without-actions quarantine which lines it could not read (a tool result over the limit)", async () => {
    const entry = (type: string, uuid: string, parentUuid: string | null, content: unknown) => ({
      type,
      uuid,
      parentUuid,
      sessionId: "s-long",
      isSidechain: false,
      message: { role: type, content },
    });
    const path = writeLines([
      entry("user", "u1", null, "print a lot"),
      entry("assistant", "a1", "u1", [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "yes | head -n 5000" } }]),
      entry("user", "u2", "a1", [{ type: "tool_result", tool_use_id: "t1", content: "y\n".repeat(5000) }]),
    ]);
    const items = await read(path, { maxLineBytes: 4096 });
    expect(items).toHaveLength(1);
    const [quarantine] = quarantined(items);
    expect(quarantine?.reason).toMatch(
      /: a chat without actions; 1 line\(s\) not read: line 3: line is \d+ bytes, over the 4096-byte limit/,
    );
  });

  it("ends on a parentUuid cycle", async () => {
    const lines = sessionLines().slice(0, 10);
    // The first real prompt now names the Bash result (line 10) as its parent: a loop.
    (lines[5] as Record<string, unknown>).parentUuid = (lines[9] as Record<string, unknown>).uuid;
    const t = await only(writeLines(lines));
    expect(pairs(t)).toEqual([SESSION_TURNS[0]]);
  });

  it("counts a repeated call (a compaction replay) once", async () => {
    const lines = sessionLines();
    // Replay the unittest call and its result with new uuids after the PR call's result.
    const call = {
      ...(lines[27] as Record<string, unknown>),
      uuid: "replay-call",
      parentUuid: (lines[30] as Record<string, unknown>).uuid,
    };
    const result = { ...(lines[28] as Record<string, unknown>), uuid: "replay-result", parentUuid: "replay-call" };
    const t = await only(writeLines([...lines, call, result]));
    expect(pairs(t)).toEqual(SESSION_TURNS);
    expect(t.meta?.skipped).toMatchObject({ repeated_tool_use: 1, repeated_tool_result: 1 });
  });

  it("reads a long session with many abandoned branches into its main chain only", async () => {
    const lines: Record<string, unknown>[] = [];
    const base = { isSidechain: false, sessionId: "long", version: "2.0.50", cwd: "/w", gitBranch: "" };
    let parent: string | null = null;
    for (let i = 0; i < 2000; i++) {
      const prompt: Record<string, unknown> = {
        ...base,
        type: "user",
        uuid: `p${i}`,
        parentUuid: parent,
        message: { role: "user", content: `step ${i}` },
      };
      const call = {
        ...base,
        type: "assistant",
        uuid: `c${i}`,
        parentUuid: `p${i}`,
        message: { role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "Bash", input: { command: `echo ${i}` } }] },
      };
      const answer = {
        ...base,
        type: "user",
        uuid: `r${i}`,
        parentUuid: `c${i}`,
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `${i}` }] },
      };
      // Every tenth prompt is abandoned: the next one is rewritten from the same parent.
      lines.push(prompt, call, answer);
      if (i % 10 !== 9) parent = `r${i}`;
    }
    const t = await only(writeLines(lines));
    // Abandoned: steps 9, 19, … except the last one (1999 ends the file, so its branch is the main chain).
    expect(t.turns).toHaveLength(2000 - 199);
    expect(t.turns.at(-1)).toMatchObject({ action: "echo 1999", observation: "1999" });
    expect(t.turns.some((turn) => turn.action === "echo 9")).toBe(false);
    expect(t.domain).toBe("terminal");
    expect(t.meta?.chain).toEqual({ off_chain: 199 * 3 });
  });
});

describe("claude-code: canonical records", () => {
  it("writes every fixture's trajectories in the canonical schema", async () => {
    for (const path of [SESSION, V1, AGENT, STREAM]) {
      const found = trajectories(await read(path));
      expect(found.length).toBeGreaterThan(0);
      for (const t of found) {
        const { source: _source, ...record } = t;
        expect(trajectoryInputSchema.safeParse(record).success, `${path} ${t.id}`).toBe(true);
        expect(
          t.turns.every((turn) => turn.action.trim() !== "" && turn.observation !== ""),
          t.id,
        ).toBe(true);
      }
    }
  });
});

describe("claude-code: domain from the tools", () => {
  it("follows the documented rules", () => {
    expect(inferDomain(["Bash", "Bash"], "main")).toBe("terminal");
    expect(inferDomain(["Bash", "Read"], undefined)).toBe("swe");
    expect(inferDomain(["Bash", "Edit"], undefined)).toBe("swe");
    expect(inferDomain(["mcp__db__query", "mcp__db__query", "Bash"], "main")).toBe("mcp");
    expect(inferDomain(["WebFetch", "WebFetch", "Bash"], undefined)).toBe("web");
    expect(inferDomain(["WebSearch", "WebSearch", "WebFetch"], undefined)).toBe("search");
    expect(inferDomain(["TodoWrite"], undefined)).toBe("swe");
  });
});

/** The heads of a file from each of its first 8 non-empty lines on, as detection probes them. */
function probes(head: string): string[] {
  const starts: string[] = [];
  let start = 0;
  while (start < head.length && starts.length < 8) {
    const end = head.indexOf("\n", start);
    if (head.slice(start, end === -1 ? undefined : end).trim() !== "") starts.push(head.slice(start));
    if (end === -1) break;
    start = end + 1;
  }
  return starts;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("claude-code: detection", () => {
  const mine = readdirSync(HANDMADE)
    .filter((name) => name.endsWith(".jsonl"))
    .map(fixture);

  it("claims its fixtures from every probed line, and no reader before it in READERS does", async () => {
    expect(mine).toHaveLength(4);
    for (const path of mine) {
      for (const head of probes(await readHead(path))) {
        expect(claudeCodeReader.sniff(head, path), path).toBe(true);
        expect(READERS.find((reader) => reader.sniff(head, path))?.name, path).toBe("claude-code");
      }
    }
  });

  it("claims none of the other readers' fixtures or the demo data", async () => {
    const others = [
      ...filesUnder(join(ROOT, "test/fixtures/handmade")).filter((path) => !path.startsWith(HANDMADE)),
      ...filesUnder(join(ROOT, "data/demo")),
      ...filesUnder(join(ROOT, "test/fixtures/terminal-bench")),
    ].filter((path) => !path.endsWith(".md"));
    expect(others.length).toBeGreaterThan(20);
    for (const path of others)
      for (const head of probes(await readHead(path))) expect(claudeCodeReader.sniff(head, path), path).toBe(false);
  });
});

describeThirdParty("claude-code on a real Claude Code 2.0.64 session", () => {
  const DIR = (name: string) => thirdParty("formats-2026", "claude_code", name);
  const MAIN = DIR("codemie__4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl");
  const AGENT_FILE = DIR("codemie__agent-50243ee8.jsonl");

  it("is detected: no reader before it in READERS claims it", async () => {
    for (const path of [MAIN, AGENT_FILE]) {
      for (const head of probes(await readHead(path))) {
        expect(claudeCodeReader.sniff(head, path)).toBe(true);
        expect(READERS.find((reader) => reader.sniff(head, path))?.name).toBe("claude-code");
      }
    }
  });

  it("reads the session's six tool calls (three parallel Writes, Read, Edit, Bash) with their results", async () => {
    const t = await only(MAIN);
    expect(t.id).toBe("4c2ddfdc-b619-4525-8d03-1950fb1b0257");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("create hello.py, md and js");
    expect(t.turns.map((turn) => turn.action.split(" ")[0])).toEqual(["Write", "Write", "Write", "Read", "Edit", "rm"]);
    expect(t.turns[0]?.action.startsWith('Write {"file_path":"/tmp/private/hello.py","content":"#!/usr/bin/env python3')).toBe(true);
    expect(t.turns.slice(0, 3).map((turn) => turn.observation)).toEqual([
      "File created successfully at: /tmp/private/hello.py",
      "File created successfully at: /tmp/private/hello.md",
      "File created successfully at: /tmp/private/hello.js",
    ]);
    // The malware <system-reminder> Claude Code appends to Read results is not the file.
    expect(t.turns[3]?.observation.endsWith("     7\u2192    main()\n     8\u2192\n")).toBe(true);
    expect(t.turns[3]?.observation).not.toContain("system-reminder");
    expect(t.turns[5]).toMatchObject({
      action: "rm hello.js",
      observation: "[exit code 0, no output]",
      meta: { user_messages: ["delete js"] },
    });
    expect(t.turns[0]?.thinking).toBe("I'll create three simple files: hello.py, hello.md, and hello.js.");
    expect(t.meta).toMatchObject({
      agent: "claude-code",
      model: "claude-sonnet-4-5-20250929",
      version: "2.0.64",
      cwd: "/tmp/private",
      git_branch: "analytics-v2",
      final_message: "Done! I've deleted hello.js.",
    });
  });

  it("quarantines the Warmup sub-agent file: a sidechain without a tool call", async () => {
    const entry = await quarantineOf(AGENT_FILE);
    expect(entry.id).toBe("4c2ddfdc-b619-4525-8d03-1950fb1b0257/agent-50243ee8");
    expect(entry.reason).toMatch(
      /^no tool call with a result in the sidechain agent-50243ee8 \(2 entries on its chain: the prompt "Warmup", 1 assistant_text\)/,
    );
  });

  it("claims none of the other formats' samples", async () => {
    const root = thirdParty("formats-2026");
    const others = filesUnder(root).filter((path) => !path.includes("/claude_code/") && !path.endsWith(".md"));
    expect(others.length).toBeGreaterThan(5);
    for (const path of others)
      for (const head of probes(await readHead(path))) expect(claudeCodeReader.sniff(head, path), path).toBe(false);
  });
});
