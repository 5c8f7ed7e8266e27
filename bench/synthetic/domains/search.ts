/**
 * Web-search traces in the layout of data/demo/search.jsonl: the action a tool call with the
 * query, the observation the raw Brave web-search API response, pretty-printed, with its
 * HTML-highlighted descriptions and entities (which the search normalizer cleans). A refined
 * query returns some of the same results again.
 */
import type { CanonicalRecord, DomainParams } from "../params.ts";
import type { Rng } from "../random.ts";
import { capitalize, isoDate, SITES, sentence, word, words } from "../text.ts";

interface Result {
  title: string;
  url: string;
  host: string;
  description: string;
  snippets: string[];
  age: string;
}

function result(rng: Rng, query: string): Result {
  const host = rng.pick(SITES);
  const slug = words(rng, rng.int(1, 4)).replace(/ /g, "_");
  const strong = `<strong>${query.split(" ").slice(0, 2).join(" ")}</strong>`;
  return {
    title: `${capitalize(words(rng, rng.int(3, 8)))} - ${host.split(".").at(-2) ?? host}`,
    url: `https://${host}/${word(rng)}/${slug}`,
    host,
    description: `${sentence(rng, 5, 14).replace(".", ` ${strong}`)} It&#x27;s ${words(rng, rng.int(6, 18))} &quot;${word(rng)}&quot;.`,
    snippets: Array.from({ length: rng.int(0, 4) }, () => sentence(rng, 8, 24)),
    age: `${rng.int(1, 28)} ${rng.pick(["days", "weeks", "months"])} ago`,
  };
}

function response(rng: Rng, query: string, results: Result[]) {
  const favicon = `https://imgs.search.brave.com/${rng.hex(43)}/rs:fit:32:32:1:0/g:ce/${rng.hex(64)}`;
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
      more_results_available: true,
      state: "",
    },
    mixed: { type: "mixed", main: results.map((_, index) => ({ type: "web", index, all: false })), top: [], side: [] },
    type: "search",
    web: {
      type: "search",
      results: results.map((r) => ({
        title: r.title,
        url: r.url,
        is_source_local: false,
        is_source_both: false,
        description: r.description,
        page_age: isoDate(rng),
        profile: { name: r.host, url: r.url, long_name: r.host, img: favicon },
        language: "en",
        family_friendly: true,
        type: "search_result",
        subtype: "generic",
        is_live: false,
        meta_url: { scheme: "https", netloc: r.host, hostname: r.host, favicon, path: `› ${r.url.split("/").slice(3).join("  › ")}` },
        age: r.age,
        ...(r.snippets.length > 0 ? { extra_snippets: r.snippets } : {}),
      })),
      family_friendly: true,
    },
  };
}

export function searchTrajectory(rng: Rng, id: string, p: DomainParams): CanonicalRecord {
  let query = words(rng, rng.int(2, 6));
  let pool: Result[] = [];
  const turns: CanonicalRecord["turns"] = [];
  for (let i = rng.quantiles(p.turns); i > 0; i--) {
    const chars = rng.quantiles(p.observation);
    // Keep a few results of the previous query, then fill with new ones up to the size.
    const results = pool.filter(() => rng.chance(0.3));
    // Size each result on its own (rendering the whole response per result would be quadratic).
    const empty = JSON.stringify(response(rng, query, []), null, 2).length;
    let size = empty + results.length * 1500;
    while (size < chars && results.length < 60) {
      const r = result(rng, query);
      results.push(r);
      size += JSON.stringify(response(rng, query, [r]), null, 2).length - empty + 40;
    }
    const observation = JSON.stringify(response(rng, query, results), null, 2);
    turns.push({ action: JSON.stringify({ tool: "brave_web_search", q: query }), observation });
    pool = results;
    query = `${query} ${word(rng)}`;
  }
  const taskChars = rng.quantiles(p.task);
  return {
    id,
    domain: "search",
    ...(taskChars >= 20 ? { task: sentence(rng, Math.max(3, Math.round(taskChars / 7)), Math.max(4, Math.round(taskChars / 5))) } : {}),
    turns,
    meta: { generator: "lwm-data bench/synthetic", engine: "brave" },
  };
}
