import type { Turn } from "../../core/trajectory.ts";
import { canonicalJsonOrText } from "../json-canonical.ts";
import type { Counters, DomainNormalizer } from "../normalizer.ts";
import { countVolatile } from "../volatile.ts";

/**
 * SWE: most observations are shell output, and shell output is kept exactly as the terminal
 * showed it — `cat package.json` must show the file's own indentation, so "parses as JSON" is
 * NOT a reason to reformat. Only a turn that a reader marks as a JSON tool result
 * (`turn.meta.observation_format === "json"`, e.g. an MCP or API tool called by the agent) gets
 * canonical JSON formatting. Volatile values are counted in every observation, never changed.
 */
export const sweNormalizer: DomainNormalizer = {
  domain: "swe",
  normalize(trajectory, _settings, counters, scope) {
    return { ...trajectory, turns: trajectory.turns.map((turn) => normalizeTurn(turn, counters, scope?.textOnly)) };
  },
};

/** The turn-meta key and value by which a reader marks an observation as a JSON tool result. */
export const OBSERVATION_FORMAT_KEY = "observation_format";

export function isJsonToolResult(turn: Turn): boolean {
  return turn.meta?.[OBSERVATION_FORMAT_KEY] === "json";
}

function normalizeTurn(turn: Turn, counters: Counters, textOnly: boolean | undefined): Turn {
  const observation = isJsonToolResult(turn) ? canonicalJsonOrText(turn.observation, counters) : turn.observation;
  if (!textOnly) countVolatile(observation, counters);
  return observation === turn.observation ? turn : { ...turn, observation };
}
