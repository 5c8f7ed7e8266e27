import type { Turn } from "../../core/trajectory.ts";
import { snippetText } from "../html-text.ts";
import { canonicalJsonOrText } from "../json-canonical.ts";
import { type Counters, count, type DomainNormalizer } from "../normalizer.ts";
import { countVolatile } from "../volatile.ts";

/**
 * Search: API responses and result lists are JSON. They get canonical JSON formatting, and every
 * string value in them is read as a person reads a result page: highlighting tags removed and
 * HTML entities decoded (`It&#x27;s <strong>Hello</strong>` → `It's Hello`). URLs are left
 * exactly as they are (`&amp;` in a URL is part of the address). Observations that are not JSON
 * (extracted page text) are left as they are: that text is already what the extractor produced,
 * and a page about HTML may legitimately show `&lt;`. Volatile values are counted, not changed.
 *
 * Base64 `data:` URIs (favicons and thumbnails inlined by SearchApi.io and others: 40 KB of a
 * 53 KB response) are the one thing shortened: their payload is bytes no model can predict, and
 * left in place they would push the results out of the observation cap. A payload longer than
 * 100 characters is replaced by a marker that keeps the media type and says how much was cut,
 * `data:image/png;base64,[… 2344 base64 characters elided …]`, counted as `search.data_uris_elided`
 * and `search.data_uri_chars_elided`.
 */
export const searchNormalizer: DomainNormalizer = {
  domain: "search",
  normalize(trajectory, _settings, counters, scope) {
    return { ...trajectory, turns: trajectory.turns.map((turn) => normalizeTurn(turn, counters, scope?.textOnly)) };
  },
};

const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/\S*$/;

/** A base64 data URI: `data:<media type>[;params];base64,<payload>`. */
const DATA_URI = /^(data:[^,;]*(?:;[^,;]*)*;base64,)([A-Za-z0-9+/=_\s-]*)$/;
/** Longer payloads are elided (a 1×1 pixel GIF, about 60 characters, stays). */
const MAX_DATA_URI_PAYLOAD = 100;

function cleanString(value: string, _key: string | undefined, counters: Counters): string {
  if (URL_LIKE.test(value)) return value;
  if (value.startsWith("data:")) {
    const dataUri = DATA_URI.exec(value);
    if (dataUri) return elideDataUri(dataUri[1] as string, dataUri[2] as string, counters);
  }
  return snippetText(value, counters);
}

function elideDataUri(prefix: string, payload: string, counters: Counters): string {
  if (payload.length <= MAX_DATA_URI_PAYLOAD) return prefix + payload;
  count(counters, "search.data_uris_elided");
  count(counters, "search.data_uri_chars_elided", payload.length);
  return `${prefix}[… ${payload.length} base64 characters elided …]`;
}

function normalizeTurn(turn: Turn, counters: Counters, textOnly: boolean | undefined): Turn {
  const observation = canonicalJsonOrText(turn.observation, counters, cleanString);
  if (!textOnly) countVolatile(observation, counters);
  return { ...turn, action: canonicalJsonOrText(turn.action, counters), observation };
}
