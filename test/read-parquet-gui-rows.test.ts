/**
 * The Hub ships GUI-agent corpora as Parquet (Multimodal-Mind2Web, NNetNav-WA, Android-in-the-Wild
 * and AndroidControl exports): a file of such rows is detected by its first rows and read row by
 * row, and must give what the same rows give as JSONL. The Parquet files are written here by
 * pyarrow from the hand-made fixtures' rows (those whose columns pyarrow types alike).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, readerByName } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
const HANDMADE = join(ROOT, "test/fixtures/handmade");

/** Reads a fixture's rows (JSONL or a JSON array), keeps those pyarrow types alike, writes them as JSONL and as Parquet. */
const WRITER = `
import json, sys, pyarrow as pa, pyarrow.parquet as pq
src, jsonl, parquet = sys.argv[1:4]
text = open(src).read().strip()
rows = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line.strip()]
kept = []
for row in rows:
    try:
        pa.Table.from_pylist(kept + [row])
        kept.append(row)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
with open(jsonl, "w") as f:
    for row in kept:
        f.write(json.dumps(row, ensure_ascii=False) + "\\n")
pq.write_table(pa.Table.from_pylist(kept), parquet, row_group_size=2)
print(len(kept))
`;

const CASES: [format: string, fixture: string][] = [
  ["mind2web", "mind2web/multimodal-rows.jsonl"],
  ["mind2web", "mind2web/train-tasks.json"],
  ["webarena", "webarena/nnetnav-rows.json"],
  ["android-in-the-wild", "android-in-the-wild/episodes.jsonl"],
  ["android-control", "android-control/episodes.jsonl"],
];

const withoutSource = (items: ReadItem[]) =>
  items.map((item) => {
    if (item.kind !== "trajectory") return item.kind;
    const { source: _source, ...rest } = item.trajectory as Trajectory;
    return rest;
  });

describe("Parquet exports of GUI-agent rows", () => {
  for (const [format, fixture] of CASES)
    it(`${fixture}: as Parquet, detected as ${format} by its rows and read like the same rows as JSONL`, async () => {
      const dir = tempDir("lwm-parquet-gui-");
      const jsonl = join(dir, "rows.jsonl");
      const parquet = join(dir, "rows.parquet");
      const written = spawnSync(ensurePythonEnv(), ["-c", WRITER, join(HANDMADE, fixture), jsonl, parquet], { encoding: "utf8" });
      expect(written.status, written.stderr).toBe(0);
      expect(Number(written.stdout.trim())).toBeGreaterThan(0);
      const detection = await detectFormat(parquet);
      expect(detection).toMatchObject({ kind: "format", layout: "parquet-rows" });
      expect(detection.kind === "format" && detection.reader.name).toBe(format);
      const reader = readerByName(format);
      const fromParquet = await collect(reader.read(parquet, OPTIONS));
      expect(fromParquet.some((item) => item.kind === "trajectory")).toBe(true);
      expect(withoutSource(fromParquet)).toEqual(withoutSource(await collect(reader.read(jsonl, OPTIONS))));
    });
});
