import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { normalizeTrajectory } from "../src/normalize/normalize-trajectory.ts";
import type { NormalizeSettings } from "../src/normalize/normalizer.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { taskItems } from "../src/pipeline/task-items.ts";
import { DEMO_CONFIG, tempDir } from "./helpers.ts";

/**
 * Curation's signatures normalize with `textOnly`: they read the id and the turns' text only, and
 * normalization skips what cannot change those (other fields, counters, a tree's other form).
 * These tests hold the id and turns' text equal to a whole normalization's on every demo domain,
 * under the settings that decide what may be skipped.
 */
async function demoTrajectories(): Promise<Trajectory[]> {
  const plan = await planJob(loadConfig(DEMO_CONFIG, { output: tempDir() }));
  const found: Trajectory[] = [];
  for (const task of plan.tasks)
    for await (const { item } of taskItems(plan, task)) if (item.kind === "trajectory") found.push(item.trajectory);
  return found;
}

const read = (t: Trajectory) => ({ id: t.id, turns: t.turns.map((turn) => [turn.action, turn.observation]) });

describe("text-only normalization (curation's signatures)", () => {
  it("gives every demo domain the id and turns' text of a whole normalization, with or without PII, either tree target, either invalid_utf8", async () => {
    const trajectories = await demoTrajectories();
    const { config } = loadConfig(DEMO_CONFIG);
    expect(new Set(trajectories.map((t) => t.domain)).size).toBe(7);
    // A PII value first seen in the task: its placeholder number is the same in the turns either way.
    const probe = trajectories.find((t) => t.domain === "mcp") as Trajectory;
    const email = "ada.lovelace@example.org";
    const planted: Trajectory = {
      ...probe,
      task: `Write to grace.hopper@example.com and ${email}`,
      turns: probe.turns.map((turn) => ({ ...turn, observation: `${turn.observation}\nfrom: ${email}` })),
    };
    const pii = { ...config.normalize.pii, enabled: true } as NormalizeSettings["pii"];
    let skipped = 0;
    for (const settings of [
      config.normalize,
      { ...config.normalize, tree_target: "diff" as const },
      { ...config.normalize, pii },
      { ...config.normalize, invalid_utf8: "quarantine" as const },
    ]) {
      for (const trajectory of [...trajectories, planted]) {
        const whole = await normalizeTrajectory(structuredClone(trajectory), settings, new Map());
        const textOnly = await normalizeTrajectory(structuredClone(trajectory), settings, new Map(), { textOnly: true });
        expect(read(textOnly), `${trajectory.domain} ${trajectory.id}`).toEqual(read(whole));
        if (textOnly.task !== whole.task || textOnly.initialObservation !== whole.initialObservation) skipped++;
      }
    }
    // What may be skipped was: left as read (the mcp probe's task, the tree domains' initial trees).
    expect(skipped).toBeGreaterThan(0);
    const withPii = await normalizeTrajectory(structuredClone(planted), { ...config.normalize, pii }, new Map(), { textOnly: true });
    expect(withPii.turns[0]?.observation).toContain("<EMAIL_2>");
  });

  it("leaves the other fields as read only where they cannot matter", async () => {
    const { config } = loadConfig(DEMO_CONFIG);
    const trajectory: Trajectory = {
      id: "t1",
      domain: "terminal",
      source: { uri: "handwritten.jsonl", format: "canonical-jsonl" },
      task: "use key AKIAIOSFODNN7EXAMPLE",
      turns: [{ action: "ls", observation: "a b" }],
    };
    const textOnly = await normalizeTrajectory(structuredClone(trajectory), config.normalize, new Map(), { textOnly: true });
    expect(textOnly.task).toBe(trajectory.task);
    const whole = await normalizeTrajectory(structuredClone(trajectory), config.normalize, new Map());
    expect(whole.task).not.toBe(trajectory.task);
    // A lone surrogate in the task quarantines the record under invalid_utf8: quarantine, text-only or not.
    const broken = { ...trajectory, task: "bad \ud800 task" };
    const quarantine = { ...config.normalize, invalid_utf8: "quarantine" as const };
    await expect(normalizeTrajectory(broken, quarantine, new Map(), { textOnly: true })).rejects.toThrow(/task/);
    await expect(normalizeTrajectory(broken, quarantine, new Map())).rejects.toThrow(/task/);
  });
});
