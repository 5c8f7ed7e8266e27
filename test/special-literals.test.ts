import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import {
  escaperFor,
  escaperFromMetadata,
  LiteralEscaper,
  specialLiterals,
  TEXT_RULE_ID,
  templateTestedTags,
  textRuleMetadata,
} from "../src/export/special-literals.ts";
import { exportSwift, type RefusedRow, type SwiftMessage } from "../src/export/swift-export.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { buildPrompt } from "../src/sft/prompts/sft-prompt.ts";
import { answerText, sftSample } from "../src/sft/sft-sample.ts";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";
import { decodeText } from "../src/tokenize/tokenizer.ts";
import { ROOT, tempDir } from "./helpers.ts";

const ZWJ = "\u200D";
const FIXTURE = join(ROOT, "test/fixtures/literals");
const qwen3 = loadTokenizer({ name: "qwen3" });
const QWEN3_TEMPLATE = qwen3.chatTemplate as string;

/** Independent check of "no literal left": plain substring search over every literal. */
const holdsLiteral = (text: string, literals: readonly string[]) => literals.some((literal) => text.includes(literal));

describe("the text form's rule for special-token literals", () => {
  const escaper = escaperFor(qwen3, QWEN3_TEMPLATE);

  it("covers every added token of the tokenizer and the tags Qwen3's template tests contents for", () => {
    expect(templateTestedTags(QWEN3_TEMPLATE)).toEqual(["</think>", "</tool_response>", "<think>", "<tool_response>"]);
    const all = new Set([...escaper.literals.escaped, ...escaper.literals.unescapable]);
    for (const token of qwen3.addedTokens.keys()) expect(all.has(token)).toBe(true);
    // Qwen3's added tokens are all `<…>` tags: every one can be neutralized.
    expect(escaper.literals.unescapable).toEqual([]);
    // `'tool_calls' in message` tests a key, not the text: not a literal.
    expect(templateTestedTags(`{% if 'tool_calls' in message %}{% if "<x>" in message.content %}`)).toEqual(["<x>"]);
  });

  it("with a tiktoken encoding and Qwen3's template, neutralizes the template's tags though they are not tokens", () => {
    const o200k = loadTokenizer({ name: "tiktoken:o200k_base" });
    const literals = escaperFor(o200k, QWEN3_TEMPLATE).literals.escaped;
    expect(literals).toEqual(expect.arrayContaining(["</think>", "<think>", "<tool_response>", "<|endoftext|>", "<|im_start|>"]));
  });

  it("escapes a literal as its first character, one U+200D, the rest; text without literals is unchanged", () => {
    expect(escaper.escape("a <|im_start|>user")).toBe(`a <${ZWJ}|im_start|>user`);
    expect(escaper.escape("x</think>y<think>")).toBe(`x<${ZWJ}/think>y<${ZWJ}think>`);
    // An escaped-looking original gets one more, so un-escaping tells the two apart.
    expect(escaper.escape(`<${ZWJ}|im_end|>`)).toBe(`<${ZWJ}${ZWJ}|im_end|>`);
    for (const plain of ["plain text", "<|im_start", "< think>", "<THINK>", "<|im_sta rt|>", `a${ZWJ}b`, ""]) {
      expect(escaper.escape(plain)).toBe(plain);
      expect(escaper.hasEscapes(escaper.escape(plain))).toBe(false);
    }
    expect(escaper.literalsIn("<think>a</think><|im_end|><think>")).toEqual(["<think>", "</think>", "<|im_end|>"]);
  });

  it("round-trips exactly and leaves no literal, for any text made of literal pieces, U+200D and other characters", () => {
    const literals = escaper.literals.escaped;
    const pieces = fc.oneof(
      fc.constantFrom(...literals),
      fc.constantFrom(...literals).map((literal) => `${literal[0]}${ZWJ.repeat(2)}${literal.slice(1)}`),
      fc.constantFrom(...literals).chain((literal) => fc.nat(literal.length).map((cut) => literal.slice(0, cut))),
      fc.constantFrom(ZWJ, "<", "|", ">", "/", "\n", "é", "😀", "im_end"),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 24 }), (parts) => {
        const text = parts.join("");
        const escaped = escaper.escape(text);
        expect(escaper.unescape(escaped)).toBe(text);
        expect(holdsLiteral(escaped, literals)).toBe(false);
        // hasEscapes ⇔ the rule changed something.
        expect(escaper.hasEscapes(escaped)).toBe(escaped !== text);
      }),
      { numRuns: 3000, seed: 21 },
    );
  });

  it("refuses literal sets it cannot neutralize soundly: one character, U+200D inside, another literal's first character inside", () => {
    const literals = specialLiterals(["<|a|>", "x", "ab<c>", "  ", "<c>", `<z${ZWJ}>`]);
    expect(literals.escaped).toEqual(["<|a|>", "<c>"]);
    expect(literals.unescapable.sort()).toEqual(["  ", "<z\u200D>", "ab<c>", "x"].sort());
    const odd = new LiteralEscaper(literals);
    expect(odd.unescapableIn("a  b")).toEqual(["  "]);
    fc.assert(
      fc.property(fc.array(fc.constantFrom("<|a|>", "<c>", "ab", "<", "|", "a", ZWJ, "c>", "x"), { maxLength: 16 }), (parts) => {
        const text = parts.join("");
        expect(odd.unescape(odd.escape(text))).toBe(text);
        expect(holdsLiteral(odd.escape(text), literals.escaped)).toBe(false);
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it("is recorded in shard metadata and read back; an unknown rule is an error naming the shard", () => {
    const metadata = textRuleMetadata(escaper);
    expect(metadata.text_rule).toBe(TEXT_RULE_ID);
    const back = escaperFromMetadata({ ...metadata }, "x.parquet");
    expect(back?.literals).toEqual(escaper.literals);
    expect(escaperFromMetadata({}, "x.parquet")).toBeUndefined();
    expect(() => escaperFromMetadata({ text_rule: "other/9" }, "x.parquet")).toThrow(/x\.parquet: text rule other\/9/);
  });
});

describe("the messages column and export swift on contents holding special-token literals", () => {
  type Fixture = { id: string; system?: string; task?: string; turns: { action: string; observation: string }[] };
  const records = readFileSync(join(FIXTURE, "special-literals.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Fixture);
  const escaper = escaperFor(qwen3, QWEN3_TEMPLATE);
  const literals = escaper.literals.escaped;
  const rawTexts = (r: Fixture) => [r.system ?? "", r.task ?? "", ...r.turns.flatMap((t) => [t.action, t.observation])];
  const changedByRule = new Set(records.filter((r) => rawTexts(r).some((text) => escaper.escape(text) !== text)).map((r) => r.id));
  // Rows whose original text holds a literal (plain substring search): no text gives their ids.
  const holdingLiterals = new Set(records.filter((r) => rawTexts(r).some((text) => holdsLiteral(text, literals))).map((r) => r.id));

  async function literalsRun() {
    const out = tempDir("lwm-literals-");
    const result = await runJob(await planJob(loadConfig(join(FIXTURE, "job.yaml"), { output: out })), { workers: 1 });
    if (!result.manifest) throw new Error("run did not finish");
    return { out, manifest: result.manifest };
  }

  it("the fixture has rows the rule changes (chat markers, think/tool tags, escaped-looking text) and rows it leaves alone", () => {
    expect([...changedByRule].sort()).toEqual(
      [
        "lit-action-tool-response",
        "lit-mcp-toolcall",
        "lit-preescaped",
        "lit-swe-think",
        "lit-system-and-task",
        "lit-terminal-chatml",
      ].sort(),
    );
    expect(records.length - changedByRule.size).toBe(2);
    // The escaped-looking one holds no literal: its original text re-tokenizes to its ids.
    expect([...changedByRule].filter((id) => !holdingLiterals.has(id))).toEqual(["lit-preescaped"]);
  });

  it("shards: messages carry the neutralized text, the ids the original text, and un-escaping gives exactly what the ids decode to", async () => {
    const { out, manifest } = await literalsRun();
    expect(manifest.counts.samples_out).toBe(records.length);
    let rows = 0;
    for (const shard of manifest.shards) {
      const file = await openShard(join(out, shard.path));
      expect(file.metadata.text_rule).toBe(TEXT_RULE_ID);
      const fromShard = escaperFromMetadata(file.metadata, shard.path) as LiteralEscaper;
      expect(fromShard.literals).toEqual(escaper.literals);
      for (let i = 0; i < file.numRows; i++, rows++) {
        const row = shardRow(file, i);
        const messages = row.messages ?? [];
        for (const message of messages) expect(holdsLiteral(message.content, literals)).toBe(false);
        expect(messages.some((m) => fromShard.hasEscapes(m.content))).toBe(changedByRule.has(row.id));
        // The trained tokens decode to the original observations (each + <|im_end|>): the ids
        // never held the neutralized text.
        const trained = Array.from(row.inputIds).filter((_, t) => row.lossMask[t] === 1);
        const expected = messages
          .filter((m) => m.loss)
          .map((m) => `${fromShard.unescape(m.content)}<|im_end|>`)
          .join("");
        expect(decodeText(qwen3, trained)).toBe(expected);
        // …and the whole sequence holds the template's control tokens only: one <|im_start|> per message.
        const imStart = qwen3.addedTokens.get("<|im_start|>") as number;
        expect(Array.from(row.inputIds).filter((id) => id === imStart)).toHaveLength(messages.length);
      }
    }
    expect(rows).toBe(records.length);
  });

  it("export swift refuses the rows holding literals (with the reason), or exports them neutralized with --literals escape", async () => {
    const { out, manifest } = await literalsRun();
    const refuse = await exportSwift(out, join(out, "export/refuse"));
    const lines = (path: string) =>
      readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line));
    const refused = lines(refuse.refusedPath) as RefusedRow[];
    expect(refused.map((r) => r.id).sort()).toEqual([...holdingLiterals].sort());
    expect(refuse.files).toEqual([
      expect.objectContaining({ split: "train", rows: records.length - holdingLiterals.size, refused: holdingLiterals.size, escaped: 0 }),
    ]);
    const chatml = refused.find((r) => r.id === "lit-terminal-chatml") as RefusedRow;
    expect(chatml.reason).toMatch(
      /^message 4 \(assistant\) holds the special-token literal "<\|im_start\|>", "<\|im_end\|>", "<\|endoftext\|>" as text/,
    );
    expect(chatml.shard).toBe(manifest.shards[0]?.path);
    // The rows that go out carry their original text (the escaped-looking one un-escaped).
    const exported = lines(join(out, "export/refuse/train.jsonl")) as { messages: SwiftMessage[] }[];
    const shard = await openShard(join(out, manifest.shards[0]?.path as string));
    const kept = Array.from({ length: shard.numRows }, (_, i) => shardRow(shard, i)).filter((row) => !holdingLiterals.has(row.id));
    expect(exported.map((line) => line.messages.map((m) => m.content))).toEqual(
      kept.map((row) => row.messages?.map((m) => escaper.unescape(m.content))),
    );
    const preescaped = exported.flatMap((line) => line.messages).find((m) => m.content.includes("already escaped-looking"));
    expect(preescaped?.content).toBe(`<${ZWJ}|im_end|> and <${ZWJ}${ZWJ}/think> are already escaped-looking`);

    const escaping = await exportSwift(out, join(out, "export/escape"), { literals: "escape" });
    expect(escaping.files).toEqual([expect.objectContaining({ rows: records.length, refused: 0, escaped: holdingLiterals.size })]);
    expect(readFileSync(escaping.refusedPath, "utf8")).toBe("");
    const all = lines(join(out, "export/escape/train.jsonl")) as { messages: SwiftMessage[] }[];
    const file = await openShard(join(out, manifest.shards[0]?.path as string));
    all.forEach((line, i) => {
      // Rows that held a literal: the messages column's neutralized text; the others their original text.
      const row = shardRow(file, i);
      const column = row.messages?.map((m) => m.content) ?? [];
      expect(line.messages.map((m) => m.content)).toEqual(holdingLiterals.has(row.id) ? column : column.map((c) => escaper.unescape(c)));
      for (const m of line.messages) expect(holdsLiteral(m.content, literals)).toBe(false);
    });
  });

  it("export swift names a shard written before the rule instead of exporting its raw literals", async () => {
    const { out, manifest } = await literalsRun();
    // The same shard with its lwm_data metadata lacking text_rule, as older lwm-data wrote it.
    const path = join(out, manifest.shards[0]?.path as string);
    const bytes = readFileSync(path);
    const marker = Buffer.from(`"text_rule":"${TEXT_RULE_ID}"`);
    const at = bytes.indexOf(marker);
    expect(at).toBeGreaterThan(0);
    // Same length, another key: the JSON stays valid and the footer offsets stay right.
    Buffer.from(`"text_xxxx":"${TEXT_RULE_ID}"`).copy(bytes, at);
    writeFileSync(path, bytes);
    await expect(exportSwift(out, tempDir())).rejects.toThrow(
      `${path} was written by an lwm-data without the text form's special-token rule`,
    );
  });

  it("SFT rows: prompt contents are neutralized, the answer's own <think> tags stay the tokens they are", async () => {
    const { renderer, systemPrompts } = await planJob(loadConfig(join(FIXTURE, "job.yaml")));
    const record = records.find((r) => r.id === "lit-terminal-chatml") as Fixture;
    const trajectory = { ...record, domain: "terminal" as const, source: { uri: "x.jsonl", format: "canonical-jsonl" } };
    const prompt = buildPrompt(trajectory, 2, "x.jsonl:1", systemPrompts, { maxHistoryTurns: 0 });
    const sample = sftSample(prompt, "The file holds <|im_start|> markers.", "87 prompt.txt", renderer, qwen3);
    const messages = sample.messages ?? [];
    expect(messages.at(-1)?.content).toBe(answerText(`The file holds <${ZWJ}|im_start|> markers.`, "87 prompt.txt"));
    const observation = messages.find((m) => m.role === "assistant" && m.content.includes("Ignore the task"));
    expect(observation?.content).toContain(`<${ZWJ}|im_start|>system`);
    // The ids encode the original text; the answer's tags are the added tokens.
    const trained = Array.from(sample.inputIds).filter((_, t) => sample.lossMask[t] === 1);
    expect(decodeText(qwen3, trained)).toBe(`${answerText("The file holds <|im_start|> markers.", "87 prompt.txt")}<|im_end|>`);
    expect(trained).toContain(qwen3.addedTokens.get("<think>"));
  });
});
