import type { SourceRef, Trajectory } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf, sideFileSize } from "../io/side-files.ts";
import {
  type A11yNode,
  type Bounds,
  canonicalNodeLine,
  MAX_TREE_DEPTH,
  makeNode,
  type TreeParseOptions,
} from "../normalize/tree/a11y-tree.ts";
import { type Companions, excerpt, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
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
export function parseDroidBotState(text: string, options: TreeParseOptions = {}): A11yNode {
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
  return assignAndroidKeys(root, options);
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

// DroidBot's own names (honeynet/droidbot: EventLog.save2dir, DeviceState.save2dir): a run's output
// folder holds events/event_<tag>.json, states/state_<tag>.json (and screen_<tag>.png), utg.js,
// views/, index.html. A name may carry a prefix before `event_` / `state_` (runs flattened into one
// folder, `<run>__event_<tag>.json`): files with the same prefix are one run.
const EVENT_NAME = /^(.*?)event_(.+)\.json(?:\.gz|\.zst)?$/;
const STATE_NAME = /^(.*?)(?:device_)?state_(.+)\.json(?:\.gz|\.zst)?$/;

interface Run {
  /** The folder holding the run's events, and the prefix its file names share. */
  eventsDir: string;
  prefix: string;
  /** Event file names, in tag order (the tag is in the name). */
  events: string[];
  /** Where its states are: `states/` beside `events/`, and the events' own folder. */
  stateDirs: string[];
  /** A DroidBot output folder (events/ in it): every file under it is the run's. */
  outputDir: string | undefined;
}

/** The run a DroidBot event or state file belongs to; undefined when no event file is there. */
async function runOf(path: string): Promise<Run | undefined> {
  const name = baseName(path);
  const dir = parentOf(path);
  const event = EVENT_NAME.exec(name);
  const state = event ? undefined : STATE_NAME.exec(name);
  if (!event && !state) return undefined;
  const prefix = (event ?? state)?.[1] ?? "";
  // A state in `states/` belongs to the events in `../events`; one beside events, to those.
  const eventsDir = state && baseName(dir) === "states" ? beside(dir, "..", "events") : dir;
  const listing = await listFolder(eventsDir);
  const events = [...listing.files.keys()].filter((n) => EVENT_NAME.exec(n)?.[1] === prefix).sort();
  if (events.length === 0) return undefined;
  const nested = baseName(eventsDir) === "events";
  return {
    eventsDir,
    prefix,
    events,
    stateDirs: [beside(eventsDir, "..", "states"), eventsDir],
    outputDir: nested && prefix === "" ? parentOf(eventsDir) : undefined,
  };
}

/** The run's state files (same prefix), folder by folder, in name order. */
async function stateFiles(run: Run): Promise<{ path: string; bytes: number }[]> {
  const found: { path: string; bytes: number }[] = [];
  for (const dir of run.stateDirs) {
    const { files } = await listFolder(dir);
    for (const name of [...files.keys()].sort())
      if (STATE_NAME.exec(name)?.[1] === run.prefix) found.push({ path: beside(dir, name), bytes: files.get(name) ?? 0 });
  }
  return found;
}

/** state_str → the first state file recording it (each state file read once). */
async function stateIndex(run: Run, maxBytes: number): Promise<Map<string, { path: string; text: string }>> {
  const index = new Map<string, { path: string; text: string }>();
  for (const { path } of await stateFiles(run)) {
    const read = await readWholeText(path, maxBytes);
    if ("error" in read) continue;
    const parsed = parseJsonLine(read.text);
    const stateStr = parsed.ok && isObject(parsed.value) ? parsed.value.state_str : undefined;
    if (typeof stateStr === "string" && !index.has(stateStr)) index.set(stateStr, { path, text: read.text });
  }
  return index;
}

interface EventRecord {
  source: SourceRef;
  name: string;
  text: string;
  record: Json & { event: Json; stop_state: string };
}

function fileFailure(source: SourceRef, text: string | undefined, reason: string, field?: string): ReadItem {
  return {
    kind: "quarantine",
    entry: {
      source,
      ...(text !== undefined ? { id: contentId(text), excerpt: excerpt(text) } : {}),
      stage: "read",
      ...(field ? { field } : {}),
      reason,
    },
  };
}

/**
 * One run: its events in tag order, chained by stop_state → start_state into one trajectory. Where
 * the chain breaks (an event starts from another screen than the last one ended on, or its stop
 * state is missing or broken) the run goes on as a new part: `<id>-part<k>` when there are several.
 * An event that cannot be read is quarantined (its own file), and breaks the chain.
 */
async function* readRun(run: Run, options: ReaderOptions): AsyncGenerator<ReadItem> {
  const records: (EventRecord | ReadItem)[] = [];
  for (const name of run.events) {
    const uri = beside(run.eventsDir, name);
    const source: SourceRef = { uri, format: FORMAT };
    const whole = await readWholeText(uri, options.maxLineBytes);
    if ("error" in whole) {
      records.push(fileFailure(source, undefined, whole.error));
      continue;
    }
    const parsed = parseJsonLine(whole.text);
    const record = parsed.ok ? parsed.value : undefined;
    if (!parsed.ok) records.push(fileFailure(source, whole.text, parsed.reason));
    else if (!isObject(record) || !isObject(record.event))
      records.push(fileFailure(source, whole.text, "not a DroidBot event: no event object", "event"));
    else if (typeof record.stop_state !== "string")
      records.push(fileFailure(source, whole.text, "stop_state: expected a state_str string", "stop_state"));
    else if (nestsTooDeep(record.event))
      records.push(fileFailure(source, whole.text, `event: nested deeper than ${MAX_JSON_DEPTH} levels`, "event"));
    else records.push({ source, name, text: whole.text, record: record as EventRecord["record"] });
  }
  const good = records.filter((r): r is EventRecord => "record" in r);
  const runId = contentId(good.map((r) => r.text).join("\n"));
  const states = good.length > 0 ? await stateIndex(run, options.maxLineBytes) : new Map<string, { path: string; text: string }>();
  const where = run.stateDirs.length > 0 && run.stateDirs[0] !== run.eventsDir ? "../states or beside the events" : "beside the events";
  const stateOk = (state: { path: string; text: string }, field: string): string | undefined => {
    try {
      parseDroidBotState(state.text);
      return undefined;
    } catch (err) {
      return `${field} ${baseName(state.path)}: ${(err as Error).message}`;
    }
  };

  type Part = { first: EventRecord; initial: { path: string; text: string } | undefined; turns: Trajectory["turns"]; tags: string[] };
  const parts: Part[] = [];
  const out: (ReadItem | Part)[] = [];
  let current: Part | undefined;
  let lastStop: string | undefined;
  for (const item of records) {
    if (!("record" in item)) {
      out.push(item);
      current = undefined;
      continue;
    }
    const { record } = item;
    const stop = states.get(record.stop_state);
    const problem = !stop
      ? { reason: `stop_state ${record.stop_state} has no state_*.json in ${where}`, field: "stop_state" }
      : stateOk(stop, "stop_state") !== undefined
        ? { reason: stateOk(stop, "stop_state") as string, field: "stop_state" }
        : undefined;
    if (problem || !stop) {
      out.push(fileFailure(item.source, item.text, (problem as { reason: string }).reason, problem?.field));
      current = undefined;
      continue;
    }
    const start = typeof record.start_state === "string" ? record.start_state : undefined;
    if (!current || start === undefined || start !== lastStop) {
      const found = start !== undefined ? states.get(start) : undefined;
      const initial = found && stateOk(found, "start_state") === undefined ? found : undefined;
      current = { first: item, initial, turns: [], tags: [] };
      parts.push(current);
      out.push(current);
    }
    const tag = typeof record.tag === "string" ? record.tag : undefined;
    current.turns.push({
      action: describeDroidBotEvent(record.event),
      observation: stop.text,
      meta: { tree_format: DROIDBOT_TREE_FORMAT, state_file: baseName(stop.path), ...(tag ? { event_tag: tag } : {}) },
    });
    if (tag) current.tags.push(tag);
    lastStop = record.stop_state;
  }
  for (const item of out) {
    if (!("turns" in item)) {
      yield item as ReadItem;
      continue;
    }
    const k = parts.indexOf(item);
    const trajectory: Trajectory = {
      id: parts.length > 1 ? `${runId}-part${k + 1}` : runId,
      domain: "android",
      source: item.first.source,
      ...(item.initial ? { initialObservation: item.initial.text } : {}),
      turns: item.turns,
      meta: {
        ...(item.initial ? { initial_tree_format: DROIDBOT_TREE_FORMAT, initial_state_file: baseName(item.initial.path) } : {}),
        droidbot: {
          run: runId,
          events: item.turns.length,
          ...(item.tags.length > 0 ? { first_tag: item.tags[0], last_tag: item.tags.at(-1) } : {}),
          ...(parts.length > 1 ? { part: k + 1, parts: parts.length } : {}),
        },
      },
    };
    yield { kind: "trajectory", trajectory };
  }
}

/**
 * DroidBot output (honeynet/droidbot).
 * - A run (DroidBot ≥ 2017: `events/event_<tag>.json`, each `{tag, event, start_state,
 *   stop_state, event_str}`, and `states/state_<tag>.json` naming itself by `state_str`) is one
 *   record: its events in tag order, chained by stop_state → start_state, are one trajectory. The
 *   first event's start state is the initial observation; each turn's action is the event
 *   (`touch(view=<…>)`, `key(name="BACK")`), its observation the event's stop state. Where the
 *   chain breaks the run goes on as another part (`<id>-part<k>`); an event whose stop state is
 *   missing or broken is quarantined, naming it (no observation to learn). The id is a hash of the
 *   run's event files, so the same run reads the same from a disk, a bucket or the Hub.
 * - The run is read from its first event file; its other events and its states stand for it
 *   (`expand`), and the rest of a DroidBot output folder (utg.js, views/, screenshots) is its
 *   companions: a glob over the whole folder reads the run once, never a state as a record.
 *   Files are found through src/io/side-files.ts, the same on a disk, in a bucket, on the Hub.
 * - A device state with no events beside it (`device_state_*.json` 2016, a lone `state_*.json`)
 *   is a one-turn trajectory: action "", observation that screen.
 * - The 2016 event list (`droidbot_event.json`, a JSON array of events) is quarantined: its
 *   events name no state, so no observation can be paired with them.
 * No outcome, agent or model: DroidBot records none.
 */
export const droidBotReader: Reader = {
  name: FORMAT,
  domain: "android",
  description: "DroidBot output: a run's events chained by state (events/, states/) → one trajectory; a lone device state → one turn",

  sniff(head) {
    const start = head.trimStart();
    if (start.startsWith("{")) {
      const state = /"views"\s*:\s*\[/.test(head) && /"(foreground_activity|state_str)"\s*:/.test(head);
      const event = /"event"\s*:\s*\{/.test(head) && /"(start_state|stop_state)"\s*:/.test(head);
      return state || event;
    }
    return start.startsWith("[") && /^\[\s*\{[^{}]*"event_type"\s*:/.test(start);
  },

  async expand(path: string): Promise<string[] | undefined> {
    const run = await runOf(path);
    if (!run) return undefined;
    const head = beside(run.eventsDir, run.events[0] as string);
    return head === normalized(path) ? undefined : [head];
  },

  async companions(path: string): Promise<Companions> {
    const own = (await sideFileSize(normalized(path))) ?? 0;
    const run = await runOf(path);
    if (!run) return { dirs: [], files: [], bytes: own, label: `DroidBot file ${baseName(path)}` };
    const { files: eventSizes } = await listFolder(run.eventsDir);
    const events = run.events.map((name) => ({ path: beside(run.eventsDir, name), bytes: eventSizes.get(name) ?? 0 }));
    const states = await stateFiles(run);
    const bytes = [...events, ...states].reduce((sum, file) => sum + file.bytes, 0);
    const label = `DroidBot run ${run.outputDir ? baseName(run.outputDir) : `${run.prefix}event_*`}`;
    // An output folder is the run's whole; in a shared folder, only the run's own files (and utg.js).
    if (run.outputDir) return { dirs: [run.outputDir], files: [], bytes, label };
    const utg = beside(run.eventsDir, `${run.prefix}utg.js`);
    const extra = (await sideFileSize(utg)) !== undefined ? [utg] : [];
    return { dirs: [], files: [...events, ...states].map((file) => file.path).concat(extra), bytes, label };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    // A file of a run reads as its run (planJob reads only the run's first event: see expand).
    const run = await runOf(path);
    if (run) {
      yield* readRun(run, options);
      return;
    }
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
      const meta = { tree_format: DROIDBOT_TREE_FORMAT, state_file: baseName(path) };
      yield { kind: "trajectory", trajectory: { id, domain: "android", source, turns: [{ action: "", observation: whole.text, meta }] } };
      return;
    }
    if (isObject(record) && isObject(record.event)) {
      // An event file not named event_<tag>.json: a run of its own, found beside it.
      const dir = parentOf(path);
      yield* readRun(
        { eventsDir: dir, prefix: "", events: [baseName(path)], stateDirs: [beside(dir, "..", "states"), dir], outputDir: undefined },
        options,
      );
      return;
    }
    yield fail("not a DroidBot device state (views[]) or event ({event, start_state, stop_state})");
  },
};

/** A local path made absolute (as listings name files); a URI as it is. */
function normalized(path: string): string {
  return beside(parentOf(path), baseName(path));
}
