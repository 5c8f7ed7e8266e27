import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ClassRule, classifyTurn, keepDraw } from "../src/mask/turn-classes.ts";
import { type TurnStats, trajectoryTurnStats } from "../src/mask/turn-stats.ts";
import { words } from "../src/mask/word-split.ts";

const turn = (action: string, observation: string, actTokens = 1, obsTokens = 1) => ({ action, observation, actTokens, obsTokens });

describe("word splitter", () => {
  it("splits code, JSON, paths and CJK into lower-cased words", () => {
    expect(words("cat /usr/lib/x.so && ls -la")).toEqual(["cat", "usr", "lib", "x.so", "ls", "la"]);
    expect(words('{"Thought": "fooBar_baz 42"}')).toEqual(["thought", "foobar_baz", "42"]);
    expect(words("我们今天去北京大学")).toEqual(["我们", "今天", "去", "北京", "大学"]);
    expect(words("  ,;  ")).toEqual([]);
    // Markup tag names are structure: a wrapper around every observation is not new information.
    expect(words("<returncode>0</returncode>\n<output>\nhello world\n</output>")).toEqual(["0", "hello", "world"]);
    expect(words('<push-button name="OK"/> a < b')).toEqual(["name", "ok", "a", "b"]);
  });
});

describe("turn statistics", () => {
  it("computes OL, Nov, Jac and R on a hand-worked case", () => {
    // ICU keeps notes.txt whole: W_act = {cat, notes.txt}
    // W_obs = {hello, notes.txt, world}; ∩ = {notes.txt}; ∪ = 4 words.
    const [stats] = trajectoryTurnStats([turn("cat notes.txt", "hello notes.txt world", 4, 10)], "");
    expect(stats).toMatchObject({ overlap: 1 / 2, novelty: 2 / 3, jaccard: 1 / 4, lengthRatio: 10 / 4, actWords: 2, obsWords: 3 });
  });

  it("defines the edge cases: empty action, empty observation, identical strings", () => {
    const [emptyAction, emptyObservation, identical, bothEmpty] = trajectoryTurnStats(
      [turn("", "some output", 0, 2), turn("ls", "", 1, 0), turn("echo hi", "echo hi", 2, 2), turn("", "", 0, 0)],
      "",
    );
    expect(emptyAction).toMatchObject({ overlap: 0, novelty: 1, jaccard: 0, lengthRatio: 2 });
    expect(emptyObservation).toMatchObject({ overlap: 0, novelty: 0, jaccard: 0, lengthRatio: 0, historyNovelty: 0 });
    expect(identical).toMatchObject({ overlap: 1, novelty: 0, jaccard: 1, lengthRatio: 1 });
    expect(bothEmpty).toMatchObject({ overlap: 0, novelty: 0, jaccard: 0, lengthRatio: 0, historyNovelty: 0 });
  });

  it("history novelty counts words seen anywhere earlier, including the task and this action", () => {
    const stats = trajectoryTurnStats(
      [turn("click('12')", "page alpha beta"), turn("click('13')", "page alpha beta"), turn("open gamma", "gamma delta")],
      "task: find alpha",
    );
    expect(stats[0]?.historyNovelty).toBeCloseTo(2 / 3); // page, beta new; alpha from the task
    expect(stats[1]?.historyNovelty).toBe(0); // the same page again: nothing new
    expect(stats[1]?.novelty).toBe(1); // …although none of its words are in the action
    expect(stats[2]?.historyNovelty).toBe(1 / 2); // gamma came with the action
  });
});

/** The definitions as sets, the way they read: the reference the map-based version must equal. */
function referenceTurnStats(turns: ReturnType<typeof turn>[], context: string): TurnStats[] {
  const seen = new Set(words(context));
  return turns.map((t) => {
    const act = new Set(words(t.action));
    const obs = new Set(words(t.observation));
    let shared = 0;
    for (const word of act) if (obs.has(word)) shared += 1;
    const union = act.size + obs.size - shared;
    for (const word of act) seen.add(word);
    let unseen = 0;
    for (const word of obs) if (!seen.has(word)) unseen += 1;
    for (const word of obs) seen.add(word);
    return {
      overlap: act.size === 0 ? 0 : shared / act.size,
      novelty: obs.size === 0 ? 0 : (obs.size - shared) / obs.size,
      jaccard: union === 0 ? 0 : shared / union,
      lengthRatio: t.obsTokens / Math.max(t.actTokens, 1),
      historyNovelty: obs.size === 0 ? 0 : unseen / obs.size,
      actTokens: t.actTokens,
      obsTokens: t.obsTokens,
      actWords: act.size,
      obsWords: obs.size,
    };
  });
}

describe("turn statistics against the set definitions", () => {
  // A small vocabulary so words repeat within and across turns, in actions, observations and context.
  const text = fc
    .array(fc.constantFrom("ls", "cat", "a.txt", "Alpha", "alpha", "beta", "42", "<output>", "页面", "x_y", "", " ", "\n", "'", "."), {
      maxLength: 12,
    })
    .map((parts) => parts.join(" "));
  const turnArb = fc.record({ action: text, observation: text, actTokens: fc.nat(50), obsTokens: fc.nat(50) });
  it("equals the reference on random trajectories", () => {
    fc.assert(
      fc.property(fc.array(turnArb, { maxLength: 8 }), text, (turns, context) => {
        expect(trajectoryTurnStats(turns, context)).toEqual(referenceTurnStats(turns, context));
      }),
      { numRuns: 2000, seed: 20261121 },
    );
  });
});

describe("class rules", () => {
  const base: TurnStats = {
    overlap: 0,
    novelty: 0,
    jaccard: 0,
    lengthRatio: 1,
    historyNovelty: 0,
    actTokens: 5,
    obsTokens: 5,
    actWords: 1,
    obsWords: 1,
  };
  const rules: ClassRule[] = [
    { name: "Echo", when: { overlap: { min: 0.6 }, novelty: { max: 0.25 } } },
    { name: "Retrieval", when: { obs_tokens: { min: 64 } } },
  ];

  it("bounds are inclusive and the first matching rule wins", () => {
    expect(classifyTurn({ ...base, overlap: 0.6, novelty: 0.25 }, rules)).toBe("Echo");
    expect(classifyTurn({ ...base, overlap: 0.59, novelty: 0.25 }, rules)).toBe("Other");
    expect(classifyTurn({ ...base, overlap: 0.6, novelty: 0.26 }, rules)).toBe("Other");
    expect(classifyTurn({ ...base, obsTokens: 64 }, rules)).toBe("Retrieval");
    expect(classifyTurn({ ...base, obsTokens: 63 }, rules)).toBe("Other");
    expect(classifyTurn({ ...base, overlap: 1, obsTokens: 100 }, rules)).toBe("Echo");
  });
});

describe("keep draw", () => {
  it("is deterministic per (seed, id, turn) and realises the keep ratio within ±2 points over 10,000 turns", () => {
    for (const ratio of [0.05, 0.1, 0.5]) {
      for (const seed of [0, 1]) {
        let kept = 0;
        for (let i = 0; i < 10_000; i++) if (keepDraw(seed, `traj-${i % 997}`, Math.floor(i / 997)) < ratio) kept += 1;
        expect(Math.abs(kept / 10_000 - ratio)).toBeLessThanOrEqual(0.02);
      }
    }
    expect(keepDraw(7, "a", 3)).toBe(keepDraw(7, "a", 3));
    expect(keepDraw(7, "a", 3)).not.toBe(keepDraw(8, "a", 3));
  });
});
