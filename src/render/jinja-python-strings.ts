import { Environment, Interpreter, Template } from "@huggingface/jinja";

/**
 * Python's `str.strip` family for @huggingface/jinja, which the reference (`transformers`,
 * Python Jinja) runs templates with. The JS port strips JS whitespace and ignores the argument:
 * `content.lstrip('\n')` (Qwen3) strips every leading space and tab too, and `| trim` (Llama 3)
 * strips a BOM (U+FEFF, not whitespace to Python) but keeps a NEL (U+0085, whitespace to Python).
 * Patched here, on the port's string values and its `trim` filter, so templates strip what Python
 * strips; chat-template.ts relies on it to see which stripping a template applies to contents.
 * Checked when applied: a version of the port this cannot patch fails loudly, not silently.
 */

/** Characters for which Python's `str.isspace()` is true. */
const PYTHON_WHITESPACE = new Set(
  [
    "\t",
    "\n",
    "\v",
    "\f",
    "\r",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    " ",
    "\x85",
    "\xa0",
    "\u1680",
    "\u2000",
    "\u2001",
    "\u2002",
    "\u2003",
    "\u2004",
    "\u2005",
    "\u2006",
    "\u2007",
    "\u2008",
    "\u2009",
    "\u200a",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
  ].map((char) => char.codePointAt(0) as number),
);

/** Python's `s.strip(chars)` / `lstrip` / `rstrip`; `chars` undefined strips whitespace. */
export function pythonStrip(text: string, chars: string | undefined, left: boolean, right: boolean): string {
  const set = chars === undefined ? PYTHON_WHITESPACE : new Set([...chars].map((char) => char.codePointAt(0) as number));
  let start = 0;
  let end = text.length;
  if (left) {
    while (start < end) {
      const code = text.codePointAt(start) as number;
      if (!set.has(code)) break;
      start += code > 0xffff ? 2 : 1;
    }
  }
  if (right) {
    while (end > start) {
      const low = text.charCodeAt(end - 1);
      const astral = low >= 0xdc00 && low <= 0xdfff && end - 2 >= start;
      const code = text.codePointAt(astral ? end - 2 : end - 1) as number;
      if (!set.has(code)) break;
      end -= code > 0xffff ? 2 : 1;
    }
  }
  return text.slice(start, end);
}

interface RuntimeValueLike {
  value: unknown;
  type?: string;
}
type FunctionValueClass = new (fn: (args: RuntimeValueLike[]) => RuntimeValueLike) => RuntimeValueLike;
type StringValueClass = new (value: string) => RuntimeValueLike;

/** The `chars` argument of a strip call: a string, or none (None / undefined / no argument). */
function charsArgument(args: readonly RuntimeValueLike[]): string | undefined {
  const first = args[0];
  return typeof first?.value === "string" ? first.value : undefined;
}

let patched = false;

export function usePythonStringMethods(): void {
  if (patched) return;
  const env = new Environment();
  env.set("probe", "x");
  const sample = env.lookupVariable("probe") as unknown as RuntimeValueLike;
  const proto = Object.getPrototypeOf(sample) as object;
  const descriptor = Object.getOwnPropertyDescriptor(proto, "builtins");
  const originalBuiltins = descriptor?.get;
  const FunctionValue = (originalBuiltins?.call(sample) as Map<string, RuntimeValueLike> | undefined)?.get("strip")?.constructor as
    | FunctionValueClass
    | undefined;
  const StringValue = sample.constructor as StringValueClass;
  const applyFilter = (Interpreter.prototype as unknown as Record<string, unknown>).applyFilter;
  if (!originalBuiltins || !FunctionValue || typeof applyFilter !== "function")
    throw new Error(
      "@huggingface/jinja: cannot install Python string semantics (string builtins or applyFilter not found in this version)",
    );

  const withPython = new WeakSet<object>();
  Object.defineProperty(proto, "builtins", {
    configurable: true,
    get(this: RuntimeValueLike) {
      const builtins = originalBuiltins.call(this) as Map<string, RuntimeValueLike>;
      if (!withPython.has(builtins)) {
        const text = this.value as string;
        const strip = (left: boolean, right: boolean) =>
          new FunctionValue((args) => new StringValue(pythonStrip(text, charsArgument(args), left, right)));
        builtins.set("strip", strip(true, true));
        builtins.set("lstrip", strip(true, false));
        builtins.set("rstrip", strip(false, true));
        withPython.add(builtins);
      }
      return builtins;
    },
  });

  (Interpreter.prototype as unknown as Record<string, unknown>).applyFilter = function (
    this: unknown,
    operand: RuntimeValueLike,
    filterNode: { type: string; value?: string; callee?: { type: string; value?: string }; args?: unknown[] },
    environment: unknown,
  ) {
    if (operand instanceof StringValue) {
      // `x | trim` and `x | trim(chars)`: Python's str.strip.
      if (filterNode.type === "Identifier" && filterNode.value === "trim")
        return new StringValue(pythonStrip(operand.value as string, undefined, true, true));
      if (filterNode.type === "CallExpression" && filterNode.callee?.type === "Identifier" && filterNode.callee.value === "trim") {
        const evaluate = (this as { evaluateArguments: (args: unknown, env: unknown) => [RuntimeValueLike[], unknown] }).evaluateArguments;
        const [args] = evaluate.call(this, filterNode.args ?? [], environment);
        return new StringValue(pythonStrip(operand.value as string, charsArgument(args), true, true));
      }
    }
    return (applyFilter as (...args: unknown[]) => unknown).call(this, operand, filterNode, environment);
  };
  patched = true;
  const check = new Template("{{ s.lstrip('\\n') }}|{{ s|trim }}|{{ s.rstrip() }}").render({ s: "\n \ufeffx\x85" });
  if (check !== " \ufeffx\x85|\ufeffx|\n \ufeffx")
    throw new Error(`@huggingface/jinja: Python string semantics did not take effect (got ${JSON.stringify(check)})`);
}
