/**
 * Issue 37, item 4: the teacher rewording of control instructions, wired as the job stage
 * `rephrase` (src/controls/rephrase/). Unit tests of the checks (each reason with an input that
 * fails it, and a rewording that passes), then the demo job with the fake teacher: reworded
 * instructions in the shards, rejections counted by reason, a rerun from the cache that sends
 * nothing and writes the same bytes, and a clear failure when no teacher listens.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SampleControls } from "../src/controls/apply-controls.ts";
import { buildInstruction, rephraseProblems } from "../src/controls/control-instruction.ts";
import { detectControls } from "../src/controls/detect-controls.ts";
import { withRephrasing } from "../src/controls/rephrase/apply-rephrasing.ts";
import { judgeRephrasing } from "../src/controls/rephrase/rephrase-check.ts";
import { lookupKey, type RephraseLine } from "../src/controls/rephrase/rephrase-files.ts";
import { rephraseDrawn, rephraseSeed } from "../src/controls/rephrase/rephrase-settings.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { tempDir } from "./helpers.ts";
import { fakeRephrasing } from "./support/fake-rephraser.ts";
import type { FakeScoreServer } from "./support/fake-score-server.ts";
import { somePrompts, startFakeTeacher, type TeacherFaults } from "./support/fake-synthesis-teacher.ts";
import { digestFolder, rephraseJobConfig, runFailure, runJob } from "./support/teacher-job.ts";

// A search trace with a 429 at the 2nd call (the shape of data/demo/search).
const search: Trajectory = {
  id: "s1",
  domain: "search",
  source: { uri: "test", format: "test" },
  turns: [
    { action: 'search("lwm data")', observation: '[{"title": "LWM", "url": "https://example.com/lwm"}]' },
    {
      action: 'search("world models for agents, with long names")',
      observation: "HTTP 429 Too Many Requests\nRetry-After: 30\n\nrate limit exceeded for this key, try again later please",
    },
  ],
};
const labels = detectControls(search);
const template = buildInstruction(search, labels);

describe("the checks a teacher's rewording must pass", () => {
  it("the fixture states its edge case (else every check below would be vacuous)", () => {
    expect(labels.map((l) => l.label)).toContain("rate_limit");
    expect(template?.text).toMatch(/2nd/);
  });

  it("accepts a rewording that keeps every fact, its thinking block dropped", () => {
    if (!template) throw new Error("no template");
    const verdict = judgeRephrasing(fakeRephrasing(template.text), template, search, () => labels);
    expect(verdict.ok).toBe(true);
    if (verdict.ok) {
      expect(verdict.instruction.text).toMatch(/^In this episode, /);
      expect(verdict.instruction.text).not.toMatch(/think/);
      expect(verdict.instruction.rephrased).toBe(true);
    }
  });

  it("negative control: a rewording that drops a number is rejected as drops-number", () => {
    if (!template) throw new Error("no template");
    const verdict = judgeRephrasing(template.text.replaceAll("2nd", "second"), template, search, () => labels);
    expect(verdict.ok ? [] : verdict.reasons).toEqual(["drops-number"]);
  });

  it("an ordinal spelled out is dropped even where the same number is stated as a count (found on the demo)", () => {
    // The demo's swe template: "2nd" → "second" keeps the set of numbers ({1, 2}); it drops a mention of 2.
    const original =
      "What the agent asks for is missing: the 2nd command fails with a not-found error for src/slug.py. Tests fail: the 1st command reports 2 failing tests.";
    expect(rephraseProblems(original, original.replace("2nd", "second"))).toEqual(["the rephrasing drops a mention of 2"]);
    expect(rephraseProblems(original, `In this episode, ${original}`)).toEqual([]);
  });

  it("rejects a number the evidence does not state, an empty answer, and a copied observation", () => {
    if (!template) throw new Error("no template");
    const added = judgeRephrasing(`${template.text} It happens 7 times.`, template, search, () => labels);
    expect(added.ok ? [] : added.reasons).toEqual(["adds-number"]);
    const empty = judgeRephrasing("<think>hmm</think>  ", template, search, () => labels);
    expect(empty.ok ? [] : empty.reasons).toContain("empty");
    const copied = judgeRephrasing(
      `${template.text} Say: rate limit exceeded for this key, try again later please.`,
      template,
      search,
      () => labels,
    );
    expect(copied.ok ? [] : copied.reasons).toContain("copies-observation");
  });

  it("rejects a rewording of an instruction whose evidence is gone (claims are re-detected)", () => {
    if (!template) throw new Error("no template");
    const healed: Trajectory = { ...search, turns: [search.turns[0] as Trajectory["turns"][number], { action: "x", observation: "[]" }] };
    const verdict = judgeRephrasing(fakeRephrasing(template.text), template, healed, detectControls);
    expect(verdict.ok ? [] : verdict.reasons).toContain("unfaithful");
  });
});

describe("the records stage's use of the stage's lines", () => {
  const controls: SampleControls = { kind: "instructed", labels: [], instruction: "The API rate-limits the agent." };
  const line = (text: string | null, over: Partial<RephraseLine> = {}): Map<string, RephraseLine> =>
    new Map([
      [
        lookupKey("r", "instructed"),
        { item: 0, id: "r", kind: "instructed", template: controls.instruction, text, reasons: text ? [] : ["drops-number"], ...over },
      ],
    ]);

  it("uses an accepted wording, keeps the template with the reason otherwise, and leaves samples it was not asked about", () => {
    expect(withRephrasing(controls, "r", line("Calls get rate-limited."))).toMatchObject({
      instruction: "Calls get rate-limited.",
      rephrase: { rephrased: true },
    });
    expect(withRephrasing(controls, "r", line(null))).toMatchObject({
      instruction: controls.instruction,
      rephrase: { rephrased: false, reason: "drops-number" },
    });
    expect(withRephrasing(controls, "other", line("x"))).toBe(controls);
    const normal: SampleControls = { kind: "normal", labels: [], instruction: "Behave normally." };
    expect(withRephrasing(normal, "r", line("x"))).toBe(normal);
  });

  it("negative control: a line for another template is an error, not a silent fallback", () => {
    expect(() => withRephrasing(controls, "r", line("x", { template: "Something else." }))).toThrow(
      /not the one the rephrase stage asked about/,
    );
  });

  it("the draw and the request seed are seeded per sample", () => {
    expect(rephraseSeed(0, "a")).toBe(rephraseSeed(0, "a"));
    expect(rephraseSeed(0, "a")).not.toBe(rephraseSeed(1, "a"));
    const drawn = Array.from({ length: 400 }, (_, i) => rephraseDrawn(0, `id-${i}`, 0.25)).filter(Boolean).length;
    expect(drawn).toBeGreaterThan(60);
    expect(drawn).toBeLessThan(140);
    expect(rephraseDrawn(0, "a", 0)).toBe(false);
  });
});

describe("the demo job with the fake teacher", () => {
  let teacher: FakeScoreServer;
  const faults: TeacherFaults = {};
  /** The first test's output: what a run whose every request was answered writes. */
  let reference: { out: string; sent: number } | undefined;
  beforeAll(async () => {
    // The fake teacher answers rephrase prompts as fake-rephraser.ts does; `faults` make it fail some.
    teacher = await startFakeTeacher(faults);
  });
  afterAll(async () => {
    await teacher.close();
  });

  it("rewords instructions, counts the rejected by reason, and a rerun from the cache sends nothing and writes the same bytes", {
    timeout: 600_000,
  }, async () => {
    const cache = tempDir("lwm-rephrase-cache-");
    const config = rephraseJobConfig(cache);
    const first = join(tempDir(), "out");
    await runJob(config, first, teacher.url);
    const sent = teacher.requests.length;
    reference = { out: first, sent };
    expect(sent).toBeGreaterThan(0);
    const manifest = JSON.parse(readFileSync(join(first, "manifest.json"), "utf8"));
    const controls = manifest.controls;
    expect(controls.rephrase).toEqual({ share: 0.75, model: "Qwen/Qwen3-8B", temperature: 0.7, max_tokens: 2048 });
    expect(controls.rephrased).toBeGreaterThan(0);
    expect(controls.rephrase_rejected["drops-number"] ?? 0).toBeGreaterThan(0);
    const rejected = Object.values(controls.rephrase_rejected as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(controls.rephrased + rejected).toBe(controls.rephrase_asked);
    // Every instruction the teacher was asked about came back, and the records stage used it.
    const lines = readdirSync(join(first, "rephrase"))
      .filter((name) => name.endsWith(".jsonl"))
      .flatMap((name) =>
        readFileSync(join(first, "rephrase", name), "utf8")
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as RephraseLine),
      );
    expect(lines.length).toBe(sent);
    expect(lines.filter((l) => l.text !== null).length).toBe(controls.rephrased);
    for (const l of lines) if (l.text !== null) expect(l.text).toMatch(/^In this episode, /);
    // Synthesized samples (the demo's synthesis block) are asked about too: the stage sees the task's synthesis plan.
    expect(lines.some((l) => l.kind === "synthesized")).toBe(true);
    expect(manifest.controls.synthesized).toBeDefined();

    const second = join(tempDir(), "out");
    await runJob(config, second, teacher.url);
    expect(teacher.requests.length).toBe(sent);
    expect(digestFolder(second)).toEqual(digestFolder(first));
  });

  it("a request failing for a transient reason after its retries stops the stage (no template kept for it), and the rerun writes the reference bytes", {
    timeout: 600_000,
  }, async () => {
    if (!reference) throw new Error("runs after the first run");
    const config = rephraseJobConfig(tempDir("lwm-rephrase-cache-"));
    const out = join(tempDir(), "out");
    const isRephrase = (prompt: string) => !prompt.includes("EDGE CASE:");
    faults.reply = (prompt) => (isRephrase(prompt) && somePrompts(prompt, 3) ? { drop: true } : undefined);
    const error = await runFailure(config, out, teacher.url);
    faults.reply = undefined;
    expect(error?.code).not.toBe(0);
    expect(error?.stderr).toMatch(/controls\.rephrase: \d+ of \d+ requests to the teacher at .* still failed after 1 retries/);
    expect(existsSync(join(out, "rephrase/task-00000.done.json"))).toBe(false);
    expect(existsSync(join(out, "manifest.json"))).toBe(false);
    const before = teacher.requests.length;
    await runJob(config, out, teacher.url);
    expect(teacher.requests.length - before).toBeLessThan(reference.sent);
    expect(digestFolder(out)).toEqual(digestFolder(reference.out));
  });

  it("fails with the cause named when no teacher listens (nothing silently kept as templates)", { timeout: 600_000 }, async () => {
    const config = rephraseJobConfig(tempDir("lwm-rephrase-cache-"));
    const out = join(tempDir(), "out");
    // A port nothing listens on: a server's, closed.
    const closed = await startFakeTeacher();
    const url = closed.url;
    await closed.close();
    const error = await runFailure(config, out, url);
    expect(error?.code).not.toBe(0);
    expect(error?.stderr).toContain(`controls.rephrase: the teacher at ${url} cannot be used`);
    expect(error?.stderr).toMatch(/ECONNREFUSED/);
  });
});
