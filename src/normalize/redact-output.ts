import { createHash } from "node:crypto";
import type { QuarantineEntry } from "../core/errors.ts";
import type { Counters } from "./normalizer.ts";
import { redactSecrets } from "./secrets.ts";

/**
 * Redaction of what is written besides the normalized text: ids, source labels and quarantine
 * entries, which quote the raw record before redaction has seen it.
 */

/**
 * An id with a secret in it keeps its readable parts and gets a hash suffix, so two ids that
 * differ only in their secrets stay two ids (the hash of a high-entropy secret reveals nothing).
 */
export function redactIdentifier(id: string, counters: Counters = new Map()): string {
  const redacted = redactSecrets(id, counters);
  return redacted === id ? id : `${redacted}#${createHash("sha256").update(id).digest("hex").slice(0, 12)}`;
}

/** A token-like run at the end of a cut excerpt: possibly half a secret, too short to be recognised. */
const CUT_TOKEN_TAIL = /[A-Za-z0-9+/=_.~-]{6,}…$/;

export function redactQuarantineEntry(entry: QuarantineEntry): QuarantineEntry {
  const redact = (text: string) => redactSecrets(text, new Map());
  const excerpt = entry.excerpt === undefined ? undefined : redact(entry.excerpt).replace(CUT_TOKEN_TAIL, "…");
  return {
    ...entry,
    source: { ...entry.source, uri: redact(entry.source.uri) },
    ...(entry.id !== undefined ? { id: redactIdentifier(entry.id) } : {}),
    ...(entry.field !== undefined ? { field: redact(entry.field) } : {}),
    reason: redact(entry.reason),
    ...(excerpt !== undefined ? { excerpt } : {}),
  };
}
