/**
 * Tree normalization and diffs on the third-party samples in ../shared/fixtures/real/{web,android}
 * (see test/third-party/support.ts), with the values a person read from those files.
 * test/tree-diff.test.ts covers the same on the project's own recordings and on random trees.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Trajectory } from "../../src/core/trajectory.ts";
import { androidNormalizer } from "../../src/normalize/domains/android.ts";
import { webNormalizer } from "../../src/normalize/domains/web.ts";
import type { Counters } from "../../src/normalize/normalizer.ts";
import { type A11yNode, canonicalTreeText, collapseEmptyWrappers } from "../../src/normalize/tree/a11y-tree.ts";
import { applyTreeDiff, diffTrees, treeDiffText } from "../../src/normalize/tree/tree-diff.ts";
import { browserGymReader, parseAxTree } from "../../src/read/browsergym.ts";
import { parseDroidBotState } from "../../src/read/droidbot.ts";
import type { ReadItem } from "../../src/read/reader.ts";
import { parseUiautomatorXml } from "../../src/read/uiautomator-xml.ts";
import { collect, UNCAPPED_NORMALIZE_SETTINGS } from "../helpers.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
const BROWSERGYM = thirdParty("web/browsergym/workarena.all-menu_4__experiment_analysis.md");
const DUMP = thirdParty("android/mobile-env/window_dump.example.xml");
const DROIDBOT = thirdParty("android/droidbot");
const SETTINGS = UNCAPPED_NORMALIZE_SETTINGS;

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));

/** The tree sequences among the samples: web (4 AXTrees), android (a dump, 2 DroidBot states). */
async function sampleSequences(): Promise<[string, A11yNode[]][]> {
  const [web] = trajectories(await collect(browserGymReader.read(BROWSERGYM, OPTIONS)));
  const states = readdirSync(DROIDBOT)
    .filter((name) => name.includes("device_state"))
    .sort();
  return [
    ["browsergym", [web?.initialObservation as string, ...(web?.turns ?? []).map((t) => t.observation)].map((text) => parseAxTree(text))],
    ["uiautomator", [parseUiautomatorXml(readFileSync(DUMP, "utf8"))]],
    ["droidbot", states.map((name) => parseDroidBotState(readFileSync(join(DROIDBOT, name), "utf8")))],
  ];
}

function expectRoundTrip(prev: A11yNode | null, next: A11yNode | null): void {
  const diff = diffTrees(prev, next);
  expect(applyTreeDiff(prev, diff)).toStrictEqual(next);
}

describeThirdParty("tree diff", () => {
  it("round-trips every sample: each tree from the empty tree, each against the next, with and without collapsed wrappers", async () => {
    const sequences = await sampleSequences();
    expect(sequences.map(([name, trees]) => [name, trees.length])).toEqual([
      ["browsergym", 4],
      ["uiautomator", 1],
      ["droidbot", 2],
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
    // Across samples and domains: unrelated trees, shared path keys.
    const all = sequences.flatMap(([, trees]) => trees);
    for (const a of all) for (const b of all) expectRoundTrip(a, b);
  });
});

describeThirdParty("web / android normalizers", () => {
  it("web: full trees as observations, diffs in meta; with tree_target diff the other way round", async () => {
    const t = trajectories(await collect(browserGymReader.read(BROWSERGYM, OPTIONS)))[0] as Trajectory;
    const counters: Counters = new Map();
    const full = await webNormalizer.normalize(t, SETTINGS, counters);
    const trees = [t.initialObservation as string, ...t.turns.map((turn) => turn.observation)].map((text) =>
      collapseEmptyWrappers(parseAxTree(text)),
    );
    expect(full.initialObservation).toBe(canonicalTreeText(trees[0] as A11yNode, { collapseEmptyWrappers: false }));
    expect(full.initialObservation?.split("\n")[1]).toBe('  [47] generic atomic live=assertive relevant="additions text"');
    full.turns.forEach((turn, i) => {
      expect(turn.observation).toBe(canonicalTreeText(trees[i + 1] as A11yNode, { collapseEmptyWrappers: false }));
      expect(turn.meta?.tree_diff).toBe(treeDiffText(diffTrees(trees[i] as A11yNode, trees[i + 1] as A11yNode)));
      expect(turn.action).toBe(t.turns[i]?.action);
    });
    expect(counters.get("tree.observations")).toBe(4);
    expect(counters.get("tree.nodes")).toBeGreaterThan(500);
    expect(counters.get("tree.diff_added")).toBeGreaterThan(0);

    const diffed = await webNormalizer.normalize(t, { ...SETTINGS, tree_target: "diff" }, new Map());
    expect(diffed.turns.map((turn) => turn.observation)).toEqual(full.turns.map((turn) => turn.meta?.tree_diff));
    expect(diffed.turns.map((turn) => turn.meta?.tree_full)).toEqual(full.turns.map((turn) => turn.observation));
    expect(diffed.turns[0]?.observation.split("\n")[0]).toBe(
      '+ 215 in RootWebArea at 4: region "There are 0 announcements displayed" live=polite relevant="additions text"',
    );
  });

  it("android: canonical trees for the Mobile-Env dump and a DroidBot 2016 state", async () => {
    const dump = readFileSync(DUMP, "utf8");
    const state = readFileSync(join(DROIDBOT, "2016_paypal__device_state_2016-07-15_212930.json"), "utf8");
    const android: Trajectory = {
      id: "a",
      domain: "android",
      source: { uri: "x", format: "canonical-jsonl" },
      turns: [
        { action: "", observation: dump },
        { action: "back", observation: state },
      ],
    };
    const out = await androidNormalizer.normalize(android, SETTINGS, new Map());
    expect(out.turns[0]?.observation.split("\n").slice(0, 3)).toEqual([
      "hierarchy rotation=0",
      "  android.widget.FrameLayout package=com.google.android.gm bounds=[0,0][1080,1794]",
      "    android.widget.LinearLayout resource-id=com.google.android.gm:id/action_bar_root bounds=[0,63][1080,1794]",
    ]);
    expect(out.turns[1]?.observation).toBe(
      [
        "hierarchy foreground_activity=com.paypal.android.p2pmobile/.activity.FirstTimeUseCarouselActivity",
        "  android.widget.LinearLayout package=com.gnom.anton bounds=[131,669][949,1178]",
        '    android.widget.TextView "\\nAction required.\\n\\nThis is system application.\\n\\n   You must activate device administator.   \\n" resource-id=com.gnom.anton:id/promo bounds=[143,675][937,1028]',
        '    android.widget.Button "OK" clickable focusable resource-id=com.gnom.anton:id/ZBLK bounds=[143,1028][937,1172]',
      ].join("\n"),
    );
  });
});
