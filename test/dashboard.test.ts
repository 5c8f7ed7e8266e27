import { execFile } from "node:child_process";
import { cpSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { Dashboard } from "../src/dashboard/build-dashboard.ts";
import { type DashboardData, HISTOGRAM_STATS } from "../src/dashboard/dashboard-data.ts";
import { startDashboardServer } from "../src/dashboard/dashboard-server.ts";
import { DuckSession } from "../src/dashboard/duckdb-session.ts";
import { dashboardHtml } from "../src/dashboard/page-html.ts";
import { openRunOutput } from "../src/dashboard/run-output.ts";
import { curationData } from "../src/dashboard/stats-queries.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { makeCurated } from "./support/curated-output.ts";
import { type DashboardRun, dashboardRun, LOOSER_ECHO } from "./support/dashboard-runs.ts";

const run = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

let a: DashboardRun;
let b: DashboardRun;
let data: DashboardData;

beforeAll(async () => {
  [a, b] = await Promise.all([dashboardRun(), dashboardRun(LOOSER_ECHO)]);
  const dashboard = await Dashboard.open([a.dir, b.dir]);
  try {
    data = await dashboard.data({ live: false });
  } finally {
    dashboard.close();
  }
});

describe("dashboard data (DuckDB over the stats table)", () => {
  it("reproduces the manifest: per domain and class, and per domain", () => {
    const run = data.runs[0];
    if (!run) throw new Error("no run");
    const byClass: Record<string, Record<string, unknown>> = {};
    for (const c of run.classes) {
      const classes = byClass[c.domain] ?? {};
      classes[c.class] = { turns: c.turns, kept: c.kept, obs_tokens: c.obsTokens, kept_obs_tokens: c.keptObsTokens };
      byClass[c.domain] = classes;
    }
    expect(byClass).toEqual(a.manifest.masking.by_domain_class);
    for (const d of run.domains) {
      expect(d.tokens).toBe(a.manifest.domains[d.domain]?.tokens);
      expect(d.lossTokens).toBe(a.manifest.domains[d.domain]?.loss_tokens);
    }
    expect(run.summary).toMatchObject({
      recordsIn: a.manifest.counts.records_in,
      quarantined: a.manifest.counts.quarantined,
      tokens: a.manifest.tokens.total,
      lossTokens: a.manifest.tokens.loss,
      shards: a.manifest.shards.length,
    });
    expect(run.summary.quarantined).toBeGreaterThan(0);
  });

  it("histograms count every turn once per statistic, and the thresholds are the config's rule bounds", () => {
    const run = data.runs[0];
    if (!run) throw new Error("no run");
    for (const stat of HISTOGRAM_STATS) {
      const bins = run.histograms.filter((h) => h.stat === stat);
      expect(bins.reduce((s, h) => s + h.turns, 0)).toBe(run.summary.turns);
      for (const h of bins) expect(h.x2).toBeGreaterThan(h.x1);
    }
    // Default rules: Echo needs overlap ≥ 0.6 and novelty ≤ 0.34 (rule 2).
    expect(run.thresholds).toContainEqual({ stat: "overlap", value: 0.6, bound: "min", class: "Echo", rule: 2 });
    expect(run.thresholds).toContainEqual({ stat: "novelty", value: 0.34, bound: "max", class: "Echo", rule: 2 });
    expect(data.runs[1]?.thresholds).toContainEqual({ stat: "overlap", value: 0.4, bound: "min", class: "Echo", rule: 2 });
  });

  it("groups quarantined records by stage and field, with a real reason", () => {
    const reasons = data.runs[0]?.quarantine ?? [];
    expect(reasons.reduce((s, q) => s + q.count, 0)).toBe(a.manifest.counts.quarantined);
    expect(reasons.every((q) => q.example.length > 0)).toBe(true);
    expect(reasons.every((q) => !/\.\d+(\.|$)/.test(q.field))).toBe(true);
  });

  it("examples carry the turn's tokens: the trained text is the observation message the shard marks with loss", async () => {
    const examples = data.runs[0]?.examples ?? [];
    expect(examples.length).toBeGreaterThan(20);
    // The shards' messages column (the text form, include_messages) is an independent record of
    // what each turn trains; the example's trained token runs must decode to exactly that text.
    const rows = new Map<string, ReturnType<typeof shardRow>>();
    for (const shard of a.manifest.shards) {
      const file = await openShard(join(a.dir, shard.path));
      for (let i = 0; i < file.numRows; i++) {
        const row = shardRow(file, i);
        rows.set(row.id, row);
      }
    }
    let kept = 0;
    let masked = 0;
    for (const e of examples) {
      if (!e.tokens || e.tokens.omittedTokens > 0) continue;
      const runs = e.tokens.runs;
      expect(runs.find((r) => r.role === "action")?.text.startsWith("<|im_start|>user")).toBe(true);
      expect(runs.filter((r) => r.role === "action").every((r) => !r.trained)).toBe(true);
      const observation = rows.get(e.id)?.messages?.filter((m) => m.role === "assistant")[e.turnIndex];
      expect(observation?.loss).toBe(e.kept);
      const trained = runs
        .filter((r) => r.trained)
        .map((r) => r.text)
        .join("");
      if (e.kept) {
        expect(trained).toBe(`${observation?.content}<|im_end|>`);
        kept += 1;
      } else {
        expect(trained).toBe("");
        masked += 1;
      }
    }
    expect(kept).toBeGreaterThan(10);
    expect(masked).toBeGreaterThan(5);
  });

  it("compare: matches turns across runs, counts how they moved, and names the rules that differ", () => {
    const compare = data.compare;
    if (!compare) throw new Error("no compare");
    expect(compare.matched).toBe(data.runs[0]?.summary.turns);
    expect(compare.onlyA + compare.onlyB).toBe(0);
    expect(compare.transitions.reduce((s, t) => s + t.turns, 0)).toBe(compare.matched);
    // The looser Echo rule takes in turns the default rules put elsewhere.
    const echoB = compare.transitions.filter((t) => t.classB === "Echo").reduce((s, t) => s + t.turns, 0);
    const echoA = compare.transitions.filter((t) => t.classA === "Echo").reduce((s, t) => s + t.turns, 0);
    expect(echoB).toBeGreaterThan(echoA);
    expect(compare.rulesDiff).toContain("+ rule 2: Echo when overlap ≥ 0.4, novelty ≤ 0.5");
    expect(compare.rulesDiff).toContain("- rule 2: Echo when overlap ≥ 0.6, novelty ≤ 0.34");
    // Each run's examples know the other run's class for the same turn.
    const withOther = data.runs[0]?.examples.filter((e) => e.other) ?? [];
    expect(withOther.length).toBe(data.runs[0]?.examples.length);
  });
});

describe("dashboard over a curated run", () => {
  it("has no curation data for a run without it", () => {
    expect(data.runs[0]?.curation).toBeUndefined();
    expect(data.runs[0]?.summary.filtered).toBe(0);
  });

  it("carries the manifest's counts per domain and stage, the cluster sizes, and entries read from filtered/", async () => {
    const dir = tempDir("lwm-dash-curated-");
    cpSync(a.dir, dir, { recursive: true });
    const { manifest, entries } = await makeCurated(dir);
    const dashboard = await Dashboard.open([dir]);
    let curated: DashboardData;
    try {
      curated = await dashboard.data({ live: false });
    } finally {
      dashboard.close();
    }
    const run = curated.runs[0];
    const curation = run?.curation;
    if (!curation) throw new Error("no curation data");
    expect(run.summary.filtered).toBe(entries.length);
    expect(run.summary.recordsIn).toBe(manifest.counts.records_in);
    expect(curation.filtered).toBe(entries.length);
    const byDomain: Record<string, Record<string, number>> = {};
    for (const c of curation.byDomainStage) byDomain[c.domain] = { ...byDomain[c.domain], [c.stage]: c.records };
    expect(byDomain).toEqual(manifest.curation?.by_domain);
    expect(curation.clusters).toEqual({ count: 4, records: 9, largest: 3 });
    expect(curation.clusterSizes).toEqual([
      { from: 2, to: 2, label: "2", clusters: 3, records: 6 },
      { from: 3, to: 3, label: "3", clusters: 1, records: 3 },
    ]);
    expect(curation.settings).toMatch(/^exact on; near on .* against benchmarks\/awb\.jsonl/);
    // Every entry (fewer than the per-group limit here), read back from the JSONL with what it matched.
    const expected = entries.map((e) => ({
      id: e.id,
      domain: e.domain,
      stage: e.stage,
      reason: e.reason,
      source: e.source,
      ...(e.kept_id ? { keptId: e.kept_id, keptSource: e.kept_source } : {}),
      ...(e.benchmark ? { benchmark: e.benchmark, benchmarkId: e.benchmark_id } : {}),
    }));
    const key = (e: { stage: string; domain: string; id: string }) => `${e.stage}/${e.domain}/${e.id}`;
    expect(curation.examples).toEqual(expected.sort((x, y) => key(x).localeCompare(key(y))));
    // Capped per (stage, domain): the first ids of each group.
    const db = await DuckSession.open();
    try {
      const capped = await curationData(db, await openRunOutput(db, dir, 0), 1);
      const groups = new Set(curation.examples.map((e) => `${e.stage}/${e.domain}`));
      expect(capped?.examples.map((e) => `${e.stage}/${e.domain}`)).toEqual([...groups]);
      for (const e of capped?.examples ?? [])
        expect(curation.examples.find((x) => x.stage === e.stage && x.domain === e.domain)).toEqual(e);
    } finally {
      db.close();
    }
  });
});

describe("the dashboard's DuckDB session", () => {
  it("closes once the queries running at close() have answered, and refuses a query after it with a clear error", async () => {
    const db = await DuckSession.open();
    // A query long enough to be running when close() is called.
    const running = db.rows("SELECT count(*) AS n FROM range(30000000) t(i) WHERE i % 7 = 3");
    db.close();
    expect(await running).toEqual([{ n: "4285714" }]); // BIGINT as its digits
    await expect(db.rows("SELECT 1 AS one")).rejects.toThrow("dashboard query failed: the dashboard's database is closed");
    await expect(db.run("SELECT 1")).rejects.toThrow("the dashboard's database is closed");
    db.close(); // twice: nothing left to close
  });
});

describe("dashboard over a mixture run", () => {
  const open = async (dir: string) => {
    const dashboard = await Dashboard.open([dir]);
    try {
      return await dashboard.data({ live: false });
    } finally {
      dashboard.close();
    }
  };

  it("the Mixture panel's numbers are the manifest's: per source and per domain, before and after weighting", async () => {
    // Terminal and search pooled as one source with a target share, mcp thinned (drawing records out), swe as is.
    const demo = (domain: string) => join(ROOT, "data/demo", domain, "*");
    const config = writeConfig(
      [
        "inputs:",
        `  - { path: ${demo("terminal")}, source: tools }`,
        `  - { path: ${demo("search")}, source: tools }`,
        `  - path: ${demo("mcp")}`,
        `  - path: ${demo("swe")}`,
        "output: { dir: out, num_buckets: 2 }",
        "mixture: { seed: 7, max_factor: 6, sources: { tools: { share: 0.35 }, mcp: { factor: 0.5 } } }",
      ].join("\n"),
    );
    const dir = tempDir("lwm-dash-mixture-");
    await run(process.execPath, [CLI, "run", config, "--output", dir, "--progress", "none"]);
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;
    const summary = manifest.mixture;
    if (!summary) throw new Error("no mixture block");
    const mixed = (await open(dir)).runs[0];
    const mixture = mixed?.mixture;
    if (!mixture) throw new Error("no mixture data");
    expect(mixture).toMatchObject({
      mode: "shares",
      seed: 7,
      maxFactor: 6,
      totalTokens: "auto",
      totalLossTokens: summary.total_loss_tokens,
      droppedRecords: summary.dropped_records,
    });
    expect(mixture.droppedRecords).toBeGreaterThan(0);
    expect(mixed.summary.droppedByMixture).toBe(manifest.counts.dropped_by_mixture);
    const counts = (t: (typeof summary.sources)[string]["domains"][string]) => ({
      records: t.records,
      recordsOut: t.records_out,
      documentsOut: t.documents_out,
      tokens: t.tokens,
      tokensOut: t.tokens_out,
      lossTokens: t.loss_tokens,
      lossTokensOut: t.loss_tokens_out,
    });
    expect(mixture.sources).toEqual(
      Object.entries(summary.sources).map(([source, s]) => ({
        source,
        factor: s.factor,
        ...(s.target_share !== undefined ? { targetShare: s.target_share } : {}),
        domains: Object.keys(s.domains),
        ...counts(s),
        shareBefore: s.share_before,
        share: s.share,
      })),
    );
    expect(mixture.sources.find((s) => s.source === "tools")).toMatchObject({ targetShare: 0.35, domains: ["search", "terminal"] });
    // Per domain: the manifest's counts, shares of the run's trained tokens that add up to each source's.
    expect(mixture.domains.map(({ shareBefore: _b, share: _a, ...rest }) => rest)).toEqual(
      Object.entries(summary.sources).flatMap(([source, s]) =>
        Object.entries(s.domains).map(([domain, t]) => ({ source, domain, ...counts(t) })),
      ),
    );
    for (const s of mixture.sources) {
      const of = mixture.domains.filter((d) => d.source === s.source);
      expect(of.reduce((sum, d) => sum + d.share, 0)).toBeCloseTo(s.share, 5);
      expect(of.reduce((sum, d) => sum + d.shareBefore, 0)).toBeCloseTo(s.shareBefore, 5);
    }
    // Written tokens per domain are the manifest's domains block (every copy counted).
    for (const d of mixed.domains)
      expect(d.lossTokens).toBe(mixture.domains.filter((m) => m.domain === d.domain).reduce((sum, m) => sum + m.lossTokensOut, 0));
    expect(dashboardHtml({ ...data, runs: [mixed] })).toContain('"mixture":{"mode":"shares"');
  });

  it("an unweighted run has the block with every factor 1; an output from before mixtures opens without it", async () => {
    const plain = data.runs[0]?.mixture;
    expect(plain?.mode).toBe("none");
    expect(plain?.sources.every((s) => s.factor === 1 && s.lossTokens === s.lossTokensOut)).toBe(true);
    expect(plain?.sources.map((s) => s.source)).toEqual(Object.keys(a.manifest.mixture?.sources ?? {}));

    const old = tempDir("lwm-dash-premixture-");
    cpSync(a.dir, old, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(old, "manifest.json"), "utf8")) as Manifest;
    const { dropped_by_mixture: _dropped, ...counts } = manifest.counts;
    const { mixture: _mixture, ...rest } = manifest;
    writeFileSync(join(old, "manifest.json"), JSON.stringify({ ...rest, counts }));
    const run = (await open(old)).runs[0];
    expect(run?.mixture).toBeUndefined();
    expect(run?.summary.droppedByMixture).toBe(0);
    expect(run?.summary.recordsIn).toBe(manifest.counts.records_in);
  });
});

describe("dashboard over a controls run", () => {
  let out: string;
  let manifest: Manifest;
  const open = async (dir: string) => {
    const dashboard = await Dashboard.open([dir]);
    try {
      return await dashboard.data({ live: false, examplesPerGroup: 2 });
    } finally {
      dashboard.close();
    }
  };
  beforeAll(async () => {
    out = tempDir("lwm-dash-controls-");
    const result = await runJob(await planJob(loadConfig(join(ROOT, "configs/demo-controls.yaml"), { output: out })), { workers: 1 });
    if (!result.manifest) throw new Error("controls run unfinished");
    manifest = result.manifest;
  });

  it("the Controls panel's counts are the manifest's; each example's highlighted span is its observation's slice", async () => {
    const summary = manifest.controls;
    if (!summary) throw new Error("no controls block");
    const controls = (await open(out)).runs[0]?.controls;
    if (!controls) throw new Error("no controls data");
    expect(controls).toMatchObject({
      share: summary.share,
      counterfactualShare: summary.counterfactual_share,
      seed: summary.seed,
      labelled: summary.labelled,
      instructed: summary.instructed,
      counterfactual: summary.counterfactual,
    });
    const byDomain: Record<string, Record<string, number>> = {};
    for (const l of controls.labels) byDomain[l.domain] = { ...byDomain[l.domain], [l.label]: l.count };
    expect(byDomain).toEqual(summary.labels);
    // Turns with each label, from the stats table: at least one, at most one per label found.
    for (const l of controls.labels) {
      expect(l.turns, `${l.domain} ${l.label}`).toBeGreaterThan(0);
      expect(l.turns).toBeLessThanOrEqual(l.count);
      expect(l.keptTurns).toBeLessThanOrEqual(l.turns ?? 0);
    }

    // The shards, read apart from DuckDB: each sample's messages and controls column.
    const rows = new Map<
      string,
      {
        messages: { role: string; content: string }[];
        controls: { label: string; turn: number; start: number; end: number }[];
        instruction: string;
      }
    >();
    for (const shard of manifest.shards) {
      const file = await openShard(join(out, shard.path));
      for (let i = 0; i < file.numRows; i++) {
        const row = shardRow(file, i);
        const cell = file.table.getChild("controls")?.get(i) as {
          toArray(): { toJSON(): { label: string; turn: number; start: number; end: number } }[];
        };
        rows.set(row.id, {
          messages: row.messages ?? [],
          controls: cell.toArray().map((c) => c.toJSON()),
          instruction: String(file.table.getChild("control_instruction")?.get(i)),
        });
      }
    }
    // Bounded: up to 2 per (domain, label), and every (domain, label) of the manifest has one.
    const groups = new Map<string, number>();
    for (const e of controls.examples) groups.set(`${e.domain}/${e.label}`, (groups.get(`${e.domain}/${e.label}`) ?? 0) + 1);
    expect([...groups.keys()].sort()).toEqual(controls.labels.map((l) => `${l.domain}/${l.label}`).sort());
    expect(Math.max(...groups.values())).toBeLessThanOrEqual(2);
    let spans = 0;
    for (const e of controls.examples) {
      const row = rows.get(e.id);
      if (!row || !e.observation) throw new Error(`${e.id} turn ${e.turnIndex}: ${e.note}`);
      expect(e.instruction).toBe(row.instruction);
      expect(e.kind).toBe("instructed");
      const observation = Array.from(row.messages[2 + 2 * e.turnIndex]?.content ?? "");
      const evidence = e.observation.pieces.filter((p) => p.evidence);
      expect(evidence.length).toBeGreaterThan(0);
      for (const piece of evidence) {
        const { start, end } = piece.evidence ?? { start: 0, end: 0 };
        expect(piece.text).toBe(observation.slice(start, end).join(""));
        expect(row.controls).toContainEqual(expect.objectContaining({ label: e.label, turn: e.turnIndex, start }));
        spans += 1;
      }
      // The pieces are one stretch of the observation: what is shown plus what is counted.
      const shown = e.observation.pieces.map((p) => p.text).join("");
      expect(Array.from(shown).length + e.observation.omittedBefore + e.observation.omittedAfter).toBe(observation.length);
      expect(observation.slice(e.observation.omittedBefore).join("").startsWith(shown)).toBe(true);
    }
    expect(spans).toBeGreaterThanOrEqual(controls.examples.length);
    expect(dashboardHtml({ ...data, runs: [(await open(out)).runs[0] as DashboardData["runs"][number]] })).toContain(
      '"controls":{"share":1',
    );
  });

  it("a run without controls has no panel; a stats table without the labels column still opens", async () => {
    expect(data.runs[0]?.controls).toBeUndefined();
    expect(data.runs[1]?.controls).toBeUndefined();
    // Turn stats written before the labels column: the manifest's counts, no turns, no examples, no error.
    const old = tempDir("lwm-dash-prelabels-");
    cpSync(out, old, { recursive: true });
    const db = await DuckSession.open();
    try {
      for (const f of manifest.masking.stats_files) {
        const path = join(old, f.path);
        await db.run(`COPY (SELECT * EXCLUDE (labels) FROM read_parquet('${path}')) TO '${path}.tmp' (FORMAT parquet)`);
        renameSync(`${path}.tmp`, path);
      }
    } finally {
      db.close();
    }
    const controls = (await open(old)).runs[0]?.controls;
    expect(controls?.labelled).toBe(manifest.controls?.labelled);
    expect(controls?.labels.every((l) => l.turns === undefined)).toBe(true);
    expect(controls?.examples).toEqual([]);
  });
});

describe("dashboard over packed rows", () => {
  it("cuts each example's document out of its packed row: the same tokens as the unpacked run", async () => {
    const out = tempDir("lwm-dash-packed-");
    await runJob(await planJob(loadConfig(join(ROOT, "configs/demo-packed.yaml"), { output: out })), { workers: 1 });
    const dashboard = await Dashboard.open([out]);
    let packed: DashboardData;
    try {
      packed = await dashboard.data({ live: false, examplesPerGroup: 20 });
    } finally {
      dashboard.close();
    }
    const unpacked = new Map((data.runs[0]?.examples ?? []).map((e) => [`${e.id}/${e.turnIndex}`, e]));
    let same = 0;
    let truncated = 0;
    for (const e of packed.runs[0]?.examples ?? []) {
      const twin = unpacked.get(`${e.id}/${e.turnIndex}`);
      if (!e.tokens || !twin?.tokens) continue;
      // The same text and mask; a record packing truncated has fewer observation tokens, but the
      // page shows at most the first 3,000 of a turn, which both runs have.
      expect(e.tokens.runs).toEqual(twin.tokens.runs);
      expect(e.tokens.actionTokens).toBe(twin.tokens.actionTokens);
      if (e.tokens.observationTokens !== twin.tokens.observationTokens) truncated += 1;
      same += 1;
    }
    expect(same).toBeGreaterThan(20);
    expect(truncated).toBeLessThanOrEqual(2); // configs/demo-packed.yaml truncates two records
    // A record split to fit is listed with its statistics, and says why its tokens are not shown.
    expect(packed.runs[0]?.examples.some((e) => e.tokensNote?.includes("split to fit"))).toBe(true);
  });
});

describe("dashboard page and server", () => {
  it("embeds the data so no text in it can close the script element", () => {
    const copy = structuredClone(data);
    const first = copy.runs[0]?.examples[0];
    if (!first) throw new Error("no example");
    first.id = "</script><script>alert(1)</script>";
    const html = dashboardHtml(copy);
    expect(html).not.toContain("</script><script>alert(1)");
    const json = html.match(/<script type="application\/json" id="dashboard-data">(.*?)<\/script>/s)?.[1] ?? "";
    expect((JSON.parse(json) as DashboardData).runs[0]?.examples[0]?.id).toBe(first.id);
  });

  it("its stylesheet never lets a table cell break inside a word, and the page has a contents bar", () => {
    const html = dashboardHtml(data);
    const style = html.match(/<style>(.*?)<\/style>/s)?.[1] ?? "";
    // The rules that broke "Retrieval" and "terminal" across lines in narrow columns.
    expect(style).not.toMatch(/word-break:\s*break-(all|word)|overflow-wrap:\s*anywhere/);
    expect(style).toMatch(/th, td \{[^}]*white-space: nowrap;[^}]*word-break: normal;[^}]*overflow-wrap: normal;/);
    expect(style).toMatch(/\.table-scroll \{[^}]*overflow-x: auto/);
    expect(style).toMatch(/nav#contents \{[^}]*position: sticky/);
  });

  let server: Awaited<ReturnType<typeof startDashboardServer>> | undefined;
  let dashboard: Dashboard | undefined;
  afterAll(() => {
    server?.server.close();
    dashboard?.close();
  });

  it("serves the page and answers example queries over every turn, filtered", async () => {
    dashboard = await Dashboard.open([a.dir]);
    const live = await dashboard.data({ live: true, examplesPerGroup: 1 });
    server = await startDashboardServer(dashboard, dashboardHtml(live), JSON.stringify(live), { host: "127.0.0.1", port: 0 });
    const page = await fetch(server.url);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(await page.text()).toContain('id="dashboard-data"');

    type Page = { total: number; examples: { domain: string; class: string; kept: boolean }[] };
    const echo = (await (await fetch(`${server.url}api/examples?domain=mcp&class=Echo&decision=masked&limit=200`)).json()) as Page;
    const expected = a.manifest.masking.by_domain_class.mcp?.Echo;
    expect(echo.total).toBe((expected?.turns ?? 0) - (expected?.kept ?? 0));
    expect(echo.examples.every((e) => e.domain === "mcp" && e.class === "Echo" && !e.kept)).toBe(true);
    const all = (await (await fetch(`${server.url}api/examples?limit=10&offset=5`)).json()) as Page;
    expect(all.total).toBe(live.runs[0]?.summary.turns);
    expect(all.examples).toHaveLength(10);

    const bad = await fetch(`${server.url}api/examples?decision=maybe`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/decision must be/);
    expect((await fetch(`${server.url}nope`)).status).toBe(404);
  });

  it("--out writes one self-contained file; a folder without a manifest is a clear error", async () => {
    const file = join(tempDir("lwm-dash-out-"), "dash.html");
    const { stdout } = await run(process.execPath, [CLI, "dashboard", a.dir, "--out", file]);
    expect(stdout).toMatch(/turns aggregated in .* self-contained/);
    const html = readFileSync(file, "utf8");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="(?!data:)/);
    expect(html).toContain("@observablehq/plot v0.6");

    const empty = tempDir("lwm-dash-none-");
    const failed = await run(process.execPath, [CLI, "dashboard", empty, "--out", file]).catch((err) => err);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/manifest\.json not found: the dashboard reads a finished output folder/);
  });
});
