import type { SourceRef, Turn } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf, sideFileSize } from "../io/side-files.ts";
import { DROIDBOT_TREE_FORMAT, parseDroidBotState } from "./droidbot.ts";
import { type Companions, excerpt, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { canonicalAction, contentId, describeType, isRecord } from "./record-helpers.ts";

/**
 * DroidBot's UI transition graph, `utg.js` (honeynet/droidbot `droidbot/utg.py`: `var utg = ` and
 * a JSON object with `nodes[]` — one per distinct UI state: `id`/`state_str`, `package`,
 * `activity`, `image` (`states/screen_<tag>.png`), `content` (package, activity, state_str, then
 * the views' resource ids and texts, each comma-joined) — and `edges[]` {`from`, `to`, `events[]`
 * {`event_id`, `event_str`, `event_type`, `view_images`}}). One file is one trajectory.
 *
 * - Order: DroidBot numbers an effective transition (one that changed the state) when it records
 *   it: `event_id` is the count of distinct effective events so far, so sorting every edge's
 *   events by `event_id` replays the exploration in the order DroidBot recorded it (ties, which
 *   DroidBot makes when an event string recurs, keep the file's order). The UTG keeps only
 *   effective, distinct transitions: repeats and events that left the screen unchanged are not
 *   in it (they are in `events/`, read by the droidbot reader). Where a transition does not start
 *   from the state the previous one ended in (DroidBot restarted the app, or a repeated event
 *   was folded into an earlier edge), the turn has `meta.start_differs: true` and the
 *   trajectory counts them in `meta.discontinuities`.
 * - Action: `{"name": event_type, "arguments": {"event": event_str}}` (canonical JSON).
 * - Observation: the target state (`to`). When DroidBot's `states/state_<tag>.json` for the node
 *   is beside the utg.js (same tag as the node's screenshot, same `state_str`), it is the
 *   observation (`turn.meta.tree_format: "droidbot-state"`, the view tree the droidbot reader
 *   renders). Otherwise the node's own description (`observation_format: "droidbot-utg-node"`):
 *   `package:`, `activity:`, `resource ids:`, `texts:` lines from its `content` (state hashes
 *   left out: nothing a model can predict). The first transition's source state is the initial
 *   observation.
 * - Task: none (DroidBot explores without a goal). Outcome: none. `meta`: app_package,
 *   app_main_activity, device_model_number, device_sdk_version, test_date, num_* counts.
 * - Id: a hash of the file's content. Domain: android.
 */
const FORMAT = "droidbot-utg";
export const UTG_NODE_FORMAT = "droidbot-utg-node";

type Json = Record<string, unknown>;

const PREFIX = /^\s*var\s+utg\s*=\s*/;

interface Step {
  eventId: number | undefined;
  order: number;
  from: string;
  to: string;
  event: Json;
  where: string;
}

/** The node's description from its `content` lines (package, activity, state_str, resource ids, texts). */
function describeNode(node: Json): string {
  const content = typeof node.content === "string" ? node.content.split("\n") : [];
  const pkg = typeof node.package === "string" ? node.package : (content[0] ?? "");
  const activity = typeof node.activity === "string" ? node.activity : (content[1] ?? "");
  const lines = [`package: ${pkg}`, `activity: ${activity}`];
  if (content.length > 3) lines.push(`resource ids: ${content[3]}`);
  if (content.length > 4) lines.push(`texts: ${content.slice(4).join("\n")}`);
  return lines.join("\n");
}

/** The node's DroidBot state file, when it is beside the utg.js and is that node's state. */
async function stateOf(utgPath: string, node: Json, maxBytes: number): Promise<string | undefined> {
  const image = typeof node.image === "string" ? node.image : "";
  const tag = /^states\/screen_([^/]+)\.(png|jpg|jpeg)$/.exec(image)?.[1];
  if (!tag) return undefined;
  // Beside the utg.js on a disk, in a bucket or on the Hub alike.
  const read = await readWholeText(beside(parentOf(utgPath), "states", `state_${tag}.json`), maxBytes);
  if ("error" in read) return undefined;
  const parsed = parseJsonLine(read.text);
  if (!parsed.ok || !isRecord(parsed.value) || parsed.value.state_str !== (node.state_str ?? node.id)) return undefined;
  try {
    parseDroidBotState(read.text);
  } catch {
    return undefined;
  }
  return read.text;
}

const META_KEYS = [
  "app_package",
  "app_main_activity",
  "app_sha256",
  "device_model_number",
  "device_sdk_version",
  "test_date",
  "time_spent",
  "num_nodes",
  "num_edges",
  "num_effective_events",
  "num_reached_activities",
  "num_transitions",
  "num_input_events",
];

export const droidBotUtgReader: Reader = {
  name: FORMAT,
  domain: "android",
  description: "DroidBot utg.js (var utg = {nodes, edges}); a file is one trajectory, its events in event_id order",

  sniff(head) {
    return PREFIX.test(head.replace(/^\uFEFF/, "")) && /^\s*var\s+utg\s*=\s*\{/.test(head.replace(/^\uFEFF/, ""));
  },

  // The run's `states/` folder beside the utg.js is read for the observations: a glob over a
  // DroidBot output folder without events/ reads the run once, not each state as a record too. (With
  // events/, the droidbot reader reads the run from them and claims this utg.js as its companion.)
  async companions(path: string): Promise<Companions> {
    const own = (await sideFileSize(path)) ?? 0;
    const states = beside(parentOf(path), "states");
    const { files } = await listFolder(states);
    const stateBytes = [...files].filter(([name]) => /^state_.+\.json$/.test(name)).reduce((sum, [, bytes]) => sum + bytes, 0);
    const label = `DroidBot utg ${baseName(parentOf(path))}/utg.js`;
    return { dirs: stateBytes > 0 ? [states] : [], files: [], bytes: own + stateBytes, label };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source: SourceRef = { uri: path, format: FORMAT };
    const whole = await readWholeText(path, options.maxLineBytes);
    if ("error" in whole) {
      yield { kind: "quarantine", entry: { source, stage: "read", reason: whole.error } };
      return;
    }
    const id = contentId("droidbot-utg", whole.text);
    const fail = (reason: string, field?: string): ReadItem => ({
      kind: "quarantine",
      entry: { source, id, stage: "read", ...(field ? { field } : {}), reason, excerpt: excerpt(whole.text) },
    });
    const text = whole.text.replace(/^\uFEFF/, "");
    if (!PREFIX.test(text)) return yield fail("not a DroidBot utg.js: it does not start with `var utg =`");
    const parsed = parseJsonLine(text.replace(PREFIX, "").replace(/;\s*$/, ""));
    if (!parsed.ok) return yield fail(`the utg object: ${parsed.reason}`);
    const utg = parsed.value;
    if (!isRecord(utg)) return yield fail(`the utg is ${describeType(utg)}, not an object`);
    if (!Array.isArray(utg.nodes)) return yield fail(`nodes: expected a list of states, got ${describeType(utg.nodes)}`, "nodes");
    if (!Array.isArray(utg.edges)) return yield fail(`edges: expected a list of transitions, got ${describeType(utg.edges)}`, "edges");

    const nodes = new Map<string, Json>();
    for (const [i, node] of utg.nodes.entries()) {
      if (!isRecord(node)) return yield fail(`nodes.${i} is ${describeType(node)}, not a state`, `nodes.${i}`);
      const key = typeof node.id === "string" ? node.id : node.state_str;
      if (typeof key !== "string" || key === "") return yield fail(`nodes.${i} has no id or state_str`, `nodes.${i}.id`);
      if (!nodes.has(key)) nodes.set(key, node);
    }
    const steps: Step[] = [];
    for (const [e, edge] of utg.edges.entries()) {
      if (!isRecord(edge)) return yield fail(`edges.${e} is ${describeType(edge)}, not a transition`, `edges.${e}`);
      for (const end of ["from", "to"] as const) {
        const state = edge[end];
        if (typeof state !== "string" || !nodes.has(state))
          return yield fail(
            `edges.${e}.${end}: ${typeof state === "string" ? `state ${state} is not among the nodes` : `expected a state id, got ${describeType(state)}`}`,
            `edges.${e}.${end}`,
          );
      }
      if (!Array.isArray(edge.events))
        return yield fail(`edges.${e}.events: expected a list of events, got ${describeType(edge.events)}`, `edges.${e}.events`);
      for (const [k, event] of edge.events.entries()) {
        const where = `edges.${e}.events.${k}`;
        if (!isRecord(event) || typeof event.event_str !== "string")
          return yield fail(`${where}: expected an event with an event_str, got ${describeType(event)}`, where);
        const eventId = event.event_id;
        if (eventId !== undefined && (typeof eventId !== "number" || !Number.isFinite(eventId)))
          return yield fail(`${where}.event_id: expected a number, got ${describeType(eventId)}`, `${where}.event_id`);
        steps.push({ eventId, order: steps.length, from: edge.from as string, to: edge.to as string, event, where });
      }
    }
    if (steps.length === 0) return yield fail("the graph has no transition: nothing observed after an action", "edges");
    const numbered = steps.filter((s) => s.eventId !== undefined).length;
    if (numbered !== 0 && numbered !== steps.length) {
      const missing = steps.find((s) => s.eventId === undefined) as Step;
      return yield fail(`${missing.where}: no event_id while other events have one, so its place is unknown`, `${missing.where}.event_id`);
    }
    if (numbered > 0) steps.sort((a, b) => (a.eventId as number) - (b.eventId as number) || a.order - b.order);

    const observed = new Map<string, { observation: string; meta: Json }>();
    const observe = async (state: string) => {
      let seen = observed.get(state);
      if (!seen) {
        const node = nodes.get(state) as Json;
        const tree = await stateOf(path, node, options.maxLineBytes);
        seen =
          tree !== undefined
            ? { observation: tree, meta: { tree_format: DROIDBOT_TREE_FORMAT } }
            : { observation: describeNode(node), meta: { observation_format: UTG_NODE_FORMAT } };
        observed.set(state, seen);
      }
      return seen;
    };

    const turns: Turn[] = [];
    let discontinuities = 0;
    let previous = (steps[0] as Step).from;
    for (const step of steps) {
      const type = typeof step.event.event_type === "string" && step.event.event_type !== "" ? step.event.event_type : "event";
      const target = await observe(step.to);
      const meta: Json = { ...target.meta, state_str: step.to };
      if (step.eventId !== undefined) meta.event_id = step.eventId;
      if (step.from !== previous) {
        meta.start_differs = true;
        meta.start_state_str = step.from;
        discontinuities += 1;
      }
      previous = step.to;
      turns.push({ action: canonicalAction(type, { event: step.event.event_str }), observation: target.observation, meta });
    }
    const initial = await observe((steps[0] as Step).from);
    const meta: Json = {
      ...(initial.meta.tree_format !== undefined
        ? { initial_tree_format: initial.meta.tree_format }
        : { initial_observation_format: UTG_NODE_FORMAT }),
      event_order: numbered > 0 ? "event_id" : "file",
      discontinuities,
    };
    for (const key of META_KEYS) {
      const value = utg[key];
      if (typeof value === "string" || typeof value === "number") meta[key] = value;
    }
    yield { kind: "trajectory", trajectory: { id, domain: "android", source, initialObservation: initial.observation, turns, meta } };
  },
};
