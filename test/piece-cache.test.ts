import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";
import { withPieceCache } from "../src/tokenize/piece-cache.ts";
import { TwoGenerationCache } from "../src/tokenize/two-generation-cache.ts";
import { ROOT } from "./helpers.ts";
import { retainedHeapBytes } from "./support/retained-heap.ts";

// The piece cache must never change an id: cached and bare encoders are compared on text chosen
// to stress the split (mixed scripts, digits, contractions, CRLF, runs of spaces, emoji).
const TOKENIZERS = ["qwen3", "tiktoken:o200k_base", "tiktoken:cl100k_base"];
const fragments = [
  "don't",
  "WE'LL",
  " ",
  "  ",
  "\t",
  "\r\n",
  "\n\n",
  "1234567",
  "abc",
  "Ünïcödé",
  "数据管道",
  "😀👍🏽",
  "$ ls -la",
  '{"key": [1, 2]}',
  "<|im_end|>",
  "\u00a0",
  // Where JS's \s and the core's (Unicode White_Space) differ: BOM/ZWNBSP is JS whitespace only,
  // NEL is Unicode whitespace only. Real text has both (a BOM pasted mid-line, EBCDIC-era logs).
  " \ufeff37°",
  "W\ufeff / \ufeff",
  "a\u0085 b",
  " \u0085\u0085x",
  "’s",
  "x̧̌",
];
const stressText = fc
  .array(
    fc.oneof(fc.constantFrom(...fragments), fc.string({ unit: "grapheme", maxLength: 8 }), fc.string({ unit: "binary", maxLength: 6 })),
    {
      maxLength: 40,
    },
  )
  .map((parts) => parts.join(""));

/** The tokenizer with its piece cache and the bare core give the same ids on `texts`; returns both. */
function expectSameIdsAsCore(name: string, texts: fc.Arbitrary<string>, numRuns: number) {
  const cached = loadTokenizer({ name });
  const bare = loadTokenizer({ name }, { pieceCache: false });
  fc.assert(
    fc.property(texts, (raw) => {
      const text = cached.normalize(raw);
      expect(Array.from(cached.encodeOrdinary(text))).toEqual(Array.from(bare.encodeOrdinary(text)));
    }),
    { numRuns, seed: 20261121 },
  );
  return { cached, bare };
}

describe("piece cache", () => {
  for (const name of TOKENIZERS) {
    it(`${name}: cached ids equal the bare core's on generated text`, () => {
      expectSameIdsAsCore(name, stressText, 400);
    });
  }

  // Long pieces, where the core's quadratic BPE and piece-bpe.ts's heap differ most in how they
  // get there: runs of one symbol (progress bars, rules, brackets), of a few symbols, and of
  // spaces and letters mixed in.
  const longPiece = fc
    .tuple(
      fc.array(
        fc.constantFrom("=", "#", "]", "[", "-", "*", ".", "~", "█", "░", "─", "\\", "/", "|", "0", "a", "é", "字", " ", "\t", "😀"),
        {
          minLength: 1,
          maxLength: 4,
        },
      ),
      fc.integer({ min: 200, max: 3000 }),
      fc.integer({ min: 0, max: 2 ** 31 }),
    )
    .map(([alphabet, length, seed]) => {
      let state = seed;
      let text = "";
      while (text.length < length) {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        text += alphabet[state % alphabet.length];
      }
      return text;
    });
  for (const name of TOKENIZERS) {
    it(`${name}: long pieces encoded in JS equal the bare core's ids`, () => {
      const { cached, bare } = expectSameIdsAsCore(name, longPiece, 60);
      for (const run of ["=".repeat(5000), "]".repeat(4097), " ".repeat(3000), "ab".repeat(2000), "─".repeat(1500)])
        expect(Array.from(cached.encodeOrdinary(run))).toEqual(Array.from(bare.encodeOrdinary(run)));
    });
  }

  it("qwen3: cached ids equal the bare core's on every terminal recording (recorded and hand-made), read twice (hits)", () => {
    const cached = loadTokenizer({ name: "qwen3" });
    const bare = loadTokenizer({ name: "qwen3" }, { pieceCache: false });
    const dirs = [join(ROOT, "data/demo/terminal"), join(ROOT, "test/fixtures/handmade/terminal")];
    const texts = dirs.flatMap((dir) =>
      readdirSync(dir)
        .filter((file) => /\.(cast|json|jsonl)$/.test(file))
        .map((file) => cached.normalize(readFileSync(join(dir, file), "utf8"))),
    );
    expect(texts.length).toBeGreaterThan(5);
    for (let pass = 0; pass < 2; pass++)
      for (const text of texts) expect(Array.from(cached.encodeOrdinary(text))).toEqual(Array.from(bare.encodeOrdinary(text)));
  });

  it("falls back to the whole text when the split does not tile it, and when the pattern is not JS", () => {
    const calls: string[] = [];
    const encode = (text: string) => {
      calls.push(text);
      return Uint32Array.from(text, (ch) => ch.codePointAt(0) as number);
    };
    // Only letters match: the space between the words is skipped, so the core gets everything.
    const lettersOnly = withPieceCache(encode, "\\p{L}+");
    expect(Array.from(lettersOnly("ab cd"))).toEqual([97, 98, 32, 99, 100]);
    expect(calls.at(-1)).toBe("ab cd");
    const notJs = withPieceCache(encode, "(?<=a+)b(?");
    expect(notJs).toBe(encode);
  });

  it("repeated pieces are encoded once, frequent ones survive turnovers, and the cache is bounded", () => {
    let coreCalls = 0;
    const encode = (text: string) => {
      coreCalls++;
      return Uint32Array.of(text.length);
    };
    const cached = withPieceCache(encode, "\\S+|\\s+", { maxEntries: 2 });
    expect(Array.from(cached("a a a"))).toEqual([1, 1, 1, 1, 1]);
    expect(coreCalls).toBe(2); // "a" and " "
    cached("b c d e");
    cached("a");
    // Generations of two entries: each new letter of "b c d e" misses and turns the young
    // generation over, but " " is used between them, so it is found in the old one and moved
    // back each time (4 misses, not 7); "a", unused for two turnovers, has aged out and misses.
    expect(coreCalls).toBe(2 + 4 + 1);
  });

  it("cached keys do not keep the texts they were cut from alive", () => {
    // V8 cuts substrings of 13+ characters as views into their text: a key kept that way would
    // pin the whole text (a rendered chunk) for as long as the cache lives.
    const encode = withPieceCache((text) => Uint32Array.of(text.length), "\\p{L}+|\\s+|[^\\s\\p{L}]+");
    const filler = " 1".repeat(50_000); // 100 KB of pieces " " and "1", cached once
    const letters = "abcdefghij";
    const word = (i: number) => `longword${letters[i % 10]}${letters[Math.floor(i / 10) % 10]}${letters[Math.floor(i / 100) % 10]}xyz`;
    // 400 texts of ~100 KB, each with a new 16-letter piece: 40 MB if each key pinned its text.
    const retained = retainedHeapBytes(() => {
      for (let i = 0; i < 400; i++) encode(`${word(i)}${filler}${i}`);
    });
    expect(retained).toBeLessThan(8e6);
  });
});

describe("the two-generation cache", () => {
  it("holds at most two generations, keeps what is used and drops what is not", () => {
    const cache = new TwoGenerationCache<number>(3);
    for (let i = 0; i < 100; i++) {
      cache.set(`rare-${i}`, i);
      // A key read once per generation is never lost.
      if (cache.get("hot") === undefined) cache.set("hot", -1);
      expect(cache.size).toBeLessThanOrEqual(6);
    }
    expect(cache.get("hot")).toBe(-1);
    expect(cache.get("rare-0")).toBeUndefined();
    expect(cache.get("rare-99")).toBe(99);
  });
});
