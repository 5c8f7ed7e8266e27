import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type K8sLaunchSpec, k8sFinalizeJob, k8sFinalizeSteps, k8sIndexedJob, k8sYaml } from "../../sharding/launch-k8s.ts";
import { type SlurmLaunchSpec, slurmArrayScript, slurmFinalizeScript } from "../../sharding/launch-slurm.ts";
import { loadConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { type JobPlan, planJob } from "../pipeline/plan.ts";
import { prepareOutput } from "../pipeline/run-job.ts";
import { positiveInt } from "./positive-int.ts";

const exec = promisify(execFile);
const CLI_PATH = fileURLToPath(new URL("../../bin/lwm-data.js", import.meta.url));
/** Slurm's default MaxArraySize is 1001: ranks 0..1000. */
const MAX_DEFAULT_RANKS = 1000;

interface CommonOptions {
  input: string[];
  output?: string;
  worldSize?: string;
  workers: string;
  jobName: string;
  overwrite?: boolean;
}

/** Plans the job, claims the output folder (tasks/plan.json) and picks the world size. */
async function prepare(configPath: string, options: CommonOptions): Promise<{ plan: JobPlan; worldSize: number; launchDir: string }> {
  const plan = await planJob(loadConfig(configPath, { inputs: options.input, ...(options.output ? { output: options.output } : {}) }));
  // Written here, once, before any rank starts: ranks never clear or re-plan an output folder.
  await prepareOutput(plan, { ...(options.overwrite ? { overwrite: true } : {}) });
  const worldSize = options.worldSize ? positiveInt(options.worldSize, "--world-size") : Math.min(plan.tasks.length, MAX_DEFAULT_RANKS);
  const launchDir = join(plan.config.output.dir, "launch");
  await mkdir(launchDir, { recursive: true });
  return { plan, worldSize, launchDir };
}

interface SlurmOptions extends CommonOptions {
  cpusPerTask?: string;
  partition?: string;
  time?: string;
  mem?: string;
  maxConcurrent?: string;
  sbatch: string[];
  submit?: boolean;
}

/** `lwm-data launch slurm`: an sbatch job array (rank = array index) plus its finalize job. */
export async function launchSlurmCommand(configPath: string, options: SlurmOptions): Promise<void> {
  const { plan, worldSize, launchDir } = await prepare(configPath, options);
  const workers = positiveInt(options.workers, "--workers");
  const logDir = join(launchDir, "logs");
  await mkdir(logDir, { recursive: true });
  const spec: SlurmLaunchSpec = {
    jobName: options.jobName,
    configPath: plan.configPath,
    outputDir: resolve(plan.config.output.dir),
    arraySize: worldSize,
    cpusPerTask: options.cpusPerTask ? positiveInt(options.cpusPerTask, "--cpus-per-task") : workers,
    workersPerTask: workers,
    // This very Node (the LTS shipped in node_modules) and CLI: the cluster shares this file system.
    lwmData: [process.execPath, CLI_PATH],
    logDir,
    ...(options.partition ? { partition: options.partition } : {}),
    ...(options.time ? { time: options.time } : {}),
    ...(options.mem ? { memory: options.mem } : {}),
    ...(options.maxConcurrent ? { maxConcurrent: positiveInt(options.maxConcurrent, "--max-concurrent") } : {}),
    ...(options.sbatch.length > 0 ? { extraSbatch: options.sbatch } : {}),
  };
  const arrayPath = join(launchDir, "slurm-array.sbatch");
  const finalizePath = join(launchDir, "slurm-finalize.sbatch");
  await writeFile(arrayPath, slurmArrayScript(spec), { mode: 0o755 });
  await writeFile(finalizePath, slurmFinalizeScript(spec), { mode: 0o755 });
  const shown = (path: string) => relative(process.cwd(), path) || path;
  console.log(`${plan.tasks.length} task(s) over ${worldSize} array task(s), ${workers} worker thread(s) each`);
  console.log(`wrote ${shown(arrayPath)}\nwrote ${shown(finalizePath)}\nlogs  ${shown(logDir)}`);
  if (!options.submit) {
    console.log(`submit: id=$(sbatch --parsable ${shown(arrayPath)}) && sbatch --dependency=afterany:$id ${shown(finalizePath)}`);
    return;
  }
  const sbatch = async (args: string[]) => {
    try {
      return (await exec("sbatch", ["--parsable", ...args], { encoding: "utf8" })).stdout.trim().split(";")[0] ?? "";
    } catch (err) {
      const e = err as Error & { stderr?: string; code?: string };
      throw new UserError(`sbatch failed: ${e.code === "ENOENT" ? "sbatch is not on PATH" : (e.stderr?.trim() ?? e.message)}`);
    }
  };
  const arrayId = await sbatch([arrayPath]);
  const finalizeId = await sbatch([`--dependency=afterany:${arrayId}`, finalizePath]);
  console.log(`submitted array job ${arrayId} and finalize job ${finalizeId}`);
  console.log(`watch: squeue -j ${arrayId},${finalizeId}; then lwm-data stats ${shown(plan.config.output.dir)}`);
}

interface K8sOptions extends CommonOptions {
  image: string;
  pvc?: string;
  hostPath?: string;
  mountPath: string;
  namespace?: string;
  parallelism?: string;
  memory?: string;
  lwmData: string;
}

/** `lwm-data launch k8s`: a Kubernetes Indexed Job (rank = JOB_COMPLETION_INDEX) plus a finalize Job. */
export async function launchK8sCommand(configPath: string, options: K8sOptions): Promise<void> {
  if ((options.pvc === undefined) === (options.hostPath === undefined))
    throw new UserError(
      "give exactly one of --pvc <claim> (ReadWriteMany) or --host-path <dir> for the volume holding inputs, config and output",
    );
  const { plan, worldSize, launchDir } = await prepare(configPath, options);
  const spec: K8sLaunchSpec = {
    jobName: options.jobName,
    image: options.image,
    lwmData: options.lwmData.split(" ").filter(Boolean),
    // Paths are the same inside the pods: the volume is mounted where the data lives here.
    configPath: plan.configPath,
    outputDir: resolve(plan.config.output.dir),
    worldSize,
    workersPerTask: positiveInt(options.workers, "--workers"),
    volume:
      options.pvc !== undefined
        ? { kind: "pvc", claimName: options.pvc, mountPath: options.mountPath }
        : { kind: "hostPath", path: options.hostPath as string, mountPath: options.mountPath },
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.parallelism ? { parallelism: positiveInt(options.parallelism, "--parallelism") } : {}),
    ...(options.memory ? { memory: options.memory } : {}),
  };
  const jobPath = join(launchDir, "k8s-job.yaml");
  const finalizePath = join(launchDir, "k8s-finalize.yaml");
  const steps = k8sFinalizeSteps(spec, jobPath, finalizePath);
  await writeFile(jobPath, k8sYaml(k8sIndexedJob(spec), `lwm-data Indexed Job: ${worldSize} rank(s). Steps:\n${steps.join("\n")}`));
  await writeFile(finalizePath, k8sYaml(k8sFinalizeJob(spec), "lwm-data finalize: apply after the Indexed Job ended."));
  console.log(
    `${plan.tasks.length} task(s) over ${worldSize} completion index(es)\nwrote ${jobPath}\nwrote ${finalizePath}\nthen:\n  ${steps.join("\n  ")}`,
  );
}
