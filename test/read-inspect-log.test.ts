/** The Inspect AI eval-log reader (src/read/inspect-log.ts) on the hand-written log in test/fixtures/handmade/inspect/. */
import { copyFileSync, openAsBlob, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_DECOMPRESSION_LIMITS, setDecompressionLimits } from "../src/io/open-input.ts";
import { openZip, openZipFromBlob, readZipEntry, type ZipFile, zipBudget } from "../src/io/zip-archive.ts";
import { inspectLogReader } from "../src/read/inspect-log.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const LOG = join(ROOT, "test/fixtures/handmade/inspect/2025-06-12T10-00-00+00-00_ctf-find-flag_EvAl123.json");

describe("inspect-log reader", () => {
  it("reads each sample: attachments put back, tool errors kept, the score as outcome; a chat sample quarantined", async () => {
    const items = await collect(inspectLogReader.read(LOG, OPTIONS));
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "quarantine"]);
    const first = items[0];
    if (first?.kind !== "trajectory") throw new Error("expected a trajectory");
    const t = first.trajectory;
    expect(t.id).toBe("ctf_find_flag/flag-1/epoch-1@EvAl123");
    expect(t.domain).toBe("terminal");
    expect(t.task).toBe("Find the flag in /challenge.");
    expect(t.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error])).toEqual([
      ["ls /challenge", "flag.txt\nREADME\n", undefined],
      ["cat /challenge/missing", "cat: /challenge/missing: No such file or directory", true],
      ['{"name":"python","arguments":{"code":"print(open(\'/challenge/flag.txt\').read())"}}', "flag{x}\n", undefined],
      ['{"name":"submit","arguments":{"answer":"flag{x}"}}', "flag{x}", undefined],
    ]);
    expect(t.turns[0]?.meta).toMatchObject({ agent_reasoning: "List the directory first.", agent_thought: "Looking." });
    expect(t.meta).toMatchObject({
      agent: "inspect_ai",
      model: "openai/gpt-4o",
      task_id: "flag-1",
      attempt: 1,
      outcome: { success: true },
      agent_system: "You are a CTF player with a bash tool.",
    });
    expect(items[1]).toMatchObject({ kind: "quarantine", entry: { id: "ctf_find_flag/flag-2/epoch-1@EvAl123", source: { row: 1 } } });
  });

  it("is detected from the log's opening keys; a log without samples or broken JSON is quarantined", async () => {
    const detection = await detectFormat(LOG);
    expect(detection.kind === "format" && detection.reader.name).toBe("inspect-log");
    // Negative control: another pretty-printed document with a version and a status is not an eval log.
    expect(inspectLogReader.sniff('{\n  "version": 2,\n  "status": "ok",\n  "data": {}\n}', "/x.json")).toBe(false);
    const dir = tempDir("lwm-inspect-");
    const header = join(dir, "header.json");
    writeFileSync(header, JSON.stringify({ version: 2, status: "success", eval: { task: "t" } }, null, 2));
    expect(await collect(inspectLogReader.read(header, OPTIONS))).toMatchObject([{ kind: "quarantine", entry: { field: "samples" } }]);
    const broken = join(dir, "broken.json");
    writeFileSync(broken, '{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": [{"id": 1,');
    expect(await collect(inspectLogReader.read(broken, OPTIONS))).toMatchObject([
      { kind: "quarantine", entry: { reason: expect.stringMatching(/^not an Inspect AI eval log: invalid JSON/) } },
    ]);
  });
});

/** The `.eval` fixtures, written from the JSON log by test/fixtures/handmade/inspect/make-eval.py. */
const FIXTURES = join(ROOT, "test/fixtures/handmade/inspect");
const EVAL = join(FIXTURES, "2025-06-12T10-00-00+00-00_ctf-find-flag_EvAl123.eval");

/** An item without its file's uri: what the same log gives in either layout. */
function sansUri(item: ReadItem): unknown {
  if (item.kind === "trajectory") return { ...item.trajectory, source: { ...item.trajectory.source, uri: "" } };
  if (item.kind === "quarantine") return { id: item.entry.id, row: item.entry.source.row };
  return item;
}

describe("inspect-log reader on .eval archives", () => {
  it("gives exactly the records the same log as .json gives, with or without _journal/ entries", async () => {
    const fromJson = (await collect(inspectLogReader.read(LOG, OPTIONS))).map(sansUri);
    expect(fromJson).toHaveLength(2);
    for (const path of [EVAL, join(FIXTURES, "no-journal.eval")]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name).toBe("inspect-log");
      expect((await collect(inspectLogReader.read(path, OPTIONS))).map(sansUri)).toEqual(fromJson);
    }
  });

  it("reads by ranged reads too (an S3 object or a Hub file): the same entries through a RangeBlob", async () => {
    const names = async (zip: ZipFile) => {
      const out: string[] = [];
      for await (const entry of zip.eachEntry()) out.push(`${entry.fileName}:${entry.crc32}`);
      zip.close();
      return out;
    };
    const local = await names(await openZip(EVAL));
    expect(await names(await openZipFromBlob(await openAsBlob(EVAL)))).toEqual(local);
    const zip = await openZipFromBlob(await openAsBlob(EVAL));
    for await (const entry of zip.eachEntry())
      if (entry.fileName === "samples/flag-1_epoch_1.json")
        expect(JSON.parse((await readZipEntry(zip, entry, zipBudget(), 1 << 20)).toString()).id).toBe("flag-1");
    zip.close();
  });

  it("refuses any other zip at detection, whatever its name (negative control)", async () => {
    const dir = tempDir("lwm-inspect-zip-");
    const renamed = join(dir, "looks-like.eval");
    copyFileSync(join(FIXTURES, "not-inspect.zip"), renamed);
    for (const path of [join(FIXTURES, "not-inspect.zip"), renamed]) {
      const detection = await detectFormat(path);
      expect(detection).toMatchObject({
        kind: "unrecognized",
        reason: expect.stringMatching(/^a zip archive, which lwm-data does not unpack/),
      });
    }
    // Read as inspect-log anyway (inputs[].format): one quarantine entry naming what is missing.
    expect(await collect(inspectLogReader.read(renamed, OPTIONS))).toMatchObject([
      {
        kind: "quarantine",
        entry: { field: "header.json", reason: expect.stringMatching(/holds neither header\.json nor _journal\/start\.json/) },
      },
    ]);
  });

  it("quarantines a damaged sample entry (bad JSON, CRC error) naming it; the other samples are read", async () => {
    const badJson = await collect(inspectLogReader.read(join(FIXTURES, "bad-json-sample.eval"), OPTIONS));
    expect(badJson).toMatchObject([
      {
        kind: "quarantine",
        entry: {
          field: "samples/flag-1_epoch_1.json",
          source: { row: 0 },
          reason: expect.stringMatching(/^samples\/flag-1_epoch_1\.json: invalid JSON/),
        },
      },
      { kind: "quarantine", entry: { id: "ctf_find_flag/flag-2/epoch-1@EvAl123", source: { row: 1 } } },
    ]);
    // A stored entry with one byte changed: only its CRC-32 tells (yauzl does not check it).
    const bytes = readFileSync(join(FIXTURES, "stored.eval"));
    const at = bytes.indexOf("Find the flag");
    expect(at).toBeGreaterThan(0);
    bytes[at] = "G".charCodeAt(0);
    const flipped = join(tempDir("lwm-inspect-crc-"), "flipped.eval");
    writeFileSync(flipped, bytes);
    const items = await collect(inspectLogReader.read(flipped, OPTIONS));
    expect(items).toMatchObject([
      { kind: "quarantine", entry: { field: "samples/flag-1_epoch_1.json", reason: expect.stringMatching(/fails its CRC-32 check/) } },
      { kind: "quarantine", entry: { id: "ctf_find_flag/flag-2/epoch-1@EvAl123" } },
    ]);
    // A cut archive (no central directory) is one entry for the file.
    const cut = join(tempDir("lwm-inspect-cut-"), "cut.eval");
    writeFileSync(cut, readFileSync(EVAL).subarray(0, 1500));
    expect(await collect(inspectLogReader.read(cut, OPTIONS))).toMatchObject([
      { kind: "quarantine", entry: { reason: expect.stringMatching(/^not a readable Inspect AI \.eval log/) } },
    ]);
  });

  it("bounds decompression: an entry over input.max_line_bytes, an archive over input.max_decompressed_bytes", async () => {
    const small = await collect(inspectLogReader.read(EVAL, { maxLineBytes: 1000 }));
    expect(small).toMatchObject([
      {
        kind: "quarantine",
        entry: {
          reason: expect.stringMatching(/^samples\/flag-1_epoch_1\.json: entry is 2796 bytes decompressed, over the 1000-byte limit/),
        },
      },
      { kind: "quarantine", entry: { id: "ctf_find_flag/flag-2/epoch-1@EvAl123" } },
    ]);
    setDecompressionLimits({ maxBytes: 3000, maxRatio: 1000 });
    try {
      expect(await collect(inspectLogReader.read(EVAL, OPTIONS))).toMatchObject([
        {
          kind: "quarantine",
          entry: { reason: expect.stringMatching(/^file unreadable after 0 sample\(s\): decompressed size passed 3000 bytes/) },
        },
      ]);
    } finally {
      setDecompressionLimits(DEFAULT_DECOMPRESSION_LIMITS);
    }
  });
});
