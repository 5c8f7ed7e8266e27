import type { Manifest } from "../output/manifest.ts";
import type { PiiData } from "./dashboard-data.ts";

/** The manifest's pii block as the page's rows; undefined when the run redacted no personal data. */
export function piiData(manifest: Manifest): PiiData | undefined {
  const pii = manifest.pii;
  if (!pii) return undefined;
  const rows = Object.entries(pii.replaced).flatMap(([domain, kinds]) =>
    Object.entries(kinds).map(([kind, replaced]) => ({ domain, kind, replaced, values: pii.values[domain]?.[kind] ?? 0 })),
  );
  const sum = (values: number[]) => values.reduce((s, n) => s + n, 0);
  return {
    kinds: Object.entries(pii.settings.kinds)
      .filter(([, on]) => on)
      .map(([kind]) => kind),
    domainOverrides: Object.keys(pii.settings.domains),
    ipPolicy: { private: pii.settings.ip.private, documentation: pii.settings.ip.documentation },
    records: sum(Object.values(pii.records)),
    replaced: sum(rows.map((r) => r.replaced)),
    values: sum(rows.map((r) => r.values)),
    recordsByDomain: Object.entries(pii.records).map(([domain, records]) => ({ domain, records })),
    rows,
    kept: Object.entries(pii.kept).flatMap(([domain, kept]) => Object.entries(kept).map(([range, count]) => ({ domain, range, count }))),
  };
}
