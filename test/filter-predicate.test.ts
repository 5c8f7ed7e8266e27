import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { UserError } from "../src/core/errors.ts";
import { applyFilters, compileFilters, type FilterConfig, filtersSchema } from "../src/filter/filters.ts";
import {
  compilePredicate,
  describePredicate,
  explainFailure,
  joinPath,
  type Predicate,
  predicateFields,
  predicateSchema,
} from "../src/filter/predicate.ts";
import type { RecordFacts } from "../src/filter/record-facts.ts";

function facts(overrides: Partial<RecordFacts> = {}): RecordFacts {
  return {
    id: "swe-0001",
    domain: "swe",
    source: "swe",
    format: "swe-agent",
    task_id: "django__django-11099",
    attempt: "1",
    agent: "swe-agent",
    model: "gpt-4o",
    outcome: "resolved",
    reward: 1,
    failure_mode: null,
    turns: 12,
    tokens: 4000,
    loss_tokens: 1000,
    trained_share: 0.25,
    classes: { Action: 0.5, Echo: 0.1 },
    labels: ["timeout"],
    scores: { judge: 0.9, noise: null },
    ...overrides,
  };
}

const holds = (predicate: Predicate, record: RecordFacts = facts()) => compilePredicate(predicate, "p")(record);

/** The refusal message for a predicate: by the schema (zod path) and by compilePredicate (same text). */
function refusal(predicate: unknown, path = "filters[1].keep"): string {
  const parsed = predicateSchema.safeParse(predicate);
  expect(parsed.success).toBe(false);
  try {
    compilePredicate(predicate as Predicate, path);
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    const message = (err as Error).message;
    // The schema reports the same first issue, at the same place.
    const first = parsed.error?.issues[0];
    expect(message).toBe(`${joinPath(path, first?.path ?? [])}: ${first?.message}`);
    return message;
  }
  throw new Error("predicate was accepted");
}

describe("predicate comparisons", () => {
  it("eq / ne on text and numbers", () => {
    expect(holds({ field: "outcome", eq: "resolved" })).toBe(true);
    expect(holds({ field: "outcome", eq: "unresolved" })).toBe(false);
    expect(holds({ field: "outcome", ne: "unresolved" })).toBe(true);
    expect(holds({ field: "outcome", ne: "resolved" })).toBe(false);
    expect(holds({ field: "turns", eq: 12 })).toBe(true);
    expect(holds({ field: "turns", eq: 11 })).toBe(false);
    expect(holds({ field: "turns", ne: 11 })).toBe(true);
  });

  it("in / not_in", () => {
    expect(holds({ field: "outcome", in: ["resolved", "success"] })).toBe(true);
    expect(holds({ field: "outcome", in: ["unresolved", "failure"] })).toBe(false);
    expect(holds({ field: "outcome", not_in: ["unresolved", "failure"] })).toBe(true);
    expect(holds({ field: "outcome", not_in: ["resolved"] })).toBe(false);
    expect(holds({ field: "turns", in: [3, 12] })).toBe(true);
    expect(holds({ field: "turns", in: [3, 4] })).toBe(false);
  });

  it("gt / gte / lt / lte at and around the bound", () => {
    expect(holds({ field: "turns", gt: 11 })).toBe(true);
    expect(holds({ field: "turns", gt: 12 })).toBe(false);
    expect(holds({ field: "turns", gte: 12 })).toBe(true);
    expect(holds({ field: "turns", gte: 13 })).toBe(false);
    expect(holds({ field: "turns", lt: 13 })).toBe(true);
    expect(holds({ field: "turns", lt: 12 })).toBe(false);
    expect(holds({ field: "turns", lte: 12 })).toBe(true);
    expect(holds({ field: "turns", lte: 11 })).toBe(false);
    expect(holds({ field: "trained_share", gte: 0.25 })).toBe(true);
  });

  it("matches tests the regex anywhere in the text, and repeatedly gives the same answer", () => {
    const predicate = compilePredicate({ field: "task_id", matches: "^django__" }, "p");
    expect(predicate(facts())).toBe(true);
    expect(predicate(facts())).toBe(true);
    expect(predicate(facts({ task_id: "sympy__sympy-1" }))).toBe(false);
    expect(holds({ field: "model", matches: "4o" })).toBe(true);
  });

  it("exists", () => {
    expect(holds({ field: "agent", exists: true })).toBe(true);
    expect(holds({ field: "agent", exists: false })).toBe(false);
    expect(holds({ field: "failure_mode", exists: false })).toBe(true);
    expect(holds({ field: "failure_mode", exists: true })).toBe(false);
  });

  it("has / has_any / has_all on labels", () => {
    const record = facts({ labels: ["timeout", "empty-output"] });
    expect(holds({ field: "labels", has: "timeout" }, record)).toBe(true);
    expect(holds({ field: "labels", has: "crash" }, record)).toBe(false);
    expect(holds({ field: "labels", has_any: ["crash", "empty-output"] }, record)).toBe(true);
    expect(holds({ field: "labels", has_any: ["crash", "oom"] }, record)).toBe(false);
    expect(holds({ field: "labels", has_all: ["timeout", "empty-output"] }, record)).toBe(true);
    expect(holds({ field: "labels", has_all: ["timeout", "crash"] }, record)).toBe(false);
    expect(holds({ field: "labels", has_any: ["timeout"] }, facts({ labels: [] }))).toBe(false);
  });

  it("classes.<class> is a share, 0 when the record has none of that class", () => {
    expect(holds({ field: "classes.Action", gte: 0.5 })).toBe(true);
    expect(holds({ field: "classes.Echo", lt: 0.2 })).toBe(true);
    expect(holds({ field: "classes.Retrieval", eq: 0 })).toBe(true);
    expect(holds({ field: "classes.Retrieval", exists: true })).toBe(true);
  });

  it("scores.<name> is the score, null when the scorer gave none or is absent", () => {
    expect(holds({ field: "scores.judge", gte: 0.7 })).toBe(true);
    expect(holds({ field: "scores.judge", gte: 0.95 })).toBe(false);
    expect(holds({ field: "scores.noise", eq: null })).toBe(true);
    expect(holds({ field: "scores.other", exists: false })).toBe(true);
    // An inherited property is not a score.
    expect(holds({ field: "scores.constructor", exists: false })).toBe(true);
  });
});

describe("null semantics", () => {
  const none = facts({ outcome: null, reward: null, scores: {} });

  it("every comparison with null is false", () => {
    for (const predicate of [
      { field: "outcome", eq: "resolved" },
      { field: "outcome", ne: "resolved" },
      { field: "outcome", in: ["resolved"] },
      { field: "outcome", not_in: ["resolved"] },
      { field: "outcome", matches: "." },
      { field: "outcome", ne: null },
      { field: "outcome", exists: true },
      { field: "reward", gt: 0 },
      { field: "reward", gte: 0 },
      { field: "reward", lt: 1 },
      { field: "reward", lte: 1 },
      { field: "scores.judge", lt: 0.7 },
    ] satisfies Predicate[]) {
      expect(holds(predicate, none), JSON.stringify(predicate)).toBe(false);
    }
  });

  it("but exists: false and eq: null, and not: of a comparison", () => {
    expect(holds({ field: "outcome", exists: false }, none)).toBe(true);
    expect(holds({ field: "outcome", eq: null }, none)).toBe(true);
    expect(holds({ not: { field: "outcome", eq: "resolved" } }, none)).toBe(true);
    expect(holds({ field: "outcome", eq: null })).toBe(false);
    expect(holds({ field: "outcome", ne: null })).toBe(true);
  });
});

describe("combinators", () => {
  const yes: Predicate = { field: "outcome", eq: "resolved" };
  const no: Predicate = { field: "turns", lt: 3 };

  it("all / any / not", () => {
    expect(holds({ all: [yes, yes] })).toBe(true);
    expect(holds({ all: [yes, no] })).toBe(false);
    expect(holds({ any: [no, yes] })).toBe(true);
    expect(holds({ any: [no, no] })).toBe(false);
    expect(holds({ not: yes })).toBe(false);
    expect(holds({ not: no })).toBe(true);
    expect(holds({ all: [yes, { any: [no, { not: no }] }] })).toBe(true);
    expect(holds({ all: [yes, { any: [no, { not: yes }] }] })).toBe(false);
  });
});

describe("refused at config time", () => {
  it("an unknown field, with the path and the field list", () => {
    const message = refusal({ any: [{ field: "outcom", in: ["resolved"] }] });
    expect(message).toMatch(
      /^filters\[1\]\.keep\.any\[0\]: unknown field "outcom"; fields: id, domain, .*outcome.*, classes\.<class>, scores\.<name>$/,
    );
  });

  it("an unknown turn class and a malformed scorer name", () => {
    expect(refusal({ field: "classes.Ech", gt: 0.1 })).toMatch(/unknown turn class "Ech" in "classes.Ech"; classes: Retrieval, .*Echo/);
    expect(refusal({ field: "scores.", gt: 0.1 })).toMatch(/a scorer name is/);
    expect(refusal({ field: "meta.x", eq: "y" })).toMatch(/unknown field "meta.x"/);
  });

  it("a comparison the field's type has no sense for", () => {
    expect(refusal({ field: "outcome", gt: 1 })).toBe(
      "filters[1].keep: gt does not apply to outcome, a text field; it takes eq, ne, in, not_in, matches, exists",
    );
    expect(refusal({ field: "turns", matches: "1" })).toMatch(/matches does not apply to turns, a number field/);
    expect(refusal({ field: "labels", eq: "timeout" })).toMatch(
      /eq does not apply to labels, a list field; it takes has, has_any, has_all/,
    );
    expect(refusal({ field: "agent", has: "x" })).toMatch(/has does not apply to agent/);
  });

  it("a value of the wrong type", () => {
    expect(refusal({ field: "attempt", eq: 1 })).toBe('filters[1].keep: attempt is text: write eq: "1" (quoted), not 1');
    expect(refusal({ field: "turns", in: [3, "4"] })).toMatch(/turns is a number: in needs numbers, not "4"/);
    expect(refusal({ field: "turns", gt: "3" })).toMatch(/^filters\[1\]\.keep\.gt: Invalid input: expected number/);
  });

  it("an invalid regex", () => {
    expect(refusal({ all: [{ field: "model", matches: "gpt-(4" }] })).toMatch(
      /^filters\[1\]\.keep\.all\[0\]: matches: invalid regular expression "gpt-\(4": /,
    );
  });

  it("empty all / any / in lists", () => {
    expect(refusal({ all: [] })).toBe("filters[1].keep.all: all: needs at least one entry");
    expect(refusal({ not: { any: [] } })).toBe("filters[1].keep.not.any: any: needs at least one entry");
    expect(refusal({ field: "outcome", in: [] })).toMatch(/in: needs at least one entry/);
  });

  it("malformed nodes", () => {
    expect(refusal({})).toMatch(/a predicate is one of all:, any:, not: or field:/);
    expect(refusal({ field: "turns" })).toBe(
      'filters[1].keep: field "turns" needs one comparison: eq, ne, in, not_in, gt, gte, lt, lte, exists',
    );
    expect(refusal({ field: "turns", gte: 3, lte: 9 })).toMatch(/one comparison per predicate, not gte and lte; combine them with all:/);
    expect(refusal({ eq: "x" })).toMatch(/eq needs a field: to compare/);
    expect(refusal({ all: [{ field: "turns", gt: 1 }], field: "turns" })).toMatch(/not all and field together/);
    expect(refusal({ not: { field: "turns", gt: 1 }, eq: 3 })).toMatch(/not: takes no comparison beside it/);
    expect(refusal({ field: "turns", gtee: 3 })).toMatch(
      /unknown key "gtee"; a predicate is all:, any:, not:, or field: with one of eq, ne/,
    );
  });

  it("negative control: the same shapes, written right, are accepted", () => {
    for (const predicate of [
      { any: [{ field: "outcome", in: ["resolved"] }] },
      { field: "classes.Echo", gt: 0.1 },
      { field: "scores.judge-v2", gt: 0.1 },
      { field: "outcome", in: ["resolved", "success"] },
      { field: "attempt", eq: "1" },
      { field: "turns", in: [3, 4] },
      { all: [{ field: "model", matches: "gpt-(4|5)" }] },
      {
        all: [
          { field: "turns", gte: 3 },
          { field: "turns", lte: 9 },
        ],
      },
      { field: "labels", has: "timeout" },
    ]) {
      expect(predicateSchema.safeParse(predicate).success, JSON.stringify(predicate)).toBe(true);
      expect(() => compilePredicate(predicate as Predicate, "p")).not.toThrow();
    }
  });
});

describe("explainFailure", () => {
  const explain = (predicate: Predicate, record = facts()) => explainFailure(predicate, record);

  it("is undefined when the record satisfies the predicate", () => {
    expect(explain({ field: "outcome", eq: "resolved" })).toBeUndefined();
  });

  it("states the value and the comparison it failed", () => {
    const unresolved = facts({ outcome: "unresolved" });
    expect(explain({ field: "outcome", in: ["resolved", "success"] }, unresolved)).toBe(
      'outcome is "unresolved", not in [resolved, success]',
    );
    expect(explain({ field: "outcome", eq: "resolved" }, unresolved)).toBe('outcome is "unresolved", not "resolved"');
    expect(explain({ field: "outcome", ne: "unresolved" }, unresolved)).toBe('outcome is "unresolved"');
    expect(explain({ field: "outcome", not_in: ["unresolved"] }, unresolved)).toBe('outcome is "unresolved", in [unresolved]');
    expect(explain({ field: "turns", gte: 20 })).toBe("turns is 12, not >= 20");
    expect(explain({ field: "model", matches: "^claude" })).toBe('model is "gpt-4o", does not match /^claude/');
    expect(explain({ field: "agent", exists: false })).toBe('agent is "swe-agent", not null');
    expect(explain({ field: "classes.Retrieval", gt: 0.1 })).toBe("classes.Retrieval is 0, not > 0.1");
  });

  it("says null when the field is null", () => {
    expect(explain({ field: "scores.judge", gte: 0.7 }, facts({ scores: {} }))).toBe("scores.judge is null");
    expect(explain({ field: "reward", gt: 0 }, facts({ reward: null }))).toBe("reward is null");
    expect(explain({ field: "failure_mode", exists: true })).toBe("failure_mode is null");
  });

  it("labels", () => {
    expect(explain({ field: "labels", has: "crash" })).toBe('labels are [timeout], without "crash"');
    expect(explain({ field: "labels", has_any: ["crash", "oom"] }, facts({ labels: [] }))).toBe("labels are empty, none of [crash, oom]");
    expect(explain({ field: "labels", has_all: ["timeout", "crash", "oom"] })).toBe("labels are [timeout], missing [crash, oom]");
  });

  it("combinators: the first failing child of all, every child of any, the inner facts of not", () => {
    expect(
      explain({
        all: [
          { field: "outcome", eq: "resolved" },
          { field: "turns", gte: 20 },
          { field: "tokens", lt: 10 },
        ],
      }),
    ).toBe("turns is 12, not >= 20");
    expect(
      explain({
        any: [
          { field: "turns", gte: 20 },
          { field: "scores.noise", gt: 0 },
        ],
      }),
    ).toBe("turns is 12, not >= 20; scores.noise is null");
    expect(explain({ not: { field: "labels", has: "timeout" } })).toBe('labels include "timeout"');
  });

  it("takes a compiled predicate too", () => {
    const compiled = compilePredicate({ field: "turns", lt: 5 }, "p");
    expect(explainFailure(compiled, facts())).toBe("turns is 12, not < 5");
    expect(explainFailure(compiled, facts({ turns: 2 }))).toBeUndefined();
  });
});

describe("describePredicate", () => {
  it("one line, parenthesized where nesting needs it", () => {
    expect(
      describePredicate({
        all: [
          { field: "outcome", in: ["resolved", "success"] },
          {
            any: [
              { field: "turns", gte: 3 },
              { field: "labels", has: "timeout" },
            ],
          },
          { not: { field: "scores.judge", lt: 0.7 } },
          { field: "reward", exists: true },
          { field: "agent", eq: null },
        ],
      }),
    ).toBe(
      'outcome in [resolved, success] and (turns >= 3 or labels has "timeout") and not (scores.judge < 0.7) and reward exists and agent is null',
    );
    expect(describePredicate({ field: "model", matches: "^gpt" })).toBe("model matches /^gpt/");
    expect(describePredicate({ field: "task_id", not_in: ["a b", "c"] })).toBe('task_id not in ["a b", c]');
  });

  it("predicateFields lists what a predicate reads", () => {
    expect(
      predicateFields({
        all: [
          { field: "scores.judge", gt: 0 },
          {
            not: {
              any: [
                { field: "turns", gt: 1 },
                { field: "scores.judge", lt: 1 },
              ],
            },
          },
        ],
      }),
    ).toEqual(["scores.judge", "turns"]);
  });
});

describe("filters", () => {
  it("refuses a filter with both or neither of keep / drop, a bad name, duplicate names", () => {
    const issues = (value: unknown) =>
      filtersSchema.safeParse(value).error?.issues.map((i) => `${joinPath("filters", i.path)}: ${i.message}`);
    const keep = { field: "turns", gte: 3 };
    expect(issues([{ name: "both", keep, drop: keep }])).toEqual(["filters[0]: a filter has exactly one of keep: or drop:"]);
    expect(issues([{ name: "neither" }])).toEqual(["filters[0]: a filter has exactly one of keep: or drop:"]);
    expect(issues([{ name: "Resolved_Only", keep }])?.[0]).toMatch(/^filters\[0\]\.name: a filter name is kebab-case/);
    expect(
      issues([
        { name: "a", keep },
        { name: "b", keep },
        { name: "a", drop: keep },
      ]),
    ).toEqual(['filters[2].name: duplicate filter name "a" (also [0])']);
    expect(issues([{ name: "a", keep: { any: [{ field: "outcom", eq: "x" }] } }])?.[0]).toMatch(
      /^filters\[0\]\.keep\.any\[0\]: unknown field "outcom"/,
    );
    // Negative control.
    expect(
      issues([
        { name: "a", keep },
        { name: "b-2", drop: keep },
      ]),
    ).toBeUndefined();
  });

  it("the first filter that drops wins, in config order, with its reason", () => {
    const filters = compileFilters([
      { name: "resolved-only", keep: { field: "outcome", in: ["resolved", "success"] } },
      { name: "judge", drop: { field: "scores.judge", lt: 0.7 } },
    ]);
    expect(filters.map((f) => f.description)).toEqual(["keep: outcome in [resolved, success]", "drop: scores.judge < 0.7"]);
    expect(applyFilters(filters, facts())).toBeUndefined();
    expect(applyFilters(filters, facts({ scores: { judge: 0.5 } }))).toEqual({ filter: "judge", reason: "scores.judge is 0.5, < 0.7" });
    expect(applyFilters(filters, facts({ outcome: "unresolved", scores: { judge: 0.5 } }))).toEqual({
      filter: "resolved-only",
      reason: 'outcome is "unresolved", not in [resolved, success]',
    });
    // A drop filter on a null score keeps the record: the comparison is false.
    expect(applyFilters(filters, facts({ scores: {} }))).toBeUndefined();
  });

  it("compileFilters names the path of a bad predicate that skipped the schema", () => {
    expect(() =>
      compileFilters([
        { name: "a", keep: { field: "turns", gt: 1 } },
        { name: "b", drop: { field: "turns", matches: "x" } },
      ]),
    ).toThrow(/^filters\[1\]\.drop: matches does not apply to turns, a number field/);
  });
});

describe("YAML round trip", () => {
  const yaml = `
filters:
  - name: resolved-swe
    keep:
      all:
        - { field: domain, eq: swe }
        - { field: outcome, in: [resolved, success] }
        - { field: turns, gte: 3 }
  - name: judge-noise
    drop:
      any:
        - { field: scores.judge, lt: 0.7 }
        - { field: labels, has_any: [harness-only, empty-output] }
        - not: { field: model, matches: "^(gpt|claude)" }
`;

  it("parses, validates, compiles and applies", () => {
    const parsed = filtersSchema.safeParse((parse(yaml) as { filters: unknown }).filters);
    expect(parsed.error).toBeUndefined();
    const filters = compileFilters(parsed.data as FilterConfig[]);
    expect(filters.map((f) => f.description)).toEqual([
      'keep: domain = "swe" and outcome in [resolved, success] and turns >= 3',
      "drop: scores.judge < 0.7 or labels has any of [harness-only, empty-output] or not (model matches /^(gpt|claude)/)",
    ]);
    expect(applyFilters(filters, facts())).toBeUndefined();
    expect(applyFilters(filters, facts({ domain: "terminal" }))).toEqual({
      filter: "resolved-swe",
      reason: 'domain is "terminal", not "swe"',
    });
    expect(applyFilters(filters, facts({ turns: 2 }))).toEqual({ filter: "resolved-swe", reason: "turns is 2, not >= 3" });
    expect(applyFilters(filters, facts({ labels: ["empty-output"] }))).toEqual({
      filter: "judge-noise",
      reason: 'labels include "empty-output"',
    });
    expect(applyFilters(filters, facts({ model: "llama-3" }))).toEqual({
      filter: "judge-noise",
      reason: 'model is "llama-3", does not match /^(gpt|claude)/',
    });
  });

  it("YAML's unquoted number for a text field is refused with a hint", () => {
    const parsed = filtersSchema.safeParse(parse("- name: first\n  keep: { field: attempt, eq: 1 }\n"));
    expect(parsed.error?.issues.map((i) => `${joinPath("filters", i.path)}: ${i.message}`)).toEqual([
      'filters[0].keep: attempt is text: write eq: "1" (quoted), not 1',
    ]);
  });
});
