/**
 * A bounded map that keeps what is used: entries go into a young generation; when it is full it
 * becomes the old one (the previous old one is dropped) and a new young one starts. A hit in the
 * old generation moves the entry back to the young one. So frequent keys survive every turnover,
 * rare ones age out, and at most 2 × `generation` entries are held whatever the input size.
 * (Clearing one map when full, as before, dropped the frequent pieces with the rare ones: on text
 * with more distinct pieces than the cache holds, every turnover re-encoded the most common words.)
 */
export class TwoGenerationCache<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private readonly generation: number;

  constructor(generation: number) {
    this.generation = generation;
  }

  get(key: string): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const aged = this.old.get(key);
    if (aged !== undefined) {
      this.old.delete(key);
      this.set(key, aged);
    }
    return aged;
  }

  set(key: string, value: V): void {
    if (this.young.size >= this.generation) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
