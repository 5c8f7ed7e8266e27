import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { statsCommand } from "../src/cli/stats-command.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { clusterSizeBins } from "../src/inspect/curation-report.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { cardForManifest, datasetCard } from "../src/write/dataset-card.ts";
import { DEMO_CONFIG, tempDir } from "./helpers.ts";
import { type FilteredEntry, makeCurated } from "./support/curated-output.ts";

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
}, 60_000);

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

  it("a run without curation prints only the masking table", async () => {
    const lines = await printed(plain);
    expect(lines[0]).toMatch(/mask policy turn-stats/);
    expect(lines.some((line) => /^curation:|filtered/.test(line.replace(plain, "")))).toBe(false);
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
