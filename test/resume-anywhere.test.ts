/**
 * Checkpoints between segment cuts (output.checkpoint, src/write/segment-journal.ts): a task whose
 * output never fills a shard still resumes near where it stopped, and where the checkpoints fall
 * never changes a byte of the output. SIGKILL at data-determined cuts: test/scale.test.ts.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { createStopSignal, requestStop } from "../src/pipeline/stop-signal.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { expectSameBytes, products, writeCorpus } from "./scale-helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const TOTAL = 400;

/** One task of TOTAL records whose shards never fill: before this feature, no checkpoint until the end. */
function oneTaskJob(extra: string[] = [], records = TOTAL): string {
  const dir = tempDir("lwm-resume-");
  writeCorpus(join(dir, "corpus.jsonl"), records, 7);
  return writeConfig(
    ["inputs:", "  - path: corpus.jsonl", "output:", "  num_buckets: 3", "  row_group_rows: 16", ...extra, ""].join("\n"),
    dir,
  );
}

async function run(config: string, output: string, options: Parameters<typeof runJob>[1] = {}) {
  return runJob(await planJob(loadConfig(config, { output })), { workers: 1, ...options });
}

/** Runs until a task has reported `records` records, then asks it to stop at the next record boundary. */
async function runAndStop(config: string, output: string, records: number) {
  const stop = createStopSignal();
  return run(config, output, { stop, onProgress: (p) => p.stage === "records" && p.records >= records && requestStop(stop) });
}

function checkpointOf(out: string): { items: number; segment: number; journal?: { bytes: number } } {
  return JSON.parse(readFileSync(join(out, "tasks/task-00000.checkpoint.json"), "utf8"));
}

/** The note a resumed run prints: records processed now, and those its checkpoints held. */
function resumeNote(notes: string[]): { processed: number; fromCheckpoints: number } | undefined {
  const match = notes.join("\n").match(/records: (\d+) record\(s\) processed in this run; (\d+) more were in the checkpoints/);
  return match ? { processed: Number(match[1]), fromCheckpoints: Number(match[2]) } : undefined;
}

describe("checkpoints between segment cuts", () => {
  it("a stop half-way through a one-task job checkpoints there; the rerun processes only the rest and writes the same bytes", async () => {
    // Packing (best-fit holds documents between rows) and the text form: every kind of state a writer holds.
    for (const extra of [[], ["  include_messages: true", "pack:", "  enabled: true", "  seq_len: 2048", "  buffer_documents: 32"]]) {
      const config = oneTaskJob(extra);
      const reference = tempDir();
      await run(config, reference);

      const out = tempDir();
      const stopped = await runAndStop(config, out, 192);
      expect(stopped).toMatchObject({ stopped: true, ran: 0 });
      const checkpoint = checkpointOf(out);
      // Progress is reported every 64 records; the stop lands on the next record boundary.
      expect(checkpoint.items).toBeGreaterThanOrEqual(192);
      expect(checkpoint.items).toBeLessThan(TOTAL);
      expect(checkpoint.segment).toBe(0);
      expect(checkpoint.journal?.bytes).toBeGreaterThan(0);

      const resumed = await run(config, out);
      expect(resumeNote(resumed.notes)).toEqual({ processed: TOTAL - checkpoint.items, fromCheckpoints: checkpoint.items });
      expectSameBytes(products(out), products(reference));
      // The journal goes with the checkpoint once the task is done.
      expect(existsSync(join(out, "tasks/task-00000.journal"))).toBe(false);
    }
  });

  it("negative control: a resume that ignored the journal would lose the segment's rows, and the task's books catch it", async () => {
    const config = oneTaskJob();
    const reference = tempDir();
    await run(config, reference);
    const out = tempDir();
    await runAndStop(config, out, 128);
    // The checkpoint says "items done" but no longer where their rows are: the resumed task lacks them.
    const path = join(out, "tasks/task-00000.checkpoint.json");
    const { journal: _journal, ...withoutJournal } = checkpointOf(out);
    writeFileSync(path, JSON.stringify(withoutJournal));
    await expect(run(config, out)).rejects.toThrow(/accounting mismatch/);
  });

  it("where checkpoints fall never changes the output: one after every record equals none at all", async () => {
    const every = oneTaskJob(["  checkpoint: { seconds: 0, records: 1 }", "pack:", "  enabled: true", "  seq_len: 1024"]);
    const none = every.replace("records: 1", "records: 0");
    writeFileSync(none, readFileSync(every, "utf8").replace("records: 1", "records: 0"));
    const a = tempDir();
    const b = tempDir();
    await run(every, a);
    await run(none, b);
    expectSameBytes(products(a), products(b));
  });

  it("after SIGKILL the rerun resumes from the last checkpoint between cuts, not from record 0", { timeout: 300_000 }, async () => {
    // Large enough that the kill comes long before the end.
    const total = 4000;
    const config = oneTaskJob(["  checkpoint: { seconds: 0, records: 50 }"], total);
    const reference = tempDir();
    await run(config, reference);
    const out = tempDir();
    const child = spawn(process.execPath, [CLI, "run", config, "-o", out, "--workers", "1", "--progress", "none"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const path = join(out, "tasks/task-00000.checkpoint.json");
    while (child.exitCode === null && !(existsSync(path) && checkpointOf(out).items >= 100)) await new Promise((r) => setTimeout(r, 5));
    expect(child.exitCode, `the run ended before it could be killed: ${stderr}`).toBeNull();
    child.kill("SIGKILL");
    await exited;
    const at = checkpointOf(out).items;
    expect(at).toBeGreaterThanOrEqual(100);
    const { stdout } = await exec(process.execPath, [CLI, "run", config, "-o", out, "--workers", "1", "--progress", "none"]);
    expect(stdout).toContain(
      `records: ${total - at} record(s) processed in this run; ${at} more were in the checkpoints of the 1 task(s) it resumed`,
    );
    expectSameBytes(products(out), products(reference));
  });

  it("Ctrl-C (SIGINT) half-way through a one-task job at default settings: exit 130, and the rerun processes only the rest", {
    timeout: 300_000,
  }, async () => {
    const total = 4000;
    const config = oneTaskJob([], total);
    const reference = tempDir();
    await run(config, reference);
    const out = tempDir();
    const child = spawn(process.execPath, [CLI, "run", config, "-o", out, "--workers", "1", "--progress", "none"], {
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
    // Under way: the journal has the segment's first row groups (no checkpoint has been taken yet at 30 s).
    const journal = join(out, "tasks/task-00000.journal");
    while (child.exitCode === null && !(existsSync(journal) && statSync(journal).size > 0)) await new Promise((r) => setTimeout(r, 5));
    expect(child.exitCode, `the run ended before it could be stopped: ${stderr}`).toBeNull();
    child.kill("SIGINT");
    expect(await exited, stderr).toBe(130);
    expect(stdout).toMatch(/stopped by SIGINT: finished tasks are kept and each unfinished one checkpointed at the record it stopped on/);
    const at = checkpointOf(out).items;
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(total);
    const rerun = await exec(process.execPath, [CLI, "run", config, "-o", out, "--workers", "1", "--progress", "none"]);
    expect(rerun.stdout).toContain(`records: ${total - at} record(s) processed in this run; ${at} more were in the checkpoints`);
    expectSameBytes(products(out), products(reference));
  });

  it("a journal shorter than its checkpoint is named in a clear error, never resumed wrongly", async () => {
    const config = oneTaskJob();
    const out = tempDir();
    await runAndStop(config, out, 64);
    const journal = join(out, "tasks/task-00000.journal");
    truncateSync(journal, (checkpointOf(out).journal?.bytes ?? 0) - 1);
    await expect(run(config, out)).rejects.toThrow(
      /task-00000\.journal has \d+ bytes, but the task's checkpoint was taken at byte \d+; delete the checkpoint/,
    );
  });

  it("with output.checkpoint off there is no journal, and a stop keeps only the last cut (the earlier behaviour)", async () => {
    const config = oneTaskJob(["  checkpoint: { seconds: 0, records: 0 }"]);
    const out = tempDir();
    await runAndStop(config, out, 64);
    expect(existsSync(join(out, "tasks/task-00000.checkpoint.json"))).toBe(false);
    expect(existsSync(join(out, "tasks/task-00000.journal"))).toBe(false);
  });
});
