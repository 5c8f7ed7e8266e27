/**
 * The Agent Data Protocol reader (src/read/adp.ts) on the hand-written files in
 * test/fixtures/handmade/adp/ (README.md there: AgentTuning-OS and CodeAct-style JSONL, an older
 * SWE-Gym-style JSON array, a Go-Browse-style web array, Mind2Web-style HTML pages and parallel
 * function calls, hostile lines), on files built in the tests (Parquet rows as the Hub's
 * `datasets` writes them, a single pretty-printed trajectory, byte ranges, deep nesting, long
 * lines), and on detection against every other reader's fixtures.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { adpReader } from "../src/read/adp.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/handmade/adp");
const at = (name: string) => join(DIR, name);
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const pairs = (t: Trajectory) => t.turns.map((turn) => [turn.action, turn.observation]);
const read = (path: string, options: Parameters<Reader["read"]>[1] = OPTIONS) => collect(adpReader.read(path, options));
const call = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

async function all(path: string): Promise<Trajectory[]> {
  const items = await read(path);
  expect(quarantined(items)).toEqual([]);
  return trajectories(items);
}

function get<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("missing");
  return value;
}

describe("adp: code actions (AgentTuning OS, CodeAct)", () => {
  it("each code action → the environment text with its tool_call_id; messages and later user problems are dialogue", async () => {
    const [os, codeact, ...rest] = await all(at("agenttuning-os.std.jsonl"));
    expect(rest).toEqual([]);
    const t = get(os);
    expect(t.id).toBe("os_7");
    expect(t.domain).toBe("terminal");
    expect(t.source).toMatchObject({ line: 1, offset: 0, format: "adp" });
    expect(t.task).toBe("How many lines does /srv/notes/todo.txt have?\n\nPrint the answer like this: <solution> N </solution>");
    expect(pairs(t)).toEqual([
      ["wc -l /srv/notes/todo.txt", "12 /srv/notes/todo.txt"],
      ["hostname", "box-42"],
      // An empty output is written as the other readers write it.
      ["ls /srv/empty", "[no output]"],
    ]);
    expect(t.turns[0]).toMatchObject({ thinking: "I count the lines with wc.", meta: { tool: "execute_bash", language: "bash" } });
    // reasoning_content, then description.
    expect(t.turns[1]?.thinking).toBe("The hostname command needs no arguments.\n\nhostname prints it.");
    expect(t.turns[1]?.meta?.dialogue).toEqual([
      { role: "assistant", text: "<solution> 12 </solution>" },
      { role: "user", text: "Now, I will start a new problem in a new OS. My problem is:\n\nWhat is the hostname?" },
    ]);
    expect(t.turns[2]?.thinking).toBeUndefined();
    expect(t.meta).toEqual({
      adp: { schema_version: "1.3.1" },
      final_answer: "<finish> <solution> box-42 </solution> </finish>",
      skipped: { dialogue_after_last_turn: 1 },
    });
    const c = get(codeact);
    expect(c.domain).toBe("terminal");
    expect(pairs(c)).toEqual([["print(sum(i * i for i in range(1, 11)))", "385"]]);
    expect(c.turns[0]?.meta).toEqual({ tool: "execute_python", language: "python" });
    expect(c.meta?.details).toEqual({ task_type: "math" });
  });
});

describe("adp: api actions (SWE-Gym OpenHands, older layout)", () => {
  it("a JSON array; the leading environment text is the agent's system prompt; a shell tool is its command; finish is unobserved", async () => {
    const [t, ...rest] = await all(at("swe-gym-openhands.std.json"));
    expect(rest).toEqual([]);
    const swe = get(t);
    expect(swe.id).toBe("acme__widgets-1042");
    expect(swe.source).toMatchObject({ row: 0, offset: 0, format: "adp" });
    expect(swe.domain).toBe("swe");
    expect(swe.task).toMatch(/^<uploaded_files>\n/);
    expect(swe.initialObservation).toBeUndefined();
    const path = "/workspace/acme__widgets__1.4/widgets/core.py";
    expect(swe.turns.map((turn) => turn.action)).toEqual([
      call("str_replace_editor", { command: "view", path }),
      call("str_replace_editor", {
        command: "str_replace",
        path,
        old_str: "        self.w = w",
        new_str: "        self.w = max(w, self.min_w)",
      }),
      "cd /workspace/acme__widgets__1.4 && python -m pytest -q tests/test_resize.py",
    ]);
    expect(swe.turns[2]?.observation).toMatch(/^3 passed in 0.04s\n/);
    // An empty description is no thinking.
    expect(swe.turns[0]?.thinking).toBeUndefined();
    expect(swe.meta).toEqual({
      details: { instance_id: "acme__widgets-1042", resolved: true },
      outcome: { resolved: true, success: true },
      task_id: "acme__widgets-1042",
      agent_system: "You are a helpful assistant that can interact with a computer to solve tasks.",
      unobserved_final_action: call("finish", {}),
    });
  });
});

describe("adp: web (Go-Browse, Mind2Web)", () => {
  it("the accessibility tree is the observation; the page before the first action is the initial observation; quoted kwargs decoded", async () => {
    const [t, ...rest] = await all(at("go-browse.std.json"));
    expect(rest).toEqual([]);
    const web = get(t);
    expect(web.domain).toBe("web");
    expect(web.task).toBe("What is the status of order #1001?");
    expect(web.initialObservation).toMatch(/^RootWebArea 'Shop', focused/);
    expect(web.turns.map((turn) => turn.action)).toEqual([call("click", { bid: "12" }), call("click", { bid: "22" })]);
    expect(web.turns[1]?.observation).toBe(
      "RootWebArea 'Order #1001', focused, url='http://shop.local/orders/1001'\n\t[31] StaticText 'Status: shipped'",
    );
    expect(web.turns[0]?.meta).toEqual({
      tool: "click",
      tree_format: "browsergym-axtree",
      screenshot: "datasets/go-browse-wa/screenshots/00017-01.png",
      viewport_size: [1280, 1440],
    });
    expect(web.meta).toEqual({
      adp: { schema_version: "1.2.0" },
      initial_tree_format: "browsergym-axtree",
      unobserved_final_action: call("send_msg_to_user", { text: "The order has shipped." }),
    });
  });

  it("HTML pages when there is no tree; the first action comes before any page", async () => {
    const [t] = await all(at("web-and-tools.std.jsonl"));
    const m2w = get(t);
    expect(m2w.domain).toBe("web");
    expect(m2w.initialObservation).toBeUndefined();
    expect(pairs(m2w)).toEqual([
      [call("goto", { url: "https://air.example" }), '<html><body><a backend_node_id="7">Flights</a></body></html>'],
      [
        call("click", { element_id: "7", xpath: "/html/body/a" }),
        '<html><body><input backend_node_id="9" placeholder="From"/></body></html>',
      ],
    ]);
    expect(m2w.turns[1]?.meta).toEqual({ tool: "click", observation_format: "html", url: "https://air.example/flights" });
    expect(m2w.meta?.unobserved_final_action).toBe(call("fill", { element_id: "9", value: "Denver" }));
  });
});

describe("adp: function tools", () => {
  it("parallel calls answered out of order are matched by tool_call_id; JSON and image observations; dialogue between turns", async () => {
    const [, t] = await all(at("web-and-tools.std.jsonl"));
    const tools = get(t);
    expect(tools.domain).toBe("mcp");
    expect(pairs(tools)).toEqual([
      [
        `[call 1/2]\n${call("get_weather", { city: "Oslo" })}\n[call 2/2]\n${call("get_time", { city: "Oslo" })}`,
        '[result 1/2]\n{"temp_c":3,"sky":"snow"}\n[result 2/2]\n14:05',
      ],
      [call("get_weather", { city: "Bergen" }), "[label] rain @ 10,20 30x8"],
    ]);
    expect(tools.turns[0]?.thinking).toBe("Two independent lookups.\n\nI need both.");
    expect(tools.turns[0]?.meta).toEqual({ tools: ["get_weather", "get_time"], parallel_calls: 2, rewards: [0.5, null] });
    expect(tools.turns[1]?.meta).toMatchObject({
      image: "images/bergen-radar.png",
      observation_format: "image-annotations",
      dialogue: [
        { role: "assistant", text: "It is 14:05 and 3 °C with snow in Oslo. Anything else?" },
        { role: "user", text: "Is it colder in Bergen?" },
      ],
    });
    expect(tools.meta).toMatchObject({
      adp: { schema_version: "1.3.1", available_custom_tools: ["get_weather", "get_time"] },
      final_answer: "Bergen: rain, see the radar.",
    });
  });

  it("a user text right after an unanswered action is its result (ADP's own reading of older converters), counted", async () => {
    const path = join(tempDir(), "user-as-result.jsonl");
    const row = {
      id: "alfworld_1",
      content: [
        { class_: "text_observation", content: "Put a mug in the sink.", source: "user" },
        { class_: "api_action", function: "go_to", kwargs: { target: "countertop 1" }, description: null },
        { class_: "text_observation", content: "On the countertop 1, you see a mug 1.", source: "user" },
        { class_: "message_action", content: "Thanks.", description: null },
        { class_: "text_observation", content: "Anything else?", source: "user" },
      ],
    };
    writeFileSync(path, `${JSON.stringify(row)}\n`);
    const [t] = await all(path);
    expect(pairs(get(t))).toEqual([[call("go_to", { target: "countertop 1" }), "On the countertop 1, you see a mug 1."]]);
    expect(t?.meta?.skipped).toEqual({ user_text_as_result: 1, dialogue_after_last_turn: 2 });
    // Negative control: a user text with no action open is dialogue, never a result.
    expect(t?.meta?.final_answer).toBe("Thanks.");
  });

  it("observations after every call is answered join the last result; PascalCase classes are read", async () => {
    const path = join(tempDir(), "extra.jsonl");
    const row = {
      id: "x1",
      content: [
        { class_: "TextObservation", content: "Show the log.", source: "user" },
        { class_: "CodeAction", language: "bash", content: "cat app.log", description: null },
        { class_: "TextObservation", content: "line 1", source: "environment" },
        { class_: "TextObservation", content: "line 2", source: "environment" },
      ],
    };
    writeFileSync(path, `${JSON.stringify(row)}\n`);
    const [t] = await all(path);
    expect(pairs(get(t))).toEqual([["cat app.log", "line 1\n\nline 2"]]);
    expect(t?.meta?.skipped).toEqual({ extra_observation_joined: 1 });
  });
});

describe("adp: hostile input", () => {
  it("quarantines each bad line naming its line, field and reason; counts an unknown class; filters records with no answered action", async () => {
    const items = await read(at("hostile.std.jsonl"));
    const lines = readFileSync(at("hostile.std.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l !== "");
    // One item per line: records in = out + quarantined.
    expect(items).toHaveLength(lines.length);
    expect(trajectories(items).map((t) => [t.id, t.source.line, t.meta?.read_filter ?? t.meta?.skipped])).toEqual([
      ["h0", 1, undefined],
      ["h7", 8, { "unknown_class:video_observation": 1 }],
      ["h10", 11, expect.objectContaining({ stage: "no-tool-calls" })],
      ["h13", 14, expect.objectContaining({ stage: "no-observation-after-action" })],
    ]);
    expect(quarantined(items).map((q) => [q.source.line, q.id, q.field, q.reason])).toEqual([
      [2, undefined, undefined, expect.stringMatching(/^invalid JSON: /)],
      [3, "h2", "content", '"content" must be a list of ADP actions and observations, got a string'],
      [4, "h3", "content.0.class_", 'content.0 has no "class_" (string), got nothing'],
      [5, "h4", "content.0.kwargs", "content.0.kwargs must be an object, got a string"],
      [6, "h5", "content.0.content", 'content.0 (code_action) needs a string "content", got a number'],
      [7, "h6", "content.0.source", 'content.0.source "robot" is none of user, agent, environment'],
      [9, expect.stringMatching(/^adp-[0-9a-f]{16}$/), "id", '"id" must be a string, got an object'],
      [10, "h9", "content", '"content" is empty'],
      [12, undefined, undefined, "expected a JSON object, got an array"],
      [13, "h12", "content.2.axtree", "content.2.axtree must be a string, got a number"],
    ]);
    for (const q of quarantined(items)) expect(q.excerpt).toBeTruthy();
  });

  it("a record nested past 1000 levels and a line over the size limit are quarantined; a long observation is read", async () => {
    const dir = tempDir();
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const big = "x".repeat(3 << 20);
    const ok = { id: "big", content: [{ class_: "code_action", language: "bash", content: "yes | head", description: null }] };
    const path = join(dir, "limits.jsonl");
    writeFileSync(
      path,
      [
        `{"id":"deep","content":[{"class_":"api_action","function":"f","kwargs":{"a":${deep}}}]}`,
        JSON.stringify({ ...ok, content: [...ok.content, { class_: "text_observation", content: big, source: "environment" }] }),
        JSON.stringify({ id: "huge", content: [{ class_: "message_action", content: "y".repeat(5 << 20) }] }),
      ].join("\n"),
    );
    const items = await read(path, { maxLineBytes: 4 << 20 });
    expect(items.map((i) => i.kind)).toEqual(["quarantine", "trajectory", "quarantine"]);
    expect(quarantined(items)[0]?.reason).toMatch(/nests deeper than 1000 levels/);
    expect(quarantined(items)[1]?.reason).toMatch(/over the 4194304-byte limit/);
    expect(trajectories(items)[0]?.turns[0]?.observation).toHaveLength(3 << 20);
  });

  it("a JSON array cut short: the elements before the break, then one entry naming it", async () => {
    const path = join(tempDir(), "cut.json");
    const whole = readFileSync(at("go-browse.std.json"), "utf8").trim();
    const row = JSON.stringify(JSON.parse(whole)[0]);
    writeFileSync(path, `[${row},${row.slice(0, 200)}`);
    const items = await read(path);
    expect(items.map((i) => i.kind)).toEqual(["trajectory", "quarantine"]);
    expect(quarantined(items)[0]?.reason).toMatch(/^the JSON array breaks after element 0/);
  });
});

describe("adp: layouts", () => {
  it("reads only the lines that start in a byte range; a JSON array belongs to the range at the file's start", async () => {
    const path = at("agenttuning-os.std.jsonl");
    const firstLength = Buffer.byteLength(readFileSync(path, "utf8").split("\n")[0] as string) + 1;
    const size = statSync(path).size;
    const head = await read(path, { ...OPTIONS, range: { start: 0, end: firstLength } });
    const tail = await read(path, { ...OPTIONS, range: { start: firstLength, end: size } });
    expect(trajectories(head).map((t) => t.id)).toEqual(["os_7"]);
    expect(trajectories(tail).map((t) => t.id)).toEqual(["codeact_31"]);
    const array = at("swe-gym-openhands.std.json");
    expect(await read(array, { ...OPTIONS, range: { start: 10, end: statSync(array).size } })).toEqual([]);
  });

  it("one pretty-printed trajectory is detected and read as one record", async () => {
    const path = join(tempDir(), "one.json");
    const [row] = JSON.parse(readFileSync(at("go-browse.std.json"), "utf8"));
    writeFileSync(path, JSON.stringify(row, null, 2));
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("adp");
    expect((await all(path)).map((t) => t.id)).toEqual(["17"]);
  });

  it("Parquet rows as the Hub's `datasets` writes them are detected by their rows and read like the JSONL", async () => {
    const dir = tempDir("lwm-adp-parquet-");
    const jsonl = join(dir, "rows.jsonl");
    const parquet = join(dir, "agenttuning_os", "std", "0000.parquet");
    const rows = [
      ...readFileSync(at("agenttuning-os.std.jsonl"), "utf8").split("\n").filter(Boolean),
      ...(JSON.parse(readFileSync(at("go-browse.std.json"), "utf8")) as unknown[]).map((row) => JSON.stringify(row)),
      ...(JSON.parse(readFileSync(at("swe-gym-openhands.std.json"), "utf8")) as unknown[]).map((row) => JSON.stringify(row)),
    ];
    writeFileSync(jsonl, `${rows.join("\n")}\n`);
    const writer = [
      "import json, os, sys, datasets",
      "rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]",
      "os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)",
      "datasets.Dataset.from_list(rows).to_parquet(sys.argv[2])",
    ].join("\n");
    const written = spawnSync(ensurePythonEnv(), ["-c", writer, jsonl, parquet], { encoding: "utf8" });
    expect(written.status, written.stderr).toBe(0);
    const detection = await detectFormat(parquet);
    expect(detection).toMatchObject({ kind: "format", layout: "parquet-rows" });
    expect(detection.kind === "format" && detection.reader.name).toBe("adp");
    const fromParquet = trajectories(await read(parquet));
    const fromJsonl = trajectories(await read(jsonl));
    expect(fromParquet.map((t) => t.id)).toEqual(["os_7", "codeact_31", "17", "acme__widgets-1042"]);
    // Same turns; the Parquet's rows carry the union of keys (null ones left out), and name the Hub dataset.
    expect(fromParquet.map((t) => [t.domain, t.task, t.initialObservation, t.turns])).toEqual(
      fromJsonl.map((t) => [t.domain, t.task, t.initialObservation, t.turns]),
    );
    expect(fromParquet[0]?.meta?.adp).toMatchObject({ dataset: "agenttuning_os" });
    expect(fromJsonl[0]?.meta?.adp).not.toHaveProperty("dataset");
  });
});

describe("adp: detection", () => {
  const mine = readdirSync(DIR).filter((name) => name !== "README.md");
  const position = READERS.findIndex((reader) => reader.name === "adp");

  it("every fixture is detected as adp; no reader before it claims one", async () => {
    for (const name of mine) {
      const detection = await detectFormat(at(name));
      expect(detection.kind === "format" && detection.reader.name, name).toBe("adp");
      const head = await readHead(at(name));
      expect(
        READERS.slice(0, position)
          .filter((reader) => reader.sniff(head, at(name)))
          .map((reader) => reader.name),
        name,
      ).toEqual([]);
    }
  });

  it("claims none of the other readers' fixtures (handmade, demo), from any of their first lines", async () => {
    const others = [...filesUnder(join(ROOT, "test/fixtures/handmade")), ...filesUnder(join(ROOT, "data/demo"))].filter(
      (path) => !path.startsWith(DIR) && !/\.(png|jpe?g|gz|zst|parquet)$/.test(path),
    );
    expect(others.length).toBeGreaterThan(50);
    const claimed: string[] = [];
    for (const path of others) {
      const head = await readHead(path);
      let start = 0;
      for (let i = 0; i < 8 && start < head.length; i++) {
        if (adpReader.sniff(head.slice(start), path)) claimed.push(path);
        const end = head.indexOf("\n", start);
        if (end < 0) break;
        start = end + 1;
      }
    }
    expect(claimed).toEqual([]);
  });

  it("a row whose content items have no ADP class is not claimed (negative control)", () => {
    expect(adpReader.sniff('{"id":"a","content":[{"type":"text","text":"hi"}]}\n', "x.jsonl")).toBe(false);
    expect(adpReader.sniff('{"id":"a","content":"hello"}\n', "x.jsonl")).toBe(false);
    expect(adpReader.sniff('{"id":"a","content":[{"class_":"text_observation","content":"hi","source":"user"}]}\n', "x.jsonl")).toBe(true);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}
