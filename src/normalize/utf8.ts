import { RecordError } from "../core/errors.ts";
import { type Counters, count } from "./normalizer.ts";

/**
 * Text must be valid Unicode before it is tokenized and written. Two kinds of damage reach here:
 *
 * - lone surrogates (`\ud800` from a JSON escape, a string cut mid-pair): not encodable as UTF-8;
 * - U+FFFD replacement characters: what the byte decoder upstream put where the source had
 *   invalid UTF-8 bytes. The damage has already happened; the character is counted, and in
 *   quarantine mode the record is refused, since its text is not what the environment sent.
 *
 * `repair` replaces each lone surrogate by U+FFFD (`utf8.repaired`) and keeps the record;
 * `quarantine` throws a RecordError naming the field. U+FFFD already present is counted as
 * `utf8.replacement_chars` in both modes.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const REPLACEMENT = /\uFFFD/g;

export function checkUnicode(text: string, mode: "repair" | "quarantine", field: string, counters: Counters): string {
  const replacements = text.includes("\uFFFD") ? (text.match(REPLACEMENT)?.length ?? 0) : 0;
  const lone = text.isWellFormed() ? 0 : (text.match(LONE_SURROGATE)?.length ?? 0);
  count(counters, "utf8.replacement_chars", replacements);
  if (mode === "quarantine" && (lone > 0 || replacements > 0)) {
    const what = [
      lone > 0 ? `${lone} lone surrogate${lone === 1 ? "" : "s"}` : "",
      replacements > 0 ? `${replacements} U+FFFD replacement character${replacements === 1 ? "" : "s"} (invalid UTF-8 in the source)` : "",
    ].filter((part) => part !== "");
    throw new RecordError(`${field}: invalid Unicode: ${what.join(" and ")}`, field);
  }
  if (lone === 0) return text;
  count(counters, "utf8.repaired", lone);
  return text.toWellFormed();
}
