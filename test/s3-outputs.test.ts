import { execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { snapshot, writeCorpus } from "./scale-helpers.ts";
import { startFakeJudge } from "./support/fake-judge.ts";
import { MotoServer, S3_KEY_ID, S3_SECRET } from "./support/moto-server.ts";
import { S3FaultProxy } from "./support/s3-fault-proxy.ts";
import { SELECT_RESOLVED, selectResolvedReference } from "./support/select-resolved-reference.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const BUCKET = "lwm-out";
const moto = new MotoServer();
let client: S3Client;

async function cli(args: string[], env: NodeJS.ProcessEnv = moto.env()): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, env, maxBuffer: 1 << 26 });
}

/** Every object under `prefix` (relative name → bytes). */
async function objects(prefix: string): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      const body = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: object.Key }));
      found.set(
        (object.Key as string).slice(prefix.length),
        Buffer.from(await (body.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray()),
      );
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return found;
}

/** Whether an object exists: one HEAD request (objects() would fetch the whole prefix to tell). */
async function exists(key: string): Promise<boolean> {
  return client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
    () => true,
    (error: { name?: string }) => {
      if (error.name === "NotFound") return false;
      throw error;
    },
  );
}

/** Uploads every file under `dir` to `s3://BUCKET/<prefix><relative path>`. */
async function uploadTree(dir: string, prefix: string): Promise<void> {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}${relative(dir, path)}`, Body: readFileSync(path) }));
  }
}

/**
 * The inputs of a job that exercises every stage an `s3://` output has to carry: trajectories in
 * several tasks and segments, bad lines (quarantine), exact and near dedup (filtered, curate/),
 * a mixture share (count and weights stages) over text documents.
 */
function writeInputs(dir: string): void {
  mkdirSync(join(dir, "mcp"), { recursive: true });
  writeCorpus(join(dir, "corpus.jsonl"), 200, 1);
  // The same trajectories again under other ids: dedup removes them.
  const copies = readFileSync(join(dir, "corpus.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .slice(0, 20)
    .map((line) => line.replace(/"id":"t1-/, '"id":"copy-'));
  writeFileSync(join(dir, "copies.jsonl"), `${copies.join("\n")}\n{"id": "broken", "turns": [\nnot json at all\n`);
  for (const name of readdirSync(join(ROOT, "data/demo/mcp"))) copyFileSync(join(ROOT, "data/demo/mcp", name), join(dir, "mcp", name));
  copyFileSync(join(ROOT, "data/knowledge/handbook.jsonl"), join(dir, "handbook.jsonl"));
}

const JOB = [
  "inputs:",
  "  - path: corpus.jsonl",
  "  - path: copies.jsonl",
  "  - path: mcp/*",
  "  - path: handbook.jsonl",
  "dedup: { exact: true, near: true }",
  "mixture:",
  "  sources:",
  "    knowledge: { share: 0.3 }",
  "output: { num_buckets: 2, max_shard_bytes: 20000, row_group_rows: 8 }",
].join("\n");

let proxy: S3FaultProxy;

beforeAll(async () => {
  await moto.start();
  client = moto.client();
  await moto.createBucket(BUCKET);
  proxy = await new S3FaultProxy(moto.endpoint).start();
});

afterAll(async () => {
  await proxy.stop();
  moto.stop();
});

/** Unfinished multipart uploads under a prefix. */
async function pendingUploads(prefix: string): Promise<string[]> {
  const page = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: prefix }));
  return (page.Uploads ?? []).map((upload) => upload.Key as string);
}

/**
 * Runs the CLI through the fault proxy and kills it (SIGKILL: no cleanup of any kind) as soon as
 * the proxy applies its `faults`-th fault; resolves once the process is gone.
 */
async function killDuring(args: string[], env: NodeJS.ProcessEnv, faults = 1): Promise<void> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let seen = 0;
  const held = new Promise<void>((resolve) => proxy.on("fault", () => ++seen === faults && resolve()));
  const first = await Promise.race([held.then(() => "held" as const), exited.then(() => "exited" as const)]);
  if (first === "exited") throw new Error(`the run ended before the upload it was to be killed in: ${stderr}`);
  child.kill("SIGKILL");
  await exited;
}

/** Trajectories whose observations are random hex (poorly compressible): a few MB make a shard of several MiB. */
function writeNoisyCorpus(path: string, count: number): void {
  let state = 7;
  const hex = (length: number) => {
    let out = "";
    while (out.length < length) {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      out += state.toString(16);
    }
    return out.slice(0, length);
  };
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({ id: `noisy-${i}`, domain: "terminal", task: "dump", turns: [{ action: "xxd -p blob", observation: hex(3000) }] }),
  );
  writeFileSync(path, `${lines.join("\n")}\n`);
}

/** Local and bucket copies of the same inputs, and a config for each: `job(root, output)` gives its YAML. */
async function twinJobs(
  name: string,
  job: (root: string, output: string) => string,
  write: (dir: string) => void,
): Promise<{ local: string; localConfig: string; remoteConfig: string }> {
  const local = tempDir();
  write(join(local, "raw"));
  await uploadTree(join(local, "raw"), `${name}/raw/`);
  return {
    local,
    localConfig: writeConfig(job(join(local, "raw"), join(local, "out")), local),
    remoteConfig: writeConfig(job(`s3://${BUCKET}/${name}/raw`, `s3://${BUCKET}/${name}/out`), tempDir()),
  };
}

describe("outputs in S3-compatible object storage", () => {
  it("writes the same bytes to a bucket as to a local folder, through every stage; verify, stats and dashboard read it there", async () => {
    const local = tempDir();
    writeInputs(join(local, "raw"));
    await uploadTree(join(local, "raw"), "raw/");
    const settings = `${JOB}\n`;
    const localConfig = writeConfig(
      `${settings.replace("output: {", `output: { dir: ${join(local, "out")},`)}input: { task_bytes: 50000, root: ${join(local, "raw")} }\n`,
      local,
    );
    const remoteConfig = writeConfig(
      `${settings.replace("output: {", `output: { dir: s3://${BUCKET}/runs/one,`)}input: { task_bytes: 50000, root: s3://${BUCKET}/raw }\n`,
      tempDir(),
    );
    const staging = tempDir();
    const env = { ...moto.env(), LWM_STAGING_DIR: staging };
    // The local reference in one thread, the bucket run in two: outputs are the same whatever the workers.
    await cli(["run", localConfig, "--progress", "none", "--workers", "1"]);
    const ran = await cli(["run", remoteConfig, "--progress", "none", "--workers", "2"], env);
    expect(ran.stdout).toContain(`s3://${BUCKET}/runs/one/manifest.json`);

    const expected = snapshot(join(local, "out"));
    const written = await objects("runs/one/");
    const manifest = JSON.parse(readFileSync(join(local, "out", "manifest.json"), "utf8"));
    // The job did what it was meant to exercise.
    expect(manifest.tasks.count).toBeGreaterThan(3);
    expect(manifest.counts.quarantined).toBeGreaterThan(0);
    expect(manifest.counts.filtered).toBeGreaterThan(0);
    expect(manifest.mixture).toBeDefined();
    expect([...expected.keys()].filter((name) => name.startsWith("data/")).length).toBeGreaterThan(4);
    // Every file, the manifest and task markers included, is in the bucket byte for byte.
    expect([...written.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [name, bytes] of expected) {
      // A JSON file's difference shows as fields.
      if (name.endsWith(".json")) expect(JSON.parse(written.get(name)?.toString() ?? "null"), name).toEqual(JSON.parse(bytes.toString()));
      expect(written.get(name)?.equals(bytes), name).toBe(true);
    }
    // The staging folder went with the process.
    expect(readdirSync(staging)).toEqual([]);

    // No credential in any object or in what the run printed.
    for (const [name, bytes] of written) {
      const text = bytes.toString("latin1");
      expect(text.includes(S3_SECRET) || text.includes(S3_KEY_ID), name).toBe(false);
    }
    expect(`${ran.stdout}${ran.stderr}`).not.toContain(S3_SECRET);

    // Read where it lies: verify, stats, a static dashboard.
    expect((await cli(["verify", `s3://${BUCKET}/runs/one`], env)).stdout).toMatch(/OK/);
    expect((await cli(["stats", `s3://${BUCKET}/runs/one`], env)).stdout).toMatch(/knowledge/);
    const page = join(tempDir(), "dashboard.html");
    await cli(["dashboard", `s3://${BUCKET}/runs/one`, "--out", page], env);
    expect(existsSync(page)).toBe(true);

    // Rerunning finds every unit done in the bucket and rewrites nothing.
    const again = await cli(["run", remoteConfig, "--progress", "none", "--workers", "1"], env);
    expect(again.stdout).toMatch(/ran 0, already done \d+/);
  });

  it("runs configs/select-resolved.yaml (curation, a judge, filters, selection) as 3 ranks into a bucket: the same bytes as a local run", async () => {
    const judge = await startFakeJudge();
    try {
      const config = SELECT_RESOLVED;
      // The local run (`run` with a fake judge), shared with the other files that compare with it.
      const { output: local } = await selectResolvedReference();
      const env = { ...moto.env(), LWM_JUDGE_URL: judge.url, LWM_STAGING_DIR: tempDir() };
      // Each rank stages only what its stage reads: every stage's `reads` and its predecessors' `provides` must be enough.
      // One thread per rank (what this checks does not depend on threads; a pool thread's boot is ~1 CPU-s a process).
      for (let pass = 0; pass < 12 && !(await exists("runs/select/manifest.json")); pass++)
        for (let rank = 0; rank < 3; rank++)
          await cli(
            [
              "run",
              config,
              "-o",
              `s3://${BUCKET}/runs/select`,
              "--progress",
              "none",
              "--workers",
              "1",
              "--rank",
              String(rank),
              "--world-size",
              "3",
            ],
            env,
          );
      const written = await objects("runs/select/");
      const expected = snapshot(local);
      // Every file — shards, stats, filtered, markers of every stage, the manifest — byte for byte; the
      // score markers hold what each run paid (this one was answered from the local run's cache).
      expect([...written.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [name, bytes] of expected)
        if (!/^score\/task-\d+\.done\.json$/.test(name)) expect(written.get(name)?.equals(bytes), name).toBe(true);
      expect(JSON.parse(written.get("manifest.json")?.toString() ?? "{}").counts.filtered_by_stage.selection).toBeGreaterThan(0);
    } finally {
      await judge.close();
    }
  });

  it("leaves no partial object when killed mid-upload, and the rerun completes it (a multipart upload aborted)", async () => {
    const { local, localConfig, remoteConfig } = await twinJobs(
      "killed-multipart",
      (root, output) =>
        `inputs:\n  - path: corpus.jsonl\ninput: { root: ${root}, task_bytes: 100000000 }\noutput: { dir: ${output}, num_buckets: 1, max_shard_bytes: 1000000000 }\n`,
      (dir) => {
        mkdirSync(dir, { recursive: true });
        writeNoisyCorpus(join(dir, "corpus.jsonl"), 4500);
      },
    );
    await cli(["run", localConfig, "--progress", "none"]);
    const shard = [...snapshot(join(local, "out")).keys()].find((name) => name.startsWith("data/")) as string;
    const size = statSync(join(local, "out", shard)).size;
    // Big enough for a multipart upload of 5 MiB parts.
    expect(size).toBeGreaterThan(5 * 1024 * 1024);
    const key = `killed-multipart/out/${shard}`;
    // The shard's upload: its start (CreateMultipartUpload) goes through, its completion is held back.
    proxy.reset();
    proxy.inject({ operation: "other", key, fault: { kind: "delay", ms: 0 } });
    proxy.inject({ operation: "other", key, fault: { kind: "delay", ms: 600_000 } });
    const env = { ...moto.env(proxy.endpoint), LWM_S3_PART_BYTES: String(5 * 1024 * 1024), LWM_STAGING_DIR: tempDir() };
    await killDuring(["run", remoteConfig, "--progress", "none"], env, 2);
    proxy.removeAllListeners("fault");
    expect(proxy.requests("put", key).length).toBeGreaterThanOrEqual(2);
    // Killed with every part sent but the upload not completed: no object, no marker, no manifest.
    const after = await objects("killed-multipart/out/");
    expect(
      [...after.keys()].filter((name) => name.startsWith("data/") || name.startsWith("tasks/task-") || name === "manifest.json"),
    ).toEqual([]);
    expect(await pendingUploads("killed-multipart/out/")).toEqual([key]);
    expect((await cli(["verify", `s3://${BUCKET}/killed-multipart/out`], env).catch((err) => err)).stdout).toMatch(/manifest/);

    proxy.reset();
    await cli(["run", remoteConfig, "--progress", "none"], env);
    expect(await pendingUploads("killed-multipart/out/")).toEqual([]);
    const written = await objects("killed-multipart/out/");
    const expected = snapshot(join(local, "out"));
    expect([...written.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [name, bytes] of expected) expect(written.get(name)?.equals(bytes), name).toBe(true);
  });

  it("resumes a killed task from the checkpoint in the bucket: finished segments are not redone", async () => {
    const { local, localConfig, remoteConfig } = await twinJobs(
      "killed-resume",
      (root, output) =>
        `inputs:\n  - path: corpus.jsonl\ninput: { root: ${root}, task_bytes: 100000000 }\noutput: { dir: ${output}, num_buckets: 2, max_shard_bytes: 30000, row_group_rows: 16 }\n`,
      (dir) => {
        mkdirSync(dir, { recursive: true });
        writeCorpus(join(dir, "corpus.jsonl"), 400, 4);
      },
    );
    await cli(["run", localConfig, "--progress", "none"]);
    const shards = [...snapshot(join(local, "out")).keys()].filter((name) => name.startsWith("data/")).sort();
    // data/<split>-<bucket>-<task>-<segment>.parquet: hold back a shard of the third segment.
    const segment = (name: string) => Number(/-(\d{4})\.parquet$/.exec(name)?.[1]);
    const late = shards.find((name) => segment(name) === 2) as string;
    const early = shards.filter((name) => segment(name) === 0);
    expect(late).toBeDefined();
    expect(early.length).toBeGreaterThan(0);
    proxy.reset();
    proxy.inject({ operation: "put", key: `killed-resume/out/${late}`, fault: { kind: "delay", ms: 600_000 } });
    const env = { ...moto.env(proxy.endpoint), LWM_STAGING_DIR: tempDir() };
    await killDuring(["run", remoteConfig, "--progress", "none"], env);
    proxy.removeAllListeners("fault");
    const killed = await objects("killed-resume/out/");
    expect(killed.has("tasks/task-00000.checkpoint.json")).toBe(true);
    expect(killed.has("tasks/task-00000.done.json")).toBe(false);

    proxy.reset();
    await cli(["run", remoteConfig, "--progress", "none"], env);
    // The first segment's shards went up once, before the kill: the rerun started after them.
    for (const name of early) expect(proxy.requests("put", `killed-resume/out/${name}`), name).toEqual([]);
    const written = await objects("killed-resume/out/");
    const expected = snapshot(join(local, "out"));
    expect([...written.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [name, bytes] of expected) expect(written.get(name)?.equals(bytes), name).toBe(true);

    // Another job into the same prefix is refused, naming it; --overwrite replaces everything.
    writeFileSync(remoteConfig, readFileSync(remoteConfig, "utf8").replace("num_buckets: 2", "num_buckets: 1"));
    const refused = await cli(["run", remoteConfig, "--progress", "none"], env).catch((err: { stderr: string }) => err);
    expect(refused.stderr).toContain(`s3://${BUCKET}/killed-resume/out holds the output of a different job`);
    await cli(["run", remoteConfig, "--progress", "none", "--overwrite"], env);
    const replaced = [...(await objects("killed-resume/out/")).keys()].filter((name) => name.startsWith("data/"));
    expect(replaced.length).toBeGreaterThan(0);
    // Bucket 00000 only: nothing of the old job's second bucket is left.
    expect(replaced.filter((name) => !/^data\/train-00000-/.test(name))).toEqual([]);
  });
});
