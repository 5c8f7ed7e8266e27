/**
 * Issue 21, points 1–3: format detection votes over the first lines (a damaged first record or a
 * stray log line no longer hides a file's format), an empty or unrecognizable file in a glob never
 * stops a job (0 records / one quarantine entry), and `--format` / `--domain` on the command line.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync, zstdDecompressSync } from "node:zlib";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { detectFormat, detectFromHead, PROBE_LINES, READERS, readHead } from "../src/read/registry.ts";
import { searchApiReader } from "../src/read/search-api.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { THIRD_PARTY_DIR } from "./third-party/support.ts";

const run = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

/** The demo's canonical SWE records (zstd), as JSONL lines. */
const SWE_LINES = zstdDecompressSync(readFileSync(join(ROOT, "data/demo/swe/swe.jsonl.zst")))
  .toString("utf8")
  .split("\n")
  .filter((line) => line.trim() !== "");
const MCP_LINES = readFileSync(join(ROOT, "data/demo/mcp/everything-agentworldbench.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "");

const lines = (...text: string[]) => `${text.join("\n")}\n`;

describe("format detection votes over the first lines", () => {
  it("detects a file whose first record was cut by a truncated write, and says which line it skipped", () => {
    const head = lines((SWE_LINES[0] as string).slice(0, 120), ...SWE_LINES.slice(1));
    // The old rule (first line only) finds nothing: the line is not JSON.
    expect(READERS.find((reader) => reader.sniff(head, "x.jsonl"))).toBeUndefined();
    const detection = detectFromHead(head, "x.jsonl");
    expect(detection.kind).toBe("format");
    if (detection.kind !== "format") return;
    expect(detection.reader.name).toBe("canonical-jsonl");
    expect(detection.skipped).toEqual([{ line: 1 }]);
  });

  it("skips stray log lines before the records (line numbers count blank lines too)", () => {
    const head = lines("2026-01-15 12:00:01 INFO starting export", "", "WARNING: disk 91% full", ...MCP_LINES);
    const detection = detectFromHead(head, "rows.jsonl");
    expect(detection.kind === "format" && detection.reader.name).toBe("agentworldbench-jsonl");
    expect(detection.kind === "format" && detection.skipped.map((s) => s.line)).toEqual([1, 3]);
  });

  it("a line that looks like another format loses to two lines that agree; the vote is deterministic", () => {
    // An asciicast header line first (one vote), then canonical records (two votes win).
    const header = JSON.stringify({ version: 2, width: 80, height: 24 });
    const head = lines(header, ...SWE_LINES);
    const first = detectFromHead(head, "mixed.jsonl");
    expect(first.kind === "format" && first.reader.name).toBe("canonical-jsonl");
    expect(first.kind === "format" && first.skipped).toEqual([{ line: 1, format: "asciicast" }]);
    for (let i = 0; i < 5; i++) expect(detectFromHead(head, "mixed.jsonl")).toEqual(first);
  });

  it("a recognized first line that is not a JSON value of its own decides alone (a document's start)", async () => {
    const traj = join(ROOT, "data/demo/swe/swe-agent__stats-median.traj");
    const detection = detectFromHead(await readHead(traj), traj);
    expect(detection.kind === "format" && detection.reader.name).toBe("swe-agent-traj");
    expect(detection.kind === "format" && detection.lines.length).toBe(1);
  });

  it("gives up after PROBE_LINES lines of nothing recognizable, naming what it saw", () => {
    const head = lines(...Array.from({ length: PROBE_LINES + 3 }, (_, i) => `log line ${i}`), ...SWE_LINES);
    const detection = detectFromHead(head, "log.txt");
    expect(detection.kind).toBe("unrecognized");
    if (detection.kind !== "unrecognized") return;
    expect(detection.lines).toHaveLength(PROBE_LINES);
    expect(detection.reason).toContain(`first ${PROBE_LINES} non-empty line(s)`);
    expect(detection.reason).toContain('the first line is text starting "log line 0"');
    expect(detection.reason).toContain("canonical-jsonl");
    expect(detectFromHead(lines('{"hello": "world"}'), "z.json")).toMatchObject({
      kind: "unrecognized",
      reason: expect.stringContaining("a JSON object with keys hello"),
    });
    expect(detectFromHead("\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u000e\u000f\u0010", "b.bin")).toMatchObject({
      kind: "unrecognized",
      reason: expect.stringContaining("binary data"),
      excerpt: "",
    });
  });

  it("empty and blank files, plain or compressed, are empty", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "empty.jsonl"), "");
    writeFileSync(join(dir, "blank.jsonl"), "\n  \n\n");
    writeFileSync(join(dir, "empty.jsonl.gz"), gzipSync(Buffer.alloc(0)));
    for (const name of ["empty.jsonl", "blank.jsonl", "empty.jsonl.gz"])
      expect((await detectFormat(join(dir, name))).kind, name).toBe("empty");
  });

  it("gives every recorded, hand-made and third-party fixture the format its first line gave", async () => {
    // The reference is the rule before voting: the first reader whose sniff accepts the whole head.
    const files = globSync(["data/demo/**/*", "test/fixtures/**/*", `${THIRD_PARTY_DIR}/**/*`], {
      cwd: ROOT,
      absolute: true,
      onlyFiles: true,
      ignore: ["**/*.md", "**/fuzz-crashers/**", "**/golden/**"],
    });
    expect(files.length).toBeGreaterThan(60);
    let compared = 0;
    for (const file of files) {
      const head = await readHead(file);
      const before = READERS.find((reader) => reader.sniff(head, file));
      if (!before) continue;
      const now = detectFromHead(head, file);
      expect(now.kind === "format" ? now.reader.name : now.kind, file).toBe(before.name);
      compared += 1;
    }
    expect(compared).toBeGreaterThan(50);
  });
});

describe("a search trace or response JSONL whose first line is damaged", () => {
  it("is read line by line, the damaged line quarantined", async () => {
    const dir = tempDir();
    const brave = JSON.parse(readFileSync(join(ROOT, "data/demo/search/brave-web-http-304.json"), "utf8"));
    const path = join(dir, "responses.jsonl");
    writeFileSync(path, lines(JSON.stringify(brave).slice(0, 90), JSON.stringify(brave), JSON.stringify({ ...brave, type: "news" })));
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("search-api");
    const items = await collect(searchApiReader.read(path, { maxLineBytes: 1 << 20 }));
    expect(items.map((item) => item.kind)).toEqual(["quarantine", "trajectory", "trajectory"]);
    expect(items[0]?.kind === "quarantine" && items[0].entry.source.line).toBe(1);
  });
});

/** A folder of inputs: two readable files (one with a damaged first line), an empty one, an unreadable one. */
function carelessInputs(): { dir: string; config: string } {
  const dir = tempDir();
  const input = join(dir, "in");
  mkdirSync(input);
  writeFileSync(join(input, "a-good.jsonl"), lines(SWE_LINES[0] as string));
  writeFileSync(join(input, "b-damaged.jsonl"), lines('{"id": "cut", "domain": "swe", "tur', ...SWE_LINES.slice(1, 3)));
  writeFileSync(join(input, "c-empty.jsonl"), "");
  writeFileSync(join(input, "d-notes.txt"), lines("meeting notes", "- nothing to see here"));
  return { dir, config: writeConfig("inputs:\n  - path: in/*\noutput:\n  dir: out\n  num_buckets: 1\n", dir) };
}

describe("an empty or unrecognizable file in a glob", () => {
  it("planJob gives it a task: the empty file 0 records, the unrecognized one its quarantine reader", async () => {
    const { config } = carelessInputs();
    const plan = await planJob(loadConfig(config));
    expect(plan.files.map((f) => [f.displayPath, f.reader.name, f.empty ?? false, f.unrecognized !== undefined])).toEqual([
      ["in/a-good.jsonl", "canonical-jsonl", false, false],
      ["in/b-damaged.jsonl", "canonical-jsonl", false, false],
      ["in/c-empty.jsonl", "empty", true, false],
      ["in/d-notes.txt", "unrecognized", false, true],
    ]);
    expect(plan.files[1]?.skippedLines).toEqual([{ line: 1 }]);
    expect(plan.tasks.flatMap((t) => t.pieces.map((p) => p.file)).sort()).toEqual([0, 1, 2, 3]);
  });

  it("run goes on, warns, and the manifest counts the file as one record quarantined at stage detect", async () => {
    const { dir, config } = carelessInputs();
    const { stdout } = await run(process.execPath, [CLI, "run", config, "--progress", "none"], { cwd: dir, encoding: "utf8" });
    expect(stdout).toMatch(/warning {7}1 input file\(s\) no reader recognized were quarantined whole, one entry each .*in\/d-notes\.txt/);
    expect(stdout).toMatch(/empty files {3}1 \(0 records\): in\/c-empty\.jsonl/);
    const manifest = JSON.parse(readFileSync(join(dir, "out/manifest.json"), "utf8"));
    // 1 + 2 lines read, + 1 for the unrecognized file; the damaged line and the file are quarantined.
    expect(manifest.counts).toMatchObject({ records_in: 4, samples_out: 2, quarantined: 2, quarantined_by_stage: { detect: 1, read: 1 } });
    expect(manifest.counts.records_in).toBe(manifest.counts.samples_out + manifest.counts.quarantined + manifest.counts.filtered);
    expect(manifest.inputs.map((i: { path: string; format: string }) => [i.path, i.format])).toEqual([
      ["in/a-good.jsonl", "canonical-jsonl"],
      ["in/b-damaged.jsonl", "canonical-jsonl"],
      ["in/c-empty.jsonl", "empty"],
      ["in/d-notes.txt", "unrecognized"],
    ]);
    const entries = readFileSync(join(dir, "out/quarantine/task-00000.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(entries).toHaveLength(2);
    const [damaged, notes] = entries;
    expect(damaged).toMatchObject({ stage: "read", source: { uri: join(dir, "in/b-damaged.jsonl"), line: 1, format: "canonical-jsonl" } });
    expect(notes).toMatchObject({ stage: "detect", source: { uri: join(dir, "in/d-notes.txt"), format: "unrecognized" } });
    expect(notes.reason).toMatch(
      /^no reader recognizes the content: every format's sniff said no .* \(lines 1, 2\) \[formats tried in order: agentworldbench-jsonl, /,
    );
    expect(notes.reason).toContain('the first line is text starting "meeting notes"');
    expect(notes.excerpt).toBe("meeting notes\n- nothing to see here\n");
    // The output checks out against its manifest.
    const verify = await run(process.execPath, [CLI, "verify", join(dir, "out")], { encoding: "utf8" });
    expect(verify.stdout).toContain("OK");
  });

  it("validate lists such files before anything else", async () => {
    const { dir, config } = carelessInputs();
    const { stdout } = await run(process.execPath, [CLI, "validate", config], { cwd: dir, encoding: "utf8" });
    const out = stdout.split("\n");
    expect(out[1]).toMatch(
      /^warning {6}1 input file\(s\) no reader recognizes: `run` quarantines each whole, as one entry \(stage detect\), and goes on:$/,
    );
    expect(out[2]).toMatch(/^ {2}in\/d-notes\.txt: no reader recognizes the content/);
    expect(out[3]).toBe("note         1 empty input file(s), 0 records: in/c-empty.jsonl");
    expect(stdout).toMatch(
      /\n {2}in\/b-damaged\.jsonl {2}[\d.]+ KiB {2}format=canonical-jsonl \(detected; line 1 looked like no format: quarantined when read\) domain=\(from each record's domain\)\n/,
    );
    expect(stdout).toMatch(/\n {2}in\/d-notes\.txt {2}36 B {2}unrecognized: quarantined whole, as one entry \(stage detect\)\n/);
  });

  it("a benchmark file still has to be readable: an empty one stops the job, naming it", async () => {
    const { dir } = carelessInputs();
    const config = writeConfig(`inputs:\n  - path: in/a-good.jsonl\ndecontaminate:\n  benchmarks:\n    - path: in/c-empty.jsonl\n`, dir);
    await expect(planJob(loadConfig(config))).rejects.toThrow(/c-empty\.jsonl: cannot detect the input format: the file is empty/);
  });
});

describe("--format and --domain", () => {
  /** Canonical records without a domain field: no reader claims them by content. */
  function domainless(): { dir: string; config: string } {
    const dir = tempDir();
    const records = SWE_LINES.slice(0, 2).map((line) => {
      const { domain: _domain, ...rest } = JSON.parse(line);
      return JSON.stringify(rest);
    });
    writeFileSync(join(dir, "records.txt"), lines(...records));
    return { dir, config: writeConfig("inputs:\n  - path: nothing-here/*\noutput:\n  dir: out\n  num_buckets: 1\n", dir) };
  }

  it("apply to the --input globs as inputs[].format / inputs[].domain do, and to the config's inputs without --input", () => {
    const { dir, config } = domainless();
    const loaded = loadConfig(config, { inputs: [join(dir, "records.txt")], format: "canonical-jsonl", domain: "mcp" });
    expect(loaded.config.inputs).toEqual([{ path: join(dir, "records.txt"), format: "canonical-jsonl", domain: "mcp" }]);
    // Worker threads and ranks load the config again from these.
    expect(loaded.overrides).toMatchObject({ format: "canonical-jsonl", domain: "mcp" });
    const whole = loadConfig(config, { domain: "terminal" });
    expect(whole.config.inputs).toEqual([{ path: join(dir, "nothing-here/*"), format: "auto", domain: "terminal" }]);
    expect(() => loadConfig(config, { domain: "chess" })).toThrow(/--domain: expected one of mcp, search, terminal/);
  });

  it("run reads the files with the named reader and domain; a file auto detection would quarantine", async () => {
    const { dir, config } = domainless();
    const auto = await planJob(loadConfig(config, { inputs: [join(dir, "records.txt")] }));
    expect(auto.files[0]?.reader.name).toBe("unrecognized");
    const { stdout } = await run(
      process.execPath,
      [CLI, "run", config, "--input", "records.txt", "--format", "canonical-jsonl", "--domain", "mcp", "--progress", "none"],
      { cwd: dir, encoding: "utf8" },
    );
    expect(stdout).toContain("samples out   2");
    const manifest = JSON.parse(readFileSync(join(dir, "out/manifest.json"), "utf8"));
    expect(Object.keys(manifest.domains)).toEqual(["mcp"]);
    expect(manifest.inputs).toEqual([{ path: "records.txt", format: "canonical-jsonl", detected: false, bytes: expect.any(Number) }]);
  });

  it("validate and plan show them; unknown names are refused with the known ones", async () => {
    const { dir, config } = domainless();
    const validate = await run(
      process.execPath,
      [CLI, "validate", config, "-i", "records.txt", "--format", "canonical-jsonl", "--domain", "swe"],
      {
        cwd: dir,
        encoding: "utf8",
      },
    );
    expect(validate.stdout).toMatch(/records\.txt {2}[\d.]+ (B|KiB) {2}format=canonical-jsonl domain=swe\n/);
    const plan = await run(process.execPath, [CLI, "plan", config, "-i", "records.txt", "--format", "canonical-jsonl", "--json"], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(JSON.parse(plan.stdout).tasks[0].pieces).toEqual([{ path: "records.txt" }]);
    await expect(run(process.execPath, [CLI, "validate", config, "--format", "nope"], { cwd: dir })).rejects.toMatchObject({
      stderr: expect.stringContaining('--format: unknown input format "nope"; known formats: auto, agentworldbench-jsonl'),
    });
    await expect(run(process.execPath, [CLI, "validate", config, "--domain", "chess"], { cwd: dir })).rejects.toMatchObject({
      stderr: expect.stringContaining("argument 'chess' is invalid. Allowed choices are mcp, search, terminal, swe, android, web, os"),
    });
  });

  it("launch passes them on to every rank", async () => {
    const { dir, config } = domainless();
    await run(
      process.execPath,
      [CLI, "launch", "slurm", config, "-i", "records.txt", "--format", "canonical-jsonl", "--domain", "mcp", "--world-size", "2"],
      { cwd: dir, encoding: "utf8" },
    );
    const script = readFileSync(join(dir, "out/launch/slurm-array.sbatch"), "utf8");
    expect(script).toContain(`--input ${join(dir, "records.txt")} --format canonical-jsonl --domain mcp`);
    await run(
      process.execPath,
      [CLI, "launch", "k8s", config, "-i", "records.txt", "--domain", "mcp", "--image", "lwm:1", "--host-path", dir, "--overwrite"],
      { cwd: dir, encoding: "utf8" },
    );
    const job = readFileSync(join(dir, "out/launch/k8s-job.yaml"), "utf8");
    expect(job).toMatch(/- --domain\n\s+- mcp\n/);
    expect(job).not.toContain("--format");
  });
});

describe("how inputs are read is part of the job", () => {
  it("rerunning into the same output with another --domain (or --format) is another job: refused without --overwrite", async () => {
    const dir = tempDir();
    const input = join(dir, "no-domain.jsonl");
    writeFileSync(input, `${JSON.stringify({ id: "a", turns: [{ action: "ls", observation: "README.md  src" }] })}\n`);
    const config = writeConfig(`inputs:\n  - path: ${input}\n`, dir);
    const out = join(dir, "out");
    const runAs = (domain: string) =>
      run(process.execPath, [
        CLI,
        "run",
        config,
        "-i",
        input,
        "--format",
        "canonical-jsonl",
        "--domain",
        domain,
        "-o",
        out,
        "--progress",
        "none",
      ]);
    await runAs("terminal");
    const refused = await runAs("swe").catch((err: { code: number; stderr: string }) => err);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/holds the output of a different job/) });
    // The same reading again is the same job: it resumes (nothing to redo).
    expect((await runAs("terminal")).stdout).toMatch(/ran 0, already done 1/);
  });
});
