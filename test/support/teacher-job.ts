/**
 * The demo jobs of the controls' teacher stages (configs/demo-rephrase.yaml,
 * configs/demo-synthesis-teacher.yaml) as the tests run them: a copy with the data paths absolute,
 * the test's own cache folder (so nothing outside the test answers it) and one retry; `run` through
 * the CLI with the teacher's address in LWM_TEACHER_URL; and a folder's files by sha256.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { ROOT, writeConfig } from "../helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

function demoCopy(name: string): string {
  return readFileSync(join(ROOT, "configs", name), "utf8").replaceAll("../data/demo/", `${join(ROOT, "data/demo")}/`);
}

/** configs/demo-rephrase.yaml with its own cache; `extra` is added to the `controls.rephrase` block (4-space indented lines). */
export function rephraseJobConfig(cacheDir: string, extra = ""): string {
  return writeConfig(
    demoCopy("demo-rephrase.yaml").replace(
      "    model: Qwen/Qwen3-8B",
      `    model: Qwen/Qwen3-8B\n    cache_dir: ${cacheDir}\n    max_retries: 1${extra ? `\n${extra}` : ""}`,
    ),
  );
}

/** configs/demo-synthesis-teacher.yaml with its own cache; `extra` is added to the `controls.synthesis.teacher` block (6-space indented lines). */
export function synthesisTeacherJobConfig(cacheDir: string, extra = ""): string {
  return writeConfig(
    demoCopy("demo-synthesis-teacher.yaml").replace(
      "cache_dir: .lwm-cache/synthesis-teacher",
      `cache_dir: ${cacheDir}\n      max_retries: 1${extra ? `\n${extra}` : ""}`,
    ),
  );
}

/** `lwm-data run <config> --output <out>` with the teacher at `url`; rejects (code, stderr) when the run fails. */
export function runJob(config: string, out: string, url: string, workers = 2) {
  return exec(process.execPath, [CLI, "run", config, "--output", out, "--progress", "none", "--workers", String(workers)], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
    env: { ...process.env, LWM_TEACHER_URL: url },
  });
}

/** The run's failure (exit code and stderr), or undefined when it succeeded. */
export function runFailure(config: string, out: string, url: string): Promise<{ code: number; stderr: string } | undefined> {
  return runJob(config, out, url).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
}

/** Every file under `dir` (relative path → sha256). */
export function digestFolder(dir: string): Record<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
  return Object.fromEntries(
    files.map((file) => [
      file,
      createHash("sha256")
        .update(readFileSync(join(dir, file)))
        .digest("hex"),
    ]),
  );
}
