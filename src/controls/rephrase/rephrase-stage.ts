import { type Task, taskLabel } from "../../../sharding/task-plan.ts";
import type { Trajectory } from "../../core/trajectory.ts";
import { readMarker, writeMarker } from "../../curate/curate-files.ts";
import { writeTextFile } from "../../io/json-file.ts";
import { type JobPlan, jobShas } from "../../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../../pipeline/stage-contract.ts";
import type { StopSignal } from "../../pipeline/stop-signal.ts";
import { loadTaskDecisions } from "../../pipeline/task-decisions.ts";
import type { TaskProgress } from "../../pipeline/task-items.ts";
import { taskTrajectories } from "../../pipeline/task-trajectories.ts";
import type { TeacherClient } from "../../sft/teacher/openai-client.ts";
import { applyControls, type ControlsSettings, counterfactualControls } from "../apply-controls.ts";
import { type ControlInstruction, type DetectControls, faithfulInstruction, rephraseMessages } from "../control-instruction.ts";
import { detectControls } from "../detect-controls.ts";
import { controlsForTask } from "../synthesis/synthesis-plan-stage.ts";
import { endpointDownError, failedRequest, type StageSettings, stageTeacherClient, TransientFailures } from "../teacher-endpoint.ts";
import { judgeRephrasing, type RephraseReason } from "./rephrase-check.ts";
import { REPHRASE_DIR, type RephrasedKind, type RephraseLine, type RephraseMarkerData, rephrasePaths } from "./rephrase-files.ts";
import { type RephraseConfig, rephraseDrawn, rephraseOn, rephraseSeed, rephraseSettings } from "./rephrase-settings.ts";

/** One instruction to reword: the sample it belongs to and what the checks hold it against. */
export interface RephraseAsk {
  item: number;
  /** The record's normalized id. */
  id: string;
  kind: RephrasedKind;
  /** The id the draw and the request seed use: the record's, or the synthesized trajectory's. */
  sampleId: string;
  template: ControlInstruction;
  trajectory: Trajectory;
  detect: DetectControls;
}

/**
 * The instructions of one normalized trajectory the records stage will write, as it will write them
 * (`applyControls`, `counterfactualControls`: the same draws), that the share draws for rewording.
 * Normal ("behave normally") instructions are fixed sentences and are never reworded.
 */
export function rephraseAsks(item: number, trajectory: Trajectory, controls: ControlsSettings): RephraseAsk[] {
  const { share } = rephraseSettings(controls);
  const applied = applyControls(trajectory, controls);
  const asks: RephraseAsk[] = [];
  if (applied.controls.kind === "instructed" && rephraseDrawn(controls.seed, trajectory.id, share)) {
    const labels = applied.controls.labels;
    const template = templateOf(faithfulInstruction(trajectory, () => labels).instruction, applied.controls.instruction, trajectory.id);
    asks.push({ item, id: trajectory.id, kind: "instructed", sampleId: trajectory.id, template, trajectory, detect: () => labels });
  }
  const extra = applied.counterfactual;
  if (extra !== undefined && counterfactualControls(extra).kind === "synthesized" && rephraseDrawn(controls.seed, extra.id, share)) {
    const built = faithfulInstruction(extra, detectControls);
    const template = templateOf(built.instruction, counterfactualControls(extra).instruction, extra.id);
    asks.push({
      item,
      id: trajectory.id,
      kind: "synthesized",
      sampleId: extra.id,
      template,
      trajectory: extra,
      detect: () => built.labels,
    });
  }
  return asks;
}

/** The checked template, which must be the text the records stage writes (else the two would disagree). */
function templateOf(instruction: ControlInstruction | undefined, written: string, id: string): ControlInstruction {
  if (instruction === undefined || instruction.text !== written)
    throw new Error(`rephrase: the instruction of ${id} is not the one the records stage writes; applyControls changed without this stage`);
  return instruction;
}

/** Where the stage's settings live, for its errors. */
const REPHRASE_SETTINGS: StageSettings = { key: "controls.rephrase", off: "controls.rephrase.share: 0" };

/** Asks the teacher for one instruction and checks the answer: the line the records stage reads. */
export async function rephraseOne(
  client: TeacherClient,
  ask: RephraseAsk,
  rephrase: RephraseConfig,
  seed: number,
): Promise<RephraseLine & { failed?: { reason: string; status?: number } }> {
  const base = { item: ask.item, id: ask.id, kind: ask.kind, template: ask.template.text };
  const result = await client.complete({
    messages: rephraseMessages(ask.template),
    n: 1,
    temperature: rephrase.temperature,
    seed: rephraseSeed(seed, ask.sampleId),
    max_tokens: rephrase.max_tokens,
  });
  if (!result.ok) {
    return { ...base, text: null, reasons: ["request-failed"], ...failedRequest(result) };
  }
  const verdict = judgeRephrasing(result.texts[0] ?? "", ask.template, ask.trajectory, ask.detect);
  if (verdict.ok) return { ...base, text: verdict.instruction.text, reasons: [] };
  return { ...base, text: null, reasons: verdict.reasons, problems: verdict.problems.slice(0, 3) };
}

/**
 * One task: every instruction the share draws is sent to the teacher (`window` at a time, the
 * answers checked and written in input order) into `rephrase/task-NNNNN.jsonl`, then the marker.
 * Answers are cached by request: a rerun sends nothing and writes the same bytes. A teacher that
 * cannot be reached, or any request that failed for a transient reason after its retries, stops
 * the unit with no marker (ControlsTeacherError; docs/controls.md "Teacher failures").
 */
export async function runRephraseUnit(
  plan: JobPlan,
  task: Task,
  stop?: StopSignal,
  onProgress?: (p: TaskProgress) => void,
  client?: TeacherClient,
): Promise<RephraseMarkerData> {
  const { controls, output } = plan.config;
  const rephrase = rephraseSettings(controls);
  const teacher = stageTeacherClient(rephrase, client);
  const window = 2 * rephrase.concurrency;
  const lines: RephraseLine[] = [];
  const transient = new TransientFailures();
  let pending: RephraseAsk[] = [];
  const flush = async () => {
    const answered = await Promise.all(pending.map((ask) => rephraseOne(teacher, ask, rephrase, controls.seed)));
    const down = teacher.givenUp?.();
    if (down) throw endpointDownError(rephrase, REPHRASE_SETTINGS, down);
    for (const { failed, ...line } of answered) {
      if (failed !== undefined) transient.add(failed.reason, failed.status);
      lines.push(line);
    }
    pending = [];
  };
  // The task's synthesis bounds (synthesis-plan), so the syntheses asked about are those the records stage writes.
  const taskControls = await controlsForTask(plan, task.index);
  const decisions = await loadTaskDecisions(plan, task.index);
  for await (const { item, trajectory } of taskTrajectories(plan, task, decisions, stop, onProgress)) {
    pending.push(...rephraseAsks(item, trajectory, taskControls));
    if (pending.length >= window) await flush();
  }
  await flush();
  // A transient failure in the file would let a rerun from the same cache write other bytes.
  const failed = transient.error(rephrase, REPHRASE_SETTINGS, lines.length);
  if (failed) throw failed;
  const data: RephraseMarkerData = { asked: lines.length, rephrased: 0, rejected: {} };
  for (const line of lines) {
    const reason = line.reasons[0] as RephraseReason | undefined;
    if (reason === undefined) data.rephrased += 1;
    else data.rejected[reason] = (data.rejected[reason] ?? 0) + 1;
  }
  await writeTextFile(rephrasePaths.lines(output.dir, task.index), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
  await writeMarker(rephrasePaths.done(output.dir, task.index), jobShas(plan), "rephrase", task.index, data);
  onProgress?.({ task: task.index, records: 0, bytes: task.bytes });
  return data;
}

/** Teacher rewording of control instructions (docs/controls.md "Reworded instructions"): per task, before the records stage reads them. */
export const rephraseStage: JobStage = {
  name: "rephrase",
  summary: "per task (controls.rephrase): a drawn share of control instructions reworded by the teacher and checked (cached, resumable)",
  enabled: (config) => rephraseOn(config.controls),
  scope: "task",
  pooled: true,
  reads: [{ path: `${REPHRASE_DIR}/`, include: isMarker }],
  provides: [{ path: `${REPHRASE_DIR}/` }],
  unitFiles: (out, unit) => filesUnder(out, `${REPHRASE_DIR}/`, `${taskLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(rephrasePaths.done(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: ({ plan, task, stop, onProgress }) => runRephraseUnit(plan, task, stop, onProgress),
  report: (result) => {
    const data = result as RephraseMarkerData;
    const rejected = Object.entries(data.rejected).map(([reason, n]) => `${reason} ${n}`);
    return [`rephrase: ${data.rephrased}/${data.asked} reworded${rejected.length > 0 ? `; template kept: ${rejected.join(", ")}` : ""}`];
  },
};
