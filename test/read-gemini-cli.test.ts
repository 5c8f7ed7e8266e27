/** The Gemini CLI chat-recording reader (src/read/gemini-cli.ts) on a hand-written JSONL session, hostile variants and the real shared sample (.json). */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { geminiCliReader, inferGeminiDomain } from "../src/read/gemini-cli.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { READERS } from "../src/read/registry.ts";
import { collect, expectClaimsNoOtherFixture, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/gemini-cli");
const JSONL = join(HANDMADE, "session-2025-12-02T09-00-4b1d2c3e.jsonl");
const CHECKPOINT = join(HANDMADE, "checkpoint-port.json");
const LOGS = join(HANDMADE, "logs.json");
const SAMPLE = thirdParty("formats-2026/extra_gemini_cli/codemie__gemini-session-2026-01-16T11-01-file-ops-37b7abef.json");

async function only(path: string, domain?: Trajectory["domain"]): Promise<ReadItem> {
  const items = await collect(geminiCliReader.read(path, { ...OPTIONS, ...(domain ? { domain } : {}) }));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

function write(name: string, text: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

describe("gemini-cli reader", () => {
  it("reads a JSONL session: upserts, a rewind, parallel calls in order, errors, a cancelled call", async () => {
    const item = await only(JSONL);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("4b1d2c3e-0000-4a5b-8c9d-112233445566");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("run the tests and fix the failing one");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["npm test", "Command: npm test\nStdout: FAIL sum.test.js\n  expected 3, got 4\nExit Code: 1"],
      ['read_file {"absolute_path":"/repo/sum.js"}', "module.exports = (a, b) => a + b + 1;\n"],
      [
        'replace {"file_path":"/repo/sum.js","old_string":"a + b + 1","new_string":"a + b"}',
        "Failed to edit, 0 occurrences found for old_string",
      ],
    ]);
    expect(t.turns[0]?.thinking).toBe("Running tests: I'll run npm test first.");
    expect(t.turns[1]?.thinking).toBe("The sum is off by one.");
    expect(t.turns[2]?.thinking).toBeUndefined();
    expect(t.turns[2]?.meta).toMatchObject({ tool: "replace", status: "error", is_error: true });
    expect(t.meta).toMatchObject({
      agent: "gemini-cli",
      model: "gemini-2.5-pro",
      summary: "Fix the off-by-one in sum.js",
      final_message: "Fixed; the tests should pass now.",
      tokens: 970 + 1060 + 1112,
      skipped: { rewind: 1, call_without_result: 1, info_message: 1 },
    });
  });

  it("reads a /chat save checkpoint: calls answered by name in order, the set-up context as system", async () => {
    const item = await only(CHECKPOINT);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toMatch(/^checkpoint-port-[0-9a-f]{12}$/);
    expect(t.system?.startsWith("This is the Gemini CLI. We are setting up the context for our chat.\n")).toBe(true);
    expect(t.task).toBe("find out which port the dev server uses");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [
        'search_file_content {"pattern":"PORT"}',
        'Found 1 match for pattern "PORT":\n---\nFile: server.js\nL3: const PORT = process.env.PORT || 5173;\n---',
      ],
      ["ss -ltnp | grep node", "Command: ss -ltnp | grep node\nStdout: (empty)\nExit Code: 1"],
    ]);
    expect(t.turns[0]?.thinking).toBe("Looking for the server config.\n\nI'll search the config and check what is listening.");
    expect(t.meta).toMatchObject({
      final_message: "The dev server uses port 5173 (from `PORT`); nothing is listening right now.",
      skipped: { context_reply: 1 },
    });
  });

  it("filters each session of a logs.json (prompts only) with that reason", async () => {
    const items = await collect(geminiCliReader.read(LOGS, OPTIONS));
    const ts = items.map((i) => (i.kind === "trajectory" ? i.trajectory : undefined));
    expect(ts.map((t) => [t?.id, t?.task, t?.turns.length])).toEqual([
      ["aa11", "find out which port the dev server uses", 0],
      ["bb22", "hello", 0],
    ]);
    for (const t of ts) {
      expect(t?.meta?.read_filter).toMatchObject({ stage: "prompts-only" });
      expect((t?.meta?.read_filter as { reason?: string } | undefined)?.reason).toMatch(
        /^Gemini CLI logs\.json holds only the user's prompts \(\d in session/,
      );
    }
  });

  it("takes --domain, and infers it from the tools", async () => {
    const item = await only(JSONL, "terminal");
    expect(item.kind === "trajectory" && item.trajectory.domain).toBe("terminal");
    expect(inferGeminiDomain(["run_shell_command", "run_shell_command"])).toBe("terminal");
    expect(inferGeminiDomain(["google_web_search", "google_web_search", "web_fetch"])).toBe("search");
    expect(inferGeminiDomain(["web_fetch", "google_web_search"])).toBe("web");
    expect(inferGeminiDomain(["github__list_issues", "github__get_issue"])).toBe("mcp");
    expect(inferGeminiDomain(["run_shell_command", "read_file"])).toBe("swe");
  });

  it("filters a chat without tool calls; quarantines wrong types and broken JSON, naming the field", async () => {
    const lines = readFileSync(JSONL, "utf8").trim().split("\n");
    const chat = await only(write("chat.jsonl", `${[lines[0], lines[3], lines[8]].join("\n")}\n`));
    if (chat.kind !== "trajectory") throw new Error(JSON.stringify(chat));
    expect(chat.trajectory.turns).toEqual([]);
    expect(chat.trajectory.meta?.read_filter).toMatchObject({ stage: "no-tool-calls" });
    expect((chat.trajectory.meta?.read_filter as { reason?: string } | undefined)?.reason).toMatch(
      /^no tool call with a result in the session \(the prompt "run the tests/,
    );
    const badCalls = await only(
      write("bad.jsonl", `${lines[0]}\n{"id":"g","timestamp":"t","type":"gemini","content":"","toolCalls":{"x":1}}\n`),
    );
    expect(badCalls.kind === "quarantine" && badCalls.entry).toMatchObject({ field: "toolCalls", source: { line: 2 } });
    expect(badCalls.kind === "quarantine" && badCalls.entry.reason).toBe('line 2: "toolCalls": expected an array, got an object');
    // A cut line with a line after it is a hole, not a cut write: the file is quarantined (a cut LAST line is not: see below).
    const cut = await only(write("cut.jsonl", `${lines[0]}\n{"id":"g","timest\n${lines[1]}\n`));
    expect(cut.kind === "quarantine" && cut.entry.reason).toMatch(/^line 2: invalid JSON/);
    const doc = await only(
      write(
        "session-x.json",
        '{\n  "sessionId": "s",\n  "projectHash": "p",\n  "messages": [\n    {"id": "a", "type": 3, "content": "x"}\n  ]\n}\n',
      ),
    );
    expect(doc.kind === "quarantine" && doc.entry).toMatchObject({
      id: "s",
      field: "type",
      reason: 'messages[0]: "type": expected a string, got a number',
    });
    const truncated = await only(
      write("session-y.json", '{\n  "sessionId": "s",\n  "projectHash": "p",\n  "messages": [\n    {"id": "a", "ty'),
    );
    expect(truncated.kind === "quarantine" && truncated.entry.reason).toMatch(/^not a Gemini CLI session record: invalid JSON/);
  });

  it("a .jsonl whose last line was cut while gemini-cli wrote it: the session before it, with meta.truncated_line", async () => {
    const lines = readFileSync(JSONL, "utf8").trimEnd().split("\n");
    // Cut in line 9 (the last reply's record) and in line 10 (the closing $set): each is read as the lines before it.
    for (const at of [9, 10]) {
      const before = await only(write(`before-${at}.jsonl`, `${lines.slice(0, at - 1).join("\n")}\n`));
      const cutText = (lines[at - 1] as string).slice(0, 50);
      const cut = await only(write(`cut-${at}.jsonl`, `${lines.slice(0, at - 1).join("\n")}\n${cutText}`));
      if (before.kind !== "trajectory" || cut.kind !== "trajectory") throw new Error(JSON.stringify(cut));
      expect(cut.trajectory.turns).toHaveLength(3);
      expect(cut.trajectory.turns).toEqual(before.trajectory.turns);
      expect(cut.trajectory.meta).toEqual({ ...before.trajectory.meta, truncated_line: { line: at, bytes: 50 } });
      expect(before.trajectory.meta?.truncated_line).toBeUndefined();
    }
  });

  it("negative controls: a cut line in the middle quarantines the file at it; so does a file of one cut line", async () => {
    const lines = readFileSync(JSONL, "utf8").trimEnd().split("\n");
    const hole = await only(write("hole.jsonl", [...lines.slice(0, 5), (lines[5] as string).slice(0, 50), ...lines.slice(6)].join("\n")));
    if (hole.kind !== "quarantine") throw new Error(JSON.stringify(hole));
    expect(hole.entry).toMatchObject({ id: "4b1d2c3e-0000-4a5b-8c9d-112233445566", source: { line: 6 }, stage: "read" });
    expect(hole.entry.reason).toMatch(/^line 6: invalid JSON/);
    const alone = await only(write("alone.jsonl", (lines[0] as string).slice(0, 50)));
    expect(alone.kind).toBe("quarantine");
  });

  it("sniff: claims its fixtures; no existing reader claims them; claims no other fixture", () => {
    const heads = [
      readFileSync(JSONL, "utf8"),
      ...readFileSync(JSONL, "utf8")
        .split("\n")
        .slice(1, 4)
        .map((l) => `${l}\n`),
    ];
    for (const head of heads) expect(geminiCliReader.sniff(head, JSONL), head.slice(0, 60)).toBe(true);
    for (const head of heads) expect(READERS.find((r) => r.sniff(head, JSONL))?.name, head.slice(0, 60)).toBe("gemini-cli");
    expectClaimsNoOtherFixture(geminiCliReader, { own: "gemini-cli" });
  });
});

const QWEN = join(HANDMADE, "qwen-code/4c1e9a7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c.jsonl");
const qwenLines = () =>
  readFileSync(QWEN, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const qwenFile = (records: unknown[]) => write("qwen.jsonl", `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);

describe("gemini-cli reader: Qwen Code chat recordings (~/.qwen/projects/<project>/chats/<sessionId>.jsonl)", () => {
  it("reads the chain of ChatRecords: functionCall parts → their functionResponse by id; cancelled calls, side branches and system records counted", async () => {
    const item = await only(QWEN);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("4c1e9a7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("Why does `npm run lint` fail?");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "npm run lint",
      'read_file {"absolute_path":"/home/dev/weather/src/api.ts"}',
      'read_file {"absolute_path":"/home/dev/weather/src/missing.ts"}',
      'replace {"file_path":"/home/dev/weather/src/api.ts","old_string":"const unused = 1\\n","new_string":""}',
      "npm run lint",
    ]);
    expect(t.turns[0]?.observation).toMatch(/^Command: npm run lint\nDirectory: \(root\)\nOutput: src\/api\.ts\n/);
    expect(t.turns[0]?.thinking).toBe("The user wants the lint failure explained; run it first.\n\nLet me run the linter.");
    expect(t.turns[2]).toMatchObject({ observation: "File not found: /home/dev/weather/src/missing.ts", meta: { is_error: true } });
    // The push the user cancelled is no turn; their next prompt goes with the next call.
    expect(t.turns[4]?.meta?.user_messages).toEqual(["don't push; just confirm lint passes"]);
    expect(t.meta).toMatchObject({
      agent: "qwen-code",
      model: "qwen3-coder-plus",
      cwd: "/home/dev/weather",
      version: "0.2.1",
      git_branch: "main",
      tokens: 10600,
      final_message: "Lint passes now: the unused constant in src/api.ts was the only problem.",
      skipped: { off_chain: 1, system_ui_telemetry: 1, cancelled_call: 1 },
    });
  });

  it("is gemini-cli's, not claude-code's (same uuid / parentUuid / sessionId links, Gemini contents)", () => {
    const text = readFileSync(QWEN, "utf8");
    const starts = [0, ...[...text.matchAll(/\n/g)].slice(0, 8).map((m) => (m.index as number) + 1)];
    for (const start of starts) expect(READERS.find((r) => r.sniff(text.slice(start), QWEN))?.name, `@${start}`).toBe("gemini-cli");
    // A Claude Code entry with the same links stays claude-code's.
    const claude = JSON.stringify({ ...qwenLines()[0], message: { role: "user", content: "hi" } });
    expect(geminiCliReader.sniff(claude, "x.jsonl")).toBe(false);
    expect(READERS.find((r) => r.sniff(claude, "x.jsonl"))?.name).toBe("claude-code");
  });

  it("follows the chain from the last record: a resumed session's abandoned branch is not read", async () => {
    const records = qwenLines();
    // Resume from t1 again after everything: the chain is u1 → a1 → t1 → x1 only.
    const item = await only(qwenFile([...records.slice(0, -1), { ...(records.at(-1) as object), parentUuid: "x1" }]));
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns.map((turn) => turn.action)).toEqual(["npm run lint"]);
    expect(item.trajectory.meta?.skipped).toMatchObject({ off_chain: 11 });
  });

  it("quarantines a record whose message is not a Gemini content, or a line that is not JSON, naming the line", async () => {
    const records = qwenLines();
    const broken = structuredClone(records);
    (broken[3] as { message: Record<string, unknown> }).message.parts = { functionCall: {} };
    let item = await only(qwenFile(broken));
    if (item.kind !== "quarantine") throw new Error(JSON.stringify(item));
    expect(item.entry).toMatchObject({ id: "4c1e9a7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c", field: "message.parts", source: { line: 4 } });
    expect(item.entry.reason).toBe('line 4: "message.parts": expected a Gemini content {role, parts}, got an object');
    const noName = structuredClone(records);
    ((noName[1] as { message: { parts: Record<string, unknown>[] } }).message.parts[2] as Record<string, unknown>).functionCall = {
      id: "c",
    };
    item = await only(qwenFile(noName));
    expect(item.kind === "quarantine" && item.entry.field).toBe("toolCalls.name");
    const lines = readFileSync(QWEN, "utf8").trimEnd().split("\n");
    item = await only(write("hole.jsonl", [...lines.slice(0, 4), "{oops", ...lines.slice(5)].join("\n")));
    expect(item.kind === "quarantine" && item.entry).toMatchObject({ source: { line: 5 } });
  });
});

describeThirdParty("gemini-cli on the real codemie session (.json)", () => {
  it("reads its 14 tool calls in order with their outputs", async () => {
    const head = readFileSync(SAMPLE, "utf8").slice(0, 65536);
    expect(geminiCliReader.sniff(head, SAMPLE)).toBe(true);
    expect(READERS.find((r) => r.sniff(head, SAMPLE))?.name).toBe("gemini-cli");
    const item = await only(SAMPLE);
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("37b7abef-713d-4522-85f0-8ff15a4e6d17");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("show tools");
    expect(t.turns.map((turn) => turn.meta?.tool)).toEqual([
      "write_todos",
      "delegate_to_agent",
      "write_todos",
      "read_file",
      "read_file",
      "read_file",
      "write_todos",
      "search_file_content",
      "read_file",
      "write_file",
      "read_file",
      "write_file",
      "read_file",
      "write_file",
    ]);
    expect(t.turns[3]?.action).toBe('read_file {"file_path":"SECURITY.md"}');
    expect(t.turns[3]?.observation.startsWith("# Security Policy\n")).toBe(true);
    expect(t.turns[9]).toMatchObject({
      action: 'write_file {"content":"# Hello World","file_path":"hello.md"}',
      observation: "Successfully created and wrote to new file: /Users/Nikita_Levyankov/repos/EPMCDME/codemie-ai/codemie-code/hello.md.",
    });
    expect(t.turns[9]?.meta?.user_messages).toEqual(["create hello.md file"]);
    expect(t.meta).toMatchObject({
      agent: "gemini-cli",
      model: "gemini-3-pro",
      final_message: "I have removed the 2nd and 3rd lines from `hello.md`.",
    });
  });
});
