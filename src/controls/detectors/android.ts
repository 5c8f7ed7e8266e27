/**
 * Android edge cases, on the normalized view hierarchy (uiautomator dump, DroidBot state:
 * `android.widget.TextView "Quick Notes isn't responding" resource-id=android:id/alertTitle …`).
 * The system's dialogs are told apart from an app's own text by where the text sits: the
 * framework's dialog ids (`android:id/alertTitle`, `android:id/message`, the `aerr_*` buttons of
 * the crash/ANR dialogs) and the permission controller's package — a note titled "The music has
 * stopped" is not a crash.
 *
 * - app_not_responding: "X isn't responding" / "X is not responding" / "Application Not
 *   Responding" in the system dialog (facts.app);
 * - app_crash: "X has stopped", "X keeps stopping", "Unfortunately, X has stopped." (facts.app);
 * - permission_prompt: "Allow X to …?" from the permission controller (facts.app, facts.permission:
 *   what X asks to do);
 * - modal_dialog: any other AlertDialog (`…:id/alertTitle`, `…:id/parentPanel`, framework or AppCompat), or a
 *   top-level window inset from the screen's edges that holds a Button (an overlay pop-up);
 * - error_page: a WebView's error page ("Webpage not available", `net::ERR_…`).
 */
import type { DetectorTurn, DomainDetector } from "../control-label.ts";
import { browserErrorPages, oneErrorPage } from "./rules/screens.ts";
import { type Facts, type Hit, hit, lineEndAt, lineStartAt, matchesOf } from "./rules/spans.ts";

const SYSTEM_DIALOG_LINE = /resource-id=android:id\/(?:alertTitle|message)\b|package=android\b/;
const ERROR_DIALOG_IDS = /android:id\/aerr_/;
const ANR =
  /"((?:Application [Nn]ot [Rr]esponding(?::[ \t]*([^"\r\n]{1,100}))?|([^"\r\n]{1,100}?) (?:isn(?:'|’)t|is not) responding)[^"\r\n]{0,100})"/g;
const CRASH = /"((?:Unfortunately, )?([^"\r\n]{1,100}?) (?:has stopped working|has stopped|keeps stopping|has crashed)[^"\r\n]{0,60})"/g;
const PERMISSION = /"(Allow ([^"\r\n]{1,80}?) to ([^"\r\n]{1,200}?)\?)"/g;
const PERMISSION_CONTEXT = /permissioncontroller|packageinstaller|permission_message|grant_dialog/;
const ALERT_NODE = /^[ \t]*\S+[^\r\n]{0,600}?resource-id=[\w.]{1,100}:id\/(?:alertTitle|parentPanel|topPanel)\b[^\r\n]{0,300}/gm;
const ALERT_TITLE = /^[ \t]*\S+[ \t]+"((?:[^"\\\r\n]|\\.){1,200})"[^\r\n]{0,300}?resource-id=[\w.]{1,100}:id\/alertTitle\b/m;
const TOP_LEVEL_WINDOW = /^ {2}(?! )\S+[^\r\n]{0,600}?bounds=\[(\d+),(\d+)\]\[(\d+),(\d+)\][^\r\n]{0,200}/gm;

/** A system dialog's text: on a framework dialog line, or in a tree that has the crash/ANR dialog's buttons. */
function inSystemDialog(text: string, index: number, hasErrorDialog: boolean): boolean {
  if (hasErrorDialog) return true;
  return SYSTEM_DIALOG_LINE.test(text.slice(lineStartAt(text, index), lineEndAt(text, index)));
}

/** Top-level windows inset from the screen edges that hold a Button: dialogs and overlay pop-ups. */
function insetWindows(text: string): Hit[] {
  const out: Hit[] = [];
  for (const m of matchesOf(TOP_LEVEL_WINDOW, text, 8)) {
    const x1 = Number(m[1]);
    const y1 = Number(m[2]);
    if (x1 < 16 || y1 < 16) continue;
    // the window's subtree: the following lines indented deeper than two spaces
    const subtreeEnd = text.slice(m.index + m[0].length).search(/\n {0,2}(?! )\S/);
    const subtree = text.slice(m.index, subtreeEnd === -1 ? text.length : m.index + m[0].length + subtreeEnd);
    if (!/\bandroid\.widget\.Button\b/.test(subtree)) continue;
    out.push(hit("modal_dialog", text, m.index, m.index + m[0].length));
  }
  return out;
}

export function androidHits(text: string): Hit[] {
  const out: Hit[] = [];
  const hasErrorDialog = ERROR_DIALOG_IDS.test(text);
  const quoted = (
    label: "app_not_responding" | "app_crash" | "permission_prompt",
    m: RegExpExecArray,
    app: string | undefined,
    extra?: Facts,
  ): void => {
    const facts: Facts = { ...extra };
    if (app) facts.app = app.replace(/^Unfortunately, /, "").trim();
    out.push(hit(label, text, m.index + 1, m.index + m[0].length - 1, facts));
  };
  if (/responding/i.test(text))
    for (const m of matchesOf(ANR, text, 4))
      if (inSystemDialog(text, m.index, hasErrorDialog)) quoted("app_not_responding", m, m[2] ?? m[3]);
  if (/stopp|crashed/.test(text))
    for (const m of matchesOf(CRASH, text, 4)) if (inSystemDialog(text, m.index, hasErrorDialog)) quoted("app_crash", m, m[2]);
  if (text.includes("Allow ") && PERMISSION_CONTEXT.test(text))
    for (const m of matchesOf(PERMISSION, text, 4)) quoted("permission_prompt", m, m[2], m[3] ? { permission: m[3] } : undefined);
  out.push(...browserErrorPages(text));
  if (out.some((h) => h.label !== "error_page")) return out;
  if (/:id\/(?:alertTitle|parentPanel|topPanel)\b/.test(text)) {
    const title = ALERT_TITLE.exec(text);
    if (title?.[1] !== undefined) {
      const at = title.index + title[0].indexOf('"') + 1;
      out.push(hit("modal_dialog", text, at, at + title[1].length, { title: title[1] }));
    } else for (const m of matchesOf(ALERT_NODE, text, 1)) out.push(hit("modal_dialog", text, m.index, m.index + m[0].length));
  }
  if (!out.some((h) => h.label === "modal_dialog")) out.push(...insetWindows(text));
  return out;
}

export const androidDetector: DomainDetector = {
  domain: "android",
  detect(turn: DetectorTurn) {
    return oneErrorPage(androidHits(turn.observation));
  },
};
