import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { AblationReport } from "../src/ablate/report.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const exec = promisify(execFile);

/** Three demo domains: enough trajectories for a validation split, small enough for a few CPU seconds per proxy run. */
const CONFIG = `inputs:
${["terminal", "swe", "mcp"].map((domain) => `  - path: ${join(ROOT, "data/demo", domain)}/*`).join("\n")}
output:
  num_buckets: 1
`;

async function ablate(config: string, out: string, python: string) {
  const { stdout, stderr } = await exec(
    process.execPath,
    [
      join(ROOT, "bin/lwm-data.js"),
      "ablate",
      config,
      "--vary",
      "mask.policy=all-observations,turn-stats",
      "--seeds",
      "2",
      "--tokens",
      "2048",
      "--python",
      python,
      "--workers",
      "1",
      "--out",
      out,
    ],
    { encoding: "utf8", maxBuffer: 1 << 24 },
  );
  return { stdout, stderr, report: JSON.parse(readFileSync(join(out, "ablate.json"), "utf8")) as AblationReport };
}

describe("lwm-data ablate --help", () => {
  it("says what it does, gives an example and explains the table", async () => {
    const { stdout: raw } = await exec(process.execPath, [join(ROOT, "bin/lwm-data.js"), "ablate", "--help"], { encoding: "utf8" });
    const stdout = raw.replace(/[ \n]+/g, " "); // commander wraps long descriptions
    expect(stdout).toMatch(/build each --vary variant's shards, train the same tiny proxy model/);
    expect(stdout).toMatch(/Example: lwm-data ablate configs\/demo\.yaml --vary mask\.policy=all-observations,turn-stats/);
    expect(stdout).toMatch(/paired by seed/);
    expect(stdout).toMatch(/informative/);
  });
});

describe("lwm-data ablate on demo data (two variants, two seeds, a tiny budget)", () => {
  let python: string;
  let config: string;
  let first: Awaited<ReturnType<typeof ablate>>;
  let out: string;
  beforeAll(async () => {
    python = ensurePythonEnv();
    config = writeConfig(CONFIG);
    out = tempDir("lwm-ablate-");
    first = await ablate(config, out, python);
  }, 300_000);

  it("prints the table with both variants, the baseline first", () => {
    const cell = String.raw`\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]`;
    const delta = String.raw`[+-]\d\.\d{4} \[-?\d\.\d{4}, -?\d\.\d{4}\]`;
    expect(first.stdout).toMatch(/\| variant \| seeds \| held-out loss \[95% CI\] \| Δ vs baseline \[95% CI\] \| informative obs: loss/);
    expect(first.stdout).toMatch(
      new RegExp(String.raw`\| mask\.policy=all-observations \(baseline\) \| 2 \| ${cell} \| — \| ${cell} \| — \|`),
    );
    expect(first.stdout).toMatch(new RegExp(String.raw`\| mask\.policy=turn-stats \| 2 \| ${cell} \| ${delta} \| ${cell} \| ${delta} \|`));
    expect(readFileSync(join(out, "ablate.md"), "utf8")).toBe(first.stdout.replace(/\n$/, ""));
  });

  it("scores every run on the same held-out tokens, and the variants train on different tokens", () => {
    const [baseline, turnStats] = first.report.variants;
    const evalTokens = new Set(first.report.variants.flatMap((v) => v.runs.map((run) => run.eval_tokens)));
    expect(evalTokens.size).toBe(1);
    expect([...evalTokens][0]).toBeGreaterThan(1000);
    // The informative subset: the same for every run, a part of the evaluation (not all of it, not none).
    const subsetTokens = new Set(first.report.variants.flatMap((v) => v.runs.map((run) => run.eval_subset_tokens)));
    expect(subsetTokens.size).toBe(1);
    expect([...subsetTokens][0]).toBeGreaterThan(0);
    expect([...subsetTokens][0]).toBeLessThan([...evalTokens][0] as number);
    // turn-stats drops some observations: fewer trained tokens on the same input budget (the negative control of "same data").
    expect(turnStats?.trained_weight).toBeLessThan(baseline?.trained_weight as number);
    for (const run of first.report.variants.flatMap((v) => v.runs)) {
      expect(run.train_tokens).toBeGreaterThanOrEqual(2048);
      expect(run.unknown_tokens).toBe(0);
      // It learned something: below the loss of a uniform guess over the vocabulary.
      expect(run.eval_loss).toBeLessThan(Math.log(run.vocab));
    }
    // The two seeds differ (a seed changes init and order), so the interval is not degenerate.
    expect(baseline?.runs[0]?.eval_loss).not.toBe(baseline?.runs[1]?.eval_loss);
  });

  it("gives the same losses when run again from scratch, and a rerun in place trains nothing", async () => {
    const again = await ablate(config, tempDir("lwm-ablate-"), python);
    const losses = (report: AblationReport) => report.variants.map((v) => v.runs.map((run) => [run.eval_loss, run.eval_subset_loss]));
    expect(losses(again.report)).toEqual(losses(first.report));

    const resumed = await ablate(config, out, python);
    expect(resumed.stderr).toMatch(/0 proxy run\(s\) to train, 4 already recorded/);
    expect(resumed.stdout).toBe(first.stdout);
  }, 300_000);
});
