import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordError } from "../src/core/errors.ts";
import { DOMAINS, type Domain, type Trajectory } from "../src/core/trajectory.ts";
import { turnStatsPolicy } from "../src/mask/loss-policy.ts";
import { parseAndroidObservation } from "../src/normalize/domains/android.ts";
import { parseOsObservation } from "../src/read/os-a11y.ts";
import { TreeParseError } from "../src/read/uiautomator-xml.ts";
import { buildPrompt } from "../src/sft/prompts/sft-prompt.ts";
import { sftSample } from "../src/sft/sft-sample.ts";
import { bundledQwen3Dir, type TokenizerSpec } from "../src/tokenize/load-tokenizer.ts";
import { TIKTOKEN_ENCODINGS } from "../src/tokenize/tiktoken-encoding.ts";
import { decodeText, type Tokenizer } from "../src/tokenize/tokenizer.ts";
import { tempDir } from "./helpers.ts";
import { type CaseBody, type HostileCase, hostileCases } from "./support/injection-cases.ts";
import { writeGpt2FamilyTokenizer } from "./support/injection-gpt2-tokenizer.ts";
import { CHAT_MARKERS, type HostileCatalogue, hostileCatalogue, KNOWN_SPECIAL_TOKENS } from "./support/injection-hostile.ts";
import {
  type Analysis,
  analyze,
  type InjectionJob,
  injectionJob,
  normalizerMayRewrite,
  type Processed,
  processTrajectory,
} from "./support/injection-pipeline.ts";
import { ensureReference, type ReferenceSpec, referenceIds } from "./support/injection-reference.ts";

/**
 * Injection hardening: actions, observations, system/task text and initial observations holding
 * every special token of the tokenizer (and chat-template markers, other families' specials,
 * near-misses, forged turns, markers cut across field boundaries), in all seven domains, go
 * through the real pipeline (canonical JSONL reader → validate → normalize → render → tokenize
 * → mask) and must produce no control-token id from content and no change in template
 * structure — for every supported tokenizer. Content ids are checked against an independent
 * reference in Python (test/support/injection-reference.ts).
 */

// The Python references are a prerequisite: created here when missing (test/python/ensure-venv.sh);
// without Python this suite fails naming what to install, it never skips the comparison.
ensureReference();

const require = createRequire(import.meta.url);
const QWEN3_JSON = join(bundledQwen3Dir(), "tokenizer.json");
const scratch = tempDir("lwm-injection-");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let gpt2FamilyJson: string | undefined;
const gpt2Family = () => {
  gpt2FamilyJson ??= writeGpt2FamilyTokenizer(join(scratch, "gpt2-family"));
  return gpt2FamilyJson;
};
const tiktokenFile = (encoding: string) => require.resolve(`tiktoken/encoders/${encoding}.json`);

interface UnderTest {
  label: string;
  spec: () => TokenizerSpec;
  reference: () => ReferenceSpec;
}

const TOKENIZERS: UnderTest[] = [
  { label: "qwen3", spec: () => ({ name: "qwen3" }), reference: () => ({ kind: "hf", path: QWEN3_JSON }) },
  { label: "qwen3 tokenizer.json by path", spec: () => ({ name: QWEN3_JSON }), reference: () => ({ kind: "hf", path: QWEN3_JSON }) },
  ...TIKTOKEN_ENCODINGS.map(
    (encoding): UnderTest => ({
      label: `tiktoken:${encoding}`,
      spec: () => ({ name: `tiktoken:${encoding}` }),
      reference: () => ({ kind: "tiktoken", path: tiktokenFile(encoding) }),
    }),
  ),
  {
    // tokenizer.special_tokens: the template's reasoning and tool markers become control ids too.
    label: "tiktoken:cl100k_base + special_tokens",
    spec: () => ({
      name: "tiktoken:cl100k_base",
      special_tokens: {
        "<think>": 100300,
        "</think>": 100301,
        "<tool_call>": 100302,
        "</tool_call>": 100303,
        "<tool_response>": 100304,
        "</tool_response>": 100305,
      },
    }),
    reference: () => ({ kind: "tiktoken", path: tiktokenFile("cl100k_base") }),
  },
  {
    // Another tokenizer.json family: GPT-2 vocabulary, ByteLevel pre-tokenizer without a Split
    // step, no normalizer, its own plain ChatML template (test/support/injection-gpt2-tokenizer.ts).
    label: "GPT-2-family tokenizer.json",
    spec: () => ({ name: gpt2Family() }),
    reference: () => ({ kind: "hf", path: gpt2Family() }),
  },
];

const PROPERTY_RUNS = Number(process.env.LWM_INJECTION_RUNS ?? 300);

const CLEAN = "~clean";
const keep = (hostile: string) => hostile;
const drop = () => "";

function record(id: string, domain: Domain, body: CaseBody): object {
  return { id, domain, ...body };
}

/** The rendered contents of a processed record, joined: where normalized hostile strings must show up. */
const renderedContent = (processed: Processed) => processed.messages.map((message) => message.content).join("\n");

/** A readable account of where two control-token sequences part. */
function controlDiff(tokenizer: Tokenizer, dirty: string[], clean: string[]): string {
  let i = 0;
  while (i < dirty.length && dirty[i] === clean[i]) i++;
  const name = (entry: string | undefined) => {
    if (entry === undefined) return "(end)";
    const [id, owner] = entry.split("@");
    return `${tokenizer.addedTokenContent(Number(id)) ?? "?"} (id ${id}, message ${owner})`;
  };
  return `${dirty.length} control tokens vs ${clean.length} without the hostile strings; first difference at #${i}: ${name(dirty[i])} vs ${name(clean[i])}`;
}

/** Normalization left the record's rendered fields exactly as written (unless the domain parses them). */
function verbatimProblems(raw: Trajectory, normalized: Trajectory): string[] {
  const problems: string[] = [];
  const changed = (field: "action" | "observation", before: string | undefined, after: string | undefined) =>
    before !== after && !(before !== undefined && normalizerMayRewrite(raw.domain, field, before));
  for (const field of ["system", "task"] as const)
    if (raw[field] !== normalized[field])
      problems.push(`${field} changed by normalization: ${JSON.stringify(normalized[field])?.slice(0, 120)}`);
  if (changed("observation", raw.initialObservation, normalized.initialObservation))
    problems.push("initialObservation changed by normalization");
  raw.turns.forEach((turn, k) => {
    if (changed("action", turn.action, normalized.turns[k]?.action)) problems.push(`turns.${k}.action changed by normalization`);
    if (changed("observation", turn.observation, normalized.turns[k]?.observation))
      problems.push(`turns.${k}.observation changed by normalization`);
  });
  return problems;
}

/**
 * Code points for the property's ordinary text: many scripts, combining marks, format and space
 * characters, emoji, mathematical letters, private use — all assigned long before Unicode 16,
 * so the test does not depend on which Unicode version a regex engine has (see the Unicode 17
 * test below for what happens when it does).
 */
const ORDINARY_RANGES: [number, number][] = [
  [0x20, 0x7e],
  [0x09, 0x0d],
  [0xa0, 0x24f],
  [0x300, 0x36f],
  [0x370, 0x3ff],
  [0x400, 0x4ff],
  [0x5d0, 0x5ea],
  [0x620, 0x64a],
  [0x900, 0x97f],
  [0xe01, 0xe5b],
  [0x2000, 0x206f],
  [0x2190, 0x22ff],
  [0x3040, 0x30ff],
  [0x4e00, 0x9fff],
  [0xac00, 0xd7a3],
  [0xe000, 0xe0ff],
  [0xfe00, 0xfe0f],
  [0xff00, 0xffef],
  [0x1d400, 0x1d7ff],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
];

/**
 * os/android observations such as `<think/`, `<tool_call/` or `</tool_call/` (an unterminated
 * tag) pass fast-xml-parser's validator and then make its parser throw a plain Error instead of
 * a TreeParseError: see the "hardening findings" test at the end of this file.
 */
function crashesTreeParser(trajectory: Trajectory): boolean {
  const parse =
    trajectory.domain === "os"
      ? (text: string) => parseOsObservation(text)
      : trajectory.domain === "android"
        ? (text: string) => parseAndroidObservation(text, undefined)
        : undefined;
  if (!parse) return false;
  return [trajectory.initialObservation, ...trajectory.turns.map((turn) => turn.observation)].some((text) => {
    if (text === undefined) return false;
    try {
      parse(text);
      return false;
    } catch (err) {
      return !(err instanceof TreeParseError);
    }
  });
}

/** One property-test trajectory: each field a list of parts, hostile or ordinary. */
type Field = { hostile: boolean; text: string }[];
interface PropertySpec {
  domain: Domain;
  system: Field | undefined;
  task: Field | undefined;
  initialObservation: Field | undefined;
  turns: { action: Field; observation: Field }[];
}

for (const underTest of TOKENIZERS) {
  describe(`injection: ${underTest.label}`, () => {
    let job: InjectionJob;
    let tokenizer: Tokenizer;
    let catalogue: HostileCatalogue;
    let cases: HostileCase[];
    let records: Map<string, Trajectory>;
    const processed = new Map<string, { dirty: Processed; clean: Processed; a: Analysis; b: Analysis }>();
    /** Text between control tokens → our ids, from every sequence built here (for the reference). */
    const runs = new Map<string, { ids: number[]; where: string }>();
    const collectRuns = (analysis: Analysis, where: string) => {
      for (const run of analysis.runs) if (!runs.has(run.text)) runs.set(run.text, { ids: run.ids, where });
    };

    beforeAll(async () => {
      job = await injectionJob(mkdtempSync(join(scratch, "job-")), underTest.spec());
      tokenizer = job.plan.tokenizer;
      catalogue = hostileCatalogue(tokenizer);
      const markers = [...new Set([...tokenizer.addedTokens.keys(), ...CHAT_MARKERS])];
      cases = hostileCases(catalogue, markers);
      records = await job.read(
        cases.flatMap((c) => [record(c.id, c.domain, c.build(keep)), record(`${c.id}${CLEAN}`, c.domain, c.build(drop))]),
      );
      for (const c of cases) {
        const dirty = await processTrajectory(job, records.get(c.id) as Trajectory);
        const clean = await processTrajectory(job, records.get(`${c.id}${CLEAN}`) as Trajectory);
        const a = analyze(dirty, tokenizer);
        const b = analyze(clean, tokenizer);
        collectRuns(a, c.id);
        collectRuns(b, `${c.id}${CLEAN}`);
        processed.set(c.id, { dirty, clean, a, b });
      }
    });

    it("the hostile catalogue holds every added/special token of the tokenizer", () => {
      const known = new Set<string>(KNOWN_SPECIAL_TOKENS);
      expect([...tokenizer.addedTokens.keys()].filter((token) => !known.has(token))).toEqual([]);
      for (const token of tokenizer.addedTokens.keys()) expect(catalogue.literals).toContain(token);
      // The template really uses control tokens, so "no change in structure" is not vacuous.
      const { a } = processed.get(cases[0]?.id as string) ?? {};
      expect(a?.control.length).toBeGreaterThanOrEqual(6);
    });

    for (const domain of DOMAINS) {
      it(`${domain}: hostile strings in every field and position stay text; structure, content and mask unchanged`, () => {
        const failures: string[] = [];
        const domainCases = cases.filter((c) => c.domain === domain);
        expect(domainCases.length).toBeGreaterThanOrEqual(3);
        for (const c of domainCases) {
          const { dirty, clean, a, b } = processed.get(c.id) as NonNullable<ReturnType<typeof processed.get>>;
          failures.push(...a.problems.map((p) => `${c.id}: ${p}`), ...b.problems.map((p) => `${c.id}${CLEAN}: ${p}`));
          if (a.control.join() !== b.control.join())
            failures.push(`${c.id}: template structure changed: ${controlDiff(tokenizer, a.control, b.control)}`);
          const turns = dirty.trajectory.turns.length;
          if (a.maskRuns !== turns || b.maskRuns !== turns)
            failures.push(`${c.id}: the loss mask covers ${a.maskRuns} turns (clean twin ${b.maskRuns}), the trajectory has ${turns}`);
          if (c.verbatim) failures.push(...verbatimProblems(records.get(c.id) as Trajectory, dirty.trajectory).map((p) => `${c.id}: ${p}`));
          const dirtyText = renderedContent(dirty);
          const cleanText = renderedContent(clean);
          for (const literal of c.expect) {
            if (!dirtyText.includes(literal)) failures.push(`${c.id}: ${JSON.stringify(literal)} did not reach the rendered content`);
            if (cleanText.includes(literal)) failures.push(`${c.id}${CLEAN}: holds ${JSON.stringify(literal)} without any hostile input`);
          }
        }
        expect(failures).toEqual([]);
      });
    }

    it("the checks are not vacuous: an encoder that matches special tokens in content is caught", async () => {
      // What the HF-JS tokenizers (and `tokenizers` with its added tokens) do with content.
      const literals = [...tokenizer.addedTokens.keys()].sort((a, b) => b.length - a.length);
      const pattern = new RegExp(literals.map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
      const leaky: Tokenizer = {
        ...tokenizer,
        encodeOrdinary(text) {
          const ids: number[] = [];
          let last = 0;
          for (const match of text.matchAll(pattern)) {
            ids.push(...tokenizer.encodeOrdinary(text.slice(last, match.index)), tokenizer.addedTokens.get(match[0]) as number);
            last = match.index + match[0].length;
          }
          ids.push(...tokenizer.encodeOrdinary(text.slice(last)));
          return Uint32Array.from(ids);
        },
      };
      const leakyJob = { ...job, context: { ...job.context, tokenizer: leaky } };
      const c = cases.find((c) => c.id === "terminal/positions/0") as HostileCase;
      const a = analyze(await processTrajectory(leakyJob, records.get(c.id) as Trajectory), leaky);
      const b = analyze(await processTrajectory(leakyJob, records.get(`${c.id}${CLEAN}`) as Trajectory), leaky);
      expect(a.problems.some((p) => p.includes("lies in the content"))).toBe(true);
      expect(a.control.length).toBeGreaterThan(b.control.length);
    });

    it("turn-stats policy (the default): trained runs are exactly the kept observations, no control id in content", async () => {
      const policy = turnStatsPolicy(job.plan.config.mask, tokenizer);
      const failures: string[] = [];
      let kept = 0;
      for (const c of cases.filter((c) => c.id.includes("/positions/") || !c.verbatim)) {
        const result = await processTrajectory(job, records.get(c.id) as Trajectory, policy);
        const analysis = analyze(result, tokenizer);
        failures.push(...analysis.problems.map((p) => `${c.id}: ${p}`));
        const decisions = result.decisions?.filter((d) => d.kept).length;
        if (analysis.maskRuns !== decisions) failures.push(`${c.id}: ${analysis.maskRuns} trained runs, ${decisions} turns kept`);
        kept += analysis.maskRuns;
      }
      expect(failures).toEqual([]);
      expect(kept).toBeGreaterThan(0);
    });

    it("SFT samples: hostile history, reasoning and prediction stay text; structure unchanged", async () => {
      const failures: string[] = [];
      for (const c of cases.filter((c) => c.id.endsWith("/positions/0"))) {
        const { dirty, clean } = processed.get(c.id) as NonNullable<ReturnType<typeof processed.get>>;
        const hostile = catalogue.literals.join("\n");
        const sample = (trajectory: Trajectory, think: string, prediction: string) => {
          const prompt = buildPrompt(trajectory, trajectory.turns.length - 1, "test", job.plan.systemPrompts, { maxHistoryTurns: 0 });
          return sftSample(prompt, think, prediction, job.plan.renderer, tokenizer);
        };
        const a = sample(dirty.trajectory, `why ${hostile}`, `${hostile} out`);
        const b = sample(clean.trajectory, "why ", " out");
        const added = new Set(tokenizer.addedTokens.values());
        const control = (ids: Int32Array) => Array.from(ids).filter((id) => added.has(id));
        if (control(a.inputIds).join() !== control(b.inputIds).join())
          failures.push(
            `${c.id}: SFT structure changed: ${controlDiff(tokenizer, control(a.inputIds).map(String), control(b.inputIds).map(String))}`,
          );
        const trained = decodeText(
          tokenizer,
          a.inputIds.filter((_, i) => a.lossMask[i] === 1),
        );
        if (!trained.includes(`why ${tokenizer.normalize(hostile)}`) || !trained.includes(`${tokenizer.normalize(hostile)} out`))
          failures.push(`${c.id}: the SFT answer's hostile text is not trained verbatim`);
      }
      expect(failures).toEqual([]);
    });

    it("property: random interleavings of special-token strings and ordinary text", async () => {
      const codePoint = fc.oneof(...ORDINARY_RANGES.map(([min, max]) => fc.integer({ min, max }))).map((c) => String.fromCodePoint(c));
      const ordinary = fc.oneof(
        fc.string({ unit: codePoint, maxLength: 12 }),
        fc.string({
          unit: fc.constantFrom("<", "|", ">", "/", "_", "\n", " ", "\r", "\t", "i", "m", "s", "t", "a", "r", "e", "n", "d", "h", "k"),
          maxLength: 16,
        }),
        fc.constantFrom(
          "\n",
          "\n\n",
          " ",
          "\r\n",
          "ls -la",
          '{"a": 1}',
          "&lt;",
          "&gt;",
          "think",
          "im_start",
          "endoftext",
          "\u0338",
          "\u200b",
        ),
      );
      const part = fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...catalogue.literals).map((text) => ({ hostile: true, text })) },
        { weight: 2, arbitrary: fc.constantFrom(...catalogue.fragments).map((text) => ({ hostile: true, text })) },
        { weight: 4, arbitrary: ordinary.map((text) => ({ hostile: false, text })) },
      );
      const field = fc.array(part, { maxLength: 6 });
      const spec: fc.Arbitrary<PropertySpec> = fc.record({
        domain: fc.constantFrom(...DOMAINS),
        system: fc.option(field, { nil: undefined }),
        task: fc.option(field, { nil: undefined }),
        initialObservation: fc.option(field, { nil: undefined }),
        turns: fc.array(fc.record({ action: field, observation: field }), { minLength: 1, maxLength: 3 }),
      });
      const text = (parts: Field, withHostile: boolean) => parts.map((p) => (withHostile || !p.hostile ? p.text : "")).join("");
      const build = (s: PropertySpec, id: string, withHostile: boolean): Trajectory => {
        const optional = (parts: Field | undefined) => (parts === undefined ? undefined : text(parts, withHostile));
        const system = optional(s.system);
        const task = optional(s.task);
        const initialObservation = optional(s.initialObservation);
        return {
          id,
          domain: s.domain,
          source: { uri: "property", format: "test" },
          ...(system !== undefined ? { system } : {}),
          ...(task !== undefined ? { task } : {}),
          ...(initialObservation !== undefined ? { initialObservation } : {}),
          turns: s.turns.map((turn) => ({ action: text(turn.action, withHostile), observation: text(turn.observation, withHostile) })),
        };
      };
      let n = 0;
      await fc.assert(
        fc.asyncProperty(spec, async (s) => {
          const id = `property-${n++}`;
          const raw = build(s, id, true);
          const cleanRaw = build(s, `${id}${CLEAN}`, false);
          // A known crash outside injection ("hardening findings" below) is skipped here so this
          // property stays about control tokens; any other error fails it.
          fc.pre(!crashesTreeParser(raw) && !crashesTreeParser(cleanRaw));
          const dirty = await processTrajectory(job, raw);
          const clean = await processTrajectory(job, cleanRaw);
          const a = analyze(dirty, tokenizer);
          const b = analyze(clean, tokenizer);
          collectRuns(a, id);
          collectRuns(b, `${id}${CLEAN}`);
          expect(a.problems).toEqual([]);
          expect(b.problems).toEqual([]);
          if (a.control.join() !== b.control.join()) expect.fail(controlDiff(tokenizer, a.control, b.control));
          expect([a.maskRuns, b.maskRuns]).toEqual([s.turns.length, s.turns.length]);
          // Text is never dropped: what the domain does not parse reaches the sequence as written.
          expect(verbatimProblems(raw, dirty.trajectory)).toEqual([]);
        }),
        { numRuns: PROPERTY_RUNS },
      );
      expect(n).toBeGreaterThanOrEqual(PROPERTY_RUNS);
    });

    it("content ids equal the independent Python reference (special tokens as text)", () => {
      const spec = underTest.reference();
      const texts = [...runs.keys()];
      expect(texts.length).toBeGreaterThan(100);
      const reference = referenceIds(spec, texts);
      const mismatches: string[] = [];
      texts.forEach((text, i) => {
        const ours = runs.get(text) as { ids: number[]; where: string };
        const theirs = reference[i] as number[];
        if (ours.ids.join() !== theirs.join())
          mismatches.push(
            `${ours.where}: ${JSON.stringify(text.slice(0, 200))}: ours ${JSON.stringify(ours.ids.slice(0, 40))} reference ${JSON.stringify(theirs.slice(0, 40))}`,
          );
      });
      expect(mismatches.slice(0, 20)).toEqual([]);
      // The reference does see these strings as control tokens when it is allowed to: the
      // trainer's own tokenizer (added tokens kept) turns the literal into the control id.
      if (spec.kind === "hf") {
        const imStart = tokenizer.addedTokens.get("<|im_start|>");
        expect(referenceIds(spec, ["<|im_start|>"], { keepAdded: true })).toEqual([[imStart]]);
      }
    });

    // Not an injection: found by the reference comparison above. The piece cache
    // (src/tokenize/piece-cache.ts) splits text with V8's regex, whose Unicode tables (17.0 in
    // Node 24.21) know letters that the tokenizer core's regex (and Hugging Face's Oniguruma)
    // do not yet; around such a letter the pieces, and so the ids, differ from the reference.
    it("content ids equal the reference next to letters new in Unicode 17", async () => {
      const letters = [0x088f, 0x0c5c, 0x0cdc, 0xa7d2, 0xa7d4, 0xa7f1, 0x10940, 0x11dda, 0x18d80, 0x1e6c0].map((c) =>
        String.fromCodePoint(c),
      );
      const observation = letters.map((letter) => `a<${letter}<t x${letter}1 ,${letter}`).join("\n");
      const trajectory: Trajectory = {
        id: "unicode-17",
        domain: "terminal",
        source: { uri: "unicode-17", format: "test" },
        turns: [{ action: "cat new-letters.txt", observation }],
      };
      const analysis = analyze(await processTrajectory(job, trajectory), tokenizer);
      expect(analysis.problems).toEqual([]);
      const reference = referenceIds(
        underTest.reference(),
        analysis.runs.map((run) => run.text),
      );
      const mismatches = analysis.runs.flatMap((run, i) =>
        run.ids.join() === reference[i]?.join()
          ? []
          : [`${JSON.stringify(run.text)}: ours ${JSON.stringify(run.ids)} reference ${JSON.stringify(reference[i])}`],
      );
      expect(mismatches).toEqual([]);
    });
  });
}

// Found while testing injections, not injections themselves: the pipeline must quarantine a
// record it cannot normalize (RecordError), never stop the whole run with an unexpected error.
describe("hardening findings (not injections)", () => {
  it("os/android observations that are unterminated XML tags are quarantined, not a crash of the run", async () => {
    const job = await injectionJob(mkdtempSync(join(scratch, "xml-")), { name: "qwen3" });
    const failures: string[] = [];
    for (const domain of ["os", "android"] as const) {
      for (const observation of ["<think/", "<tool_call/", "</tool_call/", "<h/", "<think>x</think>\n</think/"]) {
        const trajectory: Trajectory = {
          id: "xml",
          domain,
          source: { uri: "xml", format: "test" },
          turns: [{ action: "cat out.xml", observation }],
        };
        try {
          await processTrajectory(job, trajectory);
        } catch (err) {
          if (!(err instanceof RecordError))
            failures.push(`${domain} ${JSON.stringify(observation)}: ${(err as Error).constructor.name}: ${(err as Error).message}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});
