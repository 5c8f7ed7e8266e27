import { TEXT_DOMAIN } from "../core/text-document.ts";
import type { FilterStage } from "../output/manifest.ts";
import type { JobPlan } from "../pipeline/plan.ts";
import { shownSource } from "../pipeline/record-labels.ts";
import { type InputRecord, preparedRecord, stageContext } from "../pipeline/stages.ts";
import type { Removal } from "./select-stage.ts";

/** One line of `<output>/filtered/<task>.jsonl`: a record curation removed, and why (docs/curation.md "Curation"). */
export interface FilteredEntry {
  id: string;
  domain: string;
  /** `file:line` or `file@offset`, as quarantine names records. */
  source: string;
  stage: FilterStage;
  reason: string;
  /** read: the reader's filter that matched (e.g. `harness-only`). */
  rule?: string;
  /** exact / near: the twin that was kept. */
  kept_id?: string;
  kept_source?: string;
  /** decontaminate: the benchmark file (relative to the config) and the episode matched. */
  benchmark?: string;
  benchmark_id?: string;
  /** decontaminate: the record's turns (0-based) that matched, and the largest share of a turn's n-grams shared. */
  turns?: number[];
  overlap?: number;
}

/**
 * The filtered/ line for a removed record. Its id is the normalized one (secrets redacted), as
 * the shards and quarantine name records; normalizing cannot fail here, since the signatures stage
 * signed only records that normalized.
 */
export async function filteredEntry(record: InputRecord, label: string, removal: Removal, plan: JobPlan): Promise<FilteredEntry> {
  const { config } = plan;
  const prepared = await preparedRecord(record, plan.pipeline.recordStages, stageContext(plan, new Map()));
  const read = record.kind === "trajectory" ? record.trajectory : record.document;
  const domain = record.kind === "trajectory" ? record.trajectory.domain : TEXT_DOMAIN;
  const base = { id: (prepared ?? read).id, domain, source: shownSource(plan, label) };
  if (removal.stage === "decontaminate") {
    const turns = removal.turns.map((t) => t + 1).join(", ");
    return {
      ...base,
      stage: "decontaminate",
      reason: `turn(s) ${turns} contain turns of benchmark episode ${removal.benchmark_id} (${removal.benchmark}): up to ${Math.round(removal.overlap * 100)}% of a turn's ${config.decontaminate.ngram}-grams shared`,
      benchmark: removal.benchmark,
      benchmark_id: removal.benchmark_id,
      turns: removal.turns,
      overlap: removal.overlap,
    };
  }
  const reason =
    removal.stage === "exact"
      ? `exact duplicate of ${removal.kept_id} (${removal.kept_source}): the same turns once volatile values are canonicalized; the first in input order is kept`
      : `near duplicate of ${removal.kept_id} (${removal.kept_source}): MinHash LSH over word ${config.dedup.ngram}-grams (${config.dedup.bands} bands × ${config.dedup.rows} rows); the first of its cluster in input order is kept`;
  return { ...base, stage: removal.stage, reason, kept_id: removal.kept_id, kept_source: removal.kept_source };
}
