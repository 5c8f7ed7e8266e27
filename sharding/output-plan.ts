import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../src/core/errors.ts";
import type { ManifestHeader } from "./manifest.ts";
import type { Task } from "./task-plan.ts";

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
}

export function outputPlanPath(outputDir: string): string {
  return join(outputDir, "tasks", "plan.json");
}

export async function readOutputPlan(outputDir: string): Promise<OutputPlan | undefined> {
  try {
    const plan = JSON.parse(await readFile(outputPlanPath(outputDir), "utf8")) as OutputPlan;
    if (plan.format !== OUTPUT_PLAN_FORMAT) throw new UserError(`${outputPlanPath(outputDir)} is not an lwm-data plan`);
    return plan;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

export async function writeOutputPlan(outputDir: string, plan: OutputPlan): Promise<void> {
  const path = outputPlanPath(outputDir);
  await mkdir(join(outputDir, "tasks"), { recursive: true });
  const temp = `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temp, `${JSON.stringify(plan, null, 1)}\n`);
  await rename(temp, path);
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
