import type { ConfigOverrides } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { FORMAT_NAMES } from "../read/registry.ts";

/** The input options `run`, `validate`, `plan` and `launch` share. */
export interface InputOptions {
  input: string[];
  benchmark: string[];
  output?: string;
  format?: string;
  domain?: string;
}

/**
 * The config overrides of the input options. `--format` and `--domain` apply to the `--input`
 * globs as `inputs[].format` / `inputs[].domain` do (without `--input`, to every input of the
 * config); the domain is checked by `loadConfig`, the format here, naming the known ones.
 */
export function inputOverrides(options: InputOptions): ConfigOverrides {
  if (options.format !== undefined && options.format !== "auto" && !FORMAT_NAMES.includes(options.format))
    throw new UserError(`--format: unknown input format "${options.format}"; known formats: auto, ${FORMAT_NAMES.join(", ")}`);
  return {
    inputs: options.input,
    benchmarks: options.benchmark,
    ...(options.output ? { output: options.output } : {}),
    ...(options.format !== undefined ? { format: options.format } : {}),
    ...(options.domain !== undefined ? { domain: options.domain } : {}),
  };
}
