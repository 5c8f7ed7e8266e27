import type { Sample } from "../write/sample.ts";

/**
 * Several documents concatenated into one training row. `cuSeqlens` and `positionIds` let
 * the trainer keep attention inside each document (varlen / flash-attention style), so
 * packing does not let one document see another. Rows are not padded to seqLen here.
 */
export interface PackedRow {
  inputIds: Int32Array;
  lossMask: Uint8Array;
  /** mask.weights: the documents' loss weights, concatenated like lossMask (a document without any: its mask). */
  lossWeight?: Float32Array;
  /** Position within its own document: restarts at 0 where each document begins. */
  positionIds: Int32Array;
  /** Document boundaries: [0, len1, len1+len2, ..., total], one more entry than documents. */
  cuSeqlens: Int32Array;
  documentIds: string[];
  /** Which piece of its record each document is (Sample.part; 0 for a record that fit whole). */
  documentParts: number[];
  documentDomains: string[];
  /** Each document's mixture source (Sample.mixtureSource, default its domain). */
  documentSources: string[];
  numLossTokens: number;
}

/** Concatenates documents in the given order into one row. */
export function packRow(docs: readonly Sample[]): PackedRow {
  if (docs.length === 0) throw new Error("packRow needs at least one document");
  const cuSeqlens = documentOffsets(docs);
  const total = cuSeqlens[docs.length] as number;
  const inputIds = new Int32Array(total);
  const lossMask = new Uint8Array(total);
  const lossWeight = docs.some((doc) => doc.lossWeight) ? new Float32Array(total) : undefined;
  const positionIds = new Int32Array(total);
  let numLossTokens = 0;
  docs.forEach((doc, i) => {
    const start = cuSeqlens[i] as number;
    inputIds.set(doc.inputIds, start);
    lossMask.set(doc.lossMask, start);
    lossWeight?.set(doc.lossWeight ?? doc.lossMask, start);
    for (let p = 0; p < doc.inputIds.length; p++) positionIds[start + p] = p;
    numLossTokens += doc.numLossTokens;
  });
  return {
    inputIds,
    lossMask,
    ...(lossWeight ? { lossWeight } : {}),
    positionIds,
    cuSeqlens,
    documentIds: docs.map((d) => d.id),
    documentParts: docs.map((d) => d.part ?? 0),
    documentDomains: docs.map((d) => d.domain),
    documentSources: docs.map((d) => d.mixtureSource ?? d.domain),
    numLossTokens,
  };
}

function documentOffsets(docs: readonly Sample[]): Int32Array {
  const offsets = new Int32Array(docs.length + 1);
  docs.forEach((doc, i) => {
    // A mask that does not match its tokens would shift every later document's mask.
    if (doc.lossMask.length !== doc.inputIds.length) {
      throw new Error(`sample ${doc.id}: lossMask has ${doc.lossMask.length} entries for ${doc.inputIds.length} tokens`);
    }
    if (doc.lossWeight && doc.lossWeight.length !== doc.inputIds.length) {
      throw new Error(`sample ${doc.id}: lossWeight has ${doc.lossWeight.length} entries for ${doc.inputIds.length} tokens`);
    }
    offsets[i + 1] = (offsets[i] as number) + doc.inputIds.length;
  });
  return offsets;
}

export interface PackingEfficiency {
  /** Real tokens / (rows × seqLen). */
  efficiency: number;
  /** Share of row capacity that would be padding: 1 − efficiency. */
  paddingShare: number;
}

/** With no rows nothing is padded, so an empty run reports efficiency 1. */
export function packingEfficiency(tokens: number, rows: number, seqLen: number): PackingEfficiency {
  const capacity = rows * seqLen;
  const efficiency = capacity === 0 ? 1 : tokens / capacity;
  return { efficiency, paddingShare: 1 - efficiency };
}
