/**
 * Every synthesis the rules can make on a set of normalized trajectories: for each trajectory with
 * no edge case before the turn, each turn and each rule of its domain, the verified synthesis or
 * the reasons it was rejected. What the person-checked table (test/fixtures/controls/
 * synthesized-review.jsonl) and its test are made from.
 */
import type { Trajectory } from "../../core/trajectory.ts";
import { detectControls } from "../detect-controls.ts";
import { type RejectReason, SYNTHESIS_RULES, type Synthesis, synthesizeTurn } from "./synthesize.ts";

export interface Attempt {
  trajectory: Trajectory;
  turn: number;
  rule: string;
  result: { ok: true; synthesis: Synthesis } | { ok: false; reasons: RejectReason[]; details: string[] };
}

/** All attempts on turns that show no edge case themselves (a synthesis replaces a normal observation). */
export function allAttempts(trajectories: readonly Trajectory[]): Attempt[] {
  const out: Attempt[] = [];
  for (const trajectory of trajectories) {
    const labelled = new Set(detectControls(trajectory).map((label) => label.turn));
    for (let turn = 0; turn < trajectory.turns.length; turn++)
      if (!labelled.has(turn))
        for (const rule of SYNTHESIS_RULES[trajectory.domain]) {
          const result = synthesizeTurn(trajectory, turn, rule);
          if (!result.ok && result.reasons.includes("not-applicable")) continue;
          out.push({ trajectory, turn, rule: rule.name, result });
        }
  }
  return out;
}
