/**
 * Code points that V8 (Node 24's Unicode tables) counts as letters, numbers or spaces but that
 * were unassigned in Unicode 14.0. The tiktoken core and Hugging Face `tokenizers` split with
 * older tables, so around these characters a V8 split gives other pre-tokenizer pieces, and the
 * piece cache other ids, than the trainer's tokenizer. Text holding one goes to the core whole;
 * being over-inclusive only costs speed.
 *
 * Generated from every code point with `unicodedata.category(c) == "Cn"` in Python 3.11
 * (Unicode 14.0.0) that matches `/[\p{L}\p{N}\s]/u` in Node 24: 14049 code points in 65 ranges.
 */
const RANGES = [
  "\\u{88F}\\u{C5C}\\u{CDC}\\u{1C89}-\\u{1C8A}\\u{A7CB}-\\u{A7CF}\\u{A7D2}\\u{A7D4}\\u{A7DA}-\\u{A7DC}\\u{A7F1}",
  "\\u{105C0}-\\u{105F3}\\u{10940}-\\u{10959}\\u{10D40}-\\u{10D65}\\u{10D6F}-\\u{10D85}\\u{10EC2}-\\u{10EC7}",
  "\\u{1123F}-\\u{11240}\\u{11380}-\\u{11389}\\u{1138B}\\u{1138E}\\u{11390}-\\u{113B5}\\u{113B7}\\u{113D1}",
  "\\u{113D3}\\u{116D0}-\\u{116E3}\\u{11BC0}-\\u{11BE0}\\u{11BF0}-\\u{11BF9}\\u{11DB0}-\\u{11DDB}",
  "\\u{11DE0}-\\u{11DE9}\\u{11F02}\\u{11F04}-\\u{11F10}\\u{11F12}-\\u{11F33}\\u{11F50}-\\u{11F59}\\u{1342F}",
  "\\u{13441}-\\u{13446}\\u{13460}-\\u{143FA}\\u{16100}-\\u{1611D}\\u{16130}-\\u{16139}\\u{16D40}-\\u{16D6C}",
  "\\u{16D70}-\\u{16D79}\\u{16EA0}-\\u{16EB8}\\u{16EBB}-\\u{16ED3}\\u{16FF2}-\\u{16FF6}\\u{187F8}-\\u{187FF}",
  "\\u{18CFF}\\u{18D09}-\\u{18D1E}\\u{18D80}-\\u{18DF2}\\u{1B132}\\u{1B155}\\u{1CCF0}-\\u{1CCF9}",
  "\\u{1D2C0}-\\u{1D2D3}\\u{1DF25}-\\u{1DF2A}\\u{1E030}-\\u{1E06D}\\u{1E4D0}-\\u{1E4EB}\\u{1E4F0}-\\u{1E4F9}",
  "\\u{1E5D0}-\\u{1E5ED}\\u{1E5F0}-\\u{1E5FA}\\u{1E6C0}-\\u{1E6DE}\\u{1E6E0}-\\u{1E6E2}\\u{1E6E4}-\\u{1E6E5}",
  "\\u{1E6E7}-\\u{1E6ED}\\u{1E6F0}-\\u{1E6F4}\\u{1E6FE}-\\u{1E6FF}\\u{2B739}-\\u{2B73F}\\u{2CEA2}-\\u{2CEAD}",
  "\\u{2EBF0}-\\u{2EE5D}\\u{31350}-\\u{33479}",
].join("");

export const NEWER_THAN_UNICODE_14 = new RegExp(`[${RANGES}]`, "u");
