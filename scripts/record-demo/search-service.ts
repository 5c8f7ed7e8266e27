/**
 * The demo's local search service: an HTTP server on 127.0.0.1 that ranks the bundled documents
 * with MiniSearch (BM25+, fixed options) and answers
 *
 *   GET /res/v1/web/search?q=…&count=…   a Brave Search API web-search response (JSON)
 *   GET /extract?url=…                    the page's text (text/plain), 404 for an unknown url
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import MiniSearch from "minisearch";
import { type Hit, webSearchResponse } from "./search-brave.ts";
import type { SearchDocument } from "./search-docs.ts";

/** Words too common to rank on; without this every English query matches every page. */
const STOP_WORDS = new Set(
  "a an and are as at be by can do does for from how i if in is it its my of on or so that the this to was what when why with you your".split(
    " ",
  ),
);

const DEFAULT_COUNT = 20;
const MAX_COUNT = 20;

export function buildIndex(documents: SearchDocument[]): MiniSearch<SearchDocument> {
  const index = new MiniSearch<SearchDocument>({
    fields: ["title", "body"],
    storeFields: [],
    processTerm: (term) => {
      const word = term.toLowerCase();
      return STOP_WORDS.has(word) ? null : word;
    },
    // Exact words only, title words count double: the ranking is BM25+ with MiniSearch's defaults.
    searchOptions: { boost: { title: 2 }, prefix: false, fuzzy: false, combineWith: "OR" },
  });
  index.addAll(documents);
  return index;
}

/** Ranked hits for a query: by score, then by document id, so equal scores keep one order. */
export function rank(index: MiniSearch<SearchDocument>, byId: Map<string, SearchDocument>, query: string): Hit[] {
  return index
    .search(query)
    .sort((a, b) => b.score - a.score || String(a.id).localeCompare(String(b.id)))
    .map((result) => ({ document: byId.get(result.id) as SearchDocument, terms: result.terms }));
}

/** Starts the service on an ephemeral port; resolves with its base URL and the server (to close). */
export async function startSearchService(documents: SearchDocument[]): Promise<{ baseUrl: string; server: Server }> {
  const index = buildIndex(documents);
  const byId = new Map(documents.map((d) => [d.id, d]));
  const byUrl = new Map(documents.map((d) => [d.url, d]));
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { "content-type": `${type}; charset=utf-8` });
      response.end(body);
    };
    if (request.method !== "GET") return send(405, "text/plain", "405 Method Not Allowed\n");
    if (url.pathname === "/res/v1/web/search") {
      const query = url.searchParams.get("q") ?? "";
      if (query.trim() === "") return send(422, "application/json", JSON.stringify({ type: "ErrorResponse", error: "q is required" }));
      const count = Math.min(MAX_COUNT, Math.max(1, Number(url.searchParams.get("count") ?? DEFAULT_COUNT) || DEFAULT_COUNT));
      const hits = rank(index, byId, query);
      return send(200, "application/json", JSON.stringify(webSearchResponse(query, hits.slice(0, count), hits.length > count)));
    }
    if (url.pathname === "/extract") {
      const page = byUrl.get(url.searchParams.get("url") ?? "");
      if (!page) return send(404, "text/plain", "404 Not Found\n");
      return send(200, "text/plain", `# ${page.title}\n\n${page.body}\n`);
    }
    send(404, "text/plain", "404 Not Found\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, server };
}
