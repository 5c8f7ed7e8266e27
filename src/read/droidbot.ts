import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { readWholeText } from "../io/read-whole-text.ts";
import { type A11yNode, type Bounds, canonicalNodeLine, MAX_TREE_DEPTH, makeNode } from "../normalize/tree/a11y-tree.ts";
import { excerpt, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";
import { androidViewNode, assignAndroidKeys, contentId, TreeParseError } from "./uiautomator-xml.ts";

const FORMAT = "droidbot";
export const DROIDBOT_TREE_FORMAT = "droidbot-state";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

// DroidBot ≥ 2017 writes snake_case view keys; the 2016 files keep uiautomator's names.
const RENAMED: Record<string, string> = {
  resource_id: "resource-id",
  content_description: "content-desc",
  long_clickable: "long-clickable",
  is_password: "password",
};
// DroidBot's own bookkeeping, not part of what the screen shows.
const INTERNAL = new Set([
  "temp_id",
  "parent",
  "children",
  "view_str",
  "uniqueId",
  "signature",
  "content_free_signature",
  "size",
  "child_count",
  "depth",
  "bounds",
]);

/** A DroidBot view dict as uiautomator-named string attributes. */
function viewAttributes(view: Json): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(view)) {
    if (INTERNAL.has(key) || value === null || value === undefined || typeof value === "object") continue;
    attributes[RENAMED[key] ?? key] = String(value);
  }
  return attributes;
}

function viewBounds(view: Json): Bounds | undefined {
  const b = view.bounds;
  if (!Array.isArray(b) || b.length !== 2 || !Array.isArray(b[0]) || !Array.isArray(b[1])) return undefined;
  const [[left, top], [right, bottom]] = b as [unknown[], unknown[]];
  if (![left, top, right, bottom].every((n) => typeof n === "number")) return undefined;
  return { left, top, right, bottom } as Bounds;
}

/** One DroidBot view as a tree node (no children), as it would appear in a uiautomator dump. */
export function droidBotViewNode(view: Json, parentPackage?: string): A11yNode {
  return androidViewNode(viewAttributes(view), parentPackage, viewBounds(view));
}

/**
 * Parses a DroidBot device state (`device_state_*.json` 2016, `states/state_*.json` later): the
 * flat `views` list, linked by `temp_id` / `parent` / `children`, becomes a tree under a
 * `hierarchy` root that carries the foreground activity.
 */
export function parseDroidBotState(text: string): A11yNode {
  const parsed = parseJsonLine(text);
  if (!parsed.ok) throw new TreeParseError(parsed.reason);
  const state = parsed.value;
  if (!isObject(state) || !Array.isArray(state.views)) throw new TreeParseError("not a DroidBot state: no views[]");
  const views = state.views as unknown[];
  const byId = new Map<number, Json>();
  views.forEach((view, i) => {
    if (!isObject(view)) throw new TreeParseError(`views.${i} is not an object`);
    byId.set(typeof view.temp_id === "number" ? view.temp_id : i, view);
  });
  const seen = new Set<Json>();
  const build = (view: Json, parentPackage: string | undefined, depth: number): A11yNode => {
    if (seen.has(view)) throw new TreeParseError(`view ${String(view.temp_id)} appears twice in the hierarchy`);
    if (depth > MAX_TREE_DEPTH) throw new TreeParseError(`views nest deeper than ${MAX_TREE_DEPTH} levels`);
    seen.add(view);
    const node = droidBotViewNode(view, parentPackage);
    const pkg = typeof view.package === "string" && view.package !== "" ? view.package : parentPackage;
    const children = Array.isArray(view.children) ? view.children : [];
    node.children = children.map((id) => {
      const child = byId.get(id as number);
      if (!child) throw new TreeParseError(`view ${String(view.temp_id)} names a missing child ${String(id)}`);
      return build(child, pkg, depth + 1);
    });
    return node;
  };
  const isRoot = (view: Json) => view.parent === null || view.parent === undefined || view.parent === -1;
  const activity: Record<string, string> =
    typeof state.foreground_activity === "string" ? { foreground_activity: state.foreground_activity } : {};
  const root = makeNode("hierarchy", "", activity);
  root.children = [...byId.values()].filter(isRoot).map((view) => build(view, undefined, 1));
  return assignAndroidKeys(root);
}

/** A DroidBot input event as one action line: `touch(x=540, y=851)`, `key(name="HOME")`, `touch(view=<…>)`. */
export function describeDroidBotEvent(event: Json): string {
  const type = typeof event.event_type === "string" ? event.event_type : "event";
  const args: string[] = [];
  for (const key of Object.keys(event).sort()) {
    const value = event[key];
    if (key === "event_type" || value === null || value === undefined) continue;
    if (key === "view" && isObject(value)) args.push(`view=<${canonicalNodeLine(droidBotViewNode(value))}>`);
    else args.push(`${key}=${JSON.stringify(value)}`);
  }
  return `${type}(${args.join(", ")})`;
}

/** Where DroidBot keeps states: `states/` beside `events/`, or the event's own folder. */
function stateFolders(eventPath: string): string[] {
  const dir = dirname(eventPath);
  return [join(dir, "..", "states"), dir];
}

// state_str → file, per set of folders (and their mtimes), so a run over thousands of events in
// one DroidBot output reads each state file once to index it.
let stateIndexCache: { signature: string; index: Map<string, string> } | undefined;

async function stateIndex(eventPath: string, maxBytes: number): Promise<Map<string, string>> {
  const folders = stateFolders(eventPath);
  const mtimes = await Promise.all(
    folders.map((f) =>
      stat(f)
        .then((s) => s.mtimeMs)
        .catch(() => -1),
    ),
  );
  const signature = folders.map((f, i) => `${f}@${mtimes[i]}`).join("|");
  if (stateIndexCache?.signature === signature) return stateIndexCache.index;
  const index = new Map<string, string>();
  for (const folder of folders) {
    const names = (await readdir(folder).catch(() => [] as string[])).filter((n) => /^(device_)?state_.*\.json/.test(n)).sort();
    for (const name of names) {
      const read = await readWholeText(join(folder, name), maxBytes);
      if ("error" in read) continue;
      const parsed = parseJsonLine(read.text);
      const stateStr = parsed.ok && isObject(parsed.value) ? parsed.value.state_str : undefined;
      if (typeof stateStr === "string" && !index.has(stateStr)) index.set(stateStr, join(folder, name));
    }
  }
  stateIndexCache = { signature, index };
  return index;
}

async function findStates(eventPath: string, wanted: string[], maxBytes: number): Promise<Map<string, { path: string; text: string }>> {
  const index = await stateIndex(eventPath, maxBytes);
  const found = new Map<string, { path: string; text: string }>();
  for (const stateStr of wanted) {
    const path = index.get(stateStr);
    if (!path) continue;
    const read = await readWholeText(path, maxBytes);
    if (!("error" in read)) found.set(stateStr, { path, text: read.text });
  }
  return found;
}

/**
 * DroidBot output (honeynet/droidbot). A file is one record:
 * - a device state (`device_state_*.json`, `states/state_*.json`): a one-turn trajectory whose
 *   action is "" and whose observation is that screen;
 * - an event (`events/event_*.json`, DroidBot ≥ 2017: `{event, start_state, stop_state}`): a
 *   one-transition trajectory: the `start_state` screen as initial observation, the event as the
 *   action, the `stop_state` screen as observation. States are found by their `state_str` among
 *   `state_*.json` in `../states/` or the event's folder; an event whose stop state is not there
 *   is quarantined (no observation to learn);
 * - the 2016 event list (`droidbot_event.json`, a JSON array of events) is quarantined: its
 *   events name no state, so no observation can be paired with them.
 */
export const droidBotReader: Reader = {
  name: FORMAT,
  description: "DroidBot device-state and event JSON (states by state_str); a state or an event file is a trajectory",

  sniff(head) {
    const start = head.trimStart();
    if (start.startsWith("{")) {
      const state = /"views"\s*:\s*\[/.test(head) && /"(foreground_activity|state_str)"\s*:/.test(head);
      const event = /"event"\s*:\s*\{/.test(head) && /"(start_state|stop_state)"\s*:/.test(head);
      return state || event;
    }
    return start.startsWith("[") && /^\[\s*\{[^{}]*"event_type"\s*:/.test(start);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source = { uri: path, format: FORMAT };
    const whole = await readWholeText(path, options.maxLineBytes);
    if ("error" in whole) {
      yield { kind: "quarantine", entry: { source, stage: "read", reason: whole.error } };
      return;
    }
    const id = contentId(whole.text);
    const fail = (reason: string, field?: string): ReadItem => ({
      kind: "quarantine",
      entry: { source, id, stage: "read", ...(field ? { field } : {}), reason, excerpt: excerpt(whole.text) },
    });
    const parsed = parseJsonLine(whole.text);
    if (!parsed.ok) return yield fail(parsed.reason);
    const record = parsed.value;

    if (Array.isArray(record)) {
      return yield fail(
        `DroidBot 2016 event list (${record.length} events): its events name no device state, so no observation can be paired with them; the device_state_*.json files are read as records of their own`,
      );
    }
    if (isObject(record) && Array.isArray(record.views)) {
      try {
        parseDroidBotState(whole.text);
      } catch (err) {
        return yield fail((err as Error).message, "views");
      }
      const meta = { tree_format: DROIDBOT_TREE_FORMAT, state_file: basename(path) };
      yield { kind: "trajectory", trajectory: { id, domain: "android", source, turns: [{ action: "", observation: whole.text, meta }] } };
      return;
    }
    if (isObject(record) && isObject(record.event) && typeof record.stop_state === "string") {
      // The event is written into the action as JSON (describeDroidBotEvent).
      if (nestsTooDeep(record.event)) return yield fail(`event: nested deeper than ${MAX_JSON_DEPTH} levels`, "event");
      const start = typeof record.start_state === "string" ? record.start_state : undefined;
      const states = await findStates(path, start ? [start, record.stop_state] : [record.stop_state], options.maxLineBytes);
      const stop = states.get(record.stop_state);
      if (!stop) return yield fail(`stop_state ${record.stop_state} has no state_*.json in ../states or beside the event`, "stop_state");
      const initial = start ? states.get(start) : undefined;
      for (const [field, state] of [
        ["stop_state", stop],
        ["start_state", initial],
      ] as const) {
        if (!state) continue;
        try {
          parseDroidBotState(state.text);
        } catch (err) {
          return yield fail(`${field} ${basename(state.path)}: ${(err as Error).message}`, field);
        }
      }
      const action = describeDroidBotEvent(record.event);
      const tag = typeof record.tag === "string" ? { event_tag: record.tag } : {};
      yield {
        kind: "trajectory",
        trajectory: {
          id,
          domain: "android",
          source,
          ...(initial ? { initialObservation: initial.text } : {}),
          turns: [{ action, observation: stop.text, meta: { tree_format: DROIDBOT_TREE_FORMAT, state_file: basename(stop.path) } }],
          meta: { ...tag, ...(initial ? { initial_tree_format: DROIDBOT_TREE_FORMAT } : {}) },
        },
      };
      return;
    }
    yield fail("not a DroidBot device state (views[]) or event ({event, start_state, stop_state})");
  },
};
