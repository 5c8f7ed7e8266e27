/**
 * How many trajectories to synthesize with each edge case (docs/controls.md "Mix control"): pure
 * arithmetic over the counting stage's counts, no records. Per domain, the share of kind K is
 *
 *   (natural samples whose instruction states K + samples synthesized with K) / samples written
 *
 * where the samples written are the domain's records (once, a mixture's repeats not again), their
 * counterfactual samples and the synthesized samples. The synthesized count is in the denominator
 * too, so the quota is the fixed point of x_K = round(t_K · D) − n_K with D = base + Σ x_K, found by
 * iterating from x = 0 (each step can only raise D, and D is bounded, so it stops). What the
 * eligible trajectories, or `max_synthesized_ratio`, cannot give is the shortfall.
 *
 * Each trajectory gives at most one synthesized sample, and one may be eligible for several kinds:
 * the quotas are met by a maximum flow from kinds to eligibility patterns (the set of kinds a
 * trajectory is eligible for), so one kind taking a trajectory never starves another that had no
 * other way. Then each pattern's takes are split across tasks in proportion to the task's
 * trajectories of that pattern (largest remainder), and within a task the trajectories with the
 * lowest sha256(seed, id) are taken: thresholds a records unit compares a trajectory's hash with,
 * so no per-trajectory decision is stored.
 */
import { CONTROL_LABELS, type ControlLabelName } from "../control-label.ts";

/** What the counting stage found in one domain (one task's, or every task's summed). */
export interface DomainCensus {
  /** Samples the domain writes without syntheses: its records written and their counterfactual samples. */
  samples: number;
  /** Per kind: natural samples whose instruction states it. */
  natural: Record<string, number>;
  /** Per eligibility pattern (`kind+kind`, CONTROL_LABELS order): trajectories a verified synthesis of each of its kinds exists for. */
  patterns: Record<string, number>;
}

/** The plan for one kind in one domain. */
export interface KindQuota {
  target: number;
  natural: number;
  /** Trajectories a verified synthesis of the kind exists for (some may be taken by another kind). */
  eligible: number;
  /** Synthesized samples the target needs, and those the plan makes. */
  wanted: number;
  quota: number;
}

export interface DomainQuota {
  /** Samples the domain writes with the planned syntheses. */
  samples: number;
  kinds: Record<string, KindQuota>;
  /** Per pattern, per kind: trajectories of that pattern synthesized with the kind. */
  take: Record<string, Record<string, number>>;
}

export const patternKinds = (pattern: string): ControlLabelName[] => (pattern === "" ? [] : (pattern.split("+") as ControlLabelName[]));

/** The quota of every targeted kind in one domain (targets: kind → share, in CONTROL_LABELS order). */
export function allocateDomain(census: DomainCensus, targets: readonly [ControlLabelName, number][], maxRatio: number | null): DomainQuota {
  const patterns = Object.keys(census.patterns).sort();
  const kinds = targets.map(([kind]) => kind);
  let synthesized = 0;
  let take: number[][] = [];
  let wanted: number[] = [];
  let made: number[] = [];
  // Raising x raises D and so each kind's need; bounded by the eligible trajectories, so it ends.
  for (let step = 0; step < 10_000; step++) {
    const samples = census.samples + synthesized;
    wanted = targets.map(([kind, share]) => Math.max(0, Math.round(share * samples) - (census.natural[kind] ?? 0)));
    const limits = wanted.map((want, k) =>
      maxRatio === null ? want : Math.min(want, Math.floor(maxRatio * (census.natural[kinds[k] as string] ?? 0))),
    );
    ({ take, made } = maxFlow(
      kinds,
      limits,
      patterns.map((p) => [new Set(patternKinds(p)), census.patterns[p] ?? 0]),
    ));
    const total = made.reduce((a, b) => a + b, 0);
    if (total === synthesized) break;
    synthesized = total;
  }
  const quota: DomainQuota = { samples: census.samples + synthesized, kinds: {}, take: {} };
  targets.forEach(([kind, target], k) => {
    const eligible = patterns.filter((p) => patternKinds(p).includes(kind)).reduce((sum, p) => sum + (census.patterns[p] ?? 0), 0);
    quota.kinds[kind] = {
      target,
      natural: census.natural[kind] ?? 0,
      eligible,
      wanted: wanted[k] ?? 0,
      quota: made[k] ?? 0,
    };
  });
  patterns.forEach((pattern, p) => {
    const row: Record<string, number> = {};
    kinds.forEach((kind, k) => {
      const n = take[k]?.[p] ?? 0;
      if (n > 0) row[kind] = n;
    });
    if (Object.keys(row).length > 0) quota.take[pattern] = row;
  });
  return quota;
}

/**
 * Maximum flow, source → kind (its limit) → pattern (if the kind is in it) → sink (its count), by
 * shortest augmenting paths in a fixed node order: deterministic, and exact on these few nodes.
 */
function maxFlow(
  kinds: readonly ControlLabelName[],
  limits: readonly number[],
  patterns: readonly [Set<ControlLabelName>, number][],
): { take: number[][]; made: number[] } {
  const k = kinds.length;
  const n = 2 + k + patterns.length;
  const source = 0;
  const sink = n - 1;
  const capacity = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const row = (i: number) => capacity[i] as number[];
  kinds.forEach((kind, i) => {
    row(source)[1 + i] = limits[i] ?? 0;
    patterns.forEach(([set], p) => {
      if (set.has(kind)) row(1 + i)[1 + k + p] = Number.POSITIVE_INFINITY;
    });
  });
  patterns.forEach(([, count], p) => {
    row(1 + k + p)[sink] = count;
  });
  const flow = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const f = (i: number) => flow[i] as number[];
  for (;;) {
    const parent = new Array<number>(n).fill(-1);
    parent[source] = source;
    const queue = [source];
    while (queue.length > 0 && (parent[sink] as number) < 0) {
      const u = queue.shift() as number;
      for (let v = 0; v < n; v++)
        if ((parent[v] as number) < 0 && (row(u)[v] as number) - (f(u)[v] as number) > 0) {
          parent[v] = u;
          queue.push(v);
        }
    }
    if ((parent[sink] as number) < 0) break;
    let push = Number.POSITIVE_INFINITY;
    for (let v = sink; v !== source; v = parent[v] as number) {
      const u = parent[v] as number;
      push = Math.min(push, (row(u)[v] as number) - (f(u)[v] as number));
    }
    for (let v = sink; v !== source; v = parent[v] as number) {
      const u = parent[v] as number;
      f(u)[v] = (f(u)[v] as number) + push;
      f(v)[u] = (f(v)[u] as number) - push;
    }
  }
  const take = kinds.map((_, i) => patterns.map((_, p) => Math.max(0, f(1 + i)[1 + k + p] as number)));
  return { take, made: take.map((r) => r.reduce((a, b) => a + b, 0)) };
}

/** n split over weights in proportion, by largest remainder (ties to the lower index); each part at most its weight when n ≤ Σ weights. */
export function splitByLargestRemainder(n: number, weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  if (n === 0 || total === 0) return weights.map(() => 0);
  const parts = weights.map((w) => Math.floor((n * w) / total));
  const order = weights
    .map((w, i) => ({ i, rest: (n * w) % total }))
    .filter(({ i }) => (parts[i] as number) < (weights[i] as number))
    .sort((a, b) => b.rest - a.rest || a.i - b.i);
  let left = n - parts.reduce((a, b) => a + b, 0);
  for (const { i } of order) {
    if (left <= 0) break;
    parts[i] = (parts[i] as number) + 1;
    left -= 1;
  }
  return parts;
}

/** Per pattern, the kinds a task's trajectories of it are synthesized with: [kind, how many] in CONTROL_LABELS order. */
export type TaskTakes = Record<string, [ControlLabelName, number][]>;

/**
 * A domain's takes split across tasks: for each pattern, its trajectories taken per task in
 * proportion to the task's trajectories of that pattern, then each kind's share of them in
 * proportion to what is left in each task. Row and column sums are exact.
 */
export function splitAcrossTasks(take: DomainQuota["take"], taskPatterns: readonly Record<string, number>[]): TaskTakes[] {
  const out: TaskTakes[] = taskPatterns.map(() => ({}));
  for (const [pattern, byKind] of Object.entries(take)) {
    const counts = taskPatterns.map((patterns) => patterns[pattern] ?? 0);
    const kinds = CONTROL_LABELS.filter((kind) => (byKind[kind] ?? 0) > 0);
    const total = kinds.reduce((sum, kind) => sum + (byKind[kind] ?? 0), 0);
    const left = splitByLargestRemainder(total, counts);
    for (const kind of kinds) {
      const parts = splitByLargestRemainder(byKind[kind] ?? 0, left);
      parts.forEach((part, t) => {
        if (part === 0) return;
        left[t] = (left[t] as number) - part;
        const takes = out[t] as TaskTakes;
        takes[pattern] ??= [];
        takes[pattern].push([kind, part]);
      });
    }
  }
  return out;
}

/** Per pattern, [kind, largest hash taken for it] in order: a trajectory goes to the first kind whose bound its hash does not exceed. */
export type PatternBounds = Record<string, [ControlLabelName, number][]>;

/** A task's bounds from its takes and its trajectories' sorted hashes per pattern. */
export function boundsOf(takes: TaskTakes, orders: Record<string, readonly number[]>): PatternBounds {
  const bounds: PatternBounds = {};
  for (const [pattern, kinds] of Object.entries(takes)) {
    const sorted = orders[pattern] ?? [];
    let end = 0;
    bounds[pattern] = kinds.map(([kind, count]) => {
      end += count;
      const bound = sorted[end - 1];
      if (bound === undefined) throw new Error(`synthesis plan: ${count} of pattern ${pattern} asked of a task that has ${sorted.length}`);
      return [kind, bound];
    });
  }
  return bounds;
}

/** The kind a trajectory of this pattern and hash is synthesized with, if any. */
export function kindFor(bounds: PatternBounds | undefined, pattern: string, order: number): ControlLabelName | undefined {
  for (const [kind, bound] of bounds?.[pattern] ?? []) if (order <= bound) return kind;
  return undefined;
}
