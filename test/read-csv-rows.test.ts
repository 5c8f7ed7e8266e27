/**
 * CSV and TSV files of dataset rows (src/read/csv-rows.ts): Hugging Face repos and exports ship rows
 * as `train.csv` / `data.tsv`, conversations in a column as JSON text, or knowledge text in a `text`
 * column. Detection by a header and rows whose fields line up, reading row by row by the reader the
 * rows select, damage quarantined row by row, pandas' Python literals refused, and other text left
 * as it was. The fixtures are written by test/fixtures/generated/csv/make.py with Python's csv
 * module; each chat CSV has a `.rows.jsonl` twin (its rows as Python's csv reader reads them).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import { csvDialectOf } from "../src/read/csv-rows.ts";
import { itemSource, type Reader, type ReaderOptions, type ReadItem } from "../src/read/reader.ts";
import { type Detection, detectFormat } from "../src/read/registry.ts";
import { textJsonlReader } from "../src/read/text-jsonl.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const DIR = join(ROOT, "test/fixtures/generated/csv");
const HANDBOOK = join(ROOT, "data/knowledge/handbook.jsonl");
const CLI = join(ROOT, "bin/lwm-data.js");
const OPTIONS: ReaderOptions = { maxLineBytes: 64 << 10 };

const fixture = (name: string) => join(DIR, name);

/** A read item without where it came from: a CSV row and its JSONL line must give the same record. */
function withoutSource(item: ReadItem): unknown {
  if (item.kind === "trajectory") {
    const { source: _source, ...trajectory } = item.trajectory;
    return { kind: item.kind, trajectory };
  }
  if (item.kind === "document") {
    const { source: _source, ...document } = item.document;
    return { kind: item.kind, document };
  }
  const { source: _source, ...entry } = item.entry;
  return { kind: item.kind, entry };
}

function readerOf(detection: Detection): Reader {
  if (detection.kind !== "format") throw new Error(`not detected: ${JSON.stringify(detection)}`);
  return detection.reader;
}

describe("CSV and TSV rows read like the same rows as JSONL", () => {
  const pairs: [csv: string, jsonl: string, format: string][] = [
    // Chat rows with tool calls, `messages` and `tools` as JSON text; CRLF line ends.
    ["chat-rows.csv", "chat-rows.rows.jsonl", "chat-tool-rows"],
    // The same with a byte order mark and LF line ends.
    ["chat-rows-bom-lf.csv", "chat-rows-bom-lf.rows.jsonl", "chat-tool-rows"],
    // SWE-rebench rows (`trajectory`) as TSV, with empty cells where a row lacks a key.
    ["swe-rows.tsv", "swe-rows.rows.jsonl", "chat-tool-rows"],
  ];

  for (const [csv, jsonl, format] of pairs) {
    it(`${csv}: detected as ${format} rows, one task, and read as ${jsonl} reads`, async () => {
      const detection = await detectFormat(fixture(csv));
      expect(detection).toMatchObject({ kind: "format", layout: "csv-rows", cuttable: false });
      const reader = readerOf(detection);
      expect(reader.name).toBe(format);
      expect(readerOf(await detectFormat(fixture(jsonl))).name).toBe(format);
      const fromCsv = await collect(reader.read(fixture(csv), OPTIONS));
      const fromJsonl = await collect(reader.read(fixture(jsonl), OPTIONS));
      expect(fromCsv.length).toBeGreaterThan(1);
      expect(fromCsv.some((item) => item.kind === "trajectory")).toBe(true);
      expect(fromCsv.map(withoutSource)).toEqual(fromJsonl.map(withoutSource));
      // Each row named by its 0-based row and the line it starts on (the header is line 1).
      expect(itemSource(fromCsv[0] as ReadItem)).toMatchObject({ uri: fixture(csv), row: 0, line: 2, format });
      expect(fromCsv.map((item) => itemSource(item).row)).toEqual(fromCsv.map((_, i) => i));
    });
  }

  it("a `messages` column of JSON text reads as the list: the tool calls become turns", async () => {
    const items = await collect(chatToolRowsReader.read(fixture("chat-rows.csv"), OPTIONS));
    const first = items[0];
    expect(first?.kind).toBe("trajectory");
    if (first?.kind !== "trajectory") return;
    expect(first.trajectory.turns.length).toBeGreaterThan(0);
    expect(first.trajectory.turns.map((turn) => turn.action).join("\n")).toContain("find_order");
  });

  it("a `text` column and no trajectory column is text-jsonl's: quoted newlines, quotes and commas kept", async () => {
    const handbook = await collect(textJsonlReader.read(HANDBOOK, OPTIONS));
    for (const [name, count] of [
      ["text-rows.csv", handbook.length],
      ["text-rows-semicolon.csv", 6],
    ] as const) {
      const detection = await detectFormat(fixture(name));
      expect(detection, name).toMatchObject({ kind: "format", layout: "csv-rows", cuttable: false });
      expect(readerOf(detection)).toBe(textJsonlReader);
      const items = await collect(textJsonlReader.read(fixture(name), OPTIONS));
      expect(items.map(withoutSource), name).toEqual(handbook.slice(0, count).map(withoutSource));
    }
    const text = (await collect(textJsonlReader.read(fixture("text-rows.csv"), OPTIONS))).map((item) =>
      item.kind === "document" ? item.document.text : "",
    );
    expect(text.some((t) => t.includes("\n\n"))).toBe(true);
  });

  it("a first row longer than the 64 KiB head (one long tool output) is still told, and read", async () => {
    const rows = readFileSync(fixture("chat-rows.rows.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const first = rows[0] as { messages: { role: string; content: unknown }[] };
    const tool = first.messages.find((message) => message.role === "tool" || message.role === "function");
    if (!tool) throw new Error("the fixture's first row has no tool result");
    tool.content = `${'a long tool output line, with commas and "quotes"\n'.repeat(3000)}end`;
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    const quoted = (cell: unknown) => `"${(typeof cell === "string" ? cell : JSON.stringify(cell)).replaceAll('"', '""')}"`;
    const dir = tempDir("lwm-csv-long-");
    const csv = join(dir, "long.csv");
    const jsonl = join(dir, "long.jsonl");
    writeFileSync(
      csv,
      `${[columns.join(","), ...rows.map((row) => columns.map((column) => (column in row ? quoted(row[column]) : "")).join(","))].join("\r\n")}\r\n`,
    );
    const ordered = rows.map((row) => Object.fromEntries(columns.filter((column) => column in row).map((column) => [column, row[column]])));
    writeFileSync(jsonl, ordered.map((row) => `${JSON.stringify(row)}\n`).join(""));
    expect(readFileSync(csv).length).toBeGreaterThan(128 << 10);
    const detection = await detectFormat(csv);
    expect(detection).toMatchObject({ kind: "format", layout: "csv-rows" });
    const reader = readerOf(detection);
    expect(reader).toBe(chatToolRowsReader);
    const options = { maxLineBytes: 1 << 20 };
    const fromCsv = await collect(reader.read(csv, options));
    expect(fromCsv[0]?.kind).toBe("trajectory");
    expect(fromCsv.map(withoutSource)).toEqual((await collect(reader.read(jsonl, options))).map(withoutSource));
  });

  it("a gzip-compressed CSV reads as the plain one", async () => {
    const path = join(tempDir("lwm-csv-"), "chat-rows.csv.gz");
    writeFileSync(path, gzipSync(readFileSync(fixture("chat-rows.csv"))));
    const reader = readerOf(await detectFormat(path));
    expect(reader).toBe(chatToolRowsReader);
    const plain = await collect(reader.read(fixture("chat-rows.csv"), OPTIONS));
    expect((await collect(reader.read(path, OPTIONS))).map(withoutSource)).toEqual(plain.map(withoutSource));
  });

  it("a CSV file is never cut into byte-range tasks, detected or named in the config", async () => {
    const dir = tempDir("lwm-csv-plan-");
    const path = fixture("chat-rows.csv");
    expect(readFileSync(path).length).toBeGreaterThan(400);
    for (const format of ["auto", "chat-tool-rows"]) {
      const config = join(dir, `${format}.yaml`);
      writeFileSync(config, ["inputs:", `  - path: ${path}`, `    format: ${format}`, "input:", "  task_bytes: 100", ""].join("\n"));
      const plan = await planJob(loadConfig(config));
      expect(
        plan.files.map((file) => file.splittable),
        format,
      ).toEqual([false]);
      expect(plan.tasks, format).toHaveLength(1);
    }
    // Negative control: the same rows as JSONL are cut.
    const jsonl = join(dir, "rows.jsonl");
    writeFileSync(jsonl, readFileSync(fixture("chat-rows.rows.jsonl")));
    const config = join(dir, "jsonl.yaml");
    writeFileSync(config, ["inputs:", `  - path: ${jsonl}`, "input:", "  task_bytes: 100", ""].join("\n"));
    expect((await planJob(loadConfig(config))).tasks.length).toBeGreaterThan(1);
  });
});

describe("damaged CSV rows", () => {
  it("quarantines each bad row (file, row, line, field) and keeps the others: rows in = out + quarantined", async () => {
    const path = fixture("damaged.csv");
    const reader = readerOf(await detectFormat(path));
    expect(reader).toBe(textJsonlReader);
    const items = await collect(reader.read(path, OPTIONS));
    // 15 data rows: 9 good, short, good, long, too big, good, cut.
    expect(items).toHaveLength(15);
    expect(items.filter((item) => item.kind === "document")).toHaveLength(11);
    const quarantined = items.flatMap((item) => (item.kind === "quarantine" ? [item.entry] : []));
    expect(quarantined.map((entry) => [entry.source.uri, entry.source.row, entry.field])).toEqual([
      [path, 9, "source"],
      [path, 11, "field 4"],
      [path, 12, undefined],
      [path, 14, "text"],
    ]);
    const [short, long, big, cut] = quarantined;
    expect(short?.reason).toMatch(/^fewer fields than the header's 3 columns \(2\): column "source" .*\(row 9, line \d+\)$/);
    expect(short?.source.line).toBe(Number(/line (\d+)/.exec(short?.reason ?? "")?.[1]));
    expect(long?.reason).toMatch(/^more fields than the header's 3 columns \(4\): field 4 has no column \(row 11, line \d+\)$/);
    expect(big?.reason).toMatch(/^CSV row over the 65536-byte limit \(input\.max_line_bytes\): row 12 \(line \d+\) is \d+ bytes$/);
    expect(cut?.reason).toMatch(/^quoted field still open at the end of the file: row 14 \(line \d+\), column "text"/);
    // The kept rows are the handbook's documents, in order.
    const handbook = (await collect(textJsonlReader.read(HANDBOOK, OPTIONS))).map(withoutSource);
    const kept = items.filter((item) => item.kind === "document").map(withoutSource);
    expect(kept).toEqual(handbook.slice(0, 11));
  });

  it("rows over a lower limit are each quarantined and the rows after them still read", async () => {
    // The handbook's documents are 3.2–4.2 KB: at 3.5 KiB, some are over, some not.
    const path = fixture("damaged.csv");
    const items = await collect(textJsonlReader.read(path, { maxLineBytes: 3584 }));
    expect(items).toHaveLength(15);
    const over = items.flatMap((item, i) => (item.kind === "quarantine" && /over the 3584-byte limit/.test(item.entry.reason) ? [i] : []));
    expect(over.length).toBeGreaterThan(2);
    expect(items.filter((item) => item.kind === "document").length).toBeGreaterThan(2);
    expect(items[(over[0] as number) + 1]?.kind).not.toBe("quarantine");
  });
});

describe("pandas' to_csv of list columns (Python literals)", () => {
  it("is refused: the reason names the column and says how to write JSON", async () => {
    const detection = await detectFormat(fixture("pandas-repr.csv"));
    expect(detection.kind).toBe("unrecognized");
    if (detection.kind !== "unrecognized") return;
    expect(detection.reason).toContain('column "messages" holds a Python literal');
    expect(detection.reason).toContain('df.to_json(path, orient="records", lines=True)');
    expect(detection.reason).toContain("json.dumps");
  });

  it("read with an explicit format, each row is quarantined on its column", async () => {
    const items = await collect(chatToolRowsReader.read(fixture("pandas-repr.csv"), OPTIONS));
    expect(items.length).toBe(4);
    // A row's first Python-literal column is named: `messages`, or `tools` where a row held a list.
    const fields = items.map((item) => (item.kind === "quarantine" ? item.entry.field : item.kind));
    expect(fields).toContain("messages");
    for (const item of items) {
      expect(item.kind).toBe("quarantine");
      if (item.kind === "quarantine") {
        expect(item.entry.field).toMatch(/^(messages|tools)$/);
        expect(item.entry.reason).toMatch(new RegExp(`^column "${item.entry.field}" holds a Python literal .*\\(row \\d, line \\d+\\)$`));
      }
    }
  });
});

describe("files that are not CSV stay as they were", () => {
  const controls: [path: string, expected: string][] = [
    [join(ROOT, "test/fixtures/handmade/aider/two-runs.aider.chat.history.md"), "aider-history"],
    [join(ROOT, "data/demo/web/stockroom.add-item__experiment_analysis.md"), "browsergym"],
    [join(ROOT, "test/fixtures/recorded/script/plain.typescript"), "script"],
    [join(ROOT, "test/fixtures/handmade/chat-tool-rows/openai-functions.jsonl"), "chat-tool-rows"],
    [HANDBOOK, "text-jsonl"],
  ];
  for (const [path, expected] of controls) {
    it(`${path.slice(ROOT.length + 1)}: ${expected}, not CSV rows`, async () => {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name).toBe(expected);
      expect(detection.kind === "format" && detection.layout).not.toBe("csv-rows");
      expect(await csvDialectOf(path)).toBeUndefined();
    });
  }

  for (const name of ["notes-with-commas.txt", "log-with-commas.log"]) {
    it(`${name}: commas on every line, still unrecognized as before`, async () => {
      const detection = await detectFormat(fixture(name));
      expect(detection.kind).toBe("unrecognized");
      if (detection.kind === "unrecognized")
        expect(detection.reason).toMatch(/^no reader recognizes the content: every format's sniff said no from each/);
      expect(await csvDialectOf(fixture(name))).toBeUndefined();
      // Read with an explicit format: the one entry for a file that holds no JSON lines.
      const items = await collect(textJsonlReader.read(fixture(name), OPTIONS));
      expect(items).toHaveLength(1);
      expect(items[0]?.kind === "quarantine" && items[0].entry.reason).toMatch(/reads one JSON object per line/);
    });
  }
});

describe("validate", () => {
  it('says "CSV rows, read row by row", and loads csv-parse to tell (test/stage-modules.test.ts: no other stage does)', () => {
    const log = join(tempDir("lwm-csv-modules-"), "modules.txt");
    const result = spawnSync(
      process.execPath,
      [
        "--import",
        join(ROOT, "test/support/module-load-log.ts"),
        CLI,
        "validate",
        join(ROOT, "configs/defaults.yaml"),
        "--input",
        fixture("chat-rows.csv"),
      ],
      { cwd: ROOT, encoding: "utf8", env: { ...process.env, LWM_MODULE_LOG: log } },
    );
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/chat-rows\.csv .*format=chat-tool-rows \(detected; CSV rows, read row by row\)/);
    expect(readFileSync(log, "utf8")).toMatch(/node_modules\/csv-parse\//);
  });
});
