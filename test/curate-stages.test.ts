import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { FilteredEntry } from "../src/curate/filtered-entry.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { snapshot } from "./scale-helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

/** A terminal session's text with the volatile parts a rerun changes given as arguments. */
function session(v: { time: string; pid: number; tmp: string; port: number; took: string; sha: string }, edit = (s: string) => s) {
  const listing = Array.from(
    { length: 14 },
    (_, i) => `-rw-r--r-- 1 dev dev ${1200 + i * 37} Jan 12 09:1${i % 10} module_${String.fromCharCode(97 + i)}.py`,
  ).join("\n");
  const report = edit(
    "collected 12 items\n\ntests/test_parser.py ........F...\n\nFAILED tests/test_parser.py::test_quoted_fields - AssertionError: expected three fields for the quoted input but the splitter returned four because the embedded comma inside quotes was treated as a separator\n" +
      "The parser walks the line one character at a time and toggles an in_quotes flag whenever it meets a double quote, yet the branch that handles escaped quotes resets the flag too early so the comma after the escaped quote ends the field",
  );
  return [
    { action: "ls -la", observation: `total 96\n${listing}` },
    { action: "date; echo pid=$$", observation: `${v.time}\npid=${v.pid}` },
    { action: "python -m pytest -q", observation: `${report}\n1 failed, 11 passed in ${v.took}` },
    { action: "mktemp -d && git rev-parse HEAD", observation: `${v.tmp}\n${v.sha}` },
    { action: "curl -s localhost:8000/health", observation: `server on 127.0.0.1:${v.port} healthy (pid ${v.pid})` },
    {
      action: "sed -n 1,12p parser.py",
      observation: edit(
        "def split_fields(line, sep=','):\n    fields, current, in_quotes = [], [], False\n    for ch in line:\n        if ch == '\"':\n            in_quotes = not in_quotes\n        elif ch == sep and not in_quotes:\n            fields.append(''.join(current))\n            current = []\n        else:\n            current.append(ch)\n    fields.append(''.join(current))\n    return fields",
      ),
    },
  ];
}

/** Shares the first turn (a long `ls -la`) with the session, and nothing else. */
function sameBoilerplate(topic: string) {
  const base = session({ time: "2026-03-01T08:00:00Z", pid: 1, tmp: "/tmp/tmp.x", port: 1, took: "1s", sha: "0" })[0] as {
    action: string;
    observation: string;
  };
  return [
    base,
    {
      action: `grep -rn ${topic} src/`,
      observation: `src/${topic}/core.py:14: def ${topic}_entry(config):\nsrc/${topic}/core.py:52:     return ${topic}_table.lookup(config.key, default=None)\nsrc/${topic}/cli.py:8: from .core import ${topic}_entry as run_${topic}\nsrc/${topic}/cli.py:31:     parser.add_argument("--${topic}-mode", choices=["fast", "safe", "audit"])`,
    },
    {
      action: `python -c 'import ${topic}; print(${topic}.__version__)'`,
      observation: `Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nModuleNotFoundError: No module named '${topic}' because the package ${topic} was never installed into this environment, only vendored`,
    },
  ];
}

function line(id: string, turns: unknown[]): string {
  return `${JSON.stringify({ id, domain: "terminal", turns })}\n`;
}

async function run(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 32 << 20 });
}

function filtered(out: string): FilteredEntry[] {
  return readdirSync(join(out, "filtered"))
    .sort()
    .flatMap((name) =>
      readFileSync(join(out, "filtered", name), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as FilteredEntry),
    );
}

async function rows(out: string) {
  const all = [];
  for (const name of readdirSync(join(out, "data")).sort()) {
    const shard = await openShard(join(out, "data", name));
    for (let i = 0; i < shard.numRows; i++) all.push(shardRow(shard, i));
  }
  return all;
}

const original = { time: "2026-01-12T09:14:03Z", pid: 4242, tmp: "/tmp/tmp.Qx81bZ", port: 8000, took: "0.41s", sha: "9f1c2e7ab33d" };

/** Two files: an original, its exact copy (a rerun) and a near copy in the other file, and two hard negatives. */
function writeCopiesJob(dir: string): string {
  const rerun = { time: "2026-02-03T17:02:55Z", pid: 977, tmp: "/tmp/tmp.k2PPa0", port: 8001, took: "0.38s", sha: "4be0c1d99a02" };
  const third = { time: "2026-02-04T11:30:00Z", pid: 31337, tmp: "/tmp/tmp.ZZ1290", port: 8002, took: "0.52s", sha: "aa01bb02cc03" };
  writeFileSync(join(dir, "a.jsonl"), line("original", session(original)) + line("negative-1", sameBoilerplate("billing")));
  writeFileSync(
    join(dir, "b.jsonl"),
    line("rerun", session(rerun)) +
      // One word of the long report changed, one added: a near copy, not an exact one.
      line(
        "edited",
        session(third, (s) => s.replace("character at a time", "character at each step").replace("toggles", "simply toggles")),
      ) +
      line("negative-2", sameBoilerplate("shipping")),
  );
  const config = join(dir, "job.yaml");
  // Small tasks: each file is its own task, so the copies are in another task than the original.
  writeFileSync(
    config,
    `inputs:\n  - path: ${dir}/*.jsonl\ninput:\n  task_bytes: 1000\ndedup:\n  exact: true\n  near: true\noutput:\n  dir: ${dir}/out\n  include_messages: true\nmask:\n  policy: all-observations\n`,
  );
  return config;
}

describe("curation stages", () => {
  it("removes exact and near copies across files and tasks, keeps hard negatives, and leaves volatile text as it was", async () => {
    const dir = tempDir();
    const config = writeCopiesJob(dir);
    const out = join(dir, "out");
    const { stdout } = await run(["run", config, "--workers", "1", "--progress", "none"]);
    expect(stdout).toContain("filtered      2  (exact: 1, near: 1)");

    const removed = filtered(out);
    expect(removed.map((e) => [e.id, e.stage, e.kept_id])).toEqual([
      ["rerun", "exact", "original"],
      ["edited", "near", "original"],
    ]);
    for (const entry of removed) {
      // A record is named by line, or by offset inside a byte-range task.
      expect(entry.source).toMatch(/b\.jsonl[:@]\d+$/);
      expect(entry.kept_source).toMatch(/a\.jsonl(:1|@0)$/);
      expect(entry.reason).toContain("original");
    }
    const written = await rows(out);
    expect(written.map((r) => r.id).sort()).toEqual(["negative-1", "negative-2", "original"]);
    // Canonicalization is for hashing only: the kept record's text is what the environment printed.
    const kept = written.find((r) => r.id === "original");
    const text = kept?.messages?.map((m) => m.content).join("\n") ?? "";
    for (const value of [original.time, String(original.pid), original.tmp, original.sha, "127.0.0.1:8000", "0.41s"])
      expect(text).toContain(value);

    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;
    expect(manifest.counts).toMatchObject({
      records_in: 5,
      samples_out: 3,
      quarantined: 0,
      filtered: 2,
      filtered_by_stage: { exact: 1, near: 1 },
    });
    expect(manifest.curation?.by_domain).toEqual({ terminal: { exact: 1, near: 1 } });
    expect(manifest.curation?.clusters).toEqual({ count: 1, records: 3, largest: 3, sizes: { "3": 1 } });
    const files = manifest.curation?.files ?? [];
    expect(files.reduce((sum, f) => sum + f.entries, 0)).toBe(2);
    for (const file of files) expect(readFileSync(join(out, file.path), "utf8").split("\n").length - 1).toBe(file.entries);
  });

  it("decontaminates against an AgentWorldBench file: whole episodes and suffixes go, boilerplate alone stays; mask keeps the record without loss on the matched turns", async () => {
    const dir = tempDir();
    const system = "You are a world model of a Linux terminal. Predict the exact output of each command.";
    const episode = session({ time: "2025-12-24T10:00:00Z", pid: 77, tmp: "/tmp/tmp.AAAA11", port: 9000, took: "0.2s", sha: "c0ffee12aa" });
    // AgentWorldBench: one row per evaluated turn, the history in prompt[], observations in response[].
    const rows_ = episode.map((_, t) => ({
      task: "terminal",
      id: "awb-terminal-7",
      prompt: episode.slice(0, t + 1).map((turn, i) => `### Turn ${i + 1}\n**Action:**\n${turn.action}`),
      response: episode.slice(0, t + 1).map((turn) => `**Environment Observation:**\n${turn.observation}`),
      system_str: system,
      turn_idx: t + 1,
      total_turns: episode.length,
    }));
    const benchmark = join(dir, "terminal_test.jsonl");
    writeFileSync(benchmark, rows_.map((r) => JSON.stringify(r)).join("\n"));
    const fresh = sameBoilerplate("ledger").slice(1);
    writeFileSync(
      join(dir, "train.jsonl"),
      line("leaked-whole", episode) +
        // A new trajectory that ends with the benchmark's last two turns.
        line("leaked-suffix", [...fresh, ...episode.slice(2)]) +
        line("shares-ls-only", sameBoilerplate("ledger")),
    );
    const config = (action: string) => {
      const path = join(dir, `job-${action}.yaml`);
      writeFileSync(
        path,
        `inputs:\n  - path: ${dir}/train.jsonl\ndecontaminate:\n  action: ${action}\noutput:\n  dir: ${dir}/out-${action}\n  include_messages: true\nmask:\n  policy: all-observations\n`,
      );
      return path;
    };
    await run(["run", config("remove"), "--benchmark", benchmark, "--workers", "1", "--progress", "none"]);
    const removed = filtered(join(dir, "out-remove"));
    expect(removed.map((e) => [e.id, e.stage, e.benchmark, e.benchmark_id])).toEqual([
      ["leaked-whole", "decontaminate", "terminal_test.jsonl", "awb-terminal-7"],
      ["leaked-suffix", "decontaminate", "terminal_test.jsonl", "awb-terminal-7"],
    ]);
    // The suffix's turns that are long enough to compare (the pytest report and the source listing).
    expect(removed[1]?.turns).toEqual([fresh.length, fresh.length + 3]);
    expect((await rows(join(dir, "out-remove"))).map((r) => r.id)).toEqual(["shares-ls-only"]);
    const manifest = JSON.parse(readFileSync(join(dir, "out-remove/manifest.json"), "utf8")) as Manifest;
    expect(manifest.curation?.settings.decontaminate.benchmarks).toEqual([
      { path: "terminal_test.jsonl", format: "agentworldbench-jsonl", episodes: 1 },
    ]);

    await run(["run", config("mask"), "--benchmark", benchmark, "--workers", "1", "--progress", "none"]);
    expect(readdirSync(join(dir, "out-mask"))).not.toContain("filtered");
    const masked = await rows(join(dir, "out-mask"));
    const suffix = masked.find((r) => r.id === "leaked-suffix");
    const assistant = (suffix?.messages ?? []).filter((m) => m.role === "assistant").map((m) => m.loss);
    expect(assistant).toEqual([true, true, false, true, true, false]);
    const manifestMask = JSON.parse(readFileSync(join(dir, "out-mask/manifest.json"), "utf8")) as Manifest;
    expect(manifestMask.curation?.masked).toEqual({ records: 2, turns: 5 });
  });

  it("a benchmark row that cannot be read stops the job, naming the file, line and field", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "train.jsonl"), line("one", session({ time: "x", pid: 1, tmp: "/tmp/a", port: 1, took: "1s", sha: "0" })));
    const good = {
      task: "terminal",
      id: "awb-1",
      prompt: ["### Turn 1\n**Action:**\nls"],
      response: ["a b"],
      system_str: "s",
      turn_idx: 1,
      total_turns: 1,
    };
    const benchmark = join(dir, "terminal_test.jsonl");
    // Line 2 lacks its prompt: the episode it belongs to could not be checked.
    const { prompt: _dropped, ...broken } = { ...good, id: "awb-2" };
    writeFileSync(benchmark, `${JSON.stringify(good)}\n${JSON.stringify(broken)}\n`);
    const config = join(dir, "job.yaml");
    writeFileSync(config, `inputs:\n  - path: ${dir}/train.jsonl\noutput:\n  dir: ${dir}/out\n`);
    await expect(run(["run", config, "--benchmark", benchmark, "--progress", "none"])).rejects.toMatchObject({
      stderr: expect.stringMatching(/decontaminate\.benchmarks: .*terminal_test\.jsonl:2: prompt: .*cannot be checked for leaks/),
    });
  });

  it("--stage with a list runs those stages in turn in one process, in the job's order; the output equals a whole run's", async () => {
    const whole = tempDir();
    await run(["run", writeCopiesJob(whole), "--workers", "1", "--progress", "none"]);
    const listed = tempDir();
    const config = writeCopiesJob(listed);
    await expect(run(["run", config, "--stage", "signatures,nosuch", "--progress", "none"])).rejects.toMatchObject({
      stderr: expect.stringContaining("--stage nosuch: this job has no such stage (its stages: signatures, clusters, select, records;"),
    });
    // Named out of order: still signatures → clusters → select; the last one named is what it reports.
    const { stdout } = await run(["run", config, "--stage", "select, clusters,signatures", "--workers", "1", "--progress", "none"]);
    expect(stdout).toContain("stage select: complete");
    expect(readdirSync(join(listed, "out"))).not.toContain("manifest.json");
    await run(["run", config, "--stage", "records", "--workers", "1", "--progress", "none"]);
    // The two outputs differ only in the folder their paths name.
    const text = (bytes: Buffer | undefined, root: string) => bytes?.toString("latin1").replaceAll(root, "<dir>");
    const expected = snapshot(join(whole, "out"));
    const actual = snapshot(join(listed, "out"));
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [path, bytes] of expected) expect(text(actual.get(path), listed), path).toBe(text(bytes, whole));
    expect(filtered(join(listed, "out")).map((e) => e.id)).toEqual(["rerun", "edited"]);
  });

  it("a signatures file cut short stops the clusters stage, naming the file and the record", async () => {
    const dir = tempDir();
    const config = writeCopiesJob(dir);
    await run(["run", config, "--stage", "signatures", "--workers", "1", "--progress", "none"]);
    // Every record is a task of its own here: empty every task's signatures, the near candidates' included.
    const signatures = join(dir, "out/curate/signatures");
    for (const name of readdirSync(signatures)) if (name.endsWith(".minhash")) writeFileSync(join(signatures, name), "");
    await expect(run(["run", config, "--stage", "clusters", "--workers", "1", "--progress", "none"])).rejects.toMatchObject({
      stderr: expect.stringMatching(/task-\d+\.minhash: no signature for item 0; delete curate\/ and rerun/),
    });
  });

  it("a stage run before the stage it needs fails naming what is missing", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "t.jsonl"), line("one", session({ time: "x", pid: 1, tmp: "/tmp/a", port: 1, took: "1s", sha: "0" })));
    const config = join(dir, "job.yaml");
    writeFileSync(config, `inputs:\n  - path: ${dir}/t.jsonl\ndedup:\n  exact: true\noutput:\n  dir: ${dir}/out\n`);
    await expect(run(["run", config, "--stage", "select", "--progress", "none"])).rejects.toMatchObject({
      stderr: expect.stringContaining("stage select cannot start: stage clusters has 4 of 4 unit(s) unfinished"),
    });
    for (const stage of ["signatures", "clusters", "select", "records"]) await run(["run", config, "--stage", stage, "--progress", "none"]);
    expect(JSON.parse(readFileSync(join(dir, "out/manifest.json"), "utf8")).counts).toMatchObject({
      records_in: 1,
      samples_out: 1,
      filtered: 0,
    });
  });
});
