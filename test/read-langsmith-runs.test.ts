/**
 * The LangSmith and Langfuse trace readers (src/read/langsmith-runs.ts, src/read/langfuse-traces.ts,
 * src/read/langsmith/) on the hand-written exports in test/fixtures/handmade/langsmith/ and
 * test/fixtures/handmade/langfuse/, and variants built here.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { langfuseTracesReader } from "../src/read/langfuse-traces.ts";
import { pythonLiteral } from "../src/read/langsmith/python-literal.ts";
import { parseTime } from "../src/read/langsmith/run-trace.ts";
import { langsmithRunsReader } from "../src/read/langsmith-runs.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { detectFormat, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir, withoutSources } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const LS = join(ROOT, "test/fixtures/handmade/langsmith");
const LF = join(ROOT, "test/fixtures/handmade/langfuse");
const LANGGRAPH = join(LS, "langgraph-react-agent.jsonl");
const TRACEABLE = join(LS, "traceable-openai.json");
const RUNS_QUERY = join(LS, "runs-query.json");
const CHILD_RUNS = join(LS, "agent-executor-child-runs.json");
const EXAMPLES = join(LS, "dataset-examples.jsonl");
const OBSERVATIONS = join(LF, "observations-api.json");
const TRACES = join(LF, "traces.jsonl");

const read = (path: string, reader: Reader = langsmithRunsReader, options = OPTIONS): Promise<ReadItem[]> =>
  collect(reader.read(path, options));

function trajectories(items: ReadItem[]): Trajectory[] {
  return items.flatMap((item) => (item.kind === "trajectory" ? [item.trajectory] : []));
}

function quarantined(items: ReadItem[]): { reason: string; field?: string; line?: number; row?: number; id?: string }[] {
  return items.flatMap((item) =>
    item.kind === "quarantine"
      ? [
          {
            reason: item.entry.reason,
            ...(item.entry.field ? { field: item.entry.field } : {}),
            ...(item.entry.source.line !== undefined ? { line: item.entry.source.line } : {}),
            ...(item.entry.source.row !== undefined ? { row: item.entry.source.row } : {}),
            ...(item.entry.id !== undefined ? { id: item.entry.id } : {}),
          },
        ]
      : [],
  );
}

function only(items: ReadItem[]): Trajectory {
  expect(quarantined(items)).toEqual([]);
  const list = trajectories(items);
  expect(list).toHaveLength(1);
  const [t] = list;
  if (!t) throw new Error("no trajectory");
  expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
  return t;
}

const actions = (t: Trajectory | undefined) => t?.turns.map((turn) => [turn.action, turn.observation]);

function write(lines: unknown[], name = "runs.jsonl"): string {
  const path = join(tempDir("lwm-langsmith-"), name);
  writeFileSync(path, `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`);
  return path;
}

const fixtureLines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");

// Builders for runs made here (the fixtures are the documented exports).
const TRACE = "00000000-0000-4000-8000-0000000000aa";
const at = (ms: number) => new Date(Date.UTC(2025, 0, 2, 3, 4, 5) + ms).toISOString().replace("Z", "000");
interface RunSpec {
  id: string;
  run_type: string;
  start: number;
  name?: string;
  parent?: string;
  trace?: string | null;
  inputs?: unknown;
  outputs?: unknown;
  error?: string;
}
const run = (s: RunSpec) => ({
  id: s.id,
  name: s.name ?? s.run_type,
  start_time: at(s.start),
  run_type: s.run_type,
  end_time: at(s.start + 5),
  extra: {},
  error: s.error ?? null,
  inputs: s.inputs ?? {},
  outputs: s.outputs ?? null,
  parent_run_id: s.parent ?? null,
  ...(s.trace === null ? {} : { trace_id: s.trace ?? TRACE }),
});
const lc = (cls: string, kwargs: Record<string, unknown>) => ({
  lc: 1,
  type: "constructor",
  id: ["langchain", "schema", "messages", cls],
  kwargs,
});
const human = (content: string) => lc("HumanMessage", { content, type: "human" });
const aiCalls = (content: string, calls: { id: string; name: string; args: unknown }[]) =>
  lc("AIMessage", { content, type: "ai", tool_calls: calls.map((c) => ({ ...c, type: "tool_call" })), invalid_tool_calls: [] });
const toolMessage = (content: string, id: string, status = "success") =>
  lc("ToolMessage", { content, type: "tool", tool_call_id: id, status });
const generations = (message: unknown) => ({ generations: [[{ text: "", type: "ChatGeneration", message }]], llm_output: null });

describe("langsmith-runs reader: a LangGraph agent traced by LangChain", () => {
  it("reads a list_runs() dump: tool runs in start order, thinking, parallel calls, a failed call, system, tools and final answer", async () => {
    const detection = await detectFormat(LANGGRAPH);
    expect(detection.kind === "format" && detection.reader.name).toBe("langsmith-runs");
    const t = only(await read(LANGGRAPH));
    expect(t.id).toBe("1ef9a3c2-7b4d-4e21-9f0a-5c3d2e1b0a01");
    expect(t.source).toMatchObject({ format: "langsmith-runs", line: 1 });
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("The cart total test fails. Find out why and fix it.");
    expect(actions(t)).toEqual([
      ["pytest -q tests/test_cart.py", "F\nE   assert 30.000000000000004 == 30.0\n1 failed in 0.12s"],
      ['{"name":"read_file","arguments":{"path":"shop/cart.py"}}', "def cart_total(prices):\n    total = sum(prices)\n    return total\n"],
      // The failed run's traceback as its exception line.
      [
        '{"name":"read_file","arguments":{"path":"shop/discounts.py"}}',
        "FileNotFoundError: [Errno 2] No such file or directory: 'shop/discounts.py'",
      ],
      // A tool that returned a plain string (no ToolMessage).
      [
        '{"name":"edit_file","arguments":{"path":"shop/cart.py","old":"total = sum(prices)","new":"total = round(sum(prices), 2)"}}',
        "Edited shop/cart.py (1 replacement)",
      ],
    ]);
    expect(t.turns.map((turn) => turn.meta?.is_error)).toEqual([undefined, undefined, true, undefined]);
    expect(t.turns[1]?.thinking).toBe("The float sum is off by a rounding error. Let me read the cart code.");
    expect(t.turns[0]?.thinking).toBeUndefined();
    expect(t.meta).toMatchObject({
      agent: "LangGraph",
      model: "gpt-4.1",
      final_answer: "Fixed: cart_total now rounds the sum to cents, so the test passes.",
      project_id: "6d0a1f3e-2b7c-4c8d-9e1f-0a2b3c4d5e6f",
      conversation_id: "thread-7f3a",
      runs: 16,
    });
    expect(t.meta?.agent_system).toMatch(
      /^You are a coding agent working in \/srv\/shop\.[\s\S]*## Tools\n\n\{"type":"function","function":\{"name":"bash"/,
    );
  });

  it("orders runs by start_time, else by dotted_order, never by where the export wrote them", async () => {
    const [original] = trajectories(await read(LANGGRAPH));
    const lines = fixtureLines(LANGGRAPH);
    const shuffled = [...lines.slice(5), ...lines.slice(0, 5)].reverse();
    expect(actions(trajectories(await read(write(shuffled)))[0])).toEqual(actions(original));
    // Without start_time: the time each dotted_order ends with.
    const noTimes = shuffled.map((line) => {
      const { start_time: _start, ...rest } = JSON.parse(line);
      return rest;
    });
    expect(actions(trajectories(await read(write(noTimes)))[0])).toEqual(actions(original));
    // Neither: the file's order (here reversed, so the turns come out reversed).
    const neither = lines.map((line) => {
      const { start_time: _start, dotted_order: _dotted, ...rest } = JSON.parse(line);
      return rest;
    });
    expect(actions(trajectories(await read(write(neither)))[0])?.[0]?.[0]).toContain("edit_file");
  });

  it("reads a root run exported alone (list_runs(is_root=True)) from the messages of its LangGraph state", async () => {
    const rootLine = fixtureLines(LANGGRAPH).find((line) => JSON.parse(line).parent_run_id === null) as string;
    const t = only(await read(write([rootLine])));
    const [full] = trajectories(await read(LANGGRAPH));
    // Read as a chat row reads the message list: the parallel calls are one step, the failed call's
    // result the ToolMessage the model was shown (status "error").
    expect(t.turns.map((turn) => turn.action)).toEqual([
      full?.turns[0]?.action,
      `[call 1/2]\n${full?.turns[1]?.action}\n[call 2/2]\n${full?.turns[2]?.action}`,
      full?.turns[3]?.action,
    ]);
    expect(t.turns[1]?.observation).toBe(
      `[result 1/2]\n${full?.turns[1]?.observation}\n[result 2/2]\nError: FileNotFoundError(2, 'No such file or directory')\n Please fix your mistakes.`,
    );
    expect(t.turns[1]?.meta).toMatchObject({ is_error: true, error_results: [2] });
    expect(t.task).toBe(full?.task);
    expect(t.meta).toMatchObject({ agent: "LangGraph", final_answer: full?.meta?.final_answer, runs: 1 });
  });

  it("reads the same runs from a JSON array (claimed whole, never cut) and from JSONL alike", async () => {
    const detection = await detectFormat(TRACEABLE);
    expect(detection.kind === "format" && detection.reader.name).toBe("langsmith-runs");
    expect(detection.kind === "format" && detection.cuttable).toBe(false);
    const fromArray = await read(TRACEABLE);
    const t = only(fromArray);
    expect(t.source).toMatchObject({ row: 0 });
    const jsonl = write((JSON.parse(readFileSync(TRACEABLE, "utf8")) as unknown[]).map((r) => JSON.stringify(r)));
    expect(withoutSources(await read(jsonl))).toEqual(withoutSources(fromArray));
  });

  it("reads @traceable runs with wrap_openai: OpenAI messages and completions, tools returning a dict or a string", async () => {
    const t = only(await read(TRACEABLE));
    expect(t.domain).toBe("mcp");
    expect(t.task).toBe("My order A-1001 arrived broken. Can I get my money back?");
    expect(actions(t)).toEqual([
      [
        '{"name":"lookup_order","arguments":{"order_id":"A-1001"}}',
        '{"order_id":"A-1001","status":"delivered","delivered_at":"2025-05-10","total_eur":89,"items":["Desk lamp Aurora"]}',
      ],
      [
        '{"name":"issue_refund","arguments":{"order_id":"A-1001","reason":"arrived broken"}}',
        "Refund R-77 issued: 89.00 EUR to the card ending 4242.",
      ],
    ]);
    expect(t.turns[0]?.meta).toMatchObject({ tool: "lookup_order", observation_format: "json" });
    expect(t.turns[1]?.thinking).toBe("The order was delivered two days ago, within the return window. Issuing the refund.");
    expect(t.meta).toMatchObject({
      agent: "support_agent",
      model: "gpt-4o-mini",
      final_answer: "Done: refund R-77 for order A-1001 (89.00 EUR) is on its way; expect it in 3-5 business days.",
      runs: 7,
    });
    expect(t.meta?.agent_system).toContain('"name":"issue_refund"');
  });

  it("reads a model client traced alone from its fullest call (Anthropic blocks), and refuses a trace without tools", async () => {
    const detection = await detectFormat(RUNS_QUERY);
    expect(detection.kind === "format" && detection.reader.name).toBe("langsmith-runs");
    const items = await read(RUNS_QUERY);
    const [t] = trajectories(items);
    expect(t?.id).toBe("0196a7e2-1c3d-7e4f-8a9b-0c1d2e3f4a00");
    expect(t?.domain).toBe("terminal");
    expect(t?.task).toBe("Is the disk on db-01 filling up?");
    expect(actions(t)).toEqual([
      ["df -h /var/lib/postgresql", "Filesystem Size Used Avail Use% Mounted on\n/dev/nvme1n1 500G 431G 69G 87% /var/lib/postgresql"],
      ["du -sh /var/lib/postgresql/16/main/pg_wal", "du: cannot read directory '/var/lib/postgresql/16/main/pg_wal': Permission denied"],
    ]);
    expect(t?.turns.map((turn) => turn.meta?.is_error)).toEqual([undefined, true]);
    expect(t?.turns[0]?.thinking).toBe("Check the filesystem usage first.\n\nLet me look at disk usage.");
    expect(t?.meta).toMatchObject({ model: "claude-sonnet-4-20250514", runs: 2 });
    expect(t?.meta?.agent).toBeUndefined();
    expect(t?.meta?.final_answer).toMatch(/^Yes: \/var\/lib\/postgresql is 87% full/);
    expect(t?.meta?.agent_system).toMatch(/^You are an on-call assistant[\s\S]*"input_schema"/);
    expect(quarantined(items)).toEqual([
      {
        id: "0196a7e2-1c3d-7e4f-8a9b-0c1d2e3f4b00",
        line: 1,
        reason:
          'no tool run, and no model call or chain whose messages hold a tool call answered by its result (its 3 run(s): "RunnableSequence", "VectorStoreRetriever", "ChatOpenAI")',
      },
    ]);
  });

  it("reads a run with its child_runs nested (read_run(load_child_runs=True)): a ReAct AgentExecutor over a completion model", async () => {
    const detection = await detectFormat(CHILD_RUNS);
    expect(detection.kind === "format" && detection.reader.name).toBe("langsmith-runs");
    const t = only(await read(CHILD_RUNS));
    expect(t.id).toBe("3f2e1d0c-9b8a-4766-8554-433221100fed");
    expect(t.task).toBe("Do I need an umbrella in Bergen today?");
    expect(actions(t)).toEqual([
      ['{"name":"weather_api","arguments":"Bergen"}', "Bergen: light rain, 9°C, 90% chance of rain until 18:00."],
    ]);
    expect(t.turns[0]?.thinking).toBe("I should check the weather in Bergen.");
    expect(t.meta).toMatchObject({
      agent: "AgentExecutor",
      model: "gpt-3.5-turbo-instruct",
      final_answer: "Yes, take an umbrella: light rain is forecast until 18:00.",
      runs: 6,
    });
  });

  it("reads dataset examples: a chat dataset's messages_to_dict messages, the Chat Model schema's OpenAI messages; refuses a key-value example", async () => {
    const items = await read(EXAMPLES);
    const [chat, schema] = trajectories(items);
    expect(chat?.id).toBe("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c01");
    expect(chat?.task).toBe("Which Python version does the project require?");
    expect(actions(chat)).toEqual([
      ['{"name":"read_file","arguments":{"path":"pyproject.toml"}}', '[project]\nname = "shop"\nrequires-python = ">=3.11"\n'],
    ]);
    expect(chat?.meta).toMatchObject({
      final_answer: 'Python 3.11 or newer (requires-python = ">=3.11").',
      dataset_id: "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6",
      source_run_id: "1ef9a3c2-7b4d-4e21-9f0a-5c3d2e1b0a16",
      agent_system: "You answer questions about the repository. Use the tools.",
    });
    expect(actions(schema)).toEqual([['{"name":"search_issues","arguments":{"query":"is:open label:bug"}}', '{"total_count": 14}']]);
    expect(schema?.meta?.final_answer).toBe("There are 14 open issues labeled bug.");
    expect(schema?.meta?.agent_system).toContain('"name":"search_issues"');
    expect(quarantined(items)).toEqual([
      {
        id: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c03",
        line: 3,
        field: "inputs",
        reason: "a dataset example whose messages hold no tool call answered by its result (inputs has keys a-question, user-context)",
      },
    ]);
  });
});

describe("langsmith-runs reader: messages, calls and results", () => {
  const llm = (id: string, start: number, messages: unknown[], reply: unknown) =>
    run({ id, run_type: "llm", start, parent: "root", inputs: { messages: [messages] }, outputs: generations(reply) });
  const root = run({ id: "root", run_type: "chain", start: 0, name: "agent" });

  it("reads LangChain's serialized messages and plain role / type dicts alike", async () => {
    const call = { id: "c1", name: "list_dir", args: { path: "/tmp" } };
    const serialized = [
      root,
      llm("m1", 10, [human("what is in /tmp?")], aiCalls("Listing it.", [call])),
      run({
        id: "t1",
        run_type: "tool",
        start: 20,
        parent: "root",
        name: "list_dir",
        inputs: { input: "{'path': '/tmp'}" },
        outputs: { output: toolMessage("a\nb", "c1") },
      }),
      llm(
        "m2",
        30,
        [human("what is in /tmp?"), aiCalls("Listing it.", [call]), toolMessage("a\nb", "c1")],
        lc("AIMessage", { content: "Two files.", type: "ai" }),
      ),
    ];
    const plain = [
      root,
      llm("m1", 10, [{ role: "user", content: "what is in /tmp?" }], {
        type: "ai",
        content: "Listing it.",
        tool_calls: [{ ...call, type: "tool_call" }],
      }),
      run({
        id: "t1",
        run_type: "tool",
        start: 20,
        parent: "root",
        name: "list_dir",
        inputs: { input: "{'path': '/tmp'}" },
        outputs: { output: { content: "a\nb", type: "tool", tool_call_id: "c1", status: "success" } },
      }),
      llm("m2", 30, [{ type: "human", content: "what is in /tmp?" }], { role: "assistant", content: "Two files." }),
    ];
    const a = only(await read(write(serialized)));
    const b = only(await read(write(plain)));
    expect(actions(a)).toEqual([['{"name":"list_dir","arguments":{"path":"/tmp"}}', "a\nb"]]);
    expect(a.turns[0]?.thinking).toBe("Listing it.");
    expect(a.meta?.final_answer).toBe("Two files.");
    expect(withoutSources([{ kind: "trajectory", trajectory: b }])).toEqual(withoutSources([{ kind: "trajectory", trajectory: a }]));
  });

  it("pairs a tool run with the model's call by the ToolMessage's call id, taking the model's arguments", async () => {
    const calls = [
      { id: "cA", name: "read_file", args: { path: "a.py" } },
      { id: "cB", name: "read_file", args: { path: "b.py" } },
    ];
    const lines = [
      root,
      llm("m1", 10, [human("read both")], aiCalls("", calls)),
      // The second call's run starts first: pairing by name order would swap them.
      run({
        id: "tB",
        run_type: "tool",
        start: 20,
        parent: "root",
        name: "read_file",
        inputs: { input: "b" },
        outputs: { output: toolMessage("B", "cB") },
      }),
      run({
        id: "tA",
        run_type: "tool",
        start: 21,
        parent: "root",
        name: "read_file",
        inputs: { input: "a" },
        outputs: { output: toolMessage("A", "cA") },
      }),
    ];
    const t = only(await read(write(lines)));
    expect(actions(t)).toEqual([
      ['{"name":"read_file","arguments":{"path":"b.py"}}', "B"],
      ['{"name":"read_file","arguments":{"path":"a.py"}}', "A"],
    ]);
  });

  it("reads a tool run's own inputs when no model call names it: a Python repr, a dict, a plain string", async () => {
    const lines = [
      run({ id: "r", run_type: "chain", start: 0, name: "pipeline", inputs: { input: "clean the workspace" } }),
      run({
        id: "t1",
        run_type: "tool",
        start: 1,
        parent: "r",
        name: "delete_files",
        inputs: { input: "{'paths': ['a.txt', \"b's.txt\"], 'force': True, 'dry_run': False, 'limit': None, 'depth': 2.5}" },
        outputs: { output: "deleted 2" },
      }),
      run({
        id: "t2",
        run_type: "tool",
        start: 2,
        parent: "r",
        name: "count",
        inputs: { pattern: "*.log", max: 3 },
        outputs: { count: 0 },
      }),
      run({
        id: "t3",
        run_type: "tool",
        start: 3,
        parent: "r",
        name: "search",
        inputs: { input: "disk usage tips" },
        outputs: { output: "use du" },
      }),
    ];
    const t = only(await read(write(lines)));
    expect(t.task).toBe("clean the workspace");
    expect(t.turns.map((turn) => JSON.parse(turn.action))).toEqual([
      { name: "delete_files", arguments: { paths: ["a.txt", "b's.txt"], force: true, dry_run: false, limit: null, depth: 2.5 } },
      { name: "count", arguments: { pattern: "*.log", max: 3 } },
      { name: "search", arguments: "disk usage tips" },
    ]);
    expect(t.turns.map((turn) => turn.observation)).toEqual(["deleted 2", '{"count":0}', "use du"]);
  });

  it("marks failed tool runs as errors: the run's error (or its traceback's last line), a ToolMessage with status error", async () => {
    const lines = [
      root,
      run({
        id: "t1",
        run_type: "tool",
        start: 1,
        parent: "root",
        name: "fetch",
        inputs: { url: "https://x.test" },
        error: "TimeoutError('read timed out')",
      }),
      run({
        id: "t2",
        run_type: "tool",
        start: 2,
        parent: "root",
        name: "fetch",
        inputs: { url: "https://y.test" },
        outputs: { output: toolMessage("Error: 404 Not Found", "c2", "error") },
      }),
      run({
        id: "t3",
        run_type: "tool",
        start: 3,
        parent: "root",
        name: "fetch",
        inputs: { url: "https://z.test" },
        outputs: { output: "ok" },
      }),
    ];
    const t = only(await read(write(lines)));
    expect(actions(t)?.map(([, observation]) => observation)).toEqual(["TimeoutError('read timed out')", "Error: 404 Not Found", "ok"]);
    expect(t.turns.map((turn) => turn.meta?.is_error)).toEqual([true, true, undefined]);
    // The root run's own error is the trajectory's failure mode.
    const failed = only(
      await read(write([{ ...lines[0], error: "GraphRecursionError('Recursion limit of 25 reached')" }, ...lines.slice(1)])),
    );
    expect(failed.meta?.outcome).toEqual({ failure_mode: "GraphRecursionError('Recursion limit of 25 reached')" });
    expect(t.meta?.outcome).toBeUndefined();
  });

  it("keeps a tool run nested in another, and model calls inside a tool, as that tool's detail", async () => {
    const lines = [
      root,
      run({
        id: "t1",
        run_type: "tool",
        start: 1,
        parent: "root",
        name: "research",
        inputs: { topic: "tides" },
        outputs: { output: "tides follow the moon" },
      }),
      run({ id: "t2", run_type: "tool", start: 2, parent: "t1", name: "web_search", inputs: { q: "tides" }, outputs: { output: "..." } }),
      run({
        id: "m1",
        run_type: "llm",
        start: 3,
        parent: "t1",
        inputs: { messages: [[human("summarize")]] },
        outputs: generations(lc("AIMessage", { content: "x", type: "ai" })),
      }),
    ];
    const t = only(await read(write(lines)));
    expect(actions(t)).toEqual([['{"name":"research","arguments":{"topic":"tides"}}', "tides follow the moon"]]);
    expect(t.meta?.skipped).toEqual({ nested_tool_run: 1, nested_llm_run: 1 });
  });

  it("reads a run written twice (posted, then patched with its outputs) once, from its fullest copy", async () => {
    const posted = run({ id: "t1", run_type: "tool", start: 1, parent: "root", name: "ls", inputs: { input: "{'path': '.'}" } });
    const patched = { ...posted, outputs: { output: "a b" } };
    const t = only(await read(write([root, posted, patched])));
    expect(actions(t)).toEqual([['{"name":"ls","arguments":{"path":"."}}', "a b"]]);
    expect(t.meta).toMatchObject({ runs: 2, skipped: { duplicate_run: 1 } });
  });

  it("groups runs by trace across the file: trace_id, else the root reached through parent_run_id", async () => {
    const other = "00000000-0000-4000-8000-0000000000bb";
    const lines = [
      run({
        id: "t-b",
        run_type: "tool",
        start: 5,
        parent: "mid-b",
        trace: null,
        name: "ls",
        inputs: { input: "{'path': '.'}" },
        outputs: { output: "b" },
      }),
      run({
        id: "t-a",
        run_type: "tool",
        start: 5,
        parent: "root",
        name: "ls",
        inputs: { input: "{'path': '/'}" },
        outputs: { output: "a" },
      }),
      run({ id: "mid-b", run_type: "chain", start: 2, parent: other, trace: null }),
      run({ id: other, run_type: "chain", start: 1, trace: null, name: "other" }),
      root,
    ];
    const items = await read(write(lines));
    expect(quarantined(items)).toEqual([]);
    const byId = Object.fromEntries(trajectories(items).map((t) => [t.id, actions(t)]));
    expect(byId).toEqual({
      [TRACE]: [['{"name":"ls","arguments":{"path":"/"}}', "a"]],
      [other]: [['{"name":"ls","arguments":{"path":"."}}', "b"]],
    });
  });

  it("reads epoch-millisecond start times (the JS SDK's RunTree) and naive, offset or Z ISO times as the same instant", async () => {
    const base = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
    expect(parseTime(base)).toBe(base * 1000);
    expect(parseTime("2025-01-02T03:04:05.678")).toBe(base * 1000);
    expect(parseTime("2025-01-02 05:04:05.678000+02:00")).toBe(base * 1000);
    expect(parseTime("2025-01-02T03:04:05.678123Z")).toBe(base * 1000 + 123);
    expect(parseTime("yesterday")).toBeUndefined();
    const lines = [
      { ...run({ id: "t2", run_type: "tool", start: 0, parent: "root", name: "two", outputs: { output: "2" } }), start_time: base + 20 },
      { ...run({ id: "t1", run_type: "tool", start: 0, parent: "root", name: "one", outputs: { output: "1" } }), start_time: base + 10 },
      { ...root, start_time: base },
    ];
    const t = only(await read(write(lines)));
    expect(t.turns.map((turn) => turn.observation)).toEqual(["1", "2"]);
  });

  it("orders runs that start in the same millisecond by their dotted_order", async () => {
    const dotted = (id: string, us: string) => `20250102T030405${us}Z${TRACE}.20250102T030405${us}Z${id}`;
    const lines = [
      {
        ...run({ id: "tA", run_type: "tool", start: 100, parent: "root", name: "a", outputs: { output: "A" } }),
        dotted_order: dotted("tA", "100400"),
      },
      {
        ...run({ id: "tB", run_type: "tool", start: 100, parent: "root", name: "b", outputs: { output: "B" } }),
        dotted_order: dotted("tB", "100100"),
      },
      root,
    ];
    const t = only(await read(write(lines)));
    expect(t.turns.map((turn) => turn.observation)).toEqual(["B", "A"]);
  });

  it("reads Python literals as str() writes them, and nothing else", () => {
    expect(pythonLiteral("{'a': (1, 2), 'b': [True, None], 'c': 'it\\'s', 'd': -1e3, 3: {}}")).toEqual({
      a: [1, 2],
      b: [true, null],
      c: "it's",
      d: -1000,
      "3": {},
    });
    for (const text of ["{'a': datetime.date(2024, 1, 1)}", "{'a': 1", "{1, 2}", "hello", "{'a': Nonesuch}"])
      expect(pythonLiteral(text)).toBeUndefined();
  });
});

describe("langsmith-runs reader: what it refuses", () => {
  it("quarantines bad lines naming the line and field, and still reads the trace around them", async () => {
    const good = fixtureLines(LANGGRAPH);
    const bad = [
      '{"id": "broken", "run_type": ',
      JSON.stringify({ ...run({ id: "x1", run_type: "tool", start: 0 }), run_type: 7 }),
      JSON.stringify({ ...run({ id: "x2", run_type: "tool", start: 0 }), start_time: "yesterday" }),
      JSON.stringify({ ...run({ id: "x3", run_type: "tool", start: 0 }), inputs: "ls -la" }),
      JSON.stringify({ ...run({ id: "x4", run_type: "chain", start: 0 }), child_runs: { id: "c" } }),
      JSON.stringify({ ...run({ id: "x5", run_type: "chain", start: 0 }), id: "" }),
      JSON.stringify({
        runs: [run({ id: "x6", run_type: "tool", start: 0 }), { ...run({ id: "x7", run_type: "tool", start: 0 }), trace_id: 12 }],
      }),
      JSON.stringify({ hello: "world" }),
      "[1, 2]",
    ];
    const items = await read(write([...good.slice(0, 8), ...bad, ...good.slice(8)]));
    expect(actions(trajectories(items)[0])).toEqual(actions(trajectories(await read(LANGGRAPH))[0]));
    const entries = quarantined(items);
    expect(entries.map((e) => [e.line, e.field])).toEqual([
      [9, undefined],
      [10, "run_type"],
      [11, "start_time"],
      [12, "inputs"],
      [13, "child_runs"],
      [14, "id"],
      [15, "runs.1.trace_id"],
      [16, undefined],
      [17, undefined],
    ]);
    expect(entries[0]?.reason).toMatch(/^invalid JSON/);
    expect(entries[1]?.reason).toBe("line 10: run_type: expected a string (llm, chat_model, tool, chain, …), got a number");
    expect(entries[2]?.reason).toBe('line 11: start_time: expected an ISO 8601 time or epoch number, got "yesterday"');
    expect(entries[3]?.reason).toBe("line 12: inputs: expected an object, got a string");
    expect(entries[7]?.reason).toMatch(/^line 16: expected a LangSmith run \(.*got an object with keys hello$/);
    expect(entries[8]?.reason).toMatch(/^line 17: expected a LangSmith run/);
    // Every record is one item: one trajectory (the 16 runs of the trace) and one entry per bad line.
    expect(items).toHaveLength(1 + bad.length);
  });

  it("refuses a trace whose tool runs recorded neither an output nor an error", async () => {
    const lines = [
      run({ id: "root", run_type: "chain", start: 0 }),
      run({ id: "t1", run_type: "tool", start: 1, parent: "root", name: "bash", inputs: { input: "ls" } }),
    ];
    expect(quarantined(await read(write(lines)))).toEqual([
      {
        id: TRACE,
        line: 1,
        field: "outputs",
        reason: "1 tool run(s), none with an output or an error, and no model call whose messages hold their results",
      },
    ]);
  });

  it("says once that a file holds no runs", async () => {
    const items = await read(write([{ runs: [] }], "empty.json"));
    expect(quarantined(items)).toEqual([{ field: "runs", line: 1, reason: "the file's 1 record(s) hold no runs" }]);
  });

  it("reads nothing in a byte range that does not start the file (the file is read whole)", async () => {
    expect(await read(LANGGRAPH, langsmithRunsReader, { ...OPTIONS, range: { start: 10, end: 1 << 20 } } as typeof OPTIONS)).toEqual([]);
  });
});

describe("detection: LangSmith and Langfuse exports, and other formats' files", () => {
  it("tells a JSONL of runs whose first line is longer than the head by the run's own fields", async () => {
    const long = run({
      id: "r1",
      run_type: "llm",
      start: 0,
      inputs: { messages: [[human("x".repeat(200_000))]] },
      outputs: generations(lc("AIMessage", { content: "tool_calls messages", type: "ai" })),
    });
    const path = write([long, run({ id: "r2", run_type: "tool", start: 1 })]);
    expect((await readHead(path)).length).toBeLessThan(200_000);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("langsmith-runs");
  });

  it("leaves other formats' files to their readers (OpenTelemetry, chat rows, OpenHands, canonical JSONL)", async () => {
    const others: [string, string][] = [
      ["test/fixtures/handmade/otel/genai-semconv.jsonl", "otel-traces"],
      ["test/fixtures/handmade/otel/openinference.jsonl", "otel-traces"],
      ["test/fixtures/handmade/otel/zipkin-v2.json", "otel-traces"],
      ["test/fixtures/handmade/otel/jaeger-api.json", "otel-traces"],
      ["test/fixtures/handmade/chat-tool-rows/openai-functions.jsonl", "chat-tool-rows"],
      ["test/fixtures/handmade/chat-tool-rows/toucan-rows.json", "chat-tool-rows"],
      ["test/fixtures/handmade/swe/openhands-output-legacy.jsonl", "openhands"],
      ["test/fixtures/records/mixed-bad.jsonl", "canonical-jsonl"],
    ];
    for (const [file, format] of others) {
      const path = join(ROOT, file);
      const head = await readHead(path);
      expect(langsmithRunsReader.sniff(head, path), file).toBe(false);
      expect(langfuseTracesReader.sniff(head, path), file).toBe(false);
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, file).toBe(format);
    }
    // Records that only look alike: an unknown run type, an event of another tracer with an id, type and trace id.
    const lookalikes = [
      { id: "r1", run_type: "workflow", start_time: "2025-01-01T00:00:00Z", inputs: {} },
      { id: "e1", type: "click", traceId: "t1", startTime: "2025-01-01T00:00:00Z", input: {} },
      { id: "e2", type: "span", traceId: "t1", startTime: "2025-01-01T00:00:00Z" },
    ];
    for (const record of lookalikes) {
      const line = `${JSON.stringify(record)}\n`;
      expect(langsmithRunsReader.sniff(line, "x.jsonl"), line).toBe(false);
      expect(langfuseTracesReader.sniff(line, "x.jsonl"), line).toBe(false);
    }
    // And each other's.
    for (const file of [LANGGRAPH, TRACEABLE, RUNS_QUERY, CHILD_RUNS, EXAMPLES])
      expect(langfuseTracesReader.sniff(await readHead(file), file), file).toBe(false);
    for (const file of [OBSERVATIONS, TRACES]) expect(langsmithRunsReader.sniff(await readHead(file), file), file).toBe(false);
  });
});

describe("langfuse-traces reader", () => {
  it("reads an observations API page (LangChain handler): TOOL observations, a failed one, generations, the offered tools", async () => {
    const detection = await detectFormat(OBSERVATIONS);
    expect(detection.kind === "format" && detection.reader.name).toBe("langfuse-traces");
    expect(detection.kind === "format" && detection.layout).toBe("wrapped-rows");
    const t = only(await read(OBSERVATIONS, langfuseTracesReader));
    expect(t.id).toBe("7c1e4b9a2f3d4e5f8a9b0c1d2e3f4a5b");
    expect(t.source).toMatchObject({ format: "langfuse-traces", row: 0 });
    expect(t.task).toBe("What's the weather in Oslo now, and will it rain in the next 10 days?");
    expect(actions(t)).toEqual([
      ['{"name":"get_weather","arguments":{"city":"Oslo"}}', "Oslo: 14°C, cloudy, wind 4 m/s NW"],
      ['{"name":"get_forecast","arguments":{"city":"Oslo","days":10}}', "ValueError(\"no forecast for 'Oslo' beyond 7 days\")"],
    ]);
    expect(t.turns.map((turn) => turn.meta?.is_error)).toEqual([undefined, true]);
    expect(t.meta).toMatchObject({
      agent: "LangGraph",
      model: "gpt-4o-2024-08-06",
      final_answer: "It's 14°C and cloudy in Oslo right now. I couldn't get a 10-day forecast (the service only covers 7 days).",
      runs: 8,
    });
    // The tool specs the handler appends to the prompt as {role: "tool", content: spec} are the agent's tools, not results.
    expect(t.meta?.agent_system).toMatch(
      /^You are a weather assistant\.[\s\S]*## Tools\n\n\{"type":"function","function":\{"name":"get_weather"/,
    );
    expect(t.meta?.skipped).toBeUndefined();
  });

  it("reads the observations one per line, with snake_case field names, as it reads the API page", async () => {
    const page = JSON.parse(readFileSync(OBSERVATIONS, "utf8")) as { data: Record<string, unknown>[] };
    const lines = page.data.map(({ traceId, startTime, parentObservationId, statusMessage, ...rest }) => ({
      ...rest,
      trace_id: traceId,
      start_time: startTime,
      parent_observation_id: parentObservationId,
      status_message: statusMessage,
    }));
    const path = write(lines, "observations.jsonl");
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("langfuse-traces");
    expect(withoutSources(await read(path, langfuseTracesReader))).toEqual(withoutSources(await read(OBSERVATIONS, langfuseTracesReader)));
  });

  it("reads traces with nested observations: an OpenAI client's generations, Vercel AI SDK parts; refuses observations listed by id", async () => {
    const detection = await detectFormat(TRACES);
    expect(detection.kind === "format" && detection.reader.name).toBe("langfuse-traces");
    const items = await read(TRACES, langfuseTracesReader);
    const [fx, todo] = trajectories(items);
    expect(fx?.id).toBe("0f9e8d7c6b5a49382716a5b4c3d2e1f0");
    expect(fx?.source.line).toBe(1);
    expect(actions(fx)).toEqual([
      [
        '{"name":"convert_currency","arguments":{"amount":250,"from":"USD","to":"EUR"}}',
        '{"amount": 231.4, "currency": "EUR", "rate": 0.9256}',
      ],
    ]);
    expect(fx?.meta).toMatchObject({
      agent: "fx-bot",
      conversation_id: "chat-2025-07-02-17",
      final_answer: "250 USD is about 231.40 EUR at today's rate (0.9256).",
    });
    expect(todo?.task).toBe("Add 'renew passport' for Friday.");
    expect(actions(todo)).toEqual([
      [
        '{"name":"add_todo","arguments":{"title":"renew passport","due":"2025-07-04"}}',
        '{"id":31,"title":"renew passport","due":"2025-07-04"}',
      ],
    ]);
    expect(todo?.meta?.final_answer).toBe("Added 'renew passport' (#31), due Friday 4 July.");
    expect(quarantined(items)).toEqual([
      {
        line: 2,
        field: "observations",
        reason:
          "line 2: observations: the trace lists its 2 observation(s) by id only (as GET /api/public/traces answers); export each trace with GET /api/public/traces/{traceId}, which nests its observations whole",
      },
    ]);
  });

  it("quarantines an observation with a wrong-typed field, naming the element", async () => {
    const page = JSON.parse(readFileSync(OBSERVATIONS, "utf8")) as { data: Record<string, unknown>[] };
    const [first, second, ...rest] = page.data;
    const path = join(tempDir("lwm-langfuse-"), "page.json");
    writeFileSync(path, JSON.stringify({ data: [{ ...first, startTime: "soon" }, { ...second, type: 3 }, ...rest], meta: {} }, null, 2));
    const items = await read(path, langfuseTracesReader);
    expect(quarantined(items).map((e) => [e.row, e.field, e.reason])).toEqual([
      [0, "startTime", 'element 0: startTime: expected an ISO 8601 time, got "soon"'],
      [1, "type", "element 1: type: expected an observation type string (GENERATION, TOOL, SPAN, …), got a number"],
    ]);
    // The other observations still make the trace (its first turn's tool run was among them).
    expect(trajectories(items)).toHaveLength(1);
  });
});
