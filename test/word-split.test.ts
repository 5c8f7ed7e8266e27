import { join, relative } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { words } from "../src/mask/word-split.ts";
import { ROOT } from "./helpers.ts";
import { filesUnder, readSampleText } from "./support/sample-files.ts";
import { expectSameWordsAsIcu, wordSplitCases } from "./support/word-split-reference.ts";

const same = expectSameWordsAsIcu;

// The characters UAX #29 treats specially in ASCII, the ones tag names use, and plain breaks.
const TRICKY = [..."aZm09_.':,;-/\\\"@#$%&*()[]{}<>=+~^|? \t\r\n\x0b\x0c\x7f"];
for (let c = 0; c < 0x20; c++) TRICKY.push(String.fromCharCode(c));
// Non-ASCII with their own word rules: letters (é, Hebrew, katakana, CJK, Thai), combining
// marks and ZWJ (WB4), ’ (MidNumLet), fullwidth colon, NBSP, NEL and U+2028 (Newline), soft
// hyphen (Format), emoji and regional indicators (WB3c, WB15/16).
const NON_ASCII = [..."éÉאגד״カタ我们北京ภาษาไทย’：\u00a0\u0085\u2028\u00ad\u0301\u200d👍🏽❤🇫🇷"];

const trickyString = (maxLength: number) => fc.string({ unit: fc.constantFrom(...TRICKY), maxLength });
const mixedString = (maxLength: number) =>
  fc.string({ unit: fc.oneof({ arbitrary: fc.constantFrom(...TRICKY), weight: 4 }, fc.constantFrom(...NON_ASCII)), maxLength });

describe("words: the ASCII fast path", () => {
  it("follows ICU's rules for ASCII", () => {
    // '.', "'" and ':' join letters; ':' does not join digits, ',' and ';' do not join letters.
    expect(words("a.b a:b it's x.so Foo.BAR")).toEqual(["a.b", "a:b", "it's", "x.so", "foo.bar"]);
    expect(words("1.5 1,000 1;2 1'2 1:2 a,b a;b")).toEqual(["1.5", "1,000", "1;2", "1'2", "1", "2", "a", "b", "a", "b"]);
    // A middle character needs the same kind on both sides, and only one of it.
    expect(words("a.1 1.a a..b a.'b a1.2 a1.b")).toEqual(["a", "1", "1", "a", "a", "b", "a", "b", "a1.2", "a1", "b"]);
    // '_' joins anything word-like; a lone '_' is not a word, but "__" is.
    expect(words("_ __ _a a_ _1 a_1 a._b _._")).toEqual(["__", "_a", "a_", "_1", "a_1", "a", "_b"]);
    expect(words("a1b 1a a-b a/b a\tb a\x00b a\x7fb")).toEqual(["a1b", "1a", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b"]);
    expect(words("<a.b:c-d>x</a.b:c-d> <1 </ a <_x> </9>")).toEqual(["x", "1", "a", "_x", "9"]);
  });

  it("matches ICU on every string of up to 3 characters over 25 tricky ones", () => {
    const alphabet = [..."aB1_.':,;-/<> \t\r\n\x00\x1f\x7f\"@(=\x0b"];
    expect(alphabet).toHaveLength(25);
    let n = 0;
    for (const x of alphabet) {
      same(x);
      for (const y of alphabet) {
        same(x + y);
        for (const z of alphabet) {
          same(x + y + z);
          n += 1;
        }
      }
    }
    expect(n).toBe(15_625);
  });

  it("matches ICU on every 2-character ASCII string", () => {
    for (let x = 0; x < 0x80; x++) for (let y = 0; y < 0x80; y++) same(String.fromCharCode(x, y));
  });

  it("matches ICU on random tricky-ASCII strings", () => {
    fc.assert(fc.property(trickyString(40), same), { numRuns: 5000 });
    fc.assert(fc.property(trickyString(400), same), { numRuns: 500 });
  });

  it("matches ICU on random markup", () => {
    const markup = fc.string({ unit: fc.constantFrom(..."<</>aZ1_.:-'\" =\né"), maxLength: 30 });
    fc.assert(fc.property(markup, same), { numRuns: 3000 });
  });

  it("matches ICU on random ASCII strings", () => {
    fc.assert(fc.property(fc.string({ unit: "binary-ascii", maxLength: 60 }), same), { numRuns: 3000 });
  });
});

describe("words: non-ASCII lines go to ICU", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("matches ICU on random strings with non-ASCII characters", () => {
    fc.assert(fc.property(mixedString(40), same), { numRuns: 3000 });
  });

  it("matches ICU on lines of both kinds, near and far apart", () => {
    // Long ASCII lines between non-ASCII ones cross the distance at which ICU calls are joined.
    const line = fc.oneof(trickyString(30), mixedString(30), trickyString(600));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), (lines) => same(lines.join("\n"))),
      { numRuns: 1000 },
    );
  });

  it("calls ICU only for text with non-ASCII characters", () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, "segment");
    expect(words("<output>\nFoo bar_baz 1,000\n</output>")).toEqual(["foo", "bar_baz", "1,000"]);
    expect(segment).not.toHaveBeenCalled();
    expect(words("cat x.so\ncafé Ünïcode\nls -la")).toEqual(["cat", "x.so", "café", "ünïcode", "ls", "la"]);
    expect(segment).toHaveBeenCalledTimes(1);
  });
});

describe("words: the repository's fixtures and recorded demo data", () => {
  const fixtures = filesUnder(join(ROOT, "test/fixtures"), (name) => /\.json/.test(name));
  const demo = filesUnder(join(ROOT, "data/demo"), (name) => name !== "PROVENANCE.md");

  // The 156 MB deep-axtree crasher (78 million words) would take ICU alone 15 s: texts this
  // long are left out.
  const MAX_CHARS = 20_000_000;
  const check = (text: string) => (text.length <= MAX_CHARS ? same(text) : undefined);

  it.each([...fixtures, ...demo].map((path) => relative(ROOT, path)))("matches ICU on %s", (path) => {
    for (const text of wordSplitCases(readSampleText(join(ROOT, path)))) check(text);
  });
});
