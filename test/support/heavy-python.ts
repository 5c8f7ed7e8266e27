import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../helpers.ts";

/**
 * Runs a Python check that loads a full-vocabulary model (Qwen3's 151,936-token logits over a
 * packed batch peak at ~12 GB) one at a time across test files: vitest runs two files at once,
 * and two such checks together would not fit a 24 GB CI machine. `flock` (util-linux) holds a
 * lock file in the temp folder for the process's life, so a second check waits for the first.
 */
export function spawnHeavyPython(python: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync("flock", [join(tmpdir(), "lwm-data-heavy-python.lock"), python, ...args], {
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: join(ROOT, "notebooks") },
    maxBuffer: 1 << 24,
  });
}
