/**
 * `controls.synthesis.teacher` (docs/controls.md "Teacher syntheses"): which kinds and domains a
 * teacher writes synthesized observations for, and how it is reached. Off when `kinds` is empty.
 */
import type { ControlsConfig } from "../../config/schema.ts";
import type { Domain } from "../../core/trajectory.ts";
import { CONTROL_LABELS, type ControlLabelName } from "../control-label.ts";

export type SynthesisConfig = ControlsConfig["synthesis"];
export type TeacherSynthesisConfig = NonNullable<SynthesisConfig["teacher"]>;

/** Whether the teacher writes any synthesis (some kind listed); the target shares decide whether it is asked. */
export function teacherSynthesisOn(synthesis: SynthesisConfig | undefined): boolean {
  return synthesis?.teacher !== undefined && Object.keys(synthesis.teacher.kinds).length > 0;
}

/** The kinds the teacher writes for a domain, in CONTROL_LABELS order. */
export function teacherKinds(
  domain: Domain,
  synthesis: { teacher?: Pick<TeacherSynthesisConfig, "kinds"> } | undefined,
): ControlLabelName[] {
  const kinds = synthesis?.teacher?.kinds ?? {};
  return CONTROL_LABELS.filter((kind) => kinds[kind]?.includes(domain) === true);
}

/**
 * What decides the teacher's answers: the kinds, the turns asked, the cap (only when set, so
 * outputs made before it existed keep their hash) and the model and how it is asked; not where it
 * is served, its key, cache or speed.
 */
export function teacherIdentity(teacher: TeacherSynthesisConfig) {
  return {
    kinds: teacher.kinds,
    turns: teacher.turns,
    ...(teacher.ask_margin === null ? {} : { ask_margin: teacher.ask_margin }),
    model: teacher.model,
    temperature: teacher.temperature,
    max_tokens: teacher.max_tokens,
  };
}

/**
 * The synthesis block as the config hash and the manifest see it: without `teacher` when it is off
 * (so outputs made before it existed keep their hash), with its identity only when on.
 */
export function synthesisIdentity(synthesis: SynthesisConfig): Omit<SynthesisConfig, "teacher"> & {
  teacher?: ReturnType<typeof teacherIdentity>;
} {
  const { teacher, ...rest } = synthesis;
  return teacher !== undefined && teacherSynthesisOn(synthesis) ? { ...rest, teacher: teacherIdentity(teacher) } : rest;
}
