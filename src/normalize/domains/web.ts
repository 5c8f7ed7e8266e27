import type { Trajectory, Turn } from "../../core/trajectory.ts";
import { parseAxTree } from "../../read/browsergym.ts";
import { TreeParseError } from "../../read/uiautomator-xml.ts";
import { type Counters, count, type DomainNormalizer, type NormalizeScope, type NormalizeSettings } from "../normalizer.ts";
import { type FoundSecret, findSecrets, scrubSecretLines } from "../secrets.ts";
import { type A11yNode, canonicalTreeText, collapseEmptyWrappers, countNodes, type TreeParseOptions } from "../tree/a11y-tree.ts";
import { TreeSequenceDiff, treeDiffText } from "../tree/tree-diff.ts";
import { parseWebArenaTree, WEBARENA_TREE_FORMAT } from "../tree/webarena-axtree.ts";

/** Parses one observation into a tree; `format` is the reader's `tree_format` hint, if any. Throws TreeParseError. */
export type TreeParser = (text: string, format: unknown, options: TreeParseOptions) => A11yNode;

/**
 * The web / android / os rule: each observation that parses as a tree becomes its canonical text
 * (`tree_target: full`) or the canonical diff against the tree before it (`tree_target: diff`),
 * and the other form goes to `turn.meta.tree_diff` / `turn.meta.tree_full`, so both are kept.
 * The tree before the first turn is the initial observation's when it parses (the model sees it
 * in the system message), else the empty tree. The initial observation itself is always the
 * full canonical tree. An observation that does not parse stays as read (counted
 * `tree.unparsed`), and the next diff starts again from the empty tree. With `scope.textOnly` and
 * `tree_target: full`, no diff is made: the turns' text is the same, `meta` and the diff counts
 * are left out; with `scope.turnsOnly` too, the initial observation is not parsed.
 */
export function normalizeTreeTrajectory(
  trajectory: Trajectory,
  settings: NormalizeSettings,
  counters: Counters,
  parse: TreeParser,
  scope: NormalizeScope = {},
): Trajectory {
  // Keys are read by the diff alone: a text-only pass with tree_target full parses without them.
  const diffsRead = !(scope.textOnly && settings.tree_target === "full");
  const parseOptions: TreeParseOptions = { keys: diffsRead };
  const toTree = (text: string, format: unknown): A11yNode | null => {
    let tree: A11yNode;
    try {
      tree = parse(text, format, parseOptions);
    } catch (err) {
      if (!(err instanceof TreeParseError)) throw err;
      count(counters, "tree.unparsed");
      return null;
    }
    const shown = settings.collapse_empty_wrappers ? collapseEmptyWrappers(tree) : tree;
    const nodes = countNodes(shown);
    count(counters, "tree.observations");
    count(counters, "tree.nodes", nodes);
    count(counters, "tree.collapsed_wrappers", countNodes(tree) - nodes);
    return shown;
  };
  const full = (tree: A11yNode) => canonicalTreeText(tree, { collapseEmptyWrappers: false });

  // A diff written as the observation lost the context that makes some secrets recognisable (a
  // key's changed body lines without BEGIN/END): what redaction finds in either full tree is
  // scrubbed from it. Each full tree is scanned once; the full form is redacted later like any text.
  const scrubDiff = settings.tree_target === "diff" && settings.redact_secrets;
  const diffs = new TreeSequenceDiff();
  let previousSecrets: FoundSecret[] = [];
  const normalized: Trajectory = { ...trajectory };
  // Without diffs the initial tree is read by nothing but the initial observation's own text.
  if (trajectory.initialObservation !== undefined && !(scope.turnsOnly && !diffsRead)) {
    const initial = toTree(trajectory.initialObservation, trajectory.meta?.initial_tree_format);
    if (initial) {
      if (diffsRead) diffs.reset(initial);
      normalized.initialObservation = full(initial);
      if (scrubDiff) previousSecrets = findSecrets(normalized.initialObservation);
    }
  }
  normalized.turns = trajectory.turns.map((turn): Turn => {
    const tree = toTree(turn.observation, turn.meta?.tree_format);
    if (!tree) {
      diffs.reset(null);
      previousSecrets = [];
      return turn;
    }
    if (!diffsRead) return { ...turn, observation: full(tree) };
    const diff = diffs.next(tree);
    count(counters, "tree.diff_added", diff.added.length);
    count(counters, "tree.diff_removed", diff.removed.length);
    count(counters, "tree.diff_moved", diff.moved.length);
    count(counters, "tree.diff_changed", diff.changed.length);
    const forms = { full: full(tree), diff: treeDiffText(diff) };
    if (scrubDiff) {
      const secrets = findSecrets(forms.full);
      forms.diff = scrubSecretLines(forms.diff, [...previousSecrets, ...secrets]);
      previousSecrets = secrets;
    }
    const kept = settings.tree_target === "diff" ? { tree_full: forms.full } : { tree_diff: forms.diff };
    return { ...turn, observation: forms[settings.tree_target], meta: { ...turn.meta, ...kept } };
  });
  return normalized;
}

// A BrowserGym or WebArena tree's first line names its root with a quoted name or a [bid]; plain prose does not.
const AXTREE_START = /^\s*(\[[^\]\s]*\] )?[A-Za-z]\w* (['"])/;

/**
 * Web pages: BrowserGym AXTree text (`[bid] role 'name', prop=value`) or WebArena's
 * accessibility-tree text (`[id] role 'name' prop: value`), chosen by content: BrowserGym's
 * grammar first, WebArena's when that fails (first when `format` is "webarena-axtree"). A text
 * both grammars read (no properties) reads the same under either. Throws the first grammar's
 * TreeParseError when neither reads it.
 */
export function parseWebObservation(text: string, format?: unknown, options: TreeParseOptions = {}): A11yNode {
  if (!AXTREE_START.test(text)) throw new TreeParseError("not a BrowserGym accessibility tree");
  const [first, second] = format === WEBARENA_TREE_FORMAT ? [parseWebArenaTree, parseAxTree] : [parseAxTree, parseWebArenaTree];
  try {
    return first(text, options);
  } catch (err) {
    if (!(err instanceof TreeParseError)) throw err;
    try {
      return second(text, options);
    } catch (again) {
      if (!(again instanceof TreeParseError)) throw again;
      throw err;
    }
  }
}

export const webNormalizer: DomainNormalizer = {
  domain: "web",
  normalize: (trajectory, settings, counters, scope) => normalizeTreeTrajectory(trajectory, settings, counters, parseWebObservation, scope),
};
