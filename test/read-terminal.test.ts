import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { asciicastReader, type TerminalRecordingMeta, type TerminalTurnMeta } from "../src/read/asciicast.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { readHead } from "../src/read/registry.ts";
import { tmuxLogReader } from "../src/read/tmux-log.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 20 };
const REAL = join(ROOT, "test/fixtures/real/terminal");
const HANDMADE = join(ROOT, "test/fixtures/handmade/terminal");

const turnStream = (t: Trajectory, i: number) => t.turns.at(i)?.meta?.terminal as TerminalTurnMeta;
const recordingMeta = (t: Trajectory) => t.meta?.terminal as TerminalRecordingMeta;

async function readOne(reader: Reader, path: string): Promise<ReadItem> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(items).toHaveLength(1); // one file = one record, whatever happens
  return items[0] as ReadItem;
}

async function readTrajectory(reader: Reader, path: string): Promise<Trajectory> {
  const item = await readOne(reader, path);
  if (item.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item.entry)}`);
  return item.trajectory;
}

function writeCast(text: string, name = "x.cast"): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

/**
 * Expected values, verified by reading each source file (test/fixtures/real/terminal/*.cast,
 * byte-identical copies of asciinema-player's tests/assets, see PROVENANCE.md there). `first` and
 * `last` are the first and last turns' raw output events (what the normalizer will render).
 */
const REAL_SAMPLES: Record<
  string,
  { version: number; size: [number, number]; actions: string[]; before: unknown[]; first: unknown[]; last: unknown[] }
> = {
  // line 2 prints "start", line 3 types "a", line 4 is Enter, line 5 prints "done".
  "asciinema-player__input.cast": {
    version: 2,
    size: [80, 24],
    actions: ["a"],
    before: [["o", "start\r\n"]],
    first: [["o", "done\r\n"]],
    last: [["o", "done\r\n"]],
  },
  // Keystrokes ("a", then Enter on line 6) make the turn; the markers on lines 5 and 7 do not.
  "asciinema-player__markers-input.cast": {
    version: 2,
    size: [80, 24],
    actions: ["a"],
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
    before: [],
    first: [["o", "\u001b[38;2;254;220;186m\u001b[48;2;18;52;86m"]],
    last: [["o", "\u001b[0m\r\n"]],
  },
  // Eleven "hello\r\n" lines.
  "asciinema-player__simple.cast": {
    version: 2,
    size: [80, 24],
    actions: [""],
    before: [],
    first: [["o", "hello\r\n"]],
    last: [["o", "hello\r\n"]],
  },
  // 64 output lines (colour, glyphs) and an exit event on line 67.
  "asciinema-player__theme.cast": {
    version: 3,
    size: [80, 4],
    actions: [""],
    before: [],
    first: [["o", "\u001b[30m"]],
    last: [["o", "◆▋\ue0b0"]],
  },
};

describe("asciicast reader: real samples", () => {
  for (const [name, expected] of Object.entries(REAL_SAMPLES)) {
    it(`${name}: detected by content and read into the verified turns`, async () => {
      const path = join(REAL, name);
      expect(asciicastReader.sniff(await readHead(path), path)).toBe(true);
      expect(tmuxLogReader.sniff(await readHead(path), path)).toBe(false);
      const t = await readTrajectory(asciicastReader, path);
      expect(t.domain).toBe("terminal");
      expect(t.id).toMatch(/^asciicast-[0-9a-f]{32}$/);
      expect(t.meta?.asciicast).toMatchObject({ version: expected.version });
      expect([recordingMeta(t).cols, recordingMeta(t).rows]).toEqual(expected.size);
      expect(recordingMeta(t).events).toEqual(expected.before);
      expect(t.turns.map((turn) => turn.action)).toEqual(expected.actions);
      const first = turnStream(t, 0).events;
      const last = turnStream(t, -1).events;
      expect(first.slice(0, expected.first.length)).toEqual(expected.first);
      expect(last.slice(-expected.last.length)).toEqual(expected.last);
    });
  }

  it("keeps event counts and the v3 exit status", async () => {
    const simple = await readTrajectory(asciicastReader, join(REAL, "asciinema-player__simple.cast"));
    expect(turnStream(simple, 0).events).toHaveLength(11);
    const theme = await readTrajectory(asciicastReader, join(REAL, "asciinema-player__theme.cast"));
    expect(turnStream(theme, 0).events).toHaveLength(65);
    expect(theme.meta?.asciicast).toMatchObject({ exitStatus: "0" });
    const markers = await readTrajectory(asciicastReader, join(REAL, "asciinema-player__markers-input.cast"));
    // "middle" is printed while "a" is being typed: replayed, not the turn's observation.
    expect(turnStream(markers, 0).typing).toEqual([["o", "middle\r\n"]]);
  });
});

describe("asciicast reader: hand-made v1, v2, v3", () => {
  it("v1 (one pretty-printed JSON document): one turn, the recorded command as action", async () => {
    const path = join(HANDMADE, "progress.v1.json");
    expect(asciicastReader.sniff(await readHead(path), path)).toBe(true);
    const t = await readTrajectory(asciicastReader, path);
    expect(t.meta?.asciicast).toMatchObject({ version: 1, command: "./download.sh", title: "progress" });
    expect(t.turns.map((turn) => turn.action)).toEqual(["./download.sh"]);
    expect(turnStream(t, 0).events).toEqual([
      ["o", "fetching data.bin\r\n"],
      ["o", "  0% [          ]"],
      ["o", "\r 50% [#####     ]"],
      ["o", "\r100% [##########]"],
      ["o", "\r\n\u001b[1;32m✔ done\u001b[0m\r\n"],
    ]);
  });

  it("v2 shell session: keystrokes up to Enter are the action, the echo while typing is not observed", async () => {
    const t = await readTrajectory(asciicastReader, join(HANDMADE, "shell-session.v2.cast"));
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "ls",
      "pip install rich",
      "ecoo\u007f\u007fho 'héllo wörld ✓ 日本 🚀'", // raw keystrokes, DEL included
      "./styles.sh",
      "vim notes.txt",
      ":q",
      "cat long.txt",
      "seq 1 15",
      "clear",
      "exit",
    ]);
    expect(recordingMeta(t).events).toEqual([["o", "user@box:~$ "]]);
    expect(turnStream(t, 0).typing).toEqual([
      ["o", "l"],
      ["o", "s"],
    ]);
    expect(turnStream(t, 0).events[0]).toEqual(["o", "\r\n"]);
    expect(turnStream(t, -1).events).toEqual([["o", "\r\nexit\r\n"]]);
    // The resize comes after ":q"'s output, so it belongs to that turn; the next turn starts at 40x12.
    expect(turnStream(t, 5).events).toContainEqual(["r", "40x12"]);
    expect([turnStream(t, 6).cols, turnStream(t, 6).rows]).toEqual([40, 12]);
    expect([turnStream(t, 5).cols, turnStream(t, 5).rows]).toEqual([60, 12]);
  });

  it("v3: relative intervals add up, comments are skipped, resize and exit status kept", async () => {
    const path = join(HANDMADE, "session.v3.cast");
    expect(asciicastReader.sniff(await readHead(path), path)).toBe(true);
    const t = await readTrajectory(asciicastReader, path);
    expect(t.turns.map((turn) => turn.action)).toEqual(["echo hi", "printf 'ab\\bc\\n'"]);
    // Enter of turn 1: 0.1 + 0.5 + 0.0 + 0.4; of turn 2: + 0.1 + 1.0 + 0.5 + 0.0 + 0.25.
    expect(t.turns[0]?.meta?.time).toBeCloseTo(1.0);
    expect(t.turns[1]?.meta?.time).toBeCloseTo(2.85);
    expect(turnStream(t, 0).events).toEqual([
      ["o", "\r\nhi\r\n$ "],
      ["r", "20x5"],
    ]);
    expect([turnStream(t, 1).cols, turnStream(t, 1).rows]).toEqual([20, 5]);
    expect(t.meta?.asciicast).toMatchObject({ version: 3, exitStatus: "0", command: "/bin/bash", timestamp: 1700000000 });
  });

  it("markers without keystrokes: each marker's label is an action", async () => {
    const t = await readTrajectory(asciicastReader, join(HANDMADE, "markers.v2.cast"));
    expect(t.turns.map((turn) => turn.action)).toEqual(["configure", "compile", ""]);
    expect(recordingMeta(t).events).toEqual([["o", "building...\r\n"]]);
    expect(turnStream(t, -1).events).toEqual([["o", "done\r\n"]]);
  });

  it("several Enters in one input event are several turns; unsent trailing keystrokes are none", async () => {
    const path = writeCast(
      [
        `{"version": 2, "width": 20, "height": 5}`,
        `[0.1, "i", "ls\\rpwd\\r"]`,
        `[0.2, "o", "a\\r\\n"]`,
        `[0.3, "i", "\\r\\n"]`,
        `[0.4, "i", "exi"]`,
        `[0.5, "o", "exi"]`,
      ].join("\n"),
    );
    const t = await readTrajectory(asciicastReader, path);
    expect(t.turns.map((turn) => turn.action)).toEqual(["ls", "pwd", ""]);
    expect(turnStream(t, 1).events).toEqual([["o", "a\r\n"]]);
    expect(turnStream(t, 2).events).toEqual([]);
  });

  it("a recording with no events is one turn with the command (or empty) as action", async () => {
    const t = await readTrajectory(asciicastReader, writeCast(`{"version": 2, "width": 80, "height": 24, "command": "htop"}\n`));
    expect(t.turns).toEqual([
      { action: "htop", observation: "", meta: { time: 0, terminal: { cols: 80, rows: 24, typing: [], events: [] } } },
    ]);
  });

  it("the id is a hash of the content: stable across renames, compression and line endings", async () => {
    const path = join(HANDMADE, "session.v3.cast");
    const raw = readFileSync(path);
    const dir = tempDir();
    writeFileSync(join(dir, "renamed.data"), raw);
    writeFileSync(join(dir, "a.cast.gz"), gzipSync(raw));
    writeFileSync(join(dir, "b.cast"), zstdCompressSync(raw));
    writeFileSync(join(dir, "crlf.cast"), raw.toString("utf8").replaceAll("\n", "\r\n"));
    const original = await readTrajectory(asciicastReader, path);
    for (const name of ["renamed.data", "a.cast.gz", "b.cast", "crlf.cast"]) {
      const copy = await readTrajectory(asciicastReader, join(dir, name));
      expect({ ...copy, source: undefined }).toEqual({ ...original, source: undefined });
    }
    const other = await readTrajectory(asciicastReader, join(HANDMADE, "markers.v2.cast"));
    expect(other.id).not.toBe(original.id);
  });
});

describe("asciicast reader: quarantine", () => {
  const quarantineOf = async (text: string) => {
    const item = await readOne(asciicastReader, writeCast(text));
    if (item.kind !== "quarantine") throw new Error("expected a quarantine entry");
    return item.entry;
  };

  it("a bad header quarantines the recording, naming the field", async () => {
    expect(await quarantineOf(`{"version": 4, "width": 80, "height": 24}\n[0.1, "o", "x"]\n`)).toMatchObject({
      source: { line: 1, offset: 0, format: "asciicast" },
      stage: "read",
      field: "version",
    });
    expect(await quarantineOf(`{"version": 2, "height": 24}\n`)).toMatchObject({ field: "width" });
    expect(await quarantineOf(`{"version": 3, "term": {"cols": 0, "rows": 24}}\n`)).toMatchObject({ field: "term.cols" });
    expect(await quarantineOf(`[0.1, "o", "x"]\n`)).toMatchObject({ reason: "header is not a JSON object" });
  });

  it("one bad event line quarantines the whole recording at that line, with its byte offset", async () => {
    const header = `{"version": 2, "width": 80, "height": 24}`;
    const good = `[0.1, "o", "fine\\r\\n"]`;
    const cases: [string, RegExp][] = [
      [`[0.2, "o", "cut`, /invalid JSON/],
      [`[0.2, "o"]`, /\[time, code, data\]/],
      [`{"time": 0.2}`, /\[time, code, data\]/],
      [`[-1, "o", "x"]`, /non-negative/],
      [`[0.2, "o", 7]`, /must be strings/],
      [`[0.2, "r", "80by24"]`, /COLSxROWS/],
      [`# comments are v3 only`, /invalid JSON/],
    ];
    for (const [bad, reason] of cases) {
      const entry = await quarantineOf([header, good, bad, good].join("\n"));
      expect(entry.source).toEqual({ uri: expect.any(String), line: 3, offset: header.length + good.length + 2, format: "asciicast" });
      expect(entry).toMatchObject({ stage: "read", field: "events", excerpt: bad });
      expect(entry.reason).toMatch(reason);
      expect(entry.reason).toMatch(/^line 3: /);
    }
  });

  it("a line over the size limit quarantines the recording without holding the line", async () => {
    const path = writeCast(`{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "${"x".repeat(5000)}"]\n`);
    const items = await collect(asciicastReader.read(path, { maxLineBytes: 1000 }));
    expect(items).toEqual([{ kind: "quarantine", entry: expect.objectContaining({ source: expect.objectContaining({ line: 2 }) }) }]);
    expect((items[0] as { entry: { reason: string } }).entry.reason).toMatch(/over the 1000-byte limit/);
  });

  it("a v1 document that is not JSON, or has bad frames, is quarantined", async () => {
    expect(await quarantineOf(`{\n  "version": 1,\n  "width": 80,\n`)).toMatchObject({ source: { line: 1 } });
    expect(await quarantineOf(`{"version": 1, "width": 80, "height": 24, "stdout": [[0.1, "a"], ["x", "b"]]}`)).toMatchObject({
      field: "stdout.1",
    });
    expect(await quarantineOf(`{"version": 1, "width": 80, "height": 24}`)).toMatchObject({ field: "stdout" });
  });

  it("a damaged archive is an error naming the problem, not a silent empty recording", async () => {
    const whole = gzipSync(readFileSync(join(HANDMADE, "shell-session.v2.cast")));
    const path = writeCast("", "cut.cast.gz");
    writeFileSync(path, whole.subarray(0, whole.length - 20));
    await expect(collect(asciicastReader.read(path, OPTIONS))).rejects.toThrow(/unexpected end of file/i);
  });
});

describe("asciicast sniffing", () => {
  it("recognises v1, v2 and v3 headers and nothing else", () => {
    expect(asciicastReader.sniff(`{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "x"]`, "a.jsonl")).toBe(true);
    expect(asciicastReader.sniff(`{"version": 3, "term": {"cols": 80, "rows": 24}}\n`, "a")).toBe(true);
    expect(asciicastReader.sniff(`{"version": 1, "width": 80, "height": 24, "stdout": []}`, "a")).toBe(true);
    expect(asciicastReader.sniff(`{\n  "version": 1,\n  "width": 80,\n  "stdout": [\n`, "a")).toBe(true);
    expect(asciicastReader.sniff(`{"id": "x", "domain": "terminal", "turns": []}\n`, "a.cast")).toBe(false);
    expect(asciicastReader.sniff(`{"version": 2, "turns": []}\n`, "a.cast")).toBe(false);
    expect(asciicastReader.sniff(`{\n  "version": 2\n}`, "a.cast")).toBe(false);
    expect(asciicastReader.sniff(`{"type":"header","format":"tmux-log","version":1,"cols":80,"rows":24}`, "a.cast")).toBe(false);
  });
});

describe("tmux-log reader", () => {
  const path = join(HANDMADE, "session.tmux.jsonl");

  it("reads the hand-made log: keys up to Enter → the last pane capture before the next keys", async () => {
    expect(tmuxLogReader.sniff(await readHead(path), path)).toBe(true);
    expect(asciicastReader.sniff(await readHead(path), path)).toBe(false);
    const t = await readTrajectory(tmuxLogReader, path);
    expect(t.id).toMatch(/^tmux-[0-9a-f]{32}$/);
    expect(t.domain).toBe("terminal");
    expect(t.meta).toEqual({ tmux: { cols: 60, rows: 8, session: "agent-1", pane: "%0" } });
    // Values from session.tmux.jsonl: captures are trimmed of padding and empty rows.
    expect(t.initialObservation).toBe("agent@sandbox:/repo$");
    expect(t.turns.map((turn) => turn.action)).toEqual(["git status", `python -c 'print("héllo ✓")'`, "clear"]);
    expect(t.turns[0]?.observation).toBe(
      ["agent@sandbox:/repo$ git status", "On branch main", "nothing to commit, working tree clean", "agent@sandbox:/repo$"].join("\n"),
    );
    expect(t.turns[1]?.observation.split("\n").slice(-2)).toEqual(["héllo ✓", "agent@sandbox:/repo$"]);
    expect(t.turns[2]?.observation).toBe("agent@sandbox:/repo$"); // the later of the two captures after `clear`
    expect(t.turns[0]?.meta).toEqual({ time: 1.2 });
  });

  const quarantineOf = async (lines: object[]) => {
    const item = await readOne(tmuxLogReader, writeCast(lines.map((line) => JSON.stringify(line)).join("\n"), "log.jsonl"));
    if (item.kind !== "quarantine") throw new Error("expected a quarantine entry");
    return item.entry;
  };
  const header = { type: "header", format: "tmux-log", version: 1, cols: 80, rows: 24, pane: "%0" };

  it("quarantines a log whose turn has no capture, naming the line of its Enter", async () => {
    const entry = await quarantineOf([
      header,
      { type: "keys", data: "ls\r" },
      { type: "keys", data: "pwd\r" },
      { type: "capture", text: "x" },
    ]);
    expect(entry).toMatchObject({ source: { line: 2 }, field: "turns.0.observation" });
    expect(entry.reason).toMatch(/no pane capture/);
    expect(await quarantineOf([header, { type: "keys", data: "ls\r" }])).toMatchObject({ source: { line: 2 } });
  });

  it("quarantines bad headers, bad events, another pane and a log without turns", async () => {
    expect(await quarantineOf([{ ...header, cols: "80" }])).toMatchObject({ field: "header.cols" });
    expect(await quarantineOf([header, { type: "keys", data: 5 }])).toMatchObject({ source: { line: 2 }, field: "events.data" });
    expect(await quarantineOf([header, { type: "scroll" }])).toMatchObject({ field: "events.type" });
    expect(await quarantineOf([header, { type: "keys", pane: "%1", data: "ls\r" }])).toMatchObject({ field: "events.pane" });
    expect(await quarantineOf([header, { type: "capture", text: "$ " }, { type: "keys", data: "ls" }])).toMatchObject({
      reason: expect.stringMatching(/no turns/),
    });
  });
});
