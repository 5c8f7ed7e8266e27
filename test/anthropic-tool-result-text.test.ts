/**
 * The one helper claude-code and cline read a `tool_result` content with
 * (src/read/chat-rows/anthropic-blocks.ts `toolResultText`): text blocks joined, other typed
 * blocks `[type]`, bare string blocks only where the caller takes them (Claude Code).
 */
import { describe, expect, it } from "vitest";
import { toolResultText } from "../src/read/chat-rows/anthropic-blocks.ts";

describe("toolResultText", () => {
  it("reads a string, nothing, and text and other typed blocks", () => {
    expect(toolResultText("out")).toBe("out");
    expect(toolResultText(undefined)).toBe("");
    expect(toolResultText(null)).toBe("");
    expect(
      toolResultText([
        { type: "text", text: "a" },
        { type: "image", source: {} },
        { type: "text", text: "b" },
      ]),
    ).toBe("a\n[image]\nb");
    // A text block whose text is no string stands as its type.
    expect(toolResultText([{ type: "text", text: 3 }])).toBe("[text]");
  });

  it("takes bare strings only with bareStrings (claude-code), and refuses other values", () => {
    expect(toolResultText(["a", { type: "text", text: "b" }])).toBeUndefined();
    expect(toolResultText(["a", { type: "text", text: "b" }], { bareStrings: true })).toBe("a\nb");
    expect(toolResultText(42)).toBeUndefined();
    expect(toolResultText({ type: "text", text: "a" })).toBeUndefined();
    expect(toolResultText([{ text: "no type" }], { bareStrings: true })).toBeUndefined();
  });
});
