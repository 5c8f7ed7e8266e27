/** The Inspect AI eval-log reader (src/read/inspect-log.ts) on the hand-written log in test/fixtures/handmade/inspect/. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inspectLogReader } from "../src/read/inspect-log.ts";
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
