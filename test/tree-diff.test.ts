import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { androidNormalizer } from "../src/normalize/domains/android.ts";
import { osNormalizer } from "../src/normalize/domains/os.ts";
import { webNormalizer } from "../src/normalize/domains/web.ts";
import type { Counters } from "../src/normalize/normalizer.ts";
import {
  type A11yNode,
  canonicalTreeText,
  collapseEmptyWrappers,
  makeNode,
  preorder,
  type TreeParseOptions,
} from "../src/normalize/tree/a11y-tree.ts";
import { applyTreeDiff, diffTrees, TreeSequenceDiff, treeDiffText } from "../src/normalize/tree/tree-diff.ts";
import { browserGymReader, parseAxTree } from "../src/read/browsergym.ts";
import { droidBotReader, parseDroidBotState } from "../src/read/droidbot.ts";
import { osA11yReader, parseOsObservation } from "../src/read/os-a11y.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { parseUiautomatorXml, uiautomatorReader } from "../src/read/uiautomator-xml.ts";
import { collect, ROOT, UNCAPPED_NORMALIZE_SETTINGS } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
// Recorded by scripts/record-demo/web.ts (Chromium on a local app) and written by
// scripts/record-demo/android.ts (hand-written screens); see data/demo/PROVENANCE.md.
const WEB = join(ROOT, "data/demo/web");
const WEB_EPISODES = ["stockroom.add-item", "stockroom.delete-item"].map((name) => join(WEB, `${name}__experiment_analysis.md`));
const ANDROID = join(ROOT, "data/demo/android");
const DUMPS = join(ANDROID, "quicknotes.add-note.window_dumps.xml");
const DROIDBOT_2016_STATE = join(ROOT, "test/fixtures/handmade/android/device_state_2026-01-15_120000.json");
const OS_JSONL = join(ROOT, "test/fixtures/handmade/os/os-trajectories.jsonl");

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));

function node(key: string, role: string, name = "", attributes: Record<string, string> = {}, children: A11yNode[] = []): A11yNode {
  return { ...makeNode(role, name, attributes), key, children };
}

/**
 * Every tree sequence in the project's own data: web (two recorded episodes), android (the dumps
 * and the DroidBot states of the demo, a hand-written 2016 state), os (hand-made).
 */
async function sampleSequences(): Promise<[string, A11yNode[]][]> {
  const sequences: [string, A11yNode[]][] = [];
  for (const path of WEB_EPISODES) {
    const [web] = trajectories(await collect(browserGymReader.read(path, OPTIONS)));
    sequences.push([
      `browsergym ${web?.task}`,
      [web?.initialObservation as string, ...(web?.turns ?? []).map((t) => t.observation)].map((text) => parseAxTree(text)),
    ]);
  }
  const [dumps] = trajectories(await collect(uiautomatorReader.read(DUMPS, OPTIONS)));
  const screens = [dumps?.initialObservation as string, ...(dumps?.turns ?? []).map((t) => t.observation)];
  sequences.push(["uiautomator", screens.map((screen) => parseUiautomatorXml(screen))]);
  const states = readdirSync(ANDROID)
    .filter((name) => name.startsWith("state_"))
    .sort();
  sequences.push([
    "droidbot",
    [...states.map((name) => join(ANDROID, name)), DROIDBOT_2016_STATE].map((path) => parseDroidBotState(readFileSync(path, "utf8"))),
  ]);
  for (const t of trajectories(await collect(osA11yReader.read(OS_JSONL, OPTIONS)))) {
    const observations = [
      ...(t.initialObservation !== undefined ? [t.initialObservation] : []),
      ...t.turns.map((turn) => turn.observation),
    ];
    sequences.push([`os ${t.id}`, observations.map((text) => parseOsObservation(text))]);
  }
  return sequences;
}

function expectRoundTrip(prev: A11yNode | null, next: A11yNode | null): void {
  const diff = diffTrees(prev, next);
  expect(applyTreeDiff(prev, diff)).toStrictEqual(next);
}

describe("canonical tree text", () => {
  const tree = node("root", "RootWebArea", "Shop", { focused: "true", url: "https://x.example/?q=a b" }, [
    { ...node("12", "button", "Buy", { expanded: "False", live: "polite" }), id: "12", bounds: { left: 1, top: 2, right: 30, bottom: 22 } },
    node("root/generic[0]", "generic", "", {}, [node("root/generic[0]/StaticText[0]", "StaticText", 'Say "hi"\n')]),
  ]);

  it("prints one line per node, two spaces per level, sorted attributes, flags, quoted values, bounds", () => {
    expect(canonicalTreeText(tree, { collapseEmptyWrappers: false })).toBe(
      [
        'RootWebArea "Shop" focused url="https://x.example/?q=a b"',
        '  [12] button "Buy" expanded=False live=polite bounds=[1,2][30,22]',
        "  generic",
        '    StaticText "Say \\"hi\\"\\n"',
      ].join("\n"),
    );
  });

  it("collapses nameless single-child wrappers when asked, and never the root", () => {
    expect(canonicalTreeText(tree, { collapseEmptyWrappers: true })).toBe(
      [
        'RootWebArea "Shop" focused url="https://x.example/?q=a b"',
        '  [12] button "Buy" expanded=False live=polite bounds=[1,2][30,22]',
        '  StaticText "Say \\"hi\\"\\n"',
      ].join("\n"),
    );
    const lone = node("r", "frame", "", {}, [node("r/c", "panel")]);
    expect(collapseEmptyWrappers(lone)).toStrictEqual(lone);
  });
});

describe("tree diff", () => {
  it("writes removals, additions, moves and changes as text", () => {
    const prev = node("r", "list", "", {}, [
      node("a", "item", "A"),
      node("b", "item", "B", {}, [node("b1", "text", "x")]),
      node("c", "item", "C"),
    ]);
    const next = node("r", "list", "", {}, [node("c", "item", "C"), node("a", "item", "A", { selected: "true" }), node("d", "item", "D")]);
    const diff = diffTrees(prev, next);
    expect(treeDiffText(diff)).toBe(["- b", '+ d in r at 2: item "D"', "> a in r at 1", '~ a: item "A" selected'].join("\n"));
    expect(applyTreeDiff(prev, diff)).toStrictEqual(next);
    expect(treeDiffText(diffTrees(prev, prev))).toBe("(no changes)");
    expect(treeDiffText(diffTrees(null, node("r", "list")))).toBe("+ r at root: list");
    expect(treeDiffText(diffTrees(prev, null))).toBe("- r");
  });

  it("round-trips every recording: each tree from the empty tree, each against the next, with and without collapsed wrappers", async () => {
    const sequences = await sampleSequences();
    expect(sequences.map(([name, trees]) => [name, trees.length])).toEqual([
      ["browsergym Add a new inventory item named 'Label printer' with 3 in stock, in the Office category.", 9],
      ["browsergym Delete the item 'Broken stapler' from the inventory.", 7],
      ["uiautomator", 4],
      ["droidbot", 5],
      ["os gedit-save-as", 4],
      ["os chrome-example-link", 2],
    ]);
    for (const [, trees] of sequences) {
      for (const shown of [trees, trees.map(collapseEmptyWrappers)]) {
        shown.forEach((tree, i) => {
          expectRoundTrip(null, tree);
          expectRoundTrip(tree, null);
          if (i > 0) {
            expectRoundTrip(shown[i - 1] as A11yNode, tree);
            expectRoundTrip(tree, shown[i - 1] as A11yNode); // backwards too
          }
        });
      }
    }
    // Across recordings and domains: unrelated trees, shared path keys.
    const all = sequences.flatMap(([, trees]) => trees);
    for (const a of all) for (const b of all) expectRoundTrip(a, b);
  });

  it("keeps duplicate keys apart by their index path", () => {
    const prev = node("r", "list", "", {}, [
      node("x", "item", "1"),
      node("x", "item", "2"),
      node("y", "item", "3", {}, [node("x", "item", "4")]),
    ]);
    const next = node("r", "list", "", {}, [
      node("x", "item", "2"),
      node("y", "item", "3"),
      node("x", "item", "1"),
      node("x", "item", "5"),
    ]);
    expectRoundTrip(prev, next);
    expect(treeDiffText(diffTrees(prev, next))).toContain("x@2.0");
  });

  it("throws on a diff that does not fit the tree", () => {
    const tree = node("r", "list");
    expect(() => applyTreeDiff(tree, { removed: ["nope"], added: [], moved: [], changed: [] })).toThrow(/does not have/);
  });
});

// Random trees: few keys, so duplicates and keys shared between prev and next are common.
const KEYS = ["a", "b", "c", "d", "e", "f", "r", "r/x[0]"];
const treeArb: fc.Arbitrary<A11yNode> = fc
  .letrec((tie) => ({
    node: fc.record(
      {
        key: fc.constantFrom(...KEYS),
        id: fc.constantFrom("1", "2", "a"),
        role: fc.constantFrom("button", "link", "generic", "StaticText"),
        name: fc.constantFrom("", "OK", "a b", 'q"'),
        attributes: fc.dictionary(fc.constantFrom("x", "y", "focused"), fc.constantFrom("true", "False", "1 2", "")),
        bounds: fc.record({ left: fc.integer(), top: fc.integer(), right: fc.integer(), bottom: fc.integer() }),
        children: fc.oneof(
          { depthSize: "small", withCrossShrink: true },
          fc.constant<A11yNode[]>([]),
          fc.array(tie("node") as fc.Arbitrary<A11yNode>, { maxLength: 4 }),
        ),
      },
      { requiredKeys: ["key", "role", "name", "attributes", "children"] },
    ),
  }))
  .node.map((tree) => copyTree(tree as A11yNode));

/** A deep copy as plain objects: fast-check builds null-prototype records and may share a subtree between two places. */
function copyTree(tree: A11yNode): A11yNode {
  const { children, attributes, bounds, ...rest } = tree;
  return { ...rest, attributes: { ...attributes }, ...(bounds ? { bounds: { ...bounds } } : {}), children: children.map(copyTree) };
}

const editArb = fc.record({
  op: fc.constantFrom("insert", "remove", "attribute", "rename", "reorder", "move"),
  a: fc.nat(),
  b: fc.nat(),
  c: fc.nat(),
});

/** Applies random edits to a copy: inserts, removals, attribute/name changes, reorders, moves. */
function edited(tree: A11yNode, edits: { op: string; a: number; b: number; c: number }[]): A11yNode {
  const copy = copyTree(tree);
  const nodes = () => {
    const list: { node: A11yNode; parent: A11yNode | null }[] = [];
    const walk = (n: A11yNode, parent: A11yNode | null) => {
      list.push({ node: n, parent });
      for (const child of n.children) walk(child, n);
    };
    walk(copy, null);
    return list;
  };
  edits.forEach(({ op, a, b, c }, i) => {
    const list = nodes();
    const { node: target, parent } = list[a % list.length] as { node: A11yNode; parent: A11yNode | null };
    if (op === "insert")
      target.children.splice(
        b % (target.children.length + 1),
        0,
        node(c % 2 ? `new${i}` : (KEYS[c % KEYS.length] as string), "button", `n${i}`),
      );
    else if (op === "remove" && parent) parent.children.splice(parent.children.indexOf(target), 1);
    else if (op === "attribute") target.attributes[["x", "y", "z"][b % 3] as string] = String(c % 3);
    else if (op === "rename") target.name = `renamed${c % 3}`;
    else if (op === "reorder" && target.children.length > 1) {
      const k = b % target.children.length;
      target.children = [...target.children.slice(k), ...target.children.slice(0, k)].reverse();
    } else if (op === "move" && parent) {
      const outside = list.filter(({ node: n }) => !contains(target, n));
      const dest = outside[b % outside.length]?.node;
      if (!dest) return;
      parent.children.splice(parent.children.indexOf(target), 1);
      dest.children.splice(c % (dest.children.length + 1), 0, target);
    }
  });
  return copy;
}

function contains(root: A11yNode, needle: A11yNode): boolean {
  return root === needle || root.children.some((child) => contains(child, needle));
}

describe("tree diff properties (fast-check)", () => {
  it("apply(prev, diff(prev, next)) equals next after random inserts, removals, attribute changes, reorders and moves", () => {
    fc.assert(
      fc.property(treeArb, fc.array(editArb, { maxLength: 12 }), (prev, edits) => {
        const next = edited(prev, edits);
        expect(applyTreeDiff(prev, diffTrees(prev, next))).toStrictEqual(next);
        expect(applyTreeDiff(next, diffTrees(next, prev))).toStrictEqual(prev);
      }),
      { numRuns: 500 },
    );
  });

  it("apply(prev, diff(prev, next)) equals next for unrelated random trees and the empty tree", () => {
    fc.assert(
      fc.property(fc.option(treeArb, { nil: null }), fc.option(treeArb, { nil: null }), (prev, next) => {
        expect(applyTreeDiff(prev, diffTrees(prev, next))).toStrictEqual(next);
      }),
      { numRuns: 500 },
    );
  });

  it("the diff of a tree against itself is empty", () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        expect(treeDiffText(diffTrees(tree, copyTree(tree)))).toBe("(no changes)");
      }),
    );
  });
});

const SETTINGS = UNCAPPED_NORMALIZE_SETTINGS;

describe("web / android / os normalizers", () => {
  it("web: full trees as observations, diffs in meta; with tree_target diff the other way round", async () => {
    const t = trajectories(await collect(browserGymReader.read(WEB_EPISODES[0] as string, OPTIONS)))[0] as Trajectory;
    const counters: Counters = new Map();
    const full = await webNormalizer.normalize(t, SETTINGS, counters);
    const trees = [t.initialObservation as string, ...t.turns.map((turn) => turn.observation)].map((text) =>
      collapseEmptyWrappers(parseAxTree(text)),
    );
    expect(full.initialObservation).toBe(canonicalTreeText(trees[0] as A11yNode, { collapseEmptyWrappers: false }));
    // data/demo/web/stockroom.add-item__experiment_analysis.md, step 0: "\t\t[7] button 'Menu', hasPopup='menu', expanded=False".
    expect(full.initialObservation?.split("\n").slice(0, 3)).toEqual([
      'RootWebArea "Inventory | Stockroom" focused url=http://stockroom.test/#/items',
      "  [6] banner",
      '    [7] button "Menu" expanded=False hasPopup=menu',
    ]);
    full.turns.forEach((turn, i) => {
      expect(turn.observation).toBe(canonicalTreeText(trees[i + 1] as A11yNode, { collapseEmptyWrappers: false }));
      expect(turn.meta?.tree_diff).toBe(treeDiffText(diffTrees(trees[i] as A11yNode, trees[i + 1] as A11yNode)));
      expect(turn.action).toBe(t.turns[i]?.action);
    });
    expect(counters.get("tree.observations")).toBe(9);
    expect(counters.get("tree.nodes")).toBeGreaterThan(300);
    expect(counters.get("tree.diff_added")).toBeGreaterThan(0);

    const diffed = await webNormalizer.normalize(t, { ...SETTINGS, tree_target: "diff" }, new Map());
    expect(diffed.turns.map((turn) => turn.observation)).toEqual(full.turns.map((turn) => turn.meta?.tree_diff));
    expect(diffed.turns.map((turn) => turn.meta?.tree_full)).toEqual(full.turns.map((turn) => turn.observation));
    // click('7') on the Menu button: the menu and its three items appear, the button is focused and expanded.
    expect(diffed.turns[0]?.observation).toBe(
      [
        '+ 8 in 6 at 1: menu "Main menu" orientation=vertical',
        '+ 9 in 8 at 0: menuitem "Inventory"',
        '+ 10 in 8 at 1: menuitem "New item"',
        '+ 11 in 8 at 2: menuitem "Tickets"',
        '~ 7: button "Menu" controls=menu expanded=True focused hasPopup=menu',
      ].join("\n"),
    );
    // send_msg_to_user leaves the page as it was.
    expect(diffed.turns[7]?.observation).toBe("(no changes)");
  });

  it("leaves observations that are not trees as they are, and diffs the next tree against the empty tree", async () => {
    const t: Trajectory = {
      id: "x",
      domain: "web",
      source: { uri: "x", format: "canonical-jsonl" },
      turns: [
        { action: "a", observation: "RootWebArea 'One'" },
        { action: "b", observation: "The page did not load." },
        { action: "c", observation: "RootWebArea 'One'" },
      ],
    };
    const counters: Counters = new Map();
    const out = await webNormalizer.normalize(t, { ...SETTINGS, tree_target: "diff" }, counters);
    expect(out.turns.map((turn) => turn.observation)).toEqual([
      '+ RootWebArea at root: RootWebArea "One"',
      "The page did not load.",
      '+ RootWebArea at root: RootWebArea "One"',
    ]);
    expect(counters.get("tree.unparsed")).toBe(1);
  });

  it("android and os: canonical trees for dumps, DroidBot states, AT-SPI XML and OSWorld tables", async () => {
    const [dumps] = trajectories(await collect(uiautomatorReader.read(DUMPS, OPTIONS))) as Trajectory[];
    const out = await androidNormalizer.normalize(dumps as Trajectory, SETTINGS, new Map());
    // data/demo/android/quicknotes.add-note.window_dumps.xml, first dump: the window's decor views (the
    // LinearLayout between the two FrameLayouts has nothing of its own and one child: collapsed), the toolbar.
    expect(out.initialObservation?.split("\n").slice(0, 6)).toEqual([
      "hierarchy rotation=0",
      "  android.widget.FrameLayout package=org.example.quicknotes bounds=[0,0][1080,2340]",
      "    android.widget.FrameLayout resource-id=android:id/content bounds=[0,63][1080,2340]",
      "      android.view.ViewGroup resource-id=org.example.quicknotes:id/toolbar bounds=[0,63][1080,210]",
      '        android.widget.TextView "Quick Notes" bounds=[42,100][400,173]',
      '        android.widget.ImageButton clickable content-desc="Search notes" focusable resource-id=org.example.quicknotes:id/action_search bounds=[933,84][1059,189]',
    ]);
    // Typing the title changes that one EditText and nothing else, in both formats (DroidBot also says "editable").
    const typed = await androidNormalizer.normalize(dumps as Trajectory, { ...SETTINGS, tree_target: "diff" }, new Map());
    expect(typed.turns[1]?.observation).toBe(
      '~ org.example.quicknotes:id/title_input: android.widget.EditText "Water the plants" clickable focusable focused long-clickable resource-id=org.example.quicknotes:id/title_input bounds=[42,231][1038,357]',
    );
    // The demo's DroidBot run is one trajectory; its second event types the title.
    const [run] = trajectories(await collect(droidBotReader.read(join(ANDROID, "event_2026-01-15_120005.json"), OPTIONS)));
    const transition = await androidNormalizer.normalize(run as Trajectory, { ...SETTINGS, tree_target: "diff" }, new Map());
    expect(transition.turns[1]?.observation).toBe(
      '~ org.example.quicknotes:id/title_input: android.widget.EditText "Water the plants" clickable editable focusable focused long-clickable resource-id=org.example.quicknotes:id/title_input bounds=[42,231][1038,357]',
    );
    const settings: Trajectory = {
      id: "a",
      domain: "android",
      source: { uri: "x", format: "canonical-jsonl" },
      turns: [{ action: "", observation: readFileSync(DROIDBOT_2016_STATE, "utf8") }],
    };
    expect((await androidNormalizer.normalize(settings, SETTINGS, new Map())).turns[0]?.observation).toBe(
      [
        "hierarchy foreground_activity=org.example.settings/.WifiActivity",
        "  android.widget.FrameLayout package=org.example.settings bounds=[0,0][1080,2340]",
        "    android.widget.LinearLayout resource-id=org.example.settings:id/wifi_panel bounds=[0,63][1080,2340]",
        '      android.widget.TextView "Wi-Fi" resource-id=org.example.settings:id/title bounds=[42,100][400,173]',
        '      android.widget.Switch checkable checked clickable content-desc="Use Wi-Fi" focusable resource-id=org.example.settings:id/wifi_switch bounds=[891,315][1038,462]',
        '      android.widget.TextView "Connected to HomeNet" resource-id=org.example.settings:id/status bounds=[42,504][1038,567]',
      ].join("\n"),
    );

    const [gedit, chrome] = trajectories(await collect(osA11yReader.read(OS_JSONL, OPTIONS))) as Trajectory[];
    const os = await osNormalizer.normalize(gedit as Trajectory, { ...SETTINGS, tree_target: "diff" }, new Map());
    expect(os.turns[0]?.observation).toBe(
      "~ view: text attr:id=view st:editable st:enabled st:focusable st:focused st:multi-line st:showing st:visible bounds=[70,78][1905,1048]",
    );
    expect(os.turns[2]?.observation.split("\n")[0]).toBe(
      '+ desktop-frame/application[1]/dialog[0] in desktop-frame/application[1] at 1: dialog "Save As" st:active st:modal st:showing st:visible bounds=[560,240][1360,840]',
    );
    const table = await osNormalizer.normalize(chrome as Trajectory, SETTINGS, new Map());
    expect(table.turns[0]?.observation.split("\n").slice(0, 2)).toEqual([
      "table",
      '  push-button "Back" description="Go back" bounds=[12,44][46,78]',
    ]);
  });
});

describe("text-only normalization (curation's signatures)", () => {
  it("gives the same turns' text as a whole normalization, for every tree domain and target, without meta's other form", async () => {
    const [web] = trajectories(await collect(browserGymReader.read(WEB_EPISODES[0] as string, OPTIONS)));
    const [dumps] = trajectories(await collect(uiautomatorReader.read(DUMPS, OPTIONS)));
    const os = trajectories(await collect(osA11yReader.read(OS_JSONL, OPTIONS)));
    const cases = [[webNormalizer, web], [androidNormalizer, dumps], ...os.map((t) => [osNormalizer, t] as const)] as const;
    expect(cases.length).toBeGreaterThanOrEqual(4);
    for (const [normalizer, trajectory] of cases)
      for (const tree_target of ["full", "diff"] as const) {
        const settings = { ...SETTINGS, tree_target };
        const whole = await normalizer.normalize(trajectory as Trajectory, settings, new Map());
        const textOnly = await normalizer.normalize(trajectory as Trajectory, settings, new Map(), { textOnly: true });
        const text = (t: Trajectory) => [t.initialObservation, ...t.turns.flatMap((turn) => [turn.action, turn.observation])];
        expect(text(textOnly)).toEqual(text(whole));
        // What is skipped: the diff that only the records stage keeps (turn.meta.tree_diff).
        if (tree_target === "full") {
          expect(whole.turns.some((turn) => turn.meta?.tree_diff !== undefined)).toBe(true);
          expect(textOnly.turns.every((turn) => turn.meta?.tree_diff === undefined)).toBe(true);
        } else expect(textOnly.turns.map((turn) => turn.meta)).toEqual(whole.turns.map((turn) => turn.meta));
      }
  });
});

describe("parsing without keys (text-only normalization)", () => {
  it("gives the same tree with every key left empty, for every tree parser", async () => {
    const [web] = trajectories(await collect(browserGymReader.read(WEB_EPISODES[0] as string, OPTIONS)));
    const [dumps] = trajectories(await collect(uiautomatorReader.read(DUMPS, OPTIONS)));
    const os = trajectories(await collect(osA11yReader.read(OS_JSONL, OPTIONS)));
    const observations = (t: Trajectory | undefined) =>
      [t?.initialObservation, ...(t?.turns ?? []).map((turn) => turn.observation)].filter((o) => o !== undefined);
    const parsers: [string, (text: string, options?: TreeParseOptions) => A11yNode, string[]][] = [
      ["browsergym", parseAxTree, observations(web)],
      ["uiautomator", parseUiautomatorXml, observations(dumps)],
      ["os", parseOsObservation, os.flatMap(observations)],
    ];
    const keysOf = (root: A11yNode) => [...preorder(root)].map((node) => node.key);
    const withoutKeys = (node: A11yNode): A11yNode => ({ ...node, key: "", children: node.children.map(withoutKeys) });
    for (const [name, parse, texts] of parsers) {
      expect(texts.length, name).toBeGreaterThan(1);
      for (const text of texts) {
        const keyed = parse(text);
        const unkeyed = parse(text, { keys: false });
        expect(
          keysOf(keyed).every((key) => key !== ""),
          name,
        ).toBe(true);
        expect(
          keysOf(unkeyed).every((key) => key === ""),
          name,
        ).toBe(true);
        expect(unkeyed).toStrictEqual(withoutKeys(keyed));
      }
    }
  });
});

describe("TreeSequenceDiff (each tree flattened once)", () => {
  it("gives diffTrees of each tree against the one before, across resets, for random edit sequences", () => {
    fc.assert(
      fc.property(treeArb, fc.array(fc.option(fc.array(editArb, { maxLength: 6 }), { nil: null }), { maxLength: 8 }), (first, steps) => {
        const sequence = new TreeSequenceDiff();
        sequence.reset(first);
        let previous: A11yNode | null = first;
        let current = first;
        for (const edits of steps) {
          // null: an observation that did not parse, after which diffs start from the empty tree.
          if (edits === null) {
            sequence.reset(null);
            previous = null;
            continue;
          }
          current = edited(current, edits);
          expect(sequence.next(current)).toStrictEqual(diffTrees(previous, current));
          previous = current;
        }
      }),
      { numRuns: 300 },
    );
  });
});
