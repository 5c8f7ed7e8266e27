import { readMarker, writeMarker } from "../curate/curate-files.ts";
import { readJsonLines, writeTextFile } from "../io/json-file.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { filesUnder, type JobStage } from "../pipeline/stage-contract.ts";
import type { FactsLine } from "./facts-stage.ts";
import { type SelectionDrop, type SelectionResult, selectRecords } from "./select-records.ts";
import { selectionActive } from "./selection-active.ts";
import { SELECT_DIR, type SelectionDropLine, selectionPaths } from "./selection-files.ts";
import { SelectionTable } from "./selection-table.ts";

/** The selection marker: what was decided, for the manifest and `stats`. */
export type SelectionMarkerData = Omit<SelectionResult, "drops">;

/**
 * Selection, stage 2, one unit: every task's facts in task and item order (so neither workers
 * nor ranks change the result), `keep_fraction` → `max_per` → `caps` decided over the whole
 * corpus, and each task's drops written for the records stage. Memory: a compact row per record
 * (about 50 bytes for a typical rule set; src/select/selection-table.ts).
 */
export async function runSelectionUnit(plan: JobPlan): Promise<SelectionMarkerData> {
  const out = plan.config.output.dir;
  const table = new SelectionTable(plan.config.select);
  for (const task of plan.tasks)
    for (const { item, facts } of await readJsonLines<FactsLine>(selectionPaths.facts(out, task.index)))
      table.add(facts, { task: task.index, item });
  const result = selectRecords(table);
  // The drops come in task order; each task's facts are read again to name its dropped records,
  // so no id is held for the whole corpus.
  const dropsByTask = new Map<number, SelectionDrop[]>();
  for (const drop of result.drops()) {
    const drops = dropsByTask.get(drop.task);
    if (drops) drops.push(drop);
    else dropsByTask.set(drop.task, [drop]);
  }
  for (const task of plan.tasks) {
    const drops = dropsByTask.get(task.index) ?? [];
    const named = new Map<number, FactsLine["facts"]>();
    if (drops.length > 0) {
      const wanted = new Set(drops.map((drop) => drop.item));
      for (const line of await readJsonLines<FactsLine>(selectionPaths.facts(out, task.index)))
        if (wanted.has(line.item)) named.set(line.item, line.facts);
    }
    const lines = drops.map((drop) => {
      const facts = named.get(drop.item) as FactsLine["facts"];
      const line: SelectionDropLine = { item: drop.item, id: facts.id, domain: facts.domain, rule: drop.rule, reason: drop.reason };
      return `${JSON.stringify(line)}\n`;
    });
    await writeTextFile(selectionPaths.drops(out, task.index), lines.join(""));
  }
  const { drops: _drops, ...data } = result;
  await writeMarker(selectionPaths.selectionDone(out), jobShas(plan), "selection", 0, data);
  return data;
}

export function readSelectionMarker(plan: JobPlan) {
  return readMarker<SelectionMarkerData>(selectionPaths.selectionDone(plan.config.output.dir), jobShas(plan));
}

const SELECTION_MARKER = `${SELECT_DIR}/selection.done.json`;

/** Selection, stage 2 (docs/filters-selection-scoring.md "Filters and selection"): one unit deciding, over the whole corpus, which records are dropped. */
export const selectionStage: JobStage = {
  name: "selection",
  summary: "one unit (select): keep_fraction, max_per and caps decided over every task's facts; each task's drops written",
  enabled: (config) => selectionActive(config.select),
  scope: "one",
  pooled: false,
  reads: [{ path: `${SELECT_DIR}/facts/` }, { path: SELECTION_MARKER }],
  provides: [{ path: `${SELECT_DIR}/drops/` }, { path: SELECTION_MARKER }],
  unitFiles: async (out) => [...(await filesUnder(out, `${SELECT_DIR}/drops/`)), SELECTION_MARKER],
  isDone: async (plan) => (await readSelectionMarker(plan)) !== undefined,
  run: ({ plan }) => runSelectionUnit(plan),
  report: (result) => {
    const { records, kept, dropped } = result as SelectionMarkerData;
    const rules = Object.entries(dropped)
      .filter(([, count]) => count > 0)
      .map(([rule, count]) => `${rule} ${count}`);
    return [`  selection: kept ${kept} of ${records} record(s)${rules.length > 0 ? `; dropped: ${rules.join(", ")}` : ""}`];
  },
};
