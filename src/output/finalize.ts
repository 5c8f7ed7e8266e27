import { stat } from "node:fs/promises";
import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import { withSynthesisShares } from "../controls/synthesis/synthesis-shares.ts";
import { UserError } from "../core/errors.ts";
import { hashBound, lowerBound } from "../core/hash-range.ts";
import { curatePaths, readMarker } from "../curate/curate-files.ts";
import type { SelectMarkerData } from "../curate/select-stage.ts";
import { resolvedMixture } from "../mixture/mixture-factors.ts";
import { mixtureSummary } from "../mixture/mixture-summary.ts";
import { splitPiiCounters } from "../normalize/pii/pii-summary.ts";
import { noveltySummary } from "../novelty/novelty-lookup.ts";
import { packingSummary } from "../pack/packing-summary.ts";
import { cardForManifest, DATASET_CARD_FILE, writeDatasetCard } from "../write/dataset-card.ts";
import { type CurationSummary, MANIFEST_FILE, MANIFEST_FORMAT, MANIFEST_VERSION, type Manifest, writeManifest } from "./manifest.ts";
import { type OutputPlan, readOutputPlan } from "./output-plan.ts";
import type { RemoteOutput } from "./remote-output.ts";
import { FINALIZE_CHECKED_FOLDERS, mirrorFinalizeInputs } from "./remote-stage-files.ts";
import { countRules, filtersSummary, scoringSummary, selectionSummary } from "./selection-summary.ts";
import { isCurrent, readTaskIds, readTaskState, type TaskState, taskIdsPath } from "./task-state.ts";
import { emptyTotals, mergeTotals, sortedKeys, type TaskTotals } from "./task-totals.ts";

export interface TaskCensus {
  plan: OutputPlan;
  done: TaskState[];
  /** Tasks without a completion marker, with their inputs, for the error message. */
  missing: OutputPlan["tasks"];
}

/** Which tasks of an output folder have finished. */
export async function taskCensus(outputDir: string): Promise<TaskCensus> {
  const plan = await readOutputPlan(outputDir);
  if (!plan) throw new UserError(`${outputDir} has no tasks/plan.json: it is not the output of an lwm-data run`);
  const done: TaskState[] = [];
  const missing: OutputPlan["tasks"] = [];
  for (const task of plan.tasks) {
    const state = await readTaskState(outputDir, task.index, "done");
    if (state && isCurrent(state, plan)) done.push(state);
    else missing.push(task);
  }
  return { plan, done, missing };
}

function describeMissing(missing: OutputPlan["tasks"]): string {
  const shown = missing.slice(0, 20).map((task) => {
    const pieces = task.pieces.map((p) => (p.start !== undefined ? `${p.path}[${p.start}:${p.end}]` : p.path));
    return `  ${taskLabel(task.index)}: ${pieces.slice(0, 3).join(", ")}${pieces.length > 3 ? `, … (${pieces.length} files)` : ""}`;
  });
  const more = missing.length > 20 ? `\n  … and ${missing.length - 20} more` : "";
  return `${shown.join("\n")}${more}`;
}

/** About how many bytes of id hashes are held at once while counting repeats across tasks. */
const ID_PARTITION_BYTES = 32 << 20;

/**
 * How many ids occur in more than one task (each extra occurrence counted once), from the tasks'
 * sorted id hashes; undefined when a task has none (`input.duplicate_ids: keep`). Memory stays
 * under ~2 × `partitionBytes` whatever the job's size: the hash range is cut into partitions
 * (an id's copies share a hash, so they fall in one) and each is counted on its own, reading
 * its run out of every task's sorted file.
 */
export async function idsRepeatedAcrossTasks(
  outputDir: string,
  tasks: number[],
  partitionBytes = ID_PARTITION_BYTES,
): Promise<number | undefined> {
  let totalBytes = 0;
  for (const task of tasks) {
    const bytes = await stat(taskIdsPath(outputDir, task)).then(
      (s) => s.size,
      () => undefined,
    );
    if (bytes === undefined || bytes % 8 !== 0) return undefined;
    totalBytes += bytes;
  }
  const partitions = Math.max(1, Math.ceil(totalBytes / partitionBytes));
  let repeated = 0;
  for (let p = 0; p < partitions; p++) {
    const low = hashBound(p, partitions);
    const high = hashBound(p + 1, partitions);
    const parts: BigUint64Array[] = [];
    for (const task of tasks) {
      const hashes = await readTaskIds(outputDir, task);
      if (!hashes) return undefined;
      // A copy of the partition's run, so the task's whole array can go.
      parts.push(hashes.slice(lowerBound(hashes, low), lowerBound(hashes, high)));
    }
    const all = new BigUint64Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      all.set(part, offset);
      offset += part.length;
    }
    all.sort();
    for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1]) repeated += 1;
  }
  return repeated;
}

/** Output files in path order, so the manifest never depends on which task finished first. */
const byPath = <T extends { path: string }>(a: T, b: T) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * Merges the per-task completion markers into `manifest.json`. Refuses, naming each unfinished
 * task and its inputs, unless every task is done and every file a marker lists is there with its
 * recorded size. Deterministic: any rank, any number of times, writes the same manifest.
 */
export async function finalizeOutput(
  outputDir: string,
  /** Sizes of the output's files by path, when they are not in `outputDir` (an `s3://` output's listing). */
  sizes?: ReadonlyMap<string, number>,
  /** Brings these output files (paths relative to the output) into `outputDir` before they are read (an `s3://` output's filtered files). */
  fetch?: (paths: string[]) => Promise<void>,
): Promise<{ manifest: Manifest; path: string }> {
  const { plan, done, missing } = await taskCensus(outputDir);
  if (missing.length > 0) {
    throw new UserError(
      `${outputDir}: ${missing.length} of ${plan.tasks.length} tasks have not finished (no tasks/<task>.done.json); rerun the job (finished tasks are skipped):\n${describeMissing(missing)}`,
    );
  }
  const totals = emptyTotals();
  for (const state of done) {
    mergeTotals(totals, state.totals);
    for (const file of [
      ...state.shards,
      ...state.stats_files,
      ...(state.quarantine ? [state.quarantine] : []),
      ...(state.filtered ? [state.filtered] : []),
    ]) {
      const bytes = sizes
        ? sizes.get(file.path)
        : await stat(join(outputDir, file.path)).then(
            (s) => s.size,
            () => undefined,
          );
      if (bytes !== file.bytes)
        throw new UserError(
          `${join(outputDir, file.path)}: ${bytes === undefined ? "missing" : `${bytes} bytes, marker says ${file.bytes}`} (${taskLabel(state.task)}); delete tasks/${taskLabel(state.task)}.done.json and rerun to redo the task`,
        );
    }
  }
  const sorted = sortedKeys(totals);
  // The PII counters get a block of their own; the normalize block keeps the rest.
  const { pii, rest: normalizeCounters } = splitPiiCounters(sorted.normalize, plan.pii);
  const shards = done.flatMap((s) => s.shards as Manifest["shards"]).sort(byPath);
  const { pack } = plan.header.layout;
  const packed = pack ? packingSummary({ enabled: true, ...pack }, shards) : undefined;
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    ...plan.header,
    tasks: { count: plan.tasks.length, plan_sha256: plan.plan_sha256 },
    masking: {
      by_domain_class: sorted.masking,
      stats_files: done.flatMap((s) => s.stats_files).sort(byPath),
    },
    counts: {
      records_in: totals.records_in,
      samples_out: totals.samples_out,
      documents: totals.documents,
      // Records that train no token (docs/packing-and-trainers.md "Rows that train nothing"); absent when none.
      ...(totals.samples_untrained ? { samples_untrained: totals.samples_untrained } : {}),
      quarantined: totals.quarantined,
      quarantined_by_stage: sorted.quarantined_by_stage,
      filtered: totals.filtered,
      filtered_by_stage: sorted.filtered_by_stage,
      dropped_by_mixture: totals.dropped_by_mixture,
    },
    tokens: totals.tokens,
    domains: sorted.domains,
    splits: sorted.splits,
    packing: packed ? { ...packed, fit: totals.fit } : null,
    normalize: normalizeCounters,
    shards,
    quarantine: done
      .flatMap((s) =>
        s.quarantine
          ? [{ path: s.quarantine.path, entries: s.quarantine.entries, bytes: s.quarantine.bytes, sha256: s.quarantine.sha256 ?? "" }]
          : [],
      )
      .sort(byPath),
  };
  const curation = await curationSummary(outputDir, plan, totals, done);
  if (curation) manifest.curation = curation;
  const novelty = plan.header.mask_rules.corpus_novelty;
  if (novelty?.enabled) manifest.novelty = await noveltySummary(outputDir, plan, novelty.partitions);
  const filteredFiles = done
    .flatMap((s) =>
      s.filtered ? [{ path: s.filtered.path, entries: s.filtered.entries, bytes: s.filtered.bytes, sha256: s.filtered.sha256 ?? "" }] : [],
    )
    .sort(byPath);
  if (filteredFiles.length > 0) manifest.filtered_files = filteredFiles;
  Object.assign(manifest, await filteringBlocks(outputDir, plan, done, fetch));
  if (totals.provenance) manifest.provenance = sortedKeys(totals.provenance);
  if (plan.controls) {
    const { enabled: _enabled, ...settings } = plan.controls;
    const counted = totals.controls ?? { labelled: 0, instructed: 0, counterfactual: 0, labels: {} };
    manifest.controls = withSynthesisShares({ ...settings, ...counted, labels: sortedKeys(counted.labels) }, plan.controls.synthesis);
  }
  if (pii) manifest.pii = pii;
  if (plan.mixture) manifest.mixture = mixtureSummary(plan.mixture, await resolvedMixture(outputDir, plan.mixture, plan), totals);
  const repeated = await idsRepeatedAcrossTasks(
    outputDir,
    done.map((s) => s.task),
  );
  if (repeated !== undefined)
    manifest.duplicate_ids = { quarantined_within_tasks: totals.quarantined_by_stage.dedupe ?? 0, repeated_across_tasks: repeated };
  // The card goes before the manifest: a manifest's presence means the output is complete.
  manifest.card = await writeDatasetCard(outputDir, cardForManifest(manifest));
  const path = await writeManifest(outputDir, manifest);
  return { manifest, path };
}

/** The manifest's curation block, from the select stage's marker and the tasks' totals; undefined without curation. */
async function curationSummary(
  outputDir: string,
  plan: OutputPlan,
  totals: TaskTotals,
  done: TaskState[],
): Promise<CurationSummary | undefined> {
  const settings = plan.curation;
  if (!settings) return undefined;
  const select = await readMarker<SelectMarkerData>(curatePaths.selectDone(outputDir), plan);
  if (!select)
    throw new UserError(`${curatePaths.selectDone(outputDir)} is missing or from another job: rerun the job (finished stages are skipped)`);
  return {
    settings: {
      ...settings,
      threshold: select.data.threshold,
      partitions: select.data.partitions,
      decontaminate: {
        ...settings.decontaminate,
        benchmarks: settings.decontaminate.benchmarks.map((b) => ({ ...b, episodes: select.data.benchmark_episodes[b.path] ?? 0 })),
      },
    },
    filtered: totals.filtered,
    by_stage: sortedKeys(totals.filtered_by_stage),
    by_domain: sortedKeys(totals.filtered_by_domain),
    masked: { records: totals.masked_records, turns: totals.masked_turns },
    clusters: { ...select.data.clusters, sizes: sortedBySize(select.data.clusters.sizes) },
    files: done
      .flatMap((s) =>
        s.filtered
          ? [{ path: s.filtered.path, entries: s.filtered.entries, bytes: s.filtered.bytes, sha256: s.filtered.sha256 ?? "" }]
          : [],
      )
      .sort(byPath),
  };
}

/**
 * The manifest's `filters`, `selection` and `scoring` blocks, each only when its stage ran: the
 * filter and selection entries of filtered/ counted per rule (only the files of tasks that have
 * such entries are read), the selection marker, the tasks' score markers.
 */
async function filteringBlocks(
  outputDir: string,
  plan: OutputPlan,
  done: TaskState[],
  fetch: ((paths: string[]) => Promise<void>) | undefined,
): Promise<Pick<Manifest, "filters" | "selection" | "scoring">> {
  // Plans written before filters existed have none: the blocks then come from what the folder holds.
  const { filtering } = plan;
  const ruled = done.flatMap((s) => {
    const byStage = s.totals.filtered_by_stage ?? {};
    return s.filtered && (byStage.filter ?? 0) + (byStage.selection ?? 0) > 0 ? [s.filtered.path] : [];
  });
  const paths = ruled.sort();
  if (paths.length > 0) await fetch?.(paths);
  const rules = await countRules(paths.map((path) => join(outputDir, path)));
  const filters = filtersSummary(rules, filtering && filtering.filters.length > 0 ? filtering.filters : undefined);
  const selection = await selectionSummary(outputDir, plan, filtering?.select ?? false);
  const scoring = await scoringSummary(
    outputDir,
    plan,
    done.map((s) => s.task).sort((a, b) => a - b),
    filtering?.scorers,
  );
  return { ...(filters ? { filters } : {}), ...(selection ? { selection } : {}), ...(scoring ? { scoring } : {}) };
}

/** Cluster sizes in numeric order ("2", "3", …, "10"), not string order. */
function sortedBySize(sizes: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(sizes).sort(([a], [b]) => Number(a) - Number(b)));
}

/**
 * Finalizes an `s3://` output: the task markers (mirrored to the staging folder) are checked
 * against the bucket's listing, and the card and then the manifest are uploaded — the manifest
 * last, as locally its presence means the output is complete.
 */
export async function finalizeRemoteOutput(remote: RemoteOutput): Promise<{ manifest: Manifest; path: string }> {
  // Every registered stage's summary: finalize reads those the job ran (absent ones mirror nothing).
  await mirrorFinalizeInputs(remote);
  const { manifest } = await finalizeOutput(remote.local, await remote.sizes(FINALIZE_CHECKED_FOLDERS), async (paths) => {
    for (const path of paths) await remote.pull(path);
  });
  await remote.push([DATASET_CARD_FILE]);
  await remote.push([MANIFEST_FILE]);
  return { manifest, path: remote.objectUri(MANIFEST_FILE) };
}
