/**
 * Hugging Face `datasets` on disk: Arrow IPC files (save_to_disk, DatasetDict, the cache, the IPC
 * file format) read row by row exactly like the same rows as JSONL; `datasets`' metadata files and
 * a Hub dataset card stand for the data files they describe (skipped, visible as covered); a
 * truncated stream keeps its rows before the break and quarantines the rest as one entry; negative
 * controls (random binary, markdown formats, a README that is not a dataset card). Fixtures:
 * test/fixtures/generated/hf-datasets/ (its README says how they are made).
 */
import { copyFileSync, cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { aiderHistoryReader } from "../src/read/aider-history.ts";
import { arrowRecordLines } from "../src/read/arrow-ipc.ts";
import { browserGymReader } from "../src/read/browsergym.ts";
import { chatToolRowsReader } from "../src/read/chat-tool-rows.ts";
import { hfDatasetMetadataReader } from "../src/read/hf-dataset-metadata.ts";
import { itemSource, type ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { textJsonlReader } from "../src/read/text-jsonl.ts";
import { collect, READ_OPTIONS, ROOT, readItems, tempDir, validateAndRun, withoutSources, writeConfig } from "./helpers.ts";

const HF = join(ROOT, "test/fixtures/generated/hf-datasets");

describe("Arrow IPC files read row by row, like the same rows as JSONL", () => {
  const chat = join(HF, "chat-rows.jsonl");
  const cases: [string, string[]][] = [
    ["Dataset.save_to_disk (IPC stream)", ["saved-chat/data-00000-of-00001.arrow"]],
    [
      "DatasetDict.save_to_disk (train, then test)",
      ["saved-dict/train/data-00000-of-00001.arrow", "saved-dict/test/data-00000-of-00001.arrow"],
    ],
    ["the datasets cache (arrow.json extension values)", ["cache/json/default/0.0.0/0123abcd/json-train.arrow"]],
    ["pyarrow.ipc.new_file (IPC file format, one row per batch)", ["chat-file.arrow"]],
    ["pyarrow.ipc.new_stream (one row per batch)", ["chat-stream.arrow"]],
  ];
  it.each(cases)("%s", async (_what, files) => {
    const expected = await readItems(chatToolRowsReader, chat);
    // The fourth row calls no tool: chat-tool-rows quarantines it, from either file.
    expect(expected.map((item) => item.kind)).toEqual(["trajectory", "trajectory", "trajectory", "quarantine"]);
    const items: ReadItem[] = [];
    for (const file of files) {
      const path = join(HF, file);
      const detection = await detectFormat(path);
      expect(detection).toMatchObject({ kind: "format", layout: "arrow-rows", cuttable: false });
      expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
      const got = await readItems(chatToolRowsReader, path);
      // Each row is named by its 0-based row in the file.
      expect(got.map(itemSource)).toEqual(got.map((_, row) => ({ uri: path, row, offset: 0, format: "chat-tool-rows" })));
      items.push(...got);
    }
    expect(withoutSources(items, "entry")).toEqual(withoutSources(expected, "entry"));
  });

  it("a text dataset (a `text` column) reads as text-jsonl reads its rows", async () => {
    const path = join(HF, "saved-text/data-00000-of-00001.arrow");
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && [detection.reader.name, detection.layout]).toEqual(["text-jsonl", "arrow-rows"]);
    const got = await readItems(textJsonlReader, path);
    expect(got.map((item) => item.kind)).toEqual(["document", "document", "document"]);
    expect(withoutSources(got, "entry")).toEqual(withoutSources(await readItems(textJsonlReader, join(HF, "text-rows.jsonl")), "entry"));
  });

  it("a truncated stream keeps the rows before the break and quarantines the rest as one entry, naming the file and where it broke", async () => {
    const path = join(HF, "chat-truncated.arrow");
    const got = await readItems(chatToolRowsReader, path);
    expect(got.map((item) => item.kind)).toEqual(["trajectory", "trajectory", "quarantine"]);
    const expected = (await readItems(chatToolRowsReader, join(HF, "chat-rows.jsonl"))).slice(0, 2);
    expect(withoutSources(got.slice(0, 2), "entry")).toEqual(withoutSources(expected, "entry"));
    const broken = got[2] as Extract<ReadItem, { kind: "quarantine" }>;
    expect(broken.entry.source).toEqual({ uri: path, row: 2, offset: 0, format: "chat-tool-rows" });
    expect(broken.entry.stage).toBe("read");
    expect(broken.entry.reason).toMatch(/^the Arrow IPC stream breaks at record batch 2 \(row 2; rows 0–1 were read/);
  });

  it("a byte-range task that does not start the file reads none of it (the task starting it reads it whole)", async () => {
    const path = join(HF, "chat-stream.arrow");
    const rest = await collect(arrowRecordLines(path, { ...READ_OPTIONS, range: { start: 100, end: 10_000 } }, "chat-tool-rows"));
    expect(rest).toEqual([]);
    const first = await collect(arrowRecordLines(path, { ...READ_OPTIONS, range: { start: 0, end: 100 } }, "chat-tool-rows"));
    expect(first.map((item) => item.kind)).toEqual(["line", "line", "line", "line"]);
  });
});

describe("datasets' metadata and a Hub dataset card stand for their data files", () => {
  async function plan(input: string) {
    const dir = tempDir("lwm-hf-plan-");
    const loaded = loadConfig(writeConfig(`inputs:\n  - path: ${input}\noutput: { dir: ${join(dir, "out")} }\n`, dir));
    const planned = await planJob(loaded, { sniffConcurrency: 4 });
    return {
      files: planned.files.map((file) => [file.path.slice(input.length + 1), file.reader.name]),
      covered: planned.covered.map((c) => [c.path.slice(input.length + 1), c.kind, c.by.slice(input.length + 1)]),
    };
  }

  it("a save_to_disk folder: state.json and dataset_info.json are covered by the Arrow file, none quarantined", async () => {
    expect(await plan(join(HF, "saved-chat"))).toEqual({
      files: [["data-00000-of-00001.arrow", "chat-tool-rows"]],
      covered: [
        ["dataset_info.json", "stands-for", "data-00000-of-00001.arrow"],
        ["state.json", "stands-for", "data-00000-of-00001.arrow"],
      ],
    });
  });

  it("a DatasetDict folder: dataset_dict.json stands for every split's Arrow files", async () => {
    const planned = await plan(join(HF, "saved-dict"));
    expect(planned.files).toEqual([
      ["test/data-00000-of-00001.arrow", "chat-tool-rows"],
      ["train/data-00000-of-00001.arrow", "chat-tool-rows"],
    ]);
    expect(planned.covered).toContainEqual(["dataset_dict.json", "stands-for", "test/data-00000-of-00001.arrow"]);
    expect(planned.covered.map((c) => c[0]).sort()).toEqual([
      "dataset_dict.json",
      "test/dataset_info.json",
      "test/state.json",
      "train/dataset_info.json",
      "train/state.json",
    ]);
  });

  it("a cache folder: dataset_info.json stands for <name>-<split>.arrow", async () => {
    expect(await plan(join(HF, "cache"))).toEqual({
      files: [["json/default/0.0.0/0123abcd/json-train.arrow", "chat-tool-rows"]],
      covered: [["json/default/0.0.0/0123abcd/dataset_info.json", "stands-for", "json/default/0.0.0/0123abcd/json-train.arrow"]],
    });
  });

  it("a Hub snapshot: the dataset card README.md stands for the files its configs' data_files match", async () => {
    expect(await plan(join(HF, "hub-snapshot"))).toEqual({
      files: [["data/train-00000-of-00001.parquet", "chat-tool-rows"]],
      covered: [["README.md", "stands-for", "data/train-00000-of-00001.parquet"]],
    });
  });

  it("metadata given alone brings in the data files it describes", async () => {
    const dir = join(HF, "saved-dict");
    const loaded = loadConfig(writeConfig(`inputs:\n  - path: ${join(dir, "dataset_dict.json")}\n`));
    const planned = await planJob(loaded);
    expect(planned.files.map((file) => file.path)).toEqual(["test", "train"].map((split) => join(dir, split, "data-00000-of-00001.arrow")));
    expect(planned.covered.map((c) => [c.path, c.kind])).toEqual([[join(dir, "dataset_dict.json"), "stands-for"]]);
  });

  it("metadata whose data files are not there is read as one quarantine entry saying so (records in = out + quarantined)", async () => {
    const dir = tempDir("lwm-hf-orphan-");
    copyFileSync(join(HF, "saved-chat/state.json"), join(dir, "state.json"));
    const path = join(dir, "state.json");
    expect(await detectFormat(path)).toMatchObject({ kind: "format", reader: { name: "hf-dataset-metadata" } });
    expect(await hfDatasetMetadataReader.expand?.(path)).toBeUndefined();
    const items = await readItems(hfDatasetMetadataReader, path);
    expect(items).toHaveLength(1);
    expect(items[0]?.kind === "quarantine" && items[0].entry.reason).toMatch(
      /save_to_disk state\.json: .*none of those data files is here/,
    );
  });

  it("lwm-data validate lists the skipped files as covered; a run reads every row once and quarantines no metadata", async () => {
    const work = tempDir("lwm-hf-run-");
    const data = join(work, "data");
    cpSync(join(HF, "saved-dict"), join(data, "saved-dict"), { recursive: true });
    cpSync(join(HF, "hub-snapshot"), join(data, "hub-snapshot"), { recursive: true });
    copyFileSync(join(HF, "chat-truncated.arrow"), join(data, "chat-truncated.arrow"));
    const config = writeConfig("inputs:\n  - path: data\noutput: { dir: out }\n", work);
    const { validate, manifest } = await validateAndRun(config);
    expect(validate).toMatch(/train\/data-00000-of-00001\.arrow .*format=chat-tool-rows \(detected; Arrow IPC rows, read row by row\)/);
    expect(validate).toMatch(/covered {6}6 file\(s\)/);
    expect(validate).toMatch(/hub-snapshot\/README\.md {2}\(stands for 1 file\(s\) read instead \(hf-dataset-metadata\)\)/);
    expect(validate).toMatch(/saved-dict\/dataset_dict\.json {2}\(stands for 2 file\(s\) read instead/);
    // 4 rows (dict) + 4 rows (snapshot) + 2 rows and one break (truncated). Read quarantines the
    // break and the two rows that call no tool; the same rows from three copies are duplicates.
    expect(manifest.counts.records_in).toBe(11);
    expect(manifest.counts.quarantined_by_stage.read).toBe(3);
    expect(manifest.inputs.map((input) => input.path).filter((path) => /\.(json|md)$/.test(path))).toEqual([]);
  }, 60_000);
});

describe("negative controls", () => {
  it("a random binary file is still refused, and so is one that starts like an Arrow stream but is not one", async () => {
    const dir = tempDir("lwm-hf-binary-");
    const random = join(dir, "random.bin");
    const bytes = Buffer.alloc(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    writeFileSync(random, bytes);
    expect(await detectFormat(random)).toMatchObject({ kind: "unrecognized" });
    const fake = join(dir, "fake.arrow");
    const header = Buffer.alloc(16);
    header.writeUInt32LE(0xffff_ffff, 0);
    header.writeInt32LE(64, 4);
    writeFileSync(fake, Buffer.concat([header, bytes]));
    const refused = await detectFormat(fake);
    expect(refused.kind).toBe("unrecognized");
    expect(refused.kind === "unrecognized" && refused.reason).toMatch(/starts like an Arrow IPC stream but cannot be read as one/);
  });

  it("markdown formats stay read: aider's chat history and BrowserGym's experiment_analysis.md", async () => {
    const aider = await detectFormat(join(ROOT, "test/fixtures/handmade/aider/two-runs.aider.chat.history.md"));
    expect(aider.kind === "format" && aider.reader).toBe(aiderHistoryReader);
    const browserGym = await detectFormat(join(ROOT, "data/demo/web/stockroom.add-item__experiment_analysis.md"));
    expect(browserGym.kind === "format" && browserGym.reader).toBe(browserGymReader);
  });

  it("a README.md that is not a dataset card stays unrecognized (plain, and front matter with only license / tags / language)", async () => {
    const dir = tempDir("lwm-hf-readme-");
    mkdirSync(join(dir, "plain"));
    const plain = join(dir, "plain/README.md");
    writeFileSync(plain, "# My project\n\nSome notes about the data.\n");
    const model = join(dir, "README.md");
    writeFileSync(model, "---\nlicense: mit\nlanguage:\n- en\ntags:\n- agent\nlibrary_name: transformers\n---\n\n# A model card\n");
    for (const path of [plain, model]) expect(await detectFormat(path)).toMatchObject({ kind: "unrecognized" });
  });
});
