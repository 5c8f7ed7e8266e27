/**
 * V8 semi-space size, in MB, for every isolate of lwm-data. By default V8 grows a busy
 * isolate's young generation up to 3 × 64 MB, and slowly: a long run's RSS kept climbing well
 * after the start (1.3× at 10× input, docs/benchmarks.md). 16 MB semi-spaces hold it near flat
 * for a few percent more CPU. The flag only works from process start, so bin/lwm-data.js
 * re-executes itself with it; pool threads get it as a Worker resource limit (run-job.ts).
 */
export const SEMI_SPACE_MB = 16;
export const SEMI_SPACE_FLAG = "--max-semi-space-size";

/** A young generation is two semi-spaces plus one for objects being promoted. */
export const YOUNG_GENERATION_MB = 3 * SEMI_SPACE_MB;

/** Whether this process already runs with a semi-space size (ours, or the user's own). */
export function hasSemiSpaceFlag(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return execArgv.some((arg) => arg.startsWith(SEMI_SPACE_FLAG)) || (nodeOptions ?? "").includes(SEMI_SPACE_FLAG);
}
