import type { ControlsSummary, SynthesisShare } from "../output/manifest.ts";

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
    ...rephraseLines(summary),
  ];
}

/** The mix control's rows (docs/controls.md "Mix control"): per targeted domain and kind, in name order. */
export function synthesisShareRows(summary: ControlsSummary): ({ domain: string; kind: string } & SynthesisShare)[] {
  return Object.entries(summary.synthesis_shares ?? {}).flatMap(([domain, kinds]) =>
    Object.entries(kinds).map(([kind, share]) => ({ domain, kind, ...share })),
  );
}

const percent1 = (share: number) => `${(share * 100).toFixed(1)}%`;

/** A row's outcome in words: on target (within half a sample), short by n, or above it by n natural samples. */
export function shareOutcome(row: SynthesisShare): string {
  if (row.shortfall > 0) return `short by ${row.shortfall}`;
  if (row.excess > 0) return `natural above target by ${row.excess}`;
  return "on target";
}

/** With controls.synthesis: per domain and kind the target and realised shares, and rejections by reason. */
export function synthesisLines(summary: ControlsSummary): string[] {
  if (summary.synthesis_shares === undefined) return [];
  const rows = synthesisShareRows(summary);
  const header = ["domain", "kind", "target", "realised", "natural", "synthesized", "eligible", "samples", "outcome"];
  const cells = rows.map((r) => [
    r.domain,
    r.kind,
    percent1(r.target),
    percent1(r.realised),
    String(r.natural),
    String(r.synthesized),
    String(r.eligible),
    String(r.samples),
    shareOutcome(r),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (c: string[]) =>
    `    ${c.map((cell, i) => (i < 2 || i === 8 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join("  ")}`.trimEnd();
  const rejected = Object.entries(summary.synthesis_rejected ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([reason, n]) => `${reason} ${n}`);
  return [
    "  mix control (share of a domain's samples whose instruction states the kind, natural + synthesized):",
    ...(rows.length === 0 ? ["    no targeted kind in the written domains"] : [line(header), ...cells.map(line)]),
    `  synthesis rejected: ${rejected.join(", ") || "none"}`,
    ...teacherSynthesisLines(summary),
  ];
}

/** With controls.synthesis.teacher: the synthesized samples by source, and the teacher's rejected answers by reason. */
export function teacherSynthesisLines(summary: ControlsSummary): string[] {
  if (summary.synthesis_rejected_teacher === undefined) return [];
  const sum = (counts: Record<string, Record<string, number>> | undefined) =>
    Object.values(counts ?? {}).reduce((total, kinds) => total + Object.values(kinds).reduce((a, b) => a + b, 0), 0);
  const teacher = sum(summary.synthesized_teacher);
  const made = Object.entries(summary.synthesized_teacher ?? {}).flatMap(([domain, kinds]) =>
    Object.entries(kinds).map(([kind, n]) => `${domain} ${kind} ${n}`),
  );
  const rejected = Object.entries(summary.synthesis_rejected_teacher)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([reason, n]) => `${reason} ${n}`);
  return [
    `  synthesized by source: rule ${sum(summary.synthesized) - teacher}, teacher ${teacher}${made.length > 0 ? ` (${made.join(", ")})` : ""}`,
    `  teacher answers rejected: ${rejected.join(", ") || "none"}`,
  ];
}

/** With controls.rephrase: written instructions a teacher was asked to reword, those reworded, and the templates kept by reason. */
export function rephraseLines(summary: ControlsSummary): string[] {
  if (summary.rephrase_asked === undefined) return [];
  const kept = Object.entries(summary.rephrase_rejected ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([reason, n]) => `${reason} ${n}`);
  return [
    `  rephrased by the teacher: ${summary.rephrased ?? 0} of ${summary.rephrase_asked} asked; templates kept: ${kept.join(", ") || "none"}`,
  ];
}
