import { cpSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AblationReport } from "../src/ablate/report.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { Dashboard } from "../src/dashboard/build-dashboard.ts";
import { type DashboardData, NOVELTY_BIN_BITS } from "../src/dashboard/dashboard-data.ts";
import { DuckSession, num } from "../src/dashboard/duckdb-session.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { brokenWords } from "./support/broken-words.ts";
import { openDashboardPage } from "./support/dashboard-page.ts";
import { CHROMIUM, launchChromium } from "./support/headless-chromium.ts";
import { optedOut, skippedTitle } from "./support/test-skips.ts";

/**
 * The dashboard panels of issue 39 (measured masks): corpus novelty (manifest novelty block and the
 * stats table's corpus_novelty), the controls' synthesis counts, and an ablation folder's table.
 */

const ARTIFACTS = join(ROOT, "artifacts");
const haveChromium = existsSync(CHROMIUM);
const skipBrowser = !haveChromium && optedOut("browser");
if (!haveChromium && !skipBrowser)
  throw new Error(`${CHROMIUM} is missing: see test/dashboard-browser.test.ts (apt-get install chromium, or LWM_TEST_SKIP=browser)`);

/** A class rule on corpus_novelty ahead of the default rules, so the histogram has a bound to draw. */
const NOVELTY_RULE = { name: "Boilerplate", when: { corpus_novelty: { max: 3 } } };

interface Run {
  dir: string;
  manifest: Manifest;
}

/** The demo with corpus novelty on and a class rule on it. */
async function noveltyRun(): Promise<Run> {
  const config = join(ROOT, "configs/demo.yaml");
  const defaults = loadConfig(config).config.mask.classes;
  const dir = tempDir("lwm-dash-novelty-");
  const loaded = loadConfig(config, {
    output: dir,
    set: [
      { key: "mask.corpus_novelty.enabled", value: true },
      { key: "mask.classes", value: [NOVELTY_RULE, ...defaults] },
    ],
  });
  const result = await runJob(await planJob(loaded), { workers: 1 });
  if (!result.manifest) throw new Error("unfinished run");
  return { dir, manifest: result.manifest };
}

/** The demo with edge-case synthesis (configs/demo-synthesis.yaml; corpus novelty cannot join it yet: its count stage has no novelty lookup). */
async function synthesisRun(): Promise<Run> {
  const dir = tempDir("lwm-dash-synthesis-");
  const result = await runJob(await planJob(loadConfig(join(ROOT, "configs/demo-synthesis.yaml"), { output: dir })), { workers: 1 });
  if (!result.manifest) throw new Error("unfinished run");
  return { dir, manifest: result.manifest };
}

/** The demo as it is: no novelty, no controls. */
async function plainRun(): Promise<Run> {
  const dir = tempDir("lwm-dash-plain-");
  const result = await runJob(await planJob(loadConfig(join(ROOT, "configs/demo.yaml"), { output: dir })), { workers: 1 });
  if (!result.manifest) throw new Error("unfinished run");
  return { dir, manifest: result.manifest };
}

const interval = (mean: number, half: number | null, n: number) => ({
  n,
  mean,
  half,
  low: half === null ? null : mean - half,
  high: half === null ? null : mean + half,
});

/**
 * An ablation folder as `lwm-data ablate --out DIR` leaves it: DIR/ablate.json and the variants'
 * builds under DIR/variants/ (here a copy of a real run as the baseline; the numbers are made up,
 * the real ablate's folder is opened in test/ablate-e2e.test.ts).
 */
function ablationFolder(run: Run): { dir: string; report: AblationReport } {
  const dir = tempDir("lwm-dash-ablate-");
  const baseline = "mask.policy=all-observations";
  mkdirSync(join(dir, "variants"), { recursive: true });
  cpSync(run.dir, join(dir, "variants", baseline), { recursive: true });
  const runs = (losses: number[]) =>
    losses.map((eval_loss, seed) => ({
      seed,
      eval_loss,
      eval_tokens: 13_349,
      eval_subset_loss: eval_loss - 0.02,
      eval_subset_tokens: 12_698,
      awb_loss: eval_loss + 0.3,
      awb_rows: 166,
      awb_tokens: 13_349,
      awb_unscored: 0,
      train_tokens: 65_536,
      trained_weight: 40_000,
      steps: 64,
      vocab: 2044,
      unknown_tokens: 0,
      weight_column: "loss_mask",
      parameters: 262_000,
      cpu_seconds: 8.5,
    }));
  const report: AblationReport = {
    config: "/somewhere/configs/demo.yaml",
    command: { varies: [{ key: "mask.policy", values: ["all-observations", "turn-stats"] }], seeds: 3, tokens: 65_536, model: "tiny" },
    trainer: {},
    eval: { dir: "", split: "validation", labels: "", informative: { dir: "", labels: "" } },
    common_overrides: [],
    baseline,
    variants: [
      {
        name: baseline,
        set: [{ key: "mask.policy", value: "all-observations" }],
        dir: "",
        loss: interval(3.8888, 0.2399, 3),
        difference: null,
        informative_loss: interval(3.8693, 0.2418, 3),
        informative_difference: null,
        awb_loss: interval(4.1888, 0.25, 3),
        awb_difference: null,
        trained_weight: 47_718,
        runs: runs([3.7, 3.9, 4.0666]),
      },
      {
        name: "mask.policy=turn-stats",
        set: [{ key: "mask.policy", value: "turn-stats" }],
        dir: "",
        loss: interval(4.0647, 0.1111, 3),
        difference: interval(0.1759, 0.2049, 3),
        informative_loss: interval(4.0265, 0.1098, 3),
        informative_difference: interval(0.1572, 0.2029, 3),
        awb_loss: interval(4.3647, 0.12, 3),
        awb_difference: interval(-0.0123, 0.01, 3),
        trained_weight: 38_520,
        runs: runs([4.0, 4.05, 4.1441]),
      },
    ],
  };
  writeFileSync(join(dir, "ablate.json"), JSON.stringify(report));
  return { dir, report };
}

let novel: Run;
let synthesized: Run;
let plain: Run;
let data: DashboardData;
let synthesisData: DashboardData;

async function dashboardData(dir: string): Promise<DashboardData> {
  const dashboard = await Dashboard.open([dir]);
  try {
    return await dashboard.data({ live: false });
  } finally {
    dashboard.close();
  }
}

beforeAll(async () => {
  [novel, synthesized, plain] = await Promise.all([noveltyRun(), synthesisRun(), plainRun()]);
  data = await dashboardData(novel.dir);
  synthesisData = await dashboardData(synthesized.dir);
}, 300_000);

describe("dashboard data: corpus novelty, synthesis counts, ablation", () => {
  it("the corpus novelty panel's counts are the manifest's, and its histogram bins every turn's corpus_novelty", async () => {
    const block = novel.manifest.novelty;
    if (!block) throw new Error("the run has no novelty block");
    const novelty = data.runs[0]?.novelty;
    expect(novelty).toMatchObject({ observations: block.observations, distinct: block.distinct });
    expect(novelty?.byCount).toEqual(Object.entries(block.by_count).map(([bucket, distinct]) => ({ bucket, distinct })));
    expect(novelty?.byCount.reduce((s, b) => s + b.distinct, 0)).toBe(block.distinct);
    expect(novelty?.thresholds).toEqual([{ value: 3, bound: "max", class: "Boilerplate", rule: 1 }]);
    // The histogram, recomputed here from the stats table's rows (binned in JavaScript, not SQL).
    const db = await DuckSession.open();
    try {
      const files = (novel.manifest.masking?.stats_files ?? []).map((f) => `'${join(novel.dir, f.path)}'`).join(", ");
      const rows = await db.rows(`SELECT domain, corpus_novelty, obs_tokens FROM read_parquet([${files}])`);
      const expected = new Map<string, { turns: number; obsTokens: number }>();
      for (const row of rows) {
        const bin = Math.floor(num(row.corpus_novelty) / NOVELTY_BIN_BITS);
        const key = `${row.domain}|${bin * NOVELTY_BIN_BITS}`;
        const entry = expected.get(key) ?? { turns: 0, obsTokens: 0 };
        entry.turns += 1;
        entry.obsTokens += num(row.obs_tokens);
        expected.set(key, entry);
      }
      const shown = new Map(novelty?.histogram.map((b) => [`${b.domain}|${b.x1}`, { turns: b.turns, obsTokens: b.obsTokens }]));
      expect(shown).toEqual(expected);
      expect(rows.length).toBe((novel.manifest.masking?.stats_files ?? []).reduce((s, f) => s + f.rows, 0));
      // Repeated observations exist in the demo (low bits) and so do unique ones (high bits): the histogram is spread.
      expect(new Set(novelty?.histogram.map((b) => b.x1)).size).toBeGreaterThan(3);
    } finally {
      db.close();
    }
  });

  it("the controls panel carries the synthesis counts per domain and kind, and the rejections, as the manifest has them", () => {
    const controls = synthesized.manifest.controls;
    // Manifests of the mix control count eligible trajectories; older ones the trajectories drawn (synthesis_asked).
    const basis = controls?.synthesis_eligible ?? controls?.synthesis_asked;
    if (!controls || !basis) throw new Error("the run has no synthesis counts");
    const synthesis = synthesisData.runs[0]?.controls?.synthesis;
    expect(synthesis?.basis).toBe(controls.synthesis_eligible ? "eligible" : "asked");
    const expected = Object.entries(basis).flatMap(([domain, kinds]) =>
      Object.entries(kinds).map(([kind, asked]) => ({ domain, kind, asked, written: controls.synthesized?.[domain]?.[kind] ?? 0 })),
    );
    // Kinds written without a basis entry would be rows too; the demo has none.
    expect(
      Object.entries(controls.synthesized ?? {}).every(([domain, kinds]) =>
        Object.keys(kinds).every((kind) => basis[domain]?.[kind] !== undefined),
      ),
    ).toBe(true);
    expect(synthesis?.rows.length).toBe(expected.length);
    expect(new Set(synthesis?.rows.map((r) => JSON.stringify(r)))).toEqual(new Set(expected.map((r) => JSON.stringify(r))));
    expect(synthesis?.rows.some((r) => r.written > 0)).toBe(true);
    expect(synthesis?.rejected.reduce((s, r) => s + r.count, 0)).toBe(
      Object.values(controls.synthesis_rejected ?? {}).reduce((s, n) => s + n, 0),
    );
    // The mix control's target against realised shares, one row per domain and targeted kind.
    const shares = Object.entries(controls.synthesis_shares ?? {}).flatMap(([domain, kinds]) =>
      Object.entries(kinds).map(([kind, share]) => ({ domain, kind, ...share })),
    );
    expect(shares.length).toBeGreaterThan(0);
    const byKey = (a: { domain: string; kind: string }, b: { domain: string; kind: string }) =>
      `${a.domain}|${a.kind}` < `${b.domain}|${b.kind}` ? -1 : 1;
    expect(synthesis?.shares).toEqual([...shares].sort(byKey));
  });

  it("a run without corpus novelty or controls has neither panel's data", async () => {
    const dashboard = await Dashboard.open([plain.dir]);
    try {
      const run = (await dashboard.data({ live: false })).runs[0];
      expect(run?.novelty).toBeUndefined();
      expect(run?.controls).toBeUndefined();
    } finally {
      dashboard.close();
    }
  });

  it("an ablation folder opens with its table, and its baseline variant's build as the run", async () => {
    const { dir, report } = ablationFolder(plain);
    const dashboard = await Dashboard.open([dir]);
    try {
      const opened = await dashboard.data({ live: false });
      expect(opened.runs[0]?.summary.dir).toBe(join(dir, "variants", report.baseline));
      expect(opened.runs[0]?.summary.tokens).toBe(plain.manifest.tokens.total);
      expect(opened.ablation?.variants.map((v) => [v.name, v.loss.mean, v.difference?.mean ?? null, v.awbLoss?.mean])).toEqual(
        report.variants.map((v) => [v.name, v.loss.mean, v.difference?.mean ?? null, v.awb_loss?.mean]),
      );
      expect(opened.ablation).toMatchObject({ evalTokens: 13_349, informativeTokens: 12_698, awbRows: 166, seeds: 3 });
    } finally {
      dashboard.close();
    }
    // A folder with neither a manifest nor an ablation report is still the manifest error.
    await expect(Dashboard.open([tempDir("lwm-dash-empty-")])).rejects.toThrow(/manifest\.json not found/);
  });
});

const suiteTitle = "measured-mask panels in headless Chromium";
describe.skipIf(skipBrowser)(skipBrowser ? skippedTitle(suiteTitle, `LWM_TEST_SKIP=browser, no ${CHROMIUM}`) : suiteTitle, () => {
  let browser: Browser;
  const cleanups: (() => void)[] = [];
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    // The browser first: its pages stop asking before their servers and databases close.
    await browser?.close();
    for (const cleanup of cleanups) cleanup();
  });

  const open = (dirs: string[], width = 1280) => openDashboardPage(browser, dirs, cleanups, width);

  /** A chart's data points, its data marks (bars, rectangles, dots, interval rules: not axes or grid lines), and any error. */
  const chartOf = (page: Page, name: string) =>
    page.$eval(`figure.chart[data-chart="${name}"]`, (f) => ({
      points: Number(f.getAttribute("data-points")),
      marks: f.querySelectorAll(":is([aria-label=bar], [aria-label=rect]) rect, [aria-label=dot] circle, [aria-label=rule] line").length,
      error: f.querySelector("p.error")?.textContent ?? null,
    }));
  const digits = (text: string | null) => Number((text ?? "").replaceAll(",", ""));

  it("corpus novelty: a section under Masking with the manifest's counts, occurrences per bucket and the per-turn histogram", async () => {
    const { page, errors } = await open([novel.dir]);
    await page.click("nav#contents a[href='#view-masking']");
    expect(await page.locator("nav .view-links a[href='#corpus-novelty']").count()).toBe(1);
    await page.click("nav .view-links a[href='#corpus-novelty']");
    const block = novel.manifest.novelty;
    if (!block) throw new Error("no novelty block");
    expect(digits(await page.locator("#corpus-novelty [data-novelty-count=observations]").textContent())).toBe(block.observations);
    expect(digits(await page.locator("#corpus-novelty [data-novelty-count=distinct]").textContent())).toBe(block.distinct);
    for (const [bucket, distinct] of Object.entries(block.by_count))
      expect(digits(await page.locator(`[data-novelty-bucket="${novel.dir}|${bucket}"]`).textContent())).toBe(distinct);
    const byCount = await chartOf(page, "novelty-by-count");
    expect(byCount).toMatchObject({ points: Object.keys(block.by_count).length, error: null });
    expect(byCount.marks).toBeGreaterThanOrEqual(byCount.points);
    const histogram = await chartOf(page, "histogram-corpus_novelty");
    expect(histogram).toMatchObject({ points: data.runs[0]?.novelty?.histogram.length, error: null });
    expect(histogram.marks).toBeGreaterThanOrEqual(histogram.points);
    // The rule's bound is drawn and labelled.
    expect(
      await page.locator("figure[data-chart='histogram-corpus_novelty'] svg text", { hasText: "Boilerplate ≤ 3" }).count(),
    ).toBeGreaterThan(0);
    await page.locator("#corpus-novelty").screenshot({ path: join(ARTIFACTS, "dashboard-corpus-novelty.png") });
    expect(errors).toEqual([]);
    // Synthesis counts in the Controls panel of the synthesis run.
    const synth = await open([synthesized.dir]);
    await synth.page.click("nav#contents a[href='#controls']");
    const controls = synthesized.manifest.controls;
    const cell = async (kind: string, key: string) =>
      digits(await synth.page.locator(`[data-synthesis-${kind}="${synthesized.dir}|${key}"]`).textContent());
    for (const [domain, kinds] of Object.entries(controls?.synthesis_eligible ?? controls?.synthesis_asked ?? {}))
      for (const [kind, asked] of Object.entries(kinds)) {
        expect(await cell("asked", `${domain}|${kind}`)).toBe(asked);
        expect(await cell("written", `${domain}|${kind}`)).toBe(controls?.synthesized?.[domain]?.[kind] ?? 0);
      }
    for (const [reason, count] of Object.entries(controls?.synthesis_rejected ?? {})) expect(await cell("rejected", reason)).toBe(count);
    // The target shares: each realised share as the manifest has it.
    const shares = Object.entries(controls?.synthesis_shares ?? {}).flatMap(([domain, kinds]) =>
      Object.entries(kinds).map(([kind, s]) => ({ domain, kind, ...s })),
    );
    expect(shares.length).toBeGreaterThan(0);
    for (const share of shares) {
      const text = await synth.page.locator(`[data-synthesis-realised="${synthesized.dir}|${share.domain}|${share.kind}"]`).textContent();
      expect(text).toBe(`${(100 * share.realised).toFixed(1)}%`);
    }
    await synth.page.locator("#synthesis-shares").screenshot({ path: join(ARTIFACTS, "dashboard-synthesis-shares.png") });
    await synth.page.locator("#synthesis-table").screenshot({ path: join(ARTIFACTS, "dashboard-synthesis.png") });
    expect(synth.errors).toEqual([]);
    // A run without them: no section, no link, no synthesis table.
    const other = await open([plain.dir]);
    expect(await other.page.locator("#corpus-novelty, nav a[href='#corpus-novelty'], #synthesis-table").count()).toBe(0);
    expect(other.errors).toEqual([]);
  });

  it("an ablation folder opens on an Ablation tab: the table with intervals and paired differences, and both charts", async () => {
    const { dir, report } = ablationFolder(plain);
    const { page, errors } = await open([dir]);
    const tabs = await page.$$eval("nav#contents .tab", (links) => links.map((l) => l.getAttribute("href")));
    expect(tabs[0]).toBe("#ablation");
    expect(await page.locator("#ablation").isVisible()).toBe(true);
    const cell = async (key: string) => page.locator(`#ablation-table [data-ablation="${key}"]`).textContent();
    expect(await cell("0|loss")).toBe("3.8888 [3.6489, 4.1287]");
    expect(await cell("1|difference")).toBe("+0.1759 [-0.0290, 0.3808]");
    expect(await cell("1|informative-difference")).toBe("+0.1572 [-0.0457, 0.3601]");
    expect(await cell("1|awb-difference")).toBe("-0.0123 [-0.0223, -0.0023]");
    expect(await page.locator("#ablation-table tbody tr").count()).toBe(report.variants.length);
    expect(await page.locator("#ablation-table tbody tr").first().textContent()).toMatch(/\(baseline\)/);
    const loss = await chartOf(page, "ablation-loss");
    expect(loss).toMatchObject({ points: 2 * 3, error: null }); // two variants × three evaluations
    expect(loss.marks).toBeGreaterThanOrEqual(2 * loss.points + 6); // an interval and a dot each, plus the six seeds' dots
    const difference = await chartOf(page, "ablation-difference");
    expect(difference).toMatchObject({ points: 3, error: null });
    expect(difference.marks).toBeGreaterThanOrEqual(2 * difference.points);
    await page.locator("#ablation").screenshot({ path: join(ARTIFACTS, "dashboard-ablation.png") });
    // The other tabs are the baseline's build.
    await page.click("nav#contents a[href='#view-overview']");
    expect(digits(await page.locator("[data-run='0'] [data-summary=tokens]").textContent())).toBe(plain.manifest.tokens.total);
    expect(errors).toEqual([]);
  });

  for (const width of [1024, 1440])
    it(`no word breaks in the new panels, in a ${width}-pixel window`, async () => {
      // An ablation whose baseline has corpus novelty, compared with the synthesis run: every new table at once.
      const { dir } = ablationFolder(novel);
      const { page, errors } = await open([dir, synthesized.dir], width);
      await page.click("nav#contents a[href='#all']");
      expect(await page.locator("#ablation-table, #novelty-table, #synthesis-table").count()).toBe(3);
      expect(await brokenWords(page)).toEqual([]);
      expect(await page.locator("html").evaluate((html) => html.scrollWidth <= (html.ownerDocument.defaultView?.innerWidth ?? 0))).toBe(
        true,
      );
      expect(errors).toEqual([]);
    });
});
