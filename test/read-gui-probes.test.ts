/**
 * GUI-agent trajectories in the variants real exports use, written here by hand from each format's
 * public documentation (no file copied): AndroidControl episodes whose trees are the TFRecord's
 * serialized AndroidAccessibilityForest bytes (android_env/proto/a11y field numbers) and whose
 * actions are struct exports with null fields (android_control README: each action type has only
 * its own keys); Android-in-the-Wild rows with the Hugging Face column spelling (`results_action_type`,
 * `ep_id`) and Android-in-the-Zoo (AITZ, IMNearth/CoAT) episode files; WebArena `Action` dicts whose
 * typed text is key ids (browser_env/actions.py `_keys2ids`, constants.py) and action strings as
 * `action2str` writes them; OSWorld accessibility tables cut by `trim_accessibility_tree`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAndroidObservation } from "../src/normalize/domains/android.ts";
import { canonicalTreeText } from "../src/normalize/tree/a11y-tree.ts";
import { androidAccessibilityForest, decodeForest } from "../src/read/android-control/forest-proto.ts";
import { androidControlReader, forestDump } from "../src/read/android-control.ts";
import { androidInTheWildReader } from "../src/read/android-in-the-wild.ts";
import { parseOsObservation } from "../src/read/os-a11y.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { parseWebArenaAction, webArenaReader } from "../src/read/webarena.ts";
import { collect, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const read = (reader: Reader, path: string) => collect(reader.read(path, OPTIONS));
const androidTree = (text: string) => canonicalTreeText(parseAndroidObservation(text, "uiautomator-xml"), { collapseEmptyWrappers: false });

function writeTemp(name: string, content: string): string {
  const path = join(tempDir("lwm-gui-"), name);
  writeFileSync(path, content);
  return path;
}
const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

async function detected(path: string): Promise<string> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}

// ---------------------------------------------------------------------------------------------
// Protobuf wire encoding (varints, length-delimited fields), by the a11y protos' field numbers:
// AndroidAccessibilityForest {1 windows}; AndroidAccessibilityWindowInfo {1 bounds_in_screen,
// 3 id, 6 window_type, 11 tree}; AndroidAccessibilityTree {1 nodes}; AndroidAccessibilityNodeInfo
// {1 unique_id, 2 bounds_in_screen, 3 class_name, 4 content_description, 6 package_name, 7 text,
// 10 view_id_resource_name, 14 is_clickable, 16 is_enabled, 23 is_visible_to_user, 24 actions,
// 25 child_ids (packed)};
// ProtoRect {1 left, 2 top, 3 right, 4 bottom}. proto3 leaves zero values out.

function varint(n: number): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}
const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, n: number) => (n === 0 ? [] : [...key(field, 0), ...varint(n)]);
const bytesField = (field: number, body: number[]) => [...key(field, 2), ...varint(body.length), ...body];
const str = (field: number, s: string) => (s === "" ? [] : bytesField(field, [...Buffer.from(s, "utf8")]));
const packed = (field: number, values: number[]) => bytesField(field, values.flatMap(varint));
const rect = (l: number, t: number, r: number, b: number) => [...int(1, l), ...int(2, t), ...int(3, r), ...int(4, b)];

function serializedForest(label: string): Uint8Array {
  const node = (id: number, cls: string, text: string, bounds: [number, number, number, number], more: number[] = []) =>
    bytesField(1, [
      ...int(1, id),
      ...bytesField(2, rect(...bounds)),
      ...str(3, cls),
      ...str(6, "com.example.notes"),
      ...str(7, text),
      ...int(16, 1),
      ...int(23, 1),
      ...more,
    ]);
  const tree = [
    ...node(0, "android.widget.FrameLayout", "", [0, 0, 1080, 2400], packed(25, [1, 2])),
    ...node(1, "android.widget.TextView", label, [0, 100, 1080, 200], str(10, "com.example.notes:id/title")),
    // A negative bound (10-byte varint), a click action (field 24, not read), a content description.
    ...node(
      2,
      "android.widget.ImageButton",
      "",
      [-8, 2200, 200, 2380],
      [...int(14, 1), ...bytesField(24, int(1, 16)), ...str(4, "Nouvelle note ✎")],
    ),
  ];
  const window = [...bytesField(1, rect(0, 0, 1080, 2400)), ...int(3, 7), ...int(6, 1), ...bytesField(11, tree)];
  return Uint8Array.from(bytesField(1, window));
}

/** Python's `repr()` of bytes: `b'…'` with \xNN escapes. */
function pythonBytesRepr(bytes: Uint8Array): string {
  let out = "b'";
  for (const b of bytes) {
    if (b === 0x27) out += "\\'";
    else if (b === 0x5c) out += "\\\\";
    else if (b === 0x0a) out += "\\n";
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).padStart(2, "0")}`;
  }
  return `${out}'`;
}

describe("android-control: trees as the TFRecord's serialized AndroidAccessibilityForest bytes", () => {
  const base64 = (label: string) => Buffer.from(serializedForest(label)).toString("base64");
  const episode = (trees: string[]) => ({
    episode_id: 41,
    goal: "Create a note",
    accessibility_trees: trees,
    actions: ['{"action_type":"click","x":96,"y":2290}'],
    step_instructions: ["Tap the new note button"],
  });

  it("decodes base64 bytes into the same dump a proto JSON tree gives", async () => {
    const path = writeTemp("episodes.jsonl", jsonl([episode([base64("Notes"), base64("Untitled note")])]));
    expect(await detected(path)).toBe("android-control");
    const items = await read(androidControlReader, path);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.turns.map((turn) => turn.action)).toEqual(['{"name":"click","arguments":{"x":96,"y":2290}}']);
    const expected = (label: string) =>
      [
        "hierarchy rotation=0",
        "  android.widget.FrameLayout package=com.example.notes bounds=[0,0][1080,2400]",
        `    android.widget.TextView "${label}" resource-id=com.example.notes:id/title bounds=[0,100][1080,200]`,
        '    android.widget.ImageButton clickable content-desc="Nouvelle note ✎" bounds=[-8,2200][200,2380]',
      ].join("\n");
    expect(androidTree(t?.initialObservation as string).replace(/ +$/gm, "")).toBe(expected("Notes"));
    expect(androidTree(t?.turns[0]?.observation as string).replace(/ +$/gm, "")).toBe(expected("Untitled note"));
  });

  it("decodes a Python bytes literal (b'…', as str() of the bytes writes it)", async () => {
    const path = writeTemp(
      "episodes.jsonl",
      jsonl([episode([pythonBytesRepr(serializedForest("A")), pythonBytesRepr(serializedForest("B"))])]),
    );
    const [t] = trajectories(await read(androidControlReader, path));
    expect(androidTree(t?.turns[0]?.observation as string)).toContain('android.widget.TextView "B"');
  });

  it("refuses a screenshot where a tree should be, and bytes that are no forest, naming the tree", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString("base64");
    const cut = Buffer.from(serializedForest("x").subarray(0, 20)).toString("base64");
    const path = writeTemp("episodes.jsonl", jsonl([episode([png, base64("x")]), { ...episode([base64("x"), cut]), episode_id: 42 }]));
    const entries = quarantined(await read(androidControlReader, path));
    expect(entries.map((e) => [e.id, e.field])).toEqual([
      ["41", "accessibility_trees.0"],
      ["42", "accessibility_trees.1"],
    ]);
    expect(entries[0]?.reason).toBe("accessibility_trees.0: a PNG image (a screenshot), not an accessibility tree");
    expect(entries[1]?.reason).toMatch(/^accessibility_trees\.1: not a serialized AndroidAccessibilityForest: .* runs past the end/);
  });

  it("decodes what protobufjs encodes from an object (round trip), as the object itself reads", () => {
    const forest = {
      windows: [
        {
          bounds_in_screen: { right: 1080, bottom: 2400 },
          id: 7,
          window_type: 1,
          title: "Notes",
          tree: {
            nodes: [
              // unique_id 0 is proto3's default: not encoded, so not decoded either.
              { class_name: "android.widget.FrameLayout", child_ids: [1, 2], is_enabled: true, is_visible_to_user: true },
              {
                unique_id: 1,
                class_name: "android.widget.EditText",
                text: "Groceries ✎",
                hint_text: "Title",
                bounds_in_screen: { left: -8, top: 100, right: 1080, bottom: 200 },
                is_editable: true,
                is_enabled: true,
                is_focused: true,
                is_visible_to_user: true,
                text_selection_start: 4,
                actions: [{ id: 16, label: "click" }],
                clickable_spans: [{ text: "Groceries", url: "https://example.com", source: 1, node_id: 1 }],
              },
              {
                unique_id: 2,
                class_name: "android.widget.ImageButton",
                content_description: "Back",
                tooltip_text: "Back",
                is_clickable: true,
                is_enabled: true,
                is_visible_to_user: true,
              },
            ],
          },
        },
        { id: 9, window_type: 2, tree: { nodes: [{ class_name: "android.inputmethodservice.SoftInputWindow" }] } },
      ],
    };
    const type = androidAccessibilityForest();
    const bytes = type.encode(type.fromObject(forest)).finish();
    expect(decodeForest(bytes)).toEqual(forest);
    const dump = forestDump(Buffer.from(bytes).toString("base64"));
    expect(dump).toBe(forestDump(forest));
    expect(androidTree(dump).replace(/ +$/gm, "")).toBe(
      [
        "hierarchy rotation=0",
        "  android.widget.FrameLayout",
        '    android.widget.EditText "Groceries ✎" editable focused hint=Title bounds=[-8,100][1080,200]',
        "    android.widget.ImageButton clickable content-desc=Back tooltip=Back",
        "  android.inputmethodservice.SoftInputWindow enabled=false visible-to-user=false",
      ].join("\n"),
    );
  });

  it("decodes the hand-encoded bytes above field by field, skipping fields the protos do not declare", () => {
    const decoded = decodeForest(serializedForest("Notes"));
    const nodes = (decoded as { windows: { tree: { nodes: Record<string, unknown>[] } }[] }).windows[0]?.tree.nodes;
    expect(nodes?.map((n) => [n.unique_id ?? 0, n.class_name, n.child_ids ?? []])).toEqual([
      [0, "android.widget.FrameLayout", [1, 2]],
      [1, "android.widget.TextView", []],
      [2, "android.widget.ImageButton", []],
    ]);
    expect(nodes?.[2]).toMatchObject({
      bounds_in_screen: { left: -8, top: 2200 },
      actions: [{ id: 16 }],
      content_description: "Nouvelle note ✎",
    });
    // Re-encoded by protobufjs, the same object comes back.
    const type = androidAccessibilityForest();
    expect(decodeForest(type.encode(type.fromObject(decoded)).finish())).toEqual(decoded);
    // Unknown fields of every wire type (varint, 64-bit, bytes, group, 32-bit), and a declared field
    // sent with another wire type (title as a number), are skipped.
    const unknown = [
      ...int(90, 5),
      ...key(91, 1),
      ...[1, 2, 3, 4, 5, 6, 7, 8],
      ...bytesField(92, [1, 2, 3]),
      ...key(93, 3),
      ...int(1, 4),
      ...key(93, 4),
      ...key(94, 5),
      ...[1, 2, 3, 4],
      ...int(5, 3),
    ];
    const window = [...bytesField(1, rect(0, 0, 1080, 2400)), ...int(3, 7), ...int(6, 1), ...unknown];
    const plain = decodeForest(Uint8Array.from(bytesField(1, window)));
    expect(plain).toEqual({ windows: [{ bounds_in_screen: { right: 1080, bottom: 2400 }, id: 7, window_type: 1 }] });
  });

  it("a corrupted byte is refused naming the field it breaks (negative control)", async () => {
    const good = serializedForest("Notes");
    const broken = Uint8Array.from(good);
    broken[Buffer.from(good).indexOf("Notes")] = 0xff; // not UTF-8
    expect(() => decodeForest(broken)).toThrow(
      /^not a serialized AndroidAccessibilityForest: windows\.0\.tree\.nodes\.1\.text is not UTF-8 text at byte \d+$/,
    );
    const wire = Uint8Array.from(good);
    wire[Buffer.from(good).indexOf(Uint8Array.from(key(11, 2)))] = (11 << 3) | 7; // the tree's key, wire type 7
    expect(() => decodeForest(wire)).toThrow("not a serialized AndroidAccessibilityForest: windows.0.tree has wire type 7 at byte");
    const path = writeTemp(
      "episodes.jsonl",
      jsonl([
        {
          episode_id: 43,
          accessibility_trees: [good, broken].map((b) => Buffer.from(b).toString("base64")),
          actions: ['{"action_type":"wait"}'],
        },
      ]),
    );
    const [entry] = quarantined(await read(androidControlReader, path));
    expect(entry?.field).toBe("accessibility_trees.1");
    expect(entry?.reason).toMatch(
      /^accessibility_trees\.1: not a serialized AndroidAccessibilityForest: windows\.0\.tree\.nodes\.1\.text is not UTF-8 text at byte \d+$/,
    );
  });
});

describe("android-control: actions as struct exports (every key of every type, null where unused)", () => {
  it("leaves the null keys out, so an action reads as the README's JSON dictionary does", async () => {
    const forest = { windows: [{ tree: { nodes: [{ className: "android.widget.FrameLayout", packageName: "p" }] } }] };
    const keys = ["action_type", "app_name", "direction", "text", "x", "y"];
    const struct = (action: Record<string, unknown>) => Object.fromEntries(keys.map((k) => [k, action[k] ?? null]));
    const actions = [
      { action_type: "open_app", app_name: "Clock" },
      { action_type: "scroll", direction: "down" },
      { action_type: "long_press", x: 540, y: 1200 },
      { action_type: "input_text", text: "7:00" },
      { action_type: "navigate_back" },
      { action_type: "wait" },
    ];
    const row = {
      episode_id: 77,
      goal: "Set an alarm",
      accessibility_trees: Array.from({ length: actions.length + 1 }, () => forest),
      actions: actions.map(struct),
      step_instructions: actions.map((a) => `do ${a.action_type}`),
    };
    const path = writeTemp("episodes.json", JSON.stringify([row], null, 2));
    const [t] = trajectories(await read(androidControlReader, path));
    expect(t?.turns.map((turn) => turn.action)).toEqual([
      '{"name":"open_app","arguments":{"app_name":"Clock"}}',
      '{"name":"scroll","arguments":{"direction":"down"}}',
      '{"name":"long_press","arguments":{"x":540,"y":1200}}',
      '{"name":"input_text","arguments":{"text":"7:00"}}',
      '{"name":"navigate_back","arguments":{}}',
      '{"name":"wait","arguments":{}}',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Android-in-the-Wild variants

const screenRow = (text: string) => ({
  "image/ui_annotations_positions": [0.1, 0.2, 0.05, 0.6],
  "image/ui_annotations_text": [text],
  "image/ui_annotations_ui_types": ["TEXT"],
});

describe("android-in-the-wild: Hugging Face column names (`_` for `/`, `ep_id`)", () => {
  it("reads them as the TFRecord features", async () => {
    const rows = [
      { step_id: 0, "results/action_type": 4, "results/yx_touch": [0.12, 0.5], "results/yx_lift": [0.12, 0.5], ...screenRow("Search") },
      { step_id: 1, "results/action_type": 3, "results/type_action": ["weather"], ...screenRow("Search|") },
      { step_id: 2, "results/action_type": 10, ...screenRow("Sunny") },
    ].map((r) => ({
      ep_id: "3481882310895889519",
      goal_info: "What's the weather?",
      ...Object.fromEntries(Object.entries(r).map(([k, v]) => [k.replace("/", "_"), v])),
      image_width: 1080,
      image_height: 2400,
    }));
    const path = writeTemp("aitw-single.jsonl", jsonl(rows));
    expect(await detected(path)).toBe("android-in-the-wild");
    const items = await read(androidInTheWildReader, path);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect([t?.id, t?.task, t?.meta?.outcome]).toEqual(["3481882310895889519", "What's the weather?", { success: true }]);
    expect(t?.turns.map((turn) => turn.action)).toEqual([
      '{"name":"dual_point","arguments":{"touch_yx":[0.12,0.5],"lift_yx":[0.12,0.5]}}',
      '{"name":"type","arguments":{"text":"weather"}}',
    ]);
    // Pixels from the image size, not per-mille.
    expect(androidTree(t?.turns[1]?.observation as string)).toContain('TEXT "Sunny" bounds=[216,240][864,360]');
  });
});

describe("android-in-the-wild: Android-in-the-Zoo (AITZ) episode files", () => {
  /** An AITZ step as CoAT's data files hold it: AitW's fields renamed, lists as JSON text, boxes in pixels. */
  const aitz = (stepId: number, action: number, text: string, extra: Record<string, unknown> = {}) => ({
    episode_id: "523600000000000001",
    episode_length: 3,
    step_id: stepId,
    instruction: 'open app "Clock"',
    ui_positions: JSON.stringify([
      [60, 20, 10, 120],
      [570, 200, 16, 8],
    ]),
    ui_text: JSON.stringify([text, ""]),
    ui_types: JSON.stringify(["TEXT", "ICON_NAV_BAR_RECT"]),
    result_action_type: action,
    result_action_text: "",
    result_touch_yx: JSON.stringify(action === 4 ? [0.5, 0.6] : [-1.0, -1.0]),
    result_lift_yx: JSON.stringify(action === 4 ? [0.1, 0.6] : [-1.0, -1.0]),
    image_path: `general/GENERAL-5236/GENERAL-5236_${stepId}.png`,
    coat_screen_desc: `screen ${stepId}`,
    coat_action_think: `the app list is below, step ${stepId}`,
    coat_action_desc: `action ${stepId}`,
    coat_action_result: `result ${stepId}`,
    ...extra,
  });

  it("reads the episode: AitW actions, boxes in pixels, the CoAT thinking, the outcome", async () => {
    const path = writeTemp("GENERAL-5236.json", JSON.stringify([aitz(0, 4, "Home"), aitz(1, 4, "Apps"), aitz(2, 10, "Clock")], null, 4));
    expect(await detected(path)).toBe("android-in-the-wild");
    const items = await read(androidInTheWildReader, path);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect([t?.id, t?.task, t?.meta?.outcome]).toEqual(["523600000000000001", 'open app "Clock"', { success: true }]);
    expect(t?.turns.map((turn) => [turn.action, turn.thinking])).toEqual([
      ['{"name":"dual_point","arguments":{"touch_yx":[0.5,0.6],"lift_yx":[0.1,0.6]}}', "the app list is below, step 0"],
      ['{"name":"dual_point","arguments":{"touch_yx":[0.5,0.6],"lift_yx":[0.1,0.6]}}', "the app list is below, step 1"],
    ]);
    expect(androidTree(t?.initialObservation as string).replace(/ +$/gm, "")).toBe(
      ["hierarchy", '  TEXT "Home" bounds=[20,60][140,70]', "  ICON_NAV_BAR_RECT bounds=[200,570][208,586]"].join("\n"),
    );
    expect(androidTree(t?.turns[1]?.observation as string)).toContain('TEXT "Clock" bounds=[20,60][140,70]');
    expect(t?.turns[0]?.meta).toMatchObject({
      step_id: 1,
      screenshot: "general/GENERAL-5236/GENERAL-5236_1.png",
      coat: { action_description: "action 0", action_result: "result 0" },
    });
    expect(t?.meta).toMatchObject({ unobserved_final_action: '{"name":"status_task_complete","arguments":{}}', source_layout: "aitz" });
  });

  it("refuses a step whose list field is not JSON text, naming AITZ's field", async () => {
    const path = writeTemp("bad.json", JSON.stringify([aitz(0, 4, "Home"), aitz(1, 10, "Apps", { ui_positions: "[[60, 20, 10" })]));
    const [entry] = quarantined(await read(androidInTheWildReader, path));
    expect(entry?.field).toBe("ui_positions");
    expect(entry?.reason).toMatch(/^episode 523600000000000001 \(elements 0–1\): ui_positions: not JSON text .* \[at element 1\]$/);
  });
});

// ---------------------------------------------------------------------------------------------
// WebArena

/** WebArena's `_key2id`: SPECIAL_KEYS (15), then chr(32..127), then chr(129..129999), then "\n". */
const keyIds = (text: string) =>
  [...text].map((c) => {
    const code = c.codePointAt(0) as number;
    if (c === "\n") return 15 + 96 + (130000 - 129);
    return code < 128 ? 15 + code - 32 : 15 + 96 + code - 129;
  });
const noneAction = {
  action_type: 0,
  coords: [0.0, 0.0],
  element_role: 0,
  element_name: "",
  text: [] as number[],
  page_number: 0,
  url: "",
  nth: 0,
  pw_code: "",
  element_id: "",
  key_comb: "",
  direction: "",
  answer: "",
  raw_prediction: "",
};
const state = (name: string, url: string) => ({
  observation: { text: `[1] RootWebArea '${name}' focused: True\n\t[12] searchbox 'Search' required: False`, image: null },
  info: { page: { url }, fail_error: "", observation_metadata: {} },
});
const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args }, null, 2);

describe("webarena: Action dicts whose typed text is key ids (no raw_prediction)", () => {
  it("decodes the ids; an id-based TYPE's trailing Enter is press_enter_after", async () => {
    const record = {
      task_id: 21,
      intent: "Search for café mugs",
      trajectory: [
        state("Shop", "http://shop.test/"),
        { ...noneAction, action_type: 7, element_id: "12", text: keyIds("café mugs\n") },
        state("Results", "http://shop.test/search"),
        { ...noneAction, action_type: 7, element_id: "12", text: keyIds("x") },
        state("Results", "http://shop.test/search"),
        { ...noneAction, action_type: 4, text: keyIds("ok\n") },
        state("Results", "http://shop.test/search"),
        { ...noneAction, action_type: 17, answer: "N/A" },
      ],
      score: 0.0,
    };
    const path = writeTemp("trajectory.json", JSON.stringify(record, null, 2));
    const items = await read(webArenaReader, path);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.turns.map((turn) => turn.action)).toEqual([
      act("type", { element_id: "12", text: "café mugs", press_enter_after: true }),
      act("type", { element_id: "12", text: "x", press_enter_after: false }),
      act("keyboard_type", { text: "ok\n" }),
    ]);
  });

  it("refuses an id no key has, naming the action", async () => {
    const record = {
      task_id: 22,
      intent: "x",
      trajectory: [
        state("A", "http://a/"),
        { ...noneAction, action_type: 7, element_id: "3", text: [40, 999999] },
        state("B", "http://b/"),
      ],
    };
    const [entry] = quarantined(await read(webArenaReader, writeTemp("t.json", JSON.stringify(record))));
    expect(entry?.field).toBe("trajectory.1.action");
    expect(entry?.reason).toBe("line 1: trajectory.1.action: text.1: 999999 is not a key id of WebArena's action space");
  });
});

describe("webarena: action strings as action2str writes them (render HTML, previous actions)", () => {
  it("reads `… where [id] is …`, page_focus and none", () => {
    expect(parseWebArenaAction("click [1437] where [1437] is [1437] link 'Reports'")).toEqual({
      name: "click",
      args: { element_id: "1437" },
    });
    expect(parseWebArenaAction("hover [8] where [8] is [8] menuitem 'Sales'")).toEqual({ name: "hover", args: { element_id: "8" } });
    // action2str writes no Enter flag: the typed text's last "\n" is the Enter.
    expect(parseWebArenaAction("type [12] [mugs\n] where [12] is [12] searchbox 'Search'")).toEqual({
      name: "type",
      args: { element_id: "12", text: "mugs", press_enter_after: true },
    });
    expect(parseWebArenaAction("type [12] [mugs] where [12] is [12] searchbox 'Search'")).toEqual({
      name: "type",
      args: { element_id: "12", text: "mugs", press_enter_after: false },
    });
    expect(parseWebArenaAction("page_focus [1]")).toEqual({ name: "tab_focus", args: { tab_index: 1 } });
    expect(parseWebArenaAction("none")).toEqual({ name: "none", args: {} });
    // The model's own action keeps WebArena's default (Enter pressed) and its text as written.
    expect(parseWebArenaAction("type [12] [where [3] is]")).toEqual({
      name: "type",
      args: { element_id: "12", text: "where [3] is", press_enter_after: true },
    });
  });
});

// ---------------------------------------------------------------------------------------------
// OSWorld tables cut by trim_accessibility_tree

const HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)";
const canonical = (text: string) => canonicalTreeText(parseOsObservation(text), { collapseEmptyWrappers: false }).replace(/ +$/gm, "");

describe("os-a11y: OSWorld accessibility tables cut at a token budget (`[...]`)", () => {
  it("drops the row the cut broke and marks the table truncated", () => {
    const rows = ["push-button\tSave\tSave\t\t\t(1700, 40)\t(60, 30)", 'label\tTitle\t"He said ""hi"""\t\t\t(10, 10)\t(100, 20)'];
    const whole = [HEADER, ...rows].join("\n");
    const expected = (truncated: boolean) =>
      [
        `table${truncated ? " truncated" : ""}`,
        '  push-button "Save" text=Save bounds=[1700,40][1760,70]',
        '  label "Title" text="He said \\"hi\\"" bounds=[10,10][110,30]',
      ].join("\n");
    expect(canonical(whole)).toBe(expected(false));
    for (const tail of ["menu-item\tEd", "menu-item\tEdit\t\t\t\t(0, 0)\t(40, 2", 'label\tT\t"quoted ""te', ""])
      expect(canonical(`${whole}\n${tail}[...]\n`)).toBe(expected(true));
    expect(canonical(`${whole}[...]\n`)).toBe(expected(true));
  });

  it("still refuses a broken row where no cut is marked", () => {
    expect(() => parseOsObservation(`${HEADER}\nmenu-item\tEd\n`)).toThrow("row 1 has 2 fields, not 7");
  });
});
