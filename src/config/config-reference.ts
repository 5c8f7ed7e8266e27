/**
 * The config reference (docs/config.md), generated from the zod schema's JSON Schema (its
 * descriptions are the meanings) and configs/defaults.yaml (the defaults), so the three never
 * drift apart; and the checks that keep defaults.yaml in step with the schema. The walk is generic:
 * a new section, map or list in the schema needs no change here.
 *
 * Maps (z.record, and fixed-key objects whose keys all share one schema and whose `.meta` names
 * a `keyName`) are one row with a placeholder key, `mixture.sources.<name>`; lists of objects
 * list their items' keys under `inputs[].path`. A schema with a `.meta` `title` (e.g. the
 * recursive filter predicate) is a definition: documented once in a section of its own, and a
 * link to it wherever it is used.
 */
import { readFileSync } from "node:fs";
import { createTwoFilesPatch } from "diff";
import { parse, stringify } from "yaml";
import { z } from "zod";
import { DEFAULTS_PATH } from "./load-config.ts";
import { configSchema } from "./schema.ts";

/** The part of JSON Schema (draft 2020-12) that z.toJSONSchema writes and the reference reads. */
export interface JsonSchema {
  /** One type, or several (`["string", "number", "null"]`). */
  type?: string | string[];
  description?: string;
  /** A definition's name (`.meta({ title })`): it gets a section of its own and links where it is used. */
  title?: string;
  /** lwm-data's own metadata (schema.ts): the placeholder a map's key gets in the reference. */
  keyName?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  pattern?: string;
  format?: string;
  minItems?: number;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

export interface ReferenceRow {
  /** Dotted path, `[]` for a list's items, `<name>` for a map's keys. */
  path: string;
  type: string;
  /** Markdown: the default from defaults.yaml (else the schema's), `—` (optional) or `required`. */
  default: string;
  meaning: string;
}

export interface ReferenceSection {
  /** The top-level key, or a definition's title. */
  key: string;
  /** A definition (a titled schema used under other keys), not a key of the config. */
  definition?: boolean;
  description: string;
  rows: ReferenceRow[];
}

type Plain = Record<string, unknown>;

export const CONFIG_DOC = "docs/config.md";
export const REGENERATE_COMMAND = "npm run config:reference";
/** Keys every job config sets itself: by design they have no default in defaults.yaml. */
export const JOB_KEYS: readonly string[] = ["inputs"];
/** What stands in for the job keys when defaults.yaml alone is parsed. */
const JOB_SAMPLE: Plain = { inputs: [{ path: "data.jsonl" }] };

const isPlain = (value: unknown): value is Plain => typeof value === "object" && value !== null && !Array.isArray(value);

/** defaults.yaml as written (paths unresolved, as a reader of the reference wants them). */
export function readDefaults(path: string = DEFAULTS_PATH): Plain {
  const value: unknown = parse(readFileSync(path, "utf8"), { prettyErrors: true });
  if (!isPlain(value)) throw new Error(`${path}: defaults must be a YAML mapping`);
  return value;
}

/** The schema as the user writes it (`io: "input"`: keys with a zod default are optional); transforms and custom types become `any`, not an error. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
}

// ---------------------------------------------------------------------------------------------
// The walk

/** The `$ref`s being expanded, each with the path where its expansion started. */
type Refs = readonly (readonly [string, string])[];

interface At {
  value: unknown;
  required: boolean;
  notes: string[];
  refs: Refs;
  meaning?: string;
  def?: string;
}

class Walker {
  readonly rows = new Map<string, ReferenceRow>();
  /** Titled schemas met on the walk, by title: each is documented once, in its own section. */
  readonly definitions = new Map<string, JsonSchema>();
  private readonly root: JsonSchema;
  constructor(root: JsonSchema) {
    this.root = root;
  }

  /** Follows `$ref`s (recursive schemas, shared definitions) within the root document. */
  resolve(node: JsonSchema): JsonSchema {
    let current = node;
    for (let hops = 0; current.$ref !== undefined && hops < 32; hops++) {
      const ref = current.$ref;
      let target: unknown = this.root;
      if (ref !== "#") {
        if (!ref.startsWith("#/")) return {};
        for (const part of ref.slice(2).split("/"))
          target = isPlain(target) ? target[part.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined;
      }
      if (!isPlain(target)) return {};
      // Keys beside the `$ref` (a description) win over the target's.
      const { $ref: _, ...beside } = current;
      current = { ...(target as JsonSchema), ...beside };
    }
    return current;
  }

  add(row: ReferenceRow): void {
    const seen = this.rows.get(row.path);
    if (!seen) {
      this.rows.set(row.path, row);
      return;
    }
    // The same key in several union variants: one row, every variant's type.
    if (!seen.type.split(" or ").includes(row.type)) seen.type = `${seen.type} or ${row.type}`;
    if (seen.meaning === "") seen.meaning = row.meaning;
  }

  /**
   * One node of the schema at `path`; `at` says what is known there: defaults.yaml's value
   * (undefined inside lists and maps, whose defaults are per item), whether the parent requires
   * it, what the placeholders in `path` stand for, the `$ref`s being expanded (a recursive schema
   * is named once, not walked forever), and a meaning and default handed down by a map.
   */
  node(raw: JsonSchema, path: string, at: At): void {
    const meaning = at.meaning ?? raw.description ?? this.resolve(raw).description ?? "";
    const expanding = at.refs.find(([ref]) => ref === raw.$ref);
    if (expanding !== undefined) {
      const type = withNotes(`the same as ${code(expanding[1])} (recursive)`, at.notes);
      this.add({ path, type, default: at.def ?? defaultText(at.value, raw, at.required, path), meaning });
      return;
    }
    const refs: Refs = raw.$ref !== undefined ? [...at.refs, [raw.$ref, path]] : at.refs;
    const schema = this.resolve(raw);
    const def = at.def ?? defaultText(at.value, schema, at.required, path);
    if (schema.title !== undefined) {
      // A definition: a link here, its keys in its own section. Kept without what this use writes
      // beside its `$ref` (this key's own description).
      if (!this.definitions.has(schema.title))
        this.definitions.set(schema.title, raw.$ref !== undefined ? this.resolve({ $ref: raw.$ref }) : schema);
      this.add({ path, type: withNotes(typeText(schema, this), at.notes), default: def, meaning });
      return;
    }
    const variants = (schema.anyOf ?? schema.oneOf ?? []).map((v) => this.resolve(v));

    if (schema.allOf !== undefined) {
      // An intersection: one object with every part's keys.
      const merged: JsonSchema = { ...schema, properties: {}, required: [] };
      delete merged.allOf;
      for (const part of schema.allOf.map((p) => this.resolve(p))) {
        Object.assign(merged.properties as Record<string, JsonSchema>, part.properties);
        merged.required = [...(merged.required ?? []), ...(part.required ?? [])];
      }
      this.node(merged, path, { ...at, refs });
      return;
    }
    if (schema.properties !== undefined && variants.length === 0) {
      const uniform = uniformValue(schema);
      if (schema.keyName !== undefined && uniform !== undefined) {
        const keys = Object.keys(schema.properties).map(code).join(", ");
        this.map(uniform, path, schema.keyName, `each of ${keys}`, { ...at, refs, meaning, def });
        return;
      }
      // A nested object's own row says what it is for (and carries a map's default); a top-level
      // one's meaning is its section's paragraph.
      if (/[.<[]/.test(path) && (meaning !== "" || Boolean(at.def))) {
        this.add({ path, type: withNotes("object", at.notes), default: at.def ?? "", meaning });
      }
      this.properties(schema, path, at.value, refs);
      return;
    }
    if (variants.some((v) => v.properties !== undefined)) {
      // A union with object members: its row lists the members, then every member's keys.
      this.add({ path, type: withNotes(typeText(schema, this), at.notes), default: def, meaning });
      for (const variant of variants) if (variant.properties !== undefined) this.properties(variant, path, undefined, refs);
      return;
    }
    if (isMap(schema)) {
      const constraint = keyConstraint(schema.propertyNames);
      this.map(schema.additionalProperties as JsonSchema, path, schema.keyName ?? "key", constraint, { ...at, refs, meaning, def });
      return;
    }
    this.add({ path, type: withNotes(typeText(schema, this), at.notes), default: def, meaning });
    if (schema.type === "array" && schema.items !== undefined && hasFields(this.resolve(schema.items), this)) {
      this.node(schema.items, `${path}[]`, { value: undefined, required: true, notes: [], refs, def: "" });
    }
  }

  /** A map: its values at `path.<keyName>`, described by the map, with the map's default. */
  private map(valueSchema: JsonSchema, path: string, keyName: string, constraint: string, at: At & { meaning: string; def: string }): void {
    const placeholder = `<${keyName}>`;
    const notes = [...at.notes, `${code(placeholder)}: ${constraint === "" ? "any key" : constraint}`];
    this.node(valueSchema, `${path}.${placeholder}`, {
      value: undefined,
      required: true,
      notes,
      refs: at.refs,
      meaning: at.meaning,
      def: at.def,
    });
  }

  properties(schema: JsonSchema, path: string, value: unknown, refs: Refs): void {
    const required = new Set(schema.required ?? []);
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      const childValue = isPlain(value) ? value[key] : undefined;
      this.node(child, path === "" ? key : `${path}.${key}`, { value: childValue, required: required.has(key), notes: [], refs });
    }
  }
}

const isMap = (s: JsonSchema): boolean => s.type === "object" && s.properties === undefined && isPlain(s.additionalProperties);
/** An object with named keys of its own (or a union with such members): its keys get rows. */
const hasFields = (s: JsonSchema, walker: Walker): boolean =>
  s.title === undefined &&
  ((s.properties !== undefined && s.keyName === undefined) ||
    (s.anyOf ?? s.oneOf ?? []).some((v) => walker.resolve(v).properties !== undefined));

/** The markdown link to a definition's section. */
const definitionLink = (title: string): string => `[${title}](#${anchor(title)})`;
/** GitHub's heading anchor: lower case, punctuation but - and _ dropped, spaces as -. */
const anchor = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** The one schema every key of a fixed-key object shares, if they do. */
function uniformValue(schema: JsonSchema): JsonSchema | undefined {
  const values = Object.values(schema.properties ?? {});
  const first = values[0];
  if (first === undefined || (schema.required ?? []).length !== values.length) return undefined;
  return values.every((v) => JSON.stringify(v) === JSON.stringify(first)) ? first : undefined;
}

function keyConstraint(names: JsonSchema | undefined): string {
  if (names?.enum !== undefined) return `one of ${names.enum.map((k) => code(String(k))).join(", ")}`;
  if (names?.pattern !== undefined) return `matching ${code(names.pattern)}`;
  return "";
}

const withNotes = (type: string, notes: string[]): string => (notes.length === 0 ? type : `${type}; ${notes.join("; ")}`);

// ---------------------------------------------------------------------------------------------
// Cell text

const SAFE_INT = Number.MAX_SAFE_INTEGER;

/** A value in a code span (double backticks when it holds one). */
function code(text: string): string {
  return text.includes("`") ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function numberText(s: JsonSchema, integer: boolean): string {
  const name = integer ? "integer" : "number";
  // zod writes ±MAX_SAFE_INTEGER for every int(): not a limit anyone sets.
  let lo = s.minimum !== undefined && s.minimum > -SAFE_INT ? { v: s.minimum, open: false } : undefined;
  let hi = s.maximum !== undefined && s.maximum < SAFE_INT ? { v: s.maximum, open: false } : undefined;
  if (s.exclusiveMinimum !== undefined)
    lo = integer ? { v: Math.floor(s.exclusiveMinimum) + 1, open: false } : { v: s.exclusiveMinimum, open: true };
  if (s.exclusiveMaximum !== undefined)
    hi = integer ? { v: Math.ceil(s.exclusiveMaximum) - 1, open: false } : { v: s.exclusiveMaximum, open: true };
  if (lo && hi) return `${name} in ${lo.open ? "(" : "["}${lo.v}, ${hi.v}${hi.open ? ")" : "]"}`;
  if (lo) return `${name} ${lo.open ? ">" : "≥"} ${lo.v}`;
  if (hi) return `${name} ${hi.open ? "<" : "≤"} ${hi.v}`;
  return name;
}

function typeText(raw: JsonSchema, walker: Walker): string {
  const s = walker.resolve(raw);
  if (s.title !== undefined) return definitionLink(s.title);
  if (Array.isArray(s.type)) return s.type.map((type) => typeText({ ...s, type }, walker)).join(" or ");
  const variants = s.anyOf ?? s.oneOf;
  if (variants !== undefined) return [...new Set(variants.map((v) => typeText(v, walker)))].join(" or ");
  if (s.const !== undefined) return code(typeof s.const === "string" ? s.const : JSON.stringify(s.const));
  if (s.enum !== undefined) return s.enum.map((v) => code(typeof v === "string" ? v : JSON.stringify(v))).join(" | ");
  switch (s.type) {
    case "integer":
      return numberText(s, true);
    case "number":
      return numberText(s, false);
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "string":
      if (s.format === "uri") return "URL";
      if (s.pattern !== undefined) return `string matching ${code(s.pattern)}`;
      return s.minLength !== undefined && s.minLength > 0 ? "non-empty string" : "string";
    case "array": {
      const item = s.items !== undefined ? walker.resolve(s.items) : undefined;
      const of = item === undefined ? "values" : hasFields(item, walker) ? "objects" : typeText(item, walker);
      return `list of ${of}${s.minItems !== undefined && s.minItems > 0 ? ` (at least ${s.minItems})` : ""}`;
    }
    case "object":
      return s.properties !== undefined && s.keyName === undefined ? code(`{ ${Object.keys(s.properties).join(", ")} }`) : "object";
    default:
      return "any";
  }
}

const UNITS: [number, string][] = [
  [2 ** 40, "TiB"],
  [2 ** 30, "GiB"],
  [2 ** 20, "MiB"],
  [2 ** 10, "KiB"],
];
const INLINE_LIMIT = 140;

function valueText(value: unknown, path: string): string {
  if (typeof value === "number" && Number.isInteger(value) && /bytes$/.test(path)) {
    const unit = UNITS.find(([size]) => value >= size && value % size === 0);
    if (unit) return `${code(String(value))} (${value / unit[0]} ${unit[1]})`;
  }
  const text =
    typeof value === "string"
      ? value === ""
        ? '""'
        : value
      : stringify(value, { collectionStyle: "flow", lineWidth: 0, defaultStringType: "PLAIN" }).trim();
  if (text.length > INLINE_LIMIT || text.includes("\n")) return "see [`configs/defaults.yaml`](../configs/defaults.yaml)";
  return code(text);
}

function defaultText(value: unknown, schema: JsonSchema, required: boolean, path: string): string {
  if (value !== undefined) return valueText(value, path);
  if (schema.default !== undefined) return valueText(schema.default, path);
  return required ? "required" : "—";
}

/** A table cell: `|` escaped, one line, `<…>` outside code spans kept as text rather than HTML. */
function cell(text: string): string {
  const escaped = text
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replaceAll("<", "&lt;").replaceAll(">", "&gt;")))
    .join("");
  return escaped.replaceAll("|", "\\|").replace(/\s*\n\s*/g, " ");
}

// ---------------------------------------------------------------------------------------------
// The reference

export interface ReferenceSources {
  schema: z.ZodType;
  defaults: Plain;
}

const defaultSources = (): ReferenceSources => ({ schema: configSchema, defaults: readDefaults() });

/** The reference as data: one section per top-level key of the schema, in the schema's order. */
export function configSections({ schema, defaults }: ReferenceSources = defaultSources()): ReferenceSection[] {
  const root = jsonSchemaOf(schema);
  const required = new Set(root.required ?? []);
  const definitions = new Map<string, JsonSchema>();
  const sections: ReferenceSection[] = Object.entries(root.properties ?? {}).map(([key, child]) => {
    const walker = new Walker(root);
    walker.node(child, key, { value: defaults[key], required: required.has(key), notes: [], refs: [] });
    for (const [title, def] of walker.definitions) if (!definitions.has(title)) definitions.set(title, def);
    const resolved = walker.resolve(child);
    // An object section's description is its paragraph; any other key's is its own row's meaning.
    const isSection = resolved.properties !== undefined && resolved.keyName === undefined && resolved.title === undefined;
    return { key, description: isSection ? (resolved.description ?? "") : "", rows: [...walker.rows.values()] };
  });
  // Definitions after the keys, in the order they were met (a definition may use another: the map grows as it is walked).
  for (const [title, def] of definitions) {
    const walker = new Walker(root);
    walker.properties(def, "", undefined, []);
    for (const [inner, innerDef] of walker.definitions) if (!definitions.has(inner)) definitions.set(inner, innerDef);
    sections.push({ key: title, definition: true, description: def.description ?? "", rows: [...walker.rows.values()] });
  }
  return sections;
}

/** docs/config.md. */
export function configReference(sources: ReferenceSources = defaultSources()): string {
  const sections = configSections(sources);
  const keys = sections.filter((s) => !s.definition);
  const definitions = sections.filter((s) => s.definition);
  const jobKeys = keys.flatMap((s) => s.rows.filter((r) => !r.path.includes(".") && r.default === "required").map((r) => code(r.path)));
  const out: string[] = [
    "# Config reference",
    "",
    `<!-- Generated by \`${REGENERATE_COMMAND}\` (scripts/config-reference.ts) from src/config/schema.ts and configs/defaults.yaml: edit those, not this file. -->`,
    "",
    "A job config is YAML, merged key by key over [`configs/defaults.yaml`](../configs/defaults.yaml) (objects merge, lists and scalars replace). " +
      `Every key has a default there except ${jobKeys.length > 0 ? jobKeys.join(", ") : "none"}. ` +
      "Relative paths resolve against the folder of the file they are written in. Unknown keys are errors (a typo never silently falls back to a default), " +
      "and an error names the key path and what was expected, e.g. `job.yaml: invalid config: output.num_buckets: Invalid input: expected number, received string`.",
    "",
    "In a key, `[]` stands for every item of a list and `<name>` for every key of a map; **required** marks a key with no default, `—` an optional one. " +
      "Defaults are shown as written in defaults.yaml, where relative paths resolve against `configs/` (but `output.dir`, against the job config).",
    "",
    `Sections: ${keys.map((s) => `[\`${s.key}\`](#${s.key.toLowerCase()})`).join(" · ")}`,
  ];
  if (definitions.length > 0) {
    out.push("", `Definitions (used under several keys or in themselves): ${definitions.map((s) => definitionLink(s.key)).join(" · ")}`);
  }
  for (const section of [...keys, ...definitions]) {
    out.push("", section.definition ? `## ${section.key}` : `## \`${section.key}\``, "");
    if (section.description !== "") out.push(section.description, "");
    out.push("| key | type | default | meaning |", "|---|---|---|---|");
    for (const row of section.rows) {
      const def = row.default === "required" ? "**required**" : row.default;
      out.push(`| ${code(row.path)} | ${cell(row.type)} | ${cell(def)} | ${cell(row.meaning)} |`);
    }
  }
  return `${out.join("\n")}\n`;
}

/** Undefined when `onDisk` (the file's text, undefined if missing) is what the schema generates; else a message with the diff. */
export function referenceDrift(onDisk: string | undefined, generated: string, file: string = CONFIG_DOC): string | undefined {
  if (onDisk === generated) return undefined;
  const head =
    onDisk === undefined ? `${file} is missing` : `${file} differs from what src/config/schema.ts and configs/defaults.yaml generate`;
  const patch = createTwoFilesPatch(file, `${file} (generated)`, onDisk ?? "", generated, "", "", { context: 1 })
    .split("\n")
    .filter((line) => !line.startsWith("Index:") && !line.startsWith("===="));
  const shown = patch.length > 80 ? [...patch.slice(0, 80), `… ${patch.length - 80} more diff lines`] : patch;
  return `${head}: run \`${REGENERATE_COMMAND}\` (node scripts/config-reference.ts) and commit the result.\n${shown.join("\n")}`;
}

// ---------------------------------------------------------------------------------------------
// defaults.yaml against the schema

/** Required keys (leaves, or a whole list/map) with no value in `defaults` and no default in the schema. */
export function missingDefaults(schema: z.ZodType, defaults: Plain): string[] {
  const root = jsonSchemaOf(schema);
  const walker = new Walker(root);
  const missing: string[] = [];
  const visit = (node: JsonSchema, value: unknown, path: string) => {
    const required = new Set(node.required ?? []);
    for (const [key, raw] of Object.entries(node.properties ?? {})) {
      const child = walker.resolve(raw);
      const at = path === "" ? key : `${path}.${key}`;
      const childValue = isPlain(value) ? value[key] : undefined;
      if (childValue === undefined && (!required.has(key) || child.default !== undefined)) continue;
      // Fixed-key objects are checked key by key; anything else (a list, a map, a scalar) is one value.
      if (child.properties !== undefined && !child.anyOf && !child.oneOf) visit(child, childValue, at);
      else if (childValue === undefined) missing.push(at);
    }
  };
  visit(root, defaults, "");
  return missing;
}

/** Keys in `defaults` that the schema does not have (inside fixed-key objects; map keys are the parse's business). */
export function unknownDefaults(schema: z.ZodType, defaults: Plain): string[] {
  const root = jsonSchemaOf(schema);
  const walker = new Walker(root);
  const unknown: string[] = [];
  const visit = (node: JsonSchema, value: Plain, path: string) => {
    for (const [key, childValue] of Object.entries(value)) {
      const at = path === "" ? key : `${path}.${key}`;
      const raw = node.properties?.[key];
      if (raw === undefined) {
        if (!isPlain(node.additionalProperties)) unknown.push(at);
        continue;
      }
      const child = walker.resolve(raw);
      if (child.properties !== undefined && isPlain(childValue)) visit(child, childValue, at);
    }
  };
  visit(root, defaults, "");
  return unknown;
}

/** Everything wrong with `defaults` against `schema`, one line each; empty when they agree. */
export function defaultsProblems(schema: z.ZodType, defaults: Plain, file = "configs/defaults.yaml"): string[] {
  const problems = [
    ...missingDefaults(schema, defaults)
      .filter((key) => !JOB_KEYS.includes(key))
      .map((key) => `${file}: ${key}: no default, and the schema requires it (add it to ${file}, or make it optional in the schema)`),
    ...unknownDefaults(schema, defaults).map((key) => `${file}: ${key}: not a key of the schema (src/config/schema.ts)`),
  ];
  const parsed = schema.safeParse({ ...JOB_SAMPLE, ...defaults });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(`${file}: does not parse under the schema: ${issue.path.map(String).join(".") || "(top level)"}: ${issue.message}`);
    }
  }
  return problems;
}
