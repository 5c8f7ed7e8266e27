import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Two test files at a time even on a 2-core machine (vitest's default is cores - 1, so CI's
    // 2 cores ran one file at a time): many files spend much of their time waiting on a child
    // process (the CLI, Python, moto, Slurm) or on one core, so a second file uses the idle core.
    // Every file's state is its own (temporary folders, servers on free ports), so they can overlap.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The run ends with what was skipped and why (test/support/test-skips.ts), or "none".
    reporters: ["default", "./test/support/skip-summary-reporter.ts"],
    // In order: the run's own TMPDIR, removed at its end (test/support/temp-root-setup.ts); the CLI
    // bundle, rebuilt when src/ changed (test/support/bundle-setup.ts); a folder per run for outputs
    // several files share (test/support/select-resolved-reference.ts): the first file that needs
    // one builds it, instead of each file running the same job.
    globalSetup: ["./test/support/temp-root-setup.ts", "./test/support/bundle-setup.ts", "./test/support/shared-outputs-setup.ts"],
    // Timeouts are a safety net against hangs, never a judgement of speed (issue 36): a test checks
    // behaviour, and time limits belong to the benchmarks (bench/). The slowest tests under this
    // default take ~45 s on an idle 2-core machine (whole jobs through the CLI, the secrets
    // equivalence over every fixture file), so 5 minutes leaves >6x for a loaded machine, while a
    // real hang still costs one test 5 minutes, not the CI run. Tests that need longer (golden
    // outputs, SIGKILL reruns, scale) say so with their own, longer, timeout; none sets a shorter one.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
