import { join } from "node:path";
import type { JobConfig } from "../config/schema.ts";
import { writeJsonFile } from "../io/json-file.ts";
import type { MixtureSummary } from "../mixture/mixture-summary.ts";
import type { PiiSummary } from "../normalize/pii/pii-summary.ts";
import type { NoveltySummary } from "../novelty/novelty-lookup.ts";
import type { PackingSummary } from "../pack/packing-summary.ts";
import type { TokenizerIdentity } from "../tokenize/tokenizer.ts";
import { type ShardColumns, scoreColumns } from "../write/shard-columns.ts";
import type { FiltersSummary, ScoringSummary, SelectionSummary } from "./selection-summary.ts";
import type { OutputFile } from "./task-state.ts";
import type { ClassTotals, DomainTotals, FitTotals, ProvenanceTotals, TaskTotals } from "./task-totals.ts";

export const MANIFEST_FORMAT = "lwm-data/shards";
export const MANIFEST_VERSION = 3;

/** What the manifest says about the job itself; fixed before any data is processed. */
export interface ManifestHeader {
  pipeline: { name: string; stages: string[] };
  config_sha256: string;
  tokenizer: { name: string; vocab_sha256: string; vocab_size: number; source: string };
  template: { source: string; sha256: string };
  mask_policy: string;
  /**
   * The class rules, keep ratios and seed the stats table's classes and decisions came from
   * (config `mask` less `policy`): the dashboard draws the thresholds from it.
   */
  mask_rules: Omit<JobConfig["mask"], "policy" | "weights" | "corpus_novelty"> &
    Partial<Pick<JobConfig["mask"], "weights" | "corpus_novelty">>;
  /** `source`: the input's mixture source, when the config names one. */
  inputs: { path: string; format: string; detected: boolean; bytes: number; source?: string }[];
  /** How rows are laid out: the shard schema follows from it (docs/output.md "Shard schema", "Packing"). */
  layout: ShardLayout;
}

export interface ShardLayout {
  include_messages: boolean;
  validation_fraction: number;
  split_seed: number;
  /** Packing settings, or null for one sample per row. */
  pack: Omit<JobConfig["pack"], "enabled"> | null;
  /** Shards carry `control_kind`, `control_instruction` and `controls` (`controls.enabled`; absent when off). */
  controls?: true;
  /** Unpacked shards carry the outcome and provenance columns `task_id` … `failure_mode` (absent in outputs made before them, and in SFT outputs). */
  provenance?: true;
  /**
   * Scorer names (`scorers`, in config order): unpacked CPT shards carry one nullable float64
   * column per scorer, `score_<name>` with `-` made `_` (src/write/arrow-batch.ts `scoreColumn`),
   * null where the record has no usable score. Absent without scorers, and when packed.
   */
  scores?: string[];
  /** Shards, unpacked and packed, carry `loss_weight` after `loss_mask` (`mask.weights.enabled`; absent when off). */
  loss_weight?: true;
}

/** The manifest's `tokenizer` block (CPT and SFT manifests alike). */
export function manifestTokenizer(identity: TokenizerIdentity): ManifestHeader["tokenizer"] {
  return { name: identity.name, vocab_sha256: identity.vocabSha256, vocab_size: identity.vocabSize, source: identity.source };
}

/** The manifest's `mask_rules`: the config's `mask` block without the policy name. */
export function maskRules(config: Pick<JobConfig, "mask">): ManifestHeader["mask_rules"] {
  const { policy, weights, corpus_novelty, ...rules } = config.mask;
  // Weights and corpus novelty off change nothing, so the manifest is the one from before they existed.
  return { ...rules, ...(weights.enabled ? { weights } : {}), ...(corpus_novelty.enabled ? { corpus_novelty } : {}) };
}

export function shardLayout(
  config: Pick<JobConfig, "output" | "pack"> & Partial<Pick<JobConfig, "controls" | "scorers" | "mask">>,
  includeMessages = config.output.include_messages,
  /** CPT records: shards carry the provenance columns (unpacked). */
  provenance = false,
): ShardLayout {
  const { enabled, ...pack } = config.pack;
  const scorers = (config.scorers ?? []).map((scorer) => scorer.name);
  scoreColumns(scorers); // two names making one column are refused before anything is written
  return {
    include_messages: includeMessages && !enabled,
    validation_fraction: config.output.validation_fraction,
    split_seed: config.output.split_seed,
    pack: enabled ? pack : null,
    ...(config.controls?.enabled && !enabled ? { controls: true as const } : {}),
    ...(provenance && !enabled ? { provenance: true as const } : {}),
    ...(scorers.length > 0 && !enabled ? { scores: scorers } : {}),
    ...(config.mask?.weights.enabled ? { loss_weight: true as const } : {}),
  };
}

/** The shard columns a layout's unpacked shards have. */
export function layoutColumns(layout: ShardLayout): Required<ShardColumns> {
  return {
    messages: layout.include_messages,
    controls: layout.controls === true,
    provenance: layout.provenance === true,
    scores: layout.scores ?? [],
    lossWeight: layout.loss_weight === true,
  };
}

/** The manifest's `controls` block: the settings, then what the tasks counted. */
export interface ControlsSummary {
  share: number;
  counterfactual_share: number;
  seed: number;
  /** Trajectories with at least one edge case; those whose system message states them; counterfactual samples. */
  labelled: number;
  instructed: number;
  counterfactual: number;
  /** Per domain and label: labels found. */
  labels: Record<string, Record<string, number>>;
  /** controls.synthesis (issue 37): its settings (with the defaults merged, so present whenever controls are on). */
  synthesis?: {
    target_shares: Partial<Record<string, number | Partial<Record<string, number>>>>;
    max_synthesized_ratio: number | null;
    pairs: boolean;
  };
  /**
   * With target shares set (docs/controls.md "Mix control"): per domain the samples written, per
   * domain and kind the natural instructed samples stating it, the trajectories a verified synthesis
   * of it existed for and the synthesized samples written, rejected attempts by reason, and per
   * targeted domain and kind the realised share against its target.
   */
  synthesis_samples?: Record<string, number>;
  /** @deprecated Written before the mix control (per-trajectory draws); no longer written: read `synthesis_eligible` and `synthesis_shares`. */
  synthesis_asked?: Record<string, Record<string, number>>;
  synthesis_natural?: Record<string, Record<string, number>>;
  synthesis_eligible?: Record<string, Record<string, number>>;
  synthesized?: Record<string, Record<string, number>>;
  synthesis_rejected?: Record<string, number>;
  /**
   * With controls.synthesis.teacher (docs/controls.md "Teacher syntheses"): the synthesized samples
   * the teacher wrote, per domain and kind (the rest of `synthesized` are the rules'), and its
   * rejected answers by reason (also in `synthesis_rejected`).
   */
  synthesized_teacher?: Record<string, Record<string, number>>;
  synthesis_rejected_teacher?: Record<string, number>;
  synthesis_shares?: Record<string, Record<string, SynthesisShare>>;
  /** With controls.rephrase: its identity (share, model, sampling), the written instructions asked, reworded, and kept as templates by reason. */
  rephrase?: { share: number; model: string; temperature: number; max_tokens: number };
  rephrase_asked?: number;
  rephrased?: number;
  rephrase_rejected?: Record<string, number>;
}

/** One targeted kind in one domain: what the mix control asked for and what was written (shares of the domain's samples). */
export interface SynthesisShare {
  target: number;
  /** Samples of the domain written (records once, and their counterfactual and synthesized samples). */
  samples: number;
  natural: number;
  synthesized: number;
  /** Trajectories a verified synthesis of the kind existed for. */
  eligible: number;
  /** (natural + synthesized) / samples, rounded to 6 decimals. */
  realised: number;
  /** Samples short of round(target × samples): what the eligible trajectories or the cap could not give. */
  shortfall: number;
  /** Natural samples beyond round(target × samples): a target below what the data shows (nothing natural is dropped). */
  excess: number;
}

/** Its place in an output folder. */
export const MANIFEST_FILE = "manifest.json";

/** `manifest.json`: what was made, from what, and how to check it. See docs/output.md "Output". */
export interface Manifest extends ManifestHeader {
  format: typeof MANIFEST_FORMAT;
  version: typeof MANIFEST_VERSION;
  /** The task cut (`input.task_bytes`) the output was made with. */
  tasks: { count: number; plan_sha256: string };
  /** turn-stats policy: per domain and class, turns and kept turns, observation tokens before/after; the stats table files. */
  masking: {
    by_domain_class: Record<string, Record<string, ClassTotals>>;
    stats_files: OutputFile[];
  };
  /** records_in = samples_out + quarantined + filtered + dropped_by_mixture, always. */
  counts: Pick<
    TaskTotals,
    | "records_in"
    | "samples_out"
    | "documents"
    | "samples_untrained"
    | "quarantined"
    | "quarantined_by_stage"
    | "filtered"
    | "filtered_by_stage"
    | "dropped_by_mixture"
  >;
  tokens: TaskTotals["tokens"];
  domains: Record<string, DomainTotals>;
  /** Per split: records, tokens, loss tokens. */
  splits: Record<string, DomainTotals>;
  /**
   * Packing: rows, documents, efficiency; records split or truncated to fit, and split pieces left
   * out for training no token (`fit.untrained_pieces_dropped`, absent when none). Null when not packed.
   */
  packing: (PackingSummary & { fit: FitTotals }) | null;
  /** What normalization found and did: secrets redacted per type, volatile values, truncations… */
  normalize: TaskTotals["normalize"];
  shards: (Required<Omit<OutputFile, "split">> & Pick<OutputFile, "split">)[];
  /** The dataset card, `README.md` (Hugging Face YAML metadata + prose), written just before the manifest. */
  card?: { path: string; bytes: number; sha256: string };
  /**
   * `input.duplicate_ids: quarantine`: records quarantined as repeats of an id earlier in their
   * task, and ids that still occur in more than one task (kept in each; counted, not removed).
   */
  duplicate_ids?: { quarantined_within_tasks: number; repeated_across_tasks: number };
  /** filtered/ files (JSONL, one per task that filtered anything: read filters and curation); absent when none. */
  filtered_files?: { path: string; entries: number; bytes: number; sha256: string }[];
  /** Quarantine files (JSONL, one per task that quarantined anything). */
  quarantine: { path: string; entries: number; bytes: number; sha256: string }[];
  /** Corpus curation (dedup, decontaminate); absent when both are off. */
  curation?: CurationSummary;
  /** mask.corpus_novelty: observations counted job-wide, distinct ones, how many occur how often; absent when off. */
  novelty?: NoveltySummary;
  /** The config's record filters: records dropped in all and per filter (docs/filters-selection-scoring.md "Filters and selection"); absent without filters. */
  filters?: FiltersSummary;
  /** Selection (keep_fraction, max_per, caps): records decided over, kept, dropped per rule, the caps; absent when off. */
  selection?: SelectionSummary;
  /** Per scorer: its model and rubric, and its records, requests and tokens over all tasks (docs/filters-selection-scoring.md "Model-scored trajectories"); absent without scorers. */
  scoring?: ScoringSummary;
  /** The mixture: per source, its factor and its tokens before and after weighting (docs/mixtures.md "Mixtures"). */
  mixture?: MixtureSummary;
  /** With `controls.enabled`: the edge cases found and the instructions written (docs/controls.md "Controls"). */
  controls?: ControlsSummary;
  /** Per input format: the written records that name an outcome, agent, model, task or attempt (absent when none did). */
  provenance?: Record<string, ProvenanceTotals>;
  /** With `normalize.pii` on for some domain: the settings and the values replaced (docs/normalization.md "Personal data"). */
  pii?: PiiSummary;
}

/** The curation stage a filtered record was removed by. */
/**
 * `read`: the reader marked the record as not for training (a harness-only trial); `exact`, `near`,
 * `decontaminate`: curation; `filter`: a record filter of the config; `selection`: the corpus-wide
 * selection (max_per, caps, keep_fraction).
 */
export type FilterStage = "read" | "exact" | "near" | "decontaminate" | "filter" | "selection";

/** What curation did, in the manifest (docs/curation.md "Curation"). */
export interface CurationSummary {
  settings: {
    exact: boolean;
    near: boolean;
    ngram: number;
    bands: number;
    rows: number;
    /** Candidates are joined only when their signatures agree on this share (estimated Jaccard). */
    min_similarity: number;
    /** Jaccard similarity at which two trajectories become candidates with probability 1/2. */
    threshold: number;
    partitions: number;
    decontaminate: {
      ngram: number;
      min_overlap: number;
      min_turns: number;
      max_episode_frequency: number;
      action: "remove" | "mask";
      /** Benchmark files, relative to the config, with the episodes read from each. */
      benchmarks: { path: string; format: string; episodes: number }[];
    };
  };
  /** Records removed (in filtered/), per stage and per domain and stage. */
  filtered: number;
  by_stage: Partial<Record<FilterStage, number>>;
  by_domain: Record<string, Partial<Record<FilterStage, number>>>;
  /** decontaminate.action mask: records kept with some turns masked, and those turns. */
  masked: { records: number; turns: number };
  /** Duplicate clusters (exact and near joined): how many, the records in them, the largest, and size → clusters. */
  clusters: { count: number; records: number; largest: number; sizes: Record<string, number> };
  /** filtered/ files (JSONL, one per task that filtered anything). */
  files: { path: string; entries: number; bytes: number; sha256: string }[];
}

/** Written last, under a temporary name: a manifest's presence means the output is complete. */
export async function writeManifest(outputDir: string, manifest: Manifest): Promise<string> {
  const path = join(outputDir, MANIFEST_FILE);
  // Several ranks may finalize at once (they write the same bytes).
  await writeJsonFile(path, manifest, { indent: 2, concurrentWriters: true });
  return path;
}
