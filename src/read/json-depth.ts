/*
 * How deep a parsed JSON value may nest where it is written back as text. Its own module, with no
 * imports, so the low-level readers' helpers (json-array.ts, reader.ts) can use it without an
 * import cycle through record-helpers.ts.
 */

/**
 * Where a reader writes a parsed value back as JSON text, deeper values are refused: JSON.parse
 * reads any depth, but JSON.stringify recurses, and some thousands of levels overflow the stack
 * (a RangeError that would end the whole file, not just the record).
 */
export const MAX_JSON_DEPTH = 1000;

/** True when a parsed JSON value nests deeper than MAX_JSON_DEPTH (walked without recursion). */
export function nestsTooDeep(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, depth] = top;
    if (typeof node !== "object" || node === null) continue;
    if (depth >= MAX_JSON_DEPTH) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) if (typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}
