/**
 * Disjoint sets over 0..size-1 in an Int32Array: iterative path compression, and the smaller
 * root always becomes the root of a union, so a set's root is its minimum element (the first
 * record in input order, when indexes follow input order).
 */
export class UnionFind {
  private readonly parent: Int32Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 0) throw new Error(`UnionFind: size must be a non-negative integer, got ${size}`);
    this.parent = new Int32Array(size);
    for (let i = 0; i < size; i++) this.parent[i] = i;
  }

  get size(): number {
    return this.parent.length;
  }

  /** The root (minimum element) of `i`'s set. */
  find(i: number): number {
    const parent = this.parent;
    if ((i | 0) !== i || i < 0 || i >= parent.length) throw new RangeError(`UnionFind: ${i} is out of range 0..${parent.length - 1}`);
    let root = i;
    while (parent[root] !== root) root = parent[root] as number;
    while (i !== root) {
      const next = parent[i] as number;
      parent[i] = root;
      i = next;
    }
    return root;
  }

  /** Joins the sets of `a` and `b`; the smaller root becomes the root of both. */
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra < rb) this.parent[rb] = ra;
    else if (rb < ra) this.parent[ra] = rb;
  }
}
