/**
 * Which trajectories give a synthesized sample, with which edge case and at which turn (issue 37
 * item 3): a seeded draw per trajectory id, the same wherever it runs. The kinds a domain's rules
 * make split [0, 1) in the fixed order of CONTROL_LABELS, each its configured share; a draw that
 * falls in a kind's part asks for that kind. The candidate turns (those that show no edge case
 * themselves) and rules of that kind are then tried in a seeded order until one passes the
 * verifier (src/controls/synthesis/synthesize.ts); the failures are counted by reason.
 */
import type { ControlsConfig } from "../../config/schema.ts";
import type { Trajectory } from "../../core/trajectory.ts";
import { CONTROL_LABELS, type ControlLabel, type ControlLabelName } from "../control-label.ts";
import { controlDraw } from "../select-controls.ts";
import { type RejectReason, SYNTHESIS_RULES, type Synthesis, synthesizableKinds, synthesizeTurn } from "./synthesize.ts";

export type SynthesisSettings = ControlsConfig["synthesis"];

/** At most this many verified attempts per trajectory: enough for the demo's rejections, bounded for long trajectories. */
export const MAX_ATTEMPTS = 8;

export interface SynthesisOutcome {
  /** The kind the draw asked for (undefined: no synthesis for this trajectory). */
  kind?: ControlLabelName;
  synthesis?: Synthesis;
  /** Reasons of the attempts that were rejected, one entry per reason per attempt. */
  rejected: RejectReason[];
}

/** Whether any share is set: synthesis on. */
export function synthesisOn(settings: SynthesisSettings | undefined): settings is SynthesisSettings {
  return settings !== undefined && Object.values(settings.shares).some((share) => (share ?? 0) > 0);
}

/** The kind a trajectory's draw asks for, or undefined. Throws when a domain's shares add up to more than 1. */
export function drawSynthesisKind(trajectory: Trajectory, settings: SynthesisSettings, seed: number): ControlLabelName | undefined {
  const possible = new Set(synthesizableKinds(trajectory.domain));
  const kinds = CONTROL_LABELS.filter((kind) => possible.has(kind) && (settings.shares[kind] ?? 0) > 0);
  const total = kinds.reduce((sum, kind) => sum + (settings.shares[kind] ?? 0), 0);
  if (total > 1 + 1e-9)
    throw new RangeError(`controls.synthesis.shares for ${trajectory.domain} (${kinds.join(", ")}) add up to ${total}, more than 1`);
  const u = controlDraw(seed, trajectory.id, "synthesis");
  let upTo = 0;
  for (const kind of kinds) {
    upTo += settings.shares[kind] ?? 0;
    if (u < upTo) return kind;
  }
  return undefined;
}

/** The synthesis for a trajectory (labels: its detected ones), when its draw asks for one and a candidate passes. */
export function synthesizeFor(
  trajectory: Trajectory,
  labels: readonly ControlLabel[],
  settings: SynthesisSettings,
  seed: number,
): SynthesisOutcome {
  const kind = drawSynthesisKind(trajectory, settings, seed);
  if (kind === undefined) return { rejected: [] };
  const labelled = new Set(labels.map((label) => label.turn));
  const candidates: { turn: number; rule: (typeof SYNTHESIS_RULES)[keyof typeof SYNTHESIS_RULES][number]; order: number }[] = [];
  for (let turn = 0; turn < trajectory.turns.length; turn++) {
    if (labelled.has(turn)) continue;
    for (const rule of SYNTHESIS_RULES[trajectory.domain])
      if (rule.kind === kind)
        candidates.push({ turn, rule, order: controlDraw(seed, `${trajectory.id}\u0000${turn}\u0000${rule.name}`, "synthesis") });
  }
  candidates.sort((a, b) => a.order - b.order || a.turn - b.turn);
  const rejected: RejectReason[] = [];
  let attempts = 0;
  for (const { turn, rule } of candidates) {
    const result = synthesizeTurn(trajectory, turn, rule);
    if (result.ok) return { kind, synthesis: result.synthesis, rejected };
    if (result.reasons.includes("not-applicable")) continue;
    rejected.push(...result.reasons);
    if (++attempts >= MAX_ATTEMPTS) break;
  }
  return { kind, rejected: rejected.length > 0 ? rejected : ["not-applicable"] };
}
