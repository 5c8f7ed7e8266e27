import type { Trajectory } from "../core/trajectory.ts";
import type { ControlLabel } from "./control-label.ts";

/** The suffix a counterfactual copy's id carries: `<id>#normal`. */
export const NORMAL_ID_SUFFIX = "#normal";

/**
 * The counterfactual of a labelled trajectory (issue 24): the same history under the instruction
 * "behave normally" (`NORMAL_INSTRUCTION` / `normalInstruction`) where the real observations were
 * normal, so the model learns that the instruction matters. With k the first labelled turn, the
 * copy keeps turns 0..k-1 (none of them labelled), the same system prompt, task, initial
 * observation, source and meta, under the id `<id>#normal`. Undefined without labels, or when the
 * very first turn is labelled (k = 0: no normal turn to learn from).
 */
export function counterfactualOf(trajectory: Trajectory, labels: readonly ControlLabel[]): Trajectory | undefined {
  let first = Number.POSITIVE_INFINITY;
  for (const label of labels) if (Number.isInteger(label.turn) && label.turn >= 0 && label.turn < first) first = label.turn;
  if (!Number.isFinite(first) || first < 1) return undefined;
  return { ...trajectory, id: `${trajectory.id}${NORMAL_ID_SUFFIX}`, turns: trajectory.turns.slice(0, first) };
}
