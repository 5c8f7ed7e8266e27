/**
 * The AndroidControl reader (src/read/android-control.ts) on the hand-written fixtures in
 * test/fixtures/handmade/android-control/ (written from google-research's android_control README
 * and android_env's a11y protos; see the README there) and on broken variants built here. There is
 * no shared real sample of this format.
 */
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { QuarantineEntry } from "../src/core/errors.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { parseAndroidObservation } from "../src/normalize/domains/android.ts";
import { canonicalTreeText } from "../src/normalize/tree/a11y-tree.ts";
import { androidControlReader, forestDump, parseProtoText } from "../src/read/android-control.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { MAX_DUMP_DEPTH } from "../src/read/uiautomator-render.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/android-control");
const JSONL = join(HANDMADE, "episodes.jsonl");
const ARRAY = join(HANDMADE, "episodes.json");

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const read = (path: string) => collect(androidControlReader.read(path, OPTIONS));
const tree = (text: string) => canonicalTreeText(parseAndroidObservation(text, "uiautomator-xml"), { collapseEmptyWrappers: false });

function writeTemp(name: string, content: string | Buffer): string {
  const path = join(tempDir("lwm-actl-"), name);
  writeFileSync(path, content);
  return path;
}

const FOREST = {
  windows: [
    {
      tree: {
        nodes: [
          { uniqueId: 0, className: "android.widget.FrameLayout", packageName: "p", isEnabled: true, childIds: [1] },
          {
            uniqueId: 1,
            className: "android.widget.Button",
            packageName: "p",
            text: "OK",
            isClickable: true,
            isEnabled: true,
            boundsInScreen: { left: 10, top: 20, right: 110, bottom: 80 },
          },
        ],
      },
    },
  ],
};
const episode = (extra: Record<string, unknown> = {}) => ({
  episode_id: 7,
  goal: "Press OK",
  accessibility_trees: [FOREST, FOREST],
  actions: ['{"action_type":"click","x":60,"y":50}'],
  step_instructions: ["Press OK"],
  ...extra,
});

describe("android-control: hand-made fixtures", () => {
  it("reads JSONL episodes: actions as canonical JSON, the tree after each action, the goal, the step instruction", async () => {
    const items = await read(JSONL);
    expect(quarantined(items)).toEqual([]);
    const [a, b] = trajectories(items) as [Trajectory, Trajectory];
    expect(items).toHaveLength(2);
    expect([a.id, a.domain, a.task]).toEqual(["1042", "android", "Add an alarm labelled Wake up in the Clock app"]);
    expect(a.turns.map((t) => t.action)).toEqual([
      '{"name":"click","arguments":{"x":540,"y":2070}}',
      '{"name":"input_text","arguments":{"text":"Wake up"}}',
    ]);
    expect(a.turns[0]?.meta).toEqual({
      tree_format: "uiautomator-xml",
      screenshot: "screens/1042-1.png",
      screen_size: [1080, 2400],
      step_instruction: "Tap the add alarm button",
    });
    expect(a.meta).toEqual({
      initial_tree_format: "uiautomator-xml",
      initial_screenshot: "screens/1042-0.png",
      initial_screen_size: [1080, 2400],
    });
    // Flags as a uiautomator dump shows them: set ones, and enabled / visible-to-user only when false.
    expect(tree(a.initialObservation as string)).toBe(
      [
        "hierarchy rotation=0",
        "  android.widget.FrameLayout package=com.google.android.deskclock bounds=[0,0][1080,2400]",
        '    android.widget.TextView "Clock" resource-id=com.google.android.deskclock:id/title bounds=[40,100][400,160]',
        '    android.widget.ImageButton clickable content-desc="Add alarm" focusable resource-id=com.google.android.deskclock:id/fab bounds=[470,2000][610,2140]',
      ].join("\n"),
    );
    expect(tree(a.turns[1]?.observation as string)).toContain(
      '    android.widget.EditText "Wake up" clickable editable focusable focused resource-id=com.google.android.deskclock:id/label',
    );

    // Protobuf text format: octal UTF-8 escapes, quoted quotes, a list child_ids, two windows.
    expect(b.id).toBe("2077");
    expect(tree(b.initialObservation as string)).toBe(
      [
        "hierarchy rotation=0",
        "  android.widget.FrameLayout package=com.android.settings bounds=[0,0][1080,2400]",
        '    android.widget.TextView "Network & internet" clickable bounds=[0,200][1080,320]',
        '    android.widget.TextView "Café \\"Wi-Fi\\"" clickable bounds=[0,320][1080,440]',
      ].join("\n"),
    );
    expect(tree(b.turns[0]?.observation as string)).toBe(
      [
        "hierarchy rotation=0",
        // proto3 leaves a false boolean unset: is_visible_to_user absent reads as false, not as the default true.
        "  android.widget.FrameLayout package=com.android.settings visible-to-user=false bounds=[0,0][1080,2400]",
        '    android.widget.Switch "Airplane mode" checkable clickable visible-to-user=false bounds=[0,200][1080,320]',
        '  android.widget.FrameLayout content-desc="Navigation bar" package=com.android.systemui visible-to-user=false',
      ].join("\n"),
    );
    expect(b.turns.map((t) => t.action)).toEqual(['{"name":"scroll","arguments":{"direction":"down"}}']);
    expect(b.meta?.unobserved_final_action).toBe('{"name":"wait","arguments":{}}');
  });

  it("reads a JSON array: action objects, snake_case proto JSON strings, one tree per action (the last unobserved)", async () => {
    const items = await read(ARRAY);
    expect(quarantined(items)).toEqual([]);
    const [c, d] = trajectories(items) as [Trajectory, Trajectory];
    expect(c.source).toMatchObject({ row: 0 });
    expect(d.source).toMatchObject({ row: 1 });
    expect(c.turns.map((t) => t.action)).toEqual([
      '{"name":"open_app","arguments":{"app_name":"Clock"}}',
      '{"name":"long_press","arguments":{"x":100,"y":130}}',
    ]);
    expect(c.meta).toMatchObject({
      unobserved_final_action: '{"name":"navigate_back","arguments":{}}',
      unobserved_final_step_instruction: "Go back",
    });
    expect(tree(c.turns[1]?.observation as string)).toContain('android.widget.EditText "Wake up"');
    expect(d.turns.map((t) => t.action)).toEqual(['{"name":"navigate_home","arguments":{}}']);
    expect(d.task).toBe("Go home");
  });

  it("the same episodes gzipped read the same", async () => {
    const { readFileSync } = await import("node:fs");
    const gz = writeTemp("episodes.jsonl.gz", gzipSync(readFileSync(JSONL)));
    const strip = (items: ReadItem[]) => trajectories(items).map((t) => ({ ...t, source: undefined }));
    expect(strip(await read(gz))).toEqual(strip(await read(JSONL)));
  });
});

describe("android-control: broken and hostile input", () => {
  it("quarantines an episode naming the field: tree count, action JSON, action_type, trees missing, a bad tree", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [
        episode({ accessibility_trees: [FOREST, FOREST, FOREST, FOREST] }),
        "accessibility_trees",
        "accessibility_trees: 4 trees for 1 actions (expected 2, one per screenshot)",
      ],
      [episode({ actions: ['{"action_type": "click", "x": 6'] }), "actions.0", "actions.0: not a JSON action"],
      [episode({ actions: ['{"x": 6}'] }), "actions.0", 'actions.0: expected an object with a string action_type, got {"x":6}'],
      [
        episode({ accessibility_trees: undefined }),
        "accessibility_trees",
        "accessibility_trees: expected a list of trees (one per screenshot), got nothing; screenshots alone are not read",
      ],
      [episode({ actions: [] }), "actions", "actions: the episode has no action"],
      [
        episode({ accessibility_trees: [FOREST, "windows { tree { nodes { unique_id: 0 "] }),
        "accessibility_trees.1",
        'accessibility_trees.1: protobuf text: missing "}"',
      ],
      [
        episode({ accessibility_trees: [FOREST, { windows: [] }] }),
        "accessibility_trees.1",
        "accessibility_trees.1: an AndroidAccessibilityForest with no windows",
      ],
      [
        episode({ accessibility_trees: [FOREST, 12] }),
        "accessibility_trees.1",
        "accessibility_trees.1: expected an AndroidAccessibilityForest, got a number",
      ],
      [
        episode({ accessibility_trees: [FOREST] }),
        "accessibility_trees",
        "the episode's one action has no tree after it: nothing observed",
      ],
    ];
    for (const [row, field, reason] of cases) {
      const items = await read(writeTemp("bad.jsonl", `${JSON.stringify(row)}\n`));
      expect(items, reason).toHaveLength(1);
      const [q] = quarantined(items) as [QuarantineEntry];
      expect(q?.field, reason).toBe(field);
      expect(q?.reason, reason).toContain(reason);
      expect(q?.id).toBe("7");
      expect(q?.source.line).toBe(1);
    }
  });

  it("a tree nested past the dump depth is refused at read time, not left for the normalizer; one 120 deep (WebView content) is read", async () => {
    const chain = (length: number) =>
      Array.from({ length }, (_, i) => ({ uniqueId: i, className: "v", childIds: i < length - 1 ? [i + 1] : [] }));
    const deep = (length: number) =>
      `${JSON.stringify(episode({ accessibility_trees: [FOREST, { windows: [{ tree: { nodes: chain(length) } }] }] }))}\n`;
    const refused = await read(writeTemp("deep.jsonl", deep(MAX_DUMP_DEPTH + 30)));
    expect(quarantined(refused)[0]?.reason).toBe(`accessibility_trees.1: windows.0: nodes nest deeper than ${MAX_DUMP_DEPTH} levels`);
    const read120 = await read(writeTemp("deep-120.jsonl", deep(120)));
    expect(quarantined(read120)).toEqual([]);
    // The rendered dump parses as the android normalizer parses it (a dump it cannot parse would stay as read).
    const trajectory = read120.find((item) => item.kind === "trajectory");
    const dump = trajectory?.kind === "trajectory" ? (trajectory.trajectory.turns.at(-1)?.observation ?? "") : "";
    expect(dump.split("<node").length - 1).toBe(120);
    expect(() => parseAndroidObservation(dump, "uiautomator-xml")).not.toThrow();
  });

  it("a child cycle is cut and a missing child id left out", () => {
    const forest = {
      windows: [
        {
          tree: {
            nodes: [
              { uniqueId: 0, className: "a", childIds: [1, 5] },
              { uniqueId: 1, className: "b", childIds: [0] },
            ],
          },
        },
      ],
    };
    // Node 0 and 1 name each other: neither is a root, so nothing is shown rather than looping.
    expect(tree(forestDump(forest))).toBe("hierarchy rotation=0");
    const rooted = {
      windows: [
        {
          tree: {
            nodes: [
              { uniqueId: 0, className: "a", childIds: [1, 5] },
              { uniqueId: 1, className: "b", childIds: [1] },
            ],
          },
        },
      ],
    };
    expect(tree(forestDump(rooted))).toBe(
      ["hierarchy rotation=0", "  a enabled=false visible-to-user=false", "    b enabled=false visible-to-user=false"].join("\n"),
    );
  });

  it("parses protobuf text format: nested messages with < >, lists, adjacent strings, escapes, comments", () => {
    expect(parseProtoText('a: 1 # c\nb < c: "x" "y" d: [1, 2] >\nb { e: \'\\x41\\101\\n\' f: ENUM g: true }')).toEqual({
      a: 1,
      b: [
        { c: "xy", d: [1, 2] },
        { e: "AA\n", f: "ENUM", g: true },
      ],
    });
    expect(() => parseProtoText("a: }")).toThrow('protobuf text: unexpected "}"');
  });

  it("JSON arrays: a non-object element and an empty object are quarantined; a cut array quarantines the break", async () => {
    const items = await read(writeTemp("mixed.json", JSON.stringify([episode(), 5, {}, episode({ episode_id: 8 })])));
    expect(items.map((i) => (i.kind === "trajectory" ? i.trajectory.id : i.kind === "quarantine" ? i.entry.reason : i.kind))).toEqual([
      "7",
      "element 1: expected a JSON object (an episode), got a number",
      "element 2: not an AndroidControl episode: no actions beside accessibility_trees or step_instructions",
      "8",
    ]);
    const whole = JSON.stringify([episode(), episode({ episode_id: 8 })]);
    const cut = await read(writeTemp("cut.json", whole.slice(0, whole.length - 40)));
    expect(cut.map((i) => i.kind)).toEqual(["trajectory", "quarantine"]);
    expect(quarantined(cut)[0]?.reason).toMatch(/^the JSON array breaks in or after element 1: invalid JSON/);
  });

  it("screenshot bytes inline are skipped (never in meta); paths are kept", async () => {
    const png = `iVBORw0KGgo${"A".repeat(5000)}`;
    const items = await read(writeTemp("inline.json", JSON.stringify([episode({ screenshots: [png, "shots/7-1.png"] })])));
    const [t] = trajectories(items) as [Trajectory];
    expect(t.meta?.initial_screenshot).toBeUndefined();
    expect(t.turns[0]?.meta?.screenshot).toBe("shots/7-1.png");
    expect(JSON.stringify(t)).not.toContain("iVBORw0KGgo");
  });
});

describe("android-control: detection", () => {
  const others = READERS.filter((reader) => reader.name !== androidControlReader.name);
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    });

  it("claims its fixtures, and no existing reader claims them", async () => {
    for (const path of [JSONL, ARRAY]) {
      const head = await readHead(path);
      expect(androidControlReader.sniff(head, path), path).toBe(true);
      expect(
        others.filter((r) => r.sniff(head, path)).map((r) => r.name),
        path,
      ).toEqual([]);
    }
  });

  it("does not claim the existing readers' fixtures (handmade, data/demo)", async () => {
    const inputs = [...files(join(ROOT, "test/fixtures/handmade")), ...files(join(ROOT, "data/demo"))].filter(
      (p) => !p.startsWith(HANDMADE),
    );
    const claimed: string[] = [];
    for (const path of inputs) if (androidControlReader.sniff(await readHead(path), path)) claimed.push(path);
    expect(claimed).toEqual([]);
  });
});

describeThirdParty("android-control does not claim the shared android samples", () => {
  it("claims none of them", async () => {
    const paths = [
      ...readdirSync(thirdParty("android/droidbot")).map((n) => thirdParty("android/droidbot", n)),
      ...readdirSync(thirdParty("android/mobile-env")).map((n) => thirdParty("android/mobile-env", n)),
      ...readdirSync(thirdParty("formats-2026/android")).map((n) => thirdParty("formats-2026/android", n)),
    ];
    for (const path of paths) expect(androidControlReader.sniff(await readHead(path), path), path).toBe(false);
  });
});
