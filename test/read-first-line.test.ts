import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstLine, parseJsonLine, parseSniffedJson } from "../src/read/reader.ts";

/** firstLine as it was written before (split on "\n", first line that is not blank). */
function firstLineBySplit(head: string): string {
  for (const line of head.split("\n")) if (line.trim() !== "") return line;
  return "";
}

describe("the sniffs' first-line helpers", () => {
  it("firstLine finds the line split on \\n finds, on any text (blank lines, \\r, spaces, no newline)", () => {
    const pieces = fc.constantFrom("\n", "\r\n", " ", "\t", "", "{}", "x", '{"a":1}', "\u2028", "\uFEFF");
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 12 }), (parts) => {
        const head = parts.join("");
        expect(firstLine(head)).toBe(firstLineBySplit(head));
      }),
      { numRuns: 2000 },
    );
    expect(firstLine('\n\n  \n{"a":1}\nnext')).toBe('{"a":1}');
    expect(firstLine("   \n \n")).toBe("");
  });

  it("parseSniffedJson gives what parseJsonLine gives, for the same text or another (negative control: a different text is parsed anew)", () => {
    expect(parseSniffedJson('{"a":1}')).toEqual(parseJsonLine('{"a":1}'));
    // The same text again: the kept result.
    const first = parseSniffedJson('{"b":[1,2]}');
    expect(parseSniffedJson('{"b":[1,2]}')).toBe(first);
    // Another text: its own result, never the last one's.
    expect(parseSniffedJson('{"b":[1,3]}')).toEqual({ ok: true, value: { b: [1, 3] } });
    expect(parseSniffedJson("not json")).toEqual(parseJsonLine("not json"));
    expect(parseSniffedJson('{"b":[1,2]}')).not.toBe(first);
  });

  it("parseSniffedJson keeps two texts: a line and its head asked in turn are each parsed once; a third evicts the oldest", () => {
    const head = '{"a":1}\n{"a":2}\n';
    const line = parseSniffedJson('{"a":1}');
    const whole = parseSniffedJson(head);
    expect(whole.ok).toBe(false);
    expect(parseSniffedJson('{"a":1}')).toBe(line);
    expect(parseSniffedJson(head)).toBe(whole);
    // A third text evicts the one asked about least recently: here the line, as the head was asked last.
    parseSniffedJson('{"c":3}');
    expect(parseSniffedJson(head)).toBe(whole);
    const again = parseSniffedJson('{"a":1}');
    expect(again).not.toBe(line);
    expect(again).toEqual(line);
    // Now the line and the head are kept ({"c":3} was asked about before the head's hit): asking for the head
    // moves it ahead, so a new text evicts the line.
    expect(parseSniffedJson(head)).toBe(whole);
    parseSniffedJson('{"d":4}');
    expect(parseSniffedJson(head)).toBe(whole);
    expect(parseSniffedJson('{"a":1}')).not.toBe(again);
  });
});
