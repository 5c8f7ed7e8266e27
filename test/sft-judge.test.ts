import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { DOMAINS } from "../src/core/trajectory.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { JUDGE_DIMENSIONS } from "../src/sft/judge/dimensions.ts";
import { judgeEndpoint } from "../src/sft/judge/judge-summary.ts";
import { rubricDimensions, rubricFor } from "../src/sft/judge/rubrics.ts";
import { readPrompts } from "../src/sft/prompts/read-prompts.ts";
import { type SftPrompt, teacherMessages } from "../src/sft/prompts/sft-prompt.ts";
import { runSft, type SftManifest } from "../src/sft/run-sft.ts";
import { buildJudgeMessages, judgeSystemMessage } from "../src/sft/teacher/judge.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { type FakeChatRequest, type FakeOpenAiServer, judgeReply, startFakeOpenAi } from "./support/fake-openai-server.ts";

/**
 * The LLM judge on its own endpoint and model, with a rubric per domain, end to end: a fake
 * teacher and a separate fake judge (each counting its requests and keys); the judge's scores per
 * dimension land in the candidates table and its counts in the manifest.
 */
const TEACHER_KEY_ENV = "LWM_TEST_JUDGE_TEACHER_KEY";
const JUDGE_KEY_ENV = "LWM_TEST_JUDGE_KEY";

describe("judge rubrics", () => {
  it("one per domain, each describing the five dimensions, each its own text", () => {
    const texts = new Set<string>();
    for (const domain of DOMAINS) {
      const rubric = rubricFor(domain);
      expect(rubricDimensions(rubric.text), domain).toEqual([...JUDGE_DIMENSIONS]);
      expect(rubric.sha256).toBe(createHash("sha256").update(rubric.text).digest("hex"));
      texts.add(rubric.text);
    }
    expect(texts.size).toBe(DOMAINS.length);
  });

  it("the judge's system message is the domain's rubric with the reply format; the case goes in the user message", () => {
    const messages = buildJudgeMessages({
      domain: "mcp",
      prompt: [{ role: "user", content: '{"name": "echo"}' }],
      candidate: "<think>x</think><predicted_observation>y</predicted_observation>",
      groundTruth: "y",
    });
    expect(messages[0]).toEqual({ role: "system", content: judgeSystemMessage("mcp") });
    expect(messages[0]?.content).toContain(rubricFor("mcp").text);
    expect(messages[0]?.content).not.toContain(rubricFor("terminal").text);
    expect(messages[0]?.content).toMatch(/JSON object of integers 1-5/);
    expect(messages[1]?.content).toContain("## Real observation\ny\n\n## Candidate answer\n<think>x</think>");
  });

  it("the judge endpoint defaults to the teacher's, key by key; the same model is flagged as self-judging", () => {
    const teacher = { base_url: "http://t:8000/v1", model: "teacher", api_key_env: "T_KEY" };
    expect(judgeEndpoint({ base_url: null, model: null, api_key_env: null }, teacher)).toEqual({
      baseUrl: "http://t:8000/v1",
      model: "teacher",
      apiKeyEnv: "T_KEY",
      selfJudging: true,
    });
    expect(judgeEndpoint({ base_url: "http://j:9000/v1", model: "judge", api_key_env: null }, teacher)).toEqual({
      baseUrl: "http://j:9000/v1",
      model: "judge",
      apiKeyEnv: "T_KEY",
      selfJudging: false,
    });
    expect(judgeEndpoint({ base_url: "http://j:9000/v1", model: null, api_key_env: "J_KEY" }, teacher).selfJudging).toBe(true);
  });
});

/** Per prompt, what the judge makes of its passing candidate: fine (scores 5,4,4,3,5), low (all 1) or garbled (no JSON). */
type Verdict = "fine" | "low" | "garbled";
const VERDICTS: Verdict[] = ["fine", "low", "garbled"];
const verdictOf = (promptId: string): Verdict =>
  VERDICTS[(createHash("sha256").update(`judge:${promptId}`).digest()[0] as number) % VERDICTS.length] as Verdict;
const FINE = { format: 5, factuality: 4, consistency: 4, realism: 3, quality: 5 };

function config(teacherUrl: string, cacheDir: string, judge: string[]): string {
  return writeConfig(
    [
      "inputs:",
      `  - path: ${join(ROOT, "data/demo/terminal")}/*`,
      `  - path: ${join(ROOT, "data/demo/mcp/everything-tools.jsonl")}`,
      `  - path: ${join(ROOT, "data/demo/search/agent-trace.jsonl")}`,
      `  - path: ${join(ROOT, "data/demo/web")}/*`,
      `  - path: ${join(ROOT, "data/demo/os")}/*`,
      "sft:",
      "  select: last",
      "  teacher:",
      `    base_url: ${teacherUrl}`,
      "    model: scripted-teacher",
      `    api_key_env: ${TEACHER_KEY_ENV}`,
      "    n: 2",
      "    max_retries: 0",
      `    cache_dir: ${cacheDir}`,
      "  judge:",
      "    enabled: true",
      "    mode: gate",
      "    min_mean: 60",
      ...judge,
    ].join("\n"),
  );
}

interface Row {
  prompt_id: string;
  domain: string;
  candidate_index: number;
  status: string;
  judge_format: number | null;
  judge_factuality: number | null;
  judge_consistency: number | null;
  judge_realism: number | null;
  judge_quality: number | null;
  judge_mean: number | null;
  reasons: string;
}

function tableRows(outputDir: string): Row[] {
  const table = tableFromIPC(readParquet(readFileSync(join(outputDir, "sft/candidates.parquet"))).intoIPCStream());
  return table.toArray().map((row) => row.toJSON() as unknown as Row);
}

describe("sft sample with a judge on its own endpoint", () => {
  let teacher: FakeOpenAiServer;
  let judge: FakeOpenAiServer;
  let prompts: SftPrompt[];
  const byTruth = new Map<string, SftPrompt>();
  const byId = new Map<string, SftPrompt>();
  let manifest: SftManifest;
  const outputDir = tempDir("lwm-judge-out-");
  const cacheDir = tempDir("lwm-judge-cache-");

  /** The prompt a judge request is about, found by the real observation it carries. */
  const promptOfJudgeRequest = (request: FakeChatRequest): SftPrompt => {
    const user = request.messages.at(-1)?.content ?? "";
    const truth = user.split("## Real observation\n")[1]?.split("\n\n## Candidate answer\n")[0] ?? "";
    return byTruth.get(truth) as SftPrompt;
  };

  /** The teacher: a malformed candidate, then a right one whose thinking names the prompt. */
  const teacherScript = (truths: Map<string, SftPrompt>) => (request: FakeChatRequest) => {
    const prompt = truths.get(JSON.stringify(request.messages));
    if (!prompt) return { status: 400, body: '{"error": {"message": "unknown prompt (a judge request sent to the teacher?)"}}' };
    const right = `<think>\nFor ${prompt.prompt_id}, the environment answers with its current state.\n</think>\n\n<predicted_observation>\n${prompt.ground_truth}\n</predicted_observation>`;
    return { contents: ["<think>x</think>", right] };
  };

  /** The judge: scores by the prompt's verdict. */
  const judgeScript = (request: FakeChatRequest) => {
    const verdict = verdictOf(promptOfJudgeRequest(request).prompt_id);
    if (verdict === "garbled") return { contents: ["I think it is a pretty good prediction."] };
    return { contents: [judgeReply(verdict === "low" ? { format: 1, factuality: 1, consistency: 1, realism: 1, quality: 1 } : FINE)] };
  };

  beforeAll(async () => {
    process.env[TEACHER_KEY_ENV] = "sk-teacher-key";
    process.env[JUDGE_KEY_ENV] = "sk-judge-key";
    const probe = await planJob(loadConfig(config("http://127.0.0.1:9/v1", cacheDir, [])));
    prompts = [];
    for await (const item of readPrompts(probe, new Map())) if (item.kind === "prompts") prompts.push(...item.prompts);
    for (const prompt of prompts) {
      byTruth.set(prompt.ground_truth, prompt);
      byId.set(prompt.prompt_id, prompt);
    }
    const settings = { hints: false, instructions: probe.config.sft.instructions };
    teacher = await startFakeOpenAi(teacherScript(new Map(prompts.map((p) => [JSON.stringify(teacherMessages(p, settings)), p]))));
    judge = await startFakeOpenAi(judgeScript);
    const configPath = config(teacher.url, cacheDir, [
      `    base_url: ${judge.url}`,
      "    model: judge-model",
      `    api_key_env: ${JUDGE_KEY_ENV}`,
    ]);
    manifest = (await runSft(await planJob(loadConfig(configPath)), { outputDir, backoff: { baseMs: 1, maxMs: 5 } })).manifest;
  });

  afterAll(async () => {
    delete process.env[TEACHER_KEY_ENV];
    delete process.env[JUDGE_KEY_ENV];
    await teacher?.close();
    await judge?.close();
  });

  it("the teacher gets only candidate requests, the judge only judge requests, each with its own model and key", () => {
    expect(new Set(prompts.map((p) => verdictOf(p.prompt_id)))).toEqual(new Set(VERDICTS));
    expect(new Set(prompts.map((p) => p.domain)).size).toBeGreaterThanOrEqual(4);
    expect(teacher.requests).toHaveLength(prompts.length);
    expect(new Set(teacher.requests.map((r) => r.model))).toEqual(new Set(["scripted-teacher"]));
    expect([...teacher.authorizations]).toEqual(["Bearer sk-teacher-key"]);
    // One judge request per prompt: only the candidate that passed the rules is judged, greedily.
    expect(judge.requests).toHaveLength(prompts.length);
    expect(new Set(judge.requests.map((r) => r.model))).toEqual(new Set(["judge-model"]));
    expect(judge.requests.every((r) => r.n === 1 && r.temperature === 0)).toBe(true);
    expect([...judge.authorizations]).toEqual(["Bearer sk-judge-key"]);
  });

  it("each judge request carries the rubric of its prompt's domain", () => {
    const domainsJudged = new Set<string>();
    for (const request of judge.requests) {
      const prompt = promptOfJudgeRequest(request);
      expect(prompt, "the judge request names a real observation").toBeDefined();
      expect(request.messages[0]).toEqual({ role: "system", content: judgeSystemMessage(prompt.domain) });
      for (const other of DOMAINS) if (other !== prompt.domain) expect(request.messages[0]?.content).not.toContain(rubricFor(other).text);
      domainsJudged.add(prompt.domain);
    }
    expect(domainsJudged.size).toBeGreaterThanOrEqual(4);
  });

  it("stores the judge's scores per dimension and their mean per candidate; a low or unreadable judgement gates", () => {
    const rows = tableRows(outputDir);
    expect(rows).toHaveLength(2 * prompts.length);
    for (const row of rows) {
      const verdict = verdictOf(row.prompt_id);
      const judged = row.candidate_index === 1;
      const scores = [row.judge_format, row.judge_factuality, row.judge_consistency, row.judge_realism, row.judge_quality, row.judge_mean];
      if (!judged || verdict === "garbled") expect(scores, row.prompt_id).toEqual([null, null, null, null, null, null]);
      else if (verdict === "low") expect(scores).toEqual([0, 0, 0, 0, 0, 0]);
      else expect(scores).toEqual([100, 75, 75, 50, 100, 80]);
      if (judged) expect(row.status, row.prompt_id).toBe(verdict === "fine" ? "kept" : "rejected");
      if (judged && verdict === "garbled") expect(row.reasons).toContain("judge: judge reply holds no JSON object of scores");
    }
    const count = (verdict: Verdict) => prompts.filter((p) => verdictOf(p.prompt_id) === verdict).length;
    expect(manifest.counts).toMatchObject({ kept: count("fine"), rejected: count("low") + count("garbled"), failed: 0 });
  });

  it("counts the judge in the manifest: endpoint, model, rubrics, judged, errors and mean scores per domain", () => {
    const judgeInfo = manifest.judge;
    if (!judgeInfo) throw new Error("expected the judge in the manifest");
    expect(judgeInfo).toMatchObject({
      base_url: judge.url,
      model: "judge-model",
      self_judging: false,
      judged: prompts.length,
      errors: prompts.filter((p) => verdictOf(p.prompt_id) === "garbled").length,
      stats: { requests: prompts.length, cacheHits: 0, failures: 0 },
    });
    const domains = [...new Set(prompts.map((p) => p.domain))].sort();
    expect(Object.keys(judgeInfo.rubrics)).toEqual(domains);
    for (const domain of domains) {
      expect(judgeInfo.rubrics[domain]).toBe(rubricFor(domain).sha256);
      const inDomain = prompts.filter((p) => p.domain === domain);
      const read = inDomain.filter((p) => verdictOf(p.prompt_id) !== "garbled");
      const fine = read.filter((p) => verdictOf(p.prompt_id) === "fine").length;
      expect(judgeInfo.by_domain[domain]).toEqual({
        judged: inDomain.length,
        errors: inDomain.length - read.length,
        mean:
          read.length === 0
            ? { format: null, factuality: null, consistency: null, realism: null, quality: null, mean: null }
            : {
                format: Math.round((100 * fine * 100) / read.length) / 100,
                factuality: Math.round((75 * fine * 100) / read.length) / 100,
                consistency: Math.round((75 * fine * 100) / read.length) / 100,
                realism: Math.round((50 * fine * 100) / read.length) / 100,
                quality: Math.round((100 * fine * 100) / read.length) / 100,
                mean: Math.round((80 * fine * 100) / read.length) / 100,
              },
      });
    }
    expect(manifest.by_rule.judge).toEqual({
      evaluated: prompts.length,
      failed: prompts.filter((p) => verdictOf(p.prompt_id) !== "fine").length,
    });
  });

  it("a rerun pays neither the teacher nor the judge", async () => {
    const [teacherBefore, judgeBefore] = [teacher.requests.length, judge.requests.length];
    const configPath = config(teacher.url, cacheDir, [
      `    base_url: ${judge.url}`,
      "    model: judge-model",
      `    api_key_env: ${JUDGE_KEY_ENV}`,
    ]);
    const again = (await runSft(await planJob(loadConfig(configPath)), { outputDir, backoff: { baseMs: 1, maxMs: 5 } })).manifest;
    expect([teacher.requests.length, judge.requests.length]).toEqual([teacherBefore, judgeBefore]);
    expect(again.judge?.stats).toMatchObject({ requests: 0, cacheHits: prompts.length });
    expect(again.counts).toEqual(manifest.counts);
  });

  it("without sft.judge.base_url and model, the teacher judges itself, and the manifest says so", async () => {
    const teacherBefore = teacher.requests.length;
    const judgeBefore = judge.requests.length;
    // The teacher server now also answers judge requests (it tells them by their system message).
    const selfJudged = tempDir("lwm-judge-self-");
    const configPath = config(teacher.url, cacheDir, []);
    const plan = await planJob(loadConfig(configPath));
    const truths = new Map(
      prompts.map((p) => [JSON.stringify(teacherMessages(p, { hints: false, instructions: plan.config.sft.instructions })), p]),
    );
    const both = await startFakeOpenAi((request) =>
      request.messages[0]?.content.startsWith("You grade a world model") ? judgeScript(request) : teacherScript(truths)(request),
    );
    try {
      const plan2 = await planJob(loadConfig(config(both.url, tempDir("lwm-judge-self-cache-"), [])));
      const self = (await runSft(plan2, { outputDir: selfJudged, backoff: { baseMs: 1, maxMs: 5 } })).manifest;
      expect(self.judge).toMatchObject({ base_url: both.url, model: "scripted-teacher", self_judging: true, judged: prompts.length });
      expect(both.requests.filter((r) => r.messages[0]?.content.startsWith("You grade a world model"))).toHaveLength(prompts.length);
      expect([...both.authorizations]).toEqual(["Bearer sk-teacher-key"]);
      expect([teacher.requests.length, judge.requests.length]).toEqual([teacherBefore, judgeBefore]);
      expect(self.counts).toEqual(manifest.counts);
    } finally {
      await both.close();
    }
  });
});
