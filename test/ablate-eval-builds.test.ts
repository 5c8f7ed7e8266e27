import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_PYTHON, runAblation } from "../src/ablate/run-ablation.ts";
import type { LoadedConfig } from "../src/config/load-config.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { ROOT } from "./helpers.ts";

// A baseline with float weights on (configs/ablate-novelty.yaml: weights, corpus novelty, keep 1).
const WEIGHTED_BASE = join(ROOT, "configs/ablate-novelty.yaml");
const out = mkdtempSync(join(tmpdir(), "lwm-ablate-eval-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Runs ablate up to its two evaluation builds, recording their configs instead of building. */
async function evaluationConfigs(): Promise<LoadedConfig[]> {
  const built: LoadedConfig[] = [];
  const stop = new Error("stop after the evaluation builds");
  await expect(
    runAblation({
      configPath: WEIGHTED_BASE,
      varies: [{ key: "mask.weights.by_class", values: [{}, { Echo: 0.1 }] }],
      outDir: out,
      seeds: 1,
      tokens: 1024,
      model: "tiny",
      python: DEFAULT_PYTHON,
      validationFraction: 0.25,
      build: async (loaded) => {
        built.push(loaded);
        if (built.length === 2) throw stop;
      },
    }),
  ).rejects.toBe(stop);
  return built;
}

describe("ablate's evaluation builds", () => {
  it("label 0/1 even when the baseline trains with float weights", async () => {
    // Negative control: the baseline with every observation labelled, weights left on, is refused.
    expect(() => loadConfig(WEIGHTED_BASE, { set: [{ key: "mask.policy", value: "all-observations" }] })).toThrow(
      /mask\.weights needs mask\.policy: turn-stats/,
    );
    const [evaluation, informative] = (await evaluationConfigs()).map((loaded) => loaded.config);
    expect(evaluation?.mask.policy).toBe("all-observations");
    expect(informative?.mask.policy).toBe("turn-stats");
    for (const config of [evaluation, informative]) {
      expect(config?.mask.weights.enabled).toBe(false);
      // The rest of the baseline's mask settings stay: corpus novelty is still counted.
      expect(config?.mask.corpus_novelty.enabled).toBe(true);
      expect(config?.output.validation_fraction).toBe(0.25);
    }
  });
});
