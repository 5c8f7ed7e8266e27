import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { parseScoreReply, renderTrajectory, trajectoryMessages } from "../src/score/score-prompt.ts";
import {
  estimateScoring,
  type ScoredRecord,
  type ScoreInput,
  type ScoreOptions,
  ScoringEndpointError,
  scoreRecords,
} from "../src/score/score-records.ts";
import { loadScorers, type Scorer, scorerSchema, scorersSchema } from "../src/score/score-schema.ts";
import { cacheFilePath, requestCacheKey } from "../src/sft/teacher/request-cache.ts";
import { tempDir } from "./helpers.ts";
import { type FakeScoreServer, type ScoreServerReply, startFakeScoreServer } from "./support/fake-score-server.ts";

const KEY_ENV = "LWM_TEST_SCORE_KEY";
const UNSET_KEY_ENV = "LWM_TEST_SCORE_KEY_NEVER_SET";
const RUBRIC = "Score 1 when the agent solved the task cleanly, 0 when the run is harness noise.";
/** Short waits so fault tests stay fast; the client's real defaults are seconds. */
const FAST: ScoreOptions = { backoff: { baseMs: 5, maxMs: 50 } };

const servers: FakeScoreServer[] = [];
afterEach(async () => {
  delete process.env[KEY_ENV];
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/**
 * The server's behaviour per prompt: the scored text carries `@@<behaviour>[:<score>]@@` (in the
 * task for a trajectory, in the observation for a turn), and the server acts on it per attempt.
 */
function scripted(_request: unknown, attempt: number, prompt: string): ScoreServerReply {
  const scored = prompt.includes("the one to score") ? prompt.slice(prompt.indexOf("the one to score")) : prompt;
  const match = /@@(\w+)(?::([\d.]+))?@@/.exec(scored);
  if (!match) return { status: 400, body: JSON.stringify({ error: { message: "no directive" } }) };
  const [, behaviour, value] = match;
  const answer = (score: unknown) => ({ content: `\`\`\`json\n${JSON.stringify({ score, reason: `because ${behaviour}` })}\n\`\`\`` });
  switch (behaviour) {
    case "ok":
      return answer(Number(value));
    case "slow":
      // Later records answer sooner, so completion order differs from input order.
      return { ...answer(Number(value)), delayMs: 10 + Math.round((1 - Number(value)) * 60) };
    case "flaky":
      return attempt <= 2 ? { status: 500, body: JSON.stringify({ error: { message: "engine overloaded" } }) } : answer(Number(value));
    case "ratelimit":
      return attempt === 1 ? { status: 429, headers: { "retry-after": "0.02" }, body: "slow down" } : answer(Number(value));
    case "stall":
      return attempt === 1 ? { ...answer(Number(value)), delayMs: 1500 } : answer(Number(value));
    case "drop":
      return attempt === 1 ? { drop: true } : answer(Number(value));
    case "trailing":
      return { content: `{"score": ${value}, "reason": "tidy"}\nHope this helps! {not json}` };
    case "think":
      return { content: `<think>first guess {"score": 1}</think>\nFinal: {"score": ${value}, "reason": "thought"}` };
    case "prose":
      return { content: "The agent did fine overall." };
    case "outofscale":
      return answer(7);
    case "nonnumeric":
      return answer("high");
    case "down":
      return { status: 503, body: JSON.stringify({ error: { message: "no healthy upstream" } }) };
    default:
      return { status: 400, body: JSON.stringify({ error: { message: `unknown behaviour ${behaviour}` } }) };
  }
}

function trajectory(id: string, task: string, observations: string[] = ["done"]): Trajectory {
  return {
    id,
    domain: "terminal",
    source: { uri: "memory://test", format: "canonical-jsonl" },
    task,
    turns: observations.map((observation, i) => ({ action: `cmd ${i + 1}`, observation })),
  };
}

function scorer(url: string, cacheDir: string, overrides: Record<string, unknown> = {}): Scorer {
  const config = scorerSchema.parse({
    name: "quality",
    base_url: url,
    model: "judge-model",
    api_key_env: UNSET_KEY_ENV,
    rubric: RUBRIC,
    concurrency: 3,
    max_retries: 3,
    timeout_ms: 400,
    cache_dir: cacheDir,
    ...overrides,
  });
  return loadScorers([config], "/nowhere")[0] as Scorer;
}

async function runAll(records: AsyncIterable<ScoreInput> | Iterable<ScoreInput>, s: Scorer, options: ScoreOptions = FAST) {
  const run = scoreRecords(records, s, options);
  const results: ScoredRecord[] = [];
  for await (const result of run.results) results.push(result);
  return { results, summary: run.summary() };
}

async function* slowly<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) {
    await new Promise((resolve) => setImmediate(resolve));
    yield item;
  }
}

describe("scoreRecords against a fake endpoint", () => {
  it("scores a slow server's records in input order, and a rerun pays nothing", async () => {
    const server = await startFakeScoreServer(scripted);
    servers.push(server);
    const cacheDir = tempDir();
    const values = [0.1, 0.9, 0.3, 0.75, 0.5, 0.05, 1, 0.6, 0.2, 0.45];
    const records = values.map((value, key) => ({ key, trajectory: trajectory(`t${key}`, `fix the build @@slow:${value}@@`) }));

    const first = await runAll(records, scorer(server.url, cacheDir), { ...FAST, window: 4 });
    expect(first.results.map((r) => r.key)).toEqual(values.map((_, key) => key));
    expect(first.results.map((r) => r.score)).toEqual(values);
    expect(first.results.every((r) => r.status === "ok" && r.reason === "because slow")).toBe(true);
    expect(first.summary).toMatchObject({ records: 10, ok: 10, failed: 0, malformed: 0, requests: 10, cached: 0, http_requests: 10 });
    expect(first.summary.paid_prompt_tokens).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(10);
    // The scorer's concurrency bounds the HTTP requests in flight.
    expect(server.maxInFlight).toBeLessThanOrEqual(3);
    expect(server.requests.every((r) => r.model === "judge-model" && r.temperature === 0 && r.n === 1)).toBe(true);

    // A fresh client (a new process) on the same cache folder, records fed one at a time.
    const second = await runAll(slowly(records), scorer(server.url, cacheDir), { ...FAST, window: 4 });
    expect(server.requests).toHaveLength(10);
    expect(second.results.map(({ key, score, reason }) => ({ key, score, reason }))).toEqual(
      first.results.map(({ key, score, reason }) => ({ key, score, reason })),
    );
    expect(second.summary).toMatchObject({ cached: 10, http_requests: 0, paid_prompt_tokens: 0, paid_completion_tokens: 0 });
    expect(second.summary.prompt_tokens).toBe(first.summary.prompt_tokens);
  });

  it("negative control: another cache folder, or another rubric, pays again", async () => {
    const server = await startFakeScoreServer(scripted);
    servers.push(server);
    const records = [0.2, 0.8].map((value, key) => ({ key, trajectory: trajectory(`t${key}`, `task @@ok:${value}@@`) }));
    await runAll(records, scorer(server.url, tempDir()));
    expect(server.requests).toHaveLength(2);
    await runAll(records, scorer(server.url, tempDir()));
    expect(server.requests).toHaveLength(4);
    const cacheDir = tempDir();
    await runAll(records, scorer(server.url, cacheDir));
    await runAll(records, scorer(server.url, cacheDir, { rubric: `${RUBRIC} Be strict.` }));
    expect(server.requests).toHaveLength(8);
  });

  it("retries 500s, 429 with Retry-After, stalls and dropped connections; records malformed answers; loses nothing; a rerun re-asks only the failed", async () => {
    const server = await startFakeScoreServer(scripted);
    servers.push(server);
    const cacheDir = tempDir();
    const tasks = [
      "@@flaky:0.6@@",
      "@@ratelimit:0.3@@",
      "@@stall:0.2@@",
      "@@drop:0.5@@",
      "@@prose@@",
      "@@outofscale@@",
      "@@nonnumeric@@",
      "@@down@@",
      "@@trailing:0.9@@",
      "@@think:0.1@@",
      "@@ok:0@@",
    ];
    const records = tasks.map((task, key) => ({ key, trajectory: trajectory(`t${key}`, `task ${key} ${task}`) }));
    const { results, summary } = await runAll(records, scorer(server.url, cacheDir));

    expect(results.map((r) => r.key)).toEqual(tasks.map((_, key) => key));
    expect(results.map((r) => r.score)).toEqual([0.6, 0.3, 0.2, 0.5, null, null, null, null, 0.9, 0.1, 0]);
    expect(results.map((r) => r.status)).toEqual([
      "ok",
      "ok",
      "ok",
      "ok",
      "malformed",
      "malformed",
      "malformed",
      "failed",
      "ok",
      "ok",
      "ok",
    ]);
    expect(results[4]?.reason).toMatch(/^malformed: no JSON object with a "score"/);
    expect(results[5]?.reason).toBe("malformed: score 7 is outside the scale 0..1");
    expect(results[6]?.reason).toBe('malformed: score is not a number: "high"');
    expect(results[7]?.reason).toBe("failed: HTTP 503: no healthy upstream");
    expect(results[8]?.reason).toBe("tidy");
    expect(results[9]?.reason).toBe("thought");
    // Attempts per record: the faults were retried, the down server max_retries times.
    expect(results.map((r) => r.http_requests)).toEqual([3, 2, 2, 2, 1, 1, 1, 4, 1, 1, 1]);
    expect(summary).toMatchObject({ records: 11, ok: 7, malformed: 3, failed: 1, skipped: 0, requests: 11, http_requests: 19, retries: 8 });

    const before = server.requests.length;
    const rerun = await runAll(records, scorer(server.url, cacheDir));
    // Malformed answers are answers: cached, not paid again. Only the failed record is asked again.
    expect(server.requests.length - before).toBe(4);
    expect(rerun.summary).toMatchObject({ cached: 10, http_requests: 4, ok: 7, malformed: 3, failed: 1 });
    expect(rerun.results.map((r) => [r.key, r.score, r.reason])).toEqual(results.map((r) => [r.key, r.score, r.reason]));
  });

  it("turns scope: one request per observation turn, aggregated; a malformed turn leaves the record without a score", async () => {
    const server = await startFakeScoreServer(scripted);
    servers.push(server);
    const cacheDir = tempDir();
    const records = [
      { key: 0, trajectory: trajectory("a", "task a", ["@@ok:0.8@@", "", "@@ok:0.2@@", "@@ok:0.5@@"]) },
      { key: 1, trajectory: trajectory("b", "task b", ["@@ok:0.9@@", "@@prose@@"]) },
      { key: 2, trajectory: trajectory("c", "task c", ["", "  "]) },
    ];
    const min = await runAll(records, scorer(server.url, cacheDir, { scope: "turns", aggregate: "min" }));
    expect(server.requests).toHaveLength(5);
    expect(min.results[0]).toMatchObject({ key: 0, score: 0.2, status: "ok", requests: 3 });
    expect(min.results[0]?.turns?.map((t) => [t.turn, t.score])).toEqual([
      [1, 0.8],
      [3, 0.2],
      [4, 0.5],
    ]);
    expect(min.results[0]?.reason).toBe("min of 3 turns; lowest: turn 3 (0.2): because ok");
    expect(min.results[1]).toMatchObject({ key: 1, score: null, status: "malformed" });
    expect(min.results[1]?.reason).toMatch(/^malformed: turn 2: no JSON object/);
    expect(min.results[2]).toMatchObject({ key: 2, score: null, status: "skipped", requests: 0 });
    expect(min.summary).toMatchObject({ records: 3, ok: 1, malformed: 1, skipped: 1, requests: 5 });

    // Same prompts, another aggregate: all from the cache.
    const mean = await runAll(records, scorer(server.url, cacheDir, { scope: "turns", aggregate: "mean" }));
    expect(server.requests).toHaveLength(5);
    expect(mean.results[0]?.score).toBeCloseTo(0.5);
  });

  it("one cache with SFT: answers land where the teacher's request cache keeps them", async () => {
    const server = await startFakeScoreServer(scripted);
    servers.push(server);
    const cacheDir = tempDir();
    const s = scorer(server.url, cacheDir, { max_tokens: 256 });
    const t = trajectory("t", "task @@ok:0.4@@");
    await runAll([{ key: 0, trajectory: t }], s);
    const messages = trajectoryMessages(t, s.rubric, s.scale, s.max_chars);
    const key = requestCacheKey("judge-model", { messages, n: 1, temperature: 0, max_tokens: 256 });
    expect(existsSync(cacheFilePath(cacheDir, key))).toBe(true);
  });
});

describe("an unusable endpoint stops the unit", () => {
  it("connection refused: a clear error naming the endpoint and the key variable, not a column of nulls", async () => {
    const server = await startFakeScoreServer(scripted);
    const url = server.url;
    await server.close();
    const records = [0, 1, 2].map((key) => ({ key, trajectory: trajectory(`t${key}`, `task @@ok:0.5@@ ${key}`) }));
    const run = scoreRecords(records, scorer(url, tempDir(), { max_retries: 1 }), FAST);
    const seen: ScoredRecord[] = [];
    const error = await (async () => {
      for await (const result of run.results) seen.push(result);
    })().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ScoringEndpointError);
    expect((error as Error).message).toContain(url);
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect((error as Error).message).toContain(`${UNSET_KEY_ENV} is not set`);
    expect(seen).toEqual([]);
  });

  it("fails fast on a long unit once the first requests all fail alike", async () => {
    const server = await startFakeScoreServer(() => ({ status: 401, body: JSON.stringify({ error: { message: "invalid api key" } }) }));
    servers.push(server);
    process.env[KEY_ENV] = "sk-wrong";
    let fed = 0;
    function* many() {
      for (let key = 0; key < 1000; key++) {
        fed += 1;
        yield { key, trajectory: trajectory(`t${key}`, `task ${key}`) };
      }
    }
    const run = scoreRecords(many(), scorer(server.url, tempDir(), { api_key_env: KEY_ENV }), { ...FAST, failFastAfter: 5, window: 2 });
    const error = await (async () => {
      for await (const _ of run.results);
    })().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ScoringEndpointError);
    expect((error as ScoringEndpointError).signature).toBe("HTTP 401");
    expect((error as Error).message).toMatch(new RegExp(`check ${KEY_ENV} \\(it is set\\)`));
    // 401 is not retried, and the unit stopped early.
    expect(server.requests.length).toBeLessThan(10);
    expect(fed).toBeLessThan(10);
  });

  it("negative control: one answer in the unit, or failures of a passing kind, give nulls with reasons instead", async () => {
    const server = await startFakeScoreServer((request, attempt, prompt) =>
      prompt.includes("@@ok") ? scripted(request, attempt, prompt) : { status: 401, body: "no" },
    );
    servers.push(server);
    const records = ["@@ok:0.7@@", "x", "y"].map((task, key) => ({ key, trajectory: trajectory(`t${key}`, `task ${task}`) }));
    const mixed = await runAll(slowly(records), scorer(server.url, tempDir()));
    expect(mixed.results.map((r) => [r.key, r.score, r.status])).toEqual([
      [0, 0.7, "ok"],
      [1, null, "failed"],
      [2, null, "failed"],
    ]);
    expect(mixed.results[1]?.reason).toBe("failed: HTTP 401: no");

    const down = await startFakeScoreServer(() => ({ status: 503, body: "busy" }));
    servers.push(down);
    const allDown = await runAll(records, scorer(down.url, tempDir(), { max_retries: 1 }));
    expect(allDown.summary).toMatchObject({ records: 3, failed: 3 });
    expect(allDown.results.map((r) => r.reason)).toEqual(["failed: HTTP 503: busy", "failed: HTTP 503: busy", "failed: HTTP 503: busy"]);
  });
});

describe("the score prompt and answer", () => {
  const scale = { min: 0, max: 1 };

  it("reads scores from fences, trailing text and thinking; refuses the rest", () => {
    expect(parseScoreReply('```json\n{"score": 0.25, "reason": "meh"}\n```', scale)).toEqual({ ok: true, score: 0.25, reason: "meh" });
    expect(parseScoreReply('Sure. {"score": "1", "reason": "good"} Anything else?', scale)).toEqual({ ok: true, score: 1, reason: "good" });
    expect(parseScoreReply('<think>{"score": 0.9}</think>{"score": 0.4}', scale)).toEqual({ ok: true, score: 0.4, reason: "" });
    expect(parseScoreReply('{"score": 3}', { min: 1, max: 5 })).toMatchObject({ ok: true, score: 3 });
    expect(parseScoreReply('{"score": 1.5}', scale)).toEqual({ ok: false, reason: "score 1.5 is outside the scale 0..1" });
    expect(parseScoreReply('{"score": null}', scale)).toEqual({ ok: false, reason: "score is not a number: null" });
    expect(parseScoreReply('{"rating": 1}', scale).ok).toBe(false);
    expect(parseScoreReply('{"score": 0.5,}', scale).ok).toBe(false);
  });

  it("renders turns with their numbers and cuts long text in the middle, saying so", () => {
    const t = trajectory("t", "Make the tests pass", ["ls output", "x".repeat(5000), "all green"]);
    const text = renderTrajectory(t);
    expect(text).toContain("Task:\nMake the tests pass");
    expect(text).toMatch(/### Turn 1\nAction:\ncmd 1\nObservation:\nls output/);
    expect(text).toContain("### Turn 3");
    const short = trajectoryMessages(t, RUBRIC, scale, 100_000);
    expect(short[1]?.content).not.toContain("cut to fit");
    const cut = trajectoryMessages(t, RUBRIC, scale, 1000);
    const user = cut[1]?.content ?? "";
    expect(user).toContain("Make the tests pass");
    expect(user).toContain("all green");
    expect(user).toMatch(/\[… \d+ characters cut …\]/);
    expect(user).toMatch(/The text was cut to fit: \d+ of its \d+ characters were left out/);
    expect(user.length).toBeLessThan(1300);
    expect(cut[0]?.content).toContain(RUBRIC);
    expect(cut[0]?.content).toContain('{"score": 1, "reason"');
  });
});

describe("scorer config", () => {
  const base = { name: "judge-quality", base_url: "http://127.0.0.1:8000/v1", model: "m" };

  it("fills sensible defaults", () => {
    const parsed = scorerSchema.parse({ ...base, rubric: "r" });
    expect(parsed).toMatchObject({
      api_key_env: "OPENAI_API_KEY",
      scope: "trajectory",
      aggregate: "mean",
      scale: { min: 0, max: 1 },
      temperature: 0,
      requests_per_minute: 0,
      cache_dir: ".lwm-cache/teacher",
    });
    expect(scorersSchema.parse(undefined)).toEqual([]);
  });

  it("refuses a bad name, both or neither rubric, an empty scale, unknown keys and duplicate names", () => {
    const issues = (value: unknown) => scorersSchema.safeParse(value).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? [];
    expect(issues([{ ...base, name: "Judge Quality", rubric: "r" }])[0]).toMatch(/^0\.name: a scorer name is lower-case/);
    expect(issues([{ ...base, rubric: "r", rubric_file: "r.md" }])).toEqual([
      "0.rubric: give exactly one of rubric (inline text) and rubric_file (a path)",
    ]);
    expect(issues([{ ...base }])).toHaveLength(1);
    expect(issues([{ ...base, rubric: "r", scale: { min: 1, max: 1 } }])).toEqual(["0.scale: scale.min must be below scale.max"]);
    expect(issues([{ ...base, rubric: "r", rubrik: "x" }])[0]).toMatch(/rubrik/);
    expect(
      issues([
        { ...base, rubric: "r" },
        { ...base, rubric: "s" },
      ]),
    ).toEqual(["1.name: duplicate scorer name judge-quality"]);
    expect(
      issues([
        { ...base, rubric: "r" },
        { ...base, name: "judge_noise", rubric: "s" },
      ]),
    ).toEqual([]);
  });

  it("reads rubric_file and resolves cache_dir relative to the config folder; a missing file names the key", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "rubrics"));
    writeFileSync(join(dir, "rubrics/noise.md"), "Score harness noise.\n");
    const configs = scorersSchema.parse([{ ...base, rubric_file: "rubrics/noise.md" }]);
    const [loaded] = loadScorers(configs, dir);
    expect(loaded).toMatchObject({
      rubric: "Score harness noise.",
      rubric_source: join(dir, "rubrics/noise.md"),
      cache_dir: join(dir, ".lwm-cache/teacher"),
    });
    expect(loaded?.rubric_sha256).toMatch(/^[0-9a-f]{64}$/);
    const missing = scorersSchema.parse([
      { ...base, rubric: "r" },
      { ...base, name: "other", rubric_file: "nope.md" },
    ]);
    expect(() => loadScorers(missing, dir, "job.yaml: scorers")).toThrow(/^job\.yaml: scorers\[1\]\.rubric_file: cannot read .*nope\.md/);
  });

  it("estimates requests and tokens for plan", () => {
    const s = loadScorers(scorersSchema.parse([{ ...base, rubric: "r".repeat(400), max_chars: 10_000 }]), "/x")[0] as Scorer;
    const whole = estimateScoring(s, { records: 100, meanChars: 4000 });
    expect(whole).toEqual({ requests: 100, prompt_tokens: 100 * Math.ceil((600 + 400 + 4000) / 4), completion_tokens: 8000 });
    // Past max_chars the prompt stops growing.
    expect(estimateScoring(s, { records: 100, meanChars: 1e6 }).prompt_tokens).toBe(100 * Math.ceil((600 + 400 + 10_000) / 4));
    const turns = estimateScoring({ ...s, scope: "turns" }, { records: 10, meanChars: 4000, meanTurns: 4 });
    expect(turns.requests).toBe(40);
    expect(turns.prompt_tokens).toBe(40 * Math.ceil((600 + 400 + 2500) / 4));
  });
});
