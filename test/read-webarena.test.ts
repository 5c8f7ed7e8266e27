/**
 * The webarena reader (src/read/webarena.ts) on the hand-written files in
 * test/fixtures/handmade/webarena/ (README.md there: a WebArena trajectory with combined steps, WebArena's
 * own alternating StateInfo/Action list, an AgentLab/BrowserGym export, NNetNav-WA rows, an
 * action-only result, hostile lines), on detection against every other reader's fixtures, and on
 * the shared NNetNav-WA and Online-Mind2Web samples in place.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { parseWebObservation, webNormalizer } from "../src/normalize/domains/web.ts";
import { canonicalTreeText } from "../src/normalize/tree/a11y-tree.ts";
import { parseWebArenaTree, WEBARENA_TREE_FORMAT } from "../src/normalize/tree/webarena-axtree.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { TreeParseError } from "../src/read/uiautomator-xml.ts";
import { parseWebArenaAction, webArenaReader } from "../src/read/webarena.ts";
import { collect, ROOT, tempDir, UNCAPPED_NORMALIZE_SETTINGS } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/handmade/webarena");
const at = (name: string) => join(DIR, name);
const FIXTURE_FILES = readdirSync(DIR).filter((name) => /\.jsonl?$/.test(name));
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const read = (path: string) => collect(webArenaReader.read(path, OPTIONS));
/** The canonical action text for a call. */
const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args }, null, 2);

async function all(path: string): Promise<Trajectory[]> {
  const items = await read(path);
  expect(quarantined(items)).toEqual([]);
  return trajectories(items);
}

describe("webarena: trajectory objects", () => {
  it("combined steps: action i on page i, observed as page i+1's tree; config, score and the unobserved stop", async () => {
    const [t, ...rest] = await all(at("trajectory-combined.json"));
    expect(rest).toEqual([]);
    if (!t) throw new Error("no trajectory");
    expect(t.id).toMatch(/^118-[0-9a-f]{16}$/);
    expect(t.domain).toBe("web");
    expect(t.task).toBe("What is the price of the cheapest blue running shoe?");
    expect(t.initialObservation).toBe(
      "[1] RootWebArea 'One Stop Market' focused: True\n\t[12] link 'Shoes'\n\t[31] searchbox 'Search' required: False",
    );
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [
        act("click", { element_id: "12" }),
        "[40] RootWebArea 'Shoes' focused: True\n\t[31] searchbox 'Search' required: False\n\t[55] StaticText '12 items'",
      ],
      [
        act("type", { element_id: "31", text: "blue shoes", press_enter_after: true }),
        "[60] RootWebArea 'Search results for: blue shoes' focused: True\n\t[61] heading 'Blue Runner'\n\t[62] StaticText '$39.00'",
      ],
    ]);
    expect(t.turns[0]?.thinking).toBe("The shoes category is a link.");
    expect(t.turns[1]?.thinking).toBe("Let's think step-by-step. I will search. In summary, the next action I will perform is");
    expect(t.turns[0]?.meta).toEqual({ raw_action: "click [12]", url: "http://localhost:7770/shoes.html" });
    expect(t.meta).toEqual({
      task_id: "118",
      model: "gpt-4-0613",
      start_url: "http://localhost:7770",
      sites: ["shopping"],
      require_login: true,
      outcome: { reward: 1, success: true },
      unobserved_final_action: act("stop", { answer: "$39.00" }),
      initial_url: "http://localhost:7770/",
      initial_open_tabs: "Tab 0 (current): One Stop Market",
    });
  });

  it("WebArena's alternating StateInfo / Action list (JSONL): action_type numbers and names, fail_error; two attempts stay apart", async () => {
    const [a, b, ...rest] = await all(at("webarena-alternating.jsonl"));
    expect(rest).toEqual([]);
    if (!a || !b) throw new Error("missing trajectories");
    expect(a.id).not.toBe(b.id);
    expect([a.meta?.task_id, b.meta?.task_id]).toEqual(["4", "4"]);
    expect(a.turns.map((turn) => turn.action)).toEqual([
      act("click", { element_id: "5" }),
      act("goto", { url: "http://localhost:7780/admin/reports/bestsellers" }),
    ]);
    expect(a.turns[1]?.observation).toBe("[90] RootWebArea 'Bestsellers Report / Magento Admin' focused: True\n\t[91] table ''");
    expect(a.turns[0]?.thinking).toBe("Reports hold sales data. In summary, the next action I will perform is");
    expect(a.meta?.outcome).toEqual({ reward: 0, success: false });
    expect(a.meta?.unobserved_final_action).toBe(act("stop", { answer: "Quest Lumaflex Band" }));
    expect(b.turns.map((turn) => turn.action)).toEqual([act("scroll", { direction: "down" }), act("press", { key_comb: "Ctrl+f" })]);
    expect(b.turns[0]?.meta?.last_action_error).toBe("element is not visible");
    expect(b.turns[1]?.meta?.last_action_error).toBeUndefined();
    expect(b.meta?.unobserved_final_action).toBeUndefined();
  });

  it("AgentLab / BrowserGym export in a JSON array: obs.axtree_txt, call actions, think, agent, model, cum_reward", async () => {
    const [t, ...rest] = await all(at("agentlab-steps.json"));
    expect(rest).toEqual([]);
    if (!t) throw new Error("no trajectory");
    expect(t.id).toBe("2024-05-01_GenericAgent_on_webarena.27_0");
    expect(t.source).toMatchObject({ row: 0, format: "webarena" });
    expect(t.task).toBe("Post a question in the books forum");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [act("click", { args: ["a12"] }), "[b1] RootWebArea 'Forums', focused\n\t[b7] link 'books'"],
      [act("click", { args: ["b7"], button: "left" }), "[c1] RootWebArea 'books', focused\n\t[c3] textbox 'Title', required"],
    ]);
    expect(t.turns[0]?.thinking).toBe("Open the forum list.");
    expect(t.turns[1]?.meta?.last_action_error).toBe("TimeoutError: waiting for selector");
    expect(t.meta).toMatchObject({
      task_id: "webarena.27",
      agent: "GenericAgent-gpt-4o",
      model: "gpt-4o-2024-05-13",
      outcome: { reward: 0, success: false },
    });
  });

  it("an action-only result (no page state) is yielded for the filter, its actions canonical and the outcome kept", async () => {
    const [t, ...rest] = await all(at("action-history-result.json"));
    expect(rest).toEqual([]);
    if (!t) throw new Error("no trajectory");
    expect(t.turns).toEqual([]);
    expect(t.task).toBe("Find the opening hours of the Louvre on Tuesday.");
    expect(t.meta?.read_filter).toEqual({
      stage: "no-observations",
      reason: "the record lists the agent's actions but no page state after any of them, so there is no observation to learn",
    });
    expect(t.meta?.outcome).toEqual({ success: false });
    expect(t.meta?.unobserved_actions).toEqual([
      act("goto", { url: "https://www.louvre.fr/en" }),
      act("click", { x: 101, y: 22.5 }),
      act("type", { text: "opening hours" }),
      act("press", { key_comb: "ENTER" }),
      act("scroll", { delta_x: 0, delta_y: -300 }),
      act("wait", { raw: "Wait for 2 seconds" }),
    ]);
    expect(t.meta?.final_answer).toBe("The Louvre is closed on Tuesdays.");
  });
});

describe("webarena: NNetNav-WA rows", () => {
  it("consecutive rows of one id are one trajectory; a prompt-only single row is filtered", async () => {
    const [t, single, ...rest] = await all(at("nnetnav-rows.json"));
    expect(rest).toEqual([]);
    if (!t || !single) throw new Error("missing trajectories");
    expect(t.id).toBe("osm_pharmacy_1");
    expect(t.task).toBe("Find the phone number of the closest pharmacy to CMU");
    expect(t.initialObservation).toBe(
      "[1] RootWebArea 'OpenStreetMap' focused: True\n\t[35] textbox 'Search' focused: True required: False",
    );
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [
        act("type", { element_id: "35", text: "pharmacy near CMU", press_enter_after: true }),
        "[1] RootWebArea 'OpenStreetMap' focused: True\n\t[35] textbox 'Search' required: False\n\t[80] link 'Pharmacy, Forbes Avenue'",
      ],
      [
        act("click", { element_id: "80" }),
        "[100] RootWebArea 'Pharmacy | OpenStreetMap' focused: True\n\t[104] StaticText 'phone: +1 412 555 0100'",
      ],
    ]);
    expect(t.turns[0]?.thinking).toBe("Let's think step-by-step. The search box is [35]. In summary, the next action I will perform is");
    expect(t.turns[0]?.meta).toEqual({
      raw_action: "type [35] [pharmacy near CMU] [1]",
      url: "http://localhost:3000/search?query=pharmacy",
      open_tabs: "Tab 0 (current): OpenStreetMap",
    });
    expect(t.meta).toMatchObject({
      task_id: "osm_pharmacy_1",
      dataset: "webarena_handmade",
      rows: 3,
      unobserved_final_action: act("stop", { answer: "+1 412 555 0100" }),
    });
    expect(String(t.meta?.agent_system)).toMatch(/^You are an autonomous intelligent agent/);
    expect(single.id).toBe("gitlab_new_1");
    expect(single.task).toBe("Create a project named lwm");
    expect(single.turns).toEqual([]);
    expect(single.meta?.unobserved_final_action).toBe(act("click", { element_id: "9" }));
    expect(single.meta?.read_filter).toMatchObject({ stage: "no-observation-after-action" });
  });

  it("a row whose previous-action count does not grow starts a new run with its own id", async () => {
    const dir = tempDir();
    const row = (previous: number, reply: string) => ({
      id: "t1",
      messages: [
        {
          role: "user",
          content: `OBSERVATION:\n[1] RootWebArea 'P${previous}'\nURL: http://x/${previous}\nOBJECTIVE: do it\nPREVIOUS ACTIONS:\n${Array.from({ length: previous }, (_, i) => `${i + 1}: a`).join("\n")}`,
        },
        { role: "assistant", content: `ok \`\`\`${reply}\`\`\`` },
      ],
    });
    const path = join(dir, "rows.jsonl");
    writeFileSync(
      path,
      [row(1, "click [1]"), row(2, "go_back"), row(1, "scroll [down]"), row(2, "stop [x]")].map((r) => JSON.stringify(r)).join("\n"),
    );
    const ts = await all(path);
    expect(ts.map((t) => [t.id, t.turns.length, t.turns[0]?.action])).toEqual([
      ["t1", 1, act("click", { element_id: "1" })],
      ["t1-run2", 1, act("scroll", { direction: "down" })],
    ]);
  });
});

describe("webarena: through the web normalizer", () => {
  /** Every trajectory of a fixture (hostile.jsonl: its one good line). */
  const fixtureTrajectories = async (name: string) => trajectories(await read(at(name)));
  const pagesOf = (t: Trajectory) => (t.initialObservation !== undefined ? 1 : 0) + t.turns.length;

  it("every tree of every hand-made fixture parses (WebArena's `prop: value`, AgentLab's BrowserGym trees): none unparsed", async () => {
    for (const name of FIXTURE_FILES) {
      const list = await fixtureTrajectories(name);
      for (const t of list) {
        const counters = new Map<string, number>();
        await webNormalizer.normalize(t, UNCAPPED_NORMALIZE_SETTINGS, counters);
        expect([name, t.id, counters.get("tree.unparsed") ?? 0]).toEqual([name, t.id, 0]);
        expect([name, t.id, counters.get("tree.observations") ?? 0]).toEqual([name, t.id, pagesOf(t)]);
      }
    }
  });

  it("WebArena trees become canonical trees, with diffs between pages keyed by the page's ids", async () => {
    const [t] = await all(at("trajectory-combined.json"));
    if (!t) throw new Error("no trajectory");
    const full = await webNormalizer.normalize(t, UNCAPPED_NORMALIZE_SETTINGS, new Map());
    // "[1] RootWebArea 'One Stop Market' focused: True\n\t[12] link 'Shoes'\n\t[31] searchbox 'Search' required: False"
    expect(full.initialObservation).toBe(
      ['[1] RootWebArea "One Stop Market" focused', '  [12] link "Shoes"', '  [31] searchbox "Search"'].join("\n"),
    );
    expect(full.turns[0]?.observation).toBe(
      ['[40] RootWebArea "Shoes" focused', '  [31] searchbox "Search"', '  [55] StaticText "12 items"'].join("\n"),
    );
    expect(full.turns[0]?.meta?.tree_diff).toBe(
      ["- 1", '+ 40 at root: RootWebArea "Shoes" focused', '+ 55 in 40 at 1: StaticText "12 items"', "> 31 in 40 at 0"].join("\n"),
    );

    // WebArena's alternating list: the click expands REPORTS (`expanded: True`) and shows Bestsellers.
    const [a] = await all(at("webarena-alternating.jsonl"));
    if (!a) throw new Error("no trajectory");
    const diffed = await webNormalizer.normalize(a, { ...UNCAPPED_NORMALIZE_SETTINGS, tree_target: "diff" }, new Map());
    expect(diffed.turns[0]?.observation).toBe(['+ 77 in 1 at 1: link "Bestsellers"', '~ 5: link "REPORTS" expanded=True'].join("\n"));
    expect(diffed.turns[0]?.meta?.tree_full).toBe(
      ['[1] RootWebArea "Dashboard / Magento Admin" focused', '  [5] link "REPORTS" expanded=True', '  [77] link "Bestsellers"'].join("\n"),
    );
  });

  it("negative control: a malformed WebArena line leaves that page as read, counted unparsed; the next diff starts from the empty tree", async () => {
    const [t] = await all(at("trajectory-combined.json"));
    if (!t) throw new Error("no trajectory");
    // An unterminated name on the second page's second line.
    const broken = "[40] RootWebArea 'Shoes' focused: True\n\t[31] searchbox 'Search required: False";
    const edited: Trajectory = { ...t, turns: t.turns.map((turn, i) => (i === 0 ? { ...turn, observation: broken } : turn)) };
    const counters = new Map<string, number>();
    const out = await webNormalizer.normalize(edited, UNCAPPED_NORMALIZE_SETTINGS, counters);
    expect(out.turns[0]?.observation).toBe(broken);
    expect(out.turns[0]?.meta?.tree_diff).toBeUndefined();
    expect(counters.get("tree.unparsed")).toBe(1);
    expect(counters.get("tree.observations")).toBe(2);
    expect(out.turns[1]?.meta?.tree_diff).toBe(
      [
        '+ 60 at root: RootWebArea "Search results for: blue shoes" focused',
        '+ 61 in 60 at 0: heading "Blue Runner"',
        '+ 62 in 60 at 1: StaticText "$39.00"',
      ].join("\n"),
    );
  });
});

describe("webarena: the accessibility-tree grammar", () => {
  it("reads into the same tree as BrowserGym's grammar for the same page; the format hint changes nothing", () => {
    const webArena = [
      "[1] RootWebArea 'Shop' focused: True",
      "\t[7] button 'Menu' hasPopup: menu expanded: False",
      '\t\t[8] menuitem "Joe\'s deals" required: False',
      "\t[9] checkbox 'Gift wrap' checked: false required: True",
      "\t[10] link 'Home' url: http://localhost:7770/",
    ].join("\n");
    const browserGym = [
      "[1] RootWebArea 'Shop', focused",
      "\t[7] button 'Menu', hasPopup='menu', expanded=False",
      '\t\t[8] menuitem "Joe\'s deals"',
      "\t[9] checkbox 'Gift wrap', checked='false', required",
      "\t[10] link 'Home', url='http://localhost:7770/'",
    ].join("\n");
    const tree = parseWebObservation(webArena);
    expect(tree).toEqual(parseWebObservation(browserGym));
    expect(parseWebObservation(webArena, WEBARENA_TREE_FORMAT)).toEqual(tree);
    expect(parseWebObservation(browserGym, WEBARENA_TREE_FORMAT)).toEqual(tree);
    expect(parseWebArenaTree(webArena)).toEqual(tree);
    expect(canonicalTreeText(tree, { collapseEmptyWrappers: false }).split("\n")).toEqual([
      '[1] RootWebArea "Shop" focused',
      '  [7] button "Menu" expanded=False hasPopup=menu',
      '    [8] menuitem "Joe\'s deals"',
      '  [9] checkbox "Gift wrap" checked=false required',
      '  [10] link "Home" url=http://localhost:7770/',
    ]);
  });

  it("values with spaces or empty, a line indented past its parent (a dropped StaticText), several top-level lines", () => {
    const tree = parseWebArenaTree(
      [
        "[1] slider 'Volume' valuetext: 3 of 5 valuemin: 0 valuemax: 5",
        "\t[2] StaticText '' roledescription:  live: polite",
        "\t\t\t[3] InlineTextBox 'x'",
        "\t[4] LineBreak '\\n'",
        "[5] generic 'second'",
      ].join("\n"),
    );
    expect(tree.role).toBe("root");
    const [slider, second] = tree.children;
    expect(slider?.attributes).toEqual({ valuetext: "3 of 5", valuemin: "0", valuemax: "5" });
    expect(slider?.children.map((c) => [c.id, c.name, c.attributes, c.children.map((g) => g.id)])).toEqual([
      ["2", "", { roledescription: "", live: "polite" }, ["3"]],
      ["4", "\n", {}, []],
    ]);
    expect(second?.id).toBe("5");
  });

  it("rejects what is not the grammar with a TreeParseError", () => {
    for (const text of [
      "[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Home' , oops", // stray text after the name
      "[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Home", // unterminated name
      "[1] RootWebArea 'Shop' focused: True\n\tlink 'Home'", // no [id]
      "[1] RootWebArea 'Shop' Focused: True", // not a property name
      "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True", // the tab header (readers split it off)
      "",
    ]) {
      expect(() => parseWebObservation(text), JSON.stringify(text)).toThrow(TreeParseError);
      expect(() => parseWebObservation(text, WEBARENA_TREE_FORMAT), JSON.stringify(text)).toThrow(TreeParseError);
    }
  });
});

describe("webarena: action strings", () => {
  it("parses every WebArena id-based action, brackets inside typed text included", () => {
    expect(parseWebArenaAction("type [12] [a [b] c] [0]")).toEqual({
      name: "type",
      args: { element_id: "12", text: "a [b] c", press_enter_after: false },
    });
    expect(parseWebArenaAction("hover [7]")).toEqual({ name: "hover", args: { element_id: "7" } });
    expect(parseWebArenaAction("press [Ctrl+v]")).toEqual({ name: "press", args: { key_comb: "Ctrl+v" } });
    expect(parseWebArenaAction("scroll [direction=up]")).toEqual({ name: "scroll", args: { direction: "up" } });
    expect(parseWebArenaAction("tab_focus [2]")).toEqual({ name: "tab_focus", args: { tab_index: 2 } });
    expect(parseWebArenaAction("new_tab")).toEqual({ name: "new_tab", args: {} });
    expect(parseWebArenaAction("close_tab")).toEqual({ name: "close_tab", args: {} });
    expect(parseWebArenaAction("go_forward")).toEqual({ name: "go_forward", args: {} });
    expect(parseWebArenaAction("stop [N/A]")).toEqual({ name: "stop", args: { answer: "N/A" } });
    expect(parseWebArenaAction("click [12] [13]")).toBeUndefined();
    expect(parseWebArenaAction("fly [12]")).toBeUndefined();
  });
});

describe("webarena: hostile input", () => {
  it("quarantines each bad record with file:line, field and reason; good records still read", async () => {
    const items = await read(at("hostile.jsonl"));
    const good = trajectories(items);
    expect(good.map((t) => [t.task, t.turns.map((turn) => turn.action)])).toEqual([["Open the wiki", [act("click", { element_id: "3" })]]]);
    expect(good[0]?.meta?.outcome).toEqual({ reward: 1, success: true });
    const bad = quarantined(items).map((e) => [e.source.line, e.field, e.reason]);
    expect(bad).toEqual([
      [2, "trajectory", 'line 2: "trajectory" must be an array, got a string'],
      [3, "steps.1", "line 3: steps.1: a page follows page 0 with no action between them"],
      [4, "steps.0.action", 'line 4: steps.0.action: action_type "FLY_AWAY" is not a WebArena action type'],
      [5, undefined, "expected a JSON object, got an array"],
      [6, undefined, expect.stringMatching(/^invalid JSON: /)],
      [7, "steps.0.action", "line 7: steps.0.action: the action is a number"],
    ]);
    // Records in = records out.
    expect(items.length).toBe(7);
  });

  it("a truncated JSON array: the rows before the break, then one entry naming it; gzip reads the same", async () => {
    const dir = tempDir();
    const text = readFileSync(at("agentlab-steps.json"), "utf8");
    const two = `[${text.trim().slice(1, -1)},${text.trim().slice(1, -1)}]`;
    const cut = join(dir, "cut.json");
    writeFileSync(cut, two.slice(0, two.length - 40));
    const items = await read(cut);
    expect(trajectories(items).length).toBe(1);
    expect(quarantined(items).map((e) => e.reason)).toEqual([
      expect.stringMatching(/^the JSON array breaks after element 0: invalid JSON/),
    ]);
    const gz = join(dir, "rows.json.gz");
    writeFileSync(gz, gzipSync(text));
    expect((await all(gz)).map((t) => t.turns.length)).toEqual([2]);
  });

  it("a file that is no JSON at all is quarantined, never read as a trajectory", async () => {
    const path = join(tempDir(), "x.json");
    // A broken document whose start cannot be told from a JSONL line: each line is a bad record.
    writeFileSync(path, "{ this is not json\n  at all }\n");
    const items = await read(path);
    expect(items.map((item) => item.kind)).toEqual(["quarantine", "quarantine"]);
    // A pretty-printed document that breaks is one entry for the file.
    writeFileSync(path, '{\n  "intent": "buy a lamp",\n  "trajectory": [\n');
    const broken = await read(path);
    expect(broken.length).toBe(1);
    expect(quarantined(broken)[0]?.reason).toMatch(/^the file is not one JSON document/);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("webarena: detection", () => {
  const mine = readdirSync(DIR).filter((name) => name !== "README.md");
  // Registered before chat-tool-rows (and so before swe-agent-traj, which claims any `trajectory` array).
  const before = READERS.slice(
    0,
    READERS.findIndex((r) => r.name === "webarena"),
  );

  it("its sniff accepts every fixture, and no reader it goes after claims one", async () => {
    for (const name of mine) {
      const head = await readHead(at(name));
      expect(webArenaReader.sniff(head, at(name)), name).toBe(true);
      expect(
        before.filter((r) => r.sniff(head, at(name))).map((r) => r.name),
        name,
      ).toEqual([]);
    }
  });

  it("claims none of the other readers' fixtures (handmade and demo), from any of their first lines", async () => {
    const others = [...filesUnder(join(ROOT, "test/fixtures/handmade")), ...filesUnder(join(ROOT, "data/demo"))].filter(
      (path) => !path.startsWith(DIR) && !path.includes("handmade/mind2web") && !/\.(png|jpe?g|gz|zst|parquet)$/.test(path),
    );
    expect(others.length).toBeGreaterThan(50);
    const claimed: string[] = [];
    for (const path of others) {
      const head = await readHead(path);
      let start = 0;
      for (let i = 0; i < 8 && start < head.length; i++) {
        if (webArenaReader.sniff(head.slice(start), path)) claimed.push(path);
        const end = head.indexOf("\n", start);
        if (end < 0) break;
        start = end + 1;
      }
    }
    expect(claimed).toEqual([]);
  });
});

describeThirdParty("webarena on the shared samples", () => {
  it("NNetNav-WA rows (ADP sample, first 2 of 68): one task over two rows, the typed search observed as the results page", async () => {
    const path = thirdParty("formats-2026/web/adp__nnetnav-wa__sample_raw.first2.json");
    expect(webArenaReader.sniff(await readHead(path), path)).toBe(true);
    const [t, ...rest] = await all(path);
    expect(rest).toEqual([]);
    if (!t) throw new Error("no trajectory");
    expect(t.id).toBe("webarena_openended_5777");
    expect(t.task).toBe('Search for information on how to use the "Software Architecture Group / My Machine Learning Project".');
    expect(
      t.initialObservation?.startsWith("[1] RootWebArea 'Projects · Dashboard · GitLab' focused: True\n\t[271] link 'Skip to content'"),
    ).toBe(true);
    expect(t.turns.length).toBe(1);
    expect(t.turns[0]?.action).toBe(act("type", { element_id: "1887", text: "machine learning", press_enter_after: true }));
    expect(t.turns[0]?.observation.startsWith("[1903] RootWebArea'machine learning · Search · GitLab' focused: True\n")).toBe(true);
    expect(t.turns[0]?.observation.endsWith("[2436] StaticText '5 hours ago'")).toBe(true);
    expect(t.turns[0]?.meta?.url).toBe(
      "http://ec2-18-116-228-190.us-east-2.compute.amazonaws.com:8023/search?search=machine+learning&snippets=&repository_ref=&nav_source=navbar",
    );
    expect(t.meta?.unobserved_final_action).toBe(act("tab_focus", { tab_index: 0 }));
    expect(t.meta).toMatchObject({ task_id: "webarena_openended_5777", dataset: "webarena_NNetNav_Bof3", rows: 2 });
  });

  it("an Online-Mind2Web result (actions only) is filtered with its reason, its outcome kept", async () => {
    const path = thirdParty("web/online-mind2web-abp/005be9dd91c95669d6ddde9ae667125c__result.json");
    const [t, ...rest] = await all(path);
    expect(rest).toEqual([]);
    expect(t?.meta?.read_filter).toMatchObject({ stage: "no-observations" });
    expect(t?.meta?.task_id).toBe("005be9dd91c95669d6ddde9ae667125c");
    expect(t?.meta?.outcome).toEqual({ success: true });
    expect(((t?.meta?.unobserved_actions ?? []) as string[]).slice(0, 2)).toEqual([
      act("goto", { url: "https://www.qatarairways.com/" }),
      act("click", { x: 963, y: 72 }),
    ]);
  });
});
