import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { changedSinceBundle, freshBundleEntry } from "../../bin/source-bundle.js";

const ROOT = join(import.meta.dirname, "../..");

/**
 * vitest globalSetup: the CLI bundle (dist/, scripts/build-bundle.ts) rebuilt when the sources have
 * changed since it was built, so that the tests' `lwm-data` processes run the code under test from the
 * bundle (as a user's do after `npm install`) rather than each falling back to loading src/.
 * test/bundle.test.ts checks the bundle against the sources. At the end, a bundle that went stale
 * during the run (a source edited meanwhile: the processes after it ran src/) is named.
 */
export default function setup(): () => void {
  execFileSync(process.execPath, [join(ROOT, "scripts/build-bundle.ts"), "--if-stale"], { stdio: "inherit" });
  return () => {
    if (freshBundleEntry(ROOT)) return;
    console.warn(`the CLI bundle went stale during the run (later CLI processes ran src/): ${changedSinceBundle(ROOT).join(", ")}`);
  };
}
