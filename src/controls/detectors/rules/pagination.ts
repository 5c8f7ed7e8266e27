/**
 * Pagination (JSON cursors, has-more flags and next links, Link headers, "Page 2 of 5") and empty
 * results (`[]`, `"results": []`, "No results found").
 */
import { type Facts, type Hit, hit, lineEndAt, lineStartAt, matchesOf, toInt, trimSpan } from "./spans.ts";

const JSON_CURSOR =
  /\\?"(next_?[Cc]ursor|nextcursor|next_?page_?token|nextPageToken|next_?token|nextToken|cursor_?next)\\?"[ \t]*:[ \t]*(?:\\?"([^"\\\r\n]{1,200})\\?"|(\d+))/g;
const JSON_MORE =
  /\\?"(?:has_?more|hasMore|has_?next(?:_?page)?|hasNext(?:Page)?|more_results_available|moreResultsAvailable|is_?truncated|isTruncated|IsTruncated)\\?"[ \t]*:[ \t]*true\b/g;
const JSON_NEXT_LINK =
  /\\?"(?:next|next_?page(?:_?url)?|nextPage(?:Url)?|next_?url|nextUrl|next_?link|nextLink|@odata\.nextLink)\\?"[ \t]*:[ \t]*\\?"(?:https?:\/\/|\/|\?)[^"\\\r\n]{0,300}\\?"/g;
const JSON_NEXT_PAGE = /\\?"(?:next_?page|nextPage)\\?"[ \t]*:[ \t]*(?:\d+|\[)/g;
const JSON_PAGE = /\\?"(?:page|current_?page|currentPage|page_?number|pageNumber|pageIndex)\\?"[ \t]*:[ \t]*(\d+)/g;
const JSON_PAGE_SIZE = /\\?"(?:per_?page|perPage|page_?size|pageSize|limit)\\?"[ \t]*:[ \t]*(\d+)/;
const JSON_TOTAL_PAGES = /\\?"(?:total_?pages|totalPages|page_?count|pageCount|last_?page|lastPage)\\?"[ \t]*:[ \t]*(\d+)/;
const JSON_TOTAL = /\\?"(?:total|total_?count|totalCount|total_?results|totalResults|total_?items|totalItems)\\?"[ \t]*:[ \t]*(\d+)/;
const LINK_NEXT = /^[ \t]*(?:< )?[Ll]ink:[^\r\n]{0,1000}?rel="?next"?[^\r\n]{0,300}/gm;
const PAGINATION_GATE = /cursor|Cursor|[Mm]ore|[Nn]ext|page|Page|[Tt]runcated|rel=/;

/** Pagination in JSON responses and HTTP Link headers: cursors, has-more flags, next links, page/page-size members. */
export function jsonPagination(text: string): Hit[] {
  if (!PAGINATION_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(JSON_CURSOR, text))
    out.push(hit("pagination", text, m.index, m.index + m[0].length, { cursor: m[2] ?? m[3] ?? "" }));
  for (const re of [JSON_MORE, JSON_NEXT_LINK, JSON_NEXT_PAGE, LINK_NEXT])
    for (const m of matchesOf(re, text)) out.push(hit("pagination", text, m.index, m.index + m[0].length));
  for (const m of matchesOf(JSON_PAGE, text, 4)) {
    const from = Math.max(0, m.index - 400);
    const window = text.slice(from, m.index + m[0].length + 400);
    const spans: [number, number][] = [[m.index, m.index + m[0].length]];
    const facts: Facts = { page: toInt(m[1] ?? "0") };
    const size = JSON_PAGE_SIZE.exec(window);
    const pages = JSON_TOTAL_PAGES.exec(window);
    if (!size && !pages) continue;
    if (size) {
      facts.page_size = toInt(size[1] ?? "0");
      spans.push([from + size.index, from + size.index + size[0].length]);
    }
    if (pages) {
      facts.total_pages = toInt(pages[1] ?? "0");
      spans.push([from + pages.index, from + pages.index + pages[0].length]);
      if (facts.total_pages <= 1) continue;
    }
    const total = JSON_TOTAL.exec(window);
    if (total) {
      facts.total = toInt(total[1] ?? "0");
      spans.push([from + total.index, from + total.index + total[0].length]);
    }
    out.push(hit("pagination", text, Math.min(...spans.map((s) => s[0])), Math.max(...spans.map((s) => s[1])), facts));
  }
  return out;
}

const SHOWING =
  /\b(?:Showing|Displaying|Viewing|Results|Items|Entries|Rows|Records)(?: (?:results|items|entries|rows|records))?:? (\d[\d,]{0,12}) ?(?:-|–|—|to) ?(\d[\d,]{0,12}) of (?:about |approximately |~ ?)?(\d[\d,]{0,15})/gi;
const PAGE_OF = /\bPage (\d{1,6}) ?(?:of|\/) ?(\d{1,6})\b/gi;
/** A pagination phrase counts only on a short line (a pager, a status bar), not inside prose. */
const MAX_PAGER_LINE = 160;

/** "Showing 1–10 of 57", "Results 11 - 20 of about 300", "Page 2 of 5": facts page_size/total or page/total_pages; one page of one is not pagination. */
export function textPagination(text: string): Hit[] {
  if (!/of/.test(text)) return [];
  const out: Hit[] = [];
  const short = (index: number): boolean => lineEndAt(text, index) - lineStartAt(text, index) <= MAX_PAGER_LINE;
  for (const m of matchesOf(SHOWING, text)) {
    if (!short(m.index)) continue;
    const first = toInt(m[1] ?? "0");
    const last = toInt(m[2] ?? "0");
    const total = toInt(m[3] ?? "0");
    if (last < first || last >= total) continue;
    out.push(hit("pagination", text, m.index, m.index + m[0].length, { first, last, page_size: last - first + 1, total }));
  }
  for (const m of matchesOf(PAGE_OF, text)) {
    if (!short(m.index)) continue;
    const page = toInt(m[1] ?? "0");
    const pages = toInt(m[2] ?? "0");
    if (pages <= 1 || page > pages || page < 1) continue;
    out.push(hit("pagination", text, m.index, m.index + m[0].length, { page, total_pages: pages }));
  }
  return out;
}

const COLLECTION_KEYS = [
  "results",
  "items",
  "data",
  "hits",
  "documents",
  "docs",
  "matches",
  "entries",
  "records",
  "organic",
  "organic_results",
  "web_results",
  "value",
  "tools",
  "resources",
  "resourceTemplates",
  "prompts",
  "content",
  "contents",
  "files",
  "rows",
];
/** MCP's content wrappers: a `content` list that carries the (empty) answer is not itself a result with items. */
const WRAPPER_KEYS = new Set(["content", "contents"]);
const EMPTY_COLLECTION = new RegExp(`\\\\?"(${COLLECTION_KEYS.join("|")})\\\\?"[ \\t]*:[ \\t]*\\[\\s*\\]`, "g");
const NON_EMPTY_COLLECTION = new Map(COLLECTION_KEYS.map((key) => [key, new RegExp(`\\\\?"${key}\\\\?"[ \\t]*:[ \\t]*\\[\\s*[^\\s\\]]`)]));

const EMPTY_PHRASE =
  'No (?:search )?(?:results|matches|items|records|documents|entries|hits|products)(?: were)? (?:found|returned|match(?:ed|es)?|to (?:show|display))\\b[^\\r\\n"]{0,120}|0 (?:results|matches|hits)(?: (?:found|returned))?\\b[^\\r\\n"]{0,80}|Your search[^\\r\\n"]{0,200}? did not match any (?:documents|results)[^\\r\\n"]{0,40}|No matches found for [^\\r\\n"]{1,300}|Found 0 matches\\b[^\\r\\n"]{0,200}';
const EMPTY_LINE = new RegExp(`^[ \\t]*(?:[\\w.-]{1,40}:[ \\t]*)?(?:${EMPTY_PHRASE})`, "gm");
const EMPTY_VALUE = new RegExp(`\\\\?"(?:text|message|result|output)\\\\?"[ \\t]*:[ \\t]*\\\\?"(?:${EMPTY_PHRASE})`, "g");
const EMPTY_GATE = /\[\s*\]|No |0 (?:results|matches|hits)|did not match|Found 0/;

/**
 * Empty results: a response that is `[]`, a result collection that is `[]` while no result
 * collection of the response has items (`"results": []`, MCP `"tools": []`; MCP's `content`
 * wrapper aside), or "No results found"-style messages at a line start or starting a text value.
 */
export function emptyResults(text: string): Hit[] {
  if (!EMPTY_GATE.test(text)) return [];
  const out: Hit[] = [];
  const [s, e] = trimSpan(text, 0, text.length);
  if (e - s >= 2 && text[s] === "[" && text[e - 1] === "]" && text.slice(s + 1, e - 1).trim() === "")
    return [hit("empty_result", text, s, e)];
  let others: boolean | undefined;
  for (const m of matchesOf(EMPTY_COLLECTION, text)) {
    others ??= [...NON_EMPTY_COLLECTION].some(([key, re]) => !WRAPPER_KEYS.has(key) && re.test(text));
    if (others || NON_EMPTY_COLLECTION.get(m[1] ?? "")?.test(text)) continue;
    out.push(hit("empty_result", text, m.index, m.index + m[0].length));
  }
  for (const m of matchesOf(EMPTY_LINE, text)) out.push(hit("empty_result", text, m.index, m.index + m[0].length));
  for (const m of matchesOf(EMPTY_VALUE, text)) {
    const quote = m[0].indexOf(":");
    const open = m[0].indexOf('"', quote);
    out.push(hit("empty_result", text, m.index + open + 1, m.index + m[0].length));
  }
  return out;
}
