import type { Domain } from "../core/trajectory.ts";

/**
 * Edge cases a world model can be told to produce (docs/controls.md "Controls"): what a detector finds in a
 * turn's observation, named by a label from this closed list so trainers can filter and ablate.
 */
export const CONTROL_LABELS = [
  // Services and APIs (MCP, search, web APIs)
  "rate_limit",
  "http_error",
  "rpc_error",
  "pagination",
  "empty_result",
  // Operating systems and shells (terminal, swe, os)
  "permission_denied",
  "disk_full",
  "timeout",
  "killed",
  "not_found",
  "nonzero_exit",
  "traceback",
  "compile_error",
  "test_failure",
  // Screens (android, web, os)
  "app_not_responding",
  "app_crash",
  "permission_prompt",
  "error_page",
  "modal_dialog",
] as const;

export type ControlLabelName = (typeof CONTROL_LABELS)[number];

/** One detection: a label, the turn it is in, and the evidence span in that turn's observation. */
export interface ControlLabel {
  label: ControlLabelName;
  /** 0-based index of the turn in the (normalized) trajectory. */
  turn: number;
  /**
   * The evidence: [start, end) in the turn's normalized observation, in Unicode code points (as
   * Python slices a str), so `observation[start:end] == evidence` in a trainer's Python too.
   */
  start: number;
  end: number;
  /** The observation's text in the span. */
  evidence: string;
  /**
   * Values an instruction may state, each read from the evidence itself (never guessed): e.g.
   * `{ status: 429, retry_after: "30" }`, `{ exit_code: 137 }`, `{ page_size: 10, total: 57 }`.
   */
  facts?: Readonly<Record<string, string | number>>;
}

/** A turn as a detector sees it: the normalized action and observation, and where it sits. */
export interface DetectorTurn {
  domain: Domain;
  /** 0-based index in the trajectory. */
  index: number;
  action: string;
  observation: string;
  /** The observation before this turn's (the initial observation for turn 0), for screens that change. */
  previousObservation?: string;
}

/** A domain's rules: each finds its labels in one turn, with evidence as JS string indices [start, end). */
export interface DomainDetector {
  domain: Domain;
  detect(turn: DetectorTurn): { label: ControlLabelName; start: number; end: number; facts?: Record<string, string | number> }[];
}
