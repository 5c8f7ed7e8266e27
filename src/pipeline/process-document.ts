import { type QuarantineEntry, RecordError } from "../core/errors.ts";
import { TEXT_DOMAIN, type TextDocument } from "../core/text-document.ts";
import { escapeMessages, escaperFor } from "../export/special-literals.ts";
import { normalizeDocument } from "../normalize/normalize-document.ts";
import { fitDocument } from "../pack/fit-document.ts";
import { documentTokens } from "../tokenize/document-tokens.ts";
import type { Sample, SampleMessage } from "../write/sample.ts";
import type { JobPlan } from "./plan.ts";
import type { StageContext } from "./stages.ts";

/**
 * A text document's samples: normalized (Unicode, secrets), tokenized as plain text between the
 * tokenizer's document tokens (no chat template), every token trained on; with packing, cut at
 * paragraph starts into pieces of at most `pack.seq_len` tokens. Or why it is quarantined.
 */
export async function processDocument(
  read: TextDocument,
  /** The record's label as outputs show it (secrets redacted). */
  source: string,
  plan: JobPlan,
  context: StageContext,
): Promise<Sample[] | QuarantineEntry> {
  let stage = "normalize";
  try {
    const document = await normalizeDocument(read, context.normalizeSettings, context.counters);
    stage = "tokenize";
    const { tokenizer } = context;
    const text = tokenizer.normalize(document.text);
    const { prefix, end } = documentTokens(tokenizer);
    const body = tokenizer.encodeOrdinary(text);
    const ids = new Int32Array(prefix.length + body.length + 1);
    ids.set(prefix);
    ids.set(body, prefix.length);
    ids[ids.length - 1] = end;
    const base = { id: document.id, domain: TEXT_DOMAIN, source };
    const { pack, output } = plan.config;
    if (!pack.enabled) {
      const messages: SampleMessage[] = [{ role: "text", content: document.text, loss: true }];
      return [
        {
          ...base,
          inputIds: ids,
          lossMask: new Uint8Array(ids.length).fill(1),
          numLossTokens: ids.length,
          numTurns: 0,
          ...(output.include_messages ? { messages: escapeMessages(messages, escaperFor(tokenizer, plan.renderer.template)) } : {}),
        },
      ];
    }
    stage = "pack";
    const pieces = fitDocument(ids, text, prefix.length, tokenizer, pack.seq_len, pack.overlong);
    return pieces.map((piece, part) => ({
      ...base,
      part,
      inputIds: piece.inputIds,
      lossMask: new Uint8Array(piece.inputIds.length).fill(1),
      numLossTokens: piece.inputIds.length,
      numTurns: 0,
      ...(piece.truncatedTokens > 0 ? { truncatedTokens: piece.truncatedTokens } : {}),
    }));
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    return { source: read.source, id: read.id, stage, ...(err.field ? { field: err.field } : {}), reason: err.message };
  }
}
