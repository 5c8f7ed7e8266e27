import type { ControlsConfig } from "../config/schema.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { type ControlInstruction, faithfulInstruction, NORMAL_INSTRUCTION } from "./control-instruction.ts";
import type { ControlLabel, ControlLabelName } from "./control-label.ts";
import { counterfactualOf } from "./counterfactual.ts";
import { detectControls } from "./detect-controls.ts";
import { selectControl } from "./select-controls.ts";
import { domainTargets, patternKey, synthesisEligibility, synthesisOn, synthesisOrder } from "./synthesis/select-synthesis.ts";
import { kindFor, type PatternBounds } from "./synthesis/synthesis-quota.ts";
import type { Synthesis, SynthesisRecord } from "./synthesis/synthesize.ts";
import type { TeacherAnswers } from "./synthesis/teacher-source.ts";

/**
 * What a sample's `control_kind` says: its trajectory had no edge case (`none`); it had some and
 * its system message states them (`instructed`) or not (`uninstructed`, the share left out); it
 * is a counterfactual (`counterfactual`: normal turns told to behave normally); it is a
 * synthesized edge case (`synthesized`: one turn rewritten to show it, instructed, issue 37); or it
 * had none and is told so because it is the normal half of a synthesized pair (`normal`).
 */
export type ControlKind = "none" | "instructed" | "uninstructed" | "counterfactual" | "synthesized" | "normal";

/** What synthesis found and did for a record (counted in the manifest's controls block). */
export interface SynthesisTally {
  domain: string;
  /** The targeted kinds a verified synthesis exists for (none when the record gives a counterfactual instead). */
  eligible: ControlLabelName[];
  /** The kind of the synthesized sample the record gives, when the quota took it. */
  made?: ControlLabelName;
  /** Reasons of the rejected attempts. */
  rejected: string[];
  /** With controls.synthesis.teacher: the reasons of the teacher's rejected answers (also in `rejected`). */
  teacherRejected?: string[];
}

/**
 * How synthesis runs (docs/controls.md "Mix control"): the counting stage only finds what each
 * trajectory is eligible for (`census`); the records stage synthesizes the trajectories its task's
 * bounds take (`assign`, per domain and eligibility pattern, src/controls/synthesis/synthesis-quota.ts).
 * Absent: no synthesis (stages that only read the natural controls).
 */
export type SynthesisMode = { kind: "census" } | { kind: "assign"; bounds: Record<string, PatternBounds> };

/** The controls config as a stage runs it: with the synthesis mode its task was given. */
export interface ControlsSettings extends ControlsConfig {
  synthesisMode?: SynthesisMode;
  /** The task's teacher answers (stage synthesis-teacher), tried after the rules: only with controls.synthesis.teacher. */
  teacherAnswers?: TeacherAnswers;
}

/** The controls of one sample: the labels of its trajectory and the instruction in its system message. */
export interface SampleControls {
  kind: ControlKind;
  labels: ControlLabel[];
  /** The instruction's text (empty when none is given). */
  instruction: string;
  /** Set on a record when synthesis runs. */
  synthesis?: SynthesisTally;
  /** On a synthesized sample: the kind it was made to show (what its share counts it as). */
  synthesizedKind?: ControlLabelName;
  /** On a synthesized sample: what made it (`meta.control_synthesis.source`). */
  synthesizedSource?: SynthesisRecord["source"];
  /** Set when the rephrase stage asked a teacher to reword `instruction`: used, or the template kept and why (src/controls/rephrase/). */
  rephrase?: { rephrased: true } | { rephrased: false; reason: string };
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
export function applyControls(trajectory: Trajectory, settings: ControlsSettings): AppliedControls {
  const labels = detectControls(trajectory);
  const mode = synthesisOn(settings.synthesis) ? settings.synthesisMode : undefined;
  if (labels.length === 0) {
    const none: SampleControls = { kind: "none", labels, instruction: "" };
    if (mode === undefined) return { controls: none };
    const { tally, synthesis } = synthesisFor(trajectory, labels, settings, mode);
    if (synthesis === undefined) return { controls: { ...none, synthesis: tally } };
    // The pair: the same prefix, told to behave normally here and shown the edge case there.
    const own: SampleControls = settings.synthesis.pairs
      ? { kind: "normal", labels, instruction: NORMAL_INSTRUCTION[trajectory.domain] }
      : none;
    return { controls: { ...own, synthesis: tally }, counterfactual: synthesis.trajectory };
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
  if (mode !== undefined && counterfactual === undefined) {
    const found = synthesisFor(trajectory, labels, settings, mode);
    tally = found.tally;
    counterfactual = found.synthesis?.trajectory;
  } else if (mode !== undefined) tally = { domain: trajectory.domain, eligible: [], rejected: [] };
  const controls: SampleControls = instruction
    ? { kind: "instructed", labels, instruction: instruction.text }
    : { kind: "uninstructed", labels, instruction: "" };
  return {
    controls: tally ? { ...controls, synthesis: tally } : controls,
    ...(counterfactual ? { counterfactual } : {}),
  };
}

/** The kinds a trajectory is eligible for, and in `assign` mode the synthesis its task's bounds take it for. */
function synthesisFor(
  trajectory: Trajectory,
  labels: readonly ControlLabel[],
  settings: ControlsSettings,
  mode: SynthesisMode,
): { tally: SynthesisTally; synthesis?: Synthesis } {
  const kinds = domainTargets(trajectory.domain, settings.synthesis)
    .filter(([, share]) => share > 0)
    .map(([kind]) => kind);
  const teacher = settings.teacherAnswers ? { answers: settings.teacherAnswers, settings: settings.synthesis } : undefined;
  const { syntheses, rejected, teacherRejected } = synthesisEligibility(trajectory, labels, kinds, settings.seed, teacher);
  const eligible = kinds.filter((kind) => syntheses.has(kind));
  const made =
    mode.kind === "assign" && eligible.length > 0
      ? kindFor(mode.bounds[trajectory.domain], patternKey(eligible), synthesisOrder(settings.seed, trajectory.id))
      : undefined;
  const tally: SynthesisTally = {
    domain: trajectory.domain,
    eligible,
    ...(made ? { made } : {}),
    rejected,
    ...(teacherRejected ? { teacherRejected } : {}),
  };
  const synthesis = made === undefined ? undefined : syntheses.get(made);
  return synthesis === undefined ? { tally } : { tally, synthesis };
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
    if (built.instruction !== undefined)
      return {
        kind: "synthesized",
        labels: [...built.labels],
        instruction: built.instruction.text,
        synthesizedKind: synthesized.kind,
        synthesizedSource: synthesized.source,
      };
  }
  return { kind: "counterfactual", labels: [], instruction: NORMAL_INSTRUCTION[trajectory.domain] };
}
