/**
 * The SWE readers on third-party samples (SWE-agent, mini-swe-agent, OpenHands, SWE-smith files in
 * ../shared/fixtures/real/swe/, see test/third-party/support.ts): what a person read in each file
 * (python3 -c 'import json; …' over it): the number of (action, observation) turns and the first
 * and last action and observation, exactly or by a distinctive prefix (`…` marks a prefix).
 * test/read-swe.test.ts covers the same readers on the project's own recordings.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { afterEach, expect, it, vi } from "vitest";
import type { Trajectory } from "../../src/core/trajectory.ts";
import { agentWorldBenchReader } from "../../src/read/agentworldbench-jsonl.ts";
import { canonicalJsonlReader } from "../../src/read/canonical-jsonl.ts";
import { miniSweAgentReader } from "../../src/read/mini-swe-agent.ts";
import { openHandsReader } from "../../src/read/openhands.ts";
import type { Reader, ReadItem } from "../../src/read/reader.ts";
import { readHead } from "../../src/read/registry.ts";
import { sweAgentTrajReader } from "../../src/read/swe-agent-traj.ts";
import { sweSmithReader } from "../../src/read/swe-smith.ts";
import { collect, tempDir } from "../helpers.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const SWE = (...parts: string[]) => thirdParty("swe", ...parts);
const SWE_READERS = [sweAgentTrajReader, miniSweAgentReader, openHandsReader, sweSmithReader];

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const content = (t: Trajectory) => ({ ...t, source: undefined });
const sha16 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex").slice(0, 16);
/** Issue 34, "Attempts": a one-run-per-file format's id is the instance id plus a hash of the file. */
const attemptOf = (instance: string, path: string) => `${instance}-${sha16(readFileSync(path))}`;

async function only(reader: Reader, path: string): Promise<Trajectory> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  expect(items).toHaveLength(1);
  return trajectories(items)[0] as Trajectory;
}

interface Expected {
  file: string;
  /** The instance id (`meta.task_id`; each block checks the trajectory id, which adds a hash). */
  id: string;
  turns: number;
  first: [string, string];
  last: [string, string];
  task?: string;
}

function expectTurns(t: Trajectory, e: Expected) {
  expect(t.domain).toBe("swe");
  expect(t.turns).toHaveLength(e.turns);
  const check = (actual: string | undefined, wanted: string) =>
    wanted.endsWith("…") ? expect(actual?.startsWith(wanted.slice(0, -1))).toBe(true) : expect(actual).toBe(wanted);
  check(t.turns[0]?.action, e.first[0]);
  check(t.turns[0]?.observation, e.first[1]);
  check(t.turns.at(-1)?.action, e.last[0]);
  check(t.turns.at(-1)?.observation, e.last[1]);
  if (e.task !== undefined) check(t.task, e.task);
}

describeThirdParty("SWE-agent .traj reader", () => {
  // d = json.load(f); t = d["trajectory"]; len(t), t[0]/t[-1]["action"|"observation"];
  // task = first history message with role "user" and no is_demo.
  const CASES: Expected[] = [
    {
      file: "ctf_pwn_warmup.traj", // 0.x: state is a JSON string, no message_type
      id: "ctf_pwn_warmup",
      turns: 7,
      first: ["disassemble warmup\n", "Function main not found! Instead, here is the disassembly of equivalent function FUN_0040061d:\n…"],
      last: ["submit FLAG{LET_US_BEGIN_CSAW_2016}\n", ""],
      task: 'We\'re currently solving the following CTF challenge. The CTF challenge is a binary exploitation problem named "WarmUp"…',
    },
    {
      file: "ctf_web_i_got_id_demo.traj",
      id: "ctf_web_i_got_id_demo",
      turns: 21,
      first: ["curl http://web.chal.csaw.io:8000\n", "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n…"],
      last: ["submit FLAG{p3rl_6_iz_EVEN_BETTER!!1}\n", "\nFLAG{p3rl_6_iz_EVEN_BETTER!!1}\n"],
    },
    {
      file: "gpt4__pydicom__pydicom-1458.traj", // 0.x with a demonstration (is_demo) before the task
      id: "gpt4__pydicom__pydicom-1458",
      turns: 12,
      first: ["create reproduce_bug.py\n", "[File: /pydicom__pydicom/reproduce_bug.py (1 lines total)]\n1:\n"],
      last: ["submit\n", "\ndiff --git a/pydicom/pixel_data_handlers/numpy_handler.py b/pydicom/pixel_data_handlers/numpy_handler.py\n…"],
      task: "We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\nPixel Representation attribute should be optional…",
    },
    {
      file: "gpt4__swe-agent__test-repo-i1.traj",
      id: "gpt4__swe-agent__test-repo-i1",
      turns: 5,
      first: ['find_file "missing_colon.py"\n', 'Found 1 matches for "missing_colon.py" in /klieret__swe-agent-test-repo:\n…'],
      last: ["submit\n", "\ndiff --git a/tests/missing_colon.py b/tests/missing_colon.py\nindex 20edef5..5857437 100755\n…"],
    },
    {
      // 1.x function calling: state is an object, history has message_type and tool_calls;
      // the id comes from replay_config.problem_statement.id.
      file: "replay_function_calling_replace__marshmallow-1867.traj",
      id: "marshmallow-code__marshmallow-1867",
      turns: 11,
      first: ["create reproduce.py", "[File: reproduce.py (1 lines total)]\r\n1:"],
      last: ["submit", "\r\ndiff --git a/src/marshmallow/fields.py b/src/marshmallow/fields.py\r\nindex ad388c7..168a845 100644\r\n…"],
      task: "We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\nTimeDelta serialization precision…",
    },
    {
      file: "replay_xml_window100__marshmallow-1867.traj", // 1.x message_type with 0.x-style state strings
      id: "marshmallow-code__marshmallow-1867",
      turns: 11,
      first: ["create reproduce.py", "[File: /marshmallow-code__marshmallow/reproduce.py (1 lines total)]\n1:\n"],
      last: ["submit", "\ndiff --git a/src/marshmallow/fields.py b/src/marshmallow/fields.py\nindex ad388c7..20da768 100644\n…"],
    },
    {
      // A demonstration with history only: 5 assistant actions, each followed by a tool message.
      file: "function_calling_simple.traj",
      id: "function_calling_simple",
      turns: 5,
      first: [
        "find_file missing_colon.py",
        'Found 1 matches for "missing_colon.py" in /SWE-agent__test-repo:\r\n/SWE-agent__test-repo/tests/missing_colon.py\n…',
      ],
      last: ["submit", "\r\ndiff --git a/tests/missing_colon.py b/tests/missing_colon.py\r\nindex 20edef5..5857437 100755\r\n…"],
      task: "We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\nSyntaxError: invalid syntax\n…",
    },
  ];

  for (const e of CASES) {
    it(`reads ${e.file}`, async () => {
      const t = await only(sweAgentTrajReader, SWE("swe-agent", e.file));
      expectTurns(t, e);
      expect([t.id, t.meta?.task_id]).toEqual([attemptOf(e.id, SWE("swe-agent", e.file)), e.id]);
    });
  }

  it("two runs of marshmallow-1867 (function calling, XML) are two records of one task, with the model the replay config names", async () => {
    const runs = ["replay_function_calling_replace__marshmallow-1867.traj", "replay_xml_window100__marshmallow-1867.traj"];
    const [fc, xml] = await Promise.all(runs.map((f) => only(sweAgentTrajReader, SWE("swe-agent", f))));
    expect(fc?.id).not.toBe(xml?.id);
    for (const t of [fc, xml]) {
      expect(t?.meta).toMatchObject({
        agent: "swe-agent",
        task_id: "marshmallow-code__marshmallow-1867",
        model: "gpt-4o",
        exit_status: "submitted",
      });
      expect(t?.meta?.outcome).toBeUndefined();
    }
    // 0.x files record no model name (info.model_stats has costs and tokens only).
    const old = await only(sweAgentTrajReader, SWE("swe-agent/gpt4__pydicom__pydicom-1458.traj"));
    expect(old.meta).toEqual({
      turns_from: "trajectory",
      schema: "legacy",
      agent: "swe-agent",
      task_id: "gpt4__pydicom__pydicom-1458",
      environment: "swe_main",
      exit_status: "submitted",
    });
  });

  it("keeps the agent's thought and the environment state as turn metadata, and says where turns came from", async () => {
    const old = await only(sweAgentTrajReader, SWE("swe-agent/ctf_pwn_warmup.traj"));
    expect(old.turns[0]?.meta).toMatchObject({
      agent_thought: "Let me disassemble the provided binary. \n",
      state: { open_file: "n/a" }, // parsed from the 0.x JSON string
    });
    expect(old.meta).toMatchObject({ turns_from: "trajectory", schema: "legacy", environment: "swe_main", exit_status: "submitted" });
    const fc = await only(sweAgentTrajReader, SWE("swe-agent/replay_function_calling_replace__marshmallow-1867.traj"));
    expect(fc.turns[0]?.meta).toMatchObject({ state: { open_file: "/testbed/reproduce.py", working_dir: "/testbed" } });
    expect(fc.meta).toMatchObject({ turns_from: "trajectory", schema: "message_type" });
    const demo = await only(sweAgentTrajReader, SWE("swe-agent/function_calling_simple.traj"));
    expect(demo.meta).toMatchObject({ turns_from: "history", schema: "message_type" });
  });

  it("quarantines a real .traj cut short, with a reason", async () => {
    const cut = join(tempDir(), "cut.traj");
    writeFileSync(cut, readFileSync(SWE("swe-agent/ctf_pwn_warmup.traj"), "utf8").slice(0, 5000));
    const items = await collect(sweAgentTrajReader.read(cut, OPTIONS));
    expect(items).toHaveLength(1);
    expect(quarantined(items)[0]).toMatchObject({ id: "cut", stage: "read", source: { uri: cut, format: "swe-agent-traj" } });
    expect(quarantined(items)[0]?.reason).toMatch(/invalid JSON/);
  });

  it("streams the real 100 KB replay file the same way", async () => {
    const parse = vi.spyOn(JSON, "parse");
    const t = await only(sweAgentTrajReader, SWE("swe-agent/replay_function_calling_replace__marshmallow-1867.traj"));
    const longest = Math.max(0, ...parse.mock.calls.map(([arg]) => String(arg).length));
    parse.mockRestore();
    expect(t.turns).toHaveLength(11);
    expect(longest).toBeLessThan(10_000); // the file is 100,547 bytes
  });
});

describeThirdParty("mini-swe-agent reader", () => {
  // m = json.load(f); for each assistant message: the single ```mswea_bash_command block, and
  // the next message's content; task = m[1]["content"].
  const CASES: Expected[] = [
    {
      file: "local.traj.json",
      id: "local",
      turns: 2,
      first: ["echo 'hello world'", "<returncode>0</returncode>\n<output>\nhello world\n</output>"],
      last: ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", ""],
      task: "Please solve this issue: Blah blah blah\n\n…",
    },
    {
      file: "github_issue.traj.json",
      id: "github_issue",
      turns: 10,
      first: [
        "cat /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py",
        "<returncode>1</returncode>\n<output>\ncat: /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py: No such file or directory\n</output>",
      ],
      last: [
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
        "diff --git a/tests/missing_colon.py b/tests/missing_colon.py\nindex 20edef5..f55e657 100755\n…",
      ],
      task: "Please solve this issue: GitHub Issue: SyntaxError: invalid syntax…",
    },
  ];

  for (const e of CASES) {
    it(`reads ${e.file}`, async () => {
      const t = await only(miniSweAgentReader, SWE("mini-swe-agent", e.file));
      expectTurns(t, e);
      expect([t.id, t.meta?.task_id]).toEqual([attemptOf(e.id, SWE("mini-swe-agent", e.file)), e.id]);
      expect(t.meta).toMatchObject({ agent: "mini-swe-agent", task_id: e.id });
    });
  }

  it("puts the THOUGHT text around the command block in turn.meta.agent_thought", async () => {
    const t = await only(miniSweAgentReader, SWE("mini-swe-agent/github_issue.traj.json"));
    expect(t.turns[1]?.meta).toEqual({
      agent_thought: "I need to find the correct path to the file. Let me check the current directory structure:",
    });
  });

  it("reads the saved {info, messages, trajectory_format} form, also gzip-compressed, to the same turns", async () => {
    const dir = tempDir();
    const messages = JSON.parse(readFileSync(SWE("mini-swe-agent/github_issue.traj.json"), "utf8"));
    const saved = JSON.stringify(
      { info: { exit_status: "Submitted", mini_version: "1.9.0" }, messages, trajectory_format: "mini-swe-agent-1" },
      null,
      2,
    );
    writeFileSync(join(dir, "github_issue.traj.json.gz"), gzipSync(saved));
    const plain = await only(miniSweAgentReader, SWE("mini-swe-agent/github_issue.traj.json"));
    const wrapped = await only(miniSweAgentReader, join(dir, "github_issue.traj.json.gz"));
    expect(wrapped.turns).toEqual(plain.turns);
    expect(wrapped.id).toBe(`github_issue-${sha16(saved)}`);
    expect(wrapped.meta).toEqual({
      agent: "mini-swe-agent",
      task_id: "github_issue",
      exit_status: "Submitted",
      trajectory_format: "mini-swe-agent-1",
    });
    expect(miniSweAgentReader.sniff(saved.slice(0, 300), "x")).toBe(true);
  });
});

describeThirdParty("OpenHands reader", () => {
  const CASES: (Expected & { line?: number })[] = [
    {
      // JSON array of 4 events: message(user), edit(3), edit observation(cause 3), finish.
      file: "trajs_basic.json",
      id: "trajs_basic",
      turns: 1,
      first: [
        '{"action":"edit","path":"/workspace/game_2048.py","content":"","start":1,"end":-1,"impl_source":"oh_aci",…',
        "--- /workspace/game_2048.py\n+++ /workspace/game_2048.py\n@@ -0,0 +1,2 @@\n+import random\n…",
      ],
      last: ['{"action":"edit",…', "--- /workspace/game_2048.py\n…"],
      task: "Please create a simple 2048 game. No need to run it. …",
    },
    {
      // 18 events; environment actions with an observation caused by them: run 7, edit 9, edit 11, run 13.
      file: "trajs_basic_gui_mode.json",
      id: "trajs_basic_gui_mode",
      turns: 4,
      first: ["mkdir -p /workspace/todo-app", "[exit code 0, no output]"], // the content is "", metadata.exit_code 0
      last: ["cd /workspace/todo-app && python3 -m http.server 8000", "Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ..."],
      task: "I want to create a VueJS app that allows me to:\n…",
    },
    {
      // Line 1: 49 events, 21 run/read/edit actions each answered by the observation with its cause.
      file: "multi_swe_bench_output_first_line.jsonl",
      line: 1,
      id: "ponylang__ponyc-4595",
      turns: 21,
      first: ["ls -l /workspace/ponylang__ponyc__0.1", "total 300\n-rw-r--r--  1 root root   9336 Apr 30 08:32 BUILD.md\n…"],
      last: [
        "cd /workspace && /workspace/ponylang__ponyc__0.1/build/bin/ponyc test.pony -o . && ./test",
        "bash: /workspace/ponylang__ponyc__0.1/build/bin/ponyc: No such file or directory…",
      ],
      task: "<uploaded_files>\n/workspace/ponylang__ponyc__0.1\n</uploaded_files>\n…",
    },
    {
      // 2024 flat history without ids: run, run_ipython, run actions, each followed by its observation.
      file: "resolver_mock_output_legacy.jsonl",
      line: 1,
      id: "neubig/pr-viewer#5",
      turns: 3,
      first: ["touch LICENSE", "\r\nroot@bcd3959393a1:/workspace # "],
      last: ["cat LICENSE", "MIT License\r\n\r\nCopyright (c) 2024 [Your Name or Organization Name]\r\n…"],
      task: "Please fix the following issue for the repository in /workspace.\n…",
    },
    {
      file: "resolver_mock_output_legacy.jsonl",
      line: 2,
      id: "neubig/pr-viewer#1",
      turns: 21,
      first: ["ls -R /workspace", "/workspace:\r\nREADME.md\t  package-lock.json  src\t\ttsconfig.node.json\r\n…"],
      last: [
        "open_file('/workspace/src/App.css')",
        "[File: /workspace/src/App.css (79 lines total)]\n(this is the beginning of the file)\n…",
      ],
    },
  ];

  for (const e of CASES) {
    it(`reads ${e.file}${e.line ? `:${e.line}` : ""}`, async () => {
      const items = await collect(openHandsReader.read(SWE("openhands", e.file), OPTIONS));
      expect(quarantined(items)).toEqual([]);
      const t = trajectories(items).find((x) => e.line === undefined || x.source.line === e.line) as Trajectory;
      expectTurns(t, e);
      if (e.line === undefined) {
        // A saved session (event array) names no instance: the file name is its id.
        expect([t.id, t.meta?.task_id]).toEqual([e.id, undefined]);
        return;
      }
      // An output line: the instance (or the resolver's issue) and a hash of the line.
      const line = readFileSync(SWE("openhands", e.file), "utf8").split("\n")[e.line - 1] as string;
      expect([t.id, t.meta?.task_id]).toEqual([`${e.id}-${sha16(line)}`, e.id]);
    });
  }

  it("takes agent, model and outcome from what the output records say", async () => {
    const [ponyc] = trajectories(await collect(openHandsReader.read(SWE("openhands/multi_swe_bench_output_first_line.jsonl"), OPTIONS)));
    // metadata.agent_class and metadata.llm_config.model; test_result has no report and error is null: no outcome.
    expect(ponyc?.meta).toMatchObject({
      task_id: "ponylang__ponyc-4595",
      agent: "CodeActAgent",
      model: "openai/openrouter-llama-4-maverick",
    });
    expect(ponyc?.meta?.outcome).toBeUndefined();
    const resolver = trajectories(await collect(openHandsReader.read(SWE("openhands/resolver_mock_output_legacy.jsonl"), OPTIONS)));
    // The resolver's lines: no metadata, `success: true`, `error: null`.
    expect(resolver.map((t) => [t.meta?.task_id, t.meta?.agent, t.meta?.model, t.meta?.outcome])).toEqual([
      ["neubig/pr-viewer#5", undefined, undefined, { success: true }],
      ["neubig/pr-viewer#1", undefined, undefined, { success: true }],
    ]);
  });

  it("counts every event that is not part of a turn", async () => {
    const gui = await only(openHandsReader, SWE("openhands/trajs_basic_gui_mode.json"));
    // 18 events = 4 turns × 2 + these 10.
    expect(gui.meta).toEqual({
      layout: "event-array",
      skipped: { agent_state_changed_observation: 4, change_agent_state_action: 1, null_observation: 3, message_action: 2 },
    });
    expect(gui.turns[0]?.meta).toMatchObject({ action_type: "run", observation_type: "run", exit_code: 0 });
    expect(String(gui.turns[0]?.meta?.agent_thought)).toMatch(/^I'll help you create a Vue\.js application/);
    const [ponyc] = trajectories(await collect(openHandsReader.read(SWE("openhands/multi_swe_bench_output_first_line.jsonl"), OPTIONS)));
    // 49 events = 21 turns × 2 + 7 (system, message, recall + its observation, think + its observation, finish).
    expect(Object.values(ponyc?.meta?.skipped as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(7);
  });

  it("a command that printed nothing is observed as its exit code: no run turn has an empty observation", async () => {
    const files = [
      "trajs_basic.json",
      "trajs_basic_gui_mode.json",
      "multi_swe_bench_output_first_line.jsonl",
      "resolver_mock_output_legacy.jsonl",
    ];
    const all = trajectories((await Promise.all(files.map((f) => collect(openHandsReader.read(SWE("openhands", f), OPTIONS))))).flat());
    const runs = all.flatMap((t) => t.turns).filter((turn) => turn.meta?.observation_type === "run");
    expect(runs.filter((turn) => turn.observation.trim() === "")).toEqual([]);
    // The two silent commands of the samples, with the exit code their event carries in extras.metadata.
    expect(runs.filter((turn) => turn.observation.startsWith("[exit code")).map((turn) => [turn.action, turn.observation])).toEqual([
      ["mkdir -p /workspace/todo-app", "[exit code 0, no output]"],
      ['echo "int main() { return 0; }" > /workspace/test.c', "[exit code 0, no output]"],
    ]);
    // A server still running when the runtime returned (exit code -1) printed its banner: kept as printed.
    const server = runs.find((turn) => turn.action.includes("http.server"));
    expect([server?.meta?.exit_code, server?.observation]).toEqual([-1, "Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ..."]);
  });

  it("quarantines a session without environment actions (trajs_basic_interactions.json: chat only)", async () => {
    const [q, ...rest] = quarantined(await collect(openHandsReader.read(SWE("openhands/trajs_basic_interactions.json"), OPTIONS)));
    expect(rest).toEqual([]);
    // 6 events: five `message` actions and a `finish`.
    expect(q).toMatchObject({ id: "trajs_basic_interactions", field: "history" });
    expect(q?.reason).toBe('no environment action with an observation (events: {"message_action":5,"finish_action":1})');
  });

  it("streams a JSON array of output records (zstd) record by record, to the same trajectories as the JSONL", async () => {
    const dir = tempDir();
    const path = join(dir, "records.json");
    const jsonl = [SWE("openhands/multi_swe_bench_output_first_line.jsonl"), SWE("openhands/resolver_mock_output_legacy.jsonl")];
    const records = jsonl.flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l)),
    );
    writeFileSync(path, zstdCompressSync(Buffer.from(JSON.stringify([...records, 42]))));
    const fromLines = (await Promise.all(jsonl.map((f) => collect(openHandsReader.read(f, OPTIONS))))).flat();
    const items = await collect(openHandsReader.read(path, OPTIONS));
    // The same trajectories; each id hashes its record as written: the line, or the array element
    // as JSON.stringify writes it (these lines are Python's json.dumps, with spaces).
    const withoutId = (t: Trajectory) => ({ ...content(t), id: undefined });
    expect(trajectories(items).map(withoutId)).toEqual(trajectories(fromLines).map(withoutId));
    expect(trajectories(items).map((t) => t.id)).toEqual(
      records.map((r) => `${r.instance_id ?? `${r.issue.owner}/${r.issue.repo}#${r.issue.number}`}-${sha16(JSON.stringify(r))}`),
    );
    expect(quarantined(items)).toEqual([expect.objectContaining({ field: "3", reason: "3: expected a trajectory record, got a number" })]);
  });
});

describeThirdParty("SWE-smith reader", () => {
  // d = json.loads(line); for each assistant message: its <function=…>…</function> block and the
  // next message's content (without "OBSERVATION:\n"); 37 calls, the last (submit) unanswered.
  const E: Expected = {
    file: "ft_xml_example_first_line.jsonl",
    id: "pandas-dev__pandas.95280573.pr_53652",
    turns: 36,
    first: [
      '<function=bash>\n<parameter=command>find /testbed -type f -name "*.py" | grep -v "__pycache__" | grep -v "test_" | head -20</parameter>\n</function>',
      "/testbed/scripts/pandas_errors_documented.py\r\n/testbed/scripts/check_for_inconsistent_pandas_namespace.py\r\n…",
    ],
    last: [
      "<function=bash>\n<parameter=command>cd /testbed && rm -f reproduce_error.py test_edge_cases.py frame*.parquet</parameter>\n</function>",
      "Your command ran successfully and did not produce any output.",
    ],
    task: "<uploaded_files>\n/testbed\n</uploaded_files>\nI've uploaded a python code repository in the directory /testbed. …",
  };

  it(`reads ${E.file}`, async () => {
    const t = await only(sweSmithReader, SWE("swe-smith", E.file));
    expectTurns(t, E);
    expect(t.id).toBe(E.id);
    expect(t.source).toMatchObject({ line: 1, offset: 0, format: "swe-smith" });
    expect(t.meta).toEqual({ task_id: "pandas-dev__pandas.95280573.pr_53652", skipped: { action_without_observation: 1 } });
    expect(t.turns.some((turn) => turn.observation.startsWith("OBSERVATION:"))).toBe(false);
    expect(t.turns[1]?.meta).toEqual({ agent_thought: "Let's look at the specific file mentioned in the PR description:" });
  });

  it("quarantines bad lines with line, offset and reason, and reads the rest", async () => {
    const dir = tempDir();
    const path = join(dir, "ft.jsonl.zst");
    const good = readFileSync(SWE("swe-smith", E.file), "utf8").trim();
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
      [1, 36],
      [5, 36],
    ]);
    const bad = quarantined(items);
    expect(bad.map((q) => [q.source.line, q.source.offset, q.id, q.field])).toEqual([
      [2, good.length + 1, undefined, undefined],
      [3, good.length + 10, "no-messages", "messages"],
      [4, good.length + 10 + (lines[2]?.length ?? 0) + 1, "bad-role", "messages.0.role"],
    ]);
    expect(bad[0]?.reason).toMatch(/invalid JSON/);
    expect(bad[0]?.excerpt).toBe("not json");
  });
});

describeThirdParty("SWE format detection", () => {
  const FILES: [string, Reader][] = [
    ...[
      "ctf_pwn_warmup.traj",
      "ctf_web_i_got_id_demo.traj",
      "function_calling_simple.traj",
      "gpt4__pydicom__pydicom-1458.traj",
      "gpt4__swe-agent__test-repo-i1.traj",
      "replay_function_calling_replace__marshmallow-1867.traj",
      "replay_xml_window100__marshmallow-1867.traj",
    ].map((f): [string, Reader] => [`swe-agent/${f}`, sweAgentTrajReader]),
    ["mini-swe-agent/local.traj.json", miniSweAgentReader],
    ["mini-swe-agent/github_issue.traj.json", miniSweAgentReader],
    ...[
      "trajs_basic.json",
      "trajs_basic_gui_mode.json",
      "trajs_basic_interactions.json",
      "multi_swe_bench_output_first_line.jsonl",
      "resolver_mock_output_legacy.jsonl",
    ].map((f): [string, Reader] => [`openhands/${f}`, openHandsReader]),
    ["swe-smith/ft_xml_example_first_line.jsonl", sweSmithReader],
  ];

  afterEach(() => vi.restoreAllMocks());

  for (const [file, reader] of FILES) {
    it(`${file} is claimed by ${reader.name} alone, also from an 8 KiB prefix and under another name`, async () => {
      const head = await readHead(SWE(file));
      for (const cut of [head, head.slice(0, 8192)]) {
        const claimed = [...SWE_READERS, canonicalJsonlReader, agentWorldBenchReader].filter((r) => r.sniff(cut, "input.data"));
        expect(claimed.map((r) => r.name)).toEqual([reader.name]);
      }
    });
  }
});
