import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { resolveRank } from "../sharding/rank.ts";
import { planTasks, tasksForRank } from "../sharding/task-plan.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { createStopSignal, requestStop } from "../src/pipeline/stop-signal.ts";
import { canonicalJsonlReader } from "../src/read/canonical-jsonl.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { expectSameBytes, products, scaleJob, snapshot, writeCorpus } from "./scale-helpers.ts";
import { copyOutput, scaleReference } from "./support/scale-reference.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

async function runInProcess(config: string, output: string, options: Parameters<typeof runJob>[1] = {}) {
  return runJob(await planJob(loadConfig(config, { output })), { workers: 1, ...options });
}

describe("task planning", () => {
  it("groups small files, splits big splittable files into equal byte ranges, covers every byte once", () => {
    const files = [
      { displayPath: "a", bytes: 10, splittable: false },
      { displayPath: "b", bytes: 15, splittable: true },
      { displayPath: "big", bytes: 100, splittable: true },
      { displayPath: "big.gz", bytes: 100, splittable: false },
      { displayPath: "c", bytes: 1, splittable: true },
    ];
    const tasks = planTasks(files, 30);
    expect(tasks.map((t) => t.pieces)).toEqual([
      [{ file: 0 }, { file: 1 }],
      [{ file: 2, start: 0, end: 25 }],
      [{ file: 2, start: 25, end: 50 }],
      [{ file: 2, start: 50, end: 75 }],
      [{ file: 2, start: 75, end: 100 }],
      [{ file: 3 }],
      [{ file: 4 }],
    ]);
    expect(tasks.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(tasks.reduce((sum, t) => sum + t.bytes, 0)).toBe(226);
    expect(tasksForRank(tasks, 1, 3).map((t) => t.index)).toEqual([1, 4]);
  });

  it("a byte-range split reads every record exactly once, in order, wherever the cuts fall", async () => {
    const dir = tempDir();
    const path = join(dir, "corpus.jsonl");
    const ids = writeCorpus(path, 120);
    const size = readFileSync(path).length;
    await expectExactSplits(path, ids, [997, 4093, 20_000, size - 1, size]);
    // A small file cut at every byte: each line start, middle and end is a cut somewhere. Four
    // records of short observations (~1 KB): each cut is a read of its own.
    const small = join(dir, "small.jsonl");
    await expectExactSplits(small, writeCorpus(small, 4, 1, 3), [1, 2, 3]);
  });

  async function expectExactSplits(path: string, ids: string[], taskBytesList: number[]): Promise<void> {
    const size = readFileSync(path).length;
    for (const taskBytes of taskBytesList) {
      const tasks = planTasks([{ displayPath: "corpus.jsonl", bytes: size, splittable: true }], taskBytes);
      // Each task's range is read on its own (a small file cut at every byte makes thousands): 64
      // at a time, their records then taken in task order, as one after another would give them.
      const read: ReadItem[][] = [];
      for (let first = 0; first < tasks.length; first += 64)
        read.push(
          ...(await Promise.all(
            tasks.slice(first, first + 64).map((task) => {
              const piece = task.pieces[0];
              const range = piece?.start !== undefined ? { start: piece.start, end: piece.end as number } : undefined;
              return collect(canonicalJsonlReader.read(path, { maxLineBytes: 1 << 20, ...(range ? { range } : {}) }));
            }),
          )),
        );
      const seen: string[] = [];
      for (const items of read) {
        for (const item of items) {
          expect(item.kind).toBe("trajectory");
          if (item.kind === "trajectory") seen.push(item.trajectory.id);
        }
      }
      expect(seen, `task_bytes ${taskBytes}`).toEqual(ids);
    }
  }

  it("takes its rank from flags, Slurm array variables or a Kubernetes completion index", () => {
    expect(resolveRank({}, {})).toMatchObject({ rank: 0, worldSize: 1 });
    expect(resolveRank({ rank: "2", worldSize: "3" }, {})).toMatchObject({ rank: 2, worldSize: 3, from: "flags" });
    expect(resolveRank({}, { SLURM_ARRAY_TASK_ID: "7", SLURM_ARRAY_TASK_MIN: "5", SLURM_ARRAY_TASK_COUNT: "4" })).toMatchObject({
      rank: 2,
      worldSize: 4,
      from: "slurm",
    });
    expect(resolveRank({ worldSize: "8" }, { JOB_COMPLETION_INDEX: "5" })).toMatchObject({ rank: 5, worldSize: 8, from: "kubernetes" });
    expect(resolveRank({}, { JOB_COMPLETION_INDEX: "1", LWM_WORLD_SIZE: "2" })).toMatchObject({ rank: 1, worldSize: 2 });
    expect(() => resolveRank({ rank: "3", worldSize: "3" }, {})).toThrow(/rank 3 is not below world size 3/);
    expect(() => resolveRank({}, { JOB_COMPLETION_INDEX: "1" })).toThrow(/--world-size or LWM_WORLD_SIZE/);
    expect(() => resolveRank({ rank: "x", worldSize: "2" }, {})).toThrow(/--rank must be a non-negative integer/);
  });
});

describe("same input and config → same bytes, whatever runs it", () => {
  it("world size 1, 2 and 3 (ranks run separately, one with 2 worker threads) give byte-identical outputs", async () => {
    const { config, output: single, result: whole } = await scaleReference();
    const plan = await planJob(loadConfig(config));
    expect(plan.tasks.length).toBeGreaterThanOrEqual(9);
    expect(plan.tasks.some((t) => t.pieces.some((p) => p.start !== undefined && p.start > 0))).toBe(true);

    expect(whole.manifest).toBeDefined();
    expect(whole.manifest?.counts.records_in).toBe(whole.manifest?.counts.samples_out);
    // Several segments per task, so checkpoints and cuts are exercised.
    expect(whole.manifest?.shards.some((s) => s.path.endsWith("-0002.parquet"))).toBe(true);
    const expected = products(single);

    const two = tempDir();
    const rank0 = await runInProcess(config, two, { rank: { rank: 0, worldSize: 2, from: "flags" } });
    expect(rank0.manifest).toBeUndefined();
    expect(rank0.unfinished).toBeGreaterThan(0);
    const rank1 = await runInProcess(config, two, { rank: { rank: 1, worldSize: 2, from: "flags" } });
    expect(rank1.unfinished).toBe(0);
    expectSameBytes(products(two), expected);

    // One rank with 2 worker threads, the others with 1 (each rank's threads boot anew).
    const three = tempDir();
    const ranks: [rank: string, workers: string][] = [
      ["2", "2"],
      ["0", "1"],
      ["1", "1"],
    ];
    for (const [rank, workers] of ranks) {
      await exec(process.execPath, [
        CLI,
        "run",
        config,
        "-o",
        three,
        "--rank",
        rank,
        "--world-size",
        "3",
        "--workers",
        workers,
        "--progress",
        "none",
      ]);
    }
    expectSameBytes(products(three), expected);

    // Masks in particular: identical loss masks and stats rows across worker counts.
    const pool = tempDir();
    await exec(process.execPath, [CLI, "run", config, "-o", pool, "--workers", "2", "--progress", "none"]);
    expectSameBytes(products(pool), expected);
  });

  it("finalize names the unfinished tasks; a different config is refused without --overwrite", async () => {
    const { config, dir } = scaleJob();
    const out = tempDir();
    await runInProcess(config, out, { rank: { rank: 0, worldSize: 4, from: "flags" } });
    const failure = await exec(process.execPath, [CLI, "finalize", out]).catch((err: { code: number; stderr: string }) => err);
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toMatch(/tasks have not finished[\s\S]*task-00001: corpus-a\.jsonl\[\d+:\d+\]/);

    const other = writeConfig(`${readFileSync(config, "utf8")}mask:\n  seed: 99\n`, dir);
    const refused = await exec(process.execPath, [CLI, "run", other, "-o", out, "--progress", "none"]).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toMatch(/holds the output of a different job[\s\S]*--overwrite/);
    const { stdout } = await exec(process.execPath, [CLI, "run", other, "-o", out, "--overwrite", "--workers", "1", "--progress", "none"]);
    expect(stdout).toMatch(/ran \d+, already done 0/);
  });
});

/** Starts a CLI run and SIGKILLs it once `ready(outputDir)` holds (polled), or when it exits first. */
async function killWhen(args: string[], output: string, ready: (dir: string) => boolean): Promise<"killed" | "finished"> {
  const child: ChildProcess = spawn(process.execPath, [CLI, ...args, "-o", output, "--progress", "none"], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (;;) {
    if (child.exitCode !== null) return "finished";
    if (ready(output)) {
      child.kill("SIGKILL");
      await exited;
      return "killed";
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const count = (dir: string, suffix: string) =>
  existsSync(join(dir, "tasks")) ? readdirSync(join(dir, "tasks")).filter((n) => n.endsWith(suffix)).length : 0;

describe("resume", () => {
  it("after SIGKILL at several points, a rerun completes with output byte-identical to an uninterrupted run", {
    timeout: 600_000,
  }, async () => {
    const { config, output: reference } = await scaleReference();
    const expected = products(reference);

    const points: [string, (dir: string) => boolean][] = [
      ["as soon as the plan exists", (dir) => existsSync(join(dir, "tasks/plan.json"))],
      ["after the first checkpoint", (dir) => count(dir, ".checkpoint.json") >= 1],
      ["after three tasks finished", (dir) => count(dir, ".done.json") >= 3],
      [
        "mid-shard (a temporary file exists)",
        (dir) => existsSync(join(dir, "data")) && readdirSync(join(dir, "data")).some((n) => n.endsWith(".tmp")),
      ],
    ];
    for (const [label, ready] of points) {
      for (const workers of ["1", "2"]) {
        const out = tempDir();
        const outcome = await killWhen(["run", config, "--workers", workers], out, ready);
        expect(outcome, `${label}, ${workers} worker(s)`).toBe("killed");
        expect(existsSync(join(out, "manifest.json"))).toBe(false);
        const { stdout } = await exec(process.execPath, [CLI, "run", config, "-o", out, "--workers", workers, "--progress", "none"]);
        expect(stdout).toMatch(/ran \d+, already done \d+/);
        expectSameBytes(products(out), expected);
        // No temporary file survives the rerun.
        expect([...snapshot(out).keys()].filter((p) => p.endsWith(".tmp"))).toEqual([]);
      }
    }
  });

  it("SIGTERM stops between records with a resumable state and exit 143; the rerun equals an uninterrupted run", async () => {
    const { config, output: reference } = await scaleReference();
    const expected = products(reference);
    for (const workers of ["1", "2"]) {
      const out = tempDir();
      const child = spawn(process.execPath, [CLI, "run", config, "-o", out, "--workers", workers, "--progress", "none"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr?.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      // Mid-run: one task finished (so the stop has work to keep) and the job not yet done.
      while (count(out, ".done.json") < 1 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(child.exitCode, `${workers} worker(s): the run ended before it could be stopped`).toBeNull();
      child.kill("SIGTERM");
      const code = await exited;
      expect(code, stderr).toBe(143);
      expect(stderr).toMatch(/SIGTERM: stopping at the next record boundary/);
      expect(stdout).toMatch(/stopped by SIGTERM: .* rerun the same command to resume/);
      // A clean stop: no manifest, no temporary file, at least one task kept as done.
      expect(existsSync(join(out, "manifest.json"))).toBe(false);
      expect([...snapshot(out).keys()].filter((p) => p.endsWith(".tmp"))).toEqual([]);
      const kept = count(out, ".done.json");
      expect(kept).toBeGreaterThanOrEqual(1);
      const rerun = await exec(process.execPath, [CLI, "run", config, "-o", out, "--workers", workers, "--progress", "none"]);
      expect(rerun.stdout).toMatch(new RegExp(`already done ${kept};`));
      expectSameBytes(products(out), expected);
    }
  });

  it("a stop request ends a running task at a record boundary: its partial segment is dropped, its checkpoint kept", async () => {
    // One task of 300 records whose shards fill every few records: checkpoints before the stop.
    const dir = tempDir("lwm-stop-");
    writeCorpus(join(dir, "corpus.jsonl"), 300, 3);
    const config = writeConfig(
      // Checkpoints at segment cuts only (no journal): test/resume-anywhere.test.ts covers those between cuts.
      [
        "inputs:",
        "  - path: corpus.jsonl",
        "output:",
        "  num_buckets: 2",
        "  max_shard_bytes: 8000",
        "  row_group_rows: 8",
        "  checkpoint: { seconds: 0, records: 0 }",
        "",
      ].join("\n"),
      dir,
    );
    const reference = tempDir();
    await runInProcess(config, reference);
    const out = tempDir();
    const stop = createStopSignal();
    // Progress is reported every 64 records of a running task: the stop comes at record 64.
    const result = await runInProcess(config, out, { stop, onProgress: (p) => p.records > 0 && requestStop(stop) });
    expect(result).toMatchObject({ stopped: true, ran: 0 });
    expect(count(out, ".done.json")).toBe(0);
    const checkpoint = JSON.parse(readFileSync(join(out, "tasks/task-00000.checkpoint.json"), "utf8")) as { items: number };
    expect(checkpoint.items).toBeGreaterThan(0);
    expect(checkpoint.items).toBeLessThan(64);
    expect([...snapshot(out).keys()].filter((p) => p.endsWith(".tmp"))).toEqual([]);
    expect(existsSync(join(out, "manifest.json"))).toBe(false);
    // Resumed from the checkpoint, the output is byte for byte the uninterrupted run's.
    await runInProcess(config, out);
    expectSameBytes(products(out), products(reference));
  });

  it("a damaged plan or task state is named in a clear error, never parsed into a wrong resume", async () => {
    const { config, output } = await scaleReference();
    const out = copyOutput(output);
    writeFileSync(join(out, "tasks/task-00001.done.json"), '{"format": "lwm-data/task-st');
    const failure = await exec(process.execPath, [CLI, "run", config, "-o", out, "--progress", "none"]).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toMatch(/tasks\/task-00001\.done\.json is damaged \(.*JSON.*\); delete it and rerun/);
  });

  it("a rerun of a finished job skips every task and rewrites the same manifest", async () => {
    const { config, output } = await scaleReference();
    const out = copyOutput(output);
    const before = snapshot(out);
    const again = await runInProcess(config, out);
    expect(again.ran).toBe(0);
    expect(again.skipped).toBeGreaterThan(0);
    expectSameBytes(snapshot(out), before);
  });
});

describe("plan and launch commands", () => {
  it("plan lists each task with its rank; launch k8s writes an Indexed Job over the same tasks and claims the output", async () => {
    const { config } = scaleJob();
    const out = tempDir();
    const { stdout } = await exec(process.execPath, [CLI, "plan", config, "-o", out, "--world-size", "4", "--json"]);
    const plan = JSON.parse(stdout) as { tasks: { task: number; rank: number; status: string; pieces: { path: string }[] }[] };
    expect(plan.tasks.length).toBeGreaterThanOrEqual(9);
    expect(plan.tasks.map((t) => t.rank)).toEqual(plan.tasks.map((t) => t.task % 4));
    expect(plan.tasks.every((t) => t.status === "pending")).toBe(true);

    const launched = await exec(process.execPath, [
      CLI,
      "launch",
      "k8s",
      config,
      "-o",
      out,
      "--image",
      "lwm:1",
      "--pvc",
      "data",
      "--world-size",
      "4",
      "--workers",
      "2",
    ]);
    expect(launched.stdout).toMatch(/kubectl apply -f/);
    const { parse } = await import("yaml");
    const job = parse(readFileSync(join(out, "launch/k8s-job.yaml"), "utf8")) as {
      spec: { completionMode: string; completions: number; template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(job.spec).toMatchObject({ completionMode: "Indexed", completions: 4 });
    expect(job.spec.template.spec.containers[0]?.args).toEqual(
      expect.arrayContaining(["--rank", "$(JOB_COMPLETION_INDEX)", "--world-size", "4"]),
    );
    expect(existsSync(join(out, "tasks/plan.json"))).toBe(true);
    // A rank started by that Job finds the claimed plan and runs its share.
    const rank = await exec(process.execPath, [CLI, "run", config, "-o", out, "--workers", "1", "--progress", "none"], {
      env: { ...process.env, JOB_COMPLETION_INDEX: "3", LWM_WORLD_SIZE: "4" },
    });
    expect(rank.stdout).toMatch(/rank 3 of 4, from kubernetes/);
  });
});
