/**
 * What a test run may leave out, and how it says so. `npm test` runs every test on a machine with
 * the README's prerequisites (Python 3.11 + pip, Debian's Chromium, root with Slurm's packages).
 * A test whose prerequisite is missing FAILS, naming what to install, unless the developer opted
 * out of exactly that prerequisite with `LWM_TEST_SKIP=<name>[,<name>…]` (`browser`, `slurm`,
 * `tmpfs`); then it is skipped and the run's last lines list it with the reason
 * (test/support/skip-summary-reporter.ts). With `CI` set nothing may be opted out.
 * The third-party suites (test/third-party/) skip by design when `../shared/fixtures/real` is
 * absent (the core suite needs only the repository); the summary names them too.
 */

export const SKIP_ENV = "LWM_TEST_SKIP";
export type Prerequisite = "browser" | "slurm" | "tmpfs";
const KNOWN: readonly Prerequisite[] = ["browser", "slurm", "tmpfs"];

function requested(): Set<string> {
  const names = (process.env[SKIP_ENV] ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const unknown = names.filter((name) => !(KNOWN as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`${SKIP_ENV}: unknown ${unknown.join(", ")}; known: ${KNOWN.join(", ")}`);
  if (names.length > 0 && process.env.CI) throw new Error(`${SKIP_ENV}=${process.env[SKIP_ENV]} but CI is set: CI runs every test`);
  return new Set(names);
}

/** Whether the developer opted out of this prerequisite's tests (never under CI). */
export function optedOut(name: Prerequisite): boolean {
  return requested().has(name);
}

/** A suite or test title that carries its skip reason, which the summary reporter prints. */
export function skippedTitle(title: string, reason: string): string {
  return `${title} [SKIPPED: ${reason}]`;
}
