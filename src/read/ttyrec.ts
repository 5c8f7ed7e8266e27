import { createHash } from "node:crypto";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { baseName } from "../io/side-files.ts";
import { isTerminalSize, type RecordedEvent, terminalTrajectory } from "./asciicast.ts";
import { readHeadBytes } from "./head-bytes.ts";
import { type Reader, type ReaderOptions, type ReadItem, RecordLineError } from "./reader.ts";

const FORMAT = "ttyrec";

/*
 * ttyrec recordings (ttyrec/ttyplay by Satoru Takabayashi, 2000; also written by ovh-ttyrec, termrec,
 * dgamelaunch for NetHack servers, Term::TtyRec). A file is a sequence of frames, each a 12-byte
 * header of three little-endian uint32 — `sec`, `usec` (0..999999), `len` — and then `len` bytes of
 * what the terminal was sent (io.c `read_header`/`write_header`; ttyplay reads frames until one is
 * short). `sec` counts from the Unix epoch (ttyrec, termrec) or from 0. Nothing else is recorded:
 * no keystrokes, no terminal size, no charset, no command. termrec alone writes ESC%G (UTF-8) and
 * the size as ESC[8;<rows>;<cols>t before the first output (termrec(1) `--raw` turns that off).
 * ovh-ttyrec writes the same frames (optionally zstd-compressed, which is decompressed like any
 * .zst input; its rotated files are recordings of their own).
 */

const HEADER_BYTES = 12;
const USEC_LIMIT = 1_000_000;
/** The terminal size when the recording gives none (a VT100's, as ttyplay assumes). */
const DEFAULT_SIZE = { cols: 80, rows: 24 };
/**
 * How far a frame's `sec` may go back from the frame before it: a clock stepped back, two
 * recordings concatenated. A header whose `sec` goes back further is not a header (a frame whose
 * `len` was wrong puts the next "header" in the middle of terminal output).
 */
const MAX_BACKSTEP_SECONDS = 3600;
/** termrec's size note (xterm's window manipulation "resize to rows;cols"). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: an escape sequence starts with ESC.
const SIZE_SEQUENCE = /\x1b\[8;(\d+);(\d+)t/g;
/** Escape sequences (CSI, charset selection) and control characters: output that shows nothing by itself. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: an escape sequence starts with ESC.
const ESCAPES = /\x1b(?:\[[0-9;?<=>]*[ -/]*[@-~]|%[G@]|[()*+][0-9A-Za-z]|[=>78])/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it matches.
const CONTROLS = /[\x00-\x1f\x7f]/g;

// ---------- detection ----------

/** The most of a file detection looks at (the text head's size, LAYOUT_HEAD_BYTES). */
const SNIFF_BYTES = 64 * 1024;
/** The largest frame detection takes for one: recorders write what one read() of the pty gave (BUFSIZ). */
const SNIFF_MAX_LEN = 1 << 20;
/** Good frames that must come before a header that is not one for the file to be taken as a damaged recording. */
const FRAMES_BEFORE_DAMAGE = 3;

const u32 = (bytes: Uint8Array, at: number) =>
  ((bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 24)) >>> 0;

/**
 * A control byte that terminal output does not hold (NUL..ACK, SO/SI and ESC excepted: NetHack's
 * DEC graphics switch charsets with SO/SI). Binary data has many; a terminal's output almost none.
 */
const isBinaryByte = (byte: number) => byte < 0x07 || (byte > 0x0f && byte < 0x1b) || (byte > 0x1b && byte < 0x20);

/**
 * Do these bytes (the start of a file, or all of it when `whole`) look like ttyrec frames? Strict,
 * so that no other file is claimed: every header in them has `usec` under 1,000,000, `len` at most
 * 1 MiB and a `sec` not more than an hour before the previous one; the frames tile the bytes
 * exactly (the last may run past the end of a head, or of a whole file that was cut, after at
 * least two frames); at least two headers (or one frame that is the whole file); some output, and
 * at most 1 byte in 10 of it a control byte terminal output does not hold. A header that is not
 * one after three good frames is damage in a recording (the reader quarantines it, naming where),
 * before them a file that is not one.
 */
export function looksLikeTtyrec(bytes: Uint8Array, whole: boolean): boolean {
  let at = 0;
  let headers = 0;
  let frames = 0;
  let payload = 0;
  let binary = 0;
  let lastSec: number | undefined;
  let damaged = false;
  while (at + HEADER_BYTES <= bytes.length) {
    const sec = u32(bytes, at);
    const usec = u32(bytes, at + 4);
    const len = u32(bytes, at + 8);
    if (usec >= USEC_LIMIT || len > SNIFF_MAX_LEN || (lastSec !== undefined && sec + MAX_BACKSTEP_SECONDS < lastSec)) {
      // Not a header. After enough good frames the file is a recording damaged here (reading it
      // quarantines it naming this offset); before, it is not a recording.
      if (frames < FRAMES_BEFORE_DAMAGE) return false;
      damaged = true;
      break;
    }
    lastSec = sec;
    headers += 1;
    const start = at + HEADER_BYTES;
    const end = Math.min(start + len, bytes.length);
    for (let i = start; i < end; i++) if (isBinaryByte(bytes[i] as number)) binary += 1;
    payload += end - start;
    if (start + len > bytes.length) {
      at = bytes.length + 1; // the last frame runs past the end
      break;
    }
    frames += 1;
    at = start + len;
  }
  if (payload === 0 || binary * 10 > payload) return false;
  if (damaged) return true;
  const exact = at === bytes.length;
  if (exact) return headers >= 2 || (whole && frames === 1);
  // A head cut mid-frame (or mid-header), or a whole file whose last frame was cut.
  return headers >= 2 && frames >= (whole ? 2 : 1);
}

/**
 * The cheap test on the text head detection reads (decoded as UTF-8, in which a header's bytes are
 * lost but a NUL stays one): `usec`'s high byte is always 0, so a NUL comes within the first 12
 * bytes (at most 12 characters). Text never has one.
 */
export function isTtyrecHead(head: string): boolean {
  return head.slice(0, HEADER_BYTES).includes("\u0000");
}

/**
 * Whether a file is a ttyrec recording, by its first 64 KiB as bytes (decompressed: gzip, zstd;
 * local, S3 or the Hub alike): `looksLikeTtyrec`. What `detectFormat` asks after `isTtyrecHead`,
 * beside its other raw-byte checks (Parquet, Arrow IPC, zip); a file that cannot be read is not one.
 */
export async function isTtyrecFile(path: string): Promise<boolean> {
  try {
    const { bytes, whole } = await readHeadBytes(path, SNIFF_BYTES);
    return looksLikeTtyrec(bytes, whole);
  } catch {
    return false;
  }
}

// ---------- reading ----------

interface Frame {
  sec: number;
  usec: number;
  data: Buffer;
}

interface Recording {
  frames: Frame[];
  /** sha256 of the complete frames' bytes. */
  digest: string;
  /** A last frame cut while it was written (the recorder was killed), left out. */
  cut?: { offset: number; bytes: number; len?: number };
}

/** Chunks of a stream, taken from in exact amounts. */
class ByteQueue {
  private chunks: Buffer[] = [];
  size = 0;
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
  }
  take(count: number): Buffer {
    const parts: Buffer[] = [];
    let need = count;
    while (need > 0) {
      const chunk = this.chunks[0] as Buffer;
      if (chunk.length <= need) {
        parts.push(chunk);
        this.chunks.shift();
        need -= chunk.length;
      } else {
        parts.push(chunk.subarray(0, need));
        this.chunks[0] = chunk.subarray(need);
        need = 0;
      }
    }
    this.size -= count;
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, count);
  }
}

/**
 * Reads the frames, streaming: each header is checked before its payload is waited for, so a `len`
 * over `input.max_line_bytes` is refused without being allocated; the whole recording (held in
 * memory for the splitter, like any terminal recording) is capped at that limit too.
 */
async function readFrames(path: string, maxBytes: number): Promise<Recording> {
  const name = baseName(path);
  const { stream } = await openDecompressed(path);
  const queue = new ByteQueue();
  const hash = createHash("sha256");
  const frames: Frame[] = [];
  let offset = 0;
  let header: { sec: number; usec: number; len: number } | undefined;
  let lastSec: number | undefined;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      queue.push(chunk);
      for (;;) {
        if (!header) {
          if (queue.size < HEADER_BYTES) break;
          const bytes = queue.take(HEADER_BYTES);
          header = { sec: bytes.readUInt32LE(0), usec: bytes.readUInt32LE(4), len: bytes.readUInt32LE(8) };
          checkHeader(name, header, offset, lastSec, maxBytes);
          hash.update(bytes);
        }
        if (queue.size < header.len) break;
        const data = queue.take(header.len);
        hash.update(data);
        frames.push({ sec: header.sec, usec: header.usec, data });
        lastSec = header.sec;
        offset += HEADER_BYTES + header.len;
        header = undefined;
      }
    }
  } finally {
    stream.destroy();
  }
  const left = queue.size + (header ? HEADER_BYTES : 0);
  const cut = left > 0 ? { offset, bytes: left, ...(header ? { len: header.len } : {}) } : undefined;
  if (frames.length === 0) {
    const why = cut
      ? `its only frame is cut: ${cut.bytes} bytes at byte 0${cut.len !== undefined ? `, of a ${HEADER_BYTES + cut.len}-byte frame` : ", less than a 12-byte header"}`
      : "it is empty";
    throw new RecordLineError(`${name} holds no complete ttyrec frame (${why})`, undefined);
  }
  return { frames, digest: hash.digest("hex"), ...(cut ? { cut } : {}) };
}

function checkHeader(
  name: string,
  header: { sec: number; usec: number; len: number },
  offset: number,
  lastSec: number | undefined,
  maxBytes: number,
): void {
  const at = `${name} byte ${offset}: frame header`;
  if (header.usec >= USEC_LIMIT)
    throw new RecordLineError(
      `${at}: usec is ${header.usec}, not 0..999999 (a corrupt header, or the previous frame's len is wrong)`,
      "usec",
    );
  if (lastSec !== undefined && header.sec + MAX_BACKSTEP_SECONDS < lastSec)
    throw new RecordLineError(
      `${at}: sec is ${header.sec}, ${lastSec - header.sec} seconds before the previous frame's ${lastSec} (more than ${MAX_BACKSTEP_SECONDS}: a corrupt header, or the previous frame's len is wrong)`,
      "sec",
    );
  if (header.len > maxBytes)
    throw new RecordLineError(`${at}: len is ${header.len} bytes, over the ${maxBytes}-byte limit (input.max_line_bytes)`, "len");
  if (offset + HEADER_BYTES + header.len > maxBytes)
    throw new RecordLineError(
      `${name}: the recording is over the ${maxBytes}-byte limit (input.max_line_bytes) at the frame at byte ${offset}`,
      "len",
    );
}

interface Events {
  events: RecordedEvent[];
  cols: number;
  rows: number;
  /** The size came from termrec's note (ESC[8;rows;colst) at the start, not the default. */
  sizeNoted: boolean;
  /** Frames whose time went back from the frame before (a clock step): their events keep the earlier time. */
  clockBack: number;
}

/**
 * The frames as output events: times since the first frame (never going back), one UTF-8 decoder
 * across frames (a character may be split between two reads of the pty). termrec's size note is
 * the starting size when it comes before any other output, a resize after.
 */
function eventsOf(frames: Frame[]): Events {
  const first = frames[0] as Frame;
  const start = first.sec + first.usec / USEC_LIMIT;
  const decoder = new TextDecoder("utf-8");
  const result: Events = { events: [], ...DEFAULT_SIZE, sizeNoted: false, clockBack: 0 };
  let clock = 0;
  let shown = false;
  const push = (time: number, text: string) => {
    if (text === "") return;
    result.events.push({ time, code: "o", data: text });
    // Output other than escape sequences (termrec's ESC%G, bracketed-paste modes…) is on the screen.
    if (!shown && text.replace(ESCAPES, "").replace(CONTROLS, "") !== "") shown = true;
  };
  for (const frame of frames) {
    const time = frame.sec + frame.usec / USEC_LIMIT - start;
    if (time < clock) result.clockBack += 1;
    clock = Math.max(clock, time);
    const text = decoder.decode(frame.data, { stream: true });
    let from = 0;
    for (const match of text.matchAll(SIZE_SEQUENCE)) {
      const rows = Number(match[1]);
      const cols = Number(match[2]);
      if (!isTerminalSize(rows) || !isTerminalSize(cols)) continue;
      push(clock, text.slice(from, match.index));
      from = match.index + match[0].length;
      if (!shown && !result.events.some((event) => event.code === "r")) {
        Object.assign(result, { cols, rows, sizeNoted: true });
      } else result.events.push({ time: clock, code: "r", data: `${cols}x${rows}` });
    }
    push(clock, text.slice(from));
  }
  push(clock, decoder.decode());
  return result;
}

/** Output alone with no prompt: nothing in it is an action. */
const NO_ACTION = {
  stage: "terminal-no-action",
  reason: "a ttyrec recording (output only: ttyrec records no keystrokes) with no repeated shell prompt: no action is known",
};

/** `sec` read as a date when it counts from the epoch (after 1980), not from the recording's start. */
const EPOCH_FROM = 315_532_800;

function toTrajectory(path: string, recording: Recording): ReadItem {
  const { frames, cut } = recording;
  const streams = eventsOf(frames);
  const first = frames[0] as Frame;
  const last = frames.at(-1) as Frame;
  const duration = Math.round((last.sec + last.usec / USEC_LIMIT - (first.sec + first.usec / USEC_LIMIT)) * 1e6) / 1e6;
  const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
  return terminalTrajectory(
    { header: { cols: streams.cols, rows: streams.rows }, events: streams.events },
    { id: `ttyrec-${recording.digest.slice(0, 32)}`, source },
    NO_ACTION,
    {
      name: "ttyrec",
      meta: {
        frames: frames.length,
        ...(first.sec >= EPOCH_FROM ? { started: new Date(first.sec * 1000 + Math.floor(first.usec / 1000)).toISOString() } : {}),
        duration,
        size: streams.sizeNoted ? "noted" : "default",
        ...(streams.clockBack > 0 ? { clockBack: streams.clockBack } : {}),
        ...(cut ? { cut } : {}),
      },
    },
  );
}

function quarantine(path: string, err: RecordLineError): ReadItem {
  // The record is the whole file, so its source is the file's start; the reason names the frame's byte offset.
  const entry: QuarantineEntry = {
    source: { uri: path, line: 1, offset: 0, format: FORMAT },
    stage: "read",
    ...(err.field ? { field: err.field } : {}),
    reason: err.message,
  };
  return { kind: "quarantine", entry };
}

/**
 * ttyrec recordings: frames of a 12-byte little-endian header (`sec`, `usec`, `len`) and `len`
 * bytes of terminal output. One file is one trajectory (domain `terminal`), id `ttyrec-` + the
 * first 32 hex digits of the sha256 of its complete frames (decompressed). Output only, so turns
 * are cut as asciicast's output-only recordings are (`splitRecording`): at the shell's prompts
 * (`meta.split: prompt`), else one turn with no action (read filter `terminal-no-action`). The
 * size is termrec's note when it wrote one, else 80x24. A last frame cut mid-write (header or
 * payload short at the end) is left out and noted (`meta.ttyrec.cut`: its offset, the bytes there,
 * the len its header gave); a header that cannot be one (usec past 999999, sec an hour before the
 * previous frame's), a len over `input.max_line_bytes` (never allocated) or a recording over it
 * quarantines the file, naming the byte offset and the field.
 */
export const ttyrecReader: Reader = {
  name: FORMAT,
  domain: "terminal",
  description: "ttyrec terminal recordings (ttyrec, ovh-ttyrec, termrec, dgamelaunch): output only; shell prompts → terminal output",

  // Told by its raw bytes in `detectFormat` (src/read/registry.ts: `isTtyrecHead`, `isTtyrecFile`),
  // never by the decoded text the sniffs get, in which a frame header's bytes are lost.
  sniff: () => false,

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    let recording: Recording;
    try {
      recording = await readFrames(path, options.maxLineBytes);
    } catch (err) {
      if (!(err instanceof RecordLineError)) throw err;
      yield quarantine(path, err);
      return;
    }
    yield toTrajectory(path, recording);
  },
};
