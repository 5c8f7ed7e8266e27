/**
 * The teacher source of synthesized edge cases (issue 37 item 1, docs/controls.md "Teacher
 * syntheses"): for kinds and domains no rule makes (a timeout, an MCP 5xx, an app crash on the
 * desktop), a teacher writes the observation, and the answer goes through the same verifier as a
 * rule's (synthesize.ts `verifySynthesis`: detected as the kind, history and frame kept, no
 * contradiction, no copied instruction, the trajectory ends there), plus one check of its own: it
 * shows no other edge case than the one asked for (`other-edge-case`), beyond the label that
 * carries it (a JSON-RPC error carrying a timeout, the exit status of a failed command).
 *
 * The stage `synthesis-teacher` (teacher-stage.ts) asks and stores the answers per task; the
 * counting and records stages read them (`TeacherAnswers`) and try them after the rules.
 */
import type { Trajectory } from "../../core/trajectory.ts";
import type { ControlLabel, ControlLabelName } from "../control-label.ts";
import { controlDraw } from "../select-controls.ts";
import { shellFrame } from "./shell-rules.ts";
import type { SynthesisRule } from "./synthesis-rule.ts";
import {
  type RejectReason,
  SYNTHESIS_RULES,
  type SynthesisRecord,
  type SynthesisResult,
  turnOf,
  verifySynthesis,
  withObservation,
} from "./synthesize.ts";

/** A task's verified-or-not teacher answers, by `teacherKey(trajectory id, turn, kind)`: the observation to try. */
export type TeacherAnswers = ReadonlyMap<string, string>;

export const teacherKey = (id: string, turn: number, kind: ControlLabelName): string => `${id}\u0000${turn}\u0000${kind}`;

/**
 * Labels that may come with the kind asked for at the same turn: what carries it, not another edge
 * case (an MCP error response carries a timeout or a 5xx; a failing command exits non-zero; a 504
 * is an HTTP error and a timeout; `timeout -s KILL` kills).
 */
const CARRIERS: Partial<Record<ControlLabelName, readonly ControlLabelName[]>> = {
  timeout: ["rpc_error", "http_error", "nonzero_exit", "killed"],
  http_error: ["rpc_error"],
  rate_limit: ["rpc_error", "http_error"],
  not_found: ["rpc_error", "nonzero_exit"],
  permission_denied: ["rpc_error", "nonzero_exit"],
  disk_full: ["rpc_error", "nonzero_exit"],
  killed: ["nonzero_exit"],
  traceback: ["nonzero_exit"],
  compile_error: ["nonzero_exit"],
  test_failure: ["nonzero_exit"],
};

/**
 * The turns the teacher is asked about for a kind, and the order the answers are tried in: turns
 * before the trajectory's first natural edge case (so the sample states only the kind asked for),
 * in a seeded order, at most `turns` of them. Shell turns the command has not returned from (no
 * prompt line: a full-screen program) are skipped: no shell error can show there.
 */
export function teacherTurns(
  trajectory: Trajectory,
  labels: readonly ControlLabel[],
  kind: ControlLabelName,
  seed: number,
  turns: number,
): number[] {
  const firstLabelled = labels.reduce((first, label) => Math.min(first, label.turn), trajectory.turns.length);
  const candidates: { turn: number; order: number }[] = [];
  for (let turn = 0; turn < firstLabelled; turn++) {
    if ((trajectory.turns[turn]?.action ?? "").trim() === "") continue;
    if (trajectory.domain === "terminal" && shellFrame(turnOf(trajectory, turn)) === undefined) continue;
    candidates.push({ turn, order: controlDraw(seed, `${trajectory.id}\u0000${turn}\u0000teacher\u0000${kind}`, "synthesis") });
  }
  candidates.sort((a, b) => a.order - b.order || a.turn - b.turn);
  return candidates.slice(0, turns).map(({ turn }) => turn);
}

/** The rule-shaped view of an answer the verifier takes: its kind, and the history check of a rule of the same kind in the domain. */
function teacherRule(trajectory: Trajectory, kind: ControlLabelName, observation: string): SynthesisRule {
  const sameKind = SYNTHESIS_RULES[trajectory.domain].find((rule) => rule.kind === kind && rule.contradiction !== undefined);
  return {
    name: "teacher",
    kind,
    observe: () => observation,
    ...(sameKind?.contradiction ? { contradiction: sameKind.contradiction.bind(sameKind) } : {}),
  };
}

/** A teacher's observation for turn `index` under `kind`, built and verified: the synthesis, or the reasons it was rejected. */
export function synthesizeFromTeacher(trajectory: Trajectory, index: number, kind: ControlLabelName, observation: string): SynthesisResult {
  const original = trajectory.turns[index];
  if (original === undefined) return { ok: false, reasons: ["no-answer"], details: [`no turn ${index}`] };
  if (observation === original.observation)
    return { ok: false, reasons: ["not-detected"], details: ["not-detected: the answer is the observation as it was"] };
  const record: SynthesisRecord = { source: "teacher", rule: "teacher", kind, turn: index, from: trajectory.id };
  const synthesized = withObservation(trajectory, record, observation, `teacher-${kind}-${index}`);
  const rule = teacherRule(trajectory, kind, observation);
  const verdict = verifySynthesis(trajectory, synthesized, rule, index);
  const reasons = new Set<RejectReason>(verdict.reasons);
  const details = [...verdict.details];
  const allowed = new Set<ControlLabelName>([kind, ...(CARRIERS[kind] ?? [])]);
  const others = [...new Set(verdict.labels.filter((label) => label.turn === index && !allowed.has(label.label)).map((l) => l.label))];
  if (others.length > 0) {
    reasons.add("other-edge-case");
    details.push(`other-edge-case: the answer also shows ${others.join(", ")}`);
  }
  if (reasons.size > 0 || verdict.instruction === undefined)
    return { ok: false, reasons: reasons.size > 0 ? [...reasons] : ["instruction-unfaithful"], details };
  return { ok: true, synthesis: { trajectory: synthesized, record, labels: verdict.labels, instruction: verdict.instruction } };
}
