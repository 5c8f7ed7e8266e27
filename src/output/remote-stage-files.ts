import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import { partLabel } from "../curate/curate-files.ts";
import type { JobStage } from "../pipeline/job-stages.ts";
import type { RemoteOutput } from "./remote-output.ts";

/**
 * Which files of an `s3://` output each stage reads (mirrored to the staging folder before its
 * units run) and which files a unit writes (uploaded after it, completion marker last). The
 * layout is the local one (README "Output layout"); this is the one place that knows which stage
 * touches which part of it.
 */

interface Mirrored {
  /** A folder (ending in `/`) or one file of the output. */
  path: string;
  include?: (name: string) => boolean;
}

const markers = (name: string) => name.endsWith(".done.json");
/** Everything of a task's state but its id hashes, which only finalize reads. */
const taskStates = (name: string) => !name.endsWith(".ids");

const SELECT_MARKER = "curate/select.done.json";
const WEIGHTS_MARKER = "mixture/weights.done.json";

/** What a stage (or finalize) reads: the stage before it's markers, its own markers, and its inputs. */
const STAGE_READS: Record<JobStage | "finalize", Mirrored[]> = {
  signatures: [{ path: "curate/signatures/", include: markers }],
  // A partition reads every task's signatures.
  clusters: [{ path: "curate/signatures/" }, { path: "curate/clusters/", include: markers }],
  select: [
    { path: "curate/signatures/", include: (name) => !name.endsWith(".minhash") && !name.endsWith(".keys") },
    { path: "curate/clusters/" },
    { path: SELECT_MARKER },
  ],
  count: [{ path: "curate/removals/" }, { path: SELECT_MARKER }, { path: "mixture/count/" }],
  weights: [{ path: "mixture/" }],
  records: [{ path: "tasks/", include: taskStates }, { path: "curate/removals/" }, { path: SELECT_MARKER }, { path: WEIGHTS_MARKER }],
  finalize: [{ path: "tasks/" }, { path: SELECT_MARKER }, { path: WEIGHTS_MARKER }],
};

/** Brings the staging folder up to date with the bucket for what `stage` reads. */
export async function mirrorStageInputs(remote: RemoteOutput, stage: JobStage | "finalize"): Promise<void> {
  for (const { path, include } of STAGE_READS[stage]) await remote.mirror(path, include);
}

/** The folders whose files finalize checks against the task markers. */
export const FINALIZE_CHECKED_FOLDERS = ["data/", "stats/", "quarantine/", "filtered/"];

/** The files one unit of a curation or mixture stage wrote (the records stage uploads its own, per segment). */
async function unitFiles(remote: RemoteOutput, stage: Exclude<JobStage, "records">, unit: number): Promise<string[]> {
  const under = async (folder: string, prefix = "") =>
    (await readdir(join(remote.local, folder)).catch(() => [] as string[]))
      .filter((name) => name.startsWith(prefix) && !name.endsWith(".tmp"))
      .map((name) => `${folder}${name}`);
  switch (stage) {
    case "signatures":
      return under("curate/signatures/", `${taskLabel(unit)}.`);
    case "clusters":
      return under("curate/clusters/", `${partLabel(unit)}.`);
    case "count":
      return under("mixture/count/", `${taskLabel(unit)}.`);
    case "select":
      return [...(await under("curate/removals/")), SELECT_MARKER];
    case "weights":
      return [WEIGHTS_MARKER];
  }
}

/** Uploads what a finished unit wrote: its data files first, its completion marker last. */
export async function uploadUnit(remote: RemoteOutput, stage: Exclude<JobStage, "records">, unit: number): Promise<void> {
  const files = await unitFiles(remote, stage, unit);
  await remote.push(files.filter((name) => !markers(name)));
  await remote.push(files.filter(markers));
}
