import type { SampleControls } from "../apply-controls.ts";
import { lookupKey, type RephrasedKind, type RephraseLookup } from "./rephrase-files.ts";

const REPHRASABLE = new Set<string>(["instructed", "synthesized"] satisfies RephrasedKind[]);

/**
 * A sample's controls with the rephrase stage's outcome (docs/controls.md "Reworded instructions"):
 * the accepted wording in place of the template, or the template with the reason it stayed.
 * Samples the stage did not ask about are returned as they are. A line whose template is not the
 * sample's instruction means the stage saw other controls than the records stage: an error, never
 * a silent fallback.
 */
export function withRephrasing(controls: SampleControls, recordId: string, lookup: RephraseLookup): SampleControls {
  if (!REPHRASABLE.has(controls.kind)) return controls;
  const line = lookup.get(lookupKey(recordId, controls.kind as RephrasedKind));
  if (line === undefined) return controls;
  if (line.template !== controls.instruction)
    throw new Error(
      `rephrase: the ${controls.kind} instruction of ${recordId} is not the one the rephrase stage asked about; rerun the job from the rephrase stage`,
    );
  if (line.text === null) return { ...controls, rephrase: { rephrased: false, reason: line.reasons[0] ?? "unfaithful" } };
  return { ...controls, instruction: line.text, rephrase: { rephrased: true } };
}
