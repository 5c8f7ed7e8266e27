import { cpSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MeanInterval } from "../src/ablate/confidence.ts";
import type { AblationReport, SeenOnceEval, VariantReport } from "../src/ablate/report.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { brokenWords } from "./support/broken-words.ts";
import { openDashboardPage } from "./support/dashboard-page.ts";
import { CHROMIUM, launchChromium } from "./support/headless-chromium.ts";
import { optedOut, skippedTitle } from "./support/test-skips.ts";

/**
 * The Ablation tab's seen-once columns (held-out observations seen once in the corpus): numbers where
 * the report has them, n/a where the subset is empty, no column for an older report. The ablation
 * folders are written here around a real build (the numbers are made up; test/ablate-e2e.test.ts
 * opens a real ablate folder's data).
 */

const haveChromium = existsSync(CHROMIUM);
const skipBrowser = !haveChromium && optedOut("browser");
if (!haveChromium && !skipBrowser)
  throw new Error(`${CHROMIUM} is missing: see test/dashboard-browser.test.ts (apt-get install chromium, or LWM_TEST_SKIP=browser)`);

const BASELINE = "mask.policy=all-observations";
const m = (mean: number, half: number): MeanInterval => ({ n: 3, mean, half, low: mean - half, high: mean + half });

function variant(name: string, index: number, seenOnce: "numbers" | "n/a" | "absent"): VariantReport {
  const base = 3.8 + index / 10;
  return {
    name,
    set: [{ key: "mask.policy", value: name.split("=")[1] as string }],
    dir: "",
    loss: m(base, 0.2),
    difference: index === 0 ? null : m(0.1, 0.05),
    informative_loss: m(base, 0.2),
    informative_difference: index === 0 ? null : m(0.1, 0.05),
    ...(seenOnce === "numbers"
      ? { seen_once_loss: m(base + 1, 0.3), seen_once_difference: index === 0 ? null : m(-0.2345, 0.1) }
      : seenOnce === "n/a"
        ? { seen_once_loss: null, seen_once_difference: null }
        : {}),
    trained_weight: 40_000,
    runs: [0, 1, 2].map((seed) => ({ seed, eval_loss: base + seed / 100 }) as VariantReport["runs"][number]),
  };
}

/** An ablation folder around `runDir` (its baseline build) with the given seen-once state. */
function ablationFolder(runDir: string, seenOnce: "numbers" | "n/a" | "absent"): string {
  const dir = tempDir("lwm-ablate-dash-");
  mkdirSync(join(dir, "variants"), { recursive: true });
  cpSync(runDir, join(dir, "variants", BASELINE), { recursive: true });
  const seen: SeenOnceEval | undefined =
    seenOnce === "absent"
      ? undefined
      : { dir: "", counts_dir: "", observations: 180, tokens: seenOnce === "numbers" ? 2839 : 0, labels: "" };
  const report: AblationReport = {
    config: "/somewhere/configs/demo.yaml",
    command: { varies: [{ key: "mask.policy", values: ["all-observations", "turn-stats"] }], seeds: 3, tokens: 65_536, model: "tiny" },
    trainer: {},
    eval: { dir: "", split: "validation", labels: "", informative: { dir: "", labels: "" }, ...(seen ? { seen_once: seen } : {}) },
    common_overrides: [],
    baseline: BASELINE,
    variants: [variant(BASELINE, 0, seenOnce), variant("mask.policy=turn-stats", 1, seenOnce)],
  };
  writeFileSync(join(dir, "ablate.json"), JSON.stringify(report));
  return dir;
}

const suiteTitle = "the Ablation tab's seen-once columns in headless Chromium";
describe.skipIf(skipBrowser)(skipBrowser ? skippedTitle(suiteTitle, `LWM_TEST_SKIP=browser, no ${CHROMIUM}`) : suiteTitle, () => {
  let browser: Browser;
  let runDir: string;
  const cleanups: (() => void)[] = [];
  beforeAll(async () => {
    runDir = tempDir("lwm-ablate-dash-run-");
    const config = writeConfig(`inputs:\n  - path: ${join(ROOT, "data/demo/terminal")}/*\noutput:\n  num_buckets: 1\n`);
    const result = await runJob(await planJob(loadConfig(config, { output: runDir })), { workers: 1 });
    if (!result.manifest) throw new Error("unfinished run");
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    // The browser first: its pages stop asking before their servers and databases close.
    await browser?.close();
    for (const cleanup of cleanups) cleanup();
  });

  const open = (dir: string, width = 1280) => openDashboardPage(browser, [dir], cleanups, width);
  const headers = (page: Page) => page.$$eval("#ablation-table th", (cells) => cells.map((c) => c.textContent));
  const chartPoints = (page: Page, name: string) =>
    page.$eval(`figure.chart[data-chart="${name}"]`, (f) => Number(f.getAttribute("data-points")));
  const cell = (page: Page, key: string) => page.locator(`#ablation-table [data-ablation="${key}"]`).textContent();

  it("shows the seen-once loss and Δ, in the table and both charts, and says how many tokens they score", async () => {
    const { page, errors } = await open(ablationFolder(runDir, "numbers"));
    expect(await headers(page)).toContain("seen-once obs: Δ [95% CI]");
    expect(await cell(page, "0|seen-once")).toBe("4.8000 [4.5000, 5.1000]");
    expect(await cell(page, "1|seen-once-difference")).toBe("-0.2345 [-0.3345, -0.1345]");
    expect(await chartPoints(page, "ablation-loss")).toBe(2 * 3); // two variants × held-out, informative, seen-once
    expect(await chartPoints(page, "ablation-difference")).toBe(3);
    expect(await page.locator("#ablation").textContent()).toMatch(
      /the 2,839 tokens of held-out observations seen once among the corpus's 180/,
    );
    expect(await brokenWords(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("reads n/a where no held-out observation is seen once (no point drawn), and has no such column for an older report", async () => {
    const empty = await open(ablationFolder(runDir, "n/a"), 1024);
    expect(await headers(empty.page)).toContain("seen-once obs: loss [95% CI]");
    expect(await empty.page.locator("#ablation-table [data-ablation$='seen-once']").count()).toBe(0);
    const lastCells = await empty.page.$$eval("#ablation-table tbody tr", (rows) =>
      rows.map((row) => [...row.querySelectorAll("td")].slice(-3, -1).map((td) => td.textContent)),
    );
    expect(lastCells).toEqual([
      ["n/a", "—"],
      ["n/a", "n/a"],
    ]);
    expect(await chartPoints(empty.page, "ablation-loss")).toBe(2 * 2);
    expect(await empty.page.locator("#ablation").textContent()).toMatch(
      /seen-once observations: n\/a \(every held-out observation occurs more than once/,
    );
    expect(await brokenWords(empty.page)).toEqual([]);
    expect(empty.errors).toEqual([]);

    const old = await open(ablationFolder(runDir, "absent"));
    expect((await headers(old.page)).some((h) => h?.includes("seen-once"))).toBe(false);
    expect(await chartPoints(old.page, "ablation-loss")).toBe(2 * 2);
    expect(old.errors).toEqual([]);
  });
});
