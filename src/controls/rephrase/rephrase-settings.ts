import { createHash } from "node:crypto";
import type { ControlsConfig } from "../../config/schema.ts";
import { synthesisIdentity } from "../synthesis/teacher-settings.ts";

/** `controls.rephrase` (docs/controls.md "Reworded instructions"). */
export type RephraseConfig = NonNullable<ControlsConfig["rephrase"]>;

/** The block of a job that rewords (`rephraseOn`). */
export function rephraseSettings(controls: ControlsConfig): RephraseConfig {
  if (controls.rephrase === undefined) throw new Error("controls.rephrase is not set (configs/defaults.yaml sets it)");
  return controls.rephrase;
}

/** Whether a job's teacher rewords any instruction: controls on and a share above 0. */
export function rephraseOn(controls: ControlsConfig): boolean {
  return controls.enabled && (controls.rephrase?.share ?? 0) > 0;
}

/** What decides the rewordings: the share, the model and how it is asked; not where it is served, its key, cache or speed. */
export function rephraseIdentity(rephrase: RephraseConfig) {
  return { share: rephrase.share, model: rephrase.model, temperature: rephrase.temperature, max_tokens: rephrase.max_tokens };
}

export type ControlsIdentity = Omit<ControlsConfig, "rephrase" | "synthesis"> & {
  synthesis: ReturnType<typeof synthesisIdentity>;
  rephrase?: ReturnType<typeof rephraseIdentity>;
};

/**
 * The controls block as the config hash, tasks/plan.json and the manifest see it: with rephrasing off, without the
 * `rephrase` block, so outputs made before it existed keep their hash; with it on, its identity only.
 */
export function controlsIdentity(controls: ControlsConfig): ControlsIdentity {
  const { rephrase, ...others } = controls;
  // The synthesis block likewise without its teacher when that is off (src/controls/synthesis/teacher-settings.ts).
  const rest = { ...others, synthesis: synthesisIdentity(others.synthesis) };
  return rephrase !== undefined && rephraseOn(controls) ? { ...rest, rephrase: rephraseIdentity(rephrase) } : rest;
}

function digest(seed: number, purpose: string, id: string): Buffer {
  return createHash("sha256").update(`lwm-controls-rephrase\u0000${seed}\u0000${purpose}\u0000${id}`).digest();
}

/**
 * Whether a sample's instruction is reworded: a uniform draw in [0, 1) per sample id (the record's
 * id, or the synthesized trajectory's), under its own tag so it agrees with no other draw.
 */
export function rephraseDrawn(seed: number, sampleId: string, share: number): boolean {
  const d = digest(seed, "draw", sampleId);
  return (d.readUInt32BE(0) * 2 ** 20 + (d.readUInt32BE(4) >>> 12)) / 2 ** 52 < share;
}

/** The request's sampling seed (31 bits): the same sample asks the same, so the cache answers a rerun. */
export function rephraseSeed(seed: number, sampleId: string): number {
  return digest(seed, "request", sampleId).readUInt32BE(0) >>> 1;
}
