/**
 * What a recorded terminal stream means (src/read/terminal-stream.ts) and how the asciicast reader
 * cuts turns with it: terminal replies are not keystrokes, keys sent to a full-screen program are
 * turns of their own, output-only recordings are cut at shell prompts. On the project's own
 * recordings (test/fixtures/recorded/terminal/, scripts/record-demo/terminal-fixtures.ts: real bash,
 * vim and less in a pty whose other end is a real terminal emulator), on the recorded demo session,
 * and on hand-made streams for the cases a recording cannot pin down.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import xterm from "@xterm/headless";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { renderTerminalTrajectory } from "../src/normalize/domains/terminal.ts";
import type { Counters } from "../src/normalize/normalizer.ts";
import { asciicastReader, type TerminalRecordingMeta, type TerminalTurnMeta } from "../src/read/asciicast.ts";
import { type InputState, newInputState, promptShape, terminalKeys } from "../src/read/terminal-stream.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const RECORDED = join(ROOT, "test/fixtures/recorded/terminal");
const DEMO_SESSION = join(ROOT, "data/demo/terminal/shell-session.cast");
const PROMPT = "demo@lwm:~/work$";
const ESC = "\u001b";
const BEL = "\u0007";

const turnStream = (t: Trajectory, i: number) => t.turns.at(i)?.meta?.terminal as TerminalTurnMeta;
const recordingMeta = (t: Trajectory) => t.meta?.terminal as TerminalRecordingMeta;
const joined = (events: unknown[][]) => events.map((event) => event[1]).join("");

async function read(path: string): Promise<Trajectory> {
  const items = await collect(asciicastReader.read(path, { maxLineBytes: 1 << 20 }));
  expect(items).toHaveLength(1);
  const [item] = items;
  if (item?.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item)}`);
  return item.trajectory;
}

async function render(path: string, counters: Counters = new Map()): Promise<Trajectory> {
  return renderTerminalTrajectory(await read(path), counters);
}

/** A v2 cast from events. */
function cast(events: [number, string, string][], header: Record<string, unknown> = {}): string {
  const path = join(tempDir(), "x.cast");
  const lines = [{ version: 2, width: 40, height: 10, ...header }, ...events].map((line) => JSON.stringify(line));
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

const keysOf = (data: string, state: InputState = newInputState()) => terminalKeys(data, state);

describe("terminal replies are not keystrokes", () => {
  it("every reply xterm.js generates for a query is taken out whole (the emulator is the reference)", async () => {
    const terminal = new xterm.Terminal({ cols: 80, rows: 24, allowProposedApi: true, windowOptions: { getWinSizeChars: true } });
    const queries = [
      "\u001b[6n", // DSR: cursor position
      "\u001b[?6n", // DECXCPR
      "\u001b[5n", // operating status
      "\u001b[c", // DA1
      "\u001b[>c", // DA2
      "\u001b[?2004$p", // DECRQM, DEC private mode
      "\u001b[4$p", // DECRQM, ANSI mode
      "\u001b[18t", // XTWINOPS: text area size in characters
      "\u001bP$qm\u001b\\", // DECRQSS: SGR
      "\u001bP$qr\u001b\\", // DECRQSS: scroll region
      "\u001bP$q q\u001b\\", // DECRQSS: cursor style
    ];
    const replies: string[] = [];
    terminal.onData((data) => replies.push(data));
    for (const query of queries) await new Promise<void>((resolve) => terminal.write(`\u001b[3;5H${query}`, resolve));
    terminal.dispose();
    expect(replies).toHaveLength(queries.length); // each query answered once
    expect(replies).toContain("\u001b[3;5R");
    expect(replies).toContain("\u001b[>0;276;0c");
    const state = { ...newInputState(), cursorQueries: 1 };
    for (const reply of replies) expect(keysOf(reply, state), JSON.stringify(reply)).toEqual([]);
    // Run together with keys between them, only the keys are left.
    const mixed = replies.map((reply, i) => `${reply}${String.fromCharCode(97 + i)}`).join("");
    expect(keysOf(mixed, { ...newInputState(), cursorQueries: 1 })).toEqual([{ text: "abcdefghijk", pasted: false }]);
  });

  it("the replies ctlseqs documents that xterm.js does not send are taken out too", () => {
    const replies = [
      "\u001b]10;rgb:ffff/ffff/ffff\u001b\\", // OSC 10 foreground colour, ST-terminated (xterm.js browser)
      "\u001b]11;rgb:0000/0000/0000\u0007", // OSC 11 background, BEL-terminated (xterm)
      "\u001b]4;1;rgb:cdcd/0000/0000\u0007", // palette colour 1
      "\u001b]52;c;aGVsbG8=\u0007", // clipboard report
      "\u001b]lbash\u001b\\", // window title report (CSI 21 t)
      "\u001b[I", // focus in
      "\u001b[O", // focus out
      "\u001b[?1;2c", // DA1
      "\u001b[>41;396;0c", // DA2 of xterm 396
      "\u001bP!|00000000\u001b\\", // DA3
      "\u001bP>|XTerm(396)\u001b\\", // XTVERSION
      "\u001bP1+r544e=787465726d\u001b\\", // XTGETTCAP
      "\u001b[0n", // DSR: ready
      "\u001b[?27;1;0;0n", // DSR: keyboard
      "\u001b[8;24;80t", // XTWINOPS: size in characters
      "\u001b[4;600;800t", // XTWINOPS: size in pixels
      "\u001b[1t", // XTWINOPS: not iconified
      "\u001b[2;1;1;112;112;1;0x", // DECREPTPARM
      "\u001b[>4;2m", // XTQMODKEYS
      "\u001b[?1;0;256S", // XTSMGRAPHICS
      "\u001b[?0u", // kitty keyboard flags
      "\u001b_Gi=1;OK\u001b\\", // kitty graphics
      "\u001b[12;40R", // CPR (row 12: no function key looks like it)
      "\u001b[?12;40;1R", // DECXCPR
    ];
    const state = newInputState();
    for (const reply of replies) expect(keysOf(reply, state), JSON.stringify(reply)).toEqual([]);
    expect(state.replies).toBe(replies.length);
  });

  it("keys are kept: cursor, function and modified keys, Alt combinations, mouse reports", () => {
    const keys = [
      "\u001b[A", // up
      "\u001bOB", // down, application mode
      "\u001b[1;5C", // Ctrl+Right
      "\u001b[H", // Home
      "\u001b[F", // End
      "\u001bOP", // F1
      "\u001bOR", // F3
      "\u001b[15~", // F5
      "\u001b[24;2~", // Shift+F12
      "\u001b[1;2P", // Shift+F1
      "\u001b[3~", // Delete
      "\u001b[6~", // Page Down
      "\u001b[27;5;9~", // Ctrl+Tab (modifyOtherKeys)
      "\u001b[97;5u", // Ctrl+a (kitty keyboard protocol)
      "\u001b[Z", // Shift+Tab
      "\u001b", // Escape
      "\u001b]", // Alt+] (no terminator: no OSC)
      "\u001bP", // Alt+Shift+P (no terminator: no DCS)
      "\u001b[<0;10;5M", // SGR mouse press: the user's click
      "\u001b[M #$", // X10 mouse report
      "\u007f", // Backspace
      "\u0003", // Ctrl+C
    ];
    for (const key of keys) expect(keysOf(key), JSON.stringify(key)).toEqual([{ text: key, pasted: false }]);
  });

  it("a cursor report that reads like a modified F3 is a key unless a cursor query is unanswered", () => {
    expect(keysOf("\u001b[1;2R")).toEqual([{ text: "\u001b[1;2R", pasted: false }]); // Shift+F3
    const asked = { ...newInputState(), cursorQueries: 1 };
    expect(keysOf("\u001b[1;2R", asked)).toEqual([]); // the answer to CSI 6 n, cursor at row 1, column 2
    expect(asked.cursorQueries).toBe(0);
    expect(keysOf("\u001b[1;2R", asked)).toEqual([{ text: "\u001b[1;2R", pasted: false }]); // answered already
  });

  it("bracketed paste: the markers go, the text stays and is marked pasted, even across input events", () => {
    const state = newInputState();
    expect(keysOf("ls \u001b[200~one\rtwo\u001b[201~\r", state)).toEqual([
      { text: "ls ", pasted: false },
      { text: "one\rtwo", pasted: true },
      { text: "\r", pasted: false },
    ]);
    expect(keysOf("\u001b[200~first", state)).toEqual([{ text: "first", pasted: true }]);
    expect(keysOf(" second\u001b[201~x", state)).toEqual([
      { text: " second", pasted: true },
      { text: "x", pasted: false },
    ]);
    expect(state.replies).toBe(4);
  });
});

describe("asciicast reader: keystrokes without the terminal's replies", () => {
  it("the issue's vim session: the reports vim asked for are not part of ':q'", async () => {
    const path = cast([
      [0.1, "o", "$ "],
      [0.5, "i", "vim notes.txt\r"],
      [0.6, "o", "vim notes.txt\r\n\u001b[?1049h\u001b[H\u001b[2J\u001b[6n\u001b[>c"],
      [0.7, "i", "\u001b[2;2R\u001b[>0;95;0c"],
      [0.8, "o", 'notes\r\n~\r\n~\u001b[10;1H"notes.txt" 1L'],
      [1.5, "i", "\u001b[2;2R\u001b[>0;95;0c:q"], // what a person typed, arriving with two late replies
      [1.6, "o", "\u001b[10;1H\u001b[K:q"],
      [1.7, "i", "\r"],
      [1.8, "o", "\u001b[?1049l$ "],
    ]);
    const t = await read(path);
    expect(t.turns.map((turn) => turn.action)).toEqual(["vim notes.txt", ":q", "\r"]);
    expect(t.meta?.asciicast).toMatchObject({ terminalReplies: 4 });
    // vim's screen is drawn after the replies: it belongs to "vim notes.txt", up to the keys ":q".
    expect(joined(turnStream(t, 0).events)).toContain('"notes.txt" 1L');
    const rendered = await renderTerminalTrajectory(t, new Map());
    expect(rendered.turns.map((turn) => turn.observation)).toEqual([
      'notes\n~\n~\n\n\n\n\n\n\n"notes.txt" 1L',
      "notes\n~\n~\n\n\n\n\n\n\n:q",
      "$",
    ]);
  });

  it("focus reports and replies between keystrokes vanish; a pasted command keeps its line breaks as \\n", async () => {
    const path = cast([
      [0.1, "o", "$ "],
      [0.2, "i", "l"],
      [0.3, "i", "\u001b[O"],
      [0.4, "i", "\u001b[I"],
      [0.5, "i", "s\r"],
      [0.6, "o", "ls\r\na\r\n$ "],
      [0.7, "i", "\u001b[200~for f in *; do\recho $f\rdone\u001b[201~"],
      [0.8, "i", "\r"],
      [0.9, "o", "...\r\n$ "],
      [1.0, "i", "\u001b[0n"], // nothing but a reply: no input at all
      [1.1, "o", "late"],
    ]);
    const t = await read(path);
    expect(t.turns.map((turn) => turn.action)).toEqual(["ls", "for f in *; do\necho $f\ndone"]);
    expect(joined(turnStream(t, 1).events)).toBe("...\r\n$ late"); // the reply-only event cut nothing
    expect(t.meta?.asciicast).toMatchObject({ terminalReplies: 5 });
  });

  it("alternate screen: each input event is a turn; keys sent before the program drew anything join them", async () => {
    const path = cast([
      [0.1, "o", "$ "],
      [0.2, "i", "less f\r"],
      [0.3, "o", "less f\r\n\u001b[?1049h\u001b[Hline 1\r\nline 2\r\n:"],
      [0.4, "i", "j"],
      [0.5, "i", "j"], // no output in between: "jj" is one action
      [0.6, "o", "\u001b[H\u001b[2Jline 3\r\n:"],
      [0.7, "i", "q"],
      [0.8, "o", "\u001b[?1049l$ "],
      [0.9, "i", "exit\r"],
    ]);
    const t = await read(path);
    expect(t.turns.map((turn) => turn.action)).toEqual(["less f", "jj", "q", "exit"]);
    expect(turnStream(t, 1).typing).toEqual([]);
    const rendered = await renderTerminalTrajectory(t, new Map());
    expect(rendered.turns.map((turn) => turn.observation)).toEqual(["line 1\nline 2\n:", "line 3\n:", "$", ""]);
  });

  it("a full-screen program that starts and ends within one turn shows its last screen first", async () => {
    const counters: Counters = new Map();
    const path = cast([
      [0.1, "o", "$ "],
      [0.2, "i", "top -n 1"],
      [0.2, "o", "top -n 1"],
      [0.3, "i", "\r"],
      [0.3, "o", "\r\n\u001b[?1049h\u001b[H\u001b[2Jtop - 12:00:00 up 1 day\r\nTasks: 1 total\u001b[?1049l$ "],
    ]);
    const rendered = await renderTerminalTrajectory(await read(path), counters);
    expect(rendered.turns[0]?.observation).toBe("top - 12:00:00 up 1 day\nTasks: 1 total\n$");
    expect(counters.get("terminal.transient_alt_screens")).toBe(1);
  });
});

describe("the recorded vim/less session (test/fixtures/recorded/terminal/vim-less.cast)", () => {
  const path = join(RECORDED, "vim-less.cast");
  const ACTIONS = [
    "vim notes.txt",
    "G",
    "o",
    "- publish the notes", // pasted into vim: the bracketed-paste markers are gone
    "\u001b",
    ":",
    "w",
    "q",
    "\r",
    "cat notes.txt",
    "vim -c redraw -c 'sleep 300m' -c q notes.txt",
    "seq 1 60 | less",
    " ",
    "q",
    "echo 'pasted at the prompt'",
    "exit",
  ];

  it("holds the terminal's real replies in its input stream, and none of them in an action", async () => {
    const inputs = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => JSON.parse(line) as [number, string, string])
      .filter(([, code]) => code === "i")
      .map(([, , data]) => data);
    // What the emulator answered to vim's queries, then the focus reports, as recorded.
    expect(inputs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^${ESC}\\[\\d+;\\d+R$`)),
        "\u001b[>0;276;0c",
        "\u001b]10;rgb:ffff/ffff/ffff\u001b\\",
        "\u001b]11;rgb:0000/0000/0000\u001b\\",
        "\u001b[?12;2$y",
        "\u001b[O",
        "\u001b[I",
        "\u001b[200~- publish the notes\u001b[201~",
      ]),
    );
    const t = await read(path);
    expect(t.meta?.split).toBe("keystrokes");
    expect(t.turns.map((turn) => turn.action)).toEqual(ACTIONS);
    for (const turn of t.turns) expect(turn.action).not.toMatch(new RegExp(`${ESC}[[\\]P]`));
    // Every input event that starts an escape sequence, except the Esc key and the two pastes, is
    // the terminal's; the pastes add a start and an end marker each.
    const answers = inputs.filter((data) => data.startsWith("\u001b") && data !== "\u001b" && !data.startsWith("\u001b[200~"));
    expect(answers.length).toBeGreaterThanOrEqual(8); // vim's queries answered, focus out and in
    expect(t.meta?.asciicast).toMatchObject({ terminalReplies: answers.length + 4 });
  });

  it("renders vim's and less's screens as observations of the keys sent to them", async () => {
    const counters: Counters = new Map();
    const t = await render(path, counters);
    const observations = t.turns.map((turn) => turn.observation);
    const notes = ["Release checklist", "- run the test suite", "- tag the release", "- write the changelog (naïve café ✓)"];
    const tildes = (n: number) => Array<string>(n).fill("~");
    const vim = (file: string[], status: RegExp) => {
      const rows = observations.shift()?.split("\n") ?? [];
      expect(rows.slice(0, 23)).toEqual([...file, ...tildes(23 - file.length)]);
      expect(rows[23]).toMatch(status);
    };
    const withLine = [...notes, "- publish the notes"];
    vim(notes, /^"notes\.txt" 4L, 98B +1,1 +All$/);
    vim(notes, /^"notes\.txt" 4L, 98B +4,1 +All$/); // G: the cursor on the last line
    vim([...notes, ""], /^-- INSERT -- +5,1 +All$/); // o: a new line, insert mode
    vim(withLine, /^-- INSERT -- +5,20 +All$/); // the paste
    vim(withLine, /^ +5,19 +All$/); // Esc
    vim(withLine, /^:$/);
    vim(withLine, /^:w$/);
    vim(withLine, /^:wq$/);
    expect(observations.shift()).toBe(PROMPT); // Enter: vim wrote the file and quit
    expect(observations.shift()).toBe([...withLine, PROMPT].join("\n"));
    // vim -c …: no key was sent to it; its screen is shown before the prompt it gave back.
    expect(observations.shift()).toBe([...withLine, ...tildes(18), PROMPT].join("\n"));
    const page = (from: number) => [...Array.from({ length: 23 }, (_, i) => String(from + i)), ":"].join("\n");
    expect(observations.shift()).toBe(page(1)); // less's first page
    expect(observations.shift()).toBe(page(24)); // Space: the next page
    expect(observations.shift()).toBe(PROMPT); // q
    expect(observations.shift()).toBe(`pasted at the prompt\n${PROMPT}`);
    expect(observations.shift()).toBe("exit");
    expect(observations).toEqual([]);
    expect(counters.get("terminal.alt_screen_observations")).toBe(10);
    expect(counters.get("terminal.transient_alt_screens")).toBe(1);
  });
});

describe("output-only recordings are cut at shell prompts", () => {
  it("the recorded output-only bash session (coloured prompt, title, cd, typo, python, clear)", async () => {
    const path = join(RECORDED, "output-only.cast");
    expect(readFileSync(path, "utf8")).not.toMatch(/,"i",/);
    const t = await read(path);
    expect(t.meta).toMatchObject({ split: "prompt", prompt: "demo@lwm:<dir>$ " });
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "ls",
      "cd upstream",
      "git log --oneline",
      "cd ..",
      "echo typo fixed", // typed "ecoo", two Backspaces, "ho typo fixed": the line as the echo left it
      "python3 -q",
      "grep -c ERROR app.log",
      "clear",
      "wc -l notes.txt",
      "exit",
    ]);
    // Before the first turn: the first prompt, with its title and colours.
    expect(joined(recordingMeta(t).events)).toMatch(new RegExp(`^${ESC}\\[\\?2004h${ESC}\\]0;demo@lwm: ~/work${BEL}.*\\$ $`));
    const rendered = await renderTerminalTrajectory(t, new Map());
    const upstream = "demo@lwm:~/work/upstream$";
    expect(rendered.initialObservation).toBe(PROMPT);
    expect(rendered.turns.map((turn) => turn.observation)).toEqual([
      `app.log  notes.txt  upstream\n${PROMPT}`,
      upstream,
      `924f25d (HEAD -> main) Document the scripts\n98303dd Add greet and count scripts\n${upstream}`,
      PROMPT,
      `typo fixed\n${PROMPT}`,
      `>>> 6 * 7\n42\n>>> exit()\n${PROMPT}`,
      `2\n${PROMPT}`,
      PROMPT,
      `4 notes.txt\n${PROMPT}`,
      "exit",
    ]);
  });

  it("the recorded demo session without its input events splits into the commands typed at bash", async () => {
    // The same recording read by its keystrokes is the reference: every command typed at a prompt
    // is a turn with the same typing and output events; vim's keys were typed at no prompt, so
    // what vim showed stays in "vim notes.txt"'s turn.
    const lines = readFileSync(DEMO_SESSION, "utf8").trim().split("\n");
    const outputOnly = cast(
      lines
        .slice(1)
        .map((line) => JSON.parse(line) as [number, string, string])
        .filter(([, code]) => code !== "i"),
      JSON.parse(lines[0] as string),
    );
    const byKeys = await read(DEMO_SESSION);
    const byPrompts = await read(outputOnly);
    expect(byPrompts.meta).toMatchObject({ split: "prompt", prompt: "demo@lwm:<dir>$ " });
    const vimKeys = byKeys.turns.filter((turn) => turn.meta?.time !== undefined && [":", "q", "\r"].includes(turn.action));
    expect(vimKeys).toHaveLength(3);
    const reference = byKeys.turns.filter((turn) => !vimKeys.includes(turn));
    expect(byPrompts.turns.map((turn) => turn.action)).toEqual(reference.map((turn) => turn.action));
    expect(recordingMeta(byPrompts).events).toEqual(recordingMeta(byKeys).events);
    const vimAt = reference.findIndex((turn) => turn.action === "vim notes.txt");
    reference.forEach((turn, i) => {
      const expected = turn.meta?.terminal as TerminalTurnMeta;
      const got = turnStream(byPrompts, i);
      expect(got.typing, turn.action).toEqual(expected.typing);
      expect([got.cols, got.rows], turn.action).toEqual([expected.cols, expected.rows]);
      if (i !== vimAt) expect(got.events, turn.action).toEqual(expected.events);
    });
    const vimTurns = byKeys.turns.slice(
      byKeys.turns.indexOf(reference[vimAt] as Trajectory["turns"][number]),
      byKeys.turns.indexOf(reference[vimAt + 1] as Trajectory["turns"][number]),
    );
    expect(turnStream(byPrompts, vimAt).events).toEqual(
      vimTurns.flatMap((turn) => (turn.meta?.terminal as TerminalTurnMeta | undefined)?.events ?? []),
    );
    // Rendered, every turn but vim's observes the same screen.
    const [keysRendered, promptsRendered] = await Promise.all([
      renderTerminalTrajectory(byKeys, new Map()),
      renderTerminalTrajectory(byPrompts, new Map()),
    ]);
    const observed = (t: Trajectory) => new Map(t.turns.map((turn) => [turn.action, turn.observation]));
    const fromKeys = observed(keysRendered);
    for (const [action, observation] of observed(promptsRendered))
      if (action !== "vim notes.txt") expect(observation, action).toBe(fromKeys.get(action));
    // vim came and went within the turn: its last screen (it clears its command line as it quits), then the prompt.
    const vim = observed(promptsRendered).get("vim notes.txt")?.split("\n");
    expect(vim?.slice(0, 4)).toEqual([
      "Release checklist",
      "- run the test suite",
      "- tag the release",
      "- write the changelog (naïve café ✓)",
    ]);
    expect(vim?.slice(4, 29)).toEqual(Array(25).fill("~"));
    expect(vim?.slice(29)).toEqual([PROMPT]);
  });

  it("detects `$ `, `# ` with a changing directory, and `>>> ` prompts; the echo's erasures apply", async () => {
    const sh = await read(
      cast([
        [0.1, "o", "$ "],
        [0.2, "o", "ecoo\b\u001b[K\b\u001b[Kho hi"],
        [0.3, "o", "\r\nhi\r\n$ "],
        [0.4, "o", "exit\r\n"],
      ]),
    );
    expect(sh.meta).toMatchObject({ split: "prompt", prompt: "$ " });
    expect(sh.turns.map((turn) => turn.action)).toEqual(["echo hi", "exit"]);
    expect(turnStream(sh, 0).typing).toEqual([["o", "ecoo\b\u001b[K\b\u001b[Kho hi"]]);
    expect(turnStream(sh, 0).events).toEqual([["o", "\r\nhi\r\n$ "]]);

    const root = await read(
      cast([
        [0.1, "o", "root@3f2a9c:/app# "],
        [0.2, "o", "cd /tmp/work"],
        [0.3, "o", "\r\n"],
        [0.4, "o", "root@3f2a9c:/tmp/work# "],
        [0.5, "o", "ls"],
        [0.6, "o", "\r\na.txt\r\n"],
        [0.7, "o", "root@3f2a9c:/tmp/work# "],
      ]),
    );
    expect(root.meta).toMatchObject({ split: "prompt", prompt: "root@<n>f<n>a<n>c:<dir># " });
    expect(root.turns.map((turn) => turn.action)).toEqual(["cd /tmp/work", "ls"]);

    const python = await read(
      cast([
        [0.1, "o", "Python 3.12.3\r\n>>> "],
        [0.2, "o", "1 + 1\r\n2\r\n>>> "],
        [0.3, "o", "print('a > b')\r\na > b\r\n>>> "],
      ]),
    );
    expect(python.meta).toMatchObject({ split: "prompt", prompt: ">>> " });
    expect(python.turns.map((turn) => turn.action)).toEqual(["1 + 1", "print('a > b')"]);
    expect(joined(recordingMeta(python).events)).toBe("Python 3.12.3\r\n>>> ");
  });

  it("falls back to one turn when no prompt repeats: one prompt, prompt-like text mid-output, alternate screen", async () => {
    const once = await read(
      cast(
        [
          [0.1, "o", "$ "],
          [0.2, "o", "make\r\nbuilding\r\n"],
        ],
        { command: "bash" },
      ),
    );
    expect(once.meta).toMatchObject({ split: "single-turn" });
    expect(once.meta?.prompt).toBeUndefined();
    expect(once.turns.map((turn) => turn.action)).toEqual(["bash"]);
    // Gradle-style "> Task" lines end no output event: not a prompt waiting for keys.
    const gradle = await read(
      cast([
        [0.1, "o", "> Task :compileJava\r\n> Task :test\r\n"],
        [0.2, "o", "> Task :jar\r\nBUILD SUCCESSFUL\r\n"],
      ]),
    );
    expect(gradle.meta).toMatchObject({ split: "single-turn" });
    // A TUI that draws "$ " lines on the alternate screen draws no prompts.
    const tui = await read(
      cast([
        [0.1, "o", "\u001b[?1049h$ "],
        [0.2, "o", "\r\n$ "],
        [0.3, "o", "\u001b[3;1H$ "],
        [0.4, "o", "\u001b[?1049l"],
      ]),
    );
    expect(tui.meta).toMatchObject({ split: "single-turn" });
    expect(tui.turns).toHaveLength(1);
  });

  it("prompt shapes generalize directories and numbers", () => {
    expect(promptShape("user@host:~/src/app$ ")).toBe("user@host:<dir>$ ");
    expect(promptShape("user@host:/$ ")).toBe("user@host:<dir>$ ");
    expect(promptShape("bash-5.2$ ")).toBe("bash-<n>.<n>$ ");
    expect(promptShape("In [12]: ")).toBe("In [<n>]: ");
    expect(promptShape(">>> ")).toBe(">>> ");
  });
});
