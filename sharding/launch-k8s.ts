import { isAbsolute } from "node:path";
import { Document } from "yaml";
import type { JobStage } from "../src/pipeline/job-stages.ts";
import { shellQuote } from "./shell-quote.ts";

/** The volume that holds the inputs, the config and the output, mounted at the same path in every pod. */
export type K8sVolume =
  /** Many pods write to it at once: the claim must be ReadWriteMany (NFS, CephFS, EFS, Filestore…). */
  | { kind: "pvc"; claimName: string; mountPath: string }
  /** A directory on the node: only for single-node clusters (kind, minikube) or a shared mount on every node. */
  | { kind: "hostPath"; path: string; mountPath: string };

/** What `lwm-data launch k8s` needs to write the Indexed Job and its finalize Job. */
export interface K8sLaunchSpec {
  /** Job name (a DNS-1123 label); the finalize Job is `<jobName>-finalize`. */
  jobName: string;
  namespace?: string;
  /** An image with lwm-data (and its node_modules) installed. */
  image: string;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** argv prefix that starts lwm-data in the image; default ["lwm-data"]. */
  lwmData?: string[];
  /** Absolute paths inside the container, on the volume. */
  configPath: string;
  outputDir: string;
  /** More `lwm-data run` arguments every rank needs to plan the same job: `--input`/`--benchmark` overrides, absolute. */
  runArgs?: string[];
  /** Completions = ranks; index i runs rank i. */
  worldSize: number;
  /** Pods running at once; default worldSize. */
  parallelism?: number;
  /** Worker threads per pod; also the pod's CPU request. */
  workersPerTask: number;
  /** Memory request and limit per pod, e.g. "8Gi". */
  memory?: string;
  volume: K8sVolume;
  /**
   * Retries of one rank before that rank counts as failed (the others go on); default 3. A retry
   * redoes only the rank's unfinished tasks. `null` leaves it out and uses the Job-wide
   * `backoffLimit` instead (and no podReplacementPolicy), for clusters older than Kubernetes 1.29.
   */
  backoffLimitPerIndex?: number | null;
  /** Delete finished Jobs and their pods after this many seconds. */
  ttlSecondsAfterFinished?: number;
  env?: Record<string, string>;
  serviceAccountName?: string;
  nodeSelector?: Record<string, string>;
}

/** The subset of batch/v1 Job that these templates write. */
export interface K8sJob {
  apiVersion: "batch/v1";
  kind: "Job";
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  spec: Record<string, unknown> & { template: { metadata: { labels: Record<string, string> }; spec: K8sPodSpec } };
}

export interface K8sContainer {
  name: string;
  image: string;
  imagePullPolicy?: string;
  command: string[];
  args: string[];
  env: { name: string; value: string }[];
  resources: { requests: Record<string, string>; limits?: Record<string, string> };
  volumeMounts: { name: string; mountPath: string }[];
}

export interface K8sPodSpec {
  restartPolicy: "Never";
  containers: K8sContainer[];
  volumes: Record<string, unknown>[];
  serviceAccountName?: string;
  nodeSelector?: Record<string, string>;
}

const VOLUME_NAME = "lwm-data";
/** Injected into every pod of an Indexed Job by the Job controller; expanded by the kubelet in `args`. */
const RANK_REFERENCE = "$(JOB_COMPLETION_INDEX)";

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(`k8s launch: ${message}`);
}

/**
 * The kubelet expands `$(NAME)` in command, args and env values, and reduces `$$` to `$`; doubling
 * every `$` keeps a user's path or value literal.
 */
function literal(value: string): string {
  return value.replaceAll("$", () => "$$");
}

/** Pod names and hostnames are `<job>-<index>-<suffix>`; a DNS-1123 label of at most 52 characters leaves room for them. */
function checkJobName(name: string, what: string): void {
  check(/^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$/.test(name), `${what} must be a DNS-1123 label of at most 52 characters, got ${name}`);
}

function validate(spec: K8sLaunchSpec): void {
  checkJobName(spec.jobName, "jobName");
  check(isAbsolute(spec.configPath) && isAbsolute(spec.outputDir), "configPath and outputDir must be absolute paths inside the container");
  check(isAbsolute(spec.volume.mountPath), "volume.mountPath must be absolute");
  check((spec.lwmData ?? ["lwm-data"]).length > 0, "lwmData is empty");
  for (const [what, n] of [
    ["worldSize", spec.worldSize],
    ["workersPerTask", spec.workersPerTask],
    ["parallelism", spec.parallelism ?? 1],
  ] as const) {
    check(Number.isInteger(n) && n >= 1, `${what} must be a positive integer, got ${n}`);
  }
  for (const name of Object.keys(spec.env ?? {}))
    check(/^[A-Za-z_][A-Za-z0-9_]*$/.test(name), `env name ${JSON.stringify(name)} is not valid`);
}

function volume(spec: K8sLaunchSpec): Record<string, unknown> {
  return spec.volume.kind === "pvc"
    ? { name: VOLUME_NAME, persistentVolumeClaim: { claimName: spec.volume.claimName } }
    : { name: VOLUME_NAME, hostPath: { path: spec.volume.path, type: "Directory" } };
}

function job(spec: K8sLaunchSpec, name: string, component: string, jobSpec: Record<string, unknown>, argv: string[], cpu: number): K8sJob {
  const [command, ...args] = (spec.lwmData ?? ["lwm-data"]).map(literal);
  const labels = {
    "app.kubernetes.io/name": "lwm-data",
    "app.kubernetes.io/instance": spec.jobName,
    "app.kubernetes.io/component": component,
  };
  const memory: Record<string, string> = spec.memory !== undefined ? { memory: spec.memory } : {};
  const container: K8sContainer = {
    name: "lwm-data",
    image: spec.image,
    ...(spec.imagePullPolicy !== undefined ? { imagePullPolicy: spec.imagePullPolicy } : {}),
    command: [command ?? "lwm-data"],
    args: [...args, ...argv],
    env: [
      // For `lwm-data run` without --world-size (it reads JOB_COMPLETION_INDEX with LWM_WORLD_SIZE).
      { name: "LWM_WORLD_SIZE", value: String(spec.worldSize) },
      ...Object.entries(spec.env ?? {}).map(([envName, value]) => ({ name: envName, value: literal(value) })),
    ],
    // CPU request, no CPU limit: a limit throttles the worker threads; memory limit = request.
    resources: { requests: { cpu: String(cpu), ...memory }, ...(spec.memory !== undefined ? { limits: { ...memory } } : {}) },
    volumeMounts: [{ name: VOLUME_NAME, mountPath: spec.volume.mountPath }],
  };
  const podSpec: K8sPodSpec = {
    restartPolicy: "Never",
    containers: [container],
    volumes: [volume(spec)],
    ...(spec.serviceAccountName !== undefined ? { serviceAccountName: spec.serviceAccountName } : {}),
    ...(spec.nodeSelector !== undefined ? { nodeSelector: spec.nodeSelector } : {}),
  };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, ...(spec.namespace !== undefined ? { namespace: spec.namespace } : {}), labels },
    spec: {
      ...jobSpec,
      ...(spec.ttlSecondsAfterFinished !== undefined ? { ttlSecondsAfterFinished: spec.ttlSecondsAfterFinished } : {}),
      template: { metadata: { labels }, spec: podSpec },
    },
  };
}

/**
 * The Indexed Job: pod i runs `lwm-data run <config> --rank i --world-size N`. restartPolicy
 * Never, because a retry is a new pod (and backoffLimitPerIndex requires it); evicted or preempted
 * pods are not counted as failures, and a replacement starts only once the old pod is gone, so two
 * pods never work on the same rank at once.
 *
 * With `stage`, the Job `<jobName>-<stage>` runs that one stage of a curation job (`--stage
 * <stage>`); Kubernetes has no dependency between Jobs, so each stage's Job is applied once the
 * one before it completed (see k8sChainSteps).
 */
export function k8sIndexedJob(spec: K8sLaunchSpec, stage?: JobStage): K8sJob {
  validate(spec);
  const name = stage !== undefined ? `${spec.jobName}-${stage}` : spec.jobName;
  if (stage !== undefined) checkJobName(name, "jobName with its stage suffix");
  const perIndex = spec.backoffLimitPerIndex === undefined ? 3 : spec.backoffLimitPerIndex;
  const argv = [
    ...[
      "run",
      spec.configPath,
      "--output",
      spec.outputDir,
      ...(spec.runArgs ?? []),
      ...(stage !== undefined ? ["--stage", stage] : []),
    ].map(literal),
    ...["--rank", RANK_REFERENCE, "--world-size", String(spec.worldSize)],
    ...["--workers", String(spec.workersPerTask), "--progress", "json"],
  ];
  const jobSpec = {
    completionMode: "Indexed",
    completions: spec.worldSize,
    parallelism: spec.parallelism ?? spec.worldSize,
    // Both fields need Kubernetes 1.29+; without them a Job-wide budget of retries.
    ...(perIndex === null ? { backoffLimit: 3 * spec.worldSize } : { backoffLimitPerIndex: perIndex, podReplacementPolicy: "Failed" }),
    podFailurePolicy: { rules: [{ action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] }] },
  };
  return job(spec, name, stage ?? "run", jobSpec, argv, spec.workersPerTask);
}

/** The finalize Job: `lwm-data finalize <outputDir>`, one pod, started after the Indexed Job ended (see k8sFinalizeSteps). */
export function k8sFinalizeJob(spec: K8sLaunchSpec): K8sJob {
  validate(spec);
  return job(
    spec,
    `${spec.jobName}-finalize`,
    "finalize",
    { completions: 1, parallelism: 1, backoffLimit: 2 },
    ["finalize", literal(spec.outputDir)],
    1,
  );
}

/**
 * Kubernetes has no dependency between Jobs, so finalize is a step of its own. The last rank to
 * finish already writes the manifest; finalize is for checking, and names the unfinished ranks
 * when the Indexed Job failed.
 */
export function k8sFinalizeSteps(spec: K8sLaunchSpec, jobFile: string, finalizeFile: string): string[] {
  return k8sChainSteps(spec, [{ name: spec.jobName, file: jobFile }], finalizeFile);
}

/**
 * The kubectl steps of a chain of Indexed Jobs (a curation job's stages, in order), then finalize:
 * apply each Job and wait until it completes before applying the next. A stage whose Job fails
 * never completes, so the chain stops at its wait; the last Job may fail and finalize still runs
 * (it names the missing ranks).
 */
export function k8sChainSteps(spec: K8sLaunchSpec, jobs: { name: string; file: string }[], finalizeFile: string): string[] {
  const ns = spec.namespace !== undefined ? ` -n ${shellQuote(spec.namespace)}` : "";
  const steps = jobs.flatMap(({ name, file }, i) => [
    `kubectl${ns} apply -f ${shellQuote(file)}`,
    `kubectl${ns} wait --for=condition=Complete --timeout=-1s job/${name}   # ${
      i < jobs.length - 1
        ? "a failed Job never completes: then delete it, fix the cause, re-apply (done units are skipped)"
        : "on failure (condition Failed) go on: finalize names the missing ranks"
    }`,
  ]);
  return [
    ...steps,
    `kubectl${ns} apply -f ${shellQuote(finalizeFile)}`,
    `kubectl${ns} wait --for=condition=Complete --timeout=10m job/${spec.jobName}-finalize; kubectl${ns} logs job/${spec.jobName}-finalize`,
  ];
}

/** YAML for `kubectl apply -f`, with an optional comment block on top (e.g. the steps). */
export function k8sYaml(object: K8sJob, comment?: string): string {
  // No anchors/aliases for the labels the Job and its pod template share: plain YAML for every reader.
  const doc = new Document(object, { aliasDuplicateObjects: false });
  if (comment !== undefined) doc.commentBefore = comment.replace(/^/gm, " ");
  return doc.toString({ lineWidth: 0 });
}
