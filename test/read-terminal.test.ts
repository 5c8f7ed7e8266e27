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
const DEMO = join(ROOT, "data/demo/terminal");
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
  if (item.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item)}`);
  return item.trajectory;
}

function writeCast(text: string, name = "x.cast"): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

/** The commands typed in data/demo/terminal/shell-session.cast (scripts/record-demo/terminal.ts), in order. */
const RECORDED_COMMANDS = [
  "ls -la",
  "cat notes.txt",
  "grep -n --color=auto ERROR app.log",
  "cat missing.txt",
  "echo $?",
  "git clone --no-local --progress upstream copy",
  "git -C copy log --oneline --stat",
  "vim notes.txt",
  // vim has the alternate screen: each key is a turn of its own, Enter included.
  ":",
  "q",
  "\r",
  "clear",
  "stty size",
  "exit",
];
/** The keys sent to vim (while it had the alternate screen). */
const VIM_KEYS = new Set([":", "q", "\r"]);
const PROMPT = "demo@lwm:~/work$ ";
const joined = (events: unknown[][]) => events.map((event) => event[1]).join("");

describe("asciicast reader: the recorded bash session (data/demo/terminal/shell-session.cast)", () => {
  const path = join(DEMO, "shell-session.cast");

  it("is detected by content and read into one turn per command typed", async () => {
    expect(asciicastReader.sniff(await readHead(path), path)).toBe(true);
    expect(tmuxLogReader.sniff(await readHead(path), path)).toBe(false);
    const t = await readTrajectory(asciicastReader, path);
    expect(t.domain).toBe("terminal");
    expect(t.id).toMatch(/^asciicast-[0-9a-f]{32}$/);
    expect(t.meta?.asciicast).toMatchObject({ version: 2, timestamp: 1768478400 });
    expect([recordingMeta(t).cols, recordingMeta(t).rows]).toEqual([100, 30]);
    expect(t.turns.map((turn) => turn.action)).toEqual(RECORDED_COMMANDS);
    expect(t.meta?.split).toBe("keystrokes");
    // Before the first keystroke: bash's first prompt, after it turns bracketed paste on.
    expect(joined(recordingMeta(t).events)).toBe(`\u001b[?2004h${PROMPT}`);
  });

  it("the echo while a command is typed is its typing; the output after Enter is the turn's", async () => {
    const t = await readTrajectory(asciicastReader, path);
    // bash echoes every key of its command line; a key sent to vim acts at once (no typing).
    t.turns.forEach((turn, i) => {
      expect(joined(turnStream(t, i).typing), turn.action).toBe(VIM_KEYS.has(turn.action) ? "" : turn.action);
    });
    // vim's screen is the output of "vim notes.txt" up to the first key; ":" only draws the command line.
    expect(joined(turnStream(t, RECORDED_COMMANDS.indexOf("vim notes.txt")).events)).toContain("\u001b[?1049h");
    expect(joined(turnStream(t, RECORDED_COMMANDS.indexOf(":")).events)).toBe(
      "\u001b[?25l\u001b[30;73H:\u001b[1;1H\u001b[30;1H\u001b[K\u001b[30;1H:\u001b[?25h",
    );
    expect(joined(turnStream(t, RECORDED_COMMANDS.indexOf("\r")).events)).toContain("\u001b[?1049l");
    // Enter: bash moves to a new line and turns bracketed paste off before running the command.
    expect(joined(turnStream(t, 0).events).startsWith("\r\n\u001b[?2004l\r")).toBe(true);
    expect(joined(turnStream(t, 3).events)).toContain("cat: missing.txt: No such file or directory\r\n");
    expect(joined(turnStream(t, 4).events)).toContain("\r1\r\n");
    expect(joined(turnStream(t, -1).events)).toBe("\r\n\u001b[?2004l\rexit\r\n");
    // The time of a turn is its Enter's: the first `[1.16, "i", "\r"]`, the last `[21.5, "i", "\r"]`.
    expect(t.turns[0]?.meta?.time).toBe(1.16);
    expect(t.turns.at(-1)?.meta?.time).toBe(21.5);
  });

  it("the resize (after clear's output) belongs to clear's turn; stty size runs at 80x24", async () => {
    const t = await readTrajectory(asciicastReader, path);
    const clear = RECORDED_COMMANDS.indexOf("clear");
    expect(turnStream(t, clear).events).toContainEqual(["r", "80x24"]);
    expect([turnStream(t, clear).cols, turnStream(t, clear).rows]).toEqual([100, 30]);
    expect([turnStream(t, clear + 1).cols, turnStream(t, clear + 1).rows]).toEqual([80, 24]);
    expect(joined(turnStream(t, clear + 1).events)).toContain("24 80\r\n");
  });

  it("git's progress arrives as many updates, each ending in \\r", async () => {
    const t = await readTrajectory(asciicastReader, path);
    const clone = joined(turnStream(t, RECORDED_COMMANDS.indexOf("git clone --no-local --progress upstream copy")).events);
    const receiving = clone.match(/Receiving objects: +\d+% \(\d+\/13\)\r/g) ?? [];
    expect(receiving).toHaveLength(13); // 1/13 … 13/13, then "100% (13/13), done."
    expect(clone).toContain("Receiving objects: 100% (13/13), done.\r\n");
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
      ":", // keys sent to vim (alternate screen): one turn per input event, Enter kept
      "q",
      "\r",
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
    // The resize comes after the output of vim's last key, so it belongs to that turn; the next turn starts at 40x12.
    expect(turnStream(t, 7).events).toContainEqual(["r", "40x12"]);
    expect([turnStream(t, 8).cols, turnStream(t, 8).rows]).toEqual([40, 12]);
    expect([turnStream(t, 7).cols, turnStream(t, 7).rows]).toEqual([60, 12]);
    expect(turnStream(t, 5).events).toEqual([["o", "\u001b[12;1H\u001b[K:"]]);
    expect(turnStream(t, 5).typing).toEqual([]);
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
    // Issue 34: a marker without a label names no action (it used to be a turn with an empty action).
    expect(t.turns.map((turn) => turn.action)).toEqual(["configure", "compile"]);
    expect(recordingMeta(t).events).toEqual([["o", "building...\r\n"]]);
    expect(turnStream(t, -1).events.at(-1)).toEqual(["o", "done\r\n"]);
  });

  it("several Enters in one input event are several turns; an empty Enter and unsent trailing keystrokes are none", async () => {
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
    // Issue 34: an Enter on an empty line submits nothing (it used to be a turn with an empty action).
    expect(t.turns.map((turn) => turn.action)).toEqual(["ls", "pwd"]);
    expect(turnStream(t, 1).events).toEqual([["o", "a\r\n"]]);
  });

  it("a recording with no events is one turn with the command (or empty) as action", async () => {
    const t = await readTrajectory(asciicastReader, writeCast(`{"version": 2, "width": 80, "height": 24, "command": "htop"}\n`));
    expect(t.turns).toEqual([
      { action: "htop", observation: "", meta: { time: 0, terminal: { cols: 80, rows: 24, typing: [], events: [] } } },
    ]);
    expect(t.meta?.read_filter).toBeUndefined();
    // Without a command nothing is an action: read, but marked for filtered/ (issue 34: no empty turns trained on).
    const bare = await readTrajectory(asciicastReader, writeCast(`{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "hello\\r\\n"]\n`));
    expect(bare.turns.map((turn) => turn.action)).toEqual([""]);
    expect(bare.meta?.read_filter).toMatchObject({ stage: "terminal-no-action" });
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

  it("a last event line cut off mid-way (recorder killed) is left out: the events before it are read, the cut noted", async () => {
    const lines = [
      `{"version": 2, "width": 80, "height": 24}`,
      `[0.1, "o", "$ "]`,
      `[0.5, "i", "echo a\\r"]`,
      `[0.6, "o", "echo a\\r\\na\\r\\n$ "]`,
      `[0.7, "i", "echo b\\r"]`,
      `[0.8, "o", "echo b\\r\\nhel`,
    ];
    const t = await readTrajectory(asciicastReader, writeCast(lines.join("\n")));
    expect(t.turns.map((turn) => turn.action)).toEqual(["echo a", "echo b"]);
    expect(turnStream(t, 0).events).toEqual([["o", "\na\r\n$ "]]);
    expect(t.meta?.asciicast).toMatchObject({ version: 2, truncatedLine: 6 });
    // v3, with a comment and blank lines after the cut: still its end.
    const v3 = [
      `{"version": 3, "term": {"cols": 80, "rows": 24}}`,
      `[0.1, "m", "first"]`,
      `[0.1, "o", "one\\r\\n"]`,
      `[0.1, "o", "tw`,
      "# end",
      "",
    ];
    const t3 = await readTrajectory(asciicastReader, writeCast(v3.join("\n")));
    expect([t3.meta?.split, t3.turns.map((turn) => turn.action), t3.meta?.asciicast]).toEqual([
      "markers",
      ["first"],
      { version: 3, truncatedLine: 4 },
    ]);
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
    // From below the command's echo (issue 34: the typed command is not observed; it used to be the whole screen).
    expect(t.turns[0]?.observation).toBe(["On branch main", "nothing to commit, working tree clean", "agent@sandbox:/repo$"].join("\n"));
    expect(t.turns[1]?.observation.split("\n").slice(-2)).toEqual(["héllo ✓", "agent@sandbox:/repo$"]);
    expect(t.turns[2]?.observation).toBe("agent@sandbox:/repo$"); // the later of the two captures after `clear`
    expect(t.turns[0]?.meta).toEqual({ time: 1.2 });
  });

  it("reads the recorded tmux session (data/demo/terminal/session.tmux.jsonl): one turn per command sent", async () => {
    const recorded = join(DEMO, "session.tmux.jsonl");
    expect(tmuxLogReader.sniff(await readHead(recorded), recorded)).toBe(true);
    expect(asciicastReader.sniff(await readHead(recorded), recorded)).toBe(false);
    const t = await readTrajectory(tmuxLogReader, recorded);
    expect(t.meta).toEqual({ tmux: { cols: 100, rows: 30, session: "demo", pane: "%0" } });
    expect(t.initialObservation).toBe(PROMPT.trimEnd());
    const commands = [
      "ls",
      "grep -c ERROR app.log",
      "cat missing.txt",
      "echo $?",
      "printf 'héllo wörld ✓ 日本\\n'",
      "git -C upstream log --oneline",
      "clear",
      "wc -l notes.txt app.log",
    ];
    expect(t.turns.map((turn) => turn.action)).toEqual(commands);
    // Each observation is the pane after the command, below its echo (the captures taken while typing are skipped).
    const tail = (i: number, n: number) => t.turns[i]?.observation.split("\n").slice(-n);
    const prompt = PROMPT.trimEnd();
    expect(t.turns[0]?.observation).toBe(`app.log  notes.txt  upstream\n${prompt}`);
    expect(t.turns[1]?.observation).toBe(`2\n${prompt}`);
    expect(tail(2, 2)).toEqual(["cat: missing.txt: No such file or directory", prompt]);
    expect(tail(3, 2)).toEqual(["1", prompt]);
    expect(tail(4, 2)).toEqual(["héllo wörld ✓ 日本", prompt]);
    expect(tail(5, 3)).toEqual(["924f25d (HEAD -> main) Document the scripts", "98303dd Add greet and count scripts", prompt]);
    expect(t.turns[6]?.observation).toBe(prompt); // clear
    expect(t.turns[7]?.observation).toBe(`  4 notes.txt\n  6 app.log\n 10 total\n${prompt}`);
    for (const [i, turn] of t.turns.entries()) expect(turn.observation, commands[i]).not.toContain(`${PROMPT}${commands[i]}`);
    expect(t.turns.map((turn) => turn.meta?.time)).toEqual([1.5, 3.3, 5.1, 6.9, 8.7, 10.5, 12.3, 14.1]);
  });

  describe("a log whose last line was cut while it was written (cut-last-line.ts)", () => {
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    const upTo = (n: number, cut?: number) =>
      writeCast(
        [...lines.slice(0, n - 1), cut === undefined ? (lines[n - 1] as string) : (lines[n - 1] as string).slice(0, cut)].join("\n"),
        "log.jsonl",
      );

    it("the log before it is read, with meta.truncated_line (the cut line: the second capture after `clear`)", async () => {
      const before = await readTrajectory(tmuxLogReader, upTo(10));
      const t = await readTrajectory(tmuxLogReader, upTo(11, 50));
      expect(t.turns.map((turn) => turn.action)).toEqual(["git status", `python -c 'print("héllo ✓")'`, "clear"]);
      expect(t.turns).toEqual(before.turns);
      expect(t.id).toBe(before.id);
      expect(t.meta).toEqual({ ...before.meta, truncated_line: { line: 11, bytes: 50 } });
    });

    it("a last command still waiting for its capture (the cut line) is meta.unobserved_final_action, not a turn", async () => {
      const whole = await readTrajectory(tmuxLogReader, path);
      const t = await readTrajectory(tmuxLogReader, upTo(10, 30));
      expect(t.turns).toEqual(whole.turns.slice(0, 2));
      expect(t.meta).toEqual({ ...whole.meta, unobserved_final_action: "clear", truncated_line: { line: 10, bytes: 30 } });
      // Without a cut line, a command without its capture still quarantines the log.
      const uncut = await readOne(tmuxLogReader, upTo(9));
      expect(uncut.kind === "quarantine" && uncut.entry).toMatchObject({ source: { line: 9 }, field: "turns.2.observation" });
    });

    it("negative controls: a cut line with lines after it, or a log of one cut line, is quarantined at it", async () => {
      const hole = await readOne(
        tmuxLogReader,
        writeCast([...lines.slice(0, 7), (lines[7] as string).slice(0, 50), ...lines.slice(8)].join("\n")),
      );
      if (hole.kind !== "quarantine") throw new Error(JSON.stringify(hole));
      expect(hole.entry).toMatchObject({ source: { line: 8 }, field: "events", stage: "read" });
      expect(hole.entry.reason).toMatch(/^line 8: invalid JSON/);
      const alone = await readOne(tmuxLogReader, upTo(1, 40));
      expect(alone.kind === "quarantine" && alone.entry).toMatchObject({ source: { line: 1 }, field: "header" });
    });
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
