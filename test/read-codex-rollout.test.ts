/**
 * The Codex CLI rollout reader (src/read/codex-rollout.ts) on the hand-written fixtures in
 * test/fixtures/handmade/codex-rollout/ (written from openai/codex's codex-rs protocol types; see
 * the README there), on variants and broken files built here, and on the real shared sample
 * (../shared/fixtures/real/formats-2026/codex/, read in place).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { QuarantineEntry } from "../src/core/errors.ts";
import type { Trajectory, Turn } from "../src/core/trajectory.ts";
import { codexRolloutReader } from "../src/read/codex-rollout.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFromHead, READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/codex-rollout");
const MODERN = join(HANDMADE, "rollout-2025-10-29T09-14-03-0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b.jsonl");
const LEGACY = join(HANDMADE, "rollout-2025-06-02T14-30-00-5f0c7e1a-1b2c-4d3e-9f40-a1b2c3d4e5f6.jsonl");
const UNIFIED = join(HANDMADE, "rollout-2026-03-04T08-00-00-019c0d1e-2f30-7415-a617-28394a5b6c7d.jsonl");
const FIXTURES = [MODERN, LEGACY, UNIFIED];

async function only(path: string, options: typeof OPTIONS & { domain?: Trajectory["domain"] } = OPTIONS): Promise<Trajectory> {
  const items = await collect(codexRolloutReader.read(path, options));
  expect(items.filter((i) => i.kind === "quarantine")).toEqual([]);
  expect(items).toHaveLength(1);
  return (items[0] as Extract<ReadItem, { kind: "trajectory" }>).trajectory;
}

async function quarantine(path: string): Promise<QuarantineEntry> {
  const items = await collect(codexRolloutReader.read(path, OPTIONS));
  expect(items).toHaveLength(1);
  const [item] = items;
  if (item?.kind !== "quarantine") throw new Error(`expected a quarantine entry, got ${JSON.stringify(item)}`);
  return item.entry;
}

const line = (type: string, payload: unknown) => JSON.stringify({ timestamp: "2026-01-01T00:00:00.000Z", type, payload });
const item = (payload: unknown) => line("response_item", payload);
const META = line("session_meta", { id: "11111111-2222-4333-8444-555555555555", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" });
const call = (name: string, args: unknown, callId: string) =>
  item({ type: "function_call", name, arguments: JSON.stringify(args), call_id: callId });
const output = (callId: string, out: unknown) => item({ type: "function_call_output", call_id: callId, output: out });

function writeTemp(name: string, lines: string[] | string | Buffer): string {
  const path = join(tempDir("lwm-codex-"), name);
  writeFileSync(path, Array.isArray(lines) ? `${lines.join("\n")}\n` : lines);
  return path;
}

/** The turns without the exec timing facts, which the expectations below do not spell out. */
const pick = (turn: Turn) => ({ action: turn.action, observation: turn.observation, thinking: turn.thinking, meta: turn.meta });

describe("codex-rollout: hand-made fixtures", () => {
  it("reads the modern layout: calls in order, parallel outputs by call_id, patches, local_shell, a later user message", async () => {
    const t = await only(MODERN);
    expect(t.id).toBe("0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("Fix the failing test in tests/test_ops.py: divide(7, 2) should return 3.5.");
    expect(t.turns.map(pick)).toEqual([
      {
        action: "pytest -q",
        observation:
          "F.\n=== FAILURES ===\n___ test_divide ___\n>       assert divide(7, 2) == 3.5\nE       assert 3 == 3.5\n1 failed, 1 passed in 0.02s\n",
        thinking: "**Running the tests**\n\nI'll run the suite first to see the failure.",
        meta: { tool: "shell", exit_code: 1, duration_seconds: 0.4 },
      },
      {
        action: "sed -n 1,20p calc/ops.py",
        observation: "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a // b\n",
        thinking: "The test fails because divide uses floor division. Let me look at the source.",
        meta: { tool: "shell", exit_code: 0, duration_seconds: 0.01 },
      },
      {
        // The second of two parallel calls: its output came first, and the words are quoted as a shell shows them.
        action: "grep -rn 'def divide' calc/",
        observation: "calc/ops.py:7:def divide(a, b):\n",
        thinking: undefined,
        meta: { tool: "shell", exit_code: 0, duration_seconds: 0.01 },
      },
      {
        action:
          "*** Begin Patch\n*** Update File: calc/ops.py\n@@\n def divide(a, b):\n-    return a // b\n+    return a / b\n*** End Patch\n",
        observation: "Success. Updated the following files:\nM calc/ops.py\n",
        thinking: "**Patching divide**",
        meta: { tool: "apply_patch", exit_code: 0, duration_seconds: 0 },
      },
      {
        action: "pytest -q",
        observation: "..\n2 passed in 0.01s\n",
        thinking: undefined,
        meta: { tool: "local_shell", status: "completed" },
      },
      {
        action:
          "cat >> tests/test_ops.py <<'EOF'\n\ndef test_divide_by_zero():\n    with pytest.raises(ZeroDivisionError):\n        divide(1, 0)\nEOF",
        observation: "[exit code 0, no output]",
        // The assistant's reply to the first request is not this call's reasoning.
        thinking: undefined,
        meta: { tool: "shell_command", exit_code: 0, wall_time_seconds: 0.1, user_message: "Also add a test for divide by zero." },
      },
      {
        action: 'update_plan {"plan": [{"step": "add divide-by-zero test", "status": "completed"}]}',
        observation: "Plan updated",
        thinking: undefined,
        meta: { tool: "update_plan" },
      },
    ]);
    expect(t.meta).toMatchObject({
      agent: "codex",
      model: "gpt-5-codex",
      session_id: "0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b",
      cli_version: "0.46.0",
      originator: "codex_cli_rs",
      source: "cli",
      cwd: "/home/dev/calc",
      git: {
        commit_hash: "3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        branch: "main",
        repository_url: "https://github.com/example/calc.git",
      },
      token_usage: { total_tokens: 5300 },
      user_messages: 2,
      outcome: { failure_mode: "turn_aborted: interrupted" },
    });
    // Nothing is dropped silently; the compacted replacement history makes no turns and event_msg copies count once.
    expect(t.meta?.skipped).toEqual({
      context_message: 2,
      event_msg: 10,
      turn_context: 2,
      web_search_call: 1,
      assistant_reply: 1,
      compacted: 1,
      user_message_event_duplicate: 2,
      call_without_output: 1,
    });
    expect(t.meta?.final_message).toBeUndefined();
  });

  it("reads the layout before rust-v0.33 (bare header, record_type state, bare items) and argv apply_patch", async () => {
    const t = await only(LEGACY);
    expect(t.id).toBe("5f0c7e1a-1b2c-4d3e-9f40-a1b2c3d4e5f6");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("Fix the typo 'recieve' in README.md");
    expect(t.turns.map(pick)).toEqual([
      {
        action: "cat NOTES.md",
        observation: "cat: NOTES.md: No such file or directory",
        thinking: "Searching for the typo.",
        meta: { tool: "shell", success: false },
      },
      {
        action: "rg -n recieve",
        observation: "README.md:3:You will recieve an email.\n",
        thinking: undefined,
        meta: { tool: "shell", exit_code: 0, duration_seconds: 0.1 },
      },
      {
        action:
          "*** Begin Patch\n*** Update File: README.md\n@@\n-You will recieve an email.\n+You will receive an email.\n*** End Patch\n",
        observation: "Done!\n",
        thinking: undefined,
        meta: { tool: "shell", exit_code: 0, duration_seconds: 0 },
      },
      {
        action: "git diff --stat",
        observation: " README.md | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n",
        thinking: undefined,
        meta: { tool: "shell", exit_code: 0, duration_seconds: 0 },
      },
    ]);
    expect(t.meta).toMatchObject({
      agent: "codex",
      started_at: "2025-06-02T14:30:00.123Z",
      git: { branch: "fix-readme" },
      final_message: "Fixed the typo in README.md.",
      skipped: { record_type_state: 2, context_message: 1 },
    });
  });

  it("reads unified exec (exec_command / write_stdin), user input recorded only as events, images, namespaced tools", async () => {
    const t = await only(UNIFIED);
    expect(t.id).toBe("019c0d1e-2f30-7415-a617-28394a5b6c7d");
    expect(t.domain).toBe("terminal");
    expect(t.task).toBe("How big is the logs folder, and is the dev server still running?");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["du -sh logs", "12M\tlogs\n"],
      ["npm run serve", "> serve\n> node server.js\n"],
      ['write_stdin {"session_id": 7, "chars": "", "yield_time_ms": 5000}', "[no output, still running]"],
      ['view_image {"path": "/Users/sam/scratch/shot.png"}', "shot.png (800x600)\n[image]"],
      ['codex_app.automation_update {"mode": "view"}', "No automations."],
    ]);
    expect(t.turns[0]?.meta).toEqual({ tool: "exec_command", wall_time_seconds: 0.0123, exit_code: 0, original_token_count: 4 });
    expect(t.turns[1]?.meta).toMatchObject({ running_session_id: 7 });
    expect(t.turns[3]?.meta).toEqual({ tool: "view_image", images: 1 });
    expect(t.turns.every((turn) => turn.thinking === undefined)).toBe(true);
    expect(t.meta).toMatchObject({
      model: "gpt-5.2-codex",
      originator: "codex_vscode",
      source: "vscode",
      user_messages: 1,
      final_message: "The logs folder is 12M, and the dev server is running (session 7).",
      skipped: { developer_message: 1, encrypted_reasoning: 1, event_msg: 3, turn_context: 1 },
    });
    expect(t.meta?.outcome).toBeUndefined();
  });

  it("lets --domain override the inferred domain", async () => {
    expect((await only(UNIFIED, { ...OPTIONS, domain: "swe" })).domain).toBe("swe");
    expect((await only(MODERN, { ...OPTIONS, domain: "terminal" })).domain).toBe("terminal");
  });

  it("reads gzip and zstd rollouts (Codex writes .jsonl.zst) the same", async () => {
    const plain = await only(MODERN);
    const text = readFileSync(MODERN);
    const gz = await only(writeTemp(`${basename(MODERN)}.gz`, gzipSync(text)));
    const zst = await only(writeTemp(`${basename(MODERN)}.zst`, zstdCompressSync(text)));
    expect({ ...gz, source: undefined }).toEqual({ ...plain, source: undefined });
    expect({ ...zst, source: undefined }).toEqual({ ...plain, source: undefined });
  });
});

describe("codex-rollout: variants", () => {
  it("unwraps shells and quotes argv words as a shell shows them", async () => {
    const t = await only(
      writeTemp("shells.jsonl", [
        META,
        item({ type: "message", role: "user", content: [{ type: "input_text", text: "go" }] }),
        call("shell", { command: ["/bin/zsh", "-lc", "ls | wc -l"] }, "a"),
        output("a", "3\n"),
        call("container.exec", { command: ["echo", "it's", "a b", "$HOME", ""] }, "b"),
        output("b", "it's a b $HOME \n"),
        call("shell", { command: ["pwsh.exe", "-NoProfile", "-Command", "Get-ChildItem"] }, "c"),
        output("c", "dir\n"),
        call("shell", { command: ["bash", "-c", "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF"] }, "d"),
        output("d", "Done!\n"),
        call("apply_patch", { input: "*** Begin Patch\n*** Add File: x\n+1\n*** End Patch" }, "e"),
        output("e", "Done!\n"),
        call("shell", "not an object", "f"),
        output("f", "err"),
        item({ type: "function_call", name: "weird", arguments: "{not json", call_id: "g" }),
        output("g", "ok"),
      ]),
    );
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "ls | wc -l",
      `echo 'it'"'"'s' 'a b' '$HOME' ''`,
      "Get-ChildItem",
      "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
      "*** Begin Patch\n*** Add File: x\n+1\n*** End Patch",
      'shell "not an object"',
      "weird {not json",
    ]);
    // Patches (through a shell or the tool) make it a software-engineering session.
    expect(t.domain).toBe("swe");
  });

  it("pairs tool_search calls with their output, and refuses arguments nested too deep to write back", async () => {
    const search = [
      META,
      item({ type: "tool_search_call", call_id: "q", execution: "client", arguments: { query: "deploy" } }),
      item({ type: "tool_search_output", call_id: "q", status: "completed", execution: "client", tools: [{ name: "deploy_app" }] }),
    ];
    const t = await only(writeTemp("search.jsonl", search));
    expect(t.turns).toEqual([
      { action: 'tool_search {"query":"deploy"}', observation: '[{"name":"deploy_app"}]', meta: { tool: "tool_search" } },
    ]);
    const deep = JSON.parse(`${"[".repeat(1500)}${"]".repeat(1500)}`);
    const entry = await quarantine(
      writeTemp("deep.jsonl", [META, item({ type: "tool_search_call", call_id: "q", arguments: deep }), search[2] as string]),
    );
    expect(entry).toMatchObject({ field: "payload.arguments", source: { line: 2 } });
    expect(entry.reason).toMatch(/nested at most 1000 levels/);
  });

  it("takes the id from the file name, else a content hash, when a rollout-*.jsonl has no session header", async () => {
    const bare = [
      JSON.stringify({ type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] }),
      JSON.stringify({ type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "c1" }),
      JSON.stringify({ type: "function_call_output", call_id: "c1", output: "a\nb\n" }),
    ];
    const named = await only(writeTemp("rollout-2025-05-20T10-00-00-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee.jsonl", bare));
    expect(named.id).toBe("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
    expect(named.task).toBe("list files");
    expect(named.turns).toEqual([{ action: "ls", observation: "a\nb\n", meta: { tool: "shell" } }]);
    expect(named.meta?.agent).toBe("codex");
    // A rollout-*.jsonl name without a uuid (a copy renamed): still Codex's, id a content hash.
    const hashed = await only(writeTemp("rollout-copy.jsonl", bare));
    expect(hashed.id).toMatch(/^codex-[0-9a-f]{32}$/);
    expect((await only(writeTemp("rollout-again.jsonl", bare))).id).toBe(hashed.id);
  });

  it("reads a headerless file of Responses API items (not rollout-*.jsonl) as one Responses conversation, not as Codex's", async () => {
    const lines = [
      JSON.stringify({ role: "user", content: "count the files" }),
      JSON.stringify({ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Use ls." }] }),
      JSON.stringify({ type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "c1" }),
      JSON.stringify({ type: "function_call_output", call_id: "c1", output: "a\nb\n" }),
      JSON.stringify({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Two files." }] }),
    ];
    const t = await only(writeTemp("responses.jsonl", lines));
    expect(t.task).toBe("count the files");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls", "a\nb\n"]]);
    expect(t.meta?.agent).not.toBe("codex");
    expect(t.meta?.session_id).toBeUndefined();
    expect(t.id).not.toMatch(/^codex-/);
    expect((await only(writeTemp("again.jsonl", lines))).id).toBe(t.id);
    // Negative control: the same lines named as a Codex rollout stay Codex's, whose first line must be its own.
    const asRollout = await collect(codexRolloutReader.read(writeTemp("rollout-2026-01-01T00-00-00-x.jsonl", lines), OPTIONS));
    expect(asRollout).toMatchObject([
      { kind: "quarantine", entry: { source: { line: 1 }, reason: expect.stringMatching(/not a Codex rollout line/) } },
    ]);
    // Negative control: a real older rollout, its bare header first, keeps being a Codex session under any name.
    const legacy = await only(writeTemp("session.jsonl", readFileSync(LEGACY)));
    expect(legacy.meta?.agent).toBe("codex");
    expect(legacy.id).toBe((await only(LEGACY)).id);
  });

  it("keeps sub-agent and fork provenance, counts orphan outputs and repeated session_meta", async () => {
    const t = await only(
      writeTemp("sub.jsonl", [
        line("session_meta", {
          id: "s-1",
          timestamp: "t",
          cwd: "/w",
          originator: "codex_exec",
          cli_version: "0.120.0",
          forked_from_id: "s-0",
          source: { subagent: { thread_spawn: { parent_thread_id: "s-0", depth: 1 } } },
        }),
        line("session_meta", { id: "s-0", timestamp: "t", cwd: "/w" }),
        output("nobody", "stray"),
        call("exec_command", { cmd: "true" }, "x"),
        output("x", JSON.stringify({ output: "", metadata: { exit_code: 0, duration_seconds: 0 } })),
        call("exec_command", { cmd: "false" }, "y"),
        output("y", JSON.stringify({ output: "   \n", metadata: { exit_code: 1, duration_seconds: 0 } })),
      ]),
    );
    expect(t.id).toBe("s-1");
    expect(t.meta).toMatchObject({
      forked_from_id: "s-0",
      source: "subagent",
      subagent: { thread_spawn: { parent_thread_id: "s-0", depth: 1 } },
      skipped: { session_meta_repeated: 1, output_without_call: 1 },
    });
    expect(t.task).toBeUndefined();
    expect(t.turns.map((turn) => turn.observation)).toEqual(["[exit code 0, no output]", "[exit code 1, no output]"]);
  });

  it("attaches later user messages to the next answered call, and only one source of them", async () => {
    const user = (text: string) => item({ type: "message", role: "user", content: [{ type: "input_text", text }] });
    const t = await only(
      writeTemp("users.jsonl", [
        META,
        line("event_msg", { type: "user_message", message: "first" }),
        user("first"),
        call("exec_command", { cmd: "a" }, "1"),
        output("1", "A"),
        user("second"),
        call("exec_command", { cmd: "never answered" }, "2"),
        call("exec_command", { cmd: "b" }, "3"),
        output("3", "B"),
        item({ type: "message", role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AA==" }] }),
        user("third, after the last call"),
      ]),
    );
    expect(t.task).toBe("first");
    expect(t.turns.map((turn) => [turn.action, turn.meta?.user_message])).toEqual([
      ["a", undefined],
      ["b", "second"],
    ]);
    expect(t.meta?.skipped).toMatchObject({
      call_without_output: 1,
      user_message_after_last_call: 1,
      user_message_event_duplicate: 1,
      user_message_without_text: 1,
    });
  });
});

describe("codex-rollout: a last line cut while Codex wrote it (cut-last-line.ts)", () => {
  const good = readFileSync(MODERN, "utf8").trimEnd().split("\n");
  const cutLast = (good.at(-1) as string).slice(0, 40);

  it("keeps the session read before it, with meta.truncated_line (with or without a line end after the cut)", async () => {
    const before = await only(writeTemp("before.jsonl", good.slice(0, -1)));
    for (const text of [[...good.slice(0, -1), cutLast].join("\n"), `${[...good.slice(0, -1), cutLast].join("\n")}\n\n`]) {
      const t = await only(writeTemp("cut.jsonl", text));
      expect(t.id).toBe("0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b");
      expect(t.turns).toEqual(before.turns);
      expect(t.turns.length).toBeGreaterThan(3);
      expect(t.meta).toEqual({ ...before.meta, truncated_line: { line: good.length, bytes: 40 } });
    }
    expect(before.meta?.truncated_line).toBeUndefined();
  });

  it("negative controls: a cut line with a line after it, a last line that closes but is not JSON, a file of one cut line", async () => {
    const middle = await quarantine(writeTemp("hole.jsonl", [...good.slice(0, 4), (good[4] as string).slice(0, 40), ...good.slice(5)]));
    expect(middle).toMatchObject({ source: { line: 5 }, field: "line", stage: "read", id: "0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b" });
    expect(middle.reason).toMatch(/^line 5: invalid JSON/);
    const closed = await quarantine(writeTemp("closed.jsonl", [...good.slice(0, -1), '{"timestamp": "t", "type": "event_msg",}']));
    expect(closed).toMatchObject({ source: { line: good.length }, field: "line" });
    expect(closed.reason).toMatch(new RegExp(`^line ${good.length}: invalid JSON`));
    const alone = await quarantine(writeTemp("alone.jsonl", (good[0] as string).slice(0, 60)));
    expect(alone).toMatchObject({ source: { line: 1 }, field: "line" });
    expect(alone.reason).toMatch(/^line 1: invalid JSON/);
  });
});

describe("codex-rollout: broken files are quarantined whole, at the line and field to blame", () => {
  const cases: [string, string, number, string, RegExp][] = [
    [
      "arguments as an object",
      item({ type: "function_call", name: "shell", arguments: { command: ["ls"] }, call_id: "c" }),
      3,
      "payload.arguments",
      /expected a JSON string, got an object/,
    ],
    [
      "a call without call_id",
      item({ type: "function_call", name: "shell", arguments: "{}" }),
      3,
      "payload.call_id",
      /expected a string, got nothing/,
    ],
    ["an output of a wrong type", output("c", 42), 3, "payload.output", /got a number/],
    ["a message without content", item({ type: "message", role: "user" }), 3, "payload.content", /expected an array of content parts/],
    [
      "a payload that is not an object",
      JSON.stringify({ timestamp: "t", type: "response_item", payload: "x" }),
      3,
      "payload",
      /expected an object, got a string/,
    ],
    ["a line that is an array", "[1, 2]", 3, "line", /expected a JSON object, got an array/],
    ["a line of another format", JSON.stringify({ role: "user", content: "hi" }), 3, "type", /not a Codex rollout line/],
    [
      "local_shell_call without argv",
      item({ type: "local_shell_call", call_id: "c", status: "completed", action: { type: "exec", command: "ls" } }),
      3,
      "payload.action.command",
      /array of strings/,
    ],
    ["event user_message without text", line("event_msg", { type: "user_message", message: null }), 3, "payload.message", /got null/],
  ];
  it.each(cases)("%s", async (_name, bad, at, field, reason) => {
    const entry = await quarantine(writeTemp("bad.jsonl", [META, call("shell", { command: ["ls"] }, "ok"), bad, output("ok", "x")]));
    expect(entry.source.line).toBe(at);
    expect(entry.field).toBe(field);
    expect(entry.reason).toMatch(reason);
    expect(entry.reason).toMatch(new RegExp(`^line ${at}: `));
    expect(entry.excerpt).toBe(bad.slice(0, 200));
  });

  it("a session_meta without its id", async () => {
    const entry = await quarantine(
      writeTemp("noid.jsonl", [line("session_meta", { cwd: "/w" }), call("shell", { command: ["ls"] }, "c"), output("c", "x")]),
    );
    expect(entry).toMatchObject({ field: "payload.id", source: { line: 1 } });
    expect(entry.reason).toMatch(/expected the session id/);
  });

  it("a line over input.max_line_bytes, an empty file, a session without turns", async () => {
    const big = [META, call("shell", { command: ["echo", "x".repeat(5000)] }, "c"), output("c", "x")];
    const items = await collect(codexRolloutReader.read(writeTemp("big.jsonl", big), { maxLineBytes: 1000 }));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: "quarantine", entry: { source: { line: 2 } } });
    expect((items[0] as Extract<ReadItem, { kind: "quarantine" }>).entry.reason).toMatch(/over the 1000-byte limit/);
    expect((await quarantine(writeTemp("empty.jsonl", "\n\n"))).reason).toMatch(/no rollout lines/);
    const idle = await quarantine(
      writeTemp("idle.jsonl", [META, item({ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] })]),
    );
    expect(idle).toMatchObject({ id: "11111111-2222-4333-8444-555555555555", field: "response_item" });
    expect(idle.reason).toMatch(/no tool call was answered/);
  });
});

describe("codex-rollout: detection", () => {
  const others = READERS.filter((reader) => reader.name !== codexRolloutReader.name);

  /** The head from each of the first 8 non-empty lines, as detectFromHead probes it. */
  function probes(head: string): string[] {
    const starts: string[] = [];
    let start = 0;
    for (const text of head.split("\n")) {
      if (starts.length >= 8) break;
      if (text.trim() !== "") starts.push(head.slice(start));
      start += text.length + 1;
    }
    return starts;
  }

  it("claims every line of its fixtures, and no existing reader claims any of them", async () => {
    for (const path of FIXTURES) {
      for (const from of probes(await readHead(path))) {
        expect(codexRolloutReader.sniff(from, path), `${path}: ${from.slice(0, 80)}`).toBe(true);
        expect(
          others.filter((reader) => reader.sniff(from, path)).map((reader) => reader.name),
          path,
        ).toEqual([]);
      }
    }
  });

  it("claims a first line cut by the 64 KiB head (a session_meta with a long system prompt)", () => {
    const long = line("session_meta", { id: "x", timestamp: "t", base_instructions: { text: "y".repeat(70_000) } });
    expect(codexRolloutReader.sniff(long.slice(0, 65_536), "a.jsonl")).toBe(true);
    const detected = detectFromHead(long.slice(0, 65_536), "a.jsonl");
    expect(detected.kind === "format" ? detected.reader.name : detected.kind).toBe("codex-rollout");
  });

  it("does not claim the existing readers' fixtures (test/fixtures/handmade, data/demo)", async () => {
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? files(path) : [path];
      });
    const inputs = [...files(join(ROOT, "test/fixtures/handmade")), ...files(join(ROOT, "data/demo"))].filter(
      (path) => !path.startsWith(HANDMADE),
    );
    expect(inputs.length).toBeGreaterThan(20);
    const claimed: string[] = [];
    for (const path of inputs) {
      if (probes(await readHead(path)).some((from) => codexRolloutReader.sniff(from, path))) claimed.push(path);
    }
    expect(claimed).toEqual([]);
  });

  it("does not claim chat rows, Responses API items without Codex's shape, or other JSON with timestamp/type", () => {
    for (const head of [
      JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      JSON.stringify({ role: "assistant", content: "hi" }),
      JSON.stringify({ type: "message", role: "user", content: "plain string" }),
      JSON.stringify({ timestamp: "t", type: "user", message: { role: "user", content: "hi" } }),
      JSON.stringify({ timestamp: "t", type: "session_meta", payload: "not an object" }),
      JSON.stringify({ id: "x", timestamp: "t" }),
      JSON.stringify({ type: "function_call", name: "f", arguments: {} }),
      "not json",
    ])
      expect(codexRolloutReader.sniff(head, "x.jsonl"), head).toBe(false);
  });
});

describeThirdParty("codex-rollout on the Codex Desktop sample (codemie-code fixture, first 20 lines)", () => {
  const SAMPLE = thirdParty("formats-2026/codex/codemie__rollout-2026-05-11T13-28-45-019e1695.first20.jsonl");

  it("reads the session: exec_command calls, outputs by call_id, the task from the user_message event", async () => {
    const t = await only(SAMPLE);
    expect(t.id).toBe("019e1695-0522-7c83-8b39-0dd379793f80");
    expect(t.domain).toBe("terminal");
    expect(
      t.task?.endsWith(
        "## My request for Codex:\nanalyze trascript and summarzie action items related to codemie and demo preapration, specifically focus on demo, User and Vadym",
      ),
    ).toBe(true);
    // Lines 4, 7, 8, 12-15 are calls; 9 and 10 answer 7 and 8, 16-19 answer 12-15 (checked with python3 over the file).
    expect(t.turns).toHaveLength(7);
    expect(t.turns[0]?.action).toBe(
      "sed -n '1,220p' /Users/Sample_User/.codex/plugins/cache/openai-curated/superpowers/63976030/skills/using-superpowers/SKILL.md",
    );
    expect(t.turns[0]?.observation.startsWith("---\nname: using-superpowers\n")).toBe(true);
    expect(t.turns[1]).toEqual({
      action: "wc -l /Users/Sample_User/Downloads/Sample\\ BiS\\ SampleProject.ai\\ Demo\\ Prep.vtt",
      observation: "    8803 /Users/Sample_User/Downloads/Sample Project Demo Prep.vtt\n",
      meta: { tool: "exec_command", wall_time_seconds: 0, exit_code: 0, original_token_count: 18 },
    });
    expect(t.turns[2]?.action.startsWith('rg -n -i "codemie|demo|')).toBe(true);
    expect(t.turns[2]?.observation.startsWith("64:to basically show that which parts of</v>\r\n")).toBe(true);
    expect(t.turns[6]?.action).toBe("sed -n '3860,4280p' /Users/Sample_User/Downloads/Sample\\ BiS\\ SampleProject.ai\\ Demo\\ Prep.vtt");
    expect(t.turns[6]?.observation.startsWith("<v Peter Zador>personas in the shared services context,")).toBe(true);
    for (const turn of t.turns) {
      expect(turn.action.trim()).not.toBe("");
      expect(turn.observation.trim()).not.toBe("");
      expect(turn.observation).not.toMatch(/^Chunk ID:/);
    }
    expect(t.meta).toMatchObject({
      agent: "codex",
      cli_version: "0.128.0-alpha.1",
      originator: "Codex Desktop",
      source: "vscode",
      model_provider: "openai",
      cwd: "/Users/Sample_User/naya",
      user_messages: 1,
      skipped: { encrypted_reasoning: 4, event_msg: 1 },
    });
  });

  it("is detected as codex-rollout on every probed line and by no existing reader", async () => {
    const head = await readHead(SAMPLE);
    expect(codexRolloutReader.sniff(head, SAMPLE)).toBe(true);
    expect(READERS.filter((reader) => reader.name !== codexRolloutReader.name && reader.sniff(head, SAMPLE))).toEqual([]);
  });
});
