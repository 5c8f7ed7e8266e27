import type { ControlLabelName } from "../control-label.ts";

/** The turn a rule rewrites, as a detector sees it: its action, its real observation, the observation before it. */
export interface SynthesisTurn {
  /** 0-based index of the turn in its trajectory (rules with several wordings pick one by it). */
  index: number;
  action: string;
  observation: string;
  /** The observation before this turn's (the initial observation for turn 0). */
  previousObservation?: string;
  /** The turns before this one, in order (what a rule checks its assertions against). */
  earlier?: readonly { action: string; observation: string }[];
  /** A shell turn whose observation is the command's output alone (swe harnesses), not a terminal screen with a prompt. */
  plainOutput?: boolean;
}

/**
 * A rule-based counterfactual (issue 37 item 1): the observation the environment would have
 * returned for this turn's action under one edge case, where the tools' own output fixes its text.
 * Undefined when the rule does not apply to the turn (a write rule on a read, a dialog on a
 * screen without a root node).
 */
export interface SynthesisRule {
  /** Stable name, recorded in the row (`meta.control_synthesis.rule`). */
  name: string;
  /** The label the project's detectors must give the synthesized observation. */
  kind: ControlLabelName;
  observe(turn: SynthesisTurn): string | undefined;
  /**
   * Why the history contradicts what the synthesized observation asserts about the world (a file
   * it says is missing that an earlier `ls` listed, one it says is unreadable that an earlier
   * command read), or undefined. The verifier rejects a contradicted synthesis.
   */
  contradiction?(turn: SynthesisTurn): string | undefined;
}
