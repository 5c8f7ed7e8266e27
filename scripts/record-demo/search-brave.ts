/**
 * Brave Search API v1 web-search response layout (GET /res/v1/web/search), as the service's
 * answer: `type`, `query{original, …}`, `mixed{main[], top[], side[]}`, `web{type, results[…]}`.
 * Descriptions are HTML like Brave's: matched words in <strong>, text HTML-escaped.
 */
import { FIXED_EPOCH_SECONDS } from "./common.ts";
import type { SearchDocument } from "./search-docs.ts";

export interface Hit {
  document: SearchDocument;
  /** The document's words that matched the query (lowercase). */
  terms: string[];
}

/** Brave's escaping of snippet text (the same five characters Python's html.escape replaces). */
const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);

const SNIPPET_MAX_CHARS = 260;

/**
 * The description of a hit: the body sentence holding the most matched words (the earliest on a
 * tie), with those words in <strong>, backticks of inline code dropped.
 */
export function snippet(hit: Hit): string {
  const sentences = hit.document.body.replaceAll("`", "").split(/(?<=[.!?])\s+/);
  const matched = new Set(hit.terms);
  const wordsMatched = (sentence: string) =>
    new Set((sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => matched.has(w))).size;
  let best = sentences[0] ?? "";
  for (const sentence of sentences) if (wordsMatched(sentence) > wordsMatched(best)) best = sentence;
  const cut = best.length > SNIPPET_MAX_CHARS ? `${best.slice(0, best.lastIndexOf(" ", SNIPPET_MAX_CHARS))} …` : best;
  return cut
    .split(/([\p{L}\p{N}]+)/u)
    .map((part, i) => (i % 2 === 1 && matched.has(part.toLowerCase()) ? `<strong>${escapeHtml(part)}</strong>` : escapeHtml(part)))
    .join("");
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** Brave's `age`: "N days ago" for recent pages, else the date; counted from the recorder's fixed clock. */
export function age(published: string): string {
  const date = new Date(`${published}Z`);
  const days = Math.floor((FIXED_EPOCH_SECONDS * 1000 - date.getTime()) / 86_400_000);
  if (days <= 1) return "1 day ago";
  if (days < 30) return `${days} days ago`;
  return `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}, ${date.getUTCFullYear()}`;
}

function webResult(hit: Hit): Record<string, unknown> {
  const url = new URL(hit.document.url);
  const favicon = `${url.origin}/favicon.ico`;
  return {
    title: hit.document.title,
    url: hit.document.url,
    is_source_local: false,
    is_source_both: false,
    description: snippet(hit),
    page_age: hit.document.published,
    profile: { name: hit.document.site, url: url.origin, long_name: url.hostname, img: favicon },
    language: "en",
    family_friendly: true,
    type: "search_result",
    subtype: "generic",
    is_live: false,
    meta_url: {
      scheme: url.protocol.replace(":", ""),
      netloc: url.host,
      hostname: url.hostname,
      favicon,
      path: url.pathname
        .split("/")
        .filter((part) => part !== "")
        .map((part) => `› ${part}`)
        .join(" "),
    },
    age: age(hit.document.published),
  };
}

/** The whole response for a query whose ranked hits are `hits` (already cut to `count`). */
export function webSearchResponse(query: string, hits: Hit[], moreResultsAvailable: boolean): Record<string, unknown> {
  return {
    query: {
      original: query,
      show_strict_warning: false,
      is_navigational: false,
      is_news_breaking: false,
      spellcheck_off: true,
      country: "us",
      bad_results: false,
      should_fallback: false,
      postal_code: "",
      city: "",
      header_country: "",
      more_results_available: moreResultsAvailable,
      state: "",
    },
    mixed: { type: "mixed", main: hits.map((_, index) => ({ type: "web", index, all: false })), top: [], side: [] },
    type: "search",
    web: { type: "search", results: hits.map(webResult), family_friendly: true },
  };
}
