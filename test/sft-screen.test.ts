/**
 * Which selected turns become SFT prompts (src/sft/prompts/screen-prompts.ts), how the manifest
 * reports the rest, how `by_rule` counts, and how `sft sample` stops on SIGINT / SIGTERM:
 * - prompts with nothing to predict from (canonical JSONL turns with empty actions) are skipped;
 *   output-only terminal recordings (an asciicast with no input, prompt or command) are filtered by
 *   their reader (`terminal-no-action`): no prompt, reported apart with their rule;
 * - identical prompts with different real observations are a conflict: reported with their
 *   prompt ids, none sent to the teacher; identical prompts with one observation share a request;
 * - a rule counts as evaluated and failed only where it ran (fidelity does not run on a malformed answer);
 * - SIGINT / SIGTERM print the "rerun to resume" line `lwm-data run` prints, exit 130 / 143, and the
 *   rerun pays only for what was never answered and equals an uninterrupted run.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { loadSystemPrompts } from "../src/render/system-prompts.ts";
import { readPrompts } from "../src/sft/prompts/read-prompts.ts";
import { lacksContext, screenPrompts } from "../src/sft/prompts/screen-prompts.ts";
import { buildPrompt, type SftPrompt, teacherMessages } from "../src/sft/prompts/sft-prompt.ts";
import { runSft, type SftManifest } from "../src/sft/run-sft.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const systemPrompts = loadSystemPrompts(join(ROOT, "configs/system-prompts"));

/** A v2 asciicast holding output events only: no input, no shell prompt, no command. */
function outputOnlyCast(dir: string, name: string, outputs: string[]): void {
  const lines = [{ version: 2, width: 40, height: 10 }, ...outputs.map((text, i) => [0.1 + i / 2, "o", text])];
  writeFileSync(join(dir, name), `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
}

function jsonl(dir: string, name: string, records: unknown[]): void {
  writeFileSync(join(dir, name), `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);
}

async function allPrompts(configPath: string): Promise<SftPrompt[]> {
  const plan = await planJob(loadConfig(configPath));
  return (await collect(readPrompts(plan, new Map()))).flatMap((item) => (item.kind === "prompts" ? item.prompts : []));
}

const THINK = "The command prints what the service reports at this point of the session.";
const answer = (prediction: string) => `<think>\n${THINK}\n</think>\n\n<predicted_observation>\n${prediction}\n</predicted_observation>`;
/** A malformed (unclosed), a wrong and a correct candidate. */
const candidates = (truth: string) => [`<think>${THINK}</think><predicted_observation>${truth}`, answer("nothing like it"), answer(truth)];

describe("prompts with nothing to predict from", () => {
  const base: Trajectory = {
    id: "t",
    domain: "terminal",
    source: { uri: "x.jsonl", line: 1, format: "canonical-jsonl" },
    turns: [
      { action: "", observation: "" },
      { action: " \n", observation: "boot ok" },
      { action: "uptime", observation: "up 3 days" },
    ],
  };
  const lacks = (trajectory: Trajectory, turn: number, maxHistoryTurns = 0) =>
    lacksContext(buildPrompt(trajectory, turn, "x", systemPrompts, { maxHistoryTurns }), systemPrompts);

  it("are those whose system message is the bare domain prompt and whose other messages are all blank", () => {
    expect(lacks(base, 0)).toBe(true);
    // History of blank messages only: still nothing.
    expect(
      lacks(
        {
          ...base,
          turns: [
            { action: "", observation: " " },
            { action: "\t", observation: "x" },
          ],
        },
        1,
      ),
    ).toBe(true);
    // An observation in the history, an action, a task, an initial observation, a system prompt of its own: context.
    expect(lacks(base, 2)).toBe(false);
    expect(lacks(base, 2, 1)).toBe(false);
    expect(lacks({ ...base, turns: [base.turns[1] as Trajectory["turns"][number], { action: "", observation: "y" }] }, 1)).toBe(false);
    expect(lacks({ ...base, task: "watch the boot log" }, 0)).toBe(false);
    expect(lacks({ ...base, initialObservation: "$ " }, 0)).toBe(false);
    expect(lacks({ ...base, system: "You replay the boot log of host-7." }, 0)).toBe(false);
    expect(lacks({ ...base, turns: [{ action: "ls", observation: "" }] }, 0)).toBe(false);
    // A trajectory's own system prompt equal to the domain's adds nothing.
    expect(lacks({ ...base, system: systemPrompts.terminal }, 0)).toBe(true);
  });

  it("output-only terminal recordings: read-filtered or skipped by `sft prompts` and `sft sample`, reported per domain with examples", async () => {
    const dir = tempDir("lwm-screen-oo-");
    outputOnlyCast(dir, "tail-a.cast", ["INFO started\r\n", "INFO ready\r\n"]);
    outputOnlyCast(dir, "tail-b.cast", ["WARN disk 91% full\r\n"]);
    jsonl(dir, "recorded.jsonl", [
      {
        id: "oo-1",
        domain: "terminal",
        turns: [
          { action: "", observation: "boot ok" },
          { action: "", observation: "login:" },
        ],
      },
      { id: "oo-2", domain: "terminal", turns: [{ action: "", observation: "kernel panic" }] },
      { id: "ctx", domain: "terminal", task: "check the disk", turns: [{ action: "df -h /", observation: "/dev/sda1 91%" }] },
    ]);
    const configPath = writeConfig(
      ["inputs:", "  - path: tail-*.cast", "  - path: recorded.jsonl", "sft:", "  select: all", ""].join("\n"),
      dir,
    );
    const plan = await planJob(loadConfig(configPath));
    const items = await collect(readPrompts(plan, new Map()));
    // The casts hold output only, nothing to split at: their reader filters them (no turn, no prompt).
    const filtered = items.flatMap((item) => (item.kind === "prompts" && item.readFilter ? [item] : []));
    expect(filtered.map((item) => [item.prompts.length, item.readFilter?.rule, item.readFilter?.domain])).toEqual([
      [0, "terminal-no-action", "terminal"],
      [0, "terminal-no-action", "terminal"],
    ]);
    const castIds = filtered.map((item) => item.trajectoryId);
    expect(new Set(castIds).size).toBe(2);
    const prompts = await allPrompts(configPath);
    expect(prompts.filter((prompt) => castIds.includes(prompt.trajectory_id))).toEqual([]);
    // Byte-identical prompts, two different real observations: the twins the issue describes.
    const bare = prompts.filter((prompt) => prompt.turn_index === 0 && prompt.trajectory_id !== "ctx");
    expect(bare.map((prompt) => prompt.prompt_id)).toEqual(["oo-1#0", "oo-2#0"]);
    expect(new Set(bare.map((prompt) => JSON.stringify(prompt.messages))).size).toBe(1);
    expect(new Set(bare.map((prompt) => prompt.ground_truth)).size).toBe(2);

    const out = join(dir, "prompts.jsonl");
    const { stdout } = await exec(process.execPath, [CLI, "sft", "prompts", configPath, "--out", out]);
    const written = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as SftPrompt).prompt_id);
    // oo-1#1 has an observation in its history: something to predict from.
    expect(written).toEqual(["oo-1#1", "ctx#0"]);
    // Every record is accounted for: 5 read = 3 with selected turns + 2 read-filtered.
    expect(stdout).toMatch(/sft prompts: 5 record\(s\) → 2 prompt\(s\)/);
    expect(stdout).toMatch(/selected +4 turn\(s\) → 2 prompt\(s\); skipped 2 without context, 0 in conflict/);
    expect(stdout).toMatch(/skipped +by domain: terminal 2 no context/);
    expect(stdout).toContain(`e.g. ${bare[0]?.prompt_id}`);
    expect(stdout).toContain(
      `read filtered 2 record(s) with no turn to predict (terminal-no-action 2; by domain: terminal 2), e.g. ${castIds.join(", ")}`,
    );

    const file = join(dir, "candidates.jsonl");
    jsonl(
      dir,
      "candidates.jsonl",
      prompts.map((prompt) => ({ prompt_id: prompt.prompt_id, candidates: [answer(prompt.ground_truth)] })),
    );
    const outputDir = join(dir, "sft");
    const { manifest } = await runSft(await planJob(loadConfig(configPath)), { outputDir, candidateFiles: [file] });
    expect(manifest.counts).toMatchObject({ records_in: 5, prompts: 2, kept: 2, rejected: 0, failed: 0 });
    expect(manifest.selection).toEqual({
      turns: 4,
      prompts: 2,
      skipped: { no_context: 2, conflict: 0 },
      by_domain: { terminal: { turns: 4, prompts: 2, no_context: 2, conflict: 0 } },
      no_context_examples: bare.map((prompt) => prompt.prompt_id),
      conflicts: { groups: 0, prompts: 0, examples: [] },
      duplicates: 0,
      read_filtered: { records: 2, by_domain: { terminal: 2 }, by_rule: { "terminal-no-action": 2 }, examples: castIds },
    });
    expect(JSON.parse(readFileSync(join(outputDir, "manifest.json"), "utf8")).selection).toEqual(manifest.selection);
    const cli = await exec(process.execPath, [
      CLI,
      "sft",
      "sample",
      configPath,
      "--candidates",
      file,
      "--output",
      outputDir,
      "--progress",
      "none",
    ]);
    expect(cli.stdout).toMatch(/selected +4 turn\(s\) → 2 prompt\(s\); skipped 2 without context/);
    expect(cli.stdout).toMatch(/read filtered 2 record\(s\) with no turn to predict \(terminal-no-action 2/);
  });
});

/** A fake OpenAI-compatible teacher: answers every request it knows with `candidates(truth)`, in order. */
interface FakeTeacher {
  url: string;
  /** The prompt ids of the requests received (one per HTTP request). */
  received: string[];
  /** Requests whose messages it does not know. */
  unknown: number;
  /** While set, requests wait until `release()`. */
  hold: boolean;
  release(): void;
  close(): Promise<void>;
}

async function fakeTeacher(prompts: SftPrompt[], instructions: string, hints = false): Promise<FakeTeacher> {
  const byMessages = new Map<string, SftPrompt[]>();
  for (const prompt of prompts) {
    const key = JSON.stringify(teacherMessages(prompt, { hints, instructions }));
    byMessages.set(key, [...(byMessages.get(key) ?? []), prompt]);
  }
  let waiting: (() => void)[] = [];
  const state = {
    received: [] as string[],
    unknown: 0,
    hold: false,
    release() {
      state.hold = false;
      for (const go of waiting.splice(0)) go();
    },
  };
  const server: Server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const request = JSON.parse(body) as { messages: unknown; n: number };
    const twins = byMessages.get(JSON.stringify(request.messages));
    if (!twins) {
      state.unknown += 1;
      res.writeHead(400).end(JSON.stringify({ error: { message: "unknown prompt" } }));
      return;
    }
    state.received.push(...twins.map((prompt) => prompt.prompt_id));
    if (state.hold) await new Promise<void>((resolve) => waiting.push(resolve));
    const texts = candidates((twins[0] as SftPrompt).ground_truth).slice(0, request.n);
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: "cmpl",
        object: "chat.completion",
        choices: texts.map((content, index) => ({ index, message: { role: "assistant", content }, finish_reason: "stop" })),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        waiting = [];
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function teacherConfig(dir: string, url: string, extra: string[] = []): string {
  return writeConfig(
    [
      "inputs:",
      "  - path: trajectories.jsonl",
      "sft:",
      "  select: all",
      ...extra,
      "  teacher:",
      `    base_url: ${url}`,
      "    model: fake-teacher",
      "    api_key_env: LWM_SCREEN_TEST_UNSET_KEY",
      "    n: 3",
      "    concurrency: 1",
      "    max_retries: 0",
      "    timeout_ms: 20000",
      "    cache_dir: cache",
      "",
    ].join("\n"),
    dir,
  );
}

describe("identical prompts with different real observations", () => {
  const task = "Deploy the service and report the result.";
  const records = [
    // Same task and action, three real observations of which two differ: one conflict group of 3.
    { id: "deploy-a", domain: "terminal", task, turns: [{ action: "make deploy", observation: "deployed v2" }] },
    { id: "deploy-b", domain: "terminal", task, turns: [{ action: "make deploy", observation: "error: registry timeout" }] },
    { id: "deploy-c", domain: "terminal", task, turns: [{ action: "make deploy", observation: "deployed v2" }] },
    // Same prompt, same observation: duplicates, one request answers both.
    { id: "count-a", domain: "terminal", task: "Count the lines.", turns: [{ action: "wc -l a.txt", observation: "3 a.txt" }] },
    { id: "count-b", domain: "terminal", task: "Count the lines.", turns: [{ action: "wc -l a.txt", observation: "3 a.txt" }] },
    {
      id: "plain",
      domain: "terminal",
      task: "Look around.",
      turns: [
        { action: "pwd", observation: "/home/agent" },
        { action: "ls", observation: "a.txt notes" },
      ],
    },
  ];
  let dir: string;
  let teacher: FakeTeacher;
  let manifest: SftManifest;
  let prompts: SftPrompt[];

  beforeAll(async () => {
    dir = tempDir("lwm-screen-conflict-");
    jsonl(dir, "trajectories.jsonl", records);
    const probe = teacherConfig(dir, "http://127.0.0.1:9/v1");
    prompts = await allPrompts(probe);
    teacher = await fakeTeacher(prompts, (await planJob(loadConfig(probe))).config.sft.instructions);
    const plan = await planJob(loadConfig(teacherConfig(dir, teacher.url)));
    manifest = (await runSft(plan, { outputDir: join(dir, "sft"), backoff: { baseMs: 1, maxMs: 5 } })).manifest;
  });
  afterAll(async () => {
    await teacher?.close();
  });

  it("are a reported conflict: none is sent or kept, the prompt ids are in the manifest", () => {
    expect(manifest.selection.skipped).toEqual({ no_context: 0, conflict: 3 });
    expect(manifest.selection.conflicts).toEqual({
      groups: 1,
      prompts: 3,
      examples: [{ domain: "terminal", prompts: 3, observations: 2, prompt_ids: ["deploy-a#0", "deploy-b#0", "deploy-c#0"] }],
    });
    expect(teacher.received.filter((id) => id.startsWith("deploy-"))).toEqual([]);
    expect(teacher.unknown).toBe(0);
    expect(manifest.counts).toMatchObject({ prompts: 4, kept: 4, rejected: 0, failed: 0 });
    expect(manifest.selection.turns).toBe(manifest.counts.prompts + 3);
  });

  it("identical prompts with one observation share one request and are both kept", () => {
    expect(manifest.selection.duplicates).toBe(1);
    // One HTTP request for the two count-* prompts (the fake records both ids it matches).
    expect(teacher.received.filter((id) => id.startsWith("count-"))).toEqual(["count-a#0", "count-b#0"]);
    expect(teacher.received).toHaveLength(2 + 2);
    if (manifest.teacher.source !== "endpoint") throw new Error("expected the endpoint");
    expect(manifest.teacher.stats.requests).toBe(3);
  });

  it("with hints (the truth in the teacher's request), identical student prompts are still a conflict", async () => {
    const hinted = teacherConfig(dir, teacher.url, ["  hints: true"]);
    const screen = await screenPrompts(await planJob(loadConfig(hinted)));
    await collect(screen.items);
    expect(screen.report().conflicts).toEqual(manifest.selection.conflicts);
  });

  it("by_rule counts a rule only where it ran: fidelity does not run on the malformed answer", async () => {
    const sent = manifest.counts.prompts;
    expect(manifest.counts.candidates).toBe(3 * sent);
    expect(manifest.by_rule.format).toEqual({ evaluated: 3 * sent, failed: sent });
    expect(manifest.by_rule.fidelity).toEqual({ evaluated: 2 * sent, failed: sent });
    expect(manifest.by_rule.leakage).toEqual({ evaluated: 3 * sent, failed: 0 });
    const { tableFromIPC } = await import("apache-arrow");
    const { readParquet } = await import("parquet-wasm");
    const table = tableFromIPC(readParquet(readFileSync(join(dir, "sft/sft/candidates.parquet"))).intoIPCStream());
    // Iterated (not toArray): a null stays null.
    const column = (name: string) => [...(table.getChild(name) ?? [])] as (number | null)[];
    const index = column("candidate_index");
    const fidelity = column("fidelity_score");
    const format = column("format_score");
    expect(index).toHaveLength(3 * sent);
    index.forEach((candidate, row) => {
      expect(fidelity[row], `row ${row}`).toEqual(candidate === 0 ? null : candidate === 1 ? expect.any(Number) : 1);
      expect(format[row]).toBe(candidate === 0 ? 0 : 1);
    });
  });
});

describe("sft sample stopped by a signal", () => {
  /** 12 prompts, every one its own request. */
  const records = Array.from({ length: 4 }, (_, t) => ({
    id: `session-${t}`,
    domain: "terminal",
    task: `Inspect host ${t}.`,
    turns: ["hostname", "uptime", "df -h /"].map((action, i) => ({ action, observation: `host-${t} ${action} → ${t * 10 + i}` })),
  }));

  const shardsOf = (manifest: SftManifest) => manifest.shards.map((shard) => [shard.path, shard.sha256, shard.rows]);

  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal}: prints the "rerun to resume" line, exits ${code}, and the rerun pays only for the rest and equals an uninterrupted run`, async () => {
      const dir = tempDir("lwm-screen-stop-");
      jsonl(dir, "trajectories.jsonl", records);
      const probe = teacherConfig(dir, "http://127.0.0.1:9/v1");
      const prompts = await allPrompts(probe);
      expect(prompts).toHaveLength(12);
      const teacher = await fakeTeacher(prompts, (await planJob(loadConfig(probe))).config.sft.instructions);
      try {
        // The reference: an uninterrupted run with a cache of its own.
        const referenceDir = tempDir("lwm-screen-stop-ref-");
        jsonl(referenceDir, "trajectories.jsonl", records);
        const reference = (
          await runSft(await planJob(loadConfig(teacherConfig(referenceDir, teacher.url))), { outputDir: join(referenceDir, "sft") })
        ).manifest;
        expect(reference.counts.kept).toBe(12);
        teacher.received.length = 0;

        const configPath = teacherConfig(dir, teacher.url);
        const outputDir = join(dir, "sft");
        teacher.hold = true;
        const child: ChildProcess = spawn(process.execPath, [CLI, "sft", "sample", configPath, "-o", outputDir, "--progress", "none"], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout?.on("data", (chunk) => {
          stdout += chunk;
        });
        child.stderr?.on("data", (chunk) => {
          stderr += chunk;
        });
        const exited = new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
        // Mid-run: the first request is held at the teacher.
        while (teacher.received.length < 1 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
        expect(child.exitCode, stderr).toBeNull();
        child.kill(signal);
        while (!stderr.includes("stopping") && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
        teacher.release();
        expect(await exited, stderr).toBe(code);
        expect(stderr).toContain(
          `lwm-data sft sample: ${signal}: stopping once the requests in flight are answered (send it again to exit at once)`,
        );
        expect(stdout).toMatch(
          new RegExp(
            `stopped by ${signal}: the teacher's answers so far are kept in its cache .*; rerun the same command to resume \\(the output will equal an uninterrupted run's\\)`,
          ),
        );
        // Nothing new was sent after the signal: the request held, and at most the one the client had queued.
        const answered = teacher.received.length;
        expect(answered).toBeGreaterThanOrEqual(1);
        expect(answered).toBeLessThanOrEqual(2);
        // A resumable state: no manifest, only what an SFT run owns (the rerun needs no --overwrite).
        const left = readdirSync(outputDir);
        expect(left).not.toContain("manifest.json");
        expect(left.every((entry) => ["data", "sft", "quarantine", "README.md"].includes(entry))).toBe(true);

        const rerun = await exec(process.execPath, [CLI, "sft", "sample", configPath, "-o", outputDir, "--progress", "none"]);
        expect(rerun.stdout).toMatch(/kept +12 /);
        // Every prompt was asked for exactly once over the two runs.
        expect([...teacher.received].sort()).toEqual(prompts.map((prompt) => prompt.prompt_id).sort());
        const resumed = JSON.parse(readFileSync(join(outputDir, "manifest.json"), "utf8")) as SftManifest;
        if (resumed.teacher.source !== "endpoint") throw new Error("expected the endpoint");
        expect(resumed.teacher.stats).toMatchObject({ requests: 12 - answered, cacheHits: answered });
        expect(resumed.counts).toEqual(reference.counts);
        expect(resumed.by_rule).toEqual(reference.by_rule);
        expect(shardsOf(resumed)).toEqual(shardsOf(reference));
        expect(resumed.candidates_table?.sha256).toBe(reference.candidates_table?.sha256);
      } finally {
        teacher.release();
        await teacher.close();
      }
    });
  }

  it("a second SIGINT exits at once (130), with the request still in flight; the rerun completes", async () => {
    const dir = tempDir("lwm-screen-stop2-");
    jsonl(dir, "trajectories.jsonl", records);
    const probe = teacherConfig(dir, "http://127.0.0.1:9/v1");
    const prompts = await allPrompts(probe);
    const teacher = await fakeTeacher(prompts, (await planJob(loadConfig(probe))).config.sft.instructions);
    try {
      const configPath = teacherConfig(dir, teacher.url);
      const outputDir = join(dir, "sft");
      teacher.hold = true;
      const child = spawn(process.execPath, [CLI, "sft", "sample", configPath, "-o", outputDir, "--progress", "none"], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr?.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
      while (teacher.received.length < 1 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
      child.kill("SIGINT");
      while (!stderr.includes("stopping") && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
      child.kill("SIGINT");
      expect(await exited, stderr).toBe(130);
      expect(teacher.hold).toBe(true);
      teacher.release();
      const rerun = await exec(process.execPath, [CLI, "sft", "sample", configPath, "-o", outputDir, "--progress", "none"]);
      expect(rerun.stdout).toMatch(/kept +12 /);
    } finally {
      teacher.release();
      await teacher.close();
    }
  });
});
