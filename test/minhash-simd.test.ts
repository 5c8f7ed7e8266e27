import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileWat, WASM_SOURCES } from "../scripts/build-wasm.ts";
import { MinHasher } from "../src/curate/minhash.ts";
import { SimdMinima } from "../src/curate/minhash-simd.ts";
import { ROOT } from "./helpers.ts";

// The MinHash minima in WebAssembly SIMD (src/curate/minhash-simd.wat) against the JavaScript loop
// they replace, which MinHasher keeps as its fallback (`withoutSimd`).

const settingsArb = fc.record({
  ngram: fc.integer({ min: 1, max: 6 }),
  // Signatures of 1 to 160 values: none, some or all of them in whole groups of four.
  bands: fc.integer({ min: 1, max: 20 }),
  rows: fc.integer({ min: 1, max: 8 }),
  seed: fc.integer(),
});
const wordsArb = fc.oneof(
  fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: 1, maxLength: 300 }),
  // Few distinct words: repeated shingles, and extreme hash values.
  fc.array(fc.constantFrom(0, -1, 1, 2 ** 31 - 1, -(2 ** 31)), { minLength: 1, maxLength: 40 }),
);

describe("MinHash minima in WebAssembly SIMD", () => {
  it("the committed .wasm is its .wat compiled (node scripts/build-wasm.ts)", async () => {
    for (const { wat, wasm } of WASM_SOURCES)
      expect(Buffer.from(await compileWat(join(ROOT, wat))).equals(readFileSync(join(ROOT, wasm)))).toBe(true);
  });

  it("is what this engine runs (Node 24 has WebAssembly SIMD)", () => {
    expect(SimdMinima.of(new Int32Array(8))).toBeDefined();
  });

  it("gives the JavaScript loop's signatures, for any settings and words", () => {
    fc.assert(
      fc.property(settingsArb, wordsArb, (settings, words) => {
        const hashes = Int32Array.from(words);
        const simd = new MinHasher(settings).signatureOfWordHashes(hashes);
        const js = new MinHasher({ ...settings, withoutSimd: true }).signatureOfWordHashes(hashes);
        expect(simd).toEqual(js);
      }),
      { numRuns: 400 },
    );
  });

  it("gives them for a trajectory-sized input (the kernel's memory grows)", () => {
    const words = new Int32Array(200_000);
    for (let i = 0; i < words.length; i++) words[i] = Math.imul(i + 1, 0x9e3779b1);
    const settings = { ngram: 5, bands: 14, rows: 8, seed: 3 };
    const hasher = new MinHasher(settings);
    const js = new MinHasher({ ...settings, withoutSimd: true });
    expect(hasher.signatureOfWordHashes(words)).toEqual(js.signatureOfWordHashes(words));
    // And a short one after it, from the same (grown) memory.
    expect(hasher.signatureOfWordHashes(words.subarray(0, 7))).toEqual(js.signatureOfWordHashes(words.subarray(0, 7)));
  });

  it("negative control: a kernel with one constant changed gives other minima", async () => {
    const source = join(ROOT, WASM_SOURCES[0].wat);
    const text = readFileSync(source, "utf8");
    expect(text).toContain("0xc2b2ae35");
    const planted = join(mkdtempSync(join(tmpdir(), "lwm-simd-")), "planted.wat");
    writeFileSync(planted, text.replaceAll("0xc2b2ae35", "0xc2b2ae37"));
    const salts = Int32Array.from({ length: 16 }, (_, i) => Math.imul(i + 1, 0x27d4eb2d));
    const shingles = Int32Array.from({ length: 50 }, (_, i) => Math.imul(i + 7, 0x165667b1));
    const good = new Uint32Array(16);
    const bad = new Uint32Array(16);
    (SimdMinima.of(salts) as SimdMinima).minima(shingles, good);
    (SimdMinima.of(salts, await compileWat(planted)) as SimdMinima).minima(shingles, bad);
    expect(Array.from(bad)).not.toEqual(Array.from(good));
  });
});
