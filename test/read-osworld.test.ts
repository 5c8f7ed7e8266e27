/**
 * Issue 34: OSWorld result folders (src/read/osworld.ts). The fixtures under
 * test/fixtures/handmade/osworld/ (README.md there) are written from OSWorld's lib_run_single.py
 * (`run_single_example`: the traj.jsonl line, result.txt) and run.py (the results/ layout).
 * No public OSWorld result folder is among the shared samples.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { osworldReader } from "../src/read/osworld.ts";
import type { ReaderOptions, ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS: ReaderOptions = { maxLineBytes: 64 << 20 };
const DIR = join(ROOT, "test/fixtures/handmade/osworld");
const OS_ID = "0c2a6a4d-7f1e-4b1e-9d53-1a2b3c4d5e6f";
const OS_EXAMPLE = join(DIR, "results/pyautogui/screenshot/gpt-4o/os", OS_ID);
const CHROME_ID = "7b1f0e22-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
const CHROME_EXAMPLE = join(DIR, "results/computer_13/screenshot_a11y_tree/claude-3-7-sonnet/chrome", CHROME_ID);
const GIMP_ID = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";
const GIMP_EXAMPLE = join(DIR, "results/pyautogui/screenshot/gpt-4o/gimp", GIMP_ID);

async function read(path: string): Promise<ReadItem[]> {
  return collect(osworldReader.read(path, OPTIONS));
}

async function readOne(path: string): Promise<Trajectory> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  const item = items[0];
  if (item?.kind !== "trajectory") throw new Error(`not a trajectory: ${JSON.stringify(item)}`);
  return item.trajectory;
}

describe("OSWorld: a pyautogui / screenshot example with its config and result.txt", () => {
  it("one turn per traj.jsonl line: the pyautogui code, the model's reply as thinking, the screenshot as a placeholder", async () => {
    const t = await readOne(join(OS_EXAMPLE, "traj.jsonl"));
    expect(t.id).toMatch(new RegExp(`^${OS_ID}-[0-9a-f]{12}$`));
    expect(t.domain).toBe("os");
    expect(t.task).toBe("Create a folder named notes inside ~/projects.");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["import pyautogui\npyautogui.hotkey('ctrl', 'alt', 't')", "[screenshot step_1_20240412@101502.png]"],
      ["import pyautogui\npyautogui.typewrite('mkdir -p ~/projects/notes\\n', interval=0.05)", "[screenshot step_2_20240412@101511.png]"],
      ["DONE", "[screenshot step_3_20240412@101520.png]"],
    ]);
    expect(t.turns[0]?.thinking).toMatch(/^The terminal is not open yet\. I will open it/);
    expect(t.turns[2]?.meta).toEqual({
      step_num: 3,
      action_timestamp: "20240412@101520",
      reward: 0,
      done: true,
      screenshot_file: "step_3_20240412@101520.png",
      info: { done: true },
    });
  });

  it("outcome from result.txt, model and task id from the path, and the screenshot-only read filter", async () => {
    const t = await readOne(join(OS_EXAMPLE, "traj.jsonl"));
    expect(t.meta).toEqual({
      outcome: { reward: 1, success: true },
      model: "gpt-4o",
      task_id: OS_ID,
      osworld: {
        action_space: "pyautogui",
        observation_type: "screenshot",
        app_domain: "os",
        task_source: `${OS_ID}.json`,
        done: true,
        observation: "screenshot",
      },
      read_filter: {
        stage: "osworld-screenshot-only",
        reason:
          "OSWorld traj.jsonl records each step's result only as a screenshot file; no step has a text observation (accessibility tree) to train on",
      },
    });
  });

  it("the example folder is the trajectory's companions (screenshots, recording, result.txt are not inputs)", async () => {
    const companions = await osworldReader.companions?.(join(OS_EXAMPLE, "traj.jsonl"));
    expect(companions?.dirs).toEqual([OS_EXAMPLE]);
    expect(companions?.label).toBe(`OSWorld example ${OS_ID}`);
    const sizes = ["traj.jsonl", "result.txt", `${OS_ID}.json`].map((name) => readFileSync(join(OS_EXAMPLE, name)).length);
    expect(companions?.bytes).toBe(sizes.reduce((a, b) => a + b, 0));
  });
});

describe("OSWorld: variants", () => {
  it("a line that logs the accessibility tree makes it the observation; dict actions as JSON; a partial score", async () => {
    const t = await readOne(join(CHROME_EXAMPLE, "traj.jsonl"));
    const tree = readFileSync(join(ROOT, "test/fixtures/handmade/os/chrome-1.tsv"), "utf8");
    expect(t.task).toBe("Open the 'More information' link on example.org.");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ['{"action_type":"CLICK","x":300,"y":330}', tree],
      ['{"action_type":"DONE"}', tree],
    ]);
    expect(t.turns[0]?.thinking).toBeUndefined();
    expect(t.turns[0]?.meta?.response).toEqual({ thought: "The link is in the page body.", action: "CLICK" });
    expect(t.turns[0]?.meta?.tree_format).toBe("osworld-table");
    expect(t.turns[1]?.thinking).toBe("Done: the IANA page is open.");
    expect(t.meta?.outcome).toEqual({ reward: 0.5 });
    expect(t.meta?.model).toBe("claude-3-7-sonnet");
    expect(t.meta?.task_id).toBe(CHROME_ID);
    expect(t.meta?.osworld).toMatchObject({
      observation_type: "screenshot_a11y_tree",
      task_source: "traj.jsonl",
      observation: "a11y_tree",
    });
    expect(t.meta?.read_filter).toBeUndefined();
  });

  it("no result.txt and no config: no outcome, task unknown, said so", async () => {
    const t = await readOne(join(GIMP_EXAMPLE, "traj.jsonl"));
    expect(t.task).toBeUndefined();
    expect(t.turns).toEqual([
      {
        action: "WAIT",
        observation: "[screenshot step_1_20240412@111500.png]",
        meta: { step_num: 1, action_timestamp: "20240412@111500", reward: 0, done: false, screenshot_file: "step_1_20240412@111500.png" },
      },
    ]);
    expect(t.meta?.outcome).toBeUndefined();
    expect(t.meta?.osworld).toMatchObject({ task_source: "unknown", result: "no result.txt (not evaluated)", app_domain: "gimp" });
  });

  it("a result.txt that is not a number gives no outcome; outside the results layout there is no model or task id", async () => {
    const t = await readOne(join(DIR, "hostile/bad-result/traj.jsonl"));
    expect(t.meta?.outcome).toBeUndefined();
    expect(t.meta?.model).toBeUndefined();
    expect(t.meta?.task_id).toBeUndefined();
    expect(t.meta?.osworld).toHaveProperty("result", expect.stringMatching(/^result\.txt is not a number: "Traceback/));
  });
});

describe("OSWorld: a traj.jsonl whose last line was cut while run.py wrote it (cut-last-line.ts)", () => {
  const fixture = readFileSync(join(DIR, "hostile/truncated/traj.jsonl"), "utf8");
  const [first, cut] = fixture.split("\n") as [string, string];
  const write = (folder: string, text: string) => {
    const dir = join(tempDir("lwm-osworld-"), folder);
    mkdirSync(dir);
    writeFileSync(join(dir, "traj.jsonl"), text);
    return join(dir, "traj.jsonl");
  };

  it("the steps before it are read, and meta.truncated_line names the cut line", async () => {
    const t = await readOne(join(DIR, "hostile/truncated/traj.jsonl"));
    const before = await readOne(write("truncated", `${first}\n`));
    expect(t.turns).toHaveLength(1);
    expect(t.turns).toEqual(before.turns);
    expect(t.id).toBe(before.id);
    expect(t.meta).toEqual({ ...before.meta, truncated_line: { line: 2, bytes: Buffer.byteLength(cut) } });
    expect(before.meta?.truncated_line).toBeUndefined();
  });

  it("negative controls: the cut line with a step after it, or as the file's only line, is quarantined", async () => {
    const hole = await read(write("hole", `${first}\n${cut}\n${first.replace('"step_num": 1', '"step_num": 3')}\n`));
    expect(hole).toHaveLength(1);
    if (hole[0]?.kind !== "quarantine") throw new Error(JSON.stringify(hole[0]));
    expect(hole[0].entry).toMatchObject({ source: { line: 2 }, stage: "read" });
    expect(hole[0].entry.reason).toMatch(/^line 2: invalid JSON/);
    expect(hole[0].entry.id).toMatch(/^hole-[0-9a-f]{12}$/);
    const alone = await read(write("alone", cut));
    expect(alone.map((item) => item.kind)).toEqual(["quarantine"]);
    expect(alone[0]?.kind === "quarantine" && alone[0].entry.reason).toMatch(/^line 1: invalid JSON/);
  });
});

describe("OSWorld: hostile files are quarantined whole, naming line and field", () => {
  it.each([
    ["missing-action", 2, "action", /^line 2: action: expected a string or an object, got nothing$/],
    ["bad-step-num", 2, "step_num", /^line 2: step_num: expected an integer, got a string$/],
  ])("%s", async (name, line, field, reason) => {
    const items = await read(join(DIR, "hostile", name, "traj.jsonl"));
    expect(items).toHaveLength(1);
    const item = items[0];
    if (item?.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(item)}`);
    expect(item.entry.source.line).toBe(line);
    expect(item.entry.field).toBe(field);
    expect(item.entry.reason).toMatch(reason);
    expect(item.entry.id).toMatch(new RegExp(`^${name}-[0-9a-f]{12}$`));
  });
});

describe('OSWorld: run.py\'s {"Error"} line (the example raised)', () => {
  const step = (n: number) =>
    JSON.stringify({
      step_num: n,
      action_timestamp: `20240412@10150${n}`,
      action: "pyautogui.click(10, 20)",
      response: "",
      reward: 0,
      done: false,
      info: {},
      screenshot_file: `step_${n}.png`,
    });
  const error = JSON.stringify({ Error: "Time limit exceeded in os/ex" });
  const write = (lines: string[]) => {
    const dir = join(tempDir("lwm-osworld-"), "ex");
    mkdirSync(dir);
    writeFileSync(join(dir, "traj.jsonl"), `${lines.join("\n")}\n`);
    return join(dir, "traj.jsonl");
  };

  it("the steps before it are read and the error is kept in meta", async () => {
    const t = await readOne(write([step(1), step(2), error]));
    expect(t.turns.map((turn) => turn.meta?.step_num)).toEqual([1, 2]);
    expect(t.meta?.osworld).toMatchObject({ error: "Time limit exceeded in os/ex" });
    expect(t.meta?.outcome).toBeUndefined();
  });

  it("only an Error line is quarantined saying the run stopped; a step after it fails the file", async () => {
    const [only] = await read(write([error]));
    if (only?.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(only)}`);
    expect(only.entry.reason).toMatch(/^the run stopped before its first step: Time limit exceeded/);
    const [after] = await read(write([step(1), error, step(2)]));
    if (after?.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(after)}`);
    expect(after.entry.field).toBe("Error");
    expect(after.entry.source.line).toBe(3);
  });
});

describe("OSWorld: a logged tree that does not parse", () => {
  const GOOD = '<desktop-frame name="main"><application name="gedit"/></desktop-frame>';
  // AT-SPI XML cut mid-element: it starts like a tree, and no parser reads it.
  const BROKEN = '<desktop-frame name="main"><application name="ged';
  const write = (trees: string[]) => {
    const dir = join(tempDir("lwm-osworld-"), "ex");
    mkdirSync(dir);
    const lines = trees.map((tree, i) =>
      JSON.stringify({
        step_num: i + 1,
        action: "pyautogui.click(10, 20)",
        accessibility_tree: tree,
        screenshot_file: `step_${i + 1}.png`,
      }),
    );
    writeFileSync(join(dir, "traj.jsonl"), `${lines.join("\n")}\n`);
    return join(dir, "traj.jsonl");
  };
  it("is still the observation, as the agent saw it (the normalizer counts it tree.unparsed), never the screenshot in its place", async () => {
    const t = await readOne(write([GOOD, BROKEN]));
    expect(t.turns.map((turn) => turn.observation)).toEqual([GOOD, BROKEN]);
    expect(t.turns.map((turn) => turn.meta?.tree_format)).toEqual(["atspi-xml", "atspi-xml"]);
    expect(t.meta?.read_filter).toBeUndefined();
  });
});

describe("OSWorld: detection", () => {
  const own = globSync("**/traj.jsonl", { cwd: DIR, absolute: true });

  it("sniffs every traj.jsonl, and no existing reader claims one", async () => {
    expect(own.length).toBe(7);
    for (const file of own) {
      const head = await readHead(file);
      expect(osworldReader.sniff(head, file), file).toBe(true);
      expect(READERS.find((reader) => reader.sniff(head, file))?.name, file).toBe("osworld");
    }
  });

  it("sniffs a first line longer than the head by its step_num and OSWorld's timestamp", () => {
    const line = `{"step_num": 1, "action_timestamp": "20240412@101502", "action": "x", "response": "${"y".repeat(70000)}"}`;
    expect(osworldReader.sniff(line.slice(0, 65536), "traj.jsonl")).toBe(true);
    expect(osworldReader.sniff(`{"step_num": 1, "action": "x", "response": "${"y".repeat(70000)}`.slice(0, 65536), "x.jsonl")).toBe(false);
  });

  it("does not claim the other readers' fixtures or the demo data", async () => {
    const files = globSync(["data/demo/**/*", "test/fixtures/**/*"], {
      cwd: ROOT,
      absolute: true,
      onlyFiles: true,
      ignore: ["**/*.md", "test/fixtures/handmade/osworld/**"],
    });
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) expect(osworldReader.sniff(await readHead(file), file), file).toBe(false);
  });
});
