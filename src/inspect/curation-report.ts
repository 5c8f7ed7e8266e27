import type { CurationSummary, FilterStage, Manifest } from "../output/manifest.ts";
import { FILTER_STAGES } from "../verify/filtered-entries.ts";

export { FILTER_STAGES };

/** Clusters whose size lies in [from, to]: one bar of the cluster-size histogram. */
export interface ClusterSizeBin {
  from: number;
  to: number;
  clusters: number;
  records: number;
}

/** `2`, or `4–7`: a bin's sizes as text. */
export const binLabel = (bin: Pick<ClusterSizeBin, "from" | "to">): string =>
  bin.from === bin.to ? `${bin.from}` : `${bin.from}–${bin.to}`;

/**
 * The manifest's size → clusters map in bins that double: 2, 3, 4–7, 8–15, … (sizes 2 and 3 on
 * their own, where almost all clusters are), so a few giant clusters and thousands of pairs both
 * stay readable. Empty bins between the smallest and the largest are kept (a gap is information).
 */
export function clusterSizeBins(sizes: Record<string, number>): ClusterSizeBin[] {
  const bins: ClusterSizeBin[] = [];
  const binOf = (size: number): ClusterSizeBin => {
    const from = size <= 3 ? size : 2 ** Math.floor(Math.log2(size));
    const to = size <= 3 ? size : from * 2 - 1;
    let bin = bins.find((b) => b.from === from);
    if (!bin) {
      bin = { from, to, clusters: 0, records: 0 };
      bins.push(bin);
    }
    return bin;
  };
  const entries = Object.entries(sizes)
    .map(([size, clusters]) => ({ size: Number(size), clusters }))
    .filter((e) => Number.isInteger(e.size) && e.size >= 2 && e.clusters > 0);
  if (entries.length === 0) return [];
  const largest = Math.max(...entries.map((e) => e.size));
  for (let size = 2; size <= largest; size = size < 4 ? size + 1 : size * 2) binOf(size);
  for (const e of entries) {
    const bin = binOf(e.size);
    bin.clusters += e.clusters;
    bin.records += e.clusters * e.size;
  }
  return bins.sort((a, b) => a.from - b.from);
}

const fmt = (n: number) => n.toLocaleString("en-US");

/** `exact 3, near 2, decontaminate 1` (stages that removed nothing left out). */
export function stageCounts(byStage: Partial<Record<FilterStage, number>>): string {
  const parts = FILTER_STAGES.filter((stage) => (byStage[stage] ?? 0) > 0).map((stage) => `${stage} ${fmt(byStage[stage] ?? 0)}`);
  return parts.length > 0 ? parts.join(", ") : "none";
}

/** Which stages ran and with what settings, in one line. */
export function settingsLine(curation: CurationSummary): string {
  const { settings } = curation;
  const decon = settings.decontaminate;
  const near = settings.near
    ? `near on (${settings.ngram}-word shingles, ${settings.bands} bands × ${settings.rows} rows, threshold ≈ ${settings.threshold.toFixed(2)}, joined at estimated Jaccard ≥ ${settings.min_similarity ?? 0})`
    : "near off";
  const benchmarks = decon.benchmarks.map((b) => `${b.path} (${b.format}, ${fmt(b.episodes)} episode${b.episodes === 1 ? "" : "s"})`);
  const decontaminate =
    benchmarks.length > 0
      ? `decontaminate ${decon.action} (${decon.ngram}-grams, overlap ≥ ${decon.min_overlap} in ≥ ${decon.min_turns} turn${decon.min_turns === 1 ? "" : "s"}, n-grams in > ${decon.max_episode_frequency} episodes ignored) against ${benchmarks.join(", ")}`
      : "decontaminate off";
  return `exact ${settings.exact ? "on" : "off"}; ${near}; ${decontaminate}`;
}

/** A table as aligned text lines: the first `leftAligned` columns padded right, the others left. */
export function columns(header: readonly string[], rows: readonly (readonly string[])[], leftAligned = 1): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i < leftAligned ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/**
 * `lwm-data stats`' curation block: what was filtered per stage and domain, the duplicate
 * clusters with a compact size histogram, masked turns, the settings, and the filtered files.
 */
export function curationReport(manifest: Pick<Manifest, "counts" | "domains" | "curation">): string[] {
  const curation = manifest.curation;
  if (!curation) {
    // Without curation the readers (stage read), the config's filters and selection drop: one line says how many, and where.
    const { filtered, filtered_by_stage: byStage } = manifest.counts;
    const onlyRead = Object.entries(byStage).every(([stage, n]) => stage === "read" || n === 0);
    return filtered > 0
      ? [
          `filtered${onlyRead ? " at read" : ""}: ${fmt(filtered)} of ${fmt(manifest.counts.records_in)} records (${stageCounts(byStage)}) → filtered/`,
        ]
      : [];
  }
  const lines = [
    `curation: ${fmt(curation.filtered)} of ${fmt(manifest.counts.records_in)} records filtered (${stageCounts(curation.by_stage)})${curation.files.length > 0 ? " → filtered/" : ""}`,
  ];
  // The readers' own filter, the config's filters and selection get a column only when they removed something.
  const curating = new Set<FilterStage>(["exact", "near", "decontaminate"]);
  const stages = FILTER_STAGES.filter((stage) => curating.has(stage) || (curation.by_stage[stage] ?? 0) > 0);
  const domains = [...new Set([...Object.keys(curation.by_domain), ...Object.keys(manifest.domains)])].sort();
  const rows = domains.map((domain) => {
    const byStage = curation.by_domain[domain] ?? {};
    const filtered = FILTER_STAGES.reduce((sum, stage) => sum + (byStage[stage] ?? 0), 0);
    const samples = manifest.domains[domain]?.samples ?? 0;
    const share = filtered + samples === 0 ? "-" : `${((100 * filtered) / (filtered + samples)).toFixed(1)}%`;
    return [domain, ...stages.map((stage) => fmt(byStage[stage] ?? 0)), fmt(filtered), fmt(samples), share];
  });
  lines.push(...columns(["domain", ...stages, "filtered", "samples out", "filtered %"], rows).map((l) => `  ${l}`));
  const { clusters } = curation;
  if (curation.settings.exact || curation.settings.near) {
    const histogram = clusterSizeBins(clusters.sizes)
      .map((bin) => `${binLabel(bin)}: ${fmt(bin.clusters)}`)
      .join(" · ");
    lines.push(
      `  clusters: ${fmt(clusters.count)} (${fmt(clusters.records)} records, largest ${fmt(clusters.largest)}; first in input order kept)${histogram ? `; by size ${histogram}` : ""}`,
    );
  }
  if (curation.settings.decontaminate.action === "mask" && curation.settings.decontaminate.benchmarks.length > 0)
    lines.push(`  masked: ${fmt(curation.masked.turns)} turns in ${fmt(curation.masked.records)} records (kept as context, no loss)`);
  lines.push(`  settings: ${settingsLine(curation)}`);
  if (curation.files.length > 0) {
    const shown = curation.files.slice(0, 4).map((f) => `${f.path} (${fmt(f.entries)})`);
    const more = curation.files.length > 4 ? `, … ${curation.files.length - 4} more` : "";
    lines.push(`  files: ${shown.join(", ")}${more}`);
  }
  return lines;
}
