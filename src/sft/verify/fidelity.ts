import type { Domain } from "../../core/trajectory.ts";
import { jsonStructure } from "./json-structure.ts";
import { lineSimilarity } from "./line-similarity.ts";
import type { FidelityScore } from "./result.ts";
import { searchFidelity } from "./search-overlap.ts";
import { treeSimilarity } from "./tree-similarity.ts";

/** How close a prediction is to the real observation, for one domain. */
export type FidelityMeasure = (prediction: string, groundTruth: string) => FidelityScore;

/** Each domain is scored the way its observations are read: output lines, JSON leaves, result sets, tree nodes. */
const MEASURES: Record<Domain, FidelityMeasure> = {
  terminal: lineSimilarity,
  swe: lineSimilarity,
  mcp: jsonStructure,
  search: searchFidelity,
  android: treeSimilarity,
  web: treeSimilarity,
  os: treeSimilarity,
};

export function fidelityFor(domain: Domain): FidelityMeasure {
  return MEASURES[domain];
}
