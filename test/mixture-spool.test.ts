import { execFile } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { serialize } from "node:v8";
import { zstdCompressSync } from "node:zlib";
import { GetObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { runCountUnit } from "../src/mixture/count-unit.ts";
import { taskResults } from "../src/mixture/records-source.ts";
import { spoolName } from "../src/mixture/spool.ts";
import { DuplicateIds } from "../src/pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas, planJob } from "../src/pipeline/plan.ts";
import { recordResults } from "../src/pipeline/record-results.ts";
import { stageContext } from "../src/pipeline/stages.ts";
import { loadTaskDecisions } from "../src/pipeline/task-decisions.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { expectSameBytes, products, snapshot } from "./scale-helpers.ts";
import { MotoServer } from "./support/moto-server.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const KNOWLEDGE = join(ROOT, "data/knowledge");

async function cli(...args: string[]): Promise<string> {
  return cliWith(process.env, ...args);
}

async function cliWith(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  const { stdout } = await exec(process.execPath, [CLI, ...args], { cwd: ROOT, env, maxBuffer: 1 << 26 });
  return stdout;
}

/**
 * Trajectories (terminal, mcp) with what the records stage keeps besides tokens: a repeated id
 * (quarantined as a duplicate), secrets (normalization's counters), an empty one (quarantined).
 */
function writeTrajectories(path: string, count: number): void {
  const lines = Array.from({ length: count }, (_, i) => {
    const domain = i % 3 === 0 ? "mcp" : "terminal";
    const secret = i % 7 === 0 ? ` AWS key AKIAIOSFODNN7EXAMPL${i % 10} in the log` : "";
    const turns = Array.from({ length: 1 + (i % 3) }, (_, t) => ({
      action: domain === "mcp" ? `{"name":"read_file","arguments":{"path":"notes/${i}-${t}.md"}}` : `cat src/file_${i}_${t}.py`,
      observation: `${Array.from({ length: 3 + ((i * 7 + t) % 20) }, (_, l) => `line ${l} of record ${i} turn ${t}`).join("\n")}${secret}`,
    }));
    const id = i % 50 === 49 ? `traj-${i - 10}` : `traj-${i}`;
    return JSON.stringify({ id, domain, task: `look at record ${i}`, turns: i === 5 ? [] : turns });
  });
  writeFileSync(path, `${lines.join("\n")}\n`);
}

function shareJob(dir: string, seed = 3): string {
  writeTrajectories(join(dir, "trajectories.jsonl"), 200);
  return writeConfig(
    `inputs:
  - path: trajectories.jsonl
  - path: ${KNOWLEDGE}/explainers.parquet
input: { task_bytes: 30000 }
output: { dir: out, num_buckets: 2, row_group_rows: 16, include_messages: true }
mixture:
  seed: ${seed}
  sources:
    knowledge: { share: 0.3 }
    mcp: { share: 0.3 }
`,
    dir,
  );
}

let replayedJob: Promise<{ dir: string; config: string; out: string }> | undefined;

/**
 * A shareJob() and its local run with 2 workers (the records stage replays the count stage's
 * spools): made on first use and shared by the tests that compare other runs with it.
 */
function replayedRun(): Promise<{ dir: string; config: string; out: string }> {
  replayedJob ??= (async () => {
    const dir = tempDir();
    const config = shareJob(dir);
    const out = join(dir, "replayed");
    await cli("run", config, "--output", out, "--workers", "2", "--progress", "none");
    return { dir, config, out };
  })();
  return replayedJob;
}

/** The records stage's results for a task, computed (not replayed): records, counters, id hashes. */
async function computed(plan: JobPlan, task: number, resumeAfter: number) {
  const counters = new Map<string, number>();
  const duplicates = new DuplicateIds();
  const decisions = await loadTaskDecisions(plan, task);
  const results = await collect(
    recordResults(plan, plan.tasks[task] as JobPlan["tasks"][number], stageContext(plan, counters), {
      duplicates,
      decisions,
      resumeAfter,
    }),
  );
  return { results, counters, hashes: duplicates.hashes() };
}

/** The same through `taskResults`, the records stage's source: replayed when the spool is current. */
async function replayed(plan: JobPlan, task: number, resumeAfter: number) {
  const counters = new Map<string, number>();
  const duplicates = new DuplicateIds();
  const decisions = await loadTaskDecisions(plan, task);
  const source = await taskResults(plan, plan.tasks[task] as JobPlan["tasks"][number], stageContext(plan, counters), {
    duplicates,
    decisions,
    resumeAfter,
    counters,
  });
  const results = await collect(source.results);
  return { spooled: source.spooled, results, counters, hashes: source.duplicates()?.hashes() };
}

describe("the count stage's spool", () => {
  it("replays to the records stage exactly what processing the records again gives, resumed or not; another job's spool is ignored", async () => {
    const dir = tempDir();
    const plan = await planJob(loadConfig(shareJob(dir)));
    expect(plan.tasks.length).toBeGreaterThan(2);
    const out = plan.config.output.dir;
    for (const task of plan.tasks) await runCountUnit(plan, task);
    for (const task of plan.tasks) expect(existsSync(join(out, spoolName(task.index)))).toBe(true);

    let secrets = 0;
    let quarantined = 0;
    for (const task of plan.tasks.map((t) => t.index)) {
      const expected = await computed(plan, task, 0);
      const got = await replayed(plan, task, 0);
      expect(got.spooled).toBe(true);
      expect(got.results).toEqual(expected.results);
      expect(got.counters).toEqual(expected.counters);
      expect(got.hashes).toEqual(expected.hashes);
      // A resumed task: the items after its checkpoint, their counts only.
      const half = Math.floor(expected.results.length / 2);
      const resumed = await computed(plan, task, half);
      const replayedResumed = await replayed(plan, task, half);
      expect(replayedResumed.results).toEqual(resumed.results);
      expect(replayedResumed.counters).toEqual(resumed.counters);
      secrets += [...expected.counters.values()].reduce((sum, n) => sum + n, 0);
      quarantined += expected.results.filter(({ result }) => result.kind === "quarantine").length;
    }
    // The fixture exercises what is spooled beside tokens (else the equalities above prove little).
    expect(secrets).toBeGreaterThan(0);
    expect(quarantined).toBeGreaterThan(1);

    // A spool that breaks mid-way (here: this job's header, one record, no end) fails its task and
    // is deleted, so the rerun processes the records itself.
    const spool = join(out, spoolName(0));
    const frame = (value: unknown) => {
      const body = serialize(value);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(body.length);
      return [length, body];
    };
    const first = (await computed(plan, 0, 0)).results[0];
    const header = { format: 1, ...jobShas(plan) };
    writeFileSync(spool, zstdCompressSync(Buffer.concat([...frame(header), ...frame(first)])));
    await expect(replayed(plan, 0, 0)).rejects.toThrow(/no end frame/);
    expect(existsSync(spool)).toBe(false);
    const recomputed = await replayed(plan, 0, 0);
    expect(recomputed.spooled).toBe(false);
    expect(recomputed.results).toEqual((await computed(plan, 0, 0)).results);

    // Negative control: the same inputs under another config (another seed) do not take this job's spool.
    const other = await planJob(loadConfig(shareJob(tempDir(), 4), { output: out }));
    const source = await taskResults(other, other.tasks[0] as JobPlan["tasks"][number], stageContext(other, new Map()), {
      duplicates: undefined,
      decisions: await loadTaskDecisions(other, 0),
      counters: new Map(),
    });
    expect(source.spooled).toBe(false);
  });

  it("writes the same bytes whether the records stage replays the spool or finds none, and leaves no spool behind", async () => {
    const { dir, config, out: replayedOut } = await replayedRun();
    expect(readdirSync(join(replayedOut, "mixture/spool"))).toEqual([]);

    // Count and weights, then the spools deleted: the records stage processes every record itself.
    const computedOut = join(dir, "computed");
    for (const stage of ["count", "weights"])
      await cli("run", config, "--output", computedOut, "--stage", stage, "--workers", "1", "--progress", "none");
    const spools = readdirSync(join(computedOut, "mixture/spool"));
    expect(spools.length).toBeGreaterThan(2);
    rmSync(join(computedOut, "mixture/spool"), { recursive: true });
    await cli("run", config, "--output", computedOut, "--workers", "1", "--progress", "none");
    expectSameBytes(products(replayedOut), products(computedOut));
    expect(await cli("verify", replayedOut)).toMatch(/OK/);
  });
});

describe("the spool with an s3:// output, stage by stage on fresh machines", () => {
  const moto = new MotoServer();
  const BUCKET = "lwm-spool";
  beforeAll(async () => {
    await moto.start();
    await moto.createBucket(BUCKET);
  });
  afterAll(() => moto.stop());

  /** The names of the objects under a prefix. */
  async function keys(prefix: string): Promise<string[]> {
    const page = await moto.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    return (page.Contents ?? []).map((object) => (object.Key as string).slice(prefix.length));
  }

  it("uploads each task's spool with its count marker, the records unit elsewhere takes it, and none is left: the same bytes as a local run", async () => {
    // The local run to equal: the job run here with 2 workers (shared with the test above).
    const { config, out: local } = await replayedRun();

    const remote = `s3://${BUCKET}/job`;
    // Every stage in its own process and staging folder, as Slurm/K8s stage splits run them.
    const fresh = () => ({ ...moto.env(), LWM_STAGING_DIR: tempDir() });
    await cliWith(fresh(), "run", config, "--output", remote, "--stage", "count", "--workers", "2", "--progress", "none");
    const spools = (await keys("job/")).filter((name) => name.startsWith("mixture/spool/"));
    expect(spools.length).toBeGreaterThan(2);
    expect(spools.every((name) => name.endsWith(".spool.zst"))).toBe(true);
    await cliWith(fresh(), "run", config, "--output", remote, "--stage", "weights", "--progress", "none");
    await cliWith(fresh(), "run", config, "--output", remote, "--workers", "2", "--progress", "none");
    expect((await keys("job/")).filter((name) => name.startsWith("mixture/spool/"))).toEqual([]);

    // Byte for byte, every product (task bookkeeping aside) and nothing else.
    const expected = new Map([...snapshot(local)].filter(([name]) => !name.startsWith("tasks/")));
    const written = (await keys("job/")).filter((name) => !name.startsWith("tasks/"));
    expect(written.sort()).toEqual([...expected.keys()].sort());
    for (const [name, bytes] of expected) {
      const body = await moto.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: `job/${name}` }));
      const got = Buffer.from(await (body.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
      expect(got.equals(bytes), name).toBe(true);
    }
  });
});
