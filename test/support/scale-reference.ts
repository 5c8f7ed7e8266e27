import { cpSync } from "node:fs";
import { loadConfig } from "../../src/config/load-config.ts";
import { planJob } from "../../src/pipeline/plan.ts";
import { type RunResult, runJob } from "../../src/pipeline/run-job.ts";
import { tempDir } from "../helpers.ts";
import { scaleJob } from "../scale-helpers.ts";

export interface ScaleReference {
  /** scaleJob()'s config and folder: shared, so a test must not rewrite them. */
  config: string;
  dir: string;
  /** The uninterrupted run's output folder: read it, or change a copy (copyOutput). */
  output: string;
  result: RunResult;
}

let made: Promise<ScaleReference> | undefined;

/**
 * One scaleJob() and its uninterrupted in-process run (1 worker), made on first use and shared by the
 * tests of a file (vitest runs each file in its own process): several tests compare their runs with
 * it, and running the same job again for each of them only repeated the same work.
 */
export function scaleReference(): Promise<ScaleReference> {
  made ??= (async () => {
    const { config, dir } = scaleJob();
    const output = tempDir("lwm-scale-ref-");
    const result = await runJob(await planJob(loadConfig(config, { output })), { workers: 1 });
    return { config, dir, output, result };
  })();
  return made;
}

/** A fresh copy of an output folder (an output holds no path of its own, so the copy is the same output). */
export function copyOutput(from: string): string {
  const to = tempDir("lwm-output-copy-");
  cpSync(from, to, { recursive: true });
  return to;
}
