import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { readSharedDecisions, shareDecisions } from "../src/pipeline/input-decisions.ts";
import { type InputFile, type JobPlan, planJob } from "../src/pipeline/plan.ts";
import { createStopSignal } from "../src/pipeline/stop-signal.ts";
import { ROOT, tempDir } from "./helpers.ts";

/**
 * A worker thread plans the job again from the config, with the main thread's input decisions
 * (src/pipeline/input-decisions.ts) so that it does not sniff every file again. The plan it makes
 * must be the main thread's: same files read the same way, same hashes. And the decisions must be
 * what it goes by: a file that changed after the main thread planned is read as planned.
 */
const CANONICAL = join(ROOT, "test/fixtures/tokenizers/tricky-trajectories.jsonl");

const chatRow = (n: number) =>
  JSON.stringify({
    messages: [
      { role: "user", content: `list files ${n}` },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: `c${n}`, type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }],
      },
      { role: "tool", tool_call_id: `c${n}`, content: `a.txt\nb${n}.txt` },
    ],
  });

/** What a plan decided about each file, as comparable data. */
function fileFacts(files: InputFile[]) {
  return files.map((f) => ({
    path: f.path,
    displayPath: f.displayPath,
    bytes: f.bytes,
    reader: f.reader.name,
    detected: f.detected,
    splittable: f.splittable,
    skippedLines: f.skippedLines,
    unrecognized: f.unrecognized,
    excerpt: f.excerpt,
    empty: f.empty,
    layout: f.layout,
  }));
}

function samePlan(worker: JobPlan, main: JobPlan): void {
  expect(fileFacts(worker.files)).toEqual(fileFacts(main.files));
  expect(fileFacts(worker.benchmarks)).toEqual(fileFacts(main.benchmarks));
  expect(worker.covered).toEqual(main.covered);
  expect(worker.taskPlanSha256).toBe(main.taskPlanSha256);
  expect(worker.configSha256).toBe(main.configSha256);
}

describe("a worker thread plans from the main thread's input decisions", () => {
  const dir = tempDir("lwm-input-decisions-");
  const data = join(dir, "data");
  const files = {
    rows: join(data, "rows.json"),
    lines: join(data, "chat.jsonl"),
    noise: join(data, "noise.jsonl"),
    empty: join(data, "empty.jsonl"),
    unknown: join(data, "notes.txt"),
  };
  const config = join(dir, "job.yaml");

  function writeInputs() {
    rmSync(data, { recursive: true, force: true });
    mkdirSync(data, { recursive: true });
    writeFileSync(files.rows, `[\n${[1, 2, 3].map(chatRow).join(",\n")}\n]\n`);
    writeFileSync(files.lines, `${[4, 5].map(chatRow).join("\n")}\n`);
    // A stray first line before the records: skipped lines the reader quarantines.
    writeFileSync(files.noise, `not json at all\n${[6, 7].map(chatRow).join("\n")}\n`);
    writeFileSync(files.empty, "");
    writeFileSync(files.unknown, "Dear diary,\nno reader reads this.\n");
    writeFileSync(
      config,
      [
        "inputs:",
        `  - path: ${data}`,
        `  - path: ${CANONICAL}`,
        "    format: canonical-jsonl",
        "decontaminate:",
        "  benchmarks:",
        `    - path: ${CANONICAL}`,
        "input:",
        "  task_bytes: 2000",
        "",
      ].join("\n"),
    );
  }

  it("gives the main thread's plan, through the shared buffer a task request carries", async () => {
    writeInputs();
    const main = await planJob(loadConfig(config));
    // Every kind of decision is there: a JSON array read whole, lines, skipped lines, an empty and an unrecognized file.
    const facts = fileFacts(main.files);
    expect(facts.find((f) => f.path === files.rows)).toMatchObject({ reader: "chat-tool-rows", splittable: false });
    expect(facts.find((f) => f.path === files.noise)?.skippedLines?.length).toBe(1);
    expect(facts.find((f) => f.path === files.empty)?.empty).toBe(true);
    expect(facts.find((f) => f.path === files.unknown)?.unrecognized).toMatch(/./);
    expect(main.inputDecisions.size).toBe(main.files.length + main.benchmarks.length);

    const decisions = readSharedDecisions(shareDecisions(main.inputDecisions));
    samePlan(await planJob(loadConfig(config), { decisions }), main);
  });

  it("reads a file as the main thread planned it, not as it reads now", async () => {
    writeInputs();
    const main = await planJob(loadConfig(config));
    const decisions = readSharedDecisions(shareDecisions(main.inputDecisions));
    // The JSONL of chat rows becomes text documents after the main thread planned.
    writeFileSync(files.lines, `${JSON.stringify({ text: "x".repeat(40) })}\n`);
    const worker = await planJob(loadConfig(config), { decisions });
    samePlan(worker, main);
    expect(worker.files.find((f) => f.path === files.lines)?.reader.name).toBe("chat-tool-rows");
    // Negative control: planning without the decisions sniffs the file again and reads it otherwise.
    const fresh = await planJob(loadConfig(config));
    expect(fresh.files.find((f) => f.path === files.lines)?.reader.name).toBe("text-jsonl");
    expect(fresh.taskPlanSha256).not.toBe(main.taskPlanSha256);
  });

  it("a file the main thread never saw is sniffed (decisions are per file)", async () => {
    writeInputs();
    const main = await planJob(loadConfig(config));
    const decisions = readSharedDecisions(shareDecisions(main.inputDecisions));
    const extra = join(data, "extra.jsonl");
    writeFileSync(extra, `${chatRow(9)}\n`);
    const worker = await planJob(loadConfig(config), { decisions });
    expect(worker.files.find((f) => f.path === extra)?.reader.name).toBe("chat-tool-rows");
    // The task plan tells the two apart: the worker thread refuses to run (task-worker.ts).
    expect(worker.taskPlanSha256).not.toBe(main.taskPlanSha256);
  });

  /**
   * The worker thread's entry point itself, in this thread: with the decisions its plan is the
   * main thread's although a file changed since, so it passes the task plan check and goes on to
   * the stage (here one that does not exist, so it stops right after the check). Without them
   * (negative control) it sniffs the changed file and refuses the task.
   */
  async function workerOutcome(withDecisions: boolean): Promise<string> {
    writeInputs();
    const main = await planJob(loadConfig(config));
    writeFileSync(files.lines, `${JSON.stringify({ text: "x".repeat(40) })}\n`);
    vi.resetModules(); // the worker module keeps its plan: a fresh one per case
    const { default: runTaskInWorker } = await import("../src/pipeline/task-worker.ts");
    const { port1, port2 } = new MessageChannel();
    const decisions = withDecisions ? main.inputDecisions : new Map();
    try {
      await runTaskInWorker({
        loaded: main.loaded,
        taskPlanSha256: main.taskPlanSha256,
        inputDecisions: shareDecisions(decisions),
        stage: "no-such-stage",
        task: main.tasks[0] as JobPlan["tasks"][number],
        progress: port2,
        stop: createStopSignal(),
      });
      return "ran";
    } catch (err) {
      return (err as Error).message;
    } finally {
      port1.close();
    }
  }

  it("the worker entry point plans from the decisions the request carries", async () => {
    expect(await workerOutcome(true)).toMatch(/no job stage named "no-such-stage"/);
    expect(await workerOutcome(false)).toMatch(/input files changed while the job was starting/);
  });
});
