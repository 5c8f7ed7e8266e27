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

/**
 * A trainer's own environment (`.venv-<name>` from test/python/requirements-<name>.txt, for pins that
 * cannot share .venv): created or updated by ensure-venv.sh like .venv, or waited for while another
 * process (.ci/run's background install) holds its lock. Several minutes on a fresh clone.
 */
export function ensureTrainerEnv(name: string): string {
  const venv = `.venv-${name}`;
  const result = spawnSync("bash", [join(ROOT, "test/python/ensure-venv.sh"), venv, `test/python/requirements-${name}.txt`], {
    encoding: "utf8",
  });
  if (result.status !== 0)
    throw new Error(`the ${name} environment could not be created (bash test/python/ensure-venv.sh ${venv} …): ${result.stderr.trim()}`);
  return join(ROOT, venv, "bin/python");
}
