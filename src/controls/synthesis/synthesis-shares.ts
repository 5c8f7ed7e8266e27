/**
 * The realised shares of the mix control (docs/controls.md "Mix control"), from what the records
 * units counted: per targeted domain and kind, (natural + synthesized) / samples written against
 * the target, with the shortfall when the data could not reach it and the excess when the natural
 * samples alone are above it. For the manifest, which the card, `stats` and the dashboard read.
 */
import type { Domain } from "../../core/trajectory.ts";
import type { ControlsSummary, SynthesisShare } from "../../output/manifest.ts";
import { sortedKeys } from "../../output/task-totals.ts";
import { domainTargets, type SynthesisTargets, synthesisOn } from "./select-synthesis.ts";

/** The controls block with its synthesis counts in key order and `synthesis_shares` added (unchanged when synthesis is off). */
export function withSynthesisShares<T extends ControlsSummary>(controls: T, settings: SynthesisTargets | undefined): T {
  if (!synthesisOn(settings) || controls.synthesis_samples === undefined) return controls;
  const sorted = { ...controls };
  for (const key of [
    "synthesis_samples",
    "synthesis_natural",
    "synthesis_eligible",
    "synthesized",
    "synthesis_rejected",
    "synthesized_teacher",
    "synthesis_rejected_teacher",
  ] as const)
    if (controls[key] !== undefined) Object.assign(sorted, { [key]: sortedKeys(controls[key]) });
  return { ...sorted, synthesis_shares: synthesisShares(controls, settings) };
}

/** Per domain written and kind targeted there: the share report. */
export function synthesisShares(controls: ControlsSummary, settings: SynthesisTargets): Record<string, Record<string, SynthesisShare>> {
  const out: Record<string, Record<string, SynthesisShare>> = {};
  for (const domain of Object.keys(controls.synthesis_samples ?? {}).sort()) {
    const samples = controls.synthesis_samples?.[domain] ?? 0;
    const targets = domainTargets(domain as Domain, settings);
    if (targets.length === 0) continue;
    const byKind: Record<string, SynthesisShare> = {};
    for (const [kind, target] of targets) {
      const natural = controls.synthesis_natural?.[domain]?.[kind] ?? 0;
      const synthesized = controls.synthesized?.[domain]?.[kind] ?? 0;
      const goal = Math.round(target * samples);
      byKind[kind] = {
        target,
        samples,
        natural,
        synthesized,
        eligible: controls.synthesis_eligible?.[domain]?.[kind] ?? 0,
        realised: samples === 0 ? 0 : Math.round(((natural + synthesized) / samples) * 1e6) / 1e6,
        shortfall: Math.max(0, goal - natural - synthesized),
        excess: Math.max(0, natural - goal),
      };
    }
    out[domain] = byKind;
  }
  return out;
}
