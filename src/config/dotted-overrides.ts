import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { UserError } from "../core/errors.ts";

/** One `key.path=value` setting, applied to the merged raw config before it is validated. */
export interface DottedOverride {
  key: string;
  value: unknown;
}

type Plain = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Plain => typeof value === "object" && value !== null && !Array.isArray(value);

/** A value as YAML reads a scalar: `0.5` a number, `true` a boolean, `turn-stats` a string, `[a, b]` a list. */
export function parseYamlScalar(text: string): unknown {
  try {
    return parseYaml(text) ?? null;
  } catch {
    return text;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: zod 4's internal definition (`_zod.def`) is untyped across kinds.
type ZodDef = any;

/** The schema a value at `key` under `schema` must match; "any" where the schema cannot say (a record, a union). */
function childSchema(schema: z.ZodType, key: string): z.ZodType | "any" | undefined {
  let def: ZodDef = (schema as ZodDef)._zod.def;
  // Wrappers: default, optional, nullable, a transform's input.
  while (def.innerType || def.type === "pipe") def = (def.innerType ?? def.in)._zod.def;
  if (def.type === "object") return def.shape[key];
  if (def.type === "record") return def.valueType;
  return "any";
}

/**
 * Sets `key` (dot-separated, e.g. `mask.policy`) in `raw` (a copy: `raw` is left as it was). Every
 * key on the path must be one the config schema knows, so a typo fails here naming the key instead
 * of validating a config without the intended change; keys of free-form maps (`mask.keep.Echo`,
 * `mask.domain_keep.web`) may be new.
 */
export function applyDottedOverride(raw: Plain, override: DottedOverride, schema: z.ZodType): Plain {
  const parts = override.key.split(".");
  if (parts.some((part) => part === "")) throw new UserError(`config key "${override.key}": empty segment (expected e.g. mask.policy)`);
  const set = (node: Plain, nodeSchema: z.ZodType | "any", depth: number): Plain => {
    const part = parts[depth] as string;
    const sub = nodeSchema === "any" ? "any" : childSchema(nodeSchema, part);
    const where = parts.slice(0, depth).join(".") || "the top level";
    if (sub === undefined) {
      const known = nodeSchema === "any" ? [] : Object.keys(((nodeSchema as ZodDef)._zod.def.shape ?? {}) as Plain);
      throw new UserError(
        `config key "${override.key}": ${where} has no key "${part}"${known.length > 0 ? ` (known: ${known.join(", ")})` : ""}`,
      );
    }
    if (depth === parts.length - 1) return { ...node, [part]: override.value };
    const next = node[part] ?? {};
    if (!isPlainObject(next))
      throw new UserError(
        `config key "${override.key}": ${parts.slice(0, depth + 1).join(".")} is not a mapping, cannot set a key under it`,
      );
    return { ...node, [part]: set(next, sub, depth + 1) };
  };
  return set(raw, schema, 0);
}

export function applyDottedOverrides(raw: Plain, overrides: readonly DottedOverride[], schema: z.ZodType): Plain {
  return overrides.reduce((config, override) => applyDottedOverride(config, override, schema), raw);
}
