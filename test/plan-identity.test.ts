import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { bundledQwen3Dir } from "../src/tokenize/load-tokenizer.ts";
import { ROOT, tempDir } from "./helpers.ts";

/**
 * Planning names the tokenizer's vocabulary and the chat template in the config hash without
 * building them where the files tell them (a process that runs curation's clusters or select never
 * builds them). Building them later must give what the hash named: `plan.tokenizer` and
 * `plan.renderer` refuse otherwise, so each case below builds both and the hash stays the one the
 * built tokenizer and template give. The golden outputs (test/golden-outputs.test.ts) hold the
 * hashes themselves unchanged.
 */
const INPUT = join(ROOT, "test/fixtures/tokenizers/tricky-trajectories.jsonl");

function jobConfig(dir: string, name: string, settings: string[]): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, [`inputs:`, `  - path: ${INPUT}`, `    format: canonical-jsonl`, ...settings, ""].join("\n"));
  return path;
}

describe("the plan's tokenizer and template identity", () => {
  const dir = tempDir("lwm-plan-identity-");
  const qwenConfig = join(bundledQwen3Dir(), "tokenizer_config.json");
  const jinja = join(dir, "template.jinja");
  writeFileSync(jinja, (JSON.parse(readFileSync(qwenConfig, "utf8")) as { chat_template: string }).chat_template);
  // A tokenizer.json of our own, with a chat_template.jinja beside it (which transformers prefers).
  const own = join(dir, "own-tokenizer");
  mkdirSync(own);
  copyFileSync(join(bundledQwen3Dir(), "tokenizer.json"), join(own, "tokenizer.json"));
  copyFileSync(qwenConfig, join(own, "tokenizer_config.json"));
  copyFileSync(jinja, join(own, "chat_template.jinja"));

  const cases: [string, string[]][] = [
    ["bundled qwen3, its own template", []],
    ["a .jinja template", ["render:", `  template: ${jinja}`]],
    ["a tokenizer_config.json template", ["render:", `  template: ${qwenConfig}`]],
    ["a tokenizer.json path with chat_template.jinja beside it", ["tokenizer:", `  name: ${join(own, "tokenizer.json")}`]],
    ["a tiktoken encoding (built at plan time)", ["tokenizer:", "  name: tiktoken:cl100k_base"]],
  ];
  for (const [name, settings] of cases) {
    it(`names what building gives: ${name}`, async () => {
      const plan = await planJob(loadConfig(jobConfig(dir, name.replace(/\W+/g, "-"), settings)));
      expect(plan.tokenizer.identity.vocabSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(plan.renderer.sha256).toMatch(/^[0-9a-f]{64}$/);
      // Another template is another job: the hash tells them apart.
      expect(plan.configSha256).toMatch(/^[0-9a-f]{64}$/);
    });
  }

  it("a template that changed between planning and building is refused (negative control)", async () => {
    const changing = join(dir, "changing.jinja");
    copyFileSync(jinja, changing);
    const plan = await planJob(loadConfig(jobConfig(dir, "changing", ["render:", `  template: ${changing}`])));
    writeFileSync(changing, `${readFileSync(changing, "utf8")}\n{# edited #}`);
    expect(() => plan.renderer).toThrow(/not the one the job was planned with/);
  });

  it("the same template through a file or beside the tokenizer gives the same hash; another template another", async () => {
    const beside = await planJob(loadConfig(jobConfig(dir, "beside", [])));
    const file = await planJob(loadConfig(jobConfig(dir, "file", ["render:", `  template: ${jinja}`])));
    const other = join(dir, "other.jinja");
    writeFileSync(other, `${readFileSync(jinja, "utf8")}\n`);
    const edited = await planJob(loadConfig(jobConfig(dir, "edited", ["render:", `  template: ${other}`])));
    expect(file.configSha256).toBe(beside.configSha256);
    expect(edited.configSha256).not.toBe(file.configSha256);
  });
});
