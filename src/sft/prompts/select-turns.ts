import { createHash } from "node:crypto";
import type { TurnDecision } from "../../mask/loss-policy.ts";

export const SELECT_MODES = ["all", "last", "kept", "sample", "labelled"] as const;
export type SelectMode = (typeof SELECT_MODES)[number];

export interface SelectSettings {
  mode: SelectMode;
  /** Turns per trajectory for `sample`. */
  perTrajectory: number;
  seed: number;
}

/**
 * Which turns of a trajectory become prompts, in turn order. `kept` follows the turn-level
 * masking decisions (the turns CPT trains on); `labelled` takes the turns where the environment
 * showed an edge case (a rate limit, a crash, …: docs/controls.md "Controls"), the rare turns worth a thinking trace; `sample` takes the `perTrajectory` turns with the
 * lowest seeded hash, so the choice is deterministic and independent of other trajectories.
 */
export function selectTurns(
  trajectoryId: string,
  turnCount: number,
  settings: SelectSettings,
  decisions?: readonly TurnDecision[],
  /** `labelled`: the turns with an edge case (docs/controls.md "Controls"), in any order, repeats allowed. */
  labelledTurns?: readonly number[],
): number[] {
  const all = Array.from({ length: turnCount }, (_, i) => i);
  switch (settings.mode) {
    case "all":
      return all;
    case "last":
      return turnCount > 0 ? [turnCount - 1] : [];
    case "kept":
      if (!decisions) throw new Error("sft.select: kept needs masking decisions (mask.policy: turn-stats)");
      return decisions.filter((decision) => decision.kept).map((decision) => decision.turnIndex);
    case "labelled":
      if (!labelledTurns) throw new Error("sft.select: labelled needs the trajectory's control labels");
      return [...new Set(labelledTurns)].sort((a, b) => a - b);
    case "sample": {
      const draw = (turn: number) => createHash("sha256").update(`${settings.seed}\0${trajectoryId}\0${turn}`).digest("hex");
      return all
        .map((turn) => ({ turn, key: draw(turn) }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .slice(0, settings.perTrajectory)
        .map((pick) => pick.turn)
        .sort((a, b) => a - b);
    }
  }
}
