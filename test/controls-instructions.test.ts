import { describe, expect, it } from "vitest";
import {
  allowedQuotes,
  buildInstruction,
  type ControlInstruction,
  checkInstruction,
  codePointLength,
  codePointSlice,
  faithfulInstruction,
  NORMAL_INSTRUCTION,
  normalInstruction,
  rephraseInstruction,
  rephraseProblems,
  verbatimLeaks,
} from "../src/controls/control-instruction.ts";
import { CONTROL_LABELS, type ControlLabel, type ControlLabelName } from "../src/controls/control-label.ts";
import { counterfactualOf } from "../src/controls/counterfactual.ts";
import { kindSentence, ordinal, ordinalList, subjectFor } from "../src/controls/instruction-templates.ts";
import { controlDraw, selectControl } from "../src/controls/select-controls.ts";
import { DOMAINS, type Domain, type Trajectory } from "../src/core/trajectory.ts";
import type { ChatRequest } from "../src/sft/teacher/chat-types.ts";
import type { TeacherClient } from "../src/sft/teacher/openai-client.ts";

// ---------------------------------------------------------------------------------------------
// A small fake detector: regex rules over each observation, spans converted to code points.

interface Rule {
  label: ControlLabelName;
  pattern: RegExp;
  facts?: (match: RegExpExecArray) => Record<string, string | number>;
}

const RULES: Rule[] = [
  {
    label: "rate_limit",
    pattern: /HTTP\/1\.1 429 Too Many Requests(?:\nRetry-After: (\d+))?/g,
    facts: (m) => ({ status: 429, ...(m[1] === undefined ? {} : { retry_after: m[1] }) }),
  },
  { label: "http_error", pattern: /HTTP\/1\.1 (5\d\d) [A-Za-z ]+/g, facts: (m) => ({ status: Number(m[1]) }) },
  {
    label: "rpc_error",
    pattern: /"code": (-32\d\d\d), "message": "([^"\n]{1,60})"/g,
    facts: (m) => ({ code: Number(m[1]), message: m[2] as string }),
  },
  { label: "pagination", pattern: /Showing 1–(\d+) of (\d+) results/g, facts: (m) => ({ page_size: Number(m[1]), total: Number(m[2]) }) },
  { label: "empty_result", pattern: /"results": \[\]/g },
  {
    label: "traceback",
    pattern: /Traceback \(most recent call last\):\n(?:[ \t].*\n)*(\w+(?:Error|Exception)): .*/g,
    facts: (m) => ({ exception: m[1] as string }),
  },
  { label: "nonzero_exit", pattern: /\[exit code ([1-9]\d*)\]/g, facts: (m) => ({ exit_code: Number(m[1]) }) },
  { label: "permission_denied", pattern: /(\/[\w./-]+): Permission denied/g, facts: (m) => ({ path: m[1] as string }) },
  { label: "modal_dialog", pattern: /\[\d+\] dialog '([^'\n]{1,60})', modal=True/g, facts: (m) => ({ title: m[1] as string }) },
];

const cp = (text: string, utf16: number): number => codePointLength(text.slice(0, utf16));

function fakeDetect(trajectory: Trajectory): ControlLabel[] {
  const labels: ControlLabel[] = [];
  trajectory.turns.forEach((turn, index) => {
    for (const rule of RULES) {
      for (const m of turn.observation.matchAll(rule.pattern)) {
        const start = cp(turn.observation, m.index);
        const end = cp(turn.observation, m.index + m[0].length);
        labels.push({
          label: rule.label,
          turn: index,
          start,
          end,
          evidence: m[0],
          ...(rule.facts ? { facts: rule.facts(m as RegExpExecArray) } : {}),
        });
      }
    }
  });
  return labels;
}

function trajectory(domain: Domain, observations: string[], extra: Partial<Trajectory> = {}): Trajectory {
  return {
    id: `t-${domain}`,
    domain,
    source: { uri: "test://controls", format: "test" },
    system: "You simulate the environment.",
    task: "Do the task.",
    initialObservation: "ready",
    turns: observations.map((observation, i) => ({ action: `action ${i + 1}`, observation })),
    ...extra,
  };
}

const OK = '{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "42 items"}]}}';
const RATE_LIMITED = 'HTTP/1.1 429 Too Many Requests\nRetry-After: 30\n\n{"error": "slow down"}';

/** An MCP session: calls 3 and 5 are rate-limited, the rest succeed. */
const mcpSession = (): Trajectory => trajectory("mcp", [OK, OK, RATE_LIMITED, OK, RATE_LIMITED, OK]);

function label(labelName: ControlLabelName, turn: number, facts?: Record<string, string | number>): ControlLabel {
  return { label: labelName, turn, start: 0, end: 1, evidence: "x", ...(facts ? { facts } : {}) };
}

// ---------------------------------------------------------------------------------------------

describe("instruction templates", () => {
  it("writes ordinals and ordinal lists, runs as ranges", () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112].map(ordinal)).toEqual([
      "1st",
      "2nd",
      "3rd",
      "4th",
      "11th",
      "12th",
      "13th",
      "21st",
      "22nd",
      "23rd",
      "101st",
      "111th",
      "112th",
    ]);
    expect(ordinalList([3])).toBe("3rd");
    expect(ordinalList([5, 3])).toBe("3rd and 5th");
    expect(ordinalList([1, 3, 4, 5, 6, 9])).toBe("1st, 3rd to 6th and 9th");
    expect(ordinalList([1, 2, 4, 4])).toBe("1st, 2nd and 4th");
  });

  it("names turns the way each domain does", () => {
    expect(subjectFor("mcp", [2, 4]).text).toBe("the 3rd and 5th calls");
    expect(subjectFor("search", [0]).text).toBe("the 1st request");
    expect(subjectFor("terminal", [1]).text).toBe("the 2nd command");
    expect(subjectFor("swe", [1, 2, 3]).text).toBe("the 2nd to 4th commands");
    expect(subjectFor("web", [3]).text).toBe("the screen after the 4th action");
    expect(subjectFor("android", [0, 6]).text).toBe("the screens after the 1st and 7th actions");
    expect(subjectFor("os", [2, 2]).plural).toBe(false);
  });

  it("states the issue's example, and Retry-After only when the label read it", () => {
    const withRetry = [
      label("rate_limit", 2, { status: 429, retry_after: "30" }),
      label("rate_limit", 4, { status: 429, retry_after: "30" }),
    ];
    expect(kindSentence("mcp", "rate_limit", withRetry)).toBe(
      "The API rate-limits the agent: the 3rd and 5th calls return 429 Too Many Requests with Retry-After: 30.",
    );
    const without = [label("rate_limit", 2, { status: 429 }), label("rate_limit", 4, { status: 429 })];
    const sentence = kindSentence("mcp", "rate_limit", without) as string;
    expect(sentence).toBe("The API rate-limits the agent: the 3rd and 5th calls return 429 Too Many Requests.");
    expect(sentence).not.toMatch(/retry/i);
    expect(kindSentence("mcp", "rate_limit", [label("rate_limit", 0)])).toBe(
      "The API rate-limits the agent: the 1st call returns a rate-limit error.",
    );
  });

  it("has one sentence for every label kind in every domain, with its ordinals, and nothing for no labels", () => {
    for (const domain of DOMAINS) {
      for (const kind of CONTROL_LABELS) {
        const sentence = kindSentence(domain, kind, [label(kind, 1), label(kind, 3)]) as string;
        expect(sentence, `${domain}/${kind}`).toMatch(/^[A-Z][^.]*: the .*2nd and 4th .*\.$/);
        expect(sentence.split(/\.\s/).length, `${domain}/${kind} is one sentence`).toBe(1);
        expect(sentence.length, `${domain}/${kind} is short`).toBeLessThan(140);
        expect(sentence, `${domain}/${kind} states no number it was not given`).not.toMatch(/\d(?!nd|th)/);
        expect(kindSentence(domain, kind, [])).toBeUndefined();
      }
    }
  });

  it("states each template's facts when present, and only then", () => {
    const cases: [ControlLabelName, Domain, Record<string, string | number>, string][] = [
      ["http_error", "mcp", { status: 503 }, "The API fails with HTTP errors: the 2nd call returns 503 Service Unavailable."],
      [
        "rpc_error",
        "mcp",
        { code: -32602, message: "Invalid params" },
        "The server answers with JSON-RPC errors: the 2nd call returns error -32602 (Invalid params).",
      ],
      [
        "pagination",
        "search",
        { page_size: 10, total: 57 },
        "Results are paginated: the 2nd request returns one page of results (10 per page, 57 in total).",
      ],
      ["pagination", "search", { page_size: 10 }, "Results are paginated: the 2nd request returns one page of results (10 per page)."],
      ["empty_result", "search", {}, "Results come back empty: the 2nd request returns no results."],
      [
        "permission_denied",
        "terminal",
        { path: "/etc/shadow" },
        "Access is denied: the 2nd command fails with Permission denied on /etc/shadow.",
      ],
      ["disk_full", "terminal", {}, "The disk is full: the 2nd command fails with No space left on device."],
      ["timeout", "terminal", { seconds: 120 }, "Operations time out: the 2nd command times out after 120 seconds."],
      [
        "killed",
        "terminal",
        { signal: "SIGKILL", exit_code: 137 },
        "Processes are killed: the 2nd command is killed by SIGKILL (exit code 137).",
      ],
      ["killed", "terminal", { exit_code: 137 }, "Processes are killed: the 2nd command is killed (exit code 137)."],
      [
        "not_found",
        "terminal",
        { command: "rg" },
        "What the agent asks for is missing: the 2nd command fails with a not-found error for rg.",
      ],
      ["nonzero_exit", "swe", { exit_code: 2 }, "Commands fail: the 2nd command exits with code 2."],
      ["nonzero_exit", "swe", {}, "Commands fail: the 2nd command exits with a non-zero status."],
      ["traceback", "swe", { exception: "KeyError" }, "Programs crash: the 2nd command ends in a traceback (KeyError)."],
      ["compile_error", "swe", { errors: 1 }, "The build fails: the 2nd command reports 1 compile error."],
      ["test_failure", "swe", { failed: 3, passed: 41 }, "Tests fail: the 2nd command reports 3 failing tests and 41 passing."],
      [
        "app_not_responding",
        "android",
        { app: "Clock" },
        "The app stops responding: the screen after the 2nd action shows an App Not Responding dialog for Clock.",
      ],
      ["app_crash", "android", {}, "The app crashes: the screen after the 2nd action shows a crash dialog."],
      [
        "permission_prompt",
        "android",
        { permission: "location" },
        "The system asks for permission: the screen after the 2nd action shows a permission prompt for location.",
      ],
      ["error_page", "web", { status: 404 }, "Pages fail to load: the screen after the 2nd action shows an error page (404 Not Found)."],
      [
        "modal_dialog",
        "os",
        { title: "Save changes?" },
        'Pop-ups interrupt the agent: the screen after the 2nd action shows a modal dialog titled "Save changes?".',
      ],
    ];
    for (const [kind, domain, facts, expected] of cases) expect(kindSentence(domain, kind, [label(kind, 1, facts)])).toBe(expected);
    // Ill-formed or overlong facts are left out, never cut or guessed.
    expect(kindSentence("mcp", "http_error", [label("http_error", 1, { status: "abc" })])).toBe(
      "The API fails with HTTP errors: the 2nd call returns an HTTP error.",
    );
    expect(kindSentence("os", "modal_dialog", [label("modal_dialog", 1, { title: "x".repeat(61) })])).toBe(
      "Pop-ups interrupt the agent: the screen after the 2nd action shows a modal dialog.",
    );
    expect(kindSentence("terminal", "permission_denied", [label("permission_denied", 1, { path: "a\nb" })])).not.toContain("a\nb");
  });

  it("gives labels with different facts their own clauses, and past three only the facts they share", () => {
    const mixed = [
      label("http_error", 1, { status: 500 }),
      label("http_error", 3, { status: 503 }),
      label("http_error", 5, { status: 503 }),
    ];
    expect(kindSentence("mcp", "http_error", mixed)).toBe(
      "The API fails with HTTP errors: the 2nd call returns 500 Internal Server Error; the 4th and 6th calls return 503 Service Unavailable.",
    );
    const many = [1, 2, 3, 4].map((code, turn) => label("nonzero_exit", turn, { exit_code: code }));
    expect(kindSentence("terminal", "nonzero_exit", many)).toBe("Commands fail: the 1st to 4th commands exit with a non-zero status.");
  });

  it("has a normal instruction per domain", () => {
    for (const domain of DOMAINS) expect(NORMAL_INSTRUCTION[domain]).toMatch(/^The environment behaves normally: every \w+ /);
    expect(NORMAL_INSTRUCTION.mcp).toBe("The environment behaves normally: every call succeeds and returns complete results.");
  });
});

describe("building an instruction", () => {
  it("states the labels of a trajectory, one sentence per kind in a fixed order, each claim tied to its evidence span", () => {
    const session = trajectory("mcp", [
      OK,
      '{"error": {"code": -32602, "message": "Invalid params"}}',
      RATE_LIMITED,
      "HTTP/1.1 503 Service Unavailable\n",
      RATE_LIMITED,
    ]);
    const labels = fakeDetect(session);
    const instruction = buildInstruction(session, [...labels].reverse()) as ControlInstruction;
    expect(instruction.kind).toBe("controls");
    expect(instruction.text).toBe(
      "The API rate-limits the agent: the 3rd and 5th calls return 429 Too Many Requests with Retry-After: 30. " +
        "The API fails with HTTP errors: the 4th call returns 503 Service Unavailable. " +
        "The server answers with JSON-RPC errors: the 2nd call returns error -32602 (Invalid params).",
    );
    expect(instruction.sentences.map((s) => s.label)).toEqual(["rate_limit", "http_error", "rpc_error"]);
    expect(instruction.claims).toEqual(instruction.sentences.flatMap((s) => s.claims));
    for (const sentence of instruction.sentences) {
      for (const claim of sentence.claims) {
        expect(claim.label).toBe(sentence.label);
        expect(sentence.text).toContain(ordinal(claim.turn + 1));
        const observation = session.turns[claim.turn]?.observation as string;
        const evidence = labels.find((l) => l.label === claim.label && l.turn === claim.turn && l.start === claim.start)?.evidence;
        expect(codePointSlice(observation, claim.start, claim.end)).toBe(evidence);
      }
    }
    expect(instruction.claims).toHaveLength(labels.length);
    expect(checkInstruction(instruction, session, fakeDetect)).toEqual([]);
  });

  it("uses code-point spans, as a trainer's Python slices", () => {
    const session = trajectory("mcp", [OK, `🚀🚀 ${RATE_LIMITED}`]);
    const [found] = fakeDetect(session);
    expect(found?.start).toBe(3); // two astral code points and a space, though 5 UTF-16 units
    const instruction = buildInstruction(session, fakeDetect(session)) as ControlInstruction;
    expect(instruction.text).toBe("The API rate-limits the agent: the 2nd call returns 429 Too Many Requests with Retry-After: 30.");
    expect(checkInstruction(instruction, session, fakeDetect)).toEqual([]);
  });

  it("never states a label whose span does not hold its evidence, nor one outside the trajectory; undefined for nothing", () => {
    const session = mcpSession();
    const [good] = fakeDetect(session) as [ControlLabel];
    const shifted = { ...good, turn: 3 };
    const outside = { ...good, turn: 9 };
    const wrongEvidence = { ...good, evidence: "HTTP/1.1 200 OK" };
    expect(buildInstruction(session, [shifted, outside, wrongEvidence])).toBeUndefined();
    expect(buildInstruction(session, [])).toBeUndefined();
    expect(buildInstruction(session, [good, good, shifted])?.claims).toEqual([
      { label: "rate_limit", turn: 2, start: good.start, end: good.end },
    ]);
  });
});

describe("faithfulness", () => {
  it("tamper: when an observation no longer shows the edge case, the check reports it and a rebuilt instruction no longer states it", () => {
    const session = mcpSession();
    const instruction = buildInstruction(session, fakeDetect(session)) as ControlInstruction;
    expect(instruction.text).toContain("the 3rd and 5th calls");

    const tampered = structuredClone(session);
    (tampered.turns[4] as Trajectory["turns"][number]).observation = OK;
    const problems = checkInstruction(instruction, tampered, fakeDetect);
    expect(problems.some((p) => p.startsWith("rate_limit at turn 4") && p.includes("no longer shows it"))).toBe(true);

    const rebuilt = buildInstruction(tampered, fakeDetect(tampered)) as ControlInstruction;
    expect(rebuilt.text).toBe("The API rate-limits the agent: the 3rd call returns 429 Too Many Requests with Retry-After: 30.");
    expect(rebuilt.claims.map((c) => c.turn)).toEqual([2]);
    expect(checkInstruction(rebuilt, tampered, fakeDetect)).toEqual([]);
    expect(faithfulInstruction(tampered, fakeDetect).instruction?.text).toBe(rebuilt.text);

    // Both edge cases gone: nothing to state, the instruction is dropped.
    (tampered.turns[2] as Trajectory["turns"][number]).observation = OK;
    expect(buildInstruction(tampered, fakeDetect(tampered))).toBeUndefined();
    expect(faithfulInstruction(tampered, fakeDetect).instruction).toBeUndefined();
  });

  it("tamper: a fact that changed (another Retry-After) or a span that moved fails the check", () => {
    const session = mcpSession();
    const instruction = buildInstruction(session, fakeDetect(session)) as ControlInstruction;

    const otherFact = structuredClone(session);
    (otherFact.turns[4] as Trajectory["turns"][number]).observation = RATE_LIMITED.replace("Retry-After: 30", "Retry-After: 60");
    const factProblems = checkInstruction(instruction, otherFact, fakeDetect);
    expect(factProblems).toHaveLength(1);
    expect(factProblems[0]).toContain("does not state what its evidence shows");
    expect(buildInstruction(otherFact, fakeDetect(otherFact))?.text).toBe(
      "The API rate-limits the agent: the 3rd call returns 429 Too Many Requests with Retry-After: 30; the 5th call returns 429 Too Many Requests with Retry-After: 60.",
    );

    const moved = structuredClone(session);
    (moved.turns[2] as Trajectory["turns"][number]).observation = `note\n${RATE_LIMITED}`;
    expect(checkInstruction(instruction, moved, fakeDetect).some((p) => p.startsWith("rate_limit at turn 2"))).toBe(true);

    const shortened = structuredClone(session);
    (shortened.turns[4] as Trajectory["turns"][number]).observation = "HTTP/1.1";
    expect(checkInstruction(instruction, shortened, fakeDetect).some((p) => p.includes("is not inside the observation"))).toBe(true);
    shortened.turns.length = 3;
    expect(checkInstruction(instruction, shortened, fakeDetect).some((p) => p.includes("is not a turn of the trajectory"))).toBe(true);
  });

  it("refuses an edited instruction: text not its sentences, a claim moved to another sentence, a claim the detector never made", () => {
    const session = mcpSession();
    const instruction = buildInstruction(session, fakeDetect(session)) as ControlInstruction;
    expect(checkInstruction({ ...instruction, text: `${instruction.text} Every other call succeeds.` }, session, fakeDetect)).toContain(
      "the text is not its sentences joined",
    );
    const wrongKind = structuredClone(instruction);
    (wrongKind.sentences[0] as ControlInstruction["sentences"][number]).label = "http_error";
    expect(checkInstruction(wrongKind, session, fakeDetect).some((p) => p.includes("claimed by the sentence about http_error"))).toBe(true);
    const invented = structuredClone(instruction);
    invented.sentences[0]?.claims.push({ label: "rate_limit", turn: 0, start: 0, end: 10 });
    invented.claims = invented.sentences.flatMap((s) => s.claims);
    expect(checkInstruction(invented, session, fakeDetect).some((p) => p.startsWith("rate_limit at turn 0"))).toBe(true);
  });

  it("leak: an instruction holding 40 characters of an observation is refused, its own short evidence is not", () => {
    const observation = "total 48\ndrwxr-xr-x  5 agent agent 4096 Jan 10 12:00 src\n-rw-r--r--  1 agent agent 1870 Jan 10 12:00 setup.py\n";
    const session = trajectory("terminal", [observation, "bash: /etc/shadow: Permission denied\n[exit code 1]"]);
    const instruction = buildInstruction(session, fakeDetect(session)) as ControlInstruction;
    expect(instruction.text).toBe(
      "Access is denied: the 2nd command fails with Permission denied on /etc/shadow. Commands fail: the 2nd command exits with code 1.",
    );
    expect(checkInstruction(instruction, session, fakeDetect)).toEqual([]);

    const copied = observation.slice(9, 49);
    expect(copied).toHaveLength(40);
    const leaky = structuredClone(instruction);
    const first = leaky.sentences[0] as ControlInstruction["sentences"][number];
    first.text = `${first.text.slice(0, -1)}, after listing ${copied}.`;
    leaky.text = leaky.sentences.map((s) => s.text).join(" ");
    const problems = checkInstruction(leaky, session, fakeDetect);
    expect(problems.some((p) => p.includes("verbatim") && p.includes("turn 0's observation"))).toBe(true);

    // The initial observation counts too; 23 characters do not.
    expect(verbatimLeaks(`see ${"x".repeat(3)}${copied.slice(0, 23)}!`, [{ name: "o", text: observation }], [])).toEqual([]);
    expect(verbatimLeaks(`see ${copied.slice(0, 24)}!`, [{ name: "o", text: observation }], [])).toHaveLength(1);
    const withInitial = trajectory("terminal", ["[exit code 1]"], { initialObservation: observation });
    const quoted: ControlInstruction = {
      kind: "controls",
      text: `Commands fail: the 1st command exits with code 1, listing ${copied}.`,
      claims: [{ label: "nonzero_exit", turn: 0, start: 0, end: 13 }],
      sentences: [
        {
          label: "nonzero_exit",
          text: `Commands fail: the 1st command exits with code 1, listing ${copied}.`,
          claims: [{ label: "nonzero_exit", turn: 0, start: 0, end: 13 }],
        },
      ],
    };
    expect(checkInstruction(quoted, withInitial, fakeDetect).some((p) => p.includes("of the initial observation verbatim"))).toBe(true);
  });

  it("leak: of a long evidence only the first and last lines, capped, may be quoted", () => {
    const frames = Array.from(
      { length: 8 },
      (_, i) => `  File "/work/repo/src/package/module_${i}.py", line ${10 + i}, in function_${i}\n    result = compute_value(${i})\n`,
    ).join("");
    const traceback = `Traceback (most recent call last):\n${frames}ValueError: invalid literal for int() with base 10: 'abc'`;
    expect(traceback.length).toBeGreaterThan(300);
    const session = trajectory("swe", ["ok", traceback]);
    const labels = fakeDetect(session);
    expect(labels.map((l) => l.label)).toEqual(["traceback"]);
    const instruction = buildInstruction(session, labels) as ControlInstruction;
    expect(instruction.text).toBe("Programs crash: the 2nd command ends in a traceback (ValueError).");
    expect(checkInstruction(instruction, session, fakeDetect)).toEqual([]);

    const sources = [{ name: "turn 1's observation", text: traceback }];
    const quotes = allowedQuotes(labels);
    expect(quotes).toContain("ValueError: invalid literal for int() with base 10: 'abc'");
    // The final line: fine. The whole traceback, or a frame from its middle: refused.
    expect(verbatimLeaks(`It ends with ValueError: invalid literal for int() with base 10: 'abc'.`, sources, quotes)).toEqual([]);
    expect(verbatimLeaks(`It crashes: ${traceback}`, sources, quotes).length).toBeGreaterThan(0);
    expect(verbatimLeaks(`It crashes in ${frames.split("\n")[4]}.`, sources, quotes).length).toBe(1);
    // The cap: an 80-code-point prefix of a long line.
    const long = `Error: ${"y".repeat(200)}`;
    const capped = allowedQuotes([{ label: "traceback", turn: 0, start: 0, end: 207, evidence: long }], 80);
    expect(capped).toEqual([long.slice(0, 80)]);
    expect(verbatimLeaks(`Says ${long.slice(0, 80)}.`, [{ name: "o", text: long }], capped)).toEqual([]);
    expect(verbatimLeaks(`Says ${long.slice(0, 120)}.`, [{ name: "o", text: long }], capped)).toHaveLength(1);
  });

  // Its speed is not judged here (issue 36: no clock in tests); a 1.4 MB observation is the size
  // that matters, and a search gone quadratic on it would be a hang, caught by the test's hang net.
  it("finds leaks in long observations (1.4 MB)", () => {
    const words = Array.from({ length: 200_000 }, (_, i) => `w${(i * 7919) % 100_003}`).join(" ");
    const text = `The API rate-limits the agent: ${words.slice(500_000, 500_030)} and more.`;
    const problems = verbatimLeaks(text, [{ name: "big", text: words }], []);
    expect(problems).toHaveLength(1);
  });
});

describe("the counterfactual", () => {
  it("keeps the normal turns before the first labelled one, under the id <id>#normal and the normal instruction", () => {
    const session = mcpSession();
    const labels = fakeDetect(session);
    const copy = counterfactualOf(session, labels) as Trajectory;
    expect(copy.id).toBe("t-mcp#normal");
    expect(copy.turns).toEqual(session.turns.slice(0, 2));
    expect([copy.system, copy.task, copy.initialObservation, copy.domain, copy.source]).toEqual([
      session.system,
      session.task,
      session.initialObservation,
      session.domain,
      session.source,
    ]);
    expect(session.turns).toHaveLength(6);
    // "Behave normally" is faithful to the copy, and not to the original.
    const normal = normalInstruction(copy.domain);
    expect(normal.text).toBe(NORMAL_INSTRUCTION.mcp);
    expect(checkInstruction(normal, copy, fakeDetect)).toEqual([]);
    expect(checkInstruction(normal, session, fakeDetect)).toHaveLength(2);
  });

  it("has none when the first turn is labelled, or without labels", () => {
    const session = trajectory("mcp", [RATE_LIMITED, OK]);
    expect(counterfactualOf(session, fakeDetect(session))).toBeUndefined();
    expect(counterfactualOf(mcpSession(), [])).toBeUndefined();
  });
});

describe("the draw", () => {
  const settings = { share: 0.3, counterfactual_share: 0.2, seed: 11 };
  const labelled = [label("rate_limit", 2)];
  const ids = Array.from({ length: 10_000 }, (_, i) => `traj-${i}`);

  it("is deterministic per id and seed, in [0, 1)", () => {
    const first = ids.map((id) => selectControl(id, labelled, settings));
    expect(ids.map((id) => selectControl(id, labelled, settings))).toEqual(first);
    for (const id of ids.slice(0, 100)) {
      const u = controlDraw(11, id, "instruction");
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
    }
    expect(controlDraw(11, "a", "instruction")).not.toBe(controlDraw(12, "a", "instruction"));
    expect(controlDraw(11, "a", "instruction")).not.toBe(controlDraw(11, "a", "counterfactual"));
  });

  it("instructs about `share` of labelled trajectories and gives `counterfactual_share` counterfactuals, independently", () => {
    const picks = ids.map((id) => selectControl(id, labelled, settings));
    const rate = (f: (p: { instructed: boolean; counterfactual: boolean }) => boolean) => picks.filter(f).length / ids.length;
    // 4 standard deviations or less: sqrt(0.3 * 0.7 / 10_000) ≈ 0.0046.
    expect(Math.abs(rate((p) => p.instructed) - 0.3)).toBeLessThan(0.02);
    expect(Math.abs(rate((p) => p.counterfactual) - 0.2)).toBeLessThan(0.02);
    expect(Math.abs(rate((p) => p.instructed && p.counterfactual) - 0.3 * 0.2)).toBeLessThan(0.012);
    const instructed = picks.filter((p) => p.instructed);
    expect(Math.abs(instructed.filter((p) => p.counterfactual).length / instructed.length - 0.2)).toBeLessThan(0.035);
  });

  it("gives unlabelled trajectories nothing, and no counterfactual when the first turn is labelled; rejects bad shares", () => {
    const all = { share: 1, counterfactual_share: 1, seed: 0 };
    expect(selectControl("a", [], all)).toEqual({ instructed: false, counterfactual: false });
    expect(selectControl("a", [label("timeout", 0), label("timeout", 3)], all)).toEqual({ instructed: true, counterfactual: false });
    expect(selectControl("a", [label("timeout", 1)], all)).toEqual({ instructed: true, counterfactual: true });
    expect(selectControl("a", labelled, { share: 0, counterfactual_share: 0, seed: 0 })).toEqual({
      instructed: false,
      counterfactual: false,
    });
    expect(() => selectControl("a", labelled, { ...all, share: 1.5 })).toThrow(/share/);
    expect(() => selectControl("a", labelled, { ...all, counterfactual_share: Number.NaN })).toThrow(/counterfactual_share/);
  });
});

describe("the optional teacher rephrase", () => {
  const fakeTeacher = (reply: string, requests: ChatRequest[] = []): TeacherClient => ({
    complete: async (request) => {
      requests.push(request);
      return { ok: true, texts: [reply], finishReasons: ["stop"] } as Awaited<ReturnType<TeacherClient["complete"]>>;
    },
    stats: () => ({}) as ReturnType<TeacherClient["stats"]>,
  });

  it("keeps a rewording that states the same facts, seeded; falls back to the template otherwise", async () => {
    const session = mcpSession();
    const instruction = buildInstruction(session, fakeDetect(session)) as ControlInstruction;
    const requests: ChatRequest[] = [];
    const good = "Calls 3 and 5 hit the rate limit: they come back with 429 Too Many Requests and Retry-After: 30.";
    const kept = await rephraseInstruction(fakeTeacher(good, requests), instruction, session, fakeDetect, { seed: 5 });
    expect(kept.problems).toEqual([]);
    expect(kept.instruction).toMatchObject({ text: good, rephrased: true, claims: instruction.claims });
    expect(requests[0]).toMatchObject({ n: 1, seed: 5 });
    expect(requests[0]?.messages[1]?.content).toBe(instruction.text);

    const wrongTurn = await rephraseInstruction(fakeTeacher(good.replace("5", "6")), instruction, session, fakeDetect, { seed: 5 });
    expect(wrongTurn.instruction).toBe(instruction);
    expect(wrongTurn.problems.join("\n")).toMatch(/drops 5[\s\S]*states 6/);

    const leaky = await rephraseInstruction(fakeTeacher(`${good} The first call said ${OK}`), instruction, session, fakeDetect, {
      seed: 5,
    });
    expect(leaky.instruction).toBe(instruction);
    expect(leaky.problems.some((p) => p.includes("verbatim"))).toBe(true);

    // A kept rewording is still checked against the observations: tampering fails it too.
    const tampered = structuredClone(session);
    (tampered.turns[4] as Trajectory["turns"][number]).observation = OK;
    expect(checkInstruction(kept.instruction, tampered, fakeDetect).some((p) => p.startsWith("rate_limit at turn 4"))).toBe(true);
  });

  it("compares numbers and quoted values", () => {
    expect(
      rephraseProblems('the 2nd screen shows a modal dialog titled "Save changes?".', "After action 2 a modal pops up: Save changes?"),
    ).toEqual([]);
    expect(rephraseProblems('the 2nd screen shows a modal dialog titled "Save changes?".', "After action 2 a modal pops up.")).toEqual([
      'the rephrasing drops "Save changes?"',
    ]);
    expect(rephraseProblems("x", " ")).toEqual(["the rephrasing is empty"]);
  });
});
