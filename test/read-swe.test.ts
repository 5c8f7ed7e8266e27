/**
 * The four SWE readers on the project's own data: the sessions recorded by
 * scripts/record-demo/swe.ts (data/demo/swe/, one scripted repair session per file written in each
 * layout: we know what ran, and the expectations below were checked by reading the files), the
 * hand-written layout variants in test/fixtures/handmade/swe/ (see its README.md), and records
 * built in the tests. test/third-party/swe.test.ts runs the same readers on the tools' own samples.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync, zstdCompressSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { agentWorldBenchReader } from "../src/read/agentworldbench-jsonl.ts";
import { canonicalJsonlReader } from "../src/read/canonical-jsonl.ts";
import { miniSweAgentReader } from "../src/read/mini-swe-agent.ts";
import { openHandsReader } from "../src/read/openhands.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { readHead } from "../src/read/registry.ts";
import { sweAgentTrajReader } from "../src/read/swe-agent-traj.ts";
import { sweSmithReader } from "../src/read/swe-smith.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DEMO = join(ROOT, "data/demo/swe");
const HANDMADE = join(ROOT, "test/fixtures/handmade/swe");
const SWE_READERS = [sweAgentTrajReader, miniSweAgentReader, openHandsReader, sweSmithReader];

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const content = (t: Trajectory) => ({ ...t, source: undefined });

/**
 * The attempt id of a one-run-per-file format (issue 34, "Attempts"): the instance id, a hyphen and
 * the first 16 hex digits of the sha256 of the file's decompressed bytes, computed here on its own.
 */
function attemptOf(instance: string, path: string): string {
  const bytes = readFileSync(path);
  const plain = path.endsWith(".gz") ? gunzipSync(bytes) : bytes;
  return `${instance}-${createHash("sha256").update(plain).digest("hex").slice(0, 16)}`;
}

async function only(reader: Reader, path: string): Promise<Trajectory> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  expect(items).toHaveLength(1);
  return trajectories(items)[0] as Trajectory;
}

async function all(reader: Reader, path: string): Promise<Trajectory[]> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  return trajectories(items);
}

/**
 * The number of (action, observation) turns and the first and last action and observation:
 * exactly, by a prefix (`X…`) or by a suffix (`…X`).
 */
interface Expected {
  file: string;
  id: string;
  turns: number;
  first: [string, string];
  last: [string, string];
  task?: string;
}

function check(actual: string | undefined, wanted: string) {
  if (wanted.endsWith("…")) expect(actual?.startsWith(wanted.slice(0, -1))).toBe(true);
  else if (wanted.startsWith("…")) expect(actual?.endsWith(wanted.slice(1))).toBe(true);
  else expect(actual).toBe(wanted);
}

function expectTurns(t: Trajectory, e: Expected) {
  expect(t.id).toBe(e.id);
  expect(t.domain).toBe("swe");
  expect(t.turns).toHaveLength(e.turns);
  check(t.turns[0]?.action, e.first[0]);
  check(t.turns[0]?.observation, e.first[1]);
  check(t.turns.at(-1)?.action, e.last[0]);
  check(t.turns.at(-1)?.observation, e.last[1]);
  if (e.task !== undefined) check(t.task, e.task);
}

/**
 * What happened in the two recorded sessions (scripts/record-demo/swe-episodes.ts), as the files
 * show it. stats-median: the tests fail (1 of 3), grep, cat -n, a Python one-liner edit, git diff,
 * the tests pass, submit. slug-punctuation: the tests fail (2 of 3), `cat -n src/slug.py` fails
 * (no such file), cat -n slug.py, a sed -i edit, the tests pass, submit.
 */
const MEDIAN = {
  firstOutput: "test_mean (test_stats.MeanTest.test_mean) ... ok\ntest_even_length (test_stats.MedianTest.test_even_length) ... FAIL\n…",
  passed: "…\nRan 3 tests in 0.000s\n\nOK\n",
  patch: "diff --git a/stats.py b/stats.py\nindex df2872d..9a3b04c 100644\n--- a/stats.py\n+++ b/stats.py\n…",
  task: "The repository at /tmp/lwm-demo-record/swe/stats-median has this issue:\n\nmedian() is wrong for lists of even length\n…",
};
const SLUG = {
  firstOutput: "test_punctuation (test_slug.SlugifyTest.test_punctuation) ... FAIL\n…",
  missing: "cat: src/slug.py: No such file or directory\n",
  passed: "…\nRan 3 tests in 0.000s\n\nOK\n",
  patch: "diff --git a/slug.py b/slug.py\nindex eb85550..f5a06d4 100644\n…",
};

describe("SWE-agent .traj reader", () => {
  const CASES: Expected[] = [
    {
      file: `${DEMO}/swe-agent__stats-median.traj`, // 1.x: state objects, message_type, tool calls
      id: "swe-agent__stats-median-6b69f4efc7f6fd22", // replay_config.problem_statement.id + the file's hash
      turns: 7,
      first: ["python3 -m unittest -v", MEDIAN.firstOutput],
      last: ["submit", MEDIAN.patch],
      task: MEDIAN.task,
    },
    {
      file: `${DEMO}/swe-agent__slug-punctuation.traj`,
      id: "swe-agent__slug-punctuation-4377e7a1cf2d3f01",
      turns: 6,
      first: ["python3 -m unittest -v", SLUG.firstOutput],
      last: ["submit", SLUG.patch],
    },
    {
      file: `${HANDMADE}/swe-agent-0x__greet.traj`, // 0.x: state strings, a demonstration before the task
      id: "swe-agent-0x__greet-de20a0ab1a7dbdaf", // no replay config: the file name
      turns: 3,
      first: ["open greet.py\n", "[File: /repo/greet.py (3 lines total)]\n1:def greet(name):\n…"],
      last: ["submit\n", "\ndiff --git a/greet.py b/greet.py\n…"],
      task: 'ISSUE:\ngreet() drops the exclamation mark: greet("Ada") returns "Hello, Ada" but should return "Hello, Ada!".\n…',
    },
    {
      // A 1.x demonstration with history only: two bash calls answered by tool messages.
      file: `${HANDMADE}/swe-agent-demonstration__version.traj`,
      id: "swe-agent-demonstration__version-b2f49b22ddf19fba",
      turns: 2,
      first: ["cat version.py", 'VERSION = "1.0"\n'],
      last: ["sed -i 's/1.0/1.1/' version.py", ""],
      task: "ISSUE:\nversion.py says 1.0 but the release is 1.1.",
    },
  ];

  for (const e of CASES) {
    it(`reads ${e.file.slice(ROOT.length + 1)}`, async () => {
      expect(e.id).toBe(attemptOf(e.id.slice(0, -17), e.file));
      expectTurns(await only(sweAgentTrajReader, e.file), e);
    });
  }

  it("reads a failing command's output and the empty output of an edit as they were", async () => {
    const t = await only(sweAgentTrajReader, `${DEMO}/swe-agent__slug-punctuation.traj`);
    expect(t.turns.map((turn) => turn.action.split(" ")[0])).toEqual(["python3", "cat", "cat", "sed", "python3", "submit"]);
    expect(t.turns[1]).toMatchObject({ action: "cat -n src/slug.py", observation: SLUG.missing });
    expect(t.turns[3]?.observation).toBe("");
    check(t.turns[4]?.observation, SLUG.passed);
  });

  it("keeps the agent's thought and the environment state as turn metadata, and says where turns came from", async () => {
    const recorded = await only(sweAgentTrajReader, `${DEMO}/swe-agent__stats-median.traj`);
    expect(recorded.turns[0]?.meta).toEqual({
      agent_thought: "Let me run the test suite first to see the failure the issue describes.",
      state: { working_dir: "/tmp/lwm-demo-record/swe/stats-median" },
    });
    expect(recorded.meta).toEqual({
      turns_from: "trajectory",
      schema: "message_type",
      agent: "swe-agent",
      task_id: "swe-agent__stats-median",
      environment: "main",
      exit_status: "submitted", // a submission: no outcome; the replay config names no model
    });
    const old = await only(sweAgentTrajReader, `${HANDMADE}/swe-agent-0x__greet.traj`);
    expect(old.turns[0]?.meta).toEqual({
      agent_thought: "Let me open greet.py to see how the greeting is built.\n",
      state: { open_file: "/repo/greet.py", working_dir: "/repo" }, // parsed from the 0.x JSON string
    });
    expect(old.meta).toEqual({
      turns_from: "trajectory",
      schema: "legacy",
      agent: "swe-agent",
      task_id: "swe-agent-0x__greet",
      environment: "swe_main",
      exit_status: "submitted",
    });
    const demo = await only(sweAgentTrajReader, `${HANDMADE}/swe-agent-demonstration__version.traj`);
    // The closing submit call has no tool message after it.
    expect(demo.meta).toEqual({
      turns_from: "history",
      schema: "message_type",
      agent: "swe-agent",
      task_id: "swe-agent-demonstration__version",
      skipped: { action_without_observation: 1 },
    });
    expect(demo.turns[0]?.meta).toEqual({ agent_thought: "Let me look at version.py." });
  });

  it("quarantines malformed files with a reason, one entry per file", async () => {
    const dir = tempDir();
    const cut = join(dir, "cut.traj");
    writeFileSync(cut, readFileSync(`${DEMO}/swe-agent__stats-median.traj`, "utf8").slice(0, 5000));
    const wrongType = join(dir, "wrong.traj");
    writeFileSync(
      wrongType,
      JSON.stringify({
        trajectory: [
          { action: "ls", observation: "a" },
          { action: "pwd", observation: 42 },
        ],
        history: [],
      }),
    );
    const notObject = join(dir, "list.traj");
    writeFileSync(notObject, "[1, 2]");
    const empty = join(dir, "empty.traj");
    writeFileSync(empty, JSON.stringify({ trajectory: [], history: [{ role: "system", content: "hi" }] }));

    const [a, b, c, d] = await Promise.all([cut, wrongType, notObject, empty].map((p) => collect(sweAgentTrajReader.read(p, OPTIONS))));
    expect(a).toHaveLength(1);
    expect(quarantined(a ?? [])[0]).toMatchObject({ id: "cut", stage: "read", source: { uri: cut, format: "swe-agent-traj" } });
    expect(quarantined(a ?? [])[0]?.reason).toMatch(/invalid JSON/);
    expect(quarantined(b ?? [])[0]).toMatchObject({ id: "wrong", field: "trajectory.1.observation" });
    expect(quarantined(b ?? [])[0]?.reason).toMatch(/expected a string, got a number/);
    expect(quarantined(c ?? [])[0]?.reason).toMatch(/one JSON object, not an array/);
    expect(quarantined(d ?? [])[0]?.reason).toMatch(/no \(action, observation\) turns/);
  });

  it("streams a multi-megabyte .traj with stream-json, never JSON.parse of the whole file", async () => {
    const dir = tempDir();
    const path = join(dir, "big__instance-1.traj");
    const steps = 1500;
    const observation = (i: number) => `${"x".repeat(3000)} step ${i}\r\n`;
    const trajectory = Array.from({ length: steps }, (_, i) => ({
      action: `cat file_${i}.py\n`,
      observation: observation(i),
      response: "r",
      thought: `look at ${i}`,
      state: JSON.stringify({ open_file: `file_${i}.py`, working_dir: "/repo" }),
    }));
    const history = [
      { role: "system", content: "SETTING: …", agent: "primary" },
      { role: "user", content: "ISSUE: the big one", agent: "primary" },
      ...trajectory.flatMap((s) => [
        { role: "assistant", content: s.thought, action: s.action, agent: "primary" },
        { role: "user", content: s.observation, agent: "primary" },
      ]),
    ];
    const text = JSON.stringify({ environment: "swe_main", trajectory, history, info: { exit_status: "submitted" } }, null, 2);
    expect(text.length).toBeGreaterThan(8_000_000);
    writeFileSync(path, text);
    writeFileSync(`${path}.gz`, gzipSync(text));

    const parse = vi.spyOn(JSON, "parse");
    const t = await only(sweAgentTrajReader, path);
    const longest = Math.max(0, ...parse.mock.calls.map(([arg]) => String(arg).length));
    parse.mockRestore();
    // Only the small per-step `state` strings go through JSON.parse.
    expect(longest).toBeLessThan(200);
    expect(t.id).toBe(attemptOf("big__instance-1", path));
    expect(t.task).toBe("ISSUE: the big one");
    expect(t.turns).toHaveLength(steps);
    expect(t.turns[1234]).toEqual({
      action: "cat file_1234.py\n",
      observation: observation(1234),
      meta: { agent_thought: "look at 1234", state: { open_file: "file_1234.py", working_dir: "/repo" } },
    });
    // The id hashes the decompressed content: the same for the gzip file.
    expect(content(await only(sweAgentTrajReader, `${path}.gz`))).toEqual(content(t));
  });
  it("streams the recorded .traj the same way (its steps hold the model's whole query)", async () => {
    const path = `${DEMO}/swe-agent__stats-median.traj`;
    const parse = vi.spyOn(JSON, "parse");
    const t = await only(sweAgentTrajReader, path);
    const longest = Math.max(0, ...parse.mock.calls.map(([arg]) => String(arg).length));
    parse.mockRestore();
    expect(t.turns).toHaveLength(7);
    expect(statSync(path).size).toBeGreaterThan(40_000);
    // Only the replay config, a JSON string of under 1 KB, goes through JSON.parse.
    expect(longest).toBeLessThan(2_000);
  });
});

describe("mini-swe-agent reader", () => {
  // Each assistant message's ```mswea_bash_command block, and the next message's content; the
  // output of the marker command without its first line is the last message.
  const CASES: Expected[] = [
    {
      file: "mini-swe-agent__stats-median.traj.json",
      id: "mini-swe-agent__stats-median-8253e246cfd0a99b", // the file name + the file's hash
      turns: 7,
      first: ["python3 -m unittest -v", `<returncode>1</returncode>\n<output>\n${MEDIAN.firstOutput}`],
      last: ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", MEDIAN.patch],
      task: MEDIAN.task,
    },
    {
      file: "mini-swe-agent__slug-punctuation.traj.json",
      id: "mini-swe-agent__slug-punctuation-bf0d18592a27786f",
      turns: 6,
      first: ["python3 -m unittest -v", `<returncode>1</returncode>\n<output>\n${SLUG.firstOutput}`],
      last: ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", SLUG.patch],
    },
  ];

  for (const e of CASES) {
    it(`reads ${e.file}`, async () => {
      expect(e.id).toBe(attemptOf(e.id.slice(0, -17), join(DEMO, e.file)));
      expectTurns(await only(miniSweAgentReader, join(DEMO, e.file)), e);
    });
  }

  it("keeps the return code and output template, and the thought around the command block", async () => {
    const t = await only(miniSweAgentReader, `${DEMO}/mini-swe-agent__slug-punctuation.traj.json`);
    expect(t.turns[1]).toEqual({
      action: "cat -n src/slug.py",
      observation: `<returncode>1</returncode>\n<output>\n${SLUG.missing}</output>`,
      meta: { agent_thought: "Two tests fail. The helper is probably under src/; let me read it." },
    });
    expect(t.turns[3]?.observation).toBe("<returncode>0</returncode>\n<output>\n</output>"); // the sed edit
  });

  it("reads the saved {info, messages, trajectory_format} form, also gzip-compressed, and the bare message array, to the same turns", async () => {
    const dir = tempDir();
    const savedText = readFileSync(`${DEMO}/mini-swe-agent__stats-median.traj.json`, "utf8");
    const saved = await only(miniSweAgentReader, `${DEMO}/mini-swe-agent__stats-median.traj.json`);
    // "Submitted" carries no verdict: no outcome.
    expect(saved.meta).toEqual({
      agent: "mini-swe-agent",
      task_id: "mini-swe-agent__stats-median",
      exit_status: "Submitted",
      trajectory_format: "mini-swe-agent-1",
    });
    writeFileSync(join(dir, "stats-median.traj.json.gz"), gzipSync(savedText));
    const { messages } = JSON.parse(savedText);
    writeFileSync(join(dir, "bare.traj.json"), JSON.stringify(messages, null, 2));
    const gzipped = await only(miniSweAgentReader, join(dir, "stats-median.traj.json.gz"));
    const bare = await only(miniSweAgentReader, join(dir, "bare.traj.json"));
    // Named by the file, hashed over the decompressed content.
    expect(gzipped.id).toBe(`stats-median-${saved.id.slice(-16)}`);
    expect(gzipped.meta?.task_id).toBe("stats-median");
    expect(gzipped.turns).toEqual(saved.turns);
    expect(bare.turns).toEqual(saved.turns);
    expect(bare.task).toBe(saved.task);
    expect(bare.meta).toEqual({ agent: "mini-swe-agent", task_id: "bare" });
    expect(miniSweAgentReader.sniff(savedText, "x")).toBe(true);
    // An exit other than Submitted is how the run failed.
    writeFileSync(join(dir, "limits.traj.json"), savedText.replace('"Submitted"', '"LimitsExceeded"'));
    const limited = await only(miniSweAgentReader, join(dir, "limits.traj.json"));
    expect(limited.meta?.outcome).toEqual({ failure_mode: "LimitsExceeded" });
    expect(limited.id).toBe(attemptOf("limits", join(dir, "limits.traj.json")));
  });

  it("reads 2.x tool calling (extra.actions, tool messages) and counts replies without a command", async () => {
    const dir = tempDir();
    const path = join(dir, "toolcall.traj.json");
    const messages = [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "Fix the bug." },
      {
        role: "assistant",
        content: "Look around first.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "bash", arguments: '{"command": "ls"}' } },
          { id: "c2", type: "function", function: { name: "bash", arguments: '{"command": "pwd"}' } },
        ],
        extra: {
          actions: [
            { command: "ls", tool_call_id: "c1" },
            { command: "pwd", tool_call_id: "c2" },
          ],
        },
      },
      { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "a.py" }] },
      { role: "tool", tool_call_id: "c2", content: "/repo" },
      { role: "assistant", content: "two blocks ```bash\nls\n``` and ```bash\npwd\n```" },
      { role: "user", content: "Please always provide EXACTLY ONE action." },
      {
        role: "assistant",
        content: "Done.",
        tool_calls: [{ id: "c3", function: { name: "bash", arguments: '{"command":"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}' } }],
      },
      { role: "exit", content: "", extra: { exit_status: "Submitted" } },
    ];
    writeFileSync(path, JSON.stringify({ info: {}, messages, trajectory_format: "mini-swe-agent-1.1" }));
    const t = await only(miniSweAgentReader, path);
    expect(t.task).toBe("Fix the bug.");
    expect(t.turns).toEqual([
      { action: "ls", observation: "a.py", meta: { agent_thought: "Look around first." } },
      { action: "pwd", observation: "/repo", meta: { agent_thought: "Look around first." } },
    ]);
    expect(t.meta?.skipped).toEqual({
      assistant_without_action: 1,
      message_without_action: 1,
      action_without_observation: 1,
      exit_message: 1,
    });
  });

  it("quarantines a malformed message and a file that is not JSON", async () => {
    const dir = tempDir();
    const bad = join(dir, "bad.traj.json");
    writeFileSync(
      bad,
      JSON.stringify([
        { role: "system", content: "s" },
        { role: "user", content: 7 },
      ]),
    );
    const broken = join(dir, "broken.traj.json");
    writeFileSync(broken, '[{"role": "user", "content": "x"}');
    // A quarantined file is named by its instance (the file name), without a hash.
    expect(quarantined(await collect(miniSweAgentReader.read(bad, OPTIONS)))).toEqual([
      expect.objectContaining({ id: "bad", field: "1.content", reason: "1.content: expected a string or text parts, got a number" }),
    ]);
    const [q] = quarantined(await collect(miniSweAgentReader.read(broken, OPTIONS)));
    expect(q?.reason).toMatch(/invalid JSON/);
  });
});

describe("OpenHands reader", () => {
  const CASES: Expected[] = [
    {
      // 19 events: 3 agent-state changes, the user's message, 6 run actions each answered by the
      // run observation caused by it, finish.
      file: `${DEMO}/openhands__stats-median.json`,
      id: "openhands__stats-median",
      turns: 6,
      first: ["python3 -m unittest -v", MEDIAN.firstOutput],
      last: ["python3 -m unittest -v", MEDIAN.passed],
      task: MEDIAN.task,
    },
    {
      file: `${DEMO}/openhands__slug-punctuation.json`,
      id: "openhands__slug-punctuation",
      turns: 5,
      first: ["python3 -m unittest -v", SLUG.firstOutput],
      last: ["python3 -m unittest -v", SLUG.passed],
    },
    {
      // 2024 flat history without ids: message, run + its observation, run_ipython + its observation, finish.
      file: `${HANDMADE}/openhands-output-legacy.jsonl`,
      id: "example/tidy#3-a5a71f679c94d32a", // the resolver's issue + a hash of the line
      turns: 2,
      first: ["printf '__pycache__/\\n' > .gitignore", "\r\nroot@a1b2c3d4e5f6:/workspace # "],
      last: ["print(open('/workspace/.gitignore').read())", "__pycache__/\n"],
      task: "Please fix the following issue for the repository in /workspace.\n\n# Problem Statement\nAdd a .gitignore that ignores __pycache__/.",
    },
  ];

  for (const e of CASES) {
    it(`reads ${e.file.slice(ROOT.length + 1)}`, async () => {
      expectTurns(await only(openHandsReader, e.file), e);
    });
  }

  it("counts every event that is not part of a turn, and keeps exit codes and thoughts", async () => {
    const slug = await only(openHandsReader, `${DEMO}/openhands__slug-punctuation.json`);
    // 15 events = 5 turns × 2 + these 5.
    expect(slug.meta).toEqual({
      layout: "event-array",
      skipped: { agent_state_changed_observation: 3, message_action: 1, finish_action: 1 },
    });
    expect(slug.turns.map((t) => t.meta?.exit_code)).toEqual([1, 1, 0, 0, 0]);
    expect(slug.turns[1]).toEqual({
      action: "cat -n src/slug.py",
      observation: SLUG.missing,
      meta: {
        action_type: "run",
        observation_type: "run",
        agent_thought: "Two tests fail. The helper is probably under src/; let me read it.",
        exit_code: 1,
      },
    });
    const legacy = await only(openHandsReader, `${HANDMADE}/openhands-output-legacy.jsonl`);
    expect(legacy.meta).toEqual({
      layout: "history-events",
      skipped: { message_action: 1, finish_action: 1 },
      task_id: "example/tidy#3",
      outcome: { success: true }, // the resolver's own verdict; `error` is null
    });
    expect(legacy.turns.map((t) => [t.meta?.action_type, t.meta?.exit_code])).toEqual([
      ["run", 0],
      ["run_ipython", undefined],
    ]);
  });

  it("quarantines a session without environment actions (the recording with its run events taken out)", async () => {
    const events = JSON.parse(readFileSync(`${DEMO}/openhands__stats-median.json`, "utf8")) as Record<string, unknown>[];
    const chat = events.filter((e) => e.action !== "run" && e.observation !== "run");
    expect(chat).toHaveLength(5);
    const path = join(tempDir(), "chat_only.json");
    writeFileSync(path, JSON.stringify(chat));
    const [q, ...rest] = quarantined(await collect(openHandsReader.read(path, OPTIONS)));
    expect(rest).toEqual([]);
    expect(q).toMatchObject({ id: "chat_only", field: "history" });
    const counts = /^no environment action with an observation \(events: (.*)\)$/.exec(q?.reason ?? "")?.[1];
    expect(JSON.parse(counts ?? "null")).toEqual({ agent_state_changed_observation: 3, message_action: 1, finish_action: 1 });
  });

  it("a command that printed nothing is observed as its exit code (demo session: the edit script)", async () => {
    const median = await only(openHandsReader, `${DEMO}/openhands__stats-median.json`);
    const events = JSON.parse(readFileSync(`${DEMO}/openhands__stats-median.json`, "utf8")) as Record<string, unknown>[];
    const silent = events.filter((e) => e.observation === "run" && e.content === "");
    expect(silent.map((e) => e.cause)).toEqual([9]); // the python3 heredoc that rewrites stats.py
    const turn = median.turns.find((t) => t.action.startsWith("python3 - <<'EOF'"));
    expect(turn?.observation).toBe("[exit code 0, no output]");
    expect(turn?.meta?.exit_code).toBe(0);
  });

  it("renders empty command output by its exit code in every layout; other empty observations stay empty", async () => {
    const path = join(tempDir(), "silent.jsonl");
    const record = {
      instance_id: "silent",
      history: [
        { id: 1, action: "run", args: { command: "mkdir out" } },
        { id: 2, observation: "run", cause: 1, content: "", extras: { metadata: { exit_code: 0 } } },
        { id: 3, action: "run", args: { command: "test -e missing" } },
        { id: 4, observation: "run", cause: 3, content: "\n", extras: { metadata: { exit_code: 1 } } },
        { id: 5, action: "run", args: { command: "sleep 600" } },
        { id: 6, observation: "run", cause: 5, content: "", extras: { metadata: { exit_code: -1 } } },
        { id: 7, action: "run_ipython", args: { code: "x = 1" } },
        { id: 8, observation: "run_ipython", cause: 7, content: "", extras: {} },
        { id: 9, action: "read", args: { path: "/empty.txt" } },
        { id: 10, observation: "read", cause: 9, content: "", extras: { path: "/empty.txt" } },
      ],
    };
    // 2024 flat layout: the exit code beside the content, no ids.
    const legacy = {
      instance_id: "silent-legacy",
      history: [
        { action: "run", command: "touch a" },
        { observation: "run", content: "", command_id: -1, exit_code: 0 },
      ],
    };
    writeFileSync(path, `${JSON.stringify(record)}\n${JSON.stringify(legacy)}\n`);
    const [t, old] = trajectories(await collect(openHandsReader.read(path, OPTIONS)));
    expect(t?.turns.map((turn) => [turn.action, turn.observation, turn.meta?.exit_code])).toEqual([
      ["mkdir out", "[exit code 0, no output]", 0],
      ["test -e missing", "[exit code 1, no output]", 1],
      ["sleep 600", "[no output, still running]", -1],
      ["x = 1", "[no output]", undefined],
      ['{"action":"read","path":"/empty.txt"}', "", undefined], // an empty file read is its content
    ]);
    expect(old?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["touch a", "[exit code 0, no output]"]]);
  });

  it("pairs by cause even out of order, reads the oldest [action, observation] pairs, and quarantines bad lines", async () => {
    const dir = tempDir();
    const path = join(dir, "output.jsonl");
    const byCause = {
      instance_id: "x__y-1",
      instruction: "Fix it",
      history: [
        { id: 1, source: "agent", action: "run", args: { command: "ls", thought: "" } },
        { id: 2, source: "agent", action: "run_ipython", args: { code: "print(1)" } },
        { id: 3, source: "agent", observation: "run_ipython", cause: 2, content: "1", extras: {} },
        { id: 4, source: "agent", observation: "run", cause: 1, content: "a.py", extras: { metadata: { exit_code: 0 } } },
        { id: 5, source: "agent", action: "read", args: { path: "/a.py", security_risk: 0 } },
      ],
    };
    const pairs = {
      instance_id: 7,
      history: [
        [
          { action: "run", args: { command: "echo hi" } },
          { observation: "run", content: "hi", extras: { exit_code: 0 } },
        ],
      ],
    };
    const badContent = {
      instance_id: "bad",
      history: [
        { id: 1, action: "run", args: { command: "ls" } },
        { id: 2, observation: "run", cause: 1, content: 5 },
      ],
    };
    writeFileSync(
      path,
      [byCause, "{nope", pairs, { instance_id: "nohistory" }, badContent]
        .map((r) => (typeof r === "string" ? r : JSON.stringify(r)))
        .join("\n"),
    );
    const items = await collect(openHandsReader.read(path, OPTIONS));
    expect(items).toHaveLength(5);
    const [first, second] = trajectories(items);
    expect(first?.task).toBe("Fix it");
    expect(first?.turns).toEqual([
      { action: "ls", observation: "a.py", meta: { action_type: "run", observation_type: "run", exit_code: 0 } },
      { action: "print(1)", observation: "1", meta: { action_type: "run_ipython", observation_type: "run_ipython" } },
    ]);
    expect(first?.meta).toEqual({ layout: "history-events", skipped: { action_without_observation: 1 }, task_id: "x__y-1" });
    expect(first?.id).toBe(`x__y-1-${createHash("sha256").update(JSON.stringify(byCause)).digest("hex").slice(0, 16)}`);
    expect(second).toMatchObject({ turns: [{ action: "echo hi", observation: "hi" }], meta: { layout: "history-pairs", task_id: "7" } });
    expect(second?.id).toMatch(/^7-[0-9a-f]{16}$/);
    const bad = quarantined(items);
    expect(bad.map((q) => [q.source.line, q.id, q.field])).toEqual([
      [2, undefined, undefined],
      [4, "nohistory", "history"],
      [5, "bad", "history.1.content"],
    ]);
    expect(bad[0]?.reason).toMatch(/invalid JSON/);
  });
  it("reads evaluation-output records (JSONL, and a zstd JSON array of them) to the session's turns", async () => {
    const dir = tempDir();
    const names = ["stats-median", "slug-punctuation"];
    const records = names.map((name) => ({
      instance_id: name,
      instruction: "Fix the issue.",
      history: JSON.parse(readFileSync(`${DEMO}/openhands__${name}.json`, "utf8")),
    }));
    const jsonl = join(dir, "output.jsonl");
    writeFileSync(jsonl, records.map((r) => JSON.stringify(r)).join("\n"));
    const array = join(dir, "records.json");
    writeFileSync(array, zstdCompressSync(Buffer.from(JSON.stringify([...records, 42]))));

    const sessions = await Promise.all(names.map((name) => only(openHandsReader, `${DEMO}/openhands__${name}.json`)));
    const fromLines = await all(openHandsReader, jsonl);
    expect(fromLines.map((t) => [t.meta?.task_id, t.source.line, t.meta?.layout])).toEqual([
      ["stats-median", 1, "history-events"],
      ["slug-punctuation", 2, "history-events"],
    ]);
    expect(fromLines.map((t) => t.id.replace(/-[0-9a-f]{16}$/, ""))).toEqual(names);
    expect(fromLines.map((t) => t.turns)).toEqual(sessions.map((t) => t.turns));
    // The user's message in the history is the task, before the record's instruction.
    expect(fromLines.map((t) => t.task)).toEqual(sessions.map((t) => t.task));
    const items = await collect(openHandsReader.read(array, OPTIONS));
    expect(trajectories(items).map(content)).toEqual(fromLines.map(content));
    expect(quarantined(items)).toEqual([expect.objectContaining({ field: "2", reason: "2: expected a trajectory record, got a number" })]);
  });

  it("renders non-shell actions as JSON without the agent's bookkeeping", async () => {
    const dir = tempDir();
    const path = join(dir, "events.json");
    const events = [
      { id: 1, source: "agent", action: "read", args: { path: "/a.py", view_range: [1, 5], thought: "peek", security_risk: 0 } },
      { id: 2, source: "agent", observation: "read", cause: 1, content: "1\tx = 1", extras: { path: "/a.py" } },
    ];
    writeFileSync(path, JSON.stringify(events));
    const t = await only(openHandsReader, path);
    expect(t.turns).toEqual([
      {
        action: '{"action":"read","path":"/a.py","view_range":[1,5]}',
        observation: "1\tx = 1",
        meta: { action_type: "read", observation_type: "read", agent_thought: "peek" },
      },
    ]);
  });
});

describe("SWE-smith reader", () => {
  // Each assistant message's <function=…>…</function> block and the next message without
  // "OBSERVATION:\n"; the closing submit call is unanswered.
  const FILE = `${DEMO}/swe-smith__ft.jsonl`;
  const bash = (command: string) => `<function=bash>\n<parameter=command>${command}</parameter>\n</function>`;
  const CASES: (Expected & { line: number })[] = [
    {
      file: FILE,
      line: 1,
      id: "swe-smith__stats-median",
      turns: 6,
      first: [bash("python3 -m unittest -v"), MEDIAN.firstOutput],
      last: [bash("python3 -m unittest -v"), MEDIAN.passed],
      task: MEDIAN.task,
    },
    {
      file: FILE,
      line: 2,
      id: "swe-smith__slug-punctuation",
      turns: 5,
      first: [bash("python3 -m unittest -v"), SLUG.firstOutput],
      last: [bash("python3 -m unittest -v"), SLUG.passed],
    },
  ];

  it("reads swe-smith__ft.jsonl, one trajectory per line", async () => {
    const [first, second, ...rest] = await all(sweSmithReader, FILE);
    expect(rest).toEqual([]);
    const firstLine = readFileSync(FILE, "utf8").split("\n")[0] as string;
    for (const [t, e] of [
      [first, CASES[0]],
      [second, CASES[1]],
    ] as const) {
      expectTurns(t as Trajectory, e as Expected);
      expect(t?.meta).toEqual({ task_id: t?.id, skipped: { action_without_observation: 1 } });
      expect(t?.turns.some((turn) => turn.observation.startsWith("OBSERVATION:"))).toBe(false);
    }
    expect(first?.source).toMatchObject({ line: 1, offset: 0, format: "swe-smith" });
    expect(second?.source).toMatchObject({ line: 2, offset: Buffer.byteLength(firstLine) + 1 });
    expect(first?.turns[1]).toEqual({
      action: bash('grep -rn "def median" --include="*.py" .'),
      observation: "./stats.py:9:def median(values):\n",
      meta: { agent_thought: "test_even_length fails: median returns 3 instead of 2.5. Let me find where median is defined." },
    });
    expect(second?.turns[3]?.observation).toBe(""); // the sed edit printed nothing
  });

  it("quarantines bad lines with line, offset and reason, and reads the rest", async () => {
    const dir = tempDir();
    const path = join(dir, "ft.jsonl.zst");
    const good = readFileSync(FILE, "utf8").split("\n")[0] as string;
    const lines = [
      good,
      "not json",
      JSON.stringify({ instance_id: "no-messages" }),
      JSON.stringify({ instance_id: "bad-role", messages: [{ content: "x" }] }),
      good,
    ];
    writeFileSync(path, zstdCompressSync(Buffer.from(lines.join("\n"))));
    const items = await collect(sweSmithReader.read(path, OPTIONS));
    expect(items).toHaveLength(5);
    expect(trajectories(items).map((t) => [t.source.line, t.turns.length])).toEqual([
      [1, 6],
      [5, 6],
    ]);
    const bad = quarantined(items);
    const size = Buffer.byteLength(good);
    expect(bad.map((q) => [q.source.line, q.source.offset, q.id, q.field])).toEqual([
      [2, size + 1, undefined, undefined],
      [3, size + 10, "no-messages", "messages"],
      [4, size + 10 + (lines[2]?.length ?? 0) + 1, "bad-role", "messages.0.role"],
    ]);
    expect(bad[0]?.reason).toMatch(/invalid JSON/);
    expect(bad[0]?.excerpt).toBe("not json");
  });
});

describe("one session, every layout", () => {
  // The recorder wrote the same commands and outputs into each layout; read back, they agree.
  for (const name of ["stats-median", "slug-punctuation"]) {
    it(`${name}: SWE-agent, mini-swe-agent, OpenHands, SWE-smith and canonical JSONL hold the same commands and outputs`, async () => {
      const canonical = (await all(canonicalJsonlReader, `${DEMO}/swe.jsonl.zst`)).find((t) => t.id === `lwm-data__${name}`) as Trajectory;
      const sweAgent = await only(sweAgentTrajReader, `${DEMO}/swe-agent__${name}.traj`);
      const mini = await only(miniSweAgentReader, `${DEMO}/mini-swe-agent__${name}.traj.json`);
      const openHands = await only(openHandsReader, `${DEMO}/openhands__${name}.json`);
      const sweSmith = (await all(sweSmithReader, `${DEMO}/swe-smith__ft.jsonl`)).find((t) => t.id === `swe-smith__${name}`) as Trajectory;

      // Canonical: every command, then the submission command with the patch.
      const commands = canonical.turns.slice(0, -1);
      const submission = canonical.turns.at(-1);
      expect(submission?.action).toBe("git add -A && git diff --cached");
      const pairs = (ts: Trajectory["turns"]) => ts.map((t) => [t.action, t.observation]);
      // OpenHands: a command that printed nothing is observed as its exit code.
      const silentAsExitCode = (t: Trajectory["turns"][number]) => [
        t.action,
        t.observation === "" ? `[exit code ${t.meta?.exit_code}, no output]` : t.observation,
      ];
      expect(pairs(openHands.turns)).toEqual(commands.map(silentAsExitCode));
      expect(commands.some((t) => t.observation === "")).toBe(true);
      expect(pairs(sweAgent.turns)).toEqual([...pairs(commands), ["submit", submission?.observation]]);
      expect(pairs(sweSmith.turns)).toEqual(
        commands.map((t) => [`<function=bash>\n<parameter=command>${t.action}</parameter>\n</function>`, t.observation]),
      );
      expect(pairs(mini.turns)).toEqual([
        ...commands.map((t) => [t.action, `<returncode>${t.meta?.exit_code}</returncode>\n<output>\n${t.observation}</output>`]),
        [`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && ${submission?.action}`, submission?.observation],
      ]);
      expect(openHands.turns.map((t) => t.meta?.exit_code)).toEqual(commands.map((t) => t.meta?.exit_code));
      // The run failed first and passed at the end.
      expect([commands[0]?.meta?.exit_code, commands.at(-1)?.meta?.exit_code]).toEqual([1, 0]);
    });
  }

  it("the canonical file is zstd and holds both sessions", async () => {
    expect([...readFileSync(`${DEMO}/swe.jsonl.zst`).subarray(0, 4)]).toEqual([0x28, 0xb5, 0x2f, 0xfd]);
    const ts = await all(canonicalJsonlReader, `${DEMO}/swe.jsonl.zst`);
    expect(ts.map((t) => [t.id, t.turns.length])).toEqual([
      ["lwm-data__stats-median", 7],
      ["lwm-data__slug-punctuation", 6],
    ]);
    expect(ts[0]?.task).toBe(
      "median() is wrong for lists of even length\n\n`median([4, 1, 3, 2])` returns 3, but the median of 1, 2, 3, 4 is 2.5 (the mean of the two middle values).\nOdd-length lists are fine: `median([3, 1, 2])` returns 2.",
    );
  });
});

describe("SWE format detection", () => {
  const FILES: [string, Reader][] = [
    ["data/demo/swe/swe-agent__stats-median.traj", sweAgentTrajReader],
    ["data/demo/swe/swe-agent__slug-punctuation.traj", sweAgentTrajReader],
    ["test/fixtures/handmade/swe/swe-agent-0x__greet.traj", sweAgentTrajReader],
    ["test/fixtures/handmade/swe/swe-agent-demonstration__version.traj", sweAgentTrajReader],
    ["data/demo/swe/mini-swe-agent__stats-median.traj.json", miniSweAgentReader],
    ["data/demo/swe/mini-swe-agent__slug-punctuation.traj.json", miniSweAgentReader],
    ["data/demo/swe/openhands__stats-median.json", openHandsReader],
    ["data/demo/swe/openhands__slug-punctuation.json", openHandsReader],
    ["test/fixtures/handmade/swe/openhands-output-legacy.jsonl", openHandsReader],
    ["data/demo/swe/swe-smith__ft.jsonl", sweSmithReader],
    ["data/demo/swe/swe.jsonl.zst", canonicalJsonlReader],
  ];

  afterEach(() => vi.restoreAllMocks());

  for (const [file, reader] of FILES) {
    it(`${file} is claimed by ${reader.name} alone, also from an 8 KiB prefix and under another name`, async () => {
      const head = await readHead(join(ROOT, file));
      for (const cut of [head, head.slice(0, 8192)]) {
        const claimed = [...SWE_READERS, canonicalJsonlReader, agentWorldBenchReader].filter((r) => r.sniff(cut, "input.data"));
        expect(claimed.map((r) => r.name)).toEqual([reader.name]);
      }
    });
  }

  it("none of them claims other formats' records or a SWE-bench predictions file", async () => {
    const mixed = await readHead(join(ROOT, "test/fixtures/records/mixed-bad.jsonl"));
    const agentWorldBench = `${JSON.stringify({ task: "swe", id: 7, prompt: ["### Turn 1\\n**Action:**\\nls"], response: ["**Environment Observation:**\\na.py"], system_str: "s", turn_idx: 1, total_turns: 1 })}\n`;
    const preds = '{"model_name_or_path": "gpt4", "instance_id": "pydicom__pydicom-1458", "model_patch": "diff --git a/x b/x"}\n';
    expect(agentWorldBenchReader.sniff(agentWorldBench, "rows.jsonl")).toBe(true);
    for (const [head, name] of [
      [mixed, "mixed-bad.jsonl"],
      [agentWorldBench, "rows.jsonl"],
      [preds, "all_preds.jsonl"],
    ] as const) {
      expect(SWE_READERS.filter((r) => r.sniff(head, name)).map((r) => r.name)).toEqual([]);
    }
  });
});

describe("attempts and provenance (issue 34): one instance run twice is two records with one task_id", () => {
  // Hand-written from the tools' documented output: mini-swe-agent's SWE-bench runner saves
  // `<instance_id>/<instance_id>.traj.json` with `instance_id` and `info.config.model.model_name`;
  // SWE-agent 1.x `<instance_id>/<instance_id>.traj` with `replay_config` (an object or a JSON
  // string) naming `agent.model.name`; OpenHands `output.jsonl` one line per instance.
  const task = "Fix the bug.";
  const miniRun = (exit: string, model: string, command: string) => ({
    info: {
      model_stats: { instance_cost: 0.05, api_calls: 2 },
      config: { agent: {}, agent_type: "minisweagent.agents.default.DefaultAgent", model: { model_name: model, model_kwargs: {} } },
      mini_version: "2.0.0",
      exit_status: exit,
      submission: "",
    },
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: task },
      { role: "assistant", content: `Look.\n\n\`\`\`mswea_bash_command\n${command}\n\`\`\`` },
      { role: "user", content: "<returncode>0</returncode>\n<output>\na.py\n</output>" },
    ],
    trajectory_format: "mini-swe-agent-1.1",
    instance_id: "django__django-11099",
  });

  it("mini-swe-agent: two runs' folders, one file name", async () => {
    const dir = tempDir();
    const paths = ["run-a", "run-b", "copy"].map((run) => join(dir, run, "django__django-11099.traj.json"));
    for (const p of paths) mkdirSync(join(p, ".."), { recursive: true });
    const first = JSON.stringify(miniRun("Submitted", "anthropic/claude-sonnet-4-5", "ls"), null, 2);
    writeFileSync(paths[0] as string, first);
    writeFileSync(paths[1] as string, JSON.stringify(miniRun("LimitsExceeded", "openai/gpt-5", "ls -la"), null, 2));
    writeFileSync(paths[2] as string, first); // the first run, kept elsewhere
    writeFileSync(`${paths[2]}.gz`, gzipSync(first));
    const [a, b, copy, gz] = await Promise.all([...paths, `${paths[2]}.gz`].map((p) => only(miniSweAgentReader, p)));
    expect(a?.id).toBe(attemptOf("django__django-11099", paths[0] as string));
    expect(b?.id).toBe(attemptOf("django__django-11099", paths[1] as string));
    expect(a?.id).not.toBe(b?.id);
    expect([copy?.id, gz?.id]).toEqual([a?.id, a?.id]);
    expect(a?.meta).toEqual({
      agent: "mini-swe-agent",
      task_id: "django__django-11099",
      model: "anthropic/claude-sonnet-4-5",
      exit_status: "Submitted",
      trajectory_format: "mini-swe-agent-1.1",
    });
    expect(b?.meta).toEqual({
      agent: "mini-swe-agent",
      task_id: "django__django-11099",
      model: "openai/gpt-5",
      exit_status: "LimitsExceeded",
      trajectory_format: "mini-swe-agent-1.1",
      outcome: { failure_mode: "LimitsExceeded" },
    });
    // The top-level instance_id names the task, not the file name.
    const renamed = join(dir, "renamed.traj.json");
    writeFileSync(renamed, first);
    expect((await only(miniSweAgentReader, renamed)).meta?.task_id).toBe("django__django-11099");
  });

  const sweRun = (exitStatus: string, replayAsString: boolean) => {
    const replay = {
      env: { deployment: { type: "docker" } },
      agent: { type: "default", model: { name: "claude-3-7-sonnet-20250219", per_instance_cost_limit: 3 } },
      problem_statement: { text: task, type: "text", id: "astropy__astropy-12907" },
    };
    return {
      trajectory: [{ action: "ls", observation: "a.py\n", response: "ls", thought: "Look.", state: { working_dir: "/testbed" } }],
      history: [
        { role: "system", content: "SETTING", message_type: "system_prompt" },
        { role: "user", content: task, message_type: "observation" },
      ],
      info: {
        exit_status: exitStatus,
        submission: "",
        model_stats: { instance_cost: 1, tokens_sent: 9, tokens_received: 3, api_calls: 1 },
      },
      replay_config: replayAsString ? JSON.stringify(replay) : replay,
      environment: "main",
    };
  };

  it("SWE-agent: a submission (also autosubmitted at a limit) has no failure mode; any other exit is one", async () => {
    const dir = tempDir();
    const cases: [string, boolean, Record<string, unknown> | undefined][] = [
      ["submitted", false, undefined],
      ["submitted (exit_cost)", true, undefined],
      ["exit_cost", false, { failure_mode: "exit_cost" }],
      ["exit_format", true, { failure_mode: "exit_format" }],
    ];
    const read = await Promise.all(
      cases.map(async ([status, asString], i) => {
        const path = join(dir, `run-${i}`, "astropy__astropy-12907.traj");
        mkdirSync(join(path, ".."));
        writeFileSync(path, JSON.stringify(sweRun(status, asString), null, 2));
        return [path, await only(sweAgentTrajReader, path)] as const;
      }),
    );
    for (const [i, [path, t]] of read.entries()) {
      const [status, , outcome] = cases[i] as (typeof cases)[number];
      expect(t.id).toBe(attemptOf("astropy__astropy-12907", path));
      expect(t.meta).toEqual({
        turns_from: "trajectory",
        schema: "message_type",
        agent: "swe-agent",
        task_id: "astropy__astropy-12907",
        model: "claude-3-7-sonnet-20250219", // replay_config.agent.model.name, object or JSON string
        environment: "main",
        exit_status: status,
        ...(outcome ? { outcome } : {}),
      });
    }
    expect(new Set(read.map(([, t]) => t.id)).size).toBe(4);
  });

  it("OpenHands output.jsonl: two runs' lines of one instance, with agent, model, verdict and error", async () => {
    const dir = tempDir();
    const history = [
      { id: 1, source: "user", action: "message", args: { content: task } },
      { id: 2, source: "agent", action: "run", args: { command: "ls", thought: "" } },
      { id: 3, source: "agent", observation: "run", cause: 2, content: "a.py", extras: { metadata: { exit_code: 0 } } },
    ];
    const metadata = (model: string) => ({
      agent_class: "CodeActAgent",
      llm_config: { model, api_key: "**********" },
      max_iterations: 100,
    });
    const runA = {
      instance_id: "sympy__sympy-20590",
      test_result: { git_patch: "diff", report: { empty_generation: false, resolved: true, failed_apply_patch: false } },
      instruction: task,
      metadata: metadata("anthropic/claude-sonnet-4"),
      history,
      error: null,
    };
    const runB = {
      instance_id: "sympy__sympy-20590",
      test_result: { git_patch: "" },
      report: { resolved: false },
      instruction: task,
      metadata: metadata("openai/gpt-4o"),
      history,
      error: "Agent got stuck in a loop",
    };
    const noMetadata = { instance_id: "sympy__sympy-1", history, metadata: null, error: "" };
    const [a, b] = ["run-a", "run-b"].map((run) => join(dir, `${run}.output.jsonl`));
    writeFileSync(a as string, `${JSON.stringify(runA)}\n${JSON.stringify(noMetadata)}\n`);
    writeFileSync(b as string, `${JSON.stringify(runB)}\n${JSON.stringify({ instance_id: "sympy__sympy-20590", history: "x" })}\n`);
    const [fromA, bare] = await all(openHandsReader, a as string);
    const itemsB = await collect(openHandsReader.read(b as string, OPTIONS));
    const [fromB] = trajectories(itemsB);
    const lineHash = (record: unknown) => createHash("sha256").update(JSON.stringify(record)).digest("hex").slice(0, 16);
    expect(fromA?.id).toBe(`sympy__sympy-20590-${lineHash(runA)}`);
    expect(fromB?.id).toBe(`sympy__sympy-20590-${lineHash(runB)}`);
    expect(fromA?.meta).toEqual({
      layout: "history-events",
      skipped: { message_action: 1 },
      task_id: "sympy__sympy-20590",
      agent: "CodeActAgent",
      model: "anthropic/claude-sonnet-4",
      outcome: { resolved: true },
    });
    expect(fromB?.meta).toEqual({
      layout: "history-events",
      skipped: { message_action: 1 },
      task_id: "sympy__sympy-20590",
      agent: "CodeActAgent",
      model: "openai/gpt-4o",
      outcome: { resolved: false, failure_mode: "Agent got stuck in a loop" },
    });
    // Nothing recorded, nothing set (metadata null, empty error).
    expect(bare?.meta).toEqual({ layout: "history-events", skipped: { message_action: 1 }, task_id: "sympy__sympy-1" });
    // A quarantined line is named by its instance, without a hash.
    expect(quarantined(itemsB)).toEqual([expect.objectContaining({ id: "sympy__sympy-20590", field: "history" })]);
  });
});

describe("a step that crashed (observation null or missing) drops its turn, not the file (hand-written samples)", () => {
  const read = async (reader: Reader, name: string, content: unknown) => {
    const path = join(tempDir(), name);
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
    return collect(reader.read(path, OPTIONS));
  };

  it("SWE-agent: a step with a null or missing observation or action is counted, the other steps are turns", async () => {
    const items = await read(sweAgentTrajReader, "crashed.traj", {
      trajectory: [
        { action: "ls", observation: "a.py\n", thought: "look" },
        { action: "python run.py", observation: null },
        { action: "pytest", thought: "run the tests" },
        { action: null, observation: "format error" },
        { action: "cat a.py", observation: "print(1)\n" },
      ],
      info: { exit_status: "exit_error" },
    });
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["ls", "a.py\n"],
      ["cat a.py", "print(1)\n"],
    ]);
    expect(t?.meta?.skipped).toEqual({ step_without_observation: 2, step_without_action: 1 });
  });

  it("mini-swe-agent: an output message with null or no content is no empty observation", async () => {
    const reply = (command: string) => ({ role: "assistant", content: `THOUGHT: run it\n\n\`\`\`bash\n${command}\n\`\`\`` });
    const items = await read(miniSweAgentReader, "crashed.traj.json", [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "Please solve this issue: fix it" },
      reply("ls"),
      { role: "user", content: null },
      reply("pwd"),
      { role: "user" },
      reply("cat a.py"),
      { role: "user", content: "<returncode>0</returncode>\n<output>\nprint(1)\n</output>" },
    ]);
    const [t] = trajectories(items);
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["cat a.py", "<returncode>0</returncode>\n<output>\nprint(1)\n</output>"],
    ]);
    expect(t?.meta?.skipped).toEqual({ action_without_observation: 2, observation_without_content: 2 });
  });

  it("SWE-smith: an observation message with null content is no empty observation", async () => {
    const call = (command: string) => ({
      role: "assistant",
      content: `look\n<function=bash>\n<parameter=command>${command}</parameter>\n</function>`,
    });
    const row = {
      instance_id: "x__y-1",
      messages: [
        { role: "system", content: "sys" },
        { role: "user", content: "fix it" },
        call("ls"),
        { role: "user", content: null },
        call("pwd"),
        { role: "user", content: "OBSERVATION:\n/x\n" },
      ],
    };
    const [t] = trajectories(await read(sweSmithReader, "crashed.jsonl", `${JSON.stringify(row)}\n`));
    expect(t?.turns.map((turn) => turn.observation)).toEqual(["/x\n"]);
    expect(t?.turns[0]?.action).toContain("pwd");
    expect(t?.meta?.skipped).toEqual({ action_without_observation: 1, observation_without_content: 1 });
  });

  it("OpenHands: an observation with null or no content leaves its action unobserved, the session is read", async () => {
    const run = (id: number, command: string) => ({ id, source: "agent", action: "run", args: { command, thought: "" } });
    const observed = (id: number, cause: number, content?: string | null) => ({
      id,
      source: "agent",
      cause,
      observation: "run",
      ...(content === undefined ? {} : { content }),
      extras: { metadata: { exit_code: 0 } },
    });
    const items = await read(openHandsReader, "crashed.json", [
      { id: 0, source: "user", action: "message", args: { content: "fix it" } },
      run(1, "ls"),
      observed(2, 1, "a.py\n"),
      run(3, "python crash.py"),
      observed(4, 3, null),
      run(5, "pytest"),
      observed(6, 5),
    ]);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls", "a.py\n"]]);
    expect(t?.meta?.skipped).toEqual({ message_action: 1, run_observation_without_content: 2, action_without_observation: 2 });
  });
});
