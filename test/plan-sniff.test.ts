import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSniffCorpus, sniffSourceFileCount } from "../bench/sniff.bench.ts";
import { sniffDisplay, sniffProgressLine } from "../src/cli/progress-display.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { type JobPlan, planJob, type SniffProgress } from "../src/pipeline/plan.ts";
import { LAYOUT_HEAD_BYTES, readHead } from "../src/read/json-array.ts";
import { ROOT, tempDir } from "./helpers.ts";

/**
 * Planning sniffs many files at once (issue 38, item 9): the plan must be the one a file-by-file
 * loop gives — every file's reader and layout, the files that stand for others, the task cut and
 * its hash — and the head each sniff sees must be the first bytes of the file, as the stream read
 * gave them before.
 */
const exec = promisify(execFile);

/** Everything planning decides about the inputs (paths relative to the config's folder). */
function fingerprint(plan: JobPlan): string {
  const text = JSON.stringify({
    files: plan.files.map((f) => [
      f.displayPath,
      f.bytes,
      f.reader.name,
      f.detected,
      f.splittable,
      f.layout ?? null,
      f.unrecognized ?? null,
      f.empty ?? null,
      f.skippedLines ?? null,
    ]),
    covered: plan.covered,
    tasks: plan.tasks,
    sha: plan.taskPlanSha256,
  });
  return text.replaceAll(`${dirname(plan.configPath)}/`, "<config>/");
}

/** One copy of the sources and the start of a second, through data/demo/swe (the second input lists that folder again). */
const CORPUS_FILES = sniffSourceFileCount() + 24;

describe("planning many files", () => {
  let dir: string;
  let config: string;
  let written: number;
  let serial: JobPlan;
  beforeAll(async () => {
    dir = tempDir("lwm-plan-sniff-");
    // Two copies of data/demo/ and test/fixtures/handmade/: every format, gzip and zstd files,
    // JSON arrays, terminal-bench runs whose results.json stands for other files, unrecognized files.
    written = buildSniffCorpus(join(dir, "corpus"), CORPUS_FILES);
    config = join(dir, "job.yaml");
    writeFileSync(
      config,
      "inputs:\n  - path: ./corpus\n  - path: ./corpus/copy-001/data-demo/swe\n    domain: swe\noutput:\n  dir: ./out\n",
    );
    serial = await planJob(loadConfig(config), { sniffConcurrency: 1 });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives the plan a file-by-file loop gives, sniffing 32 at a time, and reports each file sniffed", async () => {
    const events: SniffProgress[] = [];
    const concurrent = await planJob(loadConfig(config), { onSniff: (progress) => events.push(progress) });
    expect(concurrent.files.length + concurrent.covered.length).toBeGreaterThanOrEqual(written);
    expect(new Set(concurrent.files.map((f) => f.reader.name)).size).toBeGreaterThan(15);
    expect(concurrent.covered.some((c) => c.kind === "stands-for")).toBe(true);
    expect(fingerprint(concurrent)).toBe(fingerprint(serial));
    // Progress: a 0 of total first, then one more file at a time up to the total.
    // The two inputs' files (the second lists one folder of the first again), known before the first sniff.
    const listed = written + readdirSync(join(dir, "corpus/copy-001/data-demo/swe")).length;
    expect(events[0]).toEqual({ key: "inputs", sniffed: 0, total: listed });
    for (const [i, event] of events.entries()) {
      if (i === 0) continue;
      expect(event.sniffed).toBe((events[i - 1] as SniffProgress).sniffed + 1);
      expect(event.sniffed).toBeLessThanOrEqual(event.total);
    }
    const last = events.at(-1) as SniffProgress;
    expect(last.sniffed).toBe(last.total);
    // Every file of both inputs, and the files read instead of a run's results.json.
    // Each file sniffed is an input file, one that stands for others, or one another file's record reads.
    expect(last.total).toBe(concurrent.files.length + concurrent.covered.length);
    expect(last.total).toBeGreaterThanOrEqual(listed);
    expect(events.length).toBe(last.total + 1);
  }, 120_000);

  it("tells a changed file apart (negative control: the comparison sees what detection decides)", async () => {
    const copy = tempDir("lwm-plan-sniff-changed-");
    try {
      buildSniffCorpus(join(copy, "corpus"), CORPUS_FILES);
      writeFileSync(join(copy, "job.yaml"), readFileSync(config, "utf8"));
      const same = await planJob(loadConfig(join(copy, "job.yaml")));
      expect(fingerprint(same)).toBe(fingerprint(serial));
      // One file that a reader claimed becomes text no reader knows (same size): another plan.
      const target = join(copy, "corpus/copy-000/data-demo/swe", "swe-agent__stats-median.traj");
      const size = readFileSync(target).length;
      writeFileSync(target, "x".repeat(size));
      const changed = await planJob(loadConfig(join(copy, "job.yaml")));
      expect(fingerprint(changed)).not.toBe(fingerprint(serial));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 120_000);

  it("stops on the first file in input order that a benchmark input cannot place, as one at a time does", async () => {
    const bench = join(dir, "bench");
    mkdirSync(bench, { recursive: true });
    // Many recognizable files, then two no reader knows: the later one may be sniffed first.
    for (let i = 0; i < 40; i++)
      writeFileSync(join(bench, `a-${String(i).padStart(2, "0")}.jsonl`), `${JSON.stringify({ text: `benchmark item ${i}` })}\n`);
    writeFileSync(join(bench, "b-first.txt"), "plain words no reader knows\n");
    writeFileSync(join(bench, "c-second.txt"), "more plain words\n");
    const job = join(dir, "bench.yaml");
    writeFileSync(
      job,
      `inputs:\n  - path: ./corpus/copy-000/data-demo/swe\ndecontaminate:\n  benchmarks:\n    - path: ./bench\noutput:\n  dir: ./out\n`,
    );
    for (const sniffConcurrency of [1, 32])
      await expect(planJob(loadConfig(job), { sniffConcurrency })).rejects.toThrow(/b-first\.txt: cannot detect the input format/);
  }, 120_000);
});

describe("readHead", () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir("lwm-read-head-");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The reference: the first `bytes` bytes of the (decompressed) content, decoded as UTF-8. */
  const reference = (content: Buffer, bytes = LAYOUT_HEAD_BYTES) =>
    new TextDecoder("utf-8", { fatal: false }).decode(content.subarray(0, bytes));

  const contents: [string, Buffer][] = [
    ["empty", Buffer.alloc(0)],
    ["one byte", Buffer.from("{")],
    ["small JSONL", Buffer.from('{"text": "a"}\n{"text": "b"}\n')],
    // A three-byte character cut by the head's end: the same replacement character either way.
    ["multi-byte past the head", Buffer.from("€".repeat(LAYOUT_HEAD_BYTES))],
    ["exactly the head", Buffer.alloc(LAYOUT_HEAD_BYTES, "a")],
    ["a byte over", Buffer.alloc(LAYOUT_HEAD_BYTES + 1, "b")],
    ["invalid UTF-8", Buffer.from([0xff, 0xfe, 0x41, 0xc3])],
  ];
  it.each(contents)("reads %s as its first bytes", async (name, content) => {
    const path = join(dir, name.replaceAll(" ", "-"));
    writeFileSync(path, content);
    expect(await readHead(path)).toBe(reference(content));
    expect(await readHead(path, 5)).toBe(reference(content, 5));
  });

  it("reads a gzip file's decompressed start", async () => {
    const content = Buffer.from(`${'{"text": "zipped"}\n'.repeat(10_000)}`);
    const path = join(dir, "zipped.jsonl.gz");
    writeFileSync(path, gzipSync(content));
    expect(await readHead(path)).toBe(reference(content));
  });

  it("fails on a missing file as before", async () => {
    await expect(readHead(join(dir, "missing"))).rejects.toThrow(/ENOENT/);
  });
});

describe("the sniffing line", () => {
  const progress = (sniffed: number, total: number, key = "inputs"): SniffProgress => ({ key, sniffed, total });

  it("reads like files sniffed of total", () => {
    expect(sniffProgressLine(progress(1234, 5600))).toBe("sniffing formats 1,234/5,600 files");
    expect(sniffProgressLine(progress(2, 3, "decontaminate.benchmarks"))).toBe("sniffing decontaminate.benchmarks formats 2/3 files");
  });

  it("shows nothing with --progress none, nor on a pipe", () => {
    const tty = { isTTY: true, write: () => true };
    const pipe = { isTTY: false, write: () => true };
    expect(sniffDisplay("none", tty)).toBeUndefined();
    expect(sniffDisplay("auto", pipe)).toBeUndefined();
    expect(sniffDisplay("auto", tty)).toBeDefined();
    expect(sniffDisplay("bar", pipe)).toBeDefined();
  });

  it("with --progress json, writes sniff events: the first, one every 10 s, and the last", () => {
    const lines: string[] = [];
    let clock = 1_000;
    const display = sniffDisplay("json", { isTTY: false, write: (text: string) => lines.push(text) }, () => clock);
    if (!display) throw new Error("no json display");
    display.onSniff(progress(0, 5600));
    for (let i = 1; i < 5600; i++) {
      clock += 5; // 28 s in all
      display.onSniff(progress(i, 5600));
    }
    display.onSniff(progress(5600, 5600));
    display.stop();
    const events = lines.map((line) => JSON.parse(line) as { event: string; sniffed: number; total: number; inputs: string });
    expect(events.map((e) => e.sniffed)).toEqual([0, 2000, 4000, 5600]);
    for (const e of events) expect(e).toMatchObject({ event: "sniff", total: 5600, inputs: "inputs" });
    for (const line of lines) expect(line.endsWith("\n")).toBe(true);
  });

  it("redraws at most 10 times a second, draws the total, and clears the line at the end", () => {
    const writes: string[] = [];
    let clock = 1_000;
    const display = sniffDisplay("auto", { isTTY: true, write: (text: string) => writes.push(text) }, () => clock);
    if (!display) throw new Error("no display on a terminal");
    // Under 100 ms: nothing drawn (a small plan never flickers).
    display.onSniff(progress(0, 5600));
    clock += 50;
    display.onSniff(progress(1, 5600));
    expect(writes).toEqual([]);
    // One file per millisecond for 2 s: about 20 draws, not 2,000.
    for (let i = 2; i < 2000; i++) {
      clock += 1;
      display.onSniff(progress(i, 5600));
    }
    expect(writes.length).toBeGreaterThanOrEqual(18);
    expect(writes.length).toBeLessThanOrEqual(21);
    // The first draw: 100 ms after the start (file 51 at 1,100 ms).
    expect(writes[0]).toBe("\r\x1b[2Ksniffing formats 51/5,600 files");
    clock += 1;
    display.onSniff(progress(5600, 5600));
    expect(writes.at(-1)).toBe("\r\x1b[2Ksniffing formats 5,600/5,600 files");
    display.stop();
    expect(writes.at(-1)).toBe("\r\x1b[2K");
  });
});

describe("the CLI", () => {
  it("validate on a pipe prints no sniffing line", async () => {
    const { stdout, stderr } = await exec(process.execPath, [join(ROOT, "bin/lwm-data.js"), "validate", join(ROOT, "configs/demo.yaml")], {
      cwd: ROOT,
    });
    expect(stdout).toContain("is valid");
    expect(stderr).not.toContain("sniffing");
  }, 120_000);
});
