import { execFile, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  K8S_STAGING_MOUNT,
  K8S_STAGING_SIZE_DEFAULT,
  type K8sLaunchSpec,
  k8sChainSteps,
  k8sConfigMap,
  k8sFinalizeJob,
  k8sFinalizeSteps,
  k8sIndexedJob,
  k8sSecretRecipe,
  k8sYaml,
} from "../sharding/launch-k8s.ts";
import { type SlurmLaunchSpec, slurmArrayScript, slurmFinalizeScript } from "../sharding/launch-slurm.ts";
import { sbatchQuote, shellJoin, shellQuote, slurmPatternLiteral } from "../sharding/shell-quote.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { MotoServer, S3_KEY_ID, S3_SECRET } from "./support/moto-server.ts";

const run = promisify(execFile);

/** A stand-in for lwm-data that records its argv (NUL-separated) in $ARGV_FILE. */
function argvRecorder(dir: string): string {
  const path = join(dir, "fake lwm'data.sh");
  writeFileSync(path, '#!/bin/bash\nprintf \'%s\\0\' "$@" > "$ARGV_FILE"\n');
  chmodSync(path, 0o755);
  return path;
}

function recordedArgv(file: string): string[] {
  return readFileSync(file, "utf8").split("\0").slice(0, -1);
}

function slurmSpec(dir: string, overrides: Partial<SlurmLaunchSpec> = {}): SlurmLaunchSpec {
  const awkward = join(dir, "it's a $dir");
  mkdirSync(awkward, { recursive: true });
  return {
    jobName: "lwm test",
    configPath: join(awkward, "job config.yaml"),
    outputDir: join(awkward, "out"),
    arraySize: 3,
    cpusPerTask: 2,
    workersPerTask: 2,
    lwmData: [argvRecorder(awkward), "--flag with space"],
    logDir: join(awkward, "logs 100%"),
    ...overrides,
  };
}

describe("shell quoting", () => {
  it("gives bash words that expand to exactly the original strings", async () => {
    const unit = fc.constantFrom(
      "a",
      "Z",
      "0",
      " ",
      "'",
      '"',
      "\\",
      "$",
      "`",
      "!",
      "*",
      "?",
      "~",
      "#",
      "\n",
      "\t",
      "=",
      "%",
      "é",
      "😀",
      "(",
      ";",
      "&",
      "|",
      "<",
      "{",
      "[",
    );
    const values = fc.sample(fc.string({ unit, maxLength: 12 }), 300);
    values.push("", "-", "~", "a=b", "--x=y");
    const script = `printf '%s\\0' ${values.map(shellQuote).join(" ")}`;
    const { stdout } = await run("bash", ["-c", script], { encoding: "utf8" });
    expect(stdout.split("\0").slice(0, -1)).toEqual(values);
  });

  it("leaves plain words bare and refuses what cannot be carried", () => {
    expect(shellJoin(["/usr/bin/node", "--workers", "4"])).toBe("/usr/bin/node --workers 4");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote("A=B")).toBe("'A=B'");
    expect(() => shellQuote("a\0b")).toThrow(/NUL/);
    expect(sbatchQuote('/logs/a b/"q"\\x')).toBe('"/logs/a b/\\"q\\"\\\\x"');
    expect(sbatchQuote("16G")).toBe("16G");
    expect(() => sbatchQuote("a\nb")).toThrow(/line break/);
    expect(slurmPatternLiteral("/logs/100%")).toBe("/logs/100%%");
    expect(() => slurmPatternLiteral("/logs/a\\b")).toThrow(/backslash/);
  });
});

describe("slurmArrayScript", () => {
  it("writes a bash script with the array range, the resources and the quoted lwm-data command", async () => {
    const dir = tempDir();
    const spec = slurmSpec(dir, { partition: "cpu", time: "02:00:00", memory: "4G", extraSbatch: ["--account=proj"], maxConcurrent: 2 });
    const script = slurmArrayScript(spec);
    const path = join(dir, "array.sbatch");
    writeFileSync(path, script);
    await run("bash", ["-n", path]);

    const lines = script.split("\n");
    expect(lines[0]).toBe("#!/bin/bash");
    const directives = lines.filter((line) => line.startsWith("#SBATCH"));
    expect(directives).toEqual([
      "#SBATCH --array=0-2%2",
      '#SBATCH --job-name="lwm test"',
      `#SBATCH --output="${spec.logDir.replace("%", "%%")}/%x-%A_%a.out"`,
      "#SBATCH --nodes=1",
      "#SBATCH --ntasks=1",
      "#SBATCH --cpus-per-task=2",
      "#SBATCH --partition=cpu",
      "#SBATCH --time=02:00:00",
      "#SBATCH --mem=4G",
      "#SBATCH --account=proj",
    ]);
    // sbatch stops reading directives at the first command: they must all come first.
    const firstCommand = lines.findIndex((line, i) => i > 0 && line !== "" && !line.startsWith("#"));
    expect(lines.slice(firstCommand).some((line) => line.startsWith("#SBATCH"))).toBe(false);
    expect(script).toContain("set -euo pipefail");
    expect(script).toContain(`'${spec.configPath.replace("'", `'\\''`)}'`);
  });

  it("runs lwm-data as rank SLURM_ARRAY_TASK_ID of the array size, paths intact", async () => {
    const dir = tempDir();
    const spec = slurmSpec(dir, { env: { LWM_TEST_VAR: "x 'y' $z" } });
    const path = join(dir, "array.sbatch");
    writeFileSync(path, slurmArrayScript(spec));
    const argvFile = join(dir, "argv");
    // SLURM_ARRAY_TASK_COUNT is deliberately wrong: the script carries the world size itself.
    await run("bash", [path], { env: { ...process.env, SLURM_ARRAY_TASK_ID: "1", SLURM_ARRAY_TASK_COUNT: "2", ARGV_FILE: argvFile } });
    expect(recordedArgv(argvFile)).toEqual([
      "--flag with space",
      "run",
      spec.configPath,
      "--output",
      spec.outputDir,
      "--rank",
      "1",
      "--world-size",
      "3",
      "--workers",
      "2",
      "--progress",
      "json",
    ]);
    const env = await run("bash", ["-c", `source <(grep '^export ' ${shellQuote(path)}); printf %s "$LWM_TEST_VAR"`]);
    expect(env.stdout).toBe("x 'y' $z");
  });

  it("refuses to run outside a Slurm array task", () => {
    const dir = tempDir();
    const path = join(dir, "array.sbatch");
    writeFileSync(path, slurmArrayScript(slurmSpec(dir)));
    const { SLURM_ARRAY_TASK_ID: _, ...env } = process.env;
    const result = spawnSync("bash", [path], { env, encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/submit this script with sbatch/);
  });

  it("rejects specs that would make a broken script", () => {
    const spec = slurmSpec(tempDir());
    expect(() => slurmArrayScript({ ...spec, configPath: "configs/demo.yaml" })).toThrow(/configPath must be absolute/);
    expect(() => slurmArrayScript({ ...spec, arraySize: 0 })).toThrow(/arraySize/);
    expect(() => slurmArrayScript({ ...spec, lwmData: [] })).toThrow(/lwmData/);
    expect(() => slurmArrayScript({ ...spec, env: { "A-B": "1" } })).toThrow(/env name/);
    expect(() => slurmArrayScript({ ...spec, extraSbatch: ["--qos=a\necho pwned"] })).toThrow(/line break/);
    expect(() => slurmArrayScript({ ...spec, logDir: "/logs/a\\b" })).toThrow(/backslash/);
  });
});

describe("slurmArrayScript for one stage of a curation job", () => {
  it("runs `lwm-data run --stage <stage>` as rank SLURM_ARRAY_TASK_ID of the stage's array, named after the stage", async () => {
    const dir = tempDir();
    const spec = slurmSpec(dir, { arraySize: 2, maxConcurrent: 1, extraSbatch: ["--kill-on-invalid-dep=no"] });
    const script = slurmArrayScript(spec, "clusters");
    const path = join(dir, "clusters.sbatch");
    writeFileSync(path, script);
    await run("bash", ["-n", path]);
    const directives = script.split("\n").filter((line) => line.startsWith("#SBATCH"));
    expect(directives.slice(0, 3)).toEqual([
      "#SBATCH --array=0-1%1",
      "#SBATCH --kill-on-invalid-dep=yes",
      '#SBATCH --job-name="lwm test-clusters"',
    ]);
    // The user's directives come after ours: sbatch lets the later one win.
    expect(directives[directives.length - 1]).toBe("#SBATCH --kill-on-invalid-dep=no");
    expect(script).toMatch(/^# lwm-data stage clusters: 2 task\(s\)/m);

    const argvFile = join(dir, "argv");
    await run("bash", [path], { env: { ...process.env, SLURM_ARRAY_TASK_ID: "1", ARGV_FILE: argvFile } });
    expect(recordedArgv(argvFile)).toEqual([
      "--flag with space",
      "run",
      spec.configPath,
      "--output",
      spec.outputDir,
      "--stage",
      "clusters",
      "--rank",
      "1",
      "--world-size",
      "2",
      "--workers",
      "2",
      "--progress",
      "json",
    ]);
  });

  it("leaves the stage out, and the job name and directives as they were, without one", () => {
    const spec = slurmSpec(tempDir());
    const plain = slurmArrayScript(spec);
    expect(plain).not.toContain("--stage");
    expect(plain).not.toContain("--kill-on-invalid-dep");
    expect(plain).toContain('#SBATCH --job-name="lwm test"\n');
    expect(slurmArrayScript(spec, "records")).toContain("--stage records");
  });
});

describe("slurmFinalizeScript", () => {
  it("runs lwm-data finalize on the output folder, after the array when given its id", async () => {
    const dir = tempDir();
    const spec = slurmSpec(dir);
    const script = slurmFinalizeScript(spec, { afterJobId: "42;cluster" });
    const path = join(dir, "finalize.sbatch");
    writeFileSync(path, script);
    await run("bash", ["-n", path]);
    expect(script).toContain("#SBATCH --dependency=afterany:42\n");
    expect(script).toContain('#SBATCH --job-name="lwm test-finalize"');
    expect(script).toContain("/%x-%j.out");
    expect(script).toContain("#SBATCH --cpus-per-task=1");
    expect(script).not.toContain("--array");
    const argvFile = join(dir, "argv");
    await run("bash", [path], { env: { ...process.env, ARGV_FILE: argvFile } });
    expect(recordedArgv(argvFile)).toEqual(["--flag with space", "finalize", spec.outputDir]);

    expect(slurmFinalizeScript(spec, { afterJobId: "7", condition: "afterok" })).toContain("#SBATCH --dependency=afterok:7\n");
    expect(slurmFinalizeScript(spec)).not.toContain("--dependency");
    expect(() => slurmFinalizeScript(spec, { afterJobId: "7; rm -rf /" })).toThrow(/job id/);
  });
});

/** What the kubelet does to `command`/`args`: `$(NAME)` from the container's env, `$$` → `$`. */
function kubeletExpand(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match, name: string | undefined) =>
    match === "$$" ? "$" : (env[name ?? ""] ?? match),
  );
}

describe("k8sIndexedJob", () => {
  const spec: K8sLaunchSpec = {
    jobName: "lwm-demo",
    namespace: "data",
    image: "registry.example/lwm-data:0.1.0",
    lwmData: ["node", "/app/bin/lwm-data.js"],
    configPath: "/work/configs/job $(HOME).yaml",
    outputDir: "/work/out/it's",
    worldSize: 4,
    workersPerTask: 8,
    memory: "16Gi",
    volume: { kind: "pvc", claimName: "lwm-shared", mountPath: "/work" },
    env: { PRICE: "$5" },
  };

  it("is an Indexed Job with one completion per rank, retried per index, that survives a YAML round trip", () => {
    const job = k8sIndexedJob(spec);
    const yaml = k8sYaml(job, k8sFinalizeSteps(spec, "job.yaml", "finalize job.yaml").join("\n"));
    expect(yaml).toMatch(/^# kubectl -n data apply -f job\.yaml\n/);
    expect(yaml).toContain("# kubectl -n data apply -f 'finalize job.yaml'");
    expect(yaml).not.toMatch(/[&*]a\d/); // no YAML anchors
    const back = parse(yaml);
    expect(back).toEqual(job);
    expect(back).toMatchObject({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "lwm-demo", namespace: "data" },
      spec: { completionMode: "Indexed", completions: 4, parallelism: 4, backoffLimitPerIndex: 3, podReplacementPolicy: "Failed" },
    });
    const pod = back.spec.template.spec;
    expect(pod.restartPolicy).toBe("Never");
    expect(pod.volumes).toEqual([{ name: "lwm-data", persistentVolumeClaim: { claimName: "lwm-shared" } }]);
    const [container] = pod.containers;
    expect(container.image).toBe(spec.image);
    expect(container.resources).toEqual({ requests: { cpu: "8", memory: "16Gi" }, limits: { memory: "16Gi" } });
    expect(container.volumeMounts).toEqual([{ name: "lwm-data", mountPath: "/work" }]);
  });

  it("runs lwm-data as rank JOB_COMPLETION_INDEX once the kubelet has expanded the args", () => {
    const [container] = k8sIndexedJob(spec).spec.template.spec.containers;
    if (!container) throw new Error("no container");
    // The Job controller adds JOB_COMPLETION_INDEX to the container's env; HOME must stay literal.
    const env = { JOB_COMPLETION_INDEX: "2", HOME: "/root", ...Object.fromEntries(container.env.map((e) => [e.name, e.value])) };
    const argv = [...container.command, ...container.args].map((arg) => kubeletExpand(arg, env));
    expect(argv).toEqual([
      "node",
      "/app/bin/lwm-data.js",
      "run",
      spec.configPath,
      "--output",
      spec.outputDir,
      "--rank",
      "2",
      "--world-size",
      "4",
      "--workers",
      "8",
      "--progress",
      "json",
    ]);
    expect(container.env.map((e) => [e.name, kubeletExpand(e.value, {})])).toEqual([
      ["LWM_WORLD_SIZE", "4"],
      ["PRICE", "$5"],
    ]);
  });

  it("takes a hostPath volume, a smaller parallelism, and a Job-wide backoff for older clusters", () => {
    const job = k8sIndexedJob({
      ...spec,
      volume: { kind: "hostPath", path: "/srv/lwm", mountPath: "/work" },
      parallelism: 2,
      backoffLimitPerIndex: null,
    });
    expect(job.spec).toMatchObject({ completions: 4, parallelism: 2, backoffLimit: 12 });
    expect(job.spec).not.toHaveProperty("backoffLimitPerIndex");
    expect(job.spec).not.toHaveProperty("podReplacementPolicy");
    expect(job.spec.template.spec.volumes).toEqual([{ name: "lwm-data", hostPath: { path: "/srv/lwm", type: "Directory" } }]);
  });

  it("rejects names Kubernetes would refuse and relative paths", () => {
    expect(() => k8sIndexedJob({ ...spec, jobName: "Demo_Run" })).toThrow(/DNS-1123/);
    expect(() => k8sIndexedJob({ ...spec, configPath: "configs/demo.yaml" })).toThrow(/absolute/);
    expect(() => k8sIndexedJob({ ...spec, worldSize: 0 })).toThrow(/worldSize/);
  });
});

describe("k8sIndexedJob for one stage of a curation job", () => {
  const spec: K8sLaunchSpec = {
    jobName: "lwm-demo",
    namespace: "data",
    image: "registry.example/lwm-data:0.1.0",
    configPath: "/work/job.yaml",
    outputDir: "/work/out $(X)",
    worldSize: 3,
    workersPerTask: 2,
    volume: { kind: "pvc", claimName: "lwm-shared", mountPath: "/work" },
  };

  it("is the Indexed Job <jobName>-<stage> running `lwm-data run --stage <stage>`", () => {
    const job = parse(k8sYaml(k8sIndexedJob(spec, "signatures")));
    expect(job.metadata.name).toBe("lwm-demo-signatures");
    expect(job.metadata.labels["app.kubernetes.io/component"]).toBe("signatures");
    expect(job.spec).toMatchObject({ completionMode: "Indexed", completions: 3, parallelism: 3 });
    const [container] = job.spec.template.spec.containers;
    const env = { JOB_COMPLETION_INDEX: "0", X: "expanded" };
    expect([...container.command, ...container.args].map((arg: string) => kubeletExpand(arg, env))).toEqual([
      "lwm-data",
      "run",
      "/work/job.yaml",
      "--output",
      "/work/out $(X)",
      "--stage",
      "signatures",
      "--rank",
      "0",
      "--world-size",
      "3",
      "--workers",
      "2",
      "--progress",
      "json",
    ]);
    expect(k8sIndexedJob(spec).spec.template.spec.containers[0]?.args).not.toContain("--stage");
  });

  it("refuses a job name that the stage suffix makes too long for pod names", () => {
    const name = "a".repeat(42); // + "-signatures" = 53 characters
    expect(() => k8sIndexedJob({ ...spec, jobName: name })).not.toThrow();
    expect(() => k8sIndexedJob({ ...spec, jobName: name }, "select")).not.toThrow();
    expect(() => k8sIndexedJob({ ...spec, jobName: name }, "signatures")).toThrow(/stage suffix/);
  });

  it("chains the stages: apply, wait until complete, then the next; finalize after the last", () => {
    const jobs = ["signatures", "clusters"].map((stage) => ({ name: `lwm-demo-${stage}`, file: `k8s ${stage}.yaml` }));
    const steps = k8sChainSteps(spec, jobs, "fin.yaml");
    expect(steps.map((step) => step.replace(/\s+#.*/, ""))).toEqual([
      "kubectl -n data apply -f 'k8s signatures.yaml'",
      "kubectl -n data wait --for=condition=Complete --timeout=-1s job/lwm-demo-signatures",
      "kubectl -n data apply -f 'k8s clusters.yaml'",
      "kubectl -n data wait --for=condition=Complete --timeout=-1s job/lwm-demo-clusters",
      "kubectl -n data apply -f fin.yaml",
      "kubectl -n data wait --for=condition=Complete --timeout=10m job/lwm-demo-finalize; kubectl -n data logs job/lwm-demo-finalize",
    ]);
    expect(steps[1]).toMatch(/failed Job never completes/);
    expect(steps[3]).toMatch(/finalize names the missing ranks/);
    expect(k8sFinalizeSteps(spec, "job.yaml", "fin.yaml")).toEqual(
      k8sChainSteps(spec, [{ name: "lwm-demo", file: "job.yaml" }], "fin.yaml"),
    );
  });
});

describe("k8sFinalizeJob", () => {
  it("is a one-pod Job running lwm-data finalize on the same volume", () => {
    const spec: K8sLaunchSpec = {
      jobName: "lwm-demo",
      image: "registry.example/lwm-data:0.1.0",
      configPath: "/work/job.yaml",
      outputDir: "/work/out",
      worldSize: 4,
      workersPerTask: 8,
      volume: { kind: "pvc", claimName: "lwm-shared", mountPath: "/work" },
    };
    const job = parse(k8sYaml(k8sFinalizeJob(spec)));
    expect(job.metadata.name).toBe("lwm-demo-finalize");
    expect(job.spec).toMatchObject({ completions: 1, parallelism: 1, backoffLimit: 2 });
    expect(job.spec).not.toHaveProperty("completionMode");
    const [container] = job.spec.template.spec.containers;
    expect([...container.command, ...container.args]).toEqual(["lwm-data", "finalize", "/work/out"]);
    expect(container.resources.requests.cpu).toBe("1");
    expect(job.spec.template.spec.volumes).toEqual(k8sIndexedJob(spec).spec.template.spec.volumes);
  });
});

describe("k8s object-storage mode: no volume, the config in a ConfigMap, an s3:// output staged in an emptyDir", () => {
  const spec: K8sLaunchSpec = {
    jobName: "lwm-demo",
    namespace: "data",
    image: "registry.example/lwm-data:0.1.0",
    configPath: "/home/me/jobs/job.yaml",
    outputDir: "s3://bucket/runs/$(X)",
    worldSize: 3,
    workersPerTask: 2,
    configMap: { configMapName: "lwm-demo-config" },
    secretName: "lwm-s3",
  };
  const configText =
    "inputs:\n  - path: s3://bucket/raw/**/*.jsonl.zst\n  - path: hf://datasets/org/set/*.parquet\noutput:\n  dir: s3://bucket/runs/a\n";

  /** Every key of a parsed object, at any depth. */
  function keysOf(value: unknown): string[] {
    if (Array.isArray(value)) return value.flatMap(keysOf);
    if (typeof value === "object" && value !== null) return Object.entries(value).flatMap(([key, v]) => [key, ...keysOf(v)]);
    return [];
  }

  it("mounts no PVC or hostPath: the ConfigMap's one file at the config's path and an emptyDir for LWM_STAGING_DIR; credentials by Secret name", () => {
    for (const job of [k8sIndexedJob(spec), k8sIndexedJob(spec, "signatures"), k8sFinalizeJob(spec)]) {
      const yaml = k8sYaml(job);
      const back = parse(yaml);
      expect(back).toEqual(job);
      expect(keysOf(back)).not.toContain("persistentVolumeClaim");
      expect(keysOf(back)).not.toContain("hostPath");
      const pod = back.spec.template.spec;
      expect(pod.volumes).toEqual([
        { name: "lwm-config", configMap: { name: "lwm-demo-config" } },
        { name: "lwm-staging", emptyDir: { sizeLimit: K8S_STAGING_SIZE_DEFAULT } },
      ]);
      const [container] = pod.containers;
      expect(container.volumeMounts).toEqual([
        { name: "lwm-config", mountPath: "/home/me/jobs/job.yaml", subPath: "config.yaml", readOnly: true },
        { name: "lwm-staging", mountPath: K8S_STAGING_MOUNT },
      ]);
      expect(container.env).toContainEqual({ name: "LWM_STAGING_DIR", value: K8S_STAGING_MOUNT });
      expect(container.envFrom).toEqual([{ secretRef: { name: "lwm-s3" } }]);
    }
    // The URI reaches lwm-data as it is ($ kept literal for the kubelet).
    const [container] = k8sIndexedJob(spec).spec.template.spec.containers;
    const argv = container?.args.map((arg) => kubeletExpand(arg, { JOB_COMPLETION_INDEX: "1", X: "expanded" }));
    expect(argv?.slice(0, 4)).toEqual(["run", "/home/me/jobs/job.yaml", "--output", "s3://bucket/runs/$(X)"]);
    expect(k8sFinalizeJob(spec).spec.template.spec.containers[0]?.args).toEqual(["finalize", "s3://bucket/runs/$$(X)"]);
  });

  it("takes the staging size, and no Secret at all (IRSA, workload identity)", () => {
    const { secretName: _secret, ...noSecret } = spec;
    const job = k8sIndexedJob({ ...noSecret, stagingSizeLimit: "100Gi" });
    expect(job.spec.template.spec.volumes).toContainEqual({ name: "lwm-staging", emptyDir: { sizeLimit: "100Gi" } });
    expect(job.spec.template.spec.containers[0]).not.toHaveProperty("envFrom");
  });

  it("writes the config text verbatim into a ConfigMap, applied before the Jobs", () => {
    const configMap = k8sConfigMap(spec, configText);
    const back = parse(k8sYaml(configMap, "steps"));
    expect(back).toEqual(configMap);
    expect(back).toMatchObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "lwm-demo-config", namespace: "data" } });
    expect(back.data).toEqual({ "config.yaml": configText });
    expect(back.metadata.labels["app.kubernetes.io/instance"]).toBe("lwm-demo");
    expect(() => k8sConfigMap(spec, "#".repeat(1024 * 1024 + 1))).toThrow(/1 MiB/);
    expect(() => k8sConfigMap({ ...spec, configMap: undefined, volume: { kind: "pvc", claimName: "c", mountPath: "/w" } }, "")).toThrow(
      /object-storage mode/,
    );
    const steps = k8sChainSteps(spec, [{ name: "lwm-demo", file: "job.yaml" }], "fin.yaml", ["config map.yaml"]);
    expect(steps.slice(0, 2)).toEqual(["kubectl -n data apply -f 'config map.yaml'", "kubectl -n data apply -f job.yaml"]);
  });

  it("prints the Secret recipe with placeholders only", () => {
    expect(k8sSecretRecipe(spec)).toBe(
      "kubectl -n data create secret generic lwm-s3 --from-literal=AWS_ACCESS_KEY_ID=… --from-literal=AWS_SECRET_ACCESS_KEY=… --from-literal=AWS_ENDPOINT_URL=…",
    );
  });

  it("with a shared volume and an s3:// output, mounts the volume and still stages and takes the Secret", () => {
    const { configMap: _configMap, ...rest } = spec;
    const job = k8sIndexedJob({ ...rest, configPath: "/work/job.yaml", volume: { kind: "pvc", claimName: "shared", mountPath: "/work" } });
    const pod = job.spec.template.spec;
    expect(pod.volumes).toEqual([
      { name: "lwm-data", persistentVolumeClaim: { claimName: "shared" } },
      { name: "lwm-staging", emptyDir: { sizeLimit: K8S_STAGING_SIZE_DEFAULT } },
    ]);
    expect(pod.containers[0]?.envFrom).toEqual([{ secretRef: { name: "lwm-s3" } }]);
    // A local output: no staging, no LWM_STAGING_DIR.
    const local = k8sIndexedJob({
      ...rest,
      configPath: "/work/job.yaml",
      outputDir: "/work/out",
      volume: { kind: "hostPath", path: "/srv", mountPath: "/work" },
    });
    expect(local.spec.template.spec.volumes).toHaveLength(1);
    expect(local.spec.template.spec.containers[0]?.env.map((e) => e.name)).toEqual(["LWM_WORLD_SIZE"]);
  });

  it("refuses what would make pods that cannot work", () => {
    expect(() => k8sIndexedJob({ ...spec, outputDir: "/out" })).toThrow(/output must be an s3:\/\/ URI/);
    expect(() => k8sIndexedJob({ ...spec, outputDir: "out" })).toThrow(/absolute path .* or an s3:\/\/ URI/);
    expect(() => k8sIndexedJob({ ...spec, volume: { kind: "pvc", claimName: "c", mountPath: "/w" } })).toThrow(/exactly one of volume/);
    expect(() => k8sIndexedJob({ ...spec, configMap: undefined })).toThrow(/exactly one of volume/);
    expect(() => k8sIndexedJob({ ...spec, secretName: "My_Secret" })).toThrow(/secretName/);
    expect(() => k8sIndexedJob({ ...spec, stagingSizeLimit: "lots" })).toThrow(/stagingSizeLimit/);
  });
});

const CLI = join(ROOT, "bin/lwm-data.js");

/**
 * A job over three one-record canonical JSONL files of the same size, `input.task_bytes` that
 * size (one task each: smaller would split them, larger group them), in a folder whose name needs
 * quoting; with `curation`, exact and near dedup with 5 partitions.
 */
function launchJob(curation: boolean): { dir: string; config: string } {
  const dir = join(tempDir(), "job dir");
  mkdirSync(dir);
  let bytes = 0;
  for (const name of ["a", "b", "c"]) {
    const line = `${JSON.stringify({ id: name, domain: "terminal", turns: [{ action: "ls", observation: `file-${name}` }] })}\n`;
    writeFileSync(join(dir, `${name}.jsonl`), line);
    bytes = Buffer.byteLength(line);
  }
  const yaml = ["inputs:", "  - path: '*.jsonl'", "input:", `  task_bytes: ${bytes}`];
  if (curation) yaml.push("dedup:", "  exact: true", "  near: true", "  partitions: 5");
  return { dir, config: writeConfig(`${yaml.join("\n")}\n`, dir) };
}

/** A stand-in sbatch on PATH: logs its argv (one line per call, fields separated by \x1f) and answers `<id>;fed` with ids 101, 102, … */
function fakeSbatch(dir: string): { env: NodeJS.ProcessEnv; calls: () => string[][] } {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const log = join(dir, "sbatch.log");
  writeFileSync(log, "");
  writeFileSync(
    join(bin, "sbatch"),
    `#!/bin/bash
set -euo pipefail
n=$(( $(wc -l < ${shellQuote(log)}) + 101 ))
{ printf '%s\x1f' "$@"; echo; } >> ${shellQuote(log)}
echo "$n;fed"
`,
  );
  chmodSync(join(bin, "sbatch"), 0o755);
  return {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    calls: () =>
      readFileSync(log, "utf8")
        .split("\n")
        .slice(0, -1)
        .map((line) => line.split("\x1f").slice(0, -1)),
  };
}

describe("lwm-data launch with curation: one array or Indexed Job per stage, in order", () => {
  const STAGE_RANKS = [
    ["signatures", 3],
    ["clusters", 4],
    ["select", 1],
    ["records", 3],
  ] as const;

  it("slurm: one script per stage sized min(world size, units), chained afterok; the printed commands submit the same chain", async () => {
    const { dir, config } = launchJob(true);
    const sbatch = fakeSbatch(dir);
    const { stdout } = await run(
      process.execPath,
      [CLI, "launch", "slurm", config, "-o", "out", "--world-size", "4", "--job-name", "cur"],
      {
        cwd: dir,
        env: sbatch.env,
        encoding: "utf8",
      },
    );
    const launchDir = join(dir, "out/launch");
    expect(readdirSync(launchDir).sort()).toEqual([
      "logs",
      "slurm-clusters.sbatch",
      "slurm-finalize.sbatch",
      "slurm-records.sbatch",
      "slurm-select.sbatch",
      "slurm-signatures.sbatch",
    ]);
    for (const [stage, ranks] of STAGE_RANKS) {
      const script = readFileSync(join(launchDir, `slurm-${stage}.sbatch`), "utf8");
      expect(script).toContain(`#SBATCH --array=0-${ranks - 1}\n`);
      expect(script).toContain(`#SBATCH --job-name=cur-${stage}\n`);
      expect(script).toContain(
        `--output '${join(dir, "out")}' --stage ${stage} \\\n  --rank "$SLURM_ARRAY_TASK_ID" --world-size ${ranks} \\`,
      );
      expect(script).toContain(`'${config}'`);
    }
    expect(stdout).toMatch(/signatures +3 unit\(s\) over 3 array task\(s\)\n +clusters +5 unit\(s\) over 4 array task\(s\)/);

    // The printed submission commands, run as printed: each stage after the one before, finalize last.
    const snippet = stdout.slice(stdout.indexOf("submit:\n") + "submit:\n".length);
    await run("bash", ["-euo", "pipefail", "-c", snippet], { cwd: dir, env: sbatch.env });
    const printed = sbatch.calls();
    const expected = [
      ["--parsable", "out/launch/slurm-signatures.sbatch"],
      ["--parsable", "--dependency=afterok:101", "out/launch/slurm-clusters.sbatch"],
      ["--parsable", "--dependency=afterok:102", "out/launch/slurm-select.sbatch"],
      ["--parsable", "--dependency=afterok:103", "out/launch/slurm-records.sbatch"],
      ["--dependency=afterany:104", "out/launch/slurm-finalize.sbatch"],
    ];
    expect(printed).toEqual(expected);

    // --submit does the same (with absolute paths) and names every job.
    const submitted = await run(
      process.execPath,
      [CLI, "launch", "slurm", config, "-o", "out", "--world-size", "4", "--job-name", "cur", "--submit"],
      { cwd: dir, env: sbatch.env, encoding: "utf8" },
    );
    const launched = sbatch.calls().slice(expected.length);
    expect(launched).toEqual([
      ["--parsable", join(launchDir, "slurm-signatures.sbatch")],
      ["--parsable", "--dependency=afterok:106", join(launchDir, "slurm-clusters.sbatch")],
      ["--parsable", "--dependency=afterok:107", join(launchDir, "slurm-select.sbatch")],
      ["--parsable", "--dependency=afterok:108", join(launchDir, "slurm-records.sbatch")],
      ["--parsable", "--dependency=afterany:109", join(launchDir, "slurm-finalize.sbatch")],
    ]);
    expect(submitted.stdout).toContain(
      "submitted signatures job 106, clusters job 107, select job 108, records job 109 (each afterok on the one before) and finalize job 110",
    );
    expect(submitted.stdout).toContain("squeue -j 106,107,108,109,110;");
  });

  it("slurm without curation: today's single array and finalize, and today's submission line", async () => {
    const { dir, config } = launchJob(false);
    const { stdout } = await run(process.execPath, [CLI, "launch", "slurm", config, "-o", "out", "--world-size", "4"], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(readdirSync(join(dir, "out/launch")).sort()).toEqual(["logs", "slurm-array.sbatch", "slurm-finalize.sbatch"]);
    const script = readFileSync(join(dir, "out/launch/slurm-array.sbatch"), "utf8");
    expect(script).toContain("#SBATCH --array=0-3\n");
    expect(script).not.toContain("--stage");
    expect(stdout).toContain(
      "submit: id=$(sbatch --parsable out/launch/slurm-array.sbatch) && sbatch --dependency=afterany:$id out/launch/slurm-finalize.sbatch",
    );
  });

  it("k8s: one Indexed Job per stage with its completions and --stage, finalize after; the steps apply and wait in order", async () => {
    const { dir, config } = launchJob(true);
    const { stdout } = await run(
      process.execPath,
      [CLI, "launch", "k8s", config, "-o", "out", "--image", "lwm:1", "--pvc", "data", "--world-size", "4", "--parallelism", "2"],
      { cwd: dir, encoding: "utf8" },
    );
    const launchDir = join(dir, "out/launch");
    expect(readdirSync(launchDir).sort()).toEqual([
      "k8s-clusters.yaml",
      "k8s-finalize.yaml",
      "k8s-records.yaml",
      "k8s-select.yaml",
      "k8s-signatures.yaml",
    ]);
    const steps: string[] = [];
    for (const [stage, ranks] of STAGE_RANKS) {
      const file = join(launchDir, `k8s-${stage}.yaml`);
      const job = parse(readFileSync(file, "utf8"));
      expect(job.metadata.name).toBe(`lwm-data-${stage}`);
      expect(job.spec).toMatchObject({ completionMode: "Indexed", completions: ranks, parallelism: 2 });
      const [container] = job.spec.template.spec.containers;
      expect(container.args).toEqual([
        "run",
        config,
        "--output",
        join(dir, "out"),
        "--stage",
        stage,
        "--rank",
        "$(JOB_COMPLETION_INDEX)",
        "--world-size",
        String(ranks),
        "--workers",
        "1",
        "--progress",
        "json",
      ]);
      expect(container.env).toContainEqual({ name: "LWM_WORLD_SIZE", value: String(ranks) });
      steps.push(`kubectl apply -f '${file}'`, `kubectl wait --for=condition=Complete --timeout=-1s job/lwm-data-${stage}`);
    }
    const finalize = parse(readFileSync(join(launchDir, "k8s-finalize.yaml"), "utf8"));
    expect(finalize.spec.template.spec.containers[0].args).toEqual(["finalize", join(dir, "out")]);
    steps.push(`kubectl apply -f '${join(launchDir, "k8s-finalize.yaml")}'`);
    const printed = stdout
      .slice(stdout.indexOf("then:\n"))
      .split("\n")
      .slice(1)
      .map((line) => line.trim().replace(/\s+#.*/, ""))
      .filter(Boolean);
    expect(printed.slice(0, steps.length)).toEqual(steps);
    expect(printed[steps.length]).toMatch(/^kubectl wait --for=condition=Complete --timeout=10m job\/lwm-data-finalize;/);
  });
});

describe("lwm-data launch with object storage (against a local S3-compatible server)", () => {
  const moto = new MotoServer();
  const BUCKET = "lwm-launch";
  let bytes = 0;

  beforeAll(async () => {
    await moto.start();
    await moto.createBucket(BUCKET);
    for (const name of ["a", "b", "c"]) {
      const line = `${JSON.stringify({ id: name, domain: "terminal", turns: [{ action: "ls", observation: `file-${name}` }] })}\n`;
      await moto.client().send(new PutObjectCommand({ Bucket: BUCKET, Key: `in/${name}.jsonl`, Body: line }));
      bytes = Buffer.byteLength(line);
    }
  });

  afterAll(() => moto.stop());

  /** A config in a fresh folder reading s3://lwm-launch/in/*.jsonl (one task per object), writing `output`. */
  function s3Job(output: string, extra: string[] = []): { dir: string; config: string } {
    const dir = join(tempDir(), "job dir");
    mkdirSync(dir);
    const yaml = [
      "inputs:",
      `  - path: s3://${BUCKET}/in/*.jsonl`,
      "input:",
      `  task_bytes: ${bytes}`,
      "output:",
      `  dir: ${output}`,
      ...extra,
    ];
    return { dir, config: writeConfig(`${yaml.join("\n")}\n`, dir) };
  }

  const launch = (dir: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    run(process.execPath, [CLI, "launch", ...args], { cwd: dir, env: { ...moto.env(), ...env }, encoding: "utf8" });

  async function objectKeys(prefix: string): Promise<string[]> {
    const listed = await moto.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    return (listed.Contents ?? []).map((object) => object.Key ?? "");
  }

  /** Every key of a parsed object, at any depth. */
  function keysOf(value: unknown): string[] {
    if (Array.isArray(value)) return value.flatMap(keysOf);
    if (typeof value === "object" && value !== null) return Object.entries(value).flatMap(([key, v]) => [key, ...keysOf(v)]);
    return [];
  }

  it("k8s: a ConfigMap and one Indexed Job per stage without any volume claim, staging in an emptyDir, credentials by Secret name only", async () => {
    const { dir, config } = s3Job(`s3://${BUCKET}/out-k8s`, ["dedup:", "  exact: true", "  near: true", "  partitions: 5"]);
    const staging = tempDir();
    const { stdout } = await launch(
      dir,
      ["k8s", config, "--image", "lwm:1", "--secret", "lwm-s3", "--world-size", "4", "--job-name", "cur"],
      { LWM_STAGING_DIR: staging },
    );
    // The launch's own staging folder (it held the plan it uploaded) is gone.
    expect(readdirSync(staging)).toEqual([]);
    // Nothing written beside the config but the launch files: no local folder named after the URI.
    expect(readdirSync(dir).sort()).toEqual(["job.yaml", "lwm-launch"]);
    const launchDir = join(dir, "lwm-launch/cur");
    expect(readdirSync(launchDir).sort()).toEqual([
      "k8s-clusters.yaml",
      "k8s-config.yaml",
      "k8s-finalize.yaml",
      "k8s-records.yaml",
      "k8s-select.yaml",
      "k8s-signatures.yaml",
    ]);
    // The launch claimed the output in the bucket, as it claims a local folder.
    expect(await objectKeys("out-k8s/")).toEqual(["out-k8s/tasks/plan.json"]);

    const configMap = parse(readFileSync(join(launchDir, "k8s-config.yaml"), "utf8"));
    expect(configMap).toMatchObject({ kind: "ConfigMap", metadata: { name: "cur-config" } });
    expect(configMap.data["config.yaml"]).toBe(readFileSync(config, "utf8"));
    const jobs = ["signatures", "clusters", "select", "records"].map((stage) =>
      parse(readFileSync(join(launchDir, `k8s-${stage}.yaml`), "utf8")),
    );
    for (const job of [...jobs, parse(readFileSync(join(launchDir, "k8s-finalize.yaml"), "utf8"))]) {
      expect(keysOf(job)).not.toContain("persistentVolumeClaim");
      expect(keysOf(job)).not.toContain("hostPath");
      const pod = job.spec.template.spec;
      expect(pod.volumes).toEqual([
        { name: "lwm-config", configMap: { name: "cur-config" } },
        { name: "lwm-staging", emptyDir: { sizeLimit: "20Gi" } },
      ]);
      const [container] = pod.containers;
      expect(container.volumeMounts).toContainEqual({ name: "lwm-config", mountPath: config, subPath: "config.yaml", readOnly: true });
      expect(container.env).toContainEqual({ name: "LWM_STAGING_DIR", value: K8S_STAGING_MOUNT });
      expect(container.envFrom).toEqual([{ secretRef: { name: "lwm-s3" } }]);
    }
    expect(jobs.map((job) => job.spec.completions)).toEqual([3, 4, 1, 3]);
    expect(jobs[0].spec.template.spec.containers[0].args.slice(0, 6)).toEqual([
      "run",
      config,
      "--output",
      `s3://${BUCKET}/out-k8s`,
      "--stage",
      "signatures",
    ]);
    // The ConfigMap is applied first; the recipe for the Secret has placeholders, never values.
    const printed = stdout
      .slice(stdout.indexOf("then:\n"))
      .split("\n")
      .slice(1, 3)
      .map((line) => line.trim());
    expect(printed).toEqual([
      `kubectl apply -f '${join(launchDir, "k8s-config.yaml")}'`,
      `kubectl apply -f '${join(launchDir, "k8s-signatures.yaml")}'`,
    ]);
    expect(stdout).toContain(
      "kubectl create secret generic lwm-s3 --from-literal=AWS_ACCESS_KEY_ID=… --from-literal=AWS_SECRET_ACCESS_KEY=… --from-literal=AWS_ENDPOINT_URL=…",
    );
    for (const text of [stdout, ...readdirSync(launchDir).map((name) => readFileSync(join(launchDir, name), "utf8"))]) {
      expect(text).not.toContain(S3_SECRET);
      expect(text).not.toContain(S3_KEY_ID);
      expect(text).not.toContain(moto.endpoint);
    }
  });

  it("k8s: the pods' commands, run as the kubelet would start them (ConfigMap file, staging folder, Secret's keys), give the job's manifest", async () => {
    const { dir, config } = s3Job(`s3://${BUCKET}/out-pods`, ["dedup:", "  exact: true", "  partitions: 2"]);
    await launch(dir, ["k8s", config, "--image", "lwm:1", "--secret", "lwm-s3", "--world-size", "2", "--launch-dir", "k8s"]);
    const launchDir = join(dir, "k8s");
    const configMap = parse(readFileSync(join(launchDir, "k8s-config.yaml"), "utf8"));
    // The ConfigMap's file, where the pods mount it: the config's path here.
    writeFileSync(config, configMap.data["config.yaml"]);
    // The Secret holds what the launching shell had; nothing else of this machine's environment reaches a pod.
    const secret = { AWS_ACCESS_KEY_ID: S3_KEY_ID, AWS_SECRET_ACCESS_KEY: S3_SECRET, AWS_ENDPOINT_URL: moto.endpoint };
    const pod = async (file: string, index: number) => {
      const job = parse(readFileSync(join(launchDir, file), "utf8"));
      const [container] = job.spec.template.spec.containers;
      const staging = join(tempDir(), "emptyDir");
      mkdirSync(staging);
      const mount = container.volumeMounts.find((m: { name: string }) => m.name === "lwm-staging").mountPath;
      const env: Record<string, string> = { JOB_COMPLETION_INDEX: String(index), ...secret };
      for (const { name, value } of container.env) env[name] = kubeletExpand(value, env).replace(mount, staging);
      const args = container.args.map((arg: string) => kubeletExpand(arg, env));
      await run(process.execPath, [CLI, ...args], {
        cwd: tempDir(),
        // HOME for the tokenizer cache only (the image has its own).
        env: { PATH: process.env.PATH, HOME: process.env.HOME, AWS_REGION: "us-east-1", ...env },
      });
      return job.spec.completions ?? 1;
    };
    for (const stage of ["signatures", "clusters", "select", "records"]) {
      const completions = await pod(`k8s-${stage}.yaml`, 0);
      for (let index = 1; index < completions; index++) await pod(`k8s-${stage}.yaml`, index);
    }
    await pod("k8s-finalize.yaml", 0);
    const keys = await objectKeys("out-pods/");
    expect(keys).toContain("out-pods/manifest.json");
    expect(keys.filter((key) => key.startsWith("out-pods/data/")).length).toBeGreaterThan(0);
  });

  it("k8s: refuses to run without naming a Secret (or --no-secret), before claiming the output", async () => {
    const { dir, config } = s3Job(`s3://${BUCKET}/out-nosecret`);
    const refused = launch(dir, ["k8s", config, "--image", "lwm:1"]);
    await expect(refused).rejects.toMatchObject({ stderr: expect.stringContaining("--secret <name>") });
    const { stderr } = await refused.catch((err: { stderr: string }) => err);
    expect(stderr).toContain("kubectl create secret generic lwm-s3 --from-literal=AWS_ACCESS_KEY_ID=…");
    expect(stderr).toContain("--no-secret");
    // Names and sizes Kubernetes would refuse: refused before anything is claimed too.
    const badName = await launch(dir, ["k8s", config, "--image", "lwm:1", "--secret", "My_Secret"]).catch((err: { stderr: string }) => err);
    expect(badName.stderr).toMatch(/^lwm-data: k8s launch: secretName must be a DNS-1123 subdomain/);
    const badSize = await launch(dir, ["k8s", config, "--image", "lwm:1", "--no-secret", "--staging-size", "lots"]).catch(
      (err: { stderr: string }) => err,
    );
    expect(badSize.stderr).toMatch(/stagingSizeLimit must be a Kubernetes quantity/);
    expect(readdirSync(dir)).toEqual(["job.yaml"]);
    expect(await objectKeys("out-nosecret/")).toEqual([]);

    // IRSA / workload identity: no Secret, no envFrom.
    const { stdout } = await launch(dir, ["k8s", config, "--image", "lwm:1", "--no-secret", "--staging-size", "50Gi"]);
    const job = parse(readFileSync(join(dir, "lwm-launch/lwm-data/k8s-job.yaml"), "utf8"));
    expect(job.spec.template.spec.containers[0]).not.toHaveProperty("envFrom");
    expect(job.spec.template.spec.volumes).toContainEqual({ name: "lwm-staging", emptyDir: { sizeLimit: "50Gi" } });
    expect(stdout).toMatch(/no Secret \(--no-secret\)/);
  });

  it("k8s: refuses paths that mean nothing in a pod without the shared volume, naming each", async () => {
    const { dir, config } = s3Job(`s3://${BUCKET}/out-relative`, [
      "render:",
      "  system_prompts_dir: prompts",
      "decontaminate:",
      "  benchmarks:",
      "    - path: bench/*.jsonl",
    ]);
    const args = ["k8s", config, "--image", "lwm:1", "--secret", "lwm-s3"];
    const { stderr } = await launch(dir, args).catch((err: { stderr: string }) => err);
    expect(stderr).toMatch(/object-storage mode/);
    expect(stderr).toContain("render.system_prompts_dir: prompts is relative to the config's folder");
    expect(stderr).toContain("decontaminate.benchmarks[0].path: bench/*.jsonl is relative to the config's folder");
    expect(stderr).not.toContain("inputs[0]");
    const flags = await launch(dir, [...args.slice(0, 2), "--input", "in/*.jsonl", ...args.slice(2)]).catch(
      (err: { stderr: string }) => err,
    );
    expect(flags.stderr).toContain("--input in/*.jsonl: a relative path");

    // A local output without a volume, or --object-storage with one.
    const local = s3Job("out");
    const noVolume = await launch(local.dir, ["k8s", local.config, "--image", "lwm:1"]).catch((err: { stderr: string }) => err);
    expect(noVolume.stderr).toMatch(/--pvc <claim>.*\n.*-o s3:\/\/bucket\/prefix/);
    const forced = await launch(local.dir, ["k8s", local.config, "--image", "lwm:1", "--object-storage", "--secret", "s"]).catch(
      (err: { stderr: string }) => err,
    );
    expect(forced.stderr).toMatch(/output out: must be an s3:\/\/ URI/);
    expect(readdirSync(dir)).toEqual(["job.yaml"]);
    expect(readdirSync(local.dir)).toEqual(["job.yaml"]);
  });

  it("slurm: s3:// inputs and output pass through as they are; the scripts and logs go to a local launch folder", async () => {
    const { dir, config } = s3Job("out-local-never-used");
    const { stdout } = await launch(dir, ["slurm", config, "-o", `s3://${BUCKET}/out-slurm`, "--world-size", "2"]);
    expect(readdirSync(dir).sort()).toEqual(["job.yaml", "lwm-launch"]);
    const launchDir = join(dir, "lwm-launch/lwm-data");
    expect(readdirSync(launchDir).sort()).toEqual(["logs", "slurm-array.sbatch", "slurm-finalize.sbatch"]);
    const script = readFileSync(join(launchDir, "slurm-array.sbatch"), "utf8");
    expect(script).toContain(`run '${config}' --output s3://${BUCKET}/out-slurm \\\n`);
    expect(script).toContain(`#SBATCH --output="${join(launchDir, "logs")}/%x-%A_%a.out"`);
    expect(readFileSync(join(launchDir, "slurm-finalize.sbatch"), "utf8")).toContain(`finalize s3://${BUCKET}/out-slurm\n`);
    expect(stdout).toMatch(/object storage: each task reads AWS_\*/);
    expect(await objectKeys("out-slurm/")).toEqual(["out-slurm/tasks/plan.json"]);
    for (const name of ["slurm-array.sbatch", "slurm-finalize.sbatch"]) {
      expect(readFileSync(join(launchDir, name), "utf8")).not.toContain(S3_SECRET);
    }

    // --launch-dir puts them elsewhere.
    await launch(dir, ["slurm", config, "-o", `s3://${BUCKET}/out-slurm`, "--world-size", "2", "--launch-dir", "batch files"]);
    expect(readdirSync(join(dir, "batch files")).sort()).toEqual(["logs", "slurm-array.sbatch", "slurm-finalize.sbatch"]);
  });
});
