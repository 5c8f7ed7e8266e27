import type { SourceRef, Turn } from "./trajectory.ts";

/**
 * A plain document (world-knowledge text: a FineWeb row, a manual page, a statute) read beside
 * trajectories for CPT mixtures. It becomes one sample whose every token carries the loss: no chat
 * template, the text's tokens and the tokenizer's end-of-document token.
 */
export interface TextDocument {
  /** From the source's `id` field or column, else `text-` + 16 hex of the text's sha256. */
  id: string;
  text: string;
  source: SourceRef;
}

/** The `domain` of text samples: not one of the seven environment domains. */
export const TEXT_DOMAIN = "text";

/** The mixture source text inputs belong to when their input names none. */
export const DEFAULT_TEXT_SOURCE = "knowledge";

/**
 * The document as one turn (no action, the text as the observation), for the stages that compare
 * records by their turns' text: exact and near dedup, and decontamination.
 */
export function documentTurns(document: TextDocument): Turn[] {
  return [{ action: "", observation: document.text }];
}
