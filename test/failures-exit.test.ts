import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runSft, SftFailed, type SftManifest } from "../src/sft/run-sft.ts";
import { failureKind, isLocalEndpoint, missingKeyWarning } from "../src/sft/teacher/endpoint-failures.ts";
import { createTeacherClient } from "../src/sft/teacher/openai-client.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { type FakeOpenAiServer, type FakeReply, startFakeOpenAi } from "./support/fake-openai-server.ts";

/**
 * No failure looks like success: `sft sample` against a teacher that refuses (closed port), answers
 * 401, or fails every request exits 1 with the cause and the fix on stderr and writes no manifest;
 * when the first requests all fail with one connection or auth error it stops instead of retrying
 * every prompt; a partial failure is summarised by its causes; a missing API key for a remote
 * endpoint is named before the first request. `run` over inputs whose every record is quarantined
 * exits 1 with the top reasons. Healthy runs (the negative controls) exit 0.
 */
const CLI = join(ROOT, "bin/lwm-data.js");
const KEY_ENV = "LWM_TEST_FAILURES_KEY";
const CONCURRENCY = 2;
const FAIL_FAST = 16;

function sftConfig(baseUrl: string, options: { maxRetries?: number; cacheDir?: string } = {}): string {
  return writeConfig(
    [
      "inputs:",
      `  - path: ${join(ROOT, "data/demo/terminal")}/*`,
      `  - path: ${join(ROOT, "data/demo/mcp/everything-tools.jsonl")}`,
      "output:",
      "  num_buckets: 1",
      "sft:",
      "  select: all",
      "  teacher:",
      `    base_url: ${baseUrl}`,
      "    model: scripted-teacher",
      `    api_key_env: ${KEY_ENV}`,
      "    n: 2",
      `    concurrency: ${CONCURRENCY}`,
      `    max_retries: ${options.maxRetries ?? 2}`,
      "    timeout_ms: 5000",
      `    cache_dir: ${options.cacheDir ?? tempDir("lwm-failures-cache-")}`,
    ].join("\n"),
  );
}

/** The CLI's exit status and output, without blocking this process (which serves the fake teacher); the key variable unset. */
function cli(args: string[], cwd = ROOT): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env[KEY_ENV];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, cwd });
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

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const unauthorized: FakeReply = { status: 401, body: JSON.stringify({ error: { message: "Incorrect API key provided" } }) };
const wrongAnswer = (i: number) =>
  `<think>\nThe environment answers the last action; variant ${i}.\n</think>\n\n<predicted_observation>\nsomething else entirely\n</predicted_observation>`;

const servers: FakeOpenAiServer[] = [];
async function teacher(script: Parameters<typeof startFakeOpenAi>[0]): Promise<FakeOpenAiServer> {
  const server = await startFakeOpenAi(script);
  servers.push(server);
  return server;
}
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const backoff = { baseMs: 1, maxMs: 5 };

describe("sft sample: a teacher that cannot answer is a failure", () => {
  it("a closed port: exit 1, ECONNREFUSED and the fix on stderr, the unset key named; no manifest", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const outputDir = join(tempDir("lwm-failures-out-"), "sft");
    const result = await cli(["sft", "sample", sftConfig(url, { maxRetries: 1 }), "--output", outputDir, "--progress", "none"]);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toContain("ECONNREFUSED");
    expect(result.stderr).toContain(`is the server running at ${url}?`);
    expect(result.stderr).toContain(`${KEY_ENV} is not set`);
    expect(result.stderr).toMatch(/nothing more was sent/);
    // The success summary is not printed, and nothing claims to be a finished output.
    expect(result.stdout).not.toContain("kept ");
    expect(existsSync(join(outputDir, "manifest.json"))).toBe(false);
  }, 60_000);

  it("HTTP 401 for every request: exit 1 after at most 16 + concurrency requests, not one per prompt", async () => {
    const server = await teacher(() => unauthorized);
    const outputDir = join(tempDir("lwm-failures-out-"), "sft");
    const configPath = sftConfig(server.url);
    const prompts = await countPrompts(configPath);
    // Enough prompts that, without failing fast, the run would send more than the bound.
    expect(prompts).toBeGreaterThan(FAIL_FAST + CONCURRENCY);
    const result = await cli(["sft", "sample", configPath, "--output", outputDir, "--progress", "none"]);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toMatch(/all failed with HTTP 401/);
    expect(result.stderr).toContain("Incorrect API key provided");
    expect(result.stderr).toContain(`is ${KEY_ENV} set to a key it accepts? (${KEY_ENV} is not set`);
    expect(server.requests.length).toBeGreaterThanOrEqual(FAIL_FAST);
    expect(server.requests.length).toBeLessThanOrEqual(FAIL_FAST + CONCURRENCY);
    expect(existsSync(join(outputDir, "manifest.json"))).toBe(false);
  }, 60_000);

  it("a closed port with retries: fail fast bounds the attempts (runSft, counted at fetch)", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const plan = await planJob(loadConfig(sftConfig(url, { maxRetries: 3 })));
    let calls = 0;
    const counted: typeof fetch = (input, init) => {
      calls += 1;
      return fetch(input, init);
    };
    const error = await runSft(plan, { outputDir: tempDir("lwm-failures-out-"), fetch: counted, backoff }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SftFailed);
    expect((error as SftFailed).why).toBe("endpoint");
    expect((error as SftFailed).causes[0]?.kind).toBe("ECONNREFUSED");
    // Without failing fast: every prompt × (1 + max_retries) attempts.
    expect(calls).toBeGreaterThanOrEqual(FAIL_FAST);
    expect(calls).toBeLessThanOrEqual(FAIL_FAST + CONCURRENCY);
  }, 60_000);

  it("every prompt failed with a kind that is not fatal (HTTP 500): exit 1 with the causes and counts", async () => {
    const server = await teacher(() => ({ status: 500, body: "upstream exploded" }));
    const outputDir = join(tempDir("lwm-failures-out-"), "sft");
    const configPath = sftConfig(server.url, { maxRetries: 0 });
    const prompts = await countPrompts(configPath);
    const result = await cli(["sft", "sample", configPath, "--output", outputDir, "--progress", "none"]);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toContain(`all ${prompts} prompt(s) failed`);
    expect(result.stderr).toContain(`HTTP 500 ×${prompts} (prompts)`);
    expect(result.stderr).toContain("see its log");
    // Not a fail-fast stop: a 500 may pass, so every prompt was asked.
    expect(server.requests.length).toBe(prompts);
    expect(existsSync(join(outputDir, "manifest.json"))).toBe(false);
    // Each prompt's reason is still on disk for a person to read.
    expect(existsSync(join(outputDir, "sft/candidates.parquet"))).toBe(true);
  }, 60_000);

  it("a partial failure exits 0 and its summary names the causes with counts", async () => {
    let i = 0;
    // Every third request fails for good (no retries), the rest are answered (wrong, so rejected).
    const server = await teacher(() =>
      i++ % 3 === 0 ? { status: 503, body: "overloaded" } : { contents: [wrongAnswer(i), wrongAnswer(i + 1)] },
    );
    const outputDir = join(tempDir("lwm-failures-out-"), "sft");
    const result = await cli(["sft", "sample", sftConfig(server.url, { maxRetries: 0 }), "--output", outputDir, "--progress", "none"]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(outputDir, "manifest.json"), "utf8")) as SftManifest;
    expect(manifest.counts.failed).toBeGreaterThan(0);
    expect(manifest.counts.failed).toBeLessThan(manifest.counts.prompts);
    expect(result.stdout).toMatch(new RegExp(`failed {8}${manifest.counts.failed} \\([\\d.]+%\\): HTTP 503 ×${manifest.counts.failed}\\n`));
  }, 60_000);

  it("negative control: a healthy teacher exits 0 with a manifest, no causes, no warning", async () => {
    let i = 0;
    const server = await teacher(() => ({ contents: [wrongAnswer(i++), wrongAnswer(i++)] }));
    const outputDir = join(tempDir("lwm-failures-out-"), "sft");
    const result = await cli(["sft", "sample", sftConfig(server.url), "--output", outputDir, "--progress", "none"]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/warning|failed with/);
    expect(result.stdout).toMatch(/failed {8}0 \(0\.0%\)\n/);
    expect(existsSync(join(outputDir, "manifest.json"))).toBe(true);
  }, 60_000);
});

/** The prompts a config gives (a healthy run's count, from the cache-free prompt screen). */
async function countPrompts(configPath: string): Promise<number> {
  const { screenPrompts } = await import("../src/sft/prompts/screen-prompts.ts");
  const screen = await screenPrompts(await planJob(loadConfig(configPath)));
  let prompts = 0;
  for await (const item of screen.items) if (item.kind !== "quarantine") prompts += item.prompts.length;
  return prompts;
}

describe("the API key, named before the first request", () => {
  it("a remote endpoint without its key variable: a warning naming it comes before any request", async () => {
    const server = await teacher(() => unauthorized);
    const events: string[] = [];
    // The config names a hosted API; the requests go to the local server.
    const plan = await planJob(loadConfig(sftConfig("https://api.teacher.example.com/v1")));
    const routed: typeof fetch = (_input, init) => {
      events.push("request");
      return fetch(`${server.url}/chat/completions`, init);
    };
    const saved = process.env[KEY_ENV];
    delete process.env[KEY_ENV];
    try {
      const error = await runSft(plan, {
        outputDir: tempDir("lwm-failures-out-"),
        fetch: routed,
        backoff,
        onWarning: (message) => events.push(`warning: ${message}`),
      }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(SftFailed);
    } finally {
      if (saved !== undefined) process.env[KEY_ENV] = saved;
    }
    expect(events[0]).toMatch(new RegExp(`^warning: sft\\.teacher: the API key variable ${KEY_ENV} is not set`));
    expect(events.slice(1).every((event) => event === "request")).toBe(true);
    expect(events.filter((event) => event.startsWith("warning")).length).toBe(1);
  }, 60_000);

  it("no warning for a local server, nor for a set key", () => {
    const endpoint = (baseUrl: string) => ({ baseUrl, apiKeyEnv: "SOME_KEY" });
    for (const local of [
      "http://127.0.0.1:8000/v1",
      "http://localhost:8000/v1",
      "http://[::1]:8000/v1",
      "http://10.1.2.3/v1",
      "http://172.20.0.5:8000/v1",
      "http://192.168.1.10/v1",
      "http://vllm:8000/v1",
      "http://gpu-node.cluster.internal/v1",
    ]) {
      expect(isLocalEndpoint(local), local).toBe(true);
      expect(missingKeyWarning("t", endpoint(local), {}), local).toBeUndefined();
    }
    for (const remote of ["https://api.openai.com/v1", "http://8.8.8.8/v1", "http://172.32.0.1/v1", "https://example.com/v1"]) {
      expect(isLocalEndpoint(remote), remote).toBe(false);
      expect(missingKeyWarning("t", endpoint(remote), {}), remote).toContain("SOME_KEY is not set");
      expect(missingKeyWarning("t", endpoint(remote), { SOME_KEY: "sk-x" }), remote).toBeUndefined();
    }
  });

  it("failure kinds: the status, the network code, or the reason's first clause", () => {
    expect(failureKind("teacher: HTTP 401: Incorrect API key")).toBe("HTTP 401");
    expect(failureKind("network error: fetch failed (ECONNREFUSED)")).toBe("ECONNREFUSED");
    expect(failureKind("network error: fetch failed (bad port)")).toBe("bad port");
    expect(failureKind("timeout after 5000 ms")).toBe("timeout");
    expect(failureKind("anything", 429)).toBe("HTTP 429");
    // Other reasons group by their first clause, counts blanked and names kept (the run report's rule).
    expect(failureKind("model gpt-4o refused 3 prompts: over quota")).toBe("model gpt-4o refused # prompts");
    expect(failureKind("model gpt-4o refused 12 prompts")).toBe(failureKind("model gpt-4o refused 3 prompts"));
  });
});

describe("the teacher client's fail-fast", () => {
  it("gives up only when no request was answered: one answer first, then 401s, and every request is sent", async () => {
    let n = 0;
    const server = await teacher(() => (n++ === 0 ? { contents: ["hello"] } : unauthorized));
    const client = createTeacherClient({
      baseUrl: server.url,
      model: "m",
      concurrency: 1,
      maxRetries: 0,
      timeoutMs: 5000,
      backoff,
      failFastAfter: 4,
    });
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await client.complete({ messages: [{ role: "user", content: `q${i}` }], n: 1 }));
    expect(results.filter((r) => r.ok).length).toBe(1);
    expect(server.requests.length).toBe(10);
    expect(client.givenUp?.()).toBeUndefined();
    expect(client.failureKinds?.()).toEqual([{ kind: "HTTP 401", count: 9, example: "HTTP 401: Incorrect API key provided" }]);
  });

  it("without failFastAfter (how scoring uses it) every request is sent", async () => {
    const server = await teacher(() => unauthorized);
    const client = createTeacherClient({ baseUrl: server.url, model: "m", concurrency: 1, maxRetries: 0, timeoutMs: 5000, backoff });
    for (let i = 0; i < 20; i++) await client.complete({ messages: [{ role: "user", content: `q${i}` }], n: 1 });
    expect(server.requests.length).toBe(20);
    expect(client.givenUp?.()).toBeUndefined();
  });

  it("with failFastAfter, 401s from the start stop the sending: later requests end at once, unsent", async () => {
    const server = await teacher(() => unauthorized);
    const client = createTeacherClient({
      baseUrl: server.url,
      model: "m",
      concurrency: 1,
      maxRetries: 0,
      timeoutMs: 5000,
      backoff,
      failFastAfter: 4,
    });
    const results = [];
    for (let i = 0; i < 20; i++) results.push(await client.complete({ messages: [{ role: "user", content: `q${i}` }], n: 1 }));
    expect(server.requests.length).toBe(4);
    expect(client.givenUp?.()).toMatchObject({ kind: "HTTP 401", requests: 4 });
    expect(results.at(-1)).toMatchObject({ ok: false, attempts: 0, reason: expect.stringMatching(/^not sent: /) });
    expect(client.stats()).toMatchObject({ requests: 4, failures: 20 });
  });
});

describe("run: every record quarantined is a failure", () => {
  function inputs(files: Record<string, string>): { dir: string; config: string } {
    const dir = tempDir("lwm-failures-run-");
    mkdirSync(join(dir, "in"));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, "in", name), text);
    return { dir, config: writeConfig("inputs:\n  - path: in/*\noutput:\n  dir: out\n", dir) };
  }

  it("no input file readable: exit 1, the top reasons and the fix on stderr", async () => {
    const { dir, config } = inputs({ "a.txt": "not json\n{broken\n", "b.txt": "garbage text\n" });
    const result = await cli(["run", config, "--progress", "none"], dir);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toContain("every one of the 2 record(s) read was quarantined");
    expect(result.stderr).toContain("detect: no reader recognizes the content ×2");
    expect(result.stderr).toContain("set inputs[].format (or --format)");
    expect(result.stdout).toContain("samples out   0");
  }, 60_000);

  it("forced to a format the files do not hold: exit 1 with the read reason", async () => {
    const { dir, config } = inputs({ "a.jsonl": "not json\n" });
    const result = await cli(["run", config, "--format", "canonical-jsonl", "--progress", "none"], dir);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toMatch(/causes {3}read: format canonical-jsonl reads one JSON object per line ×1/);
  }, 60_000);

  it("negative control: some records read, one file quarantined: exit 0, the reason summarised", async () => {
    const good = readFileSync(join(ROOT, "data/demo/mcp/everything-tools.jsonl"), "utf8");
    const { dir, config } = inputs({ "a.jsonl": good, "b.txt": "garbage text\n" });
    const result = await cli(["run", config, "--progress", "none"], dir);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/top reasons {3}detect: no reader recognizes the content ×1 \(e\.g\. .*b\.txt\)/);
    expect(result.stderr).not.toContain("quarantined");
  }, 60_000);
});
