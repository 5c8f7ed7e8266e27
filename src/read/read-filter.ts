import type { TextDocument } from "../core/text-document.ts";
import { TEXT_DOMAIN } from "../core/text-document.ts";
import type { Trajectory } from "../core/trajectory.ts";
import type { FilteredEntry } from "../curate/filtered-entry.ts";
import type { ReadItem } from "./reader.ts";

/**
 * A reader's verdict that a well-formed record holds nothing to train on (a terminal-bench trial
 * where only the harness typed): `trajectory.meta.read_filter = {stage, reason}`. The record is
 * not quarantined — nothing is wrong with it — but written to `filtered/` with stage `read`, its
 * rule and reason, and counted (docs/curation.md "`filtered/task-TTTTT.jsonl`").
 */
export interface ReadFilter {
  /** Short kebab-case name of the rule, e.g. `harness-only`. */
  rule: string;
  reason: string;
}

/** The read filter a reader set on an item, if any. */
export function readFilterOf(item: ReadItem): ReadFilter | undefined {
  if (item.kind !== "trajectory") return undefined;
  const marked = item.trajectory.meta?.read_filter;
  if (typeof marked !== "object" || marked === null) return undefined;
  const { stage, reason } = marked as { stage?: unknown; reason?: unknown };
  if (typeof stage !== "string" || typeof reason !== "string") return undefined;
  return { rule: stage, reason };
}

/** The filtered/ line for a record its reader filtered. `source` is the record's shown label. */
export function readFilteredEntry(record: Trajectory | TextDocument, source: string, filter: ReadFilter): FilteredEntry {
  const domain = "domain" in record ? record.domain : TEXT_DOMAIN;
  return { id: record.id, domain, source, stage: "read", rule: filter.rule, reason: filter.reason };
}
