import { execFile } from "node:child_process";
import { closeSync, copyFileSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { crc32, deflateSync, gzipSync, zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { renderTerminalTrajectory } from "../src/normalize/domains/terminal.ts";
import type { TerminalRecordingMeta } from "../src/read/asciicast.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat, detectFromHead, READERS, readHead } from "../src/read/registry.ts";
import { isTtyrecFile, isTtyrecHead, looksLikeTtyrec, ttyrecReader } from "../src/read/ttyrec.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";

/**
 * ttyrec recordings (src/read/ttyrec.ts). The recordings in test/fixtures/recorded/ttyrec/ were
 * made here by ttyrec 1.0.8 and termrec 0.19 (record.sh); damage (a cut last frame, a corrupt
 * header, a huge len) is made here from them, byte by byte.
 */
const DIR = join(ROOT, "test/fixtures/recorded/ttyrec");
const OPTIONS = { maxLineBytes: 1 << 20 };
const CLI = join(ROOT, "bin/lwm-data.js");
const exec = promisify(execFile);
/** The commands record.sh types into the interactive bash. */
const COMMANDS = ["echo hello", "ls /usr", "cat notes.txt", 'printf "a\\nb\\n" | wc -l', "exit"];
const SESSION = join(DIR, "session.ttyrec");

async function readOne(path: string, options = OPTIONS): Promise<ReadItem> {
  const items = await collect(ttyrecReader.read(path, options));
  expect(items).toHaveLength(1); // one recording = one record, whatever happens
  return items[0] as ReadItem;
}

async function readTrajectory(path: string): Promise<Trajectory> {
  const item = await readOne(path);
  if (item.kind !== "trajectory") throw new Error(`expected a trajectory, got ${JSON.stringify(item)}`);
  return item.trajectory;
}

async function quarantined(path: string, options = OPTIONS) {
  const item = await readOne(path, options);
  if (item.kind !== "quarantine") throw new Error(`expected a quarantine entry, got ${JSON.stringify(item).slice(0, 300)}`);
  return item.entry;
}

const ttyrec = (t: Trajectory) => t.meta?.ttyrec as Record<string, unknown>;
const terminal = (t: Trajectory) => t.meta?.terminal as TerminalRecordingMeta;

/** The frames of a ttyrec file: where each starts, its header, its payload. */
function frames(bytes: Buffer): { offset: number; sec: number; usec: number; len: number }[] {
  const out = [];
  for (let at = 0; at + 12 <= bytes.length; ) {
    const len = bytes.readUInt32LE(at + 8);
    out.push({ offset: at, sec: bytes.readUInt32LE(at), usec: bytes.readUInt32LE(at + 4), len });
    at += 12 + len;
  }
  return out;
}

/** One ttyrec frame. */
function frame(sec: number, usec: number, data: string | Buffer): Buffer {
  const payload = typeof data === "string" ? Buffer.from(data) : data;
  const header = Buffer.alloc(12);
  header.writeUInt32LE(sec, 0);
  header.writeUInt32LE(usec, 4);
  header.writeUInt32LE(payload.length, 8);
  return Buffer.concat([header, payload]);
}

function write(dir: string, name: string, bytes: Buffer | string): string {
  writeFileSync(join(dir, name), bytes);
  return join(dir, name);
}

/** The first bytes of a (big) file. */
function headOf(path: string, bytes: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}

async function formatOf(path: string): Promise<string> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}

describe("ttyrec reader: recorded sessions", () => {
  it("ttyrec 1.0.8, an interactive bash: turns from the shell's prompts, each observing its output", async () => {
    const t = await readTrajectory(SESSION);
    expect(t.domain).toBe("terminal");
    expect(t.id).toMatch(/^ttyrec-[0-9a-f]{32}$/);
    expect(t.source).toMatchObject({ uri: SESSION, offset: 0, format: "ttyrec" });
    expect(t.meta?.split).toBe("prompt");
    expect(t.meta?.prompt).toBe("demo@lwm:<dir># ");
    expect(t.turns.map((turn) => turn.action)).toEqual(COMMANDS);
    expect(t.meta?.read_filter).toBeUndefined();
    // ttyrec records no size: a VT100's.
    expect([terminal(t).cols, terminal(t).rows]).toEqual([80, 24]);
    expect(ttyrec(t)).toMatchObject({ frames: 9, size: "default", started: expect.stringMatching(/^2026-11-29T18:37:26\.\d{3}Z$/) });
    expect(ttyrec(t).duration).toBeGreaterThan(2);
    expect(ttyrec(t).cut).toBeUndefined();
    // The output before the first command (the first prompt) is the trajectory's, not a turn's.
    expect(
      terminal(t)
        .events.map(([, data]) => data)
        .join(""),
    ).toContain("demo@lwm:/tmp/lwm-ttyrec-demo# ");
    // Turn times are seconds since the first frame, in order.
    const times = t.turns.map((turn) => turn.meta?.time as number);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[0]).toBeGreaterThan(0.5);
    // The screens render from the recorded bytes, as an asciicast's do.
    const rendered = await renderTerminalTrajectory(t, new Map());
    expect(rendered.turns[0]?.observation).toMatch(/^hello$/m);
    expect(rendered.turns[1]?.observation).toContain("libexec");
    expect(rendered.turns[2]?.observation).toContain("first line\nsecond line");
    expect(rendered.turns[3]?.observation).toMatch(/^2$/m);
  });

  it("termrec 0.19: its size note (ESC[8;30;100t) is the terminal size, and is not replayed as output", async () => {
    const t = await readTrajectory(join(DIR, "termrec.ttyrec"));
    expect(t.turns.map((turn) => turn.action)).toEqual(COMMANDS);
    expect([terminal(t).cols, terminal(t).rows]).toEqual([100, 30]);
    expect(ttyrec(t)).toMatchObject({ frames: 14, size: "noted" });
    const all = [
      ...terminal(t).events,
      ...t.turns.flatMap((turn) => {
        const meta = turn.meta?.terminal as { typing: [string, string][]; events: [string, string][] };
        return [...meta.typing, ...meta.events];
      }),
    ];
    expect(all.some(([, data]) => data.includes("\x1b[8;"))).toBe(false);
    expect(all.some(([code]) => code === "r")).toBe(false);
    const rendered = await renderTerminalTrajectory(t, new Map());
    expect(rendered.turns[2]?.observation).toContain("first line\nsecond line");
  });

  it("a size note after output is a resize; a size over 1000 is left as output", async () => {
    const dir = tempDir();
    const bytes = Buffer.concat([
      frame(100, 0, "$ "),
      frame(101, 0, "ls\r\nx\r\n\x1b[8;40;120t$ "),
      frame(102, 0, "ls\r\ny\r\n\x1b[8;5000;5000t$ "),
    ]);
    const t = await readTrajectory(write(dir, "resize.ttyrec", bytes));
    expect([terminal(t).cols, terminal(t).rows]).toEqual([80, 24]);
    const events = t.turns.flatMap((turn) => (turn.meta as { terminal: { events: [string, string][] } }).terminal.events);
    expect(events).toContainEqual(["r", "120x40"]);
    expect(events.some(([, data]) => data.includes("\x1b[8;5000;5000t"))).toBe(true);
  });

  it("one command and no shell: one turn with no action, filtered as terminal-no-action", async () => {
    const t = await readTrajectory(join(DIR, "oneshot.ttyrec"));
    expect(t.meta?.split).toBe("single-turn");
    expect(t.turns.map((turn) => turn.action)).toEqual([""]);
    expect(t.meta?.read_filter).toMatchObject({ stage: "terminal-no-action" });
    expect(ttyrec(t).frames).toBe(1);
  });

  it("sec counted from 0 (not the epoch): no start date; a clock stepped back is counted, times never go back", async () => {
    const dir = tempDir();
    const bytes = Buffer.concat([frame(0, 0, "$ "), frame(2, 0, "echo a\r\na\r\n$ "), frame(1, 500_000, "echo b\r\nb\r\n$ ")]);
    const t = await readTrajectory(write(dir, "zero.ttyrec", bytes));
    expect(ttyrec(t).started).toBeUndefined();
    expect(ttyrec(t).clockBack).toBe(1);
    expect(t.turns.map((turn) => turn.action)).toEqual(["echo a", "echo b"]);
    expect(t.turns.map((turn) => turn.meta?.time)).toEqual([2, 2]);
  });

  it("the same file read twice gives the same trajectory; a compressed copy the same id", async () => {
    const first = await readTrajectory(SESSION);
    const second = await readTrajectory(SESSION);
    expect(second).toEqual(first);
    const dir = tempDir();
    const gz = await readTrajectory(write(dir, "session.ttyrec.gz", gzipSync(readFileSync(SESSION))));
    expect(gz.id).toBe(first.id);
    expect(gz.turns).toEqual(first.turns);
    expect((await readTrajectory(join(DIR, "termrec.ttyrec"))).id).not.toBe(first.id);
  });
});

describe("ttyrec reader: cut and corrupt files", () => {
  const bytes = readFileSync(SESSION);
  const layout = frames(bytes);
  const last = layout.at(-1) as (typeof layout)[number];

  it("a last frame cut mid-payload: the complete frames are read, the cut is noted", async () => {
    const dir = tempDir();
    const cutAt = last.offset + 12 + 5;
    const t = await readTrajectory(write(dir, "cut.ttyrec", bytes.subarray(0, cutAt)));
    expect(ttyrec(t)).toMatchObject({ frames: layout.length - 1, cut: { offset: last.offset, bytes: 17, len: last.len } });
    expect(t.turns.map((turn) => turn.action)).toEqual(COMMANDS.slice(0, 4));
    // Still told from its content.
    expect(await formatOf(join(dir, "cut.ttyrec"))).toBe("ttyrec");
  });

  it("a last header cut short: noted with the bytes there and no len", async () => {
    const dir = tempDir();
    const t = await readTrajectory(write(dir, "cut-header.ttyrec", bytes.subarray(0, last.offset + 5)));
    expect(ttyrec(t).cut).toEqual({ offset: last.offset, bytes: 5 });
    expect(ttyrec(t).frames).toBe(layout.length - 1);
  });

  it("a file whose only frame is cut, or that is empty, is quarantined", async () => {
    const dir = tempDir();
    const only = await quarantined(write(dir, "only.ttyrec", bytes.subarray(0, 30)));
    expect(only.reason).toBe("only.ttyrec holds no complete ttyrec frame (its only frame is cut: 30 bytes at byte 0, of a 51-byte frame)");
    expect((await quarantined(write(dir, "empty.ttyrec", ""))).reason).toContain("(it is empty)");
  });

  it("a corrupt header mid-file quarantines the recording at its byte offset, naming the field", async () => {
    const dir = tempDir();
    // The fourth frame's header: after three good frames, still told as a (damaged) ttyrec.
    const third = layout[3] as (typeof layout)[number];
    const usec = Buffer.from(bytes);
    usec.writeUInt32LE(0xffffffff, third.offset + 4);
    const entry = await quarantined(write(dir, "usec.ttyrec", usec));
    // The record is the whole file (its source the file's start); the reason names the header's byte offset.
    expect(entry).toMatchObject({ stage: "read", field: "usec", source: { uri: join(dir, "usec.ttyrec"), offset: 0, format: "ttyrec" } });
    expect(entry.reason).toBe(
      `usec.ttyrec byte ${third.offset}: frame header: usec is 4294967295, not 0..999999 (a corrupt header, or the previous frame's len is wrong)`,
    );
    // A wrong len puts the next "header" inside terminal output: caught there.
    const len = Buffer.from(bytes);
    len.writeUInt32LE(third.len - 7, third.offset + 8);
    const misaligned = await quarantined(write(dir, "len.ttyrec", len));
    expect(misaligned.reason).toMatch(new RegExp(`^len\\.ttyrec byte ${third.offset + 12 + third.len - 7}: frame header: `));
    expect(["usec", "sec", "len"]).toContain(misaligned.field);
    // sec more than an hour before the frame before.
    const sec = Buffer.from(bytes);
    sec.writeUInt32LE(third.sec - 7200, third.offset);
    const back = await quarantined(write(dir, "sec.ttyrec", sec));
    expect(back.field).toBe("sec");
    expect(back.reason).toContain(`sec.ttyrec byte ${third.offset}: frame header: `);
    const previous = (layout[2] as (typeof layout)[number]).sec;
    expect(back.reason).toContain(
      `sec is ${third.sec - 7200}, ${previous - third.sec + 7200} seconds before the previous frame's ${previous} (more than 3600`,
    );
  });

  it("a len over input.max_line_bytes is refused from its header, never allocated; so is a recording over it", async () => {
    const dir = tempDir();
    const huge = Buffer.concat([frame(100, 0, "$ "), frame(101, 0, "x")]);
    huge.writeUInt32LE(0xfffffff0, 14 + 8);
    const entry = await quarantined(write(dir, "huge.ttyrec", huge));
    expect(entry.field).toBe("len");
    expect(entry.reason).toBe(
      `huge.ttyrec byte 14: frame header: len is ${0xfffffff0} bytes, over the ${1 << 20}-byte limit (input.max_line_bytes)`,
    );
    const total = await quarantined(SESSION, { maxLineBytes: 300 });
    expect(total.field).toBe("len");
    expect(total.reason).toContain("the recording is over the 300-byte limit (input.max_line_bytes)");
  });

  it("a run: records in = samples out + quarantined + filtered, with a good, a cut, a corrupt and a no-action recording", async () => {
    const work = tempDir("lwm-ttyrec-run-");
    const data = join(work, "data");
    mkdirSync(data);
    copyFileSync(SESSION, join(data, "session.ttyrec"));
    copyFileSync(join(DIR, "oneshot.ttyrec"), join(data, "oneshot.ttyrec"));
    write(data, "cut.rec", bytes.subarray(0, last.offset + 20));
    const corrupt = Buffer.from(bytes);
    corrupt.writeUInt32LE(0xffffffff, (layout[3] as (typeof layout)[number]).offset + 4);
    write(data, "corrupt.tty", corrupt);
    const config = writeConfig("inputs:\n  - path: data\noutput: { dir: out }\n", work);
    const env = { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}` };
    const validate = await exec(process.execPath, [CLI, "validate", config], { env });
    for (const name of ["session.ttyrec", "oneshot.ttyrec", "cut.rec", "corrupt.tty"])
      expect(validate.stdout).toMatch(new RegExp(`${name.replace(".", "\\.")} .*format=ttyrec \\(detected`));
    await exec(process.execPath, [CLI, "run", config, "--progress", "none"], { env });
    const manifest = JSON.parse(readFileSync(join(work, "out/manifest.json"), "utf8")) as {
      counts: { records_in: number; samples_out: number; quarantined: number; filtered: number };
    };
    expect(manifest.counts).toMatchObject({ records_in: 4, samples_out: 2, quarantined: 1, filtered: 1 });
    const quarantine = readdirSync(join(work, "out/quarantine"))
      .map((name) => readFileSync(join(work, "out/quarantine", name), "utf8"))
      .join("");
    expect(quarantine).toContain('"field":"usec"');
    expect(quarantine).toContain("corrupt.tty byte 271");
  }, 60_000);
});

describe("ttyrec detection", () => {
  it("recordings are told from their content, whatever their name, plain or compressed", async () => {
    for (const name of ["session.ttyrec", "termrec.ttyrec", "oneshot.ttyrec"]) expect(await formatOf(join(DIR, name)), name).toBe("ttyrec");
    const dir = tempDir();
    const plain = readFileSync(SESSION);
    expect(await formatOf(write(dir, "game", plain))).toBe("ttyrec");
    expect(await formatOf(write(dir, "game.gz", gzipSync(plain)))).toBe("ttyrec");
    expect(await formatOf(write(dir, "game.zst", zstdCompressSync(plain)))).toBe("ttyrec");
    // A first byte that reads as JSON's `[` or `{` (sec's low byte) does not make it a JSON file.
    for (const sec of [0x6900005b, 0x6900007b]) {
      const bytes = Buffer.concat([frame(sec, 10, "$ "), frame(sec, 20, "ls\r\nx\r\n$ "), frame(sec + 1, 0, "exit\r\n")]);
      expect(await formatOf(write(dir, `json-like-${sec}`, bytes))).toBe("ttyrec");
    }
  });

  it("negative controls: a PNG, a gzip of binary data, random bytes, an ELF binary, JSONL and other recordings stay as before", async () => {
    const dir = tempDir();
    const chunk = (type: string, data: Buffer) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(data.length);
      const body = Buffer.concat([Buffer.from(type), data]);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(body));
      return Buffer.concat([length, body, crc]);
    };
    const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("IDAT", deflateSync(Buffer.from([0, 0]))),
      chunk("IEND", Buffer.alloc(0)),
    ]);
    const pngDetection = await detectFormat(write(dir, "shot.png", png));
    expect(pngDetection).toMatchObject({ kind: "unrecognized" });
    expect(pngDetection.kind === "unrecognized" && pngDetection.reason).toContain("a PNG image");
    let state = 12345;
    const random = (n: number) =>
      Buffer.from(
        Array.from({ length: n }, () => {
          state = (state * 1103515245 + 12345) >>> 0;
          return state >>> 24;
        }),
      );
    for (const size of [12, 100, 4096, 70_000]) {
      const detection = await detectFormat(write(dir, `random-${size}.rec`, random(size)));
      expect(detection.kind, `random ${size}`).toBe("unrecognized");
    }
    const gz = await detectFormat(write(dir, "blob.tty.gz", gzipSync(random(5000))));
    expect(gz.kind === "unrecognized" && gz.reason).toContain("binary data");
    // Zero bytes tile as empty frames at sec 0: no output, not a recording.
    expect(await formatOf(write(dir, "zeros.ttyrec", Buffer.alloc(4096)))).toBe("unrecognized");
    // An executable: its header passes as one frame (usec 65794, len 0), the next "frame" goes back to sec 0.
    expect(await formatOf(write(dir, "node.rec", headOf(process.execPath, 65536)))).toBe("unrecognized");
    // Text formats stay theirs.
    const jsonl = join(ROOT, "test/fixtures/records/mixed-bad.jsonl");
    expect(await formatOf(jsonl)).toBe(await formatOfWithout(jsonl));
    expect(await formatOf(join(ROOT, "test/fixtures/recorded/script/session.typescript"))).toBe("script");
    expect(await formatOf(join(ROOT, "test/fixtures/handmade/terminal/shell-session.v2.cast"))).toBe("asciicast");
    expect(await formatOf(join(ROOT, "data/demo/mcp/everything.jsonl.gz"))).not.toBe("ttyrec");
  });

  it("the byte test: strict about headers, tiling and content", () => {
    const good = Buffer.concat([frame(1000, 5, "$ "), frame(1001, 0, "ls\r\nfile\r\n$ ")]);
    expect(looksLikeTtyrec(good, true)).toBe(true);
    // A head cut mid-frame is fine; a whole file with bytes left over is not.
    expect(looksLikeTtyrec(good.subarray(0, good.length - 3), false)).toBe(true);
    expect(looksLikeTtyrec(Buffer.concat([good, Buffer.from([1, 2, 3])]), true)).toBe(true); // a cut header after two frames
    expect(looksLikeTtyrec(Buffer.concat([frame(1000, 5, "$ "), Buffer.from([1, 2])]), true)).toBe(false); // one frame and junk
    // usec at 1,000,000, a len over 1 MiB, sec back more than an hour: not headers.
    expect(looksLikeTtyrec(Buffer.concat([frame(1000, 1_000_000, "$ "), frame(1001, 0, "x")]), true)).toBe(false);
    const big = frame(1001, 0, "x");
    big.writeUInt32LE(2 << 20, 8);
    expect(looksLikeTtyrec(Buffer.concat([frame(1000, 0, "$ "), big]), false)).toBe(false);
    expect(looksLikeTtyrec(Buffer.concat([frame(10_000, 0, "$ "), frame(1000, 0, "x")]), true)).toBe(false);
    // A bad header after three good frames: a damaged recording (the reader says where); after two, not one.
    const bad = frame(1003, 0, "x");
    bad.writeUInt32LE(2_000_000, 4);
    const three = [frame(1000, 0, "$ "), frame(1001, 0, "ls\r\n"), frame(1002, 0, "x\r\n$ ")];
    expect(looksLikeTtyrec(Buffer.concat([...three, bad]), true)).toBe(true);
    expect(looksLikeTtyrec(Buffer.concat([...three.slice(1), bad]), true)).toBe(false);
    // Binary payloads.
    expect(looksLikeTtyrec(Buffer.concat([frame(1000, 0, Buffer.from([1, 2, 3, 4])), frame(1000, 1, Buffer.from([5, 6]))]), true)).toBe(
      false,
    );
    // NetHack's DEC graphics (SO/SI) and escape sequences are terminal output.
    expect(looksLikeTtyrec(Buffer.concat([frame(1000, 0, "\x1b[H\x0elqqk\x0f"), frame(1000, 9, "\x1b[2J")]), true)).toBe(true);
  });

  it("told by a raw-byte check in detectFormat: the sniff reads no file and keeps no answer between files", async () => {
    const dir = tempDir();
    const bytes = readFileSync(SESSION);
    const path = write(dir, "rewritten.rec", bytes);
    expect(await formatOf(path)).toBe("ttyrec");
    // The text head the sniffs get has lost the headers' bytes: the sniff claims nothing, and reads nothing (no such file).
    const head = await readHead(path);
    expect(isTtyrecHead(head)).toBe(true);
    expect(ttyrecReader.sniff(head, path)).toBe(false);
    expect(ttyrecReader.sniff(head, join(dir, "no-such-file"))).toBe(false);
    // The same path rewritten with the same start (first two frames) and then no recording: told again from its bytes.
    const second = frames(bytes)[2] as { offset: number };
    const junk = Buffer.from(bytes.subarray(0, second.offset + 12));
    junk.writeUInt32LE(0xffffffff, second.offset + 4);
    write(dir, "rewritten.rec", junk);
    expect((await readHead(path)).slice(0, 64)).toBe(head.slice(0, 64));
    expect(await formatOf(path)).toBe("unrecognized");
    // A text file with a NUL early is read again as bytes and is not taken.
    expect(await formatOf(write(dir, "nul.txt", "ab\u0000cdefghijklmnop\nmore text\n"))).toBe("unrecognized");
  });

  it("ttyrec is one of the readers format: auto tries", () => {
    expect(READERS.map((reader) => reader.name)).toContain("ttyrec");
  });
});

/**
 * The format a file is detected as without the ttyrec check (what it was before the reader): the
 * ttyrec test in `detectFormat` is a raw-byte check of its own, not a sniff, so this is the text
 * head's detection (no other check of `detectFormat` applies to a JSONL file); the byte test itself
 * must say no to the file, and the sniff claims nothing.
 */
async function formatOfWithout(path: string): Promise<string> {
  const head = await readHead(path);
  expect(ttyrecReader.sniff(head, path)).toBe(false);
  expect(isTtyrecHead(head) && (await isTtyrecFile(path))).toBe(false);
  const detection = detectFromHead(head, path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}
