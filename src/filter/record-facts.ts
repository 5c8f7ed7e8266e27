import type { Provenance } from "../core/provenance.ts";

/**
 * What a record filter or a selection rule can look at: a processed record's metadata and
 * statistics, one flat object per record (docs/filters-selection-scoring.md "Filters and selection"). Built by the records
 * stage from the record's first document; every field a config may name lives here, so predicates
 * never reach into trajectories.
 */
export interface RecordFacts extends Provenance {
  /** The record's id as written to the shards. */
  id: string;
  domain: string;
  /** The mixture source it belongs to. */
  source: string;
  /** The input format (reader name) it was read with. */
  format: string;
  /** Turns of the trajectory (1 for a text document). */
  turns: number;
  /** Tokens and trained (loss) tokens over the record's documents. */
  tokens: number;
  loss_tokens: number;
  /** loss_tokens / tokens (0 for an empty record). */
  trained_share: number;
  /** Share of the record's turns in each turn class (Retrieval, Echo, …), when the loss policy classifies turns. */
  classes: Readonly<Record<string, number>>;
  /** Control labels (edge cases) the record shows, when controls are on. */
  labels: readonly string[];
  /** Model scores by scorer name; null when the scorer gave no usable score. */
  scores: Readonly<Record<string, number | null>>;
}
