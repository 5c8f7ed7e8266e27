import { FORMATS, GENERIC_ACRONYMS, GENERIC_WORDS, type IdFormat } from "./national-ids/formats.ts";

/**
 * National identity numbers that carry a checksum (formats and per-format rules in
 * national-ids/formats.ts): candidates by per-format patterns, not inside a longer token (a
 * version, a path, a hash, a grouped card number), then the checksum, then — for digit-only
 * shapes other numbers share — a name of the id within the 40 characters before it or over its
 * table column. The key is the compact form with the country: `ES:12345678Z`.
 */
export type NationalIdSpan = { kind: "national_id"; start: number; end: number; key: string };

/**
 * Candidates are whole tokens: runs of digits and capitals joined by `.`, `-`, `+`, or by single
 * spaces between digits (`2 95 10 99 126 111 93`, `2341 2341 2346`; `2A`/`2B`, Corsica in a NIR).
 * A pattern has to match the whole token, so an id is never a piece of a longer number, a grouped
 * card number, a dotted version or a dashed build stamp. TOKEN, from where a token starts, matches
 * it when it has nine characters or more; the formats' patterns then only run on those of an id's length.
 */
// Sticky: run from where a scan of the whole text for it would begin a match (tokenStart), it
// matches what that scan would.
const TOKEN = /[0-9A-Z](?:[0-9A-Z]|[.\-+](?=[0-9A-Z])|(?<=\d|\d[AB]) (?=\d)){8,}/y;
/**
 * Where a token that can be an id is: every format has a digit and seven more characters of its
 * token (formats.ts), so the text is scanned for those, and each token found from one. V8 tries a
 * pattern at every character its first can be: a digit here; for TOKEN as the scan, a digit or a
 * capital, and again inside every short run of them, which made the scan most of the detector's
 * time. The seven are spelled out, not `{7}`: V8 then looks ahead over them and scans twice as fast.
 */
const ID_DIGITS = new RegExp(`\\d${"[0-9A-Z.+\\- ]".repeat(7)}`, "g");
/** The longest spelling of any format: a NIR in groups. (The shortest, `12345678Z` or `123456782`, is nine: TOKEN's minimum.) */
const MAX_LEN = 21;
/**
 * Not inside a longer token: no letter, digit, `_`, `.`, `-`, `/`, `+`, `@`, `$`, `#`, `%`, `&`
 * just before (a word, a version, a path, a phone's `+`, a price, an order `#`), nor a digit and
 * a colon (a clock time); no letter or digit just after, nor `.`, `-`, `/`, `+`, `:`, `@`, `%` and
 * one (a file name, a URL, an address).
 */
const JOINED_BEFORE = /[\w.\-/+@$#%&]/;
const JOINED_AFTER = /[.\-/+:@%]/;
const WORD = /\w/;
const DIGIT = /\d/;

function isDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isTokenChar(c: number): boolean {
  return isDigitCode(c) || (c >= 65 && c <= 90);
}

/** Whether a TOKEN match that reaches `i - 1` goes on through `i`: its repeated step, on character codes. */
function stepsOn(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (isTokenChar(c)) return true;
  // `.`, `-`, `+` before a capital or a digit.
  if (c === 46 || c === 45 || c === 43) return isTokenChar(text.charCodeAt(i + 1));
  if (c !== 32) return false;
  // A space between digits, or after a digit and an A or B (Corsica in a NIR).
  const b = text.charCodeAt(i - 1);
  return isDigitCode(text.charCodeAt(i + 1)) && (isDigitCode(b) || ((b === 65 || b === 66) && isDigitCode(text.charCodeAt(i - 2))));
}

/**
 * Where the token around `at` (a digit) starts, as TOKEN scanning the whole text would find it:
 * the first capital or digit of the steps back from `at`.
 */
function tokenStart(text: string, at: number): number {
  let start = at;
  for (let i = at; i > 0 && stepsOn(text, i); ) {
    i--;
    if (isTokenChar(text.charCodeAt(i))) start = i;
  }
  return start;
}

function standsAlone(text: string, start: number, end: number): boolean {
  const before = text[start - 1];
  // An escaped line break or tab (`\n` in JSON text) ends a word.
  const escaped = before !== undefined && "nrt".includes(before) && text[start - 2] === "\\";
  if (before !== undefined && !escaped && (JOINED_BEFORE.test(before) || (before === ":" && DIGIT.test(text[start - 2] ?? ""))))
    return false;
  const after = text[end];
  return after === undefined || !(WORD.test(after) || (JOINED_AFTER.test(after) && WORD.test(text[end + 1] ?? "")));
}

interface CompiledFormat {
  format: IdFormat;
  re: RegExp;
}

const COMPILED: readonly CompiledFormat[] = FORMATS.map((format) => ({ format, re: new RegExp(`^(?:${format.pattern})$`) }));
/** Every format's pattern in one: most tokens (dates, versions, ids of other things) match none. */
const ANY_FORMAT = new RegExp(`^(?:${FORMATS.map((f) => `(?:${f.pattern})`).join("|")})$`);

/** How far before a candidate its name may be. */
const CONTEXT_CHARS = 40;
/**
 * Where the text before a candidate stops being its label: after a run of four digits or more
 * (another value: the name there is its, not ours), after a `,` or `;` (the next field of a
 * record: `"cpf": null, "telefone": "11987654321"`).
 */
const OTHER_VALUE = /\d{4,}|[,;]/g;
/**
 * A label of the candidate's own on its line (`Phone: `, `order_id=`): then the lines above are
 * another field's. `value=`, `text:` and the like are an element's content, not a label.
 */
const OWN_LABEL = /(?<![\p{L}_])(?!(?:value|text|content|description)\b)[\p{L}_][\p{L}\d_ .-]*["')\]]?\s*[:=]/u;

/** The text before a candidate where its name may be, as written and lower-cased. */
interface Context {
  window: string;
  lower: string;
  /** The candidate's line as a table row (null: not one), and its column's header: looked up only when needed. */
  row?: Row | null;
  header?: string;
}

/** A bare content key after the last `,`: the label is the record's other key (`{"field":"sin","value":"…"}`), so cut one field earlier. */
const VALUE_KEY = /^\s*["']?(?:value|val|v|text|content|data)["']?\s*[:=]\s*["']?\s*$/;

function contextBefore(text: string, start: number): Context {
  let window = text.slice(Math.max(0, start - CONTEXT_CHARS), start);
  /** Where the label may begin: after the last other value, or one field earlier when only a content key separates them. */
  let from = 0;
  let previous = 0;
  for (const m of window.matchAll(OTHER_VALUE)) {
    previous = m[0].length === 1 ? from : m.index + m[0].length;
    from = m.index + m[0].length;
  }
  if (from > 0 && VALUE_KEY.test(window.slice(from)) && /[,;]/.test(window[from - 1] ?? "")) from = previous;
  window = window.slice(from);
  const nl = window.lastIndexOf("\n");
  if (nl >= 0 && OWN_LABEL.test(window.slice(nl + 1))) window = window.slice(nl + 1);
  return { window, lower: window.toLowerCase() };
}

/** Whether the format's own name (2) or a generic one (1) is in `label`, or none (0). */
function labelStrength(label: string, lower: string, format: IdFormat): 0 | 1 | 2 {
  if (label.length === 0) return 0;
  if (format.words?.test(lower) || format.acronyms?.test(label)) return 2;
  if (!format.weak && (GENERIC_WORDS.test(lower) || GENERIC_ACRONYMS.test(label))) return 1;
  return 0;
}

/** A table's rule line: `----+-----`, `|---|:--|`, `====  ====`. */
const RULE = /^[\s\-+=|:]*[-=][\s\-+=|:]*$/;
const MAX_TABLE_LINES = 200;
const LABEL_CELL = /^[\p{L}\p{N} _.#°º/()-]{1,40}$/u;
const DELIMITERS = ["\t", "|", ",", ";"] as const;
const ALIGNED = /\S {2,}\S/;

function count(s: string, ch: string): number {
  let n = 0;
  for (let i = s.indexOf(ch); i >= 0; i = s.indexOf(ch, i + 1)) n++;
  return n;
}

/** The line a candidate is on, when it is shaped like a table row. */
interface Row {
  lineStart: number;
  line: string;
  /** The cell delimiter, or undefined for columns aligned by spaces. */
  delim: string | undefined;
  cells: number;
}

/** Whether `line` has the shape of `row`: as many delimiters, or a gap of two spaces or more. */
function sameShape(line: string, row: Row): boolean {
  return row.delim ? count(line, row.delim) === row.cells : ALIGNED.test(line);
}

/** The candidate's line as a table row (`psql`/`mysql` output, CSV, TSV, markdown, `column -t`), or null. */
function tableRow(text: string, start: number, end: number): Row | null {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  if (lineStart === 0) return null;
  const lineEndAt = text.indexOf("\n", end);
  const line = text.slice(lineStart, lineEndAt < 0 ? text.length : lineEndAt);
  const delim = DELIMITERS.find((c) => line.includes(c));
  const cells = delim ? count(line, delim) : 0;
  // Commas and semicolons are everywhere in prose and code: a table of them has at least three columns.
  if (delim ? cells < (delim === "," || delim === ";" ? 2 : 1) : !ALIGNED.test(line)) return null;
  return { lineStart, line, delim, cells };
}

/**
 * Per text: a row's line start → the first line of its table (null: the row is the first). The
 * rows of one table share it, so a table of numbers is walked up once, not once per row.
 */
type HeaderCache = Map<number, string | null>;

/**
 * The header of the candidate's table column, or "": the first line of the block of lines above
 * of the row's shape (rule lines skipped), its cell at the candidate's index; for columns aligned
 * by spaces, the header's words over the candidate's characters.
 */
function columnHeader(text: string, row: Row, start: number, end: number, cache: HeaderCache): string {
  let header: string | null = null;
  let pos = row.lineStart;
  for (let i = 0; i < MAX_TABLE_LINES && pos > 0; i++) {
    const prevStart = text.lastIndexOf("\n", pos - 2) + 1;
    const prev = text.slice(prevStart, pos - 1);
    pos = prevStart;
    if (prev.trim() === "") break;
    if (RULE.test(prev)) continue;
    if (!sameShape(prev, row)) break;
    const known = cache.get(prevStart);
    if (known !== undefined) {
      header = known ?? prev;
      break;
    }
    header = prev;
  }
  cache.set(row.lineStart, header);
  if (header === null) return "";
  const a = start - row.lineStart;
  if (row.delim) {
    // A header cell is a bare label (`bsn`, `NHS number`, `Henkilötunnus`), not code.
    const cell = (header.split(row.delim)[count(row.line.slice(0, a), row.delim)] ?? "").trim().replace(/^["']|["']$/g, "");
    return LABEL_CELL.test(cell) ? cell : "";
  }
  let from = a;
  let to = end - row.lineStart;
  while (from > 0 && header[from - 1] !== " ") from--;
  while (to < header.length && header[to] !== " ") to++;
  return header.slice(from, to);
}

/** Whether a candidate of this format that passes its check needs a name before it. */
function needsName(format: IdFormat, raw: string): boolean {
  const needs = format.needsContext;
  return needs === "always" || (typeof needs === "function" && needs(raw));
}

/**
 * The key of the id `raw` is, or undefined. One token can read as several formats (11 digits:
 * CPF, PESEL, Steuer-IdNr...): the first valid one standing alone or with its own name before it
 * (or over its table column) wins, else the first valid one after a generic name. Names are
 * looked for before the checksum: most long numbers have none, and the check is the dearer test.
 */
function identify(text: string, raw: string, start: number, end: number, cache: HeaderCache): string | undefined {
  if (!ANY_FORMAT.test(raw)) return undefined;
  let ctx: Context | undefined;
  let best: { key: string; strength: number } | undefined;
  for (const { format, re } of COMPILED) {
    if (!re.test(raw)) continue;
    if (!needsName(format, raw)) {
      const compact = format.check(raw);
      if (compact !== null) return `${format.country}:${compact}`;
      continue;
    }
    ctx ??= contextBefore(text, start);
    const bar = best?.strength ?? 0;
    let strength: number = labelStrength(ctx.window, ctx.lower, format);
    if (strength <= bar) {
      // No better name just before it: the header of its table column, if it is in one.
      if (ctx.row === undefined) ctx.row = tableRow(text, start, end);
      if (ctx.row === null) continue;
      ctx.header ??= columnHeader(text, ctx.row, start, end, cache);
      const header = ctx.header;
      strength = Math.max(labelStrength(header, header.toLowerCase(), format), labelStrength(header.toUpperCase(), "", format));
      if (strength <= bar) continue;
    }
    const compact = format.check(raw);
    if (compact === null) continue;
    const key = `${format.country}:${compact}`;
    if (strength === 2) return key;
    best = { key, strength };
  }
  return best?.key;
}

export function findNationalIds(text: string): NationalIdSpan[] {
  const spans: NationalIdSpan[] = [];
  const cache: HeaderCache = new Map();
  // The tokens with a digit and seven characters after it, in order: the others are no format's
  // shape, find nothing and leave nothing in the cache.
  ID_DIGITS.lastIndex = 0;
  for (let hit = ID_DIGITS.exec(text); hit; hit = ID_DIGITS.exec(text)) {
    TOKEN.lastIndex = tokenStart(text, hit.index);
    const m = TOKEN.exec(text);
    if (!m) {
      // Its token is under nine characters; a token may start further in the hit.
      ID_DIGITS.lastIndex = hit.index + 1;
      continue;
    }
    ID_DIGITS.lastIndex = m.index + m[0].length;
    const raw = m[0];
    if (raw.length > MAX_LEN) continue;
    const start = m.index;
    const end = start + raw.length;
    if (!standsAlone(text, start, end)) continue;
    const key = identify(text, raw, start, end, cache);
    if (key !== undefined) spans.push({ kind: "national_id", start, end, key });
  }
  return spans;
}
