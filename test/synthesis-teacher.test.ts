/**
 * The teacher source of synthesized edge cases (issue 37 item 1, docs/controls.md "Teacher
 * syntheses"): a teacher's observation goes through the rules' verifier plus its own check (no other
 * edge case); the stage asks, caches and stores; the counting and records stages use verified answers
 * as candidates, counted by source; a rerun from the cache sends nothing; no teacher fails loudly.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyControls, counterfactualControls } from "../src/controls/apply-controls.ts";
import { synthesisOrder } from "../src/controls/synthesis/select-synthesis.ts";
import { askKey, askLimit, chooseAsks } from "../src/controls/synthesis/teacher-cap.ts";
import type { TeacherLine, TeacherMarkerData } from "../src/controls/synthesis/teacher-files.ts";
import { answerObservation } from "../src/controls/synthesis/teacher-prompt.ts";
import { synthesizeFromTeacher, teacherKey } from "../src/controls/synthesis/teacher-source.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { tempDir } from "./helpers.ts";
import type { FakeScoreServer } from "./support/fake-score-server.ts";
import { somePrompts, startFakeTeacher, type TeacherFaults } from "./support/fake-synthesis-teacher.ts";
import { digestFolder, runFailure, runJob, synthesisTeacherJobConfig } from "./support/teacher-job.ts";

// A terminal session (tmux pane captures, as data/demo/terminal): two normal turns.
const terminal: Trajectory = {
  id: "t1",
  domain: "terminal",
  source: { uri: "test", format: "test" },
  turns: [
    { action: "ls", observation: "demo@lwm:~/work$ ls\napp.log  notes.txt\ndemo@lwm:~/work$ " },
    { action: "make build", observation: "demo@lwm:~/work$ make build\ncc -o app main.c\ndemo@lwm:~/work$ " },
  ],
};
const TIMED_OUT = "demo@lwm:~/work$ make build\nCommand timed out after 30 seconds\ndemo@lwm:~/work$ ";

describe("a teacher's observation, verified like a rule's", () => {
  it("uses an answer that shows the kind and keeps the frame, recorded as the teacher's", () => {
    const result = synthesizeFromTeacher(terminal, 1, "timeout", TIMED_OUT);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.synthesis.record).toEqual({ source: "teacher", rule: "teacher", kind: "timeout", turn: 1, from: "t1" });
    expect(result.synthesis.trajectory.id).toBe("t1#synth-teacher-timeout-1");
    expect(result.synthesis.trajectory.turns.at(-1)?.observation).toBe(TIMED_OUT);
    expect(result.synthesis.labels.map((l) => l.label)).toContain("timeout");
    expect(counterfactualControls(result.synthesis.trajectory)).toMatchObject({ kind: "synthesized", synthesizedSource: "teacher" });
  });

  it("rejects an answer whose prompt line changed (frame-changed)", () => {
    const result = synthesizeFromTeacher(terminal, 1, "timeout", TIMED_OUT.replace(/\$ $/, "% "));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reasons).toContain("frame-changed");
  });

  it("rejects an answer that shows another edge case as well (other-edge-case) or instead (not-detected)", () => {
    const both = TIMED_OUT.replace("Command timed", "write error: No space left on device\nCommand timed");
    const withOther = synthesizeFromTeacher(terminal, 1, "timeout", both);
    expect(withOther.ok).toBe(false);
    if (!withOther.ok) expect(withOther.reasons).toEqual(["other-edge-case"]);
    const instead = synthesizeFromTeacher(
      terminal,
      1,
      "timeout",
      TIMED_OUT.replace("Command timed out after 30 seconds", "bash: make: Permission denied"),
    );
    expect(instead.ok).toBe(false);
    if (!instead.ok) expect(instead.reasons).toEqual(expect.arrayContaining(["not-detected", "other-edge-case"]));
  });

  it("rejects an answer that copies the instruction, and one that is the observation as it was", () => {
    const ok = synthesizeFromTeacher(terminal, 1, "timeout", TIMED_OUT);
    if (!ok.ok) throw new Error("the control above must pass");
    const copying = TIMED_OUT.replace("\ndemo@lwm:~/work$ $", "").replace(
      /\ndemo@lwm:~\/work\$ $/,
      `\n${ok.synthesis.instruction}\ndemo@lwm:~/work$ `,
    );
    const copied = synthesizeFromTeacher(terminal, 1, "timeout", copying);
    expect(copied.ok).toBe(false);
    if (!copied.ok) expect(copied.reasons).toContain("copies-instruction");
    const same = synthesizeFromTeacher(terminal, 1, "timeout", terminal.turns[1]?.observation ?? "");
    expect(same.ok).toBe(false);
  });

  it("the answer's observation: thinking and one fence dropped, the original's trailing whitespace kept; empty is none", () => {
    expect(answerObservation("<think>keep it</think>\n```text\nline\n$\n```\n", "a\n$ ")).toBe("line\n$ ");
    expect(answerObservation("<think>only thinking</think>\n  ", "a")).toBeUndefined();
  });

  it("the records stage takes a verified answer as a candidate for a kind no rule makes; without the answer there is none", () => {
    const controls = {
      enabled: true,
      share: 1,
      counterfactual_share: 0,
      seed: 0,
      synthesis: {
        target_shares: { timeout: 0.5 },
        max_synthesized_ratio: null,
        pairs: true,
        teacher: {
          kinds: { timeout: ["terminal" as const] },
          turns: 2,
          ask_margin: null,
          base_url: "http://127.0.0.1:1/v1",
          base_url_env: "UNUSED",
          model: "m",
          api_key_env: "UNUSED",
          temperature: 0,
          max_tokens: 10,
          concurrency: 1,
          max_retries: 0,
          timeout_ms: 1000,
          cache_dir: "/nonexistent",
        },
      },
    };
    const answers = new Map([[teacherKey("t1", 1, "timeout"), TIMED_OUT]]);
    const census = applyControls(terminal, { ...controls, synthesisMode: { kind: "census" }, teacherAnswers: answers });
    expect(census.controls.synthesis?.eligible).toEqual(["timeout"]);
    // Negative control: no answers, no candidate (no rule makes a timeout).
    const without = applyControls(terminal, { ...controls, synthesisMode: { kind: "census" }, teacherAnswers: new Map() });
    expect(without.controls.synthesis?.eligible).toEqual([]);
    // A rejected answer is counted as the teacher's, by reason.
    const bad = new Map([[teacherKey("t1", 1, "timeout"), TIMED_OUT.replace(/\$ $/, "% ")]]);
    const rejected = applyControls(terminal, { ...controls, synthesisMode: { kind: "census" }, teacherAnswers: bad });
    expect(rejected.controls.synthesis?.teacherRejected).toContain("frame-changed");
  });
});

describe("the cost cap (ask_margin)", () => {
  it("asks about what the target could use, times the margin: ceil(margin × t × n × (1 + s) / (1 − T))", () => {
    // 10 trajectories, target 20%, no counterfactuals, the domain's targets 20%: 2.5 samples → 3 at margin 1, 5 at margin 2.
    expect(askLimit(1, 0.2, 10, 0, 0.2)).toBe(3);
    expect(askLimit(2, 0.2, 10, 0, 0.2)).toBe(5);
    // Counterfactual samples and the other targets of the domain raise the need.
    expect(askLimit(1, 0.2, 10, 0.25, 0.4)).toBe(5);
    expect(askLimit(1, 0.3, 0, 0.25, 0.4)).toBe(0);
  });

  it("takes the lowest order values, the plan's order, not the input order; the rest are counted as not asked", () => {
    const candidates = [
      { item: 0, order: 0.9, requests: 2 },
      { item: 1, order: 0.1, requests: 1 },
      { item: 2, order: 0.5, requests: 2 },
      { item: 3, order: 0.3, requests: 2 },
    ];
    const chosen = chooseAsks(new Map([["terminal timeout", { kind: "timeout", limit: 2, candidates }]]));
    expect([...chosen.asked].sort()).toEqual([askKey(1, "timeout"), askKey(3, "timeout")].sort());
    // Negative control: the first two in input order would be items 0 and 1.
    expect(chosen.asked.has(askKey(0, "timeout"))).toBe(false);
    expect(chosen).toMatchObject({ notAskedRequests: 4, notAskedTrajectories: 2 });
  });
});

const readLines = (out: string): TeacherLine[] =>
  readFileSync(join(out, "synthesis/teacher/task-00000.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as TeacherLine);

/** The reference runs ask about every eligible trajectory (the default ask_margin, 2, would bound them). */
const UNCAPPED = "      ask_margin: null";

describe("the demo job with the fake teacher", () => {
  let teacher: FakeScoreServer;
  const faults: TeacherFaults = {};
  /** The first test's output and requests: the uncapped run every later one is compared with. */
  let reference: { out: string; lines: TeacherLine[] } | undefined;
  beforeAll(async () => {
    teacher = await startFakeTeacher(faults);
  });
  afterAll(async () => {
    await teacher.close();
  });

  it("uses verified answers and counts them by source, rejects the rest by reason, and a rerun from the cache sends nothing and writes the same bytes", {
    timeout: 600_000,
  }, async () => {
    const config = synthesisTeacherJobConfig(tempDir("lwm-synthesis-teacher-cache-"), UNCAPPED);
    const first = join(tempDir(), "out");
    await runJob(config, first, teacher.url);
    const sent = teacher.requests.length;
    expect(sent).toBeGreaterThan(0);
    const lines = readLines(first);
    expect(lines.length).toBe(sent);
    reference = { out: first, lines };
    const reasons = new Set(lines.flatMap((l) => l.reasons));
    expect(reasons.has("other-edge-case") || reasons.has("frame-changed")).toBe(true);
    expect(reasons.has("not-detected")).toBe(true);
    const controls = JSON.parse(readFileSync(join(first, "manifest.json"), "utf8")).controls;
    expect(controls.synthesis.teacher).toEqual({
      kinds: { timeout: ["terminal", "mcp"], http_error: ["mcp"], app_crash: ["os"] },
      turns: 2,
      model: "Qwen/Qwen3-8B",
      temperature: 0.7,
      max_tokens: 4096,
    });
    // Kinds no rule makes are synthesized, all by the teacher, and its rejections counted by reason.
    expect(controls.synthesized_teacher.mcp.timeout + controls.synthesized_teacher.mcp.http_error).toBeGreaterThan(0);
    expect(controls.synthesized.mcp).toEqual(controls.synthesized_teacher.mcp);
    expect(Object.values(controls.synthesis_rejected_teacher as Record<string, number>).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // The rows: ids `<id>#synth-teacher-<kind>-<turn>`, each observation one the stage verified.
    const verified = new Set(lines.filter((l) => l.reasons.length === 0).map((l) => l.observation));
    let teacherRows = 0;
    for (const name of readdirSync(join(first, "data"))) {
      const shard = await openShard(join(first, "data", name));
      for (let r = 0; r < shard.numRows; r++) {
        const row = shardRow(shard, r) as { id: string; messages?: { content: string }[] };
        if (!row.id.includes("#synth-teacher-")) continue;
        teacherRows += 1;
        const last = row.messages?.at(-1)?.content;
        if (last !== undefined) expect([...verified].some((o) => o !== null && last.includes(o.trim()))).toBe(true);
      }
    }
    const written = Object.values(controls.synthesized_teacher as Record<string, Record<string, number>>)
      .flatMap((kinds) => Object.values(kinds))
      .reduce((a, b) => a + b, 0);
    expect(teacherRows).toBe(written);

    const second = join(tempDir(), "out");
    await runJob(config, second, teacher.url);
    expect(teacher.requests.length).toBe(sent);
    expect(digestFolder(second)).toEqual(digestFolder(first));
  });

  it("with ask_margin, asks fewer: the lowest-order trajectories of each kind, the rest counted and printed as not sent", {
    timeout: 600_000,
  }, async () => {
    if (!reference) throw new Error("runs after the uncapped run");
    const config = synthesisTeacherJobConfig(tempDir("lwm-synthesis-teacher-cache-"), "      ask_margin: 1");
    const out = join(tempDir(), "out");
    const before = teacher.requests.length;
    const { stdout } = await runJob(config, out, teacher.url);
    const lines = readLines(out);
    expect(teacher.requests.length - before).toBe(lines.length);
    const marker = JSON.parse(readFileSync(join(out, "synthesis/teacher/task-00000.done.json"), "utf8")).data as TeacherMarkerData;
    expect(marker.not_asked?.requests).toBe(reference.lines.length - lines.length);
    expect(marker.not_asked?.requests).toBeGreaterThan(0);
    expect(stdout).toMatch(
      new RegExp(
        `teacher: ${lines.length} request\\(s\\) sent, \\d+ answer\\(s\\) verified; ${marker.not_asked?.requests} request\\(s\\) about \\d+ trajectory\\(ies\\) not sent \\(ask_margin\\)`,
      ),
    );
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest.controls.synthesis.teacher.ask_margin).toBe(1);
    // What is asked is a subset of the uncapped questions, and per domain and kind the lowest orders of them.
    for (const line of lines)
      expect(reference.lines.some((r) => r.id === line.id && r.kind === line.kind && r.turn === line.turn)).toBe(true);
    const domains = new Map<string, string>();
    for (const name of readdirSync(join(reference.out, "data"))) {
      const shard = await openShard(join(reference.out, "data", name));
      for (let r = 0; r < shard.numRows; r++) {
        const row = shardRow(shard, r) as { id: string; domain: string };
        domains.set(row.id, row.domain);
      }
    }
    const groups = (from: TeacherLine[]) => {
      const byGroup = new Map<string, Set<string>>();
      for (const l of from) {
        const key = `${domains.get(l.id)} ${l.kind}`;
        byGroup.set(key, (byGroup.get(key) ?? new Set()).add(l.id));
      }
      return byGroup;
    };
    const capped = groups(lines);
    let left = 0;
    for (const [key, all] of groups(reference.lines)) {
      expect(key).not.toMatch(/^undefined/);
      const asked = capped.get(key) ?? new Set<string>();
      const unasked = [...all].filter((id) => !asked.has(id));
      left += unasked.length;
      for (const id of asked) for (const other of unasked) expect(synthesisOrder(0, id)).toBeLessThanOrEqual(synthesisOrder(0, other));
    }
    expect(left).toBeGreaterThan(0);
  });

  it("a request failing for a transient reason after its retries stops the stage, and the rerun once it answers writes the uncapped run's bytes", {
    timeout: 600_000,
  }, async () => {
    if (!reference) throw new Error("runs after the uncapped run");
    const config = synthesisTeacherJobConfig(tempDir("lwm-synthesis-teacher-cache-"), UNCAPPED);
    const out = join(tempDir(), "out");
    faults.reply = (prompt) => (prompt.includes("EDGE CASE:") && somePrompts(prompt, 4) ? { status: 503, body: "overloaded" } : undefined);
    const error = await runFailure(config, out, teacher.url);
    faults.reply = undefined;
    expect(error?.code).not.toBe(0);
    expect(error?.stderr).toMatch(
      /controls\.synthesis\.teacher: \d+ of \d+ requests to the teacher at .* still failed after 1 retries \(HTTP 503/,
    );
    expect(existsSync(join(out, "synthesis/teacher/task-00000.done.json"))).toBe(false);
    expect(existsSync(join(out, "manifest.json"))).toBe(false);
    const before = teacher.requests.length;
    await runJob(config, out, teacher.url);
    // Only the failed questions are sent again (the answers are cached).
    expect(teacher.requests.length - before).toBeLessThan(reference.lines.length);
    expect(digestFolder(out)).toEqual(digestFolder(reference.out));
  });

  it("a request refused for good (HTTP 400) is recorded as no answer, and the run goes on", { timeout: 600_000 }, async () => {
    const config = synthesisTeacherJobConfig(tempDir("lwm-synthesis-teacher-cache-"));
    const out = join(tempDir(), "out");
    faults.reply = (prompt) =>
      prompt.includes("EDGE CASE:") && somePrompts(prompt, 4)
        ? { status: 400, body: '{"error":{"message":"prompt too long"}}' }
        : undefined;
    try {
      await runJob(config, out, teacher.url);
    } finally {
      faults.reply = undefined;
    }
    const refused = readLines(out).filter((l) => l.problems?.[0] === "HTTP 400");
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused) expect(line).toMatchObject({ observation: null, reasons: ["no-answer"] });
  });

  it("fails with the cause named when no teacher listens", { timeout: 600_000 }, async () => {
    const config = synthesisTeacherJobConfig(tempDir("lwm-synthesis-teacher-cache-"));
    const closed = await startFakeTeacher();
    const url = closed.url;
    await closed.close();
    const error = await runFailure(config, join(tempDir(), "out"), url);
    expect(error?.code).not.toBe(0);
    expect(error?.stderr).toContain(`controls.synthesis.teacher: the teacher at ${url} cannot be used`);
    expect(error?.stderr).toMatch(/ECONNREFUSED/);
  });
});
