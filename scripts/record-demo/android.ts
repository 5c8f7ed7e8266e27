/**
 * Android demo data, written by hand from the documented formats: no emulator or device runs
 * here. A made-up notes app ("Quick Notes", package org.example.quicknotes) is described below
 * as four screens (view trees with bounds on a 1080×2340 display), and one short episode on it,
 * adding a note, is written twice:
 * - as `uiautomator dump` XML, the four dumps in one file, each preceded by an
 *   `<!-- action: … -->` comment (how lwm-data pairs dumps with actions) and followed by the line
 *   uiautomator prints after dumping to /dev/tty;
 * - as DroidBot (≥ 2017) output: `state_<tag>.json` device states (flat `views` list linked by
 *   temp_id / parent / children, snake_case keys, state_str hashes) and `event_<tag>.json` events
 *   (touch, set_text, key) naming their start and stop states.
 *
 *   npx node scripts/record-demo/android.ts        # or: npm run record:demo -- android
 *
 * Everything is derived from the description (tags count from the fixed clock), so a second run
 * writes the same bytes.
 */
import { createHash } from "node:crypto";
import { FIXED_EPOCH_SECONDS, writeDemoFile } from "./common.ts";

const PACKAGE = "org.example.quicknotes";
const id = (name: string) => `${PACKAGE}:id/${name}`;

interface View {
  cls: string;
  bounds: [number, number, number, number];
  id?: string;
  text?: string;
  desc?: string;
  clickable?: boolean;
  longClickable?: boolean;
  focusable?: boolean;
  focused?: boolean;
  scrollable?: boolean;
  editable?: boolean;
  children?: View[];
}

interface Screen {
  activity: string;
  content: View[];
}

const LIST_ACTIVITY = `${PACKAGE}/.NoteListActivity`;
const EDIT_ACTIVITY = `${PACKAGE}/.EditNoteActivity`;

const noteRow = (top: number, title: string, preview: string): View => ({
  cls: "android.widget.LinearLayout",
  bounds: [0, top, 1080, top + 189],
  clickable: true,
  longClickable: true,
  focusable: true,
  children: [
    { cls: "android.widget.TextView", id: id("note_title"), text: title, bounds: [42, top + 21, 1038, top + 84] },
    { cls: "android.widget.TextView", id: id("note_preview"), text: preview, bounds: [42, top + 105, 1038, top + 168] },
  ],
});

const FAB: View = {
  cls: "android.widget.ImageButton",
  id: id("fab_new_note"),
  desc: "New note",
  bounds: [897, 2157, 1038, 2298],
  clickable: true,
  focusable: true,
};

function listScreen(notes: [string, string][]): Screen {
  return {
    activity: LIST_ACTIVITY,
    content: [
      {
        cls: "android.view.ViewGroup",
        id: id("toolbar"),
        bounds: [0, 63, 1080, 210],
        children: [
          { cls: "android.widget.TextView", text: "Quick Notes", bounds: [42, 100, 400, 173] },
          {
            cls: "android.widget.ImageButton",
            id: id("action_search"),
            desc: "Search notes",
            bounds: [933, 84, 1059, 189],
            clickable: true,
            focusable: true,
          },
        ],
      },
      {
        cls: "androidx.recyclerview.widget.RecyclerView",
        id: id("note_list"),
        bounds: [0, 210, 1080, 2340],
        scrollable: true,
        focusable: true,
        children: notes.map(([title, preview], i) => noteRow(210 + 189 * i, title, preview)),
      },
      FAB,
    ],
  };
}

function editorScreen(title: string): Screen {
  return {
    activity: EDIT_ACTIVITY,
    content: [
      {
        cls: "android.view.ViewGroup",
        id: id("toolbar"),
        bounds: [0, 63, 1080, 210],
        children: [
          { cls: "android.widget.ImageButton", desc: "Navigate up", bounds: [0, 63, 147, 210], clickable: true, focusable: true },
          { cls: "android.widget.TextView", text: "New note", bounds: [189, 100, 500, 173] },
          {
            cls: "android.widget.ImageButton",
            id: id("action_save"),
            desc: "Save",
            bounds: [933, 84, 1059, 189],
            clickable: true,
            focusable: true,
          },
        ],
      },
      {
        cls: "android.widget.EditText",
        id: id("title_input"),
        text: title,
        bounds: [42, 231, 1038, 357],
        clickable: true,
        longClickable: true,
        focusable: true,
        focused: true,
        editable: true,
      },
      {
        cls: "android.widget.EditText",
        id: id("body_input"),
        bounds: [42, 378, 1038, 1200],
        clickable: true,
        longClickable: true,
        focusable: true,
        editable: true,
      },
    ],
  };
}

const NOTES: [string, string][] = [
  ["Shopping list", "Milk, eggs, coffee"],
  ["Call the plumber", "Kitchen tap drips; ask for Thursday"],
];
const NEW_TITLE = "Water the plants";
const SCREENS = {
  list: listScreen(NOTES),
  editor: editorScreen(""),
  typed: editorScreen(NEW_TITLE),
  saved: listScreen([[NEW_TITLE, ""], ...NOTES]),
};

/** The app's window: the decor views every screen sits in, then the screen's own views. */
function windowOf(screen: Screen): View {
  return {
    cls: "android.widget.FrameLayout",
    bounds: [0, 0, 1080, 2340],
    children: [
      {
        cls: "android.widget.LinearLayout",
        bounds: [0, 0, 1080, 2340],
        children: [{ cls: "android.widget.FrameLayout", id: "android:id/content", bounds: [0, 63, 1080, 2340], children: screen.content }],
      },
    ],
  };
}

const centre = (view: View) => `${Math.floor((view.bounds[0] + view.bounds[2]) / 2)}, ${Math.floor((view.bounds[1] + view.bounds[3]) / 2)}`;

// ---- uiautomator dump XML ----------------------------------------------------------------------

function xmlAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/\n/g, "&#10;");
}

function uiautomatorNode(view: View, index: number): string {
  const [l, t, r, b] = view.bounds;
  const attributes: [string, string][] = [
    ["index", String(index)],
    ["text", view.text ?? ""],
    ["resource-id", view.id ?? ""],
    ["class", view.cls],
    ["package", PACKAGE],
    ["content-desc", view.desc ?? ""],
    ["checkable", "false"],
    ["checked", "false"],
    ["clickable", String(view.clickable ?? false)],
    ["enabled", "true"],
    ["focusable", String(view.focusable ?? false)],
    ["focused", String(view.focused ?? false)],
    ["scrollable", String(view.scrollable ?? false)],
    ["long-clickable", String(view.longClickable ?? false)],
    ["password", "false"],
    ["selected", "false"],
    ["bounds", `[${l},${t}][${r},${b}]`],
  ];
  const open = `<node ${attributes.map(([name, value]) => `${name}="${xmlAttribute(value)}"`).join(" ")}`;
  const children = view.children ?? [];
  return children.length === 0 ? `${open} />` : `${open}>${children.map(uiautomatorNode).join("")}</node>`;
}

function uiautomatorDump(screen: Screen): string {
  return `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">${uiautomatorNode(windowOf(screen), 0)}</hierarchy>`;
}

function uiautomatorSession(steps: { action: string; screen: Screen }[]): string {
  return steps
    .map(
      ({ action, screen }) =>
        `${action ? `<!-- action: ${action} -->\n` : ""}${uiautomatorDump(screen)}\nUI hierchary dumped to: /dev/tty\n`,
    )
    .join("");
}

// ---- DroidBot states and events ----------------------------------------------------------------

type Json = Record<string, unknown>;

const md5 = (text: string) => createHash("md5").update(text).digest("hex");
const flag = (on: boolean | undefined, name: string) => (on ? name : "");

/** DroidBot's view signature: class, resource id, text, and the enabled/checked/selected flags. */
function signature(view: View): string {
  return `[class]${view.cls}[resource_id]${view.id ?? "None"}[text]${view.text || "None"}[${flag(true, "enabled")},,]`;
}

/** The flat `views` list of a DroidBot state: views in pre-order, temp_id = position. */
function droidBotViews(screen: Screen): Json[] {
  const views: Json[] = [];
  const visit = (view: View, parent: number): number => {
    const tempId = views.length;
    const [l, t, r, b] = view.bounds;
    const record: Json = {
      temp_id: tempId,
      parent,
      children: [] as number[],
      class: view.cls,
      resource_id: view.id ?? null,
      text: view.text || null,
      content_description: view.desc ?? null,
      package: PACKAGE,
      bounds: [
        [l, t],
        [r, b],
      ],
      size: `${r - l}*${b - t}`,
      checkable: false,
      checked: false,
      clickable: view.clickable ?? false,
      long_clickable: view.longClickable ?? false,
      focusable: view.focusable ?? false,
      focused: view.focused ?? false,
      scrollable: view.scrollable ?? false,
      editable: view.editable ?? false,
      enabled: true,
      selected: false,
      visible: true,
      is_password: false,
      child_count: (view.children ?? []).length,
      signature: signature(view),
      content_free_signature: `[class]${view.cls}[resource_id]${view.id ?? "None"}`,
    };
    views.push(record);
    record.children = (view.children ?? []).map((child) => visit(child, tempId));
    return tempId;
  };
  visit(windowOf(screen), -1);
  for (const view of views) view.view_str = md5(`Activity:${screen.activity}\nSelf:${view.signature}\nTempId:${view.temp_id}`);
  return views;
}

/** DroidBot's state_str: the md5 of the foreground activity and the sorted set of view signatures. */
function stateStr(screen: Screen, views: Json[]): string {
  const signatures = [...new Set(views.map((view) => view.signature as string))].sort();
  return md5(`${screen.activity}{${signatures.join(",")}}`);
}

function tagAt(offsetSeconds: number): string {
  const iso = new Date((FIXED_EPOCH_SECONDS + offsetSeconds) * 1000).toISOString();
  return `${iso.slice(0, 10)}_${iso.slice(11, 19).replace(/:/g, "")}`;
}

interface DroidBotState {
  tag: string;
  stateStr: string;
  views: Json[];
  json: string;
}

function droidBotState(screen: Screen, offsetSeconds: number): DroidBotState {
  const views = droidBotViews(screen);
  const tag = tagAt(offsetSeconds);
  const str = stateStr(screen, views);
  const stack = screen.activity === LIST_ACTIVITY ? [LIST_ACTIVITY] : [EDIT_ACTIVITY, LIST_ACTIVITY];
  const state = {
    tag,
    state_str: str,
    state_str_content_free: md5(`${screen.activity}{${[...new Set(views.map((view) => view.content_free_signature))].sort().join(",")}}`),
    foreground_activity: screen.activity,
    activity_stack: stack,
    background_services: [],
    width: 1080,
    height: 2340,
    views,
  };
  return { tag, stateStr: str, views, json: `${JSON.stringify(state, null, 2)}\n` };
}

/** The view of `state` with this resource id, as DroidBot puts it in an event. */
function viewById(state: DroidBotState, resourceId: string): Json {
  const view = state.views.find((v) => v.resource_id === resourceId);
  if (!view) throw new Error(`no view ${resourceId} in state ${state.tag}`);
  return view;
}

function droidBotEvent(offsetSeconds: number, eventStr: string, event: Json, start: DroidBotState, stop: DroidBotState): [string, string] {
  const tag = tagAt(offsetSeconds);
  const json = { tag, event_str: eventStr, start_state: start.stateStr, stop_state: stop.stateStr, event };
  return [tag, `${JSON.stringify(json, null, 2)}\n`];
}

// ---- the episode, written both ways ------------------------------------------------------------

const SAVE_BUTTON: View = { cls: "android.widget.ImageButton", bounds: [933, 84, 1059, 189] };

writeDemoFile(
  "android/quicknotes.add-note.window_dumps.xml",
  uiautomatorSession([
    { action: "", screen: SCREENS.list },
    { action: `tap(${centre(FAB)})`, screen: SCREENS.editor },
    { action: `text(${JSON.stringify(NEW_TITLE)})`, screen: SCREENS.typed },
    { action: `tap(${centre(SAVE_BUTTON)})`, screen: SCREENS.saved },
  ]),
);

// DroidBot: the same note, but saved by pressing BACK (the editor saves on leaving).
const states = [
  droidBotState(SCREENS.list, 0),
  droidBotState(SCREENS.editor, 3),
  droidBotState(SCREENS.typed, 6),
  droidBotState(SCREENS.saved, 9),
] as const;
const [list, editor, typed, saved] = states;
for (const state of states) writeDemoFile(`android/state_${state.tag}.json`, state.json);
const fab = viewById(list, id("fab_new_note"));
const titleInput = viewById(editor, id("title_input"));
const events = [
  droidBotEvent(2, `TouchEvent(state=${list.stateStr}, view=${fab.view_str})`, { event_type: "touch", view: fab }, list, editor),
  droidBotEvent(
    5,
    `SetTextEvent(state=${editor.stateStr}, view=${titleInput.view_str}, text=${NEW_TITLE})`,
    { event_type: "set_text", view: titleInput, text: NEW_TITLE },
    editor,
    typed,
  ),
  droidBotEvent(8, `KeyEvent(state=${typed.stateStr}, name=BACK)`, { event_type: "key", name: "BACK" }, typed, saved),
];
for (const [tag, json] of events) writeDemoFile(`android/event_${tag}.json`, json);
