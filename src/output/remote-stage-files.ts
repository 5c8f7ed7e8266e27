import { loadJobStages, type StagePlan } from "../pipeline/job-stages.ts";
import { isMarker, type JobStage, type OutputFiles } from "../pipeline/stage-contract.ts";
import type { RemoteOutput } from "./remote-output.ts";

/**
 * An `s3://` output's staging: before a stage's units run, the files it reads are mirrored from
 * the bucket into the staging folder (its own `reads`, and what every stage before it `provides`);
 * after a unit, the files it wrote are uploaded, completion marker last. The layout is the local
 * one (docs/output.md "Output"); each stage states which part of it it touches.
 */

async function mirror(remote: RemoteOutput, files: readonly OutputFiles[]): Promise<void> {
  for (const { path, include } of files) await remote.mirror(path, include);
}

/** Brings the staging folder up to date with the bucket for what `stages[position]` reads. */
export async function mirrorStageInputs(remote: RemoteOutput, stages: readonly StagePlan[], position: number): Promise<void> {
  const { stage } = stages[position] as StagePlan;
  await mirror(remote, [...stages.slice(0, position).flatMap((earlier) => earlier.stage.provides), ...stage.reads]);
}

/** What finalize reads: every task's state, and what each stage provides (its summary marker). */
export async function mirrorFinalizeInputs(remote: RemoteOutput): Promise<void> {
  await mirror(remote, [{ path: "tasks/" }, ...(await loadJobStages()).flatMap((stage) => stage.provides)]);
}

/** The folders whose files finalize checks against the task markers. */
export const FINALIZE_CHECKED_FOLDERS = ["data/", "stats/", "quarantine/", "filtered/"];

/** Uploads what a finished unit wrote: its data files first, its completion marker last. A stage without `unitFiles` uploads its own. */
export async function uploadUnit(remote: RemoteOutput, stage: JobStage, unit: number): Promise<void> {
  if (!stage.unitFiles) return;
  const files = await stage.unitFiles(remote.local, unit);
  await remote.push(files.filter((name) => !isMarker(name)));
  await remote.push(files.filter(isMarker));
}
