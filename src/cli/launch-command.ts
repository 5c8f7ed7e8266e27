import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import {
  K8S_STAGING_MOUNT,
  type K8sLaunchSpec,
  k8sChainSteps,
  k8sConfigMap,
  k8sFinalizeJob,
  k8sIndexedJob,
  k8sSecretRecipe,
  k8sYaml,
} from "../../sharding/launch-k8s.ts";
import { type SlurmLaunchSpec, slurmArrayScript, slurmFinalizeScript } from "../../sharding/launch-slurm.ts";
import { shellQuote } from "../../sharding/shell-quote.ts";
import { type LoadedConfig, loadConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { packagePath } from "../core/package-files.ts";
import { isS3Uri } from "../io/s3/s3-uri.ts";
import { jobStages } from "../pipeline/job-stages.ts";
import { type JobPlan, planJob } from "../pipeline/plan.ts";
import { prepareOutput } from "../pipeline/run-job.ts";
import { type InputOptions, inputOverrides } from "./input-overrides.ts";
import { positiveInt } from "./positive-int.ts";
import { shownPath } from "./shown-path.ts";

const exec = promisify(execFile);
const CLI_PATH = packagePath("bin/lwm-data.js");
/** Slurm's default MaxArraySize is 1001: ranks 0..1000. */
const MAX_DEFAULT_RANKS = 1000;

interface CommonOptions extends InputOptions {
  worldSize?: string;
  workers: string;
  jobName: string;
  overwrite?: boolean;
  /** Where the launch files go; default <output>/launch, or ./lwm-launch/<job-name> for an s3:// output. */
  launchDir?: string;
}

/** A location with a scheme (s3://, hf://): taken as it is, never resolved against a folder. */
const URI = /^[a-z][a-z0-9+.-]*:\/\//;

/** The output as every rank gets it: an absolute path, or an s3:// URI as it is. */
function outputLocation(dir: string): string {
  return isS3Uri(dir) ? dir : resolve(dir);
}

/** One array (Slurm) or Indexed Job (Kubernetes) of the launch: a stage, or the whole job when curation is off. */
interface LaunchArray {
  /** Undefined: the job without curation, one array running `lwm-data run` without --stage. */
  stage?: string;
  units: number;
  /** Ranks of this array. */
  ranks: number;
}

/** Plans the job, claims the output folder (tasks/plan.json), picks the world size and the arrays to run in order. */
async function prepare(
  configPath: string,
  options: CommonOptions,
  /** Checks the loaded config before anything is planned or written. */
  beforePlan?: (loaded: LoadedConfig) => void,
): Promise<{ plan: JobPlan; outputDir: string; worldSize: number; arrays: LaunchArray[]; launchDir: string; runArgs: string[] }> {
  const loaded = loadConfig(configPath, inputOverrides(options));
  beforePlan?.(loaded);
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
  // This process's staging folder of an s3:// output held only the plan it uploaded.
  if (plan.remote) await rm(plan.remote.local, { recursive: true, force: true });
  const stages = await jobStages(plan.config, plan.tasks.length);
  const mostUnits = Math.max(...stages.map((stage) => stage.units));
  const worldSize = options.worldSize ? positiveInt(options.worldSize, "--world-size") : Math.min(mostUnits, MAX_DEFAULT_RANKS);
  // Without curation: one unnamed array of the world size, `lwm-data run` without --stage. With
  // curation: one array per stage, of at most one rank per unit (select has one unit).
  const arrays: LaunchArray[] =
    stages.length === 1
      ? [{ units: plan.tasks.length, ranks: worldSize }]
      : stages.map(({ stage, units }) => ({ stage: stage.name, units, ranks: Math.min(worldSize, units) }));
  // As the user named it: for an s3:// output, plan.config.output.dir is this process's staging folder.
  const outputDir = outputLocation(loaded.config.output.dir);
  // An s3:// output has no folder on this machine (and kubectl and sbatch read local files).
  const launchDir = options.launchDir
    ? resolve(options.launchDir)
    : isS3Uri(outputDir)
      ? resolve("lwm-launch", options.jobName)
      : join(outputDir, "launch");
  await mkdir(launchDir, { recursive: true });
  return { plan, outputDir, worldSize, arrays, launchDir, runArgs };
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
  const { plan, outputDir, worldSize, arrays, launchDir, runArgs } = await prepare(configPath, options);
  const workers = positiveInt(options.workers, "--workers");
  const logDir = join(launchDir, "logs");
  await mkdir(logDir, { recursive: true });
  const spec: SlurmLaunchSpec = {
    jobName: options.jobName,
    configPath: plan.configPath,
    ...(runArgs.length > 0 ? { runArgs } : {}),
    outputDir,
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
  if (touchesS3(plan.loaded))
    console.log(
      "object storage: each task reads AWS_* (and HF_TOKEN) from the environment sbatch passes on (--export=ALL unless you changed it), and stages its output files under $LWM_STAGING_DIR (default: the node's temporary folder)",
    );
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
  console.log(`watch: squeue -j ${[...ids, finalizeId].join(",")}; then lwm-data stats ${shownPath(outputDir)}`);
}

/** Whether ranks read or write S3 (the output, an input or a benchmark): then they need credentials. */
function touchesS3({ config }: LoadedConfig): boolean {
  return [config.output.dir, ...config.inputs.map((input) => input.path), ...config.decontaminate.benchmarks.map((b) => b.path)].some(
    isS3Uri,
  );
}

/**
 * Object-storage mode ships the config file to the pods in a ConfigMap, where its folder is not
 * this one: a relative path in it would point elsewhere. Finds the paths the config resolves
 * against its own folder by loading the same text from another folder and comparing (so every
 * path `loadConfig` resolves is covered, whatever the key); `--input` / `--benchmark` must be URIs
 * or absolute too. The output must be an s3:// URI: pods without a shared volume cannot share a folder.
 */
function checkPortable(loaded: LoadedConfig, options: CommonOptions): void {
  const problems: string[] = [];
  if (!isS3Uri(loaded.config.output.dir))
    problems.push(
      `output ${shownPath(loaded.config.output.dir)}: must be an s3:// URI (output.dir or -o), since the pods share no file system`,
    );
  // The same overrides (absolute or URIs already) on both sides: only the config's own paths differ.
  const here = loadConfig(loaded.path, loaded.overrides).config;
  const copyDir = mkdtempSync(join(tmpdir(), "lwm-launch-"));
  let elsewhere: unknown;
  try {
    const copy = join(copyDir, basename(loaded.path));
    writeFileSync(copy, readFileSync(loaded.path));
    elsewhere = loadConfig(copy, loaded.overrides).config;
  } finally {
    rmSync(copyDir, { recursive: true, force: true });
  }
  const configDir = dirname(loaded.path);
  const walk = (a: unknown, b: unknown, key: string): void => {
    if (key === "output.dir") return; // checked above
    if (typeof a === "string" && a !== b) {
      problems.push(`${key}: ${relative(configDir, a)} is relative to the config's folder`);
    } else if (Array.isArray(a) && Array.isArray(b)) {
      for (const [i, item] of a.entries()) walk(item, b[i], `${key}[${i}]`);
    } else if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
      for (const [name, value] of Object.entries(a)) walk(value, (b as Record<string, unknown>)[name], key ? `${key}.${name}` : name);
    }
  };
  walk(here, elsewhere, "");
  for (const [flag, values] of [
    ["--input", options.input],
    ["--benchmark", options.benchmark],
  ] as const) {
    for (const value of values) if (!URI.test(value) && !isAbsolute(value)) problems.push(`${flag} ${value}: a relative path`);
  }
  if (problems.length > 0)
    throw new UserError(
      "object-storage mode (no shared volume): the pods get the config in a ConfigMap, not this folder, so every input and path\n" +
        "must be a URI (s3://, hf://) or an absolute path that exists in the image (and here, where the job is planned), and the\n" +
        `output an s3:// URI:\n  ${problems.join("\n  ")}`,
    );
}

interface K8sOptions extends CommonOptions {
  image: string;
  pvc?: string;
  hostPath?: string;
  mountPath: string;
  /** No shared volume: the config in a ConfigMap, the output in object storage (implied by an s3:// output without --pvc / --host-path). */
  objectStorage?: boolean;
  /** The credentials Secret; false: --no-secret (IRSA, workload identity, node role). */
  secret?: string | false;
  stagingSize: string;
  namespace?: string;
  parallelism?: string;
  memory?: string;
  lwmData: string;
}

/**
 * `lwm-data launch k8s`: a Kubernetes Indexed Job (rank = JOB_COMPLETION_INDEX) plus a finalize
 * Job; with curation one Indexed Job per stage, applied in order, each once the one before completed.
 *
 * With a shared volume (--pvc / --host-path) the config, inputs and output sit at the same paths
 * in the pods as here. Without one (object-storage mode: an s3:// output and no volume, or
 * --object-storage) the config goes in a ConfigMap mounted at its path here, inputs are URIs or
 * absolute paths in the image, and each pod stages its output files in an emptyDir before
 * uploading. Whenever S3 is read or written, the pods take credentials from a Secret (--secret,
 * envFrom) unless --no-secret says the cluster grants them otherwise.
 */
export async function launchK8sCommand(configPath: string, options: K8sOptions): Promise<void> {
  const volumes = [options.pvc, options.hostPath].filter((v) => v !== undefined).length;
  if (volumes > 1) throw new UserError("give one of --pvc <claim> or --host-path <dir>, not both");
  if (volumes === 1 && options.objectStorage)
    throw new UserError("--object-storage mounts no volume: leave out --pvc / --host-path, or leave out --object-storage");
  let objectStorage = false;
  let base: K8sLaunchSpec | undefined;
  const { plan, worldSize, arrays, launchDir, runArgs } = await prepare(configPath, options, (loaded) => {
    objectStorage = volumes === 0 && (options.objectStorage === true || isS3Uri(loaded.config.output.dir));
    if (volumes === 0 && !objectStorage)
      throw new UserError(
        "give --pvc <claim> (ReadWriteMany) or --host-path <dir> for the volume holding inputs, config and output,\n" +
          "or write the output to object storage (output.dir or -o s3://bucket/prefix) to run without a volume",
      );
    if (objectStorage) checkPortable(loaded, options);
    if (options.secret === undefined && touchesS3(loaded)) {
      const recipe = k8sSecretRecipe({ secretName: "lwm-s3", ...(options.namespace ? { namespace: options.namespace } : {}) });
      throw new UserError(
        "the pods read or write S3, so they need credentials: name a Secret whose keys become their environment with\n" +
          `--secret <name>; create one with\n  ${recipe}\n` +
          "(any of AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3, HF_TOKEN the same way). Or pass --no-secret when the\n" +
          "cluster grants access another way (EKS IRSA / pod identity, GKE workload identity, a node role).",
      );
    }
    base = {
      jobName: options.jobName,
      image: options.image,
      lwmData: options.lwmData.split(" ").filter(Boolean),
      // Paths are the same inside the pods: the volume is mounted where the data lives here (or the
      // ConfigMap's file where the config lives here, so inputs' names relative to it are the same).
      configPath: loaded.path,
      outputDir: outputLocation(loaded.config.output.dir),
      worldSize: 1,
      workersPerTask: positiveInt(options.workers, "--workers"),
      ...(objectStorage
        ? { configMap: { configMapName: `${options.jobName}-config` } }
        : {
            volume:
              options.pvc !== undefined
                ? { kind: "pvc", claimName: options.pvc, mountPath: options.mountPath }
                : { kind: "hostPath", path: options.hostPath as string, mountPath: options.mountPath },
          }),
      ...(typeof options.secret === "string" ? { secretName: options.secret } : {}),
      stagingSizeLimit: options.stagingSize,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.parallelism ? { parallelism: positiveInt(options.parallelism, "--parallelism") } : {}),
      ...(options.memory ? { memory: options.memory } : {}),
    };
    // Names and sizes Kubernetes would refuse are refused now, before the output is claimed.
    try {
      k8sFinalizeJob(base);
    } catch (err) {
      throw new UserError((err as Error).message);
    }
  });
  const spec: K8sLaunchSpec = { ...(base as K8sLaunchSpec), worldSize, ...(runArgs.length > 0 ? { runArgs } : {}) };
  const jobs = arrays.map((array) => ({
    ...array,
    job: k8sIndexedJob({ ...spec, worldSize: array.ranks }, array.stage),
    path: join(launchDir, array.stage ? `k8s-${array.stage}.yaml` : "k8s-job.yaml"),
  }));
  const finalizePath = join(launchDir, "k8s-finalize.yaml");
  const configMapPath = join(launchDir, "k8s-config.yaml");
  const steps = k8sChainSteps(
    spec,
    jobs.map(({ job, path }) => ({ name: job.metadata.name, file: path })),
    finalizePath,
    objectStorage ? [configMapPath] : [],
  );
  const credentials =
    spec.secretName !== undefined
      ? `Credentials: the pods' environment takes every key of Secret ${spec.secretName} (envFrom); create it once, before the steps:\n${k8sSecretRecipe(spec)}`
      : options.secret === false
        ? "Credentials: no Secret (--no-secret): the pods' service account or node must be granted the bucket."
        : undefined;
  const header = (title: string) => `${title}. Steps:\n${steps.join("\n")}${credentials !== undefined ? `\n${credentials}` : ""}`;
  if (objectStorage)
    await writeFile(
      configMapPath,
      k8sYaml(
        k8sConfigMap(spec, readFileSync(plan.configPath, "utf8")),
        header(`lwm-data config ${basename(plan.configPath)}, mounted at its path in every pod`),
      ),
    );
  const chain = jobs.length > 1;
  for (const [i, { stage, units, ranks, job, path }] of jobs.entries()) {
    const title = stage
      ? `lwm-data stage ${stage} (${i + 1} of ${jobs.length}): ${units} unit(s) over ${ranks} rank(s)`
      : `lwm-data Indexed Job: ${ranks} rank(s)`;
    await writeFile(path, k8sYaml(job, header(title)));
  }
  await writeFile(
    finalizePath,
    k8sYaml(k8sFinalizeJob(spec), `lwm-data finalize: apply after the ${chain ? "last stage's " : ""}Indexed Job ended.`),
  );
  const summary = chain
    ? `${plan.tasks.length} task(s); stages in order:${describeArrays(arrays, "completion index(es)")}`
    : `${plan.tasks.length} task(s) over ${worldSize} completion index(es)`;
  const written = [...(objectStorage ? [configMapPath] : []), ...jobs.map(({ path }) => path), finalizePath];
  const staging = isS3Uri(spec.outputDir)
    ? `\nstaging: an emptyDir of at most ${spec.stagingSizeLimit} per pod at ${K8S_STAGING_MOUNT} (LWM_STAGING_DIR); --staging-size to change`
    : "";
  console.log(
    `${summary}\n${written.map((path) => `wrote ${path}\n`).join("")}then:\n  ${steps.join("\n  ")}${staging}${
      credentials !== undefined ? `\n${credentials.replace(/\n/, "\n  ")}` : ""
    }`,
  );
}
