import { binLabel, clusterSizeBins, FILTER_STAGES, settingsLine } from "../inspect/curation-report.ts";
import type { Manifest } from "../output/manifest.ts";
import type { SourceTotals } from "../output/task-totals.ts";
import {
  type ClassRow,
  type CurationData,
  type DomainTokens,
  type FilteredExample,
  type FilteringData,
  HISTOGRAM_STATS,
  type HistogramBin,
  type HistogramStat,
  type MixtureCounts,
  type MixtureData,
  type QuarantineReason,
  type ShardGroup,
  type Threshold,
} from "./dashboard-data.ts";
import { type DuckSession, num, sqlStringList } from "./duckdb-session.ts";
import type { RunOutput } from "./run-output.ts";

/** Shares (overlap, novelty, jaccard, history novelty) lie in [0, 1]: 40 bins of 0.025. */
const SHARE_BINS = 40;
/**
 * The length ratio spans orders of magnitude, so it is binned on log10 from 10^-2 to 10^4 in
 * tenths; values outside are counted in the end bins (R = 0, an empty action, in the lowest).
 */
const RATIO_LOG_MIN = -2;
const RATIO_LOG_MAX = 4;
const RATIO_BINS = (RATIO_LOG_MAX - RATIO_LOG_MIN) * 10;

/** Histograms of every statistic per domain, in one scan of the stats table. */
export async function histograms(db: DuckSession, run: RunOutput): Promise<HistogramBin[]> {
  const shareBin = (column: string) => `least(floor(${column} * ${SHARE_BINS}), ${SHARE_BINS - 1})::INTEGER`;
  const ratioBin = `least(greatest(floor((log10(greatest(length_ratio, 1e-9)) - (${RATIO_LOG_MIN})) * 10), 0), ${RATIO_BINS - 1})::INTEGER`;
  const rows = await db.rows(`
    WITH binned AS (
      SELECT domain, obs_tokens,
        ${shareBin("overlap")} AS overlap, ${shareBin("novelty")} AS novelty, ${shareBin("jaccard")} AS jaccard,
        ${shareBin("history_novelty")} AS history_novelty, ${ratioBin} AS length_ratio
      FROM ${run.turnsView}
    )
    SELECT domain, stat, bin, count(*) AS turns, sum(obs_tokens) AS obs_tokens
    FROM (UNPIVOT binned ON ${HISTOGRAM_STATS.join(", ")} INTO NAME stat VALUE bin)
    GROUP BY ALL ORDER BY domain, stat, bin`);
  return rows.map((r) => {
    const stat = String(r.stat) as HistogramStat;
    const bin = num(r.bin);
    const [x1, x2] =
      stat === "length_ratio"
        ? [10 ** (RATIO_LOG_MIN + bin / 10), 10 ** (RATIO_LOG_MIN + (bin + 1) / 10)]
        : [bin / SHARE_BINS, (bin + 1) / SHARE_BINS];
    return { domain: String(r.domain), stat, x1, x2, turns: num(r.turns), obsTokens: num(r.obs_tokens) };
  });
}

/** Per domain and class: turns, kept, observation tokens before/after, mean configured keep ratio. */
export async function classRows(db: DuckSession, run: RunOutput): Promise<ClassRow[]> {
  const rows = await db.rows(`
    SELECT domain, class, count(*) AS turns, count(*) FILTER (WHERE kept) AS kept,
      sum(obs_tokens) AS obs_tokens, coalesce(sum(obs_tokens) FILTER (WHERE kept), 0) AS kept_obs_tokens,
      avg(keep_ratio) AS configured_keep
    FROM ${run.turnsView} GROUP BY ALL ORDER BY domain, class`);
  return rows.map((r) => ({
    domain: String(r.domain),
    class: String(r.class),
    turns: num(r.turns),
    kept: num(r.kept),
    obsTokens: num(r.obs_tokens),
    keptObsTokens: num(r.kept_obs_tokens),
    configuredKeep: num(r.configured_keep),
  }));
}

/** Tokens per domain from the manifest, with observation tokens before/after masking from the stats table. */
export function domainTokens(manifest: Manifest, classes: readonly ClassRow[]): DomainTokens[] {
  return Object.entries(manifest.domains)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([domain, totals]) => {
      const ofDomain = classes.filter((c) => c.domain === domain);
      return {
        domain,
        samples: totals.samples,
        tokens: totals.tokens,
        lossTokens: totals.loss_tokens,
        obsTokens: ofDomain.reduce((sum, c) => sum + c.obsTokens, 0),
        keptObsTokens: ofDomain.reduce((sum, c) => sum + c.keptObsTokens, 0),
      };
    });
}

/** Shard files grouped by split, from the manifest. */
export function shardGroups(manifest: Manifest): ShardGroup[] {
  const groups = new Map<string, ShardGroup>();
  for (const shard of manifest.shards) {
    const split = shard.split ?? "train";
    const group = groups.get(split) ?? { split, files: 0, rows: 0, documents: 0, bytes: 0, tokens: 0, lossTokens: 0 };
    group.files += 1;
    group.rows += shard.rows;
    group.documents += shard.documents ?? shard.rows;
    group.bytes += shard.bytes;
    group.tokens += shard.tokens;
    group.lossTokens += shard.loss_tokens;
    groups.set(split, group);
  }
  return [...groups.values()].sort((a, b) => a.split.localeCompare(b.split));
}

/**
 * Quarantined records by stage and field, read from the quarantine JSONL with DuckDB. Numeric
 * parts of a field path become `*` (`turns.3.observation` → `turns.*.observation`) so one
 * problem in many records is one row.
 */
export async function quarantineReasons(db: DuckSession, run: RunOutput): Promise<QuarantineReason[]> {
  if (run.quarantineFiles.length === 0) return [];
  const rows = await db.rows(`
    SELECT stage, field, count(*) AS count, min(reason) AS example FROM (
      SELECT coalesce(stage, '?') AS stage,
        coalesce(array_to_string(list_transform(string_split(field, '.'),
          part -> CASE WHEN regexp_full_match(part, '[0-9]+') THEN '*' ELSE part END), '.'), '') AS field, reason
      FROM read_json(${sqlStringList(run.quarantineFiles)}, format = 'newline_delimited',
        columns = {stage: 'VARCHAR', field: 'VARCHAR', reason: 'VARCHAR'})
    ) GROUP BY ALL ORDER BY count DESC, stage, field`);
  return rows.map((r) => ({ stage: String(r.stage), field: String(r.field), count: num(r.count), example: String(r.example ?? "") }));
}

/** Filtered entries embedded per (stage, domain): a few real reasons each, not the whole list. */
export const FILTERED_EXAMPLES_PER_GROUP = 4;

/**
 * What curation did, from the manifest's curation block (counts per domain and stage, cluster
 * sizes in doubling bins), with a few entries per stage and domain read from filtered/ with
 * DuckDB, the first ids of each. Undefined for a run without curation.
 */
export async function curationData(
  db: DuckSession,
  run: RunOutput,
  perGroup = FILTERED_EXAMPLES_PER_GROUP,
): Promise<CurationData | undefined> {
  const curation = run.manifest.curation;
  if (!curation) return undefined;
  const byDomainStage = Object.keys(curation.by_domain)
    .sort()
    .flatMap((domain) =>
      FILTER_STAGES.map((stage) => ({ domain, stage, records: curation.by_domain[domain]?.[stage] ?? 0 })).filter((c) => c.records > 0),
    );
  const examples: FilteredExample[] = [];
  if (run.filteredFiles.length > 0) {
    const rows = await db.rows(`
      SELECT * FROM (
        SELECT *, row_number() OVER (PARTITION BY stage, domain ORDER BY id, source) AS n
        FROM read_json(${sqlStringList(run.filteredFiles)}, format = 'newline_delimited',
          columns = {id: 'VARCHAR', domain: 'VARCHAR', source: 'VARCHAR', stage: 'VARCHAR', reason: 'VARCHAR',
            kept_id: 'VARCHAR', kept_source: 'VARCHAR', benchmark: 'VARCHAR', benchmark_id: 'VARCHAR'})
      ) WHERE n <= ${Math.max(0, Math.floor(perGroup))} ORDER BY stage, domain, n`);
    const text = (value: unknown) => (value === null || value === undefined ? "" : String(value));
    for (const r of rows) {
      const example: FilteredExample = {
        id: text(r.id),
        domain: text(r.domain),
        stage: text(r.stage),
        reason: text(r.reason),
        source: text(r.source),
      };
      if (r.kept_id != null) example.keptId = text(r.kept_id);
      if (r.kept_source != null) example.keptSource = text(r.kept_source);
      if (r.benchmark != null) example.benchmark = text(r.benchmark);
      if (r.benchmark_id != null) example.benchmarkId = text(r.benchmark_id);
      examples.push(example);
    }
  }
  return {
    filtered: curation.filtered,
    byDomainStage,
    clusters: { count: curation.clusters.count, records: curation.clusters.records, largest: curation.clusters.largest },
    clusterSizes: clusterSizeBins(curation.clusters.sizes).map((bin) => ({ ...bin, label: binLabel(bin) })),
    masked: curation.masked,
    settings: settingsLine(curation),
    examples,
  };
}

/** The Filters and selection panel's data, from the manifest's filters, selection and scoring blocks; undefined when none ran. */
export function filteringData(manifest: Manifest): FilteringData | undefined {
  const { filters, selection, scoring } = manifest;
  if (!filters && !selection && !scoring) return undefined;
  return {
    byRule: [
      ...Object.entries(filters?.by_rule ?? {}).map(([rule, records]) => ({ stage: "filter", rule, records })),
      ...Object.entries(selection?.dropped ?? {}).map(([rule, records]) => ({ stage: "selection", rule, records })),
    ],
    ...(selection ? { selection: { records: selection.records, kept: selection.kept } } : {}),
    scorers: Object.values(scoring ?? {}).map((s) => ({
      name: s.name,
      model: s.model ?? "",
      records: s.records,
      ok: s.ok,
      malformed: s.malformed,
      failed: s.failed,
      requests: s.requests,
      tokens: s.prompt_tokens + s.completion_tokens,
    })),
  };
}

/** The class rules' bounds on the histogram statistics, from the manifest's `mask_rules`. */
export function thresholds(manifest: Manifest): Threshold[] {
  const out: Threshold[] = [];
  const statNames = new Set<string>(HISTOGRAM_STATS);
  for (const [position, rule] of (manifest.mask_rules?.classes ?? []).entries()) {
    for (const [stat, bounds] of Object.entries(rule.when)) {
      if (!statNames.has(stat) || !bounds) continue;
      for (const bound of ["min", "max"] as const) {
        const value = bounds[bound];
        if (value !== undefined) out.push({ stat: stat as HistogramStat, value, bound, class: rule.name, rule: position + 1 });
      }
    }
  }
  return out;
}

/**
 * The Mixture panel's data, from the manifest's mixture block: per source its factor, target share
 * and counts before and after weighting, and the same per domain within each source (shares of the
 * run's trained tokens). Undefined for a manifest without the block.
 */
export function mixtureData(manifest: Manifest): MixtureData | undefined {
  const mixture = manifest.mixture;
  if (!mixture) return undefined;
  const sources = Object.entries(mixture.sources);
  const before = sources.reduce((sum, [, s]) => sum + s.loss_tokens, 0);
  const after = sources.reduce((sum, [, s]) => sum + s.loss_tokens_out, 0);
  const counts = (t: SourceTotals, shareBefore: number, share: number): MixtureCounts => ({
    records: t.records,
    recordsOut: t.records_out,
    documentsOut: t.documents_out,
    tokens: t.tokens,
    tokensOut: t.tokens_out,
    lossTokens: t.loss_tokens,
    lossTokensOut: t.loss_tokens_out,
    shareBefore,
    share,
  });
  const weights = Object.values(mixture.settings.sources);
  return {
    mode: weights.length === 0 ? "none" : weights.some((w) => "share" in w) ? "shares" : "factors",
    seed: mixture.settings.seed,
    maxFactor: mixture.settings.max_factor,
    totalTokens: mixture.settings.total_tokens,
    ...(mixture.total_loss_tokens !== undefined ? { totalLossTokens: mixture.total_loss_tokens } : {}),
    droppedRecords: mixture.dropped_records,
    sources: sources.map(([source, s]) => ({
      source,
      factor: s.factor,
      ...(s.target_share !== undefined ? { targetShare: s.target_share } : {}),
      domains: Object.keys(s.domains),
      ...counts(s, s.share_before, s.share),
    })),
    domains: sources.flatMap(([source, s]) =>
      Object.entries(s.domains).map(([domain, t]) => ({
        source,
        domain,
        ...counts(t, before === 0 ? 0 : t.loss_tokens / before, after === 0 ? 0 : t.loss_tokens_out / after),
      })),
    ),
  };
}
