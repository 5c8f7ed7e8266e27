/**
 * Which edge cases a trajectory could be synthesized with (issue 37 item 3): for each kind the
 * config targets in its domain, the candidate turns (those before its first natural edge case) and
 * rules of that kind are tried in a seeded order until one passes the verifier
 * (src/controls/synthesis/synthesize.ts); the failures are counted by reason. Which of the eligible
 * trajectories are synthesized is not drawn here: the quota stages (synthesis-count-stage.ts, synthesis-plan-stage.ts) choose
 * exactly as many as the target shares need (synthesis-quota.ts).
 */
import type { ControlsConfig } from "../../config/schema.ts";
import type { Domain, Trajectory } from "../../core/trajectory.ts";
import { CONTROL_LABELS, type ControlLabel, type ControlLabelName } from "../control-label.ts";
import { controlDraw } from "../select-controls.ts";
import { type RejectReason, SYNTHESIS_RULES, type Synthesis, synthesizableKinds, synthesizeTurn } from "./synthesize.ts";
import { teacherKinds } from "./teacher-settings.ts";
import { synthesizeFromTeacher, type TeacherAnswers, teacherKey, teacherTurns } from "./teacher-source.ts";

export type SynthesisSettings = ControlsConfig["synthesis"];

/** What the targets of a synthesis block depend on: its shares and the kinds its teacher writes (the full block, or its identity in tasks/plan.json). */
export type SynthesisTargets = Pick<SynthesisSettings, "target_shares"> & {
  teacher?: Pick<NonNullable<SynthesisSettings["teacher"]>, "kinds">;
};

/** At most this many verified attempts per trajectory and kind: enough for the demo's rejections, bounded for long trajectories. */
export const MAX_ATTEMPTS = 8;

/** Whether any target share is set: synthesis on. */
export function synthesisOn<T extends SynthesisTargets>(settings: T | undefined): settings is T {
  return settings !== undefined && Object.keys(settings.target_shares).length > 0;
}

/**
 * The target share of each kind the config names for a domain, in the fixed order of
 * CONTROL_LABELS: a number applies to every domain whose rules make the kind, a per-domain map to
 * the domains it names (a named domain without a rule for the kind can reach it only naturally).
 */
export function domainTargets(domain: Domain, settings: SynthesisTargets): [ControlLabelName, number][] {
  const possible = new Set([...synthesizableKinds(domain), ...teacherKinds(domain, settings)]);
  const targets: [ControlLabelName, number][] = [];
  for (const kind of CONTROL_LABELS) {
    const target = settings.target_shares[kind];
    if (typeof target === "number") {
      if (possible.has(kind)) targets.push([kind, target]);
    } else if (target?.[domain] !== undefined) targets.push([kind, target[domain]]);
  }
  const total = targets.reduce((sum, [, share]) => sum + share, 0);
  if (total >= 1)
    throw new RangeError(
      `controls.synthesis.target_shares for ${domain} (${targets.map(([k]) => k).join(", ")}) add up to ${total}; they must add up to less than 1`,
    );
  return targets;
}

/** The trajectory's place in the order the quota takes eligible trajectories in: a uniform number in [0, 1) from sha256(seed, id). */
export function synthesisOrder(seed: number, id: string): number {
  return controlDraw(seed, id, "synthesis");
}

/** The kinds a trajectory could be synthesized with, each with its verified synthesis, and the rejected attempts. */
export interface Eligibility {
  syntheses: Map<ControlLabelName, Synthesis>;
  /** Every rejected attempt's reasons, of both sources. */
  rejected: RejectReason[];
  /** With a teacher: the reasons of its rejected answers (also in `rejected`). */
  teacherRejected?: RejectReason[];
}

/** The teacher's answers for a task (teacher-stage.ts) and the settings that say which kinds and turns it was asked about. */
export interface TeacherUse {
  answers: TeacherAnswers;
  settings: SynthesisSettings;
}

/** A kind's eligibility pattern key: the eligible kinds in CONTROL_LABELS order, joined by `+`. */
export function patternKey(kinds: Iterable<ControlLabelName>): string {
  const set = new Set(kinds);
  return CONTROL_LABELS.filter((kind) => set.has(kind)).join("+");
}

/** For each kind: the first verified synthesis in seeded order, or the attempts' reasons. */
export function synthesisEligibility(
  trajectory: Trajectory,
  labels: readonly ControlLabel[],
  kinds: readonly ControlLabelName[],
  seed: number,
  teacher?: TeacherUse,
): Eligibility {
  const syntheses = new Map<ControlLabelName, Synthesis>();
  const rejected: RejectReason[] = [];
  const teacherRejected: RejectReason[] = [];
  for (const kind of kinds) {
    const outcome = synthesizeKind(trajectory, labels, kind, seed, teacher);
    if (outcome.synthesis) syntheses.set(kind, outcome.synthesis);
    rejected.push(...outcome.rejected);
    teacherRejected.push(...(outcome.teacherRejected ?? []));
  }
  return teacher ? { syntheses, rejected, teacherRejected } : { syntheses, rejected };
}

/** The synthesis of one kind for a trajectory (labels: its detected ones), when a candidate passes; else the reasons. */
export function synthesizeKind(
  trajectory: Trajectory,
  labels: readonly ControlLabel[],
  kind: ControlLabelName,
  seed: number,
  teacher?: TeacherUse,
): { synthesis?: Synthesis; rejected: RejectReason[]; teacherRejected?: RejectReason[] } {
  // Only turns before the first natural edge case: the synthesized sample (turns 0..k) then states
  // exactly the kind it was made for, and its prefix is a normal one.
  const firstLabelled = labels.reduce((first, label) => Math.min(first, label.turn), trajectory.turns.length);
  const candidates: { turn: number; rule: (typeof SYNTHESIS_RULES)[keyof typeof SYNTHESIS_RULES][number]; order: number }[] = [];
  for (let turn = 0; turn < firstLabelled; turn++) {
    for (const rule of SYNTHESIS_RULES[trajectory.domain])
      if (rule.kind === kind)
        candidates.push({ turn, rule, order: controlDraw(seed, `${trajectory.id}\u0000${turn}\u0000${rule.name}`, "synthesis") });
  }
  candidates.sort((a, b) => a.order - b.order || a.turn - b.turn);
  const rejected: RejectReason[] = [];
  let attempts = 0;
  for (const { turn, rule } of candidates) {
    const result = synthesizeTurn(trajectory, turn, rule);
    if (result.ok) return { synthesis: result.synthesis, rejected };
    if (result.reasons.includes("not-applicable")) continue;
    rejected.push(...result.reasons);
    if (++attempts >= MAX_ATTEMPTS) break;
  }
  // Rules first (their output is fully determined), then the teacher's answers for the kind.
  if (teacher && teacherKinds(trajectory.domain, teacher.settings).includes(kind)) {
    const teacherRejected: RejectReason[] = [];
    for (const turn of teacherTurns(trajectory, labels, kind, seed, teacher.settings.teacher?.turns ?? 1)) {
      const observation = teacher.answers.get(teacherKey(trajectory.id, turn, kind));
      if (observation === undefined) continue;
      const result = synthesizeFromTeacher(trajectory, turn, kind, observation);
      if (result.ok) return { synthesis: result.synthesis, rejected, teacherRejected };
      rejected.push(...result.reasons);
      teacherRejected.push(...result.reasons);
    }
    return { rejected, teacherRejected };
  }
  // No rule applying to any turn is no rejection: nothing was made for the verifier to reject.
  return { rejected };
}
