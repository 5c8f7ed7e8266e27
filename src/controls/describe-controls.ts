import type { ControlsSummary } from "../output/manifest.ts";

/** Labels by total, most frequent first (ties by name), with per-domain counts: the rows the card and `stats` show. */
export function controlRows(summary: ControlsSummary): { label: string; total: number; byDomain: [string, number][] }[] {
  const byLabel = new Map<string, [string, number][]>();
  for (const [domain, labels] of Object.entries(summary.labels))
    for (const [label, count] of Object.entries(labels)) byLabel.set(label, [...(byLabel.get(label) ?? []), [domain, count]]);
  return [...byLabel]
    .map(([label, byDomain]) => ({ label, total: byDomain.reduce((sum, [, n]) => sum + n, 0), byDomain }))
    .sort((a, b) => b.total - a.total || (a.label < b.label ? -1 : 1));
}

/** One line on what controls did: labelled trajectories, instructed ones, counterfactuals. */
export function controlsHeadline(summary: ControlsSummary): string {
  const percent = (share: number) => `${Math.round(share * 100)}%`;
  return (
    `${summary.labelled} trajectories showed at least one edge case; ${summary.instructed} of them state it in the system message ` +
    `(share ${percent(summary.share)}), and ${summary.counterfactual} counterfactual sample(s) tell the normal turns before the first edge case to behave normally ` +
    `(counterfactual_share ${percent(summary.counterfactual_share)}, seed ${summary.seed})`
  );
}

/** The label mix as plain-text lines (for `lwm-data stats`). */
export function controlsReportLines(summary: ControlsSummary): string[] {
  const rows = controlRows(summary);
  const width = Math.max(5, ...rows.map((row) => row.label.length));
  return [
    `controls: ${controlsHeadline(summary)}`,
    ...(rows.length === 0 ? ["  no edge case found"] : [`  ${"label".padEnd(width)}  labels  by domain`]),
    ...rows.map(
      ({ label, total, byDomain }) =>
        `  ${label.padEnd(width)}  ${String(total).padStart(6)}  ${byDomain.map(([domain, n]) => `${domain} ${n}`).join(", ")}`,
    ),
    ...synthesisLines(summary),
  ];
}

/** With controls.synthesis: per domain and kind, syntheses written of those asked for, and rejections by reason. */
export function synthesisLines(summary: ControlsSummary): string[] {
  if (summary.synthesis_asked === undefined) return [];
  const made = summary.synthesized ?? {};
  const parts = Object.entries(summary.synthesis_asked)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([domain, kinds]) =>
      Object.entries(kinds)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([kind, asked]) => `${domain} ${kind} ${made[domain]?.[kind] ?? 0}/${asked}`),
    );
  const rejected = Object.entries(summary.synthesis_rejected ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([reason, n]) => `${reason} ${n}`);
  return [`  synthesized (written/asked): ${parts.join(", ") || "none"}`, `  synthesis rejected: ${rejected.join(", ") || "none"}`];
}
