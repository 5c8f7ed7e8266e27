/**
 * The Android-in-the-Wild reader (src/read/android-in-the-wild.ts) on the hand-written fixtures in
 * test/fixtures/handmade/android-in-the-wild/ (written from google-research's android_in_the_wild
 * README and action_type.py, and the Agent Data Protocol's flattening; see the README there), on
 * broken variants built here, and on the shared ADP sample (read in place).
 */
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { QuarantineEntry } from "../src/core/errors.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { parseAndroidObservation } from "../src/normalize/domains/android.ts";
import { canonicalTreeText } from "../src/normalize/tree/a11y-tree.ts";
import { androidInTheWildReader } from "../src/read/android-in-the-wild.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/android-in-the-wild");
const EPISODES = join(HANDMADE, "episodes.jsonl");
const ARRAY = join(HANDMADE, "episode-array.json");
const INTERLEAVED = join(HANDMADE, "interleaved.jsonl");

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const read = (path: string, options = OPTIONS) => collect(androidInTheWildReader.read(path, options));
const tree = (text: string) => canonicalTreeText(parseAndroidObservation(text, "uiautomator-xml"), { collapseEmptyWrappers: false });

function writeTemp(name: string, content: string): string {
  const path = join(tempDir("lwm-aitw-"), name);
  writeFileSync(path, content);
  return path;
}

/** A step row as AitW's TFRecord flattening writes it. */
function step(episode: string, stepId: number, actionType: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    episode_id: episode,
    step_id: stepId,
    episode_length: 3,
    goal_info: "Open the calculator",
    current_activity: "com.android.launcher/.Launcher",
    "results/action_type": actionType,
    "results/yx_touch": [0.5, 0.25],
    "results/yx_lift": [0.5, 0.25],
    "results/type_action": "",
    "image/ui_annotations_positions": [[0.1, 0.2, 0.1, 0.5]],
    "image/ui_annotations_text": ["Calculator"],
    "image/ui_annotations_ui_types": ["TEXT"],
    "image/width": 400,
    "image/height": 800,
    ...extra,
  };
}
const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

describe("android-in-the-wild: hand-made fixtures", () => {
  it("groups the rows of each episode in step order; actions, screens after them, outcome from the status", async () => {
    const items = await read(EPISODES);
    expect(quarantined(items)).toEqual([]);
    const [a, b] = trajectories(items) as [Trajectory, Trajectory];
    expect(items).toHaveLength(2);
    expect(a.id).toBe("4011223344556677889");
    expect(a.domain).toBe("android");
    expect(a.task).toBe("What's the weather in Paris?");
    // Rows 1, 0, 3, 2 in the file: read in step order.
    expect(a.turns.map((t) => t.action)).toEqual([
      '{"name":"dual_point","arguments":{"touch_yx":[0.07,0.5],"lift_yx":[0.07,0.5]}}',
      '{"name":"type","arguments":{"text":"weather in paris"}}',
      '{"name":"press_enter","arguments":{}}',
    ]);
    expect(a.turns.map((t) => t.meta?.step_id)).toEqual([1, 2, 3]);
    expect(a.meta).toMatchObject({
      outcome: { success: true },
      unobserved_final_action: '{"name":"status_task_complete","arguments":{}}',
      episode_length: 4,
      steps_read: 4,
      initial_screenshot: "screenshots/4011223344556677889-0.png",
    });
    // The screen seen before step 0's action is the initial observation; step 1's screen follows it.
    expect(tree(a.initialObservation as string)).toBe(
      [
        "hierarchy activity=com.google.android.apps.nexuslauncher/.NexusLauncherActivity",
        '  TEXT "Search" bounds=[41,37][371,66]',
        "  ICON_NAV_BAR_CIRCLE bounds=[185,659][227,695]",
      ].join("\n"),
    );
    expect(tree(a.turns[2]?.observation as string)).toBe(
      [
        "hierarchy activity=com.google.android.googlequicksearchbox/.SearchActivity",
        '  TEXT "Paris, 14°C" bounds=[41,146][247,183]',
        '  TEXT "Cloudy" bounds=[41,220][165,242]',
      ].join("\n"),
    );
    expect(a.turns[0]?.meta).toEqual({ tree_format: "uiautomator-xml", step_id: 1, screenshot: "screenshots/4011223344556677889-1.png" });

    // Episode B keeps TFRecord's one-value lists and a flat positions list, and has no image size.
    expect(b.id).toBe("5099887766554433221");
    expect(b.turns.map((t) => JSON.parse(t.action).name)).toEqual(["dual_point", "press_back", "press_home"]);
    expect(JSON.parse(b.turns[0]?.action as string).arguments).toEqual({ touch_yx: [0.8, 0.5], lift_yx: [0.3, 0.5] });
    expect(b.meta).toMatchObject({ outcome: { success: false, failure_mode: "task_impossible" }, bounds_unit: "per-mille" });
    expect(tree(b.turns[0]?.observation as string)).toBe(
      ["hierarchy activity=com.android.settings/.Settings", '  TEXT "Connected devices" bounds=[50,200][950,240]'].join("\n"),
    );
  });

  it("reads a JSON array with the Agent Data Protocol's action strings; an episode cut short has no outcome", async () => {
    const items = await read(ARRAY);
    expect(items).toHaveLength(1);
    const [t] = trajectories(items) as [Trajectory];
    expect(t.source).toMatchObject({ row: 0, format: "android-in-the-wild" });
    expect(t.turns.map((x) => x.action)).toEqual([
      '{"name":"dual_point","arguments":{"touch_yx":[0.5,0.5],"lift_yx":[0.5,0.5]}}',
      '{"name":"type","arguments":{"text":"7"}}',
    ]);
    expect(t.meta?.unobserved_final_action).toBe('{"name":"press_back","arguments":{}}');
    expect(t.meta?.outcome).toBeUndefined();
    expect(t.meta).toMatchObject({ episode_length: 6, steps_read: 3 });
  });

  it("interleaved episodes: a later run of an episode already read is quarantined, never merged", async () => {
    const items = await read(INTERLEAVED);
    expect(items.map((i) => i.kind)).toEqual(["trajectory", "trajectory", "quarantine"]);
    const [d, e] = trajectories(items) as [Trajectory, Trajectory];
    expect([d.id, d.turns.length, e.id, e.turns.length]).toEqual(["7000000000000000001", 1, "7000000000000000002", 1]);
    const [q] = quarantined(items) as [QuarantineEntry];
    expect(q).toMatchObject({ id: "7000000000000000001", field: "episode_id", source: { line: 5 } });
    expect(q.reason).toBe(
      "episode 7000000000000000001 (lines 5–6): its rows are apart from its earlier rows (lines 1–2), which were read as a trajectory of their own; interleaved episodes are not merged",
    );
  });
});

describe("android-in-the-wild: broken and hostile input", () => {
  it("an episode with a missing step is quarantined naming the gap (an action is never paired with a later screen)", async () => {
    const path = writeTemp("gap.jsonl", jsonl([step("e1", 0, 4), step("e1", 2, 4), step("e1", 3, 10)]));
    const items = await read(path);
    expect(items).toHaveLength(1);
    const [q] = quarantined(items) as [QuarantineEntry];
    expect(q.field).toBe("step_id");
    expect(q.reason).toBe("episode e1 (lines 1–3): step_id 1 missing: the action of step 0 has no screen after it [at line 2]");
  });

  it("a repeated step, an unknown action type, bad coordinates, mismatched annotation lists: each names its field and line", async () => {
    const cases: [unknown[], string, string][] = [
      [[step("e", 0, 4), step("e", 0, 4)], "step_id", "step_id 0 appears twice"],
      [[step("e", 0, 4), step("e", 1, 99)], "results/action_type", "results/action_type: unknown action type 99 [at line 2]"],
      [
        [step("e", 0, 4, { "results/yx_touch": "0.5,0.2" }), step("e", 1, 10)],
        "results/yx_touch",
        'results/yx_touch: expected [y, x], got "0.5,0.2"',
      ],
      [
        [step("e", 0, 4, { "image/ui_annotations_text": [] }), step("e", 1, 10)],
        "image/ui_annotations_text",
        "image/ui_annotations_text: 0 values for 1 boxes",
      ],
      [
        [step("e", 0, 3, { "results/type_action": 5 }), step("e", 1, 10)],
        "results/type_action",
        "results/type_action: expected a string, got a number",
      ],
      [[step("e", 0, 4, { step_id: "first" }), step("e", 1, 10)], "step_id", "step_id: expected a step number, got a string"],
      [[step("e", 0, 4)], "step_id", "one step only: its action has no screen after it, so nothing is observed"],
    ];
    for (const [rows, field, reason] of cases) {
      const items = await read(writeTemp("bad.jsonl", jsonl(rows)));
      expect(items, reason).toHaveLength(1);
      const [q] = quarantined(items) as [QuarantineEntry];
      expect(q.field, reason).toBe(field);
      expect(q.reason, reason).toContain(reason);
      expect(q.id).toBe("e");
    }
  });

  it("a row with no image/ui_annotations_* keys is quarantined (no screen recorded); present-but-empty lists are an empty screen", async () => {
    const bare = step("e", 1, 10);
    for (const key of ["image/ui_annotations_positions", "image/ui_annotations_text", "image/ui_annotations_ui_types"]) delete bare[key];
    const missing = await read(writeTemp("missing.jsonl", jsonl([step("e", 0, 4), bare])));
    expect(trajectories(missing)).toHaveLength(0);
    const [q] = quarantined(missing) as [QuarantineEntry];
    expect(q.field).toBe("image/ui_annotations_positions");
    expect(q.reason).toContain("image/ui_annotations_positions: missing, so the step's screen was not recorded");
    expect(q.reason).toContain("[at line 2]");
    const nulled = await read(
      writeTemp("null.jsonl", jsonl([step("e", 0, 4), step("e", 1, 10, { "image/ui_annotations_positions": null })])),
    );
    expect(quarantined(nulled)[0]?.field).toBe("image/ui_annotations_positions");
    const empty = { "image/ui_annotations_positions": [], "image/ui_annotations_text": [], "image/ui_annotations_ui_types": [] };
    const items = await read(writeTemp("empty.jsonl", jsonl([step("e", 0, 4), step("e", 1, 10, empty)])));
    const [t] = trajectories(items) as [Trajectory];
    expect(quarantined(items)).toHaveLength(0);
    expect(t.turns).toHaveLength(1);
    expect(t.turns[0]?.observation).not.toContain("<node");
  });

  it("a truncated line or a row that is no step is quarantined alone; the episode around it is still read", async () => {
    const lines = jsonl([step("e", 0, 4), step("e", 1, 10)]).split("\n");
    const text = [lines[0], '{"episode_id": "e", "step_id": 1, "results/act', '{"hello": 1}', lines[1], ""].join("\n");
    const items = await read(writeTemp("cut.jsonl", text));
    expect(items.map((i) => i.kind)).toEqual(["quarantine", "quarantine", "trajectory"]);
    const [cut, other] = quarantined(items) as [QuarantineEntry, QuarantineEntry];
    expect(cut.source.line).toBe(2);
    expect(cut.reason).toMatch(/^invalid JSON/);
    expect(other).toMatchObject({ field: "episode_id", source: { line: 3 } });
    expect(other.reason).toMatch(/^not an Android-in-the-Wild step row/);
    expect(trajectories(items)[0]?.turns).toHaveLength(1);
  });

  it("a JSON array cut short: the rows before the break are read, the break is quarantined", async () => {
    const whole = JSON.stringify([step("e", 0, 4), step("e", 1, 4), step("e", 2, 10)], null, 1);
    const items = await read(writeTemp("cut.json", whole.slice(0, whole.lastIndexOf('"episode_id"'))));
    expect(items.map((i) => i.kind)).toEqual(["trajectory", "quarantine"]);
    expect(trajectories(items)[0]?.turns).toHaveLength(1);
    expect(quarantined(items)[0]?.reason).toMatch(/^the JSON array breaks after element 1: invalid JSON/);
  });

  it("an episode over input.max_line_bytes of rows is quarantined without holding its rows", async () => {
    const rows = Array.from({ length: 50 }, (_, i) => step("big", i, 4));
    const items = await read(writeTemp("big.jsonl", jsonl([...rows, step("small", 0, 4), step("small", 1, 10)])), { maxLineBytes: 4000 });
    expect(items.map((i) => i.kind)).toEqual(["quarantine", "trajectory"]);
    expect(quarantined(items)[0]?.reason).toBe(
      "episode big (lines 1–50): its rows are over 4000 bytes of JSON, the per-record limit (input.max_line_bytes)",
    );
  });

  it("XML-special and control characters in annotation text survive into a parseable screen", async () => {
    const odd = 'a<b>&"c"\u0001\nd';
    const rows = [step("x", 0, 4), step("x", 1, 10, { "image/ui_annotations_text": [odd] })];
    const [t] = trajectories(await read(writeTemp("odd.jsonl", jsonl(rows)))) as [Trajectory];
    expect(parseAndroidObservation(t.turns[0]?.observation as string, "uiautomator-xml").children[0]?.name).toBe('a<b>&"c"\ufffd\nd');
  });
});

describe("android-in-the-wild: detection", () => {
  const others = READERS.filter((reader) => reader.name !== androidInTheWildReader.name);
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    });

  it("claims its fixtures, and no existing reader claims them", async () => {
    for (const path of [EPISODES, ARRAY, INTERLEAVED]) {
      const head = await readHead(path);
      expect(androidInTheWildReader.sniff(head, path), path).toBe(true);
      expect(
        others.filter((r) => r.sniff(head, path)).map((r) => r.name),
        path,
      ).toEqual([]);
    }
  });

  it("does not claim the existing readers' fixtures (handmade, data/demo, the android samples)", async () => {
    const inputs = [...files(join(ROOT, "test/fixtures/handmade")), ...files(join(ROOT, "data/demo"))].filter(
      (p) => !p.startsWith(HANDMADE),
    );
    const claimed: string[] = [];
    for (const path of inputs) if (androidInTheWildReader.sniff(await readHead(path), path)) claimed.push(path);
    expect(claimed).toEqual([]);
  });
});

describeThirdParty("android-in-the-wild on the Agent Data Protocol sample (3 rows of a 9-step episode)", () => {
  const SAMPLE = thirdParty("formats-2026/android/adp__android_in_the_wild__sample_raw.json");

  it("reads the three rows as one episode: two observed taps, the third action unobserved, no outcome", async () => {
    const items = await read(SAMPLE);
    expect(items).toHaveLength(1);
    const [t] = trajectories(items) as [Trajectory];
    expect(t.id).toBe("12172380859428428757");
    expect(t.task).toBe("Open a new Chrome private window");
    expect(t.turns.map((x) => x.action)).toEqual([
      '{"name":"dual_point","arguments":{"touch_yx":[0.7761470675468445,0.70892333984375],"lift_yx":[0.7761470675468445,0.70892333984375]}}',
      '{"name":"dual_point","arguments":{"touch_yx":[0.7190988063812256,0.4153875708580017],"lift_yx":[0.7190988063812256,0.4153875708580017]}}',
    ]);
    expect(t.meta).toMatchObject({ episode_length: 9, steps_read: 3, device_type: "PIXEL_3", android_api_level: 31 });
    expect(t.meta?.outcome).toBeUndefined();
    expect(t.meta?.unobserved_final_action).toContain("0.7183774709701538");
    expect(
      tree(t.initialObservation as string)
        .split("\n")
        .slice(0, 3),
    ).toEqual([
      "hierarchy activity=com.android.chrome/com.google.android.apps.chrome.Main",
      '  TEXT "Oct7" bounds=[66,78][111,94]',
      '  TEXT "Fri," bounds=[34,79][58,96]',
    ]);
    expect(tree(t.turns[0]?.observation as string)).toContain('TEXT "Welcome to Chrome"');
  });

  it("is claimed by this reader and no other", async () => {
    const head = await readHead(SAMPLE);
    expect(androidInTheWildReader.sniff(head, SAMPLE)).toBe(true);
    expect(READERS.filter((r) => r.sniff(head, SAMPLE)).map((r) => r.name)).toEqual(["android-in-the-wild"]);
  });

  it("does not claim the android samples the existing readers read", async () => {
    for (const dir of ["android/droidbot", "android/mobile-env"])
      for (const name of readdirSync(thirdParty(dir))) {
        const path = thirdParty(dir, name);
        expect(androidInTheWildReader.sniff(await readHead(path), path), path).toBe(false);
      }
  });
});
