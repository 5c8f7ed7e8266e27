import { z } from "zod";
import { UserError } from "../core/errors.ts";
import { TURN_CLASSES } from "../mask/turn-classes.ts";
import type { RecordFacts } from "./record-facts.ts";

/**
 * The predicate language of record filters (docs/filters-selection-scoring.md "Filters and selection"): YAML, no code. A
 * predicate is a leaf — one field, one comparison: `{ field: outcome, in: [resolved, success] }`
 * — or a combinator: `{ all: [...] }`, `{ any: [...] }`, `{ not: {...} }`. Everything a config
 * can get wrong (unknown field, a comparison the field's type has no sense for, a bad regex, an
 * empty list) is refused when the config is read, with the path of the offending predicate.
 *
 * Null: a field the record does not know (outcome of a plain text, a scorer that gave no score)
 * is null, and every comparison with null is false except `exists: false` and `eq: null`; so
 * `ne`/`not_in` do not match null either, while `not: {field: outcome, eq: resolved}` does.
 */

type Scalar = string | number;

/** A predicate as written in a config (one shape for leaves and combinators; the checks make it exactly one of them). */
export interface Predicate {
  all?: Predicate[];
  any?: Predicate[];
  not?: Predicate;
  field?: string;
  eq?: Scalar | null;
  ne?: Scalar | null;
  in?: Scalar[];
  not_in?: Scalar[];
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
  exists?: boolean;
  matches?: string;
  has?: string;
  has_any?: string[];
  has_all?: string[];
}

type FieldKind = "text" | "number" | "list";

/** Every RecordFacts key but the two maps, which are named by dotted keys (`classes.Echo`, `scores.judge`). */
const FIELDS = {
  id: "text",
  domain: "text",
  source: "text",
  format: "text",
  task_id: "text",
  attempt: "text",
  agent: "text",
  model: "text",
  outcome: "text",
  failure_mode: "text",
  reward: "number",
  turns: "number",
  tokens: "number",
  loss_tokens: "number",
  trained_share: "number",
  labels: "list",
} as const satisfies Record<Exclude<keyof RecordFacts, "classes" | "scores">, FieldKind>;

type PlainField = keyof typeof FIELDS;

const FIELD_LIST = [...Object.keys(FIELDS), "classes.<class>", "scores.<name>"].join(", ");

/** A scorer's name as `scores.<name>` spells it. */
const SCORE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const COMPARISONS = ["eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "exists", "matches", "has", "has_any", "has_all"] as const;
type Comparison = (typeof COMPARISONS)[number];

const ALLOWED: Record<FieldKind, readonly Comparison[]> = {
  text: ["eq", "ne", "in", "not_in", "matches", "exists"],
  number: ["eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "exists"],
  list: ["has", "has_any", "has_all"],
};

const COMBINATORS = ["all", "any", "not"] as const;

/** A resolved field: how to read it from the facts and what type it has. */
type FieldRef =
  | { name: string; kind: "text" | "number"; key: Exclude<PlainField, "labels"> }
  | { name: string; kind: "list"; key: "labels" }
  | { name: string; kind: "number"; map: "classes" | "scores"; entry: string };

/** The field a leaf names, or why it cannot be read. */
function resolveField(name: string): FieldRef | string {
  const dot = name.indexOf(".");
  if (dot < 0) {
    if (!Object.hasOwn(FIELDS, name)) return `unknown field "${name}"; fields: ${FIELD_LIST}`;
    const key = name as PlainField;
    if (key === "labels") return { name, kind: "list", key };
    return { name, kind: FIELDS[key], key };
  }
  const map = name.slice(0, dot);
  const entry = name.slice(dot + 1);
  if (map === "classes") {
    if (!(TURN_CLASSES as readonly string[]).includes(entry))
      return `unknown turn class "${entry}" in "${name}"; classes: ${TURN_CLASSES.join(", ")}`;
    return { name, kind: "number", map, entry };
  }
  if (map === "scores") {
    if (!SCORE_NAME.test(entry)) return `"${name}": a scorer name is letters, digits, _ and -`;
    return { name, kind: "number", map, entry };
  }
  return `unknown field "${name}"; fields: ${FIELD_LIST}`;
}

const show = (value: unknown) => (value === null ? "null" : typeof value === "string" ? JSON.stringify(value) : String(value));
/** List items bare when they read unambiguously (`[resolved, success]`), quoted otherwise. */
const item = (value: Scalar) => (typeof value === "string" && /^[\w.:/@+-]+$/.test(value) ? value : show(value));
const list = (values: readonly Scalar[]) => `[${values.map(item).join(", ")}]`;

/** Why one predicate node (not its children) is malformed, or undefined. */
function nodeIssue(node: Predicate): string | undefined {
  const kinds = [...COMBINATORS, "field" as const].filter((key) => node[key] !== undefined);
  const comparisons = COMPARISONS.filter((key) => node[key] !== undefined);
  if (kinds.length === 0) {
    return comparisons.length > 0
      ? `${comparisons.join(", ")} needs a field: to compare`
      : "a predicate is one of all:, any:, not: or field: with one comparison";
  }
  if (kinds.length > 1) return `a predicate is one of all:, any:, not: or field:, not ${kinds.join(" and ")} together (nest them)`;
  if (kinds[0] !== "field") {
    return comparisons.length > 0
      ? `${kinds[0]}: takes no comparison beside it (${comparisons.join(", ")}); put it in a field: predicate`
      : undefined;
  }
  const field = resolveField(node.field as string);
  if (typeof field === "string") return field;
  if (comparisons.length !== 1) {
    return comparisons.length === 0
      ? `field "${field.name}" needs one comparison: ${ALLOWED[field.kind].join(", ")}`
      : `one comparison per predicate, not ${comparisons.join(" and ")}; combine them with all:`;
  }
  const op = comparisons[0] as Comparison;
  if (!ALLOWED[field.kind].includes(op)) {
    return `${op} does not apply to ${field.name}, a ${field.kind} field; it takes ${ALLOWED[field.kind].join(", ")}`;
  }
  const value = node[op];
  const values = Array.isArray(value) ? value : [value];
  if (field.kind === "text" && (op === "eq" || op === "ne" || op === "in" || op === "not_in")) {
    const wrong = values.find((v) => typeof v === "number");
    // YAML reads `attempt: 1` as a number; a text field never equals one, so say how to write it.
    if (wrong !== undefined) return `${field.name} is text: write ${op}: "${wrong}" (quoted), not ${wrong}`;
  }
  if (field.kind === "number" && (op === "eq" || op === "ne" || op === "in" || op === "not_in")) {
    const wrong = values.find((v) => typeof v === "string");
    if (wrong !== undefined) return `${field.name} is a number: ${op} needs numbers, not ${show(wrong)}`;
  }
  if (op === "matches") {
    try {
      new RegExp(value as string);
    } catch (err) {
      return `matches: invalid regular expression ${show(value)}: ${(err as Error).message}`;
    }
  }
  return undefined;
}

const scalar = z.union([z.string(), z.number()]);
const nonEmpty = (what: string) => `${what} needs at least one entry`;

/** Where a predicate nests predicates: a lazy reference, so each key below is built (and described) once, outside any getter. */
const nested: z.ZodType<Predicate> = z.lazy(() => predicateSchema);

/**
 * A predicate in a config. Its own TypeScript type, because the schema is recursive; the `title`
 * makes docs/config.md document it once, in a "Predicate" section, and link to it elsewhere.
 */
export const predicateSchema: z.ZodType<Predicate> = z
  .strictObject(
    {
      all: z.array(nested).min(1, nonEmpty("all:")).optional().describe("Holds when every predicate in the list holds."),
      any: z.array(nested).min(1, nonEmpty("any:")).optional().describe("Holds when at least one predicate in the list holds."),
      not: nested.optional().describe("Holds when this predicate does not (so it matches a null field, unlike `ne`)."),
      field: z
        .string()
        .optional()
        .describe(
          `The record fact a leaf compares, with exactly one comparison beside it: ${FIELD_LIST}. A fact the record lacks is null.`,
        ),
      eq: scalar.nullable().optional().describe("Text or number: equal to this value; `eq: null` matches a null field."),
      ne: scalar.nullable().optional().describe("Text or number: not equal to this value (false on null); `ne: null` matches any value."),
      in: z.array(scalar).min(1, nonEmpty("in:")).optional().describe("Text or number: one of these values."),
      not_in: z.array(scalar).min(1, nonEmpty("not_in:")).optional().describe("Text or number: none of these values (false on null)."),
      gt: z.number().optional().describe("Number: greater than this."),
      gte: z.number().optional().describe("Number: at least this."),
      lt: z.number().optional().describe("Number: less than this."),
      lte: z.number().optional().describe("Number: at most this."),
      exists: z.boolean().optional().describe("Text or number: `true` when the field is not null, `false` when it is."),
      matches: z
        .string()
        .optional()
        .describe("Text: a JavaScript regular expression found in the value (anchor it with ^…$ for a full match)."),
      has: z.string().optional().describe("`labels`: includes this label."),
      has_any: z.array(z.string()).min(1, nonEmpty("has_any:")).optional().describe("`labels`: includes at least one of these labels."),
      has_all: z.array(z.string()).min(1, nonEmpty("has_all:")).optional().describe("`labels`: includes every one of these labels."),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `unknown key ${issue.keys.map((k) => `"${k}"`).join(", ")}; a predicate is all:, any:, not:, or field: with one of ${COMPARISONS.join(", ")}`
          : undefined,
    },
  )
  .superRefine((node, ctx) => {
    const message = nodeIssue(node);
    if (message !== undefined) ctx.addIssue({ code: "custom", message, path: [] });
  })
  .meta({
    title: "Predicate",
    description:
      "A record filter's test, in YAML: a leaf, `field:` with one comparison (`{ field: outcome, in: [resolved, success] }`), or a combinator, `all:`, `any:` or `not:` over nested predicates. " +
      "Text fields take eq, ne, in, not_in, matches, exists; number fields (`classes.<class>`, `scores.<name>` among them) eq, ne, in, not_in, gt, gte, lt, lte, exists; `labels` has, has_any, has_all. " +
      "A field the record does not know is null, and every comparison with null is false but `exists: false` and `eq: null`. Mistakes are refused when the config is read, naming the predicate's path.",
  });

/** `filters[1].keep.any[0]` from a base path and zod's path segments. */
export function joinPath(base: string, segments: readonly PropertyKey[]): string {
  let path = base;
  for (const segment of segments) path += typeof segment === "number" ? `[${segment}]` : `${path === "" ? "" : "."}${String(segment)}`;
  return path;
}

/** A compiled predicate: call it on facts; `explain` says which facts decided the answer, whichever it was. */
export interface CompiledPredicate {
  (facts: RecordFacts): boolean;
  explain(facts: RecordFacts): string;
  /** One line, for plan / validate. */
  readonly description: string;
}

interface Node {
  test: (facts: RecordFacts) => boolean;
  /** The facts that make `test` come out as it does, e.g. `outcome is "unresolved", not in [resolved, success]`. */
  explain: (facts: RecordFacts) => string;
}

type Read<T> = (facts: RecordFacts) => T;

function reader(field: FieldRef): Read<unknown> {
  if ("map" in field) {
    const { entry } = field;
    // Own keys only: `scores.constructor` must not find Object's.
    if (field.map === "classes") return (facts) => (Object.hasOwn(facts.classes, entry) ? facts.classes[entry] : 0);
    return (facts) => (Object.hasOwn(facts.scores, entry) ? (facts.scores[entry] ?? null) : null);
  }
  const { key } = field;
  return (facts) => facts[key] ?? null;
}

function compileLeaf(node: Predicate, field: FieldRef): Node {
  const op = COMPARISONS.find((key) => node[key] !== undefined) as Comparison;
  const name = field.name;
  if (field.kind === "list") {
    const read = reader(field) as Read<readonly string[]>;
    const labels = (facts: RecordFacts) => {
      const values = read(facts);
      return values.length === 0 ? `${name} are empty` : `${name} are ${list(values)}`;
    };
    if (op === "has") {
      const wanted = node.has as string;
      return {
        test: (facts) => read(facts).includes(wanted),
        explain: (facts) =>
          read(facts).includes(wanted) ? `${name} include ${show(wanted)}` : `${labels(facts)}, without ${show(wanted)}`,
      };
    }
    const wanted = (op === "has_any" ? node.has_any : node.has_all) as string[];
    if (op === "has_any") {
      return {
        test: (facts) => read(facts).some((label) => wanted.includes(label)),
        explain: (facts) => {
          const found = read(facts).find((label) => wanted.includes(label));
          return found !== undefined ? `${name} include ${show(found)}` : `${labels(facts)}, none of ${list(wanted)}`;
        },
      };
    }
    return {
      test: (facts) => wanted.every((label) => read(facts).includes(label)),
      explain: (facts) => {
        const missing = wanted.filter((label) => !read(facts).includes(label));
        return missing.length === 0 ? `${name} include all of ${list(wanted)}` : `${labels(facts)}, missing ${list(missing)}`;
      },
    };
  }

  const read = reader(field) as Read<Scalar | null>;
  const is = (value: Scalar | null) => `${name} is ${show(value)}`;
  /** A comparison that is false on null, with its phrase when it holds and when not. */
  const compare = (test: (value: Scalar) => boolean, yes: string, no: string): Node => ({
    test: (facts) => {
      const value = read(facts);
      return value !== null && test(value);
    },
    explain: (facts) => {
      const value = read(facts);
      if (value === null) return is(null);
      return `${is(value)}, ${test(value) ? yes : no}`;
    },
  });

  switch (op) {
    case "eq":
    case "ne": {
      const target = node[op] as Scalar | null;
      const equal = (value: Scalar | null) => value === target;
      // Against null: `eq: null` asks for null; `ne: null` for any value. Against a value, null never compares.
      const test =
        op === "eq"
          ? (facts: RecordFacts) => equal(read(facts))
          : (facts: RecordFacts) => {
              const value = read(facts);
              return value !== null && !equal(value);
            };
      return {
        test,
        explain: (facts) => {
          const value = read(facts);
          return value === null || equal(value) ? is(value) : `${is(value)}, not ${show(target)}`;
        },
      };
    }
    case "in":
    case "not_in": {
      const values = node[op] as Scalar[];
      const set = new Set<Scalar>(values);
      const inside = `in ${list(values)}`;
      const outside = `not in ${list(values)}`;
      return op === "in" ? compare((value) => set.has(value), inside, outside) : compare((value) => !set.has(value), outside, inside);
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const bound = node[op] as number;
      const symbol = { gt: ">", gte: ">=", lt: "<", lte: "<=" }[op];
      const holds = {
        gt: (value: Scalar) => (value as number) > bound,
        gte: (value: Scalar) => (value as number) >= bound,
        lt: (value: Scalar) => (value as number) < bound,
        lte: (value: Scalar) => (value as number) <= bound,
      }[op];
      return compare(holds, `${symbol} ${bound}`, `not ${symbol} ${bound}`);
    }
    case "matches": {
      const source = node.matches as string;
      const regex = new RegExp(source);
      return compare((value) => regex.test(value as string), `matches /${source}/`, `does not match /${source}/`);
    }
    case "exists": {
      const wanted = node.exists as boolean;
      return {
        test: (facts) => (read(facts) !== null) === wanted,
        explain: (facts) => {
          const value = read(facts);
          return value !== null && !wanted ? `${is(value)}, not null` : is(value);
        },
      };
    }
    default:
      throw new Error(`unreachable: ${op} on a ${field.kind} field`);
  }
}

function compileNode(node: Predicate): Node {
  if (node.all !== undefined) {
    const children = node.all.map(compileNode);
    return {
      test: (facts) => {
        for (const child of children) if (!child.test(facts)) return false;
        return true;
      },
      explain: (facts) => {
        const failing = children.find((child) => !child.test(facts));
        return failing ? failing.explain(facts) : children.map((child) => child.explain(facts)).join("; ");
      },
    };
  }
  if (node.any !== undefined) {
    const children = node.any.map(compileNode);
    return {
      test: (facts) => {
        for (const child of children) if (child.test(facts)) return true;
        return false;
      },
      explain: (facts) => {
        const passing = children.find((child) => child.test(facts));
        return passing ? passing.explain(facts) : children.map((child) => child.explain(facts)).join("; ");
      },
    };
  }
  if (node.not !== undefined) {
    const inner = compileNode(node.not);
    // The facts that decide the inner predicate decide its negation too.
    return { test: (facts) => !inner.test(facts), explain: inner.explain };
  }
  const field = resolveField(node.field as string);
  if (typeof field === "string") throw new Error(`unreachable: ${field}`);
  return compileLeaf(node, field);
}

/**
 * Checks `predicate` (as the schema does) and compiles it to a function of the facts. `path` names
 * it in errors, e.g. `filters[1].keep` gives `filters[1].keep.any[0]: unknown field "outcom"; …`.
 */
export function compilePredicate(predicate: Predicate, path: string): CompiledPredicate {
  const parsed = predicateSchema.safeParse(predicate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    throw new UserError(`${joinPath(path, issue.path)}: ${issue.message}`);
  }
  const root = compileNode(parsed.data);
  const compiled = ((facts: RecordFacts) => root.test(facts)) as CompiledPredicate;
  compiled.explain = root.explain;
  Object.defineProperty(compiled, "description", { value: describePredicate(parsed.data) });
  return compiled;
}

/** Why `facts` do not satisfy `predicate` (the filtered/ reason of a keep filter); undefined when they do. */
export function explainFailure(predicate: Predicate | CompiledPredicate, facts: RecordFacts): string | undefined {
  const compiled = typeof predicate === "function" ? predicate : compilePredicate(predicate, "predicate");
  return compiled(facts) ? undefined : compiled.explain(facts);
}

function describeLeaf(node: Predicate): string {
  const name = node.field as string;
  const op = COMPARISONS.find((key) => node[key] !== undefined) as Comparison;
  switch (op) {
    case "eq":
      return node.eq === null ? `${name} is null` : `${name} = ${show(node.eq)}`;
    case "ne":
      return node.ne === null ? `${name} exists` : `${name} != ${show(node.ne)}`;
    case "in":
      return `${name} in ${list(node.in as Scalar[])}`;
    case "not_in":
      return `${name} not in ${list(node.not_in as Scalar[])}`;
    case "gt":
      return `${name} > ${node.gt}`;
    case "gte":
      return `${name} >= ${node.gte}`;
    case "lt":
      return `${name} < ${node.lt}`;
    case "lte":
      return `${name} <= ${node.lte}`;
    case "exists":
      return node.exists ? `${name} exists` : `${name} is null`;
    case "matches":
      return `${name} matches /${node.matches}/`;
    case "has":
      return `${name} has ${show(node.has)}`;
    case "has_any":
      return `${name} has any of ${list(node.has_any as string[])}`;
    case "has_all":
      return `${name} has all of ${list(node.has_all as string[])}`;
  }
}

/** One line for plan / validate, e.g. `outcome in [resolved, success] and turns >= 3`. */
export function describePredicate(predicate: Predicate): string {
  const nested = (node: Predicate) => {
    const text = describePredicate(node);
    return (node.all && node.all.length > 1) || (node.any && node.any.length > 1) ? `(${text})` : text;
  };
  if (predicate.all !== undefined) return predicate.all.map(nested).join(" and ");
  if (predicate.any !== undefined) return predicate.any.map(nested).join(" or ");
  if (predicate.not !== undefined) return `not (${describePredicate(predicate.not)})`;
  return describeLeaf(predicate);
}

/** The fields a predicate reads (e.g. to check its `scores.<name>` against the configured scorers). */
export function predicateFields(predicate: Predicate): string[] {
  const fields = new Set<string>();
  const walk = (node: Predicate) => {
    for (const child of node.all ?? node.any ?? []) walk(child);
    if (node.not !== undefined) walk(node.not);
    if (node.field !== undefined) fields.add(node.field);
  };
  walk(predicate);
  return [...fields];
}
