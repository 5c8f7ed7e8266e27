import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readCandidateFile } from "../src/sft/teacher/candidate-files.ts";
import type { ChatMessage, ChatRequest, CompletionResult } from "../src/sft/teacher/chat-types.ts";
import { judgeCandidate, parseJudgeReply } from "../src/sft/teacher/judge.ts";
import { createTeacherClient, type TeacherClientOptions } from "../src/sft/teacher/openai-client.ts";
import { cacheFilePath, legacyRequestCacheKey, requestCacheKey } from "../src/sft/teacher/request-cache.ts";
import { backoffDelay, parseRetryAfter } from "../src/sft/teacher/retry-policy.ts";
import { tempDir } from "./helpers.ts";

const API_KEY = "sk-test-9f8e7d6c5b4a3210SECRETKEY";
const KEY_ENV = "LWM_TEST_TEACHER_KEY";

/**
 * A scripted OpenAI-compatible server. The last user message starts with `<behaviour>:` and the
 * server acts on it per attempt (counted per prompt text), so each prompt exercises one path.
 */
interface Seen {
  prompt: string;
  authorization: string | undefined;
  startedAt: number;
}

class ScriptedServer {
  server: Server;
  url = "";
  requests: Seen[] = [];
  inFlight = 0;
  maxInFlight = 0;
  delayMs = 0;
  attemptsByPrompt = new Map<string, number>();

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  reset(): void {
    this.requests = [];
    this.inFlight = 0;
    this.maxInFlight = 0;
    this.delayMs = 0;
    this.attemptsByPrompt.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") return send(res, 404, "not found");
      const body = JSON.parse(raw) as { model: string; n: number; messages: ChatMessage[] };
      const prompt = body.messages.at(-1)?.content ?? "";
      this.requests.push({ prompt, authorization: req.headers.authorization, startedAt: performance.now() });
      const attempt = (this.attemptsByPrompt.get(prompt) ?? 0) + 1;
      this.attemptsByPrompt.set(prompt, attempt);
      if (this.delayMs > 0) await wait(this.delayMs);
      const behaviour = prompt.split(":")[0];
      const choices = (count: number) =>
        Array.from({ length: count }, (_, i) => ({
          index: count - 1 - i, // out of order on purpose: the client must sort by index
          message: {
            role: "assistant",
            content: `<think>t${count - 1 - i}</think><predicted_observation>${prompt} #${count - 1 - i}</predicted_observation>`,
          },
          finish_reason: "stop",
        }));
      const ok = () =>
        send(
          res,
          200,
          JSON.stringify({ id: "x", model: body.model, choices: choices(body.n), usage: { prompt_tokens: 7, completion_tokens: 9 } }),
        );
      switch (behaviour) {
        case "ok":
          return ok();
        case "429-then-ok":
          return attempt === 1 ? send(res, 429, '{"error":{"message":"slow down"}}') : ok();
        case "429-retry-after":
          return attempt === 1 ? send(res, 429, "busy", { "retry-after": "0.15" }) : ok();
        case "429-long-retry-after":
          return attempt === 1 ? send(res, 429, "busy", { "retry-after": "30" }) : ok();
        case "500-then-ok":
          return attempt === 1 ? send(res, 500, "boom") : ok();
        case "503-always":
          return send(res, 503, '{"error":{"message":"overloaded"}}');
        case "timeout-once":
          // The first attempt is never answered: the client gives up (its timeout) and closes it.
          if (attempt === 1) await new Promise((resolve) => res.once("close", resolve));
          return ok();
        case "not-json":
          return send(res, 200, "<html>gateway</html>");
        case "no-choices":
          return send(res, 200, JSON.stringify({ id: "x", object: "chat.completion" }));
        case "no-content":
          return send(res, 200, JSON.stringify({ choices: [{ index: 0, message: { role: "assistant" } }] }));
        case "bad-then-ok":
          return attempt === 1 ? send(res, 200, "{truncated") : ok();
        case "400-echo":
          // Some gateways echo request headers in errors: the key must still not reach a reason.
          return send(res, 400, JSON.stringify({ error: { message: `invalid request; you sent ${req.headers.authorization}` } }));
        default:
          return send(res, 500, `unknown behaviour ${behaviour}`);
      }
    } finally {
      this.inFlight -= 1;
    }
  }
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.destroyed) return; // the client gave up (timeout)
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body);
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const server = new ScriptedServer();
beforeAll(() => server.start());
afterAll(() => server.stop());
afterEach(() => {
  server.reset();
  delete process.env[KEY_ENV];
});

function options(overrides: Partial<TeacherClientOptions> = {}): TeacherClientOptions {
  return {
    baseUrl: server.url,
    model: "teacher-model",
    apiKeyEnv: KEY_ENV,
    concurrency: 4,
    maxRetries: 2,
    // Long enough that no answer from this local server times out on a loaded machine (issue 36):
    // the one meant to time out ("timeout-once") never answers its first attempt.
    timeoutMs: 5_000,
    backoff: { baseMs: 5, maxMs: 300 },
    ...overrides,
  };
}

function request(prompt: string, n = 2): ChatRequest {
  return {
    messages: [
      { role: "system", content: "You predict observations." },
      { role: "user", content: "ls" },
      { role: "assistant", content: "<predicted_observation>a.txt</predicted_observation>" },
      { role: "user", content: prompt },
    ],
    n,
    temperature: 0.8,
    max_tokens: 64,
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("teacher client against a scripted OpenAI-compatible server", () => {
  it("ends every request ok or with a specific reason, retrying only what is worth it", async () => {
    process.env[KEY_ENV] = API_KEY;
    const cacheDir = tempDir("lwm-teacher-");
    const client = createTeacherClient(options({ cacheDir }));
    const prompts = [
      "ok:1",
      "429-then-ok:1",
      "429-retry-after:1",
      "429-long-retry-after:1",
      "500-then-ok:1",
      "503-always:1",
      "timeout-once:1",
      "not-json:1",
      "no-choices:1",
      "no-content:1",
      "bad-then-ok:1",
      "400-echo:1",
    ];
    const results = await Promise.all(prompts.map((p) => client.complete(request(p))));
    const by = Object.fromEntries(prompts.map((p, i) => [p.split(":")[0], results[i] as CompletionResult]));

    for (const result of results) expect(result.ok || result.reason.length > 0).toBe(true);
    expect(by.ok).toEqual({
      ok: true,
      texts: [
        "<think>t0</think><predicted_observation>ok:1 #0</predicted_observation>",
        "<think>t1</think><predicted_observation>ok:1 #1</predicted_observation>",
      ],
      finishReasons: ["stop", "stop"],
      forms: ["content", "content"],
      cached: false,
      attempts: 1,
      usage: { prompt_tokens: 7, completion_tokens: 9 },
    });
    for (const name of ["429-then-ok", "429-retry-after", "429-long-retry-after", "500-then-ok", "timeout-once", "bad-then-ok"]) {
      expect(by[name], name).toMatchObject({ ok: true, attempts: 2 });
    }
    expect(by["503-always"]).toEqual({ ok: false, reason: "HTTP 503: overloaded", attempts: 3, status: 503 });
    expect(by["not-json"]).toMatchObject({ ok: false, attempts: 3, reason: expect.stringMatching(/^malformed body: not JSON/) });
    expect(by["no-choices"]).toMatchObject({ ok: false, attempts: 3, reason: "malformed body: choices missing" });
    expect(by["no-content"]).toMatchObject({
      ok: false,
      attempts: 3,
      reason: "malformed body: choices[0].message: has neither content nor reasoning",
    });
    expect(by["400-echo"]).toMatchObject({ ok: false, attempts: 1, status: 400 });
    expect((by["400-echo"] as { reason: string }).reason).toContain("invalid request; you sent Bearer <redacted>");

    // Retry-After 0.15 s is waited out; Retry-After 30 s is capped at backoff.maxMs (300 ms).
    const gap = (prompt: string) => {
      const [first, second] = server.requests.filter((r) => r.prompt === prompt);
      return (second?.startedAt ?? 0) - (first?.startedAt ?? 0);
    };
    expect(gap("429-retry-after:1")).toBeGreaterThanOrEqual(140);
    expect(gap("429-long-retry-after:1")).toBeGreaterThanOrEqual(140);
    // Capped, not waited out: far under the 30 s asked for, whatever the machine's load.
    expect(gap("429-long-retry-after:1")).toBeLessThan(15_000);

    const stats = client.stats();
    expect(stats.requests).toBe(server.requests.length);
    expect(stats.failures).toBe(5);
    expect(stats.retries).toBe(server.requests.length - prompts.length);

    // The key went out as a Bearer header and nowhere else.
    expect(new Set(server.requests.map((r) => r.authorization))).toEqual(new Set([`Bearer ${API_KEY}`]));
    expect(JSON.stringify(results)).not.toContain(API_KEY);
    expect(JSON.stringify(stats)).not.toContain(API_KEY);
    const cacheFiles = filesUnder(cacheDir);
    expect(cacheFiles).toHaveLength(7); // the successes only
    for (const file of cacheFiles) {
      expect(file).toMatch(/[/\\]([0-9a-f]{2})[/\\]\1[0-9a-f]{62}\.json$/);
      expect(readFileSync(file, "utf8")).not.toContain(API_KEY);
    }

    // A rerun pays only for what failed (five prompts, same attempts as before).
    const before = server.requests.length;
    const again = await Promise.all(prompts.map((p) => createTeacherClient(options({ cacheDir })).complete(request(p))));
    const sentAgain = server.requests.slice(before).map((r) => r.prompt.split(":")[0]);
    expect(new Set(sentAgain)).toEqual(new Set(["503-always", "not-json", "no-choices", "no-content", "400-echo"]));
    expect(again.filter((r) => r.ok && r.cached)).toHaveLength(7);
  });

  it("keeps concurrency at the limit and reaches it; a rerun with the same cache makes no HTTP request", async () => {
    server.delayMs = 30;
    const cacheDir = tempDir("lwm-teacher-");
    const client = createTeacherClient(options({ concurrency: 3, cacheDir }));
    const prompts = Array.from({ length: 20 }, (_, i) => `ok:prompt ${i}`);
    const first = await Promise.all(prompts.map((p) => client.complete(request(p, 3))));
    expect(first.every((r) => r.ok && !r.cached && r.texts.length === 3)).toBe(true);
    expect(server.requests).toHaveLength(20);
    expect(server.maxInFlight).toBe(3);
    expect(client.stats()).toMatchObject({ requests: 20, cacheHits: 0, retries: 0, failures: 0, maxInFlight: 3 });

    const rerun = createTeacherClient(options({ concurrency: 3, cacheDir }));
    const second = await Promise.all(prompts.map((p) => rerun.complete(request(p, 3))));
    expect(server.requests).toHaveLength(20);
    expect(second.map((r) => r.ok && r.cached)).toEqual(prompts.map(() => true));
    expect(second.map((r) => (r.ok ? r.texts : []))).toEqual(first.map((r) => (r.ok ? r.texts : [])));
    expect(rerun.stats()).toMatchObject({ requests: 0, cacheHits: 20 });
  });

  it("shares one HTTP call between identical requests in flight together", async () => {
    server.delayMs = 20;
    const client = createTeacherClient(options());
    const [a, b] = await Promise.all([client.complete(request("ok:same")), client.complete(request("ok:same"))]);
    expect(server.requests).toHaveLength(1);
    expect(a).toMatchObject({ ok: true, cached: false });
    expect(b).toMatchObject({ ok: true, cached: true, texts: a?.ok ? a.texts : [] });
  });

  it("honours requestsPerMinute as a sliding window over rateIntervalMs", async () => {
    // When the client sends, on its own clock: the server's arrival times add network jitter, which
    // a loaded machine makes large enough to bring two sends closer than they were (issue 36). The
    // window is p-queue's, kept on the wall clock (Date.now), so the sends are timed on that clock
    // too: a virtual machine's clock correction between two sends moves both alike.
    const sent: number[] = [];
    const fetchAndNote: typeof fetch = (input, init) => {
      sent.push(Date.now());
      return fetch(input, init);
    };
    const client = createTeacherClient(options({ concurrency: 10, requestsPerMinute: 2, rateIntervalMs: 150, fetch: fetchAndNote }));
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => client.complete(request(`ok:rate ${i}`))));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(server.requests).toHaveLength(6);
    const starts = sent.sort((x, y) => x - y);
    expect(starts).toHaveLength(6);
    // No three requests within one window (a few ms of slack for timer and clock granularity; load only adds).
    for (let i = 0; i + 2 < starts.length; i++) expect((starts[i + 2] as number) - (starts[i] as number)).toBeGreaterThanOrEqual(140);
    expect((starts[5] as number) - (starts[0] as number)).toBeGreaterThanOrEqual(290);
  });

  it("sends no Authorization header when the key's variable is unset", async () => {
    const client = createTeacherClient(options());
    expect((await client.complete(request("ok:anonymous"))).ok).toBe(true);
    expect(server.requests[0]?.authorization).toBeUndefined();
  });

  it("ends with a reason when the server cannot be reached", async () => {
    const client = createTeacherClient(options({ baseUrl: "http://127.0.0.1:9/v1", maxRetries: 1 }));
    const result = await client.complete(request("ok:nowhere"));
    expect(result).toMatchObject({ ok: false, attempts: 2, reason: expect.stringMatching(/^network error/) });
  });

  it("rejects credentials in the URL and bad limits up front", () => {
    expect(() => createTeacherClient(options({ baseUrl: "http://user:pw@127.0.0.1/v1" }))).toThrow(/credentials/);
    expect(() => createTeacherClient(options({ concurrency: 0 }))).toThrow(/concurrency/);
  });
});

describe("retry policy and cache key", () => {
  it("reads Retry-After as seconds or a date", () => {
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter("0.25")).toBe(250);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:10 GMT", Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(10_000);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it("backs off exponentially with reproducible jitter, never above maxMs", () => {
    const backoff = { baseMs: 100, maxMs: 1000 };
    expect(backoffDelay(backoff, 3, "k")).toBe(backoffDelay(backoff, 3, "k"));
    for (let retry = 1; retry <= 8; retry++) {
      const delay = backoffDelay(backoff, retry, "k");
      const full = Math.min(1000, 100 * 2 ** (retry - 1));
      expect(delay).toBeGreaterThanOrEqual(full / 2);
      expect(delay).toBeLessThanOrEqual(full);
    }
  });

  it("keys on what decides the answer: model, messages, n and sampling; not the endpoint, credentials or unset fields", () => {
    const base = request("ok:key");
    const key = requestCacheKey("m", base);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(requestCacheKey("m", { ...base, seed: undefined })).toBe(key);
    expect(requestCacheKey("m", { ...base, messages: base.messages.map((m) => ({ ...m, name: "x" }) as ChatMessage) })).toBe(key);
    expect(requestCacheKey("m", { ...base, seed: 1 })).not.toBe(key);
    expect(requestCacheKey("m2", base)).not.toBe(key);
    expect(requestCacheKey("m", { ...base, n: 3 })).not.toBe(key);
    expect(requestCacheKey("m", { ...base, temperature: 0.7 })).not.toBe(key);
    expect(requestCacheKey("m", { ...base, top_p: 0.9 })).not.toBe(key);
    expect(requestCacheKey("m", { ...base, max_tokens: 65 })).not.toBe(key);
    expect(requestCacheKey("m", { ...base, messages: base.messages.slice(1) })).not.toBe(key);
    // The v1 key (kept for reading old caches) hashed the endpoint, without its credentials.
    const legacy = legacyRequestCacheKey("http://h:8000/v1", "m", base);
    expect(legacy).not.toBe(key);
    expect(legacyRequestCacheKey("http://user:secret@h:8000/v1/", "m", base)).toBe(legacy);
    expect(legacyRequestCacheKey("http://h:9000/v1", "m", base)).not.toBe(legacy);
  });
});

describe("a teacher moved to another endpoint", () => {
  it("pays nothing again: the same model on another port answers from the cache", async () => {
    const cacheDir = tempDir("lwm-teacher-moved-");
    const prompts = Array.from({ length: 5 }, (_, i) => `ok:moved ${i}`);
    const first = await Promise.all(prompts.map((p) => createTeacherClient(options({ cacheDir })).complete(request(p))));
    expect(server.requests).toHaveLength(5);
    const moved = new ScriptedServer();
    await moved.start();
    try {
      expect(moved.url).not.toBe(server.url);
      const client = createTeacherClient(options({ cacheDir, baseUrl: `${moved.url}/` }));
      const again = await Promise.all(prompts.map((p) => client.complete(request(p))));
      expect(moved.requests).toHaveLength(0);
      expect(server.requests).toHaveLength(5);
      expect(again.map((r) => r.ok && r.cached)).toEqual(prompts.map(() => true));
      expect(again.map((r) => (r.ok ? r.texts : []))).toEqual(first.map((r) => (r.ok ? r.texts : [])));
      expect(client.stats()).toMatchObject({ requests: 0, cacheHits: 5 });
      // Another model, or another seed, on the moved server is a new request.
      await createTeacherClient(options({ cacheDir, baseUrl: moved.url, model: "other-model" })).complete(request("ok:moved 0"));
      await client.complete({ ...request("ok:moved 0"), seed: 7 });
      expect(moved.requests).toHaveLength(2);
    } finally {
      await moved.stop();
    }
  });

  it("cacheOnly (an earlier round replayed) answers from the cache and never sends a request", async () => {
    const cacheDir = tempDir("lwm-teacher-cache-only-");
    const client = createTeacherClient(options({ cacheDir }));
    expect(await client.complete(request("ok:replayed"), { cacheOnly: true })).toEqual({
      ok: false,
      reason: "not in the cache (cache only: nothing sent)",
      attempts: 0,
    });
    expect(server.requests).toHaveLength(0);
    const live = await client.complete(request("ok:replayed"));
    expect(await client.complete(request("ok:replayed"), { cacheOnly: true })).toEqual({ ...live, cached: true, attempts: 0 });
    expect(server.requests).toHaveLength(1);
    expect(client.stats()).toMatchObject({ requests: 1, cacheHits: 1, notCached: 1, failures: 0 });
  });

  it("reads answers cached under the v1 key (which hashed the endpoint) and copies them to the v2 key", async () => {
    const cacheDir = tempDir("lwm-teacher-legacy-");
    const old = request("ok:legacy");
    const answer = { texts: ["<think>old</think><predicted_observation>cached</predicted_observation>"], finishReasons: ["stop"] };
    const legacyPath = cacheFilePath(cacheDir, legacyRequestCacheKey(server.url, "teacher-model", old));
    mkdirSync(dirname(legacyPath), { recursive: true });
    writeFileSync(legacyPath, JSON.stringify(answer));
    const client = createTeacherClient(options({ cacheDir }));
    // An answer cached before forms were recorded: its forms are unknown.
    expect(await client.complete(old)).toEqual({ ok: true, ...answer, forms: [null], cached: true, attempts: 0 });
    expect(server.requests).toHaveLength(0);
    expect(JSON.parse(readFileSync(cacheFilePath(cacheDir, requestCacheKey("teacher-model", old)), "utf8"))).toEqual(answer);
    // From another endpoint, the v1 key does not match; the copied v2 entry does.
    rmSync(legacyPath);
    const moved = createTeacherClient(options({ cacheDir, baseUrl: "http://127.0.0.1:9/v1" }));
    expect(await moved.complete(old)).toMatchObject({ ok: true, cached: true, texts: answer.texts });
  });
});

describe("LLM judge", () => {
  /** A client whose fetch answers every request with `reply` as the single choice. */
  function judgeClient(reply: string, status = 200) {
    const fetchStub: typeof fetch = async () =>
      new Response(status === 200 ? JSON.stringify({ choices: [{ index: 0, message: { content: reply } }] }) : "bad", { status });
    return createTeacherClient({ ...options({ baseUrl: "http://judge.invalid/v1", maxRetries: 0 }), fetch: fetchStub });
  }
  const input = {
    domain: "terminal" as const,
    prompt: request("ok:judge").messages,
    candidate: "<think>x</think><predicted_observation>a.txt</predicted_observation>",
    groundTruth: "a.txt",
  };

  it("normalizes 1–5 scores to 0–100 and averages them", async () => {
    const reply = '{"format": 5, "factuality": 4, "consistency": 3, "realism": 2, "quality": 1}';
    expect(await judgeCandidate(judgeClient(reply), input)).toEqual({
      ok: true,
      scores: { format: 100, factuality: 75, consistency: 50, realism: 25, quality: 0 },
      mean: 50,
      raw: reply,
    });
  });

  it("finds the JSON in code fences, prose and after thinking", () => {
    const fenced = 'Here you go:\n```json\n{"format": 5, "factuality": 5, "consistency": 5, "realism": 5, "quality": 3}\n```\nDone {sic}.';
    expect(parseJudgeReply(fenced)).toMatchObject({ ok: true, mean: 90 });
    const thinking = '<think>maybe {"format": 1}</think>{"format": 3, "factuality": 3, "consistency": 3, "realism": 3, "quality": 3}';
    expect(parseJudgeReply(thinking)).toMatchObject({ ok: true, mean: 50 });
  });

  it("gives reasons for out-of-range, missing and unreadable scores", async () => {
    expect(parseJudgeReply('{"format": 6, "factuality": 4, "consistency": 3, "realism": 2, "quality": 1}')).toEqual({
      ok: false,
      reason: "judge score out of range: format=6 (expected an integer 1-5)",
    });
    expect(parseJudgeReply('{"format": 4.5, "factuality": 4, "consistency": 3, "realism": 2, "quality": 1}')).toMatchObject({ ok: false });
    expect(parseJudgeReply('{"format": 4, "factuality": 4, "consistency": 3, "realism": 2}')).toEqual({
      ok: false,
      reason: "judge score missing: quality",
    });
    expect(await judgeCandidate(judgeClient("I think it is pretty good."), input)).toEqual({
      ok: false,
      reason: "judge reply holds no JSON object of scores",
      raw: "I think it is pretty good.",
    });
    expect(await judgeCandidate(judgeClient("", 400), input)).toEqual({ ok: false, reason: "judge request failed: HTTP 400: bad" });
  });
});

describe("candidate files", () => {
  it("reads both formats and names every line that gives nothing", async () => {
    const path = join(tempDir("lwm-candidates-"), "candidates.jsonl");
    const batch = (id: string, contents: string[]) =>
      JSON.stringify({
        id: "batch_req_1",
        custom_id: id,
        response: {
          status_code: 200,
          request_id: "r",
          body: { choices: contents.map((content, index) => ({ index, message: { role: "assistant", content } })) },
        },
        error: null,
      });
    const lines = [
      JSON.stringify({ prompt_id: "p1", candidates: ["a", "b"] }),
      batch("p2", ["c", "d", "e"]),
      "{not json",
      "",
      JSON.stringify({ custom_id: "p3", response: null, error: { code: "batch_expired", message: "expired" } }),
      JSON.stringify({ custom_id: "p4", response: { status_code: 429, body: { error: { message: "rate limited" } } }, error: null }),
      JSON.stringify({ prompt_id: "p5", candidates: "oops" }),
      JSON.stringify({ something: "else" }),
      JSON.stringify({ custom_id: "p6", response: { status_code: 200, body: { choices: [{ message: {} }] } } }),
      JSON.stringify({ prompt_id: "p1", candidates: ["f"] }),
    ];
    writeFileSync(path, `${lines.join("\n")}\n`);
    const { candidates, errors } = await readCandidateFile(path);
    const texts = (prompt: string) => candidates.get(prompt)?.map((answer) => answer.text);
    expect([...candidates.keys()]).toEqual(["p1", "p2"]);
    expect([texts("p1"), texts("p2")]).toEqual([
      ["a", "b", "f"],
      ["c", "d", "e"],
    ]);
    expect(errors.map((e) => [e.line, e.promptId, e.file === path])).toEqual([
      [3, undefined, true],
      [5, "p3", true],
      [6, "p4", true],
      [7, "p5", true],
      [8, undefined, true],
      [9, "p6", true],
    ]);
    expect(errors.map((e) => e.reason)).toEqual([
      expect.stringMatching(/^not JSON/),
      "batch error batch_expired: expired",
      "HTTP 429: rate limited",
      "candidates: expected array, received string",
      'neither {"prompt_id", "candidates"} nor an OpenAI batch output line (custom_id)',
      "malformed body: response.body.choices[0].message: has neither content nor reasoning",
    ]);
  });
});

describe("candidate files that cannot be opened", () => {
  it("are a usage error naming the file, not prompts failing one by one", async () => {
    const missing = join(tempDir(), "missing.jsonl");
    await expect(readCandidateFile(missing)).rejects.toThrow(`candidate file ${missing} cannot be read: ENOENT`);
  });
});
