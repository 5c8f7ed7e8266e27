import { readFileSync } from "node:fs";
import { join } from "node:path";
import { controlsReportLines } from "../controls/describe-controls.ts";
import { UserError } from "../core/errors.ts";
import { curationReport } from "../inspect/curation-report.ts";
import { filteringReport, scoringReport } from "../inspect/selection-report.ts";
import { TURN_CLASSES } from "../mask/turn-classes.ts";
import type { MixtureSummary } from "../mixture/mixture-summary.ts";
import { piiReportLines } from "../normalize/pii/pii-summary.ts";
import type { Manifest } from "../output/manifest.ts";
import { MANIFEST_FILE } from "../output/manifest.ts";
import { localOutputFolder } from "../output/remote-output.ts";
import type { SourceTotals } from "../output/task-totals.ts";

const pct = (part: number, whole: number) => (whole === 0 ? "-" : `${((100 * part) / whole).toFixed(1)}%`);

/**
 * Per-domain / per-class masking table of a finished run, from its manifest; then the mixture (per
 * source and domain, tokens before → after weighting, realised share against target); then, when
 * the run was curated, what dedup and decontamination removed per stage and domain, and the clusters;
 * then what each filter and selection rule dropped, and each scorer's counts.
 */
export async function statsCommand(outputDir: string): Promise<void> {
  const path = join(await localOutputFolder(outputDir, [MANIFEST_FILE]), MANIFEST_FILE);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  } catch (err) {
    throw new UserError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; is this an lwm-data output folder?`,
    );
  }
  maskingTable(outputDir, manifest);
  if (manifest.mixture) for (const line of mixtureTable(manifest.mixture)) console.log(line);
  if (manifest.controls) for (const line of controlsReportLines(manifest.controls)) console.log(line);
  if (manifest.pii) for (const line of piiReportLines(manifest.pii)) console.log(line);
  if (manifest.provenance) for (const line of provenanceTable(manifest.provenance)) console.log(line);
  for (const line of curationReport(manifest)) console.log(line);
  for (const line of [...filteringReport(manifest), ...scoringReport(manifest)]) console.log(line);
}

/** The most frequent names of a count map, as `name n, name n, …` (at most `limit`). */
function topNames(counts: Record<string, number>, limit = 3): string {
  const sorted = Object.entries(counts).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  const shown = sorted.slice(0, limit).map(([name, n]) => `${name} ${fmt(n)}`);
  return sorted.length > limit ? `${shown.join(", ")}, … (${sorted.length} in all)` : shown.join(", ") || "-";
}

/** Outcome and provenance per input format (manifest `provenance`): what the shard columns hold. */
export function provenanceTable(provenance: NonNullable<Manifest["provenance"]>): string[] {
  const rows = Object.entries(provenance).map(([format, p]): string[] => [
    format,
    topNames(p.outcomes),
    topNames(p.agents),
    topNames(p.models),
    fmt(p.records),
    fmt(p.with_task_id),
    p.with_reward > 0 ? (p.reward_sum / p.with_reward).toFixed(3) : "-",
  ]);
  return [
    "",
    "Outcome and provenance per input format (shard columns task_id, attempt, agent, model, outcome, reward, failure_mode):",
    ...columnLines(["format", "outcomes", "agents", "models", "records", "task ids", "mean reward"], rows, 4),
  ];
}

const fmt = (n: number) => n.toLocaleString("en-US");
const percent = (value: number) => `${(100 * value).toFixed(1)}%`;

/** A table cell: text, or a before → after pair (the arrows line up down the column). */
type Cell = string | readonly [string, string];

/** Rows as aligned columns: the first `leftAligned` columns left, the rest right; blank ends trimmed. */
function columnLines(header: readonly string[], rows: readonly (readonly Cell[])[], leftAligned: number, lead = "  "): string[] {
  const texts = header.map((_, i) => {
    const cells = rows.map((row) => row[i] ?? "");
    const pairs = cells.filter((c): c is readonly [string, string] => typeof c !== "string");
    const before = Math.max(0, ...pairs.map((p) => p[0].length));
    const after = Math.max(0, ...pairs.map((p) => p[1].length));
    return cells.map((c) => (typeof c === "string" ? c : `${c[0].padStart(before)} → ${c[1].padEnd(after)}`));
  });
  const widths = header.map((h, i) => Math.max(h.length, ...(texts[i] ?? []).map((t) => t.length)));
  const line = (cells: readonly string[]) =>
    lead +
    cells
      .map((c, i) => (i < leftAligned ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map((_, r) => line(texts.map((column) => column[r] ?? "")))];
}

/** How the factors were set, in one line. */
function mixtureSettingsLine(mixture: MixtureSummary): string {
  const { settings } = mixture;
  const weights = Object.entries(settings.sources);
  if (weights.length === 0) return "mixture: no weights (every source factor 1, every record written once); trained tokens per source";
  const named = weights.map(([name, w]) => ("share" in w ? `${name} share ${percent(w.share)}` : `${name} factor ${w.factor}`)).join(", ");
  const how = weights.some(([, w]) => "share" in w)
    ? `factors derived from target shares of trained tokens (${named}) for ${fmt(mixture.total_loss_tokens ?? 0)} trained tokens (total_tokens ${settings.total_tokens}, max_factor ${settings.max_factor})`
    : `sampling factors (${named})`;
  return `mixture: seed ${settings.seed}; ${how}; other sources factor 1`;
}

/**
 * The manifest's mixture block: per source (and per domain, where a source is not just its one
 * domain) records, tokens and trained (loss) tokens before → after weighting, the realised share
 * of trained tokens against the target; records drawn out. Without weights: tokens and shares only.
 */
export function mixtureTable(mixture: MixtureSummary): string[] {
  const sources = Object.entries(mixture.sources);
  if (sources.length === 0) return [];
  const weighted = Object.keys(mixture.settings.sources).length > 0;
  const targets = sources.some(([, s]) => s.target_share !== undefined);
  const before = sources.reduce((sum, [, s]) => sum + s.loss_tokens, 0);
  const after = sources.reduce((sum, [, s]) => sum + s.loss_tokens_out, 0);
  const share = (part: number, whole: number) => (whole === 0 ? percent(0) : percent(part / whole));
  const counts = (t: SourceTotals, shareBefore: string, shareAfter: string): Cell[] =>
    weighted
      ? [
          [fmt(t.records), fmt(t.records_out)],
          fmt(t.documents_out),
          [fmt(t.tokens), fmt(t.tokens_out)],
          [fmt(t.loss_tokens), fmt(t.loss_tokens_out)],
          [shareBefore, shareAfter],
        ]
      : [fmt(t.records_out), fmt(t.tokens_out), fmt(t.loss_tokens_out), shareAfter];
  const rows: Cell[][] = [];
  for (const [name, s] of sources) {
    const domains = Object.entries(s.domains);
    const own = domains.length === 1 ? (domains[0]?.[0] ?? "") : "";
    rows.push([
      name,
      own,
      ...(weighted ? [s.factor.toFixed(3)] : []),
      ...counts(s, percent(s.share_before), percent(s.share)),
      ...(targets ? [s.target_share !== undefined ? percent(s.target_share) : "–"] : []),
    ]);
    if (domains.length > 1)
      for (const [domain, t] of domains)
        rows.push([
          "",
          domain,
          ...(weighted ? [""] : []),
          ...counts(t, share(t.loss_tokens, before), share(t.loss_tokens_out, after)),
          ...(targets ? [""] : []),
        ]);
  }
  const header = weighted
    ? [
        "source",
        "domain",
        "factor",
        "records → kept",
        "documents",
        "tokens before → after",
        "trained tokens before → after",
        "share before → after",
        ...(targets ? ["target"] : []),
      ]
    : ["source", "domain", "records", "tokens", "trained tokens", "share"];
  const lines = [mixtureSettingsLine(mixture), ...columnLines(header, rows, 2)];
  if (weighted)
    lines.push(
      `  ${fmt(mixture.dropped_records)} record(s) drawn out by factors below 1 (counted, not written); repeats are written as <id>#copy<N>`,
    );
  return lines;
}

function maskingTable(outputDir: string, manifest: Manifest): void {
  const byDomain = manifest.masking?.by_domain_class ?? {};
  if (Object.keys(byDomain).length === 0) {
    console.log(`${outputDir}: mask policy ${manifest.mask_policy} made no per-turn decisions (use mask.policy: turn-stats)`);
    return;
  }
  const header = ["domain", "class", "turns", "kept", "kept %", "obs tokens", "trained", "trained %"];
  const rows: string[][] = [];
  for (const domain of Object.keys(byDomain).sort()) {
    const classes = byDomain[domain] ?? {};
    for (const turnClass of TURN_CLASSES) {
      const t = classes[turnClass];
      if (!t) continue;
      rows.push([
        domain,
        turnClass,
        `${t.turns}`,
        `${t.kept}`,
        pct(t.kept, t.turns),
        `${t.obs_tokens}`,
        `${t.kept_obs_tokens}`,
        pct(t.kept_obs_tokens, t.obs_tokens),
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join("  ");
  console.log(`${outputDir}: mask policy ${manifest.mask_policy}; observation tokens before → after masking per domain and class`);
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}
