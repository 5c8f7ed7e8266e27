import { hasProvenance, type Provenance } from "../core/provenance.ts";
import type { Sample } from "../write/sample.ts";

export interface DomainTotals {
  /** Records written (a mixture's repeats not counted again; their tokens are). */
  samples: number;
  tokens: number;
  loss_tokens: number;
}

/** Turn-stats masking, per domain and class: turns and kept turns, observation tokens before/after. */
export interface ClassTotals {
  turns: number;
  kept: number;
  obs_tokens: number;
  kept_obs_tokens: number;
}

export interface FitTotals {
  split_records: number;
  split_pieces: number;
  truncated_records: number;
  truncated_tokens: number;
  /** Pieces of split records left out because they train no token (absent when none; src/pack/untrained-pieces.ts). */
  untrained_pieces_dropped?: number;
}

/**
 * One mixture source's records of one domain: before weighting (one copy of each record written or
 * not drawn) and after (every copy written).
 */
export interface SourceTotals {
  records: number;
  tokens: number;
  loss_tokens: number;
  /** Records with at least one copy written, documents written (copies and packing pieces), and their tokens. */
  records_out: number;
  documents_out: number;
  tokens_out: number;
  loss_tokens_out: number;
}

/** Controls (docs/controls.md "Controls"): edge cases found and instructions written. */
export interface ControlTotals {
  /** Trajectories with at least one edge case, and those whose system message states them. */
  labelled: number;
  instructed: number;
  /** Counterfactual samples written (normal turns told to behave normally). */
  counterfactual: number;
  /** Per domain and label: labels found (turns with the label). */
  labels: Record<string, Record<string, number>>;
  /**
   * With controls.synthesis (docs/controls.md "Mix control"): per domain, samples written (records and
   * their extra samples); per domain and kind, natural instructed samples stating it, trajectories a
   * verified synthesis of it existed for, and synthesized samples written.
   */
  synthesis_samples?: Record<string, number>;
  synthesis_natural?: Record<string, Record<string, number>>;
  synthesis_eligible?: Record<string, Record<string, number>>;
  synthesized?: Record<string, Record<string, number>>;
  /** Rejected synthesis attempts by reason. */
  synthesis_rejected?: Record<string, number>;
  /** With controls.synthesis.teacher: the teacher's part of `synthesized` (per domain and kind) and of `synthesis_rejected` (by reason). */
  synthesized_teacher?: Record<string, Record<string, number>>;
  synthesis_rejected_teacher?: Record<string, number>;
  /** With controls.rephrase: written instructions a teacher was asked to reword, those reworded, and the rest by reason. */
  rephrase_asked?: number;
  rephrased?: number;
  rephrase_rejected?: Record<string, number>;
}

/**
 * Outcome and provenance of the records written from one input format (docs/output.md "Shard schema"):
 * how many name each column, and the counts of each outcome, agent and model.
 */
export interface ProvenanceTotals {
  records: number;
  /** Records that name a task id, an attempt, an outcome, a reward. */
  with_task_id: number;
  with_attempt: number;
  with_outcome: number;
  with_reward: number;
  /** Sum of the rewards recorded (their mean is reward_sum / with_reward). */
  reward_sum: number;
  outcomes: Record<string, number>;
  failure_modes: Record<string, number>;
  agents: Record<string, number>;
  models: Record<string, number>;
}

/** Distinct agents, models or failure modes listed per format; the rest are counted under OTHER. */
export const MAX_PROVENANCE_KEYS = 64;
export const OTHER_KEY = "(other)";

/** Everything a task counts; summed over tasks into the manifest. Plain JSON (checkpoints hold it). */
export interface TaskTotals {
  records_in: number;
  /** Records written (each as one or, split by packing, several documents). */
  samples_out: number;
  /** Documents written: one per sample, or one per piece when packing split a record. */
  documents: number;
  /** Records written that train no token (every loss_mask 0), each as one document; absent when none. */
  samples_untrained?: number;
  quarantined: number;
  quarantined_by_stage: Record<string, number>;
  /** Records removed by curation (dedup, decontaminate), written to filtered/; per stage and per domain and stage. */
  filtered: number;
  filtered_by_stage: Record<string, number>;
  filtered_by_domain: Record<string, Record<string, number>>;
  /** Records the mixture drew no copy of (a factor below 1); counted per source in `sources`. */
  dropped_by_mixture: number;
  /** Per mixture source, per domain: tokens before and after weighting. */
  sources: Record<string, Record<string, SourceTotals>>;
  /** decontaminate.action mask: records written with some turns masked, and those turns. */
  masked_records: number;
  masked_turns: number;
  tokens: { total: number; loss: number };
  domains: Record<string, DomainTotals>;
  /** Per split (train / validation): records, tokens, loss tokens. */
  splits: Record<string, DomainTotals>;
  /** Packing's fitting of long records: records split and their pieces, records truncated and tokens cut. */
  fit: FitTotals;
  masking: Record<string, Record<string, ClassTotals>>;
  /** What normalization found and did: secrets redacted per type, volatile values, truncations… */
  normalize: Record<string, number>;
  /** With `controls.enabled` (absent otherwise, and in totals written before controls). */
  controls?: ControlTotals;
  /** Per input format, the records written that name an outcome or provenance (absent when none did). */
  provenance?: Record<string, ProvenanceTotals>;
}

export function emptyTotals(): TaskTotals {
  return {
    records_in: 0,
    samples_out: 0,
    documents: 0,
    quarantined: 0,
    quarantined_by_stage: {},
    filtered: 0,
    filtered_by_stage: {},
    filtered_by_domain: {},
    dropped_by_mixture: 0,
    sources: {},
    masked_records: 0,
    masked_turns: 0,
    tokens: { total: 0, loss: 0 },
    domains: {},
    splits: {},
    fit: { split_records: 0, split_pieces: 0, truncated_records: 0, truncated_tokens: 0 },
    masking: {},
    normalize: {},
  };
}

/** The record's entry under `key`, made on first use. */
export function entry<T>(record: Record<string, T>, key: string, make: () => T): T {
  const existing = record[key];
  if (existing !== undefined) return existing;
  const made = make();
  record[key] = made;
  return made;
}

export const zeroDomain = (): DomainTotals => ({ samples: 0, tokens: 0, loss_tokens: 0 });

/** Adds a sample's tokens and loss tokens (not the sample itself: a record may be several). */
export function addTokens(into: DomainTotals, sample: Sample): void {
  into.tokens += sample.inputIds.length;
  into.loss_tokens += sample.numLossTokens;
}
const zeroClass = (): ClassTotals => ({ turns: 0, kept: 0, obs_tokens: 0, kept_obs_tokens: 0 });

const zeroSource = (): SourceTotals => ({
  records: 0,
  tokens: 0,
  loss_tokens: 0,
  records_out: 0,
  documents_out: 0,
  tokens_out: 0,
  loss_tokens_out: 0,
});

/** The totals of mixture source `source` for `domain`, created empty on first use. */
function sourceTotals(totals: TaskTotals, source: string, domain: string): SourceTotals {
  return entry(
    entry(totals.sources, source, () => ({})),
    domain,
    zeroSource,
  );
}

/** Counts one processed record of mixture source `source` (its documents) and the `copies` of it written. */
export function countSource(totals: TaskTotals, source: string, documents: readonly Sample[], copies: number): void {
  const first = documents[0];
  if (!first) return;
  const into = sourceTotals(totals, source, first.domain);
  let tokens = 0;
  let loss = 0;
  for (const sample of documents) {
    tokens += sample.inputIds.length;
    loss += sample.numLossTokens;
  }
  into.records += 1;
  into.tokens += tokens;
  into.loss_tokens += loss;
  if (copies > 0) into.records_out += 1;
  into.documents_out += copies * documents.length;
  into.tokens_out += copies * tokens;
  into.loss_tokens_out += copies * loss;
}

/**
 * Counts one copy of a record written as `documents` (one sample, or the pieces packing cut it
 * into) in `split`: the record itself with copy 0, a mixture's repeat of it after. Masking
 * decisions and fitting are the record's, counted with copy 0 (its first document carries them).
 */
export function countSample(totals: TaskTotals, documents: readonly Sample[], split: string, copy = 0): void {
  const first = documents[0];
  if (!first) return;
  totals.documents += documents.length;
  const domain = entry(totals.domains, first.domain, zeroDomain);
  const splitTotals = entry(totals.splits, split, zeroDomain);
  // Records are counted once; their tokens with every copy written.
  if (copy === 0) {
    totals.samples_out += 1;
    domain.samples += 1;
    splitTotals.samples += 1;
  }
  let truncated = 0;
  for (const sample of documents) {
    totals.tokens.total += sample.inputIds.length;
    totals.tokens.loss += sample.numLossTokens;
    addTokens(domain, sample);
    addTokens(splitTotals, sample);
    truncated += sample.truncatedTokens ?? 0;
  }
  if (copy > 0) return;
  // Counted only when there are some, so outputs without any keep their bytes.
  if (documents.every((sample) => sample.numLossTokens === 0)) totals.samples_untrained = (totals.samples_untrained ?? 0) + 1;
  const dropped = first.untrainedPiecesDropped ?? 0;
  if (dropped > 0) totals.fit.untrained_pieces_dropped = (totals.fit.untrained_pieces_dropped ?? 0) + dropped;
  // A record cut into pieces is split even when all but one were left out for training nothing.
  if (documents.length + dropped > 1) {
    totals.fit.split_records += 1;
    totals.fit.split_pieces += documents.length;
  }
  if (truncated > 0) {
    totals.fit.truncated_records += 1;
    totals.fit.truncated_tokens += truncated;
  }
  countDecisions(totals, first);
}

function countDecisions(totals: TaskTotals, sample: Sample): void {
  for (const decision of sample.decisions ?? []) {
    const byClass = entry(
      entry(totals.masking, sample.domain, () => ({})),
      decision.turnClass,
      zeroClass,
    );
    byClass.turns += 1;
    byClass.obs_tokens += decision.stats.obsTokens;
    if (decision.kept) {
      byClass.kept += 1;
      byClass.kept_obs_tokens += decision.stats.obsTokens;
    }
  }
}

const zeroProvenance = (): ProvenanceTotals => ({
  records: 0,
  with_task_id: 0,
  with_attempt: 0,
  with_outcome: 0,
  with_reward: 0,
  reward_sum: 0,
  outcomes: {},
  failure_modes: {},
  agents: {},
  models: {},
});

/** Adds `count` under `key`, or under OTHER_KEY once MAX_PROVENANCE_KEYS distinct keys are listed. */
function addCapped(into: Record<string, number>, key: string, count: number): void {
  const listed = into[key] !== undefined || Object.keys(into).length < MAX_PROVENANCE_KEYS - 1 || key === OTHER_KEY;
  const at = listed ? key : OTHER_KEY;
  into[at] = (into[at] ?? 0) + count;
}

/** Counts one written record of input format `format` by what its provenance names (nothing when it names nothing). */
export function countProvenance(totals: TaskTotals, format: string, provenance: Provenance | undefined): void {
  if (!provenance || !hasProvenance(provenance)) return;
  totals.provenance ??= {};
  const into = entry(totals.provenance, format, zeroProvenance);
  into.records += 1;
  if (provenance.task_id !== null) into.with_task_id += 1;
  if (provenance.attempt !== null) into.with_attempt += 1;
  if (provenance.outcome !== null) {
    into.with_outcome += 1;
    addCapped(into.outcomes, provenance.outcome, 1);
  }
  if (provenance.reward !== null) {
    into.with_reward += 1;
    into.reward_sum += provenance.reward;
  }
  if (provenance.failure_mode !== null) addCapped(into.failure_modes, provenance.failure_mode, 1);
  if (provenance.agent !== null) addCapped(into.agents, provenance.agent, 1);
  if (provenance.model !== null) addCapped(into.models, provenance.model, 1);
}

function mergeProvenance(into: TaskTotals, from: Record<string, ProvenanceTotals>): void {
  into.provenance ??= {};
  for (const [format, counts] of Object.entries(from)) {
    const target = entry(into.provenance, format, zeroProvenance);
    target.records += counts.records;
    target.with_task_id += counts.with_task_id;
    target.with_attempt += counts.with_attempt;
    target.with_outcome += counts.with_outcome;
    target.with_reward += counts.with_reward;
    target.reward_sum += counts.reward_sum;
    for (const key of ["outcomes", "failure_modes", "agents", "models"] as const)
      for (const [name, count] of Object.entries(counts[key])) addCapped(target[key], name, count);
  }
}

const zeroControls = (): ControlTotals => ({ labelled: 0, instructed: 0, counterfactual: 0, labels: {} });

/** Counts a written record's controls (a mixture's repeats not again). */
export function countControls(
  totals: TaskTotals,
  domain: string,
  controls: {
    kind: string;
    labels: readonly { label: string }[];
    synthesis?: { domain: string; eligible: readonly string[]; rejected: readonly string[]; teacherRejected?: readonly string[] };
    rephrase?: { rephrased: boolean; reason?: string };
  },
): void {
  totals.controls ??= zeroControls();
  const into = totals.controls;
  countRephrase(totals, controls);
  const synthesis = controls.synthesis;
  if (synthesis) {
    // The record is a sample of its domain; an instructed one states each kind it is labelled with.
    into.synthesis_samples ??= {};
    into.synthesis_samples[domain] = (into.synthesis_samples[domain] ?? 0) + 1;
    into.synthesis_natural ??= {};
    const natural = entry(into.synthesis_natural, domain, (): Record<string, number> => ({}));
    if (controls.kind === "instructed")
      for (const kind of new Set(controls.labels.map((l) => l.label))) natural[kind] = (natural[kind] ?? 0) + 1;
    into.synthesis_eligible ??= {};
    const eligible = entry(into.synthesis_eligible, domain, (): Record<string, number> => ({}));
    for (const kind of synthesis.eligible) eligible[kind] = (eligible[kind] ?? 0) + 1;
    into.synthesized ??= {};
    into.synthesis_rejected ??= {};
    for (const reason of synthesis.rejected) into.synthesis_rejected[reason] = (into.synthesis_rejected[reason] ?? 0) + 1;
    if (synthesis.teacherRejected) {
      into.synthesized_teacher ??= {};
      into.synthesis_rejected_teacher ??= {};
      const rejected = into.synthesis_rejected_teacher;
      for (const reason of synthesis.teacherRejected) rejected[reason] = (rejected[reason] ?? 0) + 1;
    }
  }
  if (controls.kind === "counterfactual") {
    into.counterfactual += 1;
    return;
  }
  if (controls.labels.length > 0) into.labelled += 1;
  if (controls.kind === "instructed") into.instructed += 1;
  if (controls.labels.length === 0) return;
  const byLabel = entry(into.labels, domain, (): Record<string, number> => ({}));
  for (const { label } of controls.labels) byLabel[label] = (byLabel[label] ?? 0) + 1;
}

/**
 * Counts the extra sample a record gives (written with its first copy) by its own kind: a
 * counterfactual (`#normal`), or a synthesized sample counted per domain and the kind it shows.
 */
export function countExtraSample(
  totals: TaskTotals,
  domain: string,
  controls: { kind: string; synthesizedKind?: string; synthesizedSource?: string } | undefined,
): void {
  totals.controls ??= zeroControls();
  const into = totals.controls;
  if (into.synthesis_samples) into.synthesis_samples[domain] = (into.synthesis_samples[domain] ?? 0) + 1;
  if (controls?.kind === "synthesized" && controls.synthesizedKind !== undefined) {
    into.synthesized ??= {};
    const made = entry(into.synthesized, domain, (): Record<string, number> => ({}));
    made[controls.synthesizedKind] = (made[controls.synthesizedKind] ?? 0) + 1;
    if (controls.synthesizedSource === "teacher") {
      into.synthesized_teacher ??= {};
      const byTeacher = entry(into.synthesized_teacher, domain, (): Record<string, number> => ({}));
      byTeacher[controls.synthesizedKind] = (byTeacher[controls.synthesizedKind] ?? 0) + 1;
    }
    return;
  }
  into.counterfactual += 1;
}

/** Counts a written sample's teacher rewording (controls.rephrase), when one was asked for. */
export function countRephrase(totals: TaskTotals, controls: { rephrase?: { rephrased: boolean; reason?: string } } | undefined): void {
  const rephrase = controls?.rephrase;
  if (!rephrase) return;
  totals.controls ??= zeroControls();
  const into = totals.controls;
  into.rephrase_asked = (into.rephrase_asked ?? 0) + 1;
  into.rephrased = (into.rephrased ?? 0) + (rephrase.rephrased ? 1 : 0);
  into.rephrase_rejected ??= {};
  if (!rephrase.rephrased) {
    const reason = rephrase.reason ?? "unfaithful";
    into.rephrase_rejected[reason] = (into.rephrase_rejected[reason] ?? 0) + 1;
  }
}

/** Documents a record adds beyond its copies (a counterfactual): output of its mixture source. */
export function countExtraDocuments(totals: TaskTotals, source: string, documents: readonly Sample[]): void {
  const first = documents[0];
  if (!first) return;
  const into = sourceTotals(totals, source, first.domain);
  into.documents_out += documents.length;
  for (const sample of documents) {
    into.tokens_out += sample.inputIds.length;
    into.loss_tokens_out += sample.numLossTokens;
  }
}

export function countQuarantine(totals: TaskTotals, stage: string): void {
  totals.quarantined += 1;
  totals.quarantined_by_stage[stage] = (totals.quarantined_by_stage[stage] ?? 0) + 1;
}

/** Counts one record removed by curation (written to filtered/). */
export function countFiltered(totals: TaskTotals, stage: string, domain: string): void {
  totals.filtered += 1;
  totals.filtered_by_stage[stage] = (totals.filtered_by_stage[stage] ?? 0) + 1;
  const byDomain = entry(totals.filtered_by_domain, domain, (): Record<string, number> => ({}));
  byDomain[stage] = (byDomain[stage] ?? 0) + 1;
}

function addNumbers(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
}

/** Adds `from`'s numbers into `into`; a key only `from` has (an optional counter) starts at 0. */
function addFields<T extends { [K in keyof T]: number | undefined }>(into: T, from: T): void {
  for (const key of Object.keys(from) as (keyof T)[]) into[key] = ((into[key] ?? 0) + (from[key] ?? 0)) as T[keyof T];
}

/** Adds `from` into `into`. */
export function mergeTotals(into: TaskTotals, from: TaskTotals): void {
  into.records_in += from.records_in;
  into.samples_out += from.samples_out;
  into.documents += from.documents;
  if (from.samples_untrained) into.samples_untrained = (into.samples_untrained ?? 0) + from.samples_untrained;
  into.quarantined += from.quarantined;
  addNumbers(into.quarantined_by_stage, from.quarantined_by_stage);
  // Totals written before curation existed have none of these.
  into.filtered += from.filtered ?? 0;
  addNumbers(into.filtered_by_stage, from.filtered_by_stage ?? {});
  for (const [domain, stages] of Object.entries(from.filtered_by_domain ?? {}))
    addNumbers(
      entry(into.filtered_by_domain, domain, (): Record<string, number> => ({})),
      stages,
    );
  into.dropped_by_mixture += from.dropped_by_mixture ?? 0;
  for (const [source, domains] of Object.entries(from.sources ?? {})) {
    const intoSource = entry(into.sources, source, () => ({}));
    for (const [domain, counts] of Object.entries(domains)) addFields(entry(intoSource, domain, zeroSource), counts);
  }
  into.masked_records += from.masked_records ?? 0;
  into.masked_turns += from.masked_turns ?? 0;
  into.tokens.total += from.tokens.total;
  into.tokens.loss += from.tokens.loss;
  for (const [domain, totals] of Object.entries(from.domains)) addFields(entry(into.domains, domain, zeroDomain), totals);
  for (const [split, totals] of Object.entries(from.splits)) addFields(entry(into.splits, split, zeroDomain), totals);
  addFields(into.fit, from.fit);
  for (const [domain, classes] of Object.entries(from.masking)) {
    const intoClasses = entry(into.masking, domain, () => ({}));
    for (const [name, totals] of Object.entries(classes)) addFields(entry(intoClasses, name, zeroClass), totals);
  }
  addNumbers(into.normalize, from.normalize);
  if (from.provenance) mergeProvenance(into, from.provenance);
  if (from.controls) {
    into.controls ??= zeroControls();
    const controls = into.controls;
    controls.labelled += from.controls.labelled;
    controls.instructed += from.controls.instructed;
    controls.counterfactual += from.controls.counterfactual;
    for (const [domain, labels] of Object.entries(from.controls.labels))
      addNumbers(
        entry(controls.labels, domain, (): Record<string, number> => ({})),
        labels,
      );
    for (const key of ["synthesis_natural", "synthesis_eligible", "synthesized", "synthesized_teacher"] as const) {
      const counted = from.controls[key];
      if (counted === undefined) continue;
      controls[key] ??= {};
      const byDomain = controls[key];
      for (const [domain, kinds] of Object.entries(counted))
        addNumbers(
          entry(byDomain, domain, (): Record<string, number> => ({})),
          kinds,
        );
    }
    if (from.controls.rephrase_asked !== undefined) {
      controls.rephrase_asked = (controls.rephrase_asked ?? 0) + from.controls.rephrase_asked;
      controls.rephrased = (controls.rephrased ?? 0) + (from.controls.rephrased ?? 0);
      controls.rephrase_rejected ??= {};
      addNumbers(controls.rephrase_rejected, from.controls.rephrase_rejected ?? {});
    }
    if (from.controls.synthesis_samples) {
      controls.synthesis_samples ??= {};
      addNumbers(controls.synthesis_samples, from.controls.synthesis_samples);
    }
    if (from.controls.synthesis_rejected) {
      controls.synthesis_rejected ??= {};
      addNumbers(controls.synthesis_rejected, from.controls.synthesis_rejected);
    }
    if (from.controls.synthesis_rejected_teacher) {
      controls.synthesis_rejected_teacher ??= {};
      addNumbers(controls.synthesis_rejected_teacher, from.controls.synthesis_rejected_teacher);
    }
  }
}

/** The same object with every record's keys sorted, so the manifest never depends on arrival order. */
export function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, sortedKeys(v)]),
  ) as T;
}
