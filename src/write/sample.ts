import type { SampleControls } from "../controls/apply-controls.ts";
import type { Provenance } from "../core/provenance.ts";
import type { TurnDecision } from "../mask/loss-policy.ts";
import type { Role } from "../render/chat-template.ts";

/** A row's text form: a chat message, or a text document's single `text` message. */
export interface SampleMessage {
  role: Role | "text";
  content: string;
  loss: boolean;
}

/** One training row as it goes into a shard. */
export interface Sample {
  id: string;
  domain: string;
  /** `file:line` of the source record, so any row can be traced back. */
  source: string;
  inputIds: Int32Array;
  lossMask: Uint8Array;
  /** With `mask.weights.enabled`: one float per token, > 0 exactly where lossMask is 1 (absent: the mask itself). */
  lossWeight?: Float32Array;
  /** sum(lossMask), counted once when the sample is made. */
  numLossTokens: number;
  numTurns: number;
  /** Text form (role, content, per-message loss), written when output.include_messages is on. */
  messages?: SampleMessage[];
  /** Per-turn masking decisions, for the stats table (not a shard column). */
  decisions?: TurnDecision[];
  /** The trajectory the sample comes from, when `id` is not it (an SFT prompt id): decides the split. */
  trajectoryId?: string;
  /** The mixture source the record belongs to (docs/mixtures.md "Mixtures"); default: its domain. */
  mixtureSource?: string;
  /** With packing: which piece of its record this is (0 for a record that fit whole). */
  part?: number;
  /** With packing: tokens cut off because the record or one of its turns did not fit. */
  truncatedTokens?: number;
  /** With packing, on a split record's first piece: its pieces left out because they train no token. */
  untrainedPiecesDropped?: number;
  /** The record's outcome and provenance columns (trajectories; text documents have none). */
  provenance?: Provenance;
  /**
   * With `scorers`: each scorer's score of the record the sample comes from (null or absent: no
   * usable score), written as the nullable columns `score_<name>` of unpacked shards.
   */
  scores?: Readonly<Record<string, number | null>>;
  /** With `controls.enabled`: the edge cases of the sample's trajectory and its instruction (docs/controls.md "Controls"). */
  controls?: SampleControls;
}

export function countLossTokens(mask: Uint8Array): number {
  let total = 0;
  for (const bit of mask) total += bit;
  return total;
}
