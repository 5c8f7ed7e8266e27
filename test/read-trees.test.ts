import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { type A11yNode, countNodes, preorder } from "../src/normalize/tree/a11y-tree.ts";
import { browserGymReader, parseAxTree } from "../src/read/browsergym.ts";
import { droidBotReader, parseDroidBotState } from "../src/read/droidbot.ts";
import { osA11yReader, parseAtspiXml, parseOsworldTable } from "../src/read/os-a11y.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { MAX_XML_DEPTH, parseUiautomatorXml, uiautomatorReader } from "../src/read/uiautomator-xml.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
// Recorded by scripts/record-demo/web.ts (Chromium on a local app) and written by
// scripts/record-demo/android.ts (hand-written screens); see data/demo/PROVENANCE.md.
const WEB = join(ROOT, "data/demo/web");
const ADD_ITEM = join(WEB, "stockroom.add-item__experiment_analysis.md");
const DELETE_ITEM = join(WEB, "stockroom.delete-item__experiment_analysis.md");
const ANDROID = join(ROOT, "data/demo/android");
const UIAUTOMATOR = join(ANDROID, "quicknotes.add-note.window_dumps.xml");
const state = (tag: string) => join(ANDROID, `state_2026-01-15_${tag}.json`);
const HANDMADE_ANDROID = join(ROOT, "test/fixtures/handmade/android");
const OS_DIR = join(ROOT, "test/fixtures/handmade/os");
const OS_JSONL = join(OS_DIR, "os-trajectories.jsonl");

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const lines = (text: string) => text.split("\n");
const head = (path: string) => readFileSync(path, "utf8").slice(0, 64 << 10);

async function readOne(reader: Reader, path: string): Promise<Trajectory> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  expect(items).toHaveLength(1);
  return trajectories(items)[0] as Trajectory;
}

describe("browsergym reader (Chromium on the demo app)", () => {
  it("reads the add-item episode into 8 turns with the values in the file", async () => {
    const t = await readOne(browserGymReader, ADD_ITEM);
    // Values read from data/demo/web/stockroom.add-item__experiment_analysis.md: Trace ID, Derived
    // Goal, InstanceStep000-008, the action call at the end of each step's Next Action.
    expect(t.id).toBe("901cd084-a357-35e4-d373-38b5735b2cc0");
    expect(t.domain).toBe("web");
    expect(t.task).toBe("Add a new inventory item named 'Label printer' with 3 in stock, in the Office category.");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "click('7')",
      "click('10')",
      "fill('70', '3')",
      "select_option('73', 'Office')",
      "click('77')",
      "fill('66', 'Label printer')",
      "click('77')",
      `send_msg_to_user("Added 'Label printer' (Office, 3 in stock).")`,
    ]);
    const initial = lines(t.initialObservation as string);
    expect(initial[0]).toBe("RootWebArea 'Inventory | Stockroom', focused, url='http://stockroom.test/#/items'");
    expect(initial[2]).toBe("\t\t[7] button 'Menu', hasPopup='menu', expanded=False");
    expect(initial.at(-1)).toBe("\t\t\tStaticText '5 of 5 items'");
    // After click('7'): the menu button has focus and is expanded, the menu is in the tree.
    const opened = lines(t.turns[0]?.observation as string);
    expect(opened.slice(2, 7)).toEqual([
      "\t\t[7] button 'Menu', focused, hasPopup='menu', expanded=True, controls='menu'",
      "\t\t[8] menu 'Main menu', orientation='vertical'",
      "\t\t\t[9] menuitem 'Inventory'",
      "\t\t\t[10] menuitem 'New item'",
      "\t\t\t[11] menuitem 'Tickets'",
    ]);
    // After the first click('77') (Save without a name): the validation error.
    const invalid = lines(t.turns[4]?.observation as string);
    expect(invalid).toContain("\t\t\t\t[66] textbox 'Name', focused, required, describedby='name-error'");
    expect(invalid).toContain("\t\t\t\tStaticText 'Name is required.'");
    // After the second save: back on the list, with the new row and the status line.
    const saved = t.turns[6]?.observation as string;
    expect(lines(saved)[0]).toBe("RootWebArea 'Inventory | Stockroom', focused, url='http://stockroom.test/#/items'");
    expect(saved).toContain("StaticText 'Saved Label printer.'");
    expect(saved).toContain("link 'Label printer', url='http://stockroom.test/#/items/6'");
    expect(t.turns[7]?.observation).toBe(saved); // send_msg_to_user leaves the page as it was
    expect(t.turns[0]?.thinking).toMatch(/^The page lists the inventory\./);
    expect(t.turns[5]?.thinking).toMatch(/an alert says 'Name is required\.'/);
    expect(t.turns[1]?.meta).toMatchObject({
      tree_format: "browsergym-axtree",
      open_tabs: expect.stringContaining("New item | Stockroom"),
    });
    expect(t.turns[1]?.meta).not.toHaveProperty("last_action_error"); // "No errors reported"
    expect(t.meta).toMatchObject({
      model_name: "none (actions scripted in scripts/record-demo/web-episodes.ts)",
      date: "2026-01-15 12:00:00",
      initial_open_tabs: "- Tab 0 (active)\n  - Title: Inventory | Stockroom\n  - URL: http://stockroom.test/#/items",
    });
    expect(t.meta?.unobserved_final_action).toBeUndefined(); // last step: "No next action available"
  });

  it("reads the delete-item episode: search, open, confirm in a modal dialog", async () => {
    const t = await readOne(browserGymReader, DELETE_ITEM);
    expect(t.task).toBe("Delete the item 'Broken stapler' from the inventory.");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "fill('20', 'stapler')",
      "press('20', 'Enter')",
      "click('77')",
      "click('89')",
      "click('60')",
      `send_msg_to_user("Deleted 'Broken stapler'; no item matches 'stapler' any more.")`,
    ]);
    // The modal dialog hides the rest of the page from the accessibility tree.
    expect(lines(t.turns[3]?.observation as string)).toEqual([
      "RootWebArea 'Broken stapler | Stockroom', focused, url='http://stockroom.test/#/items/3'",
      "\t[56] dialog 'Delete Broken stapler?', modal=True",
      "\t\t[57] heading 'Delete Broken stapler?'",
      "\t\t[58] paragraph ''",
      "\t\t\tStaticText 'This removes the item and its stock count.'",
      "\t\t[59] button 'Cancel', focused",
      "\t\t[60] button 'Delete'",
    ]);
    expect(t.turns[4]?.observation).toContain("StaticText 'Deleted Broken stapler.'");
    expect(t.turns[4]?.observation).toContain("StaticText '0 of 4 items'");
  });

  it("parses every AXTree of the recordings, one node per line, bids as ids", async () => {
    const counts: number[][] = [];
    for (const path of [ADD_ITEM, DELETE_ITEM]) {
      const t = await readOne(browserGymReader, path);
      counts.push(
        [t.initialObservation as string, ...t.turns.map((turn) => turn.observation)].map((text) => countNodes(parseAxTree(text))),
      );
    }
    // Non-empty lines in each fenced tree of the two files.
    expect(counts).toEqual([
      [49, 53, 31, 31, 31, 32, 33, 55, 55],
      [49, 50, 30, 23, 7, 20, 20],
    ]);
    const t = await readOne(browserGymReader, ADD_ITEM);
    const nodes = [...preorder(parseAxTree(t.turns[5]?.observation as string))];
    expect(nodes.find((n) => n.id === "66")).toMatchObject({
      key: "66",
      role: "textbox",
      name: "Name",
      attributes: { value: "Label printer", focused: "true", required: "true", describedby: "name-error" },
    });
    expect(nodes.find((n) => n.id === "76")).toMatchObject({ role: "option", name: "Office", attributes: { selected: "True" } });
    // A node without a bid is keyed by its path from the nearest node with one.
    const alertText = nodes.find((n) => n.name === "Name is required.");
    expect(alertText).toMatchObject({ role: "StaticText", key: "67/StaticText[0]" });
  });

  it("parses Python repr strings, values and flags on one line", () => {
    const tree = parseAxTree(
      `RootWebArea "Bob's page", focused\n\t[a1] textbox 'Name' value='x, y', required, describedby=['a', 'b'], valuemin=0`,
    );
    expect(tree).toMatchObject({ role: "RootWebArea", name: "Bob's page", attributes: { focused: "true" } });
    expect(tree.children[0]).toMatchObject({
      id: "a1",
      name: "Name",
      attributes: { value: "x, y", required: "true", describedby: "['a', 'b']", valuemin: "0" },
    });
    expect(parseAxTree("RootWebArea 'x'\n\tStaticText '\\uf1f6 \\t'").children[0]?.name).toBe("\uf1f6 \t");
    expect(() => parseAxTree("RootWebArea 'x'\n\t\t[1] button 'too deep'")).toThrow(/indented 2 levels/);
    expect(() => parseAxTree("RootWebArea 'unterminated")).toThrow(/unterminated/);
  });

  it("sniffs the analysis file by content and quarantines a broken one", async () => {
    expect(browserGymReader.sniff(head(ADD_ITEM), "x.txt")).toBe(true);
    expect(browserGymReader.sniff(head(UIAUTOMATOR), UIAUTOMATOR)).toBe(false);
    const dir = tempDir();
    const broken = join(dir, "experiment_analysis.md");
    writeFileSync(broken, readFileSync(ADD_ITEM, "utf8").replace("\t\t[7] button 'Menu', hasPopup", "\t\t[7] button 'Menu' hasPopup"));
    const [item] = await collect(browserGymReader.read(broken, OPTIONS));
    expect(item).toMatchObject({
      kind: "quarantine",
      entry: { id: "901cd084-a357-35e4-d373-38b5735b2cc0", stage: "read", field: "steps.0.axtree" },
    });
    const oneStep = join(dir, "one.md");
    writeFileSync(oneStep, readFileSync(ADD_ITEM, "utf8").split("## InstanceStep001")[0] as string);
    expect(quarantined(await collect(browserGymReader.read(oneStep, OPTIONS)))[0]?.reason).toMatch(/1 InstanceStep section/);
  });
});

describe("uiautomator reader (hand-written Quick Notes dumps)", () => {
  it("reads the first of the four concatenated dumps as the initial screen, the three after it as turns, actions from the comments", async () => {
    const t = await readOne(uiautomatorReader, UIAUTOMATOR);
    expect(t.domain).toBe("android");
    // The first dump has no action before it: the screen the run started on, not a turn with an empty action.
    expect(t.meta?.initial_tree_format).toBe("uiautomator-xml");
    expect(t.turns.map((turn) => turn.action)).toEqual(["tap(967, 2227)", 'text("Water the plants")', "tap(996, 136)"]);
    const observations = [t.initialObservation as string, ...t.turns.map((turn) => turn.observation)];
    for (const observation of observations) {
      expect(
        observation.startsWith('<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout"'),
      ).toBe(true);
      expect(observation.endsWith("</node></hierarchy>")).toBe(true);
      expect(observation).not.toContain("UI hierchary dumped to"); // uiautomator's own line between dumps
    }
    // <node> elements per dump: list 14, editor 9, editor with a title 9, list with the new note 17.
    const trees = observations.map((observation) => parseUiautomatorXml(observation));
    expect(trees.map(countNodes)).toEqual([15, 10, 10, 18]);
    const list = [...preorder(trees[0] as A11yNode)];
    expect(list.filter((n) => n.name !== "").map((n) => n.name)).toEqual([
      "Quick Notes",
      "Shopping list",
      "Milk, eggs, coffee",
      "Call the plumber",
      "Kitchen tap drips; ask for Thursday",
    ]);
    const fab = list.at(-1);
    expect(fab).toMatchObject({
      key: "org.example.quicknotes:id/fab_new_note",
      role: "android.widget.ImageButton",
      attributes: {
        "content-desc": "New note",
        clickable: "true",
        focusable: "true",
        "resource-id": "org.example.quicknotes:id/fab_new_note",
      },
      bounds: { left: 897, top: 2157, right: 1038, bottom: 2298 },
    });
    // Defaults (enabled=true, *=false), empty values and the parent's package are left out.
    expect(fab?.attributes).not.toHaveProperty("enabled");
    expect(fab?.attributes).not.toHaveProperty("package");
    // The two note titles share a resource-id, so each is keyed by its path from the list (a unique id).
    const titles = list.filter((n) => n.attributes["resource-id"] === "org.example.quicknotes:id/note_title");
    expect(titles.map((n) => n.key)).toEqual([
      "org.example.quicknotes:id/note_list/LinearLayout[0]/TextView[0]",
      "org.example.quicknotes:id/note_list/LinearLayout[1]/TextView[0]",
    ]);
    expect(t.turns[1]?.observation).toContain('text="Water the plants" resource-id="org.example.quicknotes:id/title_input"');
  });

  it("a first dump with an action comment before it stays a turn (the action led to it)", async () => {
    const text = readFileSync(UIAUTOMATOR, "utf8");
    const path = join(tempDir(), "from-an-action.xml");
    writeFileSync(path, `<!-- action: launch(org.example.quicknotes) -->\n${text}`);
    const t = await readOne(uiautomatorReader, path);
    expect(t.initialObservation).toBeUndefined();
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "launch(org.example.quicknotes)",
      "tap(967, 2227)",
      'text("Water the plants")',
      "tap(996, 136)",
    ]);
  });

  it("reads the dumps gzip-compressed too, and one dump alone as a one-turn trajectory", async () => {
    const text = readFileSync(UIAUTOMATOR, "utf8");
    const dir = tempDir();
    const gz = join(dir, "session.xml.gz");
    writeFileSync(gz, gzipSync(text));
    const fromGz = await readOne(uiautomatorReader, gz);
    expect(fromGz.initialObservation).toBeDefined();
    expect(fromGz.turns).toHaveLength(3);
    const single = join(dir, "window_dump.xml");
    writeFileSync(single, text.split("\n")[0] as string);
    expect(uiautomatorReader.sniff(readFileSync(single, "utf8"), single)).toBe(true);
    const one = await readOne(uiautomatorReader, single);
    expect(one.turns.map((turn) => turn.action)).toEqual([""]);
  });

  it("quarantines a malformed dump", async () => {
    const path = join(tempDir(), "bad.xml");
    writeFileSync(path, '<hierarchy rotation="0"><node text="a"></hierarchy>');
    const [entry] = quarantined(await collect(uiautomatorReader.read(path, OPTIONS)));
    expect(entry).toMatchObject({ stage: "read", field: "turns.0.observation" });
    expect(entry?.reason).toMatch(/malformed XML/);
  });

  it("reads a dump nested deeper than 100 elements (WebView content); past MAX_XML_DEPTH it says why", async () => {
    const dump = (depth: number) =>
      `<hierarchy rotation="0">${'<node index="0" text="" class="android.view.View" package="p" bounds="[0,0][9,9]">'.repeat(depth - 1)}<node index="0" text="深い ✓" class="android.widget.TextView" package="p" bounds="[0,0][1,1]"/>${"</node>".repeat(depth - 1)}</hierarchy>`;
    const dir = tempDir();
    const deep = join(dir, "webview_dump.xml");
    writeFileSync(deep, dump(150));
    const one = await readOne(uiautomatorReader, deep);
    const tree = parseUiautomatorXml(one.turns[0]?.observation as string);
    expect(countNodes(tree)).toBe(151);
    expect([...preorder(tree)].at(-1)?.name).toBe("深い ✓");
    const tooDeep = join(dir, "runaway_dump.xml");
    writeFileSync(tooDeep, dump(MAX_XML_DEPTH + 5));
    const [entry] = quarantined(await collect(uiautomatorReader.read(tooDeep, OPTIONS)));
    expect(entry?.reason).toBe(`turns.0.observation: XML nested deeper than ${MAX_XML_DEPTH} elements (the most a tree is read with)`);
  });
});

describe("droidbot reader (hand-written Quick Notes states and events)", () => {
  it("reads a device state with no events beside it as a one-turn trajectory", async () => {
    // The demo's states belong to its run (read below); alone in a folder, a state is a record.
    const dir = tempDir("lwm-droidbot-");
    for (const tag of ["120000", "120009"]) copyFileSync(state(tag), join(dir, `state_2026-01-15_${tag}.json`));
    const list = await readOne(droidBotReader, join(dir, "state_2026-01-15_120000.json"));
    const saved = await readOne(droidBotReader, join(dir, "state_2026-01-15_120009.json"));
    for (const t of [list, saved]) {
      expect(t.domain).toBe("android");
      expect(t.turns).toHaveLength(1);
      expect(t.turns[0]?.action).toBe("");
    }
    expect(list.turns[0]?.observation.startsWith('{\n  "tag": "2026-01-15_120000",')).toBe(true);
    expect(list.turns[0]?.meta).toEqual({ tree_format: "droidbot-state", state_file: "state_2026-01-15_120000.json" });
    const tree = parseDroidBotState(list.turns[0]?.observation as string);
    expect(countNodes(tree)).toBe(15); // 14 views + the hierarchy root
    expect(tree.attributes.foreground_activity).toBe("org.example.quicknotes/.NoteListActivity");
    // snake_case keys become uiautomator's names; DroidBot's bookkeeping (temp_id, signature…) is dropped.
    expect([...preorder(tree)].at(-1)).toMatchObject({
      role: "android.widget.ImageButton",
      attributes: { "content-desc": "New note", "resource-id": "org.example.quicknotes:id/fab_new_note", clickable: "true" },
    });
    expect([...preorder(tree)].at(-1)?.attributes).not.toHaveProperty("signature");
    const rows = [...preorder(parseDroidBotState(saved.turns[0]?.observation as string))].filter((n) =>
      n.attributes["resource-id"]?.endsWith("note_title"),
    );
    expect(rows.map((n) => n.name)).toEqual(["Water the plants", "Shopping list", "Call the plumber"]);
  });

  it("reads the demo run as one trajectory: its events in tag order, chained by stop_state → start_state", async () => {
    // Any file of the run reads as the run; planJob reads it once, from its first event (see read-droidbot.test.ts).
    const reads = await Promise.all(
      ["event_2026-01-15_120002.json", "event_2026-01-15_120008.json", "state_2026-01-15_120006.json"].map((name) =>
        readOne(droidBotReader, join(ANDROID, name)),
      ),
    );
    expect(reads[1]).toEqual(reads[0]);
    expect(reads[2]).toEqual(reads[0]);
    const run = reads[0] as Trajectory;
    // The "event" objects of the three event files: touch the FAB, type a title, press BACK.
    expect(run.turns.map((t) => t.action)).toEqual([
      'touch(view=<android.widget.ImageButton clickable content-desc="New note" focusable package=org.example.quicknotes resource-id=org.example.quicknotes:id/fab_new_note bounds=[897,2157][1038,2298]>)',
      'set_text(text="Water the plants", view=<android.widget.EditText clickable editable focusable focused long-clickable package=org.example.quicknotes resource-id=org.example.quicknotes:id/title_input bounds=[42,231][1038,357]>)',
      'key(name="BACK")',
    ]);
    // start_state / stop_state name the states written 1 s before and after each event.
    expect(run.turns.map((t) => t.meta?.state_file)).toEqual([
      "state_2026-01-15_120003.json",
      "state_2026-01-15_120006.json",
      "state_2026-01-15_120009.json",
    ]);
    expect(run.turns.map((t) => t.observation)).toEqual(["120003", "120006", "120009"].map((tag) => readFileSync(state(tag), "utf8")));
    expect(run.initialObservation).toBe(readFileSync(state("120000"), "utf8"));
    expect(run.turns[1]?.meta?.event_tag).toBe("2026-01-15_120005");
    expect(run.meta).toMatchObject({
      initial_tree_format: "droidbot-state",
      initial_state_file: "state_2026-01-15_120000.json",
      droidbot: { events: 3, first_tag: "2026-01-15_120002", last_tag: "2026-01-15_120008" },
    });
  });

  it("quarantines an event whose states are not beside it, and the 2016 event list", async () => {
    const dir = tempDir("lwm-droidbot-");
    const lone = join(dir, "event_2026-01-15_120008.json");
    copyFileSync(join(ANDROID, "event_2026-01-15_120008.json"), lone);
    const stopState = JSON.parse(readFileSync(lone, "utf8")).stop_state as string;
    const [event] = quarantined(await collect(droidBotReader.read(lone, OPTIONS)));
    expect(event).toMatchObject({
      field: "stop_state",
      reason: expect.stringMatching(new RegExp(`^stop_state ${stopState} has no state`)),
    });
    const [list] = quarantined(await collect(droidBotReader.read(join(HANDMADE_ANDROID, "droidbot_event.json"), OPTIONS)));
    expect(list?.reason).toMatch(/^DroidBot 2016 event list \(3 events\): its events name no device state/);
  });

  it("reads a 2016-style device state: hyphenated keys, booleans as strings", async () => {
    const t = await readOne(droidBotReader, join(HANDMADE_ANDROID, "device_state_2026-01-15_120000.json"));
    const tree = parseDroidBotState(t.turns[0]?.observation as string);
    expect(countNodes(tree)).toBe(6); // 5 views + the hierarchy root
    expect(tree.attributes.foreground_activity).toBe("org.example.settings/.WifiActivity");
    const toggle = [...preorder(tree)].find((n) => n.role === "android.widget.Switch");
    expect(toggle).toMatchObject({
      key: "org.example.settings:id/wifi_switch",
      attributes: { checkable: "true", checked: "true", clickable: "true", focusable: "true", "content-desc": "Use Wi-Fi" },
      bounds: { left: 891, top: 315, right: 1038, bottom: 462 },
    });
    expect(toggle?.attributes).not.toHaveProperty("uniqueId");
    expect(toggle?.attributes).not.toHaveProperty("view_str");
  });

  it("sniffs states, events and event lists, not other JSON", () => {
    for (const path of [state("120000"), join(ANDROID, "event_2026-01-15_120002.json"), join(HANDMADE_ANDROID, "droidbot_event.json")])
      expect(droidBotReader.sniff(head(path), path)).toBe(true);
    expect(droidBotReader.sniff('{"id": 1, "domain": "web", "turns": []}', "x.json")).toBe(false);
    expect(droidBotReader.sniff(head(UIAUTOMATOR), UIAUTOMATOR)).toBe(false);
  });
});

describe("os-a11y reader (hand-made cases)", () => {
  it("reads AT-SPI XML and OSWorld-table trajectories and quarantines the two bad lines", async () => {
    expect(osA11yReader.sniff(head(OS_JSONL), OS_JSONL)).toBe(true);
    const items = await collect(osA11yReader.read(OS_JSONL, OPTIONS));
    const [gedit, chrome] = trajectories(items);
    const file = (name: string) => readFileSync(join(OS_DIR, name), "utf8");
    // Written from the files in test/fixtures/handmade/os (see its README).
    expect(gedit?.initialObservation).toBe(file("gedit-0.xml"));
    expect(gedit?.turns.map((t) => t.observation)).toEqual([file("gedit-1.xml"), file("gedit-2.xml"), file("gedit-3.xml")]);
    expect(gedit?.turns.map((t) => t.action)).toEqual([
      "pyautogui.click(960, 540)",
      "pyautogui.typewrite('Hello, world & \"friends\"', interval=0.05)",
      "pyautogui.hotkey('ctrl', 's')",
    ]);
    expect(gedit?.turns[1]?.thinking).toBe("The editor has focus; type the greeting.");
    expect(chrome).toMatchObject({ id: "chrome-example-link", domain: "os" });
    expect(chrome?.turns.map((t) => t.observation)).toEqual([file("chrome-0.tsv"), file("chrome-1.tsv")]);
    expect(chrome?.turns[0]?.meta).toEqual({ tree_format: "osworld-table" });
    expect(quarantined(items).map((q) => [q.id, q.field])).toEqual([
      ["broken-xml", "turns.0.observation"],
      ["not-a-tree", "turns.1.observation"],
    ]);
    expect(quarantined(items)[0]?.source.line).toBe(3);
  });

  it("parses AT-SPI XML: roles, states, text content, bounds from screencoord + size", () => {
    const tree = parseAtspiXml(readFileSync(join(OS_DIR, "gedit-2.xml"), "utf8"));
    expect(tree).toMatchObject({ role: "desktop-frame", name: "main", bounds: { left: 0, top: 0, right: 1920, bottom: 1080 } });
    expect(tree.attributes).toEqual({});
    const text = [...preorder(tree)].find((n) => n.key === "view");
    expect(text?.attributes).toMatchObject({ text: 'Hello, world & "friends"', "st:focused": "true", "attr:id": "view" });
    expect(text?.bounds).toEqual({ left: 70, top: 78, right: 1905, bottom: 1048 });
  });

  it("parses AT-SPI XML nested deeper than 100 elements (browser content in a desktop tree)", () => {
    const xml = `<desktop-frame name="main">${'<section name="">'.repeat(120)}<label name="مرحبا 😀"/>${"</section>".repeat(120)}</desktop-frame>`;
    const tree = parseAtspiXml(xml);
    expect(countNodes(tree)).toBe(122);
    expect([...preorder(tree)].at(-1)?.name).toBe("مرحبا 😀");
  });

  it("parses the OSWorld table: quoted text with doubled quotes, raw newlines, empty cells", () => {
    const first = parseOsworldTable(readFileSync(join(OS_DIR, "chrome-0.tsv"), "utf8"));
    expect(first.children.map((n) => n.role)).toEqual(["push-button", "entry", "heading", "paragraph", "link"]);
    expect(first.children[0]).toMatchObject({
      name: "Back",
      attributes: { description: "Go back" },
      bounds: { left: 12, top: 44, right: 46, bottom: 78 },
    });
    expect(first.children[3]?.attributes.text).toBe('This domain is for use in "illustrative" examples');
    const second = parseOsworldTable(readFileSync(join(OS_DIR, "chrome-1.tsv"), "utf8"));
    expect(second.children).toHaveLength(5);
    expect(second.children[3]?.attributes.text).toBe("As described in RFC 2606\nand RFC 6761, a number of domains");
    expect(() => parseOsworldTable("tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\nbutton\tOK")).toThrow(
      /2 fields/,
    );
  });
});
