import { existsSync } from "node:fs";
import { DEFAULT_PYTHON, type ProxyModel, runAblation } from "../ablate/run-ablation.ts";
import { parseVary } from "../ablate/variants.ts";
import type { LoadedConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { planJob } from "../pipeline/plan.ts";
import { runJob } from "../pipeline/run-job.ts";
import { positiveInt } from "./positive-int.ts";

interface AblateOptions {
  vary: string[];
  out: string;
  seeds: string;
  tokens: string;
  model: ProxyModel;
  python?: string;
  validationFraction: string;
  workers?: string;
  inputRoot?: string;
}

/** Builds one variant with the normal pipeline; a finished output is resumed (nothing redone). */
function buildWith(workers: number | undefined) {
  return async (loaded: LoadedConfig) => {
    const plan = await planJob(loaded);
    // ablate owns DIR/variants: a variant whose config changed (the base config was edited) is rebuilt.
    const result = await runJob(plan, { overwrite: true, ...(workers !== undefined ? { workers } : {}) });
    if (!result.manifest)
      throw new UserError(`the build of ${loaded.config.output.dir} did not finish (${result.unfinished} task(s) left)`);
  };
}

export async function ablateCommand(configPath: string, options: AblateOptions): Promise<void> {
  if (options.vary.length === 0) throw new UserError("ablate: give at least one --vary <dotted.key>=<v1>,<v2>");
  const fraction = Number(options.validationFraction);
  if (!(fraction > 0 && fraction < 1))
    throw new UserError(`--validation-fraction must be between 0 and 1, got "${options.validationFraction}"`);
  const python = options.python ?? DEFAULT_PYTHON;
  if (!options.python && !existsSync(python))
    throw new UserError(
      `no Python environment at ${python}: run bash test/python/ensure-venv.sh, or pass --python <interpreter with torch, transformers, pyarrow>`,
    );
  const report = await runAblation({
    configPath,
    varies: options.vary.map(parseVary),
    outDir: options.out,
    seeds: positiveInt(options.seeds, "--seeds"),
    tokens: positiveInt(options.tokens, "--tokens"),
    model: options.model,
    python,
    validationFraction: fraction,
    ...(options.inputRoot ? { inputRoot: options.inputRoot } : {}),
    build: buildWith(options.workers === undefined ? undefined : positiveInt(options.workers, "--workers")),
    log: (line) => console.error(line),
  });
  const { ablationMarkdown } = await import("../ablate/report.ts");
  console.log(ablationMarkdown(report));
}
