/** The Continue reader (src/read/continue-session.ts) on the hand-written sessions in test/fixtures/handmade/continue/ and variants built here. */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { continueSessionReader, inferContinueDomain } from "../src/read/continue-session.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS } from "../src/read/registry.ts";
import { collect, expectClaimsNoOtherFixture, READ_OPTIONS, ROOT, tempDir, validateAndRun, writeConfig } from "./helpers.ts";

const SESSIONS = join(ROOT, "test/fixtures/handmade/continue/sessions");
const S1 = "2d7f4a1c-8e3b-4c6d-9a2f-5b1e7c3d9f40";
const S2 = "7b3e9c2a-4f1d-4e8b-a6c5-0d9f2e1b3a7c";
const AGENT = join(SESSIONS, `${S1}.json`);
const OLDER = join(SESSIONS, `${S2}.json`);

const read = (path: string, options = READ_OPTIONS): Promise<ReadItem[]> => collect(continueSessionReader.read(path, options));
async function only(path: string): Promise<Trajectory> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  const item = items[0] as ReadItem;
  if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
  expect(trajectoryInputSchema.safeParse(item.trajectory).success).toBe(true);
  return item.trajectory;
}
function written(session: unknown, name = "s.json"): string {
  const path = join(tempDir("lwm-continue-"), name);
  writeFileSync(path, typeof session === "string" ? session : JSON.stringify(session));
  return path;
}
const user = (content: unknown) => ({ message: { role: "user", content }, contextItems: [] });

describe("continue reader: the hand-written sessions", () => {
  it("an agent session: each tool call state a turn, answered by its tool message; the terminal tool as its command; an errored call", async () => {
    const t = await only(AGENT);
    expect(t.id).toBe(S1);
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("slugify('Crème brûlée') should give 'creme-brulee'. Fix it and run the tests.");
    expect(t.turns.map((turn) => turn.action.split(" ")[0])).toEqual(["ls", "npm", "single_find_and_replace", "npm", "read_file"]);
    expect(t.turns[1]?.action).toBe("npm test -- --run slugify");
    expect(JSON.parse(t.turns[0]?.action.slice(3) ?? "")).toEqual({ dirPath: "src", recursive: false });
    expect(t.turns[1]?.observation).toMatch(/AssertionError: expected 'cr-me-br-l-e' to be 'creme-brulee'/);
    expect(t.turns[3]?.observation).toMatch(/Tests {2}4 passed \(4\)$/);
    expect(t.turns[4]).toMatchObject({
      observation: "File CHANGELOG.md does not exist",
      meta: { is_error: true, tool_call_id: "call_cat_1Xv6" },
    });
    expect(t.turns.slice(0, 4).every((turn) => turn.meta?.is_error === undefined)).toBe(true);
  });

  it("thinking messages and the assistant's text on the next call; later prompts; a cancelled call and its note are no turn", async () => {
    const t = await only(AGENT);
    expect(t.turns[0]?.thinking).toBe(
      "Find where slugify lives, then run its test to see the failure.\n\nLet me look at the source folder.",
    );
    expect(t.turns[2]?.thinking).toMatch(/^The accents are dropped/);
    expect(t.turns[4]?.meta?.user_messages).toEqual(["Show me the changelog, then clean the dist folder."]);
    expect(t.meta?.final_message).toBe("There is no CHANGELOG.md, and I left dist alone.");
    expect(t.meta?.skipped).toEqual({ assistant_reply: 1, cancelled_call_note: 1, call_without_result: 1 });
    expect(t.meta).toMatchObject({
      agent: "continue",
      session_id: S1,
      title: "Fix slugify for accented letters",
      workspace: "file:///home/dev/blog",
      mode: "agent",
      model: "Claude Sonnet 4.5",
      tokens: { input: 20413, output: 611 },
    });
  });

  it("an older session: one toolCallState per item, builtin_ names, no tool messages: the kept output is the result", async () => {
    const t = await only(OLDER);
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["pwd", "/home/dev/api"],
      ['builtin_exact_search {"query":"listen("}', "server.js:14:app.listen(process.env.PORT ?? 8080)"],
    ]);
    expect(t.meta?.final_message).toMatch(/^It listens on \$PORT/);
  });
});

describe("continue reader: variants", () => {
  it("calls known only from the message's toolCalls are answered by tool messages; a tool message without its call is counted", async () => {
    const t = await only(
      written({
        sessionId: "v1",
        title: "t",
        workspaceDirectory: "",
        history: [
          user("date?"),
          {
            message: {
              role: "assistant",
              content: "",
              toolCalls: [{ id: "c1", type: "function", function: { name: "run_terminal_command", arguments: '{"command":"date"}' } }],
            },
            contextItems: [],
          },
          { message: { role: "tool", content: "Mon Jun  1 09:00:00 UTC 2026", toolCallId: "c1" }, contextItems: [] },
          { message: { role: "tool", content: "stray", toolCallId: "c9" }, contextItems: [] },
        ],
      }),
    );
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([["date", "Mon Jun  1 09:00:00 UTC 2026"]]);
    expect(t.domain).toBe("terminal");
    expect(t.meta?.skipped).toEqual({ result_without_call: 1 });
  });

  it("a chat (no tool call) is filtered with the reason; image parts are [image]", async () => {
    const items = await read(
      written({
        sessionId: "v2",
        history: [
          user([
            { type: "text", text: "what is this?" },
            { type: "imageUrl", imageUrl: { url: "data:" } },
          ]),
        ],
      }),
    );
    expect(items[0]?.kind === "trajectory" && items[0].trajectory.task).toBe("what is this?\n[image]");
    expect(readFilterOf(items[0] as ReadItem)?.reason).toMatch(/no tool call with a result in the session \(1 item\)/);
  });

  it("the domain from the tools: MCP tools, web search", () => {
    expect(inferContinueDomain(["run_terminal_command"])).toBe("terminal");
    expect(inferContinueDomain(["github_get_issue", "github_list_issues", "read_file"])).toBe("mcp");
    expect(inferContinueDomain(["search_web", "search_web", "read_file"])).toBe("search");
    expect(inferContinueDomain(["read_file", "run_terminal_command"])).toBe("swe");
  });
});

describe("continue reader: bad input is quarantined with the file and field", () => {
  const cases: [string, unknown, string | undefined, RegExp][] = [
    ["not JSON", '{"sessionId": "x", "history": [', undefined, /^not a Continue session/],
    ["history that is an object", { sessionId: "x", history: {} }, "history", /expected an array, got an object/],
    ["an item that is a string", { sessionId: "x", history: ["hi"] }, "history.0", /expected a history item, got a string/],
    ["a message without a role", { sessionId: "x", history: [{ message: { content: "hi" } }] }, "history.0.message.role", /got nothing/],
    ["content that is a number", { sessionId: "x", history: [user(5)] }, "history.0.message.content", /got a number/],
    [
      "a tool call without a name",
      {
        sessionId: "x",
        history: [
          {
            message: { role: "assistant", content: "" },
            toolCallStates: [{ toolCallId: "c", toolCall: { id: "c", function: {} }, status: "done" }],
          },
        ],
      },
      "history.0.toolCallStates.0.toolCall.function.name",
      /expected a tool name/,
    ],
    [
      "a tool message without its call id",
      { sessionId: "x", history: [{ message: { role: "tool", content: "x" } }] },
      "history.0.message.toolCallId",
      /expected a tool call id/,
    ],
  ];
  for (const [what, session, field, reason] of cases)
    it(what, async () => {
      const items = await read(written(session));
      expect(items).toHaveLength(1);
      const item = items[0] as ReadItem;
      if (item.kind !== "quarantine") throw new Error(JSON.stringify(item));
      expect(item.entry).toMatchObject({ stage: "read", source: { format: "continue" } });
      expect(item.entry.field).toBe(field);
      expect(item.entry.reason).toMatch(reason);
    });
});

describe("continue reader: detection and the session index", () => {
  it("the sessions are detected as continue's and by no other reader", async () => {
    for (const path of [AGENT, OLDER]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, path).toBe("continue");
      const head = readFileSync(path, "utf8").slice(0, 65536);
      expect(READERS.filter((reader) => reader.sniff(head, path)).map((reader) => reader.name)).toEqual(["continue"]);
    }
    expect(continueSessionReader.sniff('{"sessionId": "x", "title": "t", "history": []}', "x.json")).toBe(true);
    expect(continueSessionReader.sniff('{"sessionId": "x", "history": [{"role": "user"}]}', "x.json")).toBe(false);
    expect(continueSessionReader.sniff('[{"sessionId": "x", "history": []}]', "x.json")).toBe(false);
  });

  it("claims no other format's files", () => {
    expectClaimsNoOtherFixture(continueSessionReader, { own: "continue", also: ["test/fixtures/records"], atLeast: 201 });
  });

  it("sessions.json is the sessions' companion: a plan over the folder reads each session once and quarantines nothing", async () => {
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${SESSIONS}\n`)));
    expect(plan.files.map((file) => [file.path, file.reader.name])).toEqual([
      [AGENT, "continue"],
      [OLDER, "continue"],
    ]);
    expect(plan.covered.map((c) => [c.path, c.kind, c.by])).toEqual([[join(SESSIONS, "sessions.json"), "companion", AGENT]]);
  });

  it("lwm-data run: records in = out + quarantined + filtered", async () => {
    const work = tempDir("lwm-continue-run-");
    cpSync(SESSIONS, join(work, "data"), { recursive: true });
    writeFileSync(
      join(work, "data/0000-chat.json"),
      JSON.stringify({ sessionId: "chat", title: "t", workspaceDirectory: "", history: [user("hi")] }),
    );
    writeFileSync(
      join(work, "data/0000-bad.json"),
      JSON.stringify({ sessionId: "bad", history: [{ message: { role: "robot", content: "" } }] }),
    );
    const config = writeConfig("inputs:\n  - path: data\noutput: { dir: out }\n", work);
    const { manifest } = await validateAndRun(config);
    expect(manifest.counts).toMatchObject({ records_in: 4, samples_out: 2, quarantined: 1, filtered: 1 });
  }, 120_000);
});
