import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalForHashing,
  canonicalTurnParts,
  hashTextOfParts,
  hashWords,
  PLACEHOLDERS,
  partsJoinCleanly,
  trajectoryHashText,
  wordHashes,
} from "../src/curate/canonical-text.ts";
import { hashWord, MinHasher } from "../src/curate/minhash.ts";

/**
 * The signatures stage canonicalizes each action and observation once and derives both the exact
 * hash text and the MinHash words from those parts, and hashes words without making strings.
 * These tests hold the shortcuts equal to the definitions they replace.
 */

const FRAGMENTS = [
  "request_id",
  "trace-id",
  "ts",
  "created_at",
  "pid",
  "port",
  ":",
  "=",
  " ",
  "\n",
  "\t",
  '"',
  "1717171717",
  "1717171717171",
  "10:42:01",
  "10:42",
  "Jun  3",
  "0x7ffd5e8c1a30",
  "3f2a9c1d",
  "/tmp/tmpab12_x9",
  "localhost",
  "8080",
  "0.23s",
  "12ms",
  "abcdef",
  "word",
  "é",
  "😀",
];
const part = fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 3 })), { maxLength: 12 }).map((p) => p.join(""));

describe("canonical parts", () => {
  it("joined, equal the whole canonicalized whenever partsJoinCleanly says so", () => {
    let clean = 0;
    fc.assert(
      fc.property(fc.array(part, { maxLength: 6 }), (parts) => {
        if (!partsJoinCleanly(parts)) return;
        clean++;
        expect(parts.map(canonicalForHashing).join("\n")).toBe(canonicalForHashing(parts.join("\n")));
      }),
      { numRuns: 3000 },
    );
    expect(clean).toBeGreaterThan(500);
  });

  it("are not joined where a keyed value spans the joint (the case the check exists for)", () => {
    const parts = ["curl -I https://x", "x-request-id:", "  abcdef123456 done"];
    expect(partsJoinCleanly(parts)).toBe(false);
    expect(parts.map(canonicalForHashing).join("\n")).not.toBe(canonicalForHashing(parts.join("\n")));
    expect(partsJoinCleanly(["ts", "= 1717171717"])).toBe(false);
    expect(partsJoinCleanly(["ls -la", "total 8"])).toBe(true);
  });

  it("make the exact hash text trajectoryHashText always made", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ action: part, observation: part }), { maxLength: 4 }), (turns) => {
        const old = turns.map((t) => `${canonicalForHashing(t.action)}\u001f${canonicalForHashing(t.observation)}\u001e`).join("");
        expect(hashTextOfParts(canonicalTurnParts(turns))).toBe(old);
        expect(trajectoryHashText(turns)).toBe(old);
      }),
      { numRuns: 500 },
    );
  });
});

describe("wordHashes", () => {
  const placeholder = fc.constantFrom(...PLACEHOLDERS.map((p) => `<${p}>`), "<PID>", "<nope>", "<<pid>", "<time", "<request_id>>");
  const text = fc
    .array(
      fc.oneof(
        placeholder,
        fc.string({ unit: "binary", maxLength: 6 }),
        fc.string({ maxLength: 6 }),
        fc.constantFrom("İstanbul", "ΣΑΣ", "naïve", "ǅ"),
      ),
      {
        maxLength: 20,
      },
    )
    .map((p) => p.join(""));

  it("are the hashes of hashWords's words, for any text (surrogates, marks, placeholders)", () => {
    fc.assert(
      fc.property(text, fc.integer(), (t, seed) => {
        expect(Array.from(wordHashes(t, seed))).toEqual(hashWords(t).map((w) => hashWord(w, seed)));
      }),
      { numRuns: 3000 },
    );
  });

  it("see words hashWords sees (negative control: another seed gives other hashes)", () => {
    const t = "<timestamp> Started pid <pid>: naïve café_2";
    expect(wordHashes(t, 1).length).toBe(hashWords(t).length);
    expect(Array.from(wordHashes(t, 1))).not.toEqual(Array.from(wordHashes(t, 2)));
  });
});

describe("MinHasher signatures", () => {
  it("are the values of before shingles were de-duplicated and words hashed in place (pinned)", () => {
    const hasher = new MinHasher({ ngram: 5, bands: 14, rows: 8, seed: 7 });
    const text =
      "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. Ünïcödé 42 pid 12 at 10:42:01 <hex> Привет мир";
    const words = hashWords(canonicalForHashing(text));
    const signature = hasher.signature(words) as Uint32Array;
    expect(Array.from(signature.slice(0, 8))).toEqual([
      204851487, 130367497, 200015123, 45902421, 84016592, 231779904, 101019709, 224877074,
    ]);
    expect(Array.from(signature).reduce((a, b) => (Math.imul(a, 31) + b) | 0, 0)).toBe(-828369967);
    expect(hasher.signatureOfWordHashes(wordHashes(canonicalForHashing(text), hasher.wordSeed))).toEqual(signature);
    const small = new MinHasher({ ngram: 3, bands: 2, rows: 3, seed: 1 });
    expect(Array.from(small.signature(["a", "b"]) as Uint32Array)).toEqual([
      3944504341, 2935183489, 573916551, 1871965977, 2540428707, 4135328524,
    ]);
    expect(Array.from(small.bandKeys(["a", "b", "c", "a", "b", "c", "a"]) as BigUint64Array).map(String)).toEqual([
      "15280333227838585927",
      "11770819231912968241",
    ]);
  });
});
