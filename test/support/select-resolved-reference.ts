import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import { ROOT, tempDir } from "../helpers.ts";
import { startFakeJudge } from "./fake-judge.ts";
import { copyOutput } from "./scale-reference.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
export const SELECT_RESOLVED = join(ROOT, "configs/select-resolved.yaml");

export interface SelectResolvedReference {
  /** A fresh copy of the local run's output, this caller's own: read it or change it. */
  output: string;
  /** What the run printed. */
  stdout: string;
}

let shared: Promise<string> | undefined;

/**
 * One local run of configs/select-resolved.yaml, as users run it (`lwm-data run … --workers 2`, a
 * fake judge at LWM_JUDGE_URL), shared by the test files that compare with it or read it
 * (select-config, selection-report, score-columns, s3-outputs): each ran the same job for itself
 * before. Made once per vitest run in the folder test/support/shared-outputs-setup.ts provides:
 * the first file to ask builds it under a lock, a file started at the same time waits for it.
 * (test/slurm.test.ts keeps its own `--workers 1` run: the one place this job runs with 1 worker.)
 */
export async function selectResolvedReference(): Promise<SelectResolvedReference> {
  shared ??= sharedRun();
  const dir = await shared;
  return { output: copyOutput(join(dir, "out")), stdout: readFileSync(join(dir, "stdout.txt"), "utf8") };
}

async function sharedRun(): Promise<string> {
  // Outside vitest.config.ts's globalSetup (nothing provided), the file makes its own.
  const root = (inject("sharedOutputsDir") as string | undefined) ?? tempDir("lwm-shared-outputs-");
  const done = join(root, "select-resolved");
  const lock = join(root, "select-resolved.lock");
  const failed = join(root, "select-resolved.failed");
  for (;;) {
    if (existsSync(done)) return done;
    if (existsSync(failed))
      throw new Error(`the shared run of configs/select-resolved.yaml failed in another test file:\n${readFileSync(failed, "utf8")}`);
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      assertBuilderAlive(lock);
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    writeFileSync(join(lock, "pid"), String(process.pid));
    try {
      const build = join(lock, "build");
      mkdirSync(build);
      const stdout = await runLocally(join(build, "out"));
      writeFileSync(join(build, "stdout.txt"), stdout);
      // Whole or not at all: the others look for `done`.
      renameSync(build, done);
      return done;
    } catch (error) {
      const { stack, stderr } = error as { stack?: string; stderr?: string };
      writeFileSync(failed, `${stack ?? String(error)}\n${stderr ?? ""}`);
      throw error;
    }
  }
}

async function runLocally(out: string): Promise<string> {
  const judge = await startFakeJudge();
  try {
    const { stdout } = await exec(
      process.execPath,
      [CLI, "run", SELECT_RESOLVED, "--output", out, "--progress", "none", "--workers", "2"],
      {
        cwd: ROOT,
        env: { ...process.env, LWM_JUDGE_URL: judge.url },
        encoding: "utf8",
      },
    );
    return stdout;
  } finally {
    await judge.close();
  }
}

/** A builder that died (its test file killed) leaves the lock behind: fail instead of waiting out the hook timeout. */
function assertBuilderAlive(lock: string): void {
  const pidFile = join(lock, "pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8"));
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH")
      throw new Error(`the test process ${pid} building the shared run of configs/select-resolved.yaml ended without finishing it`);
  }
}
