/**
 * Issue 37, item 5: each instruction states only what its evidence shows. Real-shaped inputs for
 * the four wording errors found by trying the feature, each with a negative control that keeps the
 * label where it belongs.
 */
import { describe, expect, it } from "vitest";
import { buildInstruction } from "../src/controls/control-instruction.ts";
import { detectControls } from "../src/controls/detect-controls.ts";
import type { Domain, Trajectory, Turn } from "../src/core/trajectory.ts";

function trajectory(domain: Domain, turns: Turn[], initialObservation?: string): Trajectory {
  return {
    id: "t",
    domain,
    source: { uri: "test", format: "test" },
    turns,
    ...(initialObservation === undefined ? {} : { initialObservation }),
  };
}

function instruction(t: Trajectory): string | undefined {
  return buildInstruction(t, detectControls(t))?.text;
}

const labelNames = (t: Trajectory) => detectControls(t).map((label) => `${label.turn}:${label.label}`);

describe("MCP: isError is a tool error in a successful response, not a JSON-RPC error", () => {
  const call = (id: number, name: string) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });
  const ok = (id: number) => JSON.stringify({ result: { content: [{ type: "text", text: "Echo: hi" }] }, jsonrpc: "2.0", id }, null, 2);
  // As the everything server answers an unknown tool (data/demo/mcp/everything-tools.jsonl, turn 8).
  const isError = (id: number) =>
    JSON.stringify(
      { result: { content: [{ type: "text", text: "MCP error -32602: Tool no-such-tool not found" }], isError: true }, jsonrpc: "2.0", id },
      null,
      2,
    );
  const rpcError = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } }, null, 2);

  it("says a tool reports an error for an isError result", () => {
    const text = instruction(
      trajectory("mcp", [
        { action: call(1, "echo"), observation: ok(1) },
        { action: call(2, "no-such-tool"), observation: isError(2) },
      ]),
    );
    expect(text).toBe(
      "Tools report errors: the 2nd call returns a tool result marked isError with MCP error -32602 (Tool no-such-tool not found).",
    );
    expect(text).not.toMatch(/JSON-RPC/);
  });

  it("an isError result without the SDK's text is still a tool error", () => {
    const bare = JSON.stringify({ result: { content: [{ type: "text", text: "boom" }], isError: true }, jsonrpc: "2.0", id: 1 });
    expect(instruction(trajectory("mcp", [{ action: call(1, "x"), observation: bare }]))).toBe(
      "Tools report errors: the 1st call returns a tool result marked isError.",
    );
  });

  it("negative control: a JSON-RPC error object is still stated as a JSON-RPC error", () => {
    expect(instruction(trajectory("mcp", [{ action: call(1, "x"), observation: rpcError(1) }]))).toBe(
      "The server answers with JSON-RPC errors: the 1st call returns error -32601 (Method not found).",
    );
  });

  it("both in one trajectory: the sentence says calls fail and each clause says which", () => {
    const text = instruction(
      trajectory("mcp", [
        { action: call(1, "x"), observation: rpcError(1) },
        { action: call(2, "no-such-tool"), observation: isError(2) },
      ]),
    );
    expect(text).toBe(
      "Calls fail: the 1st call returns error -32601 (Method not found); the 2nd call returns a tool result marked isError with MCP error -32602 (Tool no-such-tool not found).",
    );
  });
});

describe("unittest failures are test failures, not crashes", () => {
  // python3 -m unittest as it prints two failing tests (data/demo/swe: slug-punctuation).
  const report = [
    "F.F.",
    "======================================================================",
    "FAIL: test_add (test_calc.TestCalc.test_add)",
    "----------------------------------------------------------------------",
    "Traceback (most recent call last):",
    '  File "/repo/test_calc.py", line 8, in test_add',
    "    self.assertEqual(add(1, 2), 4)",
    "AssertionError: 3 != 4",
    "",
    "======================================================================",
    "FAIL: test_sub (test_calc.TestCalc.test_sub)",
    "----------------------------------------------------------------------",
    "Traceback (most recent call last):",
    '  File "/repo/test_calc.py", line 11, in test_sub',
    "    self.assertEqual(sub(3, 2), 2)",
    "AssertionError: 1 != 2",
    "",
    "----------------------------------------------------------------------",
    "Ran 4 tests in 0.001s",
    "",
    "FAILED (failures=2)",
    "",
  ].join("\n");

  it("labels the run test_failure only, and the instruction does not say a program crashed", () => {
    const t = trajectory("swe", [{ action: "python3 -m unittest", observation: report }]);
    expect(labelNames(t)).toEqual(["0:test_failure"]);
    const text = instruction(t);
    expect(text).toBe("Tests fail: the 1st command reports 2 failing tests.");
    expect(text).not.toMatch(/crash|traceback/i);
  });

  it("negative control: a script's uncaught exception is still a traceback", () => {
    const crash = [
      "Traceback (most recent call last):",
      '  File "/repo/run.py", line 3, in <module>',
      "    main()",
      "ZeroDivisionError: division by zero",
      "",
    ].join("\n");
    const t = trajectory("swe", [{ action: "python run.py", observation: crash }]);
    expect(labelNames(t)).toEqual(["0:traceback"]);
    expect(instruction(t)).toMatch(/^Programs crash: .*ZeroDivisionError/);
  });

  it("negative control: a script's failing assert (no test runner summary) stays a traceback", () => {
    const assertCrash = [
      "Traceback (most recent call last):",
      '  File "/repo/check.py", line 2, in <module>',
      "    assert total == 3",
      "AssertionError",
      "",
    ].join("\n");
    expect(labelNames(trajectory("swe", [{ action: "python check.py", observation: assertCrash }]))).toContain("0:traceback");
  });
});

describe("web: a step that only messages the user shows no result of its own", () => {
  const emptyScreen = [
    'RootWebArea "Inventory | Stockroom" focused url=http://stockroom.test/#/items',
    "  [16] main",
    '    [95] searchbox "Search items" value=stapler',
    "    [97] paragraph",
    '      StaticText "No items match."',
  ].join("\n");

  it("send_msg_to_user repeats the screen: no empty_result for it", () => {
    const t = trajectory("web", [
      { action: "click('96')", observation: emptyScreen },
      { action: `send_msg_to_user("No item matches 'stapler' any more.")`, observation: emptyScreen },
    ]);
    expect(labelNames(t)).toEqual(["0:empty_result"]);
    expect(instruction(t)).toBe("Results come back empty: the screen after the 1st action shows no results.");
  });

  it("negative control: a second search that shows the empty list again is labelled", () => {
    const t = trajectory("web", [
      { action: "click('96')", observation: emptyScreen },
      { action: "click('96')", observation: emptyScreen },
    ]);
    expect(labelNames(t)).toEqual(["0:empty_result", "1:empty_result"]);
  });
});

describe("harness turns never yield labels", () => {
  const notFound = "root@box:/app# mini -m model -t task\nbash: mini: command not found\nroot@box:/app# ";

  it("a terminal-bench harness command (agent install) is not labelled", () => {
    const t = trajectory("terminal", [
      { action: "source /installed-agent/setup-env.sh; bash /installed-agent/install-agent.sh", observation: notFound },
      { action: "ls", observation: "root@box:/app# ls\nREADME.md\nroot@box:/app# " },
    ]);
    expect(detectControls(t)).toEqual([]);
  });

  it("a turn a reader marked meta.harness is not labelled", () => {
    const t = trajectory("terminal", [{ action: "mini -m model -t task", observation: notFound, meta: { harness: true } }]);
    expect(detectControls(t)).toEqual([]);
  });

  it("negative control: the same output after the agent's own command is labelled", () => {
    const t = trajectory("terminal", [{ action: "mini -m model -t task", observation: notFound }]);
    expect(labelNames(t)).toContain("0:not_found");
  });
});
