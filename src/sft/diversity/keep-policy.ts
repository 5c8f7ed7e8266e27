import { type CandidateOutcome, type Preference, rankCandidates, STRICT_ORDER, thinkChars } from "../select-candidate.ts";
import { type ClusterSummary, type TraceClusterSettings, TraceClusters, type TraceProbe } from "./trace-clusters.ts";

/**
 * Which passing candidate of a prompt becomes a kept trace, across prompts (`sft.prefer`,
 * `sft.equal_within`, `sft.diversity`, `sft.quota`). Prompts are offered in input order, one at a
 * time, so every decision depends only on the candidates and the prompts before it:
 *
 * 1. rank the passing candidates (`rankCandidates`: the strict order, equally good ones by the
 *    preference, e.g. the shortest thinking);
 * 2. keep the first whose thinking would not make a near-duplicate cluster larger than
 *    `max_per_cluster` (the ones passed over are `capped`; none left: the prompt is rejected);
 * 3. quotas: once a domain has `per_domain[domain]` kept traces (or the run `total`), its further
 *    prompts are set aside: not asked, not counted as prompts, counted here.
 */

export interface QuotaSettings {
  /** Kept traces wanted in all; 0: no target. */
  total: number;
  /** Kept traces wanted per domain; a domain not listed has no quota. */
  perDomain: Partial<Record<string, number>>;
}

export interface KeepPolicySettings {
  preference: Preference;
  diversity: TraceClusterSettings;
  quota: QuotaSettings;
}

export interface KeepDecision {
  /** The candidate to keep; undefined when none passed or every passing one's cluster is full. */
  kept?: CandidateOutcome;
  /** The passing candidates, best first (before diversity). */
  ranked: CandidateOutcome[];
  /** The strict order's first (judge, fidelity, earliest), to report what the preference changed. */
  strictFirst?: CandidateOutcome;
  /** Indexes of passing candidates not kept because their cluster was full (status `capped`). */
  capped: Set<number>;
  /** Per candidate index: a `diversity: …` line for its reasons. */
  notes: Map<number, string>;
  /** The kept candidate's probe, to keep its trace in the clusters on `record`. */
  probe?: TraceProbe;
}

export interface KeepPolicyReport {
  prefer: Preference["prefer"];
  /** What "equally good" allows: fidelity and judge-mean differences at most these. */
  equal_within: { fidelity: number; judge: number };
  /** Prompts whose kept candidate is the preference's pick where the strict order (judge, fidelity, earliest) picks another. */
  preference_changed: number;
  /** Thinking characters those picks saved against the strict order's (negative: they cost). */
  think_chars_saved: number;
  /** Candidates the `truncated` rule rejected (`finish_reason: "length"`). */
  truncated: number;
  diversity: {
    max_per_cluster: number;
    similarity: number;
    ngram: number;
    opening_words: number;
    /** Passing candidates passed over because keeping them would overfill their cluster. */
    capped_candidates: number;
    /** Prompts kept with a lower-ranked candidate because the first one's cluster was full. */
    switched: number;
    /** Prompts rejected because every passing candidate's cluster was full (counted in `counts.rejected`). */
    capped_prompts: number;
  } & ClusterSummary;
  quota: {
    total: number | null;
    per_domain: Record<string, number>;
    /** Kept traces per domain, as counted against the quotas. */
    kept_by_domain: Record<string, number>;
    /** Prompts set aside because their domain's quota (or the total) was reached: not asked (or, asked alongside the last ones, not used), not in `counts.prompts`. */
    over_quota: number;
    over_quota_by_domain: Record<string, number>;
  };
}

const sorted = (record: Record<string, number>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

export class KeepPolicy {
  readonly settings: KeepPolicySettings;
  private readonly clusters: TraceClusters;
  private readonly keptByDomain: Record<string, number> = {};
  private keptTotal = 0;
  private readonly overQuotaByDomain: Record<string, number> = {};
  private readonly tally = { preferenceChanged: 0, thinkCharsSaved: 0, truncated: 0, cappedCandidates: 0, switched: 0, cappedPrompts: 0 };

  constructor(settings: KeepPolicySettings) {
    this.settings = settings;
    this.clusters = new TraceClusters(settings.diversity);
  }

  /** Whether a prompt of `domain` is past the quotas: it is then set aside (`setAside`), not asked. */
  overQuota(domain: string): boolean {
    const { total, perDomain } = this.settings.quota;
    if (total > 0 && this.keptTotal >= total) return true;
    const quota = perDomain[domain];
    return quota !== undefined && (this.keptByDomain[domain] ?? 0) >= quota;
  }

  /**
   * Whether prompts waiting to be asked (`window`) are already as many as some quota still needs:
   * asking more before recording them could only pay for answers the quota will not use.
   */
  enoughToFill(window: readonly { domain: string }[]): boolean {
    const { total, perDomain } = this.settings.quota;
    if (total > 0 && this.keptTotal < total && window.length >= total - this.keptTotal) return true;
    const waiting = new Map<string, number>();
    for (const { domain } of window) waiting.set(domain, (waiting.get(domain) ?? 0) + 1);
    for (const [domain, count] of waiting) {
      const quota = perDomain[domain];
      const kept = this.keptByDomain[domain] ?? 0;
      if (quota !== undefined && kept < quota && count >= quota - kept) return true;
    }
    return false;
  }

  /** Counts a prompt set aside by the quotas. */
  setAside(domain: string): void {
    this.overQuotaByDomain[domain] = (this.overQuotaByDomain[domain] ?? 0) + 1;
  }

  /** Which candidate to keep for one prompt; changes nothing until `record`. */
  choose(outcomes: readonly CandidateOutcome[]): KeepDecision {
    const ranked = rankCandidates(outcomes, this.settings.preference);
    const strictFirst = rankCandidates(outcomes, STRICT_ORDER)[0];
    const capped = new Set<number>();
    const notes = new Map<number, string>();
    const { maxPerCluster, similarity } = this.settings.diversity;
    for (const outcome of ranked) {
      const probe = this.clusters.probe(outcome.think ?? "");
      const near = probe.near
        ? `near-duplicate of the trace kept for ${probe.near.id} (similarity ${probe.near.similarity.toFixed(2)} ≥ ${similarity})`
        : "";
      if (probe.full) {
        capped.add(outcome.index);
        notes.set(
          outcome.index,
          `diversity: ${near}; its cluster (first kept: ${this.clusters.firstOf(probe)}) would hold ${probe.size} > max_per_cluster ${maxPerCluster}`,
        );
        continue;
      }
      if (probe.roots.length > 0)
        notes.set(outcome.index, `diversity: ${near}; its cluster (first kept: ${this.clusters.firstOf(probe)}) now holds ${probe.size}`);
      return { kept: outcome, ranked, ...(strictFirst ? { strictFirst } : {}), capped, notes, probe };
    }
    return { ranked, ...(strictFirst ? { strictFirst } : {}), capped, notes };
  }

  /** Records a decision whose prompt was recorded with it: counts, and the kept trace joins its cluster and the quotas. */
  record(promptId: string, domain: string, outcomes: readonly CandidateOutcome[], decision: KeepDecision): void {
    this.tally.truncated += outcomes.filter((outcome) =>
      outcome.results.some((result) => result.rule === "truncated" && !result.passed),
    ).length;
    this.tally.cappedCandidates += decision.capped.size;
    const { kept, probe, ranked, strictFirst } = decision;
    if (!kept || !probe) {
      if (decision.capped.size > 0) this.tally.cappedPrompts += 1;
      return;
    }
    if (kept !== ranked[0]) this.tally.switched += 1;
    else if (strictFirst && kept !== strictFirst) {
      this.tally.preferenceChanged += 1;
      this.tally.thinkCharsSaved += thinkChars(strictFirst) - thinkChars(kept);
    }
    this.clusters.keep(probe, promptId);
    this.keptTotal += 1;
    this.keptByDomain[domain] = (this.keptByDomain[domain] ?? 0) + 1;
  }

  report(): KeepPolicyReport {
    const { preference, diversity, quota } = this.settings;
    const perDomain = Object.fromEntries(
      Object.entries(quota.perDomain).filter((entry): entry is [string, number] => entry[1] !== undefined),
    );
    return {
      prefer: preference.prefer,
      equal_within: { fidelity: preference.fidelityEpsilon, judge: preference.judgeEpsilon },
      preference_changed: this.tally.preferenceChanged,
      think_chars_saved: this.tally.thinkCharsSaved,
      truncated: this.tally.truncated,
      diversity: {
        max_per_cluster: diversity.maxPerCluster,
        similarity: diversity.similarity,
        ngram: diversity.ngram,
        opening_words: diversity.openingWords,
        capped_candidates: this.tally.cappedCandidates,
        switched: this.tally.switched,
        capped_prompts: this.tally.cappedPrompts,
        ...this.clusters.summary(),
      },
      quota: {
        total: quota.total > 0 ? quota.total : null,
        per_domain: sorted(perDomain),
        kept_by_domain: sorted(this.keptByDomain),
        over_quota: Object.values(this.overQuotaByDomain).reduce((sum, n) => sum + n, 0),
        over_quota_by_domain: sorted(this.overQuotaByDomain),
      },
    };
  }
}
