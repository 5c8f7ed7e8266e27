/**
 * Issue 34: Harbor / terminal-bench 2.0 ATIF `trajectory.json` (src/read/atif.ts). The hand-made
 * fixtures under test/fixtures/handmade/atif/ (README.md there) are written from the ATIF RFC,
 * Harbor's pydantic models and Terminus-2's observation format; the shared real samples are read
 * in place at the end.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { splitAtEchoes, splitSubmitted } from "../src/read/atif/terminal-turns.ts";
import { ATIF_VERSIONS, atifReader } from "../src/read/atif.ts";
import type { ReaderOptions, ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS: ReaderOptions = { maxLineBytes: 64 << 20 };
const DIR = join(ROOT, "test/fixtures/handmade/atif");
const TERMINUS_TRIAL = join(DIR, "harbor-job/count-errors__Vb3kQ9x");
const TERMINUS = join(TERMINUS_TRIAL, "agent/trajectory.json");
const SWE = join(DIR, "harbor-job/swebench-calc-1__Qx7wP2d/agent/trajectory.json");
const MULTIMODAL = join(DIR, "multimodal-subagent.v1.8.json");
const PROMPT = "root@4f2a9c1e7b3d:/app# ";

async function read(path: string, options = OPTIONS): Promise<ReadItem[]> {
  return collect(atifReader.read(path, options));
}

async function readOne(path: string): Promise<Trajectory> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  const item = items[0];
  if (item?.kind !== "trajectory") throw new Error(`not a trajectory: ${JSON.stringify(item)}`);
  return item.trajectory;
}

/** No turn is empty and no observation repeats its own command's echo. */
function expectCleanTurns(trajectory: Trajectory): void {
  for (const [i, turn] of trajectory.turns.entries()) {
    expect(turn.action.trim(), `turn ${i}`).not.toBe("");
    expect(turn.observation.trim(), `turn ${i}`).not.toBe("");
    const firstLine = turn.action.split("\n")[0] as string;
    if (firstLine.length > 3) expect(turn.observation, `turn ${i} echoes its command`).not.toContain(`# ${firstLine}`);
  }
}

describe("ATIF: a Terminus-2 trial in a Harbor job folder", () => {
  it("one turn per submitted command, cut at the shell's echoes, the next prompt included", async () => {
    const t = await readOne(TERMINUS);
    expect(t.id).toBe("4b1d6f0e-1c2a-4e8b-9d53-7a0c2f6e9b14");
    expect(t.domain).toBe("terminal");
    expect(t.source).toEqual({ uri: TERMINUS, format: "atif" });
    expect(t.task).toBe("Count the ERROR lines in /app/logs/server.log and write the number to /app/answer.txt.");
    expect(t.meta?.agent_system).toMatch(/^You are an AI assistant tasked with solving command-line tasks/);
    expect(t.meta?.agent_system).not.toContain("Task Description");
    expect(t.initialObservation).toBe(PROMPT.trimEnd());
    const p = PROMPT;
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [
        "ls -la /app/logs",
        `total 12\ndrwxr-xr-x 2 root root 4096 Jan 15 12:00 .\ndrwxr-xr-x 1 root root 4096 Jan 15 12:00 ..\n-rw-r--r-- 1 root root  412 Jan 15 12:00 server.log\n${p}`,
      ],
      ["wc -l /app/logs/server.log", `9 /app/logs/server.log\n${p}`],
      // One keystroke string, two command lines: two turns. The second's echo wrapped at 80 columns.
      ["grep -c ERROR /app/logs/server.log", `4\n${p}`],
      ["grep ERROR /app/logs/server.log | awk '{print $1, $2, $NF}' | sort | uniq -c | sort -rn | head -n 20 > /tmp/error-summary.txt", p],
      // A heredoc is one command, its body's `> ` continuation echo is not observed.
      ["cat > /app/count.sh << 'EOF'\n#!/bin/sh\n# count the ERROR lines of a log\ngrep -c ERROR \"$1\"\nEOF", p],
      ["sh /app/count.sh /app/logs/server.log > /app/answer.txt; cat /app/answer.txt", `4\n${p}`],
      // The next step waited (empty keystrokes): its output belongs to this command.
      ["sleep 3; df -h /app | tail -n 1", `overlay          59G   21G   36G  37% /\n${p}`],
      ["tail -f /app/logs/server.log", "2026-01-15 11:59:58 INFO ready"],
      ["^C", p],
      // A whole screen (`Current Terminal Screen:`): the latest echo counts, what was above is not new.
      // `clear` left no echo: it stays with the command after it.
      ["clear\nls", `answer.txt  count.sh  logs\n${p}`],
      // With a task_complete: the confirmation question is the harness's, not the terminal's.
      ["cat /app/answer.txt", `4\n${p}`],
    ]);
    expectCleanTurns(t);
  });

  it("thinking, metrics and framing stay with the step's first turn; control and parse failures are counted, not turns", async () => {
    const t = await readOne(TERMINUS);
    const [first, second] = t.turns;
    expect(first?.thinking).toBe(
      "Start by looking at the log.\n\nAnalysis: Fresh shell in /app.\nPlan: Look at the log folder, then count its lines.",
    );
    expect(second?.thinking).toBeUndefined();
    expect(first?.meta?.atif).toMatchObject({
      step_id: 2,
      tool_call_ids: ["call_0_1", "call_0_2"],
      function_names: ["bash_command"],
      framing: ["New Terminal Output:"],
      metrics: { prompt_tokens: 812, completion_tokens: 96, cost_usd: 0.001 },
    });
    expect(t.turns[2]?.meta?.atif).toMatchObject({
      step_id: 3,
      framing: ["Previous response had warnings:\nWARNINGS: - Extra text detected after JSON object", "New Terminal Output:"],
    });
    const last = t.turns.at(-1)?.meta?.atif as { framing: string[] };
    expect(last.framing[0]).toBe("Current terminal state:");
    expect(last.framing.at(-1)).toMatch(/^Are you sure you want to mark the task as complete\?/);
    expect(t.meta?.skipped).toEqual({ wait: 1, agent_step_without_tool_calls: 1, echo_not_found: 1, control_call: 2 });
  });

  it("outcome, task, attempt, agent and model from the trial's result.json", async () => {
    const t = await readOne(TERMINUS);
    expect(t.meta).toMatchObject({
      agent: "terminus-2",
      agent_version: "2.0.0",
      model: "anthropic/claude-sonnet-4-5",
      task_id: "terminal-bench/count-errors",
      attempt: "count-errors__Vb3kQ9x",
      outcome: { reward: 1, success: true },
      harbor: { side_files: ["result.json"] },
      atif: { schema_version: "ATIF-v1.6", final_metrics: { total_prompt_tokens: 14207, total_cost_usd: 0.011 } },
    });
  });

  it("the reward comes from verifier/reward.txt when result.json has none, and failure_mode from exception_info", async () => {
    const trial = tempDir("atif-trial-");
    const agentDir = join(trial, "agent");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(agentDir, { recursive: true });
    mkdirSync(join(trial, "verifier"));
    writeFileSync(join(agentDir, "trajectory.json"), readFileSync(TERMINUS));
    writeFileSync(join(trial, "verifier", "reward.txt"), "0\n");
    writeFileSync(
      join(trial, "result.json"),
      JSON.stringify({
        task_name: "count-errors",
        trial_name: "count-errors__X",
        verifier_result: null,
        exception_info: { exception_type: "AgentTimeoutError", exception_message: "Agent execution timed out after 900 seconds" },
      }),
    );
    const t = await readOne(join(agentDir, "trajectory.json"));
    expect(t.meta?.outcome).toEqual({
      reward: 0,
      success: false,
      failure_mode: "AgentTimeoutError",
      failure_message: "Agent execution timed out after 900 seconds",
    });
    expect(t.meta?.harbor).toEqual({ side_files: ["result.json", "verifier/reward.txt"] });
  });

  it("claims the trial's side files as companions, not the other trajectory files of the agent folder", async () => {
    const companions = await atifReader.companions?.(TERMINUS);
    expect(companions?.label).toBe("Harbor trial count-errors__Vb3kQ9x");
    expect(companions?.files.sort()).toEqual(
      [
        join(TERMINUS_TRIAL, "result.json"),
        join(TERMINUS_TRIAL, "verifier/reward.txt"),
        join(TERMINUS_TRIAL, "config.json"),
        join(TERMINUS_TRIAL, "agent/recording.cast"),
      ].sort(),
    );
    expect(companions?.dirs.sort()).toEqual([join(TERMINUS_TRIAL, "agent/episode-0"), join(TERMINUS_TRIAL, "verifier")].sort());
    const sizes = ["agent/trajectory.json", "result.json", "verifier/reward.txt"].map((f) => readFileSync(join(TERMINUS_TRIAL, f)).length);
    expect(companions?.bytes).toBe(sizes.reduce((a, b) => a + b, 0));
    const alone = await atifReader.companions?.(MULTIMODAL);
    expect(alone).toMatchObject({ dirs: [], files: [] });
  });

  it("a continuation segment's id carries its file suffix; copied-context steps are not turns", async () => {
    const dir = join(tempDir("atif-cont-"), "agent");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(dir);
    const doc = JSON.parse(readFileSync(TERMINUS, "utf8"));
    doc.steps[1].is_copied_context = true;
    writeFileSync(join(dir, "trajectory.cont-1.json"), JSON.stringify(doc));
    const t = await readOne(join(dir, "trajectory.cont-1.json"));
    expect(t.id).toBe("4b1d6f0e-1c2a-4e8b-9d53-7a0c2f6e9b14/cont-1");
    expect(t.turns[0]?.action).toBe("grep -c ERROR /app/logs/server.log");
    expect(t.meta?.skipped).toMatchObject({ copied_context_step: 1 });
  });
});

describe("ATIF: linked results, SWE work, content parts and embedded subagents", () => {
  it("results follow their calls by source_call_id, in call order; a repository task is swe", async () => {
    const t = await readOne(SWE);
    expect(t.id).toBe("swebench-calc-1__run-1");
    expect(t.domain).toBe("swe");
    expect(t.meta?.agent_system).toBe("You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.");
    expect(t.task).toMatch(/^<uploaded_files>\n\/testbed/);
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["cat /testbed/calc/ops.py", "def add(a, b):\n    return a - b\n"],
      [
        "cd /testbed && python -m pytest -q tests/test_ops.py 2>&1 | tail -n 3",
        "FAILED tests/test_ops.py::test_add - assert -1 == 5\n1 failed, 2 passed in 0.03s",
      ],
      [
        JSON.stringify(
          {
            name: "str_replace_editor",
            arguments: {
              command: "str_replace",
              path: "/testbed/calc/ops.py",
              old_str: "return a - b",
              new_str: "return a + b",
              security_risk: "MEDIUM",
            },
          },
          null,
          2,
        ),
        "The file /testbed/calc/ops.py has been edited.",
      ],
      ["cd /testbed && python -m pytest -q tests/test_ops.py 2>&1 | tail -n 1", "3 passed in 0.02s"],
    ]);
    expect(t.turns[0]?.thinking).toBe("Two reads, in parallel.\n\nLet me look at the code and the tests at once.");
    expect(t.turns[0]?.meta?.atif).toMatchObject({
      metrics: { prompt_tokens: 2100, completion_tokens: 120, cached_tokens: 1800, cost_usd: 0.004 },
    });
    expect(t.meta?.skipped).toEqual({ system_step: 1, control_call: 2, call_without_observation: 1, user_step: 1 });
    expect(t.meta).toMatchObject({
      agent: "openhands",
      model: "openai/gpt-5",
      outcome: { reward: 0.5, rewards: { reward: 0.5, fail_to_pass: 1, pass_to_pass: 0 } },
      harbor: { side_files: ["verifier/reward.json"] },
      atif: { tool_definitions: ["execute_bash", "str_replace_editor"] },
    });
    expect(t.meta?.outcome).not.toHaveProperty("success");
    expect(t.meta?.task_id).toBeUndefined();
  });

  it("v1.8: content parts, no session_id, an embedded subagent read as its own trajectory", async () => {
    const items = await read(MULTIMODAL);
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory"]);
    const [root, sub] = items.map((item) => (item as Extract<ReadItem, { kind: "trajectory" }>).trajectory) as [Trajectory, Trajectory];
    expect(root.id).toBe("shop-audit-7");
    expect(root.domain).toBe("web");
    expect(root.task).toBe("Check that the checkout page shows the cart total.\n[image image/png: images/cart.png]");
    expect(root.turns.map((turn) => turn.observation)).toEqual([
      "Checkout loaded. Total: $42.00\n[image image/png: images/checkout.png]",
      "[subagent trajectory shop-audit-7-research]",
      "[audio audio/mpeg: audio/hotline.mp3]",
    ]);
    expect(root.turns[1]?.meta?.atif).toMatchObject({ subagent_trajectory_ref: [{ trajectory_id: "shop-audit-7-research" }] });
    expect(root.meta?.skipped).toEqual({ copied_context_step: 1, agent_step_without_tool_calls: 1 });
    expect(root.meta?.atif).toMatchObject({ continued_trajectory_ref: "shop-audit-7.cont-1.json", trajectory_id: "shop-audit-7" });
    expect(sub.id).toBe("shop-audit-7/shop-audit-7-research");
    expect(sub.domain).toBe("search");
    expect(sub.turns).toHaveLength(1);
    expect(sub.turns[0]?.observation).toBe("shop.example/refunds: Refunds within 30 days of delivery.");
    expect(sub.meta).toMatchObject({ agent: "researcher", atif_parent: "shop-audit-7" });
  });

  it("--domain overrides the inferred domain", async () => {
    const [item] = await read(SWE, { ...OPTIONS, domain: "terminal" });
    expect(item?.kind === "trajectory" && item.trajectory.domain).toBe("terminal");
  });
});

describe("ATIF: commands inside a keystroke string", () => {
  it("splits at Enter only where the shell would run what came before", () => {
    expect(splitSubmitted("ls -la\n")).toEqual(["ls -la"]);
    expect(splitSubmitted("cd /app\nls\n\n")).toEqual(["cd /app", "ls"]);
    expect(splitSubmitted("")).toEqual([]);
    expect(splitSubmitted("echo 'a\nb'\npwd\n")).toEqual(["echo 'a\nb'", "pwd"]);
    expect(splitSubmitted('printf "%s\\n" "x\ny" | wc -l\n')).toEqual(['printf "%s\\n" "x\ny" | wc -l']);
    expect(splitSubmitted("make \\\n  -j4\nmake test\n")).toEqual(["make \\\n  -j4", "make test"]);
    expect(splitSubmitted("cat <<-EOF > f\n\tline # not a comment\n\tEOF\ncat f\n")).toEqual([
      "cat <<-EOF > f\n\tline # not a comment\n\tEOF",
      "cat f",
    ]);
    expect(splitSubmitted('for f in *.log; do\n  wc -l "$f"\ndone\necho ok\n')).toEqual([
      'for f in *.log; do\n  wc -l "$f"\ndone',
      "echo ok",
    ]);
    expect(splitSubmitted("if true; then\n  echo y\nfi\n")).toEqual(["if true; then\n  echo y\nfi"]);
    expect(splitSubmitted("python3 - <<'PY'\nprint(1)\nPY\n")).toEqual(["python3 - <<'PY'\nprint(1)\nPY"]);
    expect(splitSubmitted("echo it's # a comment\n")).toEqual(["echo it's # a comment\n"].map((s) => s.trimEnd()));
    expect(splitSubmitted("vim notes.txt")).toEqual(["vim notes.txt"]);
  });

  it("commands whose echo is missing stay with the command before; none found is one turn", () => {
    const out = `${PROMPT}a\n1\n${PROMPT}c\n3\n${PROMPT}`;
    expect(splitAtEchoes(out, ["a", "b", "c"], false)).toEqual({
      turns: [
        { action: "a\nb", observation: `1\n${PROMPT}` },
        { action: "c", observation: `3\n${PROMPT}` },
      ],
      unmatched: 1,
    });
    expect(splitAtEchoes("some output\n", ["x"], false)).toEqual({ turns: [{ action: "x", observation: "some output" }], unmatched: 1 });
    // Output the agent had not seen, before the first echo, is kept (unless the output is a whole screen).
    expect(splitAtEchoes(`late line\n${PROMPT}a\n1\n`, ["a"], false).turns).toEqual([{ action: "a", observation: "late line\n1" }]);
    expect(splitAtEchoes(`old line\n${PROMPT}a\n1\n`, ["a"], true).turns).toEqual([{ action: "a", observation: "1" }]);
  });
});

describe("ATIF: invalid documents are quarantined with the field to blame", () => {
  const base = JSON.parse(readFileSync(TERMINUS, "utf8"));
  // biome-ignore lint/suspicious/noExplicitAny: the mutations reach into an arbitrary parsed document.
  const cases: [string, (doc: Record<string, any>) => unknown, string, RegExp][] = [
    [
      "non-sequential step id",
      (d) => {
        d.steps[2].step_id = 9;
      },
      "steps.2.step_id",
      /expected 3 \(step ids are sequential from 1\), got 9/,
    ],
    [
      "step id a string",
      (d) => {
        d.steps[0].step_id = "1";
      },
      "steps.0.step_id",
      /expected an integer, got "1"/,
    ],
    [
      "unknown schema_version",
      (d) => {
        d.schema_version = "ATIF-v2.0";
      },
      "schema_version",
      /unknown ATIF version "ATIF-v2.0"/,
    ],
    [
      "missing schema_version",
      (d) => {
        delete d.schema_version;
      },
      "schema_version",
      /required field is missing/,
    ],
    [
      "unknown source",
      (d) => {
        d.steps[1].source = "assistant";
      },
      "steps.1.source",
      /expected "system", "user" or "agent", got "assistant"/,
    ],
    [
      "arguments not an object",
      (d) => {
        d.steps[1].tool_calls[0].arguments = "ls -la\n";
      },
      "steps.1.tool_calls.0.arguments",
      /expected an object \(may be \{\}\), got a string/,
    ],
    [
      "tool_call_id missing",
      (d) => {
        delete d.steps[1].tool_calls[1].tool_call_id;
      },
      "steps.1.tool_calls.1.tool_call_id",
      /expected a string, got nothing/,
    ],
    [
      "duplicate tool_call_id",
      (d) => {
        d.steps[1].tool_calls[1].tool_call_id = "call_0_1";
      },
      "steps.1.tool_calls.1.tool_call_id",
      /used twice/,
    ],
    [
      "source_call_id naming no call",
      (d) => {
        d.steps[1].observation.results[0].source_call_id = "call_9";
      },
      "steps.1.observation.results.0.source_call_id",
      /names no tool call of this step/,
    ],
    [
      "results not an array",
      (d) => {
        d.steps[1].observation.results = "ok";
      },
      "steps.1.observation.results",
      /expected an array, got a string/,
    ],
    [
      "message missing",
      (d) => {
        delete d.steps[3].message;
      },
      "steps.3.message",
      /required field is missing/,
    ],
    [
      "message a number",
      (d) => {
        d.steps[3].message = 7;
      },
      "steps.3.message",
      /expected a string or an array of content parts, got a number/,
    ],
    [
      "content part of unknown type",
      (d) => {
        d.steps[1].observation.results[0].content = [{ type: "video" }];
      },
      "steps.1.observation.results.0.content.0.type",
      /expected "text", "image" or "audio", got "video"/,
    ],
    [
      "image without a source",
      (d) => {
        d.steps[0].message = [{ type: "image" }];
      },
      "steps.0.message.0.source",
      /needs \{media_type, path\}/,
    ],
    [
      "agent.version missing",
      (d) => {
        delete d.agent.version;
      },
      "agent.version",
      /expected a string, got nothing/,
    ],
    [
      "agent not an object",
      (d) => {
        d.agent = "terminus-2";
      },
      "agent",
      /expected an object, got a string/,
    ],
    [
      "session_id missing before v1.7",
      (d) => {
        delete d.session_id;
      },
      "session_id",
      /optional only since ATIF-v1.7; this is ATIF-v1.6/,
    ],
    [
      "steps empty",
      (d) => {
        d.steps = [];
      },
      "steps",
      /at least one step/,
    ],
    [
      "steps an object",
      (d) => {
        d.steps = { 1: {} };
      },
      "steps",
      /expected an array of steps, got an object/,
    ],
    [
      "final_metrics an array",
      (d) => {
        d.final_metrics = [];
      },
      "final_metrics",
      /expected an object, got an array/,
    ],
    [
      "no environment turn",
      (d) => {
        d.steps = d.steps.slice(0, 1);
      },
      "steps",
      /no agent tool call with an observation/,
    ],
  ];
  for (const [name, mutate, field, reason] of cases) {
    it(name, async () => {
      const doc = structuredClone(base);
      mutate(doc);
      const path = join(tempDir("atif-bad-"), "trajectory.json");
      writeFileSync(path, JSON.stringify(doc, null, 2));
      const items = await read(path);
      expect(items).toHaveLength(1);
      const item = items[0];
      if (item?.kind !== "quarantine") throw new Error(`expected a quarantine entry, got ${JSON.stringify(item).slice(0, 200)}`);
      expect(item.entry.field).toBe(field);
      expect(item.entry.reason).toMatch(reason);
      expect(item.entry.reason.startsWith(`${field}: `)).toBe(true);
      expect(item.entry.stage).toBe("read");
      expect(item.entry.source).toEqual({ uri: path, format: "atif" });
    });
  }

  it("session_id may be absent since v1.7 (the id is then trajectory_id)", async () => {
    const doc = structuredClone(base);
    doc.schema_version = "ATIF-v1.7";
    delete doc.session_id;
    doc.trajectory_id = "doc-1";
    const path = join(tempDir("atif-v17-"), "trajectory.json");
    writeFileSync(path, JSON.stringify(doc));
    expect((await readOne(path)).id).toBe("doc-1");
  });

  it("a truncated document, a JSON array and text are one quarantine entry each", async () => {
    const dir = tempDir("atif-broken-");
    const text = readFileSync(TERMINUS, "utf8");
    const files: [string, string, RegExp][] = [
      ["truncated.json", text.slice(0, Math.floor(text.length / 2)), /invalid JSON/],
      ["array.json", "[1, 2]", /expected a JSON object \(an ATIF trajectory\), got an array/],
      ["text.json", "not json at all", /invalid JSON/],
    ];
    for (const [name, content, reason] of files) {
      writeFileSync(join(dir, name), content);
      const items = await read(join(dir, name));
      expect(items, name).toHaveLength(1);
      expect(items[0]?.kind, name).toBe("quarantine");
      if (items[0]?.kind === "quarantine") expect(items[0].entry.reason, name).toMatch(reason);
    }
  });

  it("an embedded subagent without trajectory_id is quarantined on its own, the root still read", async () => {
    const doc = JSON.parse(readFileSync(MULTIMODAL, "utf8"));
    delete doc.subagent_trajectories[0].trajectory_id;
    const path = join(tempDir("atif-sub-"), "doc.json");
    writeFileSync(path, JSON.stringify(doc));
    const items = await read(path);
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "quarantine"]);
    const entry = (items[1] as Extract<ReadItem, { kind: "quarantine" }>).entry;
    expect(entry.field).toBe("subagent_trajectories.0.trajectory_id");
  });

  it("knows the versions Harbor's models accept", () => {
    expect(ATIF_VERSIONS).toEqual([
      "ATIF-v1.0",
      "ATIF-v1.1",
      "ATIF-v1.2",
      "ATIF-v1.3",
      "ATIF-v1.4",
      "ATIF-v1.5",
      "ATIF-v1.6",
      "ATIF-v1.7",
      "ATIF-v1.8",
    ]);
  });
});

describe("ATIF: a file of several trajectories (JSONL, a JSON array)", () => {
  /** A small trajectory written from the RFC: the user's task, one agent step with one answered call. */
  const doc = (session: string, output = "hello.txt") => ({
    schema_version: "ATIF-v1.4",
    session_id: session,
    agent: { name: "harbor-agent", version: "1.0.0" },
    steps: [
      { step_id: 1, source: "user", message: "List the files." },
      {
        step_id: 2,
        source: "agent",
        message: "",
        tool_calls: [{ tool_call_id: "call_1", function_name: "bash", arguments: { command: "ls" } }],
        observation: { results: [{ source_call_id: "call_1", content: output }] },
      },
    ],
  });
  const summary = (items: ReadItem[]) =>
    items.map((item) =>
      item.kind === "trajectory"
        ? [item.trajectory.id, item.trajectory.source.line ?? item.trajectory.source.row, item.trajectory.turns.map((t) => t.observation)]
        : item.kind === "quarantine"
          ? ["quarantine", item.entry.source.line ?? item.entry.source.row, item.entry.field]
          : [item.kind],
    );

  it("JSONL: one trajectory per line, each with its line; a bad line is quarantined alone", async () => {
    const path = join(tempDir("atif-jsonl-"), "trajectories.jsonl");
    const bad = { ...doc("s-2"), schema_version: "ATIF-v9.9" };
    writeFileSync(path, `${[doc("s-1"), bad, doc("s-3", "b.txt")].map((d) => JSON.stringify(d)).join("\n")}\n`);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("atif");
    expect(summary(await read(path))).toEqual([
      ["s-1", 1, ["hello.txt"]],
      ["quarantine", 2, "schema_version"],
      ["s-3", 3, ["b.txt"]],
    ]);
  });

  it("JSONL whose first line is longer than the head detection reads", async () => {
    const path = join(tempDir("atif-jsonl-long-"), "trajectories.jsonl");
    const long = "x".repeat(100_000);
    writeFileSync(path, `${JSON.stringify(doc("s-1", long))}\n${JSON.stringify(doc("s-2"))}\n`);
    expect(summary(await read(path))).toEqual([
      ["s-1", 1, [long]],
      ["s-2", 2, ["hello.txt"]],
    ]);
  });

  it("a pretty-printed JSON array of trajectories is detected as atif and read element by element", async () => {
    const path = join(tempDir("atif-array-"), "trajectories.json");
    writeFileSync(path, JSON.stringify([doc("s-1"), doc("s-2", "b.txt")], null, 2));
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("atif");
    expect(summary(await read(path))).toEqual([
      ["s-1", 0, ["hello.txt"]],
      ["s-2", 1, ["b.txt"]],
    ]);
  });

  it("a single compact trajectory on one line (and blank lines after it) is still one document", async () => {
    const path = join(tempDir("atif-one-line-"), "trajectory.json");
    writeFileSync(path, `${JSON.stringify(doc("s-1", "y".repeat(100_000)))}\n\n`);
    const items = await read(path);
    expect(items.map((item) => item.kind)).toEqual(["trajectory"]);
  });
});

describe("ATIF: detection", () => {
  const OWN = [TERMINUS, SWE, MULTIMODAL];

  it("sniffs its fixtures (pretty-printed and on one line) and no existing reader claims them", async () => {
    const dir = tempDir("atif-sniff-");
    const oneLine = join(dir, "one-line.json");
    writeFileSync(oneLine, JSON.stringify(JSON.parse(readFileSync(SWE, "utf8"))));
    // The version after long steps: the steps' shape still tells.
    const late = JSON.parse(readFileSync(TERMINUS, "utf8"));
    const reordered = join(dir, "late-version.json");
    writeFileSync(
      reordered,
      JSON.stringify({ steps: late.steps, agent: late.agent, session_id: "s", schema_version: late.schema_version }),
    );
    for (const file of [...OWN, oneLine, reordered]) {
      const head = await readHead(file);
      expect(atifReader.sniff(head, file), file).toBe(true);
      expect(READERS.find((reader) => reader.name !== "atif" && reader.sniff(head, file))?.name, file).toBeUndefined();
    }
  });

  it("does not claim the other readers' fixtures, the demo data or a Harbor result.json", async () => {
    const files = globSync(["data/demo/**/*", "test/fixtures/**/*"], {
      cwd: ROOT,
      absolute: true,
      onlyFiles: true,
      // The fuzz crashers of this reader are mutated ATIF files, some still ATIF-shaped.
      ignore: [
        "**/*.md",
        "test/fixtures/handmade/atif/**/trajectory.json",
        "test/fixtures/handmade/atif/*.json",
        "test/fixtures/fuzz-crashers/atif/**",
      ],
    });
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) expect(atifReader.sniff(await readHead(file), file), file).toBe(false);
  });
});

describeThirdParty("ATIF: shared samples (harbor goldens, OpenAgents qa-runner)", () => {
  const sample = (name: string) => thirdParty("formats-2026/atif", name);

  it("Terminus-2 golden (v1.6): one command turn, the parse failure and task_complete steps are not turns", async () => {
    const t = await readOne(sample("daydream__harbor-golden__terminus2__hello-world-invalid-json.trajectory.json"));
    expect(t.id).toBe("NORMALIZED_SESSION_ID");
    expect(t.domain).toBe("terminal");
    expect(t.task).toBe('Create a file called hello.txt with "Hello, world!" as the content.');
    // printf printed nothing and the fake run captured no next prompt.
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([["printf 'Hello, world!\\n' > hello.txt", "[no output]"]]);
    expect(t.meta).toMatchObject({
      agent: "terminus-2",
      model: "openai/gpt-4o",
      skipped: { agent_step_without_tool_calls: 1, control_call: 2 },
    });
    expectCleanTurns(t);
  });

  it("OpenHands golden (v1.5): the editor call and its linked result; finish is control", async () => {
    const t = await readOne(sample("daydream__harbor-golden__openhands__hello-world.trajectory.json"));
    expect(t.turns).toHaveLength(1);
    expect(JSON.parse(t.turns[0]?.action as string)).toEqual({
      name: "str_replace_editor",
      arguments: { command: "create", path: "/app/hello.txt", file_text: "Hello, world!", security_risk: "LOW" },
    });
    expect(t.turns[0]?.observation).toBe("File created successfully at: /app/hello.txt");
    expect(t.meta?.skipped).toEqual({ system_step: 2, control_call: 1 });
    expectCleanTurns(t);
  });

  it("OpenAgents qa-runner (v1.7): browser tools make a web trajectory, id from trajectory_id", async () => {
    const t = await readOne(sample("openagents__qa-runner__login-trace.trajectory.json"));
    expect(t.id).toBe("login-trace-trajectory");
    expect(t.domain).toBe("web");
    expect(t.turns.map((turn) => turn.observation)).toEqual([
      "ok: navigate to /login",
      'ok: wait for {"kind":"text-visible","value":"Log in to OpenAgents"}',
      "ok: Login page shows 'Log in to OpenAgents'",
      "ok: URL still includes /login",
      "ok: screenshot login-page",
    ]);
    expect(t.meta).toMatchObject({ agent: "openagents-qa-runner", model: "openagents/khala", atif: { session_id: "login-trace" } });
    expectCleanTurns(t);
  });

  it("the deliberately invalid one is quarantined naming steps.1.step_id", async () => {
    const items = await read(sample("daydream__invalid__non-sequential-step-id.json"));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      kind: "quarantine",
      entry: {
        id: "test-non-sequential-step-id",
        field: "steps.1.step_id",
        reason: "steps.1.step_id: expected 2 (step ids are sequential from 1), got 3",
      },
    });
  });

  it("every sample is sniffed as ATIF, and no existing reader claims one first", async () => {
    for (const name of [
      "daydream__harbor-golden__terminus2__hello-world-invalid-json.trajectory.json",
      "daydream__harbor-golden__openhands__hello-world.trajectory.json",
      "openagents__qa-runner__login-trace.trajectory.json",
      "daydream__invalid__non-sequential-step-id.json",
    ]) {
      const head = await readHead(sample(name));
      expect(atifReader.sniff(head, sample(name)), name).toBe(true);
      expect(READERS.find((reader) => reader.name !== "atif" && reader.sniff(head, name))?.name, name).toBeUndefined();
    }
  });
});
