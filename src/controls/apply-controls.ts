import type { ControlsConfig } from "../config/schema.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { type ControlInstruction, faithfulInstruction, NORMAL_INSTRUCTION } from "./control-instruction.ts";
import type { ControlLabel, ControlLabelName } from "./control-label.ts";
import { counterfactualOf } from "./counterfactual.ts";
import { detectControls } from "./detect-controls.ts";
import { selectControl } from "./select-controls.ts";
import { type SynthesisOutcome, synthesisOn, synthesizeFor } from "./synthesis/select-synthesis.ts";
import type { SynthesisRecord } from "./synthesis/synthesize.ts";

/**
 * What a sample's `control_kind` says: its trajectory had no edge case (`none`); it had some and
 * its system message states them (`instructed`) or not (`uninstructed`, the share left out); it
 * is a counterfactual (`counterfactual`: normal turns told to behave normally); it is a
 * synthesized edge case (`synthesized`: one turn rewritten to show it, instructed, issue 37); or it
 * had none and is told so because it is the normal half of a synthesized pair (`normal`).
 */
export type ControlKind = "none" | "instructed" | "uninstructed" | "counterfactual" | "synthesized" | "normal";

/** What the synthesis draw did for a record (counted in the manifest's controls block). */
export interface SynthesisTally {
  domain: string;
  /** The kind the draw asked for, and whether a synthesis of it was written. */
  asked: ControlLabelName;
  made: boolean;
  /** Reasons of the rejected attempts. */
  rejected: string[];
}

/** The controls of one sample: the labels of its trajectory and the instruction in its system message. */
export interface SampleControls {
  kind: ControlKind;
  labels: ControlLabel[];
  /** The instruction's text (empty when none is given). */
  instruction: string;
  /** Set on a record whose trajectory was drawn for synthesis. */
  synthesis?: SynthesisTally;
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
  if (labels.length === 0) {
    const none: SampleControls = { kind: "none", labels, instruction: "" };
    if (!synthesisOn(settings.synthesis)) return { controls: none };
    const outcome = synthesizeFor(trajectory, labels, settings.synthesis, settings.seed);
    const tally = synthesisTally(trajectory, outcome);
    if (outcome.synthesis === undefined) return { controls: tally ? { ...none, synthesis: tally } : none };
    // The pair: the same prefix, told to behave normally here and shown the edge case there.
    const own: SampleControls = settings.synthesis.pairs
      ? { kind: "normal", labels, instruction: NORMAL_INSTRUCTION[trajectory.domain] }
      : none;
    return { controls: { ...own, ...(tally ? { synthesis: tally } : {}) }, counterfactual: outcome.synthesis.trajectory };
  }
  const draw = selectControl(trajectory.id, labels, settings);
  // Built and checked against the trajectory (each claim re-detected at its evidence, no verbatim
  // copy of an observation): an instruction that fails the check is not written.
  const instruction: ControlInstruction | undefined = draw.instructed
    ? faithfulInstruction(trajectory, () => labels).instruction
    : undefined;
  let counterfactual = draw.counterfactual ? counterfactualOf(trajectory, labels) : undefined;
  // A record gives one extra sample: the normal-prefix counterfactual when drawn, else a synthesis.
  let tally: SynthesisTally | undefined;
  if (counterfactual === undefined && synthesisOn(settings.synthesis)) {
    const outcome = synthesizeFor(trajectory, labels, settings.synthesis, settings.seed);
    tally = synthesisTally(trajectory, outcome);
    counterfactual = outcome.synthesis?.trajectory;
  }
  const controls: SampleControls = instruction
    ? { kind: "instructed", labels, instruction: instruction.text }
    : { kind: "uninstructed", labels, instruction: "" };
  return {
    controls: tally ? { ...controls, synthesis: tally } : controls,
    ...(counterfactual ? { counterfactual } : {}),
  };
}

function synthesisTally(trajectory: Trajectory, outcome: SynthesisOutcome): SynthesisTally | undefined {
  if (outcome.kind === undefined) return undefined;
  return { domain: trajectory.domain, asked: outcome.kind, made: outcome.synthesis !== undefined, rejected: [...outcome.rejected] };
}

/**
 * The controls of the extra sample a record gives: a counterfactual (no edge case, the instruction
 * to behave normally), or a synthesized trajectory (`meta.control_synthesis`: its labels and the
 * checked instruction that states them).
 */
export function counterfactualControls(trajectory: Trajectory): SampleControls {
  const synthesized = (trajectory.meta as { control_synthesis?: SynthesisRecord } | undefined)?.control_synthesis;
  if (synthesized !== undefined) {
    const built = faithfulInstruction(trajectory, detectControls);
    if (built.instruction !== undefined) return { kind: "synthesized", labels: [...built.labels], instruction: built.instruction.text };
  }
  return { kind: "counterfactual", labels: [], instruction: NORMAL_INSTRUCTION[trajectory.domain] };
}
