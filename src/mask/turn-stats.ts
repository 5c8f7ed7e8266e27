import { words } from "./word-split.ts";

/**
 * The statistics of one (action, observation) pair, over word sets W_act and W_obs
 * (src/mask/word-split.ts). Ratios whose denominator is empty are 0, so every value is finite:
 * an empty action has overlap 0; an empty observation has novelty 0 and history novelty 0.
 */
export interface TurnStats {
  /** |W_act ∩ W_obs| / |W_act|: how much of the action the observation repeats. */
  overlap: number;
  /** |W_obs \ W_act| / |W_obs|: how much of the observation is not in the action. */
  novelty: number;
  /** |W_act ∩ W_obs| / |W_act ∪ W_obs|. */
  jaccard: number;
  /** obs_tokens / act_tokens, in tokens of the job's tokenizer (act_tokens 0 counts as 1). */
  lengthRatio: number;
  /** Share of W_obs seen nowhere earlier in the trajectory (task, earlier turns, this action). */
  historyNovelty: number;
  actTokens: number;
  obsTokens: number;
  actWords: number;
  obsWords: number;
  /**
   * With `mask.corpus_novelty`: -log2(count / N), the observation's self-information in bits,
   * where count is how often its canonical text occurs job-wide and N every observation counted.
   */
  corpusNovelty?: number;
}

export interface TurnText {
  action: string;
  observation: string;
  actTokens: number;
  obsTokens: number;
}

/** Per word: the last turn whose action / observation holds it, and whether it has been seen. */
interface WordState {
  act: number;
  obs: number;
  seen: boolean;
}

type WordStates = Map<string, WordState>;

// Module-level helpers, not closures per call: V8 keeps optimized code only for functions that
// stay alive, so per-call closures were compiled again after every major GC.
function wordState(state: WordStates, word: string): WordState {
  let entry = state.get(word);
  if (!entry) {
    entry = { act: -1, obs: -1, seen: false };
    state.set(word, entry);
  }
  return entry;
}

/** Turn `k`'s statistics; updates `state` with its words. */
function turnStats(state: WordStates, turn: TurnText, k: number): TurnStats {
  let actWords = 0;
  for (const word of words(turn.action)) {
    const entry = wordState(state, word);
    if (entry.act !== k) {
      entry.act = k;
      actWords += 1;
    }
    entry.seen = true;
  }
  let obsWords = 0;
  let shared = 0;
  let unseen = 0;
  for (const word of words(turn.observation)) {
    const entry = wordState(state, word);
    if (entry.obs === k) continue;
    entry.obs = k;
    obsWords += 1;
    if (entry.act === k) shared += 1;
    if (!entry.seen) unseen += 1;
    // Marked after counting: a word's repeats in this observation were skipped above.
    entry.seen = true;
  }
  const union = actWords + obsWords - shared;
  return {
    overlap: actWords === 0 ? 0 : shared / actWords,
    novelty: obsWords === 0 ? 0 : (obsWords - shared) / obsWords,
    jaccard: union === 0 ? 0 : shared / union,
    lengthRatio: turn.obsTokens / Math.max(turn.actTokens, 1),
    historyNovelty: obsWords === 0 ? 0 : unseen / obsWords,
    actTokens: turn.actTokens,
    obsTokens: turn.obsTokens,
    actWords,
    obsWords,
  };
}

/**
 * Statistics for every turn of a trajectory. `context` is what precedes the first action
 * (task, initial observation); it counts as already seen for history novelty.
 *
 * One map per trajectory from each distinct word to its state (the last turn whose action /
 * observation holds it, and whether it has been seen — context, an earlier turn, or this turn's
 * action — before the current observation), instead of two sets per turn and a growing `seen`
 * set: the counts are the set sizes and intersections of the definitions above
 * (test/turn-stats.test.ts compares with the set-based reference).
 */
export function trajectoryTurnStats(turns: readonly TurnText[], context: string): TurnStats[] {
  const state: WordStates = new Map();
  for (const word of words(context)) wordState(state, word).seen = true;
  const stats: TurnStats[] = [];
  for (let k = 0; k < turns.length; k++) stats.push(turnStats(state, turns[k] as TurnText, k));
  return stats;
}
