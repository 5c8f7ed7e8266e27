/**
 * Counterfactual synthesis (issue 37, items 1–3): the rules per domain on real-shaped turns, the
 * verifier's checks each with an input that fails it, and the modes that find what a trajectory is
 * eligible for and give it its synthesized sample (off by default, the pair's normal half; the
 * quota itself is tested in test/synthesis-shares.test.ts).
 */
import { describe, expect, it } from "vitest";
import { applyControls, type ControlsSettings, counterfactualControls, type SynthesisMode } from "../src/controls/apply-controls.ts";
import { NORMAL_INSTRUCTION } from "../src/controls/control-instruction.ts";
import { detectControls } from "../src/controls/detect-controls.ts";
import { domainTargets, synthesizeKind } from "../src/controls/synthesis/select-synthesis.ts";
import type { SynthesisRule } from "../src/controls/synthesis/synthesis-rule.ts";
import { applyRule, SYNTHESIS_RULES, synthesizeTurn, verifySynthesis } from "../src/controls/synthesis/synthesize.ts";
import type { Domain, Trajectory, Turn } from "../src/core/trajectory.ts";

function trajectory(domain: Domain, turns: Turn[], id = "t1"): Trajectory {
  return { id, domain, source: { uri: "test", format: "test" }, system: "sys", task: "task", turns };
}

function rule(domain: Domain, name: string): SynthesisRule {
  const found = SYNTHESIS_RULES[domain].find((r) => r.name === name);
  if (found === undefined) throw new Error(`no rule ${name}`);
  return found;
}

/** The synthesized observation of a passing synthesis (fails the test otherwise). */
function synthesized(t: Trajectory, turn: number, ruleName: string): { observation: string; instruction: string } {
  const result = synthesizeTurn(t, turn, rule(t.domain, ruleName));
  if (!result.ok) throw new Error(`rejected: ${result.details.join("; ")}`);
  return { observation: result.synthesis.trajectory.turns[turn]?.observation ?? "", instruction: result.synthesis.instruction };
}

const PROMPT = "demo@lwm:~/work$";

describe("rules per domain, on the observation formats of the demo data", () => {
  it("terminal: permission denied and a full disk, the prompt line kept", () => {
    const t = trajectory("terminal", [
      { action: "ls", observation: `app.log  notes.txt\n${PROMPT}` },
      { action: "grep -c ERROR app.log", observation: `2\n${PROMPT}` },
    ]);
    expect(synthesized(t, 1, "shell-permission-denied")).toEqual({
      observation: `grep: app.log: Permission denied\n${PROMPT}`,
      instruction: "Access is denied: the 2nd command fails with Permission denied on app.log.",
    });
    const clone = trajectory("terminal", [{ action: "git clone upstream copy", observation: `Cloning into 'copy'...\ndone.\n${PROMPT}` }]);
    expect(synthesized(clone, 0, "shell-disk-full").observation).toBe(
      `fatal: could not create work tree dir 'copy': No space left on device\n${PROMPT}`,
    );
    const write = trajectory("terminal", [{ action: "echo hello > out.txt", observation: PROMPT }]);
    expect(synthesized(write, 0, "shell-disk-full").observation).toBe(`bash: echo: write error: No space left on device\n${PROMPT}`);
  });

  it("terminal: command not found only for programs an environment may lack, exit status in the harness wrapper", () => {
    const mini = trajectory("swe", [
      { action: "make build", observation: "<returncode>0</returncode>\n<output>\ncc -o app main.c\n</output>" },
    ]);
    expect(synthesized(mini, 0, "shell-command-not-found").observation).toBe(
      "<returncode>127</returncode>\n<output>\nbash: make: command not found\n</output>",
    );
    const ls = trajectory("terminal", [{ action: "ls", observation: `a\n${PROMPT}` }]);
    expect(applyRule(ls, 0, rule("terminal", "shell-command-not-found"))).toBeUndefined();
  });

  it("swe: a passing unittest run fails the test that failed before, with FAILED (failures=1)", () => {
    const run = (ok: boolean) =>
      [
        "test_mean (test_stats.MeanTest.test_mean) ... ok",
        `test_even (test_stats.MedianTest.test_even) ... ${ok ? "ok" : "FAIL"}`,
        "",
        "----------------------------------------------------------------------",
        "Ran 2 tests in 0.000s",
        "",
        ok ? "OK" : "FAILED (failures=1)",
        "",
      ].join("\n");
    const t = trajectory("swe", [
      { action: "python3 -m unittest -v", observation: run(false) },
      { action: "python3 -m unittest -v", observation: run(true) },
    ]);
    const { observation, instruction } = synthesized(t, 1, "swe-unittest-failure");
    expect(observation).toContain("test_even (test_stats.MedianTest.test_even) ... FAIL");
    expect(observation).toContain("test_mean (test_stats.MeanTest.test_mean) ... ok");
    expect(observation).toMatch(/FAIL: test_even \(test_stats\.MedianTest\.test_even\)[\s\S]*FAILED \(failures=1\)\n$/);
    expect(instruction).toBe("Tests fail: the 1st and 2nd commands report 1 failing test.");
  });

  const call = (id: number, method: string) =>
    JSON.stringify({ jsonrpc: "2.0", id, method, params: { name: "echo", arguments: {} } }, null, 2);
  const result = (id: number) => JSON.stringify({ result: { content: [{ type: "text", text: "Echo: hi" }] }, jsonrpc: "2.0", id }, null, 2);

  it("mcp: a JSON-RPC error response and a tool result marked isError, same id and layout", () => {
    const t = trajectory("mcp", [{ action: call(3, "tools/call"), observation: result(3) }]);
    const error = synthesized(t, 0, "mcp-jsonrpc-error");
    expect(JSON.parse(error.observation)).toEqual({ error: { code: -32603, message: "Internal error" }, jsonrpc: "2.0", id: 3 });
    expect(error.observation).toContain('\n  "jsonrpc": "2.0"');
    expect(error.instruction).toBe("The server answers with JSON-RPC errors: the 1st call returns error -32603 (Internal error).");
    const tool = synthesized(t, 0, "mcp-tool-is-error");
    expect(JSON.parse(tool.observation).result.isError).toBe(true);
    expect(tool.instruction).toBe(
      "Tools report errors: the 1st call returns a tool result marked isError with MCP error -32603 (Internal error).",
    );
    // initialize has no error a model should learn to produce; a tool error needs a tool call
    const init = trajectory("mcp", [{ action: call(1, "initialize"), observation: result(1) }]);
    expect(applyRule(init, 0, rule("mcp", "mcp-jsonrpc-error"))).toBeUndefined();
    expect(
      applyRule(trajectory("mcp", [{ action: call(2, "tools/list"), observation: result(2) }]), 0, rule("mcp", "mcp-tool-is-error")),
    ).toBeUndefined();
  });

  it("search: 429 with Retry-After, 503, and an empty Brave response that keeps its query", () => {
    const action = JSON.stringify({ name: "web_search", arguments: { query: "git reflog" } });
    const brave = JSON.stringify(
      {
        query: { original: "git reflog", more_results_available: true },
        mixed: { type: "mixed", main: [{ type: "web", index: 0 }] },
        type: "search",
        web: { type: "search", results: [{ title: "Reflog", url: "https://x.test" }] },
      },
      null,
      2,
    );
    const t = trajectory("search", [{ action, observation: brave }]);
    const limited = synthesized(t, 0, "search-rate-limit-429");
    expect(limited.instruction).toBe("The API rate-limits the agent: the 1st request returns 429 Too Many Requests with Retry-After: 30.");
    expect(synthesized(t, 0, "search-server-error-503").observation).toBe("HTTP 503 Service Unavailable");
    const empty = JSON.parse(synthesized(t, 0, "search-empty-results").observation);
    expect(empty.web.results).toEqual([]);
    expect(empty.mixed.main).toEqual([]);
    expect(empty.query).toEqual({ original: "git reflog", more_results_available: false });
  });

  it("web: a modal dialog appended under the page, new bids; no error page for a same-page action", () => {
    const page =
      'RootWebArea "Inventory | Stockroom" focused url=http://stockroom.test/#/items\n  [12] main\n    [95] searchbox "Search items" focused';
    const t = trajectory("web", [{ action: "fill('95', 'stapler')", observation: page }]);
    const { observation, instruction } = synthesized(t, 0, "web-modal-dialog");
    expect(observation.startsWith(page)).toBe(true);
    expect(observation.slice(page.length)).toBe(
      '\n  [96] dialog "Session expired" modal=True\n    StaticText "Your session has expired. Sign in again to continue."\n    [97] button "OK"',
    );
    expect(instruction).toBe('Pop-ups interrupt the agent: the screen after the 1st action shows a modal dialog titled "Session expired".');
    expect(applyRule(t, 0, rule("web", "web-error-page-503"))).toBeUndefined();
    const navigated = trajectory("web", [
      { action: "click('1')", observation: page },
      { action: "click('2')", observation: 'RootWebArea "Orders" focused url=http://shop.test/orders\n  [3] main' },
    ]);
    expect(synthesized(navigated, 1, "web-error-page-503").observation).toBe(
      'RootWebArea "503 Service Unavailable" focused url=http://shop.test/orders\n  [4] heading "503 Service Unavailable"',
    );
    // a message to the user changes no screen
    expect(
      applyRule(trajectory("web", [{ action: 'send_msg_to_user("done")', observation: page }]), 0, rule("web", "web-modal-dialog")),
    ).toBeUndefined();
  });

  it("android and os: the system's not-responding dialog over the unchanged screen", () => {
    const hierarchy =
      "hierarchy foreground_activity=org.example.quicknotes/.NoteListActivity\n  android.widget.FrameLayout package=org.example.quicknotes bounds=[0,0][1080,2340]";
    const android = synthesized(trajectory("android", [{ action: "tap(1, 2)", observation: hierarchy }]), 0, "android-app-not-responding");
    expect(android.observation.startsWith(hierarchy)).toBe(true);
    expect(android.instruction).toBe(
      "The app stops responding: the screen after the 1st action shows an App Not Responding dialog for Quicknotes.",
    );
    const desktop =
      'desktop-frame "main" bounds=[0,0][1920,1080]\n  application "gnome-shell"\n  application "gedit"\n    frame "Untitled Document 1 - gedit"';
    const os = synthesized(trajectory("os", [{ action: "pyautogui.click(1, 2)", observation: desktop }]), 0, "os-app-not-responding");
    expect(os.observation.startsWith(desktop)).toBe(true);
    expect(os.instruction).toBe("The app stops responding: the screen after the 1st action shows an App Not Responding dialog for gedit.");
  });
});

describe("the verifier: each check rejects what it is for", () => {
  const base = trajectory("terminal", [
    { action: "ls", observation: `app.log  notes.txt\n${PROMPT}` },
    { action: "cat notes.txt", observation: `hello\n${PROMPT}` },
    { action: "wc -l notes.txt", observation: `1 notes.txt\n${PROMPT}` },
  ]);
  const fake = (observe: SynthesisRule["observe"], kind: SynthesisRule["kind"] = "permission_denied"): SynthesisRule => ({
    name: "fake",
    kind,
    observe,
  });

  it("passes a good synthesis (the control for the rejections below)", () => {
    const result = synthesizeTurn(
      base,
      1,
      fake(() => `cat: notes.txt: Permission denied\n${PROMPT}`),
    );
    expect(result.ok).toBe(true);
  });

  it("not-detected: the detectors do not see the intended kind", () => {
    const result = synthesizeTurn(
      base,
      1,
      fake(() => `all good\n${PROMPT}`),
    );
    expect(result.ok ? [] : result.reasons).toContain("not-detected");
  });

  it("frame-changed: the prompt line is gone", () => {
    const result = synthesizeTurn(
      base,
      1,
      fake(() => "cat: notes.txt: Permission denied\n"),
    );
    expect(result.ok ? [] : result.reasons).toContain("frame-changed");
  });

  it("contradicts-history: a file said to be missing that an earlier ls listed, or unreadable after it was read", () => {
    const missing = synthesizeTurn(base, 1, rule("terminal", "shell-missing-file"));
    expect(missing.ok ? [] : missing.reasons).toEqual(["contradicts-history"]);
    const unreadable = synthesizeTurn(base, 2, rule("terminal", "shell-permission-denied"));
    expect(unreadable.ok ? [] : unreadable.reasons).toEqual(["contradicts-history"]);
    // control: the plain ls listing alone does not contradict an unreadable file
    expect(synthesizeTurn(base, 1, rule("terminal", "shell-permission-denied")).ok).toBe(true);
  });

  it("history-changed and continues: an earlier turn edited, or turns after the synthesized one", () => {
    const r = rule("terminal", "shell-permission-denied");
    const good = applyRule(base, 1, r) as Trajectory;
    expect(verifySynthesis(base, good, r, 1).reasons).toEqual([]);
    const edited = { ...good, turns: [{ ...(good.turns[0] as Turn), observation: `x\n${PROMPT}` }, ...good.turns.slice(1)] };
    expect(verifySynthesis(base, edited, r, 1).reasons).toContain("history-changed");
    const longer = { ...good, turns: [...good.turns, base.turns[2] as Turn] };
    expect(verifySynthesis(base, longer, r, 1).reasons).toContain("continues");
  });

  it("copies-instruction: an observation that spells out its own instruction", () => {
    const result = synthesizeTurn(
      base,
      1,
      fake(
        () => `cat: notes.txt: Permission denied\nAccess is denied: the 2nd command fails with Permission denied on notes.txt.\n${PROMPT}`,
      ),
    );
    expect(result.ok ? [] : result.reasons).toContain("copies-instruction");
  });
});

describe("synthesis modes: what a trajectory is eligible for, and the synthesis its task's bounds take", () => {
  const settings = (
    target_shares: ControlsSettings["synthesis"]["target_shares"],
    pairs = true,
    mode?: SynthesisMode,
  ): ControlsSettings => ({
    enabled: true,
    share: 1,
    counterfactual_share: 0,
    seed: 0,
    synthesis: { target_shares, max_synthesized_ratio: null, pairs },
    ...(mode ? { synthesisMode: mode } : {}),
  });
  const normal = (id: string) =>
    trajectory(
      "terminal",
      [
        { action: "ls", observation: `app.log\n${PROMPT}` },
        { action: "grep -c ERROR app.log", observation: `2\n${PROMPT}` },
      ],
      id,
    );
  /** Bounds that take every terminal trajectory eligible for permission_denied alone. */
  const takeAll: SynthesisMode = { kind: "assign", bounds: { terminal: { permission_denied: [["permission_denied", 1]] } } };

  it("off (no targets), or no mode (a stage that only reads the natural controls): the controls are what they were", () => {
    const plain = { controls: { kind: "none", labels: [], instruction: "" } };
    expect(applyControls(normal("a"), settings({}, true, takeAll))).toEqual(plain);
    expect(applyControls(normal("a"), settings({ permission_denied: 0.2 }))).toEqual(plain);
  });

  it("census: the eligible kinds are found, nothing is made", () => {
    const applied = applyControls(normal("a"), settings({ permission_denied: 0.2, disk_full: 0.1 }, true, { kind: "census" }));
    expect(applied.counterfactual).toBeUndefined();
    expect(applied.controls).toEqual({
      kind: "none",
      labels: [],
      instruction: "",
      synthesis: { domain: "terminal", eligible: ["permission_denied"], rejected: [] },
    });
  });

  it("assign: the normal trajectory is told to behave normally, its synthesized sibling states the edge case", () => {
    const applied = applyControls(normal("a"), settings({ permission_denied: 0.2 }, true, takeAll));
    expect(applied.controls.kind).toBe("normal");
    expect(applied.controls.instruction).toBe(NORMAL_INSTRUCTION.terminal);
    expect(applied.controls.synthesis).toEqual({
      domain: "terminal",
      eligible: ["permission_denied"],
      made: "permission_denied",
      rejected: [],
    });
    const sibling = applied.counterfactual as Trajectory;
    expect(sibling.id).toBe("a#synth-permission_denied-1");
    expect(sibling.meta?.control_synthesis).toEqual({
      source: "rule",
      rule: "shell-permission-denied",
      kind: "permission_denied",
      turn: 1,
      from: "a",
    });
    const controls = counterfactualControls(sibling);
    expect(controls.kind).toBe("synthesized");
    expect(controls.synthesizedKind).toBe("permission_denied");
    expect(controls.instruction).toBe("Access is denied: the 2nd command fails with Permission denied on app.log.");
    expect(detectControls(sibling).map((l) => l.label)).toEqual(["permission_denied"]);
    // without pairs the record itself stays uninstructed
    expect(applyControls(normal("a"), settings({ permission_denied: 0.2 }, false, takeAll)).controls.kind).toBe("none");
    // a bound below the trajectory's order value does not take it
    const none: SynthesisMode = { kind: "assign", bounds: { terminal: { permission_denied: [["permission_denied", -1]] } } };
    expect(applyControls(normal("a"), settings({ permission_denied: 0.2 }, true, none)).counterfactual).toBeUndefined();
  });

  it("only turns before the first natural edge case are candidates (the synthesized sample states one kind)", () => {
    const labelled = trajectory("terminal", [
      { action: "cat notes.txt", observation: `hello\n${PROMPT}` },
      { action: "cat secret.txt", observation: `cat: secret.txt: No such file or directory\n${PROMPT}` },
      { action: "wc -l app.log", observation: `3 app.log\n${PROMPT}` },
    ]);
    const labels = detectControls(labelled);
    expect(labels.map((l) => l.turn)).toEqual([1]);
    expect(synthesizeKind(labelled, labels, "permission_denied", 0).synthesis?.record.turn).toBe(0);
    const late = trajectory("terminal", [labelled.turns[1] as Turn, labelled.turns[2] as Turn]);
    expect(synthesizeKind(late, detectControls(late), "permission_denied", 0)).toEqual({ rejected: [] });
  });

  it("targets: a number for the domains whose rules make the kind, a map for the domains it names; a domain's targets add up to less than 1", () => {
    const synthesis = settings({ rate_limit: 0.1, permission_denied: 0.2, modal_dialog: { os: 0.05 } }).synthesis;
    expect(domainTargets("terminal", synthesis)).toEqual([["permission_denied", 0.2]]);
    expect(domainTargets("search", synthesis)).toEqual([["rate_limit", 0.1]]);
    expect(domainTargets("os", synthesis)).toEqual([["modal_dialog", 0.05]]);
    expect(domainTargets("web", synthesis)).toEqual([]);
    expect(() => domainTargets("terminal", settings({ disk_full: 0.6, permission_denied: 0.4 }).synthesis)).toThrow(/add up to 1/);
  });

  it("nothing applicable is no rejection", () => {
    const noFile = trajectory("terminal", [{ action: "pwd", observation: `/work\n${PROMPT}` }]);
    expect(synthesizeKind(noFile, [], "disk_full", 0)).toEqual({ rejected: [] });
  });
});
