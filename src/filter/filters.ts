import { z } from "zod";
import { type CompiledPredicate, compilePredicate, joinPath, type Predicate, predicateSchema } from "./predicate.ts";
import type { RecordFacts } from "./record-facts.ts";

/** A filter's name: it lands in filtered/ lines and counts, so kebab-case like the other rule names. */
const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** One record filter: keeps the records its predicate accepts, or drops them (exactly one of keep / drop). */
export interface FilterConfig {
  name: string;
  keep?: Predicate;
  drop?: Predicate;
}

export const filterSchema: z.ZodType<FilterConfig> = z
  .strictObject({
    name: z
      .string()
      .regex(KEBAB, "a filter name is kebab-case: lowercase letters, digits and - (e.g. resolved-only)")
      .describe("Unique kebab-case name, e.g. `resolved-only`: the rule of the records it drops in filtered/ and in the counts."),
    keep: predicateSchema.optional().describe("Keep only the records this predicate accepts; exactly one of `keep` and `drop`."),
    drop: predicateSchema.optional().describe("Drop the records this predicate accepts; exactly one of `keep` and `drop`."),
  })
  .superRefine((filter, ctx) => {
    if ((filter.keep === undefined) === (filter.drop === undefined))
      ctx.addIssue({ code: "custom", message: "a filter has exactly one of keep: or drop:", path: [] });
  });

/** Filters in config order; names are unique, since they name the drops in filtered/ and the counts. */
export const filtersSchema = z.array(filterSchema).superRefine((filters, ctx) => {
  const seen = new Map<string, number>();
  filters.forEach((filter, index) => {
    const first = seen.get(filter.name);
    if (first === undefined) seen.set(filter.name, index);
    else ctx.addIssue({ code: "custom", message: `duplicate filter name "${filter.name}" (also [${first}])`, path: [index, "name"] });
  });
});

export interface CompiledFilter {
  name: string;
  mode: "keep" | "drop";
  predicate: CompiledPredicate;
  /** One line for plan / validate, e.g. `keep: outcome in [resolved, success]`. */
  description: string;
}

/** Compiles validated filters; `path` is where they sit in the config (errors name `filters[1].keep…`). */
export function compileFilters(filters: readonly FilterConfig[], path = "filters"): CompiledFilter[] {
  return filters.map((filter, index) => {
    const mode = filter.keep !== undefined ? "keep" : "drop";
    const predicate = compilePredicate((filter.keep ?? filter.drop) as Predicate, joinPath(path, [index, mode]));
    return { name: filter.name, mode, predicate, description: `${mode}: ${predicate.description}` };
  });
}

/** The first filter (in config order) that drops the record, with the facts that decided it; undefined when all keep it. */
export function applyFilters(filters: readonly CompiledFilter[], facts: RecordFacts): { filter: string; reason: string } | undefined {
  for (const filter of filters) {
    if (filter.predicate(facts) === (filter.mode === "keep")) continue;
    return { filter: filter.name, reason: filter.predicate.explain(facts) };
  }
  return undefined;
}
