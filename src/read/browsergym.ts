import type { Turn } from "../core/trajectory.ts";
import { inputPrefix } from "../io/input-bytes.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf, sideFileSize } from "../io/side-files.ts";
import { type A11yNode, MAX_TREE_DEPTH, makeNode, type TreeParseOptions, withKeys } from "../normalize/tree/a11y-tree.ts";
import { type Companions, excerpt, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId, TreeParseError } from "./uiautomator-xml.ts";

const FORMAT = "browsergym";
export const AXTREE_TREE_FORMAT = "browsergym-axtree";

/** Decodes a Python `repr()` string literal starting at `text[start]`; returns it and where it ends. */
export function readPyString(text: string, start: number): { value: string; end: number } {
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
// Sticky: matched at a line's column without slicing the line (one allocation per property less).
const PROP_NAME = /[A-Za-z_][\w-]*/y;

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
    PROP_NAME.lastIndex = i;
    const prop = PROP_NAME.exec(content);
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
export function parseAxTree(text: string, options: TreeParseOptions = {}): A11yNode {
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
  return withKeys(root, options, bidOf);
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
    // `## InstanceStep000`, `##  InstanceStep000`, `##InstanceStep000`: any spacing after the marks.
    const heading = !fenced && /^(#{1,6})(?=\s|[A-Z0-9])/.exec(line);
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

const STEP_HEADING = /^(#{1,6})\s*InstanceStep\s*(\d+)\s*$/m;

/** A heading of `title` at any level, with any spacing (the level is checked by `sections`). */
const titled = (title: string, suffix = "") => new RegExp(`^#+\\s*${title}${suffix}`, "i");

function parseSteps(lines: string[]): Step[] {
  // The steps' level (`##` in BrowserGym's dump, `###` in some AgentLab logs); subsections below it.
  const level = (STEP_HEADING.exec(lines.join("\n"))?.[1] ?? "##").length;
  return sections(lines, /^#+\s*InstanceStep\s*(\d+)\s*$/, level).map(({ match, body }) => {
    const world = sectionText(body, titled("State of the World"), level + 1) ?? [];
    const axtree = fencedBlock(sectionText(world, titled("Current Page Accessibility Tree"), level + 2) ?? []);
    const tabs = (sectionText(world, titled("Currently Open Tabs"), level + 2) ?? []).join("\n").trim();
    const next = fencedBlock(sectionText(body, titled("Next Action"), level + 1) ?? [], true);
    const outcomes = new Map<number, string>();
    for (const past of sections(
      sectionText(body, titled("History of Past Actions"), level + 1) ?? [],
      titled("PastAction\\s*", "(\\d+)"),
      level + 2,
    )) {
      const outcome = (sectionText(past.body, titled("Outcome including errors"), level + 3) ?? []).join("\n").trim();
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
  domain: "web",
  description: "BrowserGym/AgentLab experiment_analysis.md: per-step AXTree + action; a file is a trajectory",

  sniff(head) {
    return STEP_HEADING.test(head) && /Accessibility Tree/.test(head);
  },

  async companions(path: string): Promise<Companions> {
    const run = await runFiles(path);
    const bytes = run.files.reduce((sum, file) => sum + file.bytes, 0);
    return {
      dirs: run.dir ? [run.dir] : [],
      files: run.files.map((file) => file.path),
      bytes,
      label: `BrowserGym experiment ${run.label}`,
    };
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
    const model = meta.model_name;
    if (typeof model === "string" && !/^none\b/i.test(model)) meta.model = model;
    Object.assign(meta, await experimentContext(path, options.maxLineBytes));
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

const ANALYSIS = "experiment_analysis.md";

/**
 * The experiment's files: its folder (`<exp dir>/experiment_analysis.md`: every file in it is the
 * experiment's), or, for files flattened with a prefix (`<prefix>experiment_analysis.md`), those
 * starting with the prefix. Found through src/io/side-files.ts: the same on a disk, in a bucket,
 * on the Hub.
 */
async function runFiles(path: string): Promise<{ dir?: string; prefix: string; files: { path: string; bytes: number }[]; label: string }> {
  const name = baseName(path);
  const folder = parentOf(path);
  const { files } = await listFolder(folder);
  const prefix = name.endsWith(ANALYSIS) ? name.slice(0, -ANALYSIS.length) : undefined;
  if (prefix === undefined) {
    const bytes = files.get(name) ?? 0;
    return { prefix: "", files: [{ path: beside(folder, name), bytes }], label: name };
  }
  const own = [...files].filter(([file]) => file.startsWith(prefix)).map(([file, bytes]) => ({ path: beside(folder, file), bytes }));
  return prefix === ""
    ? { dir: folder, prefix, files: own, label: baseName(folder) }
    : { prefix, files: own, label: prefix.replace(/_+$/, "") };
}

/**
 * What the experiment's side files record: `summary_info.json` (BrowserGym's ExpResult summary:
 * `cum_reward` → outcome.reward, success when it is 1 of a 0/1 reward, `err_msg` → failure_mode,
 * `n_steps`, `terminated` / `truncated`), and `experiment.log`'s first line ("Running experiment
 * <agent>_on_<task>_<seed>", BrowserGym's ExpArgs.exp_name) → agent, task_id, task seed. A side
 * file that is absent or unreadable gives nothing.
 */
async function experimentContext(path: string, maxBytes: number): Promise<Record<string, unknown>> {
  const prefix = baseName(path).endsWith(ANALYSIS) ? baseName(path).slice(0, -ANALYSIS.length) : undefined;
  if (prefix === undefined) return {};
  const context: Record<string, unknown> = {};
  const browsergym: Record<string, unknown> = {};
  const summaryPath = beside(parentOf(path), `${prefix}summary_info.json`);
  if ((await sideFileSize(summaryPath)) !== undefined) {
    const read = await readWholeText(summaryPath, maxBytes);
    const parsed = "text" in read ? parseJsonLine(read.text) : undefined;
    const summary =
      parsed?.ok && typeof parsed.value === "object" && parsed.value !== null ? (parsed.value as Record<string, unknown>) : undefined;
    if (summary) {
      const outcome: Record<string, unknown> = {};
      if (typeof summary.cum_reward === "number") {
        outcome.reward = summary.cum_reward;
        if (summary.cum_reward === 0 || summary.cum_reward === 1) outcome.success = summary.cum_reward === 1;
      }
      if (typeof summary.err_msg === "string" && summary.err_msg.trim() !== "")
        outcome.failure_mode = (summary.err_msg.trim().split("\n")[0] as string).slice(0, 200);
      if (Object.keys(outcome).length > 0) context.outcome = outcome;
      for (const key of ["n_steps", "terminated", "truncated", "cum_raw_reward"])
        if (summary[key] !== undefined && summary[key] !== null) browsergym[key] = summary[key];
      browsergym.side_files = [baseName(summaryPath)];
    }
  }
  const logPath = beside(parentOf(path), `${prefix}experiment.log`);
  if ((await sideFileSize(logPath)) !== undefined) {
    const head = new TextDecoder().decode(await inputPrefix(logPath, 4096));
    const name = /Running experiment (\S+?)_on_(\S+?) in:/.exec(head);
    if (name) {
      context.agent = name[1];
      const seeded = /^(.+)_(\d+)$/.exec(name[2] as string);
      context.task_id = seeded ? seeded[1] : name[2];
      if (seeded) browsergym.task_seed = seeded[2];
      browsergym.side_files = [...((browsergym.side_files as string[] | undefined) ?? []), baseName(logPath)];
    }
  }
  if (Object.keys(browsergym).length > 0) context.browsergym = browsergym;
  return context;
}
