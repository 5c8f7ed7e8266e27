import { RecordError } from "../core/errors.ts";
import { lossMask } from "../mask/loss-mask.ts";
import { lossWeights, type WeightedMessage } from "../mask/loss-weights.ts";
import type { ChatMessage, ChatTemplateRenderer } from "../render/chat-template.ts";
import { type EncodedSequence, encodeSegments } from "../tokenize/encode-segments.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import { dropUntrainedPieces } from "./untrained-pieces.ts";

export type OverlongPolicy = "split" | "truncate" | "quarantine";

export interface FitSettings {
  seqLen: number;
  overlong: OverlongPolicy;
  /** Split: earlier turns carried (untrained) before each piece's first turn. */
  contextTurns: number;
  /** mask.weights: give each piece its per-token loss weights (from its messages' weights). */
  weights?: boolean;
}

/** One document that fits the sequence length: the whole sample, a piece of it, or its head. */
export interface FittedPiece {
  inputIds: Int32Array;
  lossMask: Uint8Array;
  /** With `weights`: per-token loss weights, aligned with inputIds. */
  lossWeight?: Float32Array;
  /** The piece's own messages (system, carried context, its turns), for the text form. */
  messages: ChatMessage[];
  /** Turns the piece trains on (carried context not counted). */
  numTurns: number;
  /** Tokens cut off the end because even one turn did not fit. */
  truncatedTokens: number;
  /** Split, on the first piece only: pieces of the record left out because they train no token. */
  untrainedPiecesDropped?: number;
}

/** A rendered and masked sample: `messages` = system · (user = action → assistant = observation)*. */
export interface RenderedSample {
  messages: readonly ChatMessage[];
  encoded: EncodedSequence;
  lossMask: Uint8Array;
}

export interface FitTools {
  renderer: ChatTemplateRenderer;
  tokenizer: Tokenizer;
}

interface Tokens {
  inputIds: Int32Array;
  lossMask: Uint8Array;
  lossWeight?: Float32Array;
}

function head(sample: Tokens, seqLen: number): Tokens {
  return {
    inputIds: sample.inputIds.slice(0, seqLen),
    lossMask: sample.lossMask.slice(0, seqLen),
    ...(sample.lossWeight ? { lossWeight: sample.lossWeight.slice(0, seqLen) } : {}),
  };
}

/**
 * Token index where each turn starts in the whole sample's encoding: right after the end token
 * of the message before its action (the system message for turn 0). Estimates only — each
 * piece is rendered again and measured — so the template's exact seams do not matter.
 */
function turnStarts(encoded: EncodedSequence, turns: number): number[] {
  const lastOwned = new Array<number>(2 * turns + 1).fill(-1);
  encoded.owner.forEach((owner, i) => {
    if (owner >= 0 && owner < lastOwned.length) lastOwned[owner] = i;
  });
  const starts: number[] = [];
  let previous = 0;
  for (let t = 0; t < turns; t++) {
    const end = lastOwned[2 * t] as number;
    previous = end >= 0 ? Math.max(previous, end + 1) : previous;
    starts.push(previous);
  }
  return starts;
}

/** Messages of a piece: the system message, `context` untrained turns, then its own turns with their loss. */
function pieceMessages(messages: readonly ChatMessage[], contextFrom: number, from: number, to: number): ChatMessage[] {
  const piece: ChatMessage[] = [messages[0] as ChatMessage];
  for (let t = contextFrom; t < to; t++) {
    for (const message of [messages[1 + 2 * t], messages[2 + 2 * t]] as ChatMessage[]) {
      piece.push(t < from ? { ...message, loss: false } : message);
    }
  }
  return piece;
}

/**
 * Makes a sample fit `seqLen` tokens by the configured policy. Split cuts between turns: each
 * piece is the system message, up to `contextTurns` earlier turns as untrained context, then as
 * many turns as fit — rendered and tokenized again, so every piece is a well-formed
 * conversation and the reference tokenizer gives the same ids. A single turn that does not fit
 * even alone is cut at `seqLen` (counted in `truncatedTokens`). Pieces that train no token are
 * left out (src/pack/untrained-pieces.ts), their count on the first piece written.
 */
export function fitToLength(sample: RenderedSample, settings: FitSettings, tools: FitTools): FittedPiece[] {
  const { seqLen } = settings;
  const total = sample.encoded.inputIds.length;
  const turns = (sample.messages.length - 1) / 2;
  const whole: Tokens = {
    inputIds: sample.encoded.inputIds,
    lossMask: sample.lossMask,
    ...(settings.weights ? { lossWeight: lossWeights(sample.encoded, sample.messages) } : {}),
  };
  if (total <= seqLen) return [{ ...whole, messages: [...sample.messages], numTurns: turns, truncatedTokens: 0 }];
  if (settings.overlong === "quarantine") {
    throw new RecordError(`${total} tokens, longer than pack.seq_len ${seqLen} (pack.overlong: quarantine)`, "input_ids");
  }
  if (settings.overlong === "truncate" || !Number.isInteger(turns) || turns < 1) {
    const cut = head(whole, seqLen);
    return [{ ...cut, messages: [...sample.messages], numTurns: turns, truncatedTokens: total - seqLen }];
  }
  const { kept, dropped } = dropUntrainedPieces(splitAtTurns(sample, turns, settings, tools));
  if (dropped > 0) kept[0] = { ...(kept[0] as FittedPiece), untrainedPiecesDropped: dropped };
  return kept;
}

function render(messages: WeightedMessage[], tools: FitTools, weights: boolean): Tokens {
  const encoded = encodeSegments(tools.renderer.renderSegments(messages), tools.tokenizer);
  return {
    inputIds: encoded.inputIds,
    lossMask: lossMask(encoded, messages),
    ...(weights ? { lossWeight: lossWeights(encoded, messages) } : {}),
  };
}

function splitAtTurns(sample: RenderedSample, turns: number, settings: FitSettings, tools: FitTools): FittedPiece[] {
  const { seqLen } = settings;
  const starts = turnStarts(sample.encoded, turns);
  const total = sample.encoded.inputIds.length;
  const cost = (t: number) => (t + 1 < turns ? (starts[t + 1] as number) : total) - (starts[t] as number);
  const systemCost = starts[0] as number;
  if (systemCost >= seqLen) {
    throw new RecordError(`the system message alone is ${systemCost} tokens, not shorter than pack.seq_len ${seqLen}`, "messages.0");
  }

  const pieces: FittedPiece[] = [];
  let from = 0;
  while (from < turns) {
    let context = Math.min(settings.contextTurns, from);
    const contextCost = () => {
      let sum = 0;
      for (let t = from - context; t < from; t++) sum += cost(t);
      return sum;
    };
    // Drop carried context before dropping the piece's own first turn.
    while (context > 0 && systemCost + contextCost() + cost(from) > seqLen) context -= 1;
    let to = from + 1;
    let used = systemCost + contextCost() + cost(from);
    while (to < turns && used + cost(to) <= seqLen) used += cost(to++);

    // The estimate can be off at the seams; measure and shrink until the piece really fits.
    for (;;) {
      const messages = pieceMessages(sample.messages, from - context, from, to);
      const rendered = render(messages, tools, settings.weights === true);
      if (rendered.inputIds.length <= seqLen) {
        pieces.push({ ...rendered, messages, numTurns: to - from, truncatedTokens: 0 });
        break;
      }
      if (to - from > 1) to -= 1;
      else if (context > 0) context -= 1;
      else {
        const cut = head(rendered, seqLen);
        pieces.push({ ...cut, messages, numTurns: 1, truncatedTokens: rendered.inputIds.length - seqLen });
        break;
      }
    }
    from = to;
  }
  return pieces;
}
