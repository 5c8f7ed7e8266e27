/**
 * The chat-tool-rows reader (src/read/chat-tool-rows.ts) on the hand-written rows in
 * test/fixtures/handmade/chat-tool-rows/ (see its README.md: OpenAI tool_calls in SWE-rebench and
 * SWE-Gym layouts, legacy function_call, tau-bench-style dialogue, Hermes <tool_call> blocks,
 * LLaMA-Factory ShareGPT, Toucan rows in a JSON array, a pretty-printed single row, hostile
 * lines), on files built in the tests (a broken JSON array, byte ranges, gzip), on detection
 * against every other reader's fixtures, and on the shared tau-bench sample in place.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { sweAgentTrajReader } from "../src/read/swe-agent-traj.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

/** A trajectory's meta less `agent_system` (the agent's system prompt and tools, checked on its own). */
function withoutAgentSystem(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!meta) return meta;
  const { agent_system: _agentSystem, ...rest } = meta;
  return rest;
}

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/handmade/chat-tool-rows");
const at = (name: string) => join(DIR, name);

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const pairs = (t: Trajectory) => t.turns.map((turn) => [turn.action, turn.observation]);

async function read(path: string, options: Parameters<Reader["read"]>[1] = OPTIONS): Promise<ReadItem[]> {
  return collect(chatToolRowsReader.read(path, options));
}

async function all(path: string): Promise<Trajectory[]> {
  const items = await read(path);
  expect(quarantined(items)).toEqual([]);
  return trajectories(items);
}

const call = (name: string, args: unknown) => JSON.stringify({ name, arguments: args });

describe("chat-tool-rows: OpenAI tool_calls (SWE-rebench / SWE-Gym layouts)", () => {
  it("reads each call with its result by tool_call_id, shell calls as their command, parallel calls in call order", async () => {
    const [first, , ...rest] = await all(at("openai-swe.jsonl"));
    expect(rest).toEqual([]);
    const t = first as Trajectory;
    expect(t.id).toBe("run-7f3a-attempt-1");
    expect(t.domain).toBe("swe");
    expect(t.source).toMatchObject({ line: 1, offset: 0, format: "chat-tool-rows" });
    expect(t.task).toBe("The function `slugify` in /repo/textutil.py keeps trailing dashes. Fix it.");
    expect(String(t.meta?.agent_system).startsWith("You are a coding agent working in /repo.")).toBe(true);
    expect(t.meta?.agent_system).toContain('\n\n## Tools\n\n{"type":"function","function":{"name":"execute_bash"');
    expect(pairs(t)).toEqual([
      [
        "cat -n /repo/textutil.py",
        "     1\timport re\n     2\t\n     3\tdef slugify(text):\n     4\t    return re.sub(r'[^a-z0-9]+', '-', text.lower())\n",
      ],
      [
        call("str_replace_editor", {
          command: "str_replace",
          path: "/repo/textutil.py",
          old_str: "text.lower())",
          new_str: "text.lower()).strip('-')",
        }),
        "The file /repo/textutil.py has been edited.",
      ],
      [
        "[call 1/2]\npython -m pytest -q tests/test_slug.py\n[call 2/2]\ngit diff",
        // The results came in the other order; tool_call_id puts them back in call order.
        "[result 1/2]\n3 passed in 0.02s\n\n[result 2/2]\ndiff --git a/textutil.py b/textutil.py\n" +
          "-    return re.sub(r'[^a-z0-9]+', '-', text.lower())\n+    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n",
      ],
    ]);
    expect(t.turns[0]?.meta).toEqual({
      tool: "execute_bash",
      agent_thought: "Let me look at the file first.",
      agent_reasoning: "The bug is probably in the regex.",
    });
    expect(t.turns[1]?.meta).toEqual({ tool: "str_replace_editor" });
    expect(t.turns[2]?.meta).toEqual({
      tools: ["execute_bash", "execute_bash"],
      parallel_calls: 2,
      agent_thought: "Run the test and look at the diff at the same time.",
    });
    expect(withoutAgentSystem(t.meta)).toEqual({
      outcome: { resolved: true },
      agent: "openhands",
      model: "qwen3-coder-30b",
      task_id: "textutil__slugify-12",
      repo: "example/textutil",
      exit_status: "submitted",
      final_answer: "The slug no longer ends with a dash; the tests pass.",
    });
  });

  it("keeps two attempts at one instance apart: the id is the instance plus a hash of the row", async () => {
    const [first, second] = await all(at("openai-swe.jsonl"));
    const t = second as Trajectory;
    expect(t.id).toMatch(/^textutil__slugify-12-[0-9a-f]{16}$/);
    expect(t.id).not.toBe(first?.id);
    expect(withoutAgentSystem(t.meta)).toEqual({
      outcome: { resolved: false },
      task_id: "textutil__slugify-12",
      skipped: { call_without_result: 1 },
    });
    expect(pairs(t)).toEqual([
      ["ls /repo", "textutil.py\ntests\n"],
      ["sed -i 's/lower())/lower()).rstrip(\"-\")/' /repo/textutil.py", ""],
    ]);
    // The same row always gets the same id.
    expect((await all(at("openai-swe.jsonl")))[1]?.id).toBe(t.id);
  });

  it("reads a gzip-compressed file the same way", async () => {
    const path = join(tempDir(), "rows.jsonl.gz");
    writeFileSync(path, gzipSync(readFileSync(at("openai-swe.jsonl"))));
    const plain = (await all(at("openai-swe.jsonl"))).map((t) => ({ ...t, source: undefined }));
    expect((await all(path)).map((t) => ({ ...t, source: undefined }))).toEqual(plain);
  });
});

describe("chat-tool-rows: function tools, dialogue, domains", () => {
  it("reads legacy function_call / role function, keeps the talk with the user as turn context", async () => {
    const items = await read(at("openai-functions.jsonl"));
    expect(items).toHaveLength(4);
    const [shop, web, shell] = trajectories(items);
    const s = shop as Trajectory;
    expect(s.domain).toBe("mcp");
    expect(s.id).toMatch(/^chat-[0-9a-f]{16}$/);
    expect(s.task).toBe("Hi, please cancel my last order.");
    expect(s.meta?.agent_system).toBe(
      "You are a shop assistant. Cancel orders only after the customer confirms.\n\n## Tools\n\n" +
        '{"type":"function","function":{"name":"find_order","parameters":{"type":"object","properties":{"email":{"type":"string"}}}}}\n' +
        '{"type":"function","function":{"name":"cancel_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}}}}}',
    );
    expect(s.turns).toEqual([
      {
        action: call("find_order", { email: "ana@example.org" }),
        observation: '{"order_id": "W1002", "status": "pending", "items": 2}',
        meta: {
          tool: "find_order",
          observation_format: "json",
          dialogue: [
            { role: "assistant", text: "Sure. What is the e-mail address on the order?" },
            { role: "user", text: "ana@example.org" },
          ],
        },
      },
      {
        action: call("cancel_order", { order_id: "W1002" }),
        observation: "Error: order W1002 cannot be cancelled after 24 hours",
        meta: {
          tool: "cancel_order",
          dialogue: [
            { role: "assistant", text: "Order W1002 has 2 items and is pending. Shall I cancel it?" },
            { role: "user", text: "Yes." },
          ],
        },
      },
    ]);
    // The closing apology and the user's ###STOP### come after the last call: counted, not turns.
    expect(withoutAgentSystem(s.meta)).toEqual({
      outcome: { reward: 1 },
      task_id: "17",
      attempt: 2,
      skipped: { dialogue_after_last_turn: 2 },
    });

    expect(web?.domain).toBe("web");
    expect(web?.id).toBe("web-0001");
    expect(pairs(web as Trajectory)).toEqual([
      [
        call("browser_navigate", { url: "https://shop.test/search?q=blue+mug" }),
        '- heading "Results for blue mug"\n- link "Blue mug" [ref=e12]\n- text "$12.00"',
      ],
      [call("browser_click", { ref: "e12" }), '- heading "Blue mug"\n- text "Price: $12.00"\n- button "Add to cart"'],
    ]);
    expect(withoutAgentSystem(web?.meta)).toEqual({ model: "gpt-4.1-mini", final_answer: "The blue mug costs $12.00." });

    // A shell tool without a repository in sight: terminal; an argv `bash -lc X` is the command X.
    expect(shell?.domain).toBe("terminal");
    expect(shell?.id).toBe("42");
    expect(pairs(shell as Trajectory)).toEqual([
      ["df -h /", "Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        20G   15G  5.0G  75% /\n"],
    ]);
    expect(withoutAgentSystem(shell?.meta)).toEqual({ outcome: { success: false }, skipped: { call_without_result: 1 } });

    expect(quarantined(items)).toEqual([
      expect.objectContaining({
        id: "chat-only",
        field: "messages",
        reason: "messages: no tool call was followed by its result",
        source: expect.objectContaining({ line: 4 }),
      }),
    ]);
  });

  it("takes --domain over the inferred one", async () => {
    const items = await read(at("openai-functions.jsonl"), { ...OPTIONS, domain: "swe" });
    expect(trajectories(items).map((t) => t.domain)).toEqual(["swe", "swe", "swe"]);
  });
});

describe("chat-tool-rows: Hermes and ShareGPT", () => {
  it("reads Hermes <tool_call> blocks with their <tool_response> blocks in order; a non-JSON call stays as written", async () => {
    const [stock, msft] = await all(at("hermes.jsonl"));
    expect(stock?.id).toBe("hermes-stock-1");
    expect(stock?.domain).toBe("mcp");
    expect(String(stock?.meta?.agent_system).startsWith("You are a function calling AI model.")).toBe(true);
    expect(stock?.task).toBe("What is Apple trading at, and is there news about it?");
    expect(stock?.turns).toEqual([
      {
        action: `[call 1/2]\n${call("get_stock_price", { symbol: "AAPL" })}\n[call 2/2]\n${call("get_company_news", { symbol: "AAPL" })}`,
        observation:
          '[result 1/2]\n{"name": "get_stock_price", "content": {"symbol": "AAPL", "price": 187.3}}\n' +
          '[result 2/2]\n{"name": "get_company_news", "content": {"headlines": ["Apple opens a new campus"]}}',
        meta: { tools: ["get_stock_price", "get_company_news"], parallel_calls: 2 },
      },
    ]);
    expect(withoutAgentSystem(stock?.meta)).toEqual({
      category: "Finance",
      subcategory: "Stocks",
      final_answer: "Apple (AAPL) trades at $187.30. In the news: Apple opens a new campus.",
    });
    expect(msft?.turns).toEqual([
      {
        action: "{'arguments': {'symbol': 'MSFT'}, 'name': 'get_stock_price'}",
        observation: '{"name": "get_stock_price", "content": {"symbol": "MSFT", "price": 402.1}}',
        meta: { tool: "get_stock_price", observation_format: "json", agent_thought: "I will look it up." },
      },
    ]);
  });

  it("reads LLaMA-Factory function_call / observation turns with the top-level system and tools", async () => {
    const [t] = await all(at("sharegpt-llamafactory.jsonl"));
    expect(t?.domain).toBe("search");
    expect(t?.meta?.agent_system).toBe(
      "You answer questions with the help of a web search tool.\n\n## Tools\n\n" +
        '{"name":"web_search","description":"Search the web","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}',
    );
    expect(pairs(t as Trajectory)).toEqual([
      [
        call("web_search", { query: "2022 Tour de France winner" }),
        '[{"title": "2022 Tour de France - Wikipedia", "url": "https://en.wikipedia.org/wiki/2022_Tour_de_France", "snippet": "Jonas Vingegaard won the general classification."}]',
      ],
    ]);
    expect(withoutAgentSystem(t?.meta)).toEqual({ final_answer: "Jonas Vingegaard won the 2022 Tour de France." });
  });
});

describe("chat-tool-rows: message variants of the OpenAI and Hermes formats", () => {
  /** Rows written to a JSONL file in a fresh folder, read back. */
  async function rows(...values: unknown[]): Promise<ReadItem[]> {
    const path = join(tempDir(), "rows.jsonl");
    writeFileSync(path, `${values.map((v) => JSON.stringify(v)).join("\n")}\n`);
    return read(path);
  }
  const weatherCall = (id: string, city: string) => ({
    id,
    type: "function",
    function: { name: "get_weather", arguments: JSON.stringify({ city }) },
  });

  it("a tool result whose content is a JSON object or a list of values is its JSON text, not lost or refused", async () => {
    const items = await rows(
      {
        id: "object-content",
        messages: [
          { role: "user", content: "Weather in Paris?" },
          { role: "assistant", content: null, tool_calls: [weatherCall("call_1", "Paris")] },
          { role: "tool", tool_call_id: "call_1", content: { temp: 18, sky: "clear" } },
        ],
      },
      {
        id: "list-content",
        messages: [
          { role: "user", content: "Which cities?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "list_cities", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "call_1", content: [{ id: 1, name: "Paris" }, "Tokyo"] },
        ],
      },
    );
    expect(quarantined(items)).toEqual([]);
    expect(trajectories(items).map((t) => t.turns.map((turn) => turn.observation))).toEqual([
      ['{"temp":18,"sky":"clear"}'],
      ['[{"id":1,"name":"Paris"},"Tokyo"]'],
    ]);
  });

  it("a developer message (OpenAI's newer system role) is the agent's system text, not skipped", async () => {
    const [t] = trajectories(
      await rows({
        messages: [
          { role: "developer", content: "Answer with the weather tool." },
          { role: "user", content: "Weather in Paris?" },
          { role: "assistant", content: null, tool_calls: [weatherCall("call_1", "Paris")] },
          { role: "tool", tool_call_id: "call_1", content: "Sunny" },
        ],
      }),
    );
    expect(t?.meta?.agent_system).toBe("Answer with the weather tool.");
    expect(t?.meta?.skipped).toBeUndefined();
    expect(pairs(t as Trajectory)).toEqual([[call("get_weather", { city: "Paris" }), "Sunny"]]);
  });

  it("Hermes <tool_response> blocks sent as the user's turn are the calls' results, unwrapped", async () => {
    const [t] = trajectories(
      await rows({
        conversations: [
          { from: "system", value: "You are a function calling AI model. <tools>[]</tools>" },
          { from: "human", value: "Weather in Paris and Tokyo?" },
          {
            from: "gpt",
            value:
              '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
              '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</tool_call>',
          },
          { from: "human", value: '<tool_response>\n{"temp": 18}\n</tool_response>\n<tool_response>\n{"temp": 25}\n</tool_response>' },
          { from: "gpt", value: "Paris 18, Tokyo 25." },
        ],
      }),
    );
    expect(pairs(t as Trajectory)).toEqual([
      [
        `[call 1/2]\n${call("get_weather", { city: "Paris" })}\n[call 2/2]\n${call("get_weather", { city: "Tokyo" })}`,
        '[result 1/2]\n{"temp": 18}\n[result 2/2]\n{"temp": 25}',
      ],
    ]);
    expect(t?.meta?.final_answer).toBe("Paris 18, Tokyo 25.");
  });
});

describe("chat-tool-rows: JSON arrays and single documents", () => {
  it("reads a JSON array of Toucan rows element by element: messages as a JSON string, calls split over messages", async () => {
    const [first, second, ...rest] = await all(at("toucan-rows.json"));
    expect(rest).toEqual([]);
    expect(first?.source).toEqual({ uri: at("toucan-rows.json"), offset: 0, row: 0, format: "chat-tool-rows" });
    expect(second?.source).toEqual({ uri: at("toucan-rows.json"), offset: 0, row: 1, format: "chat-tool-rows" });
    expect(first?.id).toBe("0b7c5d7e-1111-4a4a-9c9c-000000000001");
    expect(first?.domain).toBe("mcp");
    expect(first?.turns).toEqual([
      {
        action:
          `[call 1/2]\n${call("emoji-server-random_by_group", { group: "food-fruit" })}\n` +
          `[call 2/2]\n${call("emoji-server-list_by_group", { group: "food-vegetable" })}`,
        observation: '[result 1/2]\n{"name": "kiwifruit", "unicode": "U+1F95D"}\n[result 2/2]\n[{"name": "carrot"}, {"name": "potato"}]',
        meta: {
          tools: ["emoji-server-random_by_group", "emoji-server-list_by_group"],
          parallel_calls: 2,
          agent_thought: "I'll fetch both at once.",
        },
      },
    ]);
    expect(first?.meta?.agent_system).toContain("## Tools\n\n");
    expect(withoutAgentSystem(first?.meta)).toEqual({
      subset_name: "single-turn-original",
      final_answer: "Your fruit: kiwifruit. Vegetables: carrot, potato.",
    });
    expect(pairs(second as Trajectory)).toEqual([
      [call("emoji-server-random_by_group", { group: "food-fruit" }), '{"name": "grapes", "unicode": "U+1F347"}'],
    ]);
  });

  it("reads a pretty-printed single row as one record", async () => {
    const [t, ...rest] = await all(at("single-row.json"));
    expect(rest).toEqual([]);
    expect(t?.id).toBe("single-row");
    expect(t?.source).toEqual({ uri: at("single-row.json"), offset: 0, format: "chat-tool-rows" });
    expect(pairs(t as Trajectory)).toEqual([[call("calculator", { expression: "17 * 23" }), "391"]]);
  });

  it("quarantines a scalar element and a broken array, keeping the elements before the break", async () => {
    const dir = tempDir();
    const row = JSON.parse(readFileSync(at("single-row.json"), "utf8"));
    const path = join(dir, "rows.json");
    const text = JSON.stringify([row, 7, row], null, 2);
    writeFileSync(path, text.slice(0, text.lastIndexOf('"role"')));
    const items = await read(path);
    expect(items.map((i) => i.kind)).toEqual(["trajectory", "quarantine", "quarantine"]);
    const [scalar, broken] = quarantined(items);
    expect(scalar).toMatchObject({ source: { row: 1 }, reason: "element 1: expected a JSON object (a chat row), got a number" });
    expect(broken?.reason).toMatch(/^the JSON array breaks after element 1: invalid JSON/);
  });
});

describe("chat-tool-rows: hostile lines and byte ranges", () => {
  it("quarantines each bad line with its line, offset, field and reason, and reads the good one", async () => {
    const items = await read(at("hostile.jsonl"));
    const lines = readFileSync(at("hostile.jsonl"), "utf8").split("\n");
    expect(items).toHaveLength(10);
    expect(trajectories(items).map((t) => [t.id, t.source.line])).toEqual([["single-row", 1]]);
    const offset = (line: number) => lines.slice(0, line - 1).reduce((sum, l) => sum + Buffer.byteLength(l) + 1, 0);
    expect(quarantined(items).map((q) => [q.source.line, q.source.offset, q.id, q.field, q.reason])).toEqual([
      [2, offset(2), undefined, undefined, expect.stringMatching(/^invalid JSON: /)],
      [
        3,
        offset(3),
        "no-conversation",
        "messages",
        'no conversation: expected "messages", "conversations", "traj" or "trajectory" (an array of messages), Responses API "input" / "output" items or a Glaive "chat"; the row has keys id, tools',
      ],
      [
        4,
        offset(4),
        "messages-not-json",
        "messages",
        expect.stringMatching(/^messages: a string that is not a JSON list of messages \(invalid JSON/),
      ],
      [5, offset(5), "messages-object", "messages", "messages: expected an array of messages, got an object"],
      [6, offset(6), "no-role", "messages.0.role", "messages.0: expected a message with a string role (or from)"],
      [7, offset(7), "content-number", "messages.0.content", "messages.0.content: expected a string or text parts, got a number"],
      [8, offset(8), "tool-calls-object", "messages.1.tool_calls", "messages.1.tool_calls: expected an array, got an object"],
      [
        9,
        offset(9),
        "call-without-name",
        "messages.1.tool_calls.0.function.name",
        "messages.1.tool_calls.0.function.name: expected a non-empty string, got nothing",
      ],
      [10, offset(10), undefined, undefined, "expected a JSON object, got an array"],
    ]);
    for (const q of quarantined(items)) expect(q.excerpt).toBeTruthy();
  });

  it("reads only the lines that start in a byte range; a JSON array belongs to the range at the file's start", async () => {
    const path = at("openai-functions.jsonl");
    const firstLength = Buffer.byteLength(readFileSync(path, "utf8").split("\n")[0] as string) + 1;
    const size = statSync(path).size;
    const head = await read(path, { ...OPTIONS, range: { start: 0, end: firstLength } });
    const tail = await read(path, { ...OPTIONS, range: { start: firstLength, end: size } });
    expect(head.map((i) => (i.kind === "trajectory" ? i.trajectory.source.line : "q"))).toEqual([1]);
    expect(tail).toHaveLength(3);
    expect(trajectories(tail).map((t) => t.id)).toEqual(["web-0001", "42"]);

    const array = at("toucan-rows.json");
    expect(await read(array, { ...OPTIONS, range: { start: 10, end: statSync(array).size } })).toEqual([]);
    expect(trajectories(await read(array, { ...OPTIONS, range: { start: 0, end: 10 } }))).toHaveLength(2);
  });

  it("refuses a row nested too deep to write back as JSON", async () => {
    const path = join(tempDir(), "deep.jsonl");
    const deep = `${"[".repeat(1200)}${"]".repeat(1200)}`;
    const row = `{"id":"deep","messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":${deep}}}]},{"role":"tool","tool_call_id":"1","content":"ok"}]}`;
    writeFileSync(path, `${row}\n`);
    const items = await read(path);
    expect(quarantined(items)).toEqual([expect.objectContaining({ id: "deep", reason: "the row nests deeper than 1000 levels" })]);
  });
});

describe("chat-tool-rows: detection", () => {
  const MINE = readdirSync(DIR).filter((name) => name !== "README.md");
  // Where the reader goes in READERS: before swe-agent-traj, whose sniff takes any JSON object
  // with a "trajectory" array (SWE-rebench rows keep their messages there).
  const position = READERS.indexOf(chatToolRowsReader);
  const withMine = READERS;
  it("is registered before swe-agent-traj", () => {
    expect(position).toBeGreaterThan(0);
    expect(position).toBeLessThan(READERS.indexOf(sweAgentTrajReader));
  });

  function* files(dir: string): Generator<string> {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) yield* files(path);
      else if (name !== "README.md" && name !== "PROVENANCE.md") yield path;
    }
  }

  it.each(MINE)("claims %s, and no reader before its place does", async (name) => {
    const head = await readHead(at(name));
    expect(chatToolRowsReader.sniff(head, at(name))).toBe(true);
    expect(
      READERS.slice(0, position)
        .filter((r) => r.sniff(head, at(name)))
        .map((r) => r.name),
    ).toEqual([]);
    expect(withMine.find((r) => r.sniff(head, at(name)))?.name).toBe("chat-tool-rows");
  });

  it("claims none of the other readers' fixtures or the demo data", async () => {
    const others = [
      ...[...files(join(ROOT, "test/fixtures/handmade"))].filter((path) => !path.startsWith(DIR)),
      ...files(join(ROOT, "data/demo")),
    ];
    expect(others.length).toBeGreaterThan(30);
    const claimed: string[] = [];
    for (const path of others) if (chatToolRowsReader.sniff(await readHead(path), path)) claimed.push(path);
    expect(claimed).toEqual([]);
  });

  it("leaves SWE-smith rows (messages with <function=…> XML calls) to swe-smith, and plain chat without tools alone", () => {
    const smith = readFileSync(join(ROOT, "data/demo/swe/swe-smith__ft.jsonl"), "utf8");
    expect(chatToolRowsReader.sniff(smith, "ft.jsonl")).toBe(false);
    // Even with a tools list beside them, <function=…> rows stay swe-smith's (its sniff decides).
    const withTools = (smith.split("\n")[0] as string).replace(/^\{/, '{"tools":[{"type":"function","function":{"name":"bash"}}],');
    expect(JSON.parse(withTools).tools).toHaveLength(1);
    expect(chatToolRowsReader.sniff(`${withTools}\n`, "ft.jsonl")).toBe(false);
    // The same row with OpenAI tool_calls instead of XML blocks is a chat row.
    const row = {
      instance_id: "x",
      messages: [
        { role: "user", content: "fix it" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }],
        },
        { role: "tool", tool_call_id: "1", content: "a.py" },
      ],
    };
    expect(chatToolRowsReader.sniff(`${JSON.stringify(row)}\n`, "ft.jsonl")).toBe(true);
    const plain = {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
    };
    expect(chatToolRowsReader.sniff(`${JSON.stringify(plain)}\n`, "sft.jsonl")).toBe(false);
    // A bare message array (mini-swe-agent) is not an array of rows.
    expect(chatToolRowsReader.sniff(JSON.stringify(row.messages), "x.json")).toBe(false);
  });

  it("recognizes a row whose first line is longer than the head by its keys", () => {
    const row = {
      trajectory_id: "long",
      trajectory: [
        { content: "x".repeat(70_000), role: "system" },
        { role: "assistant", content: null, tool_calls: [{ id: "1", type: "function", function: { name: "bash", arguments: "{}" } }] },
      ],
    };
    const head = JSON.stringify(row).slice(0, 200) + JSON.stringify(row).slice(70_000, 70_300);
    expect(chatToolRowsReader.sniff(head, "rows.jsonl")).toBe(true);
    expect(chatToolRowsReader.sniff(JSON.stringify(row).slice(0, 1 << 16), "rows.jsonl")).toBe(false);
  });
});

describeThirdParty("chat-tool-rows on tau-bench historical trajectories (JSON array, formats-2026)", () => {
  const SAMPLE = thirdParty("formats-2026", "json_array_rows", "tau-bench__gpt-4o-airline.first3.json");

  it("reads each array element: tool calls → tool results; the element without any call is quarantined", async () => {
    const items = await read(SAMPLE);
    expect(items).toHaveLength(3);
    const rows = JSON.parse(readFileSync(SAMPLE, "utf8")) as {
      traj: { role: string; tool_calls?: unknown[]; content: string; name: string }[];
    }[];
    const [first, third] = trajectories(items);
    expect(first?.source.row).toBe(0);
    expect(third?.source.row).toBe(2);
    // One turn per assistant message with tool calls (each has one call, each answered).
    const calls = (row: (typeof rows)[number]) => row.traj.filter((m) => m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0).length;
    expect(first?.turns).toHaveLength(calls(rows[0] as (typeof rows)[number]));
    expect(third?.turns).toHaveLength(calls(rows[2] as (typeof rows)[number]));
    expect([first?.turns.length, third?.turns.length]).toEqual([8, 7]);
    const t = first as Trajectory;
    expect(t.domain).toBe("mcp");
    expect(t.task).toBe("Hi! I'm looking to book a flight from New York to Seattle on May 20th.");
    expect(String(t.meta?.agent_system).startsWith("# Airline Agent Policy")).toBe(true);
    expect(t.turns[0]?.action).toBe(call("get_user_details", { user_id: "mia_li_3668" }));
    expect(
      t.turns[0]?.observation.startsWith('{"name": {"first_name": "Mia", "last_name": "Li"}, "address": {"address1": "975 Sunset Drive"'),
    ).toBe(true);
    expect(t.turns[1]?.action).toBe(call("search_direct_flight", { origin: "JFK", destination: "SEA", date: "2024-05-20" }));
    expect(t.meta).toMatchObject({ outcome: { reward: 0 }, task_id: "0", attempt: 0 });
    // Every turn is one call and the tool message answering it, in the file's order (the `think`
    // tool answers with an empty string: an empty observation, as recorded).
    for (const [index, trajectory] of [
      [0, first],
      [2, third],
    ] as const) {
      const tools = (rows[index] as (typeof rows)[number]).traj.filter((m) => m.role === "tool");
      expect(trajectory?.turns.map((turn) => turn.observation)).toEqual(tools.map((m) => m.content));
      expect(trajectory?.turns.map((turn) => turn.meta?.tool)).toEqual(tools.map((m) => m.name));
      for (const turn of trajectory?.turns ?? []) expect(turn.action).not.toBe("");
    }
    expect(t.turns.filter((turn) => turn.observation === "").map((turn) => turn.meta?.tool)).toEqual(["think"]);
    expect(quarantined(items)).toEqual([
      expect.objectContaining({
        source: expect.objectContaining({ row: 1 }),
        field: "traj",
        reason: "element 1: traj: no tool call was followed by its result (dialogue_after_last_turn 10)",
      }),
    ]);
  });

  it("is detected from the array's head, by no reader before its place", async () => {
    const head = await readHead(SAMPLE);
    expect(chatToolRowsReader.sniff(head, SAMPLE)).toBe(true);
    expect(READERS.filter((r) => r.sniff(head, SAMPLE)).map((r) => r.name)).toEqual(["chat-tool-rows"]);
  });
});
