/**
 * Parquet files of dataset rows (issue 34: the Hub's agent corpora ship as Parquet whose rows are
 * the objects the JSONL row readers read): detection by the rows, reading row by row, byte-range
 * tasks by row group, damage, and a run end to end. The Parquet files are written here by the
 * Python reference environment with the Hub's own `datasets` library (`Dataset.from_list(rows)
 * .to_parquet(path)`: nested list<struct> columns), from the project's own fixtures.
 */
import { execFile, spawnSync } from "node:child_process";
import { openAsBlob, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import * as parquet from "parquet-wasm";
import { describe, expect, it } from "vitest";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import { itemSource, type Reader, type ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { sweSmithReader } from "../src/read/swe-smith.ts";
import { textParquetReader } from "../src/read/text-parquet.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
const CLI = join(ROOT, "bin/lwm-data.js");
const exec = promisify(execFile);

/**
 * Writes the JSON object lines of each job's `src` as Parquet with `datasets`, `group` rows per row
 * group. As a Hub dataset holds them: every row has every column (a key a row lacks is null), a
 * column whose values pyarrow cannot type as one (an `arguments` string in one message, an object
 * in the next) is stored as JSON text (as Toucan-1.5M stores `messages`), booleans mixed with
 * integers as integers. The rows as stored are written beside it as `<out>.jsonl`: the JSONL the
 * Parquet must read like. Prints, per job, what had to change for pyarrow. Every file in one
 * process: importing `datasets` takes seconds of CPU, which each file paid again in a process of its own.
 */
const WRITER = `
import json, sys
import datasets, pyarrow as pa

def write(src, out, group):
    rows = []
    for line in open(src):
        if line.strip():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                rows.append(value)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    changed = []
    if any(set(r) != set(keys) for r in rows):
        changed.append("missing keys as null")
    rows = [{k: r.get(k) for k in keys} for r in rows]
    for k in keys:
        try:
            pa.array([r[k] for r in rows])
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            values = [r[k] for r in rows if r[k] is not None]
            if all(isinstance(v, (bool, int)) for v in values):
                changed.append(k + " as integers")
                for r in rows:
                    r[k] = None if r[k] is None else int(r[k])
            else:
                changed.append(k + " as JSON text")
                for r in rows:
                    if r[k] is not None and not isinstance(r[k], str):
                        r[k] = json.dumps(r[k])
    with open(out + ".jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\\n")
    datasets.Dataset.from_list(rows).to_parquet(out, batch_size=group)
    return changed

print(json.dumps([write(job["src"], job["out"], job["group"]) for job in json.loads(sys.argv[1])]))
`;

interface RowsParquetJob {
  src: string;
  out: string;
  group: number;
}

interface RowsParquet {
  path: string;
  /** What had to change for pyarrow. */
  changed: string[];
  /** The rows as stored, one compact JSON object per line (as a JSON array's elements are read). */
  jsonl: string;
}

function writeRowsParquets(jobs: RowsParquetJob[]): RowsParquet[] {
  const python = ensurePythonEnv();
  const result = spawnSync(python, ["-c", WRITER, JSON.stringify(jobs)], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`writing ${jobs.map((job) => job.out).join(", ")} failed: ${result.stderr}`);
  const changed = JSON.parse(result.stdout.trim().split("\n").pop() as string) as string[][];
  return jobs.map(({ out }, i) => {
    const jsonl = `${out}.compact.jsonl`;
    const lines = readFileSync(`${out}.jsonl`, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.stringify(JSON.parse(line)));
    writeFileSync(jsonl, `${lines.join("\n")}\n`);
    return { path: out, changed: changed[i] as string[], jsonl };
  });
}

/** What a read gives, its sources aside (a Parquet row is named by row, a line by line). */
const content = (items: ReadItem[]) =>
  items.map((item) => {
    if (item.kind === "trajectory") {
      const { source: _source, ...rest } = item.trajectory;
      return rest;
    }
    if (item.kind === "quarantine") {
      const { source: _source, excerpt: _excerpt, ...rest } = item.entry;
      return rest;
    }
    return item.kind;
  });

/** Each row group's byte span (the offsets byte-range tasks use: after the magic, groups in a row). */
async function rowGroupSpans(path: string): Promise<{ start: number; end: number; rows: number }[]> {
  const file = await parquet.ParquetFile.fromFile(await openAsBlob(path));
  try {
    const metadata = file.metadata();
    const spans: { start: number; end: number; rows: number }[] = [];
    let start = 4;
    for (let g = 0; g < metadata.numRowGroups(); g++) {
      const group = metadata.rowGroup(g);
      const size = group.compressedSize();
      spans.push({ start, end: start + size, rows: group.numRows() });
      start += size;
    }
    return spans;
  } finally {
    file.free();
  }
}

const CHAT = "test/fixtures/handmade/chat-tool-rows";
const CASES: [string, Reader, string][] = [
  ["hermes", chatToolRowsReader, `${CHAT}/hermes.jsonl`],
  ["sharegpt-llamafactory", chatToolRowsReader, `${CHAT}/sharegpt-llamafactory.jsonl`],
  ["openai-functions", chatToolRowsReader, `${CHAT}/openai-functions.jsonl`],
  ["swe-smith", sweSmithReader, "data/demo/swe/swe-smith__ft.jsonl"],
];

describe("Parquet files of rows (issue 34)", () => {
  const dir = tempDir("lwm-parquet-rows-");

  let written: Map<string, RowsParquet> | undefined;
  /** The Parquet files the tests below read, by name: all written on first use, by one Python process. */
  function rowsParquet(name: string): RowsParquet {
    written ??= (() => {
      // Six hermes rows (the two of the fixture, three times, each with its own id): 2 rows per group.
      const hermes6 = join(dir, "hermes6.jsonl");
      const rows = readFileSync(join(ROOT, CHAT, "hermes.jsonl"), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const six = [0, 1, 2].flatMap((copy) => rows.map((row) => ({ ...row, id: `${String(row.id)}-${copy}` })));
      writeFileSync(hermes6, `${six.map((row) => JSON.stringify(row)).join("\n")}\n`);
      const jobs: [string, RowsParquetJob][] = [
        ...CASES.map(([name, , fixture]): [string, RowsParquetJob] => [
          name,
          { src: join(ROOT, fixture), out: join(dir, `${name}.parquet`), group: 1 },
        ]),
        ["openai-swe", { src: join(ROOT, CHAT, "openai-swe.jsonl"), out: join(dir, "openai-swe.parquet"), group: 1 }],
        ["swe-smith-exact", { src: join(ROOT, "data/demo/swe/swe-smith__ft.jsonl"), out: join(dir, "swe-smith-exact.parquet"), group: 1 }],
        ["hermes6", { src: hermes6, out: join(dir, "hermes6.parquet"), group: 2 }],
        ["damaged", { src: hermes6, out: join(dir, "damaged.parquet"), group: 2 }],
        // The end-to-end run's input, alone in its folder.
        [
          "functions",
          { src: join(ROOT, CHAT, "openai-functions.jsonl"), out: join(tempDir("lwm-parquet-rows-run-"), "functions.parquet"), group: 1 },
        ],
      ];
      const files = writeRowsParquets(jobs.map(([, job]) => job));
      return new Map(jobs.map(([name], i) => [name, files[i] as RowsParquet]));
    })();
    const file = written.get(name);
    if (!file) throw new Error(`no Parquet file named ${name}`);
    return file;
  }

  for (const [name, reader] of CASES) {
    it(`${name}: detected by its rows as ${reader.name}, read row by row to the same items as its JSONL`, async () => {
      const { path, jsonl } = rowsParquet(name);
      const spans = await rowGroupSpans(path);
      expect(spans.length).toBe(readFileSync(jsonl, "utf8").trim().split("\n").length);
      const detection = await detectFormat(path);
      expect(detection).toMatchObject({ kind: "format", layout: "parquet-rows" });
      expect(detection.kind === "format" && detection.reader.name).toBe(reader.name);
      const fromParquet = await collect(reader.read(path, OPTIONS));
      const fromLines = await collect(reader.read(jsonl, OPTIONS));
      expect(fromParquet.length).toBe(fromLines.length);
      expect(content(fromParquet)).toEqual(content(fromLines));
      // Each row is named by its row and its row group's byte offset (one row per group here).
      expect(fromParquet.map(itemSource)).toEqual(spans.map((span, row) => ({ uri: path, row, offset: span.start, format: reader.name })));
    });
  }

  it("openai-swe (SWE-rebench `trajectory` rows beside SWE-Gym `messages` rows): stored with null columns, reads like its JSONL export", async () => {
    // A Hub dataset mixing both layouts stores the other one's column as null: a null column is absent.
    const { path, changed, jsonl } = rowsParquet("openai-swe");
    expect(changed).toContain("missing keys as null");
    const detection = await detectFormat(path);
    expect(detection).toMatchObject({ kind: "format", layout: "parquet-rows" });
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
    const items = await collect(chatToolRowsReader.read(path, OPTIONS));
    // The row without an id of its own gets a hash of its text as id: a struct's keys come in its
    // schema's order (the union over the rows), not the line's, so that hash differs; all else is equal.
    const noHash = (list: ReadItem[]) =>
      content(list).map((item) =>
        typeof item === "object" && "turns" in item ? { ...item, id: item.id.replace(/-[0-9a-f]{16}$/, "") } : item,
      );
    const lines = await collect(chatToolRowsReader.read(jsonl, OPTIONS));
    expect(noHash(items)).toEqual(noHash(lines));
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory"]);
    expect(items[1]?.kind === "trajectory" && items[1].trajectory.id).toMatch(/^textutil__slugify-12-[0-9a-f]{16}$/);
  });

  it("rows that need no change read exactly as the fixture's own lines: ids, turns, meta", async () => {
    const { path, changed } = rowsParquet("swe-smith-exact");
    expect(changed).toEqual([]);
    const fromParquet = await collect(sweSmithReader.read(path, OPTIONS));
    const fromFixture = await collect(sweSmithReader.read(join(ROOT, "data/demo/swe/swe-smith__ft.jsonl"), OPTIONS));
    expect(fromParquet.every((item) => item.kind === "trajectory")).toBe(true);
    expect(content(fromParquet)).toEqual(content(fromFixture));
    // Own ids (the attempt's), not made-up ones.
    expect(fromParquet.map((item) => item.kind === "trajectory" && item.trajectory.id)).toEqual(
      fromFixture.map((item) => item.kind === "trajectory" && item.trajectory.id),
    );
  });

  it("a 3-row-group file cut into byte ranges gives the same items as read whole, each row once", async () => {
    // Six hermes rows (the two of the fixture, three times, each with its own id): 2 rows per group.
    const { path } = rowsParquet("hermes6");
    const spans = await rowGroupSpans(path);
    expect(spans.map((span) => span.rows)).toEqual([2, 2, 2]);
    const whole = await collect(chatToolRowsReader.read(path, OPTIONS));
    expect(whole.map((item) => item.kind)).toEqual(Array(6).fill("trajectory"));
    const size = statSync(path).size;
    const [g0, g1, g2] = spans as unknown as [{ start: number }, { start: number }, { start: number }];
    const cutSets = [
      [0, g1.start, g2.start, size],
      [0, g1.start - 1, g1.start + 1, size],
      [0, g0.start + 1, g2.start + 7, size],
      [0, 1, 2, 3, size],
      [0, Math.floor(size / 2), size],
    ];
    for (const cuts of cutSets) {
      const parts: ReadItem[] = [];
      for (let i = 0; i + 1 < cuts.length; i++)
        parts.push(
          ...(await collect(
            chatToolRowsReader.read(path, { ...OPTIONS, range: { start: cuts[i] as number, end: cuts[i + 1] as number } }),
          )),
        );
      expect(
        parts.map((item) => itemSource(item).row),
        `cuts ${cuts.join(",")}`,
      ).toEqual([0, 1, 2, 3, 4, 5]);
      expect(parts, `cuts ${cuts.join(",")}`).toEqual(whole);
    }
    // A range holding no group's first byte reads nothing (the bytes after the last group: the footer).
    expect(await collect(chatToolRowsReader.read(path, { ...OPTIONS, range: { start: spans[2]?.end as number, end: size } }))).toEqual([]);
  });

  it("a damaged row group quarantines its own rows with the reason; the others are read", async () => {
    // The same six rows as hermes6.parquet, in a file of its own to damage.
    const { path } = rowsParquet("damaged");
    const spans = await rowGroupSpans(path);
    const bytes = readFileSync(path);
    bytes.fill(0xab, spans[1]?.start, Math.min(spans[1]?.end as number, (spans[1]?.start as number) + 48));
    writeFileSync(path, bytes);
    const items = await collect(chatToolRowsReader.read(path, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory", "quarantine", "quarantine", "trajectory", "trajectory"]);
    for (const item of items.slice(2, 4)) {
      expect(item.kind === "quarantine" && item.entry.reason).toMatch(/^row group 1 \(rows 2–3\) could not be decoded: /);
      expect(item.kind === "quarantine" && item.entry.stage).toBe("read");
    }
  });

  it("a truncated Parquet file is one quarantine entry with a clear reason, for a row reader and for format: auto", async () => {
    const whole = rowsParquet("hermes6").path;
    const path = join(dir, "truncated.parquet");
    writeFileSync(path, readFileSync(whole).subarray(0, Math.floor(statSync(whole).size * 0.6)));
    const items = await collect(chatToolRowsReader.read(path, OPTIONS));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: "quarantine", entry: { source: { uri: path, format: "chat-tool-rows" }, stage: "read" } });
    expect(items[0]?.kind === "quarantine" && items[0].entry.reason).toMatch(
      /^the file starts with the Parquet magic but cannot be read as Parquet: /,
    );
    // Auto: no footer to read rows from; text-parquet (as before this change) reports it once.
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("text-parquet");
    const auto = await collect(textParquetReader.read(path, OPTIONS));
    expect(auto).toHaveLength(1);
    expect(auto[0]?.kind === "quarantine" && auto[0].entry.reason).toMatch(/^cannot read the file as Parquet: /);
  });

  it("a Parquet file with a text column still goes to text-parquet; rows no reader knows are refused naming the columns", async () => {
    const python = ensurePythonEnv();
    const text = join(dir, "fineweb.parquet");
    const other = join(dir, "prices.parquet");
    const script =
      "import sys, pyarrow as pa, pyarrow.parquet as pq\n" +
      "pq.write_table(pa.table({'text': ['alpha', 'beta'], 'id': ['a', 'b'], 'url': ['u1', 'u2']}), sys.argv[1])\n" +
      "pq.write_table(pa.table({'sku': ['x1', 'x2'], 'price': [1.5, 2.0], 'big': pa.array([2**62, -3], pa.int64())}), sys.argv[2])\n";
    const result = spawnSync(python, ["-c", script, text, other], { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    const detection = await detectFormat(text);
    expect(detection.kind === "format" && detection.reader.name).toBe("text-parquet");
    expect(detection.kind === "format" && detection.layout).toBeUndefined();
    const refused = await detectFormat(other);
    expect(refused.kind).toBe("unrecognized");
    expect(refused.kind === "unrecognized" && refused.reason).toContain(
      "the file is a Parquet file of 2 row(s) in 1 row group(s) whose columns are sku, price, big",
    );
    // Its first row as JSON: a 64-bit integer past 2^53 as its exact decimal text.
    expect(refused.kind === "unrecognized" && refused.excerpt).toBe('{"sku":"x1","price":1.5,"big":"4611686018427387904"}');
  });

  it("lwm-data validate names the layout, and a run accounts for every row: records in = samples out + quarantined", async () => {
    const work = dirname(rowsParquet("functions").path);
    // Small tasks: the file is cut into several byte-range tasks, by row group.
    const config = writeConfig(`inputs:\n  - path: functions.parquet\ninput: { task_bytes: 3000 }\noutput: { dir: out }\n`, work);
    const env = { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}` };
    const validate = await exec(process.execPath, [CLI, "validate", config], { env });
    expect(validate.stdout).toMatch(/functions\.parquet .*format=chat-tool-rows \(detected; Parquet rows, read row by row\)/);
    await exec(process.execPath, [CLI, "run", config, "--progress", "none"], { env });
    const manifest = JSON.parse(readFileSync(join(work, "out/manifest.json"), "utf8")) as {
      counts: { records_in: number; samples_out: number; quarantined: number; filtered: number };
      tasks: { count: number };
    };
    expect(manifest.tasks.count).toBeGreaterThan(1);
    expect(manifest.counts.records_in).toBe(4);
    expect(manifest.counts.samples_out).toBe(3);
    expect(manifest.counts.quarantined).toBe(1);
    expect(manifest.counts.records_in).toBe(manifest.counts.samples_out + manifest.counts.quarantined + manifest.counts.filtered);
  });
});

describe("Parquet row values as JSON (probe 8)", () => {
  it("decimals as exact decimal text, times of day as HH:MM:SS, microsecond timestamps with their microseconds", async () => {
    const dir = tempDir();
    const path = join(dir, "types.parquet");
    const script = `
import sys, datetime, decimal, pyarrow as pa, pyarrow.parquet as pq
ts = datetime.datetime(2024, 2, 21, 12, 34, 56, 789123)
pq.write_table(pa.table({
    "price": pa.array([decimal.Decimal("12.34"), decimal.Decimal("-0.05"), None], pa.decimal128(10, 2)),
    "wide": pa.array([decimal.Decimal("-123456789012345678901234567890"), decimal.Decimal("7"), decimal.Decimal("0")], pa.decimal256(40, 0)),
    "at": pa.array([datetime.time(12, 0, 1), datetime.time(0, 0, 0, 500), None], pa.time64("us")),
    "us": pa.array([ts, ts.replace(microsecond=0), None], pa.timestamp("us", tz="UTC")),
    "ns": pa.array([ts, ts.replace(microsecond=789000), None], pa.timestamp("ns")),
}), sys.argv[1])
`;
    const result = spawnSync(ensurePythonEnv(), ["-c", script, path], { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    const { parquetRecordLines } = await import("../src/read/parquet-rows.ts");
    const rows: unknown[] = [];
    for await (const line of parquetRecordLines(path, OPTIONS, "probe")) rows.push(line.kind === "line" ? JSON.parse(line.text) : line);
    expect(rows).toEqual([
      {
        price: "12.34",
        wide: "-123456789012345678901234567890",
        at: "12:00:01",
        us: "2024-02-21T12:34:56.789123Z",
        ns: "2024-02-21T12:34:56.789123Z",
      },
      { price: "-0.05", wide: "7", at: "00:00:00.000500", us: "2024-02-21T12:34:56.000Z", ns: "2024-02-21T12:34:56.789Z" },
      { price: null, wide: "0", at: null, us: null, ns: null },
    ]);
  });
});
