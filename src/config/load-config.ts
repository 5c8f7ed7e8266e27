import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { UserError } from "../core/errors.ts";
import { packagePath } from "../core/package-files.ts";
import { DOMAINS, isDomain } from "../core/trajectory.ts";
import { applyDottedOverrides, type DottedOverride } from "./dotted-overrides.ts";
import { binaryKind, inputFileKind, inputNotConfigMessage, MAX_CONFIG_BYTES, readHeadBytes } from "./input-not-config.ts";
import { configSchema, type JobConfig } from "./schema.ts";
import { refuseUnsupportedCombinations } from "./unsupported-combinations.ts";

export const CONFIGS_DIR = `${packagePath("configs")}/`;
export const DEFAULTS_PATH = resolve(CONFIGS_DIR, "defaults.yaml");

export interface LoadedConfig {
  path: string;
  config: JobConfig;
  /** The overrides applied, with absolute paths: enough to load the same config again (worker threads do). */
  overrides: ConfigOverrides;
}

export interface ConfigOverrides {
  /** Replaces the config's inputs; relative to the current directory. */
  inputs?: string[];
  /** Adds benchmark files to `decontaminate.benchmarks`; relative to the current directory. */
  benchmarks?: string[];
  /** Replaces output.dir; relative to the current directory. */
  output?: string;
  /**
   * `--format` / `--domain`: the reader and default domain of the `--input` globs (as
   * `inputs[].format` / `inputs[].domain`); without `--input`, of every input of the config.
   */
  format?: string;
  domain?: string;
  /** `key.path=value` settings (`lwm-data ablate --vary`), applied last, before validation. */
  set?: DottedOverride[];
}

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Objects merge key by key; arrays and scalars from `override` replace. */
function deepMerge(base: Plain, override: Plain): Plain {
  const merged: Plain = { ...base };
  for (const [key, value] of Object.entries(override)) {
    merged[key] = isPlainObject(value) && isPlainObject(base[key]) ? deepMerge(base[key] as Plain, value) : value;
  }
  return merged;
}

function readYaml(path: string): Plain {
  let text: string;
  try {
    // An input file given where the config goes is named as one before it is read whole.
    const head = readHeadBytes(path);
    const binary = binaryKind(head);
    if (binary) throw new UserError(inputNotConfigMessage(path, binary, DEFAULTS_PATH));
    const bytes = statSync(path).size;
    if (bytes > MAX_CONFIG_BYTES) {
      const kind = inputFileKind(path, head) ?? `${(bytes / 1e6).toFixed(0)} MB, more than any config`;
      throw new UserError(inputNotConfigMessage(path, kind, DEFAULTS_PATH));
    }
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read config ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const notConfig = () => {
    const kind = inputFileKind(path, Buffer.from(text.slice(0, 65536)));
    return kind ? new UserError(inputNotConfigMessage(path, kind, DEFAULTS_PATH)) : undefined;
  };
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const known = notConfig();
    if (known) throw known;
    const first = doc.errors[0] as { message: string; linePos?: [{ line: number; col: number }] };
    const where = first.linePos ? `:${first.linePos[0].line}:${first.linePos[0].col}` : "";
    throw new UserError(`${path}${where}: invalid YAML: ${first.message.split("\n")[0]}`);
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) {
    throw notConfig() ?? new UserError(`${path}: a config must be a YAML mapping (key: value), not ${typeof value}`);
  }
  return value;
}

/** A path relative to `base`; an `s3://` URI is already absolute. */
const resolveFrom = (base: string, path: unknown) =>
  typeof path === "string" && !isAbsolute(path) && !isUri(path) ? resolve(base, path) : path;

/** `path` under `root`, a folder or a `scheme://` location; absolute paths and URIs as they are. */
export function resolveUnder(root: string, path: unknown): unknown {
  if (!isUri(root)) return resolveFrom(root, path);
  if (typeof path !== "string" || isAbsolute(path) || isUri(path)) return path;
  return `${root.replace(/\/+$/, "")}/${path.replace(/^(\.\/)+/, "")}`;
}

const isUri = (path: string) => /^[a-z][a-z0-9+.-]*:\/\//.test(path);

/** Makes the file paths in one config layer absolute, relative to that layer's folder (inputs: to its `input.root`). */
function resolvePaths(layer: Plain, base: string): Plain {
  const out = { ...layer };
  let inputRoot = base;
  if (isPlainObject(out.input) && typeof out.input.root === "string") {
    inputRoot = resolveFrom(base, out.input.root) as string;
    out.input = { ...out.input, root: inputRoot };
  }
  if (Array.isArray(out.inputs)) {
    out.inputs = out.inputs.map((input) => (isPlainObject(input) ? { ...input, path: resolveUnder(inputRoot, input.path) } : input));
  }
  if (isPlainObject(out.decontaminate) && Array.isArray(out.decontaminate.benchmarks)) {
    out.decontaminate = {
      ...out.decontaminate,
      benchmarks: out.decontaminate.benchmarks.map((input) =>
        isPlainObject(input) ? { ...input, path: resolveFrom(base, input.path) } : input,
      ),
    };
  }
  if (isPlainObject(out.render)) {
    const render = { ...out.render };
    if ("template" in render && render.template !== "tokenizer") render.template = resolveFrom(base, render.template);
    if ("system_prompts_dir" in render) render.system_prompts_dir = resolveFrom(base, render.system_prompts_dir);
    out.render = render;
  }
  if (isPlainObject(out.tokenizer) && typeof out.tokenizer.name === "string" && /[/\\]|\.json$/.test(out.tokenizer.name)) {
    out.tokenizer = { ...out.tokenizer, name: resolveFrom(base, out.tokenizer.name) };
  }
  if (isPlainObject(out.output) && "dir" in out.output) out.output = { ...out.output, dir: resolveFrom(base, out.output.dir) };
  if (isPlainObject(out.sft) && isPlainObject(out.sft.teacher) && "cache_dir" in out.sft.teacher) {
    out.sft = { ...out.sft, teacher: { ...out.sft.teacher, cache_dir: resolveFrom(base, out.sft.teacher.cache_dir) } };
  }
  if (isPlainObject(out.controls) && isPlainObject(out.controls.rephrase) && "cache_dir" in out.controls.rephrase) {
    const rephrase = { ...out.controls.rephrase, cache_dir: resolveFrom(base, out.controls.rephrase.cache_dir) };
    out.controls = { ...out.controls, rephrase };
  }
  const synthesis = isPlainObject(out.controls) ? out.controls.synthesis : undefined;
  if (isPlainObject(out.controls) && isPlainObject(synthesis) && isPlainObject(synthesis.teacher) && "cache_dir" in synthesis.teacher) {
    const teacher = { ...synthesis.teacher, cache_dir: resolveFrom(base, synthesis.teacher.cache_dir) };
    out.controls = { ...out.controls, synthesis: { ...synthesis, teacher } };
  }
  return out;
}

function formatIssues(path: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const key = issue.path.length > 0 ? issue.path.map(String).join(".") : "(top level)";
    return `  ${key}: ${issue.message}`;
  });
  return `${path}: invalid config:\n${lines.join("\n")}`;
}

/** JSON with sorted keys, so equal settings always hash equal. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function loadConfig(path: string, overrides: ConfigOverrides = {}): LoadedConfig {
  const absolute = resolve(path);
  const { output: defaultOutput, ...defaultSettings } = readYaml(DEFAULTS_PATH);
  // The default output folder is relative to the job config, not to configs/.
  const defaults = { ...resolvePaths(defaultSettings, CONFIGS_DIR), output: defaultOutput };
  let merged = deepMerge(defaults, resolvePaths(readYaml(absolute), dirname(absolute)));
  if (isPlainObject(merged.output)) merged.output = { ...merged.output, dir: resolveFrom(dirname(absolute), merged.output.dir) };
  if (overrides.domain !== undefined && !isDomain(overrides.domain))
    throw new UserError(`--domain: expected one of ${DOMAINS.join(", ")}, got "${overrides.domain}"`);
  const inputSettings = {
    ...(overrides.format !== undefined ? { format: overrides.format } : {}),
    ...(overrides.domain !== undefined ? { domain: overrides.domain } : {}),
  };
  if (overrides.inputs && overrides.inputs.length > 0) {
    merged = { ...merged, inputs: overrides.inputs.map((glob) => ({ path: resolveFrom(process.cwd(), glob), ...inputSettings })) };
  } else if (Object.keys(inputSettings).length > 0 && Array.isArray(merged.inputs)) {
    merged = { ...merged, inputs: merged.inputs.map((input) => (isPlainObject(input) ? { ...input, ...inputSettings } : input)) };
  }
  if (overrides.output) merged = deepMerge(merged, { output: { dir: resolveFrom(process.cwd(), overrides.output) } });
  if (overrides.benchmarks && overrides.benchmarks.length > 0 && isPlainObject(merged.decontaminate)) {
    const configured = Array.isArray(merged.decontaminate.benchmarks) ? merged.decontaminate.benchmarks : [];
    const added = overrides.benchmarks.map((glob) => ({ path: resolveFrom(process.cwd(), glob) }));
    merged = { ...merged, decontaminate: { ...merged.decontaminate, benchmarks: [...configured, ...added] } };
  }

  if (overrides.set && overrides.set.length > 0) merged = applyDottedOverrides(merged, overrides.set, configSchema);

  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    // A JSON trajectory is a YAML mapping too: only the schema sees it is no config.
    const kind = inputFileKind(absolute, readHeadBytes(absolute));
    const hint = kind ? `\n\n${inputNotConfigMessage(absolute, kind, DEFAULTS_PATH)}` : "";
    throw new UserError(`${formatIssues(absolute, parsed.error)}${hint}`);
  }
  refuseUnsupportedCombinations(absolute, parsed.data);
  const absoluteOverrides: ConfigOverrides = {
    ...(overrides.inputs && overrides.inputs.length > 0
      ? { inputs: overrides.inputs.map((glob) => resolveFrom(process.cwd(), glob) as string) }
      : {}),
    ...(overrides.output ? { output: resolveFrom(process.cwd(), overrides.output) as string } : {}),
    ...(overrides.benchmarks && overrides.benchmarks.length > 0
      ? { benchmarks: overrides.benchmarks.map((glob) => resolveFrom(process.cwd(), glob) as string) }
      : {}),
    ...inputSettings,
    ...(overrides.set && overrides.set.length > 0 ? { set: overrides.set } : {}),
  };
  return { path: absolute, config: parsed.data, overrides: absoluteOverrides };
}
