/**
 * The tree readers (BrowserGym AXTree text, uiautomator dumps, DroidBot states and events) on the
 * third-party samples in ../shared/fixtures/real/{web,android} (see test/third-party/support.ts),
 * with the values a person read from those files. test/read-trees.test.ts covers the same readers
 * on the project's own recordings (data/demo/web, data/demo/android).
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { expect, it } from "vitest";
import type { Trajectory } from "../../src/core/trajectory.ts";
import { countNodes, preorder } from "../../src/normalize/tree/a11y-tree.ts";
import { browserGymReader, parseAxTree } from "../../src/read/browsergym.ts";
import { droidBotReader, parseDroidBotState } from "../../src/read/droidbot.ts";
import type { Reader, ReadItem } from "../../src/read/reader.ts";
import { parseUiautomatorXml, uiautomatorReader } from "../../src/read/uiautomator-xml.ts";
import { collect, tempDir } from "../helpers.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
const BROWSERGYM = thirdParty("web/browsergym/workarena.all-menu_4__experiment_analysis.md");
const UIAUTOMATOR = thirdParty("android/mobile-env/window_dump.example.xml");
const DROIDBOT = thirdParty("android/droidbot");

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

/**
 * DroidBot's own layout (`events/` + `states/`) rebuilt around the three real 2017 event files.
 * Their states were not published, so the real 2016 device states stand in for them under the
 * `state_str` hashes the events name (c871… before/after HOME, 08bd… after the intent, 72ea…
 * after the touch).
 */
function droidBotLayout(): { dir: string; events: string[] } {
  const dir = tempDir("lwm-droidbot-");
  mkdirSync(join(dir, "events"));
  mkdirSync(join(dir, "states"));
  const events = ["155422", "155424", "155427"].map((t) => {
    const target = join(dir, "events", `event_2017-08-11_${t}.json`);
    copyFileSync(join(DROIDBOT, `2017_album__event_2017-08-11_${t}.json`), target);
    return target;
  });
  const launcher = JSON.parse(readFileSync(join(DROIDBOT, "2016_paypal__device_state_2016-07-15_221456.json"), "utf8"));
  const dialog = JSON.parse(readFileSync(join(DROIDBOT, "2016_paypal__device_state_2016-07-15_212930.json"), "utf8"));
  const state = (name: string, body: object, stateStr: string) =>
    writeFileSync(join(dir, "states", name), JSON.stringify({ ...body, state_str: stateStr }, null, 2));
  state("state_2017-08-11_155421.json", launcher, "c871d40def92fccd628177c86619eb53");
  state("state_2017-08-11_155423.json", dialog, "08bd71908a03b06087f7bdabc43a7894");
  state("state_2017-08-11_155426.json", launcher, "72eaed0ade1c06067be81d18aa5604af");
  return { dir, events };
}

describeThirdParty("browsergym reader", () => {
  it("reads the WorkArena experiment_analysis.md into 3 turns with the values in the file", async () => {
    const t = await readOne(browserGymReader, BROWSERGYM);
    // Values read from ../shared/fixtures/real/web/browsergym/workarena.all-menu_4__experiment_analysis.md:
    // Trace ID (line 11), Derived Goal (line 7), InstanceStep000-003, "Next Action" code of steps 0-2.
    expect(t.id).toBe("f777d81a-af13-4bff-b7c4-63c3dff587cf");
    expect(t.domain).toBe("web");
    expect(t.task).toBe('Navigate to the "SLAs > My Work" module of the "Service Desk" application.');
    // summary_info.json: n_steps 3.
    const summary = JSON.parse(readFileSync(thirdParty("web/browsergym/workarena.all-menu_4__summary_info.json"), "utf8"));
    expect(t.turns).toHaveLength(summary.n_steps);
    expect(t.turns.map((turn) => turn.action)).toEqual(["click('79')", "fill('224', 'Service Desk')", "click('363')"]);
    // Step 0 tree: lines 35-68; step 1: 100-335 ([215] region on line 107); step 3 (after the last action): 700-847.
    const initial = lines(t.initialObservation as string);
    expect(initial[0]).toBe("RootWebArea 'Home | ServiceNow', focused, url='https://dev282647.service-now.com/now/nav/ui/home'");
    expect(initial.at(-1)).toBe("\t\t[182] image 'Loading'");
    const first = lines(t.turns[0]?.observation as string);
    expect(first[0]).toBe(initial[0]);
    expect(first[7]).toBe("\t[215] region 'There are 0 announcements displayed', live='polite', relevant='additions text'");
    expect(first.at(-1)).toBe("\t\t[182] image 'Loading'");
    expect(lines(t.turns[1]?.observation as string)[0]).toMatch(/^RootWebArea 'Shared admin dashboard \| ServiceNow', focused, url=/);
    const last = lines(t.turns[2]?.observation as string);
    expect(last[0]).toMatch(/^RootWebArea 'Task SLAs \| ServiceNow', url='https:\/\/dev282647\.service-now\.com\/now\/nav\/ui\/classic\//);
    expect(last.at(-1)).toBe("\t\t\t\t\t\tStaticText '\\uf1f6'");
    expect(t.turns[0]?.thinking).toMatch(/^To navigate to the "SLAs > My Work" module/);
    expect(t.turns[2]?.thinking).toMatch(/I need to click on the link for "My Work" under the "SLAs" section\.$/);
    expect(t.turns[1]?.meta).toMatchObject({
      tree_format: "browsergym-axtree",
      open_tabs: expect.stringContaining("Shared admin dashboard"),
    });
    expect(t.meta).toMatchObject({ model_name: "gpt-4o", date: "2024-12-18 12:49:54" });
    expect(t.meta?.unobserved_final_action).toBeUndefined(); // step 3: "No next action available"
    // Its side files, read in place: summary_info.json (cum_reward 1 → reward 1, success; err_msg null → no
    // failure mode) and experiment.log's first line ("Running experiment DemoAgentArgs_on_workarena.servicenow.all-menu_4").
    expect(t.meta?.outcome).toEqual({ reward: summary.cum_reward, success: true });
    expect(t.meta).toMatchObject({ agent: "DemoAgentArgs", task_id: "workarena.servicenow.all-menu" });
  });

  it("parses every AXTree of the sample, one node per line, bids as ids", async () => {
    const t = await readOne(browserGymReader, BROWSERGYM);
    const trees = [t.initialObservation as string, ...t.turns.map((turn) => turn.observation)].map((text) => parseAxTree(text));
    // Non-empty lines in the four fenced trees (35-68, 100-335, 385-624, 700-847).
    expect(trees.map(countNodes)).toEqual([34, 236, 240, 148]);
    const nodes = [...preorder(trees[0] as never)] as ReturnType<typeof parseAxTree>[];
    const all = nodes.find((n) => n.id === "79");
    expect(all).toMatchObject({ key: "79", role: "button", name: "All", attributes: { expanded: "False" } });
    expect(nodes[1]).toMatchObject({
      id: "47",
      role: "generic",
      name: "",
      attributes: { live: "assertive", atomic: "true", relevant: "additions text" },
    });
    const lastNode = [...preorder(trees[3] as never)].at(-1) as { name: string; key: string };
    expect(lastNode.name).toBe("\uf1f6"); // Python repr escape decoded
    expect(lastNode.key).toBe("a511/StaticText[0]"); // no bid: path from the nearest node with one
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
    expect(() => parseAxTree("RootWebArea 'x'\n\t\t[1] button 'too deep'")).toThrow(/indented 2 levels/);
    expect(() => parseAxTree("RootWebArea 'unterminated")).toThrow(/unterminated/);
  });

  it("sniffs the analysis file by content and quarantines a broken one", async () => {
    expect(browserGymReader.sniff(head(BROWSERGYM), "x.txt")).toBe(true);
    expect(browserGymReader.sniff(head(UIAUTOMATOR), UIAUTOMATOR)).toBe(false);
    const dir = tempDir();
    const broken = join(dir, "experiment_analysis.md");
    writeFileSync(broken, readFileSync(BROWSERGYM, "utf8").replace("\t[47] generic, live='assertive'", "\t[47] generic live='assertive'"));
    const [item] = await collect(browserGymReader.read(broken, OPTIONS));
    expect(item).toMatchObject({
      kind: "quarantine",
      entry: { id: "f777d81a-af13-4bff-b7c4-63c3dff587cf", stage: "read", field: "steps.0.axtree" },
    });
    const oneStep = join(dir, "one.md");
    writeFileSync(oneStep, readFileSync(BROWSERGYM, "utf8").split("## InstanceStep001")[0] as string);
    expect(quarantined(await collect(browserGymReader.read(oneStep, OPTIONS)))[0]?.reason).toMatch(/1 InstanceStep section/);
  });
});

describeThirdParty("uiautomator reader", () => {
  it("reads the real Gmail dump as a one-turn trajectory", async () => {
    const t = await readOne(uiautomatorReader, UIAUTOMATOR);
    // window_dump.example.xml: one line, 20 <node> elements, texts "New in Gmail", "All the features…", "GOT IT".
    expect(t.domain).toBe("android");
    expect(t.turns).toHaveLength(1);
    expect(t.turns[0]?.action).toBe("");
    expect(
      t.turns[0]?.observation.startsWith(
        '<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout"',
      ),
    ).toBe(true);
    expect(t.turns[0]?.observation.endsWith('bounds="[0,0][0,0]" /></node></hierarchy>')).toBe(true);
    const tree = parseUiautomatorXml(t.turns[0]?.observation as string);
    expect(countNodes(tree)).toBe(21);
    const named = [...preorder(tree)].filter((n) => n.name !== "");
    expect(named.map((n) => n.name)).toEqual(["New in Gmail", "All the features you love with a fresh new look", "GOT IT"]);
    expect(named[2]).toMatchObject({
      key: "com.google.android.gm:id/welcome_tour_got_it",
      role: "android.widget.TextView",
      attributes: { clickable: "true", focusable: "true", "resource-id": "com.google.android.gm:id/welcome_tour_got_it" },
      bounds: { left: 0, top: 1647, right: 1080, bottom: 1794 },
    });
    // Defaults (enabled=true, *=false), empty values and the parent's package are left out.
    expect(named[2]?.attributes).not.toHaveProperty("enabled");
    expect(named[2]?.attributes).not.toHaveProperty("package");
  });

  it("reads concatenated dumps with action comments as turns after the first screen, also gzip-compressed", async () => {
    const dump = readFileSync(UIAUTOMATOR, "utf8");
    const next = dump.replace('text="GOT IT"', 'text="GOT IT!"');
    const dir = tempDir();
    const path = join(dir, "session.xml.gz");
    writeFileSync(path, gzipSync(`${dump}UI hierchary dumped to: /dev/tty\n<!-- action: tap(540, 1720) -->\n${next}`));
    expect(uiautomatorReader.sniff(dump, path)).toBe(true);
    const t = await readOne(uiautomatorReader, path);
    // The first dump, with no action before it, is the screen the session started on.
    expect(t.initialObservation).toContain('text="GOT IT"');
    expect(t.initialObservation).not.toContain('text="GOT IT!"');
    expect(t.turns.map((turn) => turn.action)).toEqual(["tap(540, 1720)"]);
    expect(t.turns[0]?.observation).toContain('text="GOT IT!"');
  });

  it("quarantines a malformed dump", async () => {
    const path = join(tempDir(), "bad.xml");
    writeFileSync(path, '<hierarchy rotation="0"><node text="a"></hierarchy>');
    const [entry] = quarantined(await collect(uiautomatorReader.read(path, OPTIONS)));
    expect(entry).toMatchObject({ stage: "read", field: "turns.0.observation" });
    expect(entry?.reason).toMatch(/malformed XML/);
  });
});

describeThirdParty("droidbot reader", () => {
  it("reads each real device state as a one-turn trajectory", async () => {
    // device_state_2016-07-15_212930.json: 3 views (a promo dialog with an "OK" button);
    // device_state_2016-07-15_221456.json: 17 views (the launcher, "Camera" last).
    const dialog = await readOne(droidBotReader, join(DROIDBOT, "2016_paypal__device_state_2016-07-15_212930.json"));
    const launcher = await readOne(droidBotReader, join(DROIDBOT, "2016_paypal__device_state_2016-07-15_221456.json"));
    for (const t of [dialog, launcher]) {
      expect(t.domain).toBe("android");
      expect(t.turns).toHaveLength(1);
      expect(t.turns[0]?.action).toBe("");
      expect(t.turns[0]?.observation.startsWith('{\n  "background_services": [')).toBe(true);
    }
    const small = parseDroidBotState(dialog.turns[0]?.observation as string);
    expect(countNodes(small)).toBe(4); // 3 views + the hierarchy root
    expect(small.attributes.foreground_activity).toBe("com.paypal.android.p2pmobile/.activity.FirstTimeUseCarouselActivity");
    expect(small.children[0]?.children.map((n) => n.name)).toEqual([
      "\nAction required.\n\nThis is system application.\n\n   You must activate device administator.   \n",
      "OK",
    ]);
    const big = parseDroidBotState(launcher.turns[0]?.observation as string);
    expect(countNodes(big)).toBe(18);
    expect([...preorder(big)].at(-1)).toMatchObject({ name: "Camera", attributes: { "content-desc": "Camera", clickable: "true" } });
  });

  it("quarantines the 2016 event list and events whose states are not beside them", async () => {
    const [list] = quarantined(await collect(droidBotReader.read(join(DROIDBOT, "2016_paypal__droidbot_event.json"), OPTIONS)));
    expect(list?.reason).toMatch(/^DroidBot 2016 event list \(12 events\): its events name no device state/);
    // The three 2017_album__ events are one run (same prefix): reading any of them reads the run.
    // Their states were not published, so each event is quarantined under its own file, naming
    // the stop state it lacks, and no trajectory is made.
    const items = await collect(droidBotReader.read(join(DROIDBOT, "2017_album__event_2017-08-11_155427.json"), OPTIONS));
    expect(trajectories(items)).toEqual([]);
    const stops: [string, string][] = [
      ["155422", "c871d40def92fccd628177c86619eb53"],
      ["155424", "08bd71908a03b06087f7bdabc43a7894"],
      ["155427", "72eaed0ade1c06067be81d18aa5604af"],
    ];
    expect(quarantined(items)).toEqual(
      stops.map(([tag, stop]) =>
        expect.objectContaining({
          source: { uri: join(DROIDBOT, `2017_album__event_2017-08-11_${tag}.json`), format: "droidbot" },
          stage: "read",
          field: "stop_state",
          reason: expect.stringMatching(new RegExp(`^stop_state ${stop} has no state`)),
        }),
      ),
    );
  });

  it("reads the real 2017 events as one run, each event a transition between the states it names", async () => {
    const { events } = droidBotLayout();
    // Any event of the run reads as the whole run, from its first event.
    const read = await Promise.all(events.map((path) => readOne(droidBotReader, path)));
    const [run] = read as [Trajectory];
    for (const t of read) expect(t).toEqual(run);
    expect(run.source.uri).toBe(events[0]);
    // The "event" objects of event_2017-08-11_155422/155424/155427.json, chained by state:
    // c871 -HOME-> c871 -intent-> 08bd -touch-> 72ea.
    expect(run.turns.map((turn) => turn.action)).toEqual([
      'key(name="HOME")',
      'intent(intent="am start com.yanzhenjie.album.sample/com.yanzhenjie.album.sample.MainActivity")',
      'touch(view=<android.widget.TextView clickable content-desc="Select Image" focusable long-clickable package=com.yanzhenjie.album.sample resource-id=com.yanzhenjie.album.sample:id/action_check_image bounds=[1248,112][1440,304]>)',
    ]);
    expect(run.turns.map((turn) => turn.meta?.state_file)).toEqual([
      "state_2017-08-11_155421.json",
      "state_2017-08-11_155423.json",
      "state_2017-08-11_155426.json",
    ]);
    expect(run.turns.map((turn) => turn.meta?.event_tag)).toEqual(["2017-08-11_155422", "2017-08-11_155424", "2017-08-11_155427"]);
    expect(run.initialObservation).toBe(run.turns[0]?.observation); // HOME on the launcher: start = stop
    expect(run.meta).toMatchObject({
      initial_tree_format: "droidbot-state",
      initial_state_file: "state_2017-08-11_155421.json",
      droidbot: { events: 3, first_tag: "2017-08-11_155422", last_tag: "2017-08-11_155427" },
    });
    expect(run.meta?.droidbot).not.toHaveProperty("parts");
  });

  it("sniffs states, events and event lists, not other JSON", () => {
    for (const name of [
      "2016_paypal__device_state_2016-07-15_212930.json",
      "2016_paypal__droidbot_event.json",
      "2017_album__event_2017-08-11_155422.json",
    ])
      expect(droidBotReader.sniff(head(join(DROIDBOT, name)), name)).toBe(true);
    expect(droidBotReader.sniff('{"id": 1, "domain": "web", "turns": []}', "x.json")).toBe(false);
    expect(droidBotReader.sniff(head(UIAUTOMATOR), UIAUTOMATOR)).toBe(false);
  });
});
