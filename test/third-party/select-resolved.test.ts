import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openShard } from "../../src/inspect/read-shard.ts";
import { ROOT, tempDir } from "../helpers.ts";
import { startFakeJudge } from "../support/fake-judge.ts";
import type { FakeScoreServer } from "../support/fake-score-server.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

/**
 * configs/select-resolved.yaml over the demo data, the generated attempts and the shared SWE,
 * terminal and ATIF samples (read in place): the job runs end to end on files other projects
 * wrote, and what it writes keeps the config's promises — SWE and terminal only, resolved only,
 * at most 4 per task — with every record accounted for.
 */
const exec = promisify(execFile);
let judge: FakeScoreServer;
beforeAll(async () => {
  judge = await startFakeJudge();
});
afterAll(async () => {
  await judge.close();
});

describeThirdParty("configs/select-resolved.yaml on the shared samples", () => {
  it("selects resolved SWE and terminal attempts, at most 4 per task, from real files", { timeout: 600_000 }, async () => {
    const out = tempDir("lwm-select-shared-");
    const inputs = [
      join(ROOT, "data/demo/swe/*"),
      join(ROOT, "data/demo/terminal/*"),
      join(ROOT, "data/examples/attempts.jsonl"),
      thirdParty("swe"),
      thirdParty("terminal"),
      thirdParty("formats-2026/atif"),
    ];
    await exec(
      process.execPath,
      [
        join(ROOT, "bin/lwm-data.js"),
        "run",
        join(ROOT, "configs/select-resolved.yaml"),
        "-o",
        out,
        "--progress",
        "none",
        ...inputs.flatMap((i) => ["--input", i]),
      ],
      { cwd: ROOT, env: { ...process.env, LWM_JUDGE_URL: judge.url }, encoding: "utf8", maxBuffer: 64 << 20 },
    );
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    const { counts } = manifest;
    expect(counts.records_in).toBeGreaterThan(40);
    expect(counts.records_in).toBe(counts.samples_out + counts.quarantined + counts.filtered + counts.dropped_by_mixture);
    const perTask = new Map<string, number>();
    let rows = 0;
    for (const name of readdirSync(join(out, "data"))) {
      const shard = await openShard(join(out, "data", name));
      for (let i = 0; i < shard.numRows; i++) {
        const row = (
          shard.table.get(i) as unknown as { toJSON(): { domain: string; outcome: string | null; task_id: string | null } }
        ).toJSON();
        rows += 1;
        expect(["swe", "terminal"]).toContain(row.domain);
        expect(["resolved", "success"]).toContain(row.outcome);
        if (row.task_id) perTask.set(row.task_id, (perTask.get(row.task_id) ?? 0) + 1);
      }
    }
    expect(rows).toBe(counts.documents ?? counts.samples_out);
    expect(Math.max(...perTask.values())).toBeLessThanOrEqual(4);
    // Files from other projects with an outcome made it through (not only the generated attempts).
    const sources = new Set<string>();
    for (const name of readdirSync(join(out, "data"))) {
      const shard = await openShard(join(out, "data", name));
      for (let i = 0; i < shard.numRows; i++)
        sources.add((shard.table.get(i) as unknown as { toJSON(): { source: string } }).toJSON().source);
    }
    expect([...sources].some((source) => !source.includes("data/examples") && !source.includes("data/demo"))).toBe(true);
  });
});
