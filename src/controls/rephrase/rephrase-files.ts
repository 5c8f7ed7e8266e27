import { join } from "node:path";
import { taskLabel } from "../../../sharding/task-plan.ts";
import { readJsonLines } from "../../io/json-file.ts";
import type { RephraseReason } from "./rephrase-check.ts";

/**
 * Where the rephrase stage keeps its files, under `<output>/rephrase/` (only with controls.rephrase):
 *
 *   task-NNNNN.jsonl       one line per instruction asked: the template, the accepted wording or the reasons it was not used
 *   task-NNNNN.done.json   marker: the task's counts (asked, rephrased, rejected by reason)
 */
export const REPHRASE_DIR = "rephrase";

export const rephrasePaths = {
  lines: (out: string, task: number) => join(out, REPHRASE_DIR, `${taskLabel(task)}.jsonl`),
  done: (out: string, task: number) => join(out, REPHRASE_DIR, `${taskLabel(task)}.done.json`),
};

/** Which sample's instruction: the record's own (`instructed`) or its synthesized sample's. */
export type RephrasedKind = "instructed" | "synthesized";

/** One line of a task's file. */
export interface RephraseLine {
  /** 0-based position among the task's read items. */
  item: number;
  /** The record's normalized id (the synthesized sample is rendered under it too). */
  id: string;
  kind: RephrasedKind;
  /** The template instruction the teacher was asked to reword. */
  template: string;
  /** The accepted wording; null when the template stays. */
  text: string | null;
  /** Why it was not used (empty when accepted). */
  reasons: RephraseReason[];
  /** The checks' messages (at most 3), for reading. */
  problems?: string[];
}

/** A unit's counts (its marker): deterministic, so a rerun from the cache writes the same marker. */
export interface RephraseMarkerData {
  asked: number;
  rephrased: number;
  /** By the first reason of each rejected instruction. */
  rejected: Record<string, number>;
}

/** A task's rewordings, by record id and kind. */
export type RephraseLookup = ReadonlyMap<string, RephraseLine>;

export const lookupKey = (id: string, kind: RephrasedKind): string => `${id}\u0000${kind}`;

export async function readRephrasings(out: string, task: number): Promise<RephraseLookup> {
  const lookup = new Map<string, RephraseLine>();
  for (const line of await readJsonLines<RephraseLine>(rephrasePaths.lines(out, task))) lookup.set(lookupKey(line.id, line.kind), line);
  return lookup;
}
