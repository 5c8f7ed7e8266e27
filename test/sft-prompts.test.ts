import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import type { TurnDecision } from "../src/mask/loss-policy.ts";
import { loadSystemPrompts } from "../src/render/system-prompts.ts";
import { selectTurns } from "../src/sft/prompts/select-turns.ts";
import { buildPrompt, teacherMessages } from "../src/sft/prompts/sft-prompt.ts";
import { ROOT } from "./helpers.ts";

const trajectory: Trajectory = {
  id: "t1",
  domain: "terminal",
  source: { uri: "x.jsonl", line: 3, format: "canonical-jsonl" },
  task: "list files",
  turns: [
    { action: "ls", observation: "a b" },
    { action: "cat a", observation: "hello" },
    { action: "wc -l b", observation: "3 b" },
  ],
};
const prompts = loadSystemPrompts(`${ROOT}/configs/system-prompts`);

describe("turn selection", () => {
  it("all, last and kept pick what they say", () => {
    const settings = { perTrajectory: 1, seed: 0 };
    expect(selectTurns("t1", 3, { mode: "all", ...settings })).toEqual([0, 1, 2]);
    expect(selectTurns("t1", 3, { mode: "last", ...settings })).toEqual([2]);
    expect(selectTurns("t1", 0, { mode: "last", ...settings })).toEqual([]);
    const decisions = [0, 1, 2].map((turnIndex) => ({ turnIndex, kept: turnIndex !== 1 }) as TurnDecision);
    expect(selectTurns("t1", 3, { mode: "kept", ...settings }, decisions)).toEqual([0, 2]);
    expect(() => selectTurns("t1", 3, { mode: "kept", ...settings })).toThrow(/turn-stats/);
  });

  it("sample takes k turns per trajectory, deterministically per (seed, id), in turn order", () => {
    const pick = (id: string, seed: number) => selectTurns(id, 10, { mode: "sample", perTrajectory: 3, seed });
    expect(pick("t1", 0)).toEqual(pick("t1", 0));
    expect(pick("t1", 0)).toHaveLength(3);
    expect([...pick("t1", 0)].sort((a, b) => a - b)).toEqual(pick("t1", 0));
    // Over many trajectories every turn gets picked about equally often (3 of 10 → 30%).
    const hits = new Array(10).fill(0);
    for (let i = 0; i < 2000; i++) for (const turn of pick(`traj-${i}`, 7)) hits[turn] += 1;
    for (const count of hits) expect(Math.abs(count / 2000 - 0.3)).toBeLessThan(0.04);
    expect(selectTurns("t1", 2, { mode: "sample", perTrajectory: 5, seed: 0 })).toEqual([0, 1]);
  });
});

describe("prompts", () => {
  it("carry system + task, the history as user/assistant pairs, and the action last", () => {
    const prompt = buildPrompt(trajectory, 2, "x.jsonl:3", prompts, { maxHistoryTurns: 0 });
    expect(prompt.prompt_id).toBe("t1#2");
    expect(prompt.ground_truth).toBe("3 b");
    expect(prompt.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(prompt.messages[0]?.content).toContain("## Agent task\n\nlist files");
    expect(prompt.messages.at(-1)).toEqual({ role: "user", content: "wc -l b" });
    const short = buildPrompt(trajectory, 2, "x.jsonl:3", prompts, { maxHistoryTurns: 1 });
    expect(short.messages.slice(1).map((m) => m.content)).toEqual(["cat a", "hello", "wc -l b"]);
  });

  it("the teacher gets the answer format, and the real observation only with hints", () => {
    const prompt = buildPrompt(trajectory, 1, "x.jsonl:3", prompts, { maxHistoryTurns: 0 });
    const plain = teacherMessages(prompt, { hints: false, instructions: "Answer in <think> tags." });
    expect(plain[0]?.content.endsWith("\n\nAnswer in <think> tags.")).toBe(true);
    expect(plain.slice(1)).toEqual(prompt.messages.slice(1));
    expect(JSON.stringify(plain)).not.toContain("hello");
    const hinted = teacherMessages(prompt, { hints: true, instructions: "" });
    expect(hinted[0]).toEqual(prompt.messages[0]);
    expect(hinted.at(-1)?.content).toMatch(/^cat a\n\n---\nReference[\s\S]*<reference_observation>\nhello\n<\/reference_observation>$/);
  });
});
