import { createHash } from "node:crypto";
import type { Task } from "../../sharding/task-plan.ts";
import { hashBound } from "../core/hash-range.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { writeTextFile } from "../io/json-file.ts";
import { DuplicateIds } from "../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { recordSource, shownSource } from "../pipeline/record-labels.ts";
import { preparedRecord, stageContext } from "../pipeline/stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "../pipeline/stop-signal.ts";
import { type TaskProgress, taskItems } from "../pipeline/task-items.ts";
import { readFilterOf } from "../read/read-filter.ts";
import { itemSource } from "../read/reader.ts";
import { BenchmarkIndex } from "./benchmark-index.ts";
import { canonicalForHashing, canonicalTurnParts, hashTextOfParts, partsJoinCleanly, wordHashes } from "./canonical-text.ts";
import { curatePaths, recordKey, writeMarker } from "./curate-files.ts";
import { partitionCount } from "./curation-settings.ts";
import { EXACT_BIT } from "./exact-bit.ts";
import { MinHasher } from "./minhash.ts";
import { PairBuffer, sortPairs } from "./pairs.ts";
import type { SignaturesMarkerData } from "./signatures-stage.ts";

/*
 * The signatures stage's work (src/curate/signatures-stage.ts is its scheduling): a module of its
 * own, loaded by a process that runs a signatures unit. The processes of the stages after it check
 * that it finished without loading what it runs (record normalization, its detectors, MinHash).
 */

const benchmarkIndexes = new WeakMap<JobPlan, Promise<BenchmarkIndex>>();

/** The job's benchmark index, built once per process (each worker thread plans for itself). */
export function benchmarkIndex(plan: JobPlan): Promise<BenchmarkIndex> {
  let index = benchmarkIndexes.get(plan);
  if (!index) {
    index = BenchmarkIndex.build(plan.benchmarks, plan.config.decontaminate, plan.config.normalize, plan.config.input.max_line_bytes);
    benchmarkIndexes.set(plan, index);
  }
  return index;
}

function hashOfText(text: string): bigint {
  return createHash("sha256").update(text).digest().readBigUInt64BE(0);
}

/**
 * Stage 1 of curation, one task: every record that the records stage will write (read, valid,
 * normalized, not a repeated id) gets its exact hash and MinHash band keys as (hash, key) pairs,
 * sorted by hash so the clusters stage reads one hash range of every task; and its benchmark
 * matches. Records are numbered by their position among the task's read items, as the records
 * stage numbers them. Output depends only on the task's input and the config.
 */
export async function runSignaturesUnit(
  plan: JobPlan,
  task: Task,
  stop?: StopSignal,
  onProgress?: (progress: TaskProgress) => void,
): Promise<void> {
  const { config } = plan;
  const out = config.output.dir;
  const { dedup } = config;
  const hasher = dedup.near ? new MinHasher({ ngram: dedup.ngram, bands: dedup.bands, rows: dedup.rows, seed: dedup.seed }) : undefined;
  const index = plan.benchmarks.length > 0 ? await benchmarkIndex(plan) : undefined;
  // Signatures hash the turns' text only: normalization skips what only the records stage reads.
  const context = stageContext(plan, new Map(), { textOnly: true });
  const duplicates = config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;

  const pairs = new PairBuffer();
  // Signatures by item (a fixed stride, so the clusters stage finds one by its key), grown as read.
  const width = dedup.bands * dedup.rows;
  let signatures = new Uint32Array(hasher ? 64 * width : 0);
  const records: string[] = [];
  const matches: string[] = [];
  let item = -1;
  for await (const { item: read, file, bytes } of taskItems(plan, task)) {
    item += 1;
    if (item % 64 === 0) onProgress?.({ task: task.index, records: item, bytes });
    if (read.kind === "quarantine" || readFilterOf(read)) continue; // quarantined / filtered by the records stage
    const label = recordSource(file.displayPath, itemSource(read));
    if (duplicates?.check(read.kind === "trajectory" ? read.trajectory : read.document, label)) continue; // quarantined by the records stage
    const trajectory = await preparedRecord(read, plan.pipeline.recordStages, context);
    if (!trajectory) continue; // quarantined by the records stage
    const key = recordKey(task.index, item);
    const source = shownSource(plan, label);
    records.push(JSON.stringify({ item, id: trajectory.id, domain: trajectory.domain, source }));
    // Each action and observation canonicalized once, for the exact hash and the MinHash words both.
    const parts = canonicalTurnParts(trajectory.turns);
    if (dedup.exact || dedup.near) pairs.push(hashOfText(hashTextOfParts(parts)), key | EXACT_BIT);
    if (hasher) {
      const signature = hasher.signatureOfWordHashes(wordHashes(shingledText(trajectory, parts), hasher.wordSeed));
      if (signature) {
        for (const bandKey of hasher.keysOf(signature)) pairs.push(bandKey, key);
        if ((item + 1) * width > signatures.length) {
          const grown = new Uint32Array(Math.max(signatures.length * 2, (item + 1) * width));
          grown.set(signatures);
          signatures = grown;
        }
        signatures.set(signature, item * width);
      }
    }
    const best = index?.match(trajectory.turns)[0];
    if (best) matches.push(JSON.stringify({ item, ...best }));
    if (stopRequested(stop)) throw new TaskStopped(task.index);
  }

  const sorted = sortPairs(pairs.view());
  const partitions = partitionCount(config, plan.tasks.length);
  const offsets: number[] = [];
  for (let p = 0, at = 0; p <= partitions; p++) {
    const bound = hashBound(p, partitions);
    while (at < sorted.length / 2 && (sorted[2 * at] as bigint) < bound) at++;
    offsets.push(p === partitions ? sorted.length / 2 : at);
  }
  await writeTextFile(curatePaths.keys(out, task.index), new Uint8Array(sorted.buffer, sorted.byteOffset, sorted.byteLength));
  if (hasher) {
    const used = signatures.subarray(0, (item + 1) * width);
    await writeTextFile(curatePaths.signatures(out, task.index), new Uint8Array(used.buffer, used.byteOffset, used.byteLength));
  }
  await writeTextFile(curatePaths.records(out, task.index), records.map((line) => `${line}\n`).join(""));
  await writeTextFile(curatePaths.matches(out, task.index), matches.map((line) => `${line}\n`).join(""));
  const data: SignaturesMarkerData = {
    partitions: offsets,
    records: records.length,
    matches: matches.length,
    benchmark_episodes: index ? Object.fromEntries(index.episodesPerFile) : {},
  };
  await writeMarker(curatePaths.signaturesDone(out, task.index), jobShas(plan), "signatures", task.index, data);
  onProgress?.({ task: task.index, records: item + 1, bytes: task.bytes });
}

/**
 * The text whose words MinHash shingles: the turns' canonical text (the system prompt and task do
 * not count), `canonicalForHashing` of actions and observations joined by newlines. That is the
 * canonical parts joined, unless a volatile value could span a joint (then canonicalized whole).
 */
function shingledText(trajectory: Pick<Trajectory, "turns">, canonicalParts: readonly string[]): string {
  const raw: string[] = [];
  for (const turn of trajectory.turns) raw.push(turn.action, turn.observation);
  return partsJoinCleanly(raw) ? canonicalParts.join("\n") : canonicalForHashing(raw.join("\n"));
}
