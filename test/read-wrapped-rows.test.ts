import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import { ROW_CONTAINER_KEYS, recordLayout, wrappedRowsInHead } from "../src/read/json-array.ts";
import { itemSource, type Reader, type ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { sweSmithReader } from "../src/read/swe-smith.ts";
import { jsonlRows, jsonlText, readItems, tempDir, withoutSources } from "./helpers.ts";

// Rows wrapped in one JSON document (`{"version": …, "data": [row, …]}`, pandas orient="table",
// the Hub's datasets-server /rows and /first-rows responses): read like a JSON array of the rows.

const CHAT_ROWS = "test/fixtures/handmade/chat-tool-rows/openai-functions.jsonl";
const SWE_ROWS = "data/demo/swe/swe-smith__ft.jsonl";

/** The rows as compact JSONL (as JSON.stringify writes them: a row's hash id depends on its text). */
function asJsonl(file: string, dir: string): string {
  const path = join(dir, file.replace(/.*\//, "lines-"));
  writeFileSync(path, jsonlText(jsonlRows(file)));
  return path;
}

describe("rows wrapped in one JSON document", () => {
  const dir = tempDir("lwm-wrapped-rows-");
  const write = (name: string, value: unknown, indent?: number) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value, null, indent));
    return path;
  };

  const FORMATS: [string, Reader, string][] = [
    ["chat-tool-rows", chatToolRowsReader, CHAT_ROWS],
    ["swe-smith", sweSmithReader, SWE_ROWS],
  ];
  for (const [name, reader, file] of FORMATS) {
    for (const indent of [undefined, 2]) {
      it(`${name}: {"version", "data": [rows]} (${indent ? "indent=2" : "compact"}) reads to the same records as the rows as JSONL`, async () => {
        const rows = jsonlRows(file);
        const path = write(`${name}-${indent ?? 0}.json`, { version: "1.0", data: rows }, indent);
        const detection = await detectFormat(path);
        expect(detection).toMatchObject({ kind: "format", layout: "wrapped-rows", cuttable: false });
        expect(detection.kind === "format" && detection.reader.name).toBe(name);
        const wrapped = await readItems(reader, path);
        const lines = await readItems(reader, asJsonl(file, dir));
        expect(wrapped.length).toBe(rows.length);
        expect(wrapped.some((item) => item.kind === "trajectory")).toBe(true);
        expect(withoutSources(wrapped)).toEqual(withoutSources(lines));
        expect(wrapped.map(itemSource).map((source) => source.row)).toEqual(rows.map((_, i) => i));
        expect(itemSource(wrapped[0] as ReadItem)).toMatchObject({ uri: path, row: 0, offset: 0, format: name });
      });
    }
  }

  it("reads rows under each container key, and not a document with two of them", async () => {
    const rows = jsonlRows(SWE_ROWS);
    const lines = withoutSources(await readItems(sweSmithReader, asJsonl(SWE_ROWS, dir)));
    for (const key of ROW_CONTAINER_KEYS) {
      const path = write(`key-${key}.json`, { count: rows.length, [key]: rows }, 2);
      expect(await recordLayout(path)).toEqual({ kind: "wrapped", key });
      expect(withoutSources(await readItems(sweSmithReader, path))).toEqual(lines);
    }
    const two = write("two-keys.json", { data: rows, items: rows }, 2);
    expect(wrappedRowsInHead(readFileSync(two, "utf8"))).toBeUndefined();
    expect((await recordLayout(two)).kind).toBe("document");
  });

  it("the Hub's datasets-server /rows response: each element's `row` is the record; features and counts are metadata", async () => {
    const rows = jsonlRows(CHAT_ROWS);
    const response = {
      features: [{ feature_idx: 0, name: "messages", type: { feature: { _type: "Value" }, _type: "List" } }],
      rows: rows.map((row, i) => ({ row_idx: 100 + i, row, truncated_cells: [] })),
      num_rows_total: 1000,
      num_rows_per_page: 100,
      partial: false,
    };
    const path = write("datasets-server-rows.json", response);
    const detection = await detectFormat(path);
    expect(detection).toMatchObject({ kind: "format", layout: "wrapped-rows" });
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
    expect(await recordLayout(path)).toEqual({ kind: "wrapped", key: "rows", unwrap: "row" });
    const wrapped = await readItems(chatToolRowsReader, path);
    expect(withoutSources(wrapped)).toEqual(withoutSources(await readItems(chatToolRowsReader, asJsonl(CHAT_ROWS, dir))));
  });

  it('pandas to_json(orient="table"): the schema is metadata and the added "index" column is not part of a row', async () => {
    const rows = jsonlRows(CHAT_ROWS);
    const table = {
      schema: {
        fields: [{ name: "index", type: "integer" }, ...Object.keys(rows[0] as object).map((name) => ({ name, type: "string" }))],
        primaryKey: ["index"],
        pandas_version: "1.4.0",
      },
      data: rows.map((row, index) => ({ index, ...row })),
    };
    const path = write("pandas-table.json", table);
    expect(await recordLayout(path)).toEqual({ kind: "wrapped", key: "data", drop: "index" });
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
    const wrapped = await readItems(chatToolRowsReader, path);
    // Same ids (a row's id is a hash of it when it names none): the index column was dropped.
    expect(withoutSources(wrapped)).toEqual(withoutSources(await readItems(chatToolRowsReader, asJsonl(CHAT_ROWS, dir))));
  });

  it("negative control: a document that is itself one record, holding a `data` array of rows, stays one record", async () => {
    const [row] = jsonlRows(SWE_ROWS);
    const trajectory = { id: "t1", domain: "terminal", turns: [{ action: "ls", observation: "a\nb" }], data: [row, row] };
    const path = write("one-record.json", trajectory, 2);
    // The shape is there (one container key holding rows another reader reads), yet the document is a canonical record.
    expect(wrappedRowsInHead(readFileSync(path, "utf8"))?.key).toBe("data");
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("canonical-jsonl");
    expect(detection.kind === "format" && detection.layout).toBeUndefined();
    expect((await recordLayout(path)).kind).toBe("document");
    if (detection.kind !== "format") return;
    const items = await readItems(detection.reader, path);
    expect(items.map((item) => item.kind)).toEqual(["trajectory"]);
    expect(itemSource(items[0] as ReadItem)).toMatchObject({ line: 1 });
  });

  it("refuses, with the reason, rows that no reader recognizes and rows whose reader reads no arrays", async () => {
    const unknown = await detectFormat(write("unknown-rows.json", { version: "1.0", data: [{ foo: 1 }, { foo: 2 }] }, 2));
    expect(unknown.kind).toBe("unrecognized");
    expect(unknown.kind === "unrecognized" && unknown.reason).toContain(
      'its "data" member is a JSON array of 2 objects whose keys are foo; offered to the sniffs as rows, one per JSONL line, they were not recognized either',
    );
    const events = jsonlRows("data/demo/search/agent-trace.jsonl");
    const search = await detectFormat(write("search-rows.json", { version: "1.0", data: events }, 2));
    expect(search.kind === "unrecognized" && search.reason).toMatch(
      /^the file is a JSON document whose "data" member is a JSON array of \d+ objects .*: its elements look like search-api records, but the search-api reader does not read JSON arrays; write the elements one per line \(e\.g\. jq -c '\.data\[\]'\)/,
    );
  });

  it("quarantines a broken document once after the rows before the break, and an element over input.max_line_bytes", async () => {
    const rows = jsonlRows(SWE_ROWS);
    const path = join(dir, "broken.json");
    writeFileSync(path, `{"version": "1.0", "data": [${JSON.stringify(rows[0])}, ${JSON.stringify(rows[1]).slice(0, 200)}`);
    const items = await readItems(sweSmithReader, path);
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "quarantine"]);
    const broken = items[1];
    expect(broken?.kind === "quarantine" && broken.entry.reason).toMatch(
      /^the JSON document breaks after element 0 of its "data" array: invalid JSON/,
    );
    const whole = write("limit.json", { version: "1.0", data: rows }, 2);
    const sizes = rows.map((row) => JSON.stringify(row).length);
    const limit = Math.min(...sizes) + 1;
    const limited = await readItems(sweSmithReader, whole, { maxLineBytes: limit });
    expect(limited.length).toBe(rows.length);
    const over = limited.filter((item) => item.kind === "quarantine");
    expect(over.length).toBe(sizes.filter((size) => size > limit).length);
    for (const item of over)
      expect(item.kind === "quarantine" && item.entry.reason).toMatch(/^"data" element \d is \d+ bytes as one JSON line, over the/);
  });
});

describe('pandas to_json(orient="split")', () => {
  const dir = tempDir("lwm-wrapped-split-");

  it("zips each data array with the columns: the same records as the frame's rows as JSONL", async () => {
    const rows = jsonlRows(SWE_ROWS);
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    // A DataFrame holds every column in every row (null where a row lacks it).
    const frame = rows.map((row) => Object.fromEntries(columns.map((name) => [name, row[name] ?? null])));
    const lines = join(dir, "frame.jsonl");
    writeFileSync(lines, jsonlText(frame));
    const split = join(dir, "frame-split.json");
    const data = frame.map((row) => columns.map((name) => row[name]));
    writeFileSync(split, JSON.stringify({ columns, index: frame.map((_, i) => i), data }));
    expect(await recordLayout(split)).toEqual({ kind: "wrapped", key: "data", columns });
    const detection = await detectFormat(split);
    expect(detection).toMatchObject({ kind: "format", layout: "wrapped-rows" });
    expect(detection.kind === "format" && detection.reader.name).toBe("swe-smith");
    const items = await readItems(sweSmithReader, split);
    expect(items.map((item) => item.kind)).toEqual(frame.map(() => "trajectory"));
    expect(withoutSources(items)).toEqual(withoutSources(await readItems(sweSmithReader, lines)));
    // Negative control: data arrays whose length is not the columns' are not rows.
    const ragged = join(dir, "ragged-split.json");
    writeFileSync(ragged, JSON.stringify({ columns: columns.slice(1), index: [0, 1], data }));
    expect((await recordLayout(ragged)).kind).not.toBe("wrapped");
  });
});
