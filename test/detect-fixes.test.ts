import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { canonicalJsonlReader } from "../src/read/canonical-jsonl.ts";
import { itemSource } from "../src/read/reader.ts";
import { READERS } from "../src/read/registry.ts";
import { sweAgentTrajReader } from "../src/read/swe-agent-traj.ts";
import { sweSmithReader } from "../src/read/swe-smith.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
const SMITH = join(ROOT, "data/demo/swe/swe-smith__ft.jsonl");

describe("attempts (issue 34, item 3): SWE-smith", () => {
  const dir = tempDir("lwm-attempts-");
  const [row] = readFileSync(SMITH, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line)) as Record<string, unknown>[];

  it("names each attempt by its traj_id; the instance goes to meta.task_id, the attempt, model and outcome beside it", async () => {
    const path = join(dir, "attempts.jsonl");
    const attempts = [
      { ...row, traj_id: "stats-median.a1", attempt: 1, model: "m-1", resolved: false },
      { ...row, traj_id: "stats-median.a2", attempt: 2, model: "m-1", resolved: true },
    ];
    writeFileSync(path, `${attempts.map((a) => JSON.stringify(a)).join("\n")}\n`);
    const items = await collect(sweSmithReader.read(path, OPTIONS));
    const trajectories = items.map((item) => (item as { trajectory: Trajectory }).trajectory);
    expect(trajectories.map((t) => t.id)).toEqual(["stats-median.a1", "stats-median.a2"]);
    expect(trajectories.map((t) => t.meta)).toEqual([
      { task_id: row?.instance_id, attempt: "1", model: "m-1", outcome: { resolved: false }, skipped: { action_without_observation: 1 } },
      { task_id: row?.instance_id, attempt: "2", model: "m-1", outcome: { resolved: true }, skipped: { action_without_observation: 1 } },
    ]);
  });

  it("without an own id, a repeated instance gets the instance id plus a hash of the row: two records, not one duplicate", async () => {
    const path = join(dir, "no-own-id.jsonl");
    const other = { ...row, messages: [...((row?.messages ?? []) as unknown[]), { role: "assistant", content: "done" }] };
    writeFileSync(path, `${JSON.stringify(row)}\n${JSON.stringify(other)}\n`);
    const ids = (await collect(sweSmithReader.read(path, OPTIONS))).map((item) => (item as { trajectory: Trajectory }).trajectory.id);
    expect(ids[0]).toBe(row?.instance_id);
    expect(ids[1]).toMatch(new RegExp(`^${String(row?.instance_id)}-[0-9a-f]{16}$`));
  });
});

describe("detection (issue 34, item 3): a `trajectory` key is SWE-agent only if its shape is", () => {
  const sweAgentFiles = [
    "data/demo/swe/swe-agent__slug-punctuation.traj",
    "data/demo/swe/swe-agent__stats-median.traj",
    "test/fixtures/handmade/swe/swe-agent-0x__greet.traj",
    "test/fixtures/handmade/swe/swe-agent-demonstration__version.traj",
  ];

  it("still claims SWE-agent .traj files, both generations", () => {
    for (const file of sweAgentFiles)
      expect(sweAgentTrajReader.sniff(readFileSync(join(ROOT, file), "utf8").slice(0, 65536), file)).toBe(true);
  });

  it("does not claim objects whose trajectory holds chat messages or other things", () => {
    const heads = [
      // SWE-rebench-OpenHands row: messages under `trajectory`.
      '{"trajectory_id": "x", "instance_id": "a__b-1", "trajectory": [{"role": "system", "content": "You are"}, {"role": "user", "content": "fix"}]}',
      // A pretty-printed row of the same.
      '{\n  "instance_id": "a__b-1",\n  "trajectory": [\n    {\n      "role": "user",\n      "content": "fix"\n    }\n  ]\n}',
      // A trajectory of screenshots / coordinates (web agents).
      '{"task": "book", "trajectory": [{"url": "https://x", "click": [1, 2]}]}',
      '{"trajectory": [[0, 1], [2, 3]]}',
      '{"trajectory": []}',
    ];
    for (const head of heads) expect(sweAgentTrajReader.sniff(head, "row.json")).toBe(false);
    // A SWE-agent step first key of each generation.
    expect(sweAgentTrajReader.sniff('{"trajectory": [{"action": "ls", "observation": ""}]}', "a.traj")).toBe(true);
    expect(sweAgentTrajReader.sniff('{\n  "trajectory": [\n    {\n      "response": "x",\n      "thought": "t"', "a.traj")).toBe(true);
  });

  it("leaves a plain chat row with a trajectory of messages to another reader, or to none", () => {
    const head = '{"id": "r1", "trajectory": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n';
    expect(READERS.find((reader) => reader.sniff(head, "rows.jsonl"))?.name).not.toBe("swe-agent-traj");
  });
});

describe("detection (issue 34, item 3): --format X on a file that is not line-per-record", () => {
  const dir = tempDir("lwm-forced-");

  it("a text file read as a JSON-lines format is one quarantine entry naming the format and what the file is", async () => {
    const path = join(dir, "session.log");
    writeFileSync(path, `${Array.from({ length: 300 }, (_, i) => `$ echo ${i}\n${i}`).join("\n")}\n`);
    for (const reader of [sweSmithReader, canonicalJsonlReader]) {
      const items = await collect(reader.read(path, OPTIONS));
      expect(items.length).toBe(1);
      const [item] = items;
      expect(item?.kind).toBe("quarantine");
      expect(item?.kind === "quarantine" && item.entry.reason).toBe(
        `format ${reader.name} reads one JSON object per line (or a JSON array of them, or one pretty-printed JSON document), ` +
          'but this file is text with no JSON value among its first 8 non-empty line(s), starting "$ echo 0": quarantined whole, as one entry (is --format / inputs[].format right?)',
      );
      expect(itemSource(item as never)).toEqual({ uri: path, line: 1, offset: 0, format: reader.name });
    }
  });

  it("a pretty-printed document that is not the format is one record, one quarantine entry (not one per line)", async () => {
    const path = join(dir, "doc.json");
    writeFileSync(path, JSON.stringify({ a: 1, b: [1, 2, 3], c: { d: "x\ny" } }, null, 2));
    const items = await collect(sweSmithReader.read(path, OPTIONS));
    expect(items.length).toBe(1);
    expect(items[0]?.kind === "quarantine" && items[0].entry).toMatchObject({
      source: { uri: path, line: 1, format: "swe-smith" },
      field: "messages",
    });
  });

  it("a JSONL file with a stray first line still reads its records (the stray line alone is quarantined)", async () => {
    const path = join(dir, "banner.jsonl");
    writeFileSync(path, `exported 2 rows\n${readFileSync(SMITH, "utf8")}`);
    const kinds = (await collect(sweSmithReader.read(path, OPTIONS))).map((item) => item.kind);
    expect(kinds).toEqual(["quarantine", "trajectory", "trajectory"]);
  });
});
