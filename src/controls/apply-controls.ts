import type { ControlsConfig } from "../config/schema.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { type ControlInstruction, faithfulInstruction, NORMAL_INSTRUCTION } from "./control-instruction.ts";
import type { ControlLabel } from "./control-label.ts";
import { counterfactualOf } from "./counterfactual.ts";
import { detectControls } from "./detect-controls.ts";
import { selectControl } from "./select-controls.ts";

/**
 * What a sample's `control_kind` says: its trajectory had no edge case (`none`); it had some and
 * its system message states them (`instructed`) or not (`uninstructed`, the share left out); or it
 * is a counterfactual (`counterfactual`: normal turns told to behave normally).
 */
export type ControlKind = "none" | "instructed" | "uninstructed" | "counterfactual";

/** The controls of one sample: the labels of its trajectory and the instruction in its system message. */
export interface SampleControls {
  kind: ControlKind;
  labels: ControlLabel[];
  /** The instruction's text (empty when none is given). */
  instruction: string;
}

/** A trajectory's controls, and the counterfactual sample's trajectory when the draw gives one. */
export interface AppliedControls {
  controls: SampleControls;
  counterfactual?: Trajectory;
}

/**
 * Detects the edge cases of a normalized trajectory, draws whether it is instructed and gives a
 * counterfactual, and builds the instruction. Deterministic: the same trajectory, config and seed
 * give the same result wherever it runs.
 */
export function applyControls(trajectory: Trajectory, settings: ControlsConfig): AppliedControls {
  const labels = detectControls(trajectory);
  if (labels.length === 0) return { controls: { kind: "none", labels, instruction: "" } };
  const draw = selectControl(trajectory.id, labels, settings);
  // Built and checked against the trajectory (each claim re-detected at its evidence, no verbatim
  // copy of an observation): an instruction that fails the check is not written.
  const instruction: ControlInstruction | undefined = draw.instructed
    ? faithfulInstruction(trajectory, () => labels).instruction
    : undefined;
  const counterfactual = draw.counterfactual ? counterfactualOf(trajectory, labels) : undefined;
  return {
    controls: instruction
      ? { kind: "instructed", labels, instruction: instruction.text }
      : { kind: "uninstructed", labels, instruction: "" },
    ...(counterfactual ? { counterfactual } : {}),
  };
}

/** The controls of a counterfactual sample: no edge case, and the instruction to behave normally. */
export function counterfactualControls(trajectory: Trajectory): SampleControls {
  return { kind: "counterfactual", labels: [], instruction: NORMAL_INSTRUCTION[trajectory.domain] };
}
