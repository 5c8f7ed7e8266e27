/** The OpenCode reader (src/read/opencode.ts) on the hand-written fixtures in test/fixtures/handmade/opencode/ and variants built here. */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema, turnSchema } from "../src/core/trajectory-schema.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { openCodeReader } from "../src/read/opencode.ts";
import { inferOpenCodeDomain } from "../src/read/opencode-session.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS } from "../src/read/registry.ts";
import { collect, expectClaimsNoOtherFixture, ROOT, tempDir, writeConfig } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/opencode");
const S1 = "ses_4a9f0e21bffeQm7Rt2Vx8Zc3Kd";
const EXPORT = join(HANDMADE, "export", `${S1}.json`);
const API = join(HANDMADE, "api", `${S1}-messages.json`);
const STORAGE = join(HANDMADE, "storage");
const PROJECT = "e0b1c2d3f4a5968778695a4b3c2d1e0f9a8b7c6d";
const SA = "ses_4b2e7d10bffeNo3Pq6Rs9Tu2Vw";
const SB = "ses_4b2e6f02bffeXy5Za8Bc1De4Fg";
const SESSION_A = join(STORAGE, "session", PROJECT, `${SA}.json`);
const SESSION_B = join(STORAGE, "session", PROJECT, `${SB}.json`);
const LEGACY = join(HANDMADE, "legacy/project/home-dev-scripts/storage/session");
const SL = "ses_7f3a1b20bffeAa1Bb2Cc3Dd4Ee";
const SM = "ses_7f39f000bffeVv9Ww8Xx7Yy6Zz";

async function only(path: string, options = OPTIONS): Promise<ReadItem> {
  const items = await collect(openCodeReader.read(path, options));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

async function trajectory(path: string, options = OPTIONS): Promise<Trajectory> {
  const item = await only(path, options);
  if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
  // A record its reader filtered (a chat) may have no turns: it is never trained on.
  const schema = readFilterOf(item) ? trajectoryInputSchema.extend({ turns: z.array(turnSchema) }) : trajectoryInputSchema;
  expect(schema.safeParse(item.trajectory).success).toBe(true);
  return item.trajectory;
}

async function quarantine(path: string, options = OPTIONS) {
  const item = await only(path, options);
  if (item.kind !== "quarantine") throw new Error(`expected a quarantine entry, got ${JSON.stringify(item).slice(0, 400)}`);
  expect(item.entry.source.uri).toBe(path);
  expect(item.entry.stage).toBe("read");
  return item.entry;
}

type Json = Record<string, unknown>;
const exportDoc = (): Json => JSON.parse(readFileSync(EXPORT, "utf8"));

/** An export document written to a fresh file (pretty-printed, as `opencode export` writes it). */
function writeExport(doc: unknown, name = "ses.json", pretty = true): string {
  const path = join(tempDir("lwm-opencode-"), name);
  writeFileSync(path, typeof doc === "string" ? doc : JSON.stringify(doc, null, pretty ? 2 : undefined));
  return path;
}

/** A copy of the storage fixture, for variants that change or remove its files. */
function storageCopy(): string {
  const dir = join(tempDir("lwm-opencode-"), "storage");
  cpSync(STORAGE, dir, { recursive: true });
  return dir;
}

const messages = (doc: Json) => doc.messages as { info: Json; parts: Json[] }[];

describe("opencode reader: `opencode export` documents", () => {
  it("reads a session: tool calls → their outputs, thinking, errors, refusals, sub-agents, the final reply", async () => {
    const t = await trajectory(EXPORT);
    expect(t.id).toBe(S1);
    expect(t.domain).toBe("swe");
    // The user's own words: OpenCode's synthetic text (the file an @-mention read) is left out.
    expect(t.task).toBe("The divide test in @test/math.test.ts fails, please fix it");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "npm test -- test/math.test.ts",
      'read {"filePath":"/home/dev/calc/src/math.ts"}',
      'grep {"pattern":"divide\\\\(","path":"/home/dev/calc/src"}',
      'edit {"filePath":"/home/dev/calc/src/math.ts","oldString":"  return a / b","newString":"  if (b === 0) throw new RangeError(\\"division by zero\\")\\n  return a / b"}',
      'read {"filePath":"/home/dev/calc/src/errors.ts"}',
      "npm test",
      'todowrite {"todos":[{"id":"1","content":"Guard divide against zero","status":"completed","priority":"high"}]}',
      'task {"description":"Find divide callers","prompt":"List every caller of divide() under src/ and say whether it can pass zero.","subagent_type":"explore"}',
      expect.stringMatching(/^write \{"filePath":"\/home\/dev\/calc\/test\/negative\.test\.ts"/),
      "npx tsc --noEmit",
    ]);
    const [run, , , edit, missing, rerun, , task, write, tsc] = t.turns;
    expect(run?.observation).toContain("Tests  1 failed | 3 passed (4)");
    expect(run?.thinking).toBe(
      "The test expects divide to throw on zero. I should see the failure first.\n\nLet me run the test to see the failure.",
    );
    expect(run?.meta).toEqual({ tool: "bash", call_id: "toolu_01DivRun1", exit_code: 1 });
    expect(t.turns[1]?.thinking).toBeUndefined();
    expect(edit?.thinking).toBe("`divide` never checks for zero. I'll add a guard.");
    expect(edit?.observation).toBe("Edit applied successfully.");
    // A tool error is the environment's answer: its text, flagged.
    expect(missing?.observation).toBe("File not found: /home/dev/calc/src/errors.ts");
    expect(missing?.meta?.is_error).toBe(true);
    // The push the user refused is no turn; their feedback goes with the next one (and its thinking went with the refused call).
    expect(rerun?.meta?.user_messages).toEqual(["do not push, just run the tests"]);
    expect(rerun?.thinking).toBeUndefined();
    expect(task?.meta).toMatchObject({ child_session_id: "ses_4a9f0c55bffeHq2Lm5Np8Rs1Tu" });
    expect(task?.meta?.user_messages).toEqual(["Also add a test for negative numbers, and check who else calls divide"]);
    expect(task?.observation).toContain("<task_result>\nOnly src/stats.ts calls divide");
    expect(write?.observation).toBe("Wrote file successfully.");
    expect(tsc?.observation).toBe("[exit code 0, no output]");
    expect(t.meta).toMatchObject({
      agent: "opencode",
      session_id: S1,
      title: "Fix the failing divide test",
      version: "1.1.8",
      project_id: "9c1d4e7f2a3b5c6d8e9f0a1b2c3d4e5f6a7b8c9d",
      directory: "/home/dev/calc",
      model: "claude-sonnet-4-5",
      provider: "anthropic",
      mode: "build",
      cwd: "/home/dev/calc",
      cost: 0.0294,
      tokens: { input: 8100, output: 960, reasoning: 0, cache_read: 34800, cache_write: 0 },
      final_message: expect.stringMatching(/^Done: `divide` now throws a RangeError on zero/),
      skipped: { synthetic_text: 2, patch: 1, denied_call: 1 },
    });
    expect(t.meta?.read_filter).toBeUndefined();
  });

  it("is detected by content as opencode, pretty-printed, compact, or as the server's messages array", async () => {
    for (const path of [EXPORT, API, writeExport(exportDoc(), "compact.json", false)]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, path).toBe("opencode");
    }
  });

  it("reads the server's GET /session/:id/message answer (an array of {info, parts}) as one session, named by its messages", async () => {
    const t = await trajectory(API);
    expect(t.id).toBe(S1);
    expect(t.turns.map((turn) => turn.meta?.tool)).toEqual(["bash", "read", "grep"]);
    expect(t.meta?.title).toBeUndefined();
  });

  it("reads exports one per line (jq -c), each line its own session; a bad line is quarantined at that line and field", async () => {
    const doc = exportDoc();
    const second = { ...doc, info: { ...(doc.info as Json), id: "ses_second" } };
    const bad = structuredClone(doc);
    (messages(bad)[1] as { info: Json }).info.role = "system";
    const path = writeExport([doc, second, bad].map((d) => JSON.stringify(d)).join("\n"), "sessions.jsonl");
    const items = await collect(openCodeReader.read(path, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory", "quarantine"]);
    expect(
      items.map((item) => (item.kind === "trajectory" ? item.trajectory.id : item.kind === "quarantine" ? item.entry.id : undefined)),
    ).toEqual([S1, "ses_second", S1]);
    const [first, , third] = items;
    expect(first?.kind === "trajectory" && first.trajectory.source).toMatchObject({ uri: path, line: 1, offset: 0 });
    expect(third?.kind === "quarantine" && third.entry).toMatchObject({ source: { line: 3 }, field: "messages.1.info.role" });
    expect(third?.kind === "quarantine" && third.entry.reason).toMatch(
      /^line 3: messages\.1\.info\.role: expected "user" or "assistant", got "system"/,
    );
  });

  it("a session with no answered call (a chat) is yielded without turns and filtered with its reason", async () => {
    const doc = exportDoc();
    doc.messages = [messages(doc)[0], messages(doc).at(-1)];
    const t = await trajectory(writeExport(doc));
    expect(t.turns).toEqual([]);
    expect(t.meta?.read_filter).toEqual({
      stage: "no-tool-calls",
      reason: expect.stringContaining(
        'no tool call with a result in the session (the prompt "The divide test in @test/math.test.ts fails, please fix it", 2 messages',
      ),
    });
    // An export of a session never prompted (`messages: []`) is one too.
    expect((await trajectory(writeExport({ info: doc.info, messages: [] }))).meta?.read_filter).toBeDefined();
  });

  it("calls still pending or running (an interrupted session) and calls aborted before any output are no turns, counted", async () => {
    const doc = exportDoc();
    const parts = messages(doc)[1]?.parts as Json[];
    const bash = parts.find((part) => part.type === "tool") as Json;
    const state = bash.state as Json;
    parts.push(
      { ...bash, callID: "p1", state: { status: "pending", input: {}, raw: "" } },
      { ...bash, callID: "r1", state: { status: "running", input: state.input, time: { start: 1 } } },
      {
        ...bash,
        callID: "a1",
        state: { status: "error", input: state.input, error: "Tool execution aborted", time: { start: 1, end: 2 } },
      },
    );
    const t = await trajectory(writeExport(doc));
    expect(t.turns).toHaveLength(10);
    expect(t.meta?.skipped).toMatchObject({ pending_call: 1, running_call: 1, aborted_call: 1 });
  });

  it("a compaction is counted, not read: its summary is no reply; a pending revert hides what follows it", async () => {
    const doc = exportDoc();
    const list = messages(doc);
    const last = list.at(-1) as { info: Json; parts: Json[] };
    list.push(
      { info: { ...(list[0] as { info: Json }).info, id: "msg_zz1" }, parts: [{ id: "prt_zz1", type: "compaction", auto: true }] },
      {
        info: { ...last.info, id: "msg_zz2", summary: true, mode: "compaction", agent: "compaction" },
        parts: [{ id: "prt_zz2", type: "text", text: "Summary: we fixed divide." }],
      },
    );
    const compacted = await trajectory(writeExport(doc));
    expect(compacted.meta?.final_message).toMatch(/^Done: /);
    expect(compacted.meta?.skipped).toMatchObject({ compaction: 1, compaction_summary: 1 });
    // Reverted back to the user's second prompt: it and everything after are hidden.
    const reverted = exportDoc();
    (reverted.info as Json).revert = { messageID: messages(reverted)[6]?.info.id };
    const r = await trajectory(writeExport(reverted));
    expect(r.turns).toHaveLength(7);
    expect(r.meta?.skipped).toMatchObject({ reverted_message: 3 });
    expect(r.meta?.final_message).toBeUndefined();
  });

  it("bash's exit code, attachments and the domain from the tools; --domain wins", async () => {
    const doc = exportDoc();
    const read = messages(doc)[2]?.parts.find((part) => part.tool === "read") as Json;
    (read.state as Json).attachments = [
      { id: "prt_att", type: "file", mime: "image/png", url: "data:image/png;base64,AAAA", filename: "shot.png" },
    ];
    const t = await trajectory(writeExport(doc));
    expect(t.turns[1]?.observation).toMatch(/<\/file>\n\[image\]$/);
    expect((await trajectory(writeExport(doc), { ...OPTIONS, domain: "terminal" } as typeof OPTIONS)).domain).toBe("terminal");
    expect(inferOpenCodeDomain(["bash", "bash"])).toBe("terminal");
    expect(inferOpenCodeDomain(["bash", "read"])).toBe("swe");
    expect(inferOpenCodeDomain(["webfetch", "webfetch", "bash"])).toBe("web");
    expect(inferOpenCodeDomain(["websearch", "websearch", "webfetch"])).toBe("search");
    expect(inferOpenCodeDomain(["github_create_issue", "github_list_issues", "read"])).toBe("mcp");
  });
});

describe("opencode reader: what an export refuses, naming the field", () => {
  const refused = async (change: (doc: Json) => unknown) => {
    const doc = exportDoc();
    const replaced = change(doc);
    return quarantine(writeExport(replaced ?? doc));
  };

  it("a message whose role, info or parts have the wrong type", async () => {
    let entry = await refused((doc) => {
      (messages(doc)[1] as { info: Json }).info.role = "tool";
    });
    expect(entry).toMatchObject({ id: S1, field: "messages.1.info.role" });
    expect(entry.reason).toBe('messages.1.info.role: expected "user" or "assistant", got "tool"');
    entry = await refused((doc) => {
      (messages(doc)[2] as Json).parts = "none";
    });
    expect(entry).toMatchObject({ field: "messages.2.parts", reason: "messages.2.parts: expected an array, got a string" });
    entry = await refused((doc) => {
      (doc.messages as unknown[])[3] = ["not", "a", "message"];
    });
    expect(entry).toMatchObject({ field: "messages.3", reason: "messages.3: expected a message {info, parts}, got an array" });
    entry = await refused((doc) => {
      doc.messages = { m1: {} };
    });
    expect(entry).toMatchObject({ field: "messages", reason: "messages: expected an array of {info, parts}, got an object" });
  });

  it("a part without a type, a tool part without a name, an unknown state, a completed call without output", async () => {
    const tool = (doc: Json) => messages(doc)[1]?.parts.find((part) => part.type === "tool") as Json;
    let entry = await refused((doc) => {
      delete ((messages(doc)[1] as { parts: Json[] }).parts[1] as Json).type;
    });
    expect(entry).toMatchObject({ field: "messages.1.parts.1.type", reason: "messages.1.parts.1.type: expected a part type, got nothing" });
    entry = await refused((doc) => {
      tool(doc).tool = 7;
    });
    expect(entry).toMatchObject({ field: "messages.1.parts.3.tool" });
    entry = await refused((doc) => {
      (tool(doc).state as Json).status = "done";
    });
    expect(entry).toMatchObject({
      field: "messages.1.parts.3.state.status",
      reason: 'messages.1.parts.3.state.status: expected pending, running, completed or error, got "done"',
    });
    entry = await refused((doc) => {
      delete (tool(doc).state as Json).output;
    });
    expect(entry).toMatchObject({
      field: "messages.1.parts.3.state.output",
      reason: "messages.1.parts.3.state.output: expected a string, got nothing",
    });
    entry = await refused((doc) => {
      (tool(doc).state as Json).input = ["npm test"];
    });
    expect(entry).toMatchObject({ field: "messages.1.parts.3.state.input" });
    entry = await refused((doc) => {
      const state = tool(doc).state as Json;
      state.status = "error";
      state.error = { message: "boom" };
    });
    expect(entry).toMatchObject({ field: "messages.1.parts.3.state.error" });
  });

  it("a document that is not JSON, or has no messages list", async () => {
    const cut = readFileSync(EXPORT, "utf8").slice(0, 3000);
    let entry = await quarantine(writeExport(cut));
    expect(entry.reason).toMatch(/^not an OpenCode export document: invalid JSON/);
    expect(entry.id).toBe(S1);
    entry = await quarantine(writeExport({ info: exportDoc().info, todos: [] }));
    expect(entry).toMatchObject({ field: "messages", reason: "messages: no messages list: not an `opencode export` document" });
    // An `info` that is no session object is no export at all.
    entry = await quarantine(writeExport({ info: "ses_x", messages: [] }));
    expect(entry.reason).toMatch(/^not an OpenCode session: expected an `opencode export` document/);
  });
});

describe("opencode reader: the storage folder", () => {
  it("reads a session from its session file, message files and part files", async () => {
    const t = await trajectory(SESSION_A);
    expect(t.id).toBe(SA);
    expect(t.task).toBe("Add a `search <word>` command to the notes CLI");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [
        'task {"description":"Find the command registry","prompt":"Where are CLI commands registered? Give the file and function.","subagent_type":"general"}',
        "src/cli.ts registers commands in `buildProgram()` with `program.command(...)`.",
      ],
      [expect.stringMatching(/^edit \{"filePath":"\/home\/dev\/notes\/src\/cli\.ts"/), "[no output]"],
      // Aborted while it ran: what it had printed is what was observed.
      ["npm run build && node dist/cli.js search todo", "> notes@0.3.0 build\n> tsc -p .\n\n"],
      ["npm test", "\n> notes@0.3.0 test\n> node --test\n\n# pass 7\n# fail 0\n"],
    ]);
    expect(t.turns[0]?.thinking).toBe("I need to know how commands are registered.");
    expect(t.turns[0]?.meta?.child_session_id).toBe(SB);
    expect(t.turns[2]?.meta).toMatchObject({ interrupted: true, is_error: true });
    expect(t.turns[3]?.meta).toMatchObject({ exit_code: 0, user_messages: ["keep going, run the tests"] });
    expect(t.meta).toMatchObject({
      session_id: SA,
      version: "0.15.3",
      project_id: PROJECT,
      model: "gpt-5",
      provider: "openai",
      mode: "build",
      assistant_errors: { MessageAbortedError: 1 },
      skipped: { patch: 1, running_call: 1 },
    });
    expect(t.meta?.parent_session_id).toBeUndefined();
    expect(t.meta?.final_message).toBeUndefined();
  });

  it("a task sub-agent's child session is a trajectory of its own, naming its parent", async () => {
    const t = await trajectory(SESSION_B);
    expect(t.id).toBe(SB);
    expect(t.task).toBe("Where are CLI commands registered? Give the file and function.");
    expect(t.turns.map((turn) => turn.meta?.tool)).toEqual(["glob", "grep"]);
    expect(t.meta).toMatchObject({
      parent_session_id: SA,
      mode: "general",
      final_message: expect.stringMatching(/^src\/cli\.ts registers/),
    });
  });

  it("any file of a session reads that session; planning reads it once, from its session file", async () => {
    const message = join(STORAGE, "message", SA, readdirSync(join(STORAGE, "message", SA)).sort()[1] as string);
    const partDir = join(STORAGE, "part", readdirSync(join(STORAGE, "part")).sort()[0] as string);
    const part = join(partDir, readdirSync(partDir)[0] as string);
    for (const path of [message, part]) {
      expect((await trajectory(path)).id).toBe(SA);
      expect(await openCodeReader.expand?.(path)).toEqual([SESSION_A]);
    }
    expect(await openCodeReader.expand?.(SESSION_A)).toBeUndefined();
    const companions = await openCodeReader.companions?.(SESSION_A);
    expect(companions?.label).toBe(`OpenCode session ${SA}`);
    expect(companions?.dirs).toContain(join(STORAGE, "message", SA));
    expect(companions?.dirs).toContain(partDir);
    expect(companions?.files).toEqual(
      expect.arrayContaining([join(STORAGE, "todo", `${SA}.json`), join(STORAGE, "project", `${PROJECT}.json`)]),
    );
    expect(companions?.bytes).toBeGreaterThan(readFileSync(SESSION_A).length + readFileSync(part).length);
    // A message file is no record of its own: its companions are only itself.
    expect((await openCodeReader.companions?.(message))?.dirs).toEqual([]);
  });

  it("a glob over the whole storage folder reads each session once; every other file is covered", async () => {
    const dir = tempDir();
    for (const input of [STORAGE, join(STORAGE, "message")]) {
      const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${input}\n`, dir)));
      expect(plan.files.map((file) => [file.path, file.reader.name])).toEqual([
        [SESSION_B, "opencode"],
        [SESSION_A, "opencode"],
      ]);
      if (input !== STORAGE) continue;
      const all = readdirSync(STORAGE, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name));
      expect([...plan.files.map((f) => f.path), ...plan.covered.map((c) => c.path)].sort()).toEqual(all.sort());
      expect(plan.covered.find((c) => c.path === join(STORAGE, "todo", `${SA}.json`))).toMatchObject({ kind: "companion", by: SESSION_A });
      expect(plan.covered.find((c) => c.path.includes(`/message/${SA}/`))).toMatchObject({ kind: "stands-for", by: SESSION_A });
    }
  });

  it("a storage folder without its session files is read from each session's first message file", async () => {
    const dir = storageCopy();
    rmSync(join(dir, "session"), { recursive: true });
    const messagesOfA = readdirSync(join(dir, "message", SA)).sort();
    const first = join(dir, "message", SA, messagesOfA[0] as string);
    const later = join(dir, "message", SA, messagesOfA[2] as string);
    expect(await openCodeReader.expand?.(later)).toEqual([first]);
    expect(await openCodeReader.expand?.(first)).toBeUndefined();
    const t = await trajectory(first);
    expect(t.id).toBe(SA);
    expect(t.turns).toHaveLength(4);
    expect(t.meta?.title).toBeUndefined();
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${dir}\n`)));
    expect(plan.files.map((file) => file.path).sort()).toEqual(
      [join(dir, "message", SB, readdirSync(join(dir, "message", SB)).sort()[0] as string), first].sort(),
    );
  });

  it("reads OpenCode ≤ 0.3's per-project storage: whole MessageV1 messages, then V2 messages with parts in part/<session>/<message>/", async () => {
    const v1 = await trajectory(join(LEGACY, "info", `${SL}.json`));
    expect(v1.id).toBe(SL);
    expect(v1.domain).toBe("terminal");
    expect(v1.task).toBe("Why does backup.sh fail on the second run?");
    // The old bash tool's <stdout>/<stderr> framing is taken off; the exit code comes from metadata.tool.
    expect(v1.turns.map((turn) => [turn.action, turn.observation, turn.meta?.exit_code])).toEqual([
      ["ls -l", "total 12\n-rwxr-xr-x 1 dev dev 412 Jun 15 09:00 backup.sh\ndrwxr-xr-x 2 dev dev 4096 Jun 15 09:01 out\n", 0],
      ["./backup.sh", "copying notes.txt\nmkdir: cannot create directory 'out': File exists\n", 1],
    ]);
    expect(v1.turns[0]?.thinking).toBe("Let me look at the folder first.");
    expect(v1.meta).toMatchObject({
      version: "0.1.120",
      model: "claude-sonnet-4-20250514",
      provider: "anthropic",
      skipped: { pending_call: 1 },
    });
    expect(v1.meta?.final_message).toMatch(/^The script runs `mkdir out` without `-p`/);
    const v2 = await trajectory(join(LEGACY, "info", `${SM}.json`));
    expect(v2.domain).toBe("web");
    expect(v2.turns.map((turn) => turn.action)).toEqual(['webfetch {"url":"https://docs.example.org/install","format":"text"}']);
    expect(v2.meta).toMatchObject({
      model: "gemini-2.5-pro",
      skipped: { pending_call: 1 },
      final_message: "Yes: the page still says 2.4.1.",
    });
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${join(HANDMADE, "legacy")}\n`)));
    expect(plan.files.map((file) => file.path)).toEqual([join(LEGACY, "info", `${SM}.json`), join(LEGACY, "info", `${SL}.json`)]);
  });
});

describe("opencode reader: what the storage folder refuses, naming the file and field", () => {
  const partOf = (dir: string, message: string) => {
    const partDir = join(dir, "part", message);
    return readdirSync(partDir)
      .sort()
      .map((name) => join(partDir, name));
  };
  const messageIds = (dir: string, session: string) => readdirSync(join(dir, "message", session)).sort();

  it("a part file that is not JSON, or a tool part with a broken state", async () => {
    const dir = storageCopy();
    const message = (messageIds(dir, SA)[2] as string).replace(/\.json$/, "");
    const [, , edit] = partOf(dir, message);
    const session = join(dir, "session", PROJECT, `${SA}.json`);
    writeFileSync(edit as string, '{"id": "prt_x", "type": "tool", "state": {');
    let entry = await quarantine(session);
    expect(entry.id).toBe(SA);
    expect(entry.reason).toMatch(new RegExp(`^OpenCode session ${SA}: part/${message}/prt_\\w+\\.json: invalid JSON`));
    const value = JSON.parse(readFileSync(join(STORAGE, "part", message, (edit as string).split("/").pop() as string), "utf8"));
    value.state.status = "finished";
    writeFileSync(edit as string, JSON.stringify(value));
    entry = await quarantine(session);
    expect(entry.field).toBe("state.status");
    expect(entry.reason).toMatch(
      /part\/msg_\w+\/prt_\w+\.json: state\.status: expected pending, running, completed or error, got "finished"$/,
    );
  });

  it("a message file with the wrong role, a file over the size limit, a session with no messages", async () => {
    const dir = storageCopy();
    const session = join(dir, "session", PROJECT, `${SA}.json`);
    const name = messageIds(dir, SA)[1] as string;
    const file = join(dir, "message", SA, name);
    const value = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...value, role: "bot" }));
    let entry = await quarantine(session);
    expect(entry.field).toBe("role");
    expect(entry.reason).toBe(`OpenCode session ${SA}: message/${SA}/${name}: role: expected "user" or "assistant", got "bot"`);
    writeFileSync(file, JSON.stringify({ ...value, padding: "x".repeat(5000) }));
    entry = await quarantine(session, { maxLineBytes: 4096 });
    expect(entry.reason).toMatch(/message\/ses_\w+\/msg_\w+\.json: file is over the 4096-byte record limit/);
    rmSync(join(dir, "message", SA), { recursive: true });
    entry = await quarantine(session);
    expect(entry).toMatchObject({ id: SA, field: "messages" });
    expect(entry.reason).toMatch(/no message files in message\/ses_\w+\/ beside the session/);
  });

  it("a session or message file read out of its storage folder is refused, saying what to give instead", async () => {
    const dir = tempDir("lwm-opencode-");
    const session = join(dir, `${SA}.json`);
    cpSync(SESSION_A, session);
    let entry = await quarantine(session);
    expect(entry.id).toBe(SA);
    expect(entry.reason).toMatch(/^an OpenCode session file read alone: .*`opencode export ses_4b2e7d10bffeNo3Pq6Rs9Tu2Vw`/);
    const message = join(dir, "m.json");
    cpSync(join(STORAGE, "message", SA, messageIds(STORAGE, SA)[0] as string), message);
    entry = await quarantine(message);
    expect(entry.reason).toMatch(/^an OpenCode message file read alone: it is not inside an OpenCode storage folder/);
    expect(await openCodeReader.expand?.(message)).toBeUndefined();
  });
});

describe("opencode reader: detection", () => {
  const filesUnder = (dir: string): string[] =>
    (readdirSync(dir, { recursive: true }) as string[])
      .map((name) => join(dir, name))
      .filter((path) => {
        try {
          readFileSync(path);
          return true;
        } catch {
          return false;
        }
      });

  it("every session, message and part file of the fixtures is opencode's, and no other reader claims them", async () => {
    const claimed = filesUnder(HANDMADE).filter(
      (path) => !/\/(project|todo|session_diff)\/|\/migration$|\.md$|\/make-fixtures\.mjs$/.test(path),
    );
    expect(claimed.length).toBeGreaterThan(30);
    for (const path of claimed) {
      const head = readFileSync(path, "utf8").slice(0, 65536);
      expect(
        READERS.filter((reader) => reader.sniff(head, path)).map((reader) => reader.name),
        path,
      ).toEqual(["opencode"]);
    }
  });

  it("claims no other format's files, at any line start (Claude Code, Gemini CLI, Goose, Cline, OpenHands, chat rows, canonical JSONL, …)", () => {
    expectClaimsNoOtherFixture(openCodeReader, { own: "opencode", also: ["test/fixtures/records"], atLeast: 201 });
  });

  it("an SQLite file that shows no OpenCode table is refused at detection, saying how to export its sessions (opencode.db itself: read-opencode-db.test.ts)", async () => {
    const db = join(tempDir("lwm-opencode-"), "opencode.db");
    writeFileSync(db, Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(4080, 1)]));
    const detection = await detectFormat(db);
    expect(detection.kind).toBe("unrecognized");
    expect(detection.kind === "unrecognized" && detection.reason).toMatch(
      /^an SQLite database, which lwm-data does not unpack: .*`opencode export <sessionID> > <sessionID>\.json`/,
    );
  });

  it("near misses: other tools' msg_/ses_ ids are not OpenCode's files", () => {
    const no = [
      // An Anthropic message (Claude Code's inner message, raw API rows): msg_ id, no session.
      '{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}',
      // An OpenAI Responses item.
      '{"id":"msg_68a1","type":"message","role":"assistant","status":"completed","content":[]}',
      // A Claude Code entry: sessionId (not sessionID), message with a msg_ id.
      '{"parentUuid":null,"sessionId":"ses_1","type":"assistant","message":{"id":"msg_01","role":"assistant","content":[]}}',
      // A ses_ id without a session's fields, and an export-like document whose info is no session.
      '{"id":"ses_abc","object":"realtime.session"}',
      '{"info":{"id":"run_1"},"messages":[]}',
      // A messages array from elsewhere.
      '[{"info":{"id":"msg_1"},"parts":[]}]',
      '[{"role":"user","content":"hi"}]',
    ];
    for (const text of no) expect(openCodeReader.sniff(text, "x.json"), text).toBe(false);
    const yes = [
      '{"info":{"id":"ses_abc","title":"t"},"messages":[]}',
      '{"id":"ses_abc","version":"0.6.4","projectID":"global","directory":"/w","title":"t","time":{"created":1,"updated":2}}',
      '{"id":"msg_abc","sessionID":"ses_abc","role":"user","time":{"created":1}}',
      '{"id":"prt_abc","sessionID":"ses_abc","messageID":"msg_abc","type":"text","text":"hi"}',
      '{"id":"msg_abc","role":"user","parts":[{"type":"text","text":"hi"}],"metadata":{"time":{"created":1},"sessionID":"ses_abc","tool":{}}}',
    ];
    for (const text of yes) expect(openCodeReader.sniff(text, "x.json"), text).toBe(true);
  });
});

describe("opencode reader: a read never throws on a storage file with broken neighbours", () => {
  it("a part folder holding a folder, an empty part file, a non-object part", async () => {
    const dir = storageCopy();
    const message = (readdirSync(join(dir, "message", SB)).sort()[1] as string).replace(/\.json$/, "");
    mkdirSync(join(dir, "part", message, "prt_zz.json"));
    const session = join(dir, "session", PROJECT, `${SB}.json`);
    expect((await trajectory(session)).turns).toHaveLength(2);
    writeFileSync(join(dir, "part", message, "prt_zz0.json"), "");
    expect((await quarantine(session)).reason).toMatch(/prt_zz0\.json: invalid JSON/);
    writeFileSync(join(dir, "part", message, "prt_zz0.json"), "[1, 2]");
    expect(await quarantine(session)).toMatchObject({ field: "part" });
  });
});
