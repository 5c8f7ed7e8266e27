import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** A folder for outputs shared by the test files of one vitest run (test/support/select-resolved-reference.ts). */
    sharedOutputsDir: string;
  }
}

/**
 * vitest globalSetup: an empty folder per run, where the first test file that needs a shared output
 * builds it and the others find it. Nothing is built here, so a run of unrelated files pays nothing.
 * Emptied when watch mode reruns tests (the code may have changed) and removed when the run ends.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "lwm-shared-outputs-"));
  project.provide("sharedOutputsDir", dir);
  project.onTestsRerun(() => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
  });
  return () => rmSync(dir, { recursive: true, force: true });
}
