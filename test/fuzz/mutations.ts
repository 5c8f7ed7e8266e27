import { gzipSync, zstdCompressSync } from "node:zlib";
import fc from "fast-check";

/**
 * Mutations of real inputs, as data: fast-check shrinks them (fewer, earlier, smaller) and prints
 * them readably. Positions are plain numbers taken modulo the input's size when applied.
 */
export type Mutation =
  | { op: "flip"; at: number; xor: number }
  | { op: "truncate"; at: number }
  | { op: "insert"; at: number; text: string }
  | { op: "insertBytes"; at: number; bytes: number[] }
  /** `unit` repeated `depth` times: deep nesting of brackets, tags, indentation. */
  | { op: "nest"; at: number; unit: string; depth: number }
  | { op: "dupLine"; line: number; times: number }
  | { op: "dropLine"; line: number }
  | { op: "swapLines"; a: number; b: number }
  | { op: "newlines"; to: "\r\n" | "\r" }
  | { op: "json"; unit: number; path: number[]; edit: JsonEdit };

/** An edit at one place in a JSON value found in the input (a JSONL line or the whole document). */
export type JsonEdit =
  | { kind: "set"; value: unknown }
  /** Text spliced in as is: huge or odd numbers, broken JSON. */
  | { kind: "raw"; text: string }
  /** A valid value nested `depth` levels deep (`[[[1]]]`, `{"a":{"a":1}}`). */
  | { kind: "deep"; open: "[" | '{"a":'; depth: number }
  | { kind: "delete" }
  | { kind: "duplicate" };

export interface Compression {
  codec: "none" | "gzip" | "zstd";
  /** Damage to the compressed bytes: a cut archive or a flipped byte. */
  damage?: { op: "truncate"; at: number } | { op: "flip"; at: number; xor: number };
}

const UTF8 = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: false });

// Texts that break parsers: escapes, markup of every format read, controls, odd Unicode.
const NASTY_TEXTS = [
  "\0",
  "\uFEFF",
  "\r\n",
  "\r",
  "\n\n",
  "\t",
  "\u001b[2J",
  "\u001b[999999999S",
  "\u001b[?1049h",
  "\u2028",
  "\\",
  '"',
  "'",
  "\\ud800",
  '"\\udc00"',
  '"\\u0000"',
  "\\U0010FFFF",
  "\\xff",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  "null",
  "1e999",
  "-0",
  "123456789012345678901234567890",
  "NaN",
  "<",
  ">",
  "</node>",
  '<node class="x" bounds="[0,0][1,1]">',
  "<hierarchy>",
  "</hierarchy>",
  "<!-- action: tap -->",
  "<![CDATA[",
  "&#0;",
  "&#xD800;",
  "&#1114112;",
  "&amp;",
  "```",
  "## InstanceStep1",
  "#### Current Page Accessibility Tree",
  "* **Trace ID**: x",
  "-- client --",
  "-- server --",
  '{"jsonrpc":"2.0","id":1,"result":{}}',
  '{"type":"task"}',
  '[0.5, "i", "\\r"]',
  '[0.5, "r", "99999x99999"]',
  '[1, "m", "marker"]',
  '{"type":"keys","data":"\\r"}',
  "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)",
  "é",
  "e\u0301",
  "🙂",
  "\ud83d",
  "\ufffd",
];

const NEST_UNITS = ["[", "{", '{"a":', '[{"role":"user","content":', "<node>", "<a>", "\t", "\t[1] generic 'x'\n\t", "(", "\u001b["];

const position = fc.nat({ max: 1 << 30 });

const nastyText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_TEXTS) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...NASTY_TEXTS), maxLength: 20 }).map((s) => s) },
);

// Invalid UTF-8: stray continuation, truncated sequences, overlong forms, an encoded surrogate.
const invalidUtf8: fc.Arbitrary<number[]> = fc.oneof(
  fc.constantFrom<number[]>(
    [0xff],
    [0x80],
    [0xc3],
    [0xe2, 0x82],
    [0xf0, 0x9f, 0x98],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
  ),
  fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 6 }),
);

const depth = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 2, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 60_000 }) },
);

/** JSON values that are wrong in interesting ways: wrong types, nasty strings, extremes. */
export const oddJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: nastyText },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      0,
      -1,
      1.5,
      2 ** 53 + 2,
      1e308,
      -1e308,
      "",
      " ",
      [],
      {},
      [[]],
      { "": "" },
      "x".repeat(5000),
    ),
  },
);

const jsonEdit: fc.Arbitrary<JsonEdit> = fc.oneof(
  { weight: 4, arbitrary: oddJsonValue.map((value): JsonEdit => ({ kind: "set", value })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        "1e999",
        "-1e999",
        "123456789012345678901234567890",
        "-0",
        "0.0000000000000000000001",
        "1E+400",
        "NaN",
        "undefined",
        '"\\ud800"',
        '"\\udfff\\ud800"',
        "{",
        '"',
      )
      .map((text): JsonEdit => ({ kind: "raw", text })),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deep" as const), open: fc.constantFrom("[" as const, '{"a":' as const), depth }) },
  { weight: 2, arbitrary: fc.constant<JsonEdit>({ kind: "delete" }) },
  { weight: 1, arbitrary: fc.constant<JsonEdit>({ kind: "duplicate" }) },
);

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("flip" as const), at: position, xor: fc.integer({ min: 1, max: 255 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("truncate" as const), at: position }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("insert" as const), at: position, text: nastyText }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("insertBytes" as const), at: position, bytes: invalidUtf8 }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("nest" as const), at: position, unit: fc.constantFrom(...NEST_UNITS), depth }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("dupLine" as const), line: position, times: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("dropLine" as const), line: position }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("swapLines" as const), a: position, b: position }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("newlines" as const), to: fc.constantFrom("\r\n" as const, "\r" as const) }) },
  {
    weight: 8,
    arbitrary: fc.record({ op: fc.constant("json" as const), unit: position, path: fc.array(position, { maxLength: 8 }), edit: jsonEdit }),
  },
);

export const compression: fc.Arbitrary<Compression> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Compression>({ codec: "none" }) },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        codec: fc.constantFrom("gzip" as const, "zstd" as const),
        damage: fc.oneof(
          fc.record({ op: fc.constant("truncate" as const), at: position }),
          fc.record({ op: fc.constant("flip" as const), at: position, xor: fc.integer({ min: 1, max: 255 }) }),
        ),
      },
      { requiredKeys: ["codec"] },
    ),
  },
);

/** Input that owes nothing to a seed: random bytes, random text, random JSON lines. */
export const randomInput: fc.Arbitrary<string | number[]> = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 2048 }),
  fc.string({ unit: "binary", maxLength: 1000 }),
  fc.array(oddJsonValue, { maxLength: 8 }).map((values) => values.map((v) => JSON.stringify(v)).join("\n")),
);

function splice(bytes: Uint8Array, at: number, remove: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  return out;
}

/** [start, end) of each line, the newline excluded. */
function lineSpans(bytes: Uint8Array): [number, number][] {
  const spans: [number, number][] = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      spans.push([start, i]);
      start = i + 1;
    }
  }
  return spans;
}

function joinLines(bytes: Uint8Array, order: [number, number][]): Uint8Array {
  const parts: Uint8Array[] = [];
  order.forEach(([s, e], i) => {
    if (i > 0) parts.push(Uint8Array.of(0x0a));
    parts.push(bytes.subarray(s, e));
  });
  return Buffer.concat(parts);
}

/** The JSON values in the input: each line that parses as an object or array, and the whole text if it does. */
interface JsonUnit {
  start: number;
  end: number;
  pretty: boolean;
}

/**
 * The JSON units of a file (the whole, when it parses, and every line that parses), by where they
 * are. Kept per bytes object: a case's first mutation edits one of the seeds, which every case
 * shares, and parsing each of a seed's lines again for every such case was a third of the fuzz
 * files' main-thread time.
 */
const UNITS = new WeakMap<Uint8Array, JsonUnit[]>();

function jsonUnits(bytes: Uint8Array): JsonUnit[] {
  const kept = UNITS.get(bytes);
  if (kept) return kept;
  const units: JsonUnit[] = [];
  if (tryJson(DECODER.decode(bytes)) !== undefined) units.push({ start: 0, end: bytes.length, pretty: bytes.includes(0x0a) });
  for (const [start, end] of lineSpans(bytes)) {
    if (start === 0 && end === bytes.length) continue;
    if (tryJson(DECODER.decode(bytes.subarray(start, end))) !== undefined) units.push({ start, end, pretty: false });
  }
  UNITS.set(bytes, units);
  return units;
}

function tryJson(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function nested(open: "[" | '{"a":', depth: number): string {
  return `${open.repeat(depth)}1${(open === "[" ? "]" : "}").repeat(depth)}`;
}

const RAW_MARK = "\u0000fuzz-raw\u0000";

/** Applies an edit at the place `path` leads to (each step picks a child modulo the container's size). */
function editJson(root: unknown, path: number[], edit: JsonEdit): unknown {
  const replacement = edit.kind === "set" ? edit.value : edit.kind === "raw" || edit.kind === "deep" ? RAW_MARK : undefined;
  let parent: unknown[] | Record<string, unknown> | undefined;
  let key: string | number | undefined;
  let node = root;
  for (const step of path) {
    if (Array.isArray(node) && node.length > 0) {
      parent = node;
      key = step % node.length;
    } else if (typeof node === "object" && node !== null && Object.keys(node).length > 0) {
      const keys = Object.keys(node);
      parent = node as Record<string, unknown>;
      key = keys[step % keys.length] as string;
    } else break;
    node = (parent as Record<string | number, unknown>)[key];
  }
  if (parent === undefined || key === undefined) return edit.kind === "delete" || edit.kind === "duplicate" ? root : replacement;
  if (Array.isArray(parent)) {
    const i = key as number;
    if (edit.kind === "delete") parent.splice(i, 1);
    else if (edit.kind === "duplicate") parent.splice(i, 0, structuredClone(parent[i]));
    else parent[i] = replacement;
  } else {
    const k = key as string;
    if (edit.kind === "delete") delete parent[k];
    else if (edit.kind === "duplicate") parent[`${k}_`] = structuredClone(parent[k]);
    else parent[k] = replacement;
  }
  return root;
}

function applyJson(bytes: Uint8Array, m: Extract<Mutation, { op: "json" }>): Uint8Array {
  const units = jsonUnits(bytes);
  if (units.length === 0) return bytes;
  const unit = units[m.unit % units.length] as JsonUnit;
  let text: string;
  try {
    // Parsed anew: the edit changes the value in place.
    const edited = editJson(JSON.parse(DECODER.decode(bytes.subarray(unit.start, unit.end))), m.path, m.edit);
    text = JSON.stringify(edited, null, unit.pretty ? 2 : undefined) ?? "null";
  } catch {
    return bytes; // too deep to copy or write back (an earlier mutation nested it): leave it
  }
  const { edit } = m;
  const raw = edit.kind === "raw" ? edit.text : edit.kind === "deep" ? nested(edit.open, edit.depth) : undefined;
  if (raw !== undefined) text = text.replace(JSON.stringify(RAW_MARK), () => raw);
  return splice(bytes, unit.start, unit.end - unit.start, UTF8.encode(text));
}

export function applyMutation(bytes: Uint8Array, m: Mutation): Uint8Array {
  const at = (n: number) => (bytes.length === 0 ? 0 : n % (bytes.length + 1));
  switch (m.op) {
    case "flip": {
      if (bytes.length === 0) return bytes;
      const out = Uint8Array.from(bytes);
      const i = m.at % bytes.length;
      out[i] = (out[i] as number) ^ m.xor;
      return out;
    }
    case "truncate":
      return bytes.subarray(0, at(m.at));
    case "insert":
      return splice(bytes, at(m.at), 0, UTF8.encode(m.text));
    case "insertBytes":
      return splice(bytes, at(m.at), 0, Uint8Array.from(m.bytes));
    case "nest":
      return splice(bytes, at(m.at), 0, UTF8.encode(m.unit.repeat(m.depth)));
    case "dupLine": {
      const spans = lineSpans(bytes);
      const i = m.line % spans.length;
      return joinLines(bytes, [...spans.slice(0, i + 1), ...Array(m.times).fill(spans[i]), ...spans.slice(i + 1)]);
    }
    case "dropLine": {
      const spans = lineSpans(bytes);
      const i = m.line % spans.length;
      return joinLines(bytes, [...spans.slice(0, i), ...spans.slice(i + 1)]);
    }
    case "swapLines": {
      const spans = lineSpans(bytes);
      const [a, b] = [m.a % spans.length, m.b % spans.length];
      [spans[a], spans[b]] = [spans[b] as [number, number], spans[a] as [number, number]];
      return joinLines(bytes, spans);
    }
    case "newlines":
      return UTF8.encode(DECODER.decode(bytes).replaceAll("\n", m.to));
    case "json":
      return applyJson(bytes, m);
  }
}

export function applyMutations(bytes: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  return mutations.reduce(applyMutation, bytes);
}

/** The file's bytes after compression and damage; `plainKnown`: whether reading it decompresses to `plain`. */
export function compress(plain: Uint8Array, c: Compression): { bytes: Uint8Array; plainKnown: boolean } {
  if (c.codec === "none") return { bytes: plain, plainKnown: true };
  const packed = new Uint8Array(c.codec === "gzip" ? gzipSync(plain) : zstdCompressSync(plain));
  if (!c.damage) return { bytes: packed, plainKnown: true };
  // A cut archive may even lose its magic bytes and be read as plain text: the content is unknown.
  return { bytes: applyMutation(packed, c.damage), plainKnown: false };
}
