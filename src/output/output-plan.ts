import { join } from "node:path";
import type { Task } from "../../sharding/task-plan.ts";
import type { MixtureConfig } from "../config/schema.ts";
import type { ControlsIdentity } from "../controls/rephrase/rephrase-settings.ts";
import { UserError } from "../core/errors.ts";
import { readJsonFile, writeJsonFile } from "../io/json-file.ts";
import type { PiiSettings } from "../normalize/pii/pii-settings.ts";
import type { CurationSummary, ManifestHeader } from "./manifest.ts";
import type { FilteringPlan } from "./selection-summary.ts";

export const OUTPUT_PLAN_FORMAT = "lwm-data/plan";

/**
 * `<output>/tasks/plan.json`: the job an output folder belongs to — config hash, task cut and the
 * manifest header. Every worker and rank checks it before writing, so outputs of two different
 * configs never mix, and `finalize` can build the manifest from the folder alone.
 */
export interface OutputPlan {
  format: typeof OUTPUT_PLAN_FORMAT;
  config_sha256: string;
  plan_sha256: string;
  header: ManifestHeader;
  tasks: { index: number; bytes: number; pieces: { path: string; start?: number; end?: number }[] }[];
  /** The mixture settings (absent in plans written before mixtures). */
  mixture?: MixtureConfig;
  /**
   * The controls settings, when `controls.enabled`, as the config hash sees them (`controlsIdentity`):
   * no teacher endpoint, key or cache folder, so the plan is the same wherever the job runs.
   */
  controls?: ControlsIdentity;
  /** The PII settings, when redaction is on for some domain (docs/normalization.md "Personal data"). */
  pii?: PiiSettings;
  /** Curation settings (dedup, decontaminate) when on; the select stage's marker adds what it found. */
  curation?: Omit<CurationSummary["settings"], "threshold" | "partitions" | "decontaminate"> & {
    decontaminate: Omit<CurationSummary["settings"]["decontaminate"], "benchmarks"> & { benchmarks: { path: string; format: string }[] };
  };
  /** The filters' names, whether selection is on, and the scorers, when any is set (the manifest's filters/selection/scoring blocks). */
  filtering?: FilteringPlan;
}

/** The plan's place in an output folder. */
export const OUTPUT_PLAN_FILE = "tasks/plan.json";

export function outputPlanPath(outputDir: string): string {
  return join(outputDir, OUTPUT_PLAN_FILE);
}

export async function readOutputPlan(outputDir: string): Promise<OutputPlan | undefined> {
  const plan = await readJsonFile<OutputPlan>(outputPlanPath(outputDir));
  if (plan && plan.format !== OUTPUT_PLAN_FORMAT) throw new UserError(`${outputPlanPath(outputDir)} is not an lwm-data plan`);
  return plan;
}

export async function writeOutputPlan(outputDir: string, plan: OutputPlan): Promise<void> {
  // `launch` and every rank of a fresh job may write it at once (the same bytes).
  await writeJsonFile(outputPlanPath(outputDir), plan, { indent: 1, concurrentWriters: true });
}

export function describeTasks(tasks: readonly Task[], displayPaths: readonly string[]): OutputPlan["tasks"] {
  return tasks.map((task) => ({
    index: task.index,
    bytes: task.bytes,
    pieces: task.pieces.map((piece) => ({
      path: displayPaths[piece.file] as string,
      ...(piece.start !== undefined ? { start: piece.start, end: piece.end as number } : {}),
    })),
  }));
}
