/**
 * MinHash signatures and LSH band keys over word n-gram shingles, for near-duplicate detection.
 *
 * Hashing, all 32-bit integer arithmetic (Math.imul, shifts), so the same words and seed give the
 * same signature on every platform and run:
 * - a word: murmur3_32 of its UTF-16 code units (two per block), seeded;
 * - a shingle (`ngram` consecutive words): murmur3_32 over its words' hashes as blocks;
 * - min-hash function i: `fmix32(shingle ^ salt_i)`, salts drawn from the seed by splitmix32
 *   (the minima in WebAssembly SIMD, minhash-simd.ts, where the engine has it; the JavaScript
 *   loop below is the fallback and the reference the kernel is tested against);
 * - band key b: two murmur3_32 passes over the band's `rows` values (seeds mixed with b), as
 *   one 64-bit key.
 */

import { SimdMinima } from "./minhash-simd.ts";

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** murmur3's 32-bit finalizer (signed result). */
export function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** One murmur3 block step: `h` mixed with the 32-bit block `k`. */
export function mixBlock(h: number, k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, C2);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** murmur3_32 of a string's UTF-16 code units, two to a 32-bit block (signed result). */
export function hashWord(word: string, seed: number): number {
  return hashRange(word, 0, word.length, seed);
}

/** hashWord of `text.slice(start, end)`, without making that string. */
export function hashRange(text: string, start: number, end: number, seed: number): number {
  const n = end - start;
  let h = seed | 0;
  let i = start;
  for (; i + 1 < end; i += 2) h = mixBlock(h, text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16));
  if (i < end) {
    let k = Math.imul(text.charCodeAt(i), C1);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, C2);
  }
  return fmix32(h ^ (n * 2));
}

/** splitmix32: the next state and a well-mixed output, for drawing salts from a seed. */
function splitmix32(state: number): number {
  let z = (state + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return z ^ (z >>> 15);
}

export interface MinHashSettings {
  /** Words per shingle. */
  ngram: number;
  bands: number;
  rows: number;
  seed: number;
  /** The minima in JavaScript even where WebAssembly SIMD is there (the tests' reference). */
  withoutSimd?: boolean;
}

export class MinHasher {
  readonly ngram: number;
  readonly bands: number;
  readonly rows: number;
  readonly seed: number;
  /** Per min-hash function, the salt XORed into a shingle hash before fmix32. */
  private readonly salts: Int32Array;
  private readonly wordHashSeed: number;
  private readonly shingleSeed: number;
  private readonly simd: SimdMinima | undefined;

  constructor({ ngram, bands, rows, seed, withoutSimd }: MinHashSettings) {
    for (const [name, value] of [
      ["ngram", ngram],
      ["bands", bands],
      ["rows", rows],
    ] as const)
      if (!Number.isInteger(value) || value < 1) throw new Error(`MinHasher: ${name} must be a positive integer, got ${value}`);
    if (!Number.isInteger(seed)) throw new Error(`MinHasher: seed must be an integer, got ${seed}`);
    this.ngram = ngram;
    this.bands = bands;
    this.rows = rows;
    this.seed = seed;
    // The seed enters as two 32-bit halves, so seeds beyond 2^32 still differ.
    let state = splitmix32((seed | 0) ^ splitmix32(Math.floor(seed / 4294967296) | 0));
    const next = (): number => {
      state = (state + 0x9e3779b9) | 0;
      return splitmix32(state);
    };
    this.wordHashSeed = next();
    this.shingleSeed = next();
    this.salts = new Int32Array(bands * rows);
    for (let i = 0; i < this.salts.length; i++) this.salts[i] = next();
    this.simd = withoutSimd ? undefined : SimdMinima.of(this.salts);
  }

  /** The seed words are hashed with (`hashWord(word, wordSeed)`), for callers that hash words themselves. */
  get wordSeed(): number {
    return this.wordHashSeed;
  }

  /** The hash of each distinct shingle of the words (by their hashes), sorted; undefined when there are no words. */
  private shingles(wordHashes: Int32Array): Int32Array | undefined {
    const count = wordHashes.length;
    if (count === 0) return undefined;
    const n = Math.min(this.ngram, count);
    const shingles = new Int32Array(count - n + 1);
    const seed = this.shingleSeed;
    for (let s = 0; s < shingles.length; s++) {
      let h = seed;
      for (let j = 0; j < n; j++) h = mixBlock(h, wordHashes[s + j] as number);
      shingles[s] = fmix32(h ^ (n * 4));
    }
    // A minimum does not change for a repeated value, and repeats are common (an observation
    // shown again, a page's header on every turn): hashing each shingle once costs a sort.
    shingles.sort();
    let distinct = 1;
    for (let s = 1; s < shingles.length; s++) if (shingles[s] !== shingles[distinct - 1]) shingles[distinct++] = shingles[s] as number;
    return shingles.subarray(0, distinct);
  }

  /** `bands * rows` min-hashes of the word shingles of `words`; undefined when there are no words. */
  signature(words: readonly string[]): Uint32Array | undefined {
    const hashes = new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) hashes[i] = hashWord(words[i] as string, this.wordHashSeed);
    return this.signatureOfWordHashes(hashes);
  }

  /** `signature` of the words whose `hashWord(word, wordSeed)` values these are. */
  signatureOfWordHashes(wordHashes: Int32Array): Uint32Array | undefined {
    const shingles = this.shingles(wordHashes);
    if (shingles === undefined) return undefined;
    const salts = this.salts;
    const k = salts.length;
    const n = shingles.length;
    const signature = new Uint32Array(k);
    let f = 0;
    if (this.simd) {
      this.simd.minima(shingles, signature);
      f = 4 * this.simd.groups;
    }
    // Four functions per pass over the shingles (four independent chains for the CPU to overlap).
    // Minima of the unsigned values are kept signed: x ^ 0x80000000 orders like x >>> 0.
    for (; f + 4 <= k; f += 4) {
      const s0 = salts[f] as number;
      const s1 = salts[f + 1] as number;
      const s2 = salts[f + 2] as number;
      const s3 = salts[f + 3] as number;
      let m0 = 0x7fffffff;
      let m1 = 0x7fffffff;
      let m2 = 0x7fffffff;
      let m3 = 0x7fffffff;
      for (let i = 0; i < n; i++) {
        const v = shingles[i] as number;
        let h0 = v ^ s0;
        h0 = Math.imul(h0 ^ (h0 >>> 16), 0x85ebca6b);
        h0 = Math.imul(h0 ^ (h0 >>> 13), 0xc2b2ae35);
        h0 = h0 ^ (h0 >>> 16) ^ 0x80000000;
        if (h0 < m0) m0 = h0;
        let h1 = v ^ s1;
        h1 = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b);
        h1 = Math.imul(h1 ^ (h1 >>> 13), 0xc2b2ae35);
        h1 = h1 ^ (h1 >>> 16) ^ 0x80000000;
        if (h1 < m1) m1 = h1;
        let h2 = v ^ s2;
        h2 = Math.imul(h2 ^ (h2 >>> 16), 0x85ebca6b);
        h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35);
        h2 = h2 ^ (h2 >>> 16) ^ 0x80000000;
        if (h2 < m2) m2 = h2;
        let h3 = v ^ s3;
        h3 = Math.imul(h3 ^ (h3 >>> 16), 0x85ebca6b);
        h3 = Math.imul(h3 ^ (h3 >>> 13), 0xc2b2ae35);
        h3 = h3 ^ (h3 >>> 16) ^ 0x80000000;
        if (h3 < m3) m3 = h3;
      }
      signature[f] = (m0 ^ 0x80000000) >>> 0;
      signature[f + 1] = (m1 ^ 0x80000000) >>> 0;
      signature[f + 2] = (m2 ^ 0x80000000) >>> 0;
      signature[f + 3] = (m3 ^ 0x80000000) >>> 0;
    }
    for (; f < k; f++) {
      const salt = salts[f] as number;
      let min = 0x7fffffff;
      for (let i = 0; i < n; i++) {
        let h = (shingles[i] as number) ^ salt;
        h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
        h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
        h = h ^ (h >>> 16) ^ 0x80000000;
        if (h < min) min = h;
      }
      signature[f] = (min ^ 0x80000000) >>> 0;
    }
    return signature;
  }

  /** One 64-bit LSH key per band of the signature; undefined when there are no words. */
  bandKeys(words: readonly string[]): BigUint64Array | undefined {
    const signature = this.signature(words);
    return signature === undefined ? undefined : this.keysOf(signature);
  }

  /** The band keys of a signature made by this hasher. */
  keysOf(signature: Uint32Array): BigUint64Array {
    const { bands, rows } = this;
    if (signature.length !== bands * rows) throw new Error(`MinHasher: signature has ${signature.length} values, want ${bands * rows}`);
    const keys = new BigUint64Array(bands);
    for (let b = 0; b < bands; b++) {
      let hi = this.shingleSeed ^ Math.imul(b + 1, 0x9e3779b1);
      let lo = this.wordHashSeed ^ Math.imul(b + 1, 0x85ebca77);
      for (let r = b * rows, end = r + rows; r < end; r++) {
        const v = signature[r] as number;
        hi = mixBlock(hi, v);
        lo = mixBlock(lo, v ^ 0x5bd1e995);
      }
      hi = fmix32(hi ^ (rows * 4));
      lo = fmix32(lo ^ (rows * 4) ^ b);
      keys[b] = (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
    }
    return keys;
  }
}

/** The chance that two texts of Jaccard similarity `similarity` share at least one band key. */
export function candidateProbability(similarity: number, bands: number, rows: number): number {
  return 1 - (1 - similarity ** rows) ** bands;
}

/** The similarity at which `candidateProbability` is 1/2: the S-curve's midpoint. */
export function lshThreshold(bands: number, rows: number): number {
  return (1 - 0.5 ** (1 / bands)) ** (1 / rows);
}
