import { execFile } from "node:child_process";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { statsCommand } from "../src/cli/stats-command.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { clusterSizeBins } from "../src/inspect/curation-report.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { cardForManifest, datasetCard } from "../src/write/dataset-card.ts";
import { DEMO_CONFIG, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { type FilteredEntry, makeCurated } from "./support/curated-output.ts";

const run = promisify(execFile);

/** A finished demo run (not curated), and a copy of it made to look curated. */
let plain: string;
let curated: string;
let manifest: Manifest;
let entries: FilteredEntry[];

beforeAll(async () => {
  plain = tempDir("lwm-curation-plain-");
  const result = await runJob(await planJob(loadConfig(DEMO_CONFIG, { output: plain })), { workers: 1 });
  if (!result.manifest) throw new Error("the run did not finish");
  curated = tempDir("lwm-curation-");
  cpSync(plain, curated, { recursive: true });
  ({ manifest, entries } = await makeCurated(curated));
});

describe("cluster size histogram", () => {
  it("bins sizes 2 and 3 alone, then doubling bins, keeping empty ones between", () => {
    expect(clusterSizeBins({ "2": 500, "3": 40, "5": 3, "7": 1, "40": 1 })).toEqual([
      { from: 2, to: 2, clusters: 500, records: 1000 },
      { from: 3, to: 3, clusters: 40, records: 120 },
      { from: 4, to: 7, clusters: 4, records: 22 },
      { from: 8, to: 15, clusters: 0, records: 0 },
      { from: 16, to: 31, clusters: 0, records: 0 },
      { from: 32, to: 63, clusters: 1, records: 40 },
    ]);
    expect(clusterSizeBins({})).toEqual([]);
  });
});

describe("lwm-data stats on a curated run", () => {
  afterEach(() => vi.restoreAllMocks());

  const printed = async (dir: string) => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    await statsCommand(dir);
    return log.mock.calls.map((call) => String(call[0]));
  };

  it("prints filtered records per stage and domain, the clusters with their sizes, the settings and the files", async () => {
    const lines = await printed(curated);
    const start = lines.findIndex((line) => line.startsWith("curation: "));
    expect(start).toBeGreaterThan(0); // after the masking table
    expect(lines[start]).toBe(
      `curation: 6 of ${manifest.counts.records_in} records filtered (exact 3, near 2, decontaminate 1) → filtered/`,
    );
    expect(lines[start + 1]).toMatch(/^ {2}domain +exact +near +decontaminate +filtered +samples out +filtered %$/);
    // One row per domain; its stage columns are the manifest's by_domain.
    for (const [domain, totals] of Object.entries(manifest.domains)) {
      const row = lines
        .slice(start)
        .find((line) => line.startsWith(`  ${domain} `))
        ?.trim()
        .split(/ +/);
      const stages = manifest.curation?.by_domain[domain] ?? {};
      const filtered = entries.filter((e) => e.domain === domain).length;
      expect(row?.slice(1, 6)).toEqual([
        `${stages.exact ?? 0}`,
        `${stages.near ?? 0}`,
        `${stages.decontaminate ?? 0}`,
        `${filtered}`,
        `${totals.samples}`,
      ]);
    }
    expect(lines).toContain("  clusters: 4 (9 records, largest 3; first in input order kept); by size 2: 3 · 3: 1");
    expect(lines.find((line) => line.startsWith("  settings: "))).toBe(
      "  settings: exact on; near on (5-word shingles, 14 bands × 8 rows, threshold ≈ 0.68, joined at estimated Jaccard ≥ 0.6); decontaminate remove (13-grams, overlap ≥ 0.5 in ≥ 2 turns, n-grams in > 10 episodes ignored) against benchmarks/awb.jsonl (agentworldbench-jsonl, 40 episodes)",
    );
    expect(lines.at(-1)).toBe("  files: filtered/task-00000.jsonl (4), filtered/task-00001.jsonl (2)");
  });

  it("a run without curation prints the masking table and its (unweighted) mix, no curation", async () => {
    const lines = await printed(plain);
    expect(lines[0]).toMatch(/mask policy turn-stats/);
    expect(lines.some((line) => /^curation:|filtered/.test(line.replace(plain, "")))).toBe(false);
    const start = lines.indexOf("mixture: no weights (every source factor 1, every record written once); trained tokens per source");
    expect(start).toBeGreaterThan(0);
    expect(lines[start + 1]).toMatch(/^ {2}source +domain +records +tokens +trained tokens +share$/);
    // The mixture table runs to the next blank line (the provenance table follows).
    const after = lines.slice(start + 2);
    const rows = after.slice(0, after.includes("") ? after.indexOf("") : undefined).map((line) => line.trim().split(/ +/));
    const mixture = manifest.mixture;
    if (!mixture) throw new Error("no mixture block");
    expect(rows).toEqual(
      Object.entries(mixture.sources).map(([name, s]) => [
        name,
        name,
        fmt(s.records_out),
        fmt(s.tokens_out),
        fmt(s.loss_tokens_out),
        pct(s.share),
      ]),
    );
  });
});

describe("the dataset card of a curated run", () => {
  it("has a Curation section: removed per stage with its setting, the clusters, the benchmarks, per domain", async () => {
    const card = readFileSync(join(curated, "README.md"), "utf8");
    expect(card).toBe(datasetCard(cardForManifest(manifest)));
    const section = card.slice(card.indexOf("## Curation"), card.indexOf("## Tokenizer and template"));
    expect(section).toMatch(/6 records were removed\. Each is listed in `filtered\/\*\.jsonl`/);
    expect(section).toMatch(/^\| exact \| .* \| 3 \|$/m);
    expect(section).toMatch(
      /^\| near \| .*5-word shingles, LSH with 14 bands × 8 rows \(two trajectories of Jaccard similarity 0\.68 .* \| 2 \|$/m,
    );
    expect(section).toMatch(
      /^\| decontaminate \| trajectories where 2 turns \(or all of a shorter episode's\) each share at least 50% of their 13-word n-grams.* \| 1 \|$/m,
    );
    expect(section).toContain("Duplicates formed 4 clusters of 9 records (the largest 3)");
    expect(section).toContain("- `benchmarks/awb.jsonl` (agentworldbench-jsonl, 40 episodes)");
    for (const [domain, stages] of Object.entries(manifest.curation?.by_domain ?? {}))
      expect(section).toContain(`| ${domain} | ${stages.exact ?? 0} | ${stages.near ?? 0} | ${stages.decontaminate ?? 0} |`);
    // The card is listed in the manifest like any file: the curated output still verifies.
    expect((await verifyOutput(curated)).problems).toEqual([]);
  });

  it("says which stages were off, and masked turns when decontamination masks", () => {
    const curation = structuredClone(manifest.curation);
    if (!curation) throw new Error("no curation");
    curation.settings.exact = false;
    curation.settings.decontaminate.action = "mask";
    curation.masked = { records: 2, turns: 3 };
    const card = datasetCard({ ...cardForManifest(manifest), curation });
    expect(card).toMatch(/^\| exact \| .* \| off \|$/m);
    expect(card).toMatch(
      /^\| decontaminate \| the matching turns of trajectories where .*: kept as context, their loss masked \| 3 turns masked in 2 records \|$/m,
    );
  });

  it("a run without curation has no Curation section", () => {
    expect(readFileSync(join(plain, "README.md"), "utf8")).not.toContain("## Curation");
  });
});

const fmt = (n: number) => n.toLocaleString("en-US");
const pct = (share: number) => `${(100 * share).toFixed(1)}%`;

/** The card's section from its heading to the next one. */
const cardSection = (card: string, heading: string) => {
  const start = card.indexOf(`## ${heading}\n`);
  const end = card.indexOf("\n## ", start + 1);
  return start < 0 ? "" : card.slice(start, end < 0 ? undefined : end);
};

describe("a mixture run: the card's Mixture section and `stats`", () => {
  let mixed: string;
  let m: Manifest;
  beforeAll(async () => {
    // Terminal and search records pooled as one source with a target share, mcp thinned, swe as is.
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
    mixed = tempDir("lwm-curation-mixture-");
    // As a user runs it: count, weights (the factors from the shares), records, finalize.
    await run(process.execPath, [join(ROOT, "bin/lwm-data.js"), "run", config, "--output", mixed, "--progress", "none"]);
    m = JSON.parse(readFileSync(join(mixed, "manifest.json"), "utf8")) as Manifest;
  });

  it("the card has a Mixture table with the manifest's factors, targets, trained tokens and shares", async () => {
    const mixture = m.mixture;
    if (!mixture) throw new Error("no mixture block");
    expect(mixture.dropped_records).toBeGreaterThan(0); // mcp at 0.5 drew some records out
    expect(Object.keys(mixture.sources.tools?.domains ?? {})).toEqual(["search", "terminal"]);
    const card = readFileSync(join(mixed, "README.md"), "utf8");
    expect(card).toBe(datasetCard(cardForManifest(m)));
    const section = cardSection(card, "Mixture");
    expect(section).toContain(
      `derived from target shares of the trained (loss) tokens (\`tools\` share 35.0%, \`mcp\` factor 0.5): each source's trained tokens were counted first, then a source with a share got factor share × ${mixture.total_loss_tokens} total trained tokens (\`total_tokens: auto\`) / its own trained tokens, at most \`max_factor\` 6`,
    );
    expect(section).toContain("seeded hash of (seed 7, record id, copy)");
    expect(section).toContain(
      "| source | domains | factor | target share | trained tokens before | trained tokens after | share before | share after |",
    );
    const rows = section.split("\n").filter((line) => /^\| `/.test(line));
    expect(rows).toEqual(
      Object.entries(mixture.sources).map(
        ([name, s]) =>
          `| \`${name}\` | ${Object.keys(s.domains)
            .map((d) => `\`${d}\``)
            .join(
              ", ",
            )} | ${s.factor.toFixed(3)} | ${s.target_share === undefined ? "–" : pct(s.target_share)} | ${s.loss_tokens} | ${s.loss_tokens_out} | ${pct(s.share_before)} | ${pct(s.share)} |`,
      ),
    );
    expect(rows[2]).toMatch(/^\| `tools` \| `search`, `terminal` \| 1\.\d{3} \| 35\.0% \|/);
    expect(section).toContain(`${mixture.dropped_records} record${mixture.dropped_records === 1 ? " was" : "s were"} drawn out`);
    expect(section).toContain("id `<id>#copy<N>`");
    expect(section).toContain("Each row's source is in its `mixture_source` column.");
    // The columns table documents mixture_source once; the Mixture section does not repeat it.
    expect(card.match(/the mixture source the record belongs to/g)).toHaveLength(1);
    expect((await verifyOutput(mixed)).problems).toEqual([]);
  });

  it("an unweighted run's card lists the trained tokens per source", () => {
    const section = cardSection(readFileSync(join(plain, "README.md"), "utf8"), "Mixture");
    expect(section).toMatch(/^## Mixture\n\nNo mixture weights were set: every source has factor 1/);
    for (const [name, s] of Object.entries(manifest.mixture?.sources ?? {}))
      expect(section).toContain(`| \`${name}\` | \`${name}\` | ${s.loss_tokens_out} | ${pct(s.share)} |`);
  });

  it("stats prints tokens and trained tokens per source and domain, before → after, share against target", async () => {
    const mixture = m.mixture;
    if (!mixture) throw new Error("no mixture block");
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      await statsCommand(mixed);
    } finally {
      vi.restoreAllMocks();
    }
    const lines = log.mock.calls.map((call) => String(call[0]));
    const start = lines.findIndex((line) => line.startsWith("mixture: "));
    expect(start).toBeGreaterThan(0);
    expect(lines[start]).toBe(
      `mixture: seed 7; factors derived from target shares of trained tokens (tools share 35.0%, mcp factor 0.5) for ${fmt(mixture.total_loss_tokens ?? 0)} trained tokens (total_tokens auto, max_factor 6); other sources factor 1`,
    );
    expect(lines[start + 1]).toMatch(
      /^ {2}source +domain +factor +records → kept +documents +tokens before → after +trained tokens before → after +share before → after +target$/,
    );
    // Cells with the arrows joined: a source row, then its domains' rows when it has several.
    const cells = (line: string | undefined) => (line ?? "").trim().replace(/ *→ */g, "→").split(/ +/);
    const counts = (t: { records: number; records_out: number; documents_out: number; tokens: number; tokens_out: number }) => [
      `${fmt(t.records)}→${fmt(t.records_out)}`,
      fmt(t.documents_out),
      `${fmt(t.tokens)}→${fmt(t.tokens_out)}`,
    ];
    const before = Object.values(mixture.sources).reduce((sum, s) => sum + s.loss_tokens, 0);
    const after = Object.values(mixture.sources).reduce((sum, s) => sum + s.loss_tokens_out, 0);
    const expected: string[][] = [];
    for (const [name, s] of Object.entries(mixture.sources)) {
      const domains = Object.entries(s.domains);
      expected.push([
        name,
        ...(domains.length === 1 ? [domains[0]?.[0] ?? ""] : []),
        s.factor.toFixed(3),
        ...counts(s),
        `${fmt(s.loss_tokens)}→${fmt(s.loss_tokens_out)}`,
        `${pct(s.share_before)}→${pct(s.share)}`,
        s.target_share === undefined ? "–" : pct(s.target_share),
      ]);
      if (domains.length > 1)
        for (const [domain, t] of domains)
          expected.push([
            domain,
            ...counts(t),
            `${fmt(t.loss_tokens)}→${fmt(t.loss_tokens_out)}`,
            `${pct(t.loss_tokens / before)}→${pct(t.loss_tokens_out / after)}`,
          ]);
    }
    expect(lines.slice(start + 2, start + 2 + expected.length).map(cells)).toEqual(expected);
    expect(lines[start + 2 + expected.length]).toBe(
      `  ${mixture.dropped_records} record(s) drawn out by factors below 1 (counted, not written); repeats are written as <id>#copy<N>`,
    );
  });
});
