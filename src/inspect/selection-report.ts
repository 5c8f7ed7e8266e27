import type { Manifest } from "../output/manifest.ts";
import { STABLE_SCORE_COUNTS } from "../output/selection-summary.ts";
import { columns } from "./curation-report.ts";

const fmt = (n: number) => n.toLocaleString("en-US");
const percent = (share: number) => `${Number((share * 100).toFixed(4))}%`;

/** The shared aligned table, indented under its heading line. */
const indented = (header: readonly string[], rows: readonly (readonly string[])[], leftAligned: number) =>
  columns(header, rows, leftAligned).map((line) => `  ${line}`);

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
  if (rows.length > 0) lines.push(...indented(["stage", "rule", "dropped"], rows, 2));
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
  // The counts are the manifest's stable ones, in its order: a count added there shows here too.
  const rows = Object.values(scoring).map((s) => [
    s.name,
    s.model ?? "-",
    s.scope ?? "-",
    s.rubric_sha256 ? s.rubric_sha256.slice(0, 12) : "-",
    ...STABLE_SCORE_COUNTS.map((count) => fmt(s[count])),
  ]);
  return [
    "",
    "model scoring (manifest scoring; a malformed or failed answer scores null):",
    ...indented(["scorer", "model", "scope", "rubric", ...STABLE_SCORE_COUNTS.map((count) => count.replace("_", " "))], rows, 4),
  ];
}
