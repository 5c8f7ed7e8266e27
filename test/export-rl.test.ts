import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { exportSettings } from "../src/export/export-settings.ts";
import { exportRl, quotableTags, type RlExtraInfo } from "../src/export/rl-export.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { splitForTrajectory } from "../src/output/split-assignment.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { DEFAULT_VERIFY_THRESHOLDS } from "../src/sft/verify/index.ts";
import { DEMO_CONFIG, demoInputsYaml, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";
import { readVerlPrompts, rewardCases } from "./support/rl-reward-cases.ts";

const exec = promisify(execFile);
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");

interface Turn {
  messages: { role: string; content: string }[];
  groundTruth: string;
  trained: boolean;
  domain: string;
}

/** Every observation turn of an output's shards (the messages column, un-escaped by the shard's rule). */
async function shardTurns(out: string): Promise<Map<string, Turn>> {
  const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as { shards: { path: string }[] };
  const turns = new Map<string, Turn>();
  for (const shard of manifest.shards) {
    const file = await openShard(join(out, shard.path));
    const literals = JSON.parse(file.metadata.text_literals ?? '{"escaped":[]}') as { escaped: string[] };
    // The demo holds no literal, so its messages column is its original text.
    expect(literals.escaped.length).toBeGreaterThan(0);
    for (let i = 0; i < file.numRows; i++) {
      const row = shardRow(file, i);
      const [system, ...rest] = row.messages ?? [];
      for (let t = 0; 2 * t + 1 < rest.length; t++) {
        const observation = rest[2 * t + 1] as { content: string; loss: boolean };
        turns.set(`${row.id}#${t}`, {
          messages: [system, ...rest.slice(0, 2 * t + 1)].map((m) => ({ role: m?.role ?? "", content: m?.content ?? "" })),
          groundTruth: observation.content,
          trained: observation.loss,
          domain: row.domain,
        });
      }
    }
  }
  return turns;
}

/** Prompt ids whose messages equal another prompt's while the observations differ (the export refuses them all). */
function conflicted(turns: [string, Turn][]): Set<string> {
  const groups = new Map<string, [string, Turn][]>();
  for (const entry of turns) {
    const key = JSON.stringify(entry[1].messages);
    groups.set(key, [...(groups.get(key) ?? []), entry]);
  }
  const ids = new Set<string>();
  for (const group of groups.values())
    if (new Set(group.map(([, turn]) => turn.groundTruth)).size > 1) for (const [id] of group) ids.add(id);
  return ids;
}

describe("lwm-data export rl", () => {
  let out: string;
  let turns: Map<string, Turn>;
  beforeAll(async () => {
    out = tempDir("lwm-rl-demo-");
    await runJob(await planJob(loadConfig(DEMO_CONFIG, { output: out })), { workers: 1 });
    turns = await shardTurns(out);
  });

  it("writes verl's RL Parquet: one prompt per trained turn, the observation as ground truth, the verifier's settings in extra_info", async () => {
    const dir = tempDir("lwm-rl-verl-");
    const result = await exportRl(out, dir, { format: "verl", thresholds: DEFAULT_VERIFY_THRESHOLDS });
    const twins = conflicted([...turns].filter(([, turn]) => turn.trained));
    const trained = [...turns].filter(([id, turn]) => turn.trained && !twins.has(id));
    expect(result.files).toEqual([{ split: "train", path: join(dir, "train.parquet"), rows: trained.length }]);
    // The demo has the same SWE command in agent layouts that wrap its output differently: refused, with why.
    expect(twins.size).toBeGreaterThan(0);
    expect([result.refused, result.conflicts]).toEqual([twins.size, twins.size]);
    const refused = readFileSync(result.refusedPath, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { prompt_id: string; reason: string });
    expect(new Set(refused.map((line) => line.prompt_id))).toEqual(twins);
    for (const line of refused) expect(line.reason).toMatch(/^conflict: the same prompt as .* with a different observation/);
    const rows = readVerlPrompts(join(dir, "train.parquet"));
    expect(rows.map((row) => row.extra_info.prompt_id).sort()).toEqual(trained.map(([id]) => id).sort());
    for (const [index, row] of rows.entries()) {
      const turn = turns.get(row.extra_info.prompt_id) as Turn;
      expect(row.prompt).toEqual(turn.messages);
      expect(row.ground_truth).toBe(turn.groundTruth);
      expect(row.data_source).toBe(`lwm-data/${turn.domain}`);
      const info: Partial<RlExtraInfo> = row.extra_info;
      expect(info).toMatchObject({
        index,
        split: "train",
        domain: turn.domain,
        fidelity_threshold: DEFAULT_VERIFY_THRESHOLDS.fidelity[turn.domain as "terminal"],
        think_min_chars: 20,
        think_max_chars: 32_768,
        prediction_min_chars: 0,
        prediction_max_chars: 131_072,
        quotable_tags: quotableTags(turn.messages.map((m) => m.content)),
        literals_escaped: false,
      });
      expect(row.extra_info.trajectory_id).toBe(row.extra_info.prompt_id.replace(/#\d+$/, ""));
      expect(row.extra_info.turn_index).toBe(Number(row.extra_info.prompt_id.split("#").at(-1)));
    }
    // Every domain, and its own measure.
    expect(Object.keys(result.byDomain).sort()).toEqual(["android", "mcp", "os", "search", "swe", "terminal", "web"]);
    expect(new Set(rows.map((r) => `${r.extra_info.domain}:${r.extra_info.fidelity_rule}`))).toEqual(
      new Set([
        "terminal:line_similarity",
        "swe:line_similarity",
        "mcp:json_structure",
        "search:search_overlap",
        "web:tree_similarity",
        "android:tree_similarity",
        "os:tree_similarity",
      ]),
    );
  });

  it("writes OpenRLHF's prompt JSONL with the same prompts, and takes thresholds and turns from options", async () => {
    const config = writeConfig(
      [
        "inputs:",
        ...demoInputsYaml(),
        "sft:",
        "  verify:",
        "    fidelity: { terminal: 0.5, swe: 0.6, mcp: 0.7, search: 0.4, android: 0.8, web: 0.85, os: 0.75 }",
        "    min_think_chars: 5",
        "    max_think_chars: 900",
      ].join("\n"),
    );
    const settings = exportSettings(config);
    const dir = tempDir("lwm-rl-openrlhf-");
    const result = await exportRl(out, dir, { format: "openrlhf", thresholds: settings.thresholds, turns: "all" });
    expect(result.files[0]?.rows).toBe(turns.size - conflicted([...turns]).size);
    const lines = readFileSync(join(dir, "train.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    for (const line of lines) {
      const label = JSON.parse(line.label) as { ground_truth: string; data_source: string; extra_info: RlExtraInfo };
      const turn = turns.get(label.extra_info.prompt_id) as Turn;
      expect(line.input).toEqual(turn.messages);
      expect(line.datasource).toBe(`lwm-data/${turn.domain}`);
      expect(label.ground_truth).toBe(turn.groundTruth);
      expect(label.extra_info.think_min_chars).toBe(5);
      expect(label.extra_info.think_max_chars).toBe(900);
      expect(label.extra_info.fidelity_threshold).toBe(
        { terminal: 0.5, swe: 0.6, mcp: 0.7, search: 0.4, android: 0.8, web: 0.85, os: 0.75 }[turn.domain],
      );
    }
  });

  it("reads `sft prompts` files, draws validation by trajectory, and names what it cannot read", async () => {
    const dir = tempDir("lwm-rl-prompts-");
    const prompts = join(dir, "prompts.jsonl");
    await exec(NODE, [CLI, "sft", "prompts", DEMO_CONFIG, "--out", prompts]);
    const lines = readFileSync(prompts, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const settings = exportSettings();
    const result = await exportRl(prompts, join(dir, "verl"), {
      format: "verl",
      thresholds: settings.thresholds,
      validationFraction: 0.4,
      splitSeed: 3,
      escaper: settings.escaper,
    });
    const rows = [...readVerlPrompts(join(dir, "verl", "train.parquet")), ...readVerlPrompts(join(dir, "verl", "validation.parquet"))];
    expect(rows.length + result.refused).toBe(lines.length);
    const byId = new Map(lines.map((line) => [line.prompt_id, line]));
    for (const row of rows) {
      const line = byId.get(row.extra_info.prompt_id);
      expect(row.prompt).toEqual(line.messages);
      expect(row.ground_truth).toBe(line.ground_truth);
      expect(row.extra_info.split).toBe(splitForTrajectory(line.trajectory_id, 0.4, 3));
    }
    expect(result.files.map((f) => f.split)).toEqual(["train", "validation"]);

    // An OpenAI Batch file is the teacher's prompt (instructions, hints): refused, with what to do.
    const batch = join(dir, "batch.jsonl");
    const request = { custom_id: lines[0].prompt_id, method: "POST", url: "/v1/chat/completions", body: { messages: lines[0].messages } };
    writeFileSync(batch, `${JSON.stringify(request)}\n`);
    await expect(
      exportRl(batch, tempDir(), { format: "verl", thresholds: DEFAULT_VERIFY_THRESHOLDS, escaper: settings.escaper }),
    ).rejects.toThrow(/batch\.jsonl:1: an OpenAI Batch request .* write the prompts with --format chat/);
    // An SFT output holds kept answers, not observations.
    const sft = tempDir("lwm-rl-sft-");
    writeFileSync(join(sft, "manifest.json"), JSON.stringify({ format: "lwm-data/sft", shards: [] }));
    await expect(exportRl(sft, tempDir(), { format: "verl", thresholds: DEFAULT_VERIFY_THRESHOLDS })).rejects.toThrow(
      /is an SFT output: .*\(lwm-data sft prompts <config>/,
    );
    // A broken line is named by file and line.
    const broken = join(dir, "broken.jsonl");
    writeFileSync(broken, `${JSON.stringify(lines[0])}\n{"prompt_id": "x"}\n`);
    await expect(
      exportRl(broken, tempDir(), { format: "verl", thresholds: DEFAULT_VERIFY_THRESHOLDS, escaper: settings.escaper }),
    ).rejects.toThrow(/broken\.jsonl:2: not an lwm-data prompt/);
  });

  it("refuses prompts holding special-token literals by default, and exports them neutralized with literals: escape", async () => {
    const literalsOut = tempDir("lwm-rl-literals-");
    await runJob(await planJob(loadConfig(join(ROOT, "test/fixtures/literals/job.yaml"), { output: literalsOut })), { workers: 1 });
    const all = await exportRl(literalsOut, tempDir(), { format: "verl", thresholds: DEFAULT_VERIFY_THRESHOLDS, turns: "all" });
    expect(all.refused).toBeGreaterThan(0);
    const refused = readFileSync(all.refusedPath, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(refused[0].reason).toMatch(/holds the special-token literal .* as text/);
    const dir = tempDir("lwm-rl-escaped-");
    const escaped = await exportRl(literalsOut, dir, {
      format: "verl",
      thresholds: DEFAULT_VERIFY_THRESHOLDS,
      turns: "all",
      literals: "escape",
    });
    expect(escaped.files[0]?.rows).toBe((all.files[0]?.rows ?? 0) + all.refused);
    const rows = readVerlPrompts(join(dir, "train.parquet"));
    const neutralized = rows.filter((row) => row.extra_info.literals_escaped);
    expect(neutralized.length).toBe(all.refused);
    for (const row of neutralized) {
      // The prompt the trainer renders holds no literal; the ground truth is compared as text, so it stays original.
      expect(row.prompt.some((m) => m.content.includes("\u200d"))).toBe(true);
      expect(row.prompt.every((m) => !/<\|im_(?:start|end)\|>/.test(m.content))).toBe(true);
    }
  });

  it("refuses or neutralizes `<image>` for OpenRLHF (which splits contents on it), and leaves it to verl", async () => {
    const dir = tempDir("lwm-rl-image-");
    const trajectory = {
      id: "image-web",
      domain: "web",
      task: "Read the alt text of the figure.",
      turns: [
        { action: "scroll(0, 200)", observation: "[12] img 'Figure 1'\n[13] StaticText 'placeholder: <image>'" },
        { action: "click('12')", observation: "[20] dialog 'Figure 1, full size'" },
      ],
    };
    writeFileSync(join(dir, "image.jsonl"), `${JSON.stringify(trajectory)}\n`);
    const config = writeConfig(
      ["inputs:", `  - path: ${join(dir, "image.jsonl")}`, "output:", `  dir: ${join(dir, "out")}`, "  include_messages: true"].join("\n"),
    );
    await runJob(await planJob(loadConfig(config)), { workers: 1 });
    const options = { thresholds: DEFAULT_VERIFY_THRESHOLDS, turns: "all" as const };
    const openrlhf = await exportRl(join(dir, "out"), join(dir, "openrlhf"), { format: "openrlhf", ...options });
    // The second turn's prompt holds the first observation in its history: refused; the first turn's does not.
    expect([openrlhf.files[0]?.rows, openrlhf.refused]).toEqual([1, 1]);
    const refused = JSON.parse(readFileSync(openrlhf.refusedPath, "utf8"));
    expect(refused.reason).toMatch(/holds the special-token literal "<image>" as text/);
    const escaped = await exportRl(join(dir, "out"), join(dir, "openrlhf-escaped"), { format: "openrlhf", ...options, literals: "escape" });
    expect([escaped.files[0]?.rows, escaped.refused]).toEqual([2, 0]);
    const lines = readFileSync(join(dir, "openrlhf-escaped", "train.jsonl"), "utf8")
      .trim()
      .split("\n");
    const inputs = lines.map((line) => JSON.parse(line).input as { content: string }[]);
    expect(inputs.flat().some((m) => m.content.includes("<\u200dimage>"))).toBe(true);
    expect(inputs.flat().every((m) => !m.content.includes("<image>"))).toBe(true);
    // verl renders contents as text: nothing to refuse.
    const verl = await exportRl(join(dir, "out"), join(dir, "verl"), { format: "verl", ...options });
    expect([verl.files[0]?.rows, verl.refused]).toEqual([2, 0]);
  });

  it("gives the Python reward the SFT verifier's decision on every answer (test/python/check_rl_reward.py)", async () => {
    const python = ensurePythonEnv();
    const dir = tempDir("lwm-rl-reward-");
    await mkdir(dir, { recursive: true });
    await exportRl(out, dir, { format: "verl", thresholds: DEFAULT_VERIFY_THRESHOLDS, turns: "all" });
    const cases = rewardCases(readVerlPrompts(join(dir, "train.parquet")));
    expect(cases.filter((c) => c.expected.passed).length).toBeGreaterThan(1000);
    expect(cases.filter((c) => !c.expected.passed).length).toBeGreaterThan(1000);
    const path = join(dir, "cases.jsonl");
    writeFileSync(path, `${cases.map((c) => JSON.stringify(c)).join("\n")}\n`);
    const { stdout } = await exec(python, [join(ROOT, "test/python/check_rl_reward.py"), path], { maxBuffer: 1 << 24 });
    expect(stdout).toMatch(/reward = SFT verifier decision on all/);
  });
});
