import { type A11yNode, canonicalNodeLine, textToken } from "./a11y-tree.ts";

/**
 * Diff of two accessibility trees keyed by node key, exact enough that
 * `applyTreeDiff(prev, diffTrees(prev, next))` deep-equals `next` — children order included.
 *
 * - `removed`: topmost removed nodes; their whole subtree goes, except nodes placed elsewhere.
 * - `added`: new nodes, each placed as child `index` of `parent` (null: the new root).
 * - `moved`: surviving nodes that changed parent, or whose order among siblings changed (the
 *   fewest: siblings on a longest increasing run stay put).
 * - `changed`: surviving nodes whose own fields (role, name, attributes, bounds, id) changed;
 *   the entry holds the new fields.
 *
 * Placement indices are positions in the next tree's child list; applying them in increasing
 * order per parent, after removals and detaches, rebuilds that list exactly. Keys that occur
 * more than once in a tree are disambiguated by their index path (`key@0.2.1`).
 */
export type NodeFields = Omit<A11yNode, "children">;

export interface Placement {
  key: string;
  parent: string | null;
  index: number;
}

export interface TreeDiff {
  removed: string[];
  added: (Placement & { node: NodeFields })[];
  moved: Placement[];
  changed: { key: string; node: NodeFields }[];
}

interface FlatNode {
  fields: NodeFields;
  children: string[];
  parent: string | null;
  index: number;
}

interface FlatTree {
  root: string | null;
  nodes: Map<string, FlatNode>;
  /** Keys in document order. */
  order: string[];
}

function ownFields(node: A11yNode): NodeFields {
  const { children: _children, ...fields } = node;
  return { ...fields, attributes: { ...node.attributes }, ...(node.bounds ? { bounds: { ...node.bounds } } : {}) };
}

/**
 * Flattens a tree by effective key: a node's own key, or `key@indexPath` where the key repeats in
 * the tree (a `~` is appended until unique). Works on paths, not object identity, so a subtree
 * object that occurs twice is still two nodes.
 */
function flatten(root: A11yNode | null): FlatTree {
  const nodes = new Map<string, FlatNode>();
  const order: string[] = [];
  if (!root) return { root: null, nodes, order };
  const counts = new Map<string, number>();
  countKeys(counts, root);
  const used = new Set<string>();
  for (const [key, n] of counts) if (n === 1) used.add(key);
  const state: FlattenState = { counts, used, nodes, order };
  const rootKey = effectiveKey(state, root, "");
  flattenNode(state, root, rootKey, "", null, 0);
  return { root: rootKey, nodes, order };
}

// flatten's helpers are module-level, not closures made per call: V8 keeps a function's optimized
// code only while a function object using it is alive, so per-call closures are recompiled after
// every major GC.

/** What flatten's helpers share, passed instead of captured. */
interface FlattenState {
  /** How many nodes carry each key. */
  counts: Map<string, number>;
  /** Effective keys given out so far, and the unique keys up front. */
  used: Set<string>;
  nodes: Map<string, FlatNode>;
  order: string[];
}

function countKeys(counts: Map<string, number>, node: A11yNode): void {
  counts.set(node.key, (counts.get(node.key) ?? 0) + 1);
  for (const child of node.children) countKeys(counts, child);
}

function effectiveKey(state: FlattenState, node: A11yNode, path: string): string {
  if (state.counts.get(node.key) === 1) return node.key;
  let key = `${node.key}@${path}`;
  while (state.used.has(key)) key += "~";
  state.used.add(key);
  return key;
}

function flattenNode(state: FlattenState, node: A11yNode, key: string, path: string, parent: string | null, index: number): void {
  state.order.push(key);
  const entry: FlatNode = { fields: ownFields(node), children: [], parent, index };
  state.nodes.set(key, entry);
  const children = node.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i] as A11yNode;
    const childPath = path === "" ? String(i) : `${path}.${i}`;
    const childKey = effectiveKey(state, child, childPath);
    entry.children.push(childKey);
    flattenNode(state, child, childKey, childPath, key, i);
  }
}

function sameFields(a: NodeFields, b: NodeFields): boolean {
  if (a.key !== b.key || a.id !== b.id || a.role !== b.role || a.name !== b.name) return false;
  if ((a.bounds === undefined) !== (b.bounds === undefined)) return false;
  if (a.bounds && b.bounds) {
    const [x, y] = [a.bounds, b.bounds];
    if (x.left !== y.left || x.top !== y.top || x.right !== y.right || x.bottom !== y.bottom) return false;
  }
  const names = Object.keys(a.attributes);
  if (names.length !== Object.keys(b.attributes).length) return false;
  return names.every((name) => Object.hasOwn(b.attributes, name) && a.attributes[name] === b.attributes[name]);
}

/** Positions (into `seq`) of one longest strictly increasing subsequence; deterministic. */
function longestIncreasingRun(seq: number[]): Set<number> {
  const tails: number[] = []; // tails[len-1] = position of the smallest tail of a run of that length
  const previous: number[] = new Array(seq.length).fill(-1);
  seq.forEach((value, i) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((seq[tails[mid] as number] as number) < value) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[i] = tails[lo - 1] as number;
    tails[lo] = i;
  });
  const run = new Set<number>();
  for (let i = tails.length > 0 ? (tails[tails.length - 1] as number) : -1; i >= 0; i = previous[i] as number) run.add(i);
  return run;
}

export function diffTrees(prev: A11yNode | null, next: A11yNode | null): TreeDiff {
  return diffFlat(flatten(prev), flatten(next));
}

/**
 * Diffs a sequence of trees (a trajectory's observations), each against the tree before it: each
 * tree is flattened once, where `diffTrees` on each pair flattens every tree twice. The trees must
 * not change while the sequence uses them.
 */
export class TreeSequenceDiff {
  private before: FlatTree = flatten(null);

  /** Starts over: the next tree is diffed against `tree` (null: the empty tree). */
  reset(tree: A11yNode | null): void {
    this.before = flatten(tree);
  }

  /** `diffTrees(the tree before, next)`; `next` becomes the tree before. */
  next(next: A11yNode): TreeDiff {
    const after = flatten(next);
    const diff = diffFlat(this.before, after);
    this.before = after;
    return diff;
  }
}

function diffFlat(before: FlatTree, after: FlatTree): TreeDiff {
  const diff: TreeDiff = { removed: [], added: [], moved: [], changed: [] };

  for (const key of before.order) {
    const node = before.nodes.get(key) as FlatNode;
    if (!after.nodes.has(key) && (node.parent === null || after.nodes.has(node.parent))) diff.removed.push(key);
  }

  // Among children that keep their parent, those off the longest in-order run must move.
  const reordered = new Set<string>();
  for (const parentKey of after.nodes.keys()) {
    const stayed: string[] = [];
    const indices: number[] = [];
    for (const k of before.nodes.get(parentKey)?.children ?? []) {
      const node = after.nodes.get(k);
      if (node?.parent !== parentKey) continue;
      stayed.push(k);
      indices.push((node as FlatNode).index);
    }
    const run = longestIncreasingRun(indices);
    for (let i = 0; i < stayed.length; i++) if (!run.has(i)) reordered.add(stayed[i] as string);
  }

  for (const key of after.order) {
    const node = after.nodes.get(key) as FlatNode;
    const old = before.nodes.get(key);
    const placement = { key, parent: node.parent, index: node.index };
    if (!old) {
      diff.added.push({ ...placement, node: node.fields });
      continue;
    }
    if (old.parent !== node.parent || reordered.has(key)) diff.moved.push(placement);
    if (!sameFields(old.fields, node.fields)) diff.changed.push({ key, node: node.fields });
  }
  return diff;
}

export function isEmptyDiff(diff: TreeDiff): boolean {
  return diff.removed.length + diff.added.length + diff.moved.length + diff.changed.length === 0;
}

/** Rebuilds the next tree from the previous one and their diff; throws on a diff that does not fit. */
export function applyTreeDiff(prev: A11yNode | null, diff: TreeDiff): A11yNode | null {
  const tree = flatten(prev);
  const nodes = tree.nodes;
  const placed = new Set([...diff.added.map((a) => a.key), ...diff.moved.map((m) => m.key)]);

  const deleted = new Set<string>();
  for (const key of diff.removed) {
    const stack = [key];
    while (stack.length > 0) {
      const k = stack.pop() as string;
      const node = nodes.get(k);
      if (!node) throw new Error(`tree diff removes "${k}", which the previous tree does not have`);
      if (placed.has(k)) continue;
      deleted.add(k);
      stack.push(...node.children);
    }
  }
  for (const key of deleted) nodes.delete(key);
  for (const node of nodes.values()) node.children = node.children.filter((k) => !placed.has(k) && !deleted.has(k));

  for (const { key, node } of diff.added) {
    if (nodes.has(key)) throw new Error(`tree diff adds "${key}", which the previous tree already has`);
    nodes.set(key, { fields: { ...node, attributes: { ...node.attributes } }, children: [], parent: null, index: 0 });
  }
  for (const { key, node } of diff.changed) {
    const target = nodes.get(key);
    if (!target) throw new Error(`tree diff changes "${key}", which is not in the tree`);
    target.fields = { ...node, attributes: { ...node.attributes } };
  }

  let root = tree.root !== null && !deleted.has(tree.root) && !placed.has(tree.root) ? tree.root : null;
  const byParent = new Map<string, Placement[]>();
  for (const placement of [...diff.added, ...diff.moved]) {
    if (!nodes.has(placement.key)) throw new Error(`tree diff places "${placement.key}", which is not in the tree`);
    if (placement.parent === null) {
      root = placement.key;
      continue;
    }
    const list = byParent.get(placement.parent) ?? [];
    list.push(placement);
    byParent.set(placement.parent, list);
  }
  for (const [parentKey, list] of byParent) {
    const parent = nodes.get(parentKey);
    if (!parent) throw new Error(`tree diff places nodes under "${parentKey}", which is not in the tree`);
    list.sort((a, b) => a.index - b.index);
    for (const { key, index } of list) parent.children.splice(index, 0, key);
  }

  if (root === null) return null;
  const seen = new Set<string>();
  const build = (key: string): A11yNode => {
    if (seen.has(key)) throw new Error(`tree diff makes "${key}" appear twice`);
    seen.add(key);
    const node = nodes.get(key) as FlatNode;
    return { ...node.fields, children: node.children.map(build) };
  };
  return build(root);
}

function where(p: Placement): string {
  return p.parent === null ? "at root" : `in ${textToken(p.parent)} at ${p.index}`;
}

function descriptor(fields: NodeFields): string {
  return canonicalNodeLine({ ...fields, children: [] }, fields.id === fields.key);
}

/**
 * The diff as text, the model's target with `tree_target: diff`. One line per edit, grouped:
 * removals in the previous tree's order, then additions, moves and changes in the next tree's
 * order (a parent is always added before its children):
 *
 *     - KEY                                 node and its subtree removed
 *     + KEY in PARENT at I: NODE-LINE       node added as child I of PARENT ("at root": new root)
 *     > KEY in PARENT at I                  node moved
 *     ~ KEY: NODE-LINE                      node's own fields are now NODE-LINE
 *
 * NODE-LINE is the node's canonical line, without `[id]` when the id is the key. An empty diff
 * is `(no changes)`.
 */
export function treeDiffText(diff: TreeDiff): string {
  const lines: string[] = [];
  for (const key of diff.removed) lines.push(`- ${textToken(key)}`);
  for (const a of diff.added) lines.push(`+ ${textToken(a.key)} ${where(a)}: ${descriptor(a.node)}`);
  for (const m of diff.moved) lines.push(`> ${textToken(m.key)} ${where(m)}`);
  for (const c of diff.changed) lines.push(`~ ${textToken(c.key)}: ${descriptor(c.node)}`);
  return lines.length > 0 ? lines.join("\n") : "(no changes)";
}
