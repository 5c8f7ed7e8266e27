/**
 * (hash, key) pairs of 64-bit values, interleaved in one BigUint64Array: the unit the curation
 * stages spill to disk (16 bytes a pair, native byte order) and exchange between stages.
 */
export class PairBuffer {
  private data = new BigUint64Array(1024);
  private length = 0;

  push(hash: bigint, key: bigint): void {
    if (this.length + 2 > this.data.length) {
      const grown = new BigUint64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = hash;
    this.data[this.length++] = key;
  }

  get pairs(): number {
    return this.length / 2;
  }

  /** The pairs so far (a view; valid until the next push). */
  view(): BigUint64Array {
    return this.data.subarray(0, this.length);
  }
}

/** A copy of `pairs` sorted by hash, then key: a total order, so the result never depends on arrival order. */
export function sortPairs(pairs: BigUint64Array): BigUint64Array {
  const n = pairs.length / 2;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => {
    const ha = pairs[2 * a] as bigint;
    const hb = pairs[2 * b] as bigint;
    if (ha !== hb) return ha < hb ? -1 : 1;
    const ka = pairs[2 * a + 1] as bigint;
    const kb = pairs[2 * b + 1] as bigint;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  const sorted = new BigUint64Array(pairs.length);
  for (let i = 0; i < n; i++) {
    const from = order[i] as number;
    sorted[2 * i] = pairs[2 * from] as bigint;
    sorted[2 * i + 1] = pairs[2 * from + 1] as bigint;
  }
  return sorted;
}

/** Reads pairs from bytes (a `.keys` or forest file, or a slice of one). */
export function pairsFromBytes(bytes: Uint8Array): BigUint64Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new BigUint64Array(copy.buffer, 0, bytes.length / 8);
}
