/**
 * The timing log bench/scaling.bench.ts reads (LWM_BENCH_REPORT, src/pipeline/timing-log.ts) and
 * its lane analysis (bench/scaling/lanes.ts): every task is logged once, by the thread that ran
 * it, the parts of a lane's time add up to its wall time, and the log changes no output.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { LANE_PARTS, type LogLine, parseLog, summarizeLanes, type TaskLine } from "../bench/scaling/lanes.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { expectSameBytes, products, scaleJob } from "./scale-helpers.ts";

const exec = promisify(execFile);
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");

const task = (pid: number, thread: number, index: number, start: number, end: number, idle: number, cpu: number): TaskLine => ({
  pid,
  thread,
  event: "task",
  stage: "records",
  task: index,
  start,
  end,
  idle_ms: idle,
  active_ms: end - start - idle,
  cpu_ms: cpu,
});

describe("lane analysis", () => {
  it("splits each lane's time from start to exit into parts that add up to it", () => {
    // Two lanes over 0–1000 ms: A runs 100–400 and 450–700, B runs 300–900; the run ends at 1000.
    const lines: LogLine[] = [
      task(1, 0, 0, 100, 400, 50, 200),
      task(1, 0, 2, 450, 700, 0, 250),
      task(1, 1, 1, 300, 900, 100, 300),
      { pid: 1, thread: 0, event: "stage", stage: "records", workers: 2, process_start: 0, start: 90, end: 905 },
    ];
    const summary = summarizeLanes(lines, 0, 1000);
    expect(summary.lanes).toBe(2);
    expect(summary.tasks).toBe(3);
    expect(summary.tasks_per_lane).toEqual([1, 2]);
    expect(summary.lane_s).toBeCloseTo(2);
    const p = summary.parts;
    expect(p.startup).toBeCloseTo(0.4); // 100 + 300 ms
    expect(p.io_wait).toBeCloseTo(0.15);
    expect(p.on_cpu).toBeCloseTo(0.75);
    expect(p.no_core).toBeCloseTo(0.25); // A: 300-50-200 + 250-0-250; B: 600-100-300
    expect(p.between).toBeCloseTo(0.05);
    expect(p.others).toBeCloseTo(0.2); // A ends at 700, the last task at 900
    expect(p.finish).toBeCloseTo(0.2); // 900 → 1000, both lanes
    expect(LANE_PARTS.reduce((sum, part) => sum + p[part], 0)).toBeCloseTo(summary.lane_s);
  });

  it("a run with no task logged has no lanes", () => {
    expect(summarizeLanes([], 0, 1000)).toMatchObject({ lanes: 0, tasks: 0, lane_s: 0 });
  });
});

describe("LWM_BENCH_REPORT", () => {
  it("logs every task once, from the thread that ran it, and changes no output", async () => {
    const { config, dir } = scaleJob();
    const plain = join(dir, "out-plain");
    const logged = join(dir, "out-logged");
    const report = join(tempDir(), "timing.jsonl");
    await exec(NODE, [CLI, "run", config, "--output", plain, "--workers", "2", "--progress", "none"], { cwd: ROOT });
    await exec(NODE, [CLI, "run", config, "--output", logged, "--workers", "2", "--progress", "none"], {
      cwd: ROOT,
      env: { ...process.env, LWM_BENCH_REPORT: report },
    });
    expectSameBytes(products(logged), products(plain));

    const lines = parseLog(readFileSync(report, "utf8"));
    const tasks = lines.filter((line): line is TaskLine => line.event === "task");
    const manifest = JSON.parse(readFileSync(join(logged, "manifest.json"), "utf8")) as { tasks?: { count?: number } };
    const count = manifest.tasks?.count ?? tasks.length;
    expect(tasks.map((t) => t.task).sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(new Set(tasks.map((t) => t.pid)).size).toBe(1);
    // The main thread and one pool thread, both in use on a job of 9+ tasks.
    expect(new Set(tasks.map((t) => t.thread)).size).toBe(2);
    for (const t of tasks) {
      expect(t.end).toBeGreaterThanOrEqual(t.start);
      expect(t.idle_ms + t.active_ms).toBeLessThanOrEqual(t.end - t.start + 1);
      expect(t.cpu_ms).toBeGreaterThan(0);
    }
    const stages = lines.filter((line) => line.event === "stage");
    expect(stages).toHaveLength(1);
    expect(stages[0]).toMatchObject({ stage: "records", workers: 2 });
  });
});
