import type { InputSpec } from "../config/schema.ts";
import { DEFAULT_TEXT_SOURCE } from "../core/text-document.ts";
import type { ReadItem } from "../read/reader.ts";

/**
 * The mixture source a read record belongs to: its input's `source`, else the trajectory's domain,
 * or `knowledge` for a text document. Quarantine entries belong to none.
 */
export function sourceOf(item: ReadItem, spec: InputSpec): string | undefined {
  if (spec.source) return spec.source;
  if (item.kind === "trajectory") return item.trajectory.domain;
  if (item.kind === "document") return DEFAULT_TEXT_SOURCE;
  return undefined;
}
