import { decodeHTMLStrict } from "entities";
import { type Counters, count } from "./normalizer.ts";

/**
 * Search APIs return snippets as HTML fragments: `It&#x27;s <strong>Hello</strong> world`.
 * What a person reads is `It's Hello world`, so that is what the model should predict.
 *
 * Only the query-highlighting tags search engines add are removed (`<strong>`, `<b>`, `<em>`,
 * `<mark>`, with or without attributes); any other tag stays, because a snippet about HTML may
 * quote real markup. Tags are removed BEFORE entities are decoded, so an escaped tag in the text
 * (`&lt;strong&gt;`) becomes a literal `<strong>` and survives. Entities are decoded strictly
 * (with their `;`): `AT&T` or `?a=1&copy=2` are text, not the entity `&copy`.
 */

const HIGHLIGHT_TAG = /<\/?(?:strong|b|em|mark)(?:\s[^<>]*)?>/gi;
const ENTITY = /&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);/g;

/** Removes highlighting tags; counts `html.tags_stripped`. */
export function stripHighlightTags(text: string, counters: Counters): string {
  if (!text.includes("<")) return text;
  let stripped = 0;
  const result = text.replace(HIGHLIGHT_TAG, () => {
    stripped += 1;
    return "";
  });
  count(counters, "html.tags_stripped", stripped);
  return result;
}

/** Decodes HTML character references (named, decimal, hex); counts `html.entities_decoded`. */
export function decodeEntities(text: string, counters: Counters): string {
  if (!text.includes("&")) return text;
  let decoded = 0;
  const result = text.replace(ENTITY, (entity) => {
    const value = decodeHTMLStrict(entity);
    if (value !== entity) decoded += 1;
    return value;
  });
  count(counters, "html.entities_decoded", decoded);
  return result;
}

/** A search snippet as a person reads it: highlighting removed, then entities decoded. */
export function snippetText(text: string, counters: Counters): string {
  return decodeEntities(stripHighlightTags(text, counters), counters);
}
