import { lowerBound } from "../core/hash-range.ts";
import { UnionFind } from "./union-find.ts";

/**
 * The union-find forest of record keys joined by pairs (a flat [a, b, a, b, …] array). Keys are
 * sorted and the root of a set is its smallest index, so a root is its set's first record in input
 * order — partial forests of different partitions merge by union alone.
 */
export class Forest {
  /** Every key that occurs in a pair, sorted, once. */
  readonly keys: BigUint64Array;
  private readonly sets: UnionFind;

  constructor(pairs: BigUint64Array) {
    const keys = BigUint64Array.from(pairs).sort();
    let n = 0;
    for (let i = 0; i < keys.length; i++) if (i === 0 || keys[i] !== keys[n - 1]) keys[n++] = keys[i] as bigint;
    this.keys = keys.slice(0, n);
    this.sets = new UnionFind(n);
    for (let i = 0; i < pairs.length; i += 2) this.sets.union(this.index(pairs[i] as bigint), this.index(pairs[i + 1] as bigint));
  }

  /** Position of `key` in `keys`, or -1. */
  index(key: bigint): number {
    const at = lowerBound(this.keys, key);
    return at < this.keys.length && this.keys[at] === key ? at : -1;
  }

  /** The root key of `key`'s set (itself when it is in no pair). */
  root(key: bigint): bigint {
    const i = this.index(key);
    return i < 0 ? key : (this.keys[this.sets.find(i)] as bigint);
  }

  rootIndex(i: number): number {
    return this.sets.find(i);
  }

  /** (key, root key) for every key that is not its set's root: the forest in its spill form. */
  pairs(): BigUint64Array {
    const out: bigint[] = [];
    for (let i = 0; i < this.keys.length; i++) {
      const root = this.sets.find(i);
      if (root !== i) out.push(this.keys[i] as bigint, this.keys[root] as bigint);
    }
    return BigUint64Array.from(out);
  }
}
