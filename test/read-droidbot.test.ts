import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { droidBotReader } from "../src/read/droidbot.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 24 };
const ANDROID = join(ROOT, "data/demo/android");
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));

/** The demo run in DroidBot's own layout: <out>/events/, <out>/states/, utg.js, a screenshot. */
function outputFolder(): string {
  const out = join(tempDir("lwm-droidbot-run-"), "out");
  mkdirSync(join(out, "events"), { recursive: true });
  mkdirSync(join(out, "states"), { recursive: true });
  for (const name of readdirSync(ANDROID)) {
    if (name.startsWith("event_")) copyFileSync(join(ANDROID, name), join(out, "events", name));
    if (name.startsWith("state_")) copyFileSync(join(ANDROID, name), join(out, "states", name));
  }
  writeFileSync(join(out, "utg.js"), "var utg = {}\n");
  writeFileSync(join(out, "states", "screen_2026-01-15_120000.png"), "png");
  return out;
}

describe("droidbot runs (events/ and states/ side by side)", () => {
  it("a run's other events and its states stand for its first event; the output folder is its companions", async () => {
    const out = outputFolder();
    const first = join(out, "events", "event_2026-01-15_120002.json");
    expect(await droidBotReader.expand?.(first)).toBeUndefined();
    expect(await droidBotReader.expand?.(join(out, "events", "event_2026-01-15_120008.json"))).toEqual([first]);
    expect(await droidBotReader.expand?.(join(out, "states", "state_2026-01-15_120003.json"))).toEqual([first]);
    const companions = await droidBotReader.companions?.(first);
    expect(companions).toMatchObject({ dirs: [out], files: [], label: "DroidBot run out" });
    const sizes = readdirSync(ANDROID)
      .filter((n) => n.endsWith(".json"))
      .reduce((sum, n) => sum + readFileSync(join(ANDROID, n)).length, 0);
    expect(companions?.bytes).toBe(sizes);
    const [run] = trajectories(await collect(droidBotReader.read(first, OPTIONS)));
    expect(run?.turns.map((t) => t.meta?.event_tag)).toEqual(["2026-01-15_120002", "2026-01-15_120005", "2026-01-15_120008"]);
    expect(run?.initialObservation).toBe(readFileSync(join(ANDROID, "state_2026-01-15_120000.json"), "utf8"));
  });

  it("in a shared folder, claims only the run's own files (the demo: not the uiautomator dump)", async () => {
    const companions = await droidBotReader.companions?.(join(ANDROID, "event_2026-01-15_120002.json"));
    expect(companions?.dirs).toEqual([]);
    expect(companions?.files.map((f) => f.slice(ANDROID.length + 1))).toEqual([
      "event_2026-01-15_120002.json",
      "event_2026-01-15_120005.json",
      "event_2026-01-15_120008.json",
      "state_2026-01-15_120000.json",
      "state_2026-01-15_120003.json",
      "state_2026-01-15_120006.json",
      "state_2026-01-15_120009.json",
    ]);
    expect(await droidBotReader.expand?.(join(ANDROID, "quicknotes.add-note.window_dumps.xml"))).toBeUndefined();
  });

  it("a broken chain starts another part; an event without its stop state is quarantined, naming it", async () => {
    const out = outputFolder();
    // The middle event starts from a screen the first did not end on.
    const middle = join(out, "events", "event_2026-01-15_120005.json");
    const event = JSON.parse(readFileSync(middle, "utf8"));
    writeFileSync(middle, JSON.stringify({ ...event, start_state: "c1051e7999d255150fecaa6485579b52" }));
    let items = await collect(droidBotReader.read(join(out, "events", "event_2026-01-15_120002.json"), OPTIONS));
    const parts = trajectories(items);
    expect(parts.map((t) => [t.turns.length, (t.meta?.droidbot as Record<string, unknown> | undefined)?.part])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(parts[1]?.id).toBe(`${(parts[0]?.meta?.droidbot as { run: string } | undefined)?.run}-part2`);
    expect(parts[1]?.initialObservation).toBe(readFileSync(join(ANDROID, "state_2026-01-15_120000.json"), "utf8"));
    // The last stop state is missing: its event is quarantined, the rest kept.
    writeFileSync(middle, JSON.stringify(event));
    const gone = join(out, "states", "state_2026-01-15_120009.json");
    writeFileSync(gone, "{}");
    items = await collect(droidBotReader.read(join(out, "events", "event_2026-01-15_120002.json"), OPTIONS));
    expect(trajectories(items).map((t: Trajectory) => t.turns.length)).toEqual([2]);
    expect(quarantined(items)).toMatchObject([
      {
        source: { uri: join(out, "events", "event_2026-01-15_120008.json") },
        field: "stop_state",
        reason: expect.stringMatching(/^stop_state e63bbe0811148e601f8ceeb7c610e155 has no state_\*\.json in \.\.\/states/),
      },
    ]);
    // A truncated event file is quarantined on its own.
    writeFileSync(middle, readFileSync(middle, "utf8").slice(0, 40));
    items = await collect(droidBotReader.read(join(out, "events", "event_2026-01-15_120002.json"), OPTIONS));
    expect(quarantined(items).map((e) => [e.source.uri.slice(out.length), e.reason.slice(0, 12)])).toEqual([
      ["/events/event_2026-01-15_120005.json", "invalid JSON"],
      ["/events/event_2026-01-15_120008.json", "stop_state e"],
    ]);
  });
});
