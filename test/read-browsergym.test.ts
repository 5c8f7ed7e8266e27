import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { browserGymReader } from "../src/read/browsergym.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
const ADD_ITEM = join(ROOT, "data/demo/web/stockroom.add-item__experiment_analysis.md");
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));

async function readText(text: string, name = "experiment_analysis.md") {
  const path = join(tempDir("lwm-browsergym-"), name);
  writeFileSync(path, text);
  return trajectories(await collect(browserGymReader.read(path, OPTIONS)));
}

describe("browsergym: header variants and the run's summary_info.json", () => {
  it("reads `##  InstanceStep000`, `##InstanceStep000` and `###`-level steps to the same turns", async () => {
    const text = readFileSync(ADD_ITEM, "utf8");
    const [plain] = await readText(text);
    expect(plain?.turns).toHaveLength(8);
    const variants = [
      text.replace(/^## InstanceStep/gm, "##  InstanceStep"),
      text.replace(/^## InstanceStep/gm, "##InstanceStep"),
      // One level deeper throughout (## → ###, ### → ####, …).
      text.replace(/^(#{2,5}) /gm, "$1# "),
    ];
    for (const variant of variants) {
      expect(browserGymReader.sniff(variant.slice(0, 64 << 10), "x.md")).toBe(true);
      const [t] = await readText(variant);
      expect(t?.turns.map((turn) => turn.action)).toEqual(plain?.turns.map((turn) => turn.action));
      expect(t?.turns.map((turn) => turn.observation)).toEqual(plain?.turns.map((turn) => turn.observation));
    }
  });

  it("summary_info.json gives the outcome, experiment.log the agent and task; both are companions", async () => {
    const dir = tempDir("lwm-browsergym-run-");
    const md = join(dir, "experiment_analysis.md");
    writeFileSync(md, readFileSync(ADD_ITEM));
    writeFileSync(
      join(dir, "summary_info.json"),
      JSON.stringify({ n_steps: 8, cum_reward: 0, err_msg: "TimeoutError: page.click\nTraceback…", terminated: false, truncated: true }),
    );
    writeFileSync(join(dir, "experiment.log"), "x - INFO - Running experiment GenericAgent-gpt-4o_on_stockroom.add-item_17 in:\n");
    const [t] = trajectories(await collect(browserGymReader.read(md, OPTIONS)));
    expect(t?.meta).toMatchObject({
      outcome: { reward: 0, success: false, failure_mode: "TimeoutError: page.click" },
      agent: "GenericAgent-gpt-4o",
      task_id: "stockroom.add-item",
      browsergym: { n_steps: 8, terminated: false, truncated: true, task_seed: "17", side_files: ["summary_info.json", "experiment.log"] },
    });
    // The demo's model_name says no model: none is set.
    expect(t?.meta).not.toHaveProperty("model");
    expect(await browserGymReader.companions?.(md)).toMatchObject({ dirs: [dir], label: expect.stringContaining("BrowserGym experiment") });
    // Without side files: no outcome, nothing invented.
    const [bare] = await readText(readFileSync(ADD_ITEM, "utf8"));
    expect(bare?.meta).not.toHaveProperty("outcome");
    expect(bare?.meta).not.toHaveProperty("agent");
  });
});
