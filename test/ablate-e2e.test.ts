import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { AblationReport } from "../src/ablate/report.ts";
import { Dashboard } from "../src/dashboard/build-dashboard.ts";
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
  /** The last test's run from scratch, into a folder of its own. */
  let again: ReturnType<typeof ablate>;
  let out: string;
  beforeAll(async () => {
    python = ensurePythonEnv();
    config = writeConfig(CONFIG);
    out = tempDir("lwm-ablate-");
    // Started beside the first run rather than after it: a run keeps one core busy (one pipeline
    // worker, then the single-threaded proxy trainer), so the two take about the time of one. The
    // runs share nothing but the config file; a failure of this one is the last test's.
    again = ablate(config, tempDir("lwm-ablate-"), python);
    again.catch(() => {});
    first = await ablate(config, out, python).catch(async (err: unknown) => {
      await again.catch(() => {});
      throw err;
    });
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

  it("scores the AgentWorldBench-layout export of the held-out turns: one row per turn, every labelled token placed in its turn", () => {
    const awbDir = join(out, "eval-agentworldbench");
    const rows = readdirSync(awbDir)
      .filter((name) => name.endsWith("_test.jsonl"))
      .flatMap((name) => readFileSync(join(awbDir, name), "utf8").trim().split("\n"))
      .map((line) => JSON.parse(line) as { id: string; lwm_turn_index: number; response: string[]; turn_idx: number });
    expect(rows.length).toBeGreaterThan(10);
    expect(first.report.eval.agentworldbench).toMatchObject({ dir: awbDir, rows: rows.length, refused: 0 });
    for (const run of first.report.variants.flatMap((v) => v.runs)) {
      // Every row scored, and its observation tokens are exactly the evaluation's labelled tokens (each turn's
      // observation and its turn end): a span off by one message would miss tokens or find none.
      expect(run.awb_rows).toBe(rows.length);
      expect(run.awb_unscored).toBe(0);
      expect(run.awb_tokens).toBe(run.eval_tokens);
      expect(run.awb_loss).toBeGreaterThan(0);
      expect(run.awb_loss).toBeLessThan(Math.log(run.vocab));
    }
    for (const variant of first.report.variants) expect(variant.awb_loss?.n).toBe(2);
    expect(first.report.variants[1]?.awb_difference).not.toBeNull();
    // The table has the two AgentWorldBench columns.
    expect(first.stdout).toMatch(/\| AgentWorldBench turns: loss \[95% CI\] \| AgentWorldBench turns: Δ \[95% CI\] \|/);
    expect(first.stdout).toMatch(new RegExp(`as ${rows.length} AgentWorldBench-layout rows`));
  });

  it("scores the seen-once subset: exactly the held-out turns whose observation the corpus counts once", async () => {
    // Independently of the subset build and the trainer: the counting build's stats table gives each turn's
    // corpus_novelty = -log2(count / N); a held-out turn counted once labels its observation tokens and its turn end.
    const script = [
      "import glob, json, sys, pyarrow.parquet as pq, pyarrow as pa",
      "out, n = sys.argv[1], int(sys.argv[2])",
      "val = {i for f in glob.glob(out + '/eval/data/validation-*.parquet') for i in pq.read_table(f, columns=['id']).column('id').to_pylist()}",
      "st = pa.concat_tables([pq.read_table(f) for f in glob.glob(out + '/eval-novelty-counts/stats/*.parquet')]).to_pylist()",
      "held = [r for r in st if r['id'] in val]",
      "once = [r for r in held if round(n * 2 ** -r['corpus_novelty']) == 1]",
      "print(json.dumps({'held': len(held), 'once': len(once), 'tokens': sum(r['obs_tokens'] + 1 for r in once)}))",
    ].join("\n");
    const seen = first.report.eval.seen_once;
    if (!seen || "unavailable" in seen) throw new Error(`no seen-once subset: ${JSON.stringify(seen)}`);
    const { stdout } = await exec(python, ["-c", script, out, String(seen.observations)], { encoding: "utf8" });
    const expected = JSON.parse(stdout) as { held: number; once: number; tokens: number };
    // Some held-out turns are seen once, not all (the demo repeats sessions across formats).
    expect(expected.once).toBeGreaterThan(0);
    expect(expected.once).toBeLessThan(expected.held);
    expect(seen.tokens).toBe(expected.tokens);
    for (const run of first.report.variants.flatMap((v) => v.runs)) {
      expect(run.eval_seen_once_tokens).toBe(expected.tokens);
      expect(run.eval_seen_once_loss).toBeGreaterThan(0);
      expect(run.eval_seen_once_loss).toBeLessThan(Math.log(run.vocab));
    }
    expect(first.report.variants[0]?.seen_once_difference).toBeNull();
    expect(first.report.variants[1]?.seen_once_difference?.n).toBe(2);
    expect(first.stdout).toMatch(/\| seen-once obs: loss \[95% CI\] \| seen-once obs: Δ \[95% CI\] \| trained tokens/);
  });

  it("lwm-data dashboard opens the ablation folder: its table, and the baseline variant's build as the run", async () => {
    const dashboard = await Dashboard.open([out]);
    try {
      const data = await dashboard.data({ live: false });
      expect(data.runs[0]?.summary.dir).toBe(join(out, "variants", first.report.baseline));
      expect(
        data.ablation?.variants.map((v) => [
          v.name,
          v.loss.mean,
          v.difference?.mean ?? null,
          v.awbLoss?.mean,
          v.seenOnceLoss?.mean,
          v.trainedWeight,
        ]),
      ).toEqual(
        first.report.variants.map((v) => [
          v.name,
          v.loss.mean,
          v.difference?.mean ?? null,
          v.awb_loss?.mean,
          v.seen_once_loss?.mean,
          v.trained_weight,
        ]),
      );
      expect(data.ablation?.seenOnce).toMatchObject({ observations: expect.any(Number), tokens: expect.any(Number) });
      expect(data.ablation?.awbRows).toBe(first.report.eval.agentworldbench?.rows);
    } finally {
      dashboard.close();
    }
  });

  it("gives the same losses when run again from scratch, and a rerun in place trains nothing", async () => {
    const fromScratch = await again;
    const losses = (report: AblationReport) =>
      report.variants.map((v) => v.runs.map((run) => [run.eval_loss, run.eval_subset_loss, run.awb_loss, run.eval_seen_once_loss]));
    expect(losses(fromScratch.report)).toEqual(losses(first.report));

    const resumed = await ablate(config, out, python);
    expect(resumed.stderr).toMatch(/0 proxy run\(s\) to train, 4 already recorded/);
    expect(resumed.stdout).toBe(first.stdout);
  }, 300_000);
});
