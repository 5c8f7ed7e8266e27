import type { TurnStatsRow } from "../inspect/read-turn-stats.ts";
import type { SynthesisShare } from "../output/manifest.ts";

/**
 * The dashboard's data model: everything the page draws, as JSON. Built by build-dashboard.ts
 * (DuckDB aggregations over the stats table, plus the manifest) and embedded in the page, so the
 * written HTML file needs nothing else. Field names are the page's (src/dashboard/client/).
 */

/** The per-turn statistics the histograms show, by their stats-table column names. */
export const HISTOGRAM_STATS = ["overlap", "novelty", "jaccard", "length_ratio", "history_novelty"] as const;
export type HistogramStat = (typeof HISTOGRAM_STATS)[number];

/** The run's headline numbers, straight from its manifest (the browser test compares them). */
export interface RunSummary {
  label: string;
  /** The output folder as given on the command line. */
  dir: string;
  pipeline: string;
  maskPolicy: string;
  tokenizer: string;
  configSha256: string;
  packed: boolean;
  /** Tokens packing cut from records longer than a row (pack.overlong: truncate). */
  truncatedTokens: number;
  recordsIn: number;
  samplesOut: number;
  documents: number;
  quarantined: number;
  /** Records curation removed (dedup, decontamination); 0 when the run was not curated. */
  filtered: number;
  /** Records the mixture drew no copy of (a factor below 1); 0 without a mixture. */
  droppedByMixture: number;
  tokens: number;
  lossTokens: number;
  shards: number;
  shardBytes: number;
  /** Rows of the stats table, from the manifest's stats_files. */
  turns: number;
  keptTurns: number;
}

/** One histogram bar: turns (and their observation tokens) with the statistic in [x1, x2). */
export interface HistogramBin {
  domain: string;
  stat: HistogramStat;
  x1: number;
  x2: number;
  turns: number;
  obsTokens: number;
}

/** A class rule's bound on a statistic, drawn as a line on that statistic's histogram. */
export interface Threshold {
  stat: HistogramStat;
  value: number;
  bound: "min" | "max";
  class: string;
  /** 1-based position of the rule in `mask.classes` (first match wins). */
  rule: number;
}

/** Turns of one class in one domain: counts, observation tokens, configured vs realised keep. */
export interface ClassRow {
  domain: string;
  class: string;
  turns: number;
  kept: number;
  obsTokens: number;
  keptObsTokens: number;
  /** Mean configured keep ratio of these turns (mask.keep / domain_keep). */
  configuredKeep: number;
}

/** Tokens per domain: all, observations before masking, trained observations, loss tokens. */
export interface DomainTokens {
  domain: string;
  samples: number;
  tokens: number;
  lossTokens: number;
  obsTokens: number;
  keptObsTokens: number;
}

export interface ShardGroup {
  split: string;
  files: number;
  rows: number;
  documents: number;
  bytes: number;
  tokens: number;
  lossTokens: number;
}

/** Quarantined records by stage and field (numeric path parts generalised to `*`). */
export interface QuarantineReason {
  stage: string;
  field: string;
  count: number;
  /** One real reason of the group, to say what went wrong. */
  example: string;
}

/** A run of consecutive tokens with one mask bit, decoded to text. */
export interface TokenRun {
  role: "action" | "observation";
  trained: boolean;
  text: string;
}

/** A turn's action and observation as the trainer sees them: token runs with their loss mask. */
export interface TurnTokens {
  runs: TokenRun[];
  actionTokens: number;
  observationTokens: number;
  /** Tokens not shown (a long turn is cut for the page). */
  omittedTokens: number;
}

/** One stats-table row (the fields inspect reads, its class as `class`), for the example browser. */
export interface ExampleTurn extends Omit<TurnStatsRow, "turnClass"> {
  id: string;
  domain: string;
  class: string;
  /** Compare mode: the same turn's class and decision in the other run, when it has the turn. */
  other?: { class: string; kept: boolean };
  /** Decoded tokens: embedded for the sampled examples, returned by the server's /api/examples otherwise. */
  tokens?: TurnTokens;
  /** Why the tokens cannot be shown (e.g. the record was split to fit packed rows). */
  tokensNote?: string;
}

/** Records one curation stage removed from one domain. */
export interface FilteredCount {
  domain: string;
  stage: string;
  records: number;
}

/** Duplicate clusters with a size in [from, to] (bins double: 2, 3, 4–7, 8–15, …). */
export interface ClusterSizeBar {
  from: number;
  to: number;
  label: string;
  clusters: number;
  records: number;
}

/** One line of a filtered/ file: the record, the stage, why, and what it matched. */
export interface FilteredExample {
  id: string;
  domain: string;
  stage: string;
  reason: string;
  source: string;
  /** exact / near: the duplicate that stayed. */
  keptId?: string;
  keptSource?: string;
  /** decontaminate: the benchmark file and item. */
  benchmark?: string;
  benchmarkId?: string;
}

/** What curation did to a run: the manifest's curation block, with examples read from filtered/. */
export interface CurationData {
  filtered: number;
  /** Per domain and stage, stages that removed nothing left out. */
  byDomainStage: FilteredCount[];
  clusters: { count: number; records: number; largest: number };
  clusterSizes: ClusterSizeBar[];
  masked: { records: number; turns: number };
  /** The stages that ran and their settings, in one line. */
  settings: string;
  /** A deterministic sample: up to N entries per (stage, domain), by id. */
  examples: FilteredExample[];
}

/** What the config's filters, selection and scorers did (manifest `filters`, `selection`, `scoring`). */
export interface FilteringData {
  /** Records dropped per stage (`filter`, `selection`) and rule, in the manifest's order (a filter that dropped none included). */
  byRule: { stage: string; rule: string; records: number }[];
  /** Selection: the records it decided over and those it kept. */
  selection?: { records: number; kept: number };
  /** Per scorer: model, records by status, requests and tokens. */
  scorers: {
    name: string;
    model: string;
    records: number;
    ok: number;
    malformed: number;
    failed: number;
    requests: number;
    tokens: number;
  }[];
}

/**
 * One mixture source, or one domain within it: records, tokens and trained (loss) tokens before
 * weighting (one copy of each record) and after (every copy written), and shares of the run's
 * trained tokens before and after. Counts are the manifest's mixture block.
 */
export interface MixtureCounts {
  records: number;
  /** Records with at least one copy written; documents written (copies and packing pieces). */
  recordsOut: number;
  documentsOut: number;
  tokens: number;
  tokensOut: number;
  lossTokens: number;
  lossTokensOut: number;
  shareBefore: number;
  share: number;
}

export interface MixtureSourceRow extends MixtureCounts {
  source: string;
  factor: number;
  /** The config's target share of trained tokens, when it set one. */
  targetShare?: number;
  domains: string[];
}

export interface MixtureDomainRow extends MixtureCounts {
  source: string;
  domain: string;
}

/** The manifest's mixture block, as the Mixture panel draws it. */
export interface MixtureData {
  /** How the factors were set: no weights (all 1), the config's factors, or derived from target shares. */
  mode: "none" | "factors" | "shares";
  seed: number;
  maxFactor: number;
  /** `total_tokens` as configured (a number or "auto"). */
  totalTokens: number | "auto";
  /** Trained tokens the target shares were of (shares mode). */
  totalLossTokens?: number;
  droppedRecords: number;
  sources: MixtureSourceRow[];
  domains: MixtureDomainRow[];
}

/** Labels of one kind found in one domain: the manifest's count, and the stats table's turns with it. */
export interface ControlLabelRow {
  domain: string;
  label: string;
  /** Labels found (the manifest's controls.labels; a turn can show one label more than once). */
  count: number;
  /** Turns with the label, and those of them kept (trained); absent when the stats table has no `labels` column. */
  turns?: number;
  keptTurns?: number;
}

/** A piece of an observation excerpt: plain text, or evidence (its [start, end) in the observation's code points). */
export interface EvidencePiece {
  text: string;
  evidence?: { start: number; end: number };
}

/** A labelled turn: its instruction and the observation with the label's evidence highlighted. */
export interface ControlExample {
  label: string;
  domain: string;
  id: string;
  turnIndex: number;
  class: string;
  kept: boolean;
  /** The sample's control_kind (instructed, uninstructed) and control_instruction. */
  kind: string;
  instruction: string;
  /** Every label of the sample, as `label (turn N)`. */
  sampleLabels: string[];
  /** Code points of the observation around the evidence; the rest is counted, not shown. */
  observation?: { pieces: EvidencePiece[]; omittedBefore: number; omittedAfter: number };
  /** Why the observation cannot be shown (e.g. the shards carry no messages). */
  note?: string;
}

/** The manifest's controls block, with labels per domain and a few examples per (domain, label). */
export interface ControlsData {
  share: number;
  counterfactualShare: number;
  seed: number;
  labelled: number;
  instructed: number;
  counterfactual: number;
  labels: ControlLabelRow[];
  /** Up to N labelled turns per (domain, label), N the page's examplesPerGroup. */
  examples: ControlExample[];
  /**
   * With controls.synthesis: per domain and kind the syntheses written, against the trajectories a
   * verified synthesis existed for (`basis` eligible) or, in older manifests, those drawn for one
   * (`basis` asked); rejections by reason.
   */
  synthesis?: {
    basis: "eligible" | "asked";
    rows: { domain: string; kind: string; asked: number; written: number }[];
    rejected: { reason: string; count: number }[];
    /** With target shares (the mix control): per domain and kind, the target against what was written (manifest `synthesis_shares`). */
    shares?: ({ domain: string; kind: string } & SynthesisShare)[];
  };
}

/** Turns of one domain whose corpus_novelty lies in [x1, x2) bits. */
export interface NoveltyBin {
  domain: string;
  x1: number;
  x2: number;
  turns: number;
  obsTokens: number;
}

/** mask.corpus_novelty: the manifest's novelty block and the stats table's per-turn corpus_novelty (docs/masking.md). */
export interface NoveltyData {
  /** Observations counted job-wide (N) and distinct canonical observations. */
  observations: number;
  distinct: number;
  /** Distinct observations by how often they occur (`1`, `2-3`, `4-7`, …), in count order. */
  byCount: { bucket: string; distinct: number }[];
  /** Per domain, in bins of NOVELTY_BIN_BITS; empty when the stats table has no corpus_novelty column. */
  histogram: NoveltyBin[];
  /** Class rules' bounds on corpus_novelty. */
  thresholds: { value: number; bound: "min" | "max"; class: string; rule: number }[];
}

/** Width of a corpus-novelty histogram bar, in bits. */
export const NOVELTY_BIN_BITS = 0.5;

/** A mean over seeds with its 95% interval (null bounds: one seed). */
export interface AblationInterval {
  mean: number;
  low: number | null;
  high: number | null;
  n: number;
}

/** One variant of an ablation (DIR/ablate.json of `lwm-data ablate`). */
export interface AblationVariant {
  name: string;
  /** The overrides that make it, as `key=value`. */
  set: string[];
  loss: AblationInterval;
  difference: AblationInterval | null;
  informativeLoss: AblationInterval;
  informativeDifference: AblationInterval | null;
  /** Absent in reports written before the AgentWorldBench evaluation. */
  awbLoss?: AblationInterval;
  awbDifference?: AblationInterval | null;
  /** Held-out observations seen once in the corpus: null = n/a (none, or no subset); absent in older reports. */
  seenOnceLoss?: AblationInterval | null;
  seenOnceDifference?: AblationInterval | null;
  trainedWeight: number;
  /** Per seed: held-out loss (the dots behind the interval). */
  seedLosses: { seed: number; loss: number }[];
}

/** The Ablation panel: `lwm-data dashboard <ablate dir>` (the run shown is the baseline variant's build). */
export interface AblationData {
  dir: string;
  config: string;
  model: string;
  tokens: number;
  seeds: number;
  baseline: string;
  evalTokens: number;
  informativeTokens: number;
  /** AgentWorldBench-layout rows of the held-out turns; absent in older reports. */
  awbRows?: number;
  /** The seen-once subset: its tokens and N, or why it is n/a; absent in older reports. */
  seenOnce?: { tokens: number; observations: number } | { unavailable: string };
  variants: AblationVariant[];
}

/** The manifest's pii block: what was replaced, per domain and kind (docs/normalization.md "Personal data"). */
export interface PiiData {
  /** Kinds on at the top level; domains with overrides. */
  kinds: string[];
  domainOverrides: string[];
  ipPolicy: { private: string; documentation: string };
  /** Records with any value replaced; replacements; distinct values per record, summed. */
  records: number;
  replaced: number;
  values: number;
  recordsByDomain: { domain: string; records: number }[];
  rows: { domain: string; kind: string; replaced: number; values: number }[];
  /** IPs the range policy kept. */
  kept: { domain: string; range: string; count: number }[];
}

export interface RunData {
  summary: RunSummary;
  histograms: HistogramBin[];
  thresholds: Threshold[];
  classes: ClassRow[];
  domains: DomainTokens[];
  shards: ShardGroup[];
  quarantine: QuarantineReason[];
  /** Absent when the run was not curated (no curation block in its manifest). */
  curation?: CurationData;
  /** Absent when the run had no filters, selection or scorers. */
  filtering?: FilteringData;
  /** Absent when the manifest has no mixture block (outputs written before mixtures). */
  mixture?: MixtureData;
  /** Absent when the manifest has no controls block (controls off, or outputs written before). */
  controls?: ControlsData;
  /** Absent when personal data was not redacted (normalize.pii off, or outputs written before). */
  pii?: PiiData;
  /** Absent when mask.corpus_novelty was off (no novelty block in the manifest). */
  novelty?: NoveltyData;
  /** A deterministic sample: up to N turns per (domain, class, decision), tokens included. */
  examples: ExampleTurn[];
  /** Config `mask` less policy, as the manifest records it (absent in older manifests). */
  maskRules?: unknown;
}

/** Compare mode: turns of both runs matched by (id, turn index), grouped by how they changed. */
export interface Transition {
  domain: string;
  classA: string;
  classB: string;
  keptA: boolean;
  keptB: boolean;
  turns: number;
  obsTokens: number;
}

export interface CompareData {
  /** Turns present in both runs; only in A; only in B. */
  matched: number;
  onlyA: number;
  onlyB: number;
  transitions: Transition[];
  /** Lines that differ between the two runs' mask rules (`-` A, `+` B). */
  rulesDiff: string[];
}

export interface DashboardData {
  /** Format of this JSON, for anyone reading a saved page's data. */
  format: "lwm-data/dashboard";
  version: 1;
  runs: RunData[];
  compare?: CompareData;
  /** Opened on an ablation folder (`lwm-data ablate --out DIR`): its table; the run is its baseline variant. */
  ablation?: AblationData;
  /** True when served by `lwm-data dashboard` (the page may query /api for any turn). */
  live: boolean;
  /** Turns embedded per (domain, class, decision) in `examples`. */
  examplesPerGroup: number;
  /** Seconds spent aggregating, shown in the page footer. */
  buildSeconds: number;
}
