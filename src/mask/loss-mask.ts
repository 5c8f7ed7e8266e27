import type { ChatMessage } from "../render/chat-template.ts";
import type { EncodedSequence } from "../tokenize/encode-segments.ts";

/** One 0/1 per token, aligned with input_ids: 1 where the owning message carries the loss. */
export function lossMask(encoded: EncodedSequence, messages: readonly ChatMessage[]): Uint8Array {
  const mask = new Uint8Array(encoded.owner.length);
  for (let i = 0; i < mask.length; i++) {
    const owner = encoded.owner[i] as number;
    mask[i] = owner >= 0 && messages[owner]?.loss ? 1 : 0;
  }
  return mask;
}
