import { type Counters, count } from "./normalizer.ts";

/**
 * Canonical formatting of a JSON text (API responses, tool results, JSON-RPC messages).
 *
 * Canonical means: 2-space indentation, `"key": value`, one member per line, `{}` / `[]` for
 * empty containers, strings re-escaped minimally (as JSON.stringify does). It is the same text
 * `JSON.stringify(JSON.parse(text), null, 2)` gives, except that the formatter works on the
 * tokens instead of a parsed value, so:
 *
 * - key order is the ENVIRONMENT's order, always. Sorting keys would make two equal responses
 *   look alike, but a world model must learn the order the server really emits, and JSON.parse
 *   itself moves integer-like keys (`{"b":1,"2":2}`) to the front;
 * - number literals are kept as written (`1.0`, `1e3`, ids beyond 2^53 stay exact);
 * - duplicate keys are kept (a parsed object would drop all but the last).
 *
 * Only a text that is exactly one JSON object or array (surrounding whitespace allowed) is
 * formatted; anything else (plain text, a bare number, trailing garbage) gives `undefined`, so a
 * caller leaves it as it was.
 */

export interface CanonicalJsonOptions {
  /**
   * Rewrites a string value (not a key) before it is re-escaped; `key` is the member name it
   * belongs to, or undefined inside an array. Used by the search normalizer to clean snippets.
   */
  mapString?: (value: string, key: string | undefined) => string;
}

/** Deeper than this is not formatted (keeps the recursive formatter far from the stack limit). */
const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings may not hold raw control characters; this finds them.
const UNSAFE_IN_STRING = /[\\\u0000-\u001f]/;

class NotJson extends Error {}

const INDENTS: string[] = [];
/** Newline plus the indentation of nesting level `depth` (cached: formatting builds many). */
function indent(depth: number): string {
  INDENTS[depth] ??= `\n${"  ".repeat(depth)}`;
  return INDENTS[depth];
}

/** The canonical form of `text`, or undefined when it is not exactly one JSON object/array. */
export function canonicalJson(text: string, options: CanonicalJsonOptions = {}): string | undefined {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  const formatter = new Formatter(text, options);
  try {
    return formatter.document();
  } catch (err) {
    if (err instanceof NotJson) return undefined;
    throw err;
  }
}

class Formatter {
  private readonly text: string;
  private readonly mapString: CanonicalJsonOptions["mapString"];
  private pos = 0;
  private readonly out: string[] = [];

  constructor(text: string, options: CanonicalJsonOptions) {
    this.text = text;
    this.mapString = options.mapString;
  }

  document(): string {
    this.skipWhitespace();
    this.value(0, undefined);
    this.skipWhitespace();
    if (this.pos !== this.text.length) throw new NotJson();
    return this.out.join("");
  }

  private value(depth: number, key: string | undefined): void {
    if (depth > MAX_DEPTH) throw new NotJson();
    const c = this.text[this.pos];
    if (c === "{") this.container(depth, "{", "}", true);
    else if (c === "[") this.container(depth, "[", "]", false);
    else if (c === '"') {
      const start = this.pos;
      const decoded = this.string();
      const mapped = this.mapString ? this.mapString(decoded, key) : decoded;
      this.out.push(mapped === decoded ? this.canonicalLiteral(start, decoded) : JSON.stringify(mapped));
    } else this.scalar();
  }

  /** The canonical form of the string literal that ends at `pos`, began at `start` and decodes to `decoded`. */
  private canonicalLiteral(start: number, decoded: string): string {
    // Fast path: a literal with nothing escaped is already canonical (the common case).
    return this.pos - start === decoded.length + 2 && decoded.isWellFormed() ? this.text.slice(start, this.pos) : JSON.stringify(decoded);
  }

  private container(depth: number, open: string, close: string, isObject: boolean): void {
    this.pos += 1;
    this.skipWhitespace();
    if (this.text[this.pos] === close) {
      this.pos += 1;
      this.out.push(open, close);
      return;
    }
    const inner = indent(depth + 1);
    this.out.push(open);
    for (let first = true; ; first = false) {
      this.out.push(first ? inner : `,${inner}`);
      let key: string | undefined;
      if (isObject) {
        if (this.text[this.pos] !== '"') throw new NotJson();
        const start = this.pos;
        key = this.string();
        this.out.push(this.canonicalLiteral(start, key), ": ");
        this.skipWhitespace();
        this.expect(":");
        this.skipWhitespace();
      }
      this.value(depth + 1, key);
      this.skipWhitespace();
      const next = this.text[this.pos];
      this.pos += 1;
      if (next === close) break;
      if (next !== ",") throw new NotJson();
      this.skipWhitespace();
    }
    this.out.push(indent(depth), close);
  }

  /** A string literal at `pos`, decoded; JSON.parse validates its escapes and control characters. */
  private string(): string {
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      const quote = this.text.indexOf('"', i);
      if (quote === -1) throw new NotJson();
      let backslashes = 0;
      for (let j = quote - 1; j > start && this.text[j] === "\\"; j--) backslashes += 1;
      i = quote + 1;
      if (backslashes % 2 === 0) break;
    }
    this.pos = i;
    const inner = this.text.slice(start + 1, i - 1);
    // Without a backslash or a control character, the literal's content is the value itself.
    if (!UNSAFE_IN_STRING.test(inner)) return inner;
    try {
      return JSON.parse(this.text.slice(start, i)) as string;
    } catch {
      throw new NotJson();
    }
  }

  /** true / false / null / a number, copied as written. */
  private scalar(): void {
    const c = this.text[this.pos];
    const literal = c === "t" ? "true" : c === "f" ? "false" : c === "n" ? "null" : undefined;
    if (literal !== undefined) {
      if (!this.text.startsWith(literal, this.pos)) throw new NotJson();
      this.pos += literal.length;
      this.out.push(literal);
      return;
    }
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (!match || match[0] === "") throw new NotJson();
    this.pos += match[0].length;
    this.out.push(match[0]);
  }

  private expect(char: string): void {
    if (this.text[this.pos] !== char) throw new NotJson();
    this.pos += 1;
  }

  /** Past JSON's four whitespace characters (a loop: a regex exec here allocated a match per call). */
  private skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      pos++;
    }
    this.pos = pos;
  }
}

/**
 * For normalizers: the canonical form when `text` is a JSON object/array, else `text` itself.
 * Counts `json.reformatted` when the text changed. Counters bumped by `mapString` are only kept
 * when the whole text turned out to be JSON.
 */
export function canonicalJsonOrText(
  text: string,
  counters: Counters,
  mapString?: (value: string, key: string | undefined, counters: Counters) => string,
): string {
  const local: Counters = new Map();
  const formatted = canonicalJson(text, mapString ? { mapString: (value, key) => mapString(value, key, local) } : {});
  if (formatted === undefined) return text;
  for (const [key, n] of local) count(counters, key, n);
  if (formatted !== text) count(counters, "json.reformatted");
  return formatted;
}
