/**
 * The person-checked table of synthesized rows (issue 37, "done when"):
 * test/fixtures/controls/synthesized-review.jsonl, written by synthesized-review.ts from the demo
 * data, each row with the person's judgement of whether its observation shows the edge case and
 * changes nothing else. Here the rows are recomputed: the table must be what the rules make today
 * (so the judgements are of these very observations), cover the seven domains with at least 100
 * rows, every row must pass the verifier, and the person must agree with at least 95% of them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SYNTHESIS_RULES, synthesizeTurn } from "../src/controls/synthesis/synthesize.ts";
import { DOMAINS } from "../src/core/trajectory.ts";
import { demoTrajectories, REVIEW_FILE, type ReviewRow, reviewRows } from "./fixtures/controls/synthesized-review.ts";

const AGREEMENT_TARGET = 0.95;
const TABLE: ReviewRow[] = readFileSync(REVIEW_FILE, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as ReviewRow);

describe("the person-checked synthesized rows", () => {
  it("are what the rules make on the demo data today, judged row by row", async () => {
    const computed = await reviewRows();
    const strip = ({ shows_edge_case: _s, changes_nothing_else: _c, note: _n, ...row }: ReviewRow) => row;
    expect(computed.map(strip)).toEqual(TABLE.map(strip));
    for (const row of TABLE) {
      expect(typeof row.shows_edge_case, row.key).toBe("boolean");
      expect(typeof row.changes_nothing_else, row.key).toBe("boolean");
      expect(row.note, row.key).not.toBe("not judged yet");
    }
  });

  it("hold at least 100 rows across the seven domains, every one from a rule", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(100);
    expect(new Set(TABLE.map((row) => row.domain))).toEqual(new Set(DOMAINS));
    for (const row of TABLE) expect(row.source).toBe("rule");
  });

  it("every row passes the verifier", async () => {
    const byKey = new Map<string, boolean>();
    for (const trajectory of await demoTrajectories())
      for (const row of TABLE.filter((r) => r.id.startsWith(`${trajectory.id}#synth-`) && trajectory.source.uri.endsWith(`/${r.file}`))) {
        const rule = SYNTHESIS_RULES[trajectory.domain].find((r) => r.name === row.rule);
        if (rule === undefined) continue;
        const result = synthesizeTurn(trajectory, row.turn, rule);
        byKey.set(row.key, result.ok && result.synthesis.trajectory.turns[row.turn]?.observation === row.synthesized);
      }
    const failing = TABLE.filter((row) => byKey.get(row.key) !== true).map((row) => row.key);
    expect(failing).toEqual([]);
  });

  it("the person agrees with at least 95% of them: the observation shows the edge case and changes nothing else", () => {
    const agreed = TABLE.filter((row) => row.shows_edge_case && row.changes_nothing_else).length;
    const rate = agreed / TABLE.length;
    console.log(`synthesized rows: ${agreed}/${TABLE.length} agreed (${(rate * 100).toFixed(1)}%)`);
    expect(rate).toBeGreaterThanOrEqual(AGREEMENT_TARGET);
  });
});
