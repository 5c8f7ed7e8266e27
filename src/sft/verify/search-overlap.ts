import { jsonStructure, parseJsonDocument } from "./json-structure.ts";
import type { FidelityScore } from "./result.ts";

/**
 * Search results are mostly *which* pages come back: besides the structural match, the sets of
 * result URLs and titles are compared (F1 of each set). Score = STRUCTURE_WEIGHT·structural +
 * (1 − STRUCTURE_WEIGHT)·mean(F1 of the sets the ground truth has); when the ground truth has
 * neither URLs nor titles it is the structural score alone.
 */
export const STRUCTURE_WEIGHT = 0.5;

const URL_KEYS = new Set(["url", "link"]); // `link`: Google CSE / SerpAPI
const TITLE_KEYS = new Set(["title"]);
// A URL in prose ends at whitespace, quotes or brackets; trailing sentence punctuation is not part of it.
const URL_IN_TEXT = /https?:\/\/[^\s"'<>()[\]{}]+/g;

export interface ResultSets {
  urls: Set<string>;
  titles: Set<string>;
}

function collect(value: unknown, sets: ResultSets): void {
  if (Array.isArray(value)) {
    for (const item of value) collect(item, sets);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === "string" && URL_KEYS.has(key)) sets.urls.add(item);
      else if (typeof item === "string" && TITLE_KEYS.has(key)) sets.titles.add(item.trim().replace(/\s+/g, " "));
      else collect(item, sets);
    }
  }
}

/** `url`/`link` and `title` string fields of a JSON response; URLs found by pattern in plain text. */
export function resultSets(text: string): ResultSets {
  const sets: ResultSets = { urls: new Set(), titles: new Set() };
  const json = parseJsonDocument(text);
  if (json !== undefined) collect(json, sets);
  else for (const m of text.matchAll(URL_IN_TEXT)) sets.urls.add(m[0].replace(/[.,;:!?]+$/, ""));
  return sets;
}

function setF1(predicted: Set<string>, truth: Set<string>): { f1: number; shared: number } {
  let shared = 0;
  for (const item of truth) if (predicted.has(item)) shared++;
  return { f1: (2 * shared) / (predicted.size + truth.size), shared };
}

export function searchFidelity(prediction: string, groundTruth: string): FidelityScore {
  const structure = jsonStructure(prediction, groundTruth);
  const predicted = resultSets(prediction);
  const truth = resultSets(groundTruth);
  const parts: { name: string; f1: number; text: string }[] = [];
  for (const name of ["urls", "titles"] as const) {
    if (truth[name].size === 0) continue;
    const { f1, shared } = setF1(predicted[name], truth[name]);
    parts.push({
      name,
      f1,
      text: `${shared}/${truth[name].size} ground-truth result ${name} found (prediction lists ${predicted[name].size})`,
    });
  }
  if (parts.length === 0) return { score: structure.score, detail: `${structure.detail}; no result URLs or titles to compare` };
  const overlap = parts.reduce((sum, p) => sum + p.f1, 0) / parts.length;
  const score = STRUCTURE_WEIGHT * structure.score + (1 - STRUCTURE_WEIGHT) * overlap;
  const sets = parts.map((p) => p.text).join(", ");
  return {
    score,
    detail: `structure ${structure.score.toFixed(2)}: ${structure.detail}; results ${overlap.toFixed(2)}: ${sets}`,
  };
}
