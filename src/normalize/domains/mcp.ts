import type { Turn } from "../../core/trajectory.ts";
import { canonicalJsonOrText } from "../json-canonical.ts";
import type { Counters, DomainNormalizer } from "../normalizer.ts";
import { countVolatile } from "../volatile.ts";

/**
 * MCP: requests and replies are JSON-RPC messages. Both get canonical JSON formatting (the
 * server's key order kept; see json-canonical.ts), so the same reply always has the same text
 * whatever the transcript's indentation was. Volatile values in replies are counted, not changed.
 */
export const mcpNormalizer: DomainNormalizer = {
  domain: "mcp",
  normalize(trajectory, _settings, counters, scope) {
    return {
      ...trajectory,
      ...(trajectory.initialObservation !== undefined && !scope?.turnsOnly
        ? { initialObservation: canonicalJsonOrText(trajectory.initialObservation, counters) }
        : {}),
      turns: trajectory.turns.map((turn) => normalizeTurn(turn, counters, scope?.textOnly)),
    };
  },
};

function normalizeTurn(turn: Turn, counters: Counters, textOnly: boolean | undefined): Turn {
  const observation = canonicalJsonOrText(turn.observation, counters);
  if (!textOnly) countVolatile(observation, counters);
  return { ...turn, action: canonicalJsonOrText(turn.action, counters), observation };
}
