import { readFile } from "node:fs/promises";
import { UserError } from "../core/errors.ts";
import { parseJsonLines, readJsonLines, writeTextFile } from "../io/json-file.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { filesUnder, type JobStage } from "../pipeline/stage-contract.ts";
import type { BenchmarkMatch } from "./benchmark-index.ts";
import type { ClustersMarkerData } from "./clusters-stage.ts";
import { curatePaths, keyItem, keyTask, readMarker, recordKey, writeMarker } from "./curate-files.ts";
import { curationEnabled, partitionCount } from "./curation-settings.ts";
import { Forest } from "./forest.ts";
import { lshThreshold } from "./minhash.ts";
import { pairsFromBytes } from "./pairs.ts";
import type { SignaturesMarkerData } from "./signatures-stage.ts";

/** What the records stage does with one record of its task (`curate/removals/<task>.jsonl`). */
export type Removal =
  | { item: number; action: "remove"; stage: "exact" | "near"; kept_id: string; kept_source: string }
  | {
      item: number;
      action: "remove" | "mask";
      stage: "decontaminate";
      benchmark: string;
      benchmark_id: string;
      turns: number[];
      overlap: number;
    };

export interface SelectMarkerData {
  clusters: { count: number; records: number; largest: number; sizes: Record<string, number> };
  benchmark_episodes: Record<string, number>;
  partitions: number;
  threshold: number;
}

async function readForest(plan: JobPlan, kind: "all" | "exact", partitions: number): Promise<BigUint64Array> {
  const parts: BigUint64Array[] = [];
  for (let part = 0; part < partitions; part++)
    parts.push(pairsFromBytes(await readFile(curatePaths.forest(plan.config.output.dir, part, kind))));
  const all = new BigUint64Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

/**
 * Stage 3 of curation, one unit: the partitions' partial forests merged into clusters, the keeper
 * of each picked by a fixed rule — the first member in input order that is not itself removed as
 * contaminated — and the removal list written per task, naming each removed record's keeper (or
 * benchmark episode). Memory: proportional to the records that have a twin, not to the corpus.
 */
export async function runSelectUnit(plan: JobPlan): Promise<void> {
  const { config } = plan;
  const out = config.output.dir;
  const job = jobShas(plan);
  const partitions = partitionCount(config, plan.tasks.length);
  for (let part = 0; part < partitions; part++) {
    if (!(await readMarker<ClustersMarkerData>(curatePaths.clustersDone(out, part), job)))
      throw new UserError(`curation: partition ${part} has no clusters yet; run the clusters stage first`);
  }
  const decontaminate = config.decontaminate;
  const masking = decontaminate.action === "mask";

  // Benchmark matches, by record key.
  const matches = new Map<bigint, BenchmarkMatch>();
  let benchmarkEpisodes: Record<string, number> = {};
  for (const task of plan.tasks) {
    const marker = await readMarker<SignaturesMarkerData>(curatePaths.signaturesDone(out, task.index), job);
    if (!marker) throw new UserError(`curation: task ${task.index} has no signatures; run the signatures stage first`);
    if (Object.keys(marker.data.benchmark_episodes).length > 0) benchmarkEpisodes = marker.data.benchmark_episodes;
    if (marker.data.matches === 0) continue;
    const text = await readFile(curatePaths.matches(out, task.index), "utf8");
    for (const row of parseJsonLines<BenchmarkMatch & { item: number }>(text)) matches.set(recordKey(task.index, row.item), row);
  }
  const removedAsContaminated = (key: bigint) => !masking && matches.has(key);

  const all = new Forest(await readForest(plan, "all", partitions));
  const exact = new Forest(await readForest(plan, "exact", partitions));

  // Clusters: members grouped by root (keys are sorted, so members come in input order).
  const members = new Map<number, number[]>();
  for (let i = 0; i < all.keys.length; i++) {
    const root = all.rootIndex(i);
    const list = members.get(root);
    if (list) list.push(i);
    else members.set(root, [i]);
  }
  const removals = new Map<number, Removal[]>();
  const add = (key: bigint, removal: Removal) => {
    const task = keyTask(key);
    const list = removals.get(task);
    if (list) list.push(removal);
    else removals.set(task, [removal]);
  };
  const sizes: Record<string, number> = {};
  let largest = 0;
  let clustered = 0;
  const keeperOf = new Map<bigint, bigint>();
  for (const list of members.values()) {
    sizes[String(list.length)] = (sizes[String(list.length)] ?? 0) + 1;
    largest = Math.max(largest, list.length);
    clustered += list.length;
    const keeper = list.map((i) => all.keys[i] as bigint).find((key) => !removedAsContaminated(key));
    if (keeper === undefined) continue;
    for (const i of list) {
      const key = all.keys[i] as bigint;
      if (key !== keeper && !removedAsContaminated(key)) keeperOf.set(key, keeper);
    }
  }

  // The keepers' ids and sources, read from their tasks' record lists.
  const wanted = new Map<number, Set<number>>();
  for (const keeper of keeperOf.values()) {
    const items = wanted.get(keyTask(keeper)) ?? new Set<number>();
    items.add(keyItem(keeper));
    wanted.set(keyTask(keeper), items);
  }
  const named = new Map<bigint, { id: string; source: string }>();
  for (const [task, items] of [...wanted.entries()].sort(([a], [b]) => a - b)) {
    const text = await readFile(curatePaths.records(out, task), "utf8");
    for (const row of parseJsonLines<{ item: number; id: string; source: string }>(text))
      if (items.has(row.item)) named.set(recordKey(task, row.item), { id: row.id, source: row.source });
  }
  for (const [key, keeper] of keeperOf) {
    const { id, source } = named.get(keeper) as { id: string; source: string };
    const stage = config.dedup.exact && exact.root(key) === exact.root(keeper) ? "exact" : "near";
    add(key, { item: keyItem(key), action: "remove", stage, kept_id: id, kept_source: source });
  }
  for (const [key, match] of matches) {
    if (keeperOf.has(key)) continue; // masking, and removed as a copy anyway
    add(key, {
      item: keyItem(key),
      action: masking ? "mask" : "remove",
      stage: "decontaminate",
      benchmark: match.benchmark,
      benchmark_id: match.benchmarkId,
      turns: match.turns,
      overlap: match.overlap,
    });
  }

  for (const task of plan.tasks) {
    const list = (removals.get(task.index) ?? []).sort((a, b) => a.item - b.item);
    await writeTextFile(curatePaths.removals(out, task.index), list.map((r) => `${JSON.stringify(r)}\n`).join(""));
  }
  const data: SelectMarkerData = {
    clusters: { count: members.size, records: clustered, largest, sizes },
    benchmark_episodes: benchmarkEpisodes,
    partitions,
    threshold: Math.round(lshThreshold(config.dedup.bands, config.dedup.rows) * 1000) / 1000,
  };
  await writeMarker(curatePaths.selectDone(out), job, "select", 0, data);
}

/** The removals of one task, by item; empty without curation. */
export async function readRemovals(out: string, task: number): Promise<Map<number, Removal>> {
  return new Map((await readJsonLines<Removal>(curatePaths.removals(out, task))).map((removal) => [removal.item, removal]));
}

const SELECT_MARKER = "curate/select.done.json";

/** Curation, stage 3: the forests merged, each cluster's keeper picked, the removal list written per task. */
export const selectStage: JobStage = {
  name: "select",
  summary: "one unit: the partial forests merged, each cluster's keeper picked, and the removals written per task",
  enabled: curationEnabled,
  scope: "one",
  pooled: false,
  reads: [
    { path: "curate/signatures/", include: (name) => !name.endsWith(".minhash") && !name.endsWith(".keys") },
    { path: "curate/clusters/" },
    { path: SELECT_MARKER },
  ],
  provides: [{ path: "curate/removals/" }, { path: SELECT_MARKER }],
  unitFiles: async (out) => [...(await filesUnder(out, "curate/removals/")), SELECT_MARKER],
  isDone: async (plan) => (await readMarker(curatePaths.selectDone(plan.config.output.dir), jobShas(plan))) !== undefined,
  run: ({ plan }) => runSelectUnit(plan),
};
