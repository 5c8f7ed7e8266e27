import { NOVELTY_BIN_BITS, type NoveltyData } from "./dashboard-data.ts";
import { type DuckSession, num } from "./duckdb-session.ts";
import type { RunOutput } from "./run-output.ts";

/** Whether the run's stats table has the corpus_novelty column (runs with mask.corpus_novelty on). */
async function hasNoveltyColumn(db: DuckSession, run: RunOutput): Promise<boolean> {
  const [row] = await db.rows(
    `SELECT count(*) AS n FROM information_schema.columns WHERE table_name = '${run.turnsView}' AND column_name = 'corpus_novelty'`,
  );
  return num(row?.n) > 0;
}

/**
 * The Corpus novelty panel's data: the manifest's novelty block (observations counted job-wide,
 * distinct, distinct by how often they occur), per domain a histogram of the turns' corpus_novelty
 * (−log2 of the observation's share of the corpus, in bits), and the class rules' bounds on it.
 * Undefined for a run without the block (mask.corpus_novelty off).
 */
export async function noveltyData(db: DuckSession, run: RunOutput): Promise<NoveltyData | undefined> {
  const novelty = run.manifest.novelty;
  if (!novelty) return undefined;
  const rows = (await hasNoveltyColumn(db, run))
    ? await db.rows(`
        SELECT domain, floor(corpus_novelty / ${NOVELTY_BIN_BITS})::INTEGER AS bin, count(*) AS turns, sum(obs_tokens) AS obs_tokens
        FROM ${run.turnsView} WHERE corpus_novelty IS NOT NULL GROUP BY ALL ORDER BY domain, bin`)
    : [];
  const thresholds: NoveltyData["thresholds"] = [];
  for (const [position, rule] of (run.manifest.mask_rules?.classes ?? []).entries()) {
    const bounds = (rule.when as Record<string, { min?: number; max?: number } | undefined>).corpus_novelty;
    for (const bound of ["min", "max"] as const) {
      const value = bounds?.[bound];
      if (value !== undefined) thresholds.push({ value, bound, class: rule.name, rule: position + 1 });
    }
  }
  return {
    observations: novelty.observations,
    distinct: novelty.distinct,
    byCount: Object.entries(novelty.by_count).map(([bucket, distinct]) => ({ bucket, distinct })),
    histogram: rows.map((r) => ({
      domain: String(r.domain),
      x1: num(r.bin) * NOVELTY_BIN_BITS,
      x2: (num(r.bin) + 1) * NOVELTY_BIN_BITS,
      turns: num(r.turns),
      obsTokens: num(r.obs_tokens),
    })),
    thresholds,
  };
}
