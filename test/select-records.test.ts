import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { RecordFacts } from "../src/filter/record-facts.ts";
import { type SelectionDrop, type SelectionResult, selectRecords } from "../src/select/select-records.ts";
import { type SelectionSettings, selectionSchema } from "../src/select/selection-schema.ts";
import { type RecordPosition, SelectionTable } from "../src/select/selection-table.ts";

type Row = { facts: RecordFacts; position: RecordPosition };

function facts(partial: Partial<RecordFacts> & { id: string }): RecordFacts {
  return {
    task_id: null,
    attempt: null,
    agent: null,
    model: null,
    outcome: null,
    reward: null,
    failure_mode: null,
    domain: "swe",
    source: "swe",
    format: "swe",
    turns: 1,
    tokens: 100,
    loss_tokens: 50,
    trained_share: 0.5,
    classes: {},
    labels: [],
    scores: {},
    ...partial,
  };
}

/** Rows at task 0, items 0, 1, 2, … in the order given. */
const rowsOf = (list: RecordFacts[]): Row[] => list.map((f, item) => ({ facts: f, position: { task: 0, item } }));

function run(rows: readonly Row[], block: unknown): { result: SelectionResult; drops: SelectionDrop[]; settings: SelectionSettings } {
  const settings = selectionSchema.parse(block);
  const table = new SelectionTable(settings);
  for (const row of rows) table.add(row.facts, row.position);
  const result = selectRecords(table);
  return { result, drops: [...result.drops()], settings };
}

/** Ids of the records kept. */
function keptIds(rows: readonly Row[], drops: readonly SelectionDrop[]): string[] {
  const gone = new Set(drops.map((d) => `${d.task}/${d.item}`));
  return rows.filter((r) => !gone.has(`${r.position.task}/${r.position.item}`)).map((r) => r.facts.id);
}

/** A small seeded PRNG (mulberry32) for reproducible random corpora. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe("selectionSchema", () => {
  it("fills defaults and accepts scores.<name> and compound keys", () => {
    expect(selectionSchema.parse({})).toEqual({ order: [], caps: [], keep_fraction: 1, seed: 0 });
    const parsed = selectionSchema.parse({
      order: [{ field: "scores.judge", direction: "desc" }],
      max_per: { key: ["task_id", "model"], keep: 2 },
      caps: [{ key: "agent", max_share: 0.2 }],
    });
    expect(parsed.caps[0]?.of).toBe("records");
    expect(parsed.max_per?.key).toEqual(["task_id", "model"]);
  });

  it("refuses unknown fields and keys with their config path", () => {
    const issues = (block: unknown) =>
      selectionSchema.safeParse(block).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? ["(parsed)"];
    expect(issues({ order: [{ field: "rewrd", direction: "desc" }] })[0]).toMatch(
      /^order\.0\.field: unknown order field "rewrd"; an order field is one of reward,/,
    );
    expect(issues({ max_per: { key: "tokens", keep: 4 } })[0]).toMatch(
      /^max_per\.key: unknown key field "tokens"; a key is one of task_id,/,
    );
    expect(issues({ caps: [{ key: ["agent", "nope"], max_share: 0.5 }] })[0]).toMatch(/^caps\.0\.key\.1: unknown key field "nope"/);
    expect(issues({ caps: [{ key: "agent", max_share: 0 }] })[0]).toMatch(/^caps\.0\.max_share:/);
    expect(issues({ keep_fraction: 0 })[0]).toMatch(/^keep_fraction:/);
    expect(issues({ max_per: { key: "task_id", keep: 4, order: [] } })[0]).toMatch(/^max_per: Unrecognized key/);
    expect(issues({ sample: 0.5 })[0]).toMatch(/^: Unrecognized key: "sample"/);
  });
});

describe("max_per", () => {
  // Task "django-1" has 7 attempts; "flask-2" has 2; two records name no task.
  const attempts = rowsOf([
    facts({ id: "d1", task_id: "django-1", reward: 1, tokens: 900 }),
    facts({ id: "d2", task_id: "django-1", reward: 0, tokens: 100 }),
    facts({ id: "d3", task_id: "django-1", reward: 1, tokens: 300 }),
    facts({ id: "d4", task_id: "django-1", reward: null, tokens: 50 }),
    facts({ id: "f1", task_id: "flask-2", reward: 0, tokens: 10 }),
    facts({ id: "d5", task_id: "django-1", reward: 0.5, tokens: 200 }),
    facts({ id: "d6", task_id: "django-1", reward: 1, tokens: 300 }),
    facts({ id: "n1", task_id: null, reward: 0 }),
    facts({ id: "d7", task_id: "django-1", reward: 0, tokens: 80 }),
    facts({ id: "f2", task_id: "flask-2", reward: 1, tokens: 10 }),
    facts({ id: "n2", task_id: null, reward: 0 }),
  ]);
  const block = {
    order: [
      { field: "reward", direction: "desc" },
      { field: "tokens", direction: "asc" },
    ],
    max_per: { key: "task_id", keep: 4 },
  };

  it("keeps the best `keep` per key by the stated order; ties go to input order; null keys are never dropped", () => {
    const { drops, result } = run(attempts, block);
    // django-1 by reward desc, tokens asc: d3 (1, 300, item 2), d6 (1, 300, item 6), d1 (1, 900), d5 (0.5), d7 (0, 80), d2 (0, 100), d4 (null: last).
    expect(keptIds(attempts, drops)).toEqual(["d1", "d3", "f1", "d5", "d6", "n1", "f2", "n2"]);
    expect(result).toMatchObject({ records: 11, kept: 8, dropped: { keep_fraction: 0, max_per: 3, cap: 0 } });
    expect(drops).toEqual([
      {
        task: 0,
        item: 1,
        rule: "max_per",
        reason: 'max_per task_id: 6th of 7 records with task_id "django-1" by reward desc, tokens asc (keeps 4)',
      },
      {
        task: 0,
        item: 3,
        rule: "max_per",
        reason: 'max_per task_id: 7th of 7 records with task_id "django-1" by reward desc, tokens asc (keeps 4)',
      },
      {
        task: 0,
        item: 8,
        rule: "max_per",
        reason: 'max_per task_id: 5th of 7 records with task_id "django-1" by reward desc, tokens asc (keeps 4)',
      },
    ]);
  });

  it("sorts a null value last whatever the direction", () => {
    const asc = run(attempts, { order: [{ field: "reward", direction: "asc" }], max_per: { key: "task_id", keep: 6 } });
    expect(asc.drops.map((d) => d.item)).toEqual([3]); // d4 (reward null) is last in ascending order too
  });

  it("groups by a compound key, and a record with any part null is its own group", () => {
    const rows = rowsOf([
      facts({ id: "a", task_id: "t", model: "m1" }),
      facts({ id: "b", task_id: "t", model: "m1" }),
      facts({ id: "c", task_id: "t", model: "m2" }),
      facts({ id: "d", task_id: "t", model: null }),
      facts({ id: "e", task_id: "t", model: null }),
    ]);
    const { drops } = run(rows, { max_per: { key: ["task_id", "model"], keep: 1 } });
    expect(drops).toEqual([
      {
        task: 0,
        item: 1,
        rule: "max_per",
        reason: 'max_per task_id+model: 2nd of 2 records with task_id "t", model "m1" by input order (keeps 1)',
      },
    ]);
  });

  it("orders text numerically when both are numbers (attempt 10 after attempt 2)", () => {
    const rows = rowsOf([
      facts({ id: "a10", task_id: "t", attempt: "10" }),
      facts({ id: "a2", task_id: "t", attempt: "2" }),
      facts({ id: "a1", task_id: "t", attempt: "1" }),
    ]);
    const { drops } = run(rows, { order: [{ field: "attempt", direction: "asc" }], max_per: { key: "task_id", keep: 2 } });
    expect(keptIds(rows, drops)).toEqual(["a2", "a1"]);
  });

  it("orders by a score; a record without it sorts last", () => {
    const rows = rowsOf([
      facts({ id: "x", task_id: "t", scores: { judge: 0.2 } }),
      facts({ id: "y", task_id: "t", scores: {} }),
      facts({ id: "z", task_id: "t", scores: { judge: 0.9 } }),
      facts({ id: "w", task_id: "t", scores: { judge: null } }),
    ]);
    const { drops } = run(rows, { order: [{ field: "scores.judge", direction: "desc" }], max_per: { key: "task_id", keep: 2 } });
    expect(keptIds(rows, drops)).toEqual(["x", "z"]);
  });
});

describe("keep_fraction", () => {
  const many = rowsOf(Array.from({ length: 1000 }, (_, i) => facts({ id: `r${i}` })));
  /** The draw computed here, independently of the module: sha256 of the tagged (seed, id), 52 bits. */
  const draw = (seed: number, id: string) => {
    const digest = createHash("sha256").update(`lwm-select\u0000${seed}\u0000${id}`).digest();
    return (digest.readUInt32BE(0) * 2 ** 20 + (digest.readUInt32BE(4) >>> 12)) / 2 ** 52;
  };

  it("keeps exactly the records whose seeded draw falls below the fraction", () => {
    const { drops, result } = run(many, { keep_fraction: 0.3, seed: 7 });
    const expected = many.filter((r) => draw(7, r.facts.id) < 0.3).map((r) => r.facts.id);
    expect(keptIds(many, drops)).toEqual(expected);
    expect(result.kept).toBeGreaterThan(240);
    expect(result.kept).toBeLessThan(360);
    expect(drops[0]?.reason).toBe("keep_fraction 0.3: not drawn (seed 7)");
    expect(drops.every((d) => d.rule === "keep_fraction")).toBe(true);
  });

  it("draws another set under another seed, and 1 keeps everything", () => {
    const a = keptIds(many, run(many, { keep_fraction: 0.5, seed: 1 }).drops);
    const b = keptIds(many, run(many, { keep_fraction: 0.5, seed: 2 }).drops);
    expect(a).not.toEqual(b);
    expect(run(many, { keep_fraction: 1 }).drops).toEqual([]);
  });

  it("applies before max_per: max_per keeps the best of the records drawn", () => {
    const rows = rowsOf(Array.from({ length: 40 }, (_, i) => facts({ id: `t${i}`, task_id: "t", reward: i })));
    const { drops, result } = run(rows, {
      keep_fraction: 0.5,
      seed: 3,
      order: [{ field: "reward", direction: "desc" }],
      max_per: { key: "task_id", keep: 3 },
    });
    const drawn = rows.filter((r) => draw(3, r.facts.id) < 0.5);
    const best = drawn.sort((x, y) => (y.facts.reward as number) - (x.facts.reward as number)).slice(0, 3);
    expect(keptIds(rows, drops).sort()).toEqual(best.map((r) => r.facts.id).sort());
    expect(result.dropped.max_per).toBe(drawn.length - 3);
  });
});

/** Each capped group's kept weight over the kept total (keyed by the group's name). */
function shares(
  rows: readonly Row[],
  drops: readonly SelectionDrop[],
  key: keyof RecordFacts,
  of: "records" | "tokens",
): Map<string, number> {
  const gone = new Set(drops.map((d) => `${d.task}/${d.item}`));
  const kept = rows.filter((r) => !gone.has(`${r.position.task}/${r.position.item}`));
  const weight = (r: Row) => (of === "records" ? 1 : r.facts.tokens);
  const total = kept.reduce((sum, r) => sum + weight(r), 0);
  const out = new Map<string, number>();
  for (const r of kept) {
    const value = r.facts[key];
    if (value !== null) out.set(String(value), (out.get(String(value)) ?? 0) + weight(r) / total);
  }
  return out;
}

const overShare = (s: Map<string, number>, max: number) => [...s].filter(([, share]) => share > max + 1e-12);

describe("caps", () => {
  const agents = (counts: Record<string, number>, extra: Partial<RecordFacts> = {}) =>
    rowsOf(
      Object.entries(counts).flatMap(([agent, count]) =>
        Array.from({ length: count }, (_, i) => facts({ id: `${agent}${i}`, agent, ...extra })),
      ),
    );

  it("solves the shrinking total: several groups over the share all end at or below it", () => {
    // A and B are 10 of 24 each (42%). Cutting each to 30% of 24 (7) would leave 18 records with A at 39%:
    // the share is of what is kept, so each keeps k with k ≤ 0.3·(2k + 4), k = 3 of a total of 10.
    const rows = agents({ A: 10, B: 10, C: 2, D: 2 });
    const { drops, result } = run(rows, { caps: [{ key: "agent", max_share: 0.3 }] });
    expect(keptIds(rows, drops)).toEqual(["A0", "A1", "A2", "B0", "B1", "B2", "C0", "C1", "D0", "D1"]);
    expect(result).toMatchObject({
      kept: 10,
      dropped: { cap: 14 },
      caps: [{ key: "agent", max_share: 0.3, of: "records", balanced: false, dropped: 14 }],
    });
    // Negative control: the one-pass cut at 30% of the starting total is above the share, so this case tells them apart.
    const naive = rows
      .filter((r) => Number(r.facts.id.slice(1)) >= 7)
      .map((r) => ({ task: 0, item: r.position.item, rule: "cap" as const, reason: "" }));
    expect(overShare(shares(rows, naive, "agent", "records"), 0.3).map(([agent]) => agent)).toEqual(["A", "B"]);
  });

  it("drops a group's least preferred records, and says what keeping one would make the share", () => {
    const rows = rowsOf([
      ...Array.from({ length: 6 }, (_, i) => facts({ id: `o${i}`, agent: "openhands", reward: i })),
      ...Array.from({ length: 4 }, (_, i) => facts({ id: `s${i}`, agent: "swe-agent" })),
      ...Array.from({ length: 10 }, (_, i) => facts({ id: `x${i}`, agent: null })),
    ]);
    const { drops } = run(rows, { order: [{ field: "reward", direction: "desc" }], caps: [{ key: "agent", max_share: 0.2 }] });
    // o ≤ 0.2·(o + s + 10) and s ≤ 0.2·(o + s + 10): the largest is o = 3 (its best rewards 5, 4, 3), s = 3,
    // 16 kept, both at 18.75%. Keeping o2 too would make openhands 4 of 17; o1 as well, 5 of 18; o0, 6 of 19.
    expect(keptIds(rows, drops).filter((id) => !id.startsWith("x"))).toEqual(["o3", "o4", "o5", "s0", "s1", "s2"]);
    expect(overShare(shares(rows, drops, "agent", "records"), 0.2)).toEqual([]);
    expect(drops.map((d) => d.reason)).toEqual([
      'cap agent: keeping it would make "openhands" 31.6% of kept records (max 20%); "openhands" keeps 3 of 6 records by reward desc',
      'cap agent: keeping it would make "openhands" 27.8% of kept records (max 20%); "openhands" keeps 3 of 6 records by reward desc',
      'cap agent: keeping it would make "openhands" 23.5% of kept records (max 20%); "openhands" keeps 3 of 6 records by reward desc',
      'cap agent: keeping it would make "swe-agent" 23.5% of kept records (max 20%); "swe-agent" keeps 3 of 4 records by reward desc',
    ]);
  });

  it("counts records with a null key in the total and never drops them", () => {
    const rows = agents({ A: 5 }).concat(
      Array.from({ length: 15 }, (_, i) => ({ facts: facts({ id: `none${i}`, agent: null }), position: { task: 1, item: i } })),
    );
    const { drops } = run(rows, { caps: [{ key: "agent", max_share: 0.2 }] });
    // A ≤ 0.2·(A + 15) → A ≤ 3.75: 3 kept; all 15 without an agent stay.
    expect(keptIds(rows, drops)).toEqual(["A0", "A1", "A2", ...Array.from({ length: 15 }, (_, i) => `none${i}`)]);
  });

  it("a single group, with nothing else, is always allowed", () => {
    const rows = agents({ only: 5 });
    const { drops, result } = run(rows, { caps: [{ key: "agent", max_share: 0.2 }] });
    expect(drops).toEqual([]);
    expect(result.caps[0]?.balanced).toBe(true);
  });

  it("balances to the smallest group when no selection with one can meet the share", () => {
    // Two agents can never each be ≤ 20%: the cap balances them instead (each keeps at most the smallest's 3).
    const rows = agents({ big: 5, small: 3 });
    const { drops, result } = run(rows, { caps: [{ key: "agent", max_share: 0.2 }] });
    expect(keptIds(rows, drops)).toEqual(["big0", "big1", "big2", "small0", "small1", "small2"]);
    expect(result.caps[0]).toMatchObject({ balanced: true, dropped: 2 });
    expect(drops[0]?.reason).toBe(
      'cap agent: max 20% cannot be met while any agent is kept (2 values), so each keeps at most the smallest\'s 3 records ("small"); "big" keeps 3 of 5 records by input order',
    );
  });

  it("caps tokens when `of: tokens`", () => {
    const rows = rowsOf([
      facts({ id: "a0", agent: "a", tokens: 500 }),
      facts({ id: "a1", agent: "a", tokens: 300 }),
      facts({ id: "a2", agent: "a", tokens: 300 }),
      facts({ id: "b0", agent: "b", tokens: 200 }),
      facts({ id: "c0", agent: "c", tokens: 200 }),
      facts({ id: "n0", agent: null, tokens: 300 }),
    ]);
    const { drops } = run(rows, { order: [{ field: "tokens", direction: "asc" }], caps: [{ key: "agent", max_share: 0.5, of: "tokens" }] });
    // a is 1100 of 1800; by tokens asc it keeps a1, a2 (600 of 1300 = 46%); adding a0 would be 1100/1800 = 61%.
    expect(keptIds(rows, drops)).toEqual(["a1", "a2", "b0", "c0", "n0"]);
    expect(drops[0]?.reason).toMatch(/^cap agent: keeping it would make "a" 61.1% of kept tokens \(max 50%\)/);
  });

  it("applies several caps together until none is exceeded", () => {
    const random = prng(11);
    const rows = rowsOf(
      Array.from({ length: 300 }, (_, i) =>
        facts({
          id: `r${i}`,
          agent: `ag${Math.floor(random() ** 2 * 6)}`,
          model: random() < 0.1 ? null : `m${Math.floor(random() ** 3 * 5)}`,
          reward: Math.round(random() * 4),
        }),
      ),
    );
    const { drops, result } = run(rows, {
      order: [{ field: "reward", direction: "desc" }],
      caps: [
        { key: "agent", max_share: 0.25 },
        { key: "model", max_share: 0.35 },
      ],
    });
    expect(result.caps.map((c) => c.balanced)).toEqual([false, false]);
    expect(result.kept).toBeGreaterThan(50);
    expect(overShare(shares(rows, drops, "agent", "records"), 0.25)).toEqual([]);
    expect(overShare(shares(rows, drops, "model", "records"), 0.35)).toEqual([]);
    // Negative control: before the caps, both keys are above their shares.
    expect(overShare(shares(rows, [], "agent", "records"), 0.25).length).toBeGreaterThan(0);
    expect(overShare(shares(rows, [], "model", "records"), 0.35).length).toBeGreaterThan(0);
  });

  it("keeps the largest selection that meets one cap (checked against every selection on small corpora)", () => {
    let balanced = 0;
    let cut = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const random = prng(seed);
      const of = seed % 2 === 0 ? "tokens" : "records";
      const groups = 2 + Math.floor(random() * 3);
      const rows = rowsOf(
        Array.from({ length: 4 + Math.floor(random() * 8) }, (_, i) =>
          facts({ id: `r${i}`, agent: random() < 0.2 ? null : `g${Math.floor(random() * groups)}`, tokens: 1 + Math.floor(random() * 9) }),
        ),
      );
      const share = [0.25, 0.34, 0.4, 0.5, 0.6][Math.floor(random() * 5)] as number;
      const { drops, result } = run(rows, { caps: [{ key: "agent", max_share: share, of }] });
      const best = bruteForceCap(rows, share, of);
      if (best.every((k) => k === 0) && keyed(rows).some((g) => g.length > 0)) {
        expect(result.caps[0]?.balanced, `seed ${seed}`).toBe(true);
        balanced++;
        continue;
      }
      if (result.dropped.cap > 0) cut++;
      const kept = new Set(keptIds(rows, drops));
      expect(
        keyed(rows).map((group) => group.filter((r) => kept.has(r.facts.id)).length),
        `seed ${seed}`,
      ).toEqual(best);
    }
    // The corpora exercise both paths: cuts that keep some of the keyed records, and caps that cannot be met.
    expect(cut).toBeGreaterThan(20);
    expect(balanced).toBeGreaterThan(3);
  });

  it("refuses two records at one position", () => {
    const rows = [
      { facts: facts({ id: "a" }), position: { task: 2, item: 5 } },
      { facts: facts({ id: "b" }), position: { task: 2, item: 5 } },
    ];
    expect(() => run(rows, {})).toThrow("selection: two records at task 2, item 5: a position names one record");
  });
});

/** Records of each agent g0, g1, … in input order (the cap's order when none is configured). */
function keyed(rows: readonly Row[]): Row[][] {
  const out: Row[][] = [[], [], [], [], []];
  for (const r of rows) if (r.facts.agent !== null) out[Number(r.facts.agent.slice(1))]?.push(r);
  return out;
}

/** The kept count per group of the largest selection meeting the cap: every prefix vector tried; the feasible ones' componentwise maximum. */
function bruteForceCap(rows: readonly Row[], share: number, of: "records" | "tokens"): number[] {
  const groups = keyed(rows);
  const weight = (r: Row) => (of === "records" ? 1 : r.facts.tokens);
  const exempt = rows.filter((r) => r.facts.agent === null).reduce((s, r) => s + weight(r), 0);
  const best = groups.map(() => 0);
  const vector = groups.map(() => 0);
  const visit = (g: number): void => {
    if (g === groups.length) {
      const w = groups.map((group, i) => group.slice(0, vector[i]).reduce((s, r) => s + weight(r), 0));
      const total = exempt + w.reduce((a, b) => a + b, 0);
      if (w.every((x) => x <= share * total + 1e-9)) {
        vector.forEach((k, i) => {
          best[i] = Math.max(best[i] as number, k);
        });
      }
      return;
    }
    for (let k = 0; k <= (groups[g] as Row[]).length; k++) {
      vector[g] = k;
      visit(g + 1);
    }
  };
  visit(0);
  return best;
}

describe("determinism", () => {
  const random = prng(5);
  // Ties on purpose (rewards 0–2, few token sizes) so input order decides among equals.
  const corpus: Row[] = [];
  for (let task = 0; task < 6; task++) {
    for (let item = 0; item < 40; item++) {
      corpus.push({
        facts: facts({
          id: `t${task}-${item}`,
          task_id: random() < 0.1 ? null : `task-${Math.floor(random() * 12)}`,
          agent: random() < 0.15 ? null : `agent-${Math.floor(random() ** 2 * 5)}`,
          reward: random() < 0.1 ? null : Math.floor(random() * 3),
          tokens: 100 * (1 + Math.floor(random() * 3)),
          attempt: String(1 + Math.floor(random() * 12)),
        }),
        position: { task, item },
      });
    }
  }
  const block = {
    order: [
      { field: "reward", direction: "desc" },
      { field: "tokens", direction: "asc" },
    ],
    max_per: { key: "task_id", keep: 4 },
    caps: [{ key: "agent", max_share: 0.3, of: "tokens" }],
    keep_fraction: 0.8,
    seed: 9,
  };

  it("gives the same drops and reasons for any input order", () => {
    const reference = run(corpus, block);
    expect(reference.result.dropped.keep_fraction).toBeGreaterThan(0);
    expect(reference.result.dropped.max_per).toBeGreaterThan(0);
    expect(reference.result.dropped.cap).toBeGreaterThan(0);
    for (let seed = 1; seed <= 5; seed++) {
      const again = run(shuffled(corpus, prng(100 + seed)), block);
      expect(again.drops).toEqual(reference.drops);
      expect(again.result.caps).toEqual(reference.result.caps);
    }
    // In input order (task, then item).
    const keys = reference.drops.map((d) => d.task * 1000 + d.item);
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
  });

  it("negative control: positions, not the order records arrive in, break ties — moving them changes the choice", () => {
    const rows = rowsOf([facts({ id: "first", task_id: "t" }), facts({ id: "second", task_id: "t" })]);
    expect(keptIds(rows, run(rows, { max_per: { key: "task_id", keep: 1 } }).drops)).toEqual(["first"]);
    const swapped: Row[] = [
      { facts: rows[0]?.facts as RecordFacts, position: { task: 0, item: 1 } },
      { facts: rows[1]?.facts as RecordFacts, position: { task: 0, item: 0 } },
    ];
    expect(keptIds(swapped, run(swapped, { max_per: { key: "task_id", keep: 1 } }).drops)).toEqual(["second"]);
  });
});
