import { RecordError } from "../core/errors.ts";
import { TEXT_DOMAIN, type TextDocument } from "../core/text-document.ts";
import type { Counters, NormalizeSettings } from "./normalizer.ts";
import { PiiRedactor, resolvePii } from "./pii/pii.ts";
import { redactIdentifier } from "./redact-output.ts";
import { redactSecrets } from "./secrets.ts";
import { checkUnicode } from "./utf8.ts";

/**
 * What every text document gets before anything is written, as trajectories' text does: the
 * Unicode check or repair (`normalize.invalid_utf8`), secret and personal-data redaction, id included. No domain
 * rules and no length cap: a long document is cut into pieces by packing, never truncated here.
 */
export async function normalizeDocument(document: TextDocument, settings: NormalizeSettings, counters: Counters): Promise<TextDocument> {
  if (document.id.trim() === "") throw new RecordError("id is empty", "id");
  if (document.text.trim() === "") throw new RecordError("the document's text is empty", "text");
  const checked = checkUnicode(document.text, settings.invalid_utf8, "text", counters);
  // Personal data with the top-level settings: a document has no domain to override them.
  const resolved = resolvePii(settings.pii);
  const pii = resolved ? new PiiRedactor(resolved, counters, TEXT_DOMAIN) : null;
  const secrets = settings.redact_secrets;
  const id = secrets || pii ? redactIdentifier(document.id, counters, { secrets, pii }) : document.id;
  const cleaned = secrets ? redactSecrets(checked, counters) : checked;
  return { ...document, id, text: pii ? pii.redact(cleaned) : cleaned };
}
