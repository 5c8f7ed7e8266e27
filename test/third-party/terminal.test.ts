/**
 * The asciicast reader and the terminal normalizer on asciinema-player's test recordings
 * (../shared/fixtures/real/terminal/asciinema/asciinema-player__*.cast, see PROVENANCE.md there).
 * Expected values were read off the sample files by a person (the comments say where). The same
 * code is covered on the project's own recordings by test/read-terminal.test.ts and
 * test/normalize-terminal.test.ts.
 */
import { expect, it } from "vitest";
import type { Trajectory } from "../../src/core/trajectory.ts";
import { renderTerminalTrajectory } from "../../src/normalize/domains/terminal.ts";
import type { Counters } from "../../src/normalize/normalizer.ts";
import { asciicastReader, type TerminalRecordingMeta, type TerminalTurnMeta } from "../../src/read/asciicast.ts";
import { readHead } from "../../src/read/registry.ts";
import { tmuxLogReader } from "../../src/read/tmux-log.ts";
import { collect } from "../helpers.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

const sample = (name: string) => thirdParty("terminal/asciinema", name);
const turnStream = (t: Trajectory, i: number) => t.turns.at(i)?.meta?.terminal as TerminalTurnMeta;
const recordingMeta = (t: Trajectory) => t.meta?.terminal as TerminalRecordingMeta;

async function read(path: string): Promise<Trajectory> {
  const items = await collect(asciicastReader.read(path, { maxLineBytes: 1 << 20 }));
  expect(items).toHaveLength(1); // one file = one record, whatever happens
  const [item] = items;
  if (item?.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item)}`);
  return item.trajectory;
}

async function render(path: string, counters: Counters = new Map()): Promise<Trajectory> {
  return renderTerminalTrajectory(await read(path), counters);
}

/**
 * Expected values, verified by reading each source file. `first` and `last` are the first and
 * last turns' raw output events (what the normalizer will render).
 */
const SAMPLES: Record<
  string,
  {
    version: number;
    size: [number, number];
    actions: string[];
    /** `meta.split`: keystrokes when the file has input events with Enter, else no prompt repeats in these samples. */
    split: "keystrokes" | "single-turn";
    before: unknown[];
    first: unknown[];
    last: unknown[];
  }
> = {
  // line 2 prints "start", line 3 types "a", line 4 is Enter, line 5 prints "done".
  "asciinema-player__input.cast": {
    version: 2,
    size: [80, 24],
    actions: ["a"],
    split: "keystrokes",
    before: [["o", "start\r\n"]],
    first: [["o", "done\r\n"]],
    last: [["o", "done\r\n"]],
  },
  // Keystrokes ("a", then Enter on line 6) make the turn; the markers on lines 5 and 7 do not.
  "asciinema-player__markers-input.cast": {
    version: 2,
    size: [80, 24],
    actions: ["a"],
    split: "keystrokes",
    before: [["o", "start\r\n"]],
    first: [
      ["o", "more\r\n"],
      ["o", "end\r\n"],
      ["o", "done\r\n"],
    ],
    last: [
      ["o", "more\r\n"],
      ["o", "end\r\n"],
      ["o", "done\r\n"],
    ],
  },
  // No keystrokes, no markers, no command: one turn with action "". Resizes on lines 3 and 5.
  "asciinema-player__resizing.cast": {
    version: 3,
    size: [80, 24],
    actions: [""],
    split: "single-turn",
    before: [],
    first: [
      ["o", "hello "],
      ["r", "100x30"],
      ["o", "world"],
      ["r", "50x10"],
      ["o", "!"],
    ],
    last: [["o", "!"]],
  },
  "asciinema-player__rgb.cast": {
    version: 3,
    size: [10, 4],
    actions: [""],
    split: "single-turn",
    before: [],
    first: [["o", "\u001b[38;2;254;220;186m\u001b[48;2;18;52;86m"]],
    last: [["o", "\u001b[0m\r\n"]],
  },
  // Eleven "hello\r\n" lines.
  "asciinema-player__simple.cast": {
    version: 2,
    size: [80, 24],
    actions: [""],
    split: "single-turn",
    before: [],
    first: [["o", "hello\r\n"]],
    last: [["o", "hello\r\n"]],
  },
  // 64 output lines (colour, glyphs) and an exit event on line 67.
  "asciinema-player__theme.cast": {
    version: 3,
    size: [80, 4],
    actions: [""],
    split: "single-turn",
    before: [],
    first: [["o", "\u001b[30m"]],
    last: [["o", "◆▋\ue0b0"]],
  },
};

describeThirdParty("asciicast reader: asciinema-player's recordings", () => {
  for (const [name, expected] of Object.entries(SAMPLES)) {
    it(`${name}: detected by content and read into the verified turns`, async () => {
      const path = sample(name);
      expect(asciicastReader.sniff(await readHead(path), path)).toBe(true);
      expect(tmuxLogReader.sniff(await readHead(path), path)).toBe(false);
      const t = await read(path);
      expect(t.domain).toBe("terminal");
      expect(t.id).toMatch(/^asciicast-[0-9a-f]{32}$/);
      expect(t.meta?.asciicast).toMatchObject({ version: expected.version });
      expect([recordingMeta(t).cols, recordingMeta(t).rows]).toEqual(expected.size);
      expect(recordingMeta(t).events).toEqual(expected.before);
      expect(t.turns.map((turn) => turn.action)).toEqual(expected.actions);
      expect(t.meta?.split).toBe(expected.split);
      expect(t.meta?.asciicast).not.toHaveProperty("terminalReplies"); // typed keys only
      const first = turnStream(t, 0).events;
      const last = turnStream(t, -1).events;
      expect(first.slice(0, expected.first.length)).toEqual(expected.first);
      expect(last.slice(-expected.last.length)).toEqual(expected.last);
    });
  }

  it("keeps event counts and the v3 exit status", async () => {
    const simple = await read(sample("asciinema-player__simple.cast"));
    expect(turnStream(simple, 0).events).toHaveLength(11);
    const theme = await read(sample("asciinema-player__theme.cast"));
    expect(turnStream(theme, 0).events).toHaveLength(65);
    expect(theme.meta?.asciicast).toMatchObject({ exitStatus: "0" });
    const markers = await read(sample("asciinema-player__markers-input.cast"));
    // "middle" is printed while "a" is being typed: replayed, not the turn's observation.
    expect(turnStream(markers, 0).typing).toEqual([["o", "middle\r\n"]]);
  });
});

describeThirdParty("terminal normalizer: asciinema-player's recordings", () => {
  it("input, markers-input, resizing, truecolor, simple, theme render to what the terminal showed", async () => {
    const input = await render(sample("asciinema-player__input.cast"));
    expect(input.initialObservation).toBe("start");
    expect(input.turns.map((t) => t.observation)).toEqual(["done"]);
    const markers = await render(sample("asciinema-player__markers-input.cast"));
    expect(markers.turns.map((t) => t.observation)).toEqual(["more\nend\ndone"]);
    // "hello " at 80 cols, resize to 100x30, "world", resize to 50x10, "!"
    const counters: Counters = new Map();
    const resizing = await render(sample("asciinema-player__resizing.cast"), counters);
    expect(resizing.turns[0]?.observation).toBe("hello world!");
    expect(counters.get("terminal.resizes")).toBe(2);
    // Truecolor foreground and background vanish; the glyphs (incl. private-use U+E0B0) stay.
    const rgb = await render(sample("asciinema-player__rgb.cast"));
    expect(rgb.turns[0]?.observation).toBe("◆▋\ue0b0");
    const simple = await render(sample("asciinema-player__simple.cast"));
    expect(simple.turns[0]?.observation).toBe(Array(11).fill("hello").join("\n"));
    const theme = await render(sample("asciinema-player__theme.cast"));
    expect(theme.turns[0]?.observation).toBe(`${"◆▋\ue0b0".repeat(16)}\n${"◆▋\ue0b0".repeat(16)}`);
  });

  it("no escape sequence survives in any observation", async () => {
    for (const name of Object.keys(SAMPLES)) {
      const t = await render(sample(name));
      const texts = [t.initialObservation ?? "", ...t.turns.map((turn) => turn.observation)];
      for (const text of texts) expect(text.includes("\u001b"), name).toBe(false);
    }
  });
});
