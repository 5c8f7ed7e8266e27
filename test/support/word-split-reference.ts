import { expect } from "vitest";
import { words, wordsIcu } from "../../src/mask/word-split.ts";

/**
 * The fast path must return exactly what ICU returns: compares whole arrays (by hand first:
 * a fixture gives arrays of 700,000 words, too many for a readable diff).
 */
export function expectSameWordsAsIcu(text: string): void {
  const fast = words(text);
  const icu = wordsIcu(text);
  if (fast.length !== icu.length || fast.some((word, i) => word !== icu[i])) {
    expect(fast, JSON.stringify(text.slice(0, 2000))).toEqual(icu);
  }
}

/** Every string in a parsed JSON value, keys included; iterative, as some fixtures nest 16,000 deep. */
function jsonStrings(value: unknown): string[] {
  const out: string[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") out.push(item);
    else if (Array.isArray(item)) stack.push(...item);
    else if (item !== null && typeof item === "object") {
      for (const [key, child] of Object.entries(item)) stack.push(key, child);
    }
  }
  return out;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What the fixture checks split: the whole text, each line, and every JSON string in it. */
export function wordSplitCases(text: string): string[] {
  const lines = text.split("\n");
  const parsed = tryParse(text);
  const values = parsed === undefined ? lines.flatMap((line) => jsonStrings(tryParse(line))) : jsonStrings(parsed);
  return [text, ...lines, ...values];
}
