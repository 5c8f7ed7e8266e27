/** The first 64-bit hash of partition `p` of `partitions` equal hash ranges (2^64 for p = partitions). */
export function hashBound(p: number, partitions: number): bigint {
  return ((1n << 64n) * BigInt(p)) / BigInt(partitions);
}

/** The first position in `sorted` whose value is at least `value`. */
export function lowerBound(sorted: BigUint64Array, value: bigint): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((sorted[mid] as bigint) < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
