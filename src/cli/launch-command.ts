import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type K8sLaunchSpec, k8sChainSteps, k8sFinalizeJob, k8sIndexedJob, k8sYaml } from "../../sharding/launch-k8s.ts";
import { type SlurmLaunchSpec, slurmArrayScript, slurmFinalizeScript } from "../../sharding/launch-slurm.ts";
import { shellQuote } from "../../sharding/shell-quote.ts";
import { loadConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { type JobStage, jobStages } from "../pipeline/job-stages.ts";
import { type JobPlan, planJob } from "../pipeline/plan.ts";
import { prepareOutput } from "../pipeline/run-job.ts";
import { type InputOptions, inputOverrides } from "./input-overrides.ts";
import { positiveInt } from "./positive-int.ts";

const exec = promisify(execFile);
const CLI_PATH = fileURLToPath(new URL("../../bin/lwm-data.js", import.meta.url));
/** Slurm's default MaxArraySize is 1001: ranks 0..1000. */
const MAX_DEFAULT_RANKS = 1000;

interface CommonOptions extends InputOptions {
  worldSize?: string;
  workers: string;
  jobName: string;
  overwrite?: boolean;
}

/** One array (Slurm) or Indexed Job (Kubernetes) of the launch: a stage, or the whole job when curation is off. */
interface LaunchArray {
  /** Undefined: the job without curation, one array running `lwm-data run` without --stage. */
  stage?: JobStage;
  units: number;
  /** Ranks of this array. */
  ranks: number;
}

/** Plans the job, claims the output folder (tasks/plan.json), picks the world size and the arrays to run in order. */
async function prepare(
  configPath: string,
  options: CommonOptions,
): Promise<{ plan: JobPlan; worldSize: number; arrays: LaunchArray[]; launchDir: string; runArgs: string[] }> {
  const loaded = loadConfig(configPath, inputOverrides(options));
  const plan = await planJob(loaded);
  // Every rank plans the job again from the config: it needs the same --input/--benchmark/--format/--domain overrides.
  const { overrides } = loaded;
  const runArgs = [
    ...(overrides.inputs ?? []).flatMap((path) => ["--input", path]),
    ...(overrides.benchmarks ?? []).flatMap((path) => ["--benchmark", path]),
    ...(overrides.format !== undefined ? ["--format", overrides.format] : []),
    ...(overrides.domain !== undefined ? ["--domain", overrides.domain] : []),
  ];
  // Written here, once, before any rank starts: ranks never clear or re-plan an output folder.
  await prepareOutput(plan, { ...(options.overwrite ? { overwrite: true } : {}) });
  const stages = jobStages(plan.config, plan.tasks.length);
  const mostUnits = Math.max(...stages.map((stage) => stage.units));
  const worldSize = options.worldSize ? positiveInt(options.worldSize, "--world-size") : Math.min(mostUnits, MAX_DEFAULT_RANKS);
  // Without curation: one unnamed array of the world size, `lwm-data run` without --stage. With
  // curation: one array per stage, of at most one rank per unit (select has one unit).
  const arrays: LaunchArray[] =
    stages.length === 1
      ? [{ units: plan.tasks.length, ranks: worldSize }]
      : stages.map(({ stage, units }) => ({ stage, units, ranks: Math.min(worldSize, units) }));
  const launchDir = join(plan.config.output.dir, "launch");
  await mkdir(launchDir, { recursive: true });
  return { plan, worldSize, arrays, launchDir, runArgs };
}

/** The stages, one line each: "  clusters    9 unit(s) over 4 array task(s)". */
function describeArrays(arrays: LaunchArray[], what: string): string {
  return arrays.map(({ stage, units, ranks }) => `\n  ${(stage ?? "").padEnd(11)} ${units} unit(s) over ${ranks} ${what}`).join("");
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

/**
 * `lwm-data launch slurm`: an sbatch job array (rank = array index) plus its finalize job; with
 * curation one array per stage, each submitted `afterok` on the one before.
 */
export async function launchSlurmCommand(configPath: string, options: SlurmOptions): Promise<void> {
  const { plan, worldSize, arrays, launchDir, runArgs } = await prepare(configPath, options);
  const workers = positiveInt(options.workers, "--workers");
  const logDir = join(launchDir, "logs");
  await mkdir(logDir, { recursive: true });
  const spec: SlurmLaunchSpec = {
    jobName: options.jobName,
    configPath: plan.configPath,
    ...(runArgs.length > 0 ? { runArgs } : {}),
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
  const scripts = arrays.map((array) => ({
    ...array,
    path: join(launchDir, array.stage ? `slurm-${array.stage}.sbatch` : "slurm-array.sbatch"),
  }));
  const finalizePath = join(launchDir, "slurm-finalize.sbatch");
  for (const { stage, ranks, path } of scripts)
    await writeFile(path, slurmArrayScript({ ...spec, arraySize: ranks }, stage), { mode: 0o755 });
  await writeFile(finalizePath, slurmFinalizeScript(spec), { mode: 0o755 });
  const shown = (path: string) => relative(process.cwd(), path) || path;
  const chain = scripts.length > 1;
  if (!chain) {
    console.log(`${plan.tasks.length} task(s) over ${worldSize} array task(s), ${workers} worker thread(s) each`);
  } else {
    console.log(
      `${plan.tasks.length} task(s), ${workers} worker thread(s) per array task; stages in order:${describeArrays(arrays, "array task(s)")}`,
    );
  }
  console.log(`${scripts.map(({ path }) => `wrote ${shown(path)}\n`).join("")}wrote ${shown(finalizePath)}\nlogs  ${shown(logDir)}`);
  if (!options.submit) {
    if (!chain) {
      console.log(
        `submit: id=$(sbatch --parsable ${shown(scripts[0]?.path ?? "")}) && sbatch --dependency=afterany:$id ${shown(finalizePath)}`,
      );
    } else {
      // Each stage starts once every task of the one before succeeded; finalize once the last ended.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell, the id without the ";cluster" sbatch --parsable adds on a federation.
      const id = "${id%%;*}";
      const submit = scripts.map(
        ({ path }, i) => `id=$(sbatch --parsable ${i > 0 ? `--dependency=afterok:${id} ` : ""}${shellQuote(shown(path))}) &&`,
      );
      console.log(`submit:\n  ${submit.join("\n  ")}\n  sbatch --dependency=afterany:${id} ${shellQuote(shown(finalizePath))}`);
    }
    return;
  }
  const submitted: string[] = [];
  const sbatch = async (args: string[]) => {
    try {
      return (await exec("sbatch", ["--parsable", ...args], { encoding: "utf8" })).stdout.trim().split(";")[0] ?? "";
    } catch (err) {
      const e = err as Error & { stderr?: string; code?: string };
      const before = submitted.length > 0 ? ` (already submitted: ${submitted.join(", ")})` : "";
      throw new UserError(`sbatch failed: ${e.code === "ENOENT" ? "sbatch is not on PATH" : (e.stderr?.trim() ?? e.message)}${before}`);
    }
  };
  const ids: string[] = [];
  for (const { stage, path } of scripts) {
    const previous = ids[ids.length - 1];
    const id = await sbatch([...(previous !== undefined ? [`--dependency=afterok:${previous}`] : []), path]);
    ids.push(id);
    submitted.push(`${stage ?? "array"} job ${id}`);
  }
  const finalizeId = await sbatch([`--dependency=afterany:${ids[ids.length - 1]}`, finalizePath]);
  if (!chain) {
    console.log(`submitted array job ${ids[0]} and finalize job ${finalizeId}`);
  } else {
    console.log(`submitted ${submitted.join(", ")} (each afterok on the one before) and finalize job ${finalizeId}`);
  }
  console.log(`watch: squeue -j ${[...ids, finalizeId].join(",")}; then lwm-data stats ${shown(plan.config.output.dir)}`);
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

/**
 * `lwm-data launch k8s`: a Kubernetes Indexed Job (rank = JOB_COMPLETION_INDEX) plus a finalize
 * Job; with curation one Indexed Job per stage, applied in order, each once the one before completed.
 */
export async function launchK8sCommand(configPath: string, options: K8sOptions): Promise<void> {
  if ((options.pvc === undefined) === (options.hostPath === undefined))
    throw new UserError(
      "give exactly one of --pvc <claim> (ReadWriteMany) or --host-path <dir> for the volume holding inputs, config and output",
    );
  const { plan, worldSize, arrays, launchDir, runArgs } = await prepare(configPath, options);
  const spec: K8sLaunchSpec = {
    jobName: options.jobName,
    image: options.image,
    lwmData: options.lwmData.split(" ").filter(Boolean),
    // Paths are the same inside the pods: the volume is mounted where the data lives here.
    configPath: plan.configPath,
    ...(runArgs.length > 0 ? { runArgs } : {}),
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
  const jobs = arrays.map((array) => ({
    ...array,
    job: k8sIndexedJob({ ...spec, worldSize: array.ranks }, array.stage),
    path: join(launchDir, array.stage ? `k8s-${array.stage}.yaml` : "k8s-job.yaml"),
  }));
  const finalizePath = join(launchDir, "k8s-finalize.yaml");
  const steps = k8sChainSteps(
    spec,
    jobs.map(({ job, path }) => ({ name: job.metadata.name, file: path })),
    finalizePath,
  );
  const chain = jobs.length > 1;
  for (const [i, { stage, units, ranks, job, path }] of jobs.entries()) {
    const title = stage
      ? `lwm-data stage ${stage} (${i + 1} of ${jobs.length}): ${units} unit(s) over ${ranks} rank(s)`
      : `lwm-data Indexed Job: ${ranks} rank(s)`;
    await writeFile(path, k8sYaml(job, `${title}. Steps:\n${steps.join("\n")}`));
  }
  await writeFile(
    finalizePath,
    k8sYaml(k8sFinalizeJob(spec), `lwm-data finalize: apply after the ${chain ? "last stage's " : ""}Indexed Job ended.`),
  );
  const summary = chain
    ? `${plan.tasks.length} task(s); stages in order:${describeArrays(arrays, "completion index(es)")}`
    : `${plan.tasks.length} task(s) over ${worldSize} completion index(es)`;
  console.log(`${summary}\n${jobs.map(({ path }) => `wrote ${path}\n`).join("")}wrote ${finalizePath}\nthen:\n  ${steps.join("\n  ")}`);
}
