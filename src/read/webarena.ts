import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { canonicalJson } from "../normalize/json-canonical.ts";
import { jsonFileLayout } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId, describeType, isRecord, jsonObjectLines, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "webarena";

/**
 * WebArena-style web-agent trajectories as JSON. A file is one JSON document, a JSON array of
 * records (streamed element by element with stream-json) or JSONL. Three record shapes:
 *
 * 1. **Trajectory objects** (WebArena exports, AgentLab/BrowserGym-WebArena dumps, agent repos):
 *    `{intent | task | goal | config: {intent, task_id, start_url, sites, …}, trajectory | steps:
 *    […], score | reward | success}`. Steps come either combined — each `{url, axtree | axtree_txt
 *    | accessibility_tree | observation: "…" | observation|obs: {text | axtree | axtree_txt, url},
 *    action, thought?}` holding the page the agent saw and the action it took on it — or
 *    alternating as WebArena's own `Trajectory` list (`StateInfo {observation: {text}, info:
 *    {page: {url}, fail_error}}`, then `Action {action_type, element_id, …, raw_prediction}`,
 *    then the next state…). Page i is the state before action i.
 *    - **Action**: canonical JSON `{"name", "arguments"}`. From WebArena's id-based strings
 *      (`click [12]`, `type [12] [text] [1]`, `press [Ctrl+v]`, `scroll [down]`, `goto [url]`,
 *      `tab_focus [1]`, `stop [answer]`, …), BrowserGym calls (`click('a12')`), WebArena action
 *      dicts (`action_type` as the `ActionTypes` number or name, with `element_id`, `text`,
 *      `key_comb`, `direction`, `url`, `answer`, `coords` …), or `{name, arguments}` as is.
 *      An action text that parses as none of these is `{"name": <first word>, "arguments":
 *      {"raw": text}}`. The text as written is `turn.meta.raw_action`.
 *    - **Observation**: the page after the action: the next step's accessibility tree (a leading
 *      `Tab 0 (current): …` block goes to `turn.meta.open_tabs`), with its URL in
 *      `turn.meta.url` and a failed action's `fail_error` / `last_action_error` in
 *      `turn.meta.last_action_error`. The first page is `initialObservation`; an action after the
 *      last page was never observed: `meta.unobserved_final_action`.
 *    - **Thinking**: `thought` / `reasoning` / `think`, or the text of `raw_prediction` before the
 *      action's code block.
 *    - **Outcome**: `score` (WebArena's evaluator, 0/1) or `reward` / `cum_reward` →
 *      `meta.outcome.reward` (and `success` when it is 0 or 1); a boolean `success` / `resolved`.
 * 2. **Action-only results** (`{task_id, task, action_history: ["Click at (963, 72)", …],
 *    thoughts, final_result_response, result_status}`, Online-Mind2Web / Browser-Use runs): no
 *    page state is recorded, so the record is yielded with no turns, its actions in
 *    `meta.unobserved_actions`, and `meta.read_filter` {stage: "no-observations"}.
 * 3. **NNetNav-WA step rows** (`{dataset, id, messages: [system, user, assistant], output,
 *    task_name, prompt, n_tokens}`; `messages` may be empty, then the Llama-3 `prompt` is read):
 *    one row per step, the user message `OBSERVATION:\n<tabs + tree>\nURL: …\nOBJECTIVE: …\n
 *    PREVIOUS ACTIONS: …`, the assistant reasoning ending in the action in ``` fences. Consecutive
 *    rows with the same `id` whose previous-action count grows form ONE record (trajectory):
 *    turn i = row i's action + row i+1's page; the last row's action is unobserved. A run of one
 *    row has no observed action: read_filter {stage: "no-observation-after-action"}.
 *
 * Id: `id` / `trajectory_id` / `traj_id`; else `<task_id>-<hash of the record>` (attempts of one
 * task stay apart); else a hash. `meta.task_id` (task_id, config.task_id, NNetNav task_name),
 * `meta.agent`, `meta.model` where recorded. Domain: `web` (or `--domain`).
 */
export const webArenaReader: Reader = {
  name: FORMAT,
  domain: "web",
  description: "WebArena-style trajectory JSON (intent + steps with url/axtree/action), NNetNav-WA rows, action-only web results",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    if (!/^[[{]/.test(text)) return false;
    if (NNETNAV_EVIDENCE.test(text) && /"(messages|prompt)"\s*:/.test(text)) return true;
    const steps = /"(trajectory|steps)"\s*:\s*\[/.test(text);
    if (steps && WEB_STEP_KEY.test(text)) return true;
    if (steps && /"(intent|start_url)"\s*:/.test(text)) return true;
    return /"action_history"\s*:\s*\[/.test(text) && /"(final_result_response|result_status)"\s*:/.test(text);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const domain = options.domain ?? "web";
    let run: StepRun | undefined;
    const seen = new Map<string, number>();
    const finishRun = function* (): Generator<ReadItem> {
      if (run) yield nnetnavItem(run, domain, seen);
      run = undefined;
    };
    for await (const item of jsonRecords(path, options, FORMAT)) {
      if (item.kind === "quarantine") {
        yield* finishRun();
        yield item;
        continue;
      }
      const { value, source, where, text } = item;
      if (isNNetNavRow(value)) {
        const row = parseNNetNavRow(value);
        const key = nnetnavKey(value);
        const last = run?.rows.at(-1);
        // A row whose previous-action count does not grow starts the same task over: a new run.
        const restarts = last !== undefined && "step" in last && "step" in row && row.step.previous <= last.step.previous;
        if (run && (run.key !== key || restarts)) yield* finishRun();
        run ??= { key, source, rows: [], first: value, text };
        run.rows.push({ ...row, where });
        continue;
      }
      yield* finishRun();
      yield recordItem(value, source, where, text, domain);
    }
    yield* finishRun();
  },
};

// ---------------------------------------------------------------------------------------------
// Shared with the Mind2Web reader: record streaming, actions, quarantine entries.

export type Json = Record<string, unknown>;

// WebArena's agent prompt, or its observation: `OBSERVATION:` then an accessibility tree or `URL:`.
const NNETNAV_EVIDENCE =
  /You are an autonomous intelligent agent tasked with navigating a web browser|OBSERVATION:\\n(?:Tab \d+ \(current\)|\[\d+\] RootWebArea)/;
const WEB_STEP_KEY = /"(axtree|axtree_txt|accessibility_tree|action_type|raw_prediction)"\s*:/;

export type RecordItem =
  | { kind: "record"; value: Json; source: SourceRef; where: string; text: string }
  | { kind: "quarantine"; entry: QuarantineEntry };

export function quarantineItem(
  source: SourceRef,
  reason: string,
  extra: { field?: string; text?: string; id?: string } = {},
): Extract<ReadItem, { kind: "quarantine" }> {
  return {
    kind: "quarantine",
    entry: {
      source,
      stage: "read",
      ...(extra.id !== undefined ? { id: extra.id } : {}),
      ...(extra.field !== undefined ? { field: extra.field } : {}),
      reason,
      ...(extra.text !== undefined ? { excerpt: excerpt(extra.text) } : {}),
    },
  };
}

/**
 * The JSON objects of a file, whatever its layout: JSONL lines, elements of a top-level array
 * (streamed one at a time), or one document. Non-objects and broken JSON come out as quarantine
 * entries. `where` names the element (`element 3: `) for reasons.
 */
export async function* jsonRecords(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordItem> {
  const layout = await jsonFileLayout(path);
  if (layout === "jsonl") {
    for await (const line of jsonObjectLines(path, options, format)) {
      if (line.kind === "quarantine") yield line;
      else if (nestsTooDeep(line.record))
        yield quarantineItem(line.source, `the record nests deeper than ${MAX_JSON_DEPTH} levels`, { text: line.text });
      else yield { kind: "record", value: line.record, source: line.source, where: `line ${line.source.line ?? "?"}: `, text: line.text };
    }
    return;
  }
  const wanted =
    layout === "array"
      ? (at: JsonPath, _kind: JsonKind) => at.length === 1 && typeof at[0] === "number"
      : (at: JsonPath) => at.length === 0;
  const { stream } = await openDecompressed(path);
  let index = 0;
  try {
    for await (const { path: at, value } of selectJson(stream, wanted)) {
      const source: SourceRef =
        layout === "array" ? { uri: path, offset: 0, row: at[0] as number, format } : { uri: path, line: 1, offset: 0, format };
      const where = layout === "array" ? `element ${at[0]}: ` : "";
      index += 1;
      if (!isRecord(value)) {
        yield quarantineItem(source, `${where}expected a JSON object, got ${describeType(value)}`);
        continue;
      }
      if (nestsTooDeep(value)) {
        yield quarantineItem(source, `${where}the record nests deeper than ${MAX_JSON_DEPTH} levels`);
        continue;
      }
      yield { kind: "record", value, source, where, text: JSON.stringify(value) };
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const what = layout === "array" ? `the JSON array breaks after element ${index - 1}` : "the file is not one JSON document";
    yield quarantineItem({ uri: path, format }, `${what}: ${err.message}`);
  }
}

/** The agent's browser action as canonical JSON: `{"name": …, "arguments": {…}}`. */
export function webAction(name: string, args: Json): string {
  const text = JSON.stringify({ name, arguments: args });
  return canonicalJson(text) ?? text;
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function idText(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return str(value);
}

// ---------------------------------------------------------------------------------------------
// Action strings

const BRACKET_ARGS = /\[((?:[^[\]]|\[[^\]]*\])*)\]/g;

/**
 * `action2str`'s suffix naming the element an id-based action acted on (`click [12] where [12]
 * is [12] link 'Home'`, as WebArena's render HTML and its prompts' previous actions write them).
 */
const WHERE_SUFFIX = /\s+where \[(\d+)\] is [\s\S]*$/;

/** WebArena's id-based action text (`type [12] [hello] [0]`) → name and arguments, or undefined. */
export function parseWebArenaAction(text: string): { name: string; args: Json } | undefined {
  let trimmed = text.trim();
  // The suffix is dropped when it names the action's own element (the first bracket group).
  const where = WHERE_SUFFIX.exec(trimmed);
  const described = where !== null && new RegExp(`^[a-z_]+\\s*\\[${where[1]}\\]`).test(trimmed);
  if (described) trimmed = trimmed.slice(0, where.index);
  const head = /^([a-z_]+)\b\s*/.exec(trimmed);
  if (!head) return undefined;
  const name = (head[1] as string) === "page_focus" ? "tab_focus" : (head[1] as string);
  const rest = trimmed.slice(head[0].length);
  const args = [...rest.matchAll(BRACKET_ARGS)].map((m) => m[1] as string);
  switch (name) {
    case "click":
    case "hover":
      return args.length === 1 ? { name, args: { element_id: args[0] } } : undefined;
    case "type": {
      // The text may hold brackets: the id is the first group, the flag the last `[0]`/`[1]`.
      const typed = /^\[([^\]]*)\]\s*\[([\s\S]*?)\](?:\s*\[([01])\])?\s*$/.exec(rest);
      if (!typed) return undefined;
      let typedText = typed[2] as string;
      // Without the flag the model's action presses Enter; action2str writes no flag but the
      // Enter itself, as the text's last "\n".
      let enter = typed[3] === undefined ? !described : typed[3] === "1";
      if (typed[3] === undefined && typedText.endsWith("\n")) {
        typedText = typedText.slice(0, -1);
        enter = true;
      }
      return { name, args: { element_id: typed[1], text: typedText, press_enter_after: enter } };
    }
    case "press":
      return args.length === 1 ? { name, args: { key_comb: args[0] } } : undefined;
    case "scroll":
      return args.length === 1 ? { name, args: { direction: (args[0] as string).replace(/^direction=/, "") } } : undefined;
    case "tab_focus":
      return args.length === 1 && /^\d+$/.test(args[0] as string) ? { name, args: { tab_index: Number(args[0]) } } : undefined;
    case "goto":
      return args.length === 1 ? { name, args: { url: args[0] } } : undefined;
    case "stop": {
      const answer = /^\[([\s\S]*)\]\s*$/.exec(rest);
      return answer ? { name, args: { answer: answer[1] } } : rest === "" ? { name, args: { answer: "" } } : undefined;
    }
    case "new_tab":
    case "close_tab":
    case "go_back":
    case "go_forward":
    case "none":
      return rest === "" ? { name, args: {} } : undefined;
    default:
      return undefined;
  }
}

/** A Python-literal argument list (`'a12', button='left', 3`): positional and keyword values. */
function parsePyArgs(text: string): { positional: unknown[]; keyword: Json } | undefined {
  const positional: unknown[] = [];
  const keyword: Json = {};
  let i = 0;
  const skip = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  const literal = (): unknown => {
    skip();
    const c = text[i];
    if (c === "'" || c === '"') {
      let value = "";
      i++;
      while (i < text.length && text[i] !== c) {
        if (text[i] === "\\" && i + 1 < text.length) {
          const e = text[i + 1] as string;
          value += e === "n" ? "\n" : e === "t" ? "\t" : e;
          i += 2;
        } else value += text[i++];
      }
      if (text[i] !== c) throw new Error("unterminated string");
      i++;
      return value;
    }
    const word = /^(-?\d+(?:\.\d+)?(?:e-?\d+)?|True|False|None)/.exec(text.slice(i));
    if (!word) throw new Error("not a literal");
    i += (word[0] as string).length;
    return word[0] === "True" ? true : word[0] === "False" ? false : word[0] === "None" ? null : Number(word[0]);
  };
  try {
    skip();
    while (i < text.length) {
      const kw = /^([A-Za-z_]\w*)\s*=(?!=)/.exec(text.slice(i));
      if (kw) {
        i += kw[0].length;
        keyword[kw[1] as string] = literal();
      } else positional.push(literal());
      skip();
      if (i < text.length) {
        if (text[i] !== ",") return undefined;
        i++;
        skip();
      }
    }
  } catch {
    return undefined;
  }
  return { positional, keyword };
}

/** BrowserGym's high-level action call (`click('a12')`, `fill('b3', "text")`) → name and arguments. */
function parseBrowserGymCall(text: string): { name: string; args: Json } | undefined {
  const call = /^([a-z_][a-z0-9_]*)\(([\s\S]*)\)$/.exec(text.trim());
  if (!call) return undefined;
  const parsed = parsePyArgs(call[2] as string);
  if (!parsed) return undefined;
  const args: Json = parsed.positional.length > 0 ? { args: parsed.positional } : {};
  return { name: call[1] as string, args: { ...args, ...parsed.keyword } };
}

/** Any action text → canonical action JSON (raw fallback, see the header). */
export function actionFromText(text: string): string {
  const parsed = parseWebArenaAction(text) ?? parseBrowserGymCall(text);
  if (parsed) return webAction(parsed.name, parsed.args);
  const word = /^[A-Za-z_]+/.exec(text.trim())?.[0]?.toLowerCase() ?? "action";
  return webAction(word, { raw: text });
}

/** A model's reply: the action in its last ``` fence (or the `In summary … is` tail), and the text around it. */
export function splitReply(reply: string): { action?: string; thinking?: string } {
  const fences = [...reply.matchAll(/```([\s\S]*?)```/g)];
  const last = fences.at(-1);
  if (!last) return {};
  const thinking = (reply.slice(0, last.index) + reply.slice((last.index as number) + last[0].length)).trim();
  return { action: (last[1] as string).trim(), ...(thinking ? { thinking } : {}) };
}

// WebArena browser_env.actions.ActionTypes (IntEnum), by value.
const ACTION_TYPES = [
  "NONE",
  "SCROLL",
  "KEY_PRESS",
  "MOUSE_CLICK",
  "KEYBOARD_TYPE",
  "MOUSE_HOVER",
  "CLICK",
  "TYPE",
  "HOVER",
  "PAGE_FOCUS",
  "NEW_TAB",
  "GO_BACK",
  "GO_FORWARD",
  "GOTO_URL",
  "PAGE_CLOSE",
  "CHECK",
  "SELECT_OPTION",
  "STOP",
  "CLEAR",
  "UPLOAD",
];
// browser_env/constants.py: the key vocabulary of a TYPE / KEYBOARD_TYPE action's `text` ids
// (`_id2key` = SPECIAL_KEYS, then ASCII_CHARSET chr(32..127), FREQ_UNICODE_CHARSET chr(129..129999),
// then "\n").
const SPECIAL_KEYS = [
  "Enter",
  "Tab",
  "Control",
  "Shift",
  "Meta",
  "Backspace",
  "Delete",
  "Escape",
  "ArrowUp",
  "ArrowDown",
  "ArrowLeft",
  "ArrowRight",
  "PageDown",
  "PageUp",
  "Meta+a",
];
const ASCII_FROM = SPECIAL_KEYS.length;
const UNICODE_FROM = ASCII_FROM + (128 - 32);
const NEWLINE_ID = UNICODE_FROM + (130000 - 129);

/** A WebArena key id as the key (`_id2key[id]`), or undefined when no key has that id. */
function keyOfId(id: number): string | undefined {
  if (!Number.isInteger(id) || id < 0) return undefined;
  if (id < ASCII_FROM) return SPECIAL_KEYS[id];
  if (id < UNICODE_FROM) return String.fromCharCode(32 + id - ASCII_FROM);
  if (id < NEWLINE_ID) return String.fromCodePoint(129 + id - UNICODE_FROM);
  return id === NEWLINE_ID ? "\n" : undefined;
}

/** The text of a list of key ids, as WebArena's `action2str` joins it; an error naming an id no key has. */
function textOfKeyIds(ids: number[]): { text: string } | { error: string } {
  let text = "";
  for (const [i, id] of ids.entries()) {
    const key = keyOfId(id);
    if (key === undefined) return { error: `text.${i}: ${id} is not a key id of WebArena's action space` };
    text += key;
  }
  return { text };
}

const ACTION_NAMES: Record<string, string> = {
  KEY_PRESS: "press",
  PAGE_FOCUS: "tab_focus",
  GOTO_URL: "goto",
  PAGE_CLOSE: "close_tab",
};

/** A WebArena `Action` dict → name and arguments (the fields that action type uses). */
function webArenaActionDict(action: Json): { name: string; args: Json; keyIds?: number[] } | { error: string } {
  const raw = action.action_type;
  let type: string | undefined;
  if (typeof raw === "number") type = ACTION_TYPES[raw];
  else if (typeof raw === "string") type = raw.replace(/^(ACTION_TYPES|ActionTypes)\./i, "").toUpperCase();
  if (type === undefined || !ACTION_TYPES.includes(type))
    return { error: `action_type ${JSON.stringify(raw)} is not a WebArena action type` };
  const name = ACTION_NAMES[type] ?? type.toLowerCase();
  const args: Json = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== "" && !(Array.isArray(value) && value.length === 0)) args[key] = value;
  };
  put("element_id", action.element_id);
  if (args.element_id === undefined && typeof action.element_name === "string") put("element_name", action.element_name);
  if (typeof action.element_role === "string") put("element_role", action.element_role);
  if (typeof action.text === "string") put("text", action.text);
  else if (Array.isArray(action.text) && action.text.every((t) => typeof t === "string")) put("text", action.text.join(""));

  if (name === "scroll") put("direction", action.direction);
  if (name === "press") put("key_comb", action.key_comb);
  if (name === "goto") put("url", action.url);
  if (name === "tab_focus") put("page_number", action.page_number);
  if (name === "stop") args.answer = typeof action.answer === "string" ? action.answer : "";
  if (name.startsWith("mouse_")) put("coords", action.coords);
  if (name === "select_option" || name === "check") put("pw_code", action.pw_code);
  // WebArena's own Action dict holds the typed text as key ids (`_keys2ids`), read by stepAction.
  const ids = action.text;
  if (Array.isArray(ids) && ids.length > 0 && ids.every((id) => typeof id === "number")) return { name, args, keyIds: ids };
  return { name, args };
}

interface StepAction {
  action: string;
  raw: string;
  thinking?: string;
}

/** A step's action (string, WebArena dict, `{name, arguments}`), with its thinking; error when unreadable. */
function stepAction(value: unknown, step: Json): StepAction | { error: string } | undefined {
  let thinking =
    str(step.thought) ?? str(step.reasoning) ?? str(step.think) ?? (isRecord(step.agent_info) ? str(step.agent_info.think) : undefined);
  if (typeof value === "string") {
    const reply = splitReply(value);
    const text = reply.action ?? value.trim();
    if (text === "") return { error: "the action is an empty string" };
    thinking ??= reply.thinking;
    return { action: actionFromText(text), raw: text, ...(thinking ? { thinking } : {}) };
  }
  if (!isRecord(value)) return value === undefined || value === null ? undefined : { error: `the action is ${describeType(value)}` };
  thinking ??= str(value.thought) ?? str(value.reasoning);
  const prediction = str(value.raw_prediction);
  const reply = prediction !== undefined ? splitReply(prediction) : {};
  thinking ??= reply.thinking;
  const withThinking = (action: string, raw: string): StepAction => ({ action, raw, ...(thinking ? { thinking } : {}) });
  if ("action_type" in value) {
    const dict = webArenaActionDict(value);
    if ("error" in dict) return dict;
    // WebArena stores typed text as key ids: the text the agent wrote is in raw_prediction, and
    // without one the ids are decoded (`_id2key`); an id-based TYPE appends "\n" for its
    // press-enter flag, which is read back as press_enter_after.
    const fromReply = reply.action !== undefined ? parseWebArenaAction(reply.action) : undefined;
    if (dict.args.text === undefined && fromReply?.name === dict.name && fromReply.args.text !== undefined) {
      dict.args.text = fromReply.args.text;
      dict.args.press_enter_after = fromReply.args.press_enter_after;
    } else if (dict.args.text === undefined && dict.keyIds) {
      const decoded = textOfKeyIds(dict.keyIds);
      if ("error" in decoded) return decoded;
      const enter = dict.name === "type" && decoded.text.endsWith("\n");
      dict.args.text = enter ? decoded.text.slice(0, -1) : decoded.text;
      if (dict.name === "type") dict.args.press_enter_after = enter;
    }
    return withThinking(webAction(dict.name, dict.args), reply.action ?? JSON.stringify(value));
  }
  if (typeof value.name === "string" && (value.arguments === undefined || isRecord(value.arguments)))
    return withThinking(webAction(value.name, (value.arguments as Json | undefined) ?? {}), JSON.stringify(value));
  const text = str(value.action) ?? str(value.action_str) ?? str(value.raw_action) ?? reply.action;
  if (text !== undefined) return withThinking(actionFromText(text), text);
  return { error: "the action has no action_type, name, action text or raw_prediction" };
}

// ---------------------------------------------------------------------------------------------
// Pages

interface Page {
  text: string;
  url?: string;
  openTabs?: string;
  error?: string;
}

/** `Tab 0 (current): …` lines before the tree (WebArena's multi-tab observation) → open tabs + tree. */
export function splitTabs(text: string): { tree: string; openTabs?: string } {
  const match = /^((?:Tab \d+(?: \(current\))?:[^\n]*\n)+)\n*/.exec(text);
  if (!match) return { tree: text };
  return { tree: text.slice(match[0].length), openTabs: (match[1] as string).trimEnd() };
}

const TREE_KEYS = ["axtree", "axtree_txt", "accessibility_tree", "text", "html"] as const;

/** The page a step records: its tree text and URL, or undefined when it records none. */
function stepPage(step: Json): Page | undefined {
  const obs = isRecord(step.observation) ? step.observation : isRecord(step.obs) ? step.obs : isRecord(step.state) ? step.state : undefined;
  let text: string | undefined;
  for (const key of TREE_KEYS) text ??= typeof step[key] === "string" && key !== "text" ? (step[key] as string) : undefined;
  if (text === undefined && typeof step.observation === "string") text = step.observation;
  if (obs) for (const key of TREE_KEYS) text ??= typeof obs[key] === "string" ? (obs[key] as string) : undefined;
  if (text === undefined) return undefined;
  const info = isRecord(step.info) ? step.info : undefined;
  const url =
    str(step.url) ??
    (obs ? str(obs.url) : undefined) ??
    (info && isRecord(info.page) ? str(info.page.url) : undefined) ??
    (info ? str(info.url) : undefined);
  const error = str(step.last_action_error) ?? (obs ? str(obs.last_action_error) : undefined) ?? (info ? str(info.fail_error) : undefined);
  const { tree, openTabs } = splitTabs(text);
  return { text: tree, ...(url ? { url } : {}), ...(openTabs ? { openTabs } : {}), ...(error ? { error } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Trajectory objects and action-only results

const STEP_KEYS = ["trajectory", "steps", "history"] as const;

function recordItem(value: Json, source: SourceRef, where: string, text: string, domain: Trajectory["domain"]): ReadItem {
  const config = isRecord(value.config) ? value.config : isRecord(value.task) ? value.task : isRecord(value.intent) ? value.intent : {};
  const taskId = idText(value.task_id) ?? idText(config.task_id);
  const ownId = idText(value.id) ?? idText(value.trajectory_id) ?? idText(value.traj_id);
  const id = ownId ?? (taskId !== undefined ? contentId(`${taskId}`, text) : contentId("webarena", text));
  const fail = (reason: string, field?: string) => quarantineItem(source, `${where}${reason}`, { text, id, ...(field ? { field } : {}) });
  const task = str(value.intent) ?? str(config.intent) ?? str(value.task) ?? str(value.goal) ?? str(config.goal) ?? str(value.instruction);

  const meta: Json = {};
  if (taskId !== undefined) meta.task_id = taskId;
  const agent = str(value.agent) ?? str(value.agent_name) ?? (isRecord(value.agent) ? str(value.agent.name) : undefined);
  if (agent) meta.agent = agent;
  const model = str(value.model) ?? str(value.model_name) ?? str(config.model);
  if (model) meta.model = model;
  const attempt = idText(value.attempt) ?? idText(value.trial);
  if (attempt) meta.attempt = attempt;
  for (const key of ["start_url", "sites", "require_login", "storage_state", "eval"] as const)
    if (config[key] !== undefined) meta[key] = config[key];
  const outcome = outcomeOf(value);
  if (outcome) meta.outcome = outcome;

  const stepsKey = STEP_KEYS.find((key) => key in value);
  if (stepsKey === undefined) {
    if (Array.isArray(value.action_history)) return actionOnlyItem(value, source, id, task, meta, domain, fail);
    return fail(
      `not a WebArena trajectory: no "trajectory", "steps" or "action_history" (keys: ${Object.keys(value).slice(0, 12).join(", ")})`,
    );
  }
  const steps = value[stepsKey];
  if (!Array.isArray(steps)) return fail(`"${stepsKey}" must be an array, got ${describeType(steps)}`, stepsKey);

  const pages: { page: Page; at: number }[] = [];
  const actions: (StepAction | undefined)[] = [];
  for (const [j, step] of steps.entries()) {
    const field = `${stepsKey}.${j}`;
    if (!isRecord(step)) return fail(`${field} must be an object, got ${describeType(step)}`, field);
    const page = stepPage(step);
    // WebArena's Action dicts are steps of their own (alternating list); other steps nest `action`.
    const action = "action_type" in step && page === undefined ? stepAction(step, step) : stepAction(step.action, step);
    if (action && "error" in action) return fail(`${field}.action: ${action.error}`, `${field}.action`);
    if (page === undefined && action === undefined)
      return fail(`${field} has neither a page (axtree, observation, url…) nor an action`, field);
    if (page) {
      pages.push({ page, at: j });
      actions.push(undefined);
    }
    if (action) {
      if (pages.length === 0) return fail(`${field}: an action before any page state`, field);
      if (actions[pages.length - 1] !== undefined) return fail(`${field}: a second action on the same page, with no page between`, field);
      actions[pages.length - 1] = action;
    }
  }
  if (pages.length === 0) return fail(`"${stepsKey}" records no page state`, stepsKey);
  const turns: Turn[] = [];
  for (let i = 0; i + 1 < pages.length; i++) {
    const action = actions[i];
    const next = pages[i + 1] as { page: Page; at: number };
    if (!action) return fail(`${stepsKey}.${next.at}: a page follows page ${i} with no action between them`, `${stepsKey}.${next.at}`);
    turns.push(pageTurn(action, next.page));
  }
  const first = (pages[0] as { page: Page }).page;
  const final = actions[pages.length - 1];
  if (final) meta.unobserved_final_action = final.action;
  if (first.url) meta.initial_url = first.url;
  if (first.openTabs) meta.initial_open_tabs = first.openTabs;
  if (turns.length === 0)
    meta.read_filter = {
      stage: "no-observation-after-action",
      reason: "the trajectory records one page state and no page after any action, so there is no observation to learn",
    };
  return {
    kind: "trajectory",
    trajectory: { id, domain, source, ...(task !== undefined ? { task } : {}), initialObservation: first.text, turns, meta },
  };
}

function pageTurn(action: StepAction, page: Page, extra: Json = {}): Turn {
  const meta: Json = { raw_action: action.raw, ...extra };
  if (page.url) meta.url = page.url;
  if (page.openTabs) meta.open_tabs = page.openTabs;
  if (page.error) meta.last_action_error = page.error;
  return { action: action.action, observation: page.text, ...(action.thinking ? { thinking: action.thinking } : {}), meta };
}

function outcomeOf(value: Json): Json | undefined {
  const outcome: Json = {};
  const reward = [value.score, value.reward, value.cum_reward].find((r) => typeof r === "number" && Number.isFinite(r)) as
    | number
    | undefined;
  if (reward !== undefined) {
    outcome.reward = reward;
    if (reward === 0 || reward === 1) outcome.success = reward === 1;
  }
  if (typeof value.success === "boolean") outcome.success = value.success;
  if (typeof value.resolved === "boolean") outcome.resolved = value.resolved;
  const status = str(value.result_status)?.toLowerCase();
  if (status === "success" || status === "succeeded") outcome.success = true;
  else if (status === "failure" || status === "failed") outcome.success = false;
  return Object.keys(outcome).length > 0 ? outcome : undefined;
}

/** Browser-Use / Online-Mind2Web action strings → canonical actions. */
function actionFromHistory(text: string): string {
  let m = /^Click at \((-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\)$/.exec(text);
  if (m) return webAction("click", { x: Number(m[1]), y: Number(m[2]) });
  m = /^Type "([\s\S]*)"$/.exec(text);
  if (m) return webAction("type", { text: m[1] });
  m = /^Navigate to (\S+)$/.exec(text);
  if (m) return webAction("goto", { url: m[1] });
  m = /^Press (.+)$/.exec(text);
  if (m) return webAction("press", { key_comb: m[1] });
  m = /^Scroll \(delta_x=(-?\d+), delta_y=(-?\d+)\)$/.exec(text);
  if (m) return webAction("scroll", { delta_x: Number(m[1]), delta_y: Number(m[2]) });
  return actionFromText(text);
}

function actionOnlyItem(
  value: Json,
  source: SourceRef,
  id: string,
  task: string | undefined,
  meta: Json,
  domain: Trajectory["domain"],
  fail: (reason: string, field?: string) => ReadItem,
): ReadItem {
  const history = value.action_history as unknown[];
  const bad = history.findIndex((a) => typeof a !== "string");
  if (bad >= 0) return fail(`action_history.${bad} must be a string, got ${describeType(history[bad])}`, `action_history.${bad}`);
  meta.unobserved_actions = (history as string[]).map(actionFromHistory);
  if (Array.isArray(value.thoughts)) meta.thoughts = value.thoughts;
  const answer = str(value.final_result_response) ?? str(value.final_answer);
  if (answer) meta.final_answer = answer;
  if (str(value.result_status)) meta.result_status = value.result_status;
  meta.read_filter = {
    stage: "no-observations",
    reason: "the record lists the agent's actions but no page state after any of them, so there is no observation to learn",
  };
  return { kind: "trajectory", trajectory: { id, domain, source, ...(task !== undefined ? { task } : {}), turns: [], meta } };
}

// ---------------------------------------------------------------------------------------------
// NNetNav-WA rows

interface NNetNavStep {
  page: Page;
  objective?: string;
  previous: number;
  action?: StepAction;
  system?: string;
}

interface StepRun {
  key: string;
  source: SourceRef;
  rows: ({ step: NNetNavStep; where: string } | { error: string; field: string; where: string })[];
  first: Json;
  text: string;
}

function isNNetNavRow(value: Json): boolean {
  const messages = value.messages;
  if (Array.isArray(messages) && messages.length > 0)
    return messages.some((m) => isRecord(m) && m.role === "user" && typeof m.content === "string" && m.content.includes("OBSERVATION:"));
  return typeof value.prompt === "string" && value.prompt.includes("OBSERVATION:") && ("output" in value || "task_name" in value);
}

function nnetnavKey(value: Json): string {
  return idText(value.id) ?? idText(value.task_name) ?? "";
}

const LLAMA_TURN = /<\|start_header_id\|>(system|user|assistant)<\|end_header_id\|>\n?([\s\S]*?)(?:<\|eot_id\|>|$)/g;

/** The chat of a row: its `messages`, else the turns of its Llama-3 `prompt` and `output`. */
function rowMessages(value: Json): { role: string; content: string }[] {
  if (Array.isArray(value.messages) && value.messages.length > 0)
    return value.messages
      .filter(isRecord)
      .map((m) => ({ role: String(m.role ?? m.from), content: typeof m.content === "string" ? m.content : String(m.value ?? "") }));
  const text = `${typeof value.prompt === "string" ? value.prompt : ""}${typeof value.output === "string" ? value.output : ""}`;
  return [...text.matchAll(LLAMA_TURN)].map((m) => ({ role: m[1] as string, content: (m[2] as string).trim() }));
}

function parseNNetNavRow(value: Json): { step: NNetNavStep } | { error: string; field: string } {
  const messages = rowMessages(value);
  const user = messages.filter((m) => m.role === "user").at(-1);
  if (!user) return { error: "no user message with the OBSERVATION", field: "messages" };
  const content = user.content;
  const start = content.lastIndexOf("OBSERVATION:");
  const urlAt = content.lastIndexOf("\nURL: ");
  const objectiveAt = content.lastIndexOf("\nOBJECTIVE: ");
  const previousAt = content.lastIndexOf("\nPREVIOUS ACTIONS:");
  if (start < 0 || urlAt < start || objectiveAt < urlAt)
    return { error: "the user message is not OBSERVATION: … URL: … OBJECTIVE: …", field: "messages" };
  const { tree, openTabs } = splitTabs(content.slice(start + "OBSERVATION:".length, urlAt).replace(/^\n/, ""));
  const url = content.slice(urlAt + "\nURL: ".length, objectiveAt).trim();
  const objective = content.slice(objectiveAt + "\nOBJECTIVE: ".length, previousAt > objectiveAt ? previousAt : undefined).trim();
  const previous =
    previousAt > objectiveAt
      ? content
          .slice(previousAt)
          .split("\n")
          .filter((l) => /^\d+: /.test(l)).length
      : 0;
  const assistant = messages.filter((m) => m.role === "assistant").at(-1)?.content ?? str(value.output);
  let action: StepAction | undefined;
  if (assistant !== undefined) {
    const reply = splitReply(assistant.replace(/<\|[a-z_]+\|>/g, "").replace(/^assistant\s*/, ""));
    if (reply.action === undefined || reply.action === "")
      return { error: "the assistant reply has no action in ``` fences", field: "output" };
    action = { action: actionFromText(reply.action), raw: reply.action, ...(reply.thinking ? { thinking: reply.thinking } : {}) };
  }
  const system = messages.find((m) => m.role === "system")?.content;
  return {
    step: {
      page: { text: tree.trimEnd(), ...(url ? { url } : {}), ...(openTabs ? { openTabs } : {}) },
      ...(objective ? { objective } : {}),
      previous,
      ...(action ? { action } : {}),
      ...(system ? { system } : {}),
    },
  };
}

function nnetnavItem(run: StepRun, domain: Trajectory["domain"], seen: Map<string, number>): ReadItem {
  const count = (seen.get(run.key) ?? 0) + 1;
  seen.set(run.key, count);
  const id = run.key === "" ? contentId("nnetnav", run.text) : count === 1 ? run.key : `${run.key}-run${count}`;
  const steps: NNetNavStep[] = [];
  for (const [i, row] of run.rows.entries()) {
    if ("error" in row)
      return quarantineItem(run.source, `${row.where}step ${i} of ${id}: ${row.error}`, { id, field: row.field, text: run.text });
    steps.push(row.step);
  }
  const turns: Turn[] = [];
  for (let i = 0; i + 1 < steps.length; i++) {
    const action = (steps[i] as NNetNavStep).action;
    if (!action)
      return quarantineItem(run.source, `${run.rows[i]?.where ?? ""}step ${i} of ${id} has no assistant action`, {
        id,
        field: "output",
        text: run.text,
      });
    turns.push(pageTurn(action, (steps[i + 1] as NNetNavStep).page));
  }
  const first = steps[0] as NNetNavStep;
  const last = steps.at(-1) as NNetNavStep;
  const meta: Json = {};
  const taskId = idText(run.first.task_name) ?? idText(run.first.id);
  if (taskId) meta.task_id = taskId;
  if (str(run.first.dataset)) meta.dataset = run.first.dataset;
  if (first.system) meta.agent_system = first.system;
  if (first.page.url) meta.initial_url = first.page.url;
  if (first.page.openTabs) meta.initial_open_tabs = first.page.openTabs;
  if (last.action) meta.unobserved_final_action = last.action.action;
  meta.rows = steps.length;
  if (turns.length === 0)
    meta.read_filter = {
      stage: "no-observation-after-action",
      reason: "a single step row: it records the page and the agent's action but not the page after it",
    };
  return {
    kind: "trajectory",
    trajectory: {
      id,
      domain,
      source: run.source,
      ...(first.objective ? { task: first.objective } : {}),
      initialObservation: first.page.text,
      turns,
      meta,
    },
  };
}
