import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PairBuffer, pairsFromBytes, sortPairs } from "../src/curate/pairs.ts";

const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });

describe("curation pairs", () => {
  it("sortPairs orders by hash then key, as a comparator sort does, whatever the input order and duplicates", () => {
    // Hashes from a small pool (many twins) or the whole 64-bit range; high and low halves both vary.
    const hash = fc.oneof(fc.constantFrom(0n, 1n, 1n << 32n, (1n << 64n) - 1n, 0xdeadbeef_00000001n), u64);
    fc.assert(
      fc.property(fc.array(fc.tuple(hash, u64), { maxLength: 300 }), (list) => {
        const buffer = new PairBuffer();
        for (const [h, k] of list) buffer.push(h, k);
        const sorted = sortPairs(buffer.view());
        const expected = [...list].sort(([ha, ka], [hb, kb]) => (ha !== hb ? (ha < hb ? -1 : 1) : ka < kb ? -1 : ka > kb ? 1 : 0));
        expect(Array.from(sorted)).toEqual(expected.flat());
      }),
    );
  });

  it("pairs survive the trip through bytes, from any offset", () => {
    const buffer = new PairBuffer();
    for (let i = 0; i < 3000; i++) buffer.push((BigInt(i) * 0x9e3779b97f4a7c15n) % (1n << 64n), BigInt(i));
    const view = buffer.view();
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    // A slice that does not start on an 8-byte boundary of its buffer (as a file read may give).
    const shifted = new Uint8Array(bytes.length + 3);
    shifted.set(bytes, 3);
    expect(Array.from(pairsFromBytes(shifted.subarray(3)))).toEqual(Array.from(view));
  });
});
