import type { JobConfig } from "../config/schema.ts";
import { UserError } from "../core/errors.ts";
import type { Scorer } from "../score/score-schema.ts";
import { predicateFields } from "./predicate.ts";

/**
 * A filter or a selection order naming `scores.<name>` must name a configured scorer: a misspelt
 * name would otherwise read as null on every record and silently drop (or keep) everything.
 */
export function checkScoreFields(config: Pick<JobConfig, "filters" | "select">, scorers: readonly Scorer[]): void {
  const known = new Set(scorers.map((scorer) => scorer.name));
  const named: { path: string; field: string }[] = [
    ...config.filters.flatMap((filter, index) => {
      const predicate = filter.keep ?? filter.drop;
      const side = filter.keep ? "keep" : "drop";
      return predicate ? predicateFields(predicate).map((field) => ({ path: `filters[${index}].${side}`, field })) : [];
    }),
    ...config.select.order.map((order, index) => ({ path: `select.order[${index}].field`, field: order.field })),
  ];
  for (const { path, field } of named) {
    if (!field.startsWith("scores.")) continue;
    const name = field.slice("scores.".length);
    if (!known.has(name))
      throw new UserError(
        `${path}: ${field} names no scorer (${known.size > 0 ? `scorers: ${[...known].join(", ")}` : "no scorers are configured"}); add it under scorers or fix the name`,
      );
  }
}
