import { lineSimilarity } from "./line-similarity.ts";
import type { FidelityScore } from "./result.ts";

/**
 * MCP / API responses are judged by content, not layout: both sides are parsed and flattened to
 * leaves (path → type and value; arrays by index; an empty `{}` or `[]` is a leaf of its own).
 * Key order and formatting do not count; the score is a weighted F1 over the leaves:
 *
 *   credit = Σ over paths in both: VALUE_CREDIT if same type and value, else TYPE_CREDIT if same type
 *   score  = 2·credit / (predicted leaves + ground-truth leaves)
 *
 * A leaf at the right place with the right kind of value but the wrong value is half right: the
 * model knew the response's shape. A ground truth that is not a JSON object or array falls back
 * to line similarity.
 */
export const VALUE_CREDIT = 1;
export const TYPE_CREDIT = 0.5;

type LeafType = "string" | "number" | "boolean" | "null" | "object" | "array";

interface Leaf {
  type: LeafType;
  /** JSON text of the value, for comparison. */
  value: string;
}

// Keys that cannot be misread after a dot stay bare; others are quoted, so `a.b` ≠ `a` › `b`.
const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** Every leaf of a parsed JSON value by path: `$.result.content[0].text`. */
export function jsonLeaves(value: unknown, path = "$", into = new Map<string, Leaf>()): Map<string, Leaf> {
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(path, { type: "array", value: "[]" });
    value.forEach((item, i) => {
      jsonLeaves(item, `${path}[${i}]`, into);
    });
  } else if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) into.set(path, { type: "object", value: "{}" });
    for (const [key, item] of entries) jsonLeaves(item, `${path}.${PLAIN_KEY.test(key) ? key : JSON.stringify(key)}`, into);
  } else {
    const type = value === null ? "null" : (typeof value as LeafType);
    into.set(path, { type, value: JSON.stringify(value) });
  }
  return into;
}

/** A JSON object or array parsed, or undefined (plain text, a bare scalar, broken JSON). */
export function parseJsonDocument(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" ? value : undefined;
  } catch {
    return undefined;
  }
}

export interface LeafMatch {
  exact: number;
  typeOnly: number;
  predicted: number;
  truth: number;
}

export function matchLeaves(predicted: Map<string, Leaf>, truth: Map<string, Leaf>): LeafMatch {
  let exact = 0;
  let typeOnly = 0;
  for (const [path, leaf] of truth) {
    const other = predicted.get(path);
    if (!other || other.type !== leaf.type) continue;
    if (other.value === leaf.value) exact++;
    else typeOnly++;
  }
  return { exact, typeOnly, predicted: predicted.size, truth: truth.size };
}

export function leafScore(m: LeafMatch): number {
  return (2 * (VALUE_CREDIT * m.exact + TYPE_CREDIT * m.typeOnly)) / (m.predicted + m.truth);
}

export function jsonStructure(prediction: string, groundTruth: string): FidelityScore {
  const truth = parseJsonDocument(groundTruth);
  if (truth === undefined) {
    const lines = lineSimilarity(prediction, groundTruth);
    return { score: lines.score, detail: `ground truth is not JSON; ${lines.detail}` };
  }
  const predicted = parseJsonDocument(prediction);
  if (predicted === undefined) return { score: 0, detail: "ground truth is JSON but the prediction is not a JSON object or array" };
  const m = matchLeaves(jsonLeaves(predicted), jsonLeaves(truth));
  return {
    score: leafScore(m),
    detail: `prediction matches ${m.exact}/${m.truth} ground-truth JSON leaves exactly and ${m.typeOnly} more by path and type only (prediction has ${m.predicted})`,
  };
}
