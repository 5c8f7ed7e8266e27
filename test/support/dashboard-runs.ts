import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse, stringify } from "yaml";
import { loadConfig } from "../../src/config/load-config.ts";
import type { Manifest } from "../../src/output/manifest.ts";
import { planJob } from "../../src/pipeline/plan.ts";
import { runJob } from "../../src/pipeline/run-job.ts";
import { DEMO_CONFIG, ROOT, tempDir, writeConfig } from "../helpers.ts";

/** Records with read and validate problems, so the run has quarantine reasons to show. */
const MIXED_BAD = join(ROOT, "test/fixtures/records/mixed-bad.jsonl");

export interface DashboardRun {
  dir: string;
  manifest: Manifest;
}

/**
 * The demo's real inputs plus a file of bad records, run to completion. `mask` replaces parts of
 * the config's `mask` block (e.g. other thresholds, for --compare).
 */
export async function dashboardRun(mask: Record<string, unknown> = {}): Promise<DashboardRun> {
  const demo = parse(readFileSync(DEMO_CONFIG, "utf8")) as { inputs: { path: string }[]; output: Record<string, unknown> };
  const inputs = [...demo.inputs.map((input) => ({ path: resolve(dirname(DEMO_CONFIG), input.path) })), { path: MIXED_BAD }];
  const config = writeConfig(stringify({ inputs, output: { ...demo.output, dir: "out" }, mask }));
  const dir = tempDir("lwm-dashboard-run-");
  const result = await runJob(await planJob(loadConfig(config, { output: dir })), { workers: 1 });
  if (!result.manifest) throw new Error(`run left ${result.unfinished} task(s) unfinished`);
  return { dir, manifest: result.manifest };
}

/** Settings for a second run that masks differently: Echo from a lower overlap, and half of it kept. */
export const LOOSER_ECHO = {
  classes: [
    { name: "Boilerplate", when: { obs_tokens: { max: 0 } } },
    { name: "Echo", when: { overlap: { min: 0.4 }, novelty: { max: 0.5 } } },
    { name: "Retrieval", when: { obs_tokens: { min: 32 }, novelty: { min: 0.7 } } },
    { name: "Action", when: { obs_tokens: { max: 63 }, novelty: { min: 0.5 } } },
  ],
  keep: { Echo: 0.5, Boilerplate: 0.1 },
};
