/**
 * The one rule for a one-session line log whose last line was cut mid-write (src/read/cut-last-line.ts),
 * on its own; each reader that applies it has its own tests (codex-rollout, gemini-cli, osworld,
 * tmux-log, mcp-jsonrpc, mcp-server-log).
 */
import { describe, expect, it } from "vitest";
import { type CutNote, isCutJson, truncatedLineMeta, withoutCutLastLine, withoutCutLastLineOfText } from "../src/read/cut-last-line.ts";

async function filter(lines: string[]): Promise<{ passed: string[]; note: CutNote }> {
  async function* items() {
    yield* lines;
  }
  const note: CutNote = {};
  const passed: string[] = [];
  const at = (text: string) => (isCutJson(text) ? { line: lines.indexOf(text) + 1, bytes: Buffer.byteLength(text) } : undefined);
  for await (const line of withoutCutLastLine(items(), at, note, (text) => text.trim() === "")) passed.push(line);
  return { passed, note };
}

describe("cut-last-line", () => {
  it("a cut write is a JSON object or array that never closes; a line that closes is not cut, even when it is not JSON", () => {
    for (const cut of ['{"a": 1', '{"a": "x}', '{"a": "x\\', '\uFEFF  [1, {"b": [2]', "{", '{"a": {"b": 1}'])
      expect(isCutJson(cut), cut).toBe(true);
    for (const whole of ['{"a": 1}', '{"a": 1,}', '{"a": 1}}', '{"a": "}"}', "Killed", "", "   ", '"{"', "12"])
      expect(isCutJson(whole), whole).toBe(false);
  });

  it("leaves out a cut last line after another line, and notes its number and bytes (blank lines after it too)", async () => {
    expect(await filter(['{"a": 1}', "", '{"b": 2}', '{"c": "é'])).toEqual({
      passed: ['{"a": 1}', "", '{"b": 2}'],
      note: { truncated: { line: 4, bytes: 9 } },
    });
    const withBlanks = await filter(['{"a": 1}', '{"c": 3', "", " "]);
    expect(withBlanks.passed).toEqual(['{"a": 1}', "", " "]);
    expect(withBlanks.note.truncated).toEqual({ line: 2, bytes: 7 });
    expect(truncatedLineMeta(withBlanks.note)).toEqual({ truncated_line: { line: 2, bytes: 7 } });
    expect(truncatedLineMeta({})).toEqual({});
  });

  it("passes on, in order, a cut line with a line after it, a file's only line, and a last line that is whole", async () => {
    expect(await filter(['{"a": 1}', '{"b": 2', "", '{"c": 3}'])).toEqual({ passed: ['{"a": 1}', '{"b": 2', "", '{"c": 3}'], note: {} });
    expect(await filter(["", '{"b": 2'])).toEqual({ passed: ["", '{"b": 2'], note: {} });
    expect(await filter(['{"a": 1}', '{"b": 2,}'])).toEqual({ passed: ['{"a": 1}', '{"b": 2,}'], note: {} });
    expect(await filter([])).toEqual({ passed: [], note: {} });
  });

  it("the same rule on a whole text", () => {
    expect(withoutCutLastLineOfText('{"a": 1}\r\n\n{"b": 2}\r\n{"c": 3\r\n\n')).toEqual({
      text: '{"a": 1}\r\n\n{"b": 2}\r\n',
      truncated: { line: 4, bytes: 7 },
    });
    for (const text of [
      '{"a": 1}\n{"b": 2}\n',
      '\n\n{"b": 2',
      '{"a": 1}\n{"b": 2}}',
      "",
      '{\n  "a": 1\n}\n{\n  "b": 2\n}',
      '{\n  "a": [\n',
    ])
      expect(withoutCutLastLineOfText(text), text).toEqual({ text });
    // A pretty-printed stream whose last line opens a value on its own: that line is cut like any other.
    expect(withoutCutLastLineOfText('{\n  "a": 1\n}\n{').truncated).toEqual({ line: 4, bytes: 1 });
  });
});
