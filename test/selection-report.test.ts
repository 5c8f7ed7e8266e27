import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { statsCommand } from "../src/cli/stats-command.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { Dashboard } from "../src/dashboard/build-dashboard.ts";
import { dashboardHtml } from "../src/dashboard/page-html.ts";
import { finalizeOutput } from "../src/output/finalize.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { filteringPlanOf } from "../src/output/selection-summary.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { selectionActive } from "../src/select/selection-active.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { tempDir } from "./helpers.ts";
import { SELECT_RESOLVED, selectResolvedReference } from "./support/select-resolved-reference.ts";

/**
 * configs/select-resolved.yaml's output reports what its filters, selection and judge did
 * wherever curation is reported: the manifest (filters, selection, scoring blocks), `stats`, the
 * dataset card, the dashboard and `verify` — and the numbers are those of the filtered/ entries
 * and the stages' markers.
 */
const exec = promisify(execFile);
const CONFIG = SELECT_RESOLVED;

/** The job's output (`run --workers 2` with a fake judge), shared with the other files that read it. */
let out = "";

interface Entry {
  stage: string;
  rule?: string;
}

function entries(dir: string): Entry[] {
  return readdirSync(join(dir, "filtered"))
    .sort()
    .flatMap((name) =>
      readFileSync(join(dir, "filtered", name), "utf8")
        .split("\n")
        .filter(Boolean),
    )
    .map((line) => JSON.parse(line) as Entry);
}

function countBy(list: Entry[], stage: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of list) if (e.stage === stage) counts[e.rule ?? ""] = (counts[e.rule ?? ""] ?? 0) + 1;
  return counts;
}

const readManifest = (dir: string) => JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;

beforeAll(async () => {
  out = (await selectResolvedReference()).output;
}, 600_000);

describe("filters, selection and scoring in the manifest", () => {
  it("counts each filter and selection rule as the filtered/ entries do, and the selection marker's decision", () => {
    const manifest = readManifest(out);
    const list = entries(out);
    const byFilter = countBy(list, "filter");
    expect(manifest.filters?.by_rule).toMatchObject(byFilter);
    for (const [name, n] of Object.entries(manifest.filters?.by_rule ?? {})) expect(n, name).toBe(byFilter[name] ?? 0);
    expect(manifest.filters?.filtered).toBe(manifest.counts.filtered_by_stage.filter);
    // Not vacuous: two filters dropped records.
    expect(Object.keys(byFilter).sort()).toEqual(["judge-score", "resolved-only"]);

    const marker = JSON.parse(readFileSync(join(out, "select/selection.done.json"), "utf8")).data;
    expect(manifest.selection).toEqual({ records: marker.records, kept: marker.kept, dropped: marker.dropped, caps: marker.caps });
    const bySelection = countBy(list, "selection");
    for (const [rule, n] of Object.entries(manifest.selection?.dropped ?? {})) expect(n, rule).toBe(bySelection[rule] ?? 0);
    expect(manifest.selection?.dropped.max_per).toBeGreaterThan(0);
  });

  it("sums each scorer's rerun-stable counts over the task markers, and leaves out what a cached rerun changes", () => {
    const manifest = readManifest(out);
    const markers = readdirSync(join(out, "score"))
      .filter((name) => name.endsWith(".done.json"))
      .map((name) => JSON.parse(readFileSync(join(out, "score", name), "utf8")).data.scorers.judge);
    const judgeSummary = manifest.scoring?.judge;
    expect(judgeSummary?.name).toBe("judge");
    for (const key of ["records", "ok", "malformed", "failed", "skipped", "requests", "prompt_tokens", "completion_tokens"] as const)
      expect(judgeSummary?.[key], key).toBe(markers.reduce((sum, m) => sum + m[key], 0));
    expect(judgeSummary?.records).toBeGreaterThan(0);
    for (const key of ["cached", "http_requests", "retries", "paid_prompt_tokens", "paid_completion_tokens"])
      expect(judgeSummary).not.toHaveProperty(key);
  });

  it("with the plan's filtering field (what run-job writes once wired), lists every filter in config order and names the judge's model and rubric", async () => {
    const copy = tempDir("lwm-select-report-plan-");
    rmSync(copy, { recursive: true, force: true });
    await exec("cp", ["-r", out, copy]);
    const job = await planJob(loadConfig(CONFIG, { output: copy }));
    const filtering = filteringPlanOf({ filters: job.filters, scorers: job.scorers, selectActive: selectionActive(job.config.select) });
    const planPath = join(copy, "tasks/plan.json");
    writeFileSync(planPath, JSON.stringify({ ...JSON.parse(readFileSync(planPath, "utf8")), filtering }));
    const { manifest } = await finalizeOutput(copy);
    expect(Object.keys(manifest.filters?.by_rule ?? {})).toEqual(["swe-and-terminal", "resolved-only", "judge-score"]);
    expect(manifest.filters?.by_rule["swe-and-terminal"]).toBe(0);
    expect(manifest.scoring?.judge).toMatchObject({ model: "Qwen/Qwen3-8B", scope: "trajectory", aggregate: "mean" });
    expect(manifest.scoring?.judge?.rubric_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await verifyOutput(copy)).problems).toEqual([]);
  });
});

describe("stats, card and dashboard", () => {
  afterEach(() => vi.restoreAllMocks());

  it("stats prints each filter's and rule's drops and the judge's counts", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    await statsCommand(out);
    const lines = log.mock.calls.map((call) => String(call[0]));
    const manifest = readManifest(out);
    const by = manifest.filters?.by_rule ?? {};
    expect(lines).toContain(
      `filters and selection: ${(manifest.filters?.filtered ?? 0) + (manifest.selection?.dropped.max_per ?? 0)} record(s) dropped; selection kept ${manifest.selection?.kept} of ${manifest.selection?.records} (filtered/, stages filter and selection)`,
    );
    expect(lines.some((l) => /^ {2}filter +resolved-only +(\d+)$/.exec(l)?.[1] === String(by["resolved-only"]))).toBe(true);
    expect(lines.some((l) => /^ {2}filter +judge-score +(\d+)$/.exec(l)?.[1] === String(by["judge-score"]))).toBe(true);
    expect(lines.some((l) => /^ {2}selection +max_per +(\d+)$/.exec(l)?.[1] === String(manifest.selection?.dropped.max_per))).toBe(true);
    const judgeLine = lines.find((l) => l.startsWith("  judge "));
    expect(judgeLine?.split(/ +/).slice(5, 7)).toEqual([String(manifest.scoring?.judge?.records), String(manifest.scoring?.judge?.ok)]);
  });

  it("the card has a Filters and selection section and a Model scoring section with the numbers", () => {
    const card = readFileSync(join(out, "README.md"), "utf8");
    const manifest = readManifest(out);
    expect(card).toContain("## Filters and selection");
    expect(card).toContain(`| filter | \`resolved-only\` | ${manifest.filters?.by_rule["resolved-only"]} |`);
    expect(card).toContain(`| selection | \`max_per\` | ${manifest.selection?.dropped.max_per} |`);
    expect(card).toContain(`Selection decided over ${manifest.selection?.records} records and kept ${manifest.selection?.kept}.`);
    expect(card).toContain("## Model scoring");
    expect(card).toMatch(
      new RegExp(`\\| \`judge\` \\|[^\\n]*\\| ${manifest.scoring?.judge?.records} \\| ${manifest.scoring?.judge?.ok} \\|`),
    );
  });

  it("the dashboard carries the counts per rule and the scorer's", async () => {
    const dashboard = await Dashboard.open([out]);
    try {
      const data = await dashboard.data({ live: false });
      const run = data.runs[0];
      const manifest = readManifest(out);
      expect(run?.filtering?.byRule).toContainEqual({
        stage: "filter",
        rule: "resolved-only",
        records: manifest.filters?.by_rule["resolved-only"],
      });
      expect(run?.filtering?.byRule).toContainEqual({ stage: "selection", rule: "max_per", records: manifest.selection?.dropped.max_per });
      expect(run?.filtering?.scorers[0]).toMatchObject({ name: "judge", records: manifest.scoring?.judge?.records });
      // The curation panel's examples now come from every filtered file, filter and selection entries included.
      expect(run?.curation?.examples.some((e) => e.stage === "selection")).toBe(true);
      const html = dashboardHtml(data);
      expect(html).toContain(`{"stage":"filter","rule":"resolved-only","records":${manifest.filters?.by_rule["resolved-only"]}}`);
    } finally {
      await dashboard.close();
    }
  });
});

describe("verify", () => {
  it("passes on the output", async () => {
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it("reports a filtered/ file whose entries no longer match the manifest's counts per stage and rule", async () => {
    const copy = tempDir("lwm-select-report-bad-");
    rmSync(copy, { recursive: true, force: true });
    await exec("cp", ["-r", out, copy]);
    const name = readdirSync(join(copy, "filtered"))
      .sort()
      .find((file) => readFileSync(join(copy, "filtered", file), "utf8").includes('"rule":"resolved-only"')) as string;
    const path = join(copy, "filtered", name);
    // Same length, another rule: sizes hold, the sha256 and the counts per rule do not.
    writeFileSync(path, readFileSync(path, "utf8").replace('"rule":"resolved-only"', '"rule":"resolved-onlx"'));
    const messages = (await verifyOutput(copy)).problems.map((p) => p.message);
    expect(messages).toContainEqual(
      expect.stringMatching(/^filters\.by_rule\.resolved-only is \d+, but the filtered files hold \d+ such entries$/),
    );
    expect(messages).toContainEqual("filters.by_rule.resolved-onlx is 0, but the filtered files hold 1 such entries");
  });

  it("reports a manifest whose filter, selection or stage count was edited (on an output without curation the stage check holds too)", async () => {
    const copy = tempDir("lwm-select-report-edit-");
    rmSync(copy, { recursive: true, force: true });
    await exec("cp", ["-r", out, copy]);
    const manifest = readManifest(copy);
    (manifest.selection as NonNullable<Manifest["selection"]>).dropped.max_per += 1;
    (manifest.filters as NonNullable<Manifest["filters"]>).by_rule["judge-score"] = (manifest.filters?.by_rule["judge-score"] ?? 0) + 1;
    manifest.counts.filtered_by_stage.selection = (manifest.counts.filtered_by_stage.selection ?? 0) + 1;
    delete manifest.curation;
    writeFileSync(join(copy, "manifest.json"), JSON.stringify(manifest, null, 2));
    const messages = (await verifyOutput(copy)).problems.map((p) => p.message);
    expect(messages).toContainEqual(
      expect.stringMatching(/^selection\.dropped\.max_per is \d+, but the filtered files hold \d+ such entries$/),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(/^filters\.by_rule\.judge-score is \d+, but the filtered files hold \d+ such entries$/),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(/^counts\.filtered_by_stage\.selection is \d+, but the filtered files hold \d+ such entries$/),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(/^selection\.records is \d+, but selection\.kept \+ selection\.dropped make \d+$/),
    );
  });
});
