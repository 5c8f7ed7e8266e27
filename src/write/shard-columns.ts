import { UserError } from "../core/errors.ts";

/*
 * The shard's column names that depend on the job, apart from the Arrow schema (arrow-batch.ts):
 * the manifest and the output plan name them without loading apache-arrow.
 */

/** Which optional column groups a shard of one sample per row has (docs/output.md "Shard schema"). */
export interface ShardColumns {
  /** `messages`: output.include_messages. */
  messages: boolean;
  /** `control_kind`, `control_instruction`, `controls`: controls.enabled. */
  controls?: boolean;
  /** `task_id` … `failure_mode` (nullable): every CPT output since they exist; absent in older ones. */
  provenance?: boolean;
  /** One nullable float64 column `score_<name>` per scorer, in this order (`scorers`; see `scoreColumn`). */
  scores?: readonly string[];
  /** `loss_weight` after `loss_mask`: mask.weights.enabled. */
  lossWeight?: boolean;
}

/**
 * The shard column of a scorer's scores: `score_` and the name with `-` made `_`
 * (`judge-quality` → `score_judge_quality`), so the column is a plain identifier in SQL, pandas
 * and polars. Two scorers whose names differ only there would share a column: `scoreColumns` refuses them.
 */
export function scoreColumn(scorer: string): string {
  return `score_${scorer.replaceAll("-", "_")}`;
}

/** The score columns of `scorers`, in order; throws when two scorers would make the same column. */
export function scoreColumns(scorers: readonly string[]): string[] {
  const byColumn = new Map<string, string>();
  for (const scorer of scorers) {
    const column = scoreColumn(scorer);
    const other = byColumn.get(column);
    if (other !== undefined && other !== scorer)
      throw new UserError(`scorers: ${other} and ${scorer} would both be written as the shard column ${column}: rename one`);
    byColumn.set(column, scorer);
  }
  return scorers.map(scoreColumn);
}
