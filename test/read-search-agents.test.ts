/**
 * RL-trained search agents' rollouts (src/read/chat-rows/tagged-search.ts, read by chat-tool-rows):
 * calls as tags in the model's text (Search-R1 `<search>`, ReSearch `<search>`/`<result>`,
 * R1-Searcher `<|begin_of_query|>`, Search-o1 / WebThinker `<|begin_search_query|>` and
 * `<|begin_click_link|>`, Hermes `<tool_call>` answered in the same text), each answered by the
 * result block the rollout loop wrote after it. Hand-made samples in test/fixtures/search-agents/
 * (README.md names the source each follows).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const DIR = join(ROOT, "test/fixtures/search-agents");
const at = (name: string) => join(DIR, name);
const OPTIONS = { maxLineBytes: 1 << 22 };

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const pairs = (t: Trajectory) => t.turns.map((turn) => [turn.action, turn.observation]);
const call = (name: string, args: unknown) => JSON.stringify({ name, arguments: args });
const search = (query: string) => call("web_search", { query });

async function read(path: string): Promise<ReadItem[]> {
  return collect(chatToolRowsReader.read(path, OPTIONS));
}

async function format(path: string): Promise<string> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}

describe("search agents: Search-R1 and the forks that keep its tags", () => {
  it("reads each <search> and the <information> after it as one turn, the thought before it as context, <answer> as the final answer", async () => {
    expect(await format(at("search-r1-rollouts.jsonl"))).toBe("chat-tool-rows");
    const items = await read(at("search-r1-rollouts.jsonl"));
    const [first, second] = trajectories(items);
    expect(first?.id).toBe("nq-train-0001");
    expect(first?.domain).toBe("search");
    expect(pairs(first as Trajectory)).toEqual([
      [
        search("capital of Varland"),
        'Doc 1(Title: "Varland") Varland is an island state; its capital is Ostmarch.\nDoc 2(Title: "Ostmarch") Ostmarch lies on the river Selde.',
      ],
      [search("Selde river length"), 'Doc 1(Title: "Selde") The Selde is a river 212 km long that flows into the Amber Sea.'],
    ]);
    expect(first?.turns[0]?.meta).toMatchObject({
      tool: "web_search",
      agent_thought: "<think> I need the river that flows through the capital of Varland, then its length. </think>",
    });
    expect(first?.turns[1]?.meta?.agent_thought).toBe(
      "<think> The capital is Ostmarch, on the Selde. Now the length of the Selde. </think>",
    );
    // The task is the prompt, whose instruction names the tags: never read as calls.
    expect(first?.task).toMatch(/^Answer the given question\..*Question: how long is the river through the capital of varland\?\n$/s);
    expect(first?.meta).toMatchObject({ final_answer: "212 km", outcome: { reward: 1 } });
    expect(first?.meta?.skipped).toBeUndefined();
    // The loop's "My previous action is invalid" notice names the tags too: counted, not a call.
    expect(pairs(second as Trajectory)).toEqual([
      [
        search("Lantern Codex author"),
        'Doc 1(Title: "Lantern Codex") The Lantern Codex was compiled by the scribe Amel Tor in the 9th century.',
      ],
    ]);
    expect(second?.turns[0]?.meta?.agent_thought).not.toContain("previous action is invalid");
    expect(second?.meta).toMatchObject({ final_answer: "Amel Tor", skipped: { invalid_action_notice: 1 } });
  });

  it("a rollout cut right after its call is no turn with an empty observation: the row is quarantined, the call counted", async () => {
    const items = await read(at("search-r1-rollouts.jsonl"));
    expect(trajectories(items)).toHaveLength(2);
    expect(quarantined(items)).toEqual([
      expect.objectContaining({
        id: "nq-train-0003",
        field: "response",
        reason: "response: no tool call was followed by its result (call_without_result 1)",
      }),
    ]);
  });

  it("a cut call after answered ones leaves the turns before it, and is counted", async () => {
    const dir = tempDir();
    const path = join(dir, "cut.jsonl");
    const response =
      "<search> first </search>\n\n<information>Doc 1(Title: A) one</information>\n\n<think> more </think>\n<search> second </search>";
    writeFileSync(path, `${JSON.stringify({ id: "cut", prompt: "Q?", response })}\n`);
    expect(await format(path)).toBe("chat-tool-rows");
    const [trajectory] = trajectories(await read(path));
    expect(pairs(trajectory as Trajectory)).toEqual([[search("first"), "Doc 1(Title: A) one"]]);
    expect(trajectory?.meta?.skipped).toEqual({ call_without_result: 1 });
  });

  it("reads Search-R1 chat messages whose <information> block comes as the next user message", async () => {
    expect(await format(at("search-r1-chat.jsonl"))).toBe("chat-tool-rows");
    const [trajectory] = trajectories(await read(at("search-r1-chat.jsonl")));
    expect(pairs(trajectory as Trajectory)).toEqual([
      [search("Tessaly space probe"), 'Doc 1(Title: "Tessaly (spacecraft)") Tessaly was a probe launched in 2031 that flew by Neptune.'],
    ]);
    expect(trajectory?.meta).toMatchObject({ final_answer: "Neptune", agent_system: "You are a helpful assistant." });
    expect(trajectory?.meta?.skipped).toBeUndefined();
  });

  it("reads ReSearch's <search> answered by <result>", async () => {
    expect(await format(at("research-rollouts.jsonl"))).toBe("chat-tool-rows");
    const [trajectory] = trajectories(await read(at("research-rollouts.jsonl")));
    expect(pairs(trajectory as Trajectory)).toEqual([
      [
        search("Ivo Brandt goalkeeper"),
        '"Ivo Brandt"\nIvo Brandt is a goalkeeper who began his career at FC Harrow Vale before moving to Linden Athletic.',
      ],
    ]);
    expect(trajectory).toMatchObject({ id: "musique-dev-17", domain: "search", task: "Which club did Ivo Brandt play for first?" });
    expect(trajectory?.meta?.final_answer).toBe("The final answer is \\[ \\boxed{FC Harrow Vale} \\]");
    expect(trajectory?.meta?.agent_system).toContain("<search> </search> and <result> </result>");
  });
});

describe("search agents: R1-Searcher", () => {
  it("reads <|begin_of_query|> … <|end_of_query|> and the documents after it, either closer spelling", async () => {
    expect(await format(at("r1-searcher-eval.jsonl"))).toBe("chat-tool-rows");
    const items = await read(at("r1-searcher-eval.jsonl"));
    expect(quarantined(items)).toEqual([]);
    const [first, second] = trajectories(items);
    expect(pairs(first as Trajectory)).toEqual([
      [
        search("Glass Orchard film director"),
        "(1)Glass Orchard is a 1998 drama film directed by Mira Olsen.\n(2)The film premiered at the Haldor festival.",
      ],
      [search("Mira Olsen birthplace"), "(1)Mira Olsen (born 1961 in Tarrow) is a film director."],
    ]);
    expect(first).toMatchObject({ domain: "search", task: "Where was the director of Glass Orchard born?" });
    expect(first?.turns[1]?.meta?.agent_thought).toBe("The director is Mira Olsen. Now her birthplace.");
    expect(first?.meta?.final_answer).toBe("Tarrow");
    expect(pairs(second as Trajectory)).toEqual([[search("Tarrow population"), "(1)Tarrow is a town of 14,000 people."]]);
  });
});

describe("search agents: Search-o1 and WebThinker", () => {
  it("reads a results file (a JSON array) element by element; a query the loop skipped is counted, not a turn", async () => {
    expect(await format(at("search-o1-output.json"))).toBe("chat-tool-rows");
    const items = await read(at("search-o1-output.json"));
    expect(quarantined(items)).toEqual([]);
    const [first, second] = trajectories(items);
    expect(pairs(first as Trajectory)).toEqual([
      [search("Pellan bridge opening year"), "The Pellan bridge over the Orne estuary opened to traffic in 1974."],
    ]);
    expect(first?.meta?.skipped).toEqual({ query_without_result: 1 });
    expect(first?.meta?.final_answer).toContain("\\boxed{1974}");
    expect(first?.task).toContain("Question:\nWhat year did the Pellan bridge open?");
    // What the loop answered instead of searching is still what the environment returned.
    expect(pairs(second as Trajectory)).toEqual([
      [search("The Grey Harbour painting artist"), "You have reached the search limit. You are not allowed to search."],
    ]);
  });

  it("reads WebThinker's clicked link as a page fetch (web_extract, as search-api names one)", async () => {
    const [trajectory] = trajectories(await read(at("webthinker-output.json")));
    expect(trajectory?.turns.map((t) => t.action)).toEqual([
      search("Corvin Prize 2029 winner"),
      call("web_extract", { url: "https://corvin.example.org/winners" }),
    ]);
    expect(trajectory?.turns[1]?.observation).toBe("Winners: 2028 Ola Frey; 2029 Pim Sato for the Dutch translation of 'Salt Roads'.");
    expect(trajectory?.turns[1]?.meta?.agent_thought).toBe("The winners list should have it.");
    expect(trajectory?.domain).toBe("search");
  });
});

describe("search agents: Hermes calls", () => {
  it("reads <tool_call> blocks answered by <tool_response> blocks in the same text (a rollout dumped as one string)", async () => {
    expect(await format(at("hermes-inline.jsonl"))).toBe("chat-tool-rows");
    const [trajectory] = trajectories(await read(at("hermes-inline.jsonl")));
    expect(pairs(trajectory as Trajectory)).toEqual([
      [call("web_search", { query: ["mayor of Brisk 2030"] }), "1. Brisk city council: Mayor Lena Ott (since 2028)."],
      [
        call("browse_webpage", { url_list: ["https://brisk.example.gov/council"] }),
        "The council is led by Mayor Lena Ott, re-elected in 2030.",
      ],
    ]);
    expect(trajectory).toMatchObject({ id: "dr-0007", domain: "search", task: "Who was the mayor of Brisk in 2030?" });
    expect(trajectory?.meta?.final_answer).toBe("Lena Ott");
  });

  it("an assistant message holding its calls and their responses (before: the responses were read as its thought, and no call answered)", async () => {
    const dir = tempDir();
    const path = join(dir, "inline-messages.jsonl");
    const content =
      '<tool_call>\n{"name": "web_search", "arguments": {"query": ["Brisk mayor"]}}\n</tool_call>\n<tool_response>\nLena Ott\n</tool_response>\n<answer>Lena Ott</answer>';
    const row = {
      id: "m",
      messages: [
        { role: "user", content: "Who is the mayor of Brisk?" },
        { role: "assistant", content },
      ],
    };
    writeFileSync(path, `${JSON.stringify(row)}\n`);
    expect(await format(path)).toBe("chat-tool-rows");
    const [trajectory] = trajectories(await read(path));
    expect(pairs(trajectory as Trajectory)).toEqual([[call("web_search", { query: ["Brisk mayor"] }), "Lena Ott"]]);
    expect(trajectory?.meta?.final_answer).toBe("Lena Ott");
  });

  it("reads Tongyi DeepResearch's messages (results as user <tool_response> messages) as the Hermes dialect did before", async () => {
    expect(await format(at("tongyi-messages.jsonl"))).toBe("chat-tool-rows");
    const [trajectory] = trajectories(await read(at("tongyi-messages.jsonl")));
    expect(pairs(trajectory as Trajectory)).toEqual([
      [
        call("search", { query: ["tallest tower Marrow"] }),
        "A Google search for 'tallest tower Marrow' found 1 results:\n1. [Kiln Tower](https://marrow.example/kiln) The Kiln Tower (188 m) is the tallest structure in Marrow.",
      ],
    ]);
    expect(trajectory?.domain).toBe("search");
  });
});

describe("search agents: what is not a rollout", () => {
  it("a chat that explains the tags in prose, or a prompt-only training row, is not detected, and never read as turns", async () => {
    expect(await format(at("not-search-rollouts.jsonl"))).toBe("unrecognized");
    const items = await read(at("not-search-rollouts.jsonl"));
    expect(trajectories(items)).toEqual([]);
    expect(quarantined(items).map((q) => q.reason)).toEqual([
      "messages: no tool call was followed by its result",
      expect.stringMatching(/^no conversation: .* the row has keys data_source, prompt, ability, reward_model, extra_info$/),
    ]);
  });

  it("a row whose model text names a tag mid-sentence with text after it is not a rollout", async () => {
    const dir = tempDir();
    const path = join(dir, "prose.jsonl");
    const response = "You would write <search> your query </search> and then read what comes back between <information> tags.";
    writeFileSync(path, `${JSON.stringify({ id: "p", prompt: "How do I search?", response })}\n`);
    expect(await format(path)).toBe("unrecognized");
  });
});

describe("search agents: layouts", () => {
  it("a row longer than the detection head is told by its tags", async () => {
    const dir = tempDir();
    const path = join(dir, "long.jsonl");
    const documents = "Doc 1(Title: Long) filler text. ".repeat(4000);
    const response = `<think> x </think>\n<search> long page </search>\n\n<information>${documents}</information>\n\n<answer> y </answer>`;
    writeFileSync(path, `${JSON.stringify({ id: "long", prompt: [{ role: "user", content: "Q?" }], response })}\n`);
    expect(await format(path)).toBe("chat-tool-rows");
    const [trajectory] = trajectories(await read(path));
    expect(trajectory?.turns).toHaveLength(1);
    expect(trajectory?.meta?.final_answer).toBe("y");
  });

  it("a results file whose first element is longer than the detection head is told by its tags", async () => {
    const dir = tempDir();
    const path = join(dir, "long.json");
    const result = "Page text. ".repeat(8000);
    const output = `Let me search.\n\n<|begin_search_query|>long query<|end_search_query|>\n\n<|begin_search_result|>${result}<|end_search_result|>\n\nDone.`;
    writeFileSync(
      path,
      JSON.stringify(
        [
          { id: 0, Question: "Q?", Output: output },
          { id: 1, Question: "R?", Output: output },
        ],
        null,
        4,
      ),
    );
    expect(await format(path)).toBe("chat-tool-rows");
    expect(trajectories(await read(path)).map((t) => [t.id, t.turns.length])).toEqual([
      ["0", 1],
      ["1", 1],
    ]);
  });

  it("reads Search-R1 rows from Parquet (prompt as a list of messages) like the same rows in JSONL", async () => {
    const python = ensurePythonEnv();
    const dir = tempDir();
    const out = join(dir, "rollouts.parquet");
    const script = [
      "import json, sys, pyarrow as pa, pyarrow.parquet as pq",
      "rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]",
      "pq.write_table(pa.Table.from_pylist(rows), sys.argv[2])",
    ].join("\n");
    const result = spawnSync(python, ["-c", script, at("search-r1-rollouts.jsonl"), out], { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    const detection = await detectFormat(out);
    expect(detection.kind === "format" && [detection.reader.name, detection.layout]).toEqual(["chat-tool-rows", "parquet-rows"]);
    const fromParquet = await collect(chatToolRowsReader.read(out, OPTIONS));
    const fromJsonl = await read(at("search-r1-rollouts.jsonl"));
    expect(trajectories(fromParquet).map((t) => [t.id, pairs(t), t.meta?.final_answer])).toEqual(
      trajectories(fromJsonl).map((t) => [t.id, pairs(t), t.meta?.final_answer]),
    );
    expect(quarantined(fromParquet).map((q) => q.reason)).toEqual(quarantined(fromJsonl).map((q) => q.reason));
  });
});
