import { relative } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { planJob } from "../pipeline/plan.ts";
import { type Progress, runJob } from "../pipeline/run-job.ts";

interface RunOptions {
  input: string[];
  output?: string;
  progress: "auto" | "tty" | "none";
}

/** Live status line on a terminal; silent in logs and pipes unless asked. */
function progressPrinter(mode: RunOptions["progress"]): ((p: Progress) => void) | undefined {
  const enabled = mode === "tty" || (mode === "auto" && process.stderr.isTTY);
  if (!enabled) return undefined;
  const started = Date.now();
  let lastDraw = 0;
  return (p) => {
    const now = Date.now();
    if (now - lastDraw < 200) return;
    lastDraw = now;
    const rate = p.recordsIn / Math.max((now - started) / 1000, 0.001);
    process.stderr.write(
      `\r\x1b[2K[${p.fileIndex + 1}/${p.fileCount}] ${p.file}: ${p.recordsIn} records, ${p.samplesOut} samples, ${p.quarantined} quarantined, ${rate.toFixed(0)} rec/s`,
    );
  };
}

export async function runCommand(configPath: string, options: RunOptions): Promise<void> {
  const loaded = loadConfig(configPath, { inputs: options.input, ...(options.output ? { output: options.output } : {}) });
  const plan = await planJob(loaded);
  const onProgress = progressPrinter(options.progress);
  const started = Date.now();
  const result = await runJob(plan, onProgress);
  if (onProgress) process.stderr.write("\r\x1b[2K");
  const { counts, tokens, shards } = result.manifest;
  const where = (path: string) => relative(process.cwd(), path) || ".";
  const lines = [
    `lwm-data run: ${plan.pipeline.name} pipeline, ${plan.files.length} input file(s), ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `  records in    ${counts.records_in}`,
    `  samples out   ${counts.samples_out}`,
    `  quarantined   ${counts.quarantined}${
      counts.quarantined > 0
        ? `  (${Object.entries(counts.quarantined_by_stage)
            .map(([s, n]) => `${s}: ${n}`)
            .join(", ")}) → ${where(result.quarantinePath ?? "")}`
        : ""
    }`,
    `  tokens        ${tokens.total} (${tokens.loss} with loss, ${tokens.total > 0 ? ((100 * tokens.loss) / tokens.total).toFixed(1) : "0.0"}%)`,
    `  shards        ${shards.length} in ${where(result.outputDir)}/data`,
    `  manifest      ${where(result.manifestPath)}`,
  ];
  console.log(lines.join("\n"));
}
