/**
 * What the SFT verifier suites share (test/sft-verify.test.ts on the project's own data,
 * test/third-party/sft-verify.test.ts on third-party samples): reading one trajectory as the
 * normalize stage hands it on, picking a turn's observation, and verifying a teacher's candidate.
 */
import { expect } from "vitest";
import type { Domain, Trajectory, Turn } from "../../src/core/trajectory.ts";
import { normalizeTrajectory } from "../../src/normalize/normalize-trajectory.ts";
import { detectReader } from "../../src/read/registry.ts";
import { type VerifierResult, type VerifyThresholds, verifyCandidate } from "../../src/sft/verify/index.ts";
import { collect, UNCAPPED_NORMALIZE_SETTINGS } from "../helpers.ts";

/**
 * The one trajectory in the file at `path`, through its reader and (unless `raw`) the normalizer
 * with what the normalize stage hands on (full trees, no caps): the observations a teacher's
 * predictions are checked against.
 */
export async function readOneTrajectory(path: string, raw = false): Promise<Trajectory> {
  const reader = await detectReader(path);
  const items = await collect(reader.read(path, { maxLineBytes: 1 << 24 }));
  const trajectories = items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
  expect(trajectories).toHaveLength(1);
  const t = trajectories[0] as Trajectory;
  return raw ? t : normalizeTrajectory(t, UNCAPPED_NORMALIZE_SETTINGS, new Map());
}

/** Turn `i`'s observation, checking the action so a reader change cannot silently shift turns. */
export function observation(t: Trajectory, i: number, action: string): string {
  const turn = t.turns[i] as Turn;
  expect(turn.action).toContain(action);
  return turn.observation;
}

export const THINK = "The action reads state the history already shows, so the output should follow from it directly.";
/** A well-formed candidate, laid out the way a teacher writes one. */
export const candidate = (prediction: string, think = THINK) =>
  `<think>\n${think}\n</think>\n\n<predicted_observation>\n${prediction}\n</predicted_observation>\n`;

/** The three verifiers' results for a candidate, in their fixed order. */
export function verify(domain: Domain, groundTruth: string, candidateText: string, hintsGiven = false, thresholds?: VerifyThresholds) {
  const results = verifyCandidate({ domain, candidateText, groundTruth, hintsGiven }, thresholds);
  expect(results.map((r) => r.rule)).toEqual(["format", "fidelity", "leakage"]);
  const [format, fidelity, leakage] = results as [VerifierResult, VerifierResult, VerifierResult];
  return { results, format, fidelity, leakage };
}

/** Replaces exactly one occurrence of `from` (and fails if it is not there exactly once). */
export function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from)).toHaveLength(2);
  return text.replace(from, to);
}
