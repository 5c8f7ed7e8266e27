import { localOutputFolder } from "../output/remote-output.ts";
import { type VerifyProblem, type VerifyReport, verifyOutput } from "../verify/verify-output.ts";

/** `path: check: message (expected X, got Y)`: one line per problem, greppable. */
export function problemLine(problem: VerifyProblem): string {
  const values =
    problem.expected !== undefined || problem.actual !== undefined
      ? ` (expected ${problem.expected ?? "-"}, got ${problem.actual ?? "-"})`
      : "";
  return `${problem.path}: ${problem.check}: ${problem.message}${values}`;
}

function summary(outputDir: string, report: VerifyReport): string {
  if (report.problems.length === 0)
    return `lwm-data verify: OK — ${report.filesChecked} files, ${report.shardsChecked} shards, ${report.tokens} tokens match the manifest`;
  const count = report.problems.length === 1 ? "1 problem" : `${report.problems.length} problems`;
  return `lwm-data verify: ${count} in ${outputDir} (${report.manifestFormat || "no readable manifest"}; ${report.filesChecked} files checked)`;
}

/** A transient "checking …" line on a terminal only: logs and pipes get just the result. */
function progress(): { onFile?: (path: string) => void; done(): void } {
  if (!process.stderr.isTTY) return { done: () => undefined };
  return {
    onFile: (path) => process.stderr.write(`\r\x1b[2Kverifying ${path}`),
    done: () => process.stderr.write("\r\x1b[2K"),
  };
}

/**
 * `lwm-data verify <output-dir>`: recomputes checksums, row and token counts and the schema of
 * everything the manifest lists and prints every mismatch (or the report as JSON). Exit status 1
 * when there is any problem, so a pipeline can gate on it before training.
 */
export async function verifyCommand(outputDir: string, options: { json?: boolean }): Promise<void> {
  const shown = options.json ? { done: () => undefined } : progress();
  let report: VerifyReport;
  try {
    report = await verifyOutput(await localOutputFolder(outputDir), shown.onFile ? { onFile: shown.onFile } : {});
  } finally {
    shown.done();
  }
  if (options.json) console.log(JSON.stringify(report, null, 2));
  else {
    for (const problem of report.problems) console.log(problemLine(problem));
    console.log(summary(outputDir, report));
  }
  if (report.problems.length > 0) process.exitCode = 1;
}
