import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordError } from "../src/core/errors.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { renderScreen, renderTerminalTrajectory, SCROLLBACK_LINES, terminalNormalizer } from "../src/normalize/domains/terminal.ts";
import type { Counters, NormalizeSettings } from "../src/normalize/normalizer.ts";
import { asciicastReader, type TerminalEvent } from "../src/read/asciicast.ts";
import { tmuxLogReader } from "../src/read/tmux-log.ts";
import { collect, ROOT } from "./helpers.ts";

const DEMO = join(ROOT, "data/demo/terminal");
const HANDMADE = join(ROOT, "test/fixtures/handmade/terminal");
const GOLDEN = join(ROOT, "test/fixtures/golden/terminal");
// UPDATE_GOLDEN=1 rewrites the golden files; read every change before committing it.
const UPDATE = process.env.UPDATE_GOLDEN === "1";

async function read(path: string, reader = asciicastReader): Promise<Trajectory> {
  const [item] = await collect(reader.read(path, { maxLineBytes: 1 << 20 }));
  if (item?.kind !== "trajectory") throw new Error(`${path} did not read`);
  return item.trajectory;
}

async function render(path: string, counters: Counters = new Map()): Promise<Trajectory> {
  return renderTerminalTrajectory(await read(path), counters);
}

/** A trajectory of raw output events: one turn, action "run", at the given size. */
function recordingOf(events: TerminalEvent[], cols = 80, rows = 24): Trajectory {
  return {
    id: "t",
    domain: "terminal",
    source: { uri: "mem", format: "asciicast" },
    turns: [{ action: "run", observation: "", meta: { terminal: { cols, rows, typing: [], events } } }],
    meta: { terminal: { cols, rows, events: [] } },
  };
}

async function screenOf(events: TerminalEvent[], cols = 80, rows = 24): Promise<string> {
  const rendered = await renderTerminalTrajectory(recordingOf(events, cols, rows), new Map());
  return rendered.turns[0]?.observation ?? "";
}

/** An action as a JSON string, with DEL and C1 controls escaped too so the golden file stays plain text. */
const actionLabel = (action: string) =>
  JSON.stringify(action).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** The golden text form: each observation under a header naming the turn and its action. */
function goldenText(t: Trajectory): string {
  const parts: string[] = [];
  if (t.initialObservation !== undefined) parts.push(`=== initial observation\n${t.initialObservation}`);
  t.turns.forEach((turn, i) => {
    parts.push(`=== turn ${i + 1}, action ${actionLabel(turn.action)}\n${turn.observation}`);
  });
  return `${parts.join("\n")}\n`;
}

/** The recorded bash session (scripts/record-demo/terminal.ts) and the hand-made recordings. */
const RECORDED = join(DEMO, "shell-session.cast");
const SAMPLES = [
  RECORDED,
  ...["shell-session.v2.cast", "session.v3.cast", "markers.v2.cast", "progress.v1.json"].map((name) => join(HANDMADE, name)),
];

describe("terminal normalizer: golden screens", () => {
  for (const path of SAMPLES) {
    const name = path.slice(path.lastIndexOf("/") + 1);
    it(`${name} renders to its golden screens`, async () => {
      const text = goldenText(await render(path));
      const golden = join(GOLDEN, `${name}.txt`);
      if (UPDATE) {
        mkdirSync(GOLDEN, { recursive: true });
        writeFileSync(golden, text);
      }
      expect(existsSync(golden), `${golden} is missing; run with UPDATE_GOLDEN=1 and read it`).toBe(true);
      expect(text).toBe(readFileSync(golden, "utf8"));
      expect(text.includes("\u001b")).toBe(false); // no escape sequence survives
    });
  }
});

describe("terminal normalizer: what the terminal showed", () => {
  it("recorded bash session: errors, git's \\r progress, vim, clear and a resize as the terminal showed them", async () => {
    // Read off data/demo/terminal/shell-session.cast; the session is scripts/record-demo/terminal.ts.
    const counters: Counters = new Map();
    const t = await render(RECORDED, counters);
    const prompt = "demo@lwm:~/work$";
    const observation = (action: string) => t.turns.find((turn) => turn.action === action)?.observation ?? "(no such turn)";
    expect(t.initialObservation).toBe(prompt);
    expect(t.turns).toHaveLength(14); // the eleven commands typed at bash and the three keys sent to vim
    expect(observation("cat notes.txt")).toBe(
      ["Release checklist", "- run the test suite", "- tag the release", "- write the changelog (naïve café ✓)", prompt].join("\n"),
    );
    // grep's colours vanish, the text stays.
    expect(observation("grep -n --color=auto ERROR app.log")).toBe(
      ["3:2026-01-15 11:59:12 ERROR database connection refused", "5:2026-01-15 11:59:18 ERROR database connection refused", prompt].join(
        "\n",
      ),
    );
    expect(observation("cat missing.txt")).toBe(`cat: missing.txt: No such file or directory\n${prompt}`);
    expect(observation("echo $?")).toBe(`1\n${prompt}`);
    // Thirteen "Receiving objects" updates (and as many for counting and compressing) collapse into their last state.
    expect(observation("git clone --no-local --progress upstream copy")).toBe(
      [
        "Cloning into 'copy'...",
        "remote: Enumerating objects: 13, done.",
        "remote: Counting objects: 100% (13/13), done.",
        "remote: Compressing objects: 100% (7/7), done.",
        "remote: Total 13 (delta 0), reused 0 (delta 0), pack-reused 0",
        "Receiving objects: 100% (13/13), done.",
        prompt,
      ].join("\n"),
    );
    // vim's whole screen (alternate screen): the file, a "~" per empty row, the message line.
    const vim = observation("vim notes.txt").split("\n");
    expect(vim).toHaveLength(30);
    expect(vim.slice(0, 4)).toEqual([
      "Release checklist",
      "- run the test suite",
      "- tag the release",
      "- write the changelog (naïve café ✓)",
    ]);
    expect(vim.slice(4, 29)).toEqual(Array(25).fill("~"));
    expect(vim[29]).toMatch(/^"notes\.txt" 4L, 98B +1,1 +All$/);
    // Each key sent to vim observes vim's screen when the next key came: ":" and then ":q" on its command line.
    expect(observation(":").split("\n")).toEqual([...vim.slice(0, 29), ":"]);
    expect(observation("q").split("\n")).toEqual([...vim.slice(0, 29), ":q"]);
    // Enter: back from vim, the normal screen again, none of vim's screen.
    expect(observation("\r")).toBe(prompt);
    // clear leaves only the new prompt, none of git log's lines above it.
    expect(observation("clear")).toBe(prompt);
    expect(observation("stty size")).toBe(`24 80\n${prompt}`);
    expect(observation("exit")).toBe("exit");
    expect(counters.get("terminal.alt_screen_observations")).toBe(3);
    expect(counters.get("terminal.resizes")).toBe(1);
    expect(counters.get("terminal.turns_rendered")).toBe(14);
    expect(counters.get("terminal.transient_alt_screens")).toBeUndefined(); // vim's screen was observed
  });

  it("shell session: echo, progress, backspaces, UTF-8, cursor moves, vim, wrap, scrollback, clear", async () => {
    const counters: Counters = new Map();
    const t = await render(join(HANDMADE, "shell-session.v2.cast"), counters);
    const observations = t.turns.map((turn) => turn.observation);
    expect(t.initialObservation).toBe("user@box:~$");
    // The command line is not repeated; the next prompt is part of what the command showed.
    expect(observations[0]).toBe("README.md  notes.txt  src\nuser@box:~$");
    expect(observations[1]).toBe(
      "Collecting rich\nDownloading rich-13.7.1 [##########] 100%\nSuccessfully installed rich-13.7.1\nuser@box:~$",
    );
    expect(observations[2]).toBe("héllo wörld ✓ 日本 🚀\nuser@box:~$"); // emoji split across two events
    expect(observations[3]).toBe("ORANGE plain bold\nazc\n12\nuser@box:~$");
    const vimScreen = ["first line of notes", ...Array(10).fill("~")];
    expect(observations[4]?.split("\n")).toEqual([...vimScreen, '"notes.txt" 1L, 20B']);
    expect(observations[5]?.split("\n")).toEqual([...vimScreen, ":"]); // the keys sent to vim, one turn each
    expect(observations[6]?.split("\n")).toEqual([...vimScreen, ":q"]);
    expect(observations[7]).toBe("user@box:~$"); // Enter: back from vim's alternate screen
    expect(observations[8]).toBe("This line is seventy characters long, so it wraps on a 40-column tty.\nuser@box:~$");
    expect(observations[9]).toBe([...Array.from({ length: 15 }, (_, i) => String(i + 1)), "user@box:~$"].join("\n"));
    expect(observations[10]).toBe("user@box:~$");
    expect(observations[11]).toBe("exit");
    expect(counters).toEqual(
      new Map([
        ["terminal.alt_screen_observations", 3],
        ["terminal.resizes", 1],
        ["terminal.turns_rendered", 12],
        ["terminal.trajectories_rendered", 1],
      ]),
    );
  });

  it("drops the raw events from meta.terminal and keeps the sizes", async () => {
    const t = await render(join(HANDMADE, "session.v3.cast"));
    expect(t.meta?.terminal).toEqual({ cols: 40, rows: 10 });
    expect(t.turns.map((turn) => turn.meta)).toEqual([
      { time: expect.closeTo(1.0), terminal: { cols: 40, rows: 10 } },
      { time: expect.closeTo(2.85), terminal: { cols: 20, rows: 5 } },
    ]);
    expect(t.turns.map((turn) => turn.observation)).toEqual(["hi\n$", "ac\n$"]);
    expect(t.meta?.asciicast).toMatchObject({ exitStatus: "0" });
  });

  it("applies carriage returns, backspaces, cursor moves and erases; colours vanish", async () => {
    expect(await screenOf([["o", "10%\r50%\r100%\r\n"]])).toBe("100%");
    expect(await screenOf([["o", "abcd\b\bXY\r\n"]])).toBe("abXY");
    expect(await screenOf([["o", "hello\u001b[3D\u001b[K!\r\n"]])).toBe("he!");
    expect(await screenOf([["o", "\u001b[1;31mred\u001b[0m \u001b[38;5;196mx\u001b[48;2;1;2;3my\u001b[0m"]])).toBe("red xy");
    expect(await screenOf([["o", "a   \r\n\r\n\r\n"]])).toBe("a"); // trailing spaces and blank lines go
    expect(await screenOf([["o", "\u001b]0;window title\u0007ok"]])).toBe("ok"); // OSC title is not text
    expect(await screenOf([["o", "\u001b[?1049hless screen\u001b[5;1H(END)"]], 20, 5)).toBe("less screen\n\n\n\n(END)");
  });

  it("a turn that prints more than the scrollback keeps its tail and says so", async () => {
    const counters: Counters = new Map();
    const lines = Array.from({ length: SCROLLBACK_LINES + 50 }, (_, i) => `line ${i}\r\n`).join("");
    const rendered = await renderTerminalTrajectory(recordingOf([["o", lines]], 20, 5), counters);
    const observed = rendered.turns[0]?.observation.split("\n") ?? [];
    expect(observed.at(-1)).toBe(`line ${SCROLLBACK_LINES + 49}`);
    expect(observed.length).toBeLessThanOrEqual(SCROLLBACK_LINES + 5);
    expect(counters.get("terminal.scrollback_overflow")).toBe(1);
  });

  it("passes trajectories without a recording through (tmux captures are screen text already)", async () => {
    const counters: Counters = new Map();
    const t = await read(join(HANDMADE, "session.tmux.jsonl"), tmuxLogReader);
    expect(await terminalNormalizer.normalize(t, {} as NormalizeSettings, counters)).toBe(t);
    expect(counters.get("terminal.text_observations")).toBe(1);
  });

  it("rejects a malformed recording with a RecordError naming the field", async () => {
    const bad = recordingOf([["o", "x"]]);
    (bad.turns[0]?.meta?.terminal as { events: unknown }).events = [["q", "x"]];
    await expect(renderTerminalTrajectory(bad, new Map())).rejects.toThrow(RecordError);
    await expect(renderTerminalTrajectory(bad, new Map())).rejects.toMatchObject({ field: "turns.0.meta.terminal" });
    const noSize = { ...recordingOf([]), meta: { terminal: { events: [] } } };
    await expect(renderTerminalTrajectory(noSize, new Map())).rejects.toMatchObject({ field: "meta.terminal" });
  });

  it("is the terminal domain's normalizer and is async", async () => {
    expect(terminalNormalizer.domain).toBe("terminal");
    const result = terminalNormalizer.normalize(recordingOf([["o", "x"]]), {} as NormalizeSettings, new Map());
    expect(result).toBeInstanceOf(Promise);
    expect((await result).turns[0]?.observation).toBe("x");
  });
});

describe("terminal normalizer: chunking does not change the screen", () => {
  // Progress bar, truecolor, cursor moves, combining mark, wide CJK, emoji (surrogate pair, 4 UTF-8 bytes).
  const STREAM =
    "\u001b[38;2;255;100;0mDownloading\u001b[0m [##   ] 40%\r\u001b[KDownloading [#####] 100%\r\n" +
    "naïve café e\u0301 日本語 🚀 ✓\u001b[2D!\r\n" +
    "\u001b[1mbold\u001b[22m tab\there\r\n";
  const cols = 40;
  const rows = 6;

  it("renders the reference stream as expected", async () => {
    expect(await renderScreen([STREAM], cols, rows)).toBe(
      // "\u001b[2D" steps back over "✓" and the space (the emoji is two cells wide); the tab stops at column 16.
      "Downloading [#####] 100%\nnaïve café e\u0301 日本語 🚀!✓\nbold tab        here",
    );
  });

  it("split at every UTF-16 code unit into two events renders identically", async () => {
    const whole = await screenOf([["o", STREAM]], cols, rows);
    for (let i = 1; i < STREAM.length; i++) {
      expect(
        await screenOf(
          [
            ["o", STREAM.slice(0, i)],
            ["o", STREAM.slice(i)],
          ],
          cols,
          rows,
        ),
        `split at code unit ${i}`,
      ).toBe(whole);
    }
  });

  it("split at every UTF-8 byte into two chunks renders identically", async () => {
    const bytes = new TextEncoder().encode(STREAM);
    const whole = await renderScreen([bytes], cols, rows);
    expect(whole).toBe(await renderScreen([STREAM], cols, rows));
    for (let i = 1; i < bytes.length; i++) {
      expect(await renderScreen([bytes.subarray(0, i), bytes.subarray(i)], cols, rows), `split at byte ${i}`).toBe(whole);
    }
  });

  it.each([join(HANDMADE, "shell-session.v2.cast"), RECORDED])(
    "a whole session written one code unit per event renders identically (%s)",
    async (path) => {
      const session = await read(path);
      const explode = (events: TerminalEvent[]): TerminalEvent[] =>
        events.flatMap((event) => (event[0] === "o" ? [...event[1].split("")].map((unit): TerminalEvent => ["o", unit]) : [event]));
      const exploded: Trajectory = structuredClone(session);
      const terminal = exploded.meta?.terminal as { events: TerminalEvent[] };
      terminal.events = explode(terminal.events);
      for (const turn of exploded.turns) {
        const stream = turn.meta?.terminal as { typing: TerminalEvent[]; events: TerminalEvent[] };
        stream.typing = explode(stream.typing);
        stream.events = explode(stream.events);
      }
      const expected = await renderTerminalTrajectory(session, new Map());
      expect(await renderTerminalTrajectory(exploded, new Map())).toEqual(expected);
    },
  );
});
