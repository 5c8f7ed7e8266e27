/**
 * Outcome and provenance columns (docs/output.md "Shard schema") and read filters (README "Filtered
 * records"): what readers record in `meta` reaches the shards, read back by pyarrow; the manifest
 * counts it per input format; a record its reader filters lands in filtered/, counted, and the
 * output verifies.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { provenanceTable } from "../src/cli/stats-command.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { provenanceOf } from "../src/core/provenance.ts";
import { curationReport } from "../src/inspect/curation-report.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { tempDir, writeConfig } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const turn = (action: string, observation: string) => ({ action, observation });

/** Canonical JSONL rows: two SWE attempts of one instance, one with no provenance, one a harness-only trial. */
const ROWS = [
  {
    id: "django-1__attempt-1",
    domain: "swe",
    task: "Fix the slug bug",
    turns: [turn("ls", "setup.py\nsrc"), turn("pytest -q", "1 failed, 3 passed")],
    meta: {
      task_id: "django__django-1",
      attempt: 1,
      agent: "swe-agent",
      model: "gpt-4o",
      outcome: { resolved: false, reward: 0, failure_mode: "tests_failed" },
    },
  },
  {
    id: "django-1__attempt-2",
    domain: "swe",
    task: "Fix the slug bug",
    turns: [turn("ls", "setup.py\nsrc"), turn("pytest -q", "4 passed")],
    meta: { task_id: "django__django-1", attempt: "2", agent: "swe-agent", model: "gpt-4o", outcome: { resolved: true, reward: 1 } },
  },
  { id: "plain", domain: "terminal", turns: [turn("echo hi", "hi")] },
  {
    id: "harness-only-trial",
    domain: "terminal",
    turns: [turn("clear", "")],
    meta: { agent: "terminus", read_filter: { stage: "harness-only", reason: "the agent never typed into the terminal" } },
  },
];

async function runRows(rows: readonly unknown[]) {
  const dir = tempDir("lwm-provenance-");
  const input = join(dir, "rows.jsonl");
  writeFileSync(input, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
  const out = join(dir, "out");
  const config = writeConfig(`inputs:\n  - path: ${input}\n    format: canonical-jsonl\noutput:\n  num_buckets: 1\n`, dir);
  const result = await runJob(await planJob(loadConfig(config, { output: out })), { workers: 1 });
  if (!result.manifest) throw new Error("run did not finish");
  return { out, manifest: result.manifest };
}

/** Every shard row's provenance columns as pyarrow reads them, by id. */
function pyarrowRows(out: string): Record<string, Record<string, unknown>> {
  const python = ensurePythonEnv();
  const script = [
    "import glob, json, sys, pyarrow.parquet as pq",
    "rows = {}",
    "for path in sorted(glob.glob(sys.argv[1] + '/data/*.parquet')):",
    "    table = pq.read_table(path)",
    "    for row in table.select(['id', 'task_id', 'attempt', 'agent', 'model', 'outcome', 'reward', 'failure_mode']).to_pylist():",
    "        rows[row.pop('id')] = row",
    "    types = {f.name: str(f.type) for f in table.schema}",
    "print(json.dumps({'rows': rows, 'types': types}))",
  ].join("\n");
  const result = spawnSync(python, ["-c", script, out], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(result.stderr);
  const parsed = JSON.parse(result.stdout) as { rows: Record<string, Record<string, unknown>>; types: Record<string, string> };
  expect(parsed.types).toMatchObject({ task_id: "string", attempt: "string", outcome: "string", reward: "double", failure_mode: "string" });
  return parsed.rows;
}

describe("provenance columns", () => {
  it("flattens what meta records and leaves the rest null", () => {
    expect(provenanceOf({ outcome: { success: false }, task_id: 7 })).toMatchObject({ outcome: "failure", task_id: "7", reward: null });
    expect(provenanceOf({ outcome: { failure_mode: "AgentTimeoutError" } })).toMatchObject({ outcome: "failure" });
    expect(provenanceOf({ outcome: { reward: 0.5 } })).toMatchObject({ outcome: null, reward: 0.5 });
    // Not numbers or strings: not invented into a column.
    expect(provenanceOf({ agent: { name: "x" }, outcome: "yes", attempt: Number.NaN })).toMatchObject({
      agent: null,
      outcome: null,
      attempt: null,
    });
  });

  it("reach the shards, the manifest counts them per format, and a read filter goes to filtered/", async () => {
    const { out, manifest } = await runRows(ROWS);
    const rows = pyarrowRows(out);
    expect(rows["django-1__attempt-1"]).toEqual({
      task_id: "django__django-1",
      attempt: "1",
      agent: "swe-agent",
      model: "gpt-4o",
      outcome: "unresolved",
      reward: 0,
      failure_mode: "tests_failed",
    });
    expect(rows["django-1__attempt-2"]).toMatchObject({ attempt: "2", outcome: "resolved", reward: 1, failure_mode: null });
    expect(rows.plain).toEqual({
      task_id: null,
      attempt: null,
      agent: null,
      model: null,
      outcome: null,
      reward: null,
      failure_mode: null,
    });
    // The filtered trial is in no shard, but in filtered/ with its rule and reason.
    expect(Object.keys(rows).sort()).toEqual(["django-1__attempt-1", "django-1__attempt-2", "plain"]);
    expect(manifest.counts).toMatchObject({ records_in: 4, samples_out: 3, filtered: 1, filtered_by_stage: { read: 1 } });
    const [file] = manifest.filtered_files ?? [];
    const entries = readFileSync(join(out, file?.path ?? "missing"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(entries).toEqual([
      expect.objectContaining({
        id: "harness-only-trial",
        stage: "read",
        rule: "harness-only",
        reason: "the agent never typed into the terminal",
      }),
    ]);
    expect(manifest.provenance).toEqual({
      "canonical-jsonl": {
        records: 2,
        with_task_id: 2,
        with_attempt: 2,
        with_outcome: 2,
        with_reward: 2,
        reward_sum: 1,
        outcomes: { resolved: 1, unresolved: 1 },
        failure_modes: { tests_failed: 1 },
        agents: { "swe-agent": 2 },
        models: { "gpt-4o": 2 },
      },
    });
    expect(manifest.layout.provenance).toBe(true);
    // `lwm-data stats` shows the same counts, and the records filtered at read.
    expect(curationReport(manifest)).toEqual(["filtered at read: 1 of 4 records (read 1) → filtered/"]);
    const table = provenanceTable(manifest.provenance ?? {});
    expect(table.at(-1)).toMatch(/^ {2}canonical-jsonl +resolved 1, unresolved 1 +swe-agent 2 +gpt-4o 2 +2 +2 +0\.500$/);
    const { problems } = await verifyOutput(out);
    expect(problems).toEqual([]);
  });

  it("verify notices a filtered entry that lost its rule (negative control)", async () => {
    const { out, manifest } = await runRows(ROWS);
    const path = join(out, manifest.filtered_files?.[0]?.path ?? "missing");
    const entry = JSON.parse(readFileSync(path, "utf8"));
    delete entry.rule;
    writeFileSync(path, `${JSON.stringify(entry)}\n`);
    const { problems } = await verifyOutput(out);
    expect(problems.map((p) => p.message).join("\n")).toMatch(/rule is missing/);
  });
});
