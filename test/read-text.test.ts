/**
 * Plain text document readers: text-jsonl (FineWeb/Dolma/RedPajama JSONL, plain, gzip or zstd)
 * and text-parquet (FineWeb-style Parquet, one row group at a time). Every fixture is made here,
 * in a temp folder. Each source record yields one item: a document, or a located quarantine entry.
 */
import { createHash } from "node:crypto";
import { openAsBlob, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, zstdCompressSync } from "node:zlib";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";
import type { QuarantineEntry } from "../src/core/errors.ts";
import type { TextDocument } from "../src/core/text-document.ts";
import { isParquetFile } from "../src/read/parquet-rows.ts";
import { itemSource, type ReadItem } from "../src/read/reader.ts";
import { detectFormat, detectFromHead, PROBE_LINES, readHead } from "../src/read/registry.ts";
import { textJsonlReader } from "../src/read/text-jsonl.ts";
import { textParquetReader } from "../src/read/text-parquet.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { THIRD_PARTY_DIR } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 20 };

const documents = (items: ReadItem[]): TextDocument[] => items.flatMap((i) => (i.kind === "document" ? [i.document] : []));
const quarantined = (items: ReadItem[]): QuarantineEntry[] => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const hashId = (text: string) => `text-${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
const lines = (...records: unknown[]) => `${records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n")}\n`;

/** FineWeb's row layout (the fields its JSONL and Parquet dumps carry). */
function fineWebRow(i: number) {
  return {
    text: `Document ${i}. The Rhine flows from the Alps to the North Sea; paragraph ${i} says more about it.`,
    id: `<urn:uuid:00000000-0000-0000-0000-${String(i).padStart(12, "0")}>`,
    dump: "CC-MAIN-2024-10",
    url: `https://example.org/page/${i}`,
    date: "2024-02-21T10:00:00Z",
    language: "en",
    language_score: 0.97,
    token_count: 20 + i,
  };
}

describe("text-jsonl reader", () => {
  const rows = Array.from({ length: 5 }, (_, i) => fineWebRow(i));

  it("reads plain, .gz and .zst FineWeb JSONL to the same documents, with their ids and lines", async () => {
    const dir = tempDir();
    const plain = lines(rows[0], "", ...rows.slice(1));
    writeFileSync(join(dir, "a.jsonl"), plain);
    writeFileSync(join(dir, "a.jsonl.gz"), gzipSync(plain));
    writeFileSync(join(dir, "a.jsonl.zst"), zstdCompressSync(plain));
    const read = async (name: string) => collect(textJsonlReader.read(join(dir, name), OPTIONS));
    const items = await read("a.jsonl");
    expect(items.map((item) => item.kind)).toEqual(Array(5).fill("document"));
    const docs = documents(items);
    expect(docs.map((d) => d.id)).toEqual(rows.map((r) => r.id));
    expect(docs.map((d) => d.text)).toEqual(rows.map((r) => r.text));
    // The blank line 2 is no record; line numbers still count it.
    expect(docs.map((d) => d.source.line)).toEqual([1, 3, 4, 5, 6]);
    expect(docs[0]?.source).toEqual({ uri: join(dir, "a.jsonl"), line: 1, offset: 0, format: "text-jsonl" });
    const content = (list: TextDocument[]) => list.map(({ id, text, source }) => ({ id, text, line: source.line }));
    for (const name of ["a.jsonl.gz", "a.jsonl.zst"]) expect(content(documents(await read(name))), name).toEqual(content(docs));
  });

  it("without an id, names a document text- + 16 hex of its text's sha256; numeric ids keep every digit", async () => {
    const dir = tempDir();
    const path = join(dir, "dolma.jsonl");
    writeFileSync(
      path,
      lines(
        { text: "no id at all", source: "wiki" },
        { text: "a null id", id: null },
        { text: "a blank id", id: "  " },
        { text: "no id at all", meta: { redpajama_set_name: "RedPajamaWikipedia" } },
        '{"text":"a 19-digit id","id":12345678901234567890}',
        { text: "a small numeric id", id: 42 },
        { text: "", id: "empty-text" },
      ),
    );
    const docs = documents(await collect(textJsonlReader.read(path, OPTIONS)));
    expect(docs.map((d) => d.id)).toEqual([
      hashId("no id at all"),
      hashId("a null id"),
      hashId("a blank id"),
      hashId("no id at all"),
      "12345678901234567890",
      "42",
      // An empty text is normalization's to quarantine, not the reader's.
      "empty-text",
    ]);
    expect(hashId("no id at all")).toMatch(/^text-[0-9a-f]{16}$/);
  });

  it("quarantines each bad line with its line, field and reason: records in = documents + quarantined", async () => {
    const dir = tempDir();
    const path = join(dir, "bad.jsonl");
    const keys = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, i]));
    writeFileSync(
      path,
      lines(
        rows[0],
        '{"text": "cut off',
        '["an", "array"]',
        { url: "https://example.org", body: "the text is under another name" },
        keys,
        { text: 42, id: "number-text" },
        { text: null, id: "null-text" },
        { text: ["a", "b"] },
        { text: "fine text", id: true },
        rows[1],
      ),
    );
    const items = await collect(textJsonlReader.read(path, OPTIONS));
    expect(items).toHaveLength(10);
    expect(documents(items).map((d) => d.source.line)).toEqual([1, 10]);
    const bad = quarantined(items);
    expect(bad.map((q) => [q.source.line, q.stage, q.field])).toEqual([
      [2, "read", undefined],
      [3, "read", undefined],
      [4, "read", "text"],
      [5, "read", "text"],
      [6, "read", "text"],
      [7, "read", "text"],
      [8, "read", "text"],
      [9, "read", "id"],
    ]);
    expect(bad.every((q) => q.source.uri === path && q.source.format === "text-jsonl")).toBe(true);
    expect(bad[0]?.reason).toMatch(/^invalid JSON/);
    expect(bad[1]?.reason).toBe('expected a JSON object with a "text" field, got an array');
    expect(bad[2]?.reason).toBe('no "text" field; the object has keys url, body');
    expect(bad[3]?.reason).toBe('no "text" field; the object has keys k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, … (15 in all)');
    expect(bad[4]).toMatchObject({ id: "number-text", reason: "text is a number, not a string" });
    expect(bad[5]).toMatchObject({ id: "null-text", reason: "text is null, not a string" });
    expect(bad[6]?.reason).toBe("text is an array, not a string");
    expect(bad[7]?.reason).toBe("id is a boolean, not a string or a number");
    expect(bad.every((q) => q.excerpt !== undefined)).toBe(true);
  });

  it("reads a binary blob given as text-jsonl as one quarantine entry for the file, without throwing", async () => {
    const dir = tempDir();
    const path = join(dir, "blob.jsonl");
    // Deterministic noise with some newlines: a Parquet or image file someone named .jsonl.
    let state = 7;
    const bytes = Buffer.from(
      Array.from({ length: 20_000 }, () => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state >> 23;
      }),
    );
    writeFileSync(path, bytes);
    expect(bytes.toString("latin1").split("\n").length).toBeGreaterThan(10);
    // Not a file of lines at all: one entry naming the format and what the file is, not one per "line".
    const items = await collect(textJsonlReader.read(path, OPTIONS));
    expect(items).toHaveLength(1);
    expect(items[0]?.kind === "quarantine" && items[0].entry.source.line).toBe(1);
    expect(quarantined(items)[0]?.reason).toMatch(/^format text-jsonl reads one JSON object per line .* but this file is binary data/);
  });

  it("is splittable: byte ranges of a file read each record exactly once", async () => {
    const dir = tempDir();
    const path = join(dir, "split.jsonl");
    const text = lines(...Array.from({ length: 20 }, (_, i) => fineWebRow(i)));
    writeFileSync(path, text);
    const size = Buffer.byteLength(text);
    const cuts = [0, 333, 1000, 1001, size];
    const parts: TextDocument[] = [];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const range = { start: cuts[i] as number, end: cuts[i + 1] as number };
      parts.push(...documents(await collect(textJsonlReader.read(path, { ...OPTIONS, range }))));
    }
    expect(textJsonlReader.splittable).toBe(true);
    expect(parts.map((d) => d.id)).toEqual(Array.from({ length: 20 }, (_, i) => fineWebRow(i).id));
  });
});

/** Writes columns as a Parquet file with `rowGroupRows` rows per row group (uncompressed, plain: the bytes are findable). */
function writeParquet(path: string, columns: Record<string, arrow.Vector>, rowGroupRows: number): void {
  const table = new arrow.Table(columns);
  const properties = new parquet.WriterPropertiesBuilder()
    .setMaxRowGroupSize(rowGroupRows)
    .setCompression(parquet.Compression.UNCOMPRESSED)
    .setDictionaryEnabled(false)
    .build();
  writeFileSync(path, parquet.writeParquet(parquet.Table.fromIPCStream(arrow.tableToIPC(table, "stream")), properties));
}

function fineWebColumns(count: number, text = (i: number) => fineWebRow(i).text): Record<string, arrow.Vector> {
  const rows = Array.from({ length: count }, (_, i) => fineWebRow(i));
  return {
    text: arrow.vectorFromArray(
      rows.map((_, i) => text(i)),
      new arrow.Utf8(),
    ),
    id: arrow.vectorFromArray(
      rows.map((r) => r.id),
      new arrow.Utf8(),
    ),
    dump: arrow.vectorFromArray(
      rows.map((r) => r.dump),
      new arrow.Utf8(),
    ),
    url: arrow.vectorFromArray(
      rows.map((r) => r.url),
      new arrow.Utf8(),
    ),
    token_count: arrow.vectorFromArray(
      rows.map((r) => BigInt(r.token_count)),
      new arrow.Int64(),
    ),
  };
}

/** Byte span of each row group's column chunks, in file order (chunks follow the "PAR1" magic back to back). */
async function rowGroupSpans(path: string): Promise<{ start: number; end: number }[]> {
  const file = await parquet.ParquetFile.fromFile(await openAsBlob(path));
  try {
    const metadata = file.metadata();
    const spans: { start: number; end: number }[] = [];
    let start = 4;
    for (let g = 0; g < metadata.numRowGroups(); g++) {
      const size = metadata
        .rowGroup(g)
        .columns()
        .reduce((sum, column) => sum + column.compressedSize(), 0);
      spans.push({ start, end: start + size });
      start += size;
    }
    return spans;
  } finally {
    file.free();
  }
}

/** Overwrites the start of a row group's first column chunk (its page header) with garbage, in place. */
function damageRowGroup(path: string, span: { start: number; end: number }): void {
  const bytes = readFileSync(path);
  bytes.fill(0xab, span.start, Math.min(span.end, span.start + 48));
  writeFileSync(path, bytes);
}

describe("text-parquet reader", () => {
  it("reads a FineWeb-style file, several row groups, to one document per row with its id and row", async () => {
    const dir = tempDir();
    const path = join(dir, "000_00000.parquet");
    writeParquet(path, fineWebColumns(10), 3);
    expect(await rowGroupSpans(path)).toHaveLength(4);
    const items = await collect(textParquetReader.read(path, OPTIONS));
    const docs = documents(items);
    expect(docs).toHaveLength(10);
    expect(docs.map((d) => d.id)).toEqual(Array.from({ length: 10 }, (_, i) => fineWebRow(i).id));
    expect(docs.map((d) => d.text)).toEqual(Array.from({ length: 10 }, (_, i) => fineWebRow(i).text));
    // Each row's offset is its row group's (how byte-range tasks assign it): groups of 3 rows here.
    expect(docs.map(({ source: { offset: _offset, ...source } }) => source)).toEqual(
      Array.from({ length: 10 }, (_, row) => ({ uri: path, row, format: "text-parquet" })),
    );
    const spans = await rowGroupSpans(path);
    expect(docs.map((d) => d.source.offset)).toEqual(Array.from({ length: 10 }, (_, row) => spans[Math.floor(row / 3)]?.start));
    // So a big file is cut into byte-range tasks, each reading the row groups that start in its range.
    expect(textParquetReader.splittable).toBe(true);
  });

  it("names documents by their text's hash without an id column, or where the id is null; integer ids read exactly", async () => {
    const dir = tempDir();
    const noId = join(dir, "no-id.parquet");
    writeParquet(noId, { text: arrow.vectorFromArray(["alpha", "beta"], new arrow.Utf8()) }, 1);
    expect(documents(await collect(textParquetReader.read(noId, OPTIONS))).map((d) => d.id)).toEqual([hashId("alpha"), hashId("beta")]);

    const intId = join(dir, "int-id.parquet");
    writeParquet(
      intId,
      {
        text: arrow.vectorFromArray(["alpha", "beta", "gamma"], new arrow.Utf8()),
        id: arrow.vectorFromArray([12345678901234567890n, null, 7n], new arrow.Uint64()),
      },
      2,
    );
    expect(documents(await collect(textParquetReader.read(intId, OPTIONS))).map((d) => d.id)).toEqual([
      "12345678901234567890",
      hashId("beta"),
      "7",
    ]);
  });

  it("quarantines null texts and binary texts that are not UTF-8, at their rows; UTF-8 binary reads as text", async () => {
    const dir = tempDir();
    const nulls = join(dir, "nulls.parquet");
    writeParquet(
      nulls,
      {
        text: arrow.vectorFromArray(["one", null, "three", null], new arrow.Utf8()),
        id: arrow.vectorFromArray(["a", "b", "c", "d"], new arrow.Utf8()),
      },
      3,
    );
    const items = await collect(textParquetReader.read(nulls, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["document", "quarantine", "document", "quarantine"]);
    expect(quarantined(items)).toEqual([
      {
        source: { uri: nulls, row: 1, offset: expect.any(Number), format: "text-parquet" },
        id: "b",
        stage: "read",
        field: "text",
        reason: "text is null",
      },
      {
        source: { uri: nulls, row: 3, offset: expect.any(Number), format: "text-parquet" },
        id: "d",
        stage: "read",
        field: "text",
        reason: "text is null",
      },
    ]);

    const binary = join(dir, "binary.parquet");
    const utf8 = new TextEncoder();
    const values = [utf8.encode("plain bytes"), Uint8Array.from([0xff, 0xfe, 0x41]), utf8.encode("Köln ✓"), Uint8Array.from([0xc3])];
    writeParquet(binary, { text: arrow.vectorFromArray(values, new arrow.Binary()) }, 2);
    const read = await collect(textParquetReader.read(binary, OPTIONS));
    expect(documents(read).map((d) => [d.source.row, d.text])).toEqual([
      [0, "plain bytes"],
      [2, "Köln ✓"],
    ]);
    expect(quarantined(read).map((q) => [q.source.row, q.field, q.reason])).toEqual([
      [1, "text", "text is binary, not UTF-8 text"],
      [3, "text", "text is binary, not UTF-8 text"],
    ]);
  });

  it("quarantines every row of a text column that holds no strings, naming its type", async () => {
    const dir = tempDir();
    const path = join(dir, "numbers.parquet");
    writeParquet(
      path,
      { text: arrow.vectorFromArray([1, 2, 3], new arrow.Int32()), url: arrow.vectorFromArray(["u1", "u2", "u3"], new arrow.Utf8()) },
      2,
    );
    const items = await collect(textParquetReader.read(path, OPTIONS));
    expect(items).toHaveLength(3);
    expect(quarantined(items).map((q) => [q.source.row, q.field, q.reason])).toEqual([
      [0, "text", "text column is Int32, not a string"],
      [1, "text", "text column is Int32, not a string"],
      [2, "text", "text column is Int32, not a string"],
    ]);
  });

  it("a file without a text column is one quarantine entry naming its columns; a non-Parquet file is one too", async () => {
    const dir = tempDir();
    const path = join(dir, "no-text.parquet");
    const columns = fineWebColumns(4);
    writeParquet(path, { content: columns.text as arrow.Vector, id: columns.id as arrow.Vector, url: columns.url as arrow.Vector }, 2);
    expect(await collect(textParquetReader.read(path, OPTIONS))).toEqual([
      {
        kind: "quarantine",
        entry: {
          source: { uri: path, format: "text-parquet" },
          stage: "read",
          field: "text",
          reason: 'no "text" column; the file has columns content, id, url',
        },
      },
    ]);

    const jsonl = join(dir, "rows.jsonl");
    writeFileSync(jsonl, lines(fineWebRow(0)));
    const items = await collect(textParquetReader.read(jsonl, OPTIONS));
    expect(items).toHaveLength(1);
    expect(quarantined(items)[0]).toMatchObject({ source: { uri: jsonl, format: "text-parquet" }, stage: "read" });
    expect(quarantined(items)[0]?.reason).toMatch(/^cannot read the file as Parquet: /);
  });

  it("a damaged row group costs only its own rows: the groups around it are read", async () => {
    const dir = tempDir();
    const path = join(dir, "damaged.parquet");
    writeParquet(
      path,
      fineWebColumns(9, (i) => `${fineWebRow(i).text} `.repeat(20)),
      3,
    );
    const spans = await rowGroupSpans(path);
    damageRowGroup(path, spans[1] as { start: number; end: number });
    const items = await collect(textParquetReader.read(path, OPTIONS));
    expect(items.map((item) => (item.kind === "document" ? item.document.source.row : item.kind))).toEqual([
      0,
      1,
      2,
      "quarantine",
      "quarantine",
      "quarantine",
      6,
      7,
      8,
    ]);
    const bad = quarantined(items);
    expect(bad.map((q) => q.source.row)).toEqual([3, 4, 5]);
    for (const q of bad) expect(q.reason).toMatch(/^row group 1 \(rows 3–5\) could not be decoded: /);
  });

  it("decodes one row group at a time: a group damaged after the first document was read is found damaged", async () => {
    const dir = tempDir();
    const path = join(dir, "lazy.parquet");
    writeParquet(
      path,
      fineWebColumns(12, (i) => `${fineWebRow(i).text} `.repeat(20)),
      4,
    );
    const spans = await rowGroupSpans(path);
    const reading = textParquetReader.read(path, OPTIONS);
    const first = await reading.next();
    expect(first.value).toMatchObject({ kind: "document", document: { source: { row: 0 } } });
    // Had the reader decoded past row group 0 before handing out row 0, group 1 would still read fine.
    damageRowGroup(path, spans[1] as { start: number; end: number });
    const rest = await collect(reading);
    const items = [first.value as ReadItem, ...rest];
    // One item per row, in order; the rest of group 0 was decoded already, group 1 only now.
    expect(items.map((item) => itemSource(item).row)).toEqual(Array.from({ length: 12 }, (_, row) => row));
    expect(items.slice(0, 4).map((item) => item.kind)).toEqual(Array(4).fill("document"));
    expect(items.slice(4, 8).map((item) => item.kind)).toEqual(Array(4).fill("quarantine"));
    for (const q of quarantined(items.slice(4, 8))) expect(q.reason).toMatch(/^row group 1 \(rows 4–7\) could not be decoded: /);
  });

  it("stops early without leaving its decoder running", async () => {
    const dir = tempDir();
    const path = join(dir, "early.parquet");
    writeParquet(path, fineWebColumns(6), 2);
    for await (const item of textParquetReader.read(path, OPTIONS)) {
      expect(item.kind).toBe("document");
      break;
    }
  });
});

describe("detection of text inputs", () => {
  it("picks text-jsonl for FineWeb-like JSONL (plain or compressed) and text-parquet for a Parquet file", async () => {
    const dir = tempDir();
    const rows = Array.from({ length: 4 }, (_, i) => fineWebRow(i));
    const head = lines(...rows);
    const detection = detectFromHead(head, "x.jsonl");
    expect(detection.kind === "format" && detection.reader.name).toBe("text-jsonl");
    writeFileSync(join(dir, "fw.jsonl.zst"), zstdCompressSync(head));
    writeFileSync(join(dir, "dolma.json.gz"), gzipSync(lines({ id: "d1", text: "x", source: "pes2o", added: "2023" })));
    writeParquet(join(dir, "fw.parquet"), fineWebColumns(4), 2);
    const names = async (file: string) => {
      const found = await detectFormat(join(dir, file));
      return found.kind === "format" ? found.reader.name : found.kind;
    };
    expect(await names("fw.jsonl.zst")).toBe("text-jsonl");
    expect(await names("dolma.json.gz")).toBe("text-jsonl");
    expect(await names("fw.parquet")).toBe("text-parquet");
  });

  it("claims a first document longer than the head only by its leading text key, never with a trajectory key in sight", () => {
    const long = JSON.stringify({ text: "word ".repeat(20_000), id: "long" }).slice(0, 64 << 10);
    expect(textJsonlReader.sniff(long, "x.jsonl")).toBe(true);
    expect(textJsonlReader.sniff(JSON.stringify({ id: 7, text: "word ".repeat(20_000) }).slice(0, 1000), "x.jsonl")).toBe(true);
    const trajectory = JSON.stringify({ text: "x ".repeat(400), turns: [{ action: "ls", observation: "word ".repeat(2000) }] });
    expect(textJsonlReader.sniff(trajectory.slice(0, 2000), "x.jsonl")).toBe(false);
    expect(textJsonlReader.sniff(JSON.stringify({ messages: [], text: "word ".repeat(20_000) }).slice(0, 1000), "x.jsonl")).toBe(false);
  });

  it("does not claim records that carry a trajectory key, or whose text is not a string", () => {
    for (const key of ["turns", "messages", "trajectory", "history", "steps", "events", "conversations", "observation", "action"])
      expect(textJsonlReader.sniff(lines({ text: "t", [key]: [] }), "x.jsonl"), key).toBe(false);
    for (const key of ["info", "instance_id", "episode", "domain"])
      expect(textJsonlReader.sniff(lines({ text: "t", [key]: "v" }), "x.jsonl"), key).toBe(false);
    expect(textJsonlReader.sniff(lines({ type: "extract", url: "https://example.org", text: "a page" }), "x.jsonl")).toBe(false);
    expect(textJsonlReader.sniff(lines({ type: "capture", t: 0.1, text: "user@box:~$ " }), "x.jsonl")).toBe(false);
    expect(textJsonlReader.sniff(lines({ text: 3 }), "x.jsonl")).toBe(false);
    expect(textJsonlReader.sniff(lines([{ text: "t" }]), "x.jsonl")).toBe(false);
    expect(textJsonlReader.sniff("PAR1\u0015\u0004", "x.parquet")).toBe(false);
    expect(textParquetReader.sniff(lines({ text: "t" }), "x.parquet")).toBe(false);
  });

  it("never claims a recorded, hand-made or third-party trajectory fixture, from any probed line", async () => {
    const files = globSync(["data/demo/**/*", "test/fixtures/**/*", `${THIRD_PARTY_DIR}/**/*`], {
      cwd: ROOT,
      absolute: true,
      onlyFiles: true,
      // Not trajectories: the text rows the Hugging Face datasets fixtures are compared with.
      ignore: ["**/*.md", "**/fuzz-crashers/**", "**/golden/**", "**/hf-datasets/text-rows.jsonl"],
    });
    expect(files.length).toBeGreaterThan(60);
    let probed = 0;
    for (const file of files) {
      // A Parquet file is told by its columns and rows, not by its head as text (detectFormat).
      if (await isParquetFile(file)) {
        const detection = await detectFormat(file);
        if (detection.kind === "format") expect(detection.reader.name, file).not.toMatch(/^text-/);
        continue;
      }
      const head = await readHead(file);
      const detection = detectFromHead(head, file);
      if (detection.kind === "format") expect(detection.reader.name, file).not.toMatch(/^text-/);
      // Every line detection may probe, on its own: text-jsonl says no to each.
      let start = 0;
      for (let seen = 0; start < head.length && seen < PROBE_LINES; ) {
        const end = head.indexOf("\n", start);
        const from = head.slice(start);
        if (head.slice(start, end === -1 ? head.length : end).trim() !== "") {
          seen += 1;
          probed += 1;
          expect(textJsonlReader.sniff(from, file), `${file} from offset ${start}`).toBe(false);
          expect(textParquetReader.sniff(from, file), `${file} from offset ${start}`).toBe(false);
        }
        if (end === -1) break;
        start = end + 1;
      }
    }
    expect(probed).toBeGreaterThan(100);
  });
});
