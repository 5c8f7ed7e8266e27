/**
 * The word splitter behind the turn statistics: ICU word segmentation (Intl.Segmenter), so CJK
 * text splits into dictionary words rather than one run per sentence, and code, JSON and paths
 * split at their punctuation (`cat /usr/lib/x.so` → cat, usr, lib, x.so: ICU keeps a dotted file
 * name and `fooBar_baz` as one word).
 * Words are lower-cased; punctuation and whitespace are not words. Markup tag names (`<output>`,
 * `</returncode>`, `<button …>`) are structure, not words: a format's wrapper around every
 * observation would otherwise make an echoed command look new. Attribute values and text count.
 *
 * Fast path: ICU builds one object per segment, and most text is ASCII. Lines that are pure
 * ASCII go through a char-code loop that applies the UAX #29 word rules ICU uses for ASCII; a
 * line with any other character goes to ICU. Lines can be split apart because UAX #29 always
 * breaks before and after LF (WB3a/WB3b). The result is the same array as `wordsIcu`, which
 * test/word-split.test.ts checks exhaustively on short strings, on random ones and on the fixtures.
 */
const segmenter = new Intl.Segmenter("und", { granularity: "word" });
const TAG_NAME = /<\/?[A-Za-z][\w.:-]*/g;

function icuWords(text: string, out: string[]): void {
  for (const segment of segmenter.segment(text.replace(TAG_NAME, " "))) {
    if (segment.isWordLike) out.push(segment.segment.toLowerCase());
  }
}

/** The reference: ICU over the whole text. `words` returns the same array, faster. */
export function wordsIcu(text: string): string[] {
  const out: string[] = [];
  icuWords(text, out);
  return out;
}

// UAX #29 Word_Break values of the ASCII characters, as this Node's ICU applies them (the tests
// check every 2-character ASCII string against it).
// Everything not listed (space, tab, CR, controls, other punctuation) only ever breaks; the
// joins they have (CR LF, space space) never make a word.
const OTHER = 0;
const LETTER = 1; // ALetter
const DIGIT = 2; // Numeric
const UNDERSCORE = 3; // ExtendNumLet: joins anything word-like; "_" alone is not a word, "__" is
const MID_LETTER = 4; // ':' joins two letters only (a:b), not two digits
const MID_NUM_LET = 5; // '.' and "'" join two letters or two digits (x.so, it's, 1.5)
const MID_NUM = 6; // ',' and ';' join two digits only (1,000)
const NON_ASCII = 7;
const LINE_FEED = 8;

const CLASS = new Uint8Array(0x10000).fill(NON_ASCII);
for (let c = 0; c < 0x80; c++) CLASS[c] = OTHER;
for (let c = 0x41; c <= 0x5a; c++) CLASS[c] = CLASS[c + 0x20] = LETTER;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = DIGIT;
CLASS[0x5f] = UNDERSCORE;
CLASS[0x3a] = MID_LETTER;
CLASS[0x2e] = CLASS[0x27] = MID_NUM_LET;
CLASS[0x2c] = CLASS[0x3b] = MID_NUM;
CLASS[0x0a] = LINE_FEED;

/** ASCII lines closer than this to a non-ASCII line join its ICU call, which costs ~1 µs a call. */
const ICU_JOIN_GAP = 256;

export function words(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  let lineStart = 0;
  let lineWords = 0; // out.length at lineStart: an ICU line takes back what the loop pushed
  while (i < n) {
    const c0 = text.charCodeAt(i);
    const k0 = CLASS[c0];
    if (k0 === LETTER || k0 === DIGIT || k0 === UNDERSCORE) {
      const start = i;
      let prev = k0;
      let wordLike = k0 !== UNDERSCORE;
      let upper = c0 <= 0x5a && c0 >= 0x41;
      i++;
      while (i < n) {
        const c = text.charCodeAt(i);
        const k = CLASS[c] as number; // c < 0x10000: always in the table
        if (k === LETTER) {
          wordLike = true;
          if (c <= 0x5a) upper = true;
        } else if (k === DIGIT) {
          wordLike = true;
        } else if (k !== UNDERSCORE) {
          // One middle character joins two letters or two digits, never a letter and a digit
          // (WB6/7, WB11/12).
          if (k < MID_LETTER || k > MID_NUM || i + 1 >= n) break;
          const c2 = text.charCodeAt(i + 1);
          const next = CLASS[c2];
          if (next !== prev || (next === LETTER ? k === MID_NUM : next !== DIGIT || k === MID_LETTER)) break;
          if (c2 <= 0x5a && c2 >= 0x41) upper = true;
          i += 2;
          continue;
        }
        prev = k;
        i++;
      }
      if (wordLike || i - start > 1) out.push(upper ? text.slice(start, i).toLowerCase() : text.slice(start, i));
    } else if (k0 === LINE_FEED) {
      i++;
      lineStart = i;
      lineWords = out.length;
    } else if (k0 === NON_ASCII) {
      // ICU from the start of this line to the end of the last non-ASCII line within reach.
      let end = lineEnd(text, i);
      for (let j = end + 1; j < n && j <= end + ICU_JOIN_GAP; j++) {
        if (text.charCodeAt(j) > 0x7f) end = j = lineEnd(text, j);
      }
      out.length = lineWords;
      icuWords(text.slice(lineStart, end), out);
      i = end;
    } else {
      i++;
      // '<' (or '</') and a letter start a tag name: skip the name, a break like the space
      // wordsIcu puts there (the same match as TAG_NAME).
      if (c0 === 0x3c && i < n) {
        let j = text.charCodeAt(i) === 0x2f ? i + 1 : i;
        if (j < n && CLASS[text.charCodeAt(j)] === LETTER) {
          for (j++; j < n; j++) {
            const c = text.charCodeAt(j);
            const k = CLASS[c];
            if (k !== LETTER && k !== DIGIT && k !== UNDERSCORE && c !== 0x2e && c !== 0x3a && c !== 0x2d) break;
          }
          i = j;
        }
      }
    }
  }
  return out;
}

/** The index of the LF that ends the line holding `from`, or the text's length. */
function lineEnd(text: string, from: number): number {
  const end = text.indexOf("\n", from);
  return end < 0 ? text.length : end;
}
