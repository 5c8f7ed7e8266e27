/**
 * The stage `synthesis-teacher` (docs/controls.md "Teacher syntheses"): per task, before the
 * counting stage, the teacher is asked for the observation under each kind of
 * `controls.synthesis.teacher.kinds` the target shares ask for in the trajectory's domain, on the
 * turns `teacherTurns` picks; each answer is verified (teacher-source.ts) and stored with its
 * reasons in `synthesis/teacher/task-NNNNN.jsonl`. The counting and records stages read the file
 * and try the answers after the rules, so target shares count them like a rule's syntheses.
 *
 * Cached by request (a rerun sends nothing and writes the same bytes), resumable per task (the
 * marker); a teacher that cannot be reached, or a request that failed for a transient reason after
 * its retries, stops the unit with the cause named and no marker (teacher-endpoint.ts). With
 * `ask_margin`, only the trajectories the targets could use are asked about (teacher-cap.ts).
 */
import { createHash } from "node:crypto";
import type { Task } from "../../../sharding/task-plan.ts";
import { taskLabel } from "../../../sharding/task-plan.ts";
import type { Domain, Trajectory } from "../../core/trajectory.ts";
import { readMarker, writeMarker } from "../../curate/curate-files.ts";
import { writeTextFile } from "../../io/json-file.ts";
import { type JobPlan, jobShas } from "../../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../../pipeline/stage-contract.ts";
import type { StopSignal } from "../../pipeline/stop-signal.ts";
import { loadTaskDecisions, type TaskDecisions } from "../../pipeline/task-decisions.ts";
import type { TaskProgress } from "../../pipeline/task-items.ts";
import { taskTrajectories } from "../../pipeline/task-trajectories.ts";
import { failureKind } from "../../sft/teacher/endpoint-failures.ts";
import type { TeacherClient } from "../../sft/teacher/openai-client.ts";
import type { ControlLabelName } from "../control-label.ts";
import { detectControls } from "../detect-controls.ts";
import { endpointDownError, failedRequest, type StageSettings, stageTeacherClient, TransientFailures } from "../teacher-endpoint.ts";
import { domainTargets, synthesisOn, synthesisOrder, synthesizeKind } from "./select-synthesis.ts";
import { synthesizableKinds } from "./synthesize.ts";
import { type AskCandidate, type AskSelection, askKey, askLimit, chooseAsks } from "./teacher-cap.ts";
import { TEACHER_DIR, type TeacherLine, type TeacherMarkerData, teacherPaths } from "./teacher-files.ts";
import { answerObservation, teacherMessages } from "./teacher-prompt.ts";
import { type SynthesisConfig, type TeacherSynthesisConfig, teacherKinds, teacherSynthesisOn } from "./teacher-settings.ts";
import { synthesizeFromTeacher, teacherTurns } from "./teacher-source.ts";

/** One question: a turn of a trajectory and the kind to show there. */
export interface TeacherAsk {
  item: number;
  trajectory: Trajectory;
  turn: number;
  kind: ControlLabelName;
}

/**
 * The questions for one normalized trajectory: per kind the teacher writes for its domain and the
 * target shares ask for, the turns `teacherTurns` picks; none for a kind a rule already
 * synthesizes on this trajectory (the rules are tried first, so the answer would not be used).
 */
export function teacherAsks(item: number, trajectory: Trajectory, synthesis: SynthesisConfig, seed: number): TeacherAsk[] {
  const teacher = synthesis.teacher;
  if (teacher === undefined) return [];
  const byTeacher = new Set(teacherKinds(trajectory.domain, synthesis));
  const kinds = domainTargets(trajectory.domain, synthesis)
    .filter(([kind, share]) => share > 0 && byTeacher.has(kind))
    .map(([kind]) => kind);
  if (kinds.length === 0) return [];
  const labels = detectControls(trajectory);
  const ruled = new Set(synthesizableKinds(trajectory.domain));
  const asks: TeacherAsk[] = [];
  for (const kind of kinds) {
    if (ruled.has(kind) && synthesizeKind(trajectory, labels, kind, seed).synthesis !== undefined) continue;
    for (const turn of teacherTurns(trajectory, labels, kind, seed, teacher.turns)) asks.push({ item, trajectory, turn, kind });
  }
  return asks;
}

/** The request's sampling seed (31 bits): the same turn and kind asks the same, so the cache answers a rerun. */
export function teacherSeed(seed: number, id: string, turn: number, kind: string): number {
  return (
    createHash("sha256").update(`lwm-synthesis-teacher\u0000${seed}\u0000${id}\u0000${turn}\u0000${kind}`).digest().readUInt32BE(0) >>> 1
  );
}

/** Where the stage's settings live, for its errors. */
const TEACHER_SETTINGS: StageSettings = { key: "controls.synthesis.teacher", off: "empty controls.synthesis.teacher.kinds" };

/** Asks the teacher about one turn and kind, and verifies the answer: the line the later stages read. */
export async function askTeacher(
  client: TeacherClient,
  ask: TeacherAsk,
  teacher: TeacherSynthesisConfig,
  seed: number,
): Promise<TeacherLine & { failed?: { reason: string; status?: number } }> {
  const base = { item: ask.item, id: ask.trajectory.id, turn: ask.turn, kind: ask.kind };
  const result = await client.complete({
    messages: teacherMessages(ask.trajectory, ask.turn, ask.kind),
    n: 1,
    temperature: teacher.temperature,
    seed: teacherSeed(seed, ask.trajectory.id, ask.turn, ask.kind),
    max_tokens: teacher.max_tokens,
  });
  if (!result.ok) return { ...base, observation: null, reasons: ["no-answer"], ...failedRequest(result) };
  const original = ask.trajectory.turns[ask.turn]?.observation ?? "";
  const observation = answerObservation(result.texts[0] ?? "", original);
  if (observation === undefined) return { ...base, observation: null, reasons: ["no-answer"], problems: ["the answer is empty"] };
  const verdict = synthesizeFromTeacher(ask.trajectory, ask.turn, ask.kind, observation);
  if (verdict.ok) return { ...base, observation, reasons: [] };
  return { ...base, observation, reasons: verdict.reasons, problems: verdict.details.slice(0, 3) };
}

/**
 * With `ask_margin`, a first pass over the task: the trajectories each kind of each domain could be
 * asked about, and the lowest-order ones the cap lets through (teacher-cap.ts).
 */
export async function capAsks(
  plan: JobPlan,
  task: Task,
  decisions: Pick<TaskDecisions, "removals" | "drops">,
  margin: number,
  stop?: StopSignal,
): Promise<AskSelection> {
  const { controls } = plan.config;
  const trajectories = new Map<string, number>();
  const candidates = new Map<string, { domain: Domain; kind: ControlLabelName; candidates: AskCandidate[] }>();
  for await (const { item, trajectory } of taskTrajectories(plan, task, decisions, stop)) {
    const { domain } = trajectory;
    trajectories.set(domain, (trajectories.get(domain) ?? 0) + 1);
    const order = synthesisOrder(controls.seed, trajectory.id);
    const requests = new Map<ControlLabelName, number>();
    for (const ask of teacherAsks(item, trajectory, controls.synthesis, controls.seed))
      requests.set(ask.kind, (requests.get(ask.kind) ?? 0) + 1);
    for (const [kind, n] of requests) {
      const key = `${domain} ${kind}`;
      const group = candidates.get(key) ?? { domain, kind, candidates: [] };
      group.candidates.push({ item, order, requests: n });
      candidates.set(key, group);
    }
  }
  const groups = new Map<string, { kind: string; limit: number; candidates: AskCandidate[] }>();
  for (const [key, group] of candidates) {
    const targets = domainTargets(group.domain, controls.synthesis);
    const target = targets.find(([kind]) => kind === group.kind)?.[1] ?? 0;
    const total = targets.reduce((sum, [, share]) => sum + share, 0);
    const limit = askLimit(margin, target, trajectories.get(group.domain) ?? 0, controls.counterfactual_share, total);
    groups.set(key, { kind: group.kind, limit, candidates: group.candidates });
  }
  return chooseAsks(groups);
}

/**
 * One task: every question sent to the teacher (`window` at a time, answers verified and written in
 * input order) into `synthesis/teacher/task-NNNNN.jsonl`, then the marker.
 */
export async function runSynthesisTeacherUnit(
  plan: JobPlan,
  task: Task,
  stop?: StopSignal,
  onProgress?: (p: TaskProgress) => void,
  client?: TeacherClient,
): Promise<TeacherMarkerData> {
  const { controls, output } = plan.config;
  const teacher = controls.synthesis.teacher;
  if (teacher === undefined) throw new Error("controls.synthesis.teacher is not set (configs/defaults.yaml sets it)");
  const model = stageTeacherClient(teacher, client);
  const decisions = await loadTaskDecisions(plan, task.index);
  const cap = teacher.ask_margin === null ? undefined : await capAsks(plan, task, decisions, teacher.ask_margin, stop);
  const window = 2 * teacher.concurrency;
  const lines: TeacherLine[] = [];
  const failures: string[] = [];
  const transient = new TransientFailures();
  let pending: TeacherAsk[] = [];
  const flush = async () => {
    const answered = await Promise.all(pending.map((ask) => askTeacher(model, ask, teacher, controls.seed)));
    const down = model.givenUp?.();
    if (down) throw endpointDownError(teacher, TEACHER_SETTINGS, down);
    for (const { failed, ...line } of answered) {
      if (failed !== undefined) {
        failures.push(failed.reason);
        transient.add(failed.reason, failed.status);
      }
      lines.push(line);
    }
    pending = [];
  };
  for await (const { item, trajectory } of taskTrajectories(plan, task, decisions, stop, onProgress)) {
    const asks = teacherAsks(item, trajectory, controls.synthesis, controls.seed);
    pending.push(...(cap ? asks.filter((ask) => cap.asked.has(askKey(item, ask.kind))) : asks));
    if (pending.length >= window) await flush();
  }
  await flush();
  // Fewer requests than the client's give-up count, all failed: no teacher answered at all.
  if (failures.length > 0 && failures.length === lines.length) {
    const first = failures[0] as string;
    throw endpointDownError(teacher, TEACHER_SETTINGS, { kind: failureKind(first), reason: first, requests: failures.length });
  }
  // A transient failure in the file would let a rerun from the same cache write other bytes.
  const failed = transient.error(teacher, TEACHER_SETTINGS, lines.length);
  if (failed) throw failed;
  const data: TeacherMarkerData = { asked: lines.length, verified: 0, rejected: {} };
  for (const line of lines) {
    const reason = line.reasons[0];
    if (reason === undefined) data.verified += 1;
    else data.rejected[reason] = (data.rejected[reason] ?? 0) + 1;
  }
  if (cap) data.not_asked = { requests: cap.notAskedRequests, trajectories: cap.notAskedTrajectories };
  await writeTextFile(teacherPaths.lines(output.dir, task.index), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
  await writeMarker(teacherPaths.done(output.dir, task.index), jobShas(plan), "synthesis-teacher", task.index, data);
  onProgress?.({ task: task.index, records: 0, bytes: task.bytes });
  return data;
}

const teacherEnabled = (config: JobPlan["config"]): boolean =>
  config.controls.enabled && synthesisOn(config.controls.synthesis) && teacherSynthesisOn(config.controls.synthesis);

/** Teacher-written syntheses: per task, before the counting stage reads them. */
export const synthesisTeacherStage: JobStage = {
  name: "synthesis-teacher",
  summary:
    "per task (controls.synthesis.teacher): a teacher writes the observation under each listed edge-case kind; answers verified like a rule's (cached, resumable)",
  enabled: teacherEnabled,
  scope: "task",
  pooled: true,
  reads: [{ path: `${TEACHER_DIR}/`, include: isMarker }],
  provides: [{ path: `${TEACHER_DIR}/` }],
  unitFiles: (out, unit) => filesUnder(out, `${TEACHER_DIR}/`, `${taskLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(teacherPaths.done(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: ({ plan, task, stop, onProgress }) => runSynthesisTeacherUnit(plan, task, stop, onProgress),
  report: (result) => {
    const data = result as TeacherMarkerData;
    const rejected = Object.entries(data.rejected).map(([reason, n]) => `${reason} ${n}`);
    return [
      `synthesis-teacher: ${data.verified}/${data.asked} answers verified${rejected.length > 0 ? `; rejected: ${rejected.join(", ")}` : ""}`,
    ];
  },
};
