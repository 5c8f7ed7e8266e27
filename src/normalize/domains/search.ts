import type { Turn } from "../../core/trajectory.ts";
import { snippetText } from "../html-text.ts";
import { canonicalJsonOrText } from "../json-canonical.ts";
import type { Counters, DomainNormalizer } from "../normalizer.ts";
import { countVolatile } from "../volatile.ts";

/**
 * Search: API responses and result lists are JSON. They get canonical JSON formatting, and every
 * string value in them is read as a person reads a result page: highlighting tags removed and
 * HTML entities decoded (`It&#x27;s <strong>Hello</strong>` → `It's Hello`). URLs are left
 * exactly as they are (`&amp;` in a URL is part of the address). Observations that are not JSON
 * (extracted page text) are left as they are: that text is already what the extractor produced,
 * and a page about HTML may legitimately show `&lt;`. Volatile values are counted, not changed.
 */
export const searchNormalizer: DomainNormalizer = {
  domain: "search",
  normalize(trajectory, _settings, counters) {
    return { ...trajectory, turns: trajectory.turns.map((turn) => normalizeTurn(turn, counters)) };
  },
};

const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/\S*$/;

function cleanString(value: string, _key: string | undefined, counters: Counters): string {
  return URL_LIKE.test(value) ? value : snippetText(value, counters);
}

function normalizeTurn(turn: Turn, counters: Counters): Turn {
  const observation = canonicalJsonOrText(turn.observation, counters, cleanString);
  countVolatile(observation, counters);
  return { ...turn, action: canonicalJsonOrText(turn.action, counters), observation };
}
