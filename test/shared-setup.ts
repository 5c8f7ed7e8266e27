import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { type JobPlan, planJob } from "../src/pipeline/plan.ts";
import { collect, DEMO_CONFIG } from "./helpers.ts";

let demo: Promise<{ plan: JobPlan; trajectories: Trajectory[] }> | undefined;

/** The demo job's plan (tokenizer, template, prompts) and every demo trajectory, loaded once. */
export function demoJob(): Promise<{ plan: JobPlan; trajectories: Trajectory[] }> {
  demo ??= (async () => {
    const plan = await planJob(loadConfig(DEMO_CONFIG));
    const trajectories: Trajectory[] = [];
    for (const file of plan.files) {
      for (const item of await collect(file.reader.read(file.path, { maxLineBytes: 1 << 26 }))) {
        if (item.kind === "trajectory") trajectories.push(item.trajectory);
      }
    }
    return { plan, trajectories };
  })();
  return demo;
}
