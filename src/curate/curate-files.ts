import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import { UserError } from "../core/errors.ts";
import { readJsonFile, writeJsonFile } from "../io/json-file.ts";
import { isCurrent, type JobShas } from "../output/task-state.ts";

/**
 * Where the curation stages keep their files, under `<output>/curate/`. Every unit writes its
 * files first and its completion marker last (under a temporary name, renamed), so a marker means
 * the unit's files are whole; a rerun redoes any unit without a current marker.
 *
 *   signatures/task-NNNNN.keys        sorted (hash, key) pairs, 16 bytes each (see signatures-stage.ts)
 *   signatures/task-NNNNN.minhash     MinHash signatures, bands × rows uint32 per read item (zeros: not signed)
 *   signatures/task-NNNNN.records.jsonl  the signed records: item, id, domain, source (to name keepers)
 *   signatures/task-NNNNN.matches.jsonl  benchmark matches (decontamination)
 *   signatures/task-NNNNN.done.json   marker: partition offsets into .keys
 *   clusters/part-PPPPP.{all,exact}.bin  partial forests: (key, root) pairs, 16 bytes each
 *   clusters/part-PPPPP.done.json     marker
 *   removals/task-NNNNN.jsonl         what the records stage removes or masks, by item
 *   select.done.json                  marker with the clusters' summary
 */
export const CURATE_DIR = "curate";
export const FILTERED_DIR = "filtered";
export const MARKER_FORMAT = "lwm-data/curate-marker";

export function partLabel(index: number): string {
  return `part-${String(index).padStart(5, "0")}`;
}

export const curatePaths = {
  keys: (out: string, task: number) => join(out, CURATE_DIR, "signatures", `${taskLabel(task)}.keys`),
  signatures: (out: string, task: number) => join(out, CURATE_DIR, "signatures", `${taskLabel(task)}.minhash`),
  records: (out: string, task: number) => join(out, CURATE_DIR, "signatures", `${taskLabel(task)}.records.jsonl`),
  matches: (out: string, task: number) => join(out, CURATE_DIR, "signatures", `${taskLabel(task)}.matches.jsonl`),
  signaturesDone: (out: string, task: number) => join(out, CURATE_DIR, "signatures", `${taskLabel(task)}.done.json`),
  forest: (out: string, part: number, kind: "all" | "exact") => join(out, CURATE_DIR, "clusters", `${partLabel(part)}.${kind}.bin`),
  clustersDone: (out: string, part: number) => join(out, CURATE_DIR, "clusters", `${partLabel(part)}.done.json`),
  removals: (out: string, task: number) => join(out, CURATE_DIR, "removals", `${taskLabel(task)}.jsonl`),
  selectDone: (out: string) => join(out, CURATE_DIR, "select.done.json"),
};

/** A unit's completion marker: the job it belongs to, and what the next stage needs of it. */
export interface CurateMarker<T> extends JobShas {
  format: typeof MARKER_FORMAT;
  stage: string;
  unit: number;
  data: T;
}

export async function readMarker<T>(path: string, job: JobShas): Promise<CurateMarker<T> | undefined> {
  const marker = await readJsonFile<CurateMarker<T>>(path);
  if (marker && marker.format !== MARKER_FORMAT) throw new UserError(`${path} is not an lwm-data curation marker`);
  return marker && isCurrent(marker, job) ? marker : undefined;
}

export async function writeMarker<T>(path: string, job: JobShas, stage: string, unit: number, data: T): Promise<void> {
  const marker: CurateMarker<T> = { format: MARKER_FORMAT, ...job, stage, unit, data };
  await writeJsonFile(path, marker, { indent: 1 });
}

/** A record's key across the job: its task and its position among the task's read items, in input order. */
export function recordKey(task: number, item: number): bigint {
  return (BigInt(task) << 32n) | BigInt(item);
}

export function keyTask(key: bigint): number {
  return Number((key >> 32n) & 0x7fffffffn);
}

export function keyItem(key: bigint): number {
  return Number(key & 0xffffffffn);
}
