import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CurationSummary, FilterStage, Manifest } from "../../src/output/manifest.ts";
import { cardForManifest, writeDatasetCard } from "../../src/write/dataset-card.ts";

/** One line of a `filtered/` file (the curation spec's shape). */
export interface FilteredEntry {
  id: string;
  domain: string;
  source: string;
  stage: FilterStage;
  reason: string;
  kept_id?: string;
  kept_source?: string;
  benchmark?: string;
  benchmark_id?: string;
  turns?: number[];
  overlap?: number;
}

/** The 50% point of the LSH S-curve 1 - (1 - s^rows)^bands. */
const lshThreshold = (bands: number, rows: number) => (1 - 0.5 ** (1 / bands)) ** (1 / rows);

/**
 * Entries for a curated run over `domains`: exact and near twins in two tasks, one benchmark
 * match. Five duplicates in four clusters (sizes 2, 2, 2, 3) and one decontaminated record.
 */
export function fixtureEntries(domains: readonly string[]): FilteredEntry[][] {
  const [d0 = "terminal", d1 = d0] = domains;
  const twin = (id: string, domain: string, stage: "exact" | "near", kept: string, line: number): FilteredEntry => ({
    id,
    domain,
    source: `in/${domain}.jsonl:${line}`,
    stage,
    reason:
      stage === "exact"
        ? `same turns as ${kept} once volatile values are canonicalized`
        : `MinHash near-duplicate of ${kept} (estimated Jaccard 0.91)`,
    kept_id: kept,
    kept_source: `in/${domain}.jsonl:1`,
  });
  return [
    [
      twin("a-2", d0, "exact", "a-1", 2),
      twin("b-2", d0, "exact", "b-1", 4),
      twin("c-2", d1, "near", "c-1", 7),
      twin("c-3", d1, "near", "c-1", 9),
    ],
    [
      twin("d-2", d1, "exact", "d-1", 3),
      {
        id: "e-1",
        domain: d0,
        source: `in/${d0}.jsonl:12`,
        stage: "decontaminate",
        reason: "turns 1 and 2 share 0.82 and 0.75 of their 13-grams with bench-7 of benchmarks/awb.jsonl",
        benchmark: "benchmarks/awb.jsonl",
        benchmark_id: "bench-7",
        turns: [1, 2],
        overlap: 0.82,
      },
    ],
  ];
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * Turns a finished (uncurated) output into what a curated run of it would look like: filtered/
 * files, counts.filtered, the curation block, records_in that includes the removed records, and
 * the dataset card rewritten from the new manifest. Returns the manifest and the entries.
 */
export async function makeCurated(dir: string): Promise<{ manifest: Manifest; entries: FilteredEntry[] }> {
  const path = join(dir, "manifest.json");
  const manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  const tasks = fixtureEntries(Object.keys(manifest.domains).sort());
  mkdirSync(join(dir, "filtered"), { recursive: true });
  const files: CurationSummary["files"] = tasks.map((entries, task) => {
    const text = entries.map((entry) => `${JSON.stringify(entry)}\n`).join("");
    const file = `filtered/task-${String(task).padStart(5, "0")}.jsonl`;
    writeFileSync(join(dir, file), text);
    return { path: file, entries: entries.length, bytes: Buffer.byteLength(text), sha256: sha256(text) };
  });
  const entries = tasks.flat();
  const byStage: Record<string, number> = {};
  const byDomain: Record<string, Record<string, number>> = {};
  for (const entry of entries) {
    byStage[entry.stage] = (byStage[entry.stage] ?? 0) + 1;
    const ofDomain = byDomain[entry.domain] ?? {};
    ofDomain[entry.stage] = (ofDomain[entry.stage] ?? 0) + 1;
    byDomain[entry.domain] = ofDomain;
  }
  manifest.counts.filtered = entries.length;
  manifest.counts.filtered_by_stage = byStage;
  manifest.counts.records_in += entries.length;
  manifest.curation = {
    settings: {
      exact: true,
      near: true,
      min_similarity: 0.6,
      ngram: 5,
      bands: 14,
      rows: 8,
      threshold: Number(lshThreshold(14, 8).toFixed(4)),
      partitions: 4,
      decontaminate: {
        ngram: 13,
        min_overlap: 0.5,
        min_turns: 2,
        max_episode_frequency: 10,
        action: "remove",
        benchmarks: [{ path: "benchmarks/awb.jsonl", format: "agentworldbench-jsonl", episodes: 40 }],
      },
    },
    filtered: entries.length,
    by_stage: byStage,
    by_domain: byDomain,
    masked: { records: 0, turns: 0 },
    clusters: { count: 4, records: 9, largest: 3, sizes: { "2": 3, "3": 1 } },
    files,
  };
  manifest.card = await writeDatasetCard(dir, cardForManifest(manifest));
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
  return { manifest, entries };
}
