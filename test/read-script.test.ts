import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { renderTerminalTrajectory } from "../src/normalize/domains/terminal.ts";
import { planJob } from "../src/pipeline/plan.ts";
import type { TerminalRecordingMeta } from "../src/read/asciicast.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { scriptReader } from "../src/read/script.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";

/**
 * util-linux `script` recordings (src/read/script.ts). The recordings in
 * test/fixtures/recorded/script/ were made here by util-linux script 2.38.1 (record.sh); the
 * variants it cannot make (an old header, a resize, damage) are written here from script.c.
 */
const DIR = join(ROOT, "test/fixtures/recorded/script");
const OPTIONS = { maxLineBytes: 1 << 20 };
/** The commands record.sh types into the interactive bash. */
const COMMANDS = ["echo hello", "ls /usr", "cd /tmp", 'printf "a\\nb\\n" | wc -l', "exit 3"];

async function readOne(path: string): Promise<ReadItem> {
  const items = await collect(scriptReader.read(path, OPTIONS));
  expect(items).toHaveLength(1); // one typescript = one record, whatever happens
  return items[0] as ReadItem;
}

async function readTrajectory(path: string): Promise<Trajectory> {
  const item = await readOne(path);
  if (item.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item)}`);
  return item.trajectory;
}

async function quarantineReason(path: string): Promise<{ reason: string; field?: string }> {
  const item = await readOne(path);
  if (item.kind !== "quarantine") throw new Error(`expected a quarantine entry, got ${JSON.stringify(item).slice(0, 300)}`);
  return { reason: item.entry.reason, ...(item.entry.field ? { field: item.entry.field } : {}) };
}

/** A copy of some fixtures in a folder of their own (side files are found beside the typescript). */
function copyFixtures(...names: string[]): string {
  const dir = tempDir();
  for (const name of names) copyFileSync(join(DIR, name), join(dir, name));
  return dir;
}

const script = (t: Trajectory) => t.meta?.script as Record<string, unknown>;
const size = (t: Trajectory) => {
  const terminal = t.meta?.terminal as TerminalRecordingMeta;
  return [terminal.cols, terminal.rows];
};

describe("script reader: recorded layouts", () => {
  it("classic timing, output only: turns from the shell's prompts; size and command from the header", async () => {
    const t = await readTrajectory(join(DIR, "session.typescript"));
    expect(t.domain).toBe("terminal");
    expect(t.id).toMatch(/^script-[0-9a-f]{32}$/);
    expect(t.meta?.split).toBe("prompt");
    expect(t.meta?.prompt).toBe("demo@lwm:<dir># ");
    expect(t.turns.map((turn) => turn.action)).toEqual(COMMANDS);
    expect(size(t)).toEqual([100, 30]);
    expect(script(t)).toMatchObject({
      command: "bash --rcfile /tmp/lwm-script-demo/rc -i",
      term: "xterm-256color",
      tty: "/dev/pts/0",
      exitCode: 3,
      timing: "classic",
      timingFile: "session.timing",
    });
    expect(script(t).cut).toBeUndefined();
    // The screens render from the recorded bytes, as an asciicast's do.
    const rendered = await renderTerminalTrajectory(t, new Map());
    expect(rendered.turns[0]?.observation).toContain("hello");
    expect(rendered.turns[1]?.observation).toContain("libexec");
    expect(rendered.turns[3]?.observation).toMatch(/^2$/m);
  });

  it("--log-io with advanced timing: input (I entries) up to Enter are the actions", async () => {
    const t = await readTrajectory(join(DIR, "io.log"));
    expect(t.meta?.split).toBe("keystrokes");
    expect(t.turns.map((turn) => turn.action)).toEqual(COMMANDS);
    expect(size(t)).toEqual([100, 30]);
    expect(script(t)).toMatchObject({ timing: "advanced", timingFile: "io.timing", inputLog: "io.log", exitCode: 3 });
    // The input bytes interleaved in the log are keystrokes, never output.
    const output = ((t.meta?.terminal as TerminalRecordingMeta | undefined)?.events ?? []).map((event) => event[1]).join("");
    expect(output).not.toContain("echo hello\n");
  });

  it("--log-in + --log-out: the input log is read beside the output log; read alone it names its output log", async () => {
    const t = await readTrajectory(join(DIR, "out.log"));
    expect(t.meta?.split).toBe("keystrokes");
    expect(t.turns.map((turn) => turn.action)).toEqual(COMMANDS);
    expect(script(t)).toMatchObject({ timing: "advanced", timingFile: "inout.timing", inputLog: "in.log" });
    const alone = await quarantineReason(join(DIR, "in.log"));
    expect(alone.reason).toContain("in.log is the input log (--log-in) of the recording whose output log is out.log");
    expect(await scriptReader.expand?.(join(DIR, "in.log"))).toEqual([join(DIR, "out.log")]);
  });

  it("not on a terminal, one command: one turn, the recorded COMMAND; the default size", async () => {
    const t = await readTrajectory(join(DIR, "oneshot.typescript"));
    expect(t.meta?.split).toBe("single-turn");
    expect(t.turns.map((turn) => turn.action)).toEqual(['bash -c "echo hi; ls /usr"']);
    expect(size(t)).toEqual([80, 24]);
    expect(script(t)).toMatchObject({ notOnTerminal: true, exitCode: 0, timing: "classic", timingFile: "oneshot.tm" });
    expect(t.meta?.read_filter).toBeUndefined();
  });

  it("a typescript without a timing file is still read: output cut at prompt ends, turns from prompts", async () => {
    const t = await readTrajectory(join(DIR, "plain.typescript"));
    expect(script(t).timing).toBe("none");
    expect(t.meta?.split).toBe("prompt");
    expect(t.turns.map((turn) => turn.action)).toEqual(COMMANDS);
  });

  it("a recording cut before its Script done line: what was recorded is read, and marked cut", async () => {
    const t = await readTrajectory(join(DIR, "cut.typescript"));
    expect(script(t).cut).toBe(true);
    expect(script(t).exitCode).toBeUndefined();
    expect(t.turns.map((turn) => turn.action)).toEqual(["echo hello", "ls /usr"]);
  });
});

describe("script reader: companions and detection", () => {
  it("a folder of recordings: each typescript is one input; its timing and input log are read with it, never alone", async () => {
    const dir = tempDir();
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${DIR}\n`, dir)));
    const read = plan.files.map((f) => [f.path.split("/").pop(), f.reader.name]);
    expect(read.filter(([, reader]) => reader === "script").map(([name]) => name)).toEqual([
      "append-adv.typescript",
      "append-all-adv.typescript",
      "append-all.typescript",
      "append.typescript",
      "cut.typescript",
      "io.log",
      "keys-timed.log",
      "keys.log",
      "oneshot.typescript",
      "out.log",
      "plain.typescript",
      "rerun-1.timing", // the timing of a log overwritten since: read alone, quarantined
      "rerun.log",
      "session.typescript",
    ]);
    const covered = Object.fromEntries(plan.covered.map((c) => [c.path.split("/").pop(), [c.by.split("/").pop(), c.kind]]));
    expect(covered).toMatchObject({
      "session.timing": ["session.typescript", "stands-for"],
      "io.timing": ["io.log", "stands-for"],
      "inout.timing": ["out.log", "stands-for"],
      "in.log": ["out.log", "stands-for"],
      "oneshot.tm": ["oneshot.typescript", "stands-for"],
      "cut.timing": ["cut.typescript", "stands-for"],
      "append.timing": ["append.typescript", "stands-for"],
      "append-all-adv.timing": ["append-all-adv.typescript", "stands-for"],
      "keys-timed.timing": ["keys-timed.log", "stands-for"],
      "rerun-2.timing": ["rerun.log", "stands-for"],
    });
    // (Each side file stands for its typescript, which then covers it.) A typescript is sized by everything read for it.
    const out = plan.files.find((f) => f.path.endsWith("out.log"));
    expect(out?.bytes).toBe(["out.log", "in.log", "inout.timing"].reduce((sum, name) => sum + readFileSync(join(DIR, name)).length, 0));
  });

  it("a timing file given as the input stands for its typescript; the input log for its output log", async () => {
    const dir = tempDir();
    for (const [input, expected] of [
      ["session.timing", "session.typescript"],
      ["inout.timing", "out.log"],
      ["in.log", "out.log"],
      ["oneshot.tm", "oneshot.typescript"],
    ]) {
      const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${join(DIR, input as string)}\n`, dir)));
      expect(plan.files.map((f) => f.path)).toEqual([join(DIR, expected as string)]);
      expect(plan.covered.find((c) => c.path.endsWith(`/${input}`))?.kind).toBe("stands-for");
    }
    // A timing file whose typescript is not beside it is quarantined, saying what to give.
    const alone = copyFixtures("session.timing");
    expect(await scriptReader.expand?.(join(alone, "session.timing"))).toBeUndefined();
    expect((await quarantineReason(join(alone, "session.timing"))).reason).toContain(
      "is a script timing file, and no typescript beside it",
    );
  });

  it("typescripts and timing files are told from their content; other formats' files stay theirs", async () => {
    for (const name of readdirSync(DIR).filter((file) => file !== "record.sh" && file !== "README.md")) {
      const detection = await detectFormat(join(DIR, name));
      expect(detection.kind === "format" && detection.reader.name, name).toBe("script");
    }
    const dir = tempDir();
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    // An old typescript (before util-linux 2.35): the date alone on the first line.
    expect(await formatOf(write("old", "Script started on Tue 01 Jan 2008 10:00:00 AM UTC\n$ ls\nx\n"))).toBe("script");
    // Not timing files: numbers that are not script's, a table, prose that mentions script.
    expect(await formatOf(write("numbers.txt", "1 2\n3 4\n5 6\n"))).toBe("unrecognized");
    expect(await formatOf(write("table.txt", "0.500000 12\nO 0.1 3\n"))).toBe("unrecognized");
    expect(await formatOf(write("notes.txt", "The script started on Monday.\nScript started on line 2\n"))).toBe("unrecognized");
    // Other terminal formats are not claimed.
    expect(await formatOf(join(ROOT, "test/fixtures/handmade/terminal/shell-session.v2.cast"))).toBe("asciicast");
    expect(await formatOf(join(ROOT, "test/fixtures/handmade/terminal/session.tmux.jsonl"))).toBe("tmux-log");
  });
});

async function formatOf(path: string): Promise<string> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}

describe("script reader: written from script.c", () => {
  const DONE = '\nScript done on 2026-01-01 10:00:09+00:00 [COMMAND_EXIT_CODE="0"]\n';

  function recording(files: Record<string, string | Buffer>): string {
    const dir = tempDir();
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return dir;
  }

  it("an old header with no fields: the default size; prompts still split", async () => {
    const dir = recording({
      typescript: "Script started on Tue 01 Jan 2008 10:00:00 AM UTC\n$ ls\r\na  b\r\n$ pwd\r\n/home\r\n$ exit\r\n",
    });
    const t = await readTrajectory(join(dir, "typescript"));
    expect(size(t)).toEqual([80, 24]);
    expect(script(t)).toMatchObject({ started: "Tue 01 Jan 2008 10:00:00 AM UTC", timing: "none", cut: true });
    expect(t.turns.map((turn) => turn.action)).toEqual(["ls", "pwd", "exit"]);
  });

  it("advanced timing: H entries give the size, a SIGWINCH is a resize, a UTF-8 character split between writes is whole", async () => {
    const output = "$ echo é\r\né\r\n$ ";
    const bytes = Buffer.from(output);
    const split = bytes.indexOf(Buffer.from("é\r\n$")) + 1; // inside the second é
    const log = Buffer.concat([
      Buffer.from("Script started on 2026-01-01 10:00:00+00:00 [<not executed on terminal>]\n"),
      bytes,
      Buffer.from(DONE),
    ]);
    const timing = [
      "H 0.000000 COLUMNS 120",
      "H 0.000000 LINES 40",
      "H 0.000000 OUTPUT_LOG rec.log",
      `O 0.100000 ${Buffer.byteLength("$ ")}`,
      `O 0.200000 ${split - Buffer.byteLength("$ ")}`,
      "S 0.100000 SIGWINCH ROWS=50 COLS=132",
      `O 0.100000 ${bytes.length - split}`,
      "H 0.000000 EXIT_CODE 0",
      "",
    ].join("\n");
    const dir = recording({ "rec.log": log, "rec.timing": timing });
    const t = await readTrajectory(join(dir, "rec.log"));
    expect(size(t)).toEqual([120, 40]);
    expect(t.turns.map((turn) => turn.action)).toEqual(["echo é"]);
    const events = (t.turns[0]?.meta?.terminal as { events: [string, string][] } | undefined)?.events ?? [];
    expect(events).toContainEqual(["r", "132x50"]);
    expect(events.map((event) => event[1]).join("")).not.toContain("\ufffd");
    expect(script(t)).toMatchObject({ timing: "advanced", signals: 1, exitCode: 0 });
  });
});

describe("script reader: bad input is quarantined, naming file, line and field", () => {
  const START = 'Script started on 2026-01-01 10:00:00+00:00 [COMMAND="bash -i" COLUMNS="80" LINES="24"]\n';
  const DONE = '\nScript done on 2026-01-01 10:00:09+00:00 [COMMAND_EXIT_CODE="0"]\n';

  function recording(files: Record<string, string>): string {
    const dir = tempDir();
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return dir;
  }

  it("byte counts that run past the end of a finished typescript", async () => {
    const dir = recording({ "s.log": `${START}$ ls\r\nx\r\n$ ${DONE}`, "s.log.timing": "0.100000 5\n0.200000 400\n" });
    expect(await quarantineReason(join(dir, "s.log"))).toEqual({
      reason: "s.log.timing line 2: output entry of 400 bytes runs past the end of s.log (11 bytes recorded, 5 read before it)",
      field: "timing.bytes",
    });
  });

  it("a timing line that is not numbers, and a line of an unknown type", async () => {
    const dir = recording({ "s.log": `${START}$ ls\r\n${DONE}`, "s.tm": "0.100000 2\nabc 4\n0.1 1\n" });
    const bad = await quarantineReason(join(dir, "s.log"));
    expect(bad.reason).toContain('s.tm line 2: expected "<delay seconds> <byte count>" (classic timing), got "abc 4"');
    expect(bad.field).toBe("timing.delay");
    const multi = recording({ "m.log": `${START}$ ls\r\n${DONE}`, "m.timing": "O 0.100000 2\nX 0.1 3\nO 0.1 1\n" });
    expect((await quarantineReason(join(multi, "m.log"))).reason).toContain("m.timing line 2: expected an entry of type I, O, S or H");
  });

  it("a window size over the limit in a SIGWINCH entry", async () => {
    const dir = recording({ "w.log": `${START}$ ls\r\n${DONE}`, "w.timing": "O 0.100000 2\nS 0.100000 SIGWINCH ROWS=99999 COLS=80\n" });
    expect((await quarantineReason(join(dir, "w.log"))).reason).toContain("w.timing line 2: window size ROWS=99999 COLS=80");
  });

  it("a file named as a typescript that does not start like one (format forced)", async () => {
    const dir = recording({ typescript: "hello\nworld\n" });
    expect(await quarantineReason(join(dir, "typescript"))).toEqual({
      reason: 'typescript line 1: expected "Script started on <date> […]", got "hello"',
      field: "header",
    });
  });

  it("a cut recording: timing past the end and a cut last timing line are kept as notes, not refused", async () => {
    const dir = recording({ "c.log": `${START}$ ls\r\nx`, "c.log.timing": "0.100000 2\n0.100000 20\n0.1" });
    const t = await readTrajectory(join(dir, "c.log"));
    expect(script(t)).toMatchObject({ cut: true, timingPastCut: true, timingTruncatedLine: 3 });
  });
});

/** The sessions of a typescript: every record read from it. */
async function readAll(path: string): Promise<ReadItem[]> {
  return collect(scriptReader.read(path, OPTIONS));
}

function trajectories(items: ReadItem[]): Trajectory[] {
  return items.map((item) => {
    if (item.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item)}`);
    return item.trajectory;
  });
}

describe("script reader: appended sessions (script -a)", () => {
  const SESSIONS = [
    ["echo session 1", "exit 3"],
    ["echo session 2", "exit 3"],
  ];
  const turnTimes = (t: Trajectory) => t.turns.map((turn) => turn.meta?.time as number);

  it("-a -T (classic): two trajectories, at their own headers; the timing (rewritten by each run) is the last session's", async () => {
    const [first, second] = trajectories(await readAll(join(DIR, "append.typescript")));
    expect([first, second].map((t) => t?.turns.map((turn) => turn.action))).toEqual(SESSIONS);
    expect(first?.source).toMatchObject({ line: 1, offset: 0 });
    const secondAt = readFileSync(join(DIR, "append.typescript")).indexOf("Script started on", 1);
    expect(second?.source).toMatchObject({ line: 8, offset: secondAt });
    expect(first?.id).not.toBe(second?.id);
    expect(script(first as Trajectory)).toMatchObject({ timing: "none", session: 1, sessions: 2, exitCode: 3 });
    expect(script(first as Trajectory).timingFile).toBeUndefined();
    expect(script(second as Trajectory)).toMatchObject({ timing: "classic", timingFile: "append.timing", session: 2, sessions: 2 });
    // The timing reads the second session's bytes exactly: nothing left over, nothing past the end.
    expect(script(second as Trajectory).untimedBytes).toBeUndefined();
    // Each is its own recording, with its own screen.
    const rendered = await renderTerminalTrajectory(second as Trajectory, new Map());
    expect(rendered.turns[0]?.observation).toContain("session 2");
    expect(rendered.turns[0]?.observation).not.toContain("session 1");
  });

  it("-a -m advanced -T: the timing's one session (H entries) is the last session's", async () => {
    const [first, second] = trajectories(await readAll(join(DIR, "append-adv.typescript")));
    expect([first, second].map((t) => t?.turns.map((turn) => turn.action))).toEqual(SESSIONS);
    expect(script(first as Trajectory).timing).toBe("none");
    expect(script(second as Trajectory)).toMatchObject({ timing: "advanced", timingFile: "append-adv.timing", exitCode: 3 });
    expect(script(second as Trajectory).untimedBytes).toBeUndefined();
  });

  it("the timing appended too: a classic one cut at the sessions' byte counts, an advanced one at each H START_TIME", async () => {
    for (const [name, format] of [
      ["append-all.typescript", "classic"],
      ["append-all-adv.typescript", "advanced"],
    ]) {
      const sessions = trajectories(await readAll(join(DIR, name as string)));
      expect(sessions.map((t) => t.turns.map((turn) => turn.action))).toEqual(SESSIONS);
      for (const t of sessions) {
        expect(script(t), name).toMatchObject({ timing: format, timingFile: name?.replace(".typescript", ".timing") });
        expect(script(t).untimedBytes, name).toBeUndefined();
        // Times run from each session's own start (about 0.8 s to the first Enter), not from the first session's.
        expect(turnTimes(t)[0], name).toBeGreaterThan(0.5);
        expect(turnTimes(t)[0], name).toBeLessThan(1.5);
      }
    }
  });

  it("ids are deterministic, distinct, and a session keeps its id when another is appended after it", async () => {
    const bytes = readFileSync(join(DIR, "append.typescript"));
    const secondAt = bytes.indexOf("Script started on", 1);
    const dir = tempDir();
    writeFileSync(join(dir, "one.typescript"), bytes.subarray(0, secondAt));
    writeFileSync(join(dir, "both.typescript"), bytes);
    writeFileSync(join(dir, "twice.typescript"), Buffer.concat([bytes.subarray(0, secondAt), bytes.subarray(0, secondAt)]));
    const [alone] = trajectories(await readAll(join(dir, "one.typescript")));
    const both = trajectories(await readAll(join(dir, "both.typescript")));
    expect(both[0]?.id).toBe(alone?.id);
    expect(trajectories(await readAll(join(dir, "both.typescript"))).map((t) => t.id)).toEqual(both.map((t) => t.id));
    // The same session appended twice (same bytes) still gives two ids.
    const twice = trajectories(await readAll(join(dir, "twice.typescript")));
    expect(new Set(twice.map((t) => t.id)).size).toBe(2);
  });

  it("a session killed before its footer, then appended to: split at the next header; the cut one is marked", async () => {
    const cut = readFileSync(join(DIR, "cut.typescript"));
    const dir = tempDir();
    writeFileSync(join(dir, "s.typescript"), Buffer.concat([cut, readFileSync(join(DIR, "plain.typescript"))]));
    const [first, second] = trajectories(await readAll(join(dir, "s.typescript")));
    expect(script(first as Trajectory).cut).toBe(true);
    expect(first?.turns.map((turn) => turn.action)).toEqual(["echo hello", "ls /usr"]);
    expect(second?.turns.map((turn) => turn.action)).toEqual(COMMANDS);
  });

  it("a header shown on the session's terminal (\\r\\n line ends) is output, not a session", async () => {
    const header = 'Script started on 2026-01-01 10:00:00+00:00 [COMMAND="bash" TERM="xterm" TTY="/dev/pts/1" COLUMNS="80" LINES="24"]';
    const dir = tempDir();
    writeFileSync(
      join(dir, "s.typescript"),
      `${header}\n$ head -1 typescript\r\n${header}\r\n$ exit\r\n\nScript done on 2026-01-01 10:00:09+00:00 [COMMAND_EXIT_CODE="0"]\n`,
    );
    const items = await readAll(join(dir, "s.typescript"));
    expect(items).toHaveLength(1);
    expect(trajectories(items)[0]?.turns.map((turn) => turn.action)).toEqual(["head -1 typescript", "exit"]);
  });

  it("an advanced timing with more sessions than the log: quarantined, naming the timing file and field", async () => {
    const dir = copyFixtures("append-all-adv.typescript", "append-all-adv.timing");
    const bytes = readFileSync(join(DIR, "append-all-adv.typescript"));
    writeFileSync(join(dir, "append-all-adv.typescript"), bytes.subarray(0, bytes.indexOf("Script started on", 1)));
    expect(await quarantineReason(join(dir, "append-all-adv.typescript"))).toEqual({
      reason: "append-all-adv.timing: 2 sessions (H START_TIME entries), but the log holds 1 (Script started lines): not its timing",
      field: "timing.header",
    });
  });

  it("one session's timing past its end quarantines that session alone, at its header", async () => {
    const dir = copyFixtures("append-adv.typescript");
    const timing = readFileSync(join(DIR, "append-adv.timing"), "utf8").replace(/^O 0\.\d+ (\d+)$/m, "O 0.100000 9999");
    writeFileSync(join(dir, "append-adv.timing"), timing);
    const [first, second] = await readAll(join(dir, "append-adv.typescript"));
    expect(first?.kind).toBe("trajectory");
    if (second?.kind !== "quarantine") throw new Error("expected the second session quarantined");
    expect(second.entry.source).toMatchObject({
      line: 8,
      offset: readFileSync(join(DIR, "append-adv.typescript")).indexOf("Script started on", 1),
    });
    expect(second.entry.reason).toMatch(
      /^append-adv\.timing line 10: output entry of 9999 bytes runs past the end of append-adv\.typescript/,
    );
    expect(second.entry.field).toBe("timing.bytes");
  });
});

describe("script reader: an input log recorded alone (--log-in without --log-out)", () => {
  const WHY = "no output to observe; record with --log-io or --log-out";

  it("with its timing (INPUT_LOG, no OUTPUT_LOG): refused, and the timing stands for it", async () => {
    expect(await quarantineReason(join(DIR, "keys-timed.log"))).toEqual({
      reason: `keys-timed.log is an input-only log (script --log-in without --log-out; its timing keys-timed.timing names it as INPUT_LOG and names no OUTPUT_LOG): ${WHY}`,
      field: "input",
    });
    expect(await scriptReader.expand?.(join(DIR, "keys-timed.timing"))).toEqual([join(DIR, "keys-timed.log")]);
  });

  it("without a timing: told by its line ends (keystrokes, never a terminal's \\r\\n); a keyboard's Enter (\\r) too", async () => {
    const alone = await quarantineReason(join(DIR, "keys.log"));
    expect(alone.reason).toContain(`keys.log is an input-only log (script --log-in without --log-out; its line ends are keystrokes`);
    expect(alone.reason).toContain(WHY);
    expect(alone.field).toBe("input");
    const dir = tempDir();
    writeFileSync(join(dir, "k.log"), readFileSync(join(DIR, "keys.log"), "utf8").replace("echo session 1\n", "echo session 1\r"));
    expect((await quarantineReason(join(dir, "k.log"))).reason).toContain(WHY);
  });
});

describe("script reader: a timing found by the log it names must fit the log", () => {
  it("two runs with one log name, timings not named after it: the one whose byte counts read the log pairs", async () => {
    // rerun-1.timing names rerun.log (and sorts first) but the second run overwrote rerun.log.
    const t = await readTrajectory(join(DIR, "rerun.log"));
    expect(script(t)).toMatchObject({ timing: "advanced", timingFile: "rerun-2.timing" });
    expect(script(t).untimedBytes).toBeUndefined();
    expect(t.turns.map((turn) => turn.action)).toEqual(["echo session second-run", "exit 3"]);
    // The other is no log's timing: read alone it says so.
    expect(await scriptReader.expand?.(join(DIR, "rerun-1.timing"))).toBeUndefined();
    expect((await quarantineReason(join(DIR, "rerun-1.timing"))).reason).toContain("is a script timing file, and no typescript beside it");
  });

  it("with only the timing that does not fit beside it, the log is read without timing", async () => {
    const dir = copyFixtures("rerun.log", "rerun-1.timing");
    const t = await readTrajectory(join(dir, "rerun.log"));
    expect(script(t).timing).toBe("none");
    expect(t.turns.map((turn) => turn.action)).toEqual(["echo session second-run", "exit 3"]);
  });
});
