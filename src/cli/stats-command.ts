import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import { curationReport } from "../inspect/curation-report.ts";
import { TURN_CLASSES } from "../mask/turn-classes.ts";
import type { Manifest } from "../output/manifest.ts";

const pct = (part: number, whole: number) => (whole === 0 ? "-" : `${((100 * part) / whole).toFixed(1)}%`);

/**
 * Per-domain / per-class masking table of a finished run, from its manifest; then, when the run
 * was curated, what dedup and decontamination removed per stage and domain, and the clusters.
 */
export async function statsCommand(outputDir: string): Promise<void> {
  const path = join(outputDir, "manifest.json");
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  } catch (err) {
    throw new UserError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; is this an lwm-data output folder?`,
    );
  }
  maskingTable(outputDir, manifest);
  for (const line of curationReport(manifest)) console.log(line);
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
