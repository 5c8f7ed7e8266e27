import { diffArrays } from "diff";
import type { Manifest } from "../output/manifest.ts";
import { loadTokenizer } from "../tokenize/load-tokenizer.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import { openAblationFolder } from "./ablation-data.ts";
import { controlsData } from "./controls-data.ts";
import type { AblationData, CompareData, DashboardData, ExampleTurn, RunData, RunSummary } from "./dashboard-data.ts";
import { DuckSession, num } from "./duckdb-session.ts";
import { attachTokens, type ExampleFilter, queryExamples, sampleExamples } from "./example-turns.ts";
import { noveltyData } from "./novelty-data.ts";
import { piiData } from "./pii-data.ts";
import { openRunOutput, type RunOutput } from "./run-output.ts";
import {
  classRows,
  curationData,
  domainTokens,
  filteringData,
  histograms,
  mixtureData,
  quarantineReasons,
  shardGroups,
  thresholds,
} from "./stats-queries.ts";

/** Turns embedded per (domain, class, decision): enough to browse, small enough for one file. */
export const DEFAULT_EXAMPLES_PER_GROUP = 6;

function summaryOf(run: RunOutput): RunSummary {
  const m = run.manifest;
  const byClass = Object.values(m.masking?.by_domain_class ?? {}).flatMap((classes) => Object.values(classes));
  return {
    label: run.label,
    dir: run.dir,
    pipeline: m.pipeline.name,
    maskPolicy: m.mask_policy,
    tokenizer: m.tokenizer.name,
    configSha256: m.config_sha256,
    packed: m.layout?.pack != null,
    truncatedTokens: m.packing?.fit?.truncated_tokens ?? 0,
    recordsIn: m.counts.records_in,
    samplesOut: m.counts.samples_out,
    documents: m.counts.documents ?? m.counts.samples_out,
    quarantined: m.counts.quarantined,
    filtered: m.counts.filtered ?? 0,
    droppedByMixture: m.counts.dropped_by_mixture ?? 0,
    tokens: m.tokens.total,
    lossTokens: m.tokens.loss,
    shards: m.shards.length,
    shardBytes: m.shards.reduce((sum, s) => sum + s.bytes, 0),
    turns: (m.masking?.stats_files ?? []).reduce((sum, f) => sum + f.rows, 0),
    keptTurns: byClass.reduce((sum, c) => sum + c.kept, 0),
  };
}

/**
 * The run's tokenizer, to decode example turns; undefined when it is not the one the shards were
 * written with (a different vocabulary would decode wrong text, which is worse than none).
 */
function tokenizerFor(manifest: Manifest): Tokenizer | undefined {
  try {
    const tokenizer = loadTokenizer({ name: manifest.tokenizer.name });
    return tokenizer.identity.vocabSha256 === manifest.tokenizer.vocab_sha256 ? tokenizer : undefined;
  } catch {
    return undefined;
  }
}

/** Mask rules as one line per setting, rule lines numbered (order matters: first match wins). */
function ruleLines(manifest: Manifest): string[] {
  const rules = manifest.mask_rules;
  if (!rules) return ["(mask rules not recorded: the manifest predates mask_rules)"];
  const bound = (stat: string, b: { min?: number | undefined; max?: number | undefined }) =>
    [b.min !== undefined ? `${stat} ≥ ${b.min}` : "", b.max !== undefined ? `${stat} ≤ ${b.max}` : ""].filter(Boolean).join(", ");
  return [
    `policy ${manifest.mask_policy}, seed ${rules.seed}`,
    ...rules.classes.map(
      (rule, i) =>
        `rule ${i + 1}: ${rule.name} when ${Object.entries(rule.when)
          .map(([stat, b]) => bound(stat, b ?? {}))
          .join(", ")}`,
    ),
    ...Object.entries(rules.keep).map(([cls, ratio]) => `keep ${cls} ${ratio}`),
    ...Object.entries(rules.domain_keep).flatMap(([domain, classes]) =>
      Object.entries(classes ?? {}).map(([cls, ratio]) => `keep ${cls} in ${domain} ${ratio}`),
    ),
  ];
}

/**
 * A dashboard over one run, or two (`--compare`): DuckDB views over their files, and the
 * tokenizers to decode example turns. Kept open by the server to answer example queries.
 */
export class Dashboard {
  private readonly db: DuckSession;
  readonly runs: RunOutput[];
  private readonly tokenizers: (Tokenizer | undefined)[];
  /** Set when the first folder is an ablation's (`lwm-data ablate --out DIR`). */
  private readonly ablation: AblationData | undefined;

  private constructor(db: DuckSession, runs: RunOutput[], tokenizers: (Tokenizer | undefined)[], ablation: AblationData | undefined) {
    this.db = db;
    this.runs = runs;
    this.tokenizers = tokenizers;
    this.ablation = ablation;
  }

  /** Opens run output folders; an ablation folder as the first one shows its table, with its baseline variant's build as the run. */
  static async open(dirs: readonly string[]): Promise<Dashboard> {
    const ablation = dirs[0] === undefined ? undefined : await openAblationFolder(dirs[0]);
    const db = await DuckSession.open();
    try {
      const runs: RunOutput[] = [];
      for (const [i, dir] of dirs.entries()) runs.push(await openRunOutput(db, i === 0 && ablation ? ablation.runDir : dir, i));
      if (runs.length === 2 && runs[0] && runs[1] && runs[0].label === runs[1].label) {
        runs[0].label = `A: ${runs[0].label}`;
        runs[1].label = `B: ${runs[1].label}`;
      }
      return new Dashboard(
        db,
        runs,
        runs.map((run) => tokenizerFor(run.manifest)),
        ablation?.data,
      );
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private otherOf(index: number): RunOutput | undefined {
    return this.runs.length === 2 ? this.runs[1 - index] : undefined;
  }

  private run(index: number): RunOutput {
    const run = this.runs[index];
    if (!run) throw new RangeError(`no run ${index}`);
    return run;
  }

  /** Everything the page draws. */
  async data(options: { live: boolean; examplesPerGroup?: number }): Promise<DashboardData> {
    const started = performance.now();
    const perGroup = options.examplesPerGroup ?? DEFAULT_EXAMPLES_PER_GROUP;
    const runs: RunData[] = [];
    for (const [index, run] of this.runs.entries()) {
      const classes = await classRows(this.db, run);
      const sampled = await sampleExamples(this.db, run, this.otherOf(index), perGroup);
      const curation = await curationData(this.db, run);
      const mixture = mixtureData(run.manifest);
      const controls = await controlsData(this.db, run, perGroup);
      const pii = piiData(run.manifest);
      const filtering = filteringData(run.manifest);
      const novelty = await noveltyData(this.db, run);
      runs.push({
        summary: summaryOf(run),
        histograms: await histograms(this.db, run),
        thresholds: thresholds(run.manifest),
        classes,
        domains: domainTokens(run.manifest, classes),
        shards: shardGroups(run.manifest),
        quarantine: await quarantineReasons(this.db, run),
        ...(curation ? { curation } : {}),
        ...(filtering ? { filtering } : {}),
        ...(mixture ? { mixture } : {}),
        ...(controls ? { controls } : {}),
        ...(pii ? { pii } : {}),
        ...(novelty ? { novelty } : {}),
        examples: await attachTokens(this.db, run, this.tokenizers[index], sampled),
        ...(run.manifest.mask_rules ? { maskRules: run.manifest.mask_rules } : {}),
      });
    }
    const data: DashboardData = {
      format: "lwm-data/dashboard",
      version: 1,
      runs,
      live: options.live,
      examplesPerGroup: perGroup,
      buildSeconds: 0,
    };
    if (this.runs.length === 2) data.compare = await this.compare();
    if (this.ablation) data.ablation = this.ablation;
    data.buildSeconds = (performance.now() - started) / 1000;
    return data;
  }

  /** Turns matched by (id, turn index) across the two runs, grouped by class and decision in each. */
  private async compare(): Promise<CompareData> {
    const [a, b] = [this.run(0), this.run(1)];
    const [counts] = await this.db.rows(`
      SELECT count(*) FILTER (WHERE a.id IS NOT NULL AND b.id IS NOT NULL) AS matched,
        count(*) FILTER (WHERE b.id IS NULL) AS only_a, count(*) FILTER (WHERE a.id IS NULL) AS only_b
      FROM ${a.turnsView} a FULL OUTER JOIN ${b.turnsView} b ON a.id = b.id AND a.turn_index = b.turn_index`);
    const transitions = await this.db.rows(`
      SELECT a.domain, a.class AS class_a, b.class AS class_b, a.kept AS kept_a, b.kept AS kept_b,
        count(*) AS turns, sum(a.obs_tokens) AS obs_tokens
      FROM ${a.turnsView} a JOIN ${b.turnsView} b ON a.id = b.id AND a.turn_index = b.turn_index
      GROUP BY ALL ORDER BY a.domain, class_a, class_b, kept_a DESC, kept_b DESC`);
    const rulesDiff = diffArrays(ruleLines(a.manifest), ruleLines(b.manifest)).flatMap((part) =>
      part.added ? part.value.map((line) => `+ ${line}`) : part.removed ? part.value.map((line) => `- ${line}`) : [],
    );
    return {
      matched: num(counts?.matched),
      onlyA: num(counts?.only_a),
      onlyB: num(counts?.only_b),
      transitions: transitions.map((r) => ({
        domain: String(r.domain),
        classA: String(r.class_a),
        classB: String(r.class_b),
        keptA: r.kept_a === true,
        keptB: r.kept_b === true,
        turns: num(r.turns),
        obsTokens: num(r.obs_tokens),
      })),
      rulesDiff,
    };
  }

  /** A page of any turns matching the filter, with tokens (the live page's example browser). */
  async examples(
    runIndex: number,
    filter: ExampleFilter,
    limit: number,
    offset: number,
  ): Promise<{ total: number; examples: ExampleTurn[] }> {
    const run = this.run(runIndex);
    const page = await queryExamples(this.db, run, this.otherOf(runIndex), filter, limit, offset);
    return { total: page.total, examples: await attachTokens(this.db, run, this.tokenizers[runIndex], page.examples) };
  }

  close(): void {
    this.db.close();
  }
}
