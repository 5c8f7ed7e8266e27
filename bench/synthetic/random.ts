/**
 * Seeded randomness for the synthetic corpus: the same seed gives the same bytes on every
 * machine and Node version (no Math.random, no locale-dependent formatting).
 */

/** FNV-1a over the parts: a stable 32-bit seed for (corpus seed, domain, file, ...). */
export function seedOf(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join("\u0000")) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Measured length quantiles (characters or counts); sampling reproduces them. */
export interface Quantiles {
  min: number;
  p10: number;
  p50: number;
  p90: number;
  max: number;
}

/** mulberry32: tiny, fast, and good enough for shaping test data. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** Zipf-like pick: early items far more often, the way real vocabularies repeat. */
  zipf<T>(items: readonly T[]): T {
    const u = this.next();
    return items[Math.floor(items.length * u * u * u)] as T;
  }
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    const total = choices.reduce((sum, [, w]) => sum + w, 0);
    let u = this.next() * total;
    for (const [value, w] of choices) {
      u -= w;
      if (u < 0) return value;
    }
    return (choices[choices.length - 1] as readonly [T, number])[0];
  }
  hex(length: number): string {
    let out = "";
    while (out.length < length)
      out += Math.floor(this.next() * 0x100000000)
        .toString(16)
        .padStart(8, "0");
    return out.slice(0, length);
  }
  /**
   * A value whose distribution has the given quantiles: piecewise log-linear between
   * (0, min), (0.1, p10), (0.5, p50), (0.9, p90), (1, max).
   */
  quantiles(q: Quantiles): number {
    const u = this.next();
    const points: [number, number][] = [
      [0, q.min],
      [0.1, q.p10],
      [0.5, q.p50],
      [0.9, q.p90],
      [1, q.max],
    ];
    for (let i = 1; i < points.length; i++) {
      const [u1, v1] = points[i] as [number, number];
      if (u > u1 && i < points.length - 1) continue;
      const [u0, v0] = points[i - 1] as [number, number];
      const f = (u - u0) / (u1 - u0);
      const [a, b] = [Math.log(Math.max(v0, 1)), Math.log(Math.max(v1, 1))];
      return Math.round(Math.exp(a + f * (b - a)));
    }
    return q.p50;
  }
}

/** Lines from `line()` until the text reaches `target` characters (at least one line). */
export function fillLines(target: number, line: (i: number) => string): string[] {
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; length < target || lines.length === 0; i++) {
    const next = line(i);
    lines.push(next);
    length += next.length + 1;
  }
  return lines;
}
