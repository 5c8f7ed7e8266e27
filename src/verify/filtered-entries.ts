import { createReadStream } from "node:fs";
import { readLines } from "../io/read-lines.ts";
import type { FilterStage } from "../output/manifest.ts";

/** The stages a filtered record can name, in the order they run: the readers' own filters, curation, then the config's filters and selection. */
export const FILTER_STAGES: readonly FilterStage[] = ["read", "exact", "near", "decontaminate", "filter", "selection"];

/** Filtered entries counted per stage, per domain and stage, and per stage and rule, to hold against the manifest's counts, curation, filters and selection blocks. */
export interface FilteredTally {
  byStage: Record<string, number>;
  byDomain: Record<string, Record<string, number>>;
  /** Stages whose entries name a rule (read, filter, selection): entries per rule. */
  byRule: Record<string, Record<string, number>>;
}

export function emptyTally(): FilteredTally {
  return { byStage: {}, byDomain: {}, byRule: {} };
}

function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, n] of Object.entries(from)) into[key] = (into[key] ?? 0) + n;
}

/** Lines of one filtered file that break one rule: how many, and the first. */
export interface EntryMismatch {
  what: string;
  count: number;
  first: { line: number; id?: string };
}

export interface FilteredFileContent {
  tally: FilteredTally;
  mismatches: EntryMismatch[];
}

/** Far above any real entry (an id, a source, a sentence, a few turn indexes). */
const MAX_ENTRY_BYTES = 1 << 20;

const isText = (value: unknown): value is string => typeof value === "string" && value.length > 0;

/** What is wrong with one parsed line, or undefined; `stage` and `domain` are only read when it is sound. */
function entryRule(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return "the line is not a JSON object";
  const e = entry as Record<string, unknown>;
  if (!isText(e.id)) return "id is missing or not a string";
  if (!isText(e.domain)) return "domain is missing or not a string";
  if (!isText(e.reason)) return "reason is missing or not a string";
  if (!(FILTER_STAGES as readonly unknown[]).includes(e.stage)) return `stage is not one of ${FILTER_STAGES.join(", ")}`;
  if (e.stage === "read" || e.stage === "filter" || e.stage === "selection") {
    if (!isText(e.rule)) return `rule is missing (stage ${e.stage}: the filter or rule that matched)`;
  } else if (e.stage === "decontaminate") {
    if (!isText(e.benchmark) || !isText(e.benchmark_id))
      return "benchmark or benchmark_id is missing (stage decontaminate: the benchmark item matched)";
  } else if (!isText(e.kept_id)) return `kept_id is missing (stage ${String(e.stage)}: the duplicate that stayed)`;
  return undefined;
}

/**
 * Reads a `filtered/` JSONL file line by line: every entry must name its record (id, domain), the
 * stage that removed it, why, and what it matched (the kept twin for exact/near, the benchmark
 * item for decontaminate). Counts entries per stage and domain. Streams: only one line is held.
 */
export async function readFilteredFile(path: string): Promise<FilteredFileContent> {
  const tally = emptyTally();
  const mismatches = new Map<string, EntryMismatch>();
  const flag = (what: string, line: number, id?: string) => {
    const seen = mismatches.get(what);
    if (seen) seen.count += 1;
    else mismatches.set(what, { what, count: 1, first: { line, ...(id !== undefined ? { id } : {}) } });
  };
  for await (const line of readLines(createReadStream(path), MAX_ENTRY_BYTES)) {
    if (line.oversizedBytes !== undefined) {
      flag(`the line is over ${MAX_ENTRY_BYTES} bytes`, line.lineNo);
      continue;
    }
    let entry: unknown;
    try {
      entry = JSON.parse(line.text);
    } catch {
      flag("the line is not JSON", line.lineNo);
      continue;
    }
    const broken = entryRule(entry);
    const { id, stage, domain, rule } = (entry ?? {}) as { id?: unknown; stage: string; domain: string; rule?: unknown };
    if (broken) {
      flag(broken, line.lineNo, typeof id === "string" ? id : undefined);
      continue;
    }
    tally.byStage[stage] = (tally.byStage[stage] ?? 0) + 1;
    const ofDomain = tally.byDomain[domain] ?? {};
    ofDomain[stage] = (ofDomain[stage] ?? 0) + 1;
    tally.byDomain[domain] = ofDomain;
    if (typeof rule === "string") {
      const ofStage = tally.byRule[stage] ?? {};
      ofStage[rule] = (ofStage[rule] ?? 0) + 1;
      tally.byRule[stage] = ofStage;
    }
  }
  return { tally, mismatches: [...mismatches.values()] };
}

/** Adds one file's tally into another. */
export function addTally(into: FilteredTally, from: FilteredTally): void {
  addCounts(into.byStage, from.byStage);
  for (const [domain, stages] of Object.entries(from.byDomain)) {
    const ofDomain = into.byDomain[domain] ?? {};
    addCounts(ofDomain, stages);
    into.byDomain[domain] = ofDomain;
  }
  for (const [stage, rules] of Object.entries(from.byRule)) {
    const ofStage = into.byRule[stage] ?? {};
    addCounts(ofStage, rules);
    into.byRule[stage] = ofStage;
  }
}
