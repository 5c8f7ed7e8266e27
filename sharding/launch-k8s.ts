import { isAbsolute } from "node:path";
import { Document } from "yaml";
import { isS3Uri } from "../src/io/s3/s3-uri.ts";
import { shellQuote } from "./shell-quote.ts";

/** The volume that holds the inputs, the config and (unless it is an `s3://` URI) the output, mounted at the same path in every pod. */
export type K8sVolume =
  /** Many pods write to it at once: the claim must be ReadWriteMany (NFS, CephFS, EFS, Filestore…). */
  | { kind: "pvc"; claimName: string; mountPath: string }
  /** A directory on the node: only for single-node clusters (kind, minikube) or a shared mount on every node. */
  | { kind: "hostPath"; path: string; mountPath: string };

/**
 * Object-storage mode: no shared volume. The config file reaches the pods in a ConfigMap (see
 * k8sConfigMap), mounted as that one file at `configPath`; inputs are URIs (or absolute paths in the
 * image) and the output an `s3://` URI.
 */
export interface K8sConfigMapSource {
  /** The ConfigMap's name, `<jobName>-config` as `launch k8s` writes it. */
  configMapName: string;
}

/** Size limit of the staging `emptyDir` when none is given: a task's unuploaded segment per worker, and the markers. */
export const K8S_STAGING_SIZE_DEFAULT = "20Gi";
/** Where the staging `emptyDir` is mounted; LWM_STAGING_DIR points at it. */
export const K8S_STAGING_MOUNT = "/lwm-staging";
/** The key of the config file in the ConfigMap. */
const CONFIG_KEY = "config.yaml";

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
  /** Absolute path inside the container: on the volume, or where the ConfigMap's file is mounted. */
  configPath: string;
  /** Absolute path inside the container, on the volume; or an `s3://` URI. */
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
  /** Exactly one of `volume` (a shared file system) and `configMap` (object-storage mode, no volume). */
  volume?: K8sVolume;
  configMap?: K8sConfigMapSource;
  /**
   * A Secret whose keys become the pod's environment (`envFrom`): AWS_ACCESS_KEY_ID,
   * AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, HF_TOKEN… Only its name is written, never a value.
   */
  secretName?: string;
  /** With an `s3://` output: the size limit of the staging emptyDir; default K8S_STAGING_SIZE_DEFAULT. */
  stagingSizeLimit?: string;
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
  envFrom?: { secretRef: { name: string } }[];
  resources: { requests: Record<string, string>; limits?: Record<string, string> };
  volumeMounts: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
}

/** The ConfigMap that carries the config file in object-storage mode. */
export interface K8sConfigMap {
  apiVersion: "v1";
  kind: "ConfigMap";
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  data: Record<string, string>;
}

export interface K8sPodSpec {
  restartPolicy: "Never";
  containers: K8sContainer[];
  volumes: Record<string, unknown>[];
  serviceAccountName?: string;
  nodeSelector?: Record<string, string>;
}

const VOLUME_NAME = "lwm-data";
const CONFIG_VOLUME = "lwm-config";
const STAGING_VOLUME = "lwm-staging";
/** A ConfigMap holds at most 1 MiB. */
const CONFIGMAP_MAX_BYTES = 1024 * 1024;
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

/** A Kubernetes resource quantity such as "20Gi", "500M" or "1.5Ti". */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

function validate(spec: K8sLaunchSpec): void {
  checkJobName(spec.jobName, "jobName");
  check(isAbsolute(spec.configPath), "configPath must be an absolute path inside the container");
  check(isAbsolute(spec.outputDir) || isS3Uri(spec.outputDir), "outputDir must be an absolute path inside the container or an s3:// URI");
  check(
    (spec.volume === undefined) !== (spec.configMap === undefined),
    "give exactly one of volume (a shared file system) and configMap (object-storage mode)",
  );
  if (spec.volume !== undefined) check(isAbsolute(spec.volume.mountPath), "volume.mountPath must be absolute");
  if (spec.configMap !== undefined) {
    check(isS3Uri(spec.outputDir), `without a volume the output must be an s3:// URI (pods share no file system), got ${spec.outputDir}`);
    check(isDnsSubdomain(spec.configMap.configMapName), `configMapName must be a DNS-1123 subdomain, got ${spec.configMap.configMapName}`);
  }
  if (spec.secretName !== undefined)
    check(isDnsSubdomain(spec.secretName), `secretName must be a DNS-1123 subdomain (a Secret's name), got ${spec.secretName}`);
  if (spec.stagingSizeLimit !== undefined)
    check(
      QUANTITY.test(spec.stagingSizeLimit),
      `stagingSizeLimit must be a Kubernetes quantity such as 20Gi, got ${spec.stagingSizeLimit}`,
    );
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

function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);
}

/** The pod's volumes and the container's mounts: the shared volume, or the ConfigMap's file; and the staging emptyDir of an s3:// output. */
function storage(spec: K8sLaunchSpec): { volumes: Record<string, unknown>[]; mounts: K8sContainer["volumeMounts"] } {
  const volumes: Record<string, unknown>[] = [];
  const mounts: K8sContainer["volumeMounts"] = [];
  if (spec.volume !== undefined) {
    volumes.push(
      spec.volume.kind === "pvc"
        ? { name: VOLUME_NAME, persistentVolumeClaim: { claimName: spec.volume.claimName } }
        : { name: VOLUME_NAME, hostPath: { path: spec.volume.path, type: "Directory" } },
    );
    mounts.push({ name: VOLUME_NAME, mountPath: spec.volume.mountPath });
  }
  if (spec.configMap !== undefined) {
    volumes.push({ name: CONFIG_VOLUME, configMap: { name: spec.configMap.configMapName } });
    // The one file, at the config's own path: `subPath` leaves the rest of its folder (in the image) visible.
    mounts.push({ name: CONFIG_VOLUME, mountPath: spec.configPath, subPath: CONFIG_KEY, readOnly: true });
  }
  if (isS3Uri(spec.outputDir)) {
    volumes.push({ name: STAGING_VOLUME, emptyDir: { sizeLimit: spec.stagingSizeLimit ?? K8S_STAGING_SIZE_DEFAULT } });
    mounts.push({ name: STAGING_VOLUME, mountPath: K8S_STAGING_MOUNT });
  }
  return { volumes, mounts };
}

function labelsOf(spec: K8sLaunchSpec, component: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": "lwm-data",
    "app.kubernetes.io/instance": spec.jobName,
    "app.kubernetes.io/component": component,
  };
}

function job(spec: K8sLaunchSpec, name: string, component: string, jobSpec: Record<string, unknown>, argv: string[], cpu: number): K8sJob {
  const [command, ...args] = (spec.lwmData ?? ["lwm-data"]).map(literal);
  const labels = labelsOf(spec, component);
  const memory: Record<string, string> = spec.memory !== undefined ? { memory: spec.memory } : {};
  const { volumes, mounts } = storage(spec);
  const container: K8sContainer = {
    name: "lwm-data",
    image: spec.image,
    ...(spec.imagePullPolicy !== undefined ? { imagePullPolicy: spec.imagePullPolicy } : {}),
    command: [command ?? "lwm-data"],
    args: [...args, ...argv],
    env: [
      // For `lwm-data run` without --world-size (it reads JOB_COMPLETION_INDEX with LWM_WORLD_SIZE).
      { name: "LWM_WORLD_SIZE", value: String(spec.worldSize) },
      // An s3:// output is written to a local staging folder and uploaded from there.
      ...(isS3Uri(spec.outputDir) ? [{ name: "LWM_STAGING_DIR", value: K8S_STAGING_MOUNT }] : []),
      ...Object.entries(spec.env ?? {}).map(([envName, value]) => ({ name: envName, value: literal(value) })),
    ],
    // Credentials by reference: the Secret's keys become variables when the pod starts.
    ...(spec.secretName !== undefined ? { envFrom: [{ secretRef: { name: spec.secretName } }] } : {}),
    // CPU request, no CPU limit: a limit throttles the worker threads; memory limit = request.
    resources: { requests: { cpu: String(cpu), ...memory }, ...(spec.memory !== undefined ? { limits: { ...memory } } : {}) },
    volumeMounts: mounts,
  };
  const podSpec: K8sPodSpec = {
    restartPolicy: "Never",
    containers: [container],
    volumes,
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
export function k8sIndexedJob(spec: K8sLaunchSpec, stage?: string): K8sJob {
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
export function k8sChainSteps(
  spec: K8sLaunchSpec,
  jobs: { name: string; file: string }[],
  finalizeFile: string,
  /** Applied before the first Job, e.g. the ConfigMap of object-storage mode. */
  first: string[] = [],
): string[] {
  const ns = spec.namespace !== undefined ? ` -n ${shellQuote(spec.namespace)}` : "";
  const setup = first.map((file) => `kubectl${ns} apply -f ${shellQuote(file)}`);
  const steps = jobs.flatMap(({ name, file }, i) => [
    `kubectl${ns} apply -f ${shellQuote(file)}`,
    `kubectl${ns} wait --for=condition=Complete --timeout=-1s job/${name}   # ${
      i < jobs.length - 1
        ? "a failed Job never completes: then delete it, fix the cause, re-apply (done units are skipped)"
        : "on failure (condition Failed) go on: finalize names the missing ranks"
    }`,
  ]);
  return [
    ...setup,
    ...steps,
    `kubectl${ns} apply -f ${shellQuote(finalizeFile)}`,
    `kubectl${ns} wait --for=condition=Complete --timeout=10m job/${spec.jobName}-finalize; kubectl${ns} logs job/${spec.jobName}-finalize`,
  ];
}

/**
 * The ConfigMap of object-storage mode: the config file's text as it is, under one key, which
 * every pod mounts at `configPath`. Apply it before the Jobs.
 */
export function k8sConfigMap(spec: K8sLaunchSpec, configText: string): K8sConfigMap {
  validate(spec);
  check(spec.configMap !== undefined, "a ConfigMap is for object-storage mode (configMap, no volume)");
  const bytes = Buffer.byteLength(configText);
  check(bytes <= CONFIGMAP_MAX_BYTES, `the config is ${bytes} bytes; a ConfigMap holds at most 1 MiB`);
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: spec.configMap?.configMapName ?? "",
      ...(spec.namespace !== undefined ? { namespace: spec.namespace } : {}),
      labels: labelsOf(spec, "config"),
    },
    data: { [CONFIG_KEY]: configText },
  };
}

/**
 * The kubectl command that creates the credentials Secret, with placeholders for the values
 * (never the values themselves): the S3 keys and endpoint. More keys (AWS_REGION, HF_TOKEN for
 * private Hub datasets) are added the same way.
 */
export function k8sSecretRecipe(spec: Pick<K8sLaunchSpec, "secretName" | "namespace">): string {
  const ns = spec.namespace !== undefined ? ` -n ${shellQuote(spec.namespace)}` : "";
  const keys = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"];
  return `kubectl${ns} create secret generic ${spec.secretName ?? "lwm-s3"} ${keys.map((key) => `--from-literal=${key}=…`).join(" ")}`;
}

/** YAML for `kubectl apply -f`, with an optional comment block on top (e.g. the steps). */
export function k8sYaml(object: K8sJob | K8sConfigMap, comment?: string): string {
  // No anchors/aliases for the labels the Job and its pod template share: plain YAML for every reader.
  const doc = new Document(object, { aliasDuplicateObjects: false });
  if (comment !== undefined) doc.commentBefore = comment.replace(/^/gm, " ");
  return doc.toString({ lineWidth: 0 });
}
