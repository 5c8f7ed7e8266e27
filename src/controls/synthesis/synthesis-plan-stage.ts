/**
 * The mix control's planning stage (docs/controls.md "Mix control"): one unit that sums the
 * synthesis-count stage's counts and solves the quotas (synthesis-quota.ts), and the controls a
 * records (or rephrase) unit runs with: its task's bounds from that plan.
 */
import { UserError } from "../../core/errors.ts";
import type { Domain } from "../../core/trajectory.ts";
import { readMarker, writeMarker } from "../../curate/curate-files.ts";
import { type JobPlan, jobShas } from "../../pipeline/plan.ts";
import type { JobStage } from "../../pipeline/stage-contract.ts";
import type { ControlsSettings } from "../apply-controls.ts";
import { domainTargets } from "./select-synthesis.ts";
import {
  PLAN_MARKER,
  SYNTHESIS_DIR,
  type SynthesisCountData,
  synthesisEnabled,
  synthesisPaths,
  teacherAnswersFor,
} from "./synthesis-count-stage.ts";
import {
  allocateDomain,
  boundsOf,
  type DomainCensus,
  type DomainQuota,
  type PatternBounds,
  splitAcrossTasks,
  type TaskTakes,
} from "./synthesis-quota.ts";
import { type TeacherMarkerData, teacherPaths } from "./teacher-files.ts";
import { teacherSynthesisOn } from "./teacher-settings.ts";

/** The plan unit's marker: per domain the quotas, and per task and domain the bounds. */
export interface SynthesisPlanData {
  domains: Record<string, DomainQuota>;
  tasks: Record<string, PatternBounds>[];
}

async function countMarker(plan: JobPlan, task: number): Promise<SynthesisCountData> {
  const marker = await readMarker<SynthesisCountData>(synthesisPaths.countDone(plan.config.output.dir, task), jobShas(plan));
  if (!marker) throw new UserError(`synthesis: task ${task} has not been counted; run the synthesis-count stage first`);
  return marker.data;
}

/** The teacher's requests summed over the tasks (their synthesis-teacher markers), for `run` to print: what the job paid for and what the cap saved. */
export interface TeacherRequests {
  asked: number;
  verified: number;
  notAsked?: { requests: number; trajectories: number };
}

async function teacherRequests(plan: JobPlan): Promise<TeacherRequests | undefined> {
  if (!teacherSynthesisOn(plan.config.controls.synthesis)) return undefined;
  const sum: TeacherRequests = { asked: 0, verified: 0 };
  for (const task of plan.tasks) {
    const marker = await readMarker<TeacherMarkerData>(teacherPaths.done(plan.config.output.dir, task.index), jobShas(plan));
    if (!marker) continue;
    sum.asked += marker.data.asked;
    sum.verified += marker.data.verified;
    const notAsked = marker.data.not_asked;
    if (notAsked) {
      sum.notAsked ??= { requests: 0, trajectories: 0 };
      sum.notAsked.requests += notAsked.requests;
      sum.notAsked.trajectories += notAsked.trajectories;
    }
  }
  return sum;
}

/**
 * One unit: every task's counts summed, the quotas solved per domain, and each task's bounds (the
 * marker), returned with the teacher's request counts for the report. Memory: counts, and one task's order values at a time.
 */
export async function runSynthesisPlanUnit(plan: JobPlan): Promise<SynthesisPlanData & { teacher?: TeacherRequests }> {
  const settings = plan.config.controls.synthesis;
  const totals: Record<string, DomainCensus> = {};
  const perTask: Record<string, Record<string, number>>[] = [];
  for (const task of plan.tasks) {
    const { domains } = await countMarker(plan, task.index);
    const patterns: Record<string, Record<string, number>> = {};
    for (const [domain, census] of Object.entries(domains)) {
      totals[domain] ??= { samples: 0, natural: {}, patterns: {} };
      const into = totals[domain];
      into.samples += census.samples;
      addCounts(into.natural, census.natural);
      addCounts(into.patterns, census.patterns);
      patterns[domain] = census.patterns;
    }
    perTask.push(patterns);
  }
  const quotas: Record<string, DomainQuota> = {};
  const takes: Record<string, TaskTakes[]> = {};
  for (const domain of Object.keys(totals).sort()) {
    const targets = domainTargets(domain as Domain, settings);
    if (targets.length === 0) continue;
    const quota = allocateDomain(totals[domain] as DomainCensus, targets, settings.max_synthesized_ratio);
    quotas[domain] = quota;
    takes[domain] = splitAcrossTasks(
      quota.take,
      perTask.map((patterns) => patterns[domain] ?? {}),
    );
  }
  const tasks: SynthesisPlanData["tasks"] = [];
  for (const task of plan.tasks) {
    const { domains } = await countMarker(plan, task.index);
    const bounds: Record<string, PatternBounds> = {};
    for (const [domain, byTask] of Object.entries(takes)) {
      const taken = byTask[task.index] ?? {};
      if (Object.keys(taken).length > 0) bounds[domain] = boundsOf(taken, domains[domain]?.orders ?? {});
    }
    tasks.push(bounds);
  }
  const data: SynthesisPlanData = { domains: quotas, tasks };
  await writeMarker(synthesisPaths.planDone(plan.config.output.dir), jobShas(plan), "synthesis-plan", 0, data);
  const teacher = await teacherRequests(plan);
  return teacher ? { ...data, teacher } : data;
}

/** The controls a records unit runs with: with synthesis on, its task's bounds from the plan. */
export async function controlsForTask(plan: JobPlan, task: number): Promise<ControlsSettings> {
  const { controls } = plan.config;
  if (!synthesisEnabled(plan.config)) return controls;
  const marker = await readMarker<SynthesisPlanData>(synthesisPaths.planDone(plan.config.output.dir), jobShas(plan));
  if (!marker) throw new UserError(`${PLAN_MARKER} is missing or from another job: run the synthesis-plan stage first`);
  const teacherAnswers = await teacherAnswersFor(plan, task);
  return {
    ...controls,
    synthesisMode: { kind: "assign", bounds: marker.data.tasks[task] ?? {} },
    ...(teacherAnswers ? { teacherAnswers } : {}),
  };
}

/** Lines `run` prints: per domain and kind, the target, what the data has and what the plan makes; the teacher's requests. */
export function synthesisPlanLines(data: SynthesisPlanData & { teacher?: TeacherRequests }, indent = "  "): string[] {
  const lines: string[] = [];
  const { teacher } = data;
  if (teacher)
    lines.push(
      `${indent}teacher: ${teacher.asked} request(s) sent, ${teacher.verified} answer(s) verified` +
        (teacher.notAsked
          ? `; ${teacher.notAsked.requests} request(s) about ${teacher.notAsked.trajectories} trajectory(ies) not sent (ask_margin)`
          : ""),
    );
  for (const [domain, quota] of Object.entries(data.domains))
    for (const [kind, q] of Object.entries(quota.kinds)) {
      const short = q.wanted - q.quota;
      lines.push(
        `${indent}${domain} ${kind}: target ${(q.target * 100).toFixed(1)}% of ${quota.samples} samples; natural ${q.natural}, ` +
          `synthesize ${q.quota} of ${q.eligible} eligible${short > 0 ? `, short by ${short}` : ""}`,
      );
    }
  return lines;
}

function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, n] of Object.entries(from)) into[key] = (into[key] ?? 0) + n;
}

/** Mix control, stage 2: one unit, the quotas that meet the target shares and each task's bounds (returned, so `run` prints them). */
export const synthesisPlanStage: JobStage = {
  name: "synthesis-plan",
  summary:
    "one unit (controls.synthesis.target_shares): the counts summed, the syntheses per domain and kind that meet the targets, each task's share",
  enabled: synthesisEnabled,
  scope: "one",
  pooled: false,
  reads: [{ path: `${SYNTHESIS_DIR}/count/` }, { path: PLAN_MARKER }],
  provides: [{ path: PLAN_MARKER }],
  unitFiles: async () => [PLAN_MARKER],
  isDone: async (plan) => (await readMarker(synthesisPaths.planDone(plan.config.output.dir), jobShas(plan))) !== undefined,
  run: ({ plan }) => runSynthesisPlanUnit(plan),
  report: (result) => synthesisPlanLines(result as SynthesisPlanData & { teacher?: TeacherRequests }),
};
