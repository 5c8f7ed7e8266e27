import { type DottedOverride, parseYamlScalar } from "../config/dotted-overrides.ts";
import { UserError } from "../core/errors.ts";

/** One `--vary key=v1,v2,…`: a config key and the values it takes, in the order given. */
export interface Vary {
  key: string;
  values: unknown[];
}

/** One point of the grid: its settings and a folder-safe name made from them. */
export interface Variant {
  name: string;
  set: DottedOverride[];
}

/** Splits at commas outside brackets and braces, so a YAML flow value (`{ Echo: 0.1, Boilerplate: 0.2 }`) stays whole. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "[" || char === "{") depth++;
    else if (char === "]" || char === "}") depth = Math.max(0, depth - 1);
    else if (char === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** `mask.policy=all-observations,turn-stats` → key and values, each value read as a YAML scalar. */
export function parseVary(spec: string): Vary {
  const equals = spec.indexOf("=");
  if (equals <= 0)
    throw new UserError(`--vary "${spec}": expected <dotted.key>=<v1>,<v2>[,…], e.g. mask.policy=all-observations,turn-stats`);
  const key = spec.slice(0, equals).trim();
  const texts = splitTopLevel(spec.slice(equals + 1));
  if (texts.some((text) => text.trim() === "")) throw new UserError(`--vary "${spec}": an empty value (two commas, or a trailing one)`);
  return { key, values: texts.map((text) => parseYamlScalar(text.trim())) };
}

const shownValue = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** `mask.policy=turn-stats` → a name a folder can carry: anything but letters, digits, `.`, `-`, `=` becomes `_`. */
export function variantName(set: readonly DottedOverride[]): string {
  if (set.length === 0) return "base";
  return set.map(({ key, value }) => `${key}=${shownValue(value)}`.replace(/[^A-Za-z0-9.=-]/g, "_")).join("+");
}

/**
 * The cartesian product of the --vary values, the first --vary varying slowest. The first variant
 * (every key at its first value) is the baseline the others are compared with.
 */
export function cartesianVariants(varies: readonly Vary[]): Variant[] {
  const keys = varies.map((vary) => vary.key);
  const repeated = keys.find((key, index) => keys.indexOf(key) !== index);
  if (repeated !== undefined) throw new UserError(`--vary ${repeated} is given twice: list all of its values in one --vary`);
  let grid: DottedOverride[][] = [[]];
  for (const vary of varies) grid = grid.flatMap((set) => vary.values.map((value) => [...set, { key: vary.key, value }]));
  const variants = grid.map((set) => ({ name: variantName(set), set }));
  const names = variants.map((variant) => variant.name);
  const clash = names.find((name, index) => names.indexOf(name) !== index);
  if (clash !== undefined) throw new UserError(`two variants would share the folder name "${clash}": give distinct values`);
  return variants;
}
