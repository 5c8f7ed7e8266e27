import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The run ends with what was skipped and why (test/support/test-skips.ts), or "none".
    reporters: ["default", "./test/support/skip-summary-reporter.ts"],
    // Loading the 151k-token Qwen3 vocabulary and running whole jobs takes seconds, not ms.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
