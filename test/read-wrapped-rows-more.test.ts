import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import { LAYOUT_HEAD_BYTES, recordLayout } from "../src/read/json-array.ts";
import { itemSource, type ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { sweSmithReader } from "../src/read/swe-smith.ts";
import { textJsonlReader } from "../src/read/text-jsonl.ts";
import { collect, jsonlRows, jsonlText, READ_OPTIONS, readItems, tempDir, withoutSources } from "./helpers.ts";

// pandas DataFrame.to_json layouts beside "table" and "split" (test/read-wrapped-rows.test.ts), and
// rows wrapped in a document whose first row is longer than the 64 KiB head.
//
// Shapes as pandas' to_json documentation shows them for
//   df = pd.DataFrame([["a", "b"], ["c", "d"]], index=["row 1", "row 2"], columns=["col 1", "col 2"])
//   orient="columns" → {"col 1":{"row 1":"a","row 2":"c"},"col 2":{"row 1":"b","row 2":"d"}}
//   orient="index"   → {"row 1":{"col 1":"a","col 2":"b"},"row 2":{"col 1":"c","col 2":"d"}}
//   orient="values"  → [["a","b"],["c","d"]]
// written here (no pandas in the test environment) for frames of known rows with a RangeIndex
// (what pd.read_json(lines=True) gives), whose labels pandas writes as "0", "1", ….

const CHAT_ROWS = "test/fixtures/handmade/chat-tool-rows/openai-functions.jsonl";
const SWE_ROWS = "data/demo/swe/swe-smith__ft.jsonl";

/** The rows as a DataFrame holds them: every column in every row (null where a row lacks it). */
function frameOf(rows: Record<string, unknown>[]): { columns: string[]; frame: Record<string, unknown>[] } {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return { columns, frame: rows.map((row) => Object.fromEntries(columns.map((name) => [name, row[name] ?? null]))) };
}

/** to_json(orient="columns") text, index labels in the order given (pandas writes its index order). */
function byColumns(columns: string[], frame: Record<string, unknown>[], labels = frame.map((_, i) => String(i))): string {
  const column = (name: string) => `{${frame.map((row, i) => `${JSON.stringify(labels[i])}:${JSON.stringify(row[name])}`).join(",")}}`;
  return `{${columns.map((name) => `${JSON.stringify(name)}:${column(name)}`).join(",")}}`;
}

/** to_json(orient="index") text, rows in the order given. */
function byIndex(frame: Record<string, unknown>[], labels = frame.map((_, i) => String(i))): string {
  return `{${frame.map((row, i) => `${JSON.stringify(labels[i])}:${JSON.stringify(row)}`).join(",")}}`;
}

describe("pandas to_json orient=columns / orient=index", () => {
  const dir = tempDir("lwm-frame-");
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const jsonl = (name: string, frame: Record<string, unknown>[]) => write(name, jsonlText(frame));

  for (const [name, reader, file] of [
    ["chat-tool-rows", chatToolRowsReader, CHAT_ROWS],
    ["swe-smith", sweSmithReader, SWE_ROWS],
  ] as const) {
    for (const orient of ["columns", "index"] as const) {
      it(`${name}: orient="${orient}" reads to the same records as the frame's rows as JSONL`, async () => {
        const { columns, frame } = frameOf(jsonlRows(file));
        const path = write(`${name}-${orient}.json`, orient === "columns" ? byColumns(columns, frame) : byIndex(frame));
        const detection = await detectFormat(path);
        expect(detection).toMatchObject({ kind: "format", layout: "wrapped-rows", cuttable: false });
        expect(detection.kind === "format" && detection.reader.name).toBe(name);
        expect(await recordLayout(path)).toEqual({ kind: "wrapped", key: "", orient });
        const items = await readItems(reader, path);
        expect(items.length).toBe(frame.length);
        expect(items.some((item) => item.kind === "trajectory")).toBe(true);
        expect(withoutSources(items)).toEqual(withoutSources(await readItems(reader, jsonl(`${name}-${orient}.jsonl`, frame))));
        expect(items.map((item) => itemSource(item).row)).toEqual(frame.map((_, i) => i));
        expect(itemSource(items[0] as ReadItem)).toMatchObject({ uri: path, row: 0, offset: 0, format: name });
      });
    }
  }

  it("rows follow the index order the file gives (not JSON.parse's numeric key order)", async () => {
    const { columns, frame } = frameOf(jsonlRows(CHAT_ROWS));
    const labels = ["30", "2", "11", "0"];
    const expected = withoutSources(await readItems(chatToolRowsReader, jsonl("order.jsonl", frame)));
    for (const [orient, text] of [
      ["columns", byColumns(columns, frame, labels)],
      ["index", byIndex(frame, labels)],
    ]) {
      const path = write(`order-${orient}.json`, text as string);
      expect(await recordLayout(path)).toMatchObject({ kind: "wrapped", orient });
      expect(withoutSources(await readItems(chatToolRowsReader, path))).toEqual(expected);
    }
  });

  it("orient=columns whose first column runs past the 64 KiB head: every column's first cells are found streaming", async () => {
    // The long cell is row 1's: a first row whose 300 KiB "messages" comes first is not told even as a JSONL line.
    const rows = jsonlRows(CHAT_ROWS);
    const long = structuredClone(rows[1]) as { messages: { content: unknown }[] };
    (long.messages[1] as { content: unknown }).content = "x".repeat(300 << 10);
    const { columns, frame } = frameOf([rows[0] as Record<string, unknown>, long, ...rows.slice(2)]);
    // messages first: the head holds none of the other columns.
    const ordered = ["messages", ...columns.filter((name) => name !== "messages")];
    const path = write("columns-long.json", byColumns(ordered, frame));
    expect(readFileSync(path, "utf8").indexOf('"tools"')).toBeGreaterThan(LAYOUT_HEAD_BYTES);
    const detection = await detectFormat(path);
    expect(detection).toMatchObject({ kind: "format", layout: "wrapped-rows", cuttable: false });
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
    expect(await recordLayout(path)).toEqual({ kind: "wrapped", key: "", orient: "columns" });
    const items = await readItems(chatToolRowsReader, path);
    const inOrder = frame.map((row) => Object.fromEntries(ordered.map((name) => [name, row[name]])));
    expect(withoutSources(items)).toEqual(withoutSources(await readItems(chatToolRowsReader, jsonl("columns-long.jsonl", inOrder))));
  });

  it("quarantines, with file, row and reason: a row over input.max_line_bytes, a row whose index labels differ between columns, a broken frame", async () => {
    // Ten text rows (more than detection probes): row 9's label differs between the columns.
    const frame = Array.from({ length: 10 }, (_, i) => ({ text: `document ${i} ${"y".repeat(i === 4 ? 500 : 10)}`, id: `d${i}` }));
    const labels = frame.map((_, i) => String(i));
    const text = byColumns(["text", "id"], frame, labels).replace('"9":"d9"', '"99":"d9"');
    const path = write("text-columns.json", text);
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("text-jsonl");
    const items = await readItems(textJsonlReader, path, { maxLineBytes: 200 });
    // Records in = out + quarantined: one item per row.
    expect(items.length).toBe(10);
    expect(items.map((item) => item.kind)).toEqual([
      ...Array(4).fill("document"),
      "quarantine",
      ...Array(4).fill("document"),
      "quarantine",
    ]);
    const [over, mismatch] = items.flatMap((item) => (item.kind === "quarantine" ? [item.entry] : []));
    expect(over).toMatchObject({ source: { uri: path, row: 4, format: "text-jsonl" }, stage: "read" });
    expect(over?.reason).toMatch(/^row 4 is \d+ bytes as one JSON line, over the 200-byte limit \(input\.max_line_bytes\)/);
    expect(mismatch).toMatchObject({ source: { uri: path, row: 9 } });
    expect(mismatch?.reason).toBe(`row 9: column "id" has index label "99" where column "text" has "9" (the columns' index labels differ)`);

    // A break: not told as a frame (the scan reads to the end); no row of a frame by columns is whole
    // before its last column, so the file is one quarantine entry, as a broken document is.
    const broken = write("text-columns-broken.json", text.slice(0, text.length - 40));
    expect((await recordLayout(broken)).kind).not.toBe("wrapped");
    const cut = await readItems(textJsonlReader, broken);
    expect(cut.length).toBe(1);
    expect(cut[0]).toMatchObject({ kind: "quarantine", entry: { source: { uri: broken, line: 1 }, stage: "read" } });
    expect(cut[0]?.kind === "quarantine" && cut[0].entry.reason).toMatch(/^invalid JSON/);
    // Read as a frame (the file broken after planning): quarantined once, naming where it breaks.
    const { frameColumnsRecordLines } = await import("../src/read/pandas-frame.ts");
    const after = await collect(frameColumnsRecordLines(broken, READ_OPTIONS, "text-jsonl"));
    expect(after).toEqual([
      {
        kind: "quarantine",
        entry: expect.objectContaining({ source: { uri: broken, row: 0, offset: 0, format: "text-jsonl" }, stage: "read" }),
      },
    ]);
    expect(after[0]?.kind === "quarantine" && after[0].entry.reason).toMatch(
      /^the pandas orient="columns" document breaks in or after column "id" \(after its \d+ cell\(s\)\): invalid JSON/,
    );

    // orient=index: the rows before the break are read, the rest quarantined once.
    const index = byIndex(frame.slice(0, 3));
    const brokenIndex = write("text-index-broken.json", index.slice(0, index.length - 10));
    const rows = await readItems(textJsonlReader, brokenIndex);
    expect(rows.map((item) => item.kind)).toEqual(["document", "document", "quarantine"]);
    expect(rows[2]).toMatchObject({ entry: { source: { uri: brokenIndex, row: 2 } } });
    expect(rows[2]?.kind === "quarantine" && rows[2].entry.reason).toMatch(
      /^the pandas orient="index" document breaks after row 1: invalid JSON/,
    );
  });

  it("negative controls: ordinary JSON objects of objects are not taken for frames", async () => {
    const [row] = frameOf(jsonlRows(CHAT_ROWS)).frame as [Record<string, unknown>];
    // pandas' documentation example (string index labels): not a frame here; the rows are not a known format anyway.
    const docs = write("pandas-docs-columns.json", '{"col 1":{"row 1":"a","row 2":"c"},"col 2":{"row 1":"b","row 2":"d"}}');
    expect((await recordLayout(docs)).kind).not.toBe("wrapped");
    expect((await detectFormat(docs)).kind).toBe("unrecognized");
    // Known rows keyed by name, not by an integer index label: a map, not a frame.
    const named = write("named.json", JSON.stringify({ alpha: row, beta: row }));
    expect((await recordLayout(named)).kind).not.toBe("wrapped");
    // Integer keys whose objects differ in their keys: not rows of one frame.
    const ragged = write("ragged.json", JSON.stringify({ 0: row, 1: { ...row, extra: 1 } }));
    expect((await recordLayout(ragged)).kind).not.toBe("wrapped");
    // A config whose members are objects keyed by integers, holding nothing a reader knows: refused as before, with a note.
    const config = await detectFormat(write("config.json", JSON.stringify({ 0: { lr: 0.1 }, 1: { lr: 0.2 } }, null, 2)));
    expect(config.kind).toBe("unrecognized");
    expect(config.kind === "unrecognized" && config.reason).toContain(
      'it is a pandas DataFrame.to_json(orient="index") document (a frame whose first 2 row(s) have the columns lr); offered to the sniffs as rows',
    );
    // JSONL whose lines are objects of columns: lines, not one frame.
    const lines = write("frame-lines.jsonl", `${byColumns(["text"], [{ text: "a" }])}\n${byColumns(["text"], [{ text: "b" }])}\n`);
    expect(await recordLayout(lines)).toEqual({ kind: "lines" });
    // One chat row on its own (a single record) stays one record.
    const single = write("single.json", JSON.stringify(row, null, 2));
    expect((await recordLayout(single)).kind).toBe("document");
    const one = await detectFormat(single);
    expect(one.kind === "format" && one.layout).toBeUndefined();
  });

  it('orient="values" (no column names) is refused naming the orient and what to write instead', async () => {
    const { columns, frame } = frameOf(jsonlRows(CHAT_ROWS));
    const values = frame.map((row) => columns.map((name) => row[name]));
    for (const indent of [undefined, 2]) {
      const detection = await detectFormat(write(`values-${indent ?? 0}.json`, JSON.stringify(values, null, indent)));
      expect(detection.kind).toBe("unrecognized");
      expect(detection.kind === "unrecognized" && detection.reason).toContain(
        `this looks like pandas DataFrame.to_json(orient="values"), which leaves out the column names, so no reader can tell what a row holds; ` +
          'write the frame with orient="records", lines=True (JSONL)',
      );
    }
    // Negative control: an array of arrays of different lengths gets no such note.
    const other = await detectFormat(write("arrays.json", JSON.stringify([[1, 2], [3]], null, 2)));
    expect(other.kind === "unrecognized" && other.reason).not.toContain("pandas");
  });
});

describe("rows wrapped in a document whose first row is longer than the 64 KiB head", () => {
  const dir = tempDir("lwm-wrapped-long-");

  for (const shape of ["data", "index"] as const) {
    it(`${shape === "data" ? '{"version", "data": [rows]}' : 'pandas orient="index"'} with a ~300 KiB first row is read row by row, not as one document`, async () => {
      const rows = jsonlRows(CHAT_ROWS);
      const long = structuredClone(rows[0]) as { messages: { content: unknown }[] };
      (long.messages[1] as { content: unknown }).content = [{ type: "text", text: "x".repeat(300 << 10) }];
      const all = [long, ...rows.slice(1)] as Record<string, unknown>[];
      const { frame } = frameOf(all);
      const records = shape === "data" ? all : frame;
      const path = join(dir, `long-${shape}.json`);
      writeFileSync(path, shape === "data" ? JSON.stringify({ version: "1.0", data: all }, null, 2) : byIndex(frame));
      const detection = await detectFormat(path);
      expect(detection).toMatchObject({ kind: "format", layout: "wrapped-rows", cuttable: false });
      expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
      expect(await recordLayout(path)).toEqual(
        shape === "data" ? { kind: "wrapped", key: "data" } : { kind: "wrapped", key: "", orient: "index" },
      );
      const items = await readItems(chatToolRowsReader, path);
      expect(items.length).toBe(records.length);
      const lines = join(dir, `long-${shape}.jsonl`);
      writeFileSync(lines, jsonlText(records));
      expect(withoutSources(items)).toEqual(withoutSources(await readItems(chatToolRowsReader, lines)));
    });
  }

  it("negative control: one long record that holds a `data` array stays one document", async () => {
    const [row] = jsonlRows(SWE_ROWS);
    const trajectory = {
      id: "t1",
      domain: "terminal",
      turns: [{ action: "ls", observation: "z".repeat(100 << 10) }],
      data: [row, row],
    };
    const path = join(dir, "one-long-record.json");
    writeFileSync(path, JSON.stringify(trajectory, null, 2));
    expect((await recordLayout(path)).kind).toBe("document");
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.layout).toBeUndefined();
  });
});
