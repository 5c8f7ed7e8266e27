/**
 * Corpus-level novelty (`mask.corpus_novelty`): the `novelty` and `novelty-counts` stages count
 * job-wide how often each canonicalized observation occurs; each turn's `corpus_novelty` is
 * -log2(count / N) in the stats table, class rules and weight ramps can use it, the manifest
 * counts it, and outputs do not depend on workers.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { observationHash } from "../src/novelty/novelty-files.ts";
import { CorpusNovelty } from "../src/novelty/novelty-lookup.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { tempDir, writeConfig } from "./helpers.ts";

const BANNER = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree";
const LISTING = "package.json\nsrc\nREADME.md";

/** 12 trajectories over 3 input files (3 tasks): the banner in 8 of them, the listing in 6, the rest unique. */
function writeInputs(dir: string): string[] {
  const files: string[] = [];
  for (let f = 0; f < 3; f++) {
    const rows = [];
    for (let r = 0; r < 4; r++) {
      const n = 4 * f + r;
      rows.push({
        id: `t${n}`,
        domain: "terminal",
        task: "install the project",
        turns: [
          { action: "ls", observation: n % 2 === 0 ? LISTING : `${n} unique files: alpha${n} beta${n} gamma${n}` },
          { action: "npm install", observation: n < 8 ? BANNER : `added ${n} packages, each one different: p${n}a p${n}b` },
          { action: `cat notes${n}.txt`, observation: `the notes of project number ${n} say hello ${n} times` },
        ],
      });
    }
    const path = join(dir, `part-${f}.jsonl`);
    writeFileSync(path, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
    files.push(path);
  }
  return files;
}

async function run(extra: string, workers = 1) {
  const dir = tempDir("lwm-novelty-");
  const inputs = writeInputs(dir)
    .map((path) => `  - path: ${path}\n    format: canonical-jsonl`)
    .join("\n");
  const out = join(dir, "out");
  const config = writeConfig(`inputs:\n${inputs}\noutput:\n  num_buckets: 1\n${extra}\n`, dir);
  const result = await runJob(await planJob(loadConfig(config, { output: out })), { workers });
  if (!result.manifest) throw new Error("run did not finish");
  return { out, manifest: result.manifest };
}

function turnRows(out: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const name of readdirSync(join(out, "stats")).sort()) {
    const table = tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(join(out, "stats", name)))).intoIPCStream());
    for (const row of table) rows.push(row?.toJSON() as Record<string, unknown>);
  }
  return rows;
}

/** sha256 of every file a job output's readers see (shards, stats, manifest, card). */
function digest(out: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const folder of ["data", "stats"])
    for (const name of readdirSync(join(out, folder)).sort())
      files[`${folder}/${name}`] = createHash("sha256")
        .update(readFileSync(join(out, folder, name)))
        .digest("hex");
  for (const name of ["manifest.json", "README.md"])
    files[name] = createHash("sha256")
      .update(readFileSync(join(out, name)))
      .digest("hex");
  return files;
}

const NOVELTY = "mask:\n  corpus_novelty: { enabled: true, partitions: 3 }\ninput:\n  task_bytes: 1000";

describe("mask.corpus_novelty", () => {
  it("CorpusNovelty: -log2(count / N) from the job-wide counts", () => {
    const hashes = [observationHash("a"), observationHash("b")];
    const order = hashes.map((h, i) => [h, i] as const).sort((x, y) => (x[0] < y[0] ? -1 : 1));
    const counts = [8, 1];
    const novelty = new CorpusNovelty(
      BigUint64Array.from(order.map(([h]) => h)),
      Float64Array.from(order.map(([, i]) => counts[i] as number)),
      32,
    );
    expect(novelty.selfInformation("a")).toBe(2); // 8 of 32
    expect(novelty.selfInformation("b")).toBe(5); // 1 of 32
    expect(novelty.selfInformation("never counted")).toBe(5); // counts as 1
  });

  it("gives every turn its corpus self-information, counts it in the manifest, and verifies", async () => {
    const { out, manifest } = await run(NOVELTY);
    expect(manifest.tasks.count).toBeGreaterThanOrEqual(3);
    const N = 36;
    expect(manifest.novelty).toEqual({ observations: N, distinct: 2 + 6 + 4 + 12, by_count: { "1": 22, "4-7": 1, "8-15": 1 } });
    const turns = turnRows(out);
    expect(turns.length).toBe(N);
    for (const turn of turns) {
      const n = Number(String(turn.id).slice(1));
      const count = turn.turn_index === 0 ? (n % 2 === 0 ? 6 : 1) : turn.turn_index === 1 ? (n < 8 ? 8 : 1) : 1;
      expect(turn.corpus_novelty).toBeCloseTo(-Math.log2(count / N), 12);
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it("class rules and weight ramps can use it: the corpus-wide banner is untrained, rare output weighs more", async () => {
    const { out, manifest } = await run(
      [
        "mask:",
        "  corpus_novelty: { enabled: true, partitions: 2 }",
        // First rule: observations at most 2.5 bits (the banner: 8 of 36 = 2.17 bits) are Boilerplate, never kept.
        "  classes:",
        "    - { name: Boilerplate, when: { corpus_novelty: { max: 2.5 } } }",
        "  keep: { Boilerplate: 0 }",
        "  weights:",
        "    enabled: true",
        "    by_stat: [{ stat: corpus_novelty, from: 2, to: 6, low: 0.5, high: 2 }]",
        "    min: 0.05",
        "    max: 4",
        "input:",
        "  task_bytes: 1000",
      ].join("\n"),
    );
    expect(manifest.mask_rules.corpus_novelty?.enabled).toBe(true);
    const turns = turnRows(out);
    for (const turn of turns) {
      const bits = Number(turn.corpus_novelty);
      expect(turn.class === "Boilerplate").toBe(bits <= 2.5);
      if (turn.kept) expect(turn.weight).toBeCloseTo(Math.fround(0.5 + 1.5 * Math.min(1, Math.max(0, (bits - 2) / 4))), 6);
    }
    expect(turns.filter((t) => t.class === "Boilerplate").length).toBe(8);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it("a pass without the job-wide counts refuses to mask (mixture count, selection facts, SFT)", async () => {
    const dir = tempDir("lwm-novelty-pass-");
    const inputs = writeInputs(dir).map((path) => `  - path: ${path}\n    format: canonical-jsonl`);
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n${inputs.join("\n")}\n${NOVELTY}\n`, dir), { output: join(dir, "out") }));
    const trajectory = { id: "t", domain: "terminal" as const, turns: [{ action: "ls", observation: "a" }] };
    expect(() => plan.lossPolicy.apply(trajectory as never, [])).toThrow(/only the records stage reads them/);
  });

  it("does not depend on workers; off, a class rule on it is refused", async () => {
    const one = await run(NOVELTY, 1);
    const three = await run(NOVELTY, 3);
    expect(digest(three.out)).toEqual(digest(one.out));
    const dir = tempDir("lwm-novelty-config-");
    expect(() =>
      loadConfig(
        writeConfig("inputs:\n  - path: x.jsonl\nmask:\n  classes:\n    - { name: Echo, when: { corpus_novelty: { max: 1 } } }\n", dir),
        {
          output: join(dir, "o"),
        },
      ),
    ).toThrow(/corpus_novelty needs mask.corpus_novelty.enabled/);
  });
});
