import { createHash } from "node:crypto";
import type { QuarantineEntry } from "../core/errors.ts";
import type { Counters } from "./normalizer.ts";
import { PiiRedactor, type PiiSettings, redactPii, resolvePiiAnyDomain } from "./pii/pii.ts";
import { redactSecrets } from "./secrets.ts";

/**
 * Redaction of what is written besides the normalized text: ids, source labels and quarantine
 * entries, which quote the raw record before redaction has seen it.
 */

/**
 * An id with a secret (or, with a PII redactor, personal data) in it keeps its readable parts and
 * gets a hash suffix, so two ids that differ only in what was redacted stay two ids (the hash of
 * a high-entropy secret reveals nothing; that of an address is a pseudonym, not the address).
 */
export function redactIdentifier(
  id: string,
  counters: Counters = new Map(),
  { secrets = true, pii = null }: { secrets?: boolean; pii?: PiiRedactor | null } = {},
): string {
  const withoutSecrets = secrets ? redactSecrets(id, counters) : id;
  const redacted = pii ? pii.redact(withoutSecrets) : withoutSecrets;
  return redacted === id ? id : `${redacted}#${createHash("sha256").update(id).digest("hex").slice(0, 12)}`;
}

/** A token-like run at the end of a cut excerpt: possibly half a secret, too short to be recognised. */
const CUT_TOKEN_TAIL = /[A-Za-z0-9+/=_.~-]{6,}…$/;
/** A last word with an @ or a digit at the end of a cut excerpt: possibly half an email or phone number. */
const PII_CUT_TAIL = /[^\s<>]*[@\d][^\s<>]*…$/;

/** What redactQuarantineEntry removes: secrets (default) and, when given settings that turn it on, personal data. */
export interface RedactOptions {
  secrets?: boolean;
  pii?: PiiSettings | undefined;
}

/**
 * The job's redaction of one output label (a source path, a reason): secrets, then personal data
 * of the kinds any domain redacts (a label's record may not have been read far enough to know its domain).
 */
export function redactLabel(text: string, options: RedactOptions): string {
  const cleaned = options.secrets === false ? text : redactSecrets(text, new Map());
  return redactPii(cleaned, resolvePiiAnyDomain(options.pii));
}

export function redactQuarantineEntry(entry: QuarantineEntry, options: RedactOptions = {}): QuarantineEntry {
  const resolved = resolvePiiAnyDomain(options.pii);
  // One numbering for the whole entry: the reason's <EMAIL_1> is the excerpt's.
  const pii = resolved ? new PiiRedactor(resolved, new Map()) : null;
  const redact = (text: string) => {
    const cleaned = options.secrets === false ? text : redactSecrets(text, new Map());
    return pii ? pii.redact(cleaned) : cleaned;
  };
  let excerpt = entry.excerpt === undefined ? undefined : redact(entry.excerpt);
  if (excerpt !== undefined && options.secrets !== false) excerpt = excerpt.replace(CUT_TOKEN_TAIL, "…");
  // The cut may also halve an address or a number: its last word goes when it holds an @ or a digit.
  if (excerpt !== undefined && pii) excerpt = excerpt.replace(PII_CUT_TAIL, "…");
  return {
    ...entry,
    source: { ...entry.source, uri: redact(entry.source.uri) },
    ...(entry.id !== undefined ? { id: redactIdentifier(entry.id, new Map(), { secrets: options.secrets !== false, pii }) } : {}),
    ...(entry.field !== undefined ? { field: redact(entry.field) } : {}),
    reason: redact(entry.reason),
    ...(excerpt !== undefined ? { excerpt } : {}),
  };
}
