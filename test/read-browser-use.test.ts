import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { parseWebObservation } from "../src/normalize/domains/web.ts";
import { browserUseReader } from "../src/read/browser-use.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, detectFromHead, READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const DIR = join(ROOT, "test/fixtures/handmade/browser-use");
const V01 = join(DIR, "agent-history-v0.1.json");
const V07 = join(DIR, "agent-history-v0.7.json");
const RUNS = join(DIR, "runs.jsonl");
const OPTIONS = { maxLineBytes: 1 << 24 };

type Json = Record<string, unknown>;
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const read = (path: string) => collect(browserUseReader.read(path, OPTIONS));
/** Step `i` of a history being edited (the fixtures have them all). */
const at = (history: Json[], i: number) => history[i] as Json;
const load = (path: string) => JSON.parse(readFileSync(path, "utf8")) as { history: Json[] };

function write(name: string, content: string | Uint8Array): string {
  const path = join(tempDir("lwm-browser-use-"), name);
  writeFileSync(path, content);
  return path;
}

async function only(path: string): Promise<Trajectory> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  const [t] = trajectories(items);
  if (!t) throw new Error(`not a trajectory: ${JSON.stringify(items[0])}`);
  return t;
}

/** Every string a trajectory carries, for "this never appears anywhere" checks. */
const allText = (t: Trajectory) => JSON.stringify(t);

describe("browser-use: detection", () => {
  it("detects each fixture as browser-use by content (pretty-printed document, JSONL), not by name", async () => {
    for (const file of [V01, V07, RUNS]) {
      const detection = await detectFormat(file);
      expect(detection.kind === "format" && detection.reader.name, file).toBe("browser-use");
      // The name is no hint: the same bytes under another name are the same format.
      const renamed = write("export.txt", readFileSync(file));
      const again = await detectFormat(renamed);
      expect(again.kind === "format" && again.reader.name).toBe("browser-use");
    }
  });

  it("no reader tried before it claims a history, and it claims none of the other formats' fixtures (negative control)", async () => {
    const position = READERS.findIndex((reader) => reader.name === "browser-use");
    expect(position).toBeGreaterThan(0);
    for (const file of [V01, V07, RUNS]) {
      const head = await readHead(file);
      expect(READERS.slice(0, position).find((reader) => reader.sniff(head, file))?.name).toBeUndefined();
    }
    // Web and chat fixtures of other formats that hold a `history` key, `model_output` or web steps.
    for (const file of [
      "test/fixtures/handmade/webarena/action-history-result.json",
      "test/fixtures/handmade/webarena/trajectory-combined.json",
      "test/fixtures/handmade/webarena/agentlab-steps.json",
      "test/fixtures/handmade/mind2web/train-tasks.json",
      "test/fixtures/handmade/chat-tool-rows/openai-swe.jsonl",
    ]) {
      expect(browserUseReader.sniff(await readHead(join(ROOT, file)), file), file).toBe(false);
    }
    const lookalikes = [
      // A chat dataset's `history` of [question, answer] pairs (ChatGLM / Alpaca style).
      { instruction: "Say hi", output: "Hi", history: [["What is 2+2?", "4"]] },
      // An empty run: nothing says it is browser-use's.
      { history: [] },
      // Chat turns under `history`.
      { history: [{ role: "user", content: "hello" }], model_output: null },
      // A step-shaped list without model_output anywhere.
      { history: [{ state: { url: "https://a.example" }, result: [] }] },
    ];
    for (const value of lookalikes) {
      const line = JSON.stringify(value);
      expect(browserUseReader.sniff(line, "x.json"), line).toBe(false);
      const detected = detectFromHead(`${line}\n`, "x.jsonl");
      expect(detected.kind === "format" && detected.reader.name).not.toBe("browser-use");
    }
  });

  it("reads a gzip'd history and a JSON array of histories", async () => {
    const gz = write("history.json.gz", gzipSync(readFileSync(V07)));
    const detection = await detectFormat(gz);
    expect(detection.kind === "format" && detection.reader.name).toBe("browser-use");
    expect((await only(gz)).turns).toHaveLength(3);
    const array = write("histories.json", JSON.stringify([load(V01), load(V07)], null, 2));
    const arrayDetection = await detectFormat(array);
    expect(arrayDetection.kind === "format" && arrayDetection.reader.name).toBe("browser-use");
    const items = await read(array);
    expect(trajectories(items).map((t) => t.turns.length)).toEqual([4, 3]);
    expect(items.map((i) => (i.kind === "trajectory" ? i.trajectory.source.row : undefined))).toEqual([0, 1]);
  });
});

describe("browser-use 0.1.x history (current_state, base64 screenshots)", () => {
  it("each step's actions → the results and the page after them; the first page is the initial observation", async () => {
    const t = await only(V01);
    expect(t.domain).toBe("web");
    expect(t.id).toMatch(/^browser-use-[0-9a-f]{16}$/);
    expect(t.initialObservation).toBe("URL: about:blank");
    expect(t.task).toBeUndefined();
    expect(t.turns).toHaveLength(4);
    const [go, search, missing, open] = t.turns as [
      Trajectory["turns"][0],
      Trajectory["turns"][0],
      Trajectory["turns"][0],
      Trajectory["turns"][0],
    ];
    expect(JSON.parse(go.action)).toEqual({ name: "go_to_url", arguments: { url: "https://library.lindenfeld.example/" } });
    // save_to_file writes ASCII JSON: the emoji came as \ud83d\udd17 escapes and are decoded.
    expect(go.observation).toBe(
      "Result: 🔗  Navigated to https://library.lindenfeld.example/\nURL: https://library.lindenfeld.example/\nTitle: Lindenfeld Library",
    );
    expect(go.meta).toMatchObject({
      tool: "go_to_url",
      step_number: 1,
      duration_s: 4.25,
      input_tokens: 2710,
      url: "https://library.lindenfeld.example/",
    });
    // Two actions in one step: numbered calls and results, in order.
    expect(search.action.split("\n").filter((line) => line.startsWith("[call "))).toEqual(["[call 1/2]", "[call 2/2]"]);
    expect(search.observation).toBe(
      [
        "[result 1/2] ⌨️  Input opening hours into index 4",
        "[result 2/2] 🖱️  Clicked button with index 5: Search",
        "URL: https://library.lindenfeld.example/search?q=opening+hours",
        "Title: Search: opening hours",
      ].join("\n"),
    );
    expect(search.meta).toMatchObject({ tools: ["input_text", "click_element"], parallel_calls: 2 });
    expect(search.meta?.interacted_elements).toEqual([
      {
        tag: "input",
        index: 4,
        xpath: "html/body/div[1]/form/input",
        attributes: { type: "search", name: "q", placeholder: "Search the library" },
      },
      { tag: "button", index: 5, xpath: "html/body/div[1]/form/button", attributes: { type: "submit" } },
    ]);
    // A failed action: its error is what the browser answered.
    expect(missing.observation.split("\n")[0]).toBe("Error: Element with index 12 does not exist - retry or use alternative actions");
    expect(missing.meta).toMatchObject({ is_error: true });
    expect(open.observation).toContain(
      '{"main_branch": "Mon-Fri 09:00-19:00, Sat 10:00-14:00, Sun closed"}\n```\nURL: https://library.lindenfeld.example/visit/hours',
    );
    // current_state → thinking, one labelled line per field.
    expect(go.thinking).toBe(
      [
        "Evaluation of the previous goal: Unknown - the browser has just started on a blank page.",
        "Memory: Task: find the opening hours of the Lindenfeld public library. 0 of 1 answers found.",
        "Next goal: Open the library's website.",
      ].join("\n"),
    );
  });

  it("the final done is no turn: its action is unobserved, its text the final result, is_done + success the outcome", async () => {
    const t = await only(V01);
    expect(t.turns.some((turn) => turn.action.includes('"done"'))).toBe(false);
    expect(JSON.parse(t.meta?.unobserved_final_action as string)).toMatchObject({ name: "done", arguments: { success: true } });
    expect(t.meta).toMatchObject({
      agent: "browser-use",
      outcome: { success: true },
      final_result: "The main branch is open Mon-Fri 09:00-19:00 and Sat 10:00-14:00; it is closed on Sundays.",
      browser_use: { steps: 5, is_done: true, screenshots_omitted: 4 },
    });
  });

  it("base64 screenshots never reach any text or meta", async () => {
    const t = await only(V01);
    const raw = load(V01);
    const b64 = (at(raw.history, 1).state as Json).screenshot as string;
    expect(b64.length).toBeGreaterThan(40);
    expect(allText(t)).not.toContain(b64.slice(0, 24));
  });
});

describe("browser-use 0.5+/0.7 history (flattened output, thinking, screenshot paths)", () => {
  it("thinking first, then the labelled fields; a null model_output is no turn, counted", async () => {
    const t = await only(V07);
    expect(t.turns).toHaveLength(3);
    const [navigate] = t.turns;
    expect(navigate?.thinking?.split("\n")).toEqual([
      "The browser is on a blank page. The user wants the cheapest 2-person tent on the outdoor shop; I should open the shop first.",
      "Evaluation of the previous goal: Start of the task.",
      "Memory: Nothing found yet.",
      "Next goal: Open the outdoor shop.",
    ]);
    // long_term_memory stands in for a result with no extracted_content.
    expect(navigate?.observation.split("\n")[0]).toBe("Result: Navigated to https://shop.trailgear.example");
    // The unparsed step's state is still the page after step 1.
    expect(navigate?.meta).toMatchObject({
      url: "https://shop.trailgear.example/",
      screenshot: "/tmp/browser_use_agent_0195c0de/screenshots/step_2.png",
    });
    expect(t.meta?.skipped).toEqual({ step_without_model_output: 1 });
  });

  it("a step cut short: executed results, the error, `[not executed]` for the rest; two tabs are listed", async () => {
    const t = await only(V07);
    const cut = t.turns[1];
    expect(cut?.observation.split("\n")).toEqual([
      "[result 1/3] Clicked a 'Tents'",
      "[result 2/3] Error: Tab 7C2D is loading; wait and try again",
      "[result 3/3] [not executed]",
      "URL: https://shop.trailgear.example/",
      "Title: TrailGear – Outdoor Shop",
      "Tab 0: TrailGear – Outdoor Shop (https://shop.trailgear.example/)",
      "Tab 1: Tents | TrailGear (https://shop.trailgear.example/c/tents)",
    ]);
    expect(cut?.meta).toMatchObject({ is_error: true, error_results: [2], unexecuted_actions: 1, tools: ["click", "switch", "scroll"] });
    expect(cut?.meta?.interacted_elements).toEqual([
      { tag: "A", xpath: "html/body/header/nav/ul/li[3]/a", attributes: { href: "/c/tents", class: "nav-link" } },
      null,
      null,
    ]);
    expect(t.meta).toMatchObject({ outcome: { success: true }, browser_use: { steps: 5, is_done: true, unexecuted_actions: 1 } });
    expect(t.meta?.browser_use).not.toHaveProperty("screenshots_omitted");
  });

  it("no observation reads as an accessibility tree (the web normalizer leaves them as text)", async () => {
    for (const file of [V01, V07, RUNS])
      for (const t of trajectories(await read(file))) {
        for (const turn of t.turns) expect(() => parseWebObservation(turn.observation), turn.observation).toThrow();
        if (t.initialObservation !== undefined) expect(() => parseWebObservation(t.initialObservation as string)).toThrow();
      }
  });
});

describe("browser-use: JSONL of runs, earliest schema, unfinished runs", () => {
  it("one run per line; a wrapper's `task`; interacted_element as one object; no success → no outcome", async () => {
    const items = await read(RUNS);
    expect(items).toHaveLength(2);
    const [early, unfinished] = trajectories(items);
    expect(early?.task).toBe("Find the weather forecast for Saltmere tomorrow");
    expect(early?.source).toMatchObject({ line: 1, format: "browser-use" });
    expect(unfinished?.source).toMatchObject({ line: 2 });
    expect(early?.turns).toHaveLength(2);
    expect(early?.turns[1]?.meta?.interacted_elements).toEqual([
      { tag: "a", index: 21, xpath: "html/body/div[3]/div/div[1]/a", attributes: { href: "https://weather.saltmere.example/tomorrow" } },
    ]);
    expect(early?.meta).not.toHaveProperty("outcome");
    expect(early?.meta).toMatchObject({ final_result: "Tomorrow in Saltmere: light rain, 9-13 °C.", browser_use: { is_done: true } });
  });

  it("a run that never finished keeps its last step as a turn, without a page after it; an empty result is counted", async () => {
    const [, unfinished] = trajectories(await read(RUNS));
    expect(unfinished?.turns.map((turn) => JSON.parse(turn.action).name)).toEqual(["go_to_url", "go_back"]);
    expect(unfinished?.turns[1]?.observation).toBe("Result: [no output]");
    expect(unfinished?.turns[1]?.meta).not.toHaveProperty("url");
    expect(unfinished?.meta).toMatchObject({ browser_use: { steps: 2, is_done: false, empty_results: 1 } });
    expect(unfinished?.meta).not.toHaveProperty("outcome");
    expect(unfinished?.meta).not.toHaveProperty("unobserved_final_action");
  });

  it("only a done step, or no step at all: a record filtered at read (no-observations), not a silent empty one", async () => {
    const v01 = load(V01);
    const doneOnly = write("done.json", JSON.stringify({ history: v01.history.slice(-1) }, null, 2));
    const t = await only(doneOnly);
    expect(t.turns).toHaveLength(0);
    expect(t.meta?.read_filter).toMatchObject({ stage: "no-observations" });
    expect(t.meta).toMatchObject({ outcome: { success: true } });
    const empty = await only(write("empty.json", '{\n  "history": []\n}\n'));
    expect(empty.meta?.read_filter).toMatchObject({ stage: "no-observations" });
  });
});

describe("browser-use: ids", () => {
  it("the id is the run's content hash: the same for the same content in any layout, different for other content", async () => {
    const pretty = await only(V07);
    const again = await only(V07);
    expect(again.id).toBe(pretty.id);
    const compact = write("run.jsonl", `${JSON.stringify(load(V07))}\n`);
    const fromLine = await only(compact);
    expect(fromLine.id).toBe(pretty.id);
    expect(fromLine.turns).toEqual(pretty.turns);
    const changed = load(V07);
    (at(changed.history, 0).state as Json).title = "Another start page";
    expect((await only(write("changed.json", JSON.stringify(changed, null, 2)))).id).not.toBe(pretty.id);
    expect((await only(V01)).id).not.toBe(pretty.id);
  });
});

describe("browser-use: bad input is quarantined naming the file, the step and the field", () => {
  const cases: { what: string; edit: (history: Json[]) => void; field: string }[] = [
    {
      what: "a result's error is a number",
      edit: (h) => (((at(h, 2).result as Json[])[0] as Json).error = 404),
      field: "history.2.result.0.error",
    },
    {
      what: "the actions are not a list",
      edit: (h) => ((at(h, 1).model_output as Json).action = { click_element: { index: 5 } }),
      field: "history.1.model_output.action",
    },
    {
      what: "an action's parameters are a string",
      edit: (h) => ((at(h, 0).model_output as Json).action = [{ go_to_url: "https://x.example" }]),
      field: "history.0.model_output.action.0.go_to_url",
    },
    { what: "the state is missing", edit: (h) => delete at(h, 3).state, field: "history.3.state" },
    { what: "result is an object", edit: (h) => ((h[1] as Json).result = { is_done: false }), field: "history.1.result" },
    { what: "the URL is a number", edit: (h) => ((at(h, 2).state as Json).url = 7), field: "history.2.state.url" },
    {
      what: "memory is a list",
      edit: (h) => (((at(h, 1).model_output as Json).current_state as Json).memory = ["a"]),
      field: "history.1.model_output.current_state.memory",
    },
    { what: "a step is a string", edit: (h) => (h[4] = "step" as unknown as Json), field: "history.4" },
    {
      what: "input_tokens is a string",
      edit: (h) => ((at(h, 0).metadata as Json).input_tokens = "2710"),
      field: "history.0.metadata.input_tokens",
    },
  ];
  for (const { what, edit, field } of cases) {
    it(`${what} → the file (a document) is one quarantine entry, field ${field}`, async () => {
      const run = load(V01);
      edit(run.history);
      const path = write("bad.json", JSON.stringify(run, null, 2));
      const items = await read(path);
      expect(items).toHaveLength(1);
      const [entry] = quarantined(items);
      expect(entry?.source.uri).toBe(path);
      expect(entry?.field).toBe(field);
      expect(entry?.stage).toBe("read");
      const step = field.split(".")[1];
      expect(entry?.reason).toContain(`history step ${step}`);
      expect(entry?.id).toMatch(/^browser-use-/);
    });
  }

  it("records in = out + quarantined: a JSONL of three runs with a bad middle one", async () => {
    const bad = load(V07);
    ((at(bad.history, 3).result as Json[])[1] as Json).extracted_content = { text: "x" };
    const path = write("runs.jsonl", [load(V01), bad, load(V07)].map((run) => JSON.stringify(run)).join("\n"));
    const items = await read(path);
    expect(items).toHaveLength(3);
    expect(trajectories(items).map((t) => t.source.line)).toEqual([1, 3]);
    const [entry] = quarantined(items);
    expect(entry).toMatchObject({ source: { uri: path, line: 2 }, field: "history.3.result.1.extracted_content" });
    expect(entry?.reason).toMatch(/^line 2: history step 3: result\.1\.extracted_content: expected a string or null, got an object/);
  });

  it("broken JSON, a non-object document, a missing or wrong-typed history: one quarantine entry each", async () => {
    const text = readFileSync(V07, "utf8");
    const reasons = async (content: string) => {
      const items = await read(write("x.json", content));
      expect(items).toHaveLength(1);
      return quarantined(items)[0]?.reason ?? "";
    };
    expect(await reasons(text.slice(0, text.length / 2))).toMatch(/not one JSON document/);
    expect(await reasons('{\n  "history": {"model_output": null}\n}\n')).toMatch(/"history" must be a list/);
    expect(await reasons('{\n  "runs": []\n}\n')).toMatch(/no "history" list/);
    expect(await reasons('{\n  "task": 5,\n  "history": []\n}\n')).toMatch(/"task" must be a string/);
  });
});
