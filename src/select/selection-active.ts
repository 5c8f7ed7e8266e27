import type { SelectionSettings } from "./selection-schema.ts";

/** Whether the `select` block drops anything at all: off (the default) changes no output and runs no stage. */
export function selectionActive(settings: SelectionSettings): boolean {
  return settings.max_per !== undefined || settings.caps.length > 0 || settings.keep_fraction < 1;
}
