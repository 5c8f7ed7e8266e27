/** The GitHub Copilot CLI reader (src/read/copilot-cli.ts) on the hand-written sessions in test/fixtures/handmade/copilot-cli/ and variants built here. */
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { copilotCliReader, inferCopilotDomain } from "../src/read/copilot-cli.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS } from "../src/read/registry.ts";
import { collect, expectClaimsNoOtherFixture, READ_OPTIONS, ROOT, tempDir, validateAndRun, writeConfig } from "./helpers.ts";

const HANDMADE = join(ROOT, "test/fixtures/handmade/copilot-cli");
const STATE = join(HANDMADE, "session-state");
const S1 = "6f1d2c3b-4a5e-4f60-8b7c-9d0e1f2a3b4c";
const S2 = "0b9e8d7c-6a5b-4c3d-9e2f-1a0b9c8d7e6f";
const FOLDER = join(STATE, S1);
const EVENTS = join(FOLDER, "events.jsonl");
const LEGACY = join(STATE, `${S2}.jsonl`);

const read = (path: string, domain?: Trajectory["domain"]): Promise<ReadItem[]> =>
  collect(copilotCliReader.read(path, { ...READ_OPTIONS, ...(domain ? { domain } : {}) }));

function trajectories(items: readonly ReadItem[]): Trajectory[] {
  return items.map((item) => {
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    return item.trajectory;
  });
}

/** The only item read from `lines` written as a log named `name` (a fresh folder each time). */
async function readLines(lines: readonly (string | object)[], name = `${S2}.jsonl`): Promise<ReadItem[]> {
  const path = join(tempDir("lwm-copilot-"), name);
  writeFileSync(path, `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`);
  return read(path);
}

let n = 0;
const event = (type: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  type,
  data,
  id: `e-${++n}`,
  timestamp: "2026-01-05T09:00:00.000Z",
  parentId: null,
  ...extra,
});
const START = event("session.start", {
  sessionId: "sess-1",
  version: 1,
  producer: "copilot-agent",
  copilotVersion: "0.0.400",
  startTime: "2026-01-05T09:00:00.000Z",
});
const PROMPT = event("user.message", { content: "list the files" });
const ASK = event("assistant.message", {
  messageId: "m1",
  content: "",
  toolRequests: [{ toolCallId: "t1", name: "bash", arguments: { command: "ls" } }],
});
const RAN = event("tool.execution_start", { toolCallId: "t1", toolName: "bash", arguments: { command: "ls" } });
const DONE = event("tool.execution_complete", {
  toolCallId: "t1",
  success: true,
  result: { content: "a.txt\nb.txt\n<exited with exit code 0>" },
});
const GOOD = [START, PROMPT, ASK, RAN, DONE];

describe("copilot-cli reader: the hand-written sessions", () => {
  it("a session folder's events.jsonl: calls in request order, results by toolCallId, shell commands, failures, denials, exit codes", async () => {
    const [main] = trajectories(await read(EVENTS));
    if (!main) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(main).success).toBe(true);
    expect(main.id).toBe(S1);
    expect(main.domain).toBe("swe");
    expect(main.task).toBe("parseDate rejects ISO week dates like 2025-W07-3; make it accept them and run the tests");
    expect(main.turns.map((turn) => turn.action.split(" ")[0])).toEqual([
      "report_intent",
      "view",
      "grep",
      "edit",
      "view",
      "curl",
      "create",
      "npm",
      "edit",
      "npm",
      "task",
      "edit",
      "npm",
    ]);
    // A shell call's action is its command; its trailer is taken off into exit_code.
    expect(main.turns[2]).toMatchObject({
      action: 'grep -rn "W[0-9]" test/ | head',
      observation: 'test/parse.test.ts:14:  expect(parseDate("2025-W07-3")).toEqual(new Date("2025-02-12"));',
      meta: { tool: "bash", tool_call_id: "toolu_03", exit_code: 0 },
    });
    expect(main.turns[1]?.action).toBe('view {"path":"/home/dev/dateparse/src/parse.ts"}');
    expect(main.turns[1]?.observation.startsWith("1. export function parseDate(s: string): Date {\n2. ")).toBe(true);
    // success: false → is_error, the error message observed; a denial completes with no start.
    expect(main.turns[4]).toMatchObject({
      observation: "Path /home/dev/dateparse/src/week.ts does not exist. Please provide a valid path.",
      meta: { is_error: true, error_code: "failure" },
    });
    expect(main.turns[5]).toMatchObject({
      action: "curl -s https://example.com/iso-weeks.txt | head",
      observation: "Permission to run this tool was denied due to the following rules: `shell(curl)`",
      meta: { tool: "bash", is_error: true, error_code: "denied" },
    });
    expect(main.turns.filter((turn) => turn.meta?.is_error).length).toBe(2);
    // A failing test run is a successful call with exit code 1; a silent one says so.
    expect(main.turns[7]?.meta).toMatchObject({ exit_code: 1 });
    expect(main.turns[7]?.meta?.is_error).toBeUndefined();
    expect(main.turns[7]?.observation.endsWith("Tests  1 failed | 8 passed (9)")).toBe(true);
    expect(main.turns[12]).toMatchObject({ action: "npm test --silent", observation: "[exit code 0, no output]", meta: { exit_code: 0 } });
    // The detailed (UI) content is not the observation.
    expect(main.turns.some((turn) => turn.observation.includes("diff --git"))).toBe(false);
  });

  it("thinking: reasoning (once, though also the message's reasoningText) and text since the last call, on the first call after them", async () => {
    const [main] = trajectories(await read(EVENTS));
    const thinking = main?.turns.map((turn) => turn.thinking) ?? [];
    expect(thinking[0]).toBe(
      "The parser probably only knows calendar dates. I should read it and find the week-date tests first.\n\nI'll read the parser and look for the week-date tests.",
    );
    expect(thinking[1]).toBeUndefined();
    expect(thinking[2]).toBeUndefined();
    expect(thinking[3]).toBe("Add a week-date branch before the calendar regex.");
    expect(thinking[10]).toBe("Other week regexes may need the same change; delegate the search.");
    // The reply to the first prompt is no reasoning of the next call; the later prompt is context of it.
    expect(thinking[10]).not.toMatch(/ISO week dates such as/);
    expect(main?.turns[10]?.meta?.user_messages).toEqual(["Also accept a lowercase w, like 2025-w07-3."]);
    expect(main?.meta?.final_message).toBe("Lowercase week dates parse too; the tests pass.");
  });

  it("meta: agent, session, version, context, models (a message without one counts for the model selected), tokens, changes, skipped", async () => {
    const [main] = trajectories(await read(EVENTS));
    expect(main?.meta).toMatchObject({
      agent: "copilot-cli",
      session_id: S1,
      version: "1.0.12",
      producer: "copilot-agent",
      start_time: "2026-03-02T10:00:00.000Z",
      cwd: "/home/dev/dateparse",
      git_root: "/home/dev/dateparse",
      branch: "main",
      repository: "acme/dateparse",
      head_commit: "4be1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3",
      model: "claude-sonnet-4.5",
      models: { "claude-sonnet-4.5": 8, "gpt-5": 3 },
      model_changes: ["claude-sonnet-4.5", "gpt-5"],
      tokens: { input: 97500, output: 1241, cache_read: 69000, cache_write: 12100 },
      premium_requests: 2,
      code_changes: { lines_added: 9, lines_removed: 1, files_modified: 2 },
      output_tokens: 212 + 188 + 97 + 240 + 40 + 75 + 38 + 31 + 120 + 66 + 14,
    });
    // Bookkeeping and event kinds the reader does not know are counted, not refused.
    expect(main?.meta?.skipped).toMatchObject({
      "assistant.turn_start": 10,
      "hook.start": 1,
      "session.compaction_complete": 1,
      "system.message": 1,
      "session.todos_changed": 1,
      assistant_reply: 1,
    });
    expect(main?.meta?.truncated_line).toBeUndefined();
  });

  it("a sub-agent (events with agentId) is a trajectory of its own, named by the spawning task call's turn", async () => {
    const items = await read(EVENTS);
    expect(items).toHaveLength(2);
    const [main, sub] = trajectories(items);
    expect(trajectoryInputSchema.safeParse(sub).success).toBe(true);
    expect(sub?.id).toBe(`${S1}/agent-call_11`);
    expect(sub?.source.line).toBe(57);
    expect(sub?.task).toBe(
      "In /home/dev/dateparse, list every place that matches or builds ISO week dates (regexes with W). Report file:line.",
    );
    expect(sub?.turns).toEqual([
      {
        action: 'grep {"pattern":"W\\\\(","path":"/home/dev/dateparse","output_mode":"content","-n":true}',
        observation: "/home/dev/dateparse/src/parse.ts:4:  const w = /^(\\d{4})-W(\\d{2})-(\\d)$/.exec(s);",
        thinking: "A content grep for W( finds the week regexes.",
        meta: { tool: "grep", tool_call_id: "toolu_s1" },
      },
    ]);
    expect(sub?.meta).toMatchObject({
      agent: "copilot-cli",
      session_id: S1,
      model: "claude-haiku-4.5",
      sidechain: { agent_id: "call_11", tool_call_id: "call_11", agent_name: "explore", status: "completed", total_tool_calls: 1 },
      final_message: "- src/parse.ts:4 — the only week-date regex (/^(\\d{4})-W(\\d{2})-(\\d)$/).",
    });
    // Its calls are not the main agent's; the task call observes the sub-agent's answer.
    expect(main?.turns.some((turn) => turn.meta?.tool_call_id === "toolu_s1")).toBe(false);
    const task = main?.turns.find((turn) => turn.meta?.tool === "task");
    expect(task?.meta?.agent_id).toBe("call_11");
    expect(task?.observation).toBe(sub?.meta?.final_message);
    expect(main?.meta?.models).not.toHaveProperty("claude-haiku-4.5");
  });

  it("the older <id>.jsonl session: no context, str_replace_editor, an error, a truncation, an abort before a result", async () => {
    const [t] = trajectories(await read(LEGACY));
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t?.id).toBe(S2);
    expect(t?.task).toBe("what is listening on port 8080?");
    expect(t?.turns.map((turn) => [turn.action, turn.meta?.exit_code])).toEqual([
      ["lsof -i :8080", 0],
      ['str_replace_editor {"command":"view","path":"/home/dev/api/package.json"}', undefined],
    ]);
    expect(t?.turns[0]?.thinking).toBe("Let me check.");
    expect(t?.meta).toMatchObject({
      agent: "copilot-cli",
      version: "0.0.339",
      model: "claude-sonnet-4",
      errors: [{ error_type: "model_call", message: "Request timed out; retrying." }],
      final_message: "It is the api dev server (node, pid 4242), started by `npm run dev`.",
      skipped: { abort: 1, call_without_result: 1, "session.truncation": 1, "session.error": 1 },
    });
    expect(t?.meta?.cwd).toBeUndefined();
  });

  it("--domain overrides the tools' domain; the tools decide otherwise", async () => {
    const [t] = trajectories(await read(LEGACY, "terminal"));
    expect(t?.domain).toBe("terminal");
    const tool = (name: string, mcp = false) => ({ name, mcp });
    expect(inferCopilotDomain([tool("bash"), tool("bash")])).toBe("terminal");
    expect(inferCopilotDomain([tool("bash"), tool("view")])).toBe("swe");
    expect(inferCopilotDomain([tool("github-mcp-server-list_issues", true), tool("github-mcp-server-get_issue", true), tool("bash")])).toBe(
      "mcp",
    );
    expect(inferCopilotDomain([tool("web_fetch"), tool("web_fetch"), tool("view")])).toBe("web");
    expect(inferCopilotDomain([tool("web_search"), tool("web_search"), tool("web_fetch")])).toBe("search");
    // An MCP tool is told by its start's mcpServerName.
    const [mcp] = trajectories(
      await readLines([
        START,
        PROMPT,
        event("assistant.message", {
          content: "",
          toolRequests: [{ toolCallId: "m1", name: "github-mcp-server-list_issues", arguments: {} }],
        }),
        event("tool.execution_start", {
          toolCallId: "m1",
          toolName: "github-mcp-server-list_issues",
          arguments: {},
          mcpServerName: "github-mcp-server",
          mcpToolName: "list_issues",
        }),
        event("tool.execution_complete", { toolCallId: "m1", success: true, result: { content: "[]" } }),
      ]),
    );
    expect(mcp?.domain).toBe("mcp");
    expect(mcp?.turns[0]?.meta).toMatchObject({ mcp_server: "github-mcp-server" });
  });

  it("VS Code's Copilot Chat agent transcript (the same log): arguments as JSON text, run_in_terminal as its command, agent copilot-chat", async () => {
    const transcript = join(HANDMADE, "vscode-transcripts/5e7a9c1b-3d5f-4a7c-9e1b-3d5f7a9c1b3d.jsonl");
    const detection = await detectFormat(transcript);
    expect(detection.kind === "format" && detection.reader.name).toBe("copilot-cli");
    const [t] = trajectories(await read(transcript));
    expect(t?.turns.map((turn) => [turn.action, turn.observation.split("\n").at(-1)])).toEqual([
      ["python -m pytest -q tests/test_pricing.py", "1 failed, 1 passed in 0.04s"],
    ]);
    expect(t?.domain).toBe("terminal");
    expect(t?.task).toBe("Run the pricing tests and tell me what fails.");
    expect(t?.meta).toMatchObject({ agent: "copilot-chat", vscode_version: "1.110.1", version: "0.37.2", producer: "copilot-agent" });
    expect(t?.meta?.final_message).toMatch(/^test_rounds_half_up fails/);
    // The CLI's own logs stay copilot-cli's, and a string argument that is not a JSON object is kept as written.
    const [cli] = trajectories(await read(EVENTS));
    expect(cli?.meta?.agent).toBe("copilot-cli");
    const [custom] = trajectories(
      await readLines([
        START,
        PROMPT,
        event("assistant.message", {
          content: "",
          toolRequests: [{ toolCallId: "p1", name: "apply_patch", arguments: "*** Begin Patch" }],
        }),
        event("tool.execution_complete", { toolCallId: "p1", success: true, result: { content: "Done" } }),
      ]),
    );
    expect(custom?.turns[0]?.action).toBe("apply_patch *** Begin Patch");
  });
});

describe("copilot-cli reader: variants", () => {
  it("the id falls back to the session folder's name (events.jsonl) or the file name (<id>.jsonl)", async () => {
    const body = GOOD.slice(1);
    const dir = join(tempDir("lwm-copilot-"), "1a2b3c4d-0000-4000-8000-000000000001");
    mkdirSync(dir);
    writeFileSync(join(dir, "events.jsonl"), `${body.map((line) => JSON.stringify(line)).join("\n")}\n`);
    expect(trajectories(await read(join(dir, "events.jsonl")))[0]?.id).toBe("1a2b3c4d-0000-4000-8000-000000000001");
    expect(trajectories(await readLines(body, "9f8e7d6c.jsonl"))[0]?.id).toBe("9f8e7d6c");
    expect(trajectories(await readLines(GOOD))[0]?.id).toBe("sess-1");
  });

  it("a call known only from tool.execution_start (and a user's own !command) is a turn; output without a trailer is kept as is", async () => {
    const [t] = trajectories(
      await readLines([
        START,
        PROMPT,
        event("tool.user_requested", { toolCallId: "u1", toolName: "bash", arguments: { command: "git status" } }),
        event("tool.execution_start", { toolCallId: "u1", toolName: "bash", arguments: { command: "git status" } }),
        event("tool.execution_complete", {
          toolCallId: "u1",
          success: true,
          isUserRequested: true,
          result: { content: "nothing to commit" },
        }),
        event("tool.execution_start", { toolCallId: "s1", toolName: "glob", arguments: { pattern: "*.md" } }),
        event("tool.execution_complete", { toolCallId: "s1", success: true, result: { content: "" } }),
      ]),
    );
    expect(t?.turns).toEqual([
      { action: "git status", observation: "nothing to commit", meta: { tool: "bash", tool_call_id: "u1", user_requested: true } },
      { action: 'glob {"pattern":"*.md"}', observation: "[no output]", meta: { tool: "glob", tool_call_id: "s1" } },
    ]);
  });

  it("a redacted string result, contents blocks, a custom tool's string input, a failure with only an error string", async () => {
    const [t] = trajectories(
      await readLines([
        START,
        PROMPT,
        event("assistant.message", {
          content: "",
          toolRequests: [
            { toolCallId: "a", name: "skill", arguments: { skill: "x" } },
            { toolCallId: "b", name: "view", arguments: { path: "/x" } },
            { toolCallId: "c", name: "apply_patch", arguments: "*** Begin Patch\n*** End Patch", type: "custom" },
            { toolCallId: "d", name: "view", arguments: { path: "/y" } },
          ],
        }),
        event("tool.execution_complete", { toolCallId: "a", success: true, result: "[REDACTED]" }),
        event("tool.execution_complete", {
          toolCallId: "b",
          success: true,
          result: {
            contents: [
              { type: "text", text: "one" },
              { type: "terminal", text: "two" },
              { type: "image", data: "", mimeType: "image/png" },
            ],
          },
        }),
        event("tool.execution_complete", { toolCallId: "c", success: true, result: { content: "Done!" } }),
        event("tool.execution_complete", { toolCallId: "d", success: false, error: "EACCES: permission denied" }),
      ]),
    );
    expect(t?.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error ?? false])).toEqual([
      ['skill {"skill":"x"}', "[REDACTED]", false],
      ['view {"path":"/x"}', "one\ntwo\n[image]", false],
      ["apply_patch *** Begin Patch\n*** End Patch", "Done!", false],
      ['view {"path":"/y"}', "EACCES: permission denied", true],
    ]);
  });

  it("messages a skill or command injected are counted, not the task; a prompt-less session falls back to the first of them", async () => {
    const [t] = trajectories(
      await readLines([START, event("user.message", { content: "<skill>pdf</skill>", source: "skill-pdf" }), PROMPT, ASK, RAN, DONE]),
    );
    expect(t?.task).toBe("list the files");
    expect(t?.meta?.skipped).toMatchObject({ injected_user_message: 1 });
    const [alone] = trajectories(
      await readLines([START, event("user.message", { content: "continue", source: "autopilot" }), ASK, RAN, DONE]),
    );
    expect(alone?.task).toBe("continue");
  });

  it("a session with no completed call is well-formed: no turns, and a read filter saying why", async () => {
    const items = await readLines([START, PROMPT, event("assistant.message", { content: "There are two files.", toolRequests: [] })]);
    expect(items).toHaveLength(1);
    const [t] = trajectories(items);
    expect(t?.turns).toEqual([]);
    expect(readFilterOf(items[0] as ReadItem)).toEqual({
      rule: "no-tool-calls",
      reason: 'no tool call with a result in the session (the prompt "list the files"): a chat without actions',
    });
    // A call that never completed (the session was interrupted) is no turn either: counted.
    const [cut] = trajectories(await readLines([START, PROMPT, ASK, RAN, event("abort", { reason: "user initiated" })]));
    expect(cut?.turns).toEqual([]);
    expect(cut?.meta?.skipped).toMatchObject({ abort: 1, call_without_result: 1 });
  });

  it("a last line cut while the CLI wrote it: every event before it is read, and meta says which line was left out", async () => {
    const torn = JSON.stringify(event("assistant.turn_end", { turnId: "0" })).slice(0, 30);
    const items = await readLines([...GOOD, torn]);
    expect(items).toHaveLength(1);
    const [t] = trajectories(items);
    expect(t?.turns).toEqual([{ action: "ls", observation: "a.txt\nb.txt", meta: { tool: "bash", tool_call_id: "t1", exit_code: 0 } }]);
    expect(t?.meta?.truncated_line).toEqual({ line: 6, bytes: 30 });
  });

  it("repeated requests and completions are counted, not repeated", async () => {
    const [t] = trajectories(await readLines([...GOOD, ASK, DONE]));
    expect(t?.turns).toHaveLength(1);
    expect(t?.meta?.skipped).toMatchObject({ repeated_tool_request: 1, repeated_completion: 1 });
  });

  it("a completion whose call the log does not hold is counted; the session's other turns are read", async () => {
    const orphan = event("tool.execution_complete", { toolCallId: "lost-7", success: true, result: { content: "done" } });
    const items = await readLines([START, orphan, ...GOOD.slice(1)]);
    expect(items).toHaveLength(1);
    const [t] = trajectories(items);
    expect(t?.turns).toEqual([{ action: "ls", observation: "a.txt\nb.txt", meta: { tool: "bash", tool_call_id: "t1", exit_code: 0 } }]);
    expect(t?.meta?.skipped).toMatchObject({ completion_without_call: 1 });
    // Its id is still checked: one that is not a string quarantines the session, naming the field.
    const bad = await readLines([START, event("tool.execution_complete", { toolCallId: 7 }), ...GOOD.slice(1)]);
    expect(bad.map((item) => item.kind)).toEqual(["quarantine"]);
  });
});

describe("copilot-cli reader: bad input is quarantined with the file, line and field (one entry: records in = out + quarantined)", () => {
  const cases: [string, (string | object)[], number | undefined, string | undefined, RegExp][] = [
    [
      "a line in the middle that is not JSON",
      [START, PROMPT, '{"type":"assistant.message","data":', ASK, RAN, DONE],
      3,
      undefined,
      /invalid JSON/,
    ],
    ["a line that is a JSON array", [START, "[1,2]", ASK, RAN, DONE], 2, undefined, /expected a JSON object, got an array/],
    ["an event without a type", [START, { data: {}, id: "x", timestamp: "t" }, ASK, RAN, DONE], 2, "type", /expected an event type string/],
    ["data that is not an object", [START, event("user.message", "hi"), ASK, RAN, DONE], 2, "data", /expected an object, got a string/],
    ["a prompt that is not a string", [START, event("user.message", { content: 42 }), ASK, RAN, DONE], 2, "data.content", /got a number/],
    [
      "toolRequests that is not an array",
      [START, PROMPT, event("assistant.message", { content: "", toolRequests: {} })],
      3,
      "data.toolRequests",
      /expected an array/,
    ],
    [
      "a tool request without a name",
      [START, PROMPT, event("assistant.message", { content: "", toolRequests: [{ toolCallId: "t1" }] })],
      3,
      "data.toolRequests[0].name",
      /expected a tool name, got nothing/,
    ],
    [
      "tool arguments that are a number",
      [START, PROMPT, event("tool.execution_start", { toolCallId: "t1", toolName: "bash", arguments: 5 })],
      3,
      "data.arguments",
      /expected an object, got a number/,
    ],
    [
      "a success that is not a boolean",
      [START, PROMPT, ASK, event("tool.execution_complete", { toolCallId: "t1", success: "yes" })],
      4,
      "data.success",
      /expected a boolean/,
    ],
    [
      "a result that is a number",
      [START, PROMPT, ASK, event("tool.execution_complete", { toolCallId: "t1", success: true, result: 7 })],
      4,
      "data.result",
      /expected an object/,
    ],
    [
      "a result content that is an array",
      [START, PROMPT, ASK, event("tool.execution_complete", { toolCallId: "t1", success: true, result: { content: ["x"] } })],
      4,
      "data.result.content",
      /expected a string, got an array/,
    ],
    ["a file of no event", ['{"hello":"world"}', '{"type":"note"}'], 1, "type", /expected an event type string/],
  ];
  for (const [what, lines, line, field, reason] of cases)
    it(what, async () => {
      const items = await readLines(lines);
      expect(items).toHaveLength(1);
      const item = items[0] as ReadItem;
      if (item.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(item)}`);
      expect(item.entry.source).toMatchObject({ format: "copilot-cli", ...(line !== undefined ? { line } : {}) });
      expect(item.entry.source.uri.endsWith(`${S2}.jsonl`)).toBe(true);
      expect(item.entry.field).toBe(field);
      expect(item.entry.reason).toMatch(reason);
      expect(item.entry.stage).toBe("read");
    });

  it("lines with a type but no data only (another tool's closing line) are no events: a file of them is quarantined", async () => {
    const items = await readLines(['{"type":"result","exitCode":0}']);
    expect(items[0]).toMatchObject({ kind: "quarantine", entry: { reason: expect.stringMatching(/no event/) } });
    // Among events, such a line is counted.
    const [t] = trajectories(await readLines([...GOOD, '{"type":"result","exitCode":0,"sessionId":"sess-1"}']));
    expect(t?.meta?.skipped).toMatchObject({ result_without_data: 1 });
  });

  it("a line over input.max_line_bytes quarantines the session at that line", async () => {
    const path = join(tempDir("lwm-copilot-"), `${S2}.jsonl`);
    const big = event("user.message", { content: "x".repeat(5000) });
    writeFileSync(path, `${[START, big, ASK, RAN, DONE].map((line) => JSON.stringify(line)).join("\n")}\n`);
    const items = await collect(copilotCliReader.read(path, { maxLineBytes: 1000 }));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      kind: "quarantine",
      entry: { source: { line: 2 }, reason: expect.stringMatching(/over the 1000-byte limit/) },
    });
  });
});

describe("copilot-cli reader: detection and companions", () => {
  const filesUnder = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name))
      .sort();

  it("every line of the fixtures' logs is copilot-cli's and no other reader's; detection says so", async () => {
    for (const path of [EVENTS, LEGACY]) {
      const text = readFileSync(path, "utf8");
      const starts = [0, ...[...text.matchAll(/\n/g)].map((m) => (m.index as number) + 1)].filter((start) => start < text.length);
      for (const start of starts)
        expect(
          READERS.filter((reader) => reader.sniff(text.slice(start, start + 65536), path)).map((reader) => reader.name),
          `${path}@${start}`,
        ).toEqual(["copilot-cli"]);
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name).toBe("copilot-cli");
    }
    // A first line longer than the head (a system prompt): its start is enough.
    const long = JSON.stringify(event("system.message", { role: "system", content: "x".repeat(70000) }));
    expect(copilotCliReader.sniff(long.slice(0, 65536), "events.jsonl")).toBe(true);
  });

  it("claims no other format's files, at any line start (Claude Code, Codex, Gemini CLI, OpenCode, chat rows, …)", () => {
    expectClaimsNoOtherFixture(copilotCliReader, { own: "copilot-cli", also: ["test/fixtures/records"], atLeast: 201 });
  });

  it("near misses: event-like lines of other tools are not Copilot's", () => {
    const no = [
      '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}',
      '{"type":"thread.started","thread_id":"x"}',
      '{"type":"session.start","data":"x","id":"a","timestamp":"t"}',
      '{"type":"session.start","data":{},"timestamp":"t"}',
      '{"type":"page.view","data":{},"id":"a","timestamp":"t"}',
      '{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u","parentUuid":null,"sessionId":"s"}',
    ];
    for (const text of no) expect(copilotCliReader.sniff(text, "x.jsonl"), text).toBe(false);
    expect(copilotCliReader.sniff('{"type":"abort","data":{"reason":"user initiated"},"id":"a","timestamp":"t","parentId":"b"}', "x")).toBe(
      true,
    );
  });

  it("a session folder's other files are its events.jsonl's companions; a plan reads each session once and quarantines none", async () => {
    expect(await copilotCliReader.companions?.(EVENTS)).toEqual({
      dirs: [FOLDER],
      files: [],
      bytes: readFileSync(EVENTS).length,
      label: `Copilot CLI session ${S1}`,
    });
    expect((await copilotCliReader.companions?.(LEGACY))?.dirs).toEqual([]);
    // events.jsonl in a folder that is no session's (no workspace.yaml, not named by a UUID) covers nothing.
    const loose = join(tempDir("lwm-copilot-"), "logs");
    mkdirSync(loose);
    cpSync(EVENTS, join(loose, "events.jsonl"));
    expect((await copilotCliReader.companions?.(join(loose, "events.jsonl")))?.dirs).toEqual([]);
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${STATE}\n`)));
    expect(plan.files.map((file) => [file.path, file.reader.name])).toEqual([
      [LEGACY, "copilot-cli"],
      [EVENTS, "copilot-cli"],
    ]);
    expect(plan.files.every((file) => !file.unrecognized)).toBe(true);
    expect(plan.covered.map((c) => [c.path, c.kind, c.by])).toEqual(
      filesUnder(FOLDER)
        .filter((path) => path !== EVENTS)
        .map((path) => [path, "companion", EVENTS]),
    );
  });

  it("lwm-data run: records in = out + quarantined + filtered, companions never quarantined", async () => {
    const work = tempDir("lwm-copilot-run-");
    cpSync(STATE, join(work, "data/session-state"), { recursive: true });
    const bad = [START, PROMPT, '{"type":"assistant.message","data":', ASK, RAN, DONE];
    writeFileSync(
      join(work, "data/session-state/7d6c5b4a-0000-4000-8000-00000000000b.jsonl"),
      `${bad.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n")}\n`,
    );
    const chat = [START, PROMPT, event("assistant.message", { content: "Two files.", toolRequests: [] })];
    writeFileSync(
      join(work, "data/session-state/7d6c5b4a-0000-4000-8000-00000000000c.jsonl"),
      `${chat.map((l) => JSON.stringify(l)).join("\n")}\n`,
    );
    const config = writeConfig("inputs:\n  - path: data\noutput: { dir: out }\n", work);
    const { validate, manifest } = await validateAndRun(config);
    expect(validate).toMatch(/covered {6}5 file\(s\)/);
    // The folder session and its sub-agent, the older session, the bad log (quarantined), the chat (filtered).
    expect(manifest.counts).toMatchObject({ records_in: 5, samples_out: 3, quarantined: 1, filtered: 1 });
    expect(manifest.counts.quarantined_by_stage).toEqual({ read: 1 });
  }, 120_000);
});
