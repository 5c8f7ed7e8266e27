/**
 * The τ²-bench reader (src/read/tau2-bench.ts) on the hand-written results in
 * test/fixtures/handmade/tau2-bench/ (a retail run in the monolithic layout, a telecom run in the
 * dir format) and on results written here: damaged simulations, a file cut mid-write, a voice run's
 * ticks, SimulationRuns one per line, and a large file read simulation by simulation.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Transform } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { planJob } from "../src/pipeline/plan.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS, readHead } from "../src/read/registry.ts";
import { tau2BenchReader } from "../src/read/tau2-bench.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";

/** Bytes the readers have pulled from each file opened through openDecompressed (a pass-through count). */
const pulled = vi.hoisted(() => new Map<string, number>());
vi.mock("../src/io/open-input.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../src/io/open-input.ts")>();
  return {
    ...actual,
    openDecompressed: async (path: string) => {
      const opened = await actual.openDecompressed(path);
      pulled.set(path, 0);
      const counting = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          pulled.set(path, (pulled.get(path) ?? 0) + chunk.length);
          done(null, chunk);
        },
      });
      opened.stream.on("error", (err) => counting.destroy(err));
      counting.on("close", () => opened.stream.destroy());
      opened.stream.pipe(counting);
      return { ...opened, stream: counting };
    },
  };
});

const OPTIONS = { maxLineBytes: 1 << 24 };
const DIR = join(ROOT, "test/fixtures/handmade/tau2-bench");
const RETAIL = join(DIR, "simulations/20250701_103000_retail_llm_agent_gpt-4.1-mini_user_simulator_gpt-4.1-mini.json");
const TELECOM = join(DIR, "telecom-run");
const ROAMING = join(TELECOM, "simulations/2c6a91f0-58b3-4d7e-a1c2-93f0d4e87b15.json");
const SIM_MISSING = join(TELECOM, "simulations/e81d4b27-0c9a-4f66-b3d5-16a7c2f90e38.json");

const read = (path: string) => collect(tau2BenchReader.read(path, OPTIONS));

function trajectoryOf(item: ReadItem | undefined): Trajectory {
  if (item?.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item)}`);
  return item.trajectory;
}

/** A results document as `tau2 run` writes it, around the given simulations. */
function results(simulations: unknown[], info: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    timestamp: "2025-07-01T10:00:00.000000",
    info: {
      git_commit: "abc1234",
      num_trials: 1,
      max_steps: 100,
      max_errors: 10,
      user_info: { implementation: "user_simulator", llm: "gpt-4.1-mini", llm_args: {} },
      agent_info: { implementation: "llm_agent", llm: "gpt-4.1", llm_args: {} },
      environment_info: { domain_name: "airline", policy: "# Airline policy", tool_defs: null },
      seed: 300,
      ...info,
    },
    tasks: [{ id: "3", user_scenario: { instructions: "x" }, ticket: "Cancel reservation ABC123 for user ada_1." }],
    simulations,
  };
}

/** A simulation run with one answered call (the smallest the reader turns into a trajectory). */
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function simulation(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    task_id: "3",
    timestamp: "2025-07-01T10:00:01.000000",
    start_time: "2025-07-01T10:00:01.000000",
    end_time: "2025-07-01T10:00:09.000000",
    duration: 8.0,
    termination_reason: "user_stop",
    agent_cost: 0.01,
    user_cost: 0.002,
    reward_info: { reward: 1.0 },
    messages: [
      { role: "assistant", content: "Hi! How can I help you today?", tool_calls: null },
      { role: "user", content: "Cancel reservation ABC123 please.", tool_calls: null },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `c-${id}`, name: "get_reservation_details", arguments: { reservation_id: "ABC123" }, requestor: "assistant" }],
      },
      { id: `c-${id}`, role: "tool", content: '{"reservation_id": "ABC123"}', requestor: "assistant", error: false },
      { role: "user", content: "Thanks ###STOP###", tool_calls: null },
    ],
    trial: 0,
    seed: 7,
    ...extra,
  };
}

function writeJson(dir: string, name: string, value: unknown, indent = 2): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, indent));
  return path;
}

describe("tau2-bench: a monolithic results file (retail)", () => {
  it("reads each simulation: calls → their ToolMessages by id, parallel calls, an error result, dialogue as context", async () => {
    const items = await read(RETAIL);
    // Three simulations in, three items out: two trajectories and the run with no tool call, quarantined.
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory", "quarantine"]);
    const t = trajectoryOf(items[0]);
    expect(t.id).toBe("retail/7/trial-0@0f3c2a51-7d1e-4b8a-9c60-2e5f18a4d701");
    expect(t.domain).toBe("mcp");
    expect(t.source).toEqual({ uri: RETAIL, offset: 0, row: 0, format: "tau2-bench" });
    expect(t.task).toBe("Hi, I got a desk lamp in the wrong color. I ordered white but it's black. Can I swap it?");
    expect(t.turns.map((turn) => JSON.parse(turn.action.split("\n")[turn.action.startsWith("[call") ? 1 : 0] as string).name)).toEqual([
      "find_user_id_by_name_zip",
      "get_user_details",
      "get_order_details",
      "get_product_details",
      "get_product_details",
      "calculate",
      "exchange_delivered_order_items",
    ]);
    expect(t.turns[0]).toMatchObject({
      action: '{"name":"find_user_id_by_name_zip","arguments":{"first_name":"Noor","last_name":"Haddad","zip":"60617"}}',
      observation: "noor_haddad_4417",
    });
    // The greeting, the request and the agent's question before the first call are its dialogue.
    expect(t.turns[0]?.meta?.dialogue).toEqual([
      { role: "assistant", text: "Hi! How can I help you today?" },
      { role: "user", text: "Hi, I got a desk lamp in the wrong color. I ordered white but it's black. Can I swap it?" },
      { role: "assistant", text: "I can help with that. Could you give me your full name and zip code so I can find your account?" },
      { role: "user", text: "Sure, Noor Haddad, zip 60617." },
    ]);
    // Two calls in one message: one turn, the results in call order.
    expect(t.turns[2]?.meta).toMatchObject({ tools: ["get_order_details", "get_order_details"], parallel_calls: 2 });
    expect(t.turns[2]?.observation).toMatch(/^\[result 1\/2\]\n\{"order_id": "#W4410027".*\n\[result 2\/2\]\n\{"order_id": "#W9021638"/s);
    // `error: true` on the ToolMessage.
    expect(t.turns[3]).toMatchObject({ observation: "Error: Product not found", meta: { is_error: true } });
    expect(t.turns.filter((turn) => turn.meta?.is_error === true)).toHaveLength(1);
    // No user-side calls in retail: no turn names a requestor.
    expect(t.turns.some((turn) => turn.meta?.requestor !== undefined)).toBe(false);
  });

  it("takes outcome and provenance from the simulation and the run's info; the policy is the agent's system text", async () => {
    const [first, second, third] = await read(RETAIL);
    const t = trajectoryOf(first);
    expect(t.meta).toMatchObject({
      outcome: { reward: 1, success: true },
      agent: "llm_agent",
      model: "gpt-4.1-mini",
      task_id: "7",
      attempt: 0,
      tau2_bench: {
        simulation_id: "0f3c2a51-7d1e-4b8a-9c60-2e5f18a4d701",
        task_id: "7",
        trial: 0,
        seed: 4187,
        termination_reason: "user_stop",
        reward: 1,
        reward_basis: ["DB", "COMMUNICATE"],
        db_match: true,
        agent_cost: 0.0121,
        user_cost: 0.0032,
        domain: "retail",
        user: "user_simulator",
        user_llm: "gpt-4.1-mini",
        git_commit: "5ba9e3e",
      },
    });
    expect(String(t.meta?.agent_system)).toMatch(/^# Retail agent policy\n/);
    expect(t.system).toBeUndefined();
    expect(trajectoryOf(second).meta).toMatchObject({ outcome: { reward: 0, success: false }, task_id: "12", attempt: 0 });
    expect(third).toMatchObject({
      kind: "quarantine",
      entry: {
        id: "retail/12/trial-1@a4d7c3e9-6b15-4c2f-b0a8-71e3d95c6e40",
        field: "simulations.2.messages",
        source: { uri: RETAIL, row: 2 },
        reason: expect.stringContaining("no tool call was followed by its result"),
      },
    });
  });
});

describe("tau2-bench: a dir-format run (telecom, dual control)", () => {
  it("the results file stands for its simulation files; each is read with the run's header", async () => {
    expect(await tau2BenchReader.expand?.(join(TELECOM, "results.json"))).toEqual([ROAMING, SIM_MISSING].sort());
    // A monolithic results file has no simulations/ folder beside it: it stands for nothing.
    expect(await tau2BenchReader.expand?.(RETAIL)).toBeUndefined();
    const dir = tempDir("lwm-tau2-plan-");
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${TELECOM}\n`, dir)));
    expect(plan.files.map((file) => [file.path, file.reader.name])).toEqual([
      [ROAMING, "tau2-bench"],
      [SIM_MISSING, "tau2-bench"],
    ]);
    expect(plan.covered).toMatchObject([{ path: join(TELECOM, "results.json"), kind: "stands-for" }]);
    const t = trajectoryOf((await read(ROAMING))[0]);
    expect(t.id).toBe(
      "telecom/[mobile_data_issue]roaming_disabled|airplane_mode_on[PERSONA:None]/trial-0@2c6a91f0-58b3-4d7e-a1c2-93f0d4e87b15",
    );
    expect(t.meta).toMatchObject({
      agent: "llm_agent",
      model: "claude-3-7-sonnet-20250219",
      tau2_bench: { domain: "telecom", mode: "half_duplex" },
    });
    // The tool signatures the run saved follow the policy.
    expect(String(t.meta?.agent_system)).toMatch(/^# Telecom agent policy[\s\S]*## Tools\n\n\{"name":"get_customer_by_phone"/);
  });

  it("the user's own tool calls (requestor user) are turns marked requestor: user; the agent's are not", async () => {
    const t = trajectoryOf((await read(ROAMING))[0]);
    expect(t.turns.map((turn) => [turn.meta?.tool ?? turn.meta?.tools, turn.meta?.requestor ?? "agent"])).toEqual([
      ["get_customer_by_phone", "agent"],
      ["get_details_by_id", "agent"],
      ["check_status_bar", "user"],
      ["toggle_airplane_mode", "user"],
      ["enable_roaming", "agent"],
      [["check_network_status", "run_speed_test"], "user"],
    ]);
    expect(t.turns[2]).toMatchObject({
      action: '{"name":"check_status_bar","arguments":{}}',
      observation: "Status Bar: ✈️ Airplane Mode | 🔋 72%",
    });
    // The agent's instruction is the context of the user's call, not an agent thought.
    expect(t.turns[2]?.meta?.dialogue).toEqual([
      { role: "assistant", text: "Thanks, Ines. Could you look at the status bar at the top of your phone and tell me what you see?" },
    ]);
    expect(t.turns[2]?.meta?.agent_thought).toBeUndefined();
    const failed = trajectoryOf((await read(SIM_MISSING))[0]);
    expect(failed.turns.at(-1)).toMatchObject({ observation: "Error: Invalid SIM slot: 3", meta: { is_error: true, requestor: "user" } });
    expect(failed.meta).toMatchObject({ outcome: { reward: 0, success: false, failure_mode: "max_steps" } });
  });

  it("a results file left without its simulation files is quarantined, saying where they were to be", async () => {
    const dir = tempDir("lwm-tau2-meta-");
    const path = join(dir, "results.json");
    writeFileSync(path, readFileSync(join(TELECOM, "results.json")));
    expect(await tau2BenchReader.expand?.(path)).toBeUndefined();
    expect(await read(path)).toMatchObject([
      { kind: "quarantine", entry: { field: "simulations", reason: expect.stringContaining("listing 2 in simulation_index") } },
    ]);
  });
});

describe("tau2-bench: refused input", () => {
  it("quarantines each bad simulation with its index and field, keeps the good ones: records in = out + quarantined", async () => {
    const dir = tempDir("lwm-tau2-bad-");
    const good = simulation("s-good");
    const unanswered = simulation("s-orphan");
    (unanswered.messages as unknown[]).splice(3, 0, { id: "nobody", role: "tool", content: "stray", requestor: "assistant" });
    const sims = [
      good,
      "not a simulation",
      simulation("s-msgs", { messages: { role: "user" } }),
      simulation("s-msg", { messages: [{ role: "user", content: "hi" }, 42] }),
      simulation("s-noname", { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "x", arguments: {} }] }] }),
      simulation("s-content", { messages: [{ role: "user", content: { text: "hi" } }] }),
      simulation("s-role", { messages: [{ content: "no role" }] }),
      { ...simulation("s-noid"), id: undefined },
      unanswered,
      simulation("s-multi", {
        messages: [
          { role: "user", content: "Look up both.", tool_calls: null },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "m1", name: "get_flight_status", arguments: { flight_number: "HAT001" } },
              { id: "m2", name: "get_flight_status", arguments: { flight_number: "HAT002" } },
            ],
          },
          {
            role: "tool",
            tool_messages: [
              { id: "m2", role: "tool", content: "delayed", requestor: "assistant", error: false },
              { id: "m1", role: "tool", content: "on time", requestor: "assistant", error: false },
            ],
          },
        ],
      }),
    ];
    const path = writeJson(dir, "results.json", results(sims));
    const items = await read(path);
    expect(items).toHaveLength(sims.length);
    // Each quarantine entry: its field, the simulation's index, and the reason's words after the field.
    const summary = items.map((item) =>
      item.kind === "quarantine"
        ? [item.entry.field, item.entry.source.row, item.entry.reason.split(": ")[1]?.split(",")[0]]
        : [item.kind, item.kind === "trajectory" ? item.trajectory.source.row : undefined],
    );
    expect(summary).toEqual([
      ["trajectory", 0],
      ["simulations.1", 1, "expected a simulation run object"],
      ["simulations.2.messages", 2, "expected a list of messages (or"],
      ["simulations.3.messages.1", 3, "expected a message object"],
      ["simulations.4.messages.0.tool_calls.0.name", 4, "expected the tool's name"],
      ["simulations.5.messages.0.content", 5, "expected a string or null"],
      ["simulations.6.messages.0.role", 6, 'expected "system"'],
      ["simulations.7.id", 7, "expected the simulation's id (a string)"],
      ["trajectory", 8],
      ["trajectory", 9],
    ]);
    // A ToolMessage answering no call: counted, as chat rows count it (the call keeps its own result).
    const orphan = trajectoryOf(items[8]);
    expect(orphan.meta?.skipped).toMatchObject({ tool_result_without_call: 1 });
    expect(orphan.turns[0]?.observation).toBe('{"reservation_id": "ABC123"}');
    // A MultiToolMessage is its tool messages, matched to the calls by id.
    expect(trajectoryOf(items[9]).turns[0]?.observation).toBe("[result 1/2]\non time\n[result 2/2]\ndelayed");
    expect(items[2]).toMatchObject({ kind: "quarantine", entry: { id: "airline/3/trial-0@s-msgs" } });
  });

  it("a file cut mid-write keeps the simulations before the break and quarantines the rest once, at its byte offset", async () => {
    const dir = tempDir("lwm-tau2-cut-");
    const text = readFileSync(RETAIL, "utf8");
    // Cut inside the third simulation's messages.
    const cut = text.indexOf('"Can I get a refund to my bank account');
    const path = join(dir, "cut.json");
    writeFileSync(path, text.slice(0, cut));
    const items = await read(path);
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory", "quarantine"]);
    const bytes = Buffer.byteLength(text.slice(0, cut));
    expect(items[2]).toMatchObject({
      kind: "quarantine",
      entry: {
        field: "simulations",
        source: { row: 2, offset: bytes },
        reason: expect.stringMatching(/^the results file breaks after simulation 1 at byte \d+ \(line \d+, column \d+\)/),
      },
    });
    // Damage in the middle: the offset is where the JSON stops being JSON (a non-ASCII character before it counts its bytes).
    const damaged = text.replace('"find_user_id_by_email"', '"find_user_id_by_email" }}}');
    const at = Buffer.byteLength(damaged.slice(0, damaged.indexOf(" }}}") + 2));
    const middle = join(dir, "middle.json");
    writeFileSync(middle, damaged);
    const again = await read(middle);
    expect(again.map((item) => item.kind)).toEqual(["trajectory", "quarantine"]);
    expect(again[1]).toMatchObject({ kind: "quarantine", entry: { source: { row: 1, offset: at } } });
    const line = damaged.slice(0, at).split("\n").length;
    expect(again[1]?.kind === "quarantine" && again[1].entry.reason).toContain(`at byte ${at} (line ${line}, column`);
  });

  it("a results file with no simulations, or with simulations that are not a list, is one quarantine entry", async () => {
    const dir = tempDir("lwm-tau2-empty-");
    expect(await read(writeJson(dir, "empty.json", results([])))).toMatchObject([
      { kind: "quarantine", entry: { field: "simulations", reason: expect.stringContaining("holds no simulations") } },
    ]);
    expect(await read(writeJson(dir, "object.json", { ...results([]), simulations: { a: 1 } }))).toMatchObject([
      { kind: "quarantine", entry: { field: "simulations", reason: "simulations: expected a list of simulation runs, got an object" } },
    ]);
  });
});

describe("tau2-bench: other layouts of the same data", () => {
  it("a voice run's ticks (no messages): calls and results from the ticks, text chunks of one speaker joined", async () => {
    const dir = tempDir("lwm-tau2-ticks-");
    const chunk = (content: string, utterance: string) => ({ role: "assistant", content, utterance_ids: [utterance], is_audio: true });
    const userChunk = (content: string, utterance: string) => ({ ...chunk(content, utterance), role: "user" });
    const ticks = [
      { tick_id: 0, timestamp: "t0", agent_chunk: chunk("Hi! How can ", "u1") },
      { tick_id: 1, timestamp: "t1", agent_chunk: chunk("I help?", "u1") },
      { tick_id: 2, timestamp: "t2", user_chunk: userChunk("Is flight HAT001", "u2") },
      { tick_id: 3, timestamp: "t3", user_chunk: userChunk(" on time?", "u2") },
      { tick_id: 4, timestamp: "t4", user_chunk: userChunk("Please check.", "u3") },
      {
        tick_id: 5,
        timestamp: "t5",
        agent_tool_calls: [{ id: "v1", name: "get_flight_status", arguments: { flight_number: "HAT001" }, requestor: "assistant" }],
        agent_tool_results: [{ id: "v1", role: "tool", content: "on time", requestor: "assistant", error: false }],
        user_tool_calls: [],
        user_tool_results: [],
      },
    ];
    const path = writeJson(dir, "voice.json", results([simulation("s-voice", { messages: null, ticks, mode: "full_duplex" })]));
    const t = trajectoryOf((await read(path))[0]);
    expect(t.turns).toHaveLength(1);
    expect(t.turns[0]).toMatchObject({
      action: '{"name":"get_flight_status","arguments":{"flight_number":"HAT001"}}',
      observation: "on time",
    });
    expect(t.turns[0]?.meta?.dialogue).toEqual([
      { role: "assistant", text: "Hi! How can I help?" },
      { role: "user", text: "Is flight HAT001 on time? Please check." },
    ]);
    expect(t.meta).toMatchObject({ tau2_bench: { mode: "full_duplex" } });
  });

  it("SimulationRuns one per JSONL line or in a JSON array: one record each, named by line or element", async () => {
    const dir = tempDir("lwm-tau2-lines-");
    const jsonl = join(dir, "sims.jsonl");
    writeFileSync(jsonl, `${JSON.stringify(simulation("s-1"))}\n${JSON.stringify(simulation("s-2"))}\n`);
    const detection = await detectFormat(jsonl);
    expect(detection.kind === "format" && detection.reader.name).toBe("tau2-bench");
    const lines = await read(jsonl);
    expect(lines.map((item) => item.kind === "trajectory" && [item.trajectory.id, item.trajectory.source.line])).toEqual([
      ["tau2/3/trial-0@s-1", 1],
      ["tau2/3/trial-0@s-2", 2],
    ]);
    // No header beside a stray file: no policy, no model, the domain from the tools.
    expect(trajectoryOf(lines[0]).meta?.model).toBeUndefined();
    const array = writeJson(dir, "sims.json", [simulation("s-1"), simulation("s-2")]);
    expect((await read(array)).map((item) => item.kind === "trajectory" && item.trajectory.source.row)).toEqual([0, 1]);
  });

  it("a SimulationRun dumped with its keys sorted (json sort_keys, jq -S) or in any order is detected and read the same", async () => {
    const dir = tempDir("lwm-tau2-sorted-");
    const sorted = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(sorted)
        : isPlainObject(value)
          ? Object.fromEntries(
              Object.keys(value)
                .sort()
                .map((key) => [key, sorted(value[key])]),
            )
          : value;
    const reversed = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).reverse());
    const plain = join(dir, "plain.jsonl");
    writeFileSync(plain, `${JSON.stringify(simulation("s-1"))}\n`);
    const expected = (await read(plain)).map((item) => item.kind === "trajectory" && item.trajectory.turns);
    expect(expected[0]).not.toBe(false);
    const files = {
      "sorted.json": `${JSON.stringify(sorted(simulation("s-1")), null, 2)}\n`,
      "sorted.jsonl": `${JSON.stringify(sorted(simulation("s-1")))}\n`,
      "reversed.jsonl": `${JSON.stringify(reversed(simulation("s-1")))}\n`,
    };
    for (const [name, text] of Object.entries(files)) {
      const path = join(dir, name);
      writeFileSync(path, text);
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, name).toBe("tau2-bench");
      expect(
        (await read(path)).map((item) => item.kind === "trajectory" && item.trajectory.turns),
        name,
      ).toEqual(expected);
    }
    // Not any object with an id first and sorted keys: a record without a SimulationRun's fields stays unclaimed.
    expect(tau2BenchReader.sniff('{"agent_cost": 1, "id": "x", "name": "y"}\n', "x.jsonl")).toBe(false);
  });

  it("a solo run (no user): the task is the task's ticket", async () => {
    const dir = tempDir("lwm-tau2-solo-");
    const solo = simulation("s-solo", {
      messages: [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "o1", name: "get_reservation_details", arguments: { reservation_id: "ABC123" } }],
        },
        { id: "o1", role: "tool", content: "{}", requestor: "assistant" },
      ],
    });
    const t = trajectoryOf((await read(writeJson(dir, "solo.json", results([solo]))))[0]);
    expect(t.task).toBe("Cancel reservation ABC123 for user ada_1.");
  });
});

describe("tau2-bench: detection", () => {
  it("detects the fixtures, and claims no other reader's fixture nor the demo data", async () => {
    for (const path of [RETAIL, ROAMING, SIM_MISSING, join(TELECOM, "results.json")]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, path).toBe("tau2-bench");
    }
    const others: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else others.push(path);
      }
    };
    walk(join(ROOT, "test/fixtures/handmade"));
    walk(join(ROOT, "data/demo"));
    const claimed: string[] = [];
    for (const path of others.filter((p) => !p.startsWith(DIR))) if (tau2BenchReader.sniff(await readHead(path), path)) claimed.push(path);
    expect(others.length).toBeGreaterThan(100);
    expect(claimed).toEqual([]);
  });

  it("leaves the original τ-bench results (a JSON array of {task_id, reward, info, traj, trial}) to chat-tool-rows", async () => {
    const dir = tempDir("lwm-tau2-v1-");
    const row = {
      task_id: 0,
      reward: 0.0,
      info: { task: { user_id: "ada_1", actions: [] }, reward_info: { reward: 0.0 } },
      traj: [
        { role: "system", content: "# Airline Agent Policy" },
        { role: "user", content: "Hi" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "get_user_details", arguments: '{"user_id": "ada_1"}' } }],
        },
        { role: "tool", tool_call_id: "c1", name: "get_user_details", content: "{}" },
      ],
      trial: 0,
    };
    const path = writeJson(dir, "gpt-4o-airline.json", [row, { ...row, task_id: 1 }]);
    expect(tau2BenchReader.sniff(await readHead(path), path)).toBe(false);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
    // A document with an `info` but not tau2's Info (no git_commit first) is not a results file either.
    expect(tau2BenchReader.sniff('{\n  "info": {"name": "x"},\n  "simulations": []\n}', "x.json")).toBe(false);
    // Before chat-tool-rows in READERS: its sniff would take a simulation file's messages.
    const names = READERS.map((reader) => reader.name);
    expect(names.indexOf("tau2-bench")).toBeLessThan(names.indexOf("chat-tool-rows"));
  });
});

describe("tau2-bench: a large results file", () => {
  it("is read simulation by simulation: the first arrives when a small part of the file has been read", async () => {
    const dir = tempDir("lwm-tau2-large-");
    mkdirSync(dir, { recursive: true });
    const count = 1500;
    const padding = "x".repeat(8000);
    const sims = Array.from({ length: count }, (_, i) => simulation(`s-${i}`, { reward_info: { reward: i % 2, info: { note: padding } } }));
    const path = writeJson(dir, "large.json", results(sims));
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(12 << 20);
    let first: number | undefined;
    let trajectories = 0;
    for await (const item of tau2BenchReader.read(path, OPTIONS)) {
      first ??= pulled.get(path);
      if (item.kind === "trajectory") trajectories += 1;
    }
    // Records in = out: every simulation is one trajectory.
    expect(trajectories).toBe(count);
    expect(first).toBeDefined();
    expect(first as number).toBeLessThan(size / 4);
    expect(pulled.get(path)).toBe(size);
  });
});
