import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../helpers.ts";

/**
 * The Python reference environment (`.venv`, test/python/requirements.txt) for the suites that
 * compare with Python tools. It is a prerequisite, never optional: `ensurePythonEnv()` creates or
 * updates it (test/python/ensure-venv.sh: idempotent, instant when current) and throws, naming
 * what to install, when it cannot, so such a suite fails instead of skipping. `PYTHON=<python>`
 * uses another interpreter as is.
 */
export const PYTHON = process.env.PYTHON ?? join(ROOT, ".venv/bin/python");

let ready = false;

export function ensurePythonEnv(): string {
  if (ready) return PYTHON;
  const result = spawnSync("bash", [join(ROOT, "test/python/ensure-venv.sh")], { encoding: "utf8" });
  if (result.status !== 0)
    throw new Error(
      `the Python reference environment is missing and could not be created (bash test/python/ensure-venv.sh exited ${result.status}): ${result.stderr.trim()}`,
    );
  ready = true;
  return PYTHON;
}
