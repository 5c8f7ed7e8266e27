/**
 * A Python literal as `str()` / `repr()` writes a dict or a list (LangChain traces a tool's input as
 * `str(tool_input)`: `{'city': 'Oslo', 'days': 3, 'metric': True}`), read as the JSON value it
 * stands for: dicts, lists, tuples, strings in either quote, ints, floats, True / False / None.
 * Anything else (a set, a `datetime.date(…)`, a truncated text) is not a literal: undefined.
 */

const MAX_DEPTH = 200;

class NotLiteral extends Error {}

export function pythonLiteral(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{(]/.test(trimmed)) return undefined;
  const parser = new LiteralParser(trimmed);
  try {
    const value = parser.value(0);
    parser.skipSpace();
    return parser.atEnd() ? value : undefined;
  } catch (err) {
    if (err instanceof NotLiteral) return undefined;
    throw err;
  }
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "0": "\0",
  a: "\u0007",
  b: "\b",
  f: "\f",
  v: "\v",
};

class LiteralParser {
  private at = 0;
  private readonly text: string;
  constructor(text: string) {
    this.text = text;
  }

  atEnd(): boolean {
    return this.at >= this.text.length;
  }

  skipSpace(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at] as string)) this.at += 1;
  }

  private fail(): never {
    throw new NotLiteral();
  }

  private take(char: string): boolean {
    this.skipSpace();
    if (this.text[this.at] !== char) return false;
    this.at += 1;
    return true;
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail();
    this.skipSpace();
    const char = this.text[this.at];
    if (char === "{") return this.dict(depth);
    if (char === "[") return this.sequence("]", depth);
    if (char === "(") return this.sequence(")", depth);
    if (char === "'" || char === '"') return this.string(char);
    const word = /^(True|False|None|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(this.text.slice(this.at, this.at + 400));
    if (!word) this.fail();
    const token = word[1] as string;
    // A name that only starts like a keyword (`Nonesuch`) is not one.
    if (/[A-Za-z0-9_]/.test(this.text[this.at + token.length] ?? "")) this.fail();
    this.at += token.length;
    if (token === "True") return true;
    if (token === "False") return false;
    if (token === "None") return null;
    const number = Number(token);
    if (!Number.isFinite(number)) this.fail();
    return number;
  }

  private dict(depth: number): Record<string, unknown> {
    this.at += 1;
    const out: Record<string, unknown> = {};
    if (this.take("}")) return out;
    for (;;) {
      const key = this.value(depth + 1);
      if (typeof key !== "string" && typeof key !== "number") this.fail();
      if (!this.take(":")) this.fail();
      out[String(key)] = this.value(depth + 1);
      if (this.take("}")) return out;
      if (!this.take(",")) this.fail();
      if (this.take("}")) return out;
    }
  }

  private sequence(close: string, depth: number): unknown[] {
    this.at += 1;
    const out: unknown[] = [];
    if (this.take(close)) return out;
    for (;;) {
      out.push(this.value(depth + 1));
      if (this.take(close)) return out;
      if (!this.take(",")) this.fail();
      if (this.take(close)) return out;
    }
  }

  private string(quote: string): string {
    this.at += 1;
    let out = "";
    while (this.at < this.text.length) {
      const char = this.text[this.at] as string;
      if (char === quote) {
        this.at += 1;
        return out;
      }
      if (char === "\n") this.fail();
      if (char !== "\\") {
        out += char;
        this.at += 1;
        continue;
      }
      const next = this.text[this.at + 1];
      if (next === undefined) this.fail();
      const hex = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
      if (hex > 0) {
        const digits = this.text.slice(this.at + 2, this.at + 2 + hex);
        if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) this.fail();
        const code = Number.parseInt(digits, 16);
        if (code > 0x10ffff) this.fail();
        out += String.fromCodePoint(code);
        this.at += 2 + hex;
        continue;
      }
      out += ESCAPES[next] ?? `\\${next}`;
      this.at += 2;
    }
    return this.fail();
  }
}
