/**
 * The mind2web reader (src/read/mind2web.ts) on the hand-written files in
 * test/fixtures/handmade/mind2web/ (README.md there: raw Mind2Web tasks as a JSON array,
 * Multimodal-Mind2Web rows as JSONL, AgentInstruct conversations, hostile lines), on detection
 * against every other reader's fixtures, and on the shared AgentInstruct Mind2Web sample in place.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { mind2WebReader } from "../src/read/mind2web.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { webArenaReader } from "../src/read/webarena.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/handmade/mind2web");
const at = (name: string) => join(DIR, name);
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const read = (path: string) => collect(mind2WebReader.read(path, OPTIONS));
const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args }, null, 2);

async function all(path: string): Promise<Trajectory[]> {
  const items = await read(path);
  expect(quarantined(items)).toEqual([]);
  return trajectories(items);
}

const H0 = '<html> <body> <nav> <a backend_node_id="101"> <text>Flights</text> </a> </nav> </body> </html>';
const H1 = '<html> <body> <input backend_node_id="202" type="text" placeholder="From"/> </body> </html>';
const H2 = '<html> <body> <select backend_node_id="303"> <option>Economy</option> <option>Business</option> </select> </body> </html>';
const CLICK_FLIGHTS = act("click", { element: "[link]  Flights", backend_node_id: "101" });
const TYPE_DENVER = act("type", { element: "[textbox]  From", backend_node_id: "202", value: "Denver" });
const SELECT_BUSINESS = act("select", { element: "[combobox]  Cabin", backend_node_id: "303", value: "Business" });

describe("mind2web: raw dataset tasks", () => {
  it("action i is taken on page i and observed as action i+1's cleaned_html; the original target's node id", async () => {
    const [t, single, ...rest] = await all(at("train-tasks.json"));
    expect(rest).toEqual([]);
    if (!t || !single) throw new Error("missing trajectories");
    expect(t.id).toBe("a1b2c3d4-0000-4000-8000-000000000001");
    expect(t.domain).toBe("web");
    expect(t.source).toMatchObject({ row: 0, format: "mind2web" });
    expect(t.task).toBe("Search a one-way business flight from Denver to Boston");
    expect(t.initialObservation).toBe(H0);
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [CLICK_FLIGHTS, H1],
      [TYPE_DENVER, H2],
    ]);
    expect(t.turns[1]?.meta).toEqual({ action_uid: "u-2", original_op: "ENTER", observation_format: "cleaned_html" });
    expect(t.meta).toEqual({
      task_id: "a1b2c3d4-0000-4000-8000-000000000001",
      website: "united",
      website_domain: "Travel",
      subdomain: "Airlines",
      initial_observation_format: "cleaned_html",
      unobserved_final_action: SELECT_BUSINESS,
    });
    // One action, raw_html only: no turn, filtered with its reason.
    expect(single.initialObservation).toBe("<html><body><a>Top 250 Movies</a></body></html>");
    expect(single.turns).toEqual([]);
    expect(single.meta?.initial_observation_format).toBe("raw_html");
    expect(single.meta?.unobserved_final_action).toBe(act("click", { element: "[link]  Top 250 Movies" }));
    expect(single.meta?.read_filter).toMatchObject({ stage: "no-observation-after-action" });
  });
});

describe("mind2web: Multimodal-Mind2Web rows", () => {
  it("rows of one annotation in index order are one trajectory; JSON-string operation and candidates; a gap splits", async () => {
    const [t, gapA, gapB, ...rest] = await all(at("multimodal-rows.jsonl"));
    expect(rest).toEqual([]);
    if (!t || !gapA || !gapB) throw new Error("missing trajectories");
    expect(t.id).toBe("mm-task-1");
    expect(t.source).toMatchObject({ line: 1, offset: 0 });
    expect(t.initialObservation).toBe(H0);
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [CLICK_FLIGHTS, H1],
      [TYPE_DENVER, H2],
    ]);
    expect(t.meta).toMatchObject({ task_id: "mm-task-1", rows: 3, unobserved_final_action: SELECT_BUSINESS });
    expect([gapA.id, gapB.id]).toEqual(["mm-task-2", "mm-task-2-run2"]);
    expect([gapA.turns.length, gapB.turns.length]).toEqual([0, 0]);
    expect(gapB.meta?.first_action_index).toBe(2);
    expect(gapB.meta?.unobserved_final_action).toBe(act("click", { element: "[a]  Today" }));
  });
});

describe("mind2web: AgentInstruct conversations", () => {
  it("a one-question row is filtered with its answer kept; a two-question conversation chains the second page as the observation", async () => {
    const [one, two, ...rest] = await all(at("agentinstruct-conversations.json"));
    expect(rest).toEqual([]);
    if (!one || !two) throw new Error("missing trajectories");
    expect(one.id).toBe("mind2web_0");
    expect(one.task).toBe("Book a hotel in Rome");
    expect(one.initialObservation).toBe("<html> <a id=0> Flights </a> <a id=1> Hotels </a> </html>");
    expect(one.turns).toEqual([]);
    expect(one.meta).toEqual({
      initial_observation_format: "cleaned_html",
      choices: { A: "None of the above", B: "<a id=0> Flights </a>", C: "<a id=1> Hotels </a>" },
      unobserved_final_action: act("click", { choice: "C", element: "<a id=1> Hotels </a>" }),
      unobserved_final_thinking: "Hotels are under the Hotels link.",
      read_filter: {
        stage: "no-observation-after-action",
        reason: "a one-question multiple-choice row: it records the page and the chosen action, not the page after it",
      },
    });
    expect(two.turns.map((turn) => [turn.action, turn.observation, turn.thinking])).toEqual([
      [
        act("type", { choice: "B", element: "<input id=0 text destination />", value: "Rome" }),
        "<html> <li id=0> Rome, Italy </li> <li id=1> Rome, Georgia </li> </html>",
        "Type the city.",
      ],
    ]);
    expect(two.meta?.previous_actions).toEqual(["[link]  Hotels -> CLICK"]);
    expect(two.meta?.unobserved_final_action).toBe(act("click", { choice: "B", element: "<li id=0> Rome, Italy </li>" }));
    expect(two.meta?.read_filter).toBeUndefined();
  });
});

describe("mind2web: hostile input", () => {
  it("quarantines each bad record with file:line, field and reason", async () => {
    const items = await read(at("hostile.jsonl"));
    expect(trajectories(items)).toEqual([]);
    expect(quarantined(items).map((e) => [e.source.line, e.id, e.field, e.reason])).toEqual([
      [1, "h-1", "actions", 'line 1: "actions" must be an array, got a string'],
      [2, "h-2", "actions.0.operation", "line 2: actions.0.operation must be an object {op, value}, got nothing"],
      [3, "h-3", "actions.0.cleaned_html", "line 3: actions.0 has no cleaned_html or raw_html (string)"],
      [4, "mind2web_9", "conversations.1.content", 'line 4: conversations.1 has no "Answer: <letter>"'],
      [5, undefined, undefined, expect.stringMatching(/^invalid JSON: /)],
      [6, undefined, undefined, 'line 6: not a Mind2Web record: no "actions", "action_uid" or "conversations" (keys: website)'],
    ]);
  });

  it("a truncated array of tasks: the tasks before the break, then one entry naming it", async () => {
    const text = readFileSync(at("train-tasks.json"), "utf8");
    const path = join(tempDir(), "cut.json");
    writeFileSync(path, text.slice(0, text.indexOf('"annotation_id": "a1b2c3d4-0000-4000-8000-000000000002"') + 20));
    const items = await read(path);
    expect(trajectories(items).map((t) => t.turns.length)).toEqual([2]);
    expect(quarantined(items).map((e) => e.reason)).toEqual([
      expect.stringMatching(/^the JSON array breaks after element 0: invalid JSON/),
    ]);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("mind2web: detection", () => {
  const mine = readdirSync(DIR).filter((name) => name !== "README.md");
  const before = READERS.slice(
    0,
    READERS.findIndex((r) => r.name === "mind2web"),
  );

  it("its sniff accepts every fixture; neither an earlier reader nor the webarena reader claims one", async () => {
    for (const name of mine) {
      const head = await readHead(at(name));
      expect(mind2WebReader.sniff(head, at(name)), name).toBe(true);
      expect(webArenaReader.sniff(head, at(name)), name).toBe(false);
      expect(
        before.filter((r) => r.sniff(head, at(name))).map((r) => r.name),
        name,
      ).toEqual([]);
    }
  });

  it("claims none of the other readers' fixtures (handmade, demo, webarena), from any of their first lines", async () => {
    const others = [...filesUnder(join(ROOT, "test/fixtures/handmade")), ...filesUnder(join(ROOT, "data/demo"))].filter(
      (path) => !path.startsWith(DIR) && !/\.(png|jpe?g|gz|zst|parquet)$/.test(path),
    );
    expect(others.some((path) => path.includes("handmade/webarena"))).toBe(true);
    const claimed: string[] = [];
    for (const path of others) {
      const head = await readHead(path);
      let start = 0;
      for (let i = 0; i < 8 && start < head.length; i++) {
        if (mind2WebReader.sniff(head.slice(start), path)) claimed.push(path);
        const end = head.indexOf("\n", start);
        if (end < 0) break;
        start = end + 1;
      }
    }
    expect(claimed).toEqual([]);
  });
});

describeThirdParty("mind2web on the shared samples", () => {
  it("AgentInstruct Mind2Web rows (ADP sample): five one-question rows, each filtered with its page, task and answer", async () => {
    const path = thirdParty("formats-2026/web/adp__agenttuning_mind2web__sample_raw.json");
    expect(mind2WebReader.sniff(await readHead(path), path)).toBe(true);
    const ts = await all(path);
    expect(ts.map((t) => t.id)).toEqual(["mind2web_96", "mind2web_46", "mind2web_72", "mind2web_118", "mind2web_110"]);
    expect(
      ts.every(
        (t) => t.turns.length === 0 && (t.meta?.read_filter as { stage?: string } | undefined)?.stage === "no-observation-after-action",
      ),
    ).toBe(true);
    const [first, second] = ts;
    expect(first?.task).toBe("Show the Recommended Gaming PCs for someone who plays Fortnite, Overwatch and GTA V at 4k");
    expect(first?.initialObservation?.startsWith("<html> <div> <div> <div> <button id=0> Desktop </button>")).toBe(true);
    expect(first?.initialObservation?.endsWith("</html>")).toBe(true);
    expect(first?.meta?.unobserved_final_action).toBe(act("click", { choice: "B", element: "<button id=0> Desktop </button>" }));
    expect(first?.meta?.previous_actions).toEqual([
      "[generic]  Site Menu -> CLICK",
      "[link]  icon of Gaming PC Finder Gaming PC Finder -> CLICK",
      "[div]  Remove -> CLICK",
    ]);
    expect(second?.meta?.unobserved_final_action).toBe(
      act("set", { choice: "C", element: "<a id=1> <span> In-person care </span> </a>", value: "$50,000" }),
    );
  });
});
