import { fmix32, hashWord, mixBlock } from "./minhash.ts";

/** Fixed seeds: n-gram hashes are compared across runs and files, so they never change. */
const LO_WORD_SEED = 0x2545f491;
const HI_WORD_SEED = 0x68e31da4;
const LO_SEED = 0x1b56c4e9;
const HI_SEED = 0x7feb352d;
/**
 * One hash per window of `n` consecutive words (`words.length - n + 1` of them, none when there
 * are fewer than `n` words): a 52-bit integer, exact as a double, the same on every platform and
 * run. Two independent 32-bit murmur3 lanes, 20 bits of one above the 32 of the other.
 */
export function ngramHashes(words: readonly string[], n: number): Float64Array {
  if (!Number.isInteger(n) || n < 1) throw new Error(`ngramHashes: n must be a positive integer, got ${n}`);
  const count = words.length;
  const windows = Math.max(0, count - n + 1);
  const out = new Float64Array(windows);
  if (windows === 0) return out;
  const lo = new Int32Array(count);
  const hi = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const word = words[i] as string;
    lo[i] = hashWord(word, LO_WORD_SEED);
    hi[i] = hashWord(word, HI_WORD_SEED);
  }
  for (let s = 0; s < windows; s++) {
    let a = LO_SEED;
    let b = HI_SEED;
    for (let j = s, end = s + n; j < end; j++) {
      a = mixBlock(a, lo[j] as number);
      b = mixBlock(b, hi[j] as number);
    }
    a = fmix32(a ^ (n * 4));
    b = fmix32(b ^ (n * 4));
    out[s] = (b >>> 12) * 4294967296 + (a >>> 0);
  }
  return out;
}
