// A real single-node Slurm (test/cluster/slurm-up.sh) running the scripts that launch-slurm.ts
// writes. A prerequisite of `npm test`: without Slurm (or without root to start its daemons) the
// suite fails saying how to install it (as root: bash test/cluster/install-slurm.sh), unless the
// developer opted out with LWM_TEST_SKIP=slurm; then it is skipped and the run's summary says so.
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { GetObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SlurmLaunchSpec, slurmArrayScript, slurmFinalizeScript } from "../sharding/launch-slurm.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { expectSameBytes, products, writeCorpus } from "./scale-helpers.ts";
import { startFakeJudge } from "./support/fake-judge.ts";
import { MotoServer, S3_SECRET } from "./support/moto-server.ts";
import { scaleReference } from "./support/scale-reference.ts";
import { optedOut, skippedTitle } from "./support/test-skips.ts";

const exec = promisify(execFile);
const CLUSTER = join(ROOT, "test/cluster");
const hasSlurm = spawnSync("sh", ["-c", "command -v sbatch"]).status === 0;
const isRoot = process.getuid?.() === 0;
const missing = !hasSlurm ? "sbatch is not on PATH" : !isRoot ? "not root (the test starts slurmctld, slurmd and munged)" : undefined;
const skip = missing !== undefined && optedOut("slurm");
if (missing && !skip)
  throw new Error(
    `the Slurm test cannot run: ${missing}. As root, install a single-node Slurm with \`bash test/cluster/install-slurm.sh\` (Debian packages, as .ci/run does), or set LWM_TEST_SKIP=slurm to leave this suite out`,
  );
const title = skip ? skippedTitle("real single-node Slurm", `LWM_TEST_SKIP=slurm, ${missing}`) : "real single-node Slurm";

let work = "";
let env: NodeJS.ProcessEnv = {};

async function slurm(command: string, args: string[]): Promise<string> {
  return (await exec(command, args, { env, encoding: "utf8" })).stdout;
}

/** Everything that explains a stuck or failed job: a drained node leaves an array pending forever. */
async function diagnostics(): Promise<string> {
  const parts = [];
  for (const [command, args] of [
    ["sinfo", ["-R"]],
    ["squeue", []],
  ] as const) {
    parts.push(`$ ${command} ${args.join(" ")}\n${await slurm(command, [...args]).catch((error: Error) => error.message)}`);
  }
  for (const log of ["slurmctld.log", "slurmd.log"]) {
    const path = join(work, "log", log);
    if (existsSync(path)) parts.push(`--- ${log}\n${readFileSync(path, "utf8").split("\n").slice(-30).join("\n")}`);
  }
  return parts.join("\n");
}

/**
 * Polls `squeue -h -j` every 0.5 s until none of the jobs is queued or running (no sacct without slurmdbd).
 * The deadline is a hang net that ends the test with Slurm's own diagnostics, not a judgement of speed:
 * jobs that take ~40 s on an idle machine get 4 minutes or more, inside the test's 5 (vitest.config.ts).
 */
async function waitForJobs(ids: string[], timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const queued = await slurm("squeue", ["-h", "-j", ids.join(",")]).catch(() => "");
    if (queued.trim() === "") return;
    if (Date.now() > deadline)
      throw new Error(`jobs ${ids.join(",")} still queued after ${timeoutMs} ms:\n${queued}\n${await diagnostics()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

interface JobRecord {
  taskId?: number;
  state: string;
  exitCode: string;
  reason: string;
  start: string;
  end: string;
}

/** `scontrol -o show job`: one line per array task, kept for MinJobAge (300 s) after the end. */
async function jobRecords(id: string): Promise<JobRecord[]> {
  const field = (line: string, name: string) => new RegExp(`\\b${name}=(\\S+)`).exec(line)?.[1] ?? "";
  const lines = (await slurm("scontrol", ["-o", "show", "job", id])).trim().split("\n");
  return lines
    .map((line) => ({
      taskId: field(line, "ArrayTaskId") === "" ? undefined : Number(field(line, "ArrayTaskId")),
      state: field(line, "JobState"),
      exitCode: field(line, "ExitCode"),
      reason: field(line, "Reason"),
      start: field(line, "StartTime"),
      end: field(line, "EndTime"),
    }))
    .sort((a, b) => (a.taskId ?? 0) - (b.taskId ?? 0));
}

/**
 * A stand-in for lwm-data (the lead's test runs the real pipeline): records its argv per array
 * task, and fails the rank named in FAIL_RANK. Lives in a folder whose name needs quoting.
 */
function jobSpec(name: string, extra: Partial<SlurmLaunchSpec> = {}): SlurmLaunchSpec {
  const dir = join(work, `${name} it's`);
  mkdirSync(join(dir, "logs"), { recursive: true });
  const stub = join(dir, "fake lwm-data.sh");
  writeFileSync(
    stub,
    `#!/bin/bash
set -euo pipefail
name=\${SLURM_ARRAY_TASK_ID:+task-$SLURM_ARRAY_TASK_ID}
printf '%s\\0' "$@" > "$(dirname "$0")/\${name:-finalize}.argv"
if [[ -n "\${FAIL_RANK:-}" && "$FAIL_RANK" == "\${SLURM_ARRAY_TASK_ID:-}" ]]; then exit 3; fi
`,
  );
  chmodSync(stub, 0o755);
  return {
    jobName: name,
    configPath: join(dir, "job.yaml"),
    outputDir: join(dir, "out"),
    arraySize: 3,
    cpusPerTask: 1,
    workersPerTask: 1,
    lwmData: [stub],
    logDir: join(dir, "logs"),
    ...extra,
  };
}

async function submit(script: string, file: string, args: string[] = []): Promise<string> {
  writeFileSync(file, script);
  return (await slurm("sbatch", ["--parsable", ...args, file])).trim().split(";")[0] ?? "";
}

/**
 * A corpus with duplicates for curation: two generated files, and a third holding exact copies
 * (new ids) of three of their longest trajectories and near copies (one word changed in the
 * longest observation) of the next three.
 */
function curationJob(): { config: string; dir: string; copies: string[] } {
  const dir = tempDir("lwm-slurm-curate-");
  writeCorpus(join(dir, "corpus-a.jsonl"), 60, 1);
  writeCorpus(join(dir, "corpus-b.jsonl"), 40, 2);
  type Row = { id: string; turns: { action: string; observation: string }[] };
  const rows = [
    ...readFileSync(join(dir, "corpus-a.jsonl"), "utf8").split("\n"),
    ...readFileSync(join(dir, "corpus-b.jsonl"), "utf8").split("\n"),
  ]
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row & Record<string, unknown>);
  const size = (row: Row) => row.turns.reduce((sum, turn) => sum + turn.observation.length, 0);
  const long = [...rows].sort((a, b) => size(b) - size(a) || a.id.localeCompare(b.id));
  const copies = [
    ...long.slice(0, 3).map((row) => ({ ...row, id: `${row.id}-exact` })),
    ...long.slice(3, 6).map((row) => {
      const turns = structuredClone(row.turns);
      const longest = turns.reduce((a, b) => (b.observation.length > a.observation.length ? b : a));
      const changed = longest.observation.replace("return x", "return y");
      if (changed === longest.observation) throw new Error(`${row.id}: nothing to change`);
      longest.observation = changed;
      return { ...row, id: `${row.id}-near`, turns };
    }),
  ];
  writeFileSync(join(dir, "corpus-c.jsonl"), `${copies.map((row) => JSON.stringify(row)).join("\n")}\n`);
  const config = writeConfig(
    [
      "inputs:",
      "  - path: corpus-*.jsonl",
      "input:",
      "  task_bytes: 20000",
      "output:",
      "  num_buckets: 2",
      "  max_shard_bytes: 8000",
      "  row_group_rows: 8",
      "dedup:",
      "  exact: true",
      "  near: true",
      "",
    ].join("\n"),
    dir,
  );
  return { config, dir, copies: copies.map((row) => row.id) };
}

/** Every object under `prefix` of a bucket (relative name → bytes). */
async function bucketObjects(moto: MotoServer, bucket: string, prefix: string): Promise<Map<string, Buffer>> {
  const client = moto.client();
  const found = new Map<string, Buffer>();
  const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  for (const object of page.Contents ?? []) {
    const body = await client.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key }));
    const bytes = await (body.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
    found.set((object.Key as string).slice(prefix.length), Buffer.from(bytes));
  }
  return found;
}

function argv(spec: SlurmLaunchSpec, name: string): string[] {
  return readFileSync(join(spec.configPath, "..", `${name}.argv`), "utf8")
    .split("\0")
    .slice(0, -1);
}

describe.skipIf(skip)(title, () => {
  beforeAll(async () => {
    work = tempDir("lwm-slurm-");
    await exec("bash", [join(CLUSTER, "slurm-up.sh"), work], { encoding: "utf8" }).catch((error: Error & { stderr?: string }) => {
      throw new Error(`slurm-up.sh failed:\n${error.stderr ?? error.message}`);
    });
    env = { ...process.env, SLURM_CONF: join(work, "slurm.conf") };
  });

  afterAll(async () => {
    if (work === "") return;
    await exec("bash", [join(CLUSTER, "slurm-down.sh"), work]);
    rmSync(work, { recursive: true, force: true });
  });

  it("runs the generated job array, one rank per task, then the afterok finalize job", async () => {
    const spec = jobSpec("lwm ok");
    const arrayId = await submit(slurmArrayScript(spec), join(work, "ok-array.sbatch"));
    const finalizeId = await submit(
      slurmFinalizeScript(spec, { afterJobId: arrayId, condition: "afterok" }),
      join(work, "ok-finalize.sbatch"),
    );
    await waitForJobs([arrayId, finalizeId]);

    const tasks = await jobRecords(arrayId);
    expect(tasks.map(({ taskId, state, exitCode }) => ({ taskId, state, exitCode }))).toEqual(
      [0, 1, 2].map((taskId) => ({ taskId, state: "COMPLETED", exitCode: "0:0" })),
    );
    for (const rank of [0, 1, 2]) {
      expect(argv(spec, `task-${rank}`)).toEqual([
        "run",
        spec.configPath,
        "--output",
        spec.outputDir,
        "--rank",
        String(rank),
        "--world-size",
        "3",
        "--workers",
        "1",
        "--progress",
        "json",
      ]);
    }
    const [finalize] = await jobRecords(finalizeId);
    expect(finalize).toMatchObject({ state: "COMPLETED", exitCode: "0:0" });
    // Slurm times have 1 s resolution: the follow-up starts no earlier than the last task ends.
    const lastEnd = tasks.map((task) => task.end).sort()[tasks.length - 1] ?? "";
    expect(lastEnd).toMatch(/^\d{4}-/);
    expect((finalize?.start ?? "") >= lastEnd).toBe(true);
    expect(argv(spec, "finalize")).toEqual(["finalize", spec.outputDir]);
    expect(readdirSync(spec.logDir).sort()).toEqual([
      `lwm ok-${arrayId}_0.out`,
      `lwm ok-${arrayId}_1.out`,
      `lwm ok-${arrayId}_2.out`,
      `lwm ok-finalize-${finalizeId}.out`,
    ]);
  });

  it("reports a failed rank's exit code; afterany finalize still runs, afterok never would", async () => {
    const spec = jobSpec("lwm fail", { env: { FAIL_RANK: "1" } });
    const arrayId = await submit(slurmArrayScript(spec), join(work, "fail-array.sbatch"));
    const finalizeId = await submit(slurmFinalizeScript(spec, { afterJobId: arrayId }), join(work, "fail-finalize.sbatch"));
    const blockedId = await submit(
      slurmFinalizeScript(spec, { afterJobId: arrayId, condition: "afterok" }),
      join(work, "fail-blocked.sbatch"),
    );
    await waitForJobs([arrayId, finalizeId]);

    const tasks = await jobRecords(arrayId);
    expect(tasks.map(({ taskId, state, exitCode }) => ({ taskId, state, exitCode }))).toEqual([
      { taskId: 0, state: "COMPLETED", exitCode: "0:0" },
      { taskId: 1, state: "FAILED", exitCode: "3:0" },
      { taskId: 2, state: "COMPLETED", exitCode: "0:0" },
    ]);
    expect((await jobRecords(finalizeId))[0]).toMatchObject({ state: "COMPLETED", exitCode: "0:0" });
    // The afterok job stays pending for good: that is why finalize defaults to afterany.
    expect((await jobRecords(blockedId))[0]).toMatchObject({ state: "PENDING", reason: "DependencyNeverSatisfied" });
    await slurm("scancel", [blockedId]);
  });

  it("a failed stage cancels the stages after it (--kill-on-invalid-dep); the afterany finalize still runs", async () => {
    const spec = jobSpec("lwm chain", { env: { FAIL_RANK: "1" } });
    const first = await submit(slurmArrayScript(spec, "signatures"), join(work, "chain-signatures.sbatch"));
    const second = await submit(slurmArrayScript(spec, "clusters"), join(work, "chain-clusters.sbatch"), [`--dependency=afterok:${first}`]);
    const finalizeId = await submit(slurmFinalizeScript(spec), join(work, "chain-finalize.sbatch"), [`--dependency=afterany:${second}`]);
    await waitForJobs([first, second, finalizeId]);

    expect((await jobRecords(first)).map(({ taskId, state }) => ({ taskId, state }))).toEqual([
      { taskId: 0, state: "COMPLETED" },
      { taskId: 1, state: "FAILED" },
      { taskId: 2, state: "COMPLETED" },
    ]);
    // Never started: cancelled rather than left pending with DependencyNeverSatisfied.
    const cancelled = await jobRecords(second);
    expect(
      cancelled.every((task) => task.state === "CANCELLED"),
      JSON.stringify(cancelled),
    ).toBe(true);
    expect(existsSync(join(spec.configPath, "..", "finalize.argv"))).toBe(true);
    expect((await jobRecords(finalizeId))[0]).toMatchObject({ state: "COMPLETED", exitCode: "0:0" });
  });

  it("lwm-data launch slurm --submit runs the real pipeline as a 3-rank array; the result equals the single-process run", async () => {
    const { config, output: reference } = await scaleReference();
    const expected = products(reference);

    const out = tempDir("lwm-slurm-out-");
    const cli = join(ROOT, "bin/lwm-data.js");
    const { stdout } = await exec(
      process.execPath,
      [cli, "launch", "slurm", config, "-o", out, "--world-size", "3", "--workers", "1", "--job-name", "lwm-real", "--submit"],
      { env, encoding: "utf8" },
    );
    const ids = /submitted array job (\d+) and finalize job (\d+)/.exec(stdout);
    expect(ids, stdout).not.toBeNull();
    const [arrayId, finalizeId] = [ids?.[1] as string, ids?.[2] as string];
    await waitForJobs([arrayId, finalizeId], 240_000);

    const tasks = await jobRecords(arrayId);
    const logs = join(out, "launch/logs");
    const logText = () =>
      readdirSync(logs)
        .map((name) => `--- ${name}\n${readFileSync(join(logs, name), "utf8").slice(-2000)}`)
        .join("\n");
    expect(
      tasks.map(({ taskId, state, exitCode }) => ({ taskId, state, exitCode })),
      logText(),
    ).toEqual([0, 1, 2].map((taskId) => ({ taskId, state: "COMPLETED", exitCode: "0:0" })));
    expect((await jobRecords(finalizeId))[0], logText()).toMatchObject({ state: "COMPLETED", exitCode: "0:0" });
    // Cluster logs carry JSON progress lines.
    expect(readFileSync(join(logs, `lwm-real-${arrayId}_0.out`), "utf8")).toMatch(/\{"event":"start"/);
    const made = products(out);
    for (const path of [...made.keys()]) if (path.startsWith("launch/")) made.delete(path);
    expectSameBytes(made, expected);
  });

  it("lwm-data launch slurm --submit with an s3:// output: every rank and finalize write to the bucket, the same bytes as the single-process run", async () => {
    const { config, output: reference } = await scaleReference();
    const expected = products(reference);

    const moto = await new MotoServer().start();
    try {
      await moto.createBucket("slurm-out");
      const cli = join(ROOT, "bin/lwm-data.js");
      // sbatch passes the submitting environment on: the ranks find the endpoint and credentials there.
      const s3env = { ...moto.env(), SLURM_CONF: env.SLURM_CONF, LWM_STAGING_DIR: tempDir("lwm-slurm-staging-") };
      const launchDir = tempDir("lwm-slurm-launch-");
      const { stdout } = await exec(
        process.execPath,
        [cli, "launch", "slurm", config, "-o", "s3://slurm-out/run", "--world-size", "3", "--workers", "1", "--job-name", "lwm-s3"].concat([
          "--launch-dir",
          launchDir,
          "--submit",
        ]),
        { env: s3env, encoding: "utf8" },
      );
      const ids = /submitted array job (\d+) and finalize job (\d+)/.exec(stdout);
      expect(ids, stdout).not.toBeNull();
      const [arrayId, finalizeId] = [ids?.[1] as string, ids?.[2] as string];
      await waitForJobs([arrayId, finalizeId], 240_000);
      const logs = readdirSync(launchDir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith(".out"))
        .map((entry) => `--- ${entry.name}\n${readFileSync(join(entry.parentPath, entry.name), "utf8").slice(-2000)}`)
        .join("\n");
      expect(
        (await jobRecords(arrayId)).map(({ state }) => state),
        logs,
      ).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
      expect((await jobRecords(finalizeId))[0]?.state, logs).toBe("COMPLETED");
      // The bucket holds what the local run wrote, byte for byte (task bookkeeping aside).
      const written = await bucketObjects(moto, "slurm-out", "run/");
      for (const path of [...written.keys()]) if (path.startsWith("tasks/")) written.delete(path);
      expectSameBytes(written, expected);
      expect(logs).not.toContain(S3_SECRET);
    } finally {
      moto.stop();
    }
  });

  it("lwm-data launch slurm --submit runs a curation job as a chain of stage arrays; the result equals a local lwm-data run", async () => {
    const { config, copies } = curationJob();
    const reference = tempDir("lwm-slurm-ref-");
    const cli = join(ROOT, "bin/lwm-data.js");
    await exec(process.execPath, [cli, "run", config, "-o", reference, "--workers", "1", "--progress", "none"], { encoding: "utf8" });
    const expected = products(reference);

    const out = tempDir("lwm-slurm-out-");
    const { stdout } = await exec(
      process.execPath,
      [cli, "launch", "slurm", config, "-o", out, "--world-size", "3", "--workers", "1", "--job-name", "lwm-cur", "--submit"],
      { env, encoding: "utf8" },
    );
    const submitted = /submitted (.*) \(each afterok on the one before\) and finalize job (\d+)/.exec(stdout);
    expect(submitted, stdout).not.toBeNull();
    const stages = [...(submitted?.[1] ?? "").matchAll(/(\w+) job (\d+)/g)].map((m) => ({ stage: m[1] as string, id: m[2] as string }));
    expect(stages.map(({ stage }) => stage)).toEqual(["signatures", "clusters", "select", "records"]);
    const finalizeId = submitted?.[2] as string;
    await waitForJobs([...stages.map(({ id }) => id), finalizeId], 280_000);

    const logs = join(out, "launch/logs");
    const logText = () =>
      readdirSync(logs)
        .map((name) => `--- ${name}\n${readFileSync(join(logs, name), "utf8").slice(-2000)}`)
        .join("\n");
    const tasks = JSON.parse(readFileSync(join(out, "tasks/plan.json"), "utf8")).tasks.length as number;
    expect(tasks).toBeGreaterThan(3);
    let previousEnd = "";
    for (const { stage, id } of stages) {
      const records = await jobRecords(id);
      const ranks = stage === "select" ? 1 : 3;
      expect(
        records.map(({ taskId, state, exitCode }) => ({ taskId, state, exitCode })),
        `${stage}\n${logText()}`,
      ).toEqual(Array.from({ length: ranks }, (_, taskId) => ({ taskId, state: "COMPLETED", exitCode: "0:0" })));
      // Each stage starts no earlier than the one before ended (1 s resolution).
      const starts = records.map((task) => task.start).sort();
      expect((starts[0] ?? "") >= previousEnd, `${stage} started before the stage before it ended`).toBe(true);
      previousEnd = records.map((task) => task.end).sort()[records.length - 1] ?? "";
    }
    expect((await jobRecords(finalizeId))[0], logText()).toMatchObject({ state: "COMPLETED", exitCode: "0:0" });

    // Same shards, filtered/ lists, stats and manifest, byte for byte (curate/ is internal, launch/ ours).
    const made = products(out);
    for (const path of [...made.keys()]) if (path.startsWith("launch/") || path.startsWith("curate/")) made.delete(path);
    for (const path of [...expected.keys()]) if (path.startsWith("curate/")) expected.delete(path);
    expectSameBytes(made, expected);
    expect([...made.keys()].some((path) => /^data\/.*\.parquet$/.test(path))).toBe(true);

    // The copies were found and removed (corpus-c comes last in input order, so the originals stay);
    // the generated files may hold a few duplicates of their own, hence "contains".
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    const { records_in, samples_out, quarantined, filtered, filtered_by_stage } = manifest.counts;
    expect(records_in).toBe(samples_out + quarantined + filtered);
    const entries = [...made.keys()]
      .filter((path) => /^filtered\/.*\.jsonl$/.test(path))
      .flatMap((path) => (made.get(path) as Buffer).toString("utf8").split("\n").filter(Boolean))
      .map((line) => JSON.parse(line) as { id: string; stage: string });
    expect(entries).toHaveLength(filtered);
    expect(filtered_by_stage.exact + filtered_by_stage.near).toBe(filtered);
    const removed = entries.map(({ id, stage }) => `${stage} ${id}`);
    for (const copy of copies) expect(removed).toContain(`${copy.endsWith("-exact") ? "exact" : "near"} ${copy}`);
  });

  it("lwm-data launch slurm --submit runs configs/select-resolved.yaml (curation, a judge, filters, selection) as stage arrays; the result equals a local run", async () => {
    const judge = await startFakeJudge();
    try {
      // sbatch passes the submitting environment on: every rank finds the judge there.
      const judged = { ...env, LWM_JUDGE_URL: judge.url };
      const config = join(ROOT, "configs/select-resolved.yaml");
      const cli = join(ROOT, "bin/lwm-data.js");
      const reference = tempDir("lwm-slurm-select-ref-");
      await exec(process.execPath, [cli, "run", config, "-o", reference, "--workers", "1", "--progress", "none"], {
        env: judged,
        encoding: "utf8",
      });
      const expected = products(reference);

      const out = tempDir("lwm-slurm-select-");
      const { stdout } = await exec(
        process.execPath,
        [cli, "launch", "slurm", config, "-o", out, "--world-size", "3", "--workers", "1", "--job-name", "lwm-sel", "--submit"],
        { env: judged, encoding: "utf8" },
      );
      const submitted = /submitted (.*) \(each afterok on the one before\) and finalize job (\d+)/.exec(stdout);
      expect(submitted, stdout).not.toBeNull();
      const stages = [...(submitted?.[1] ?? "").matchAll(/(\w+) job (\d+)/g)].map((m) => ({ stage: m[1] as string, id: m[2] as string }));
      expect(stages.map(({ stage }) => stage)).toEqual(["signatures", "clusters", "select", "score", "facts", "selection", "records"]);
      await waitForJobs([...stages.map(({ id }) => id), submitted?.[2] as string], 280_000);
      for (const { stage, id } of stages) {
        const records = await jobRecords(id);
        expect(
          records.map(({ state, exitCode }) => ({ state, exitCode })),
          stage,
        ).toEqual(records.map(() => ({ state: "COMPLETED", exitCode: "0:0" })));
      }
      // Same shards, filtered/ lists, stats, manifest and card, byte for byte (the stages' working folders and launch/ aside).
      const internal = /^(launch|curate|select|score)\//;
      const made = products(out);
      for (const path of [...made.keys()]) if (internal.test(path)) made.delete(path);
      for (const path of [...expected.keys()]) if (internal.test(path)) expected.delete(path);
      expectSameBytes(made, expected);
      const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
      expect(manifest.counts.filtered_by_stage.selection).toBeGreaterThan(0);
      expect(manifest.counts.filtered_by_stage.filter).toBeGreaterThan(0);
    } finally {
      await judge.close();
    }
  });
});
