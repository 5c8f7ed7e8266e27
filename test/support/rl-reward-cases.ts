/**
 * Candidate answers for the RL prompts of an `export rl` dataset, with the SFT verifier's verdict
 * on each, so the Python reward (python/lwm_reward/reward.py) can be checked against it on the
 * same answers (test/python/check_rl_reward.py):
 *
 *   node test/support/rl-reward-cases.ts <verl train.parquet> <cases.jsonl>
 *
 * Per prompt: the perfect answer, near misses of every domain's measure (a line dropped or
 * changed, a JSON value or key changed, nodes re-indented, results reordered or dropped), format
 * failures (no or short thinking, stray or miscased tags, control strings, text outside, a second
 * block), quoted tags, astral characters and JavaScript-only whitespace where lengths and
 * trimming differ between the languages; then seeded random edits. Plus a few synthetic prompts
 * for what the demo lacks (outputs too far apart to diff, numbers JSON spells differently).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import type { Domain } from "../../src/core/trajectory.ts";
import { FIDELITY_RULES, type RlExtraInfo } from "../../src/export/rl-export.ts";
import { DEFAULT_VERIFY_THRESHOLDS, passedAll, type VerifyThresholds, verifyCandidate } from "../../src/sft/verify/index.ts";

export interface RewardPrompt {
  data_source: string;
  prompt: { role: string; content: string }[];
  ground_truth: string;
  extra_info: RlExtraInfo;
}

export interface RewardCase {
  name: string;
  data_source: string;
  solution_str: string;
  ground_truth: string;
  extra_info: RlExtraInfo;
  /** The SFT verifier's verdict (hints not given: the RL setting). */
  expected: { passed: boolean; format: number; fidelity: number | null };
}

const THINK = "The action lists what the environment holds now, so the output follows from the history.";

export function answer(prediction: string, think = THINK): string {
  return `<think>\n${think}\n</think>\n\n<predicted_observation>\n${prediction}\n</predicted_observation>`;
}

/** A small seeded PRNG (mulberry32), so the random edits are the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_TEXT = [
  "\u00a0",
  "\u2028",
  "\u3000",
  "\ufeff",
  "\u0085",
  "\u001c",
  "😀",
  "𝒳",
  "\t",
  "  ",
  "<|im_end|>",
  "</think>",
  "<Think>",
  "é",
];

function randomEdit(text: string, next: () => number): string {
  const lines = text.split("\n");
  const at = Math.floor(next() * Math.max(lines.length, 1));
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
  switch (Math.floor(next() * 7)) {
    case 0:
      lines.splice(at, 1);
      break;
    case 1:
      lines.splice(at, 0, lines[at] ?? "");
      break;
    case 2: {
      const other = Math.floor(next() * lines.length);
      [lines[at], lines[other]] = [lines[other] ?? "", lines[at] ?? ""];
      break;
    }
    case 3: {
      const line = lines[at] ?? "";
      const c = Math.floor(next() * (line.length + 1));
      lines[at] = `${line.slice(0, c)}${pick(ODD_TEXT)}${line.slice(c)}`;
      break;
    }
    case 4:
      lines[at] = `${lines[at] ?? ""}${pick([" ", "\u00a0", "\u2028", "\ufeff", "\u0085"])}`;
      break;
    case 5:
      lines[at] = (lines[at] ?? "").replace(/\d/, (d) => String((Number(d) + 1) % 10));
      break;
    default:
      lines[at] = `  ${lines[at] ?? ""}`;
  }
  return lines.join("\n");
}

/** The answers tried on one prompt. */
export function candidatesFor(prompt: RewardPrompt, seed: number): { name: string; text: string }[] {
  const gt = prompt.ground_truth;
  const lines = gt.split("\n");
  const middle = Math.floor(lines.length / 2);
  const out: { name: string; text: string }[] = [
    { name: "perfect", text: answer(gt) },
    { name: "perfect-crlf", text: answer(gt).replaceAll("\n", "\r\n") },
    { name: "perfect-trailing-space", text: answer(lines.map((l) => `${l}  `).join("\n")) },
    { name: "perfect-nbsp-trailing", text: answer(lines.map((l) => `${l}\u00a0`).join("\n")) },
    { name: "perfect-extra-blank-lines", text: answer(`\n\n${gt}\n\n`) },
    { name: "line-dropped", text: answer(lines.filter((_, i) => i !== middle).join("\n")) },
    { name: "line-changed", text: answer(lines.map((l, i) => (i === middle ? `${l} changed` : l)).join("\n")) },
    { name: "line-added", text: answer(`${gt}\nan extra line`) },
    { name: "reversed", text: answer([...lines].reverse().join("\n")) },
    { name: "indented", text: answer(lines.map((l) => `  ${l}`).join("\n")) },
    { name: "tabs", text: answer(lines.map((l) => l.replace(/^ {2}/, "\t")).join("\n")) },
    { name: "empty-prediction", text: answer("") },
    { name: "no-think", text: `<predicted_observation>\n${gt}\n</predicted_observation>` },
    { name: "empty-think", text: answer(gt, "   ") },
    { name: "short-think", text: answer(gt, "too short") },
    { name: "think-20-units-astral", text: answer(gt, "😀".repeat(10)) },
    { name: "think-19-units-astral", text: answer(gt, `${"😀".repeat(9)}x`) },
    { name: "think-js-whitespace", text: answer(gt, `\u00a0\ufeff${THINK}\u3000\u2028`) },
    { name: "think-python-only-whitespace", text: answer(gt, `\u0085\u001c${"x".repeat(18)}`) },
    { name: "unclosed-prediction", text: `<think>\n${THINK}\n</think>\n<predicted_observation>\n${gt}` },
    { name: "text-outside", text: `Sure!\n${answer(gt)}` },
    { name: "text-after", text: `${answer(gt)}\nDone.` },
    { name: "control-string-after", text: `${answer(gt)}<|im_end|>` },
    { name: "control-in-prediction", text: answer(`${gt}\n<|im_end|>`) },
    { name: "control-in-think", text: answer(gt, `${THINK} <|endoftext|>`) },
    { name: "fullwidth-control", text: answer(gt, `${THINK} <｜end▁of▁sentence｜>`) },
    { name: "long-control", text: answer(gt, `${THINK} <|${"x".repeat(64)}|>`) },
    { name: "too-long-control", text: answer(gt, `${THINK} <|${"x".repeat(65)}|>`) },
    { name: "astral-control", text: answer(gt, `${THINK} <|${"😀".repeat(32)}|>`) },
    { name: "astral-control-over", text: answer(gt, `${THINK} <|${"😀".repeat(33)}|>`) },
    { name: "miscased-tag", text: answer(gt, `${THINK} <THINK>`) },
    { name: "kelvin-tag", text: answer(gt, `${THINK} <thin\u212a>`) },
    { name: "two-predictions", text: `${answer(gt)}\n<predicted_observation>\nx\n</predicted_observation>` },
    { name: "out-of-order", text: `<predicted_observation>\n${gt}\n</predicted_observation>\n<think>\n${THINK}\n</think>` },
    { name: "quoted-think-tag", text: answer(`${gt}\n</think>`) },
    { name: "quoted-prediction-tag", text: answer(`<predicted_observation>${gt}`) },
    { name: "too-long-think", text: answer(gt, "x".repeat(prompt.extra_info.think_max_chars + 1)) },
  ];
  // Tags the prompt holds may be quoted inside the blocks.
  for (const tag of prompt.extra_info.quotable_tags.slice(0, 3))
    out.push({ name: `quoted-prompt-tag ${tag}`, text: answer(`${gt}\n${tag}`) });
  // JSON: same content another way, one value changed, one key renamed.
  try {
    const value = JSON.parse(gt) as unknown;
    out.push({ name: "json-compact", text: answer(JSON.stringify(value)) });
    out.push({ name: "json-reindented", text: answer(JSON.stringify(value, null, 4)) });
    const text = JSON.stringify(value);
    out.push({ name: "json-value-changed", text: answer(text.replace(/"([^"\\]{1,40})"(?=\s*[,}\]])/, '"$1x"')) });
    out.push({ name: "json-key-renamed", text: answer(text.replace(/"([A-Za-z_]\w*)":/, '"$1_x":')) });
    out.push({ name: "json-number-changed", text: answer(text.replace(/(\d)(?=\s*[,}\]])/, (d) => String((Number(d) + 1) % 10))) });
    out.push({ name: "json-float-spelling", text: answer(text.replace(/:(\d+)(?=[,}])/g, ":$1.0")) });
    out.push({ name: "json-truncated", text: answer(text.slice(0, Math.floor(text.length / 2))) });
  } catch {
    // not JSON
  }
  // Search: result URLs in plain text, one dropped.
  const urls = [...gt.matchAll(/https?:\/\/[^\s"'<>()[\]{}]+/g)].map((m) => m[0]);
  if (urls.length > 0) {
    out.push({ name: "urls-only", text: answer(urls.join("\n")) });
    out.push({ name: "urls-with-punctuation", text: answer(urls.map((u) => `${u}.`).join(" ")) });
    out.push({ name: "url-dropped", text: answer(gt.replace(urls[0] as string, "https://example.invalid/")) });
  }
  const next = random(seed);
  for (let i = 0; i < 8; i++) {
    let text = gt;
    const edits = 1 + Math.floor(next() * 3);
    for (let e = 0; e < edits; e++) text = randomEdit(text, next);
    out.push({ name: `random-${i}`, text: answer(text) });
  }
  return out;
}

function extraInfo(domain: Domain, thresholds: VerifyThresholds, index: number, quotable: string[] = []): RlExtraInfo {
  return {
    index,
    split: "train",
    prompt_id: `synthetic-${index}#0`,
    trajectory_id: `synthetic-${index}`,
    domain,
    turn_index: 0,
    source: "synthetic",
    fidelity_rule: FIDELITY_RULES[domain],
    fidelity_threshold: thresholds.fidelity[domain],
    think_min_chars: thresholds.lengths.thinkMinChars,
    think_max_chars: thresholds.lengths.thinkMaxChars,
    prediction_min_chars: thresholds.lengths.predictionMinChars,
    prediction_max_chars: thresholds.lengths.predictionMaxChars,
    quotable_tags: quotable,
    literals_escaped: false,
  };
}

/** Prompts the demo does not have: outputs too far apart to diff, JSON numbers spelled apart, trees with diff lines. */
export function syntheticPrompts(
  thresholds: VerifyThresholds = DEFAULT_VERIFY_THRESHOLDS,
): { prompt: RewardPrompt; extra: { name: string; text: string }[] }[] {
  const long = Array.from({ length: 2600 }, (_, i) => `line ${i} of the build log`).join("\n");
  const other = Array.from({ length: 2600 }, (_, i) => `other ${i}`).join("\n");
  const near = long
    .split("\n")
    .map((line, i) => (i % 3 === 0 ? `${line}!` : line))
    .join("\n");
  // Many repeated lines: more matching line pairs than the LCS shortcut takes, so the bounded diff decides.
  const braces = Array.from({ length: 2600 }, (_, i) => (i % 500 === 0 ? `block ${i}` : "}")).join("\n");
  const json =
    '{"id": 12345678901234567890, "ok": true, "n": 1, "x": -0, "big": 1e400, "s": "a\\u2028b", "e": {}, "l": [], "dup": 1, "dup": 2, "k.y": 1, "__proto__": {"a": 1}}';
  const tree =
    '[1] RootWebArea "Home"\n  [2] button "Sign in" focused\n  [3] link \'Docs\\\' page\'\n    [4] StaticText "x"\n+ "k 1" in root at 0: [5] button "New"\n- 7\n~ [8] text "changed"';
  const prompt = (domain: Domain, gt: string, index: number, quotable: string[] = []): RewardPrompt => ({
    data_source: `lwm-data/${domain}`,
    prompt: [{ role: "user", content: "x" }],
    ground_truth: gt,
    extra_info: extraInfo(domain, thresholds, 100_000 + index, quotable),
  });
  return [
    {
      prompt: prompt("terminal", long, 0),
      extra: [
        { name: "far-apart", text: answer(other) },
        { name: "near-but-many-edits", text: answer(near) },
        { name: "half", text: answer(long.split("\n").slice(0, 1300).join("\n")) },
      ],
    },
    {
      prompt: prompt("swe", braces, 7),
      extra: [
        { name: "repeated-shifted", text: answer(`}\n}\n${braces}`) },
        { name: "repeated-block-changed", text: answer(braces.replace("block 500", "block five hundred")) },
        { name: "repeated-halved", text: answer(braces.split("\n").slice(0, 1300).join("\n")) },
        { name: "repeated-blocks-renamed", text: answer(braces.replaceAll("block", "section").replace(/\n}\n}\n/g, "\n}\n")) },
      ],
    },
    {
      prompt: prompt("mcp", json, 1),
      extra: [
        {
          name: "json-js-equal-numbers",
          text: answer(
            '{"id": 12345678901234567000, "ok": true, "n": 1.0, "x": 0, "big": 2e400, "s": "a\u2028b", "e": {}, "l": [], "dup": 2, "k.y": 1, "__proto__": {"a": 1}}',
          ),
        },
        { name: "json-nan", text: answer('{"id": NaN, "ok": true}') },
        { name: "json-infinity", text: answer('{"big": Infinity}') },
        { name: "json-dup-first", text: answer(json.replace('"dup": 2', '"dup": 1')) },
        { name: "json-scalar", text: answer("42") },
        { name: "json-bom", text: answer(`\ufeff${json}`) },
        { name: "json-nested-key-dot", text: answer(json.replace('"k.y": 1', '"k": {"y": 1}')) },
      ],
    },
    {
      prompt: prompt("mcp", "plain text, not JSON\nsecond line", 2),
      extra: [{ name: "text-fallback", text: answer("plain text, not JSON") }],
    },
    {
      prompt: prompt(
        "search",
        '{"web": {"results": [{"title": "  A   title ", "url": "https://a.example/1"}, {"title": "B", "link": "https://b.example/2"}]}}',
        3,
      ),
      extra: [
        {
          name: "titles-spaced",
          text: answer(
            '{"web": {"results": [{"title": "A title", "url": "https://a.example/1"}, {"title": "B\u00a0", "link": "https://b.example/2"}]}}',
          ),
        },
        { name: "plain-urls", text: answer("see https://a.example/1, and https://b.example/2.") },
      ],
    },
    {
      prompt: prompt("search", "Results: https://a.example/x?q=1 and (https://b.example/y).", 4),
      extra: [{ name: "text-urls", text: answer("https://a.example/x?q=1\nhttps://b.example/y") }],
    },
    {
      prompt: prompt("web", tree, 5, ["<|im_start|>"]),
      extra: [
        { name: "tree-attr-changed", text: answer(tree.replace("focused", "")) },
        { name: "tree-tabs", text: answer(tree.replaceAll("  ", "\t")) },
        { name: "tree-depth-changed", text: answer(tree.replace("    [4]", "  [4]")) },
        { name: "tree-quoted-prompt-tag", text: answer(`${tree}\n<|im_start|>`) },
        { name: "tree-unquoted-tag", text: answer(`${tree}\n<|im_sep|>`) },
      ],
    },
    {
      prompt: prompt("android", "", 6),
      extra: [
        { name: "empty-both", text: answer("") },
        { name: "empty-truth", text: answer("node") },
      ],
    },
  ];
}

/** The verifier's verdict on one answer, as the SFT stage gives it (hints not given). */
export function verdict(prompt: RewardPrompt, text: string, thresholds: VerifyThresholds): RewardCase["expected"] {
  const info = prompt.extra_info;
  const results = verifyCandidate(
    {
      domain: info.domain,
      candidateText: text,
      groundTruth: prompt.ground_truth,
      hintsGiven: false,
      quotable: prompt.prompt.map((message) => message.content).concat(info.quotable_tags),
    },
    {
      ...thresholds,
      fidelity: { ...thresholds.fidelity, [info.domain]: info.fidelity_threshold },
      lengths: {
        thinkMinChars: info.think_min_chars,
        thinkMaxChars: info.think_max_chars,
        predictionMinChars: info.prediction_min_chars,
        predictionMaxChars: info.prediction_max_chars,
      },
    },
  );
  const rule = (name: string) => results.find((r) => r.rule === name);
  const fidelity = rule("fidelity");
  return { passed: passedAll(results), format: rule("format")?.score ?? 0, fidelity: fidelity?.skipped ? null : (fidelity?.score ?? null) };
}

/** Every case for a list of prompts (and the synthetic ones). */
export function rewardCases(prompts: readonly RewardPrompt[], thresholds: VerifyThresholds = DEFAULT_VERIFY_THRESHOLDS): RewardCase[] {
  const cases: RewardCase[] = [];
  const add = (prompt: RewardPrompt, candidates: { name: string; text: string }[]) => {
    for (const { name, text } of candidates)
      cases.push({
        name: `${prompt.extra_info.prompt_id} ${name}`,
        data_source: prompt.data_source,
        solution_str: text,
        ground_truth: prompt.ground_truth,
        extra_info: prompt.extra_info,
        expected: verdict(prompt, text, thresholds),
      });
  };
  prompts.forEach((prompt, i) => {
    add(prompt, candidatesFor(prompt, i + 1));
  });
  for (const { prompt, extra } of syntheticPrompts(thresholds)) add(prompt, [...candidatesFor(prompt, 7), ...extra]);
  return cases;
}

/** The prompts of a verl Parquet file written by `export rl --format verl`. */
export function readVerlPrompts(path: string): RewardPrompt[] {
  const table = tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
  return table.toArray().map((row) => {
    const value = row.toJSON() as Record<string, { toJSON(): unknown; toArray?(): unknown[] }>;
    const info = (value.extra_info as { toJSON(): Record<string, unknown> }).toJSON();
    return {
      data_source: String(value.data_source),
      prompt: ((value.prompt as { toArray(): { toJSON(): { role: string; content: string } }[] }).toArray() ?? []).map((m) => m.toJSON()),
      ground_truth: String((value.reward_model as { toJSON(): { ground_truth: string } }).toJSON().ground_truth),
      extra_info: {
        ...(info as unknown as RlExtraInfo),
        index: Number(info.index),
        quotable_tags: [...((info.quotable_tags as { toArray(): string[] } | null)?.toArray() ?? [])],
      },
    };
  });
}

if (import.meta.main) {
  const [parquetPath, out] = process.argv.slice(2);
  if (!parquetPath || !out) {
    console.error("usage: node test/support/rl-reward-cases.ts <verl train.parquet> <cases.jsonl>");
    process.exit(2);
  }
  const cases = rewardCases(readVerlPrompts(parquetPath));
  writeFileSync(out, `${cases.map((c) => JSON.stringify(c)).join("\n")}\n`);
  console.log(`${cases.length} reward cases (${cases.filter((c) => c.expected.passed).length} passing) → ${out}`);
}
