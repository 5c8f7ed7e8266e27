/**
 * The teacher source of synthesized edge cases (issue 37 item 1, docs/controls.md "Teacher
 * syntheses"): a teacher's observation goes through the rules' verifier plus its own check (no other
 * edge case); the stage asks, caches and stores; the counting and records stages use verified answers
 * as candidates, counted by source; a rerun from the cache sends nothing; no teacher fails loudly.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyControls, counterfactualControls } from "../src/controls/apply-controls.ts";
import type { TeacherLine } from "../src/controls/synthesis/teacher-files.ts";
import { answerObservation } from "../src/controls/synthesis/teacher-prompt.ts";
import { synthesizeFromTeacher, teacherKey } from "../src/controls/synthesis/teacher-source.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import type { FakeScoreServer } from "./support/fake-score-server.ts";
import { startFakeTeacher } from "./support/fake-synthesis-teacher.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

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

function digestFolder(dir: string): Record<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
  return Object.fromEntries(
    files.map((file) => [
      file,
      createHash("sha256")
        .update(readFileSync(join(dir, file)))
        .digest("hex"),
    ]),
  );
}

/** The demo-synthesis-teacher job with its own cache folder, so nothing outside the test answers it. */
function jobConfig(cacheDir: string): string {
  const yaml = readFileSync(join(ROOT, "configs/demo-synthesis-teacher.yaml"), "utf8")
    .replaceAll("../data/demo/", `${join(ROOT, "data/demo")}/`)
    .replace("cache_dir: .lwm-cache/synthesis-teacher", `cache_dir: ${cacheDir}\n      max_retries: 1`);
  return writeConfig(yaml);
}

async function run(config: string, out: string, url: string) {
  return exec(process.execPath, [CLI, "run", config, "--output", out, "--progress", "none", "--workers", "2"], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
    env: { ...process.env, LWM_TEACHER_URL: url },
  });
}

describe("the demo job with the fake teacher", () => {
  let teacher: FakeScoreServer;
  beforeAll(async () => {
    teacher = await startFakeTeacher();
  });
  afterAll(async () => {
    await teacher.close();
  });

  it("uses verified answers and counts them by source, rejects the rest by reason, and a rerun from the cache sends nothing and writes the same bytes", {
    timeout: 600_000,
  }, async () => {
    const config = jobConfig(tempDir("lwm-synthesis-teacher-cache-"));
    const first = join(tempDir(), "out");
    await run(config, first, teacher.url);
    const sent = teacher.requests.length;
    expect(sent).toBeGreaterThan(0);
    const lines = readFileSync(join(first, "synthesis/teacher/task-00000.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as TeacherLine);
    expect(lines.length).toBe(sent);
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
    await run(config, second, teacher.url);
    expect(teacher.requests.length).toBe(sent);
    expect(digestFolder(second)).toEqual(digestFolder(first));
  });

  it("fails with the cause named when no teacher listens", { timeout: 600_000 }, async () => {
    const config = jobConfig(tempDir("lwm-synthesis-teacher-cache-"));
    const closed = await startFakeTeacher();
    const url = closed.url;
    await closed.close();
    const error = await run(config, join(tempDir(), "out"), url).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(error?.code).not.toBe(0);
    expect(error?.stderr).toContain(`controls.synthesis.teacher: the teacher at ${url} cannot be used`);
    expect(error?.stderr).toMatch(/ECONNREFUSED/);
  });
});
