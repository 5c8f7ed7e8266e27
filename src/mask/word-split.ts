/**
 * The word splitter behind the turn statistics: ICU word segmentation (Intl.Segmenter), so CJK
 * text splits into dictionary words rather than one run per sentence, and code, JSON and paths
 * split at their punctuation (`cat /usr/lib/x.so` → cat, usr, lib, x.so: ICU keeps a dotted file
 * name and `fooBar_baz` as one word).
 * Words are lower-cased; punctuation and whitespace are not words. Markup tag names (`<output>`,
 * `</returncode>`, `<button …>`) are structure, not words: a format's wrapper around every
 * observation would otherwise make an echoed command look new. Attribute values and text count.
 */
const segmenter = new Intl.Segmenter("und", { granularity: "word" });
const TAG_NAME = /<\/?[A-Za-z][\w.:-]*/g;

export function words(text: string): string[] {
  const out: string[] = [];
  for (const segment of segmenter.segment(text.replace(TAG_NAME, " "))) {
    if (segment.isWordLike) out.push(segment.segment.toLowerCase());
  }
  return out;
}

export function wordSet(text: string): Set<string> {
  return new Set(words(text));
}
