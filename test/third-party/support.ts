/**
 * Where the third-party samples live, and how their suite behaves without them.
 *
 * Samples copied from public projects (SWE-agent, OpenHands, go-sdk, asciinema-player, BrowserGym,
 * DroidBot, …) are never committed here: every developer machine and CI have them beside the
 * project, in `../shared/fixtures/real/` (each folder has a PROVENANCE.md). The suites under
 * `test/third-party/` read them in place. Without that folder they skip with a warning (named in
 * the run's skip summary), except with `LWM_REQUIRE_THIRD_PARTY=1`, which `.ci/run` sets when
 * `../shared` is beside the project: there a missing or partial folder fails the run.
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

/** Set by `.ci/run` when ../shared is beside the project: from then on, missing samples are a failure. */
const required = process.env.LWM_REQUIRE_THIRD_PARTY === "1";

/**
 * `describe` for a suite that reads the third-party samples: runs when they are present, fails
 * (one failing test naming the folder) when `LWM_REQUIRE_THIRD_PARTY=1` and they are absent, skips
 * otherwise (listed in the run's skip summary: the core tests must pass on a clone without ../shared).
 */
export function describeThirdParty(title: string, body: () => void): void {
  if (haveThirdParty) {
    describe(`${title} [third-party samples]`, body);
    return;
  }
  if (required) {
    describe(`${title} [third-party samples]`, () => {
      it("has the third-party samples", () => {
        throw new Error(
          `LWM_REQUIRE_THIRD_PARTY=1 but the third-party samples are missing: expected ${THIRD_PARTY_DIR}/README.md (../shared/fixtures/real beside the project, or LWM_THIRD_PARTY_DIR)`,
        );
      });
    });
    return;
  }
  console.warn(`${title}: SKIPPED, no third-party samples at ${THIRD_PARTY_DIR} (and LWM_REQUIRE_THIRD_PARTY not set)`);
  describe.skip(skippedTitle(title, `third-party samples absent (${THIRD_PARTY_DIR}); by design on a clone without ../shared`), body);
}
