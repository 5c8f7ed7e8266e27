import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { canonicalJsonlReader } from "../src/read/canonical-jsonl.ts";
import { arrayElementsInHead, describeArray, layoutOfHead } from "../src/read/json-array.ts";
import { osA11yReader } from "../src/read/os-a11y.ts";
import { itemSource, type Reader, type ReadItem } from "../src/read/reader.ts";
import { detectFormat, detectFromHead } from "../src/read/registry.ts";
import { sweSmithReader } from "../src/read/swe-smith.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };

function rowsOf(file: string): unknown[] {
  return readFileSync(join(ROOT, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** A JSONL file written as one JSON array, pretty-printed (indent 2) as Hub exports are. */
function asArray(file: string, dir: string, name: string, indent = 2): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(rowsOf(file), null, indent));
  return path;
}

const strip = (items: ReadItem[]) =>
  items.map((item) => {
    if (item.kind !== "trajectory") return item.kind;
    const { source: _source, ...rest } = item.trajectory;
    return rest;
  });

// Row formats that read JSON lines: the array of the same rows gives the same trajectories.
const ROW_FORMATS: [string, Reader, string][] = [
  ["swe-smith", sweSmithReader, "data/demo/swe/swe-smith__ft.jsonl"],
  ["os-a11y", osA11yReader, "data/demo/os/os-trajectories.jsonl"],
];

describe("JSON arrays of rows (issue 34)", () => {
  const dir = tempDir("lwm-json-array-");

  for (const [name, reader, file] of ROW_FORMATS) {
    it(`${name}: a pretty-printed array of its rows is detected by its elements and read element by element`, async () => {
      const path = asArray(file, dir, `${name}.json`);
      const detection = await detectFormat(path);
      expect(detection).toMatchObject({ kind: "format", layout: "json-array" });
      expect(detection.kind === "format" && detection.reader.name).toBe(name);
      const fromArray = await collect(reader.read(path, OPTIONS));
      const fromLines = await collect(reader.read(join(ROOT, file), OPTIONS));
      expect(fromArray.length).toBe(fromLines.length);
      expect(fromArray.every((item) => item.kind === "trajectory")).toBe(true);
      expect(strip(fromArray)).toEqual(strip(fromLines));
    });
  }

  it("names each element's source by the file and its index, and a compact one-line array too", async () => {
    const path = asArray("data/demo/swe/swe-smith__ft.jsonl", dir, "one-line.json", 0);
    expect(readFileSync(path, "utf8")).not.toContain("\n");
    const items = await collect(sweSmithReader.read(path, OPTIONS));
    expect(items.map(itemSource)).toEqual([
      { uri: path, row: 0, offset: 0, format: "swe-smith" },
      { uri: path, row: 1, offset: 0, format: "swe-smith" },
    ]);
  });

  it("reads a gzip-compressed array", async () => {
    const plain = asArray("data/demo/os/os-trajectories.jsonl", dir, "os-plain.json");
    const path = join(dir, "os.json.gz");
    writeFileSync(path, gzipSync(readFileSync(plain)));
    expect((await detectFormat(path)).kind === "format").toBe(true);
    expect(strip(await collect(osA11yReader.read(path, OPTIONS)))).toEqual(strip(await collect(osA11yReader.read(plain, OPTIONS))));
  });

  it("detects an array whose first element is longer than the 64 KiB head (streamed with stream-json)", async () => {
    const [row] = rowsOf("data/demo/swe/swe-smith__ft.jsonl") as Record<string, unknown>[];
    const big = { ...row, padding: "x".repeat(100_000) };
    const path = join(dir, "big-first.json");
    writeFileSync(path, JSON.stringify([big, row], null, 2));
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("swe-smith");
    const items = await collect(sweSmithReader.read(path, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory"]);
    // Both rows name the same instance: the second is another attempt, under an id of its own.
    const [first, second] = items.map((item) => (item as { trajectory: Trajectory }).trajectory);
    expect(first?.id).toBe(row?.instance_id);
    expect(second?.id).toMatch(new RegExp(`^${String(row?.instance_id)}-[0-9a-f]{16}$`));
    expect([first?.meta?.task_id, second?.meta?.task_id]).toEqual([row?.instance_id, row?.instance_id]);
  });

  it("quarantines a broken array after the elements before the break, and a wrong element type once", async () => {
    const rows = rowsOf("data/demo/swe/swe-smith__ft.jsonl");
    const path = join(dir, "broken.json");
    writeFileSync(path, `[${JSON.stringify(rows[0])}, 42, ${JSON.stringify(rows[1]).slice(0, 200)}`);
    const items = await collect(sweSmithReader.read(path, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "quarantine", "quarantine"]);
    const [, wrong, broken] = items;
    expect(wrong?.kind === "quarantine" && wrong.entry).toMatchObject({
      source: { row: 1 },
      reason: "expected a JSON object, got a number",
    });
    expect(broken?.kind === "quarantine" && broken.entry.reason).toMatch(/^the JSON array breaks after element 1: invalid JSON/);
  });

  it("quarantines an element over input.max_line_bytes (as compact JSON) and goes on", async () => {
    const path = asArray("data/demo/swe/swe-smith__ft.jsonl", dir, "limit.json");
    const sizes = rowsOf("data/demo/swe/swe-smith__ft.jsonl").map((row) => JSON.stringify(row).length);
    const limit = Math.min(...sizes) + 1;
    const items = await collect(sweSmithReader.read(path, { maxLineBytes: limit }));
    expect(items.length).toBe(2);
    const over = items.filter((item) => item.kind === "quarantine");
    expect(over.length).toBe(sizes.filter((size) => size > limit).length);
    for (const item of over)
      expect(item.kind === "quarantine" && item.entry.reason).toMatch(/^element \d is \d+ bytes as one JSON line, over the/);
  });

  it("reads a pretty-printed single JSON document as one record", async () => {
    const [row] = rowsOf("data/demo/swe/swe-smith__ft.jsonl");
    const path = join(dir, "single.json");
    writeFileSync(path, JSON.stringify(row, null, 2));
    expect(layoutOfHead(readFileSync(path, "utf8"))).toEqual({ kind: "document" });
    const items = await collect(sweSmithReader.read(path, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["trajectory"]);
    expect(itemSource(items[0] as ReadItem)).toEqual({ uri: path, line: 1, offset: 0, format: "swe-smith" });
    const canonical = join(dir, "canonical.json");
    const trajectory = { id: "t1", domain: "terminal", turns: [{ action: "ls", observation: "a\nb" }] };
    writeFileSync(canonical, JSON.stringify(trajectory, null, 2));
    const [item] = await collect(canonicalJsonlReader.read(canonical, OPTIONS));
    expect(item?.kind === "trajectory" && (item.trajectory as Trajectory).turns).toEqual(trajectory.turns);
  });

  it("names what an unrecognized array is: its length and its elements' keys", () => {
    const head = JSON.stringify([{ a: 1, b: 2 }, { a: 3, c: 4 }, { a: 5 }, { b: 1 }, { z: 0 }], null, 2);
    const detection = detectFromHead(head, "x.json");
    expect(detection.kind).toBe("unrecognized");
    expect(detection.kind === "unrecognized" && detection.reason).toContain(
      "the file is a JSON array of 5 objects whose keys are a, b, c, z",
    );
    expect(describeArray(arrayElementsInHead("[1, 2, 3]"))).toBe("a JSON array of 3 numbers");
    expect(describeArray(arrayElementsInHead("[]"))).toBe("an empty JSON array");
    expect(describeArray(arrayElementsInHead('[{"a": 1}, {"b": "x, ]'))).toBe(
      "a JSON array (more than 64 KiB of elements; the first 1 are objects) whose keys are a",
    );
  });

  it("refuses, with the reason, an array of rows whose reader reads only JSONL (search-api)", async () => {
    const path = asArray("data/demo/search/agent-trace.jsonl", dir, "search.json");
    const detection = await detectFormat(path);
    expect(detection.kind).toBe("unrecognized");
    expect(detection.kind === "unrecognized" && detection.reason).toMatch(
      /^the file is a JSON array of 12 objects whose keys are .*: its elements look like search-api records, but the search-api reader does not read JSON arrays/,
    );
  });

  it("leaves the arrays other readers read whole to them (chat rows, mini-swe-agent messages, OpenHands events)", async () => {
    const cases: [string, string][] = [
      ["test/fixtures/handmade/chat-tool-rows/toucan-rows.json", "chat-tool-rows"],
      ["data/demo/swe/openhands__stats-median.json", "openhands"],
    ];
    for (const [file, format] of cases) {
      const detection = await detectFormat(join(ROOT, file));
      expect(detection.kind === "format" && [detection.reader.name, detection.layout]).toEqual([format, undefined]);
    }
    // JSONL whose lines are arrays stays line-per-record.
    expect(layoutOfHead("[1,2]\n[3,4]\n")).toEqual({ kind: "lines" });
    expect(layoutOfHead("[\n  1,\n  2\n]\n")).toEqual({ kind: "array" });
  });
});

const TAU = join(ROOT, "../shared/fixtures/real/formats-2026/json_array_rows/tau-bench__gpt-4o-airline.first3.json");

describeThirdParty("JSON array rows: the shared tau-bench sample (in place)", () => {
  it("is detected and read element by element, each source the file and element index", async () => {
    expect(existsSync(TAU)).toBe(true);
    const detection = await detectFormat(TAU);
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
    if (detection.kind !== "format") return;
    const items = await collect(detection.reader.read(TAU, OPTIONS));
    expect(items.map((item) => itemSource(item).row)).toEqual([0, 1, 2]);
    expect(items.filter((item) => item.kind === "trajectory").length).toBe(2);
  });
});

describe("a pretty-printed single record, detected by its content", () => {
  const dir = tempDir("lwm-json-document-");
  // One AgentWorldBench row as `json.dump(row, indent=4)` writes it (the benchmark's README shows
  // its rows so), written here from the format's documented fields.
  const row = {
    task: "terminal",
    id: 90210,
    prompt: ["### Turn 1\n**Action:**\n```bash\nls\n```", "### Turn 2\n**Action:**\n```bash\ncat notes.txt\n```"],
    response: ["**Environment Observation:**\nnotes.txt", "**Environment Observation:**\nbuy milk"],
    current_prompt: "### Turn 2\n**Action:**\n```bash\ncat notes.txt\n```",
    system_str: "You are a Terminal World Model.",
    turn_idx: 2,
    total_turns: 2,
  };
  const write = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value, null, 4));
    return path;
  };

  it("an AgentWorldBench row: detected by the row as one line, read as one trajectory", async () => {
    const path = write("awb-row.json", row);
    // Negative control: without the key its sniff looks for, the same document is nobody's.
    const { turn_idx: _turn, ...withoutTurn } = row;
    expect((await detectFormat(write("awb-no-turn.json", withoutTurn))).kind).toBe("unrecognized");
    const detection = await detectFormat(path);
    expect(detection).toMatchObject({ kind: "format", cuttable: false });
    expect(detection.kind === "format" && detection.reader.name).toBe("agentworldbench-jsonl");
    if (detection.kind !== "format") return;
    const items = await collect(detection.reader.read(path, OPTIONS));
    expect(items).toHaveLength(1);
    const trajectory = items[0]?.kind === "trajectory" ? items[0].trajectory : undefined;
    expect(trajectory).toMatchObject({ id: "90210", domain: "terminal", system: row.system_str });
    expect(trajectory?.turns).toEqual([
      { action: "```bash\nls\n```", observation: "notes.txt" },
      { action: "```bash\ncat notes.txt\n```", observation: "buy milk" },
    ]);
  });

  it("a record longer than the 64 KiB head, whose deciding key comes last, is read whole to be told", async () => {
    const long = { ...row, system_str: `You are a Terminal World Model. ${"Describe the shell exactly. ".repeat(6000)}` };
    const path = write("awb-long.json", long);
    expect(readFileSync(path, "utf8").indexOf('"turn_idx"')).toBeGreaterThan(64 << 10);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("agentworldbench-jsonl");
    // Multi-byte text: the 64 KiB head is fewer than 64 Ki characters, and still cut.
    const wide = write("awb-wide.json", { ...row, system_str: `Монитор терминала. ${"Опиши оболочку точно. ".repeat(2000)}` });
    expect(readFileSync(wide, "utf8").length).toBeLessThan(64 << 10);
    expect(Buffer.byteLength(readFileSync(wide, "utf8"))).toBeGreaterThan(64 << 10);
    const wideDetection = await detectFormat(wide);
    expect(wideDetection.kind === "format" && wideDetection.reader.name).toBe("agentworldbench-jsonl");
  });

  it("a canonical trajectory written pretty-printed", async () => {
    const path = write("canonical.json", { id: "t1", domain: "terminal", turns: [{ action: "ls", observation: "a\nb" }] });
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("canonical-jsonl");
  });

  it("refuses one whose reader reads only JSON lines, saying how to make it one, and names an unknown one's keys", async () => {
    const [search] = rowsOf("data/demo/search/agent-trace.jsonl");
    const refused = await detectFormat(write("search.json", search));
    expect(refused.kind === "unrecognized" && refused.reason).toMatch(
      /^the file is a pretty-printed JSON object with keys .*: it looks like one search-api record, but the search-api reader does not read a pretty-printed document; write it on one line \(e\.g\. jq -c \. FILE\)/,
    );
    const unknown = await detectFormat(write("report.json", { resolved: true, tests_status: { passed: 3 } }));
    expect(unknown.kind === "unrecognized" && unknown.reason).toContain(
      "the file is a pretty-printed JSON object with keys resolved, tests_status, and every format's sniff said no to it as one record",
    );
  });
});

describe("hostile nesting at detection", () => {
  const dir = tempDir("lwm-json-deep-");
  const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
  const files: [name: string, text: string][] = [
    // A pretty-printed document, a JSON array of rows and a JSONL-looking file whose conversation
    // nests 60,000 levels: writing such a value back as a line for the sniffs overflowed the stack.
    ["document.json", `{\n  "conversations": ${deep(60_000)}\n}\n`],
    ["rows.json", `[\n  {"messages": ${deep(30_000)}}\n]\n`],
    ["conversations.jsonl", `{\n  "conversations": ${deep(20_000)},\n  "tools": "[]"\n}\n`],
  ];
  for (const [name, text] of files)
    it(`${name}: refused as unrecognized, never a stack overflow`, async () => {
      const path = join(dir, name);
      writeFileSync(path, text);
      const detection = await detectFormat(path);
      expect(detection.kind).toBe("unrecognized");
    });
  it("a deep element among readable rows does not stop the rows from being detected", async () => {
    const path = join(dir, "mixed.json");
    const rows = rowsOf("data/demo/swe/swe-smith__ft.jsonl").slice(0, 2);
    writeFileSync(path, `[\n${[`{"messages": ${deep(5_000)}}`, ...rows.map((r) => JSON.stringify(r))].join(",\n")}\n]\n`);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("swe-smith");
  });
});

describeThirdParty("the AgentWorldBench README's example row (in place)", () => {
  it("is detected as agentworldbench-jsonl and read as one trajectory", async () => {
    const path = join(ROOT, "../shared/fixtures/real/qwen_agentworld/agentworldbench_schema_example_FROM_README.json");
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("agentworldbench-jsonl");
    if (detection.kind !== "format") return;
    const items = await collect(detection.reader.read(path, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["trajectory"]);
    expect(items[0]?.kind === "trajectory" && items[0].trajectory.domain).toBe("mcp");
  });
});
