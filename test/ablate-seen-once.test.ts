import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { MeanInterval } from "../src/ablate/confidence.ts";
import { type AblationReport, ablationMarkdown, type VariantReport } from "../src/ablate/report.ts";
import { seenOnceMask } from "../src/ablate/seen-once.ts";
import { classifyTurn } from "../src/mask/turn-classes.ts";
import type { TurnStats } from "../src/mask/turn-stats.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const exec = promisify(execFile);

describe("the seen-once rule", () => {
  it("drops an observation counted twice or more, keeps one counted once (corpus_novelty = -log2(count / N))", () => {
    const observations = 180;
    const rules = seenOnceMask(observations).find((o) => o.key === "mask.classes")?.value as Parameters<typeof classifyTurn>[1];
    const keep = seenOnceMask(observations).find((o) => o.key === "mask.keep")?.value as Record<string, number>;
    const classOf = (count: number) => classifyTurn({ corpusNovelty: -Math.log2(count / observations) } as TurnStats, rules);
    expect(keep[classOf(1)]).toBe(1);
    for (const count of [2, 3, 8, observations]) expect(keep[classOf(count)]).toBe(0);
  });
});

describe("the seen-once columns of the table", () => {
  const m = (mean: number): MeanInterval => ({ mean, half: 0.1, low: mean - 0.1, high: mean + 0.1, n: 2 });
  const variant = (name: string, seenOnce: MeanInterval | null, difference: MeanInterval | null): VariantReport => ({
    name,
    set: [],
    dir: "",
    loss: m(3),
    difference: name === "b" ? m(0.2) : null,
    informative_loss: m(3),
    informative_difference: name === "b" ? m(0.2) : null,
    seen_once_loss: seenOnce,
    seen_once_difference: difference,
    trained_weight: 100,
    runs: [],
  });
  const report = (seen: AblationReport["eval"]["seen_once"], variants: VariantReport[]): AblationReport => ({
    config: "",
    command: { varies: [], seeds: 2, tokens: 1024, model: "tiny" },
    trainer: {},
    eval: { dir: "", split: "validation", labels: "", informative: { dir: "", labels: "" }, ...(seen ? { seen_once: seen } : {}) },
    common_overrides: [],
    baseline: "a",
    variants,
  });

  it("give the loss and the paired Δ where held-out observations are seen once", () => {
    const seen = { dir: "", counts_dir: "", observations: 180, tokens: 2839, labels: "" };
    const table = ablationMarkdown(report(seen, [variant("a", m(4), null), variant("b", m(4.5), m(0.5))]));
    expect(table).toMatch(/\| seen-once obs: loss \[95% CI\] \| seen-once obs: Δ \[95% CI\] \| trained tokens/);
    expect(table).toMatch(/\| a \(baseline\) \| 2 \| .* \| 4\.0000 \[3\.9000, 4\.1000\] \| — \| 100 \|/);
    expect(table).toMatch(/\| b \| 2 \| .* \| 4\.5000 \[4\.4000, 4\.6000\] \| \+0\.5000 \[0\.4000, 0\.6000\] \| 100 \|/);
    expect(table).toMatch(/Seen-once: the 2839 held-out observation tokens whose observation occurs once among the corpus's 180/);
  });

  it("read n/a, not a number, where no held-out observation is seen once", () => {
    const seen = { dir: "", counts_dir: "", observations: 40, tokens: 0, labels: "" };
    const table = ablationMarkdown(report(seen, [variant("a", null, null), variant("b", null, null)]));
    expect(table).toMatch(/\| a \(baseline\) \| 2 \| .* \| n\/a \| — \| 100 \|/);
    expect(table).toMatch(/\| b \| 2 \| .* \| n\/a \| n\/a \| 100 \|/);
    expect(table).not.toMatch(/NaN/);
    expect(table).toMatch(/n\/a, every held-out observation occurs more than once/);
  });

  it("are absent from an older report without the subset (its table unchanged)", () => {
    const old = report(undefined, [variant("a", null, null), variant("b", null, null)]);
    expect(ablationMarkdown(old)).not.toMatch(/seen-once/);
  });
});

/** A canonical JSONL corpus of `trajectories` terminal sessions, each written `copies` times under other ids. */
function corpus(dir: string, trajectories: number, copies: number): string {
  const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"];
  const lines: string[] = [];
  for (let copy = 0; copy < copies; copy++)
    for (let t = 0; t < trajectories; t++) {
      const word = (k: number) => words[(t * 5 + k) % words.length];
      const turns = Array.from({ length: 4 }, (_, k) => ({
        action: `cat ${word(k)}-${t}-${k}.txt`,
        observation:
          `${word(k)} ${word(k + 1)} ${word(k + 2)} report for session ${t} step ${k}: ${word(k + 3)} ${word(k + 4)} done`.repeat(3),
      }));
      lines.push(JSON.stringify({ id: `copy${copy}-session${t}`, domain: "terminal", task: `inspect files ${t}`, turns }));
    }
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "corpus.jsonl");
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

describe("lwm-data ablate on a corpus where every observation repeats (negative control)", () => {
  let report: AblationReport;
  let stdout: string;
  beforeAll(async () => {
    const python = ensurePythonEnv();
    const dir = tempDir("lwm-ablate-seen-once-");
    const config = writeConfig(`inputs:\n  - path: ${corpus(join(dir, "in"), 16, 2)}\noutput:\n  num_buckets: 1\n`, dir);
    const out = join(dir, "ablate");
    const run = await exec(
      process.execPath,
      [
        ...[join(ROOT, "bin/lwm-data.js"), "ablate", config, "--vary", "mask.policy=all-observations,turn-stats"],
        ...["--seeds", "2", "--tokens", "512", "--python", python, "--workers", "1", "--out", out],
      ],
      { encoding: "utf8", maxBuffer: 1 << 24 },
    );
    stdout = run.stdout;
    report = JSON.parse(readFileSync(join(out, "ablate.json"), "utf8")) as AblationReport;
  }, 300_000);

  it("counts every observation twice, scores no seen-once token and reports n/a", () => {
    // 16 sessions × 4 turns, each written twice: 128 observations counted, none of them once.
    expect(report.eval.seen_once).toMatchObject({ observations: 128, tokens: 0 });
    const runs = report.variants.flatMap((v) => v.runs);
    expect(runs.length).toBe(4);
    for (const run of runs) {
      expect(run.eval_tokens).toBeGreaterThan(0); // the held-out set itself is not empty
      expect(run.eval_seen_once_tokens).toBe(0);
      expect(run.eval_seen_once_loss).toBeUndefined();
    }
    for (const variant of report.variants) {
      expect(variant.seen_once_loss).toBeNull();
      expect(variant.seen_once_difference).toBeNull();
    }
    expect(stdout).toMatch(/\| mask\.policy=turn-stats \| 2 \| .* \| n\/a \| n\/a \| \d+ \|/);
    expect(stdout).not.toMatch(/NaN/);
  });

  it("the same sessions written once do have seen-once observations (the n/a comes from the repeats)", async () => {
    const dir = tempDir("lwm-seen-once-single-");
    const config = writeConfig(
      `inputs:\n  - path: ${corpus(join(dir, "in"), 16, 1)}\noutput:\n  num_buckets: 1\nmask:\n  policy: turn-stats\n  corpus_novelty:\n    enabled: true\n`,
      dir,
    );
    await exec(process.execPath, [join(ROOT, "bin/lwm-data.js"), "run", config, "--output", join(dir, "out"), "--workers", "1"]);
    const manifest = JSON.parse(readFileSync(join(dir, "out", "manifest.json"), "utf8")) as {
      novelty: { observations: number; by_count: Record<string, number> };
    };
    expect(manifest.novelty.observations).toBe(64);
    expect(manifest.novelty.by_count["1"]).toBeGreaterThan(32);
  }, 120_000);
});
