/**
 * Web edge cases, on accessibility-tree text (BrowserGym AXTree: `[56] dialog "Delete item?"
 * modal=True`), with raw-HTML shapes as a fallback:
 *
 * - error_page: a page title (`RootWebArea "404 Not Found"`, `"Page not found | Shop"`) or main
 *   heading that names an HTTP error (facts.status when it has a code), and browser error pages
 *   ("This site can’t be reached", `ERR_NAME_NOT_RESOLVED` → facts.net_error, "HTTP ERROR 500");
 *   one per screen: the first of these with facts (a status, a net error), else the first;
 * - modal_dialog: a `dialog` / `alertdialog` node (an `alert` node is an inline live region —
 *   a form's "Name is required." — not a modal), an HTML `<dialog open>`, `role="dialog"`,
 *   `aria-modal="true"`;
 * - empty_result: a node whose whole text says nothing matched ("No results found", "No items
 *   match.", "0 results"); a bare "No Results" placeholder (a favourites section) is not;
 * - pagination: "Showing 1–10 of 57", "Page 2 of 5" on a short line, a `navigation "Pagination"`.
 */
import type { DetectorTurn, DomainDetector } from "../control-label.ts";
import { textPagination } from "./rules/pagination.ts";
import { browserErrorPages, NODE_PREFIX, oneErrorPage } from "./rules/screens.ts";
import { type Hit, hit, matchesOf, toInt } from "./rules/spans.ts";

const REASONS =
  "Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|Request Time-?out|Gone|Too Many Requests|Internal Server Error|Not Implemented|Bad Gateway|Service (?:Temporarily )?Unavailable|Gateway Time-?out|Server Error|Error|error|Page [Nn]ot [Ff]ound|[Nn]ot [Ff]ound";
/** A page title or heading that is an error page's: a 4xx/5xx code (optionally with its reason), or an error phrase; a site name may follow a separator. */
const ERROR_NAME = new RegExp(
  `^(?:(?:Error|HTTP)[ :-]+)?(?:([45]\\d\\d)(?:[ :.-]+(?:${REASONS}))?|(?:Oops[!.,]?[ \\t]*)?(?:(?:This |That |The )?[Pp]age (?:[Nn]ot [Ff]ound|can(?:'|’)t be found|(?:does not|doesn(?:'|’)t) exist|[Uu]navailable)|Not Found|File [Nn]ot [Ff]ound|Internal Server Error|Bad Gateway|Service (?:Temporarily )?Unavailable|Gateway Time-?out|Access [Dd]enied|Forbidden|Bad Request|Unauthorized|Too Many Requests|Server Error|Application Error|Something [Ww]ent [Ww]rong|Problem loading page|Server [Nn]ot [Ff]ound|Privacy error)|Error)[.!]?[ \\t]*(?:[|–—·:-][^\\r\\n]{0,200})?$`,
);
const TITLE_OR_HEADING = new RegExp(
  `${NODE_PREFIX}(?:RootWebArea|WebArea|document|heading)[ \\t]+"((?:[^"\\\\\\r\\n]|\\\\.){1,300})"`,
  "dgm",
);
const DIALOG = new RegExp(`${NODE_PREFIX}(?:dialog|alertdialog)\\b[^\\r\\n]{0,300}`, "gm");
const HTML_DIALOG = /<dialog\b[^>]{0,300}\bopen\b[^>]{0,300}>|\brole=["'](?:alert)?dialog["']|\baria-modal=["']true["']/g;
const QUOTED_NAME = /"((?:[^"\\\r\n]|\\.){1,200})"/;
const EMPTY_NAME =
  /"((?:No (?:search )?(?:results|matches|items|records|documents|entries|products|hits)(?: were)? (?:found|match(?:ed|es)?|to (?:show|display))|0 (?:results|matches)(?: found)?|Your search[^"\r\n]{0,200}? did not match any (?:documents|results))[^"\r\n]{0,80})"/g;
const PAGINATION_NAV = new RegExp(`${NODE_PREFIX}navigation[ \\t]+"(?:[Pp]agination|[Pp]ages|[Pp]age navigation)"`, "gm");

/** Error pages named by their title or main heading. */
export function errorTitles(text: string): Hit[] {
  const out: Hit[] = [];
  for (const m of matchesOf(TITLE_OR_HEADING, text, 8)) {
    const name = m[1] ?? "";
    const error = ERROR_NAME.exec(name);
    const span = m.indices?.[1];
    if (!error || !span) continue;
    out.push(hit("error_page", text, span[0], span[1], error[1] ? { status: toInt(error[1]) } : undefined));
  }
  return out;
}

/** Dialog nodes (`dialog`, `alertdialog`) and HTML dialogs; facts.title from the node's name. */
export function webDialogs(text: string): Hit[] {
  const out: Hit[] = [];
  if (/dialog/.test(text)) {
    for (const m of matchesOf(DIALOG, text)) {
      const name = QUOTED_NAME.exec(m[0]);
      out.push(hit("modal_dialog", text, m.index, m.index + m[0].length, name?.[1] ? { title: name[1] } : undefined));
    }
  }
  if (/dialog|aria-modal/.test(text))
    for (const m of matchesOf(HTML_DIALOG, text)) out.push(hit("modal_dialog", text, m.index, m.index + m[0].length));
  return out;
}

export function emptyNames(text: string): Hit[] {
  const out: Hit[] = [];
  for (const m of matchesOf(EMPTY_NAME, text)) out.push(hit("empty_result", text, m.index + 1, m.index + m[0].length - 1));
  return out;
}

/**
 * Actions that only talk to the user (BrowserGym `send_msg_to_user(…)`, `report_infeasible(…)`,
 * WebArena `stop [answer]`): the page does not change, so the screen after them is the previous
 * screen again and shows no edge case of its own (a "No items match." already there is not a
 * second empty result).
 */
export const USER_MESSAGE_ACTION = /^\s*(?:send_msg_to_user|report_infeasible|answer)\s*\(|^\s*stop\b/;

export const webDetector: DomainDetector = {
  domain: "web",
  detect(turn: DetectorTurn) {
    if (USER_MESSAGE_ACTION.test(turn.action)) return [];
    const text = turn.observation;
    const out: Hit[] = [
      ...errorTitles(text),
      ...browserErrorPages(text),
      ...webDialogs(text),
      ...emptyNames(text),
      ...textPagination(text),
    ];
    for (const m of matchesOf(PAGINATION_NAV, text, 1)) out.push(hit("pagination", text, m.index, m.index + m[0].length));
    return oneErrorPage(out);
  },
};
