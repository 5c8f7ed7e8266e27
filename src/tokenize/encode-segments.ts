import type { Segment } from "../render/chat-template.ts";
import type { Tokenizer } from "./tokenizer.ts";

export interface EncodedSequence {
  inputIds: Int32Array;
  /**
   * Per token: the index of the message whose content the token belongs to, or -1 for template
   * scaffolding. The end-of-turn special token right after a message's content belongs to that
   * message too, so masking a message masks its end token with it.
   */
  owner: Int32Array;
}

/** Longest first, so `<|im_start|>` is not cut short by a shorter added token it contains. */
function addedTokenPattern(tokenizer: Tokenizer): RegExp {
  const literals = [...tokenizer.addedTokens.keys()].sort((a, b) => b.length - a.length);
  const escaped = literals.map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(escaped.join("|"), "g");
}

const patternCache = new WeakMap<Tokenizer, RegExp>();

/**
 * Ids and owners are gathered in typed arrays kept from call to call (a record is thousands of
 * tokens: growing plain arrays per record was ~15% of all the pipeline's allocation); each call
 * returns copies of its part.
 */
const MAX_KEPT_TOKENS = 1 << 21;
let idBuffer = new Int32Array(1 << 16);
let ownerBuffer = new Int32Array(1 << 16);

function ensureCapacity(needed: number): void {
  if (needed <= idBuffer.length) return;
  const size = Math.max(needed, idBuffer.length * 2);
  const ids = new Int32Array(size);
  ids.set(idBuffer);
  const owners = new Int32Array(size);
  owners.set(ownerBuffer);
  idBuffer = ids;
  ownerBuffer = owners;
}

interface ContentSpan {
  start: number;
  end: number;
  owner: number;
}

/**
 * One call's state. Methods rather than closures inside `encodeSegments`: V8 keeps optimized
 * code only while a function object using it lives, so closures made per call were compiled
 * again after every major GC (a few percent of a run's CPU in recompiling alone).
 */
class SegmentEncoder {
  length = 0;
  /** The current run of plain text, and which byte ranges of it are whose content. */
  private chunk = "";
  private chunkBytes = 0;
  private spans: ContentSpan[] = [];
  private readonly tokenizer: Tokenizer;

  constructor(tokenizer: Tokenizer) {
    this.tokenizer = tokenizer;
  }

  push(id: number, owner: number): void {
    if (this.length === idBuffer.length) ensureCapacity(this.length + 1);
    idBuffer[this.length] = id;
    ownerBuffer[this.length] = owner;
    this.length += 1;
  }

  flush(): void {
    if (this.chunk.length === 0) return;
    const { tokenizer, spans } = this;
    const chunkIds = tokenizer.encodeOrdinary(this.chunk);
    ensureCapacity(this.length + chunkIds.length);
    let position = 0;
    let spanIndex = 0;
    for (const id of chunkIds) {
      const end = position + tokenizer.tokenByteLength(id);
      while (spanIndex < spans.length && (spans[spanIndex] as ContentSpan).end <= position) spanIndex++;
      const span = spans[spanIndex];
      // A token overlapping content is that content's token: every content byte is trained.
      const owner = span && span.start < end && span.end > position ? span.owner : -1;
      this.push(id, owner);
      position = end;
    }
    this.chunk = "";
    this.chunkBytes = 0;
    this.spans = [];
  }

  appendText(text: string, owner: number): void {
    if (text.length === 0) return;
    const normalized = this.tokenizer.normalize(text);
    const bytes = Buffer.byteLength(normalized);
    if (owner >= 0) this.spans.push({ start: this.chunkBytes, end: this.chunkBytes + bytes, owner });
    this.chunk += normalized;
    this.chunkBytes += bytes;
  }
}

/**
 * Tokenizes rendered segments the way the reference tokenizer tokenizes the rendered string:
 * text between special tokens is encoded as one piece (so ids match even where a
 * pre-tokenizer match spans template and content), while added-token strings are recognised
 * only in template text. Content is never scanned for special tokens.
 */
export function encodeSegments(segments: readonly Segment[], tokenizer: Tokenizer): EncodedSequence {
  let pattern = patternCache.get(tokenizer);
  if (!pattern) {
    pattern = addedTokenPattern(tokenizer);
    patternCache.set(tokenizer, pattern);
  }
  const encoder = new SegmentEncoder(tokenizer);
  // Message whose content was the last thing appended, if nothing has come after it yet.
  let pendingOwner = -1;

  for (const segment of segments) {
    if (segment.kind === "content") {
      encoder.appendText(segment.text, segment.messageIndex);
      pendingOwner = segment.messageIndex;
      continue;
    }
    const owner = segment.owner ?? -1;
    let last = 0;
    for (const match of segment.text.matchAll(pattern)) {
      if (match.index > last) {
        encoder.appendText(segment.text.slice(last, match.index), owner);
        pendingOwner = owner;
      }
      encoder.flush();
      encoder.push(tokenizer.addedTokens.get(match[0]) as number, owner >= 0 ? owner : pendingOwner);
      pendingOwner = owner;
      last = match.index + match[0].length;
    }
    if (last < segment.text.length) {
      encoder.appendText(segment.text.slice(last), owner);
      pendingOwner = owner;
    }
  }
  encoder.flush();
  const { length } = encoder;
  const encoded = { inputIds: idBuffer.slice(0, length), owner: ownerBuffer.slice(0, length) };
  // A freak record (a huge line) must not pin its buffers for the rest of the run.
  if (idBuffer.length > MAX_KEPT_TOKENS) {
    idBuffer = new Int32Array(1 << 16);
    ownerBuffer = new Int32Array(1 << 16);
  }
  return encoded;
}
