/**
 * WebArena's accessibility-tree text (`browser_env/processors.py`, `parse_accessibility_tree` then
 * `clean_accesibility_tree`), parsed into the same tree model as BrowserGym's AXTree
 * (src/read/browsergym.ts `parseAxTree`), so both normalize alike.
 *
 * One node per line, a tab per level: `[id] role 'name' prop: value prop: value …` — the name a
 * Python `repr()`, each property `name: str(value)` after one space, values unquoted (`True`,
 * `False`, `3`, `menu`, `http://…`, text with spaces). A value runs to the next ` prop:` (a
 * lowercase camelCase word and a colon, then a space or the line's end) or the line's end, so a
 * free-text value holding such a word is split there. Mapped as BrowserGym writes the same
 * property: `focused` / `required` / `atomic` True is a flag ("true"), False is left out; every
 * other value is kept as written (`expanded: True` → "True", as BrowserGym's `expanded=True`).
 * WebArena's cleaning step drops some StaticText lines, which can leave a line indented more than
 * one level under the line before: it hangs under the nearest line above indented less.
 */
import { readPyString } from "../../read/browsergym.ts";
import { TreeParseError } from "../../read/uiautomator-xml.ts";
import { type A11yNode, MAX_TREE_DEPTH, makeNode, type TreeParseOptions, withKeys } from "./a11y-tree.ts";

/** `turn.meta.tree_format` (`meta.initial_tree_format`) of a WebArena accessibility tree. */
export const WEBARENA_TREE_FORMAT = "webarena-axtree";

const LINE_HEAD = /^\[([^\]\s]+)\] ([^\s,'"[\]]+) (?=['"])/;
// A property at `lastIndex`: ` name:` then a space (the value follows) or the line's end.
const PROP_AT = / ([a-z][A-Za-z]*):(?: |$)/y;
// Where the value ends: the next property, or the line's end.
const NEXT_PROP = / [a-z][A-Za-z]*:(?: |$)/g;
// BrowserGym writes these three as bare flags when true and leaves them out when false.
const FLAG_PROPS = new Set(["focused", "required", "atomic"]);

function parseLine(content: string): A11yNode {
  const head = LINE_HEAD.exec(content);
  if (!head) throw new TreeParseError(`not a WebArena accessibility-tree line: ${JSON.stringify(content.slice(0, 80))}`);
  const [, id, role] = head;
  const name = readPyString(content, head[0].length);
  const attributes: Record<string, string> = {};
  let i = name.end;
  while (i < content.length) {
    PROP_AT.lastIndex = i;
    const prop = PROP_AT.exec(content);
    if (!prop) throw new TreeParseError(`unexpected text at column ${i + 1}: ${JSON.stringify(content.slice(i, i + 40))}`);
    const start = Math.min(i + prop[0].length, content.length);
    NEXT_PROP.lastIndex = start;
    const next = NEXT_PROP.exec(content);
    const end = next ? next.index : content.length;
    const propName = prop[1] as string;
    const value = content.slice(start, end);
    if (!FLAG_PROPS.has(propName)) attributes[propName] = value;
    else if (value === "True") attributes[propName] = "true";
    else if (value !== "False") attributes[propName] = value;
    i = end;
  }
  return makeNode(role as string, name.value, attributes, { id: id as string });
}

/**
 * Parses WebArena's accessibility-tree text (see the header). Nodes keep their `[id]` as `id`;
 * keys are ids, or paths from the nearest node with one. Several top-level lines get a synthetic
 * `root`. Throws TreeParseError on any line outside the grammar (a `Tab 0 (current): …` header
 * included: readers split it off).
 */
export function parseWebArenaTree(text: string, options: TreeParseOptions = {}): A11yNode {
  const top: A11yNode[] = [];
  // The open ancestors of the next line, with the indentation each was written at.
  const stack: { depth: number; node: A11yNode }[] = [];
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") continue;
    const depth = /^\t*/.exec(line)?.[0].length ?? 0;
    let node: A11yNode;
    try {
      node = parseLine(line.slice(depth));
    } catch (err) {
      throw new TreeParseError(`line ${n + 1}: ${(err as Error).message}`);
    }
    while (stack.length > 0 && (stack.at(-1) as { depth: number }).depth >= depth) stack.pop();
    if (stack.length >= MAX_TREE_DEPTH)
      throw new TreeParseError(`line ${n + 1} is nested ${stack.length} levels deep, over the ${MAX_TREE_DEPTH}-level limit`);
    const parent = stack.at(-1);
    if (parent) parent.node.children.push(node);
    else top.push(node);
    stack.push({ depth, node });
  }
  if (top.length === 0) throw new TreeParseError("empty accessibility tree");
  const root = top.length === 1 ? (top[0] as A11yNode) : { ...makeNode("root"), children: top };
  return withKeys(root, options, idOf);
}

// Module-level, not a closure per call: V8 keeps optimized code only for functions that stay alive.
function idOf(node: A11yNode): string | undefined {
  return node.id;
}
