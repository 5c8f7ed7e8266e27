import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FilteredEntry } from "../src/curate/filtered-entry.ts";
import { openShard } from "../src/inspect/read-shard.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { startFakeJudge } from "./support/fake-judge.ts";
import type { FakeScoreServer } from "./support/fake-score-server.ts";
import { SELECT_RESOLVED, selectResolvedReference } from "./support/select-resolved-reference.ts";

/**
 * configs/select-resolved.yaml end to end — "SWE and terminal trajectories, resolved only, at
 * most 4 attempts per task, judge score ≥ 0.7, decontaminated, deduplicated" — on the demo data
 * and the generated attempts (data/examples/), with a local judge: what is written keeps every
 * promise, what is left out is in filtered/ with its reason, one process and three ranks write
 * the same bytes, and a rerun asks the judge nothing.
 */
const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const CONFIG = SELECT_RESOLVED;

let judge: FakeScoreServer;
beforeAll(async () => {
  judge = await startFakeJudge();
});
afterAll(async () => {
  await judge.close();
});

async function run(out: string, extra: string[] = [], env: NodeJS.ProcessEnv = { LWM_JUDGE_URL: judge.url }) {
  return exec(process.execPath, [CLI, "run", CONFIG, "--output", out, "--progress", "none", "--workers", "2", ...extra], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
}

/** The output's user-facing files (shards, stats, filtered, quarantine, manifest, card) by path, hashed. */
function products(out: string): Record<string, string> {
  const files = readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(out, join(entry.parentPath, entry.name)))
    .filter((path) => /^(data|stats|filtered|quarantine)\//.test(path) || path === "manifest.json" || path === "README.md")
    .sort();
  return Object.fromEntries(
    files.map((path) => [
      path,
      createHash("sha256")
        .update(readFileSync(join(out, path)))
        .digest("hex"),
    ]),
  );
}

interface Row {
  id: string;
  domain: string;
  task_id: string | null;
  outcome: string | null;
}

async function shardRows(out: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const name of readdirSync(join(out, "data")).sort()) {
    const shard = await openShard(join(out, "data", name));
    for (let i = 0; i < shard.numRows; i++) rows.push((shard.table.get(i) as unknown as { toJSON(): Row }).toJSON());
  }
  return rows;
}

function filteredEntries(out: string): FilteredEntry[] {
  const dir = join(out, "filtered");
  return readdirSync(dir)
    .sort()
    .flatMap((name) => readFileSync(join(dir, name), "utf8").split("\n").filter(Boolean))
    .map((line) => JSON.parse(line) as FilteredEntry);
}

/** Resolved attempts per task in the generated input: the cap must have something to cut. */
function resolvedInputAttempts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of readFileSync(join(ROOT, "data/examples/attempts.jsonl"), "utf8").split("\n").filter(Boolean)) {
    const { meta } = JSON.parse(line) as { meta: { task_id: string; outcome: { resolved?: boolean; success?: boolean } } };
    if (meta.outcome.resolved || meta.outcome.success) counts.set(meta.task_id, (counts.get(meta.task_id) ?? 0) + 1);
  }
  return counts;
}

describe("configs/select-resolved.yaml", () => {
  // The one-process run (`run --workers 2` with a fake judge, as `run` below) is shared with the
  // other files that need it (test/support/select-resolved-reference.ts).
  let single = "";
  let singleStdout = "";
  const ranked = tempDir("lwm-select-ranks-");
  beforeAll(async () => {
    ({ output: single, stdout: singleStdout } = await selectResolvedReference());
  }, 600_000);

  it("writes only resolved SWE and terminal attempts, at most 4 per task, judged ≥ 0.7; the rest is in filtered/ with why", {
    timeout: 600_000,
  }, async () => {
    expect(singleStdout).toMatch(/selection: kept \d+ of \d+ record\(s\); dropped: max_per \d+/);
    const rows = await shardRows(single);
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      expect(["swe", "terminal"]).toContain(row.domain);
      expect(["resolved", "success"]).toContain(row.outcome);
    }
    const perTask = new Map<string, number>();
    for (const row of rows) if (row.task_id) perTask.set(row.task_id, (perTask.get(row.task_id) ?? 0) + 1);
    expect(Math.max(...perTask.values())).toBeLessThanOrEqual(4);
    // Not vacuous: the input holds a task with more than 4 resolved attempts.
    expect(Math.max(...resolvedInputAttempts().values())).toBeGreaterThan(4);

    const manifest = JSON.parse(readFileSync(join(single, "manifest.json"), "utf8"));
    const { counts } = manifest;
    expect(counts.records_in).toBe(counts.samples_out + counts.quarantined + counts.filtered + counts.dropped_by_mixture);
    const entries = filteredEntries(single);
    expect(entries).toHaveLength(counts.filtered);
    const byStage: Record<string, number> = {};
    for (const entry of entries) byStage[entry.stage] = (byStage[entry.stage] ?? 0) + 1;
    expect(byStage).toEqual(counts.filtered_by_stage);
    for (const stage of ["exact", "decontaminate", "filter", "selection"]) expect(byStage[stage], stage).toBeGreaterThan(0);
    const rules = new Set(entries.filter((e) => e.stage === "filter").map((e) => e.rule));
    expect(rules).toEqual(new Set(["resolved-only", "judge-score"]));
    for (const entry of entries.filter((e) => e.rule === "judge-score")) expect(entry.reason).toBe("scores.judge is 0.3, not >= 0.7");
    for (const entry of entries.filter((e) => e.stage === "selection")) {
      expect(entry.rule).toBe("max_per");
      expect(entry.reason).toMatch(/^max_per task_id: \d+th of \d+ records with task_id ".+" by reward desc, tokens asc \(keeps 4\)$/);
    }
  });

  it("as 3 ranks (each stage's units shared out, ranks rerun until done) writes the same bytes, and pays the judge nothing again", {
    timeout: 600_000,
  }, async () => {
    const asked = judge.requests.length;
    for (let pass = 0; pass < 12 && !existsSync(join(ranked, "manifest.json")); pass++)
      for (let rank = 0; rank < 3; rank++) await run(ranked, ["--rank", String(rank), "--world-size", "3"]);
    expect(existsSync(join(ranked, "manifest.json"))).toBe(true);
    expect(products(ranked)).toEqual(products(single));
    expect(judge.requests.length).toBe(asked);
  });

  it("with the judge unreachable, the answers cached by the first run give the same bytes (nothing is asked twice)", {
    timeout: 600_000,
  }, async () => {
    const out = tempDir("lwm-select-nojudge-");
    await run(out, [], { LWM_JUDGE_URL: "http://127.0.0.1:9/v1" });
    expect(products(out)).toEqual(products(single));
  });
});
