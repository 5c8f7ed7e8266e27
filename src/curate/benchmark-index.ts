import type { DecontaminateConfig } from "../config/schema.ts";
import { UserError } from "../core/errors.ts";
import { documentTurns } from "../core/text-document.ts";
import type { Turn } from "../core/trajectory.ts";
import { normalizeDocument } from "../normalize/normalize-document.ts";
import { normalizeTrajectory } from "../normalize/normalize-trajectory.ts";
import type { NormalizeSettings } from "../normalize/normalizer.ts";
import type { InputFile } from "../pipeline/plan.ts";
import { recordSource } from "../pipeline/record-labels.ts";
import { canonicalForHashing, hashWords } from "./canonical-text.ts";
import { ngramHashes } from "./ngram-hash.ts";

/** One benchmark episode (an AgentWorldBench trajectory, say): where it came from and its id. */
export interface BenchmarkEpisode {
  /** The benchmark file, relative to the config. */
  file: string;
  id: string;
}

/** A training trajectory's match with one benchmark episode. */
export interface BenchmarkMatch {
  benchmark: string;
  benchmarkId: string;
  /** Training turns (0-based) whose observation matched a turn of the episode. */
  turns: number[];
  /** The largest share of a matched turn's n-grams found in the episode's turn. */
  overlap: number;
}

/** The words an observation is compared by: the same canonical text exact and near dedup hash. */
export function comparisonWords(text: string): string[] {
  return hashWords(canonicalForHashing(text));
}

/**
 * The n-grams of every benchmark episode's observations, each pointing to the benchmark turns it
 * occurs in. N-grams shared by more than `max_episode_frequency` episodes are boilerplate (a tool
 * list, a prompt every episode repeats) and dropped, so boilerplate alone never matches.
 *
 * Memory is proportional to the benchmarks (a few MB for AgentWorldBench), never to the corpus:
 * each signatures unit builds it once per process and streams its training records past it.
 */
export class BenchmarkIndex {
  readonly episodes: BenchmarkEpisode[] = [];
  /** Per episode: its turns that have n-grams left after the boilerplate cut (the most it can match). */
  private readonly episodeTurns: number[] = [];
  /** Per benchmark turn: its episode, and its distinct n-grams left after the boilerplate cut. */
  private readonly turnEpisode: number[] = [];
  private readonly turnNgrams: number[] = [];
  /** n-gram → benchmark turn(s). */
  private readonly postings = new Map<number, number | number[]>();
  /** Episodes read per benchmark file, for the manifest. */
  readonly episodesPerFile = new Map<string, number>();

  private readonly settings: DecontaminateConfig;

  private constructor(settings: DecontaminateConfig) {
    this.settings = settings;
  }

  static async build(
    files: readonly InputFile[],
    settings: DecontaminateConfig,
    normalize: NormalizeSettings,
    maxLineBytes: number,
  ): Promise<BenchmarkIndex> {
    const index = new BenchmarkIndex(settings);
    const perTurn: Float64Array[] = [];
    for (const file of files) {
      let episodes = 0;
      // A benchmark that cannot be read whole would leave leaks in: stop, naming it.
      const items = (async function* () {
        try {
          yield* file.reader.read(file.path, { maxLineBytes, ...(file.spec.domain ? { domain: file.spec.domain } : {}) });
        } catch (err) {
          throw new UserError(`decontaminate.benchmarks: ${file.path} cannot be read to the end: ${(err as Error).message}`);
        }
      })();
      for await (const item of items) {
        if (item.kind === "quarantine") {
          // An episode that cannot be read cannot be checked for leaks: stop, naming the row.
          const { source, field, reason } = item.entry;
          throw new UserError(
            `decontaminate.benchmarks: ${recordSource(file.path, source)}: ${field ? `${field}: ` : ""}${reason} (a benchmark row that cannot be read cannot be checked for leaks; fix or remove it)`,
          );
        }
        // Normalized as training records are, so both sides are compared in the same form. A text
        // document (a benchmark kept as plain text) is an episode of one turn: its text.
        const { id, turns } =
          item.kind === "document"
            ? await normalizeDocument(item.document, normalize, new Map()).then(
                (document) => ({ id: document.id, turns: documentTurns(document) }),
                () => ({ id: item.document.id, turns: documentTurns(item.document) }),
              )
            : await normalizeTrajectory(item.trajectory, normalize, new Map()).catch(() => item.trajectory);
        const episode = index.episodes.length;
        index.episodes.push({ file: file.displayPath, id });
        episodes += 1;
        for (const turn of turns) {
          index.turnEpisode.push(episode);
          perTurn.push(distinct(ngramHashes(comparisonWords(turn.observation), settings.ngram)));
        }
      }
      index.episodesPerFile.set(file.displayPath, episodes);
    }
    // Episode frequency of each n-gram, to find boilerplate.
    const episodesOf = new Map<number, number>();
    const lastEpisode = new Map<number, number>();
    perTurn.forEach((hashes, turn) => {
      const episode = index.turnEpisode[turn] as number;
      for (const hash of hashes) {
        if (lastEpisode.get(hash) === episode) continue;
        lastEpisode.set(hash, episode);
        episodesOf.set(hash, (episodesOf.get(hash) ?? 0) + 1);
      }
    });
    lastEpisode.clear();
    perTurn.forEach((hashes, turn) => {
      let kept = 0;
      for (const hash of hashes) {
        if ((episodesOf.get(hash) ?? 0) > settings.max_episode_frequency) continue;
        kept += 1;
        const existing = index.postings.get(hash);
        if (existing === undefined) index.postings.set(hash, turn);
        else if (typeof existing === "number") index.postings.set(hash, [existing, turn]);
        else existing.push(turn);
      }
      index.turnNgrams.push(kept);
      const episode = index.turnEpisode[turn] as number;
      if (kept > 0) index.episodeTurns[episode] = (index.episodeTurns[episode] ?? 0) + 1;
    });
    return index;
  }

  get size(): number {
    return this.postings.size;
  }

  /**
   * The episodes a trajectory's turns contain, best first (most matched turns, then overlap, then
   * benchmark order): those with at least `min_turns` matching turns, or with all of their turns
   * matched when they have fewer. A training turn matches a benchmark turn when at least `min_overlap` of the
   * smaller of the two n-gram sets is shared: a turn that holds a benchmark observation inside a
   * longer output matches, and so does a truncated copy of one.
   */
  match(turns: readonly Turn[]): BenchmarkMatch[] {
    if (this.postings.size === 0) return [];
    const byEpisode = new Map<number, { turns: number[]; overlap: number }>();
    for (const [turnIndex, turn] of turns.entries()) {
      const hashes = distinct(ngramHashes(comparisonWords(turn.observation), this.settings.ngram));
      if (hashes.length === 0) continue;
      const shared = new Map<number, number>();
      for (const hash of hashes) {
        const hit = this.postings.get(hash);
        if (hit === undefined) continue;
        if (typeof hit === "number") shared.set(hit, (shared.get(hit) ?? 0) + 1);
        else for (const benchTurn of hit) shared.set(benchTurn, (shared.get(benchTurn) ?? 0) + 1);
      }
      const matchedEpisodes = new Map<number, number>();
      for (const [benchTurn, count] of shared) {
        const overlap = count / Math.min(hashes.length, this.turnNgrams[benchTurn] as number);
        if (overlap < this.settings.min_overlap) continue;
        const episode = this.turnEpisode[benchTurn] as number;
        matchedEpisodes.set(episode, Math.max(matchedEpisodes.get(episode) ?? 0, overlap));
      }
      for (const [episode, overlap] of matchedEpisodes) {
        const found = byEpisode.get(episode) ?? { turns: [], overlap: 0 };
        found.turns.push(turnIndex);
        found.overlap = Math.max(found.overlap, overlap);
        byEpisode.set(episode, found);
      }
    }
    const needed = (episode: number) => Math.min(this.settings.min_turns, this.episodeTurns[episode] ?? 0);
    return [...byEpisode.entries()]
      .filter(([episode, found]) => found.turns.length >= needed(episode))
      .sort(([ea, a], [eb, b]) => b.turns.length - a.turns.length || b.overlap - a.overlap || ea - eb)
      .map(([episode, found]) => {
        const { file, id } = this.episodes[episode] as BenchmarkEpisode;
        return { benchmark: file, benchmarkId: id, turns: found.turns, overlap: Math.round(found.overlap * 1000) / 1000 };
      });
  }
}

function distinct(hashes: Float64Array): Float64Array {
  if (hashes.length < 2) return hashes;
  const sorted = Float64Array.from(hashes).sort();
  let n = 1;
  for (let i = 1; i < sorted.length; i++) if (sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i] as number;
  return sorted.subarray(0, n);
}
