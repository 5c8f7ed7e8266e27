import { RecordError } from "../core/errors.ts";
import type { TextDocument } from "../core/text-document.ts";
import type { Counters, NormalizeSettings } from "./normalizer.ts";
import { redactPii, resolvePii } from "./pii/pii.ts";
import { redactIdentifier } from "./redact-output.ts";
import { redactSecrets } from "./secrets.ts";
import { checkUnicode } from "./utf8.ts";

/**
 * What every text document gets before anything is written, as trajectories' text does: the
 * Unicode check or repair (`normalize.invalid_utf8`) and secret redaction, id included. No domain
 * rules and no length cap: a long document is cut into pieces by packing, never truncated here.
 */
export async function normalizeDocument(document: TextDocument, settings: NormalizeSettings, counters: Counters): Promise<TextDocument> {
  if (document.id.trim() === "") throw new RecordError("id is empty", "id");
  if (document.text.trim() === "") throw new RecordError("the document's text is empty", "text");
  const checked = checkUnicode(document.text, settings.invalid_utf8, "text", counters);
  // Personal data with the top-level settings: a document has no domain to override them.
  const pii = resolvePii(settings.pii);
  if (!settings.redact_secrets) return { ...document, text: redactPii(checked, pii, counters) };
  const id = redactIdentifier(document.id, counters);
  return { ...document, id, text: redactPii(redactSecrets(checked, counters), pii, counters) };
}
