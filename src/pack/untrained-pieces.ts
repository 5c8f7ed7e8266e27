/** A document's loss: its 0/1 mask and, with `mask.weights`, its per-token weights. */
interface Trainable {
  lossMask: Uint8Array;
  lossWeight?: Float32Array;
}

/**
 * Whether a document trains at least one token. With weights a trained token has weight > 0
 * exactly where its mask is 1 (src/mask/loss-weights.ts), so either test is the same one; both
 * are asked, so a weight of 0 under a mask bit of 1 could not pass for training.
 */
export function trainsAnyToken(document: Trainable): boolean {
  const { lossMask, lossWeight } = document;
  for (let i = 0; i < lossMask.length; i++) {
    if (lossMask[i] === 1 && (lossWeight === undefined || (lossWeight[i] as number) > 0)) return true;
  }
  return false;
}

/**
 * The pieces of a split record worth writing: those that train some token. A piece that trains
 * nothing (its turns all masked) costs compute for no gradient, and a packed row holding only
 * it has labels all −100, a 0/0 = NaN mean loss in a micro-batch-1 trainer. A record none of
 * whose pieces trains keeps its first piece, so it is still written (and counted) as a record.
 */
export function dropUntrainedPieces<T extends Trainable>(pieces: readonly T[]): { kept: T[]; dropped: number } {
  const kept = pieces.filter(trainsAnyToken);
  if (kept.length === 0 && pieces.length > 0) kept.push(pieces[0] as T);
  return { kept, dropped: pieces.length - kept.length };
}
