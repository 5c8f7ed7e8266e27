import type { FidelityScore } from "./result.ts";

/**
 * Accessibility trees (web / android / os) are indented text, one node per line: the canonical
 * form of src/normalize/tree/a11y-tree.ts (`[id] role "name" attr=value …`, two spaces a level),
 * a source's own (BrowserGym `[bid] role 'name', prop=value`, tabs), or the canonical diff
 * (`+ KEY in PARENT at I: NODE-LINE`, one edit per line). No parser reads all of these back, so
 * the rule compares node lines as multisets, each tagged with its depth:
 *
 *   exact    = nodes whose whole line (whitespace collapsed) and depth match
 *   partial  = of the rest, nodes whose role, name and depth match (an attribute or bounds differ)
 *   score    = 2·(exact + PARTIAL_NODE_CREDIT·partial) / (predicted nodes + ground-truth nodes)
 *
 * Order among siblings is not scored; depth keeps a node's place in the hierarchy. For diff
 * lines the "role and name" is the edit and the node key it names.
 */
export const PARTIAL_NODE_CREDIT = 0.5;

export interface NodeLine {
  /** Depth and the whole line. */
  exact: string;
  /** Depth, role and name (diff lines: depth, edit marker and node key). */
  partial: string;
}

const INDENT = /^[ \t]*/;
const ID_PREFIX = /^\[[^\]]*\]\s*/;
const QUOTED = /^(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')/;
const DIFF_EDIT = /^([-+>~]) ("(?:[^"\\]|\\.)*"|[^\s:]+)/;

/** Depth from indentation: a tab or two spaces per level (both forms the project writes). */
function depthOf(indent: string): number {
  const tabs = indent.split("\t").length - 1;
  return tabs + Math.floor((indent.length - tabs) / 2);
}

function roleAndName(content: string): string {
  const edit = DIFF_EDIT.exec(content);
  if (edit) return `${edit[1]} ${edit[2]}`;
  const rest = content.replace(ID_PREFIX, "");
  const role = /^\S+/.exec(rest)?.[0] ?? "";
  const name = QUOTED.exec(rest.slice(role.length).trimStart())?.[0] ?? "";
  return `${role} ${name}`;
}

/** The non-blank lines of a tree text as node lines. */
export function treeNodeLines(text: string): NodeLine[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const depth = depthOf(INDENT.exec(line)?.[0] ?? "");
      const content = line.trim().replace(/\s+/g, " ");
      return { exact: `${depth}|${content}`, partial: `${depth}|${roleAndName(content)}` };
    });
}

/** Takes the multiset intersection of `a` and `b` by `key` out of both; returns its size. */
function takeShared(a: NodeLine[], b: NodeLine[], key: (n: NodeLine) => string): { shared: number; a: NodeLine[]; b: NodeLine[] } {
  const pool = new Map<string, number>();
  for (const node of a) pool.set(key(node), (pool.get(key(node)) ?? 0) + 1);
  const restB: NodeLine[] = [];
  for (const node of b) {
    const left = pool.get(key(node)) ?? 0;
    if (left > 0) pool.set(key(node), left - 1);
    else restB.push(node);
  }
  const restA: NodeLine[] = [];
  for (const node of a) {
    const left = pool.get(key(node)) ?? 0;
    if (left > 0) {
      pool.set(key(node), left - 1);
      restA.push(node);
    }
  }
  return { shared: b.length - restB.length, a: restA, b: restB };
}

export function treeSimilarity(prediction: string, groundTruth: string): FidelityScore {
  const predicted = treeNodeLines(prediction);
  const truth = treeNodeLines(groundTruth);
  if (predicted.length + truth.length === 0) return { score: 1, detail: "prediction and ground truth are both empty trees" };
  const exact = takeShared(predicted, truth, (n) => n.exact);
  const partial = takeShared(exact.a, exact.b, (n) => n.partial);
  const score = (2 * (exact.shared + PARTIAL_NODE_CREDIT * partial.shared)) / (predicted.length + truth.length);
  return {
    score,
    detail: `prediction matches ${exact.shared}/${truth.length} ground-truth nodes exactly and ${partial.shared} more by role, name and depth only (prediction has ${predicted.length})`,
  };
}
