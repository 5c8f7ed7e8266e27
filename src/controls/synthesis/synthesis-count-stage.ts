/**
 * The mix control's counting stage (docs/controls.md "Mix control"), before synthesis-plan
 * (synthesis-plan-stage.ts) and the records stage; the files of both:
 *
 *   synthesis/count/task-NNNNN.done.json   per task and domain: samples, natural instructed samples
 *                                          per kind, eligible trajectories per pattern and their
 *                                          sorted sha256(seed, id) order values
 *   synthesis/plan.done.json               the quota per domain and kind, and per task the bounds a
 *                                          records unit compares a trajectory's order value with
 *
 * The count unit runs every record through the same per-record stages as the records stage (so
 * curation, filters, quarantines and the mixture's drops are what the records stage will see), with
 * synthesis in `census` mode: it finds what each trajectory is eligible for but makes nothing. The
 * plan unit sums the counts and solves the quotas (synthesis-quota.ts). The records unit recomputes
 * each trajectory's eligibility and takes it when its order value is within its pattern's bound.
 */
import { join } from "node:path";
import { type Task, taskLabel } from "../../../sharding/task-plan.ts";
import { UserError } from "../../core/errors.ts";
import { readMarker, writeMarker } from "../../curate/curate-files.ts";
import { keptCopies } from "../../mixture/draw.ts";
import { resolvedMixture } from "../../mixture/mixture-factors.ts";
import { factorOf } from "../../mixture/resolve-factors.ts";
import { DuplicateIds } from "../../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas } from "../../pipeline/plan.ts";
import { recordResults } from "../../pipeline/record-results.ts";
import { filesUnder, type JobStage } from "../../pipeline/stage-contract.ts";
import { stageContext } from "../../pipeline/stages.ts";
import { type StopSignal, stopRequested, TaskStopped } from "../../pipeline/stop-signal.ts";
import { loadTaskDecisions } from "../../pipeline/task-decisions.ts";
import type { TaskProgress } from "../../pipeline/task-items.ts";
import type { ControlsSettings } from "../apply-controls.ts";
import { patternKey, synthesisOn, synthesisOrder } from "./select-synthesis.ts";
import type { DomainCensus } from "./synthesis-quota.ts";
import { readTeacherAnswers, teacherPaths } from "./teacher-files.ts";
import { teacherSynthesisOn } from "./teacher-settings.ts";
import type { TeacherAnswers } from "./teacher-source.ts";

export const SYNTHESIS_DIR = "synthesis";
export const PLAN_MARKER = `${SYNTHESIS_DIR}/plan.done.json`;

export const synthesisPaths = {
  countDone: (out: string, task: number) => join(out, SYNTHESIS_DIR, "count", `${taskLabel(task)}.done.json`),
  planDone: (out: string) => join(out, PLAN_MARKER),
};

/** A count unit's marker: per domain, its census and per pattern the sorted order values of its eligible trajectories. */
export interface SynthesisCountData {
  domains: Record<string, DomainCensus & { orders: Record<string, number[]> }>;
}

export const synthesisEnabled = (config: JobPlan["config"]): boolean => config.controls.enabled && synthesisOn(config.controls.synthesis);

/** The counting pass, one task: what the records stage would write, without syntheses, and what each trajectory could be synthesized with. */
export async function runSynthesisCountUnit(
  plan: JobPlan,
  task: Task,
  stop?: StopSignal,
  onProgress?: (progress: TaskProgress) => void,
): Promise<SynthesisCountData> {
  const { config } = plan;
  const out = config.output.dir;
  const context = stageContext(plan, new Map());
  const teacherAnswers = await teacherAnswersFor(plan, task.index);
  const census: ControlsSettings = { ...config.controls, synthesisMode: { kind: "census" }, ...(teacherAnswers ? { teacherAnswers } : {}) };
  context.controls = census;
  const duplicates = config.input.duplicate_ids === "quarantine" ? new DuplicateIds() : undefined;
  const decisions = await loadTaskDecisions(plan, task.index);
  const mixture = await resolvedMixture(out, config.mixture, jobShas(plan));
  const domains: SynthesisCountData["domains"] = {};
  for await (const { result, item, bytes } of recordResults(plan, task, context, { duplicates, decisions })) {
    if (item % 64 === 0) onProgress?.({ task: task.index, records: item, bytes });
    if (stopRequested(stop)) throw new TaskStopped(task.index);
    const first = result.kind === "samples" ? result.samples[0] : undefined;
    if (result.kind !== "samples" || first?.controls === undefined) continue;
    // As the records stage writes it (records-stage.ts writeResult): counted when a copy is kept, its extra sample with copy 0.
    const factor = factorOf(mixture, result.source);
    const copies = factor === 1 ? [0] : keptCopies(config.mixture.seed, first.id, factor);
    if (copies.length === 0) continue;
    domains[first.domain] ??= { samples: 0, natural: {}, patterns: {}, orders: {} };
    const census = domains[first.domain] as SynthesisCountData["domains"][string];
    census.samples += 1;
    const { controls } = first;
    if (controls.kind === "instructed")
      for (const kind of new Set(controls.labels.map((label) => label.label))) census.natural[kind] = (census.natural[kind] ?? 0) + 1;
    if (!copies.includes(0)) continue;
    if (result.counterfactual) census.samples += 1;
    const eligible = controls.synthesis?.eligible ?? [];
    if (eligible.length === 0) continue;
    const pattern = patternKey(eligible);
    census.patterns[pattern] = (census.patterns[pattern] ?? 0) + 1;
    census.orders[pattern] ??= [];
    census.orders[pattern].push(synthesisOrder(config.controls.seed, first.id));
  }
  for (const census of Object.values(domains)) for (const orders of Object.values(census.orders)) orders.sort((a, b) => a - b);
  const data: SynthesisCountData = { domains: sortedRecord(domains) };
  await writeMarker(synthesisPaths.countDone(out, task.index), jobShas(plan), "synthesis-count", task.index, data);
  onProgress?.({ task: task.index, records: 0, bytes: task.bytes });
  return data;
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Mix control, stage 1: per task, the records as the records stage would write them, counted per domain, kind and eligibility. */
export const synthesisCountStage: JobStage = {
  name: "synthesis-count",
  summary:
    "per task (controls.synthesis.target_shares): natural instructed samples and trajectories a verified synthesis exists for, per domain and kind",
  enabled: synthesisEnabled,
  scope: "task",
  pooled: true,
  reads: [{ path: `${SYNTHESIS_DIR}/count/` }],
  provides: [],
  unitFiles: (out, unit) => filesUnder(out, `${SYNTHESIS_DIR}/count/`, `${taskLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(synthesisPaths.countDone(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: ({ plan, task, stop, onProgress }) => runSynthesisCountUnit(plan, task, stop, onProgress),
};

/** With controls.synthesis.teacher: the task's answers from the stage synthesis-teacher (which must have run). */
export async function teacherAnswersFor(plan: JobPlan, task: number): Promise<TeacherAnswers | undefined> {
  if (!teacherSynthesisOn(plan.config.controls.synthesis)) return undefined;
  const out = plan.config.output.dir;
  if (!(await readMarker(teacherPaths.done(out, task), jobShas(plan))))
    throw new UserError(`synthesis: task ${task} has no teacher answers from this job; run the synthesis-teacher stage first`);
  return readTeacherAnswers(out, task);
}
