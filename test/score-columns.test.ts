/**
 * Scores as shard columns (docs/filters-selection-scoring.md "Model-scored trajectories"): with `scorers`, unpacked CPT
 * shards carry one nullable float64 column `score_<name>` per scorer (`-` made `_`), holding the
 * record's score or null; the manifest's `layout.scores` names the scorers and `verify` holds
 * shards to it. Packed rows carry none (as for provenance). Without scorers nothing changes
 * (test/golden-outputs.test.ts).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { UserError } from "../src/core/errors.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { scoreColumn, scoreColumns } from "../src/write/shard-columns.ts";
import { tempDir, writeConfig } from "./helpers.ts";
import { type FakeScoreServer, startFakeScoreServer } from "./support/fake-score-server.ts";
import { ensurePythonEnv } from "./support/python-env.ts";
import { selectResolvedReference } from "./support/select-resolved-reference.ts";

interface PyShards {
  /** Per column of the first shard: its Arrow type and nullability, as pyarrow reads them. */
  fields: Record<string, { type: string; nullable: boolean }>;
  /** Every row's id and score columns, by id. */
  rows: Record<string, Record<string, number | null>>;
}

/** The shards' schema and score columns as pyarrow (what trainers use) reads them. */
function pyarrowShards(out: string): PyShards {
  const script = [
    "import glob, json, sys, pyarrow.parquet as pq",
    "fields, rows = {}, {}",
    "for path in sorted(glob.glob(sys.argv[1] + '/data/*.parquet')):",
    "    table = pq.read_table(path)",
    "    fields = {f.name: {'type': str(f.type), 'nullable': f.nullable} for f in table.schema}",
    "    names = [n for n in table.column_names if n.startswith('score_')]",
    "    ids = table.column('id' if 'id' in table.column_names else 'num_tokens').to_pylist()",
    "    for i, row in enumerate(table.select(names).to_pylist()): rows[str(ids[i])] = row",
    "print(json.dumps({'fields': fields, 'rows': rows}))",
  ].join("\n");
  const result = spawnSync(ensurePythonEnv(), ["-c", script, out], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as PyShards;
}

const turn = (action: string, observation: string) => ({ action, observation });
const ROWS = [
  { id: "good", domain: "terminal", turns: [turn("ls", "README.md src")] },
  { id: "also-good", domain: "swe", turns: [turn("pytest -q", "3 passed")] },
  // The judge answers this one's prompt with prose: malformed, so no score (null).
  { id: "garbled", domain: "terminal", turns: [turn("cat notes", "GARBLE-THIS-ONE")] },
];

/** A judge that gives 0.5, or prose (malformed) for the prompt holding GARBLE-THIS-ONE. */
let judge: FakeScoreServer;
beforeAll(async () => {
  judge = await startFakeScoreServer((_request, _attempt, prompt) => ({
    content: prompt.includes("GARBLE-THIS-ONE") ? "I would rather not say." : JSON.stringify({ score: 0.5, reason: "fine" }),
  }));
});
afterAll(async () => {
  await judge.close();
});

async function runRows(extraYaml: string) {
  const dir = tempDir("lwm-score-columns-");
  const input = join(dir, "rows.jsonl");
  writeFileSync(input, `${ROWS.map((row) => JSON.stringify(row)).join("\n")}\n`);
  writeFileSync(join(dir, "rubric.md"), "Score how informative the observations are, from 0 to 1.");
  const out = join(dir, "out");
  const yaml = [
    `inputs:\n  - path: ${input}\n    format: canonical-jsonl`,
    "output:\n  num_buckets: 1",
    `scorers:\n  - name: judge-quality\n    base_url: ${judge.url}\n    model: fake\n    rubric_file: rubric.md\n    max_retries: 0`,
    extraYaml,
  ].join("\n");
  const result = await runJob(await planJob(loadConfig(writeConfig(yaml, dir), { output: out })), { workers: 1 });
  if (!result.manifest) throw new Error("run did not finish");
  return { out, manifest: result.manifest };
}

describe("score columns", () => {
  it("name a scorer's column score_<name> with - made _, and refuse two scorers that would share one", () => {
    expect(scoreColumn("judge")).toBe("score_judge");
    expect(scoreColumn("judge-quality")).toBe("score_judge_quality");
    expect(scoreColumns(["judge", "judge-quality"])).toEqual(["score_judge", "score_judge_quality"]);
    expect(() => scoreColumns(["judge-quality", "judge_quality"])).toThrow(UserError);
    expect(() => scoreColumns(["judge-quality", "judge_quality"])).toThrow(/judge-quality and judge_quality .* score_judge_quality/);
  });

  it("hold each record's score, null where the judge gave none; the manifest names them and verify passes", async () => {
    const { out, manifest } = await runRows("");
    expect(manifest.layout.scores).toEqual(["judge-quality"]);
    const { fields, rows } = pyarrowShards(out);
    expect(fields.score_judge_quality).toEqual({ type: "double", nullable: true });
    expect(rows).toEqual({
      good: { score_judge_quality: 0.5 },
      "also-good": { score_judge_quality: 0.5 },
      garbled: { score_judge_quality: null },
    });
    const { problems } = await verifyOutput(out);
    expect(problems).toEqual([]);
  });

  it("are not written into packed rows (several documents each, as provenance is not), and verify agrees", async () => {
    const { out, manifest } = await runRows("pack:\n  enabled: true\n  seq_len: 4096");
    expect(manifest.layout.pack).not.toBeNull();
    expect(manifest.layout.scores).toBeUndefined();
    const { fields } = pyarrowShards(out);
    expect(Object.keys(fields)).toContain("cu_seqlens");
    expect(Object.keys(fields).filter((name) => name.startsWith("score_"))).toEqual([]);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  describe("configs/select-resolved.yaml", () => {
    // The job's output (`run` with a fake judge: 0.9, or 0.3 for about one prompt in six), shared
    // with the other files that read it; this copy is this file's own (a test edits its manifest).
    let out = "";
    beforeAll(async () => {
      out = (await selectResolvedReference()).output;
    }, 600_000);

    it("writes score_judge (double, nullable) with 0.9 on every row: the filter keeps judge scores ≥ 0.7", () => {
      const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
      expect(manifest.layout.scores).toEqual(["judge"]);
      const { fields, rows } = pyarrowShards(out);
      expect(fields.score_judge).toEqual({ type: "double", nullable: true });
      const values = Object.values(rows).map((row) => row.score_judge);
      expect(values.length).toBeGreaterThan(5);
      expect(new Set(values)).toEqual(new Set([0.9]));
      // The card documents the column too (its features come from the layout).
      expect(readFileSync(join(out, "README.md"), "utf8")).toMatch(/- name: score_judge\n\s+dtype: float64/);
    });

    it("verifies; a manifest naming a scorer whose column the shards lack, or dropping one they have, does not", async () => {
      expect((await verifyOutput(out)).problems).toEqual([]);
      const path = join(out, "manifest.json");
      const original = readFileSync(path, "utf8");
      const manifest = JSON.parse(original);
      try {
        writeFileSync(path, JSON.stringify({ ...manifest, layout: { ...manifest.layout, scores: ["judge", "novelty"] } }));
        const missing = (await verifyOutput(out)).problems;
        expect(missing.length).toBeGreaterThan(0);
        for (const problem of missing) expect(problem).toMatchObject({ check: "schema", message: "column score_novelty is missing" });

        const { scores: _scores, ...withoutScores } = manifest.layout;
        writeFileSync(path, JSON.stringify({ ...manifest, layout: withoutScores }));
        const unexpected = (await verifyOutput(out)).problems;
        expect(unexpected.length).toBeGreaterThan(0);
        for (const problem of unexpected) expect(problem).toMatchObject({ check: "schema", message: "unexpected column score_judge" });

        writeFileSync(path, JSON.stringify({ ...manifest, layout: { ...manifest.layout, scores: "judge" } }));
        expect((await verifyOutput(out)).problems).toContainEqual(
          expect.objectContaining({ check: "manifest", message: 'layout.scores is "judge", not a list of scorer names' }),
        );
      } finally {
        writeFileSync(path, original);
      }
    });
  });
});
