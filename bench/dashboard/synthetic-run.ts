/**
 * A synthetic finished CPT output folder for the dashboard benchmark: a stats table of N turns
 * (zstd Parquet, row groups of 65,536, one file per `turnsPerFile` like a run's task segments)
 * and a manifest.json consistent with it, built on a real run's manifest (the template).
 *
 * Every value is a pseudo-random function of the row (DuckDB `hash` of the record number or
 * record × 16 + turn, salted by the seed): the same N and seed give the same files. Records
 * have 3–10 turns and one of the 7 domains; observation tokens are log-spread (3% empty), action
 * tokens 4–496, the length ratio is obs / max(act, 1) as in src/mask/turn-stats.ts (so about
 * 0.002…3000, 0 for an empty observation); shares lie in [0, 1] with some exact 0 and 1. The
 * class comes from the template's own class rules (first match wins, else Other), the keep ratio
 * from its keep / domain_keep, and kept = draw < keep ratio, as src/mask/loss-policy.ts decides.
 *
 * The folder has no shards and no quarantine files (manifest `shards: []`, `quarantine: []`).
 */
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { DOMAINS } from "../../src/core/trajectory.ts";
import { sqlString } from "../../src/dashboard/duckdb-session.ts";
import type { Manifest } from "../../src/output/manifest.ts";
import type { ClassTotals, DomainTotals } from "../../src/output/task-totals.ts";

export const ROW_GROUP_ROWS = 65_536;

/** Share of records per domain (sums to 1), and a shift of log(obs tokens) so domains differ. */
const DOMAIN_MIX: Record<(typeof DOMAINS)[number], { share: number; obsShift: number }> = {
  swe: { share: 0.25, obsShift: 0.5 },
  mcp: { share: 0.15, obsShift: 0.3 },
  search: { share: 0.15, obsShift: 1.0 },
  terminal: { share: 0.15, obsShift: 0.2 },
  web: { share: 0.1, obsShift: 1.2 },
  android: { share: 0.1, obsShift: 1.0 },
  os: { share: 0.1, obsShift: 0.6 },
};

export interface SyntheticRunOptions {
  dir: string;
  turns: number;
  turnsPerFile: number;
  /** A real run's manifest: mask rules, tokenizer, layout… are kept; counts and files are replaced. */
  template: Manifest;
  seed: number;
}

export interface SyntheticRun {
  dir: string;
  turns: number;
  records: number;
  files: number;
  statsBytes: number;
  seconds: number;
}

/** Independent draws per row: each has its own input to the hash (below). */
const SALTS = ["domain", "turns", "empty", "obs", "act", "same", "overlap", "novelty", "jaccard", "fresh", "history", "draw"] as const;

/**
 * A uniform [0, 1) from DuckDB's hash (a 64-bit integer mixer) of key × 64 + salt + seed × 2^40:
 * one integer per (key, salt, seed). `hash(key, salt)` would not do: DuckDB combines the two
 * hashes so that different salts give strongly correlated values. 53 bits make the double.
 */
const uniform = (key: string, salt: (typeof SALTS)[number], seed: number) =>
  `((hash((${key}) * 64 + ${SALTS.indexOf(salt)} + ${seed} * 1099511627776) >> 11)::DOUBLE / 9007199254740992.0)`;

/** SQL for "the first of the template's class rules that matches, else Other" (bounds inclusive). */
function classSql(manifest: Manifest): string {
  const rules = manifest.mask_rules?.classes ?? [];
  const conditions = rules.map((rule) => {
    const parts = Object.entries(rule.when).flatMap(([stat, bounds]) => [
      ...(bounds?.min !== undefined ? [`${stat} >= ${bounds.min}`] : []),
      ...(bounds?.max !== undefined ? [`${stat} <= ${bounds.max}`] : []),
    ]);
    return `WHEN ${parts.length > 0 ? parts.join(" AND ") : "true"} THEN ${sqlString(rule.name)}`;
  });
  return conditions.length > 0 ? `CASE ${conditions.join(" ")} ELSE 'Other' END` : "'Other'";
}

/** SQL for the configured keep ratio: domain_keep over keep, 1 for a class named in neither. */
function keepSql(manifest: Manifest): string {
  const keep = manifest.mask_rules?.keep ?? {};
  const domainKeep = manifest.mask_rules?.domain_keep ?? {};
  const cases = [
    ...Object.entries(domainKeep).flatMap(([domain, classes]) =>
      Object.entries(classes ?? {}).map(([cls, ratio]) => `WHEN domain = ${sqlString(domain)} AND class = ${sqlString(cls)} THEN ${ratio}`),
    ),
    ...Object.entries(keep).map(([cls, ratio]) => `WHEN class = ${sqlString(cls)} THEN ${ratio}`),
  ];
  return cases.length > 0 ? `(CASE ${cases.join(" ")} ELSE 1 END)::DOUBLE` : "1.0::DOUBLE";
}

function domainSql(seed: number): string {
  let cumulative = 0;
  const u = uniform("r", "domain", seed);
  const entries = Object.entries(DOMAIN_MIX);
  const cases = entries.slice(0, -1).map(([domain, { share }]) => {
    cumulative += share;
    return `WHEN ${u} < ${cumulative} THEN ${sqlString(domain)}`;
  });
  return `CASE ${cases.join(" ")} ELSE ${sqlString(entries.at(-1)?.[0] ?? "os")} END`;
}

function obsShiftSql(): string {
  return `CASE domain ${Object.entries(DOMAIN_MIX)
    .map(([domain, { obsShift }]) => `WHEN ${sqlString(domain)} THEN ${obsShift}`)
    .join(" ")} ELSE 0 END`;
}

/** One stats file of `rows` turns; records are numbered from `firstRecord` and never cross files. */
function fileSql(path: string, rows: number, firstRecord: number, manifest: Manifest, seed: number): string {
  const u = (salt: (typeof SALTS)[number]) => uniform("k", salt, seed);
  // Each record has at least 3 turns, so this many records always fill the file.
  const records = Math.ceil(rows / 3) + 1;
  return `COPY (
    WITH records AS (
      SELECT r, 3 + floor(${uniform("r", "turns", seed)} * 8)::INTEGER AS n, ${domainSql(seed)} AS domain
      FROM range(${firstRecord}, ${firstRecord + records}) t(r)
    ),
    placed AS (SELECT *, sum(n) OVER (ORDER BY r ROWS UNBOUNDED PRECEDING) - n AS first FROM records),
    turns AS (SELECT r, domain, first, unnest(range(n)) AS turn_index FROM placed WHERE first < ${rows}),
    keyed AS (SELECT r, domain, turn_index::INTEGER AS turn_index, r * 16 + turn_index AS k FROM turns WHERE first + turn_index < ${rows}),
    drawn AS (
      SELECT r, domain, turn_index,
        CASE WHEN ${u("empty")} < 0.03 THEN 0 ELSE floor(exp(${u("obs")} * 8 + ${obsShiftSql()}))::INTEGER END AS obs_tokens,
        floor(exp(1.4 + ${u("act")} * 4.8))::INTEGER AS act_tokens,
        CASE WHEN ${u("same")} < 0.02 THEN 1.0 ELSE ${u("overlap")} END AS overlap,
        ${u("novelty")} AS u_novelty, ${u("jaccard")} AS u_jaccard, ${u("fresh")} AS u_fresh, ${u("history")} AS u_history,
        ${u("draw")} AS draw
      FROM keyed
    ),
    stats AS (
      SELECT r, domain, turn_index, obs_tokens, act_tokens, overlap, draw,
        least(greatest(1 - overlap * 0.8 + (u_novelty - 0.5) * 0.6, 0.0), 1.0) AS novelty,
        overlap * u_jaccard AS jaccard,
        obs_tokens / greatest(act_tokens, 1) AS length_ratio,
        u_fresh, u_history
      FROM drawn
    ),
    shared AS (
      SELECT *, CASE WHEN u_fresh < 0.1 THEN 0.0 ELSE novelty * u_history END AS history_novelty FROM stats
    ),
    classed AS (SELECT *, ${classSql(manifest)} AS class FROM shared),
    decided AS (SELECT *, ${keepSql(manifest)} AS keep_ratio FROM classed)
    SELECT 'synthetic/' || domain || '/' || lpad(r::VARCHAR, 9, '0') AS id, domain, turn_index, class,
      draw < keep_ratio AS kept, keep_ratio, draw, overlap, novelty, jaccard, length_ratio, history_novelty,
      act_tokens, obs_tokens
    FROM decided ORDER BY r, turn_index
  ) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`;
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Writes `<dir>/stats/turns-TTTTT-0000.parquet` files and `<dir>/manifest.json`. */
export async function writeSyntheticRun(options: SyntheticRunOptions): Promise<SyntheticRun> {
  const started = performance.now();
  const { dir, turns, turnsPerFile, template, seed } = options;
  mkdirSync(join(dir, "stats"), { recursive: true });
  const db = await DuckDBInstance.create(":memory:");
  const connection = await db.connect();
  const query = async (sql: string) => (await connection.runAndReadAll(sql)).getRowObjectsJson();
  try {
    const files: string[] = [];
    for (let task = 0, start = 0; start < turns; task += 1, start += turnsPerFile) {
      const relative = `stats/turns-${String(task).padStart(5, "0")}-0000.parquet`;
      await connection.run(fileSql(join(dir, relative), Math.min(turnsPerFile, turns - start), start, template, seed));
      files.push(relative);
    }
    const all = `read_parquet(${`[${files.map((f) => sqlString(join(dir, f))).join(", ")}]`})`;
    const statsFiles: Manifest["masking"]["stats_files"] = [];
    for (const relative of files) {
      const path = join(dir, relative);
      const [row] = await query(`SELECT count(*) AS n FROM read_parquet(${sqlString(path)})`);
      const rows = Number(row?.n);
      // As the stats writer records them: documents = rows, no tokens of their own.
      statsFiles.push({
        path: relative,
        rows,
        documents: rows,
        bytes: statSync(path).size,
        sha256: await sha256File(path),
        tokens: 0,
        loss_tokens: 0,
      });
    }

    const byDomainClass: Record<string, Record<string, ClassTotals>> = {};
    for (const r of await query(`
      SELECT domain, class, count(*) AS turns, count(*) FILTER (WHERE kept) AS kept, sum(obs_tokens) AS obs_tokens,
        coalesce(sum(obs_tokens) FILTER (WHERE kept), 0) AS kept_obs_tokens
      FROM ${all} GROUP BY ALL ORDER BY domain, class`)) {
      const classes = byDomainClass[String(r.domain)] ?? {};
      byDomainClass[String(r.domain)] = classes;
      classes[String(r.class)] = {
        kept: Number(r.kept),
        kept_obs_tokens: Number(r.kept_obs_tokens),
        obs_tokens: Number(r.obs_tokens),
        turns: Number(r.turns),
      };
    }
    // Per domain: records, and plausible token totals (turns' tokens plus template overhead;
    // loss = actions + kept observations). Nothing reads them but the page's token table.
    const domains: Record<string, DomainTotals> = {};
    for (const r of await query(`
      SELECT domain, count(DISTINCT id) AS samples,
        sum(act_tokens + obs_tokens) + 10 * count(*) + 40 * count(DISTINCT id) AS tokens,
        sum(act_tokens) + coalesce(sum(obs_tokens) FILTER (WHERE kept), 0) AS loss_tokens
      FROM ${all} GROUP BY domain ORDER BY domain`))
      domains[String(r.domain)] = { loss_tokens: Number(r.loss_tokens), samples: Number(r.samples), tokens: Number(r.tokens) };
    const total = Object.values(domains).reduce(
      (sum, d) => ({ samples: sum.samples + d.samples, tokens: sum.tokens + d.tokens, loss_tokens: sum.loss_tokens + d.loss_tokens }),
      { samples: 0, tokens: 0, loss_tokens: 0 },
    );

    const { card: _card, ...base } = template;
    const manifest: Manifest = {
      ...base,
      config_sha256: createHash("sha256").update(`bench/dashboard synthetic turns=${turns} seed=${seed}`).digest("hex"),
      inputs: [],
      tasks: { count: files.length, plan_sha256: template.tasks.plan_sha256 },
      masking: { by_domain_class: byDomainClass, stats_files: statsFiles },
      counts: {
        records_in: total.samples,
        samples_out: total.samples,
        documents: total.samples,
        quarantined: 0,
        quarantined_by_stage: {},
        filtered: 0,
        dropped_by_mixture: 0,
        filtered_by_stage: {},
      },
      tokens: { total: total.tokens, loss: total.loss_tokens },
      domains,
      splits: { train: total },
      packing: null,
      normalize: {},
      shards: [],
      quarantine: [],
    };
    writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    return {
      dir,
      turns: statsFiles.reduce((sum, f) => sum + f.rows, 0),
      records: total.samples,
      files: files.length,
      statsBytes: statsFiles.reduce((sum, f) => sum + f.bytes, 0),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}
