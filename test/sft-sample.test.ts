import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { screenPrompts } from "../src/sft/prompts/screen-prompts.ts";
import { type SftPrompt, teacherMessages } from "../src/sft/prompts/sft-prompt.ts";
import { runSft, type SftManifest } from "../src/sft/run-sft.ts";
import { answerText } from "../src/sft/sft-sample.ts";
import { DEFAULT_VERIFY_THRESHOLDS, fidelityFor } from "../src/sft/verify/index.ts";
import { decodeText } from "../src/tokenize/tokenizer.ts";
import { demoInputsYaml, tempDir, writeConfig } from "./helpers.ts";

/**
 * `sft sample` end to end against a real OpenAI-compatible HTTP server on 127.0.0.1, scripted per
 * prompt: a malformed, a wrong and a correct candidate (or only bad ones), with 429s, 500s,
 * timeouts and malformed bodies injected on first attempts and one prompt class that always fails.
 */
const API_KEY = "sk-test-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c";
const CONCURRENCY = 3;
const MAX_RETRIES = 2;

type Fate = "kept" | "rejected" | "failed";
/** What the server does with prompt number i (in input order). */
function fateOf(i: number): Fate {
  if (i % 11 === 5) return "failed"; // 500 on every attempt
  if (i % 5 === 0) return "rejected"; // no correct candidate
  return "kept";
}
function firstAttemptFault(i: number): "429" | "500" | "timeout" | "malformed" | undefined {
  return (["429", "500", "timeout", "malformed", undefined, undefined, undefined] as const)[i % 7];
}

const think = (prompt: SftPrompt) =>
  `The action is ${JSON.stringify(prompt.messages.at(-1)?.content.slice(0, 40))}; the environment answers it.`;

function candidatesFor(i: number, prompt: SftPrompt): string[] {
  const malformed = `<think>${think(prompt)}</think><predicted_observation>${prompt.ground_truth}`;
  const wrong = `<think>${think(prompt)}</think>\n<predicted_observation>\nsomething else entirely\n</predicted_observation>`;
  const correct = `<think>\n${think(prompt)}\n</think>\n\n<predicted_observation>\n${prompt.ground_truth}\n</predicted_observation>`;
  return fateOf(i) === "rejected" ? [malformed, wrong, wrong] : [malformed, wrong, correct];
}

interface ScriptedServer {
  url: string;
  server: Server;
  requests: number;
  /** The script index of every request, in arrival order. */
  sent: number[];
  inFlight: number;
  maxInFlight: number;
  authHeaders: Set<string>;
  close(): Promise<void>;
}

/**
 * The server scripts by what it is sent, so prompts with identical messages (the demo has one
 * MCP conversation in two formats) share the first one's script — and the client's cache.
 */
function scriptIndex(prompts: SftPrompt[]): (prompt: SftPrompt) => number {
  const first = new Map<string, number>();
  prompts.forEach((prompt, i) => {
    if (!first.has(JSON.stringify(prompt.messages))) first.set(JSON.stringify(prompt.messages), i);
  });
  return (prompt) => first.get(JSON.stringify(prompt.messages)) as number;
}

async function startServer(prompts: SftPrompt[], instructions: string): Promise<ScriptedServer> {
  const indexOf = scriptIndex(prompts);
  // The teacher is sent the prompt with the answer format in its system message (no hints here).
  const byMessages = new Map(
    prompts.map((prompt) => [JSON.stringify(teacherMessages(prompt, { hints: false, instructions })), indexOf(prompt)]),
  );
  const attempts = new Map<number, number>();
  const state = { requests: 0, sent: [] as number[], inFlight: 0, maxInFlight: 0, authHeaders: new Set<string>() };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    state.requests += 1;
    {
      let body = "";
      for await (const chunk of req) body += chunk;
      state.authHeaders.add(String(req.headers.authorization));
      const request = JSON.parse(body) as { messages: unknown; n: number };
      const i = byMessages.get(JSON.stringify(request.messages));
      if (i === undefined) {
        res.writeHead(400).end(JSON.stringify({ error: { message: "unknown prompt" } }));
        return;
      }
      state.sent.push(i);
      const attempt = (attempts.get(i) ?? 0) + 1;
      attempts.set(i, attempt);
      // In flight until the response ends. Not a request held past the client's timeout: the client
      // gives up on it at its own deadline and retries, and the server learns of that only when the
      // socket's close is handled, which a loaded machine may handle after the retry arrived.
      if (!(attempt === 1 && firstAttemptFault(i) === "timeout")) {
        state.inFlight += 1;
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
        res.once("close", () => {
          state.inFlight -= 1;
        });
      }
      // Lets requests overlap: held until the client has CONCURRENCY in flight (or 150 ms pass), so
      // a client that does send in parallel shows it however loaded the machine is; one that does
      // not never gets past 1. Once it has had CONCURRENCY in flight that is shown, and requests
      // are no longer held (the later ones alone in flight, a task's last and the retries of
      // failing prompts, only waited out the 150 ms); every request still takes 15 ms, so a client
      // over the limit still shows more than CONCURRENCY in flight.
      for (const started = Date.now(); state.maxInFlight < CONCURRENCY && Date.now() - started < 150; )
        await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 15));
      const fault = attempt === 1 ? firstAttemptFault(i) : undefined;
      if (fateOf(i) === "failed" || fault === "500") {
        res.writeHead(500).end("upstream exploded");
        return;
      }
      if (fault === "429") {
        res.writeHead(429, { "retry-after": "0" }).end("slow down");
        return;
      }
      if (fault === "timeout") {
        await new Promise((resolve) => setTimeout(resolve, 700));
        if (!res.destroyed) res.writeHead(200).end("{}");
        return;
      }
      if (fault === "malformed") {
        res.writeHead(200, { "content-type": "application/json" }).end('{"choices": [{"message": ');
        return;
      }
      const texts = candidatesFor(i, prompts[i] as SftPrompt);
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `cmpl-${i}`,
          object: "chat.completion",
          choices: texts
            .slice(0, request.n)
            .map((content, index) => ({ index, message: { role: "assistant", content }, finish_reason: "stop" })),
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as ScriptedServer;
}

function sftConfig(baseUrl: string, cacheDir: string, extra: string[] = []): string {
  return writeConfig(
    [
      "inputs:",
      ...demoInputsYaml(),
      "output:",
      "  num_buckets: 2",
      "  row_group_rows: 4",
      "sft:",
      "  select: all",
      "  teacher:",
      `    base_url: ${baseUrl}`,
      "    model: scripted-teacher",
      "    api_key_env: LWM_TEST_TEACHER_KEY",
      "    n: 3",
      `    concurrency: ${CONCURRENCY}`,
      `    max_retries: ${MAX_RETRIES}`,
      "    timeout_ms: 400",
      `    cache_dir: ${cacheDir}`,
      ...extra,
    ].join("\n"),
  );
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((entry) => join(dir, entry))
    .filter((path) => statSync(path).isFile());
}

describe("sft sample against a local OpenAI-compatible server", () => {
  let server: ScriptedServer;
  let prompts: SftPrompt[];
  let configPath: string;
  let first: SftManifest;
  let outputDir: string;

  beforeAll(async () => {
    process.env.LWM_TEST_TEACHER_KEY = API_KEY;
    const cacheDir = tempDir("lwm-sft-cache-");
    // Prompts first (the server needs them to script answers); the URL is filled in after.
    const probe = await planJob(loadConfig(sftConfig("http://127.0.0.1:9/v1", cacheDir)));
    prompts = [];
    // The prompts that go out: screened (no context-free prompts, no conflicting twins).
    for await (const item of (await screenPrompts(probe)).items) if (item.kind === "prompts") prompts.push(...item.prompts);
    server = await startServer(prompts, probe.config.sft.instructions);
    configPath = sftConfig(server.url, cacheDir);
    outputDir = tempDir("lwm-sft-out-");
    const plan = await planJob(loadConfig(configPath));
    first = (await runSft(plan, { outputDir, backoff: { baseMs: 5, maxMs: 20 } })).manifest;
  });

  afterAll(async () => {
    delete process.env.LWM_TEST_TEACHER_KEY;
    await server?.close();
  });

  let indexOfPrompt: ((prompt: SftPrompt) => number) | undefined;
  /** A prompt's script index: scriptIndex over the prompts, made once (it reads every prompt's messages). */
  const scriptOf = (prompt: SftPrompt) => {
    indexOfPrompt ??= scriptIndex(prompts);
    return indexOfPrompt(prompt);
  };
  const fate = (prompt: SftPrompt) => fateOf(scriptOf(prompt));
  /**
   * Over HTTP, a prompt whose messages equal an earlier one's gets that one's answer (same
   * request, same cache entry). The demo has such twins with different real observations (the
   * first screen of the window-dumps Android recording: empty action, empty history; the
   * first `python3 -m unittest -v` of each SWE session in its layouts, mini-swe-agent wrapping
   * the output in `<returncode>`; a silent command whose OpenHands observation is its exit code),
   * but screening keeps them from the teacher (no context / conflict: the selection report), so
   * every twin left has its first twin's observation and the shared answer is right for it.
   */
  const twinOf = (prompt: SftPrompt) => prompts[scriptOf(prompt)] as SftPrompt;
  const isWrongTwin = (prompt: SftPrompt) => fate(prompt) === "kept" && twinOf(prompt).ground_truth !== prompt.ground_truth;
  const sharedAnswerPasses = (prompt: SftPrompt) =>
    fidelityFor(prompt.domain)(twinOf(prompt).ground_truth, prompt.ground_truth).score >= DEFAULT_VERIFY_THRESHOLDS.fidelity[prompt.domain];
  const httpFate = (prompt: SftPrompt): Fate => (isWrongTwin(prompt) && !sharedAnswerPasses(prompt) ? "rejected" : fate(prompt));

  it("accounts for every prompt: kept, rejected or failed, exactly as scripted", () => {
    const expected = { kept: 0, rejected: 0, failed: 0 };
    for (const prompt of prompts) expected[httpFate(prompt)] += 1;
    expect(prompts.filter(isWrongTwin)).toHaveLength(0);
    expect(prompts.filter((prompt) => httpFate(prompt) !== fate(prompt))).toHaveLength(0);
    // Every turn has context (the window-dumps recording's first screen is its initial observation,
    // and the DroidBot run's state files are companions of its events, not records of their own);
    // 4 SWE groups (10 prompts) are conflicts.
    expect(first.selection.skipped).toEqual({ no_context: 0, conflict: 10 });
    expect(first.selection.by_domain.android).toMatchObject({ no_context: 0 });
    expect(first.selection.no_context_examples ?? []).toHaveLength(0);
    expect(first.selection.prompts).toBe(first.counts.prompts);
    expect(first.selection.turns).toBe(first.counts.prompts + 10);
    expect(prompts.length).toBeGreaterThan(40);
    expect(expected.failed).toBeGreaterThan(0);
    expect(first.counts.prompts).toBe(prompts.length);
    expect({ kept: first.counts.kept, rejected: first.counts.rejected, failed: first.counts.failed }).toEqual(expected);
    expect(first.counts.kept + first.counts.rejected + first.counts.failed).toBe(first.counts.prompts);
    expect(first.counts.quarantined).toBe(0);
    // Every candidate of every answered prompt was scored: the malformed one by format, the wrong one by fidelity.
    expect(first.counts.candidates).toBe(3 * (expected.kept + expected.rejected));
    expect(first.by_rule.format).toEqual({ evaluated: first.counts.candidates, failed: expected.kept + expected.rejected });
    // Fidelity runs only where the format rule found a prediction: the wrong candidate(s) fail it.
    expect(first.by_rule.fidelity).toEqual({
      evaluated: 2 * (expected.kept + expected.rejected),
      failed: expected.kept + 2 * expected.rejected,
    });
    if (first.teacher.source !== "endpoint") throw new Error("expected the endpoint");
    expect(first.teacher.stats.failures).toBe(expected.failed);
    expect(first.teacher.stats.retries).toBeGreaterThan(0);
  });

  it("never has more requests in flight than the concurrency limit, and uses it", () => {
    expect(server.maxInFlight).toBeLessThanOrEqual(CONCURRENCY);
    expect(server.maxInFlight).toBe(CONCURRENCY);
  });

  it("kept samples train on exactly the answer and its end token", async () => {
    const shards = first.shards.map((shard) => join(outputDir, shard.path));
    expect(shards.length).toBeGreaterThan(0);
    const plan = await planJob(loadConfig(configPath));
    const byId = new Map(prompts.map((prompt) => [prompt.prompt_id, prompt]));
    let rows = 0;
    for (const path of shards) {
      const shard = await openShard(path);
      for (let r = 0; r < shard.numRows; r++) {
        const row = shardRow(shard, r);
        const prompt = byId.get(row.id) as SftPrompt;
        // Over HTTP a twin gets its first twin's answer (see httpFate).
        const answer = answerText(think(prompt), twinOf(prompt).ground_truth);
        expect(row.messages?.at(-1)).toEqual({ role: "assistant", content: answer, loss: true });
        const trained = Array.from(row.inputIds).filter((_, i) => row.lossMask[i] === 1);
        expect(decodeText(plan.tokenizer, trained)).toBe(`${answer}<|im_end|>`);
        // <think> is the tokenizer's added token, as the reference tokenizes the rendered answer.
        expect(trained[0]).toBe(plan.tokenizer.addedTokens.get("<think>"));
        // The mask is one run at the end: nothing of the prompt is trained.
        const firstTrained = row.lossMask.indexOf(1);
        expect(row.lossMask.subarray(firstTrained, firstTrained + trained.length).every((bit) => bit === 1)).toBe(true);
        rows += 1;
      }
    }
    expect(rows).toBe(first.counts.kept);
  });

  it("a rerun sends no request for answered prompts (cache) and writes identical shards", async () => {
    const before = server.sent.length;
    const shardBytes = first.shards.map((shard) => readFileSync(join(outputDir, shard.path)));
    const plan = await planJob(loadConfig(configPath));
    const second = (await runSft(plan, { outputDir, backoff: { baseMs: 5, maxMs: 20 } })).manifest;
    // Only the failed prompts go out again (failures are not cached), each with all its attempts.
    // (Twins with equal messages that fail may each go out when both are in flight at once.)
    const sent = server.sent.slice(before);
    const failedScripts = new Set(prompts.filter((prompt) => fate(prompt) === "failed").map(scriptOf));
    expect(new Set(sent)).toEqual(failedScripts);
    for (const i of failedScripts) expect(sent.filter((j) => j === i).length % (MAX_RETRIES + 1), `prompt ${i}`).toBe(0);
    expect(second.counts).toEqual(first.counts);
    expect(second.shards.map((shard) => shard.sha256)).toEqual(first.shards.map((shard) => shard.sha256));
    expect(second.shards.map((shard) => readFileSync(join(outputDir, shard.path)))).toEqual(shardBytes);
  });

  it("sends the API key as a bearer token and writes it nowhere", () => {
    expect([...server.authHeaders]).toEqual([`Bearer ${API_KEY}`]);
    const cacheDir = loadConfig(configPath).config.sft.teacher.cache_dir;
    for (const path of [...filesUnder(outputDir), ...filesUnder(cacheDir)]) expect(readFileSync(path).includes(API_KEY)).toBe(false);
  });

  it("with candidates from a file, the same prompts give the same kept samples, no HTTP at all", async () => {
    const file = join(tempDir("lwm-sft-files-"), "candidates.jsonl");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(
      file,
      `${prompts
        .map((prompt) =>
          fate(prompt) === "failed"
            ? undefined
            : JSON.stringify({ prompt_id: prompt.prompt_id, candidates: candidatesFor(scriptOf(prompt), prompt) }),
        )
        .filter((line) => line !== undefined)
        .join("\n")}\nnot json\n`,
    );
    const before = server.requests;
    const out = tempDir("lwm-sft-out-files-");
    const manifest = (await runSft(await planJob(loadConfig(configPath)), { outputDir: out, candidateFiles: [file] })).manifest;
    expect(server.requests).toBe(before);
    // Per prompt_id now, so each twin gets its own correct answer (see httpFate).
    const twinsRejectedOverHttp = prompts.filter((prompt) => httpFate(prompt) !== fate(prompt)).length;
    expect({ kept: manifest.counts.kept, rejected: manifest.counts.rejected, failed: manifest.counts.failed }).toEqual({
      kept: first.counts.kept + twinsRejectedOverHttp,
      rejected: first.counts.rejected - twinsRejectedOverHttp,
      failed: first.counts.failed,
    });
    if (manifest.teacher.source !== "files") throw new Error("expected files");
    expect(manifest.teacher.errors).toHaveLength(1);
    expect(manifest.teacher.errors[0]?.line).toBe(prompts.length - first.counts.failed + 1);
    // No twin with another observation is sent, so the endpoint and the files keep the same samples.
    expect(manifest.tokens).toEqual(first.tokens);
  });
});

describe("sft sample with the LLM judge as a gate (same client, real HTTP)", () => {
  it("judges only candidates that passed the rules; a low judgement rejects the prompt; scores land in the table", async () => {
    const judged: string[] = [];
    const server = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      const request = JSON.parse(body) as { messages: { role: string; content: string }[] };
      const candidate = request.messages.at(-1)?.content.split("## Candidate answer\n")[1] ?? "";
      judged.push(candidate);
      const score = candidate.includes("JUDGE-LOW") ? 1 : 5;
      const scores = { format: score, factuality: score, consistency: score, realism: score, quality: score };
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          choices: [
            { index: 0, message: { role: "assistant", content: `\`\`\`json\n${JSON.stringify(scores)}\n\`\`\`` }, finish_reason: "stop" },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const configPath = sftConfig(url, tempDir("lwm-sft-judge-cache-"), [
        "  judge:",
        "    enabled: true",
        "    mode: gate",
        "    min_mean: 60",
      ]);
      const plan = await planJob(loadConfig(configPath));
      const prompts: SftPrompt[] = [];
      for await (const item of (await screenPrompts(plan)).items) if (item.kind === "prompts") prompts.push(...item.prompts);
      const file = join(tempDir("lwm-sft-judge-"), "candidates.jsonl");
      const { writeFileSync } = await import("node:fs");
      const correct = (prompt: SftPrompt, note: string) =>
        `<think>\n${think(prompt)} ${note}\n</think>\n\n<predicted_observation>\n${prompt.ground_truth}\n</predicted_observation>`;
      const low = (i: number) => i % 3 === 0;
      writeFileSync(
        file,
        `${prompts
          .map((prompt, i) =>
            JSON.stringify({
              prompt_id: prompt.prompt_id,
              candidates: ["<think>x</think>", correct(prompt, low(i) ? "JUDGE-LOW" : "fine")],
            }),
          )
          .join("\n")}\n`,
      );
      const outputDir = tempDir("lwm-sft-judge-out-");
      const { manifest } = await runSft(plan, { outputDir, candidateFiles: [file] });
      const lows = prompts.filter((_, i) => low(i)).length;
      // The malformed first candidate never reaches the judge: one judge call per prompt, but
      // prompts whose judge request is the same (twins with equal messages, truth and note)
      // share one call through the client's cache.
      const judgeRequests = new Set(prompts.map((prompt, i) => JSON.stringify([prompt.messages, prompt.ground_truth, low(i)])));
      expect(judgeRequests.size).toBeLessThan(prompts.length);
      expect(judged).toHaveLength(judgeRequests.size);
      expect(judged.every((candidate) => candidate.includes("<predicted_observation>"))).toBe(true);
      expect({ kept: manifest.counts.kept, rejected: manifest.counts.rejected, failed: manifest.counts.failed }).toEqual({
        kept: prompts.length - lows,
        rejected: lows,
        failed: 0,
      });
      expect(manifest.by_rule.judge).toEqual({ evaluated: prompts.length, failed: lows });
      const { tableFromIPC } = await import("apache-arrow");
      const { readParquet } = await import("parquet-wasm");
      const table = tableFromIPC(readParquet(readFileSync(join(outputDir, "sft/candidates.parquet"))).intoIPCStream());
      const means = table.getChild("judge_mean")?.toArray() as (number | null)[];
      const statuses = table.getChild("status")?.toArray() as string[];
      expect(new Set(means.filter((mean) => mean !== null))).toEqual(new Set([0, 100]));
      expect(statuses.filter((status) => status === "kept")).toHaveLength(prompts.length - lows);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
