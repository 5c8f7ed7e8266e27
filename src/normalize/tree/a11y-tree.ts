/**
 * One tree type for every accessibility tree / view hierarchy (web AXTree, Android view
 * hierarchy, desktop AT-SPI), and its canonical text form: what a world model is trained to
 * predict for web, android and os observations.
 */

/**
 * Deepest tree a parser accepts (deeper is a TreeParseError): the tree functions here and in
 * tree-diff.ts recurse once per level, and node keys are paths from the root, so depth costs stack
 * and memory. Real screens are a few dozen levels deep. (XML trees stop at the same depth:
 * src/read/uiautomator-xml.ts gives fast-xml-parser MAX_XML_DEPTH for its nesting limit.)
 */
export const MAX_TREE_DEPTH = 1000;

/** Screen rectangle, in the source's pixels: left/top inclusive, right/bottom exclusive. */
export interface Bounds {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface A11yNode {
  /**
   * Identity of the node for diffing (see `assignKeys`): the source's own id when it is unique in
   * the tree (BrowserGym bid, Android resource-id), else a path of role[ordinal] steps from the
   * nearest keyed ancestor. Never shown in the full tree text.
   */
  key: string;
  /** The id the agent itself sees and acts on (BrowserGym bid); shown as `[id]`. */
  id?: string;
  /** Role / tag / widget class. */
  role: string;
  /** Accessible name or displayed text; "" when none. */
  name: string;
  /** Everything else, as strings; "true" is a boolean flag. */
  attributes: Record<string, string>;
  bounds?: Bounds;
  children: A11yNode[];
}

/** A node with no key yet, as parsers build it. */
export function makeNode(
  role: string,
  name = "",
  attributes: Record<string, string> = {},
  extra: { id?: string; bounds?: Bounds } = {},
): A11yNode {
  // One literal per shape rather than conditional spreads (a tree has thousands of nodes, and a
  // spread builds and copies a temporary object); the property order is the same in each.
  const { id, bounds } = extra;
  if (id === undefined)
    return bounds === undefined
      ? { key: "", role, name, attributes, children: [] }
      : { key: "", role, name, attributes, bounds, children: [] };
  return bounds === undefined
    ? { key: "", id, role, name, attributes, children: [] }
    : { key: "", id, role, name, attributes, bounds, children: [] };
}

export function* preorder(root: A11yNode): Generator<A11yNode> {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as A11yNode;
    yield node;
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as A11yNode);
  }
}

export function countNodes(root: A11yNode | null): number {
  if (!root) return 0;
  // A plain stack, not preorder(): every observation is counted, and the generator's steps allocate.
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as A11yNode;
    n++;
    for (const child of node.children) stack.push(child);
  }
  return n;
}

/** What a tree parser is asked for. */
export interface TreeParseOptions {
  /**
   * Give every node its diff key (default true). Only diffs read keys: a caller that wants the
   * tree's text alone (tree_target full, no diff kept) skips the work.
   */
  keys?: boolean;
}

/** `assignKeys(root, …)` unless the parse was asked for no keys (`options.keys === false`). */
export function withKeys(
  root: A11yNode,
  options: TreeParseOptions,
  preferred: (node: A11yNode) => string | undefined,
  stepName?: (node: A11yNode) => string,
): A11yNode {
  return options.keys === false ? root : assignKeys(root, preferred, stepName);
}

/**
 * Gives every node its diff key. `preferred` names the source's own id for a node (bid,
 * resource-id); it becomes the key when no other node in the tree claims it. Other nodes get
 * `parentKey/role[n]` (`stepName` may shorten the role), n counting the same-role siblings that also fell back to a path, so such a
 * node keeps its key when keyed siblings come and go. A path that collides with a real id gets a
 * `~` suffix. Deterministic: the same tree always gets the same keys.
 */
export function assignKeys(
  root: A11yNode,
  preferred: (node: A11yNode) => string | undefined,
  stepName: (node: A11yNode) => string = roleStepName,
): A11yNode {
  const claims = new Map<string, number>();
  for (const node of preorder(root)) {
    const id = preferred(node);
    if (id) claims.set(id, (claims.get(id) ?? 0) + 1);
  }
  const used = new Set<string>();
  for (const [id, n] of claims) if (n === 1) used.add(id);
  const context: KeyContext = { preferred, stepName, claims, used };
  visitKeys(context, root, pathStep(stepName, root));
  return root;
}

// The helpers below are module-level, not closures made per call: V8 keeps a function's optimized
// code only while a function object using it is alive, so per-call closures are recompiled after
// every major GC.

/** What `assignKeys`' helpers share, passed instead of captured. */
interface KeyContext {
  preferred: (node: A11yNode) => string | undefined;
  stepName: (node: A11yNode) => string;
  /** How many nodes claim each preferred id. */
  claims: Map<string, number>;
  /** Keys given out so far, and the unique ids up front. */
  used: Set<string>;
}

function roleStepName(node: A11yNode): string {
  return node.role;
}

/** The node's preferred id when no other node claims it. */
function ownId(context: KeyContext, node: A11yNode): string | undefined {
  const id = context.preferred(node);
  return id && context.claims.get(id) === 1 ? id : undefined;
}

function claimPath(used: Set<string>, candidate: string): string {
  let key = candidate;
  while (used.has(key)) key += "~";
  used.add(key);
  return key;
}

function pathStep(stepName: (node: A11yNode) => string, node: A11yNode): string {
  return stepName(node).replace(/\s+/g, "-") || "node";
}

function visitKeys(context: KeyContext, node: A11yNode, path: string): void {
  node.key = ownId(context, node) ?? claimPath(context.used, path);
  const ordinals = new Map<string, number>();
  for (const child of node.children) {
    const role = pathStep(context.stepName, child);
    const keyed = ownId(context, child) !== undefined;
    const n = keyed ? 0 : (ordinals.get(role) ?? 0);
    if (!keyed) ordinals.set(role, n + 1);
    visitKeys(context, child, `${node.key}/${role}[${n}]`);
  }
}

/**
 * Removes nameless wrappers: a non-root node with no id, no name, no attributes and exactly one
 * child is replaced by that child (its bounds go with it). Keys are kept, so a collapsed tree
 * diffs against another collapsed tree node for node. Returns a new tree.
 */
export function collapseEmptyWrappers(root: A11yNode): A11yNode {
  return { ...root, children: root.children.map(collapseWrappers) };
}

function isWrapper(node: A11yNode): boolean {
  return node.children.length === 1 && node.id === undefined && node.name === "" && Object.keys(node.attributes).length === 0;
}

function collapseWrappers(node: A11yNode): A11yNode {
  let current = node;
  while (isWrapper(current)) current = current.children[0] as A11yNode;
  return { ...current, children: current.children.map(collapseWrappers) };
}

// Bare when it cannot be misread: no whitespace, quotes, backslashes or control characters.
const BARE = /^[^\s"\\\p{Cc}]+$/u;

/** A name, key or value as one token: bare when unambiguous, else a JSON string. */
export function textToken(text: string): string {
  return BARE.test(text) ? text : JSON.stringify(text);
}

export function boundsText(b: Bounds): string {
  return `[${b.left},${b.top}][${b.right},${b.bottom}]`;
}

/**
 * One node as a line: `[id] role "name" attr=value flag … bounds=[l,t][r,b]`. Attributes are
 * sorted by name; "true" prints as a bare flag; values with spaces or quotes are JSON strings.
 * `omitId` drops the `[id]` prefix (the diff names the node by key already).
 */
export function canonicalNodeLine(node: A11yNode, omitId = false): string {
  const parts: string[] = [];
  if (node.id !== undefined && !omitId) parts.push(`[${node.id}]`);
  parts.push(textToken(node.role));
  if (node.name !== "") parts.push(JSON.stringify(node.name));
  for (const name of Object.keys(node.attributes).sort()) {
    const value = node.attributes[name] as string;
    parts.push(value === "true" ? textToken(name) : `${textToken(name)}=${textToken(value)}`);
  }
  if (node.bounds) parts.push(`bounds=${boundsText(node.bounds)}`);
  return parts.join(" ");
}

export interface CanonicalTreeOptions {
  collapseEmptyWrappers: boolean;
}

/** The canonical text of a tree: one line per node in document order, two spaces per level. */
export function canonicalTreeText(root: A11yNode | null, options: CanonicalTreeOptions): string {
  if (!root) return "";
  const tree = options.collapseEmptyWrappers ? collapseEmptyWrappers(root) : root;
  const lines: string[] = [];
  pushTreeLines(lines, tree, 0);
  return lines.join("\n");
}

function pushTreeLines(lines: string[], node: A11yNode, depth: number): void {
  lines.push(`${"  ".repeat(depth)}${canonicalNodeLine(node)}`);
  for (const child of node.children) pushTreeLines(lines, child, depth + 1);
}
