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

/**
 * A copy of `pairs` sorted by hash, then key: a total order, so the result never depends on arrival
 * order. An LSD radix sort on the hash (four stable passes of 16 bits over 32-bit halves: ~20×
 * faster than a comparator sort on BigInts), then runs of equal hashes — only the twins — by key.
 */
export function sortPairs(pairs: BigUint64Array): BigUint64Array {
  const n = pairs.length / 2;
  const words = new Uint32Array(pairs.buffer, pairs.byteOffset, pairs.length * 2);
  // Native byte order is little-endian on every platform Node supports: word 0 is a value's low half.
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    lo[i] = words[4 * i] as number;
    hi[i] = words[4 * i + 1] as number;
  }
  let order = new Uint32Array(n);
  let next = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const counts = new Uint32Array(65537);
  for (const [half, shift] of [
    [lo, 0],
    [lo, 16],
    [hi, 0],
    [hi, 16],
  ] as const) {
    counts.fill(0);
    for (let i = 0; i < n; i++) (counts[(((half[i] as number) >>> shift) & 0xffff) + 1] as number)++;
    for (let d = 0; d < 65536; d++) counts[d + 1] = (counts[d + 1] as number) + (counts[d] as number);
    for (let i = 0; i < n; i++) {
      const from = order[i] as number;
      const digit = ((half[from] as number) >>> shift) & 0xffff;
      next[counts[digit] as number] = from;
      counts[digit] = (counts[digit] as number) + 1;
    }
    [order, next] = [next, order];
  }
  // Equal hashes: order by key (a run is a record's twins, so runs are short).
  for (let start = 0; start < n; ) {
    const first = order[start] as number;
    let end = start + 1;
    while (end < n && hi[order[end] as number] === hi[first] && lo[order[end] as number] === lo[first]) end++;
    if (end - start > 1) {
      const run = Array.from(order.subarray(start, end)).sort((a, b) => {
        const ka = pairs[2 * a + 1] as bigint;
        const kb = pairs[2 * b + 1] as bigint;
        return ka < kb ? -1 : ka > kb ? 1 : 0;
      });
      order.set(run, start);
    }
    start = end;
  }
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
