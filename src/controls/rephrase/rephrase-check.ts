import type { Trajectory } from "../../core/trajectory.ts";
import { visibleAnswer } from "../../sft/teacher/teacher-answer.ts";
import { type CheckOptions, type ControlInstruction, checkInstruction, type DetectControls } from "../control-instruction.ts";

/**
 * Why a teacher's rewording is not used, counted in the manifest (`rephrase_rejected`): it is
 * empty, drops a number or a quoted value the template states, states a number the evidence does
 * not, is far longer, copies an observation beyond the evidence, or no longer says what the
 * evidence shows; or no answer came (`request-failed`).
 */
export type RephraseReason =
  | "empty"
  | "drops-number"
  | "drops-quote"
  | "adds-number"
  | "too-long"
  | "copies-observation"
  | "unfaithful"
  | "request-failed";

/** A problem of `checkInstruction` (with `rephraseProblems` inside it) as a reason. */
export function problemReason(problem: string): RephraseReason {
  if (problem === "the rephrasing is empty") return "empty";
  if (problem.startsWith('the rephrasing drops "')) return "drops-quote";
  if (problem.startsWith("the rephrasing drops ")) return "drops-number";
  if (problem.startsWith("the rephrasing states ")) return "adds-number";
  if (problem.startsWith("the rephrasing is much longer")) return "too-long";
  if (problem.startsWith("the instruction repeats ")) return "copies-observation";
  return "unfaithful";
}

export type RephraseVerdict = { ok: true; instruction: ControlInstruction } | { ok: false; reasons: RephraseReason[]; problems: string[] };

/**
 * A teacher's answer held to the checks a template instruction passes (`checkInstruction` with
 * `rephrased: true`: the template's numbers and quoted values kept, none added, no verbatim copy of
 * an observation, every claim still re-detected at its evidence). The answer's visible part (a
 * thinking model's `<think>` block dropped), its whitespace folded to single spaces.
 */
export function judgeRephrasing(
  answer: string,
  template: ControlInstruction,
  trajectory: Trajectory,
  detect: DetectControls,
  options: CheckOptions = {},
): RephraseVerdict {
  const text = visibleAnswer(answer).trim().replace(/\s+/g, " ");
  const candidate: ControlInstruction = { ...template, text, rephrased: true };
  const problems = checkInstruction(candidate, trajectory, detect, options);
  if (problems.length === 0) return { ok: true, instruction: candidate };
  return { ok: false, reasons: [...new Set(problems.map(problemReason))], problems };
}
