import { UserError } from "../src/core/errors.ts";

export interface RankSelection {
  rank: number;
  worldSize: number;
  /** Where the rank came from, for logs. */
  from: "flags" | "slurm" | "kubernetes" | "single";
}

function integer(value: string | undefined, what: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d+$/.test(value)) throw new UserError(`${what} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

/**
 * Which share of the tasks this process runs: `--rank/--world-size` when given, else a Slurm
 * array task (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), else a
 * Kubernetes Indexed Job (JOB_COMPLETION_INDEX of `--world-size` or LWM_WORLD_SIZE), else all.
 */
export function resolveRank(flags: { rank?: string; worldSize?: string }, env: NodeJS.ProcessEnv = process.env): RankSelection {
  const check = (selection: RankSelection): RankSelection => {
    if (selection.worldSize < 1) throw new UserError(`world size must be at least 1 (from ${selection.from})`);
    if (selection.rank >= selection.worldSize)
      throw new UserError(`rank ${selection.rank} is not below world size ${selection.worldSize} (from ${selection.from})`);
    return selection;
  };
  const flagRank = integer(flags.rank, "--rank");
  const flagWorld = integer(flags.worldSize, "--world-size");
  if (flagRank !== undefined) {
    if (flagWorld === undefined) throw new UserError("--rank needs --world-size");
    return check({ rank: flagRank, worldSize: flagWorld, from: "flags" });
  }
  const slurmId = integer(env.SLURM_ARRAY_TASK_ID, "SLURM_ARRAY_TASK_ID");
  if (slurmId !== undefined) {
    const count = integer(env.SLURM_ARRAY_TASK_COUNT, "SLURM_ARRAY_TASK_COUNT");
    if (count === undefined) throw new UserError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
    const min = integer(env.SLURM_ARRAY_TASK_MIN, "SLURM_ARRAY_TASK_MIN") ?? 0;
    return check({ rank: slurmId - min, worldSize: flagWorld ?? count, from: "slurm" });
  }
  const k8sIndex = integer(env.JOB_COMPLETION_INDEX, "JOB_COMPLETION_INDEX");
  if (k8sIndex !== undefined) {
    const count = flagWorld ?? integer(env.LWM_WORLD_SIZE, "LWM_WORLD_SIZE");
    if (count === undefined)
      throw new UserError("JOB_COMPLETION_INDEX is set: give the job's completions as --world-size or LWM_WORLD_SIZE");
    return check({ rank: k8sIndex, worldSize: count, from: "kubernetes" });
  }
  if (flagWorld !== undefined && flagWorld !== 1)
    throw new UserError("--world-size needs --rank (or a Slurm/Kubernetes index in the environment)");
  return { rank: 0, worldSize: 1, from: "single" };
}
