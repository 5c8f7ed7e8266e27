/**
 * Issue 21, point 7: terminal-bench `tb run` directories read as trajectories, one per trial, the
 * task id and the test outcome in meta. The run under test/fixtures/terminal-bench/ was recorded
 * here the way terminal-bench's harness makes one (tmux, `asciinema rec --stdin`, pytest; see
 * test/fixtures/terminal-bench/record-run.ts and test/fixtures/PROVENANCE.md).
 */
import { execFile, spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { planJob } from "../src/pipeline/plan.ts";
import type { ReaderOptions } from "../src/read/reader.ts";
import { detectFormat, readHead } from "../src/read/registry.ts";
import { parsePyKeys, terminalBenchReader } from "../src/read/terminal-bench.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";

const run = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const RUN = join(ROOT, "test/fixtures/terminal-bench/2026-01-15__12-00-00");
const OPTIONS: ReaderOptions = { maxLineBytes: 64 << 20 };
const TASKS = ["count-errors", "fix-permissions", "hello-world"];
const trialDir = (task: string, run = RUN) => join(run, task, `${task}.1-of-1.2026-01-15__12-00-00`);
const PYTHON = existsSync(join(ROOT, ".venv/bin/python")) ? join(ROOT, ".venv/bin/python") : "python3";

async function readTrial(path: string): Promise<Trajectory> {
  const items = await collect(terminalBenchReader.read(path, OPTIONS));
  expect(items).toHaveLength(1);
  const item = items[0];
  if (item?.kind !== "trajectory") throw new Error(`quarantined: ${JSON.stringify(item)}`);
  return item.trajectory;
}

/** commands.txt as Python itself reads it (ast.literal_eval): the reference for the reader's parser. */
function pythonKeys(path: string): (string | string[])[] {
  const script = "import ast, json, sys\nprint(json.dumps([ast.literal_eval(l) for l in open(sys.argv[1]) if l.strip()]))";
  const result = spawnSync(PYTHON, ["-c", script, path], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${PYTHON}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The pytest short summary of the test pane, read independently of the harness's parser_results. */
function pytestSummary(pane: string): Record<string, string> {
  const summary = pane.split(/=+ short test summary info =+/)[1] ?? "";
  return Object.fromEntries([...summary.matchAll(/^(PASSED|FAILED) \S+::(\w+)/gm)].map((m) => [m[2], (m[1] as string).toLowerCase()]));
}

describe("terminal-bench trials", () => {
  it("commands.txt parses as Python's ast.literal_eval reads it", () => {
    for (const task of TASKS) {
      const path = join(trialDir(task), "commands.txt");
      const reference = pythonKeys(path);
      const ours = readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => {
          const keys = parsePyKeys(line);
          return keys?.list ? keys.keys : keys?.keys[0];
        });
      expect(ours, task).toEqual(reference);
    }
    // Escapes CPython writes: quotes picked by content, \\n \\t \\x1b \\u2713, backslashes.
    for (const value of ["it's", 'say "hi"', "both ' and \"", "tab\tesc\u001b ✓ \\ end\n", "\u0007\u00ff\u2028"]) {
      const result = spawnSync(PYTHON, ["-c", "import sys; print(repr(sys.argv[1]))", value], { encoding: "utf8" });
      expect(parsePyKeys(result.stdout.trimEnd())?.keys, value).toEqual([value]);
    }
  });

  it("one trajectory per trial: the agent's commands as actions, the test outcome in meta", async () => {
    for (const task of TASKS) {
      const dir = trialDir(task);
      const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
      const trajectory = await readTrial(join(dir, "results.json"));
      expect(trajectory.id).toBe(results.trial_name);
      expect(trajectory.domain).toBe("terminal");
      expect(trajectory.task).toBe(results.instruction);
      expect(trajectory.source).toEqual({ uri: join(dir, "results.json"), format: "terminal-bench" });
      const tests = pytestSummary(readFileSync(join(dir, "panes/post-test.txt"), "utf8"));
      const passed = Object.values(tests).filter((s) => s === "passed").length;
      expect(trajectory.meta?.terminal_bench).toMatchObject({
        task_id: task,
        trial_name: results.trial_name,
        is_resolved: passed === Object.keys(tests).length,
        failure_mode: task === "fix-permissions" ? "agent_timeout" : "unset",
        parser_results: tests,
        tests: { total: Object.keys(tests).length, passed, failed: Object.keys(tests).length - passed },
        run_id: "2026-01-15__12-00-00",
        agent: "terminus-2",
      });
      // The agent's keystrokes: the str entries of commands.txt (the harness sends lists).
      const agent = pythonKeys(join(dir, "commands.txt"))
        .filter((keys): keys is string => typeof keys === "string")
        .map((keys) => keys.replace(/\n$/, ""));
      if (task === "fix-permissions") {
        // disable_asciinema: no cast; a turn per command, found by its echo in the pane after the agent
        // (issue 34: the echo is not observed; it used to be one turn of all the commands → the whole pane).
        expect(existsSync(join(dir, "sessions/agent.cast"))).toBe(false);
        expect(trajectory.turns.map((t) => t.action)).toEqual(agent);
        expect(trajectory.meta?.terminal_bench).toMatchObject({ turns_from: "commands.txt + panes" });
        expect(trajectory.initialObservation).toBe(readFileSync(join(dir, "panes/pre-agent.txt"), "utf8").trimEnd());
        expect(trajectory.turns.map((t) => t.observation)).toEqual([
          "-rw-r--r-- 1 root root 26 Nov 25 19:23 run.sh\nroot@4f2c9a7e1b3d:/app#",
          "root@4f2c9a7e1b3d:/app#",
          "",
        ]);
      } else {
        // The harness's `clear` and the `; tmux wait -S done` of blocking commands are not the agent's.
        expect(trajectory.turns.map((t) => t.action)).toEqual(agent);
        expect(trajectory.meta?.terminal_bench).toMatchObject({ turns_from: "agent.cast" });
      }
    }
  });

  it("outcome, agent, model, task and attempt: what results.json and run_metadata.json record, nothing more", async () => {
    const runMeta = JSON.parse(readFileSync(join(RUN, "run_metadata.json"), "utf8"));
    for (const task of TASKS) {
      const results = JSON.parse(readFileSync(join(trialDir(task), "results.json"), "utf8"));
      const { meta = {} } = await readTrial(join(trialDir(task), "results.json"));
      expect({ outcome: meta.outcome, agent: meta.agent, model: meta.model, task_id: meta.task_id, attempt: meta.attempt }, task).toEqual({
        // failure_mode "unset" (FailureMode.UNSET: nothing failed) is not an outcome.
        outcome: task === "fix-permissions" ? { resolved: false, failure_mode: "agent_timeout" } : { resolved: task === "hello-world" },
        agent: "terminus-2",
        model: "scripted (no model)",
        task_id: task,
        attempt: `${task}.1-of-1.2026-01-15__12-00-00`,
      });
      expect(meta.outcome).toEqual(
        results.failure_mode === "unset"
          ? { resolved: results.is_resolved }
          : { resolved: results.is_resolved, failure_mode: results.failure_mode },
      );
      expect([meta.agent, meta.model]).toEqual([runMeta.agent_name, runMeta.model_name]);
    }
    // A trial alone (no run_metadata.json two folders up), is_resolved null, failure_mode "none": only task and attempt.
    const dir = tempDir();
    cpSync(trialDir("hello-world"), join(dir, "trial"), { recursive: true });
    const results = JSON.parse(readFileSync(join(dir, "trial/results.json"), "utf8"));
    writeFileSync(join(dir, "trial/results.json"), JSON.stringify({ ...results, is_resolved: null, failure_mode: "none" }));
    const alone = await readTrial(join(dir, "trial/results.json"));
    expect(["outcome", "agent", "model"].filter((key) => key in (alone.meta ?? {}))).toEqual([]);
    expect(alone.meta).toMatchObject({ task_id: "hello-world", attempt: results.trial_name });
    // A failure without a verdict (the tests never ran) is kept as it is.
    writeFileSync(join(dir, "trial/results.json"), JSON.stringify({ ...results, is_resolved: null, failure_mode: "test_timeout" }));
    expect((await readTrial(join(dir, "trial/results.json"))).meta?.outcome).toEqual({ failure_mode: "test_timeout" });
  });

  it("an output-only cast gets its actions from commands.txt, episode by episode, by its markers", async () => {
    const dir = tempDir();
    cpSync(RUN, join(dir, "run"), { recursive: true });
    const trial = trialDir("count-errors", join(dir, "run"));
    const cast = join(trial, "sessions/agent.cast");
    const [header, ...events] = readFileSync(cast, "utf8").trimEnd().split("\n");
    writeFileSync(cast, `${[header, ...events.filter((line) => !line.includes('"i"'))].join("\n")}\n`);
    const trajectory = await readTrial(join(trial, "results.json"));
    expect(trajectory.meta?.split).toBe("markers");
    // One turn per command (issue 34), each command's echo found in its episode's output.
    expect(trajectory.turns.map((t) => t.action)).toEqual(["grep ERROR app.log", "grep -c ERROR app.log > errors.txt", "cat errors.txt"]);
    expect(trajectory.meta?.terminal_bench).toMatchObject({ turns_from: "agent.cast markers + commands.txt" });
  });

  it("quarantines a trial it cannot read, naming the field or the missing file", async () => {
    const dir = tempDir();
    cpSync(RUN, join(dir, "run"), { recursive: true });
    const trial = trialDir("fix-permissions", join(dir, "run"));
    const results = JSON.parse(readFileSync(join(trial, "results.json"), "utf8"));
    writeFileSync(join(trial, "results.json"), JSON.stringify({ ...results, instruction: 42 }));
    const [bad] = await collect(terminalBenchReader.read(join(trial, "results.json"), OPTIONS));
    expect(bad).toMatchObject({
      kind: "quarantine",
      entry: { stage: "read", field: "instruction", reason: "instruction: expected a string, got a number" },
    });
    writeFileSync(join(trial, "results.json"), JSON.stringify(results));
    renameSync(join(trial, "panes/post-agent.txt"), join(trial, "panes/post-agent.txt.gone"));
    const [missing] = await collect(terminalBenchReader.read(join(trial, "results.json"), OPTIONS));
    expect(missing).toMatchObject({
      kind: "quarantine",
      entry: { id: results.trial_name, reason: expect.stringContaining("no sessions/agent.cast and no panes/post-agent.txt") },
    });
    // A recording_path outside the run's output folder is never opened.
    const other = trialDir("hello-world", join(dir, "run"));
    renameSync(join(other, "sessions/agent.cast"), join(dir, "run/elsewhere.cast"));
    const hello = JSON.parse(readFileSync(join(other, "results.json"), "utf8"));
    writeFileSync(join(other, "results.json"), JSON.stringify({ ...hello, recording_path: "../../elsewhere.cast" }));
    const fallback = await readTrial(join(other, "results.json"));
    expect(fallback.meta?.terminal_bench).toMatchObject({ turns_from: "commands.txt + panes" });
  });
});

describe("terminal-bench run directories as inputs", () => {
  it("are detected from content: a trial's results.json, and the run's (even past the 64 KiB head)", async () => {
    for (const task of TASKS) expect((await detectFormat(join(trialDir(task), "results.json"))).kind).toBe("format");
    const trial = await detectFormat(join(trialDir("hello-world"), "results.json"));
    expect(trial.kind === "format" && trial.reader.name).toBe("terminal-bench");
    const runLevel = await detectFormat(join(RUN, "results.json"));
    expect(runLevel.kind === "format" && runLevel.reader.name).toBe("terminal-bench");
    const dir = tempDir();
    const results = JSON.parse(readFileSync(join(trialDir("hello-world"), "results.json"), "utf8"));
    const long = join(dir, "results.json");
    writeFileSync(long, JSON.stringify({ ...results, instruction: "x".repeat(100_000) }, null, 4));
    expect((await readHead(long)).length).toBeLessThan(100_000);
    const detected = await detectFormat(long);
    expect(detected.kind === "format" && detected.reader.name).toBe("terminal-bench");
    // Other JSON with a trial_name is not a trial (harbor's result.json has no instruction/task_id pair).
    writeFileSync(join(dir, "harbor.json"), JSON.stringify({ id: "x", trial_name: "t", task_name: "hello", verifier_result: {} }));
    expect((await detectFormat(join(dir, "harbor.json"))).kind).toBe("unrecognized");
  });

  it("a glob over the whole run reads each trial once; its other files are covered, not quarantined", async () => {
    const dir = tempDir();
    for (const input of [RUN, `${RUN}/**/*`]) {
      const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${input}\n`, dir)));
      expect(plan.files.map((f) => [f.path, f.reader.name])).toEqual(
        TASKS.map((task) => [join(trialDir(task), "results.json"), "terminal-bench"]),
      );
      // Every other file of the run is accounted for: covered by a trial, or (the run's results.json) standing for them.
      const all = readdirSync(RUN, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name));
      expect([...plan.files.map((f) => f.path), ...plan.covered.map((c) => c.path)].sort()).toEqual(all.sort());
      expect(plan.covered.find((c) => c.path === join(RUN, "results.json"))?.kind).toBe("stands-for");
      expect(plan.covered.find((c) => c.path.endsWith("hello-world.1-of-1.2026-01-15__12-00-00/sessions/agent.cast"))).toMatchObject({
        kind: "companion",
        by: join(trialDir("hello-world"), "results.json"),
      });
      // A trial is sized by everything read for it, so the task cut stays balanced.
      const hello = plan.files.find((f) => f.path.includes("hello-world"));
      expect(hello?.bytes).toBeGreaterThan(readFileSync(join(trialDir("hello-world"), "sessions/agent.cast")).length);
    }
    // The run's results.json alone stands for its trials.
    const index = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${RUN}/results.json\n`, dir)));
    expect(index.files.map((f) => f.path)).toEqual(TASKS.map((task) => join(trialDir(task), "results.json")));
    // Casts alone are plain recordings.
    const casts = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${RUN}/*/*/sessions/agent.cast\n`, dir)));
    expect(casts.files.map((f) => f.reader.name)).toEqual(["asciicast", "asciicast"]);
  });

  it("run makes one sample per trial whose observations show no harness command; validate lists the covered files", async () => {
    const dir = tempDir();
    const config = writeConfig("inputs:\n  - path: run\noutput:\n  dir: out\n  num_buckets: 1\n  include_messages: true\n", dir);
    cpSync(RUN, join(dir, "run"), { recursive: true });
    const { stdout } = await run(process.execPath, [CLI, "run", config, "--progress", "none"], { cwd: dir, encoding: "utf8" });
    expect(stdout).toContain("records in    3\n  samples out   3\n  quarantined   0");
    expect(stdout).toContain("covered       32 file(s) read with another input's record");
    const manifest = JSON.parse(readFileSync(join(dir, "out/manifest.json"), "utf8"));
    expect(manifest.domains.terminal.samples).toBe(3);
    const check = spawnSync(
      PYTHON,
      [
        "-c",
        "import json,sys,glob\nimport pyarrow.parquet as pq\nrows=[r for f in sorted(glob.glob(sys.argv[1]+'/data/*.parquet')) for r in pq.read_table(f).to_pylist()]\nprint(json.dumps({r['id']:[m['content'] for m in r['messages']] for r in rows}))",
        join(dir, "out"),
      ],
      { encoding: "utf8" },
    );
    if (check.status === 0) {
      const messages: Record<string, string[]> = JSON.parse(check.stdout);
      expect(Object.keys(messages).sort()).toEqual(TASKS.map((task) => `${task}.1-of-1.2026-01-15__12-00-00`));
      const count = messages["count-errors.1-of-1.2026-01-15__12-00-00"] ?? [];
      expect(count[1]).toBe("grep ERROR app.log");
      expect(count[2]).toContain("2026-01-15 12:03:40 ERROR disk quota exceeded");
      for (const contents of Object.values(messages)) for (const content of contents) expect(content).not.toContain("tmux wait");
    } else if (process.env.CI) throw new Error(`pyarrow is needed to read the shards: ${check.stderr}`);
    const validate = await run(process.execPath, [CLI, "validate", config], { cwd: dir, encoding: "utf8" });
    expect(validate.stdout).toContain("covered      32 file(s) the inputs matched are read with another input, not on their own:");
    expect(validate.stdout).toContain("  run/results.json  (stands for 3 file(s) read instead (terminal-bench))");
    expect(validate.stdout).toMatch(
      / {2}run\/hello-world\/hello-world\.1-of-1\.2026-01-15__12-00-00: agent-logs\/episode-0\/response\.txt, /,
    );
  });
});
