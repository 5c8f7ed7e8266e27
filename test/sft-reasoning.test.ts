import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { screenPrompts } from "../src/sft/prompts/screen-prompts.ts";
import { type SftPrompt, teacherMessages } from "../src/sft/prompts/sft-prompt.ts";
import { runSft, type SftManifest } from "../src/sft/run-sft.ts";
import { readCandidateFile } from "../src/sft/teacher/candidate-files.ts";
import { type AssistantMessage, type TeacherAnswerForm, teacherAnswer } from "../src/sft/teacher/teacher-answer.ts";
import { parseCandidate } from "../src/sft/verify/candidate-format.ts";
import { demoInputsYaml, tempDir, writeConfig } from "./helpers.ts";
import { type FakeOpenAiServer, startFakeOpenAi } from "./support/fake-openai-server.ts";

/**
 * Reasoning teachers: a model served with a reasoning parser (vLLM `--reasoning-parser`, SGLang,
 * DeepSeek's API, OpenRouter, Ollama) returns its thinking beside `content`, not in it. Such answers
 * must be kept when right, with the same thinking tokens a `<think>`-in-content teacher gives.
 */

const THINK = "The command lists the folder; the files are the ones created before.\nNothing else changed.";
const PREDICTION = "README.md\nsrc\n";
const IN_CONTENT = `<think>\n${THINK}\n</think>\n\n<predicted_observation>\n${PREDICTION}\n</predicted_observation>`;
const ANSWER = `<predicted_observation>\n${PREDICTION}\n</predicted_observation>`;

describe("teacherAnswer reads the thinking wherever the server put it", () => {
  const cases: [string, AssistantMessage, TeacherAnswerForm][] = [
    ["<think> in content", { content: IN_CONTENT }, "content"],
    [
      "vLLM/SGLang/DeepSeek reasoning_content (content starts with blank lines)",
      { reasoning_content: THINK, content: `\n\n${ANSWER}` },
      "reasoning_content",
    ],
    ["vLLM >= 0.10, OpenRouter, Ollama: reasoning", { reasoning: `${THINK}\n`, content: ANSWER }, "reasoning"],
    [
      "OpenRouter reasoning_details only",
      {
        content: ANSWER,
        reasoning_details: [
          { type: "reasoning.text", text: THINK },
          { type: "reasoning.encrypted", data: "x" },
        ],
      },
      "reasoning_details",
    ],
    [
      "LiteLLM thinking_blocks",
      { content: ANSWER, thinking_blocks: [{ type: "thinking", thinking: THINK, signature: "s" }] },
      "thinking_blocks",
    ],
    [
      "Anthropic-style content parts",
      {
        content: [
          { type: "thinking", thinking: THINK },
          { type: "text", text: ANSWER },
        ],
      },
      "content_parts",
    ],
    ["template opened <think> in the prompt (DeepSeek-R1, QwQ)", { content: `${THINK}\n</think>\n\n${ANSWER}` }, "content_open"],
  ];
  for (const [name, message, form] of cases) {
    it(`${name} → form ${form}, the same thinking and prediction as in content`, () => {
      const answer = teacherAnswer(message);
      expect(answer.form).toBe(form);
      const parsed = parseCandidate(answer.text);
      expect(parsed.problems).toEqual([]);
      expect(parsed.think).toBe(THINK);
      expect(parsed.prediction).toBe(PREDICTION);
      // …and so the same as the candidate a <think>-in-content teacher gives.
      expect(parsed).toEqual(parseCandidate(IN_CONTENT));
    });
  }

  it("thinking in content wins over a separate field (the text is what the model wrote)", () => {
    expect(teacherAnswer({ content: IN_CONTENT, reasoning_content: "other" })).toEqual({ text: IN_CONTENT, form: "content" });
  });

  it("no thinking anywhere stays a candidate the format rule rejects", () => {
    const answer = teacherAnswer({ content: ANSWER, reasoning_content: "  " });
    expect(answer).toEqual({ text: ANSWER, form: "none" });
    expect(parseCandidate(answer.text).problems.join(" ")).toMatch(/no <think> block/);
  });

  it("a teacher that ran out of tokens while thinking (content null) gives a candidate without prediction, not a retry", () => {
    const answer = teacherAnswer({ content: null, reasoning_content: THINK });
    expect(answer.form).toBe("reasoning_content");
    expect(parseCandidate(answer.text).prediction).toBeUndefined();
  });
});

describe("candidate files with reasoning", () => {
  it("reads assistant messages in our format and reasoning_content in OpenAI batch output", async () => {
    const path = join(tempDir(), "candidates.jsonl");
    const batch = {
      custom_id: "p2",
      response: {
        status_code: 200,
        body: { choices: [{ index: 0, message: { role: "assistant", content: ANSWER, reasoning_content: THINK } }] },
      },
    };
    writeFileSync(
      path,
      [
        JSON.stringify({ prompt_id: "p1", candidates: [IN_CONTENT, { content: ANSWER, reasoning: THINK }, { reasoning_content: THINK }] }),
        JSON.stringify(batch),
        JSON.stringify({ prompt_id: "p3", candidates: [{ role: "assistant" }] }),
      ].join("\n"),
    );
    const { candidates, errors } = await readCandidateFile(path);
    expect(candidates.get("p1")?.map((answer) => answer.form)).toEqual(["content", "reasoning", "reasoning_content"]);
    expect(parseCandidate(candidates.get("p1")?.[1]?.text ?? "")).toEqual(parseCandidate(IN_CONTENT));
    expect(candidates.get("p2")).toEqual([
      { text: teacherAnswer({ content: ANSWER, reasoning_content: THINK }).text, form: "reasoning_content" },
    ]);
    expect(parseCandidate(candidates.get("p2")?.[0]?.text ?? "")).toEqual(parseCandidate(IN_CONTENT));
    expect(errors.map((error) => [error.line, error.promptId, error.reason])).toEqual([
      [3, "p3", "candidates[0]: has neither content nor reasoning"],
    ]);
  });
});

/** How each fake teacher answers a prompt, given its thinking and the right prediction. */
const TEACHERS: Record<string, (think: string, prediction: string) => Record<string, unknown>> = {
  content: (think, prediction) => ({
    content: `<think>\n${think}\n</think>\n\n<predicted_observation>\n${prediction}\n</predicted_observation>`,
  }),
  // vLLM with --reasoning-parser qwen3/deepseek_r1: the thinking apart, the rest of the text in content.
  reasoning_content: (think, prediction) => ({
    reasoning_content: `${think}\n`,
    content: `\n\n<predicted_observation>\n${prediction}\n</predicted_observation>`,
  }),
  reasoning: (think, prediction) => ({ reasoning: think, content: `<predicted_observation>\n${prediction}\n</predicted_observation>` }),
  content_open: (think, prediction) => ({
    content: `${think}\n</think>\n\n<predicted_observation>\n${prediction}\n</predicted_observation>`,
  }),
  // The negative control: the reasoning-parser teacher read as before (content only): no thinking.
  dropped: (_think, prediction) => ({ content: `\n\n<predicted_observation>\n${prediction}\n</predicted_observation>` }),
};

describe("sft sample with reasoning-parser teachers (real HTTP)", () => {
  const runs: Record<string, { manifest: SftManifest; outputDir: string }> = {};
  const servers: FakeOpenAiServer[] = [];
  const prompts: SftPrompt[] = [];

  beforeAll(async () => {
    process.env.LWM_TEST_REASONING_KEY = "sk-reasoning";
    const config = (url: string, cacheDir: string) =>
      writeConfig(
        [
          "inputs:",
          ...demoInputsYaml(),
          "sft:",
          "  select: all",
          "  teacher:",
          `    base_url: ${url}`,
          "    model: reasoning-teacher",
          "    api_key_env: LWM_TEST_REASONING_KEY",
          "    n: 1",
          `    cache_dir: ${cacheDir}`,
        ].join("\n"),
      );
    const probe = await planJob(loadConfig(config("http://127.0.0.1:9/v1", tempDir())));
    for await (const item of (await screenPrompts(probe)).items) if (item.kind === "prompts") prompts.push(...item.prompts);
    const instructions = probe.config.sft.instructions;
    // Prompts with equal messages share an answer (the first one's), as the request cache does.
    const byMessages = new Map<string, SftPrompt>();
    for (const prompt of prompts) {
      const key = JSON.stringify(teacherMessages(prompt, { hints: false, instructions }));
      if (!byMessages.has(key)) byMessages.set(key, prompt);
    }
    for (const [form, answer] of Object.entries(TEACHERS)) {
      const server = await startFakeOpenAi((request) => {
        const prompt = byMessages.get(JSON.stringify(request.messages));
        if (!prompt) return { status: 400, body: '{"error": {"message": "unknown prompt"}}' };
        return { messages: [answer(`Thinking about ${prompt.prompt_id}: the action runs.`, prompt.ground_truth)] };
      });
      servers.push(server);
      const outputDir = tempDir(`lwm-sft-${form}-`);
      const plan = await planJob(loadConfig(config(server.url, tempDir())));
      runs[form] = { manifest: (await runSft(plan, { outputDir, backoff: { baseMs: 5, maxMs: 20 } })).manifest, outputDir };
    }
  });

  afterAll(async () => {
    delete process.env.LWM_TEST_REASONING_KEY;
    await Promise.all(servers.map((server) => server.close()));
  });

  const rowsOf = async (form: string) => {
    const { manifest, outputDir } = runs[form] as (typeof runs)[string];
    const rows = new Map<string, { ids: number[]; mask: number[]; messages: unknown }>();
    for (const shard of manifest.shards) {
      const file = await openShard(join(outputDir, shard.path));
      for (let r = 0; r < file.numRows; r++) {
        const row = shardRow(file, r);
        rows.set(row.id, { ids: Array.from(row.inputIds), mask: Array.from(row.lossMask), messages: row.messages });
      }
    }
    return rows;
  };
  const formsColumn = (form: string) => {
    const { outputDir } = runs[form] as (typeof runs)[string];
    const table = tableFromIPC(readParquet(readFileSync(join(outputDir, "sft/candidates.parquet"))).intoIPCStream());
    return [...new Set(table.getChild("teacher_form")?.toArray() as string[])];
  };

  for (const form of ["reasoning_content", "reasoning", "content_open"]) {
    it(`${form}: every prompt kept, with exactly the samples of the <think>-in-content teacher`, async () => {
      const manifest = runs[form]?.manifest as SftManifest;
      expect(prompts.length).toBeGreaterThan(40);
      expect(manifest.counts.kept).toBe(manifest.counts.prompts);
      expect(manifest.counts.kept).toBe(runs.content?.manifest.counts.kept);
      expect(manifest.teacher_forms).toEqual({ [form]: { candidates: manifest.counts.prompts, kept: manifest.counts.kept } });
      expect(formsColumn(form)).toEqual([form]);
      const mine = await rowsOf(form);
      const reference = await rowsOf("content");
      expect(mine.size).toBe(manifest.counts.kept);
      expect([...mine.keys()].sort()).toEqual([...reference.keys()].sort());
      for (const [id, row] of mine) expect(row, id).toEqual(reference.get(id));
    });
  }

  it("the content teacher is recorded as such", () => {
    expect(runs.content?.manifest.teacher_forms).toEqual({
      content: { candidates: runs.content?.manifest.counts.prompts, kept: runs.content?.manifest.counts.kept },
    });
  });

  it("negative control: the thinking dropped (content read alone) rejects every answer for want of a <think> block", () => {
    const manifest = runs.dropped?.manifest as SftManifest;
    expect(manifest.counts.kept).toBe(0);
    expect(manifest.counts.rejected).toBe(manifest.counts.prompts);
    expect(manifest.teacher_forms).toEqual({ none: { candidates: manifest.counts.prompts, kept: 0 } });
    expect(manifest.by_rule.format).toEqual({ evaluated: manifest.counts.prompts, failed: manifest.counts.prompts });
  });
});
