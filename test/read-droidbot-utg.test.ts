/**
 * The DroidBot utg.js reader (src/read/droidbot-utg.ts) on the hand-written run in
 * test/fixtures/handmade/droidbot-utg/ (written from honeynet/droidbot's utg.py and device_state.py;
 * see the README there), on broken variants built here, and on the shared Yelp utg.js (read in place).
 */
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { QuarantineEntry } from "../src/core/errors.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { parseAndroidObservation } from "../src/normalize/domains/android.ts";
import { canonicalTreeText } from "../src/normalize/tree/a11y-tree.ts";
import { droidBotUtgReader } from "../src/read/droidbot-utg.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/droidbot-utg");
const RUN = join(HANDMADE, "run-2026-02-03");
const UTG = join(RUN, "utg.js");

const read = (path: string) => collect(droidBotUtgReader.read(path, OPTIONS));
const tree = (text: string, format: unknown) => canonicalTreeText(parseAndroidObservation(text, format), { collapseEmptyWrappers: false });

async function only(path: string): Promise<Trajectory> {
  const items = await read(path);
  expect(items.filter((i) => i.kind === "quarantine")).toEqual([]);
  expect(items).toHaveLength(1);
  return (items[0] as Extract<ReadItem, { kind: "trajectory" }>).trajectory;
}

async function quarantine(path: string): Promise<QuarantineEntry> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  const [item] = items;
  if (item?.kind !== "quarantine") throw new Error(`expected a quarantine entry, got ${JSON.stringify(item)}`);
  return item.entry;
}

const UTG_OBJECT = JSON.parse(readFileSync(UTG, "utf8").replace(/^var utg = \n/, "")) as {
  nodes: Record<string, unknown>[];
  edges: { from: string; to: string; events: Record<string, unknown>[] }[];
};
const writeUtg = (utg: unknown, text?: string) => {
  const path = join(tempDir("lwm-utg-"), "utg.js");
  writeFileSync(path, text ?? `var utg = \n${JSON.stringify(utg, null, 2)}`);
  return path;
};
const clone = () => structuredClone(UTG_OBJECT);
const [A, B, C, D] = [
  "72c251ec532fc2d3556f35989e683a4a",
  "b77445cde36393762bfdc78b2247c21f",
  "05338631a6f18118a5765f3cbbc0be22",
  "80a02f3957b355eba2be126cd290e899",
];

describe("droidbot-utg: the hand-made run", () => {
  it("replays the edges' events in event_id order (not file order); the target state is each observation", async () => {
    const t = await only(UTG);
    expect(t.id).toMatch(/^droidbot-utg-[0-9a-f]{16}$/);
    expect(t.domain).toBe("android");
    expect(t.task).toBeUndefined();
    expect(t.turns.map((x) => [x.meta?.event_id, JSON.parse(x.action).name, x.meta?.state_str])).toEqual([
      [1, "touch", B],
      [2, "touch", C],
      [3, "key", B],
      [4, "touch", D],
      [5, "intent", A],
      [6, "touch", C],
    ]);
    expect(t.turns[2]?.action).toBe(`{"name":"key","arguments":{"event":"KeyEvent(state=${C}, name=BACK)"}}`);
    // Event 6 starts from B while event 5 ended in A: the jump is marked, not hidden.
    expect(t.turns.map((x) => x.meta?.start_differs ?? false)).toEqual([false, false, false, false, false, true]);
    expect(t.turns[5]?.meta?.start_state_str).toBe(B);
    expect(t.meta).toMatchObject({
      initial_tree_format: "droidbot-state",
      event_order: "event_id",
      discontinuities: 1,
      app_package: "org.example.notes",
      device_sdk_version: 30,
      test_date: "2026-02-03 10:15:00",
    });
  });

  it("uses the run's states/state_<tag>.json as the tree where it is there, the node's description where not", async () => {
    const t = await only(UTG);
    expect(t.turns[0]?.meta?.tree_format).toBe("droidbot-state");
    expect(tree(t.turns[0]?.observation as string, t.turns[0]?.meta?.tree_format)).toBe(
      [
        "hierarchy foreground_activity=org.example.notes/org.example.notes.ListActivity",
        "  android.widget.FrameLayout package=org.example.notes resource-id=android:id/content bounds=[0,0][1080,1920]",
        '    android.widget.TextView "Shopping list" clickable resource-id=org.example.notes:id/item bounds=[40,100][1040,190]',
        '    android.widget.TextView "Settings" clickable resource-id=org.example.notes:id/settings bounds=[40,200][1040,290]',
      ].join("\n"),
    );
    expect(tree(t.initialObservation as string, t.meta?.initial_tree_format)).toContain('android.widget.Button "New note" clickable');
    // D has no state file: its node's content, without the state hashes.
    expect(t.turns[3]?.meta).toEqual({ observation_format: "droidbot-utg-node", state_str: D, event_id: 4 });
    expect(t.turns[3]?.observation).toBe(
      [
        "package: org.example.notes",
        "activity: .SettingsActivity",
        "resource ids: org.example.notes:id/dark,android:id/content",
        "texts: Dark theme",
      ].join("\n"),
    );
  });

  it("a state file whose state_str is not the node's is not used", async () => {
    const dir = tempDir("lwm-utg-run-");
    cpSync(RUN, dir, { recursive: true });
    const statePath = join(dir, "states/state_2026-02-03_101503.json");
    writeFileSync(statePath, readFileSync(statePath, "utf8").replace(B, "0".repeat(32)));
    const t = await only(join(dir, "utg.js"));
    expect(t.turns[0]?.meta?.observation_format).toBe("droidbot-utg-node");
    expect(t.turns[0]?.observation.split("\n")[1]).toBe("activity: .ListActivity");
    expect(t.turns[1]?.meta?.tree_format).toBe("droidbot-state");
  });

  it("claims the run's states/ folder as its companions (a glob reads the run once); none without one", async () => {
    const companions = await droidBotUtgReader.companions?.(UTG);
    expect(companions?.dirs).toEqual([join(RUN, "states")]);
    expect(companions?.files).toEqual([]);
    const sizes = [UTG, ...readdirSync(join(RUN, "states")).map((n) => join(RUN, "states", n))].map((p) => statSync(p).size);
    expect(companions?.bytes).toBe(sizes.reduce((a, b) => a + b, 0));
    expect((await droidBotUtgReader.companions?.(writeUtg(UTG_OBJECT)))?.dirs).toEqual([]);
  });

  it("without event ids the file's order is kept (and said so)", async () => {
    const utg = clone();
    for (const edge of utg.edges) for (const event of edge.events) delete event.event_id;
    const t = await only(writeUtg(utg));
    expect(t.meta?.event_order).toBe("file");
    expect(t.turns.map((x) => x.meta?.state_str)).toEqual([C, C, B, B, D, A]);
  });
});

describe("droidbot-utg: broken input", () => {
  it("quarantines with the reason and field: prefix, JSON, unknown state, event without event_str, mixed ids, no edges", async () => {
    const push = async (path: string, reason: string, field?: string) => {
      const q = await quarantine(path);
      expect(q.reason, reason).toContain(reason);
      expect(q.field, reason).toBe(field);
    };
    await push(writeUtg(null, JSON.stringify(UTG_OBJECT)), "not a DroidBot utg.js: it does not start with `var utg =`");
    await push(writeUtg(null, `var utg = \n${JSON.stringify(UTG_OBJECT).slice(0, 500)}`), "the utg object: invalid JSON");
    const unknown = clone();
    (unknown.edges[0] as { to: string }).to = "ffff";
    await push(writeUtg(unknown), "edges.0.to: state ffff is not among the nodes", "edges.0.to");
    const noStr = clone();
    delete (noStr.edges[1] as { events: Record<string, unknown>[] }).events[0]?.event_str;
    await push(writeUtg(noStr), "edges.1.events.0: expected an event with an event_str, got an object", "edges.1.events.0");
    const mixed = clone();
    delete (mixed.edges[2] as { events: Record<string, unknown>[] }).events[0]?.event_id;
    await push(
      writeUtg(mixed),
      "edges.2.events.0: no event_id while other events have one, so its place is unknown",
      "edges.2.events.0.event_id",
    );
    const empty = clone();
    empty.edges = [];
    await push(writeUtg(empty), "the graph has no transition: nothing observed after an action", "edges");
    const badNodes = clone() as unknown as Record<string, unknown>;
    badNodes.nodes = "x";
    await push(writeUtg(badNodes), "nodes: expected a list of states, got a string", "nodes");
  });

  it("a trailing semicolon and a BOM are read", async () => {
    const t = await only(writeUtg(null, `\uFEFFvar utg = ${JSON.stringify(UTG_OBJECT)};\n`));
    expect(t.turns).toHaveLength(6);
  });
});

describe("droidbot-utg: detection", () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    });

  it("claims utg.js and no existing reader does; DroidBot's own state files stay the droidbot reader's", async () => {
    const head = await readHead(UTG);
    expect(droidBotUtgReader.sniff(head, UTG)).toBe(true);
    expect(READERS.filter((r) => r.sniff(head, UTG)).map((r) => r.name)).toEqual(["droidbot-utg"]);
    for (const name of readdirSync(join(RUN, "states"))) {
      const path = join(RUN, "states", name);
      const stateHead = await readHead(path);
      expect(droidBotUtgReader.sniff(stateHead, path)).toBe(false);
      expect(READERS.find((r) => r.sniff(stateHead, path))?.name).toBe("droidbot");
    }
  });

  it("does not claim the existing readers' fixtures (handmade, data/demo)", async () => {
    const inputs = [...files(join(ROOT, "test/fixtures/handmade")), ...files(join(ROOT, "data/demo"))].filter(
      (p) => !p.startsWith(HANDMADE),
    );
    const claimed: string[] = [];
    for (const path of inputs) if (droidBotUtgReader.sniff(await readHead(path), path)) claimed.push(path);
    expect(claimed).toEqual([]);
  });
});

describeThirdParty("droidbot-utg on DroidBot's Yelp report (utg.js only, 2017)", () => {
  const SAMPLE = thirdParty("formats-2026/android/droidbot__report_com.yelp.android__utg.js");

  it("reads 30 touch events as one chain in event_id order, each observing its target node", async () => {
    const t = await only(SAMPLE);
    expect(t.turns).toHaveLength(30);
    expect(t.turns.map((x) => x.meta?.event_id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(t.meta).toMatchObject({
      event_order: "event_id",
      discontinuities: 0,
      app_package: "com.yelp.android",
      num_effective_events: 30,
    });
    expect(t.turns[0]?.action).toBe('{"name":"touch","arguments":{"event":"TouchEvent(view=7372ea818be56266b763c25a833835f3)"}}');
    expect(t.turns[0]?.meta).toEqual({
      observation_format: "droidbot-utg-node",
      state_str: "f899ce8e97714e110559a35d4e3d1b21",
      event_id: 1,
    });
    expect(t.turns[0]?.observation.split("\n").slice(0, 2)).toEqual([
      "package: com.yelp.android",
      "activity: .ui.activities.ActivitySplashLogin",
    ]);
    expect(t.initialObservation?.split("\n")).toEqual([
      "package: com.yelp.android",
      "activity: .ui.activities.backgroundlocation.ActivityBackgroundLocationOptIn",
      expect.stringMatching(/^resource ids: com\.yelp\.android:id\/yelp_logo,/),
      "texts: No, not now,When you are near an interesting business or event, we'll send a push notification.,Yes, turn it on,Enable Background Location Access",
    ]);
    expect(String(t.turns.at(-1)?.meta?.state_str).startsWith("138b50")).toBe(true);
  });

  it("is claimed by this reader and no other; this reader claims none of the other android samples", async () => {
    const head = await readHead(SAMPLE);
    expect(droidBotUtgReader.sniff(head, SAMPLE)).toBe(true);
    expect(READERS.filter((r) => r.sniff(head, SAMPLE)).map((r) => r.name)).toEqual(["droidbot-utg"]);
    for (const dir of ["android/droidbot", "android/mobile-env"])
      for (const name of readdirSync(thirdParty(dir))) {
        const path = thirdParty(dir, name);
        expect(droidBotUtgReader.sniff(await readHead(path), path), path).toBe(false);
      }
  });
});
