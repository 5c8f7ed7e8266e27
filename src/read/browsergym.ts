import type { Turn } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { type A11yNode, assignKeys, MAX_TREE_DEPTH, makeNode } from "../normalize/tree/a11y-tree.ts";
import { excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId, TreeParseError } from "./uiautomator-xml.ts";

const FORMAT = "browsergym";
export const AXTREE_TREE_FORMAT = "browsergym-axtree";

/** Decodes a Python `repr()` string literal starting at `text[start]`; returns it and where it ends. */
function readPyString(text: string, start: number): { value: string; end: number } {
  const quote = text[start];
  let value = "";
  let i = start + 1;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === quote) return { value, end: i + 1 };
    if (c !== "\\") {
      value += c;
      i++;
      continue;
    }
    const e = text[i + 1];
    const simple: Record<string, string> = {
      n: "\n",
      r: "\r",
      t: "\t",
      "\\": "\\",
      "'": "'",
      '"': '"',
      a: "\x07",
      b: "\b",
      f: "\f",
      v: "\v",
      "0": "\0",
    };
    const hexLength = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (hexLength > 0) {
      const hex = text.slice(i + 2, i + 2 + hexLength);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== hexLength) throw new TreeParseError(`bad escape \\${e}${hex} in a Python string`);
      value += String.fromCodePoint(Number.parseInt(hex, 16));
      i += 2 + hexLength;
    } else if (e !== undefined && e in simple) {
      value += simple[e];
      i += 2;
    } else {
      value += `\\${e ?? ""}`; // Python keeps unknown escapes as written
      i += 2;
    }
  }
  throw new TreeParseError("unterminated Python string");
}

/** A property value: a Python string (decoded), or the literal as written (False, 12, ['a', 'b']). */
function readValue(text: string, start: number): { value: string; end: number } {
  if (text[start] === "'" || text[start] === '"') return readPyString(text, start);
  let depth = 0;
  let i = start;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "'" || c === '"') {
      i = readPyString(text, i).end;
      continue;
    }
    if (c === "[" || c === "(" || c === "{") depth++;
    else if (c === "]" || c === ")" || c === "}") depth--;
    else if (depth === 0 && text.startsWith(", ", i)) break;
    i++;
  }
  return { value: text.slice(start, i), end: i };
}

const NODE_HEAD = /^(?:\[([^\]\s]*)\] )?([^\s,'"[\]]+)/;
const PROP_NAME = /^[A-Za-z_][\w-]*/;

/** One AXTree line, without its indentation: `[bid] role 'name' value='v', prop=value, flag`. */
function parseAxLine(content: string): A11yNode {
  const head = NODE_HEAD.exec(content);
  if (!head) throw new TreeParseError(`not an accessibility-tree line: ${JSON.stringify(content.slice(0, 80))}`);
  const [, bid, role] = head;
  let i = head[0].length;
  let name = "";
  const attributes: Record<string, string> = {};
  if (content[i] === " " && (content[i + 1] === "'" || content[i + 1] === '"')) {
    const parsed = readPyString(content, i + 1);
    name = parsed.value;
    i = parsed.end;
  }
  if (content.startsWith(" value=", i)) {
    const parsed = readValue(content, i + " value=".length);
    attributes.value = parsed.value;
    i = parsed.end;
  }
  while (i < content.length) {
    if (!content.startsWith(", ", i))
      throw new TreeParseError(`unexpected text at column ${i + 1}: ${JSON.stringify(content.slice(i, i + 40))}`);
    i += 2;
    const prop = PROP_NAME.exec(content.slice(i));
    if (!prop) throw new TreeParseError(`expected a property name at column ${i + 1}: ${JSON.stringify(content.slice(i, i + 40))}`);
    i += prop[0].length;
    if (content[i] === "=") {
      const parsed = readValue(content, i + 1);
      attributes[prop[0]] = parsed.value;
      i = parsed.end;
    } else {
      attributes[prop[0]] = "true"; // bare flags: focused, atomic, required, visible, clickable…
    }
  }
  return makeNode(role as string, name, attributes, bid ? { id: bid } : {});
}

/**
 * Parses BrowserGym's linearized AXTree (`flatten_axtree_to_str`): one node per line, a tab per
 * level, `[bid] role 'name', prop=value, …` with Python-repr strings. Nodes keep their bid as
 * `id`; keys are bids, or paths from the nearest node with one. Several top-level lines get a
 * synthetic `root`.
 */
export function parseAxTree(text: string): A11yNode {
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
  const top: A11yNode[] = [];
  const stack: A11yNode[] = [];
  for (const [n, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const depth = /^\t*/.exec(line)?.[0].length ?? 0;
    if (depth > stack.length)
      throw new TreeParseError(`line ${n + 1} is indented ${depth} levels under a node at level ${stack.length - 1}`);
    if (depth >= MAX_TREE_DEPTH)
      throw new TreeParseError(`line ${n + 1} is nested ${depth} levels deep, over the ${MAX_TREE_DEPTH}-level limit`);
    let node: A11yNode;
    try {
      node = parseAxLine(line.slice(depth));
    } catch (err) {
      throw new TreeParseError(`line ${n + 1}: ${(err as Error).message}`);
    }
    stack.length = depth;
    if (depth === 0) top.push(node);
    else (stack[depth - 1] as A11yNode).children.push(node);
    stack.push(node);
  }
  if (top.length === 0) throw new TreeParseError("empty accessibility tree");
  const root = top.length === 1 ? (top[0] as A11yNode) : { ...makeNode("root"), children: top };
  return assignKeys(root, bidOf);
}

// Module-level, not a closure per call: V8 keeps optimized code only for functions that stay alive.
function bidOf(node: A11yNode): string | undefined {
  return node.id;
}

interface Step {
  number: number;
  tabs: string;
  axtree?: string;
  reasoning?: string;
  outcomes: Map<number, string>;
}

/** The lines of a Markdown section: from after `heading` to the next heading of level ≤ `level`. */
function sections(lines: string[], pattern: RegExp, level: number): { match: RegExpExecArray; body: string[] }[] {
  const found: { match: RegExpExecArray; body: string[] }[] = [];
  let current: { match: RegExpExecArray; body: string[] } | undefined;
  let fenced = false;
  for (const line of lines) {
    // A fence line toggles; a line that opens and closes inline (```click('79')```) does not.
    if (line.startsWith("```") && !line.slice(3).includes("```")) fenced = !fenced;
    const heading = !fenced && /^(#+) /.exec(line);
    if (heading && (heading[1] as string).length <= level) {
      const match = pattern.exec(line);
      current = match && (heading[1] as string).length === level ? { match, body: [] } : undefined;
      if (current) found.push(current);
      continue;
    }
    current?.body.push(line);
  }
  return found;
}

/** Text of the first fenced block in `body`: from its opening fence to its last closing fence. */
function fencedBlock(body: string[], last = false): string | undefined {
  const open = body.findIndex((line) => line.trim() === "```");
  if (open < 0) return undefined;
  const closes = body.map((line, i) => (i > open && line.trim() === "```" ? i : -1)).filter((i) => i > 0);
  const close = last ? closes.at(-1) : closes[0];
  return close === undefined ? undefined : body.slice(open + 1, close).join("\n");
}

function sectionText(body: string[], heading: RegExp, level: number): string[] | undefined {
  return sections(body, heading, level)[0]?.body;
}

/** BrowserGym's "Next Action": reasoning ending in the action call in backticks. */
function splitNextAction(text: string): { action?: string; thinking?: string } {
  const calls = [...text.matchAll(/```([\s\S]+?)```/g)];
  const last = calls.at(-1);
  if (!last) {
    const bare = text.trim();
    return /^[a-z_]+\(.*\)$/s.test(bare) ? { action: bare } : {};
  }
  const thinking = (text.slice(0, last.index) + text.slice(last.index + last[0].length)).trim();
  return { action: (last[1] as string).trim(), ...(thinking ? { thinking } : {}) };
}

function parseSteps(lines: string[]): Step[] {
  return sections(lines, /^## InstanceStep(\d+)\s*$/, 2).map(({ match, body }) => {
    const world = sectionText(body, /^### State of the World/, 3) ?? [];
    const axtree = fencedBlock(sectionText(world, /^#### Current Page Accessibility Tree/, 4) ?? []);
    const tabs = (sectionText(world, /^#### Currently Open Tabs/, 4) ?? []).join("\n").trim();
    const next = fencedBlock(sectionText(body, /^### Next Action/, 3) ?? [], true);
    const outcomes = new Map<number, string>();
    for (const past of sections(sectionText(body, /^### History of Past Actions/, 3) ?? [], /^#### PastAction(\d+)/, 4)) {
      const outcome = (sectionText(past.body, /^##### Outcome including errors/, 5) ?? []).join("\n").trim();
      outcomes.set(Number(past.match[1]), outcome);
    }
    return {
      number: Number(match[1]),
      tabs,
      ...(axtree !== undefined ? { axtree } : {}),
      ...(next !== undefined ? { reasoning: next } : {}),
      outcomes,
    };
  });
}

/** `* **Label**: value`, the value possibly on the following indented lines. */
function bulletValue(lines: string[], label: string): string | undefined {
  const at = lines.findIndex((line) => line.startsWith(`* **${label}**:`));
  if (at < 0) return undefined;
  const parts = [(lines[at] as string).slice(`* **${label}**:`.length).trim()];
  for (const line of lines.slice(at + 1)) {
    if (line.startsWith("#") || line.startsWith("* ") || line.trim() === "") break;
    parts.push(line.trim());
  }
  const value = parts.filter((p) => p !== "").join("\n");
  return value === "" ? undefined : value;
}

const NO_ERRORS = "No errors reported";

/**
 * BrowserGym / AgentLab `experiment_analysis.md`: the per-step Markdown dump of an experiment
 * (`## InstanceStepNNN` sections, each with the open tabs, the page's AXTree in a fenced block,
 * the history of past actions with their outcomes, and the agent's "Next Action": reasoning
 * ending in a BrowserGym action call in backticks). One file is one trajectory: step 0's AXTree is
 * the initial observation; turn i is step i's action (its reasoning as `thinking`) and step
 * i+1's AXTree. This is the file that carries every step's tree: `experiment.log` lacks the tree
 * after the last action, and the `step_*.pkl.gz` files are Python pickles.
 */
export const browserGymReader: Reader = {
  name: FORMAT,
  description: "BrowserGym/AgentLab experiment_analysis.md: per-step AXTree + action; a file is a trajectory",

  sniff(head) {
    return /^## InstanceStep\d+\s*$/m.test(head) && /Accessibility Tree/.test(head);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source = { uri: path, format: FORMAT };
    const whole = await readWholeText(path, options.maxLineBytes);
    if ("error" in whole) {
      yield { kind: "quarantine", entry: { source, stage: "read", reason: whole.error } };
      return;
    }
    const lines = whole.text.split("\n").map((line) => line.replace(/\r$/, ""));
    const id = bulletValue(lines, "Trace ID") ?? contentId(whole.text);
    const fail = (reason: string, field?: string): ReadItem => ({
      kind: "quarantine",
      entry: { source, id, stage: "read", ...(field ? { field } : {}), reason, excerpt: excerpt(whole.text) },
    });

    const steps = parseSteps(lines);
    if (steps.length < 2) {
      yield fail(`found ${steps.length} InstanceStep section(s); a trajectory needs a tree after at least one action`);
      return;
    }
    const turns: Turn[] = [];
    for (const [i, step] of steps.entries()) {
      if (step.number !== i) return yield fail(`steps are not numbered 0, 1, 2…: InstanceStep${step.number} is section ${i}`);
      if (step.axtree === undefined) return yield fail(`InstanceStep${i} has no accessibility tree`, `steps.${i}.axtree`);
      try {
        parseAxTree(step.axtree);
      } catch (err) {
        return yield fail(`InstanceStep${i} accessibility tree: ${(err as Error).message}`, `steps.${i}.axtree`);
      }
      if (i === 0) continue;
      const previous = steps[i - 1] as Step;
      const { action, thinking } = splitNextAction(previous.reasoning ?? "");
      if (action === undefined) return yield fail(`InstanceStep${i - 1} has no action in its Next Action`, `steps.${i - 1}.action`);
      const outcome = step.outcomes.get(i - 1);
      const meta: Record<string, unknown> = { tree_format: AXTREE_TREE_FORMAT, open_tabs: step.tabs };
      if (outcome && outcome !== NO_ERRORS) meta.last_action_error = outcome;
      turns.push({ action, observation: step.axtree, ...(thinking ? { thinking } : {}), meta });
    }
    const first = steps[0] as Step;
    const last = splitNextAction((steps.at(-1) as Step).reasoning ?? "");
    const goal = bulletValue(lines, "Derived Goal") ?? bulletValue(lines, "Goal");
    const meta: Record<string, unknown> = { initial_tree_format: AXTREE_TREE_FORMAT, initial_open_tabs: first.tabs };
    for (const [label, key] of [
      ["model_name", "model_name"],
      ["Date of Instance Run", "date"],
    ] as const) {
      const value = bulletValue(lines, label);
      if (value !== undefined) meta[key] = value;
    }
    // An action after the last tree was never observed; keep it for reference only.
    if (last.action !== undefined) meta.unobserved_final_action = last.action;
    yield {
      kind: "trajectory",
      trajectory: {
        id,
        domain: "web",
        source,
        ...(goal !== undefined ? { task: goal } : {}),
        initialObservation: first.axtree as string,
        turns,
        meta,
      },
    };
  },
};
