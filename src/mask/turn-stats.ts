import { wordSet } from "./word-split.ts";

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
}

function intersectionSize(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let n = 0;
  for (const word of a) if (b.has(word)) n += 1;
  return n;
}

export interface TurnText {
  action: string;
  observation: string;
  actTokens: number;
  obsTokens: number;
}

/**
 * Statistics for every turn of a trajectory. `context` is what precedes the first action
 * (task, initial observation); it counts as already seen for history novelty.
 */
export function trajectoryTurnStats(turns: readonly TurnText[], context: string): TurnStats[] {
  const seen = wordSet(context);
  return turns.map((turn) => {
    const act = wordSet(turn.action);
    const obs = wordSet(turn.observation);
    const shared = intersectionSize(act, obs);
    const union = act.size + obs.size - shared;
    for (const word of act) seen.add(word);
    let unseen = 0;
    for (const word of obs) if (!seen.has(word)) unseen += 1;
    for (const word of obs) seen.add(word);
    return {
      overlap: act.size === 0 ? 0 : shared / act.size,
      novelty: obs.size === 0 ? 0 : (obs.size - shared) / obs.size,
      jaccard: union === 0 ? 0 : shared / union,
      lengthRatio: turn.obsTokens / Math.max(turn.actTokens, 1),
      historyNovelty: obs.size === 0 ? 0 : unseen / obs.size,
      actTokens: turn.actTokens,
      obsTokens: turn.obsTokens,
      actWords: act.size,
      obsWords: obs.size,
    };
  });
}
