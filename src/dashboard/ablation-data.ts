import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { AblationReport } from "../ablate/report.ts";
import { UserError } from "../core/errors.ts";
import { readJsonFile } from "../io/json-file.ts";
import type { AblationData, AblationInterval } from "./dashboard-data.ts";

/** The file `lwm-data ablate` writes in its folder. */
export const ABLATION_FILE = "ablate.json";

/** An ablation folder opened by the dashboard: its table, and the build the other panels show (the baseline variant's). */
export interface AblationFolder {
  data: AblationData;
  runDir: string;
}

const interval = (m: { mean: number; low: number | null; high: number | null; n: number }): AblationInterval => ({
  mean: m.mean,
  low: m.low,
  high: m.high,
  n: m.n,
});

/**
 * Reads DIR/ablate.json when DIR is an ablation folder (it has the file and no manifest.json);
 * undefined for any other folder. The baseline's build is found under DIR/variants/ (the folder
 * may have moved since ablate recorded its absolute paths).
 */
export async function openAblationFolder(dir: string): Promise<AblationFolder | undefined> {
  if (existsSync(join(dir, "manifest.json")) || !existsSync(join(dir, ABLATION_FILE))) return undefined;
  const report = await readJsonFile<AblationReport>(join(dir, ABLATION_FILE));
  if (!report?.variants?.length || !report.baseline)
    throw new UserError(`${join(dir, ABLATION_FILE)} is not an ablation report of \`lwm-data ablate\` (no variants)`);
  const runDir = join(dir, "variants", report.baseline);
  if (!existsSync(join(runDir, "manifest.json")))
    throw new UserError(`${runDir}: the baseline variant's build is missing; rerun \`lwm-data ablate\` with --out ${dir} (it resumes)`);
  const first = report.variants[0]?.runs[0];
  const seen = report.eval.seen_once;
  const seenOnce =
    seen && ("unavailable" in seen ? { unavailable: seen.unavailable } : { tokens: seen.tokens, observations: seen.observations });
  return {
    runDir,
    data: {
      dir: resolve(dir),
      config: report.config,
      model: report.command.model,
      tokens: report.command.tokens,
      seeds: report.command.seeds,
      baseline: report.baseline,
      evalTokens: first?.eval_tokens ?? 0,
      informativeTokens: first?.eval_subset_tokens ?? 0,
      ...(first?.awb_rows !== undefined ? { awbRows: first.awb_rows } : {}),
      ...(seenOnce ? { seenOnce } : {}),
      variants: report.variants.map((variant) => ({
        name: variant.name,
        set: variant.set.map((o) => `${o.key}=${typeof o.value === "string" ? o.value : JSON.stringify(o.value)}`),
        loss: interval(variant.loss),
        difference: variant.difference ? interval(variant.difference) : null,
        informativeLoss: interval(variant.informative_loss),
        informativeDifference: variant.informative_difference ? interval(variant.informative_difference) : null,
        ...(variant.awb_loss
          ? { awbLoss: interval(variant.awb_loss), awbDifference: variant.awb_difference ? interval(variant.awb_difference) : null }
          : {}),
        ...(variant.seen_once_loss !== undefined
          ? {
              seenOnceLoss: variant.seen_once_loss ? interval(variant.seen_once_loss) : null,
              seenOnceDifference: variant.seen_once_difference ? interval(variant.seen_once_difference) : null,
            }
          : {}),
        trainedWeight: variant.trained_weight,
        seedLosses: variant.runs.map((run) => ({ seed: run.seed, loss: run.eval_loss })),
      })),
    },
  };
}
