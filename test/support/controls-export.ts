import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { demoInputsYaml, ROOT, tempDir, writeConfig } from "../helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

/**
 * The demo with controls on every trajectory (half of them counterfactual) and a validation split of
 * half, run and exported with `lwm-data export agentworldbench --controls` through the CLI: the
 * held-out controllable prompts that test/export-awb-controls.test.ts and test/score-controls.test.ts read.
 * `out` is the run, `dir` the export.
 */
export async function exportDemoControls(): Promise<{ out: string; dir: string }> {
  const out = join(tempDir(), "out");
  const config = writeConfig(
    [
      "inputs:",
      ...demoInputsYaml(),
      "controls:",
      "  enabled: true",
      "  share: 1.0",
      "  counterfactual_share: 0.5",
      "output:",
      "  num_buckets: 2",
      "  include_messages: true",
      "  validation_fraction: 0.5",
      "",
    ].join("\n"),
  );
  await exec(process.execPath, [CLI, "run", config, "--output", out, "--progress", "none"], { cwd: ROOT, maxBuffer: 16 << 20 });
  await exec(process.execPath, [CLI, "export", "agentworldbench", out, "--controls"], { cwd: ROOT, maxBuffer: 16 << 20 });
  return { out, dir: join(out, "export", "agentworldbench-controls") };
}
