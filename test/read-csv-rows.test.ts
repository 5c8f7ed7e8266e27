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
import { itemSource, type Reader, type ReaderOptions, type ReadItem, recordLines } from "../src/read/reader.ts";
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

// ---------------------------------------------------------------------------------------------
// Header-only files, bad rows among the probed ones, line ends, encodings and Excel's hints.

/** The chat fixture's rows (JSON objects), `copies` times over with their own ids: more than the 8 probed rows. */
function chatRows(copies = 3): Record<string, unknown>[] {
  const rows = readFileSync(fixture("chat-rows.rows.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return Array.from({ length: copies }, (_, copy) => rows.map((row, i) => ({ ...row, id: `row-${copy}-${i}` }))).flat();
}

const CHAT_COLUMNS = ["task_id", "trial", "reward", "tools", "messages", "id", "model", "success"];

/** A cell as csv.writer writes it: quoted when it holds the delimiter, a quote or a line end. */
function cell(value: unknown, delimiter = ","): string {
  if (value === undefined) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.includes(delimiter) || /["\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Lines of a CSV file: the header, then each row's cells (or a line given as written). */
function csvLines(columns: string[], rows: (Record<string, unknown> | string)[], delimiter = ","): string[] {
  return [
    columns.join(delimiter),
    ...rows.map((row) => (typeof row === "string" ? row : columns.map((column) => cell(row[column], delimiter)).join(delimiter))),
  ];
}

function writeCsv(name: string, text: string | Buffer): string {
  const path = join(tempDir("lwm-csv-more-"), name);
  writeFileSync(path, text);
  return path;
}

/** The chat fixture's own row that chat-tool-rows quarantines (a tool call with no result), whatever the file's layout. */
const NO_RESULT = "messages: no tool call was followed by its result";

/** The quarantine entries of a chat CSV's items other than the fixture's own NO_RESULT row. */
function badRows(items: ReadItem[]) {
  return located(items).filter((item) => "reason" in item && item.reason !== NO_RESULT) as {
    row: number;
    line: number;
    offset: number;
    field?: string;
    reason: string;
  }[];
}

/** Every item's source row, line and offset, and the quarantined ones' field and reason. */
function located(items: ReadItem[]) {
  return items.map((item) => {
    const { row, line, offset } = itemSource(item) as { row?: number; line?: number; offset?: number };
    return item.kind === "quarantine" ? { row, line, offset, field: item.entry.field, reason: item.entry.reason } : { row, line, offset };
  });
}

describe("a CSV file with a header and no data rows", () => {
  it("is told as CSV: 0 records, with a note naming its columns (not 'cannot detect'); read with a format named, 0 records", async () => {
    for (const [name, text] of [
      ["chat-header.csv", `${CHAT_COLUMNS.join(",")}\r\n`],
      ["no-line-end.csv", CHAT_COLUMNS.join(",")],
      ["bom.csv", `\ufeff${CHAT_COLUMNS.join(",")}\n\n`],
      ["cr.csv", `${CHAT_COLUMNS.join(",")}\r`],
    ] as const) {
      const path = writeCsv(name, text);
      const detection = await detectFormat(path);
      expect(detection, name).toEqual({
        kind: "empty",
        note: "a CSV header (comma-separated, 8 column(s): task_id, trial, reward, tools, messages, id, model, success) and no data rows",
      });
      expect(await csvDialectOf(path), name).toMatchObject({ delimiter: ",", columns: CHAT_COLUMNS });
      expect(await collect(chatToolRowsReader.read(path, OPTIONS)), name).toEqual([]);
    }
    const tsv = await detectFormat(writeCsv("text.tsv", "id\ttext\n"));
    expect(tsv.kind === "empty" && tsv.note).toBe("a CSV header (tab-separated (TSV), 2 column(s): id, text) and no data rows");
  });

  it("plan and validate say so: an empty input, 0 records, the note naming its columns", async () => {
    const path = writeCsv("empty-split.csv", "text,id\r\n");
    const dir = tempDir("lwm-csv-header-plan-");
    const config = join(dir, "job.yaml");
    writeFileSync(config, ["inputs:", `  - path: ${path}`, ""].join("\n"));
    const plan = await planJob(loadConfig(config));
    expect(plan.files).toHaveLength(1);
    expect(plan.files[0]).toMatchObject({
      empty: true,
      emptyNote: expect.stringMatching(/^a CSV header \(comma-separated, 2 column\(s\): text, id\)/),
    });
    const result = spawnSync(process.execPath, [CLI, "validate", config], { cwd: ROOT, encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("empty: 0 records (a CSV header (comma-separated, 2 column(s): text, id) and no data rows)");
  });

  it("negative controls: one line of prose, a lone word, a header cut by the head, stay unrecognized", async () => {
    for (const [name, text] of [
      ["prose.txt", "Hello, world\n"],
      ["word.txt", "notes\n"],
      ["date.txt", "2024-05-01,started\n"],
    ] as const) {
      const detection = await detectFormat(writeCsv(name, text));
      expect(detection.kind, name).toBe("unrecognized");
    }
    // A single header-like line longer than the 64 KiB head is not known to be all of the file: not taken.
    const wide = Array.from({ length: 9000 }, (_, i) => `column_${i}`).join(",");
    expect(wide.length).toBeGreaterThan(64 << 10);
    expect((await detectFormat(writeCsv("wide.csv", `${wide}\n`))).kind).toBe("unrecognized");
  });
});

describe("bad rows among the probed rows: the good ones vote, the bad one is quarantined when read", () => {
  const rows = chatRows();
  const good = (path: string) => collect(chatToolRowsReader.read(path, OPTIONS));

  it("a ragged row (a field too many, or too few), first or among the others", async () => {
    for (const at of [0, 2]) {
      const lines = csvLines(CHAT_COLUMNS, rows);
      lines[1 + at] = `${lines[1 + at]},extra`;
      lines[3 + at] = (lines[3 + at] as string).slice(0, (lines[3 + at] as string).lastIndexOf(","));
      const path = writeCsv(`ragged-${at}.csv`, `${lines.join("\r\n")}\r\n`);
      const detection = await detectFormat(path);
      expect(detection, `at ${at}`).toMatchObject({ kind: "format", layout: "csv-rows" });
      expect(readerOf(detection)).toBe(chatToolRowsReader);
      const items = await good(path);
      // Rows in = records out + quarantined.
      expect(items).toHaveLength(rows.length);
      const bad = badRows(items);
      expect(bad.map(({ row, field }) => ({ row, field }))).toEqual([
        { row: at, field: "field 9" },
        { row: at + 2, field: "success" },
      ]);
      const offsets = [0, ...lines.map((line) => Buffer.byteLength(line) + 2)].map((_, i, all) =>
        all.slice(0, i + 1).reduce((a, b) => a + b, 0),
      );
      for (const { row, line, offset, reason } of bad) {
        expect(line).toBe(row + 2);
        expect(offset).toBe(offsets[row + 1]);
        expect(reason).toMatch(new RegExp(`\\(row ${row}, line ${line}\\)$`));
      }
      // The other rows read as in the file without damage.
      const clean = await good(writeCsv("clean.csv", `${csvLines(CHAT_COLUMNS, rows).join("\r\n")}\r\n`));
      const damaged = new Set([at, at + 2]);
      expect(items.filter((_, i) => !damaged.has(i)).map(withoutSource)).toEqual(
        clean.filter((_, i) => !damaged.has(i)).map(withoutSource),
      );
    }
  });

  it("a row with quotes not doubled (the writer did not escape them): quarantined, naming the row and its extra field", async () => {
    const lines = csvLines(CHAT_COLUMNS, rows);
    const row = rows[1] as Record<string, unknown>;
    lines[2] = CHAT_COLUMNS.map((column) =>
      column in row ? `"${typeof row[column] === "string" ? row[column] : JSON.stringify(row[column])}"` : "",
    ).join(",");
    const path = writeCsv("undoubled.csv", `${lines.join("\n")}\n`);
    expect(readerOf(await detectFormat(path))).toBe(chatToolRowsReader);
    const items = await good(path);
    expect(items).toHaveLength(rows.length);
    const bad = badRows(items);
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatchObject({ row: 1, line: 3, field: expect.stringMatching(/^field \d+$/) });
  });

  it("a messages cell that is not valid JSON, or is one Python literal among JSON rows: the row is quarantined on its column", async () => {
    const lines = csvLines(CHAT_COLUMNS, rows);
    const broken: Record<string, unknown> = { ...rows[0], messages: JSON.stringify(rows[0]?.messages).slice(0, 50) };
    const literal: Record<string, unknown> = { ...rows[1], messages: "[{'role': 'user', 'content': 'hi'}]" };
    lines[1] = CHAT_COLUMNS.map((column) => cell(broken[column])).join(",");
    lines[3] = CHAT_COLUMNS.map((column) => cell(literal[column])).join(",");
    const path = writeCsv("bad-cells.csv", `${lines.join("\r\n")}\r\n`);
    expect(readerOf(await detectFormat(path))).toBe(chatToolRowsReader);
    const items = await good(path);
    expect(items).toHaveLength(rows.length);
    const bad = badRows(items);
    expect(bad.map(({ row, line, field }) => ({ row, line, field }))).toEqual([
      { row: 0, line: 2, field: "messages" },
      { row: 2, line: 4, field: "messages" },
    ]);
    expect(bad[1]?.reason).toMatch(/^column "messages" holds a Python literal/);
  });

  it("negative controls: rows that mostly do not line up are not CSV; rows all Python literals are still refused", async () => {
    const lines = csvLines(CHAT_COLUMNS, rows.slice(0, 6));
    for (const i of [1, 2, 4, 6]) lines[i] = `${lines[i]},x`;
    expect((await detectFormat(writeCsv("mostly-ragged.csv", `${lines.join("\n")}\n`))).kind).toBe("unrecognized");
    const pandas = await detectFormat(fixture("pandas-repr.csv"));
    expect(pandas.kind === "unrecognized" && pandas.reason).toContain('column "messages" holds a Python literal');
  });
});

describe("line ends: LF, CRLF and a CR alone (old Mac, some Excel exports), outside and inside quoted cells", () => {
  it("a text CSV with bare CR line ends reads as its CRLF original: the same documents, the same lines", async () => {
    const crlf = fixture("text-rows.csv");
    const original = readFileSync(crlf, "latin1");
    expect(original).toContain("\r\n");
    // Records end with CRLF; the cells' own line breaks are LF and stay so.
    const path = writeCsv("text-rows-cr.csv", Buffer.from(original.replaceAll("\r\n", "\r"), "latin1"));
    const detection = await detectFormat(path);
    expect(detection).toMatchObject({ kind: "format", layout: "csv-rows", cuttable: false });
    expect(readerOf(detection)).toBe(textJsonlReader);
    const [fromCr, fromCrlf] = [await collect(textJsonlReader.read(path, OPTIONS)), await collect(textJsonlReader.read(crlf, OPTIONS))];
    expect(fromCr.map(withoutSource)).toEqual(fromCrlf.map(withoutSource));
    expect(fromCr.map((item) => itemSource(item).line)).toEqual(fromCrlf.map((item) => itemSource(item).line));
    // Each CRLF became one byte: the n-th record starts n bytes earlier... after the header's.
    expect(fromCr.map((item) => (itemSource(item) as { offset: number }).offset)).toEqual(
      fromCrlf.map((item, i) => (itemSource(item) as { offset: number }).offset - i - 1),
    );
  });

  it("quoted cells keep CRLF, LF and CR as written, in a file of any line end; lines count them", async () => {
    const texts = ["one\r\ntwo", "three\nfour", "five\rsix", "seven"];
    for (const eol of ["\n", "\r\n", "\r"]) {
      const lines = csvLines(
        ["id", "text"],
        texts.map((text, i) => ({ id: `d${i}`, text })),
      );
      const path = writeCsv("quoted-ends.csv", lines.join(eol) + eol);
      expect(readerOf(await detectFormat(path))).toBe(textJsonlReader);
      const items = await collect(textJsonlReader.read(path, OPTIONS));
      expect(
        items.map((item) => (item.kind === "document" ? item.document.text : item.kind)),
        JSON.stringify(eol),
      ).toEqual(texts);
      // Line 1 is the header; each quoted line end (CRLF as one) moves the next row down a line.
      expect(items.map((item) => itemSource(item).line)).toEqual([2, 4, 6, 8]);
    }
  });

  it("a CRLF cut between two chunks of the stream is one line end (a gzip file streams 16 KiB chunks)", async () => {
    // Rows sized so that a row's CR is the last byte of the first 16 KiB and its LF the first of the next.
    const header = "id,text\r\n";
    const rows: string[] = [];
    let size = header.length;
    for (let i = 0; size < 3 * 16384; i++) {
      const text = `document ${i} ${"x".repeat(90)}`;
      const row = `d${i},${text}\r\n`;
      if (size < 16384 && size + row.length > 16384) {
        const pad = 16384 - size - `d${i},`.length - 1;
        rows.push(`d${i},${"y".repeat(pad)}\r\n`);
        size += `d${i},`.length + pad + 2;
        continue;
      }
      rows.push(row);
      size += row.length;
    }
    const text = header + rows.join("");
    expect(text.slice(16383, 16385)).toBe("\r\n");
    const plain = writeCsv("split.csv", text);
    const gz = writeCsv("split.csv.gz", gzipSync(text));
    const [fromPlain, fromGz] = [await collect(textJsonlReader.read(plain, OPTIONS)), await collect(textJsonlReader.read(gz, OPTIONS))];
    expect(fromPlain).toHaveLength(rows.length);
    expect(located(fromGz)).toEqual(located(fromPlain));
    expect(fromGz.map(withoutSource)).toEqual(fromPlain.map(withoutSource));
  });

  it("negative control: prose with commas and CR line ends stays unrecognized", async () => {
    const notes = readFileSync(fixture("notes-with-commas.txt"), "utf8").replaceAll("\n", "\r");
    expect((await detectFormat(writeCsv("notes-cr.txt", notes))).kind).toBe("unrecognized");
  });
});

describe("encodings and Excel's hints", () => {
  it("a UTF-8 byte order mark is passed over: columns without it, offsets counting it", async () => {
    const lines = csvLines(
      ["id", "text"],
      [
        { id: "a", text: "first" },
        { id: "b", text: "second" },
      ],
    );
    const path = writeCsv("bom.csv", `\ufeff${lines.join("\r\n")}\r\n`);
    expect(await csvDialectOf(path)).toEqual({ delimiter: ",", columns: ["id", "text"] });
    const items = await collect(textJsonlReader.read(path, OPTIONS));
    expect(located(items)).toEqual([
      { row: 0, line: 2, offset: 3 + "id,text\r\n".length },
      { row: 1, line: 3, offset: 3 + "id,text\r\na,first\r\n".length },
    ]);
  });

  it('UTF-16 (Excel\'s "Unicode Text" export: tab-separated, little-endian with a byte order mark) is refused, saying what it is and how to convert it', async () => {
    const tsv = `${csvLines(
      ["id", "text"],
      [
        { id: "a", text: "Grüße, first" },
        { id: "b", text: "second" },
      ],
      "\t",
    ).join("\r\n")}\r\n`;
    const le = writeCsv("sheet.txt", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(tsv, "utf16le")]));
    const detection = await detectFormat(le);
    expect(detection.kind).toBe("unrecognized");
    if (detection.kind !== "unrecognized") return;
    expect(detection.reason).toBe(
      'the file is CSV rows (tab-separated (TSV), 2 column(s): id, text) in UTF-16 (little-endian, with a byte order mark), as Excel\'s "Unicode Text" export writes a sheet; ' +
        'lwm-data reads UTF-8 text: convert it first (`iconv -f UTF-16 -t UTF-8 sheet.txt > sheet.utf8.tsv`), or save the sheet from Excel as "CSV UTF-8 (Comma delimited)"',
    );
    // Big-endian without a byte order mark, comma-separated.
    const csv = `${csvLines(["id", "text"], [{ id: "a", text: "first" }]).join("\n")}\n`;
    const swapped = Buffer.from(csv, "utf16le").swap16();
    const be = await detectFormat(writeCsv("rows.csv", swapped));
    expect(be.kind === "unrecognized" && be.reason).toMatch(
      /^the file is CSV rows \(comma-separated, 2 column\(s\): id, text\) in UTF-16 \(big-endian\)/,
    );
    // Negative control: UTF-16 prose keeps the refusal any UTF-16 file gets.
    const prose = await detectFormat(
      writeCsv("notes.txt", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("Some notes, in UTF-16.\r\n", "utf16le")])),
    );
    expect(prose.kind === "unrecognized" && prose.reason).toMatch(/^UTF-16 text/);
  });

  it("Excel's `sep=;` first line names the delimiter and is not a row (also `sep=,`, tab and `|`)", async () => {
    for (const delimiter of [";", ",", "\t", "|"]) {
      const rows = [
        { id: "a", text: "first; with a semicolon, and a comma" },
        { id: "b", text: "second | with a bar" },
      ];
      const path = writeCsv("hinted.csv", `sep=${delimiter}\r\n${csvLines(["id", "text"], rows, delimiter).join("\r\n")}\r\n`);
      const detection = await detectFormat(path);
      expect(detection, JSON.stringify(delimiter)).toMatchObject({ kind: "format", layout: "csv-rows" });
      expect(readerOf(detection)).toBe(textJsonlReader);
      expect(await csvDialectOf(path)).toEqual({ delimiter, columns: ["id", "text"], sepLine: true });
      const items = await collect(textJsonlReader.read(path, OPTIONS));
      expect(items.map((item) => (item.kind === "document" ? item.document.text : item.kind))).toEqual(rows.map((row) => row.text));
      expect(located(items).map(({ row, line }) => ({ row, line }))).toEqual([
        { row: 0, line: 3 },
        { row: 1, line: 4 },
      ]);
    }
    // A header-only file with the hint: 0 records, and the note says so.
    const hinted = await detectFormat(writeCsv("hinted-empty.csv", "sep=;\nid;text\n"));
    expect(hinted.kind === "empty" && hinted.note).toBe(
      'a CSV header (semicolon-separated, declared by a "sep=" first line, 2 column(s): id, text) and no data rows',
    );
  });

  it("semicolon-separated with decimal commas (Excel in a European locale): the semicolon is told, cells stay text", async () => {
    const lines = ["id;score;text", "a;0,5;Erste Zeile, mit Komma", "b;1,25;Zweite Zeile", "c;3,0;Dritte, vierte"];
    const path = writeCsv("eu.csv", `${lines.join("\r\n")}\r\n`);
    expect(await csvDialectOf(path)).toEqual({ delimiter: ";", columns: ["id", "score", "text"] });
    const items = await collect(textJsonlReader.read(path, OPTIONS));
    expect(items.map((item) => (item.kind === "document" ? item.document.text : item.kind))).toEqual([
      "Erste Zeile, mit Komma",
      "Zweite Zeile",
      "Dritte, vierte",
    ]);
    // The rows as JSON objects: the decimal commas are text, not numbers.
    const records = await collect(recordLines(path, OPTIONS, "text-jsonl"));
    expect(records.map((line) => (line.kind === "line" ? JSON.parse(line.text).score : line.kind))).toEqual(["0,5", "1,25", "3,0"]);
  });

  it("negative controls: a Markdown table (pipes, no hint) and a ttyrec recording are not CSV", async () => {
    const table = "| id | text |\n|----|------|\n| a | first |\n| b | second |\n";
    expect((await detectFormat(writeCsv("table.md", table))).kind).toBe("unrecognized");
    expect(await csvDialectOf(writeCsv("table.md", table))).toBeUndefined();
    const ttyrec = join(ROOT, "test/fixtures/recorded/ttyrec/session.ttyrec");
    expect(readerOf(await detectFormat(ttyrec)).name).toBe("ttyrec");
    expect(await csvDialectOf(ttyrec)).toBeUndefined();
  });
});
