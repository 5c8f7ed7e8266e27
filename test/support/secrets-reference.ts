import { expect } from "vitest";
import { type FoundSecret, redactSecrets, redactSecretsUnfiltered } from "../../src/normalize/secrets.ts";

/**
 * redactSecrets skips rules by their `holds` strings and `need` regexes and searches the two
 * assignment rules only from their separators (speed only); redactSecretsUnfiltered runs every
 * rule's own regex over the whole text. Both must give the same text, counters and found secrets.
 */
interface Outcome {
  text: string;
  counters: [string, number][];
  found: FoundSecret[];
}

function outcome(redact: typeof redactSecrets, text: string): Outcome {
  const counters = new Map<string, number>();
  const found: FoundSecret[] = [];
  const result = redact(text, counters, found);
  return { text: result, counters: [...counters], found };
}

/** Compares both ways of redacting `text`; returns the types the reference found. */
export function expectSameRedaction(text: string): string[] {
  const reference = outcome(redactSecretsUnfiltered, text);
  const fast = outcome(redactSecrets, text);
  if (fast.text !== reference.text || JSON.stringify(fast.counters) !== JSON.stringify(reference.counters))
    expect({ input: text, ...fast }).toEqual({ input: text, ...reference });
  expect(fast.found).toEqual(reference.found);
  return reference.found.map((f) => f.type);
}

/**
 * A file's text, whole and line by line (with `\n`, `\r\n` and escaped `\n` in JSON strings), each
 * distinct text once: comparing the same text twice checks nothing more (a file with no newline is
 * its own only line, and the 150 MB fuzz crasher would otherwise be compared whole twice).
 */
export function textsOf(content: string): string[] {
  return [...new Set([content, ...content.split("\n"), ...content.split("\\n")])];
}
