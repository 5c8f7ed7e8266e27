/**
 * The rank of every vocabulary byte string, built from tiktoken's rank text and looked up by a
 * range of a latin1 string (one char per byte) without cutting it out.
 *
 * Why not a `Map<string, number>` of `atob(base64)` keys: every thread builds this table at
 * start-up, before anything is optimized, and 150k–200k decoded strings with their map entries
 * took ~200 ms of CPU per thread and ~10 MB of old-generation heap that every later full GC
 * marks again. Here the keys' bytes are decoded into one buffer and found through an
 * open-addressing table of entry numbers: a few typed arrays, built in one pass.
 */
export class RankTable {
  /** Every entry's bytes, one after the other. */
  private readonly keyBytes: Uint8Array;
  private readonly keyStart: Int32Array;
  private readonly keyLength: Int32Array;
  private readonly ranks: Float64Array;
  /** Entry number + 1 per slot (0: empty); a power of two at most half full. */
  private readonly slots: Int32Array;
  /** How many entries (the columns may be longer: they grew while the text was read). */
  private readonly entries: number;

  private constructor(
    keyBytes: Uint8Array,
    keyStart: Int32Array,
    keyLength: Int32Array,
    ranks: Float64Array,
    entries: number,
    slots?: Int32Array,
  ) {
    this.keyBytes = keyBytes;
    this.keyStart = keyStart;
    this.keyLength = keyLength;
    this.ranks = ranks;
    this.entries = entries;
    if (slots) {
      this.slots = slots;
      return;
    }
    let size = 16;
    while (size < entries * 2) size *= 2;
    this.slots = new Int32Array(size);
    for (let entry = 0; entry < entries; entry++) this.insert(entry);
  }

  /**
   * The table as bytes (rank-table-cache.ts keeps them on disk): a header, then the ranks, key
   * starts and lengths, slots and key bytes as they are in memory, so `fromBytes` only makes views.
   */
  toBytes(): Uint8Array {
    const { entries } = this;
    const layout = tableLayout(entries, this.slots.length, this.keyBytes.length);
    const out = new Uint8Array(layout.end);
    new Float64Array(out.buffer, layout.ranks, entries).set(this.ranks.subarray(0, entries));
    new Int32Array(out.buffer, layout.keyStart, entries).set(this.keyStart.subarray(0, entries));
    new Int32Array(out.buffer, layout.keyLength, entries).set(this.keyLength.subarray(0, entries));
    new Int32Array(out.buffer, layout.slots, this.slots.length).set(this.slots);
    out.set(this.keyBytes, layout.keyBytes);
    const header = [TABLE_MAGIC, TABLE_VERSION, entries, this.slots.length, this.keyBytes.length, checksum(out, HEADER_BYTES)];
    new Int32Array(out.buffer, 0, HEADER_INTS).set(header);
    return out;
  }

  /** The table `toBytes` wrote, or undefined for bytes that are not one (another version, cut short, changed). */
  static fromBytes(bytes: Uint8Array): RankTable | undefined {
    if (bytes.length < HEADER_BYTES) return undefined;
    // Typed-array views need aligned offsets: a Buffer from a pool may start anywhere.
    const own = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes); // a copy (a Buffer's slice() is a view)
    const at = own.byteOffset;
    const header = new Int32Array(own.buffer, at, HEADER_INTS);
    const [magic, version, entries = -1, slotCount = 0, keyByteCount = -1, sum] = header;
    if (magic !== TABLE_MAGIC || version !== TABLE_VERSION) return undefined;
    if (entries < 0 || slotCount <= 0 || (slotCount & (slotCount - 1)) !== 0 || keyByteCount < 0) return undefined;
    const layout = tableLayout(entries, slotCount, keyByteCount);
    if (own.length !== layout.end || checksum(own, HEADER_BYTES) !== sum) return undefined;
    // The checksum stands for the columns' own checks (offsets within the key bytes, slots naming entries): toBytes wrote them.
    const keyStart = new Int32Array(own.buffer, at + layout.keyStart, entries);
    const keyLength = new Int32Array(own.buffer, at + layout.keyLength, entries);
    const slots = new Int32Array(own.buffer, at + layout.slots, slotCount);
    const keyBytes = own.subarray(layout.keyBytes, layout.keyBytes + keyByteCount);
    return new RankTable(keyBytes, keyStart, keyLength, new Float64Array(own.buffer, at + layout.ranks, entries), entries, slots);
  }

  /** The table of tiktoken's rank text (`forEachRankRange`): a key listed twice keeps its last rank (as a Map's `set` would). */
  static parse(ranksText: string): RankTable {
    const entries = new RankEntries(ranksText.length);
    forEachRankRange(ranksText, (from, to, rank) => entries.add(ranksText, from, to, rank));
    return new RankTable(entries.bytes, entries.starts, entries.lengths, entries.ranks, entries.count);
  }

  /** The rank of `text.slice(from, to)` read as bytes (latin1), or undefined when it is no entry. */
  get(text: string, from: number, to: number): number | undefined {
    const { slots, keyBytes, keyStart, keyLength } = this;
    const mask = slots.length - 1;
    const length = to - from;
    for (let slot = hashChars(text, from, to) & mask; ; slot = (slot + 1) & mask) {
      const entry = (slots[slot] as number) - 1;
      if (entry < 0) return undefined;
      if (keyLength[entry] !== length) continue;
      const start = keyStart[entry] as number;
      let i = 0;
      while (i < length && keyBytes[start + i] === text.charCodeAt(from + i)) i++;
      if (i === length) return this.ranks[entry];
    }
  }

  private insert(entry: number): void {
    const { slots, keyBytes, keyStart, keyLength } = this;
    const mask = slots.length - 1;
    const start = keyStart[entry] as number;
    const length = keyLength[entry] as number;
    for (let slot = hashBytes(keyBytes, start, start + length) & mask; ; slot = (slot + 1) & mask) {
      const other = (slots[slot] as number) - 1;
      if (other < 0) {
        slots[slot] = entry + 1;
        return;
      }
      if (keyLength[other] === length && sameBytes(keyBytes, keyStart[other] as number, start, length)) {
        // A key listed again: its later rank wins.
        slots[slot] = entry + 1;
        return;
      }
    }
  }
}

/**
 * Calls `entry(from, to, rank)` for every key of tiktoken's rank text, `ranksText[from, to)` its
 * base64, in either form: `<base64> <rank>` per line, or the packed `! <first rank> <base64>
 * <base64> …` (consecutive ranks). A line without a rank gives NaN. Scanned with `indexOf` rather
 * than split into line and field arrays: this runs once per thread at start-up, over ~150k–200k
 * lines, before anything is optimized.
 */
export function forEachRankRange(ranksText: string, entry: (from: number, to: number, rank: number) => void): void {
  let position = 0;
  while (position < ranksText.length) {
    let lineEnd = ranksText.indexOf("\n", position);
    if (lineEnd < 0) lineEnd = ranksText.length;
    if (ranksText.startsWith("! ", position)) {
      // Fields as `split(" ")` gives them, an empty one (two spaces) included.
      const firstEnd = fieldEnd(ranksText, position + 2, lineEnd);
      let rank = parseRank(ranksText, position + 2, firstEnd);
      for (let at = firstEnd + 1; at <= lineEnd && firstEnd < lineEnd; ) {
        const end = fieldEnd(ranksText, at, lineEnd);
        entry(at, end, rank++);
        at = end + 1;
      }
    } else if (lineEnd > position) {
      const space = ranksText.indexOf(" ", position);
      if (space < 0 || space > lineEnd) entry(position, lineEnd, Number.NaN);
      else entry(position, space, parseRank(ranksText, space + 1, lineEnd));
    }
    position = lineEnd + 1;
  }
}

/** The entries as they are decoded: growable columns. */
class RankEntries {
  bytes: Uint8Array;
  starts = new Int32Array(1024);
  lengths = new Int32Array(1024);
  ranks = new Float64Array(1024);
  count = 0;
  private used = 0;

  constructor(textLength: number) {
    // Base64 is 4 chars per 3 bytes: the text's length bounds the bytes.
    this.bytes = new Uint8Array(Math.ceil((textLength * 3) / 4) + 3);
  }

  /** Decodes the base64 in `text[from, to)` as one more entry of `rank`. */
  add(text: string, from: number, to: number, rank: number): void {
    if (this.count === this.starts.length) {
      this.starts = grown(this.starts, new Int32Array(this.count * 2));
      this.lengths = grown(this.lengths, new Int32Array(this.count * 2));
      this.ranks = grown(this.ranks, new Float64Array(this.count * 2));
    }
    const start = this.used;
    let bits = 0;
    let held = 0;
    for (let i = from; i < to; i++) {
      const code = text.charCodeAt(i);
      if (code === 0x3d) break; // "=": padding ends the value
      const value = code < 128 ? (BASE64_VALUE[code] as number) : -1;
      if (value < 0) {
        if (code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0c) continue; // atob skips ASCII blanks
        throw new Error(`tokenizer ranks: "${text.slice(from, to)}" is not base64`);
      }
      bits = (bits << 6) | value;
      held += 6;
      if (held >= 8) {
        held -= 8;
        this.bytes[this.used++] = (bits >> held) & 0xff;
      }
    }
    this.starts[this.count] = start;
    this.lengths[this.count] = this.used - start;
    this.ranks[this.count] = rank;
    this.count++;
  }
}

function grown<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

const BASE64_VALUE = new Int8Array(128).fill(-1);
for (const [i, char] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].entries())
  BASE64_VALUE[char.charCodeAt(0)] = i;

/** Where the space-separated field starting at `from` ends (at most `lineEnd`). */
function fieldEnd(text: string, from: number, lineEnd: number): number {
  const space = text.indexOf(" ", from);
  return space < 0 || space > lineEnd ? lineEnd : space;
}

/** A rank's digits as a number; anything else as `Number` reads it. */
function parseRank(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9 || i - from > 15) return Number(text.slice(from, to));
    value = value * 10 + digit;
  }
  return to > from ? value : Number(text.slice(from, to));
}

const TABLE_MAGIC = 0x31544b52; // "RKT1" read little-endian
const TABLE_VERSION = 1;
const HEADER_INTS = 8;
const HEADER_BYTES = HEADER_INTS * 4;

/** Where each column of `toBytes` starts: the ranks (8-byte aligned) first, the key bytes last. */
function tableLayout(entries: number, slots: number, keyBytes: number) {
  const ranks = HEADER_BYTES;
  const keyStart = ranks + 8 * entries;
  const keyLength = keyStart + 4 * entries;
  const slotsAt = keyLength + 4 * entries;
  const keyBytesAt = slotsAt + 4 * slots;
  return { ranks, keyStart, keyLength, slots: slotsAt, keyBytes: keyBytesAt, end: keyBytesAt + keyBytes };
}

/**
 * A checksum of `bytes[from..]` (4-byte aligned, as `toBytes` lays them out): a sum and a
 * position-weighted sum of its 32-bit words, so a changed, swapped or cut word fails it. Cheaper
 * than hashing byte by byte: it runs at every start-up that reads a cached table.
 */
function checksum(bytes: Uint8Array, from: number): number {
  const words = new Int32Array(bytes.buffer, bytes.byteOffset + from, (bytes.length - from) >> 2);
  let sum = 0;
  let weighted = 0;
  for (let i = 0; i < words.length; i++) {
    sum = (sum + (words[i] as number)) | 0;
    weighted = (weighted + sum) | 0;
  }
  for (let i = from + words.length * 4; i < bytes.length; i++) {
    sum = (sum + (bytes[i] as number)) | 0;
    weighted = (weighted + sum) | 0;
  }
  return (Math.imul(weighted, 31) ^ sum) | 0;
}

/** FNV-1a over bytes; `hashChars` gives the same for the same bytes as latin1 chars. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
}

function hashChars(text: string, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}
