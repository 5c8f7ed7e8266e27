import { isAbsolute } from "node:path";
import { isS3Uri } from "../src/io/s3/s3-uri.ts";
import { sbatchQuote, shellJoin, shellQuote, slurmPatternLiteral } from "./shell-quote.ts";

/** What `lwm-data launch slurm` needs to write the job array and its finalize job. */
export interface SlurmLaunchSpec {
  /** `--job-name`; also `%x` in the log file names. */
  jobName: string;
  /** Absolute: the job runs on another machine, from another directory. */
  configPath: string;
  /** Absolute, or an `s3://` URI (passed on as it is); passed as `--output` so every rank and the finalize job agree on it. */
  outputDir: string;
  /** More `lwm-data run` arguments every rank needs to plan the same job: `--input`/`--benchmark` overrides, absolute. */
  runArgs?: string[];
  /** Number of array tasks = the world size; task i runs rank i. */
  arraySize: number;
  cpusPerTask: number;
  workersPerTask: number;
  /** argv prefix that starts lwm-data on the nodes, e.g. ["/abs/node_modules/.bin/node", "/abs/bin/lwm-data.js"]. */
  lwmData: string[];
  partition?: string;
  /** `--time`, e.g. "04:00:00" or "1-00:00:00". */
  time?: string;
  /** `--mem` per node, e.g. "16G". */
  memory?: string;
  /** Absolute; must exist before submission (Slurm does not create it, and a task whose log cannot be opened fails unseen). */
  logDir: string;
  /** Array throttle: at most this many tasks at once (`--array=0-N%K`). */
  maxConcurrent?: number;
  /** More directives, each written as `#SBATCH <item>` verbatim, e.g. "--account=proj", "--qos=low". */
  extraSbatch?: string[];
  /** Exported before lwm-data starts (on top of the submitting shell's environment, which sbatch passes by default). */
  env?: Record<string, string>;
}

/** When the finalize job may start, relative to the array job. */
export interface SlurmFinalizeDependency {
  /** The array's job id, as printed by `sbatch --parsable`. */
  afterJobId: string;
  /**
   * `afterany` (default): finalize runs however the array ended, and when a task failed it fails
   * naming the unfinished tasks. `afterok`: only after every task succeeded; otherwise Slurm keeps
   * it pending forever ("DependencyNeverSatisfied") until someone cancels it.
   */
  condition?: "afterany" | "afterok";
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(`slurm launch: ${message}`);
}

function positiveInt(value: number, what: string): void {
  check(Number.isInteger(value) && value >= 1, `${what} must be a positive integer, got ${value}`);
}

function validate(spec: SlurmLaunchSpec): void {
  for (const [what, path] of [
    ["configPath", spec.configPath],
    ["logDir", spec.logDir],
  ] as const) {
    check(isAbsolute(path), `${what} must be absolute, got ${JSON.stringify(path)}`);
  }
  check(
    isAbsolute(spec.outputDir) || isS3Uri(spec.outputDir),
    `outputDir must be absolute or an s3:// URI, got ${JSON.stringify(spec.outputDir)}`,
  );
  check(spec.lwmData.length > 0, "lwmData (the command that starts lwm-data) is empty");
  positiveInt(spec.arraySize, "arraySize");
  positiveInt(spec.cpusPerTask, "cpusPerTask");
  positiveInt(spec.workersPerTask, "workersPerTask");
  if (spec.maxConcurrent !== undefined) positiveInt(spec.maxConcurrent, "maxConcurrent");
  for (const line of spec.extraSbatch ?? []) {
    check(!/[\r\n]/.test(line), `extraSbatch item contains a line break: ${JSON.stringify(line)}`);
  }
  for (const name of Object.keys(spec.env ?? {})) {
    check(/^[A-Za-z_][A-Za-z0-9_]*$/.test(name), `env name is not a shell variable name: ${JSON.stringify(name)}`);
  }
}

/** `#SBATCH` lines shared by both jobs. sbatch reads them only before the first command line. */
function directives(spec: SlurmLaunchSpec, jobName: string, logName: string, cpus: number): string[] {
  const lines = [
    `#SBATCH --job-name=${sbatchQuote(jobName)}`,
    `#SBATCH --output=${sbatchQuote(`${slurmPatternLiteral(spec.logDir.replace(/\/+$/, ""))}/${logName}`)}`,
    "#SBATCH --nodes=1",
    "#SBATCH --ntasks=1",
    `#SBATCH --cpus-per-task=${cpus}`,
  ];
  if (spec.partition !== undefined) lines.push(`#SBATCH --partition=${sbatchQuote(spec.partition)}`);
  if (spec.time !== undefined) lines.push(`#SBATCH --time=${sbatchQuote(spec.time)}`);
  if (spec.memory !== undefined) lines.push(`#SBATCH --mem=${sbatchQuote(spec.memory)}`);
  for (const extra of spec.extraSbatch ?? []) lines.push(`#SBATCH ${extra}`);
  return lines;
}

function exports(spec: SlurmLaunchSpec): string[] {
  return Object.entries(spec.env ?? {}).map(([name, value]) => `export ${name}=${shellQuote(value)}`);
}

/**
 * The sbatch script of the job array: task i runs `lwm-data run` as rank i of `arraySize`.
 * Submit with `sbatch --parsable <script>`; rerunning it after a failure redoes only unfinished
 * work (completion markers). Slurm's MaxArraySize (1001 by default) caps `arraySize`.
 *
 * With `stage`, the array runs that one stage of a curation job (`--stage <stage>`; job name
 * `<jobName>-<stage>`): submit the stages in order, each with `--dependency=afterok:<previous id>`.
 * Such a script also carries `--kill-on-invalid-dep=yes`, so when a stage fails the later ones are
 * cancelled rather than left pending for good, and the finalize job (afterany) runs and reports.
 */
export function slurmArrayScript(spec: SlurmLaunchSpec, stage?: string): string {
  validate(spec);
  const throttle = spec.maxConcurrent !== undefined ? `%${spec.maxConcurrent}` : "";
  const run = [
    shellJoin([
      ...spec.lwmData,
      "run",
      spec.configPath,
      "--output",
      spec.outputDir,
      ...(spec.runArgs ?? []),
      ...(stage !== undefined ? ["--stage", stage] : []),
    ]),
    // The world size is written in, not read from SLURM_ARRAY_TASK_COUNT: resubmitting only the
    // failed indexes (`sbatch --array=3,7 script`) would make that count 2.
    `--rank "$SLURM_ARRAY_TASK_ID" --world-size ${spec.arraySize}`,
    `--workers ${spec.workersPerTask} --progress json`,
  ].join(" \\\n  ");
  return [
    "#!/bin/bash",
    `# lwm-data ${stage !== undefined ? `stage ${stage}` : "job array"}: ${spec.arraySize} task(s), task i runs rank i. Written by lwm-data launch slurm.`,
    `#SBATCH --array=0-${spec.arraySize - 1}${throttle}`,
    // Before the user's directives (directives(): extraSbatch), so that an --sbatch item can override it.
    ...(stage !== undefined ? ["#SBATCH --kill-on-invalid-dep=yes"] : []),
    ...directives(spec, stage !== undefined ? `${spec.jobName}-${stage}` : spec.jobName, "%x-%A_%a.out", spec.cpusPerTask),
    "set -euo pipefail",
    '[[ -v SLURM_ARRAY_TASK_ID ]] || { echo "submit this script with sbatch: it runs as one task of a job array" >&2; exit 2; }',
    ...exports(spec),
    // exec: scancel and --time send their SIGTERM to lwm-data itself, not to a waiting bash.
    `exec ${run}`,
    "",
  ].join("\n");
}

/**
 * The sbatch script of the finalize job: `lwm-data finalize <outputDir>` merges the per-task
 * manifests and names any task that did not finish. With `dependency` the script carries
 * `--dependency` itself; otherwise give it at submission: `sbatch --dependency=afterany:<id> <script>`.
 */
export function slurmFinalizeScript(spec: SlurmLaunchSpec, dependency?: SlurmFinalizeDependency): string {
  validate(spec);
  const lines = ["#!/bin/bash", "# lwm-data finalize: merges the job array's per-task manifests. Written by lwm-data launch slurm."];
  if (dependency !== undefined) {
    // `sbatch --parsable` prints "id" or, on a federation, "id;cluster".
    const id = /^(\d+)(;[\w.-]+)?$/.exec(dependency.afterJobId)?.[1];
    check(id !== undefined, `afterJobId must be a Slurm job id, got ${JSON.stringify(dependency.afterJobId)}`);
    lines.push(`#SBATCH --dependency=${dependency.condition ?? "afterany"}:${id}`);
  }
  lines.push(
    ...directives(spec, `${spec.jobName}-finalize`, "%x-%j.out", 1),
    "set -euo pipefail",
    ...exports(spec),
    `exec ${shellJoin([...spec.lwmData, "finalize", spec.outputDir])}`,
    "",
  );
  return lines.join("\n");
}
