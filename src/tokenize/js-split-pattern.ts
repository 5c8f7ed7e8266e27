/**
 * A pre-tokenizer pattern (written for the Rust regex engines of `tokenizers` and tiktoken) as a
 * JS regex source that splits text the same way.
 *
 * The one class that reads differently is `\s`: in Rust it is Unicode's White_Space property, in
 * JS it is JS's own whitespace set. JS's includes U+FEFF (BOM / zero-width no-break space) and
 * leaves out U+0085 (NEL); Unicode's does the opposite. " \uFEFF" is one piece for the core and
 * two for an unmodified JS split, so the ids differed (found on a real page with BOMs mid-line).
 * `\s` and `\S` are rewritten to Unicode's set, inside character classes too.
 */

/** Unicode White_Space (PropList.txt): what `\s` means to the Rust regex engines. */
const WHITE_SPACE = "\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

export function jsSplitPattern(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string;
    if (char === "\\" && i + 1 < pattern.length) {
      const next = pattern[i + 1] as string;
      i += 1;
      if (next === "s") out += inClass ? WHITE_SPACE : `[${WHITE_SPACE}]`;
      else if (next === "S") {
        // Inside a class a negated set cannot be spliced in; such patterns keep JS's reading
        // (the piece cache then falls back to the core wherever the split does not tile).
        out += inClass ? "\\S" : `[^${WHITE_SPACE}]`;
      } else out += `\\${next}`;
      continue;
    }
    if (char === "[" && !inClass) inClass = true;
    else if (char === "]" && inClass) inClass = false;
    out += char;
  }
  return out;
}
