/**
 * The SFT verifiers (format, fidelity, leakage) on observations from third-party samples
 * (../shared/fixtures/real/, see test/third-party/support.ts): SWE-agent and mini-swe-agent
 * outputs, go-sdk MCP conformance responses, a Brave web search response, Android and BrowserGym
 * trees. Scores were counted by hand in the files. test/sft-verify.test.ts covers the same rules
 * on the project's own recordings and hand-written observations.
 */
import { expect, it } from "vitest";
import { DEFAULT_VERIFY_THRESHOLDS, fidelityFor, passedAll, type VerifyThresholds } from "../../src/sft/verify/index.ts";
import { jsonLeaves } from "../../src/sft/verify/json-structure.ts";
import { outputLines } from "../../src/sft/verify/line-similarity.ts";
import { resultSets } from "../../src/sft/verify/search-overlap.ts";
import { treeNodeLines } from "../../src/sft/verify/tree-similarity.ts";
import { candidate, observation, readOneTrajectory, replaceOnce, verify } from "../support/sft-verify-helpers.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

/** The one trajectory in a third-party sample file, as the normalize stage hands it on (unless `raw`). */
const readFixture = (file: string, raw = false) => readOneTrajectory(thirdParty(file), raw);

describeThirdParty("fidelity: swe / terminal output lines (real mini-swe-agent and SWE-agent observations)", () => {
  it("SWE-agent `open`: exact 1, one line changed 10/11, the next turn's view 20/23 (fails), another command's 0", async () => {
    const t = await readFixture("swe/swe-agent/gpt4__swe-agent__test-repo-i1.traj");
    const truth = observation(t, 1, "open tests/missing_colon.py");
    // The window: a `[File: …]` header and lines `1:` … `10:`, then a final newline: 11 lines.
    expect(outputLines(truth)).toHaveLength(11);

    const exact = verify("swe", truth, candidate(truth));
    expect(exact.fidelity.score).toBe(1);
    expect(passedAll(exact.results)).toBe(true);

    // One of 11 lines wrong: 2·10 / (11 + 11) = 10/11.
    const nearMiss = verify("swe", truth, candidate(replaceOnce(truth, "5:    return a/b", "5:    return a // b")));
    expect(nearMiss.fidelity.score).toBeCloseTo(10 / 11, 12);
    expect(nearMiss.fidelity).toMatchObject({
      passed: true,
      reason: "swe: prediction matches 10/11 ground-truth lines in order (prediction has 11) (0.91 ≥ 0.90)",
    });

    // Turn 2 (after the edit): line 4 gained its colon and a "File updated…" line follows: 2·10 / (12 + 11).
    const nextView = verify("swe", truth, candidate(observation(t, 2, "edit 4:4")));
    expect(nextView.fidelity.score).toBeCloseTo(20 / 23, 12);
    expect(nextView.fidelity).toMatchObject({
      passed: false,
      reason: "swe: prediction matches 10/11 ground-truth lines in order (prediction has 12) (0.87 < 0.90)",
    });

    const other = verify("swe", truth, candidate(observation(t, 0, "find_file")));
    expect(other.fidelity).toMatchObject({ score: 0, passed: false });
  });

  it("terminal: `ls -la tests/` for `ls -la` shares only the 3 wrapper lines: 2·3 / (10 + 15)", async () => {
    const t = await readFixture("swe/mini-swe-agent/github_issue.traj.json");
    const truth = observation(t, 1, "ls -la");
    const wrong = observation(t, 2, "ls -la tests/");
    expect([outputLines(truth).length, outputLines(wrong).length]).toEqual([15, 10]);
    const { fidelity } = verify("terminal", truth, candidate(wrong));
    expect(fidelity.score).toBeCloseTo(6 / 25, 12);
    expect(fidelity.passed).toBe(false);
    expect(verify("terminal", truth, candidate(truth)).fidelity.score).toBe(1);
  });

  it("terminal: the file before the fix for the `cat` after it is a one-line near-miss: 12/13, passes", async () => {
    // A limit worth knowing: line similarity cannot tell that the one wrong line is the one that matters.
    const t = await readFixture("swe/mini-swe-agent/github_issue.traj.json");
    const truth = observation(t, 5, "cat tests/missing_colon.py");
    const before = observation(t, 3, "cat tests/missing_colon.py");
    const { fidelity } = verify("terminal", truth, candidate(before));
    expect(fidelity.score).toBeCloseTo((2 * 12) / 26, 12);
    expect(fidelity.passed).toBe(true);
  });

  it("ignores trailing whitespace per line and blank lines around the output; both empty is a match", async () => {
    const t = await readFixture("swe/mini-swe-agent/local.traj.json");
    const truth = observation(t, 0, "echo 'hello world'");
    const padded = `\n${truth
      .split("\n")
      .map((line) => `${line}   `)
      .join("\n")}\n\n`;
    expect(fidelityFor("terminal")(padded, truth).score).toBe(1);
    const empty = observation(t, 1, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT");
    expect(empty).toBe("");
    const { results, fidelity } = verify("terminal", empty, candidate(""));
    expect(fidelity).toMatchObject({ score: 1, reason: "terminal: prediction and ground truth are both empty (1.00 ≥ 0.90)" });
    expect(passedAll(results)).toBe(true);
    expect(fidelityFor("terminal")("hello", "").score).toBe(0);
  });
});

describeThirdParty("fidelity: mcp JSON structure (real go-sdk conformance responses)", () => {
  it("`tomorrow`: exact 1, key order and layout do not count, one value of five 0.9 (fails), another call's 0.6", async () => {
    const t = await readFixture("mcp/go-sdk-conformance/v1.0.0__tools.txtar");
    const truth = observation(t, 8, "tomorrow");
    const parsed = JSON.parse(truth);
    // Leaves: jsonrpc, id, result.content[0].type, result.content[0].text, result.structuredContent.Tomorrow.
    expect([...jsonLeaves(parsed).keys()]).toEqual([
      "$.jsonrpc",
      "$.id",
      "$.result.content[0].type",
      "$.result.content[0].text",
      "$.result.structuredContent.Tomorrow",
    ]);
    expect(verify("mcp", truth, candidate(truth)).fidelity.score).toBe(1);
    const reordered = JSON.stringify({
      result: { structuredContent: parsed.result.structuredContent, content: parsed.result.content },
      id: 9,
      jsonrpc: "2.0",
    });
    expect(verify("mcp", truth, candidate(reordered)).fidelity.score).toBe(1);

    // Tomorrow's value wrong, its path and type right: 2·(4 + 0.5) / (5 + 5) = 0.9 < 0.95.
    const nearMiss = replaceOnce(truth, '"Tomorrow": "2025-06-19T15:04:05Z"', '"Tomorrow": "2025-06-20T15:04:05Z"');
    const near = verify("mcp", truth, candidate(nearMiss));
    expect(near.fidelity.score).toBeCloseTo(0.9, 12);
    expect(near.fidelity).toMatchObject({
      passed: false,
      reason:
        "mcp: prediction matches 4/5 ground-truth JSON leaves exactly and 1 more by path and type only (prediction has 5) (0.90 < 0.95)",
    });

    // Turn 10 (`inc` → {"y":4}): jsonrpc and content[0].type equal (2), id 11 ≠ 9 and the text
    // differ in value only (2 × 0.5), structuredContent.y is not structuredContent.Tomorrow (0):
    // 2·3 / 10 = 0.6.
    const wrong = verify("mcp", truth, candidate(observation(t, 10, '"inc"')));
    expect(wrong.fidelity.score).toBeCloseTo(0.6, 12);
    expect(wrong.fidelity.passed).toBe(false);
  });

  it("`tools/list`: one description changed among 37 leaves: 2·36.5/74 = 73/74, passes", async () => {
    const t = await readFixture("mcp/go-sdk-conformance/v1.0.0__tools.txtar");
    const truth = observation(t, 1, "tools/list");
    // Counted by hand in the .txtar: jsonrpc + id (2), greet 6, inc 9, structured 11, tomorrow 9.
    expect(jsonLeaves(JSON.parse(truth)).size).toBe(37);
    const { fidelity } = verify("mcp", truth, candidate(replaceOnce(truth, '"say hi"', '"say hello"')));
    expect(fidelity.score).toBeCloseTo(73 / 74, 12);
    expect(fidelity.passed).toBe(true);
  });

  it("a prediction that is not JSON scores 0; a ground truth that is not JSON falls back to lines", async () => {
    const t = await readFixture("mcp/go-sdk-conformance/v1.0.0__tools.txtar");
    const truth = observation(t, 2, "resources/list");
    expect(fidelityFor("mcp")(truth.slice(0, -1), truth)).toEqual({
      score: 0,
      detail: "ground truth is JSON but the prediction is not a JSON object or array",
    });
    // `{"resources": []}`: the empty array is a leaf of its own, so a missing or filled list is seen.
    expect(jsonLeaves(JSON.parse(truth)).get("$.result.resources")).toEqual({ type: "array", value: "[]" });
    expect(fidelityFor("mcp")("a\nb\nc", "a\nb\nd")).toEqual({
      score: 2 / 3,
      detail: "ground truth is not JSON; prediction matches 2/3 ground-truth lines in order (prediction has 3)",
    });
  });
});

describeThirdParty("fidelity: search structure + result overlap (real Brave web search response)", () => {
  const FILE = "search/brave/brave_web.json";

  it("exact 1; one deep-result URL changed: (1277/1278 + (70/72 + 1)/2) / 2; an MCP response 0", async () => {
    const t = await readFixture(FILE);
    const truth = observation(t, 0, "hello world");
    const sets = resultSets(truth);
    // Independent counts: jq '[paths(type|.!="object" and .!="array")]|length' → 632 scalars, plus
    // 7 empty objects/arrays; `url` values: 36 distinct; `title` values: 36, "Hello World" twice.
    expect(jsonLeaves(JSON.parse(truth)).size).toBe(639);
    expect([sets.urls.size, sets.titles.size]).toEqual([36, 35]);

    expect(verify("search", truth, candidate(truth)).fidelity.score).toBe(1);

    // The Variations button's URL occurs once; its leaf keeps path and type (1 × 0.5), the URL
    // set loses one member and gains another (F1 70/72), titles are untouched (F1 1).
    const variations = "https://en.wikipedia.org/wiki/%22Hello,_World!%22_program#Variations";
    const near = verify("search", truth, candidate(replaceOnce(truth, `"${variations}"`, `"${variations}_and_more"`)));
    expect(near.fidelity.score).toBeCloseTo((1277 / 1278 + (70 / 72 + 1) / 2) / 2, 12);
    expect(near.fidelity.passed).toBe(true);
    expect(near.fidelity.reason).toContain("35/36 ground-truth result urls found (prediction lists 36)");

    const mcp = await readFixture("mcp/go-sdk-conformance/v1.0.0__tools.txtar");
    const wrong = verify("search", truth, candidate(observation(mcp, 1, "tools/list")));
    expect(wrong.fidelity).toMatchObject({ score: 0, passed: false });
  });

  it("a prediction cut off halfway is not JSON: structure 0, only URLs found in its text count", async () => {
    const truth = observation(await readFixture(FILE), 0, "hello world");
    const { fidelity } = verify("search", truth, candidate(truth.slice(0, truth.length / 2)));
    expect(fidelity.passed).toBe(false);
    expect(fidelity.score).toBeLessThan(0.25);
    expect(fidelity.reason).toContain("structure 0.00: ground truth is JSON but the prediction is not a JSON object or array");
  });
});

describeThirdParty("fidelity: accessibility trees (real Android and BrowserGym observations)", () => {
  it("android (Gmail welcome screen, 15 nodes): bounds changed 29/30, name changed 28/30, another screen fails", async () => {
    const t = await readFixture("android/mobile-env/window_dump.example.xml");
    const truth = observation(t, 0, "");
    expect(treeNodeLines(truth)).toHaveLength(15);
    expect(verify("android", truth, candidate(truth)).fidelity.score).toBe(1);

    // Same role, name and depth, other bounds: half credit. 2·(14 + 0.5) / 30.
    const bounds = replaceOnce(truth, "bounds=[0,1647][1080,1794]", "bounds=[0,1650][1080,1794]");
    const near = verify("android", truth, candidate(bounds));
    expect(near.fidelity.score).toBeCloseTo(29 / 30, 12);
    expect(near.fidelity).toMatchObject({
      passed: true,
      reason:
        "android: prediction matches 14/15 ground-truth nodes exactly and 1 more by role, name and depth only (prediction has 15) (0.97 ≥ 0.90)",
    });
    // Another name is another node: no credit. 2·14 / 30.
    const renamed = verify("android", truth, candidate(replaceOnce(truth, '"GOT IT"', '"Got it"')));
    expect(renamed.fidelity.score).toBeCloseTo(28 / 30, 12);

    const launcher = await readFixture("android/droidbot/2016_paypal__device_state_2016-07-15_221456.json");
    const wrong = verify("android", truth, candidate(observation(launcher, 0, "")));
    expect(wrong.fidelity.passed).toBe(false);
    expect(wrong.fidelity.score).toBeLessThan(0.2);
  });

  it("android (DroidBot dialog, 4 nodes): one flag dropped is 2·3.5/8 = 0.875, under the bar on a tree this small", async () => {
    const t = await readFixture("android/droidbot/2016_paypal__device_state_2016-07-15_212930.json");
    const truth = observation(t, 0, "");
    expect(treeNodeLines(truth)).toHaveLength(4);
    const { fidelity } = verify("android", truth, candidate(replaceOnce(truth, '"OK" clickable focusable', '"OK" clickable')));
    expect(fidelity.score).toBeCloseTo(0.875, 12);
    expect(fidelity.passed).toBe(false);
  });

  it("web (WorkArena, canonical tree): one flag dropped of 236 nodes 471/472; the next turn's page fails", async () => {
    const t = await readFixture("web/browsergym/workarena.all-menu_4__experiment_analysis.md");
    const truth = observation(t, 0, "click('79')");
    expect(treeNodeLines(truth)).toHaveLength(236);
    expect(verify("web", truth, candidate(truth)).fidelity.score).toBe(1);
    const near = replaceOnce(
      truth,
      '[224] textbox "Enter search term to filter All menu" focused\n',
      '[224] textbox "Enter search term to filter All menu"\n',
    );
    expect(verify("web", truth, candidate(near)).fidelity.score).toBeCloseTo(471 / 472, 12);

    const next = verify("web", truth, candidate(observation(t, 1, "fill('224'")));
    expect(next.fidelity.passed).toBe(false);
    expect(next.fidelity.score).toBeLessThan(0.5);
  });

  it("reads BrowserGym's own form (tabs, single quotes) and the canonical diff form too", async () => {
    const raw = observation(await readFixture("web/browsergym/workarena.all-menu_4__experiment_analysis.md", true), 0, "click('79')");
    const region = "\t[215] region 'There are 0 announcements displayed', live='polite', relevant='additions text'";
    expect(raw.split("\n")).toContain(region);
    expect(treeNodeLines(region)).toEqual([
      {
        exact: "1|[215] region 'There are 0 announcements displayed', live='polite', relevant='additions text'",
        partial: "1|region 'There are 0 announcements displayed'",
      },
    ]);
    const changed = replaceOnce(raw, region, region.replace("live='polite'", "live='assertive'"));
    const n = treeNodeLines(raw).length;
    expect(fidelityFor("web")(changed, raw).score).toBeCloseTo((2 * (n - 1 + 0.5)) / (2 * n), 12);

    // Diff lines: the edit and the node key stand in for role and name.
    const diffLine = '+ 215 in RootWebArea at 4: region "There are 0 announcements displayed" live=polite';
    expect(treeNodeLines(diffLine)[0]?.partial).toBe("0|+ 215");
    expect(fidelityFor("web")(diffLine.replace("live=polite", "live=off"), diffLine).score).toBe(0.5);
    expect(fidelityFor("web")(diffLine.replace("+ 215", "+ 216"), diffLine).score).toBe(0);
  });
});

describeThirdParty("leakage", () => {
  const hinted = (groundTruth: string, think: string, hintsGiven = true) =>
    verify("swe", groundTruth, candidate(groundTruth, think), hintsGiven).leakage;

  it("passes without looking when no hints were given", async () => {
    const truth = observation(await readFixture("swe/swe-agent/gpt4__swe-agent__test-repo-i1.traj"), 1, "open");
    expect(hinted(truth, `Copying it: ${truth}`, false)).toEqual({ rule: "leakage", score: 1, passed: true, reason: "no hints given" });
  });

  it("fails on 3 consecutive ground-truth lines in the thinking, however they are indented or wrapped", async () => {
    const truth = observation(await readFixture("swe/swe-agent/gpt4__swe-agent__test-repo-i1.traj"), 1, "open");
    // Ground-truth lines 5-7 are `4:def division…`, `5:    return a/b`, `6:`.
    const quoted = "The file will show\n    4:def division(a: float, b: float) -> float\n  5: return a/b\n6: and then the main block.";
    expect(hinted(truth, quoted)).toEqual({
      rule: "leakage",
      score: 0,
      passed: false,
      reason: 'thinking quotes ground-truth lines 5-7 verbatim: "4:def division(a: float, b: float) -> float 5: return a/b 6:"',
    });
    const run = 'So: 4:def division(a: float, b: float) -> float 5: return a/b 6: 7: 8:if __name__ == "__main__": and so on';
    expect(hinted(truth, run).reason).toMatch(/^thinking quotes ground-truth lines 5-9 verbatim: /);
  });

  it("passes on two consecutive lines, and on runs of bare brackets", async () => {
    const swe = observation(await readFixture("swe/swe-agent/gpt4__swe-agent__test-repo-i1.traj"), 1, "open");
    const two = "Line 4 should read 4:def division(a: float, b: float) -> float\n5:    return a/b, the colon is still missing.";
    expect(hinted(swe, two)).toMatchObject({
      passed: true,
      reason: "thinking quotes no run of 3 consecutive ground-truth lines (11 checked)",
    });
    const mcp = observation(await readFixture("mcp/go-sdk-conformance/v1.0.0__tools.txtar"), 8, "tomorrow");
    expect(mcp.split("\n").slice(-3)).toEqual(["    }", "  }", "}"]);
    const think =
      "The structured reply nests two objects, so it ends in\n}\n}\n} as every JSON-RPC result does, and the date moves one day on.";
    expect(verify("mcp", mcp, candidate(mcp, think), true).leakage.passed).toBe(true);
  });

  it("checks a short ground truth whole, when it is long enough to tell", async () => {
    const t = await readFixture("swe/swe-agent/gpt4__swe-agent__test-repo-i1.traj");
    const found = observation(t, 0, "find_file");
    const [first, second] = found.split("\n") as [string, string];
    expect(hinted(found, `It will print:\n${first}\n${second}\nand nothing else.`)).toMatchObject({
      passed: false,
      reason: expect.stringMatching(/^thinking contains the whole 125-char ground truth verbatim: "Found 1 matches/),
    });
    expect(hinted(found, `The search finds one file: ${second}, nothing else.`).passed).toBe(true);
    const result = observation(t, 3, "python tests/missing_colon.py");
    expect(hinted(result, "123 / 15 is 8.2, so it prints 8.2 and exits.")).toMatchObject({
      passed: true,
      reason: "ground truth is 3 chars, too short to tell copying from prediction (< 40)",
    });
  });
});

describeThirdParty("verifyCandidate", () => {
  it("runs format, fidelity, leakage in that order and honours custom thresholds", async () => {
    const truth = observation(await readFixture("swe/swe-agent/gpt4__swe-agent__test-repo-i1.traj"), 1, "open");
    const text = candidate(replaceOnce(truth, "5:    return a/b", "5:    return a // b"));
    expect(passedAll(verify("swe", truth, text).results)).toBe(true);
    const strict: VerifyThresholds = { ...DEFAULT_VERIFY_THRESHOLDS, fidelity: { ...DEFAULT_VERIFY_THRESHOLDS.fidelity, swe: 0.95 } };
    const { fidelity, results } = verify("swe", truth, text, false, strict);
    expect(fidelity.reason).toBe("swe: prediction matches 10/11 ground-truth lines in order (prediction has 11) (0.91 < 0.95)");
    expect(passedAll(results)).toBe(false);
  });
});
