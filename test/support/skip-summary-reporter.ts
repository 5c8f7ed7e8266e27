import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends every vitest run with what did NOT run and why, so a passing run never looks more complete
 * than it was: skipped tests grouped by their reason (a `[SKIPPED: …]` title, test-skips.ts, or
 * the note of `ctx.skip(note)`), or "none". A skip without a reason is flagged as such.
 */
export default class SkipSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const groups = new Map<string, Map<string, number>>();
    let total = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== "skipped") continue;
        total += 1;
        const reason =
          result.note ??
          /\[SKIPPED: ([^\]]*)\]/.exec(test.fullName)?.[1] ??
          (test.options.mode === "todo" ? "todo" : "no reason given (it.skip, a -t filter, or .only elsewhere)");
        const files = groups.get(reason) ?? new Map<string, number>();
        files.set(module.relativeModuleId, (files.get(module.relativeModuleId) ?? 0) + 1);
        groups.set(reason, files);
      }
    }
    const lines = [total === 0 ? "Skipped tests: none, every collected test ran." : `Skipped tests: ${total}, not run:`];
    for (const [reason, files] of groups) {
      const count = [...files.values()].reduce((a, b) => a + b, 0);
      lines.push(`  ${count} — ${reason}`, `      ${[...files].map(([file, n]) => `${file} (${n})`).join(", ")}`);
    }
    process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}
