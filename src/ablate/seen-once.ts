import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { DottedOverride } from "../config/dotted-overrides.ts";
import type { LoadedConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { TURN_CLASSES } from "../mask/turn-classes.ts";

/**
 * The "seen once" evaluation subset of `lwm-data ablate`: the held-out observations whose canonical
 * form occurs exactly once in the whole corpus (mask.corpus_novelty's job-wide count is 1). On a corpus
 * where most held-out tokens are repeats, the overall held-out loss mostly measures how well a model
 * recalls them; this subset says what a variant does to observations it cannot have memorised.
 *
 * corpus_novelty is -log2(count / N) bits, so count 1 is log2 N and count 2 is log2 N - 1: a class
 * rule with the bound log2 N - 0.5 separates them, but needs N first. Hence two builds: one that
 * counts (N from its manifest), then one whose loss_mask labels only the seen-once observations.
 */

/** Where the two builds go, under the ablation folder. */
export const SEEN_ONCE_DIRS = { counts: "eval-novelty-counts", subset: "eval-seen-once" } as const;

/** The class the rule gives repeated observations; kept 0, every other class 1 (no random draw). */
const REPEATED_CLASS = "Echo";

const keepAll = (dropped?: string) => Object.fromEntries(TURN_CLASSES.map((name) => [name, name === dropped ? 0 : 1]));

/** Turn-stats with corpus novelty counted, every class kept whole (no random draw), weights off; `classes` decides what is dropped. */
function noveltyMask(classes: unknown[], keep: Record<string, number>): DottedOverride[] {
  return [
    { key: "mask.policy", value: "turn-stats" },
    { key: "mask.corpus_novelty.enabled", value: true },
    { key: "mask.domain_keep", value: {} },
    { key: "mask.classes", value: classes },
    { key: "mask.keep", value: keep },
  ];
}

/** The counting build: no class rule, every observation labelled. */
const countingMask = () => noveltyMask([], keepAll());

/** One rule: an observation seen more than once (corpus_novelty ≤ log2 N − 0.5) is dropped; the seen-once ones stay. */
export function seenOnceMask(observations: number): DottedOverride[] {
  return noveltyMask([{ name: REPEATED_CLASS, when: { corpus_novelty: { max: Math.log2(observations) - 0.5 } } }], keepAll(REPEATED_CLASS));
}

/** N: observations counted job-wide, from a build's manifest (`novelty.observations`). */
export function countedObservations(dir: string): number {
  const path = join(dir, "manifest.json");
  const manifest = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as { novelty?: { observations?: number } }) : {};
  const observations = manifest.novelty?.observations;
  if (typeof observations !== "number") throw new Error(`ablate: ${path} has no novelty.observations (corpus novelty was not counted)`);
  return observations;
}

export type SeenOnceBuild =
  | { available: true; dir: string; countsDir: string; observations: number; loaded: LoadedConfig }
  | { available: false; reason: string };

/**
 * Builds the seen-once evaluation subset: `load(dir, overrides)` loads the baseline's config with
 * the evaluation layout and the given mask overrides. A baseline whose passes cannot read the
 * job-wide counts (mask.corpus_novelty's refusal) gets no subset, with the reason, instead of failing the ablation.
 */
export async function buildSeenOnce(
  outDir: string,
  load: (dir: string, mask: DottedOverride[]) => LoadedConfig,
  build: (loaded: LoadedConfig) => Promise<void>,
): Promise<SeenOnceBuild> {
  const countsDir = join(outDir, SEEN_ONCE_DIRS.counts);
  const dir = join(outDir, SEEN_ONCE_DIRS.subset);
  try {
    await build(load(countsDir, countingMask()));
  } catch (err) {
    if (err instanceof UserError && err.message.startsWith("mask.corpus_novelty:"))
      return { available: false, reason: `this config cannot count corpus novelty (${err.message})` };
    throw err;
  }
  const observations = countedObservations(countsDir);
  const loaded = load(dir, seenOnceMask(observations));
  await build(loaded);
  // The rule's bound is only right for the N it was drawn from: both builds must have counted the same corpus.
  const again = countedObservations(dir);
  if (again !== observations) throw new Error(`ablate: ${dir} counted ${again} observations, ${countsDir} ${observations}`);
  return { available: true, dir, countsDir, observations, loaded };
}
