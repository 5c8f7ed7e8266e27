import { taskLabel } from "../../sharding/task-plan.ts";
import { jobShas } from "../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../pipeline/stage-contract.ts";
import { curatePaths, readMarker } from "./curate-files.ts";
import { curationEnabled } from "./curation-settings.ts";

/** What the clusters stage needs of a signatures unit: where each hash partition starts in `.keys`. */
export interface SignaturesMarkerData {
  /** Pair index where partition p starts, for p = 0..partitions (the last is the pair count). */
  partitions: number[];
  records: number;
  matches: number;
  /** Episodes read per benchmark file (decontamination), for the manifest. */
  benchmark_episodes: Record<string, number>;
}

/** Curation, stage 1 (docs/curation.md "Curation"): per task, each record's exact hash, MinHash band keys and benchmark matches. */
export const signaturesStage: JobStage = {
  name: "signatures",
  summary: "per task: each record's exact hash, MinHash band keys and benchmark matches, sorted by hash partition",
  enabled: curationEnabled,
  scope: "task",
  pooled: true,
  reads: [{ path: "curate/signatures/", include: isMarker }],
  provides: [],
  unitFiles: (out, unit) => filesUnder(out, "curate/signatures/", `${taskLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(curatePaths.signaturesDone(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: async ({ plan, task, stop, onProgress }) => (await import("./signatures-unit.ts")).runSignaturesUnit(plan, task, stop, onProgress),
};
