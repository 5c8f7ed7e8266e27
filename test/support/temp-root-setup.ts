import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * vitest globalSetup: one temporary folder per test run, made the run's TMPDIR, so that everything
 * the tests and the processes they start write under `os.tmpdir()` (test outputs, CLI spools,
 * Python's tempfile, browsers' profiles) is in one place, removed when the run ends. Without it,
 * each full run left ~200 MB of folders in /tmp. LWM_KEEP_TEST_TMP=1 keeps it (it is printed), to
 * look at a failed test's files.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "lwm-vitest-"));
  const before = process.env.TMPDIR;
  // Set before vitest starts its test workers, which inherit it, as do the processes they spawn.
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (process.env.LWM_KEEP_TEST_TMP === "1") console.log(`test files kept in ${root} (LWM_KEEP_TEST_TMP=1)`);
    else rmSync(root, { recursive: true, force: true });
  };
}
