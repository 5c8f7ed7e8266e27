/**
 * OpenHands (V0) local session folders read by the openhands reader: `sessions/<sid>/events/<id>.json`,
 * one event per file, as the OpenHands app and CLI keep them (test/fixtures/handmade/openhands-sessions/,
 * the recorded demo session split one event per file). Before, every event file was refused as unrecognized.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { openHandsReader } from "../src/read/openhands.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, READERS } from "../src/read/registry.ts";
import { collect, READ_OPTIONS, ROOT, tempDir, validateAndRun, writeConfig } from "./helpers.ts";

const SESSIONS = join(ROOT, "test/fixtures/handmade/openhands-sessions/sessions");
const SID = "3f9a2c7e1b5d4e8fa6c0d2b4e6f8a1c3";
const EVENTS = join(SESSIONS, SID, "events");
const ARRAY = join(ROOT, "data/demo/swe/openhands__stats-median.json");
const CONVERSATIONS = join(ROOT, "test/fixtures/handmade/openhands-sessions/conversations");
const CID = "9d4e2a6c8b0f4c1e9a3d5b7f1c2e4a6b";
const V1_EVENTS = join(CONVERSATIONS, CID, "events");
const v1Files = (): string[] => readdirSync(V1_EVENTS).sort();

const read = (path: string): Promise<ReadItem[]> => collect(openHandsReader.read(path, READ_OPTIONS));
async function only(path: string): Promise<Trajectory> {
  const items = await read(path);
  expect(items).toHaveLength(1);
  const item = items[0] as ReadItem;
  if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
  return item.trajectory;
}
/** A copy of the fixture session in a fresh folder: its events folder. */
function copySession(): string {
  const dir = join(tempDir("lwm-openhands-session-"), "sessions");
  cpSync(SESSIONS, dir, { recursive: true });
  return join(dir, SID, "events");
}

describe("OpenHands session folders (one event per file)", () => {
  it("read in id order (10 after 9), the same turns and task as the session's event array; id, title, layout", async () => {
    const folder = await only(join(EVENTS, "0.json"));
    const array = await only(ARRAY);
    expect(folder.turns).toEqual(array.turns);
    expect(folder.task).toBe(array.task);
    expect(folder.turns).toHaveLength(6);
    expect(folder.id).toBe(SID);
    expect(folder.meta).toMatchObject({
      layout: "session-folder",
      agent: "openhands",
      session_id: SID,
      title: "Fix median of an even-length list",
    });
    // Any event file of the session stands for all of it.
    expect((await only(join(EVENTS, "12.json"))).turns).toEqual(folder.turns);
  });

  it("negative control: an event file alone (not in an events folder) is a stream of its one event, and that has no turn", async () => {
    const lone = join(tempDir("lwm-openhands-lone-"), "3.json");
    cpSync(join(EVENTS, "3.json"), lone);
    const items = await read(lone);
    expect(items).toEqual([
      expect.objectContaining({
        kind: "quarantine",
        entry: expect.objectContaining({ reason: expect.stringMatching(/no environment action with an observation/) }),
      }),
    ]);
  });

  it("a missing event leaves its action unobserved; a damaged event file quarantines the session naming it", async () => {
    const events = copySession();
    rmSync(join(events, "4.json"));
    const gap = await only(join(events, "0.json"));
    expect(gap.turns).toHaveLength(5);
    expect(gap.meta?.skipped).toMatchObject({ action_without_observation: 1 });
    writeFileSync(join(events, "7.json"), '{"id": 7, "source": "agent", "action": "run", "args": {');
    const items = await read(join(events, "0.json"));
    expect(items).toEqual([
      expect.objectContaining({ kind: "quarantine", entry: expect.objectContaining({ id: SID, field: "events/7.json" }) }),
    ]);
    expect(items[0]?.kind === "quarantine" && items[0].entry.reason).toMatch(/^events\/7\.json: invalid JSON/);
  });

  it("detected as openhands by content, by no other reader", async () => {
    for (const name of ["0.json", "3.json", "4.json"]) {
      const path = join(EVENTS, name);
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, name).toBe("openhands");
      const head = readFileSync(path, "utf8");
      expect(READERS.filter((reader) => reader.sniff(head, path)).map((reader) => reader.name)).toEqual(["openhands"]);
    }
    // An event-like object without a numeric id or a known source is not one.
    expect(openHandsReader.sniff('{"id": "a", "timestamp": "t", "source": "agent", "action": "run"}', "x.json")).toBe(false);
    expect(openHandsReader.sniff('{"id": 1, "timestamp": "t", "source": "robot", "action": "run"}', "x.json")).toBe(false);
  });

  it("a plan over the sessions folder reads each session once: its first event file, the rest of the folder covered", async () => {
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${SESSIONS}\n`)));
    expect(plan.files.map((file) => [file.path, file.reader.name])).toEqual([[join(EVENTS, "0.json"), "openhands"]]);
    const covered = plan.covered.map((c) => c.path).sort();
    const expected = [
      ...readdirSync(EVENTS)
        .filter((name) => name !== "0.json")
        .map((name) => join(EVENTS, name)),
      join(SESSIONS, SID, "metadata.json"),
    ].sort();
    expect(covered).toEqual(expected);
    expect(plan.covered.every((c) => c.kind === "companion" && c.by === join(EVENTS, "0.json"))).toBe(true);
  });

  it("lwm-data run: records in = out + quarantined", async () => {
    const work = tempDir("lwm-openhands-session-run-");
    cpSync(SESSIONS, join(work, "data"), { recursive: true });
    const config = writeConfig("inputs:\n  - path: data\noutput: { dir: out }\n", work);
    const { manifest } = await validateAndRun(config);
    expect(manifest.counts).toMatchObject({ records_in: 1, samples_out: 1, quarantined: 0 });
  }, 120_000);
});

describe("OpenHands V1 conversations (the SDK and CLI: events/event-<idx>-<uuid>.json)", () => {
  it("actions answered by their observations by action_id: commands with exit codes, file editor calls, an agent error; a rejected call is no turn", async () => {
    const t = await only(join(V1_EVENTS, v1Files()[5] as string));
    expect(t.id).toBe(CID);
    expect(t.task).toBe("test_calc.py fails: add(2, 2) returns 5. Fix calc.py.");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "python -m pytest -q",
      'file_editor {"command":"view","path":"/workspace/calc/calc.py"}',
      'file_editor {"command":"str_replace","path":"/workspace/calc/calc.py","old_str":"    return a + b + 1","new_str":"    return a + b"}',
      "python -m pytest -q",
      'file_editor {"command": "view", "path": ',
    ]);
    expect(t.turns.map((turn) => turn.meta?.exit_code)).toEqual([1, undefined, undefined, 0, undefined]);
    expect(t.turns[0]?.observation).toMatch(/1 failed, 1 passed/);
    expect(t.turns[4]).toMatchObject({ observation: expect.stringMatching(/^Error validating args/), meta: { is_error: true } });
    expect(t.turns[0]?.thinking).toBe("Run the tests first.");
    expect(t.turns[2]?.thinking).toBe("The + 1 is the bug.");
    expect(t.meta).toMatchObject({
      agent: "openhands",
      layout: "sdk-conversation",
      conversation_id: CID,
      model: "litellm_proxy/claude-sonnet-4-5-20250929",
      final_message: "Fixed: add no longer adds 1; both tests pass.",
    });
    expect(t.meta?.skipped).toEqual({ SystemPromptEvent: 1, rejected_call: 1, ConversationStateUpdateEvent: 1 });
  });

  it("the app server's layout (<event id hex>.json, ordered by time) reads the same conversation", async () => {
    const dir = join(tempDir("lwm-openhands-v1-"), "v1_conversations", CID);
    mkdirSync(dir, { recursive: true });
    for (const name of v1Files()) {
      const event = JSON.parse(readFileSync(join(V1_EVENTS, name), "utf8")) as { id: string };
      writeFileSync(join(dir, `${event.id.replaceAll("-", "")}.json`), readFileSync(join(V1_EVENTS, name)));
    }
    const server = await only(join(dir, readdirSync(dir).sort()[3] as string));
    const sdk = await only(join(V1_EVENTS, v1Files()[0] as string));
    expect(server.turns).toEqual(sdk.turns);
    expect(server.id).toBe(CID);
  });

  it("a damaged event file quarantines the conversation naming it; detected as openhands by no other reader", async () => {
    const copy = join(tempDir("lwm-openhands-v1-"), "conversations");
    cpSync(CONVERSATIONS, copy, { recursive: true });
    const events = join(copy, CID, "events");
    const damaged = readdirSync(events).sort()[4] as string;
    writeFileSync(join(events, damaged), '{"kind": "ActionEvent", "id": ');
    const items = await read(join(events, readdirSync(events).sort()[0] as string));
    expect(items).toEqual([
      expect.objectContaining({ kind: "quarantine", entry: expect.objectContaining({ id: CID, field: `events/${damaged}` }) }),
    ]);
    for (const name of v1Files().slice(0, 4)) {
      const path = join(V1_EVENTS, name);
      const head = readFileSync(path, "utf8");
      expect(
        READERS.filter((reader) => reader.sniff(head, path)).map((reader) => reader.name),
        name,
      ).toEqual(["openhands"]);
    }
  });

  it("a plan over the conversations folder reads each conversation once, by its first event file", async () => {
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${CONVERSATIONS}\n`)));
    expect(plan.files.map((file) => file.path)).toEqual([join(V1_EVENTS, v1Files()[0] as string)]);
    expect(plan.covered.map((c) => c.path).sort()).toEqual(
      [
        ...v1Files()
          .slice(1)
          .map((name) => join(V1_EVENTS, name)),
        join(CONVERSATIONS, CID, "base_state.json"),
      ].sort(),
    );
  });
});
