/**
 * Where the third-party samples live, and how their suite behaves without them.
 *
 * Samples copied from public projects (SWE-agent, OpenHands, go-sdk, asciinema-player, BrowserGym,
 * DroidBot, …) are never committed here: every developer machine and CI have them beside the
 * project, in `../shared/fixtures/real/` (each folder has a PROVENANCE.md). The suites under
 * `test/third-party/` read them in place. Without that folder they skip with a warning, except when
 * `CI` is set: there a missing folder fails the run, as a missing Slurm does (test/slurm.test.ts).
 * Set `LWM_THIRD_PARTY_DIR` to read them from somewhere else.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "vitest";
import { ROOT } from "../helpers.ts";
import { skippedTitle } from "../support/test-skips.ts";

export const THIRD_PARTY_DIR = resolve(process.env.LWM_THIRD_PARTY_DIR ?? join(ROOT, "../shared/fixtures/real"));

export const haveThirdParty = existsSync(join(THIRD_PARTY_DIR, "README.md"));

/** A file under the third-party samples folder, e.g. `thirdParty("swe/swe-agent/x.traj")`. */
export function thirdParty(...parts: string[]): string {
  return join(THIRD_PARTY_DIR, ...parts);
}

const onCi = Boolean(process.env.CI);

/**
 * `describe` for a suite that reads the third-party samples: runs when they are present, fails
 * (one failing test naming the folder) when `CI` is set and they are absent, skips otherwise.
 */
export function describeThirdParty(title: string, body: () => void): void {
  if (haveThirdParty) {
    describe(`${title} [third-party samples]`, body);
    return;
  }
  if (onCi) {
    describe(`${title} [third-party samples]`, () => {
      it("has the third-party samples", () => {
        throw new Error(
          `CI is set but the third-party samples are missing: expected ${THIRD_PARTY_DIR}/README.md (../shared/fixtures/real beside the project, or LWM_THIRD_PARTY_DIR)`,
        );
      });
    });
    return;
  }
  console.warn(`${title}: SKIPPED, no third-party samples at ${THIRD_PARTY_DIR} (and CI not set)`);
  describe.skip(skippedTitle(title, `third-party samples absent (${THIRD_PARTY_DIR}); by design on a clone without ../shared`), body);
}
