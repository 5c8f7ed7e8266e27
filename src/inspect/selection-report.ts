import type { Manifest } from "../output/manifest.ts";

const fmt = (n: number) => n.toLocaleString("en-US");
const percent = (share: number) => `${Number((share * 100).toFixed(4))}%`;

function columns(header: readonly string[], rows: readonly (readonly string[])[], leftAligned: number): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `  ${cells
      .map((c, i) => (i < leftAligned ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()}`;
  return [line(header), ...rows.map(line)];
}

/**
 * `lwm-data stats`' filters and selection block: records each filter and each selection rule
 * dropped (manifest `filters`, `selection`), the caps; empty when neither ran.
 */
export function filteringReport(manifest: Pick<Manifest, "filters" | "selection">): string[] {
  const { filters, selection } = manifest;
  if (!filters && !selection) return [];
  const rows: string[][] = [
    ...Object.entries(filters?.by_rule ?? {}).map(([name, n]) => ["filter", name, fmt(n)]),
    ...Object.entries(selection?.dropped ?? {}).map(([rule, n]) => ["selection", rule, fmt(n)]),
  ];
  const dropped = (filters?.filtered ?? 0) + Object.values(selection?.dropped ?? {}).reduce((sum, n) => sum + n, 0);
  const lines = [
    "",
    `filters and selection: ${fmt(dropped)} record(s) dropped${selection ? `; selection kept ${fmt(selection.kept)} of ${fmt(selection.records)}` : ""} (filtered/, stages filter and selection)`,
  ];
  if (rows.length > 0) lines.push(...columns(["stage", "rule", "dropped"], rows, 2));
  for (const cap of selection?.caps ?? [])
    lines.push(
      `  cap ${cap.key}: max ${percent(cap.max_share)} of ${cap.of}, dropped ${fmt(cap.dropped)}${cap.balanced ? " (could not be met: groups balanced to the smallest)" : ""}`,
    );
  return lines;
}

/** `lwm-data stats`' scoring block: per scorer, its model and rubric, records by status, requests and tokens (manifest `scoring`). */
export function scoringReport(manifest: Pick<Manifest, "scoring">): string[] {
  const { scoring } = manifest;
  if (!scoring) return [];
  const rows = Object.values(scoring).map((s) => [
    s.name,
    s.model ?? "-",
    s.scope ?? "-",
    s.rubric_sha256 ? s.rubric_sha256.slice(0, 12) : "-",
    fmt(s.records),
    fmt(s.ok),
    fmt(s.malformed),
    fmt(s.failed),
    fmt(s.skipped),
    fmt(s.requests),
    fmt(s.prompt_tokens),
    fmt(s.completion_tokens),
  ]);
  return [
    "",
    "model scoring (manifest scoring; a malformed or failed answer scores null):",
    ...columns(
      [
        "scorer",
        "model",
        "scope",
        "rubric",
        "records",
        "ok",
        "malformed",
        "failed",
        "skipped",
        "requests",
        "prompt tokens",
        "completion tokens",
      ],
      rows,
      4,
    ),
  ];
}
