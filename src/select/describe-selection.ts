import type { JobPlan } from "../pipeline/plan.ts";
import { selectionActive } from "./selection-active.ts";
import { keyFields } from "./selection-schema.ts";

/** `validate` and `plan` lines for the config's filters, selection and scorers (nothing when none is set). */
export function selectionLines(plan: JobPlan): string[] {
  const { select } = plan.config;
  const lines: string[] = [];
  if (plan.filters.length > 0) {
    lines.push(`filters      ${plan.filters.length}, in order (a dropped record goes to filtered/, stage filter):`);
    for (const filter of plan.filters) lines.push(`  ${filter.name}: ${filter.description}`);
  }
  if (selectionActive(select)) {
    const parts = [
      ...(select.keep_fraction < 1 ? [`keep_fraction ${select.keep_fraction} (seed ${select.seed})`] : []),
      ...(select.max_per ? [`max_per ${keyFields(select.max_per.key).join("+")} keeps ${select.max_per.keep}`] : []),
      ...select.caps.map((cap) => `cap ${keyFields(cap.key).join("+")} ≤ ${Number((cap.max_share * 100).toFixed(3))}% of ${cap.of}`),
    ];
    const order = select.order.length > 0 ? select.order.map((o) => `${o.field} ${o.direction}`).join(", ") : "input order";
    lines.push(
      `selection    ${parts.join("; ")}; preferring ${order} (stages facts → selection; dropped records go to filtered/, stage selection)`,
    );
  }
  for (const scorer of plan.scorers)
    lines.push(
      `scorer       ${scorer.name}: ${scorer.model} at ${scorer.base_url}, ${scorer.scope}${scorer.scope === "turns" ? ` (${scorer.aggregate})` : ""}, scale ${scorer.scale.min}..${scorer.scale.max}, rubric ${scorer.rubric_source === "inline" ? "inline" : scorer.rubric_source} (sha256 ${scorer.rubric_sha256.slice(0, 12)}…), cache ${scorer.cache_dir}`,
    );
  return lines;
}
