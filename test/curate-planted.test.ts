/**
 * Corpus curation end to end (issue 20) on the planted corpus of bench/curate/planted-corpus.ts:
 * exact copies, near copies, benchmark episodes leaked whole and in part, hard negatives that share
 * boilerplate, and unique trajectories, spread over several training files; the truth about each
 * is in truth.json. The CLI runs as users run it (`lwm-data run … --benchmark GLOB`).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { generatePlantedCorpus, type PlantedCorpus } from "../bench/curate/planted-corpus.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { expectSameBytes, snapshot } from "./scale-helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const STAGES = ["signatures", "clusters", "select", "records"] as const;

interface FilteredLine {
  id: string;
  domain: string;
  source: string;
  stage: string;
  reason: string;
  kept_id?: string;
  kept_source?: string;
  benchmark?: string;
  benchmark_id?: string;
  turns?: number[];
  overlap?: number;
}

let corpus: PlantedCorpus;
let config: string;
let maskConfig: string;
let benchmarkGlob: string;

/** The job: the planted training files in ~6 tasks, exact + near dedup, decontamination with `action`. */
function writeJob(dir: string, name: string, action: "remove" | "mask", taskBytes: number): string {
  const path = join(dir, name);
  const lines = [
    "inputs:",
    "  - path: train/*.jsonl",
    "    format: canonical-jsonl",
    "input:",
    `  task_bytes: ${taskBytes}`,
    "dedup:",
    "  exact: true",
    "  near: true",
    "decontaminate:",
    `  action: ${action}`,
    "output:",
    "  num_buckets: 2",
    "  max_shard_bytes: 2000000",
    ...(action === "mask" ? ["  include_messages: true"] : []),
    "",
  ];
  writeFileSync(path, lines.join("\n"));
  return path;
}

beforeAll(() => {
  const dir = tempDir("lwm-planted-");
  corpus = generatePlantedCorpus(dir, { trajectories: 240, seed: 1 });
  const taskBytes = Math.ceil(corpus.truth.bytes / 6);
  config = writeJob(dir, "job.yaml", "remove", taskBytes);
  maskConfig = writeJob(dir, "mask.yaml", "mask", taskBytes);
  benchmarkGlob = join(dir, "benchmark/*_test.jsonl");
});

function cli(args: string[], job = config) {
  return exec(process.execPath, [CLI, "run", job, "--benchmark", benchmarkGlob, "--progress", "none", ...args], {
    maxBuffer: 16 << 20,
  });
}

/** What a trainer or a person reads: everything but the bookkeeping of tasks and curation stages. */
function products(dir: string): Map<string, Buffer> {
  return new Map([...snapshot(dir)].filter(([path]) => !path.startsWith("tasks/") && !path.startsWith("curate/")));
}

function filteredLines(out: string): FilteredLine[] {
  const dir = join(out, "filtered");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .flatMap((name) =>
      readFileSync(join(dir, name), "utf8")
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as FilteredLine),
    );
}

async function shardIds(out: string): Promise<string[]> {
  const ids: string[] = [];
  for (const name of readdirSync(join(out, "data")).sort()) {
    const shard = await openShard(join(out, "data", name));
    const column = shard.table.getChild("id");
    for (let i = 0; i < shard.numRows; i++) ids.push(String(column?.get(i)));
  }
  return ids;
}

const readManifest = (out: string) => JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;

let referenceRun: Promise<string> | undefined;
/** One uninterrupted run, 1 worker: the output every other run must equal byte for byte. */
function reference(): Promise<string> {
  referenceRun ??= (async () => {
    const out = tempDir("lwm-planted-ref-");
    await cli(["-o", out, "--workers", "1"]);
    return out;
  })();
  return referenceRun;
}

describe("curation on the planted corpus", () => {
  it("removes what must go (recall ≥ 0.95), keeps every hard negative and original, names every removal, accounts for every record", async () => {
    const out = await reference();
    const { truth } = corpus;
    const entries = filteredLines(out);
    const removed = new Map(entries.map((e) => [e.id, e]));
    expect(removed.size, "a record is filtered twice").toBe(entries.length);

    // Recall, per kind of plant.
    const missed = truth.must_go.filter((g) => !removed.has(g.id));
    const recall = 1 - missed.length / truth.must_go.length;
    expect(
      recall,
      `recall ${recall.toFixed(3)}; missed: ${missed.map((g) => `${g.id} (${g.kind}, ${g.domain})`).join(", ")}`,
    ).toBeGreaterThanOrEqual(0.95);

    // Nothing that must stay was removed: originals, unique trajectories, hard negatives, benchmark negatives.
    const wrongly = truth.must_stay.filter((s) => removed.has(s.id));
    expect(
      wrongly.map((s) => `${s.id} (${s.kind}, ${s.domain}) removed: ${removed.get(s.id)?.stage}, ${removed.get(s.id)?.reason}`),
    ).toEqual([]);
    const planted = new Set([...truth.must_go, ...truth.must_stay].map((e) => e.id));
    expect(entries.filter((e) => !planted.has(e.id)).map((e) => e.id)).toEqual([]);

    // Each removal is named, by the stage the plant calls for, with the twin it kept or the episode it matched.
    const written = new Set(await shardIds(out));
    for (const entry of entries) {
      expect(["exact", "near", "decontaminate"], entry.id).toContain(entry.stage);
      expect(typeof entry.reason === "string" && entry.reason.length > 10, `${entry.id}: reason`).toBe(true);
      expect(entry.source, entry.id).toMatch(/part-\d{5}\.jsonl(:\d+|@\d+)$/);
      if (entry.stage === "decontaminate") {
        expect(entry.benchmark, entry.id).toMatch(/benchmark\/\w+_test\.jsonl$/);
        expect(typeof entry.benchmark_id, entry.id).toBe("string");
      } else {
        expect(typeof entry.kept_id, entry.id).toBe("string");
        expect(written.has(entry.kept_id as string), `${entry.id}: its kept twin ${entry.kept_id} is in the shards`).toBe(true);
        expect(removed.has(entry.kept_id as string), `${entry.id}: its kept twin ${entry.kept_id} was itself filtered`).toBe(false);
      }
    }
    const mismatches: string[] = [];
    for (const goal of truth.must_go) {
      const entry = removed.get(goal.id);
      if (!entry) continue;
      if (entry.stage !== goal.stage) mismatches.push(`${goal.id} (${goal.kind}): stage ${entry.stage}, planted as ${goal.stage}`);
      else if (goal.stage === "decontaminate") {
        if (entry.benchmark_id !== goal.benchmark_id || !entry.benchmark?.endsWith(goal.benchmark))
          mismatches.push(
            `${goal.id}: matched ${entry.benchmark}#${entry.benchmark_id}, planted from ${goal.benchmark}#${goal.benchmark_id}`,
          );
      } else if (entry.kept_id !== goal.kept_id) mismatches.push(`${goal.id}: kept ${entry.kept_id}, planted as a copy of ${goal.kept_id}`);
    }
    expect(mismatches).toEqual([]);
    for (const id of written) expect(removed.has(id), `${id} is both written and filtered`).toBe(false);

    // Accounting: records in = samples out + quarantined + filtered, and the manifest agrees with filtered/.
    const manifest = readManifest(out);
    const { counts } = manifest;
    expect(counts.records_in).toBe(truth.counts.trajectories);
    expect(counts.records_in).toBe(counts.samples_out + counts.quarantined + counts.filtered);
    expect(counts.filtered).toBe(entries.length);
    expect(counts.quarantined).toBe(0);
    expect(written.size).toBe(counts.samples_out);
    const byStage: Record<string, number> = {};
    for (const entry of entries) byStage[entry.stage] = (byStage[entry.stage] ?? 0) + 1;
    expect(counts.filtered_by_stage).toEqual(byStage);
    expect(manifest.curation?.by_stage).toEqual(byStage);
    expect(manifest.curation?.filtered).toBe(entries.length);
    expect(manifest.curation?.files.reduce((sum, f) => sum + f.entries, 0)).toBe(entries.length);
    expect(manifest.curation?.settings.decontaminate.benchmarks.map((b) => b.episodes)).toEqual(
      truth.benchmark_files.map((b) => b.episodes),
    );
  });

  it("gives byte-identical output with 1 and 2 workers", async () => {
    const expected = products(await reference());
    const out = tempDir("lwm-planted-w2-");
    await cli(["-o", out, "--workers", "2"]);
    expectSameBytes(products(out), expected);
  });

  it("gives byte-identical output with world size 1 and 3 (each stage as its own array), then finalize", {
    timeout: 600_000,
  }, async () => {
    const expected = products(await reference());
    const out = tempDir("lwm-planted-ws3-");
    const rank = (stage: string, r: number) =>
      cli(["-o", out, "--workers", "1", "--stage", stage, "--rank", String(r), "--world-size", "3"]);
    for (const stage of STAGES) {
      // Ranks in a scrambled order, as a cluster's array tasks finish in any order.
      for (const r of [2, 0, 1]) {
        await rank(stage, r);
        if (stage === "signatures" && r === 2) {
          // A stage whose predecessor is incomplete is refused, naming what is missing.
          const early = await rank("clusters", 0).catch((err: { code: number; stderr: string }) => err);
          expect(early).toMatchObject({ code: 1 });
          expect((early as { stderr: string }).stderr).toMatch(/signatures/);
        }
      }
    }
    await exec(process.execPath, [CLI, "finalize", out]);
    expectSameBytes(products(out), expected);
  });

  it("after SIGKILL during each stage, a rerun gives byte-identical output", { timeout: 600_000 }, async () => {
    const expected = products(await reference());
    const has = (dir: string, suffix = "") => existsSync(dir) && readdirSync(dir).some((name) => name.endsWith(suffix));
    const ready: Record<(typeof STAGES)[number], (out: string) => boolean> = {
      // Some signature units done, not all (the run goes task by task with one worker).
      signatures: (out) => has(join(out, "curate/signatures"), ".done.json"),
      clusters: (out) => has(join(out, "curate/clusters")),
      select: (out) => has(join(out, "curate/removals")),
      records: (out) => has(join(out, "data")),
    };
    // The stages before the killed one, run once each into `prefix` and copied (an output holds no
    // path of its own): the state each kill starts from is the same as running them there again.
    const prefix = tempDir("lwm-planted-prefix-");
    for (const [i, stage] of STAGES.entries()) {
      const out = tempDir(`lwm-planted-kill-${stage}-`);
      if (i > 0) {
        await cli(["-o", prefix, "--workers", "1", "--stage", STAGES[i - 1] as string]);
        cpSync(prefix, out, { recursive: true });
      }
      const outcome = await killWhen(["-o", out, "--workers", "1", "--stage", stage], out, ready[stage]);
      if (outcome === "finished") {
        // The stage ran out before the poll saw it start (select is one short unit). Leave what a
        // kill after its first file leaves instead: the others not yet renamed into place, a
        // temporary file, no completion marker.
        expect(stage, `the run finished before it could be killed during ${stage}`).toBe("select");
        rmSync(join(out, "curate/select.done.json"));
        const removals = readdirSync(join(out, "curate/removals")).sort();
        for (const name of removals.slice(1)) rmSync(join(out, "curate/removals", name));
        writeFileSync(join(out, "curate/removals", `${removals[1] ?? "task-99999.jsonl"}.tmp`), "{");
      }
      expect(existsSync(join(out, "manifest.json")), stage).toBe(false);
      await cli(["-o", out, "--workers", "1"]);
      expectSameBytes(products(out), expected);
      expect(
        [...snapshot(out).keys()].filter((p) => p.endsWith(".tmp")),
        stage,
      ).toEqual([]);
    }
  });
});

/** Starts `lwm-data run` and SIGKILLs it once `ready(out)` holds (polled), or reports that it finished first. */
async function killWhen(args: string[], out: string, ready: (dir: string) => boolean): Promise<"killed" | "finished"> {
  const child: ChildProcess = spawn(process.execPath, [CLI, "run", config, "--benchmark", benchmarkGlob, "--progress", "none", ...args], {
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) return "finished";
    if (ready(out)) {
      child.kill("SIGKILL");
      await exited;
      return "killed";
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("decontamination with action: mask", () => {
  it("keeps a leaked trajectory but takes the loss off the turns that match the benchmark (AgentWorldBench layout)", async () => {
    const out = tempDir("lwm-planted-mask-");
    await cli(["-o", out, "--workers", "1"], maskConfig);
    const { truth } = corpus;
    const leaks = truth.must_go.flatMap((g) => (g.stage === "decontaminate" ? [g] : []));
    expect(leaks.length).toBeGreaterThan(5);
    const entries = filteredLines(out);
    expect(entries.filter((e) => e.stage === "decontaminate")).toEqual([]);

    const rows = new Map<string, NonNullable<ReturnType<typeof shardRow>["messages"]>>();
    for (const name of readdirSync(join(out, "data")).sort()) {
      const shard = await openShard(join(out, "data", name));
      for (let i = 0; i < shard.numRows; i++) {
        const row = shardRow(shard, i);
        if (row.messages) rows.set(row.id, row.messages);
      }
    }
    let masked = 0;
    for (const leak of leaks) {
      const messages = rows.get(leak.id);
      expect(messages, `${leak.id} (${leak.kind}) is kept`).toBeDefined();
      // One assistant message per turn: the observation, which is what carries loss.
      const observations = (messages ?? []).filter((m) => m.role === "assistant");
      for (const turn of leak.turns) {
        expect(observations[turn]?.loss, `${leak.id} (${leak.kind}) turn ${turn}, from ${leak.benchmark_id}`).toBe(false);
        masked += 1;
      }
    }
    // Other trajectories still learn: masking is confined to the matched turns.
    const learning = [...rows.values()].filter((messages) => messages.some((m) => m.loss)).length;
    expect(learning).toBeGreaterThan(rows.size / 2);
    const manifest = readManifest(out);
    expect(manifest.curation?.masked).toEqual({ records: leaks.length, turns: masked });
    expect(manifest.counts.records_in).toBe(manifest.counts.samples_out + manifest.counts.quarantined + manifest.counts.filtered);
  });
});
