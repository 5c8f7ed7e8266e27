import { createHash } from "node:crypto";
import type { ControlLabel } from "./control-label.ts";

/** The config block's choice (issue 24): which share of labelled trajectories get each treatment. */
export interface ControlSelectSettings {
  /** Share of labelled trajectories whose samples carry their hindsight instruction, in [0, 1]. */
  share: number;
  /** Share of labelled trajectories that also yield a "behave normally" counterfactual copy, in [0, 1]. */
  counterfactual_share: number;
  seed: number;
}

export interface ControlSelection {
  instructed: boolean;
  counterfactual: boolean;
}

/** The two decisions, each drawn under its own tag so they are independent of each other. */
export type ControlDrawPurpose = "instruction" | "counterfactual" | "synthesis";

/**
 * A uniform number in [0, 1) from sha256(tag, seed, purpose, id): the same for a trajectory
 * wherever it is processed. Built like `drawUniform` (src/mixture/draw.ts), under its own tag so
 * it never agrees with the mixture's draws for the same id.
 */
export function controlDraw(seed: number, id: string, purpose: ControlDrawPurpose): number {
  const digest = createHash("sha256").update(`lwm-controls\u0000${seed}\u0000${purpose}\u0000${id}`).digest();
  // 52 bits: exact in a double.
  return (digest.readUInt32BE(0) * 2 ** 20 + (digest.readUInt32BE(4) >>> 12)) / 2 ** 52;
}

/**
 * Whether a trajectory's samples carry its instruction, and whether it also yields a counterfactual
 * (src/controls/counterfactual.ts): seeded and deterministic per trajectory id, the two draws
 * independent. Unlabelled trajectories get neither; a trajectory whose first turn is labelled has
 * no normal history, so no counterfactual.
 */
export function selectControl(trajectoryId: string, labels: readonly ControlLabel[], settings: ControlSelectSettings): ControlSelection {
  for (const key of ["share", "counterfactual_share"] as const) {
    const value = settings[key];
    if (!(value >= 0 && value <= 1)) throw new RangeError(`controls.${key} must be a number in [0, 1], got ${value}`);
  }
  if (!Number.isSafeInteger(settings.seed)) throw new RangeError(`controls.seed must be an integer, got ${settings.seed}`);
  if (labels.length === 0) return { instructed: false, counterfactual: false };
  const firstTurn = Math.min(...labels.map((label) => label.turn));
  return {
    instructed: controlDraw(settings.seed, trajectoryId, "instruction") < settings.share,
    counterfactual: firstTurn >= 1 && controlDraw(settings.seed, trajectoryId, "counterfactual") < settings.counterfactual_share,
  };
}
