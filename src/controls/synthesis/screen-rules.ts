/**
 * Rule-based counterfactual observations for screens (issue 37 item 1): the screen after the
 * action, as its observation format writes it, with a system dialog on top. The screen itself is
 * kept line for line (a dialog covers it; it does not change it), the dialog's nodes are appended
 * as a top-level window, in the format's own node syntax:
 *
 * A step that only messages the user changes no screen, so nothing is synthesized for it.
 *
 * - web (BrowserGym AXTree): a `dialog "…" modal=True` node with its text and button, bids after
 *   the page's largest; or, for a turn that loaded a new page, the server's error page for its URL
 *   (`RootWebArea "503 Service Unavailable"`);
 * - android (view hierarchy): the framework's ANR dialog (`android:id/alertTitle`, `aerr_*`
 *   buttons), named after the foreground package (its last segment: the tree holds no app label);
 * - os (AT-SPI): a modal `dialog` node, and GNOME Shell's "“app” is not responding." dialog for
 *   the application the tree shows.
 */
import { USER_MESSAGE_ACTION } from "../detectors/web.ts";
import type { SynthesisRule } from "./synthesis-rule.ts";

/** Fixed wordings, one picked by the turn's index so a trajectory's synthesized turns vary. */
/** Pop-ups a site can raise after any action (not ones tied to a specific action, like "Leave site?" on navigation). */
const WEB_DIALOGS: readonly [string, string][] = [
  ["Session expired", "Your session has expired. Sign in again to continue."],
  ["Stay in the loop", "Subscribe to our newsletter for product updates."],
  ["Are you still there?", "You have been inactive for a while."],
];

const pick = <T>(list: readonly T[], index: number): T => list[index % list.length] as T;

/** The AXTree's root line (`RootWebArea "Title" focused url=…`), or undefined. */
const WEB_ROOT = /^RootWebArea "(?:[^"\\\r\n]|\\.){0,300}"[^\r\n]*$/m;
const WEB_URL = /\burl=(\S{1,2000})/;

function nextBid(tree: string): number {
  let max = 0;
  for (const m of tree.matchAll(/\[(\d{1,9})\]/g)) max = Math.max(max, Number(m[1]));
  return max + 1;
}

const webModal: SynthesisRule = {
  name: "web-modal-dialog",
  kind: "modal_dialog",
  observe(turn) {
    if (USER_MESSAGE_ACTION.test(turn.action) || !WEB_ROOT.test(turn.observation)) return undefined;
    const [title, text] = pick(WEB_DIALOGS, turn.index);
    const bid = nextBid(turn.observation);
    const dialog = [`  [${bid}] dialog "${title}" modal=True`, `    StaticText "${text}"`, `    [${bid + 1}] button "OK"`].join("\n");
    return `${turn.observation.replace(/\s+$/, "")}\n${dialog}`;
  },
};

/** A URL without its fragment: what a browser requests from the server. */
const withoutFragment = (url: string): string => url.replace(/#.*$/, "");

/**
 * The server fails the page load: only on a turn that loaded another page (its URL differs from
 * the previous screen's beyond the fragment). A fill, a click that opens a menu, or a single-page
 * app's `#/route` change requests no page, so no error page could come back for it.
 */
const webErrorPage: SynthesisRule = {
  name: "web-error-page-503",
  kind: "error_page",
  observe(turn) {
    if (USER_MESSAGE_ACTION.test(turn.action)) return undefined;
    const root = WEB_ROOT.exec(turn.observation);
    const url = root ? WEB_URL.exec(root[0])?.[1] : undefined;
    const previousRoot = turn.previousObservation === undefined ? undefined : WEB_ROOT.exec(turn.previousObservation);
    const previousUrl = previousRoot ? WEB_URL.exec(previousRoot[0])?.[1] : undefined;
    if (url === undefined || previousUrl === undefined || withoutFragment(url) === withoutFragment(previousUrl)) return undefined;
    return `RootWebArea "503 Service Unavailable" focused url=${url}\n  [${nextBid(turn.observation)}] heading "503 Service Unavailable"`;
  },
};

export const WEB_RULES: readonly SynthesisRule[] = [webModal, webErrorPage];

// ---------------------------------------------------------------------------------------------
// Android

/** The app in front: the hierarchy's foreground activity, else the first non-system package. */
function foregroundPackage(tree: string): string | undefined {
  const activity = /foreground_activity=([\w.]{1,200})\//.exec(tree);
  if (activity) return activity[1];
  for (const m of tree.matchAll(/\bpackage=([\w.]{1,200})/g)) if (!/^(?:android|com\.android\.systemui)$/.test(m[1] ?? "")) return m[1];
  return undefined;
}

/** A label for a package when the tree shows none: its last segment, capitalized (`org.example.quicknotes` → `Quicknotes`). */
export function packageLabel(pkg: string): string {
  const last = pkg.split(".").pop() ?? pkg;
  return last.charAt(0).toUpperCase() + last.slice(1);
}

function androidDialog(title: string, buttons: [string, string][]): string {
  const lines = [
    "  android.widget.FrameLayout package=android bounds=[63,945][1017,1395]",
    `    android.widget.TextView "${title}" package=android resource-id=android:id/alertTitle bounds=[126,1008][954,1071]`,
    ...buttons.map(
      ([text, id], i) =>
        `    android.widget.Button "${text}" clickable focusable package=android resource-id=android:id/${id} bounds=[63,${1134 + 126 * i}][1017,${1260 + 126 * i}]`,
    ),
  ];
  return lines.join("\n");
}

function androidRule(name: string, kind: "app_not_responding"): SynthesisRule {
  return {
    name,
    kind,
    observe(turn) {
      if (!/^hierarchy\b/.test(turn.observation)) return undefined;
      const pkg = foregroundPackage(turn.observation);
      if (pkg === undefined) return undefined;
      const app = packageLabel(pkg);
      const dialog = androidDialog(`${app} isn't responding`, [
        ["Close app", "aerr_close"],
        ["Wait", "aerr_wait"],
      ]);
      return `${turn.observation.replace(/\s+$/, "")}\n${dialog}`;
    },
  };
}

/**
 * Only the ANR dialog: a frozen app stays on screen under it, so the rest of the hierarchy is
 * what it was. A crash kills the app's window (the launcher or the previous app shows under the
 * dialog), which the observation does not determine, so no crash rule is given.
 */
export const ANDROID_RULES: readonly SynthesisRule[] = [androidRule("android-app-not-responding", "app_not_responding")];

// ---------------------------------------------------------------------------------------------
// Desktop (AT-SPI)

/** System dialogs that can come up after any action (Ubuntu's problem reporter, GNOME's disk-space warning). */
const OS_DIALOGS: readonly [string, string][] = [
  ["System program problem detected", "Do you want to report the problem now?"],
  ["Low Disk Space", "This computer has only 1.2 GB disk space remaining."],
];

/** The tree's first node line (`desktop-frame "main" …`, `table`): a screen in the AT-SPI text format. */
const OS_ROOT = /^(?:desktop-frame|table|frame|window|application)\b/;

const osModal: SynthesisRule = {
  name: "os-modal-dialog",
  kind: "modal_dialog",
  observe(turn) {
    if (!OS_ROOT.test(turn.observation)) return undefined;
    const [title, text] = pick(OS_DIALOGS, turn.index);
    const dialog = [
      `  dialog "${title}" st:modal st:showing st:visible bounds=[660,400][1260,640]`,
      `    label "${text}" st:showing st:visible bounds=[690,460][1230,520]`,
      `    push-button "OK" st:enabled st:focusable st:showing st:visible bounds=[1110,580][1230,620]`,
    ].join("\n");
    return `${turn.observation.replace(/\s+$/, "")}\n${dialog}`;
  },
};

/** GNOME Shell's dialog for an application that stopped answering, named as the tree names it. */
const osNotResponding: SynthesisRule = {
  name: "os-app-not-responding",
  kind: "app_not_responding",
  observe(turn) {
    if (!OS_ROOT.test(turn.observation)) return undefined;
    const app = [...turn.observation.matchAll(/^[ \t]*application "([^"\\\r\n]{1,80})"/gm)]
      .map((m) => m[1] as string)
      .find((name) => name !== "gnome-shell");
    if (app === undefined) return undefined;
    const dialog = [
      `  dialog "“${app}” is not responding." st:modal st:showing st:visible bounds=[660,400][1260,640]`,
      `    push-button "Force Quit" st:enabled st:focusable st:showing st:visible bounds=[690,580][950,620]`,
      `    push-button "Wait" st:enabled st:focusable st:showing st:visible bounds=[970,580][1230,620]`,
    ].join("\n");
    return `${turn.observation.replace(/\s+$/, "")}\n${dialog}`;
  },
};

export const OS_RULES: readonly SynthesisRule[] = [osModal, osNotResponding];
