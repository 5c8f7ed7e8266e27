import type { PiiSettings } from "./pii-settings.ts";

/**
 * The manifest's `pii` block (docs/normalization.md "Personal data"): the settings the job ran with, then what
 * the tasks counted, per domain (`text` for documents) and kind.
 */
export interface PiiSummary {
  settings: PiiSettings;
  /** Records with at least one value replaced, per domain. */
  records: Record<string, number>;
  /** Values replaced (occurrences), per domain and kind. */
  replaced: Record<string, Record<string, number>>;
  /** Distinct values per record, summed: what the placeholders number, per domain and kind. */
  values: Record<string, Record<string, number>>;
  /** IP addresses the range policy kept (private, documentation), per domain. */
  kept: Record<string, Record<string, number>>;
}

/** The normalize counters' prefixes PiiRedactor counts under (src/normalize/pii/pii.ts). */
const PREFIXES = { "pii.": "replaced", "pii_values.": "values", "pii_kept.": "kept" } as const;

const sortedRecord = <T>(record: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * Splits the tasks' normalize counters into the `pii` block and the rest (the manifest's
 * `normalize` block keeps secrets, volatile values, truncations…).
 */
export function splitPiiCounters(
  normalize: Record<string, number>,
  settings: PiiSettings | undefined,
): { pii: PiiSummary | undefined; rest: Record<string, number> } {
  const rest: Record<string, number> = {};
  const summary: Omit<PiiSummary, "settings"> = { records: {}, replaced: {}, values: {}, kept: {} };
  for (const [key, n] of Object.entries(normalize)) {
    if (key.startsWith("pii_records.")) {
      const domain = key.slice("pii_records.".length);
      summary.records[domain] = (summary.records[domain] ?? 0) + n;
      continue;
    }
    const prefix = (Object.keys(PREFIXES) as (keyof typeof PREFIXES)[]).find((p) => key.startsWith(p));
    if (!prefix) {
      rest[key] = n;
      continue;
    }
    const [domain = "", kind = ""] = key.slice(prefix.length).split(".");
    const into = summary[PREFIXES[prefix]];
    into[domain] ??= {};
    (into[domain] as Record<string, number>)[kind] = ((into[domain] as Record<string, number>)[kind] ?? 0) + n;
  }
  if (!settings) return { pii: undefined, rest };
  const sortedNested = (r: Record<string, Record<string, number>>) =>
    sortedRecord(Object.fromEntries(Object.entries(r).map(([d, kinds]) => [d, sortedRecord(kinds)])));
  return {
    pii: {
      settings,
      records: sortedRecord(summary.records),
      replaced: sortedNested(summary.replaced),
      values: sortedNested(summary.values),
      kept: sortedNested(summary.kept),
    },
    rest,
  };
}

/** Per kind, over all domains: replacements (what the card, `stats` and `run` show). */
export function replacedByKind(summary: PiiSummary): [string, number][] {
  const totals = new Map<string, number>();
  for (const kinds of Object.values(summary.replaced))
    for (const [kind, n] of Object.entries(kinds)) totals.set(kind, (totals.get(kind) ?? 0) + n);
  return [...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

/** One line: how many values of which kinds were replaced in how many records. */
export function piiHeadline(summary: PiiSummary): string {
  const byKind = replacedByKind(summary);
  const records = Object.values(summary.records).reduce((s, n) => s + n, 0);
  if (byKind.length === 0) return "no personal data found";
  const total = byKind.reduce((s, [, n]) => s + n, 0);
  return `${total} value(s) replaced in ${records} record(s): ${byKind.map(([kind, n]) => `${kind} ${n}`).join(", ")}`;
}

/** Plain-text lines for `lwm-data stats`: the headline, then per domain and kind. */
export function piiReportLines(summary: PiiSummary): string[] {
  const domains = Object.keys(summary.replaced);
  const kinds = [...new Set(domains.flatMap((d) => Object.keys(summary.replaced[d] ?? {})))].sort();
  const width = Math.max(6, ...domains.map((d) => d.length));
  const kept = Object.entries(summary.kept).flatMap(([domain, k]) => Object.entries(k).map(([what, n]) => `${domain} ${what} ${n}`));
  return [
    `personal data: ${piiHeadline(summary)}`,
    ...(kinds.length > 0
      ? [
          `  ${"domain".padEnd(width)}  ${"records".padStart(7)}  ${kinds.map((k) => k.padStart(Math.max(8, k.length))).join("  ")}`,
          ...domains.map(
            (d) =>
              `  ${d.padEnd(width)}  ${String(summary.records[d] ?? 0).padStart(7)}  ${kinds
                .map((k) => String(summary.replaced[d]?.[k] ?? 0).padStart(Math.max(8, k.length)))
                .join("  ")}`,
          ),
        ]
      : []),
    ...(kept.length > 0 ? [`  kept by the IP range policy: ${kept.join(", ")}`] : []),
  ];
}
