/**
 * Settings the schema accepts one by one but the pipeline cannot honour together, refused when the
 * config is loaded: before `plan`, `validate` or any stage writes output, with both keys named.
 */
import { UserError } from "../core/errors.ts";
import type { JobConfig } from "./schema.ts";

/** Throws a UserError naming both keys when the config combines settings that do not work together. */
export function refuseUnsupportedCombinations(path: string, config: JobConfig): void {
  const shareSources = Object.entries(config.mixture.sources)
    .filter(([, weight]) => "share" in weight)
    .map(([source]) => `mixture.sources.${source}.share`);
  const targets = Object.keys(config.controls.synthesis.target_shares);
  // The records stage replays the mixture count's spooled results, which were made before the synthesis quota.
  if (config.controls.enabled && targets.length > 0 && shareSources.length > 0)
    throw new UserError(
      `${path}: controls.synthesis.target_shares (${targets.join(", ")}) with mixture target shares (${shareSources.join(", ")}) is not supported yet: ` +
        "the records stage replays records the mixture counted before the synthesis quota existed; use mixture factors (mixture.sources.<source>.factor) or empty controls.synthesis.target_shares",
    );
}
