/** Screens (web, os, android): a tree node's line prefix and the browser error pages accessibility-tree text shows. */
import { type Facts, type Hit, hit, matchesOf, toInt } from "./spans.ts";

/** A tree node's role at the start of its line, after its indentation and an optional `[bid]`. */
export const NODE_PREFIX = "^[ \\t]*(?:\\[[^\\]\\r\\n]{0,40}\\][ \\t]+)?";

/** Browser error pages as their text shows (Chrome, Firefox, Android WebView), as a node's whole quoted name. */
const BROWSER_ERROR_TEXT =
  /"((?:This site can(?:'|’)t be reached|This site can(?:'|’)t provide a secure connection|This page isn(?:'|’)t working|This page isn(?:'|’)t available|Hmm\. We(?:'|’)re having trouble finding that site\.?|Unable to connect|Problem loading page|Server [Nn]ot [Ff]ound|Secure Connection Failed|Your connection is not private|Webpage not available|Web page not available|You(?:'|’)re offline|No internet|[^"\r\n]{1,80} refused to connect\.?|[^"\r\n]{1,80} took too long to respond\.?)|HTTP ERROR (\d{3})|(?:net::)?(ERR_[A-Z][A-Z_]{2,60}|DNS_PROBE_[A-Z_]{2,60}))"/g;

/** A screen shows one error page: of several hits (a title and its heading, a phrase and its ERR_ code), the first with facts, else the first. */
export function oneErrorPage(hits: Hit[]): Hit[] {
  const pages = hits.filter((h) => h.label === "error_page");
  if (pages.length <= 1) return hits;
  const chosen = pages.find((h) => h.facts !== undefined) ?? pages.reduce((a, b) => (b.start < a.start ? b : a));
  return hits.filter((h) => h.label !== "error_page" || h === chosen);
}

/** Browser error pages shown in a tree: facts net_error (ERR_…) or status (HTTP ERROR 500). */
export function browserErrorPages(text: string): Hit[] {
  if (
    !/can(?:'|’)t|isn(?:'|’)t|trouble|Unable|Problem|Not Found|not found|Failed|not private|not available|offline|internet|refused|too long|ERROR|ERR_|DNS_/.test(
      text,
    )
  )
    return [];
  const out: Hit[] = [];
  for (const m of matchesOf(BROWSER_ERROR_TEXT, text)) {
    const facts: Facts = {};
    if (m[2]) facts.status = toInt(m[2]);
    if (m[3]) facts.net_error = m[3];
    out.push(hit("error_page", text, m.index + 1, m.index + m[0].length - 1, facts));
  }
  return out;
}
