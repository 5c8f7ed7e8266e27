import { hashWords } from "../../curate/canonical-text.ts";
import { candidateProbability, MinHasher } from "../../curate/minhash.ts";

/**
 * Near-duplicate thinking traces among the kept ones, clustered as they are kept and capped per
 * cluster (`sft.diversity`). A trace's words (lower-cased letter/digit runs, as curation hashes
 * them; only the first `openingWords` with that set, to catch traces that open with the same
 * template) are shingled into word n-grams and MinHashed (src/curate/minhash.ts); LSH bands find
 * the kept traces it may resemble, and the signatures' agreement (the estimated Jaccard
 * similarity of the shingle sets) decides: at least `similarity` makes them near-duplicates.
 * A cluster is the near-duplicate relation's connected component over kept traces (single
 * link). A trace that would make a cluster larger than `maxPerCluster` is not kept. A band
 * bucket lists at most a few traces per cluster (so a template shared by thousands of traces
 * costs a few comparisons, not thousands): a trace is compared with those, which may miss a
 * cluster it resembles only through a member not listed; it then starts a cluster of its own.
 *
 * Deterministic: the same traces offered in the same order give the same clusters and decisions
 * (integer hashing, no randomness beyond the seed, ties broken by the order traces were kept).
 */

export interface TraceClusterSettings {
  /** Most kept traces per cluster; 0: no cap (clusters are still counted). */
  maxPerCluster: number;
  /** Estimated Jaccard similarity (0-1] of the shingle sets at which two traces are near-duplicates. */
  similarity: number;
  /** Words per shingle. */
  ngram: number;
  /** Compare only each trace's first this many words; 0: the whole trace. */
  openingWords: number;
  seed: number;
}

/** Min-hashes per signature: the estimate's standard error is at most 1/(2·√128) ≈ 0.044. */
const HASHES = 128;
/** Kept traces of one cluster a band bucket lists: enough to find the cluster, bounded however large it grows. */
const PER_CLUSTER_IN_BUCKET = 4;

/**
 * Bands × rows for `HASHES` min-hashes: the most rows (fewest chance pairs to compare) that still
 * give a pair at exactly `similarity` a 99% chance of sharing a band.
 */
export function bandsFor(similarity: number): { bands: number; rows: number } {
  let best = { bands: HASHES, rows: 1 };
  for (let rows = 2; rows <= HASHES; rows++) {
    const bands = Math.floor(HASHES / rows);
    if (candidateProbability(similarity, bands, rows) >= 0.99) best = { bands, rows };
  }
  return best;
}

/** What offering one trace found: the clusters it would join and whether that breaks the cap. */
export interface TraceProbe {
  readonly signature: Uint32Array | undefined;
  readonly keys: BigUint64Array | undefined;
  /** Roots (first kept member) of the clusters it is a near-duplicate of a member of, ascending. */
  readonly roots: number[];
  /** The first kept trace found to be a near-duplicate (the id it was kept under), with the estimate. */
  readonly near?: { id: string; similarity: number };
  /** Size of the cluster it would make: itself and every cluster in `roots`. */
  readonly size: number;
  /** Keeping it would make a cluster larger than `maxPerCluster`. */
  readonly full: boolean;
}

export interface ClusterSummary {
  /** Kept traces offered and kept. */
  traces: number;
  /** Clusters of two or more kept traces. */
  clusters: number;
  /** Kept traces in those clusters. */
  clustered: number;
  /** Kept traces in the largest cluster (1 when no two are alike, 0 with none kept). */
  largest: number;
  /** The largest clusters (up to 5): size and the id of the first trace kept in it. */
  top: { size: number; first: string }[];
}

export class TraceClusters {
  readonly settings: TraceClusterSettings;
  private readonly hasher: MinHasher;
  private readonly ids: string[] = [];
  private readonly signatures: (Uint32Array | undefined)[] = [];
  private readonly parent: number[] = [];
  /** Per root: the cluster's size. */
  private readonly sizes = new Map<number, number>();
  /** Per band: band key → kept traces (at most `PER_CLUSTER_IN_BUCKET` per cluster). */
  private readonly buckets: Map<bigint, number[]>[];

  constructor(settings: TraceClusterSettings) {
    if (!(settings.similarity > 0 && settings.similarity <= 1))
      throw new Error(`diversity: similarity must be in (0, 1], got ${settings.similarity}`);
    if (!(Number.isInteger(settings.maxPerCluster) && settings.maxPerCluster >= 0))
      throw new Error(`diversity: max_per_cluster must be an integer >= 0, got ${settings.maxPerCluster}`);
    this.settings = settings;
    const { bands, rows } = bandsFor(settings.similarity);
    this.hasher = new MinHasher({ ngram: settings.ngram, bands, rows, seed: settings.seed });
    this.buckets = Array.from({ length: bands }, () => new Map());
  }

  /** The words compared for a trace. */
  words(think: string): string[] {
    const words = hashWords(think);
    return this.settings.openingWords > 0 ? words.slice(0, this.settings.openingWords) : words;
  }

  private find(i: number): number {
    let root = i;
    while (this.parent[root] !== root) root = this.parent[root] as number;
    while (i !== root) {
      const next = this.parent[i] as number;
      this.parent[i] = root;
      i = next;
    }
    return root;
  }

  /** Fraction of min-hashes two signatures share: the estimated Jaccard similarity. */
  private static agreement(a: Uint32Array, b: Uint32Array): number {
    let same = 0;
    for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
    return same / a.length;
  }

  /** Which kept traces `think` is a near-duplicate of; changes nothing. */
  probe(think: string): TraceProbe {
    const signature = this.hasher.signature(this.words(think));
    if (signature === undefined) return { signature, keys: undefined, roots: [], size: 1, full: false };
    const keys = this.hasher.keysOf(signature);
    const roots = new Set<number>();
    const seen = new Set<number>();
    let near: TraceProbe["near"];
    for (let band = 0; band < keys.length; band++) {
      for (const other of this.buckets[band]?.get(keys[band] as bigint) ?? []) {
        if (seen.has(other)) continue;
        seen.add(other);
        const root = this.find(other);
        if (roots.has(root)) continue;
        const similarity = TraceClusters.agreement(signature, this.signatures[other] as Uint32Array);
        if (similarity < this.settings.similarity) continue;
        roots.add(root);
        near ??= { id: this.ids[other] as string, similarity };
      }
    }
    const sorted = [...roots].sort((a, b) => a - b);
    const size = 1 + sorted.reduce((sum, root) => sum + (this.sizes.get(root) ?? 0), 0);
    const cap = this.settings.maxPerCluster;
    return { signature, keys, roots: sorted, ...(near ? { near } : {}), size, full: cap > 0 && size > cap };
  }

  /**
   * Keeps the probed trace under `id`: it joins (and joins up) the clusters it was found near.
   * `probe` must be the latest one made (no trace kept since). Returns its cluster's size.
   */
  keep(probe: TraceProbe, id: string): number {
    const index = this.ids.length;
    this.ids.push(id);
    this.signatures.push(probe.signature);
    this.parent.push(index);
    // The smallest index is the root: a cluster is named by its first kept trace.
    const root = probe.roots[0] ?? index;
    for (const other of probe.roots) {
      this.parent[other] = root;
      this.sizes.delete(other);
    }
    this.parent[index] = root;
    this.sizes.set(root, probe.size);
    if (probe.keys) {
      for (let band = 0; band < probe.keys.length; band++) {
        const bucket = this.buckets[band] as Map<bigint, number[]>;
        const key = probe.keys[band] as bigint;
        const members = bucket.get(key) ?? [];
        if (members.filter((member) => this.find(member) === root).length < PER_CLUSTER_IN_BUCKET) members.push(index);
        bucket.set(key, members);
      }
    }
    return probe.size;
  }

  /** The id a cluster is named by: its first kept trace. */
  firstOf(probe: TraceProbe): string | undefined {
    const root = probe.roots[0];
    return root === undefined ? undefined : this.ids[root];
  }

  summary(): ClusterSummary {
    const sizes = [...this.sizes.entries()].map(([root, size]) => ({ size, first: this.ids[root] as string, root }));
    const multi = sizes.filter((cluster) => cluster.size >= 2).sort((a, b) => b.size - a.size || a.root - b.root);
    return {
      traces: this.ids.length,
      clusters: multi.length,
      clustered: multi.reduce((sum, cluster) => sum + cluster.size, 0),
      largest: multi[0]?.size ?? (this.ids.length > 0 ? 1 : 0),
      top: multi.slice(0, 5).map(({ size, first }) => ({ size, first })),
    };
  }
}
