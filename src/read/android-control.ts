import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { decodeForest, ForestError, serializedBytes } from "./android-control/forest-proto.ts";
import { jsonFileLayout } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { canonicalAction, contentId, describeType, isRecord, jsonObjectLines, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";
import { boundsAttribute, MAX_DUMP_DEPTH, renderDump, type ViewNode } from "./uiautomator-render.ts";
import { UIAUTOMATOR_TREE_FORMAT } from "./uiautomator-xml.ts";

/**
 * AndroidControl episodes (google-research/google-research `android_control`), as JSON exports of
 * its TFRecord examples: one episode per JSONL line, per element of a top-level JSON array
 * (streamed field by field with stream-json; inline screenshot bytes are skipped, never held), or
 * one pretty-printed JSON object. Fields: `episode_id`, `goal`, `screenshots`,
 * `accessibility_trees` (one AndroidAccessibilityForest per screenshot: an object, or a string of
 * its proto JSON — camelCase or snake_case names —, of its protobuf text format, or of its
 * serialized bytes as the TFRecord holds them, base64-encoded or as a Python `b'…'` literal),
 * `screenshot_widths`/`screenshot_heights`, `actions` (JSON strings or objects with `action_type`)
 * and `step_instructions`.
 *
 * - Action: `{"name": action_type, "arguments": {the other keys, as recorded}}` (canonical JSON),
 *   e.g. `{"name":"click","arguments":{"x":540,"y":1210}}`, `{"name":"open_app","arguments":{"app_name":"Clock"}}`.
 *   Keys whose value is null are left out (the README gives each action type only its own keys; a
 *   struct export fills the others with null).
 * - Observation: the accessibility tree after the action (`accessibility_trees[i + 1]`: actions run
 *   between consecutive screenshots), rendered as a `uiautomator dump` document (`<hierarchy>` of
 *   `<node>`s: class, text, resource-id, package, content-desc, hint, bounds and every boolean
 *   property written out, since proto3 leaves false ones unset), so the android normalizer reads it
 *   as it reads a real dump (`turn.meta.tree_format: "uiautomator-xml"`). The windows' root nodes
 *   are the hierarchy's children, in the forest's window order. The first tree is the initial
 *   observation. With one tree fewer than needed, the last action is `meta.unobserved_final_action`.
 * - Task: `goal`. `turn.meta.step_instruction`: the step instruction (human-written context for
 *   the step, not the agent's thought). Screenshots are not observations here; their paths (when
 *   they are paths, not bytes) go to `turn.meta.screenshot`.
 * - Outcome: none recorded (every episode is a human demonstration); none is set.
 * - Id: `episode_id`, else a hash of the row. Domain: android.
 */
const FORMAT = "android-control";

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// AndroidAccessibilityForest (android_env/proto/a11y): proto JSON or protobuf text format (its
// serialized bytes are decoded by protobufjs in ./android-control/forest-proto.ts).

/** camelCase proto JSON names to the proto's own snake_case names. */
function snakeKey(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
}

function field(message: Json, name: string): unknown {
  if (name in message) return message[name];
  for (const [key, value] of Object.entries(message)) if (snakeKey(key) === name) return value;
  return undefined;
}

function numberField(message: Json, name: string): number {
  const value = field(message, name);
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) ? n : 0;
}

function stringField(message: Json, name: string): string {
  const value = field(message, name);
  return typeof value === "string" ? value : "";
}

const TEXT_TOKEN = /\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[{}<>[\]:,;]|[^\s{}<>[\]:,;"'#]+/y;

/** Decodes a text-format string literal (C escapes; octal and \x escapes are UTF-8 bytes). */
function unquote(token: string): string {
  const body = token.slice(1, -1);
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== "\\") {
      const code = body.codePointAt(i) as number;
      const char = String.fromCodePoint(code);
      bytes.push(...encoder.encode(char));
      i += char.length - 1;
      continue;
    }
    const next = body[++i] ?? "";
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, "\\": 92, "'": 39, '"': 34, "?": 63 };
    if (next in simple) bytes.push(simple[next] as number);
    else if (/[0-7]/.test(next)) {
      const oct = /^[0-7]{1,3}/.exec(body.slice(i)) as RegExpExecArray;
      bytes.push(Number.parseInt(oct[0], 8) & 0xff);
      i += oct[0].length - 1;
    } else if (next === "x") {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1));
      if (!hex) throw new ForestError("protobuf text: bad \\x escape");
      bytes.push(Number.parseInt(hex[0], 16));
      i += hex[0].length;
    } else if (next === "u" || next === "U") {
      const len = next === "u" ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + len);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) throw new ForestError("protobuf text: bad unicode escape");
      bytes.push(...encoder.encode(String.fromCodePoint(Number.parseInt(hex, 16))));
      i += len;
    } else throw new ForestError(`protobuf text: unknown escape \\${next}`);
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Uint8Array.from(bytes));
}

/** Parses protobuf text format into an object (a repeated field becomes an array). */
export function parseProtoText(text: string): Json {
  const tokens: string[] = [];
  TEXT_TOKEN.lastIndex = 0;
  while (TEXT_TOKEN.lastIndex < text.length) {
    const at = TEXT_TOKEN.lastIndex;
    const match = TEXT_TOKEN.exec(text);
    if (!match) throw new ForestError(`protobuf text: unexpected character at offset ${at}`);
    if (!/^\s/.test(match[0]) && !match[0].startsWith("#")) tokens.push(match[0]);
  }
  let pos = 0;
  const scalar = (token: string | undefined): unknown => {
    if (token === undefined) throw new ForestError("protobuf text: ends inside a field");
    if (token.startsWith('"') || token.startsWith("'")) {
      let value = unquote(token);
      // Adjacent string literals concatenate.
      while (tokens[pos]?.startsWith('"') || tokens[pos]?.startsWith("'")) value += unquote(tokens[pos++] as string);
      return value;
    }
    if (token === "true" || token === "True" || token === "t") return true;
    if (token === "false" || token === "False" || token === "f") return false;
    if (/^[-+]?(\d|\.\d)/.test(token)) {
      const n = Number(token.replace(/[fFuUlL]+$/, ""));
      if (Number.isNaN(n)) throw new ForestError(`protobuf text: bad number ${token}`);
      return n;
    }
    if (/^[{}<>[\]:,;]$/.test(token)) throw new ForestError(`protobuf text: unexpected "${token}"`);
    return token; // an enum value
  };
  const message = (close: string | undefined, depth: number): Json => {
    if (depth > MAX_JSON_DEPTH) throw new ForestError(`protobuf text: nested deeper than ${MAX_JSON_DEPTH} levels`);
    const out: Json = {};
    const add = (name: string, value: unknown) => {
      if (!(name in out)) out[name] = value;
      else if (Array.isArray(out[name]) && (out[`\u0000${name}`] as boolean | undefined)) (out[name] as unknown[]).push(value);
      else {
        out[name] = [out[name], value];
        out[`\u0000${name}`] = true;
      }
    };
    for (;;) {
      const token = tokens[pos++];
      if (token === undefined) {
        if (close !== undefined) throw new ForestError(`protobuf text: missing "${close}"`);
        break;
      }
      if (token === close) break;
      if (token === "," || token === ";") continue;
      if (!/^[A-Za-z_[][\w.[\]/]*$/.test(token)) throw new ForestError(`protobuf text: expected a field name, got "${token}"`);
      let next = tokens[pos];
      if (next === ":") next = tokens[++pos];
      if (next === "{" || next === "<") {
        pos++;
        add(token, message(next === "{" ? "}" : ">", depth + 1));
      } else if (next === "[") {
        pos++;
        const values: unknown[] = [];
        while (tokens[pos] !== "]") {
          if (tokens[pos] === undefined) throw new ForestError('protobuf text: missing "]"');
          if (tokens[pos] === ",") {
            pos++;
            continue;
          }
          const t = tokens[pos++];
          values.push(t === "{" || t === "<" ? message(t === "{" ? "}" : ">", depth + 1) : scalar(t));
        }
        pos++;
        for (const value of values) add(token, value);
      } else {
        pos++;
        add(token, scalar(next));
      }
    }
    for (const key of Object.keys(out)) if (key.startsWith("\u0000")) delete out[key];
    return out;
  };
  return message(undefined, 0);
}

const BOOLEANS: readonly [string, string][] = [
  ["is_checkable", "checkable"],
  ["is_checked", "checked"],
  ["is_clickable", "clickable"],
  ["is_editable", "editable"],
  ["is_enabled", "enabled"],
  ["is_focusable", "focusable"],
  ["is_focused", "focused"],
  ["is_long_clickable", "long-clickable"],
  ["is_password", "password"],
  ["is_scrollable", "scrollable"],
  ["is_selected", "selected"],
  ["is_visible_to_user", "visible-to-user"],
];

function a11yAttributes(node: Json): Record<string, string> {
  const attributes: Record<string, string> = {
    text: stringField(node, "text"),
    "resource-id": stringField(node, "view_id_resource_name"),
    class: stringField(node, "class_name"),
    package: stringField(node, "package_name"),
    "content-desc": stringField(node, "content_description"),
  };
  for (const [name, attr] of [
    ["hint_text", "hint"],
    ["tooltip_text", "tooltip"],
  ] as const) {
    const value = stringField(node, name);
    if (value !== "") attributes[attr] = value;
  }
  for (const [name, attr] of BOOLEANS) attributes[attr] = String(field(node, name) === true || field(node, name) === "true");
  const rect = field(node, "bounds_in_screen");
  if (isRecord(rect))
    attributes.bounds = boundsAttribute(
      numberField(rect, "left"),
      numberField(rect, "top"),
      numberField(rect, "right"),
      numberField(rect, "bottom"),
    );
  return attributes;
}

/** One window's nodes (a graph by `child_ids`) as view trees: roots are the nodes no node names as a child. */
function windowViews(window: Json, w: number): ViewNode[] {
  const tree = field(window, "tree");
  const nodes = isRecord(tree) ? list(field(tree, "nodes")) : [];
  const byId = new Map<number, Json>();
  const childIds = new Set<number>();
  nodes.forEach((node, i) => {
    if (!isRecord(node)) throw new ForestError(`windows.${w}.tree.nodes.${i} is ${describeType(node)}, not a node`);
    const id = numberField(node, "unique_id");
    if (!byId.has(id)) byId.set(id, node);
    for (const child of list(field(node, "child_ids"))) childIds.add(Number(child));
  });
  const seen = new Set<Json>();
  const build = (node: Json, depth: number): ViewNode => {
    if (depth > MAX_DUMP_DEPTH) throw new ForestError(`windows.${w}: nodes nest deeper than ${MAX_DUMP_DEPTH} levels`);
    seen.add(node);
    const children: ViewNode[] = [];
    for (const id of list(field(node, "child_ids"))) {
      const child = byId.get(Number(id));
      // A child id with no node (the forwarder drops some) is left out; a cycle is cut.
      if (child && !seen.has(child)) children.push(build(child, depth + 1));
    }
    return { attributes: a11yAttributes(node), children };
  };
  const roots: ViewNode[] = [];
  for (const [id, node] of byId) if (!childIds.has(id) && !seen.has(node)) roots.push(build(node, 1));
  return roots;
}

/** An AndroidAccessibilityForest (object, proto JSON text, protobuf text, or its serialized bytes) as a uiautomator dump. */
export function forestDump(value: unknown): string {
  let forest: unknown = value;
  if (typeof value === "string") {
    const text = value.trim();
    const bytes = text.startsWith("{") ? undefined : serializedBytes(text);
    if (bytes) forest = decodeForest(bytes);
    else if (text.startsWith("{")) {
      try {
        forest = JSON.parse(text);
      } catch (err) {
        throw new ForestError(`not proto JSON: ${(err as Error).message}`);
      }
    } else forest = parseProtoText(text);
  }
  if (!isRecord(forest)) throw new ForestError(`expected an AndroidAccessibilityForest, got ${describeType(forest)}`);
  const windows = list(field(forest, "windows"));
  if (windows.length === 0) throw new ForestError("an AndroidAccessibilityForest with no windows");
  const roots: ViewNode[] = [];
  windows.forEach((window, w) => {
    if (!isRecord(window)) throw new ForestError(`windows.${w} is ${describeType(window)}, not a window`);
    roots.push(...windowViews(window, w));
  });
  return renderDump({ rotation: "0" }, roots);
}

// ---------------------------------------------------------------------------------------------
// The reader

function quarantine(source: SourceRef, entry: Omit<QuarantineEntry, "source" | "stage">, text?: string): ReadItem {
  return { kind: "quarantine", entry: { source, stage: "read", ...entry, ...(text !== undefined ? { excerpt: excerpt(text) } : {}) } };
}

/** A screenshot value kept in meta only when it is a path, not the image bytes. */
const MAX_PATH_CHARS = 1024;

/** One episode row as a trajectory, or why not. `where` prefixes reasons (an array element's index). */
export function androidControlItem(row: Json, source: SourceRef, where = ""): ReadItem {
  // Written back as JSON for ids and excerpts: refuse what JSON.stringify cannot recurse through.
  if (nestsTooDeep(row)) {
    const named = typeof row.episode_id === "string" && row.episode_id !== "" ? { id: row.episode_id } : {};
    return quarantine(source, { ...named, reason: `${where}the episode nests deeper than ${MAX_JSON_DEPTH} levels` });
  }
  const text = () => JSON.stringify(row);
  const episode = row.episode_id;
  const id =
    typeof episode === "string" && episode !== ""
      ? episode
      : typeof episode === "number" && Number.isFinite(episode)
        ? String(episode)
        : contentId(FORMAT, text());
  const fail = (reason: string, field: string) => quarantine(source, { id, field, reason: `${where}${reason}` }, text());

  const actions = row.actions;
  if (!Array.isArray(actions)) return fail(`actions: expected a list of actions, got ${describeType(actions)}`, "actions");
  if (actions.length === 0) return fail("actions: the episode has no action", "actions");
  const trees = row.accessibility_trees;
  if (!Array.isArray(trees))
    return fail(
      `accessibility_trees: expected a list of trees (one per screenshot), got ${describeType(trees)}; screenshots alone are not read`,
      "accessibility_trees",
    );
  if (trees.length !== actions.length + 1 && trees.length !== actions.length)
    return fail(
      `accessibility_trees: ${trees.length} trees for ${actions.length} actions (expected ${actions.length + 1}, one per screenshot)`,
      "accessibility_trees",
    );
  if (nestsTooDeep(actions)) return fail(`actions: nested deeper than ${MAX_JSON_DEPTH} levels`, "actions");

  const dumps: string[] = [];
  for (const [i, tree] of trees.entries()) {
    try {
      dumps.push(forestDump(tree));
    } catch (err) {
      if (!(err instanceof ForestError) && !(err instanceof Error && /nest deeper/.test(err.message))) throw err;
      return fail(`accessibility_trees.${i}: ${(err as Error).message}`, `accessibility_trees.${i}`);
    }
  }
  const parsed: string[] = [];
  for (const [i, raw] of actions.entries()) {
    let action: unknown = raw;
    if (typeof raw === "string") {
      try {
        action = JSON.parse(raw);
      } catch (err) {
        return fail(`actions.${i}: not a JSON action (${(err as Error).message})`, `actions.${i}`);
      }
    }
    if (!isRecord(action) || typeof action.action_type !== "string" || action.action_type === "")
      return fail(
        `actions.${i}: expected an object with a string action_type, got ${excerpt(JSON.stringify(action) ?? "nothing")}`,
        `actions.${i}`,
      );
    // A key with a null value is one this action type does not have: Parquet and Hugging Face
    // exports store actions as structs with the union of every type's keys, null where unused.
    const { action_type, ...rest } = action;
    const args = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== null));
    parsed.push(canonicalAction(action_type, args));
  }

  const instructions = Array.isArray(row.step_instructions) ? row.step_instructions : [];
  const screenshots = Array.isArray(row.screenshots) ? row.screenshots : [];
  const widths = Array.isArray(row.screenshot_widths) ? row.screenshot_widths : [];
  const heights = Array.isArray(row.screenshot_heights) ? row.screenshot_heights : [];
  const screenMeta = (i: number): Json => {
    const meta: Json = {};
    const shot = screenshots[i];
    if (typeof shot === "string" && shot.length <= MAX_PATH_CHARS) meta.screenshot = shot;
    if (typeof widths[i] === "number" && typeof heights[i] === "number") meta.screen_size = [widths[i], heights[i]];
    return meta;
  };
  const turns: Turn[] = [];
  for (let i = 0; i + 1 < dumps.length; i++) {
    const meta: Json = { tree_format: UIAUTOMATOR_TREE_FORMAT, ...screenMeta(i + 1) };
    const instruction = instructions[i];
    if (typeof instruction === "string" && instruction !== "") meta.step_instruction = instruction;
    turns.push({ action: parsed[i] as string, observation: dumps[i + 1] as string, meta });
  }
  const meta: Json = { initial_tree_format: UIAUTOMATOR_TREE_FORMAT, ...prefixKeys(screenMeta(0), "initial_") };
  if (dumps.length === parsed.length) {
    meta.unobserved_final_action = parsed.at(-1);
    const instruction = instructions[parsed.length - 1];
    if (typeof instruction === "string" && instruction !== "") meta.unobserved_final_step_instruction = instruction;
  }
  if (turns.length === 0) return fail("the episode's one action has no tree after it: nothing observed", "accessibility_trees");
  const trajectory: Trajectory = {
    id,
    domain: "android",
    source,
    ...(typeof row.goal === "string" && row.goal !== "" ? { task: row.goal } : {}),
    initialObservation: dumps[0] as string,
    turns,
    meta,
  };
  return { kind: "trajectory", trajectory };
}

function prefixKeys(meta: Json, prefix: string): Json {
  return Object.fromEntries(Object.entries(meta).map(([k, v]) => [`${prefix}${k}`, v]));
}

/** Is this parsed row an AndroidControl episode (trees or step instructions beside actions)? */
function isEpisodeRow(row: Json): boolean {
  return "actions" in row && ("accessibility_trees" in row || "step_instructions" in row);
}

export const androidControlReader: Reader = {
  name: FORMAT,
  domain: "android",
  description:
    "AndroidControl episodes (episode_id, goal, accessibility_trees, actions, step_instructions), one per JSONL line or JSON-array element",

  sniff(head) {
    const start = head.replace(/^\uFEFF/, "").trimStart();
    if (!start.startsWith("{") && !start.startsWith("[")) return false;
    const keys = (/"accessibility_trees"\s*:\s*\[/.test(start) ? 1 : 0) + (/"step_instructions"\s*:\s*\[/.test(start) ? 1 : 0);
    return keys >= 1 && /"(actions|goal|screenshot_widths|episode_id)"\s*:/.test(start) && !/"(messages|conversations)"\s*:/.test(start);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const layout = await jsonFileLayout(path);
    if (layout === "jsonl") {
      for await (const line of jsonObjectLines(path, options, FORMAT)) {
        if (line.kind === "quarantine") yield line;
        else if (!isEpisodeRow(line.record))
          yield quarantine(
            line.source,
            { reason: "not an AndroidControl episode: no actions beside accessibility_trees or step_instructions" },
            line.text,
          );
        else yield androidControlItem(line.record, line.source);
      }
      return;
    }
    yield* readDocument(path, layout);
  },
};

/**
 * A JSON array of episodes, or one episode: each episode's fields are assembled one by one, and
 * screenshot byte strings are skipped by the tokenizer (a path is kept), so memory holds one
 * episode's trees and actions, never its images.
 */
async function* readDocument(path: string, layout: "array" | "document"): AsyncGenerator<ReadItem> {
  const depth = layout === "array" ? 1 : 0;
  // Elements as they start (objects are not assembled whole: an empty one yields no field).
  const started: number[] = layout === "document" ? [0] : [];
  let settled = -1;
  const wanted = (at: JsonPath, kind: JsonKind): boolean => {
    if (layout === "array" && at.length === 1) {
      if (kind === "object") started.push(at[0] as number);
      return kind !== "object";
    }
    if (at.length === depth + 1) return at[depth] !== "screenshots";
    return at.length === depth + 2 && at[depth] === "screenshots" && kind === "scalar";
  };
  const sourceOf = (index: number): SourceRef =>
    layout === "array" ? { uri: path, offset: 0, row: index, format: FORMAT } : { uri: path, offset: 0, format: FORMAT };
  const whereOf = (index: number) => (layout === "array" ? `element ${index}: ` : "");
  const notEpisode = (index: number) =>
    quarantine(sourceOf(index), {
      reason: `${whereOf(index)}not an AndroidControl episode: no actions beside accessibility_trees or step_instructions`,
    });
  let current: { index: number; row: Json; shots: unknown[] } | undefined;
  // Items for every element that started before `index` (the current one, then empty objects).
  function* settle(index: number): Generator<ReadItem> {
    if (current && current.index < index) {
      const { index: at, row, shots } = current;
      current = undefined;
      settled = at;
      if (shots.length > 0) row.screenshots = shots;
      yield isEpisodeRow(row) ? androidControlItem(row, sourceOf(at), whereOf(at)) : notEpisode(at);
    }
    while (started.length > 0 && (started[0] as number) < index) {
      const at = started.shift() as number;
      if (current?.index === at || settled === at) continue;
      yield notEpisode(at);
    }
  }
  const { stream } = await openDecompressed(path);
  let last = -1;
  try {
    for await (const { path: at, value } of selectJson(stream, wanted)) {
      const index = layout === "array" ? (at[0] as number) : 0;
      last = index;
      yield* settle(index);
      if (layout === "array" && at.length === 1) {
        yield quarantine(sourceOf(index), { reason: `element ${index}: expected a JSON object (an episode), got ${describeType(value)}` });
        continue;
      }
      if (current?.index !== index) current = { index, row: {}, shots: [] };
      const key = at[depth] as string;
      if (key === "screenshots") current.shots.push(typeof value === "string" && value.length <= MAX_PATH_CHARS ? value : null);
      else current.row[key] = value;
    }
    yield* settle(Number.POSITIVE_INFINITY);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    current = undefined;
    const what =
      layout === "array" ? `the JSON array breaks in or after element ${Math.max(last, 0)}` : "the file is not one JSON document";
    yield quarantine({ uri: path, format: FORMAT }, { reason: `${what}: ${err.message}` });
  }
}
