/**
 * The search-api reader on the responses of the search APIs beyond Brave (Serper, SearXNG, Google
 * Programmable Search, SerpAPI, SearchApi.io, serpstack, Serply, Tavily, Bing, Exa) and their error
 * bodies: the hand-made fixtures in test/fixtures/handmade/search-apis (written from each API's
 * documentation, see its README.md), hostile variants written here, and the real shared samples
 * (../shared/fixtures/real/formats-2026/search, and Brave) read in place. Brave responses and agent
 * traces are covered by test/read-mcp-search.test.ts and test/third-party/mcp-search.test.ts.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { searchNormalizer } from "../src/normalize/domains/search.ts";
import type { Counters, NormalizeSettings } from "../src/normalize/normalizer.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFromHead, READERS, readHead } from "../src/read/registry.ts";
import { searchApiReader } from "../src/read/search-api.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 20 };
const DIR = join(ROOT, "test/fixtures/handmade/search-apis");
const fixture = (name: string) => join(DIR, name);
const SETTINGS = {} as NormalizeSettings; // the search normalizer reads no setting

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const call = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args }, null, 2);

async function readOne(path: string): Promise<Trajectory> {
  const items = await collect(searchApiReader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  expect(items).toHaveLength(1);
  return trajectories(items)[0] as Trajectory;
}

function writeTemp(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

async function normalized(t: Trajectory): Promise<{ observation: string; counters: Record<string, number> }> {
  const counters: Counters = new Map();
  const out = await searchNormalizer.normalize(t, SETTINGS, counters);
  return { observation: out.turns[0]?.observation ?? "", counters: Object.fromEntries(counters) };
}

/** Every hand-made response file: the call it answers, the API, and the turn's meta. */
const RESPONSES: [file: string, action: string, meta: Record<string, unknown>, turnMeta: Record<string, unknown> | undefined][] = [
  ["serper.json", call("web_search", { query: "apple inc" }), { search_api: "serper" }, { endpoint: "search" }],
  ["searxng.json", call("web_search", { query: "rust borrow checker" }), { search_api: "searxng" }, undefined],
  ["google-cse.json", call("web_search", { query: "lectures" }), { search_api: "google-cse" }, undefined],
  ["serpapi.json", call("web_search", { query: "Coffee" }), { search_api: "serpapi" }, { endpoint: "google" }],
  ["searchapi.json", call("web_search", { query: "tokyo weather" }), { search_api: "searchapi" }, { endpoint: "google" }],
  ["serpstack.json", call("web_search", { query: "mcdonalds" }), { search_api: "serpstack" }, { endpoint: "web" }],
  [
    "serply.json",
    call("web_search", {}),
    {
      search_api: "serply",
      read_filter: {
        stage: "search-query-unknown",
        reason: "the serply response does not record the query it answers, so the call that produced it is unknown",
      },
    },
    undefined,
  ],
  ["tavily.json", call("web_search", { query: "Who is Leo Messi?" }), { search_api: "tavily" }, undefined],
  ["bing.json", call("web_search", { query: "sailing dinghies" }), { search_api: "bing" }, { endpoint: "SearchResponse" }],
  [
    "exa.json",
    call("web_search", { query: "Here is a recent paper about large language model agents:" }),
    { search_api: "exa" },
    { endpoint: "neural" },
  ],
];

describe("search-api reader: one hand-made response per API", () => {
  for (const [file, action, meta, turnMeta] of RESPONSES) {
    it(`${file}: action, meta, and the file itself (already canonical) as the observation`, async () => {
      const raw = readFileSync(fixture(file), "utf8");
      const t = await readOne(fixture(file));
      expect(t).toMatchObject({ domain: "search", source: { format: "search-api", line: 1, offset: 0 } });
      expect(t.id).toMatch(new RegExp(`^${file.replace(".json", "")}-[0-9a-f]{12}$`));
      expect(t.meta).toEqual(meta);
      expect(t.turns).toHaveLength(1);
      expect(t.turns[0]?.action).toBe(action);
      expect(t.turns[0]?.meta).toEqual(turnMeta);
      // The fixtures are written 2-space, `"key": value`: canonical JSON is the file, number literals (`6.0`) kept.
      expect(t.turns[0]?.observation).toBe(raw.trimEnd());
    });
  }

  it("the same responses, minified one per line, give the same turns; ids differ by record text but stay stable", async () => {
    const files = RESPONSES.map(([file]) => file);
    const jsonl = files.map((file) => JSON.stringify(JSON.parse(readFileSync(fixture(file), "utf8")))).join("\n");
    const path = writeTemp("mixed.jsonl", `${jsonl}\n`);
    const items = await collect(searchApiReader.read(path, OPTIONS));
    expect(quarantined(items)).toEqual([]);
    const lines = trajectories(items);
    expect(lines.map((t) => t.meta?.search_api)).toEqual(RESPONSES.map(([, , meta]) => meta.search_api));
    expect(lines.map((t) => t.turns[0]?.action)).toEqual(RESPONSES.map(([, action]) => action));
    expect(lines.map((t) => t.source.line)).toEqual(files.map((_, i) => i + 1));
    // JSON.stringify writes searxng.json's `"score": 6.0` as 6: compare with the re-serialised file.
    for (const [i, file] of files.entries())
      expect(lines[i]?.turns[0]?.observation, file).toBe(JSON.stringify(JSON.parse(readFileSync(fixture(file), "utf8")), null, 2));
    const again = trajectories(await collect(searchApiReader.read(path, OPTIONS)));
    expect(again.map((t) => t.id)).toEqual(lines.map((t) => t.id));
    expect(new Set(lines.map((t) => t.id)).size).toBe(files.length);
  });

  it("a gzip JSON array of responses of several APIs is streamed element by element", async () => {
    const values = ["serper.json", "tavily.json", "bing.json"].map((file) => JSON.parse(readFileSync(fixture(file), "utf8")));
    const items = await collect(searchApiReader.read(writeTemp("several.json.gz", gzipSync(JSON.stringify(values))), OPTIONS));
    expect(quarantined(items)).toEqual([]);
    const ts = trajectories(items);
    expect(ts.map((t) => [t.id.replace(/-[0-9a-f]{12}$/, ""), t.meta?.search_api])).toEqual([
      ["several.json[0]", "serper"],
      ["several.json[1]", "tavily"],
      ["several.json[2]", "bing"],
    ]);
  });
});

describe("search-api reader: endpoints and query fields of the documented variants", () => {
  const cases: [name: string, response: unknown, action: string, api: string, endpoint?: string][] = [
    [
      "Serper news",
      { searchParameters: { q: "ai act", type: "news", engine: "google" }, news: [] },
      call("news_search", { query: "ai act" }),
      "serper",
      "news",
    ],
    [
      "Serper images",
      { searchParameters: { q: "cats", type: "images" }, images: [] },
      call("image_search", { query: "cats" }),
      "serper",
      "images",
    ],
    [
      "SerpAPI YouTube (search_query)",
      {
        search_metadata: { id: "1", json_endpoint: "https://serpapi.com/x.json" },
        search_parameters: { engine: "youtube", search_query: "lofi" },
      },
      call("video_search", { query: "lofi" }),
      "serpapi",
      "youtube",
    ],
    [
      "SerpAPI Google Images via tbm=isch",
      { search_metadata: { id: "2" }, search_parameters: { engine: "google", q: "sunset", tbm: "isch" } },
      call("image_search", { query: "sunset" }),
      "serpapi",
      "google",
    ],
    [
      "Google CSE image search",
      { kind: "customsearch#search", queries: { request: [{ searchTerms: "red panda", searchType: "image" }] }, items: [] },
      call("image_search", { query: "red panda" }),
      "google-cse",
      "image",
    ],
    [
      "Bing News",
      { _type: "News", queryContext: { originalQuery: "storm" }, value: [] },
      call("news_search", { query: "storm" }),
      "bing",
      "News",
    ],
    [
      "serpstack news",
      { request: { success: true }, search_parameters: { query: "elections", type: "news" } },
      call("news_search", { query: "elections" }),
      "serpstack",
      "news",
    ],
    [
      "Tavily without answer (response_time only)",
      { query: "q1", results: [], response_time: 0.5 },
      call("web_search", { query: "q1" }),
      "tavily",
    ],
  ];
  for (const [name, response, action, api, endpoint] of cases)
    it(name, async () => {
      const t = await readOne(writeTemp("r.json", JSON.stringify(response)));
      expect([t.turns[0]?.action, t.meta?.search_api, t.turns[0]?.meta?.endpoint]).toEqual([action, api, endpoint]);
      expect(t.meta?.read_filter).toBeUndefined();
    });

  it("Exa without an autoprompt records no query: read, filtered with its reason", async () => {
    const t = await readOne(
      writeTemp(
        "exa.json",
        JSON.stringify({ requestId: "r1", resolvedSearchType: "keyword", results: [{ id: "u", url: "https://a.example/" }] }),
      ),
    );
    expect(t.turns[0]?.action).toBe(call("web_search", {}));
    expect(t.meta).toEqual({
      search_api: "exa",
      read_filter: {
        stage: "search-query-unknown",
        reason: "the exa response does not record the query it answers, so the call that produced it is unknown",
      },
    });
  });
});

describe("search-api reader: a later page of results is its own call", () => {
  /** A hand-made response file with the field at `path` set to `value`: a later page of the same query. */
  const laterPage = (file: string, path: (string | number)[], value: unknown) => {
    const response = JSON.parse(readFileSync(fixture(file), "utf8"));
    let at = response;
    for (const step of path.slice(0, -1)) at = at[step];
    at[path.at(-1) as string | number] = value;
    return writeTemp(file, JSON.stringify(response, null, 2));
  };
  const cases: [file: string, path: (string | number)[], value: unknown, action: string][] = [
    ["serper.json", ["searchParameters", "page"], 2, call("web_search", { query: "apple inc", page: 2 })],
    // SerpAPI echoes its parameters as text: Google's `start` is a result offset (10 = page 2).
    ["serpapi.json", ["search_parameters", "start"], "10", call("web_search", { query: "Coffee", start: 10 })],
    ["searchapi.json", ["search_parameters", "page"], 3, call("web_search", { query: "tokyo weather", page: 3 })],
    ["serpstack.json", ["search_parameters", "page"], "2", call("web_search", { query: "mcdonalds", page: 2 })],
    // Google's `start` is 1-based; the response echoes it as queries.request[0].startIndex.
    ["google-cse.json", ["queries", "request", 0, "startIndex"], 11, call("web_search", { query: "lectures", start: 11 })],
  ];
  for (const [file, path, value, action] of cases)
    it(`${file}: the page asked for is in the action; the first page's is not`, async () => {
      const first = await readOne(fixture(file));
      const later = await readOne(laterPage(file, path, value));
      expect(later.turns[0]?.action).toBe(action);
      expect(first.turns[0]?.action).not.toBe(later.turns[0]?.action);
      expect(JSON.parse(first.turns[0]?.action as string).arguments).toEqual({ query: JSON.parse(action).arguments.query });
    });
});

describe("search-api reader: error responses are observations of the error", () => {
  it("errors.jsonl: one per API, each with its API, its message as turn meta, and the body as the observation", async () => {
    const raw = readFileSync(fixture("errors.jsonl"), "utf8").trimEnd().split("\n");
    const items = await collect(searchApiReader.read(fixture("errors.jsonl"), OPTIONS));
    expect(quarantined(items)).toEqual([]);
    const ts = trajectories(items);
    expect(ts.map((t) => [t.meta?.search_api, t.turns[0]?.meta?.error])).toEqual([
      ["unknown", "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"],
      ["brave", "The provided subscription token is invalid."],
      ["bing", "Required parameter is missing."],
      ["serper", "Unauthorized."],
      ["tavily", "Unauthorized: missing or invalid API key."],
      ["serpstack", "You have not supplied an API Access Key. [Required format: access_key=YOUR_ACCESS_KEY]"],
      ["exa", "Invalid API key"],
      ["google-cse", "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'customsearch.googleapis.com'."],
    ]);
    for (const [i, t] of ts.entries()) {
      // No error body names its query: the call is known only by its tool; errors are never filtered.
      expect(t.turns[0]?.action).toBe(call("web_search", {}));
      expect(t.meta?.read_filter).toBeUndefined();
      expect(t.turns[0]?.observation).toBe(JSON.stringify(JSON.parse(raw[i] as string), null, 2));
      expect(t.source.line).toBe(i + 1);
    }
  });

  it("serpapi-session.jsonl: an engine's endpoint, an empty result with its error and query, a bare error attributed to the file's API", async () => {
    const ts = trajectories(await collect(searchApiReader.read(fixture("serpapi-session.jsonl"), OPTIONS)));
    expect(ts.map((t) => [t.turns[0]?.action, t.meta, t.turns[0]?.meta])).toEqual([
      [call("news_search", { query: "ocean freight" }), { search_api: "serpapi" }, { endpoint: "google_news" }],
      [
        call("web_search", { query: "zqxv wkpl ffrt" }),
        { search_api: "serpapi" },
        { endpoint: "google", error: "Google hasn't returned any results for this query." },
      ],
      [call("web_search", {}), { search_api: "serpapi" }, { error: "Your account has run out of searches." }],
    ]);
  });

  it("Azure's gateway error before Bing ({error: {code: \"401\", message}}) in a file of Bing responses is Bing's error", async () => {
    const bing = { _type: "SearchResponse", queryContext: { originalQuery: "sailing dinghies" }, webPages: { value: [] } };
    const gateway = { error: { code: "401", message: "Access denied due to invalid subscription key." } };
    const items = await collect(
      searchApiReader.read(writeTemp("bing.jsonl", `${JSON.stringify(bing)}\n${JSON.stringify(gateway)}\n`), OPTIONS),
    );
    expect(quarantined(items)).toEqual([]);
    expect(trajectories(items).map((t) => [t.meta?.search_api, t.turns[0]?.action, t.turns[0]?.meta?.error])).toEqual([
      ["bing", call("web_search", { query: "sailing dinghies" }), undefined],
      ["bing", call("web_search", {}), "Access denied due to invalid subscription key."],
    ]);
  });

  it("a bare error alone in a file is read (format given) as API unknown", async () => {
    const t = await readOne(writeTemp("e.json", '{"error": "Invalid API key."}'));
    expect([t.meta, t.turns[0]?.meta, t.turns[0]?.observation]).toEqual([
      { search_api: "unknown" },
      { error: "Invalid API key." },
      '{\n  "error": "Invalid API key."\n}',
    ]);
  });
});

describe("search-api reader: what the search normalizer makes of each API's response", () => {
  it("Google CSE: <b> highlighting removed and &nbsp;/&amp; decoded in htmlSnippet, <br> kept; URL-like strings untouched", async () => {
    const { observation, counters } = await normalized(await readOne(fixture("google-cse.json")));
    const items = JSON.parse(observation).items;
    expect(items[0].htmlTitle).toBe("SICP Lectures | MIT OpenCourseWare");
    expect(items[0].htmlSnippet).toBe(
      "These twenty video lectures by Hal Abelson and Gerald Jay Sussman are a complete\u00a0...<br>presentation of the course & more.",
    );
    // A URL-like string is left as the API wrote it, highlighting and all (the Brave rule: `&amp;` in a URL is the URL).
    expect(items[1].htmlFormattedUrl).toBe("https://www.feynman<b>lectures</b>.caltech.edu/");
    expect(items[0].link).toBe(
      "https://ocw.mit.edu/courses/6-001-structure-and-interpretation-of-computer-programs-spring-2005/video_galleries/video-lectures/",
    );
    // <b>…</b> in both items' htmlTitle and htmlSnippet: 8 tags; &nbsp; and &amp;: 2 entities.
    expect(counters).toMatchObject({ "html.tags_stripped": 8, "html.entities_decoded": 2 });
  });

  it("SearchApi.io: base64 data URIs over 100 characters elided with their size, a short one kept; results intact", async () => {
    const raw = JSON.parse(readFileSync(fixture("searchapi.json"), "utf8"));
    const { observation, counters } = await normalized(await readOne(fixture("searchapi.json")));
    const results = JSON.parse(observation).organic_results;
    expect(results[0].favicon).toBe("data:image/png;base64,[… 812 base64 characters elided …]");
    expect(results[1].thumbnail).toBe("data:image/png;base64,[… 2012 base64 characters elided …]");
    expect(results[1].favicon).toBe(raw.organic_results[1].favicon);
    expect(results[1].favicon).toHaveLength("data:image/png;base64,".length + 64);
    expect(results[1].title).toBe("Tokyo weather – Japan Meteorological Agency");
    expect(counters).toMatchObject({ "search.data_uris_elided": 2, "search.data_uri_chars_elided": 2824 });
    expect(observation.length).toBeLessThan(readFileSync(fixture("searchapi.json"), "utf8").length - 2500);
  });

  it("SearXNG, Tavily, serpstack, Serper, SerpAPI, Serply, Bing, Exa: entities decoded; volatile ids/times counted, not changed", async () => {
    const text = async (file: string) => normalized(await readOne(fixture(file)));
    const searxng = await text("searxng.json");
    expect(JSON.parse(searxng.observation).results.map((r: { content: string }) => r.content.slice(0, 40))).toEqual([
      "A reference is like a pointer in that it",
      "The borrow check is Rust's \"secret sauce",
    ]);
    expect(searxng.observation).toContain('"score": 6.0,');
    const tavily = await text("tavily.json");
    expect(JSON.parse(tavily.observation).results[1].content).toBe(
      'Lionel Andrés "Leo" Messi (born 24 June 1987) is an Argentine professional footballer who plays as a forward.',
    );
    expect(JSON.parse(tavily.observation).request_id).toBe("123e4567-e89b-12d3-a456-426614174111");
    expect(tavily.counters).toMatchObject({ "volatile.request_id": 1 });
    expect(JSON.parse((await text("serpstack.json")).observation).organic_results[0].snippet).toBe(
      "Learn about McDonald's restaurant menu items, nutrition information, careers and more.",
    );
    expect((await text("serpstack.json")).counters).toMatchObject({ "volatile.epoch_s": 1 });
    expect(JSON.parse((await text("serper.json")).observation).organic[2].title).toBe(
      "Apple Inc. (AAPL) Stock Price, News, Quote & History",
    );
    expect(JSON.parse((await text("serpapi.json")).observation).organic_results[1].title).toBe("The Coffee Bean & Tea Leaf");
    expect(JSON.parse((await text("serply.json")).observation).results[0].description).toBe(
      "Serply is a real-time API for Google search results & more.",
    );
    const bing = await text("bing.json");
    expect(JSON.parse(bing.observation).webPages.value[0].snippet).toBe("Dinghy sailing is a great way to get into sailing & racing.");
    expect(bing.counters).toMatchObject({ "volatile.timestamp": 2 });
    const exa = await text("exa.json");
    expect(JSON.parse(exa.observation).results[0].highlights).toEqual([
      "Autonomous agents have long been a prominent research focus — a survey.",
    ]);
    expect(exa.counters).toMatchObject({ "volatile.request_id": 1, "volatile.timestamp": 1 });
  });
});

describe("search-api reader: hostile input", () => {
  const serper = () => JSON.parse(readFileSync(fixture("serper.json"), "utf8"));

  it("a truncated line among response lines is quarantined naming its line; the others are read", async () => {
    const good = JSON.stringify(serper());
    const path = writeTemp("cut.jsonl", [good, good.slice(0, 120), JSON.stringify({ ...serper(), credits: 2 })].join("\n"));
    const items = await collect(searchApiReader.read(path, OPTIONS));
    expect(items.map((i) => i.kind)).toEqual(["trajectory", "quarantine", "trajectory"]);
    expect(quarantined(items)[0]).toMatchObject({ source: { uri: path, line: 2, format: "search-api" }, stage: "read" });
    expect(quarantined(items)[0]?.reason).toMatch(/^invalid JSON/);
  });

  it("wrong types and missing query fields: quarantined, naming the keys found", async () => {
    const bad = [
      { searchParameters: { q: 42, type: "search" }, organic: [] }, // q not a string
      { _type: "SearchResponse", queryContext: {}, webPages: { value: [] } }, // no originalQuery
      { kind: "customsearch#result", title: "x" }, // a CSE item, not a search
      { results: [{ url: "https://a.example/" }] }, // no API's shape
      [1, 2],
      "a string",
    ];
    const path = writeTemp("bad.jsonl", `${JSON.stringify(serper())}\n${bad.map((b) => JSON.stringify(b)).join("\n")}\n`);
    const items = await collect(searchApiReader.read(path, OPTIONS));
    expect(items.map((i) => i.kind)).toEqual(["trajectory", ...bad.map(() => "quarantine")]);
    const reasons = quarantined(items).map((q) => q.reason);
    expect(reasons[0]).toMatch(/^not a search-API response: an object with keys "searchParameters", "organic" matches none/);
    expect(reasons[1]).toMatch(/^not a search-API response: an object with keys "_type", "queryContext", "webPages"/);
    expect(reasons[3]).toMatch(/^not a search-API response: an object with keys "results"/);
    expect(reasons[4]).toMatch(/^not a search-API response: an array/);
    expect(reasons[5]).toMatch(/^not a search-API response: a string/);
    expect(quarantined(items).map((q) => q.source.line)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("a pretty-printed response cut off mid-way is one quarantined record, not a crash", async () => {
    const raw = readFileSync(fixture("tavily.json"), "utf8");
    const items = await collect(searchApiReader.read(writeTemp("cut.json", raw.slice(0, raw.length / 2)), OPTIONS));
    expect(items).toHaveLength(1);
    expect(quarantined(items)[0]?.reason).toMatch(/invalid JSON/);
  });

  it("pretty-printed responses one after another (jq . out.jsonl) are each a response; a cut last one is quarantined at its line", async () => {
    const serperPage2 = { ...serper(), credits: 2 };
    const text = [serper(), { message: "Unauthorized.", statusCode: 403 }, serperPage2].map((v) => JSON.stringify(v, null, 2)).join("\n");
    const items = await collect(searchApiReader.read(writeTemp("jq.json", `\uFEFF${text}\n`), OPTIONS));
    expect(quarantined(items)).toEqual([]);
    const ts = trajectories(items);
    expect(ts.map((t) => [t.meta?.search_api, t.turns[0]?.meta?.error])).toEqual([
      ["serper", undefined],
      ["serper", "Unauthorized."],
      ["serper", undefined],
    ]);
    const secondLine = JSON.stringify(serper(), null, 2).split("\n").length + 1;
    expect(ts[1]?.source).toMatchObject({ line: secondLine, offset: Buffer.byteLength(`\uFEFF${JSON.stringify(serper(), null, 2)}\n`) });
    expect(ts[2]?.turns[0]?.observation).toBe(JSON.stringify(serperPage2, null, 2));
    const cut = await collect(searchApiReader.read(writeTemp("jq-cut.json", text.slice(0, -40)), OPTIONS));
    expect(cut.map((i) => i.kind)).toEqual(["trajectory", "trajectory", "quarantine"]);
    expect(quarantined(cut)[0]?.reason).toMatch(/^invalid JSON/);
  });

  it("an API's response over the size limit is quarantined with its size", async () => {
    const items = await collect(searchApiReader.read(fixture("searchapi.json"), { maxLineBytes: 1000 }));
    expect(items).toHaveLength(1);
    expect(quarantined(items)[0]?.reason).toMatch(/1000/);
  });

  it("a trace whose first step failed stays a trace: a step with an error is not a bare error response", async () => {
    const path = writeTemp(
      "trace.jsonl",
      ['{"type": "search", "query": "x", "error": "HTTP 429"}', '{"type": "search", "query": "y", "results": []}'].join("\n"),
    );
    const ts = trajectories(await collect(searchApiReader.read(path, OPTIONS)));
    expect(ts).toHaveLength(1);
    expect(ts[0]?.turns.map((turn) => turn.observation)).toEqual(["HTTP 429", "[]"]);
  });

  it("an error body in a JSON array takes the API of the element before it", async () => {
    const tavily = JSON.parse(readFileSync(fixture("tavily.json"), "utf8"));
    const ts = trajectories(
      await collect(searchApiReader.read(writeTemp("a.json", JSON.stringify([tavily, { error: "rate limited" }])), OPTIONS)),
    );
    expect(ts.map((t) => [t.meta?.search_api, t.turns[0]?.meta?.error])).toEqual([
      ["tavily", undefined],
      ["tavily", "rate limited"],
    ]);
  });
});

describe("search-api reader: detection", () => {
  const own = readdirSync(DIR).filter((name) => !name.endsWith(".md"));
  const position = READERS.indexOf(searchApiReader);

  it("its sniff claims every hand-made response file; errors.jsonl is detected by the vote of its later lines", async () => {
    expect(position).toBeGreaterThan(-1);
    for (const name of own) {
      const head = await readHead(fixture(name));
      const detection = detectFromHead(head, fixture(name));
      expect([name, detection.kind === "format" && detection.reader.name]).toEqual([name, "search-api"]);
      // errors.jsonl starts with a bare {"error": …}, which names no API: that line alone is not claimed.
      expect([name, searchApiReader.sniff(head, fixture(name))]).toEqual([name, name !== "errors.jsonl"]);
    }
  });

  it("no reader before it in READERS claims any of its fixtures or the real samples", async () => {
    const samples = ["bing", "searchapi", "serply", "serpstack"].map((api) => thirdParty(`formats-2026/search/open-webui__${api}.json`));
    const files = [...own.map(fixture), ...samples.filter((path) => statSync(path, { throwIfNoEntry: false }))];
    for (const file of files) {
      const head = await readHead(file);
      expect([
        file,
        READERS.slice(0, position)
          .filter((reader) => reader.sniff(head, file))
          .map((r) => r.name),
      ]).toEqual([file, []]);
    }
  });

  it("claims no other hand-made fixture or demo file except the project's search recordings", async () => {
    const roots = [join(ROOT, "data/demo"), join(ROOT, "test/fixtures/handmade")];
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (!entry.name.endsWith(".md")) files.push(path);
      }
    };
    for (const root of roots) walk(root);
    const others = files.filter((file) => !file.startsWith(`${DIR}/`) && !file.startsWith(join(ROOT, "data/demo/search/")));
    expect(others.length).toBeGreaterThan(20);
    const claimed = [];
    for (const file of others) if (searchApiReader.sniff(await readHead(file), file)) claimed.push(file);
    expect(claimed).toEqual([]);
  });

  it("a response longer than the 64 KiB head is still detected from the keys near its start, for every API", async () => {
    const filler = Array.from({ length: 400 }, (_, i) => ({
      title: `result ${i}`,
      url: `https://r${i}.example/`,
      content: "x".repeat(200),
    }));
    for (const file of own.filter((name) => name.endsWith(".json") && name !== "serply.json")) {
      const value = JSON.parse(readFileSync(fixture(file), "utf8"));
      const big = JSON.stringify({ ...value, zz_padding: filler }, null, 2);
      expect(big.length).toBeGreaterThan(64 << 10);
      const path = writeTemp(file, big);
      const head = await readHead(path);
      expect(head.length).toBeLessThan(big.length);
      expect([file, searchApiReader.sniff(head, path)]).toEqual([file, true]);
      const t = await readOne(path);
      expect([file, t.meta?.search_api]).toEqual([file, (RESPONSES.find(([name]) => name === file) ?? [])[2]?.search_api]);
    }
  });
});

describeThirdParty("search-api reader: the real samples of other search APIs (formats-2026/search)", () => {
  const sample = (api: string) => thirdParty(`formats-2026/search/open-webui__${api}.json`);

  it("open-webui__bing.json: Bing v7, query from queryContext.originalQuery", async () => {
    const t = await readOne(sample("bing"));
    expect(t.id).toMatch(/^open-webui__bing-[0-9a-f]{12}$/);
    expect([t.turns[0]?.action, t.meta, t.turns[0]?.meta]).toEqual([
      call("web_search", { query: "Top 10 international results" }),
      { search_api: "bing" },
      { endpoint: "SearchResponse" },
    ]);
    // The file is tab-indented: the observation is the same JSON at 2 spaces, keys in file order.
    expect(t.turns[0]?.observation).toBe(JSON.stringify(JSON.parse(readFileSync(sample("bing"), "utf8")), null, 2));
    // "value"[0].name, line 12 of the sample
    expect(JSON.parse(t.turns[0]?.observation ?? "").webPages.value[0].name).toBe(
      "2024 Mexican Grand Prix - F1 results and latest standings ... - PlanetF1",
    );
  });

  it("open-webui__searchapi.json: SearchApi.io, query from search_parameters.q; its base64 images elided by the normalizer", async () => {
    const raw = readFileSync(sample("searchapi"), "utf8");
    const t = await readOne(sample("searchapi"));
    expect([t.turns[0]?.action, t.meta, t.turns[0]?.meta]).toEqual([
      call("web_search", { query: "chatgpt" }),
      { search_api: "searchapi" },
      { endpoint: "google" },
    ]);
    expect(t.turns[0]?.observation).toBe(JSON.stringify(JSON.parse(raw), null, 2));
    const { observation, counters } = await normalized(t);
    // 14 data:image URIs hold 39,513 of the file's 53,301 bytes (grep -o '"data:image[^"]*"').
    expect(counters["search.data_uris_elided"]).toBe(14);
    expect(observation.length).toBeLessThan(16000);
    expect(observation).not.toMatch(/base64,[A-Za-z0-9+/]{101}/);
    const response = JSON.parse(observation);
    expect(response.organic_results[0]).toMatchObject({ position: 1, title: "ChatGPT | OpenAI", link: "https://openai.com/chatgpt/" });
    expect(response.organic_results.length).toBe(JSON.parse(raw).organic_results.length);
  });

  it("open-webui__serpstack.json: serpstack, query from search_parameters.query", async () => {
    const t = await readOne(sample("serpstack"));
    expect([t.turns[0]?.action, t.meta, t.turns[0]?.meta]).toEqual([
      call("web_search", { query: "mcdonalds" }),
      { search_api: "serpstack" },
      { endpoint: "web" },
    ]);
    // `"title": "Our Full McDonald\u0027s Food Menu"`: the \u escape is written as the character.
    expect(t.turns[0]?.observation).toContain('"title": "Our Full McDonald\'s Food Menu"');
  });

  it("open-webui__serply.json: Serply names no query: read with read_filter search-query-unknown", async () => {
    const t = await readOne(sample("serply"));
    expect(t.turns[0]?.action).toBe(call("web_search", {}));
    expect(t.meta).toEqual({
      search_api: "serply",
      read_filter: {
        stage: "search-query-unknown",
        reason: "the serply response does not record the query it answers, so the call that produced it is unknown",
      },
    });
    expect(JSON.parse(t.turns[0]?.observation ?? "").results[0]).toMatchObject({
      title: "Apple",
      link: "https://www.apple.com/",
      realPosition: 1,
    });
  });

  it("Brave (search/brave/brave_web.json) still reads as before, now with meta.search_api", async () => {
    const t = await readOne(thirdParty("search/brave/brave_web.json"));
    expect([t.turns[0]?.action, t.meta, t.turns[0]?.meta]).toEqual([
      call("web_search", { query: "hello world" }),
      { search_api: "brave" },
      { endpoint: "search" },
    ]);
  });

  it("auto detection picks search-api for every sample", async () => {
    for (const path of [...["bing", "searchapi", "serply", "serpstack"].map(sample), thirdParty("search/brave/brave_web.json")]) {
      const detection = detectFromHead(await readHead(path), path);
      expect([path, detection.kind === "format" && detection.reader.name]).toEqual([path, "search-api"]);
    }
  });
});
