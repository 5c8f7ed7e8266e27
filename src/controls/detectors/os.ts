/**
 * Desktop (OS) edge cases, on accessibility trees (AT-SPI: `dialog "Save As" st:modal …`; the
 * linearized table; macOS AX roles). Only node roles and node names are read, never a node's
 * `text=` content (a document that says "server is not responding" is a document):
 *
 * - modal_dialog: a `dialog` / `alert` (GTK message dialogs) / `file-chooser` node, a node with
 *   the `st:modal` state, macOS `AXSheet` / `AXDialog` (facts.title from the name) — unless the
 *   dialog is one of the three below, whose label says more (as on Android);
 * - app_not_responding: a name saying "“X” is not responding" or a window title with "(Not
 *   Responding)";
 * - app_crash: "X quit unexpectedly", "X has stopped working", "Oops! Something went wrong",
 *   "… has experienced an internal error";
 * - permission_prompt: "“X” would like to access …", "… wants to make changes", "Do you want to
 *   allow this app to make changes to your device?", polkit's "Authentication Required";
 * - error_page: a browser's error page shown on the desktop ("This site can’t be reached").
 */
import type { ControlLabelName, DetectorTurn, DomainDetector } from "../control-label.ts";
import { browserErrorPages, NODE_PREFIX, oneErrorPage } from "./rules/screens.ts";
import { type Hit, hit, matchesOf } from "./rules/spans.ts";

const DIALOG = new RegExp(
  `${NODE_PREFIX}(?:dialog|alert|file-chooser|file chooser|color-chooser|font-chooser|AXSheet|AXDialog|AXSystemDialog)\\b[^\\r\\n]{0,300}`,
  "gm",
);
const MODAL_STATE = /^[^\r\n]{0,300}\bst:modal\b[^\r\n]{0,300}/gm;
const NODE_NAME = new RegExp(`${NODE_PREFIX}[\\w:-]{1,40}[ \\t]+"((?:[^"\\\\\\r\\n]|\\\\.){1,300})"`, "dgm");
const QUOTED = /"((?:[^"\\\r\n]|\\.){1,200})"/;

const NAME_RULES: [ControlLabelName, RegExp][] = [
  ["app_not_responding", /^(?:[“"']?([^“”"']{1,80}?)[”"']? (?:is not|isn(?:'|’)t) responding\b|[^\r\n]{0,200}\(Not Responding\))/],
  [
    "app_crash",
    /\b(?:quit unexpectedly|has stopped working|Oops! Something went wrong|has experienced an internal error|unexpectedly quit)\b/,
  ],
  [
    "permission_prompt",
    /\b(?:would like to (?:access|control|record|receive|use|send|find)|wants to (?:make changes|use your confidential information|access)|Do you want to allow this app to make changes|Authentication (?:Required|is required))\b/,
  ],
];

export function osHits(text: string): Hit[] {
  const out: Hit[] = [];
  if (
    /responding|Responding|unexpectedly|stopped working|went wrong|internal error|would like to|wants to|allow this app|Authentication/.test(
      text,
    )
  ) {
    for (const m of matchesOf(NODE_NAME, text, 64)) {
      const span = m.indices?.[1];
      const name = m[1] ?? "";
      if (!span) continue;
      for (const [label, re] of NAME_RULES) {
        const found = re.exec(name);
        if (!found) continue;
        const app = label === "app_not_responding" ? found[1] : undefined;
        out.push(hit(label, text, span[0], span[1], app ? { app } : undefined));
      }
    }
  }
  const specific = out.length > 0;
  out.push(...browserErrorPages(text));
  if (specific) return out;
  for (const re of [DIALOG, MODAL_STATE]) {
    for (const m of matchesOf(re, text, 4)) {
      const name = QUOTED.exec(m[0]);
      out.push(hit("modal_dialog", text, m.index, m.index + m[0].length, name?.[1] ? { title: name[1] } : undefined));
    }
  }
  return out;
}

export const osDetector: DomainDetector = {
  domain: "os",
  detect(turn: DetectorTurn) {
    return oneErrorPage(osHits(turn.observation));
  },
};
