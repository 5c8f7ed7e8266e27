import type { Task } from "../../sharding/task-plan.ts";
import type { JobConfig } from "../config/schema.ts";
import { readRephrasings } from "../controls/rephrase/rephrase-files.ts";
import { rephraseOn } from "../controls/rephrase/rephrase-settings.ts";
import { controlsForTask } from "../controls/synthesis/synthesis-plan-stage.ts";
import { copyId, keptCopies } from "../mixture/draw.ts";
import { resolvedMixture } from "../mixture/mixture-factors.ts";
import { dropSpool, taskResults } from "../mixture/records-source.ts";
import { factorOf, type ResolvedMixture } from "../mixture/resolve-factors.ts";
import { taskNovelty } from "../novelty/novelty-lookup.ts";
import { noveltyEnabled } from "../novelty/novelty-stage.ts";
import { splitForTrajectory } from "../output/split-assignment.ts";
import { isCurrent, readTaskState, type TaskState } from "../output/task-state.ts";
import {
  countControls,
  countExtraDocuments,
  countExtraSample,
  countFiltered,
  countProvenance,
  countQuarantine,
  countRephrase,
  countSample,
  countSource,
} from "../output/task-totals.ts";
import { DuplicateIds } from "../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import type { RecordResult } from "../pipeline/record-results.ts";
import type { JobStage } from "../pipeline/stage-contract.ts";
import { stageContext } from "../pipeline/stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "../pipeline/stop-signal.ts";
import { loadTaskDecisions } from "../pipeline/task-decisions.ts";
import type { TaskProgress } from "../pipeline/task-items.ts";
import type { Sample } from "../write/sample.ts";
import { TaskOutput } from "./task-output.ts";

/**
 * Writes one record's result: quarantine, filtered, or its documents — each mixture copy in the
 * record's split, the counterfactual beside the first — and counts it. True when a shard filled.
 */
async function writeResult(output: TaskOutput, result: RecordResult, plan: JobPlan, mixture: ResolvedMixture): Promise<boolean> {
  const { config } = plan;
  const { totals } = output;
  if (result.kind === "filtered") {
    await output.addFiltered(result.entry);
    countFiltered(totals, result.entry.stage, result.entry.domain);
    return false;
  }
  if (result.kind === "quarantine") {
    await output.addQuarantined(result.entry);
    countQuarantine(totals, result.entry.stage);
    return false;
  }
  if (result.maskedTurns > 0) {
    totals.masked_records += 1;
    totals.masked_turns += result.maskedTurns;
  }
  let full = false;
  const { samples, source } = result;
  const id = samples[0]?.id ?? "";
  // By the id written to the shards (the normalized one), as SFT does for its prompts.
  const split = splitForTrajectory(id, config.output.validation_fraction, config.output.split_seed);
  const factor = factorOf(mixture, source);
  const copies = factor === 1 ? [0] : keptCopies(config.mixture.seed, id, factor);
  countSource(totals, source, samples, copies.length);
  countProvenance(totals, result.format, samples[0]?.provenance);
  if (copies.length === 0) totals.dropped_by_mixture += 1;
  for (const copy of copies) {
    // Later copies are rows of their own: their own id, so their own bucket and shard (the
    // split is the record's); its masking decisions are counted once, with copy 0.
    const documents: Sample[] =
      copy === 0 ? samples : samples.map(({ decisions: _decisions, ...sample }) => ({ ...sample, id: copyId(id, copy) }));
    for (const sample of documents) {
      if (await output.addSample({ ...sample, mixtureSource: source }, split)) full = true;
      await output.addTurnStats(sample);
    }
    countSample(totals, documents, split, copy);
  }
  // A record's controls count once, when it is written at all.
  const controls = samples[0]?.controls;
  if (controls && copies.length > 0) countControls(totals, samples[0]?.domain ?? "", controls);
  // The counterfactual goes with the record's first copy, in its split; its tokens count as output of the record's source.
  if (result.counterfactual && copies.includes(0)) {
    for (const sample of result.counterfactual) if (await output.addSample({ ...sample, mixtureSource: source }, split)) full = true;
    countSample(totals, result.counterfactual, split, 1);
    countExtraDocuments(totals, source, result.counterfactual);
    // By its own kind: a synthesized sample is no counterfactual.
    countExtraSample(totals, result.counterfactual[0]?.domain ?? "", result.counterfactual[0]?.controls);
    countRephrase(totals, result.counterfactual[0]?.controls);
  }
  return full;
}

/**
 * The records stage, one task: every record through the per-record stages into the task's own
 * files (shards, stats table, quarantine, filtered), resuming from its last checkpoint if a
 * previous attempt died. Output depends only on the task's input and the config, so a resumed or
 * re-run task writes byte-identical files. Returns the task's completion marker.
 */
export async function runTask(
  plan: JobPlan,
  task: Task,
  onProgress?: (progress: TaskProgress) => void,
  stop?: StopSignal,
): Promise<TaskState> {
  const { config } = plan;
  const outputDir = config.output.dir;
  const output = await TaskOutput.open(plan, task);
  const decisions = await loadTaskDecisions(plan, task.index);
  const context = stageContext(plan, output.counters);
  if (noveltyEnabled(config)) context.corpusNovelty = await taskNovelty(plan, task.index);
  if (context.controls) context.controls = await controlsForTask(plan, task.index);
  if (rephraseOn(config.controls)) context.rephrasings = await readRephrasings(outputDir, task.index);
  const duplicates = config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;
  const mixture = await resolvedMixture(outputDir, config.mixture, jobShas(plan));
  let items = output.state.items;
  const resumed = output.resumedItems;
  // Share mode: the count unit's spooled results when current (the same results, not computed again).
  const source = await taskResults(plan, task, context, { duplicates, decisions, resumeAfter: items, counters: output.counters });
  const due = checkpointClock(config.output.checkpoint, items);
  try {
    const { results } = source;
    for await (const { result, item, bytes } of results) {
      items = item;
      output.totals.records_in += 1;
      if (await writeResult(output, result, plan, mixture)) {
        await output.checkpoint(items);
        due.reset(items);
      } else if (output.checkpointsMidSegment && due.now(items)) {
        await output.checkpointMidSegment(items);
        due.reset(items);
      }
      if (items % 64 === 0) onProgress?.({ task: task.index, records: items, resumed, bytes });
      // Stop between records. With a journal the task checkpoints right here, so a rerun goes on
      // from this record; without one the unfinished segment is dropped (its temporary files
      // removed below) and the last cut stands. Either way the rerun writes the same bytes as a
      // run never stopped: a checkpoint never moves a data-determined segment cut.
      if (stopRequested(stop)) {
        await output.checkpointMidSegment(items);
        throw new TaskStopped(task.index);
      }
    }
    await output.close(items);
  } catch (err) {
    await output.abort();
    throw err;
  }
  onProgress?.({ task: task.index, records: items, resumed, bytes: task.bytes });
  const done = await output.seal(items, source.duplicates());
  await dropSpool(plan, task.index);
  return done;
}

/** When the next checkpoint between segment cuts is due: `output.checkpoint`'s seconds or records since the last. */
function checkpointClock(settings: JobConfig["output"]["checkpoint"], items: number) {
  let lastItems = items;
  let lastTime = performance.now();
  return {
    now: (at: number) =>
      (settings.records > 0 && at - lastItems >= settings.records) ||
      (settings.seconds > 0 && performance.now() - lastTime >= settings.seconds * 1000),
    reset: (at: number) => {
      lastItems = at;
      lastTime = performance.now();
    },
  };
}

/** The records stage (always on, last): per task, the record pipeline into shards, stats, quarantine and filtered. */
export const recordsStage: JobStage = {
  name: "records",
  summary: "per task: every record read, normalized, rendered, tokenized, masked and written to shards (the job's output)",
  enabled: () => true,
  scope: "task",
  pooled: true,
  // Its own checkpoints and markers; a task's id hashes only finalize reads.
  reads: [{ path: "tasks/", include: (name) => !name.endsWith(".ids") }],
  provides: [],
  isDone: async (plan, unit) => isCurrent(await readTaskState(plan.config.output.dir, unit, "done"), jobShas(plan)),
  run: ({ plan, task, onProgress, stop }) => runTask(plan, task, onProgress, stop),
};
