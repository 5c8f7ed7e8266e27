import { createRequire } from "node:module";
import type { CountryCode, findNumbers as FindNumbers } from "libphonenumber-js/max";
import type { PiiSpan } from "./types.ts";

// libphonenumber-js (~90 modules) is loaded on the first number to look up, not with this module:
// every run imports the PII code, and most never look for a phone number.
let libphonenumber: { findNumbers: typeof FindNumbers } | undefined;
function findNumbers(...args: Parameters<typeof FindNumbers>): ReturnType<typeof FindNumbers> {
  libphonenumber ??= createRequire(import.meta.url)("libphonenumber-js/max") as { findNumbers: typeof FindNumbers };
  return libphonenumber.findNumbers(...args);
}

/**
 * Phone numbers by libphonenumber (the `max` metadata: validity per number range, so a
 * 10-digit epoch or a pid is not a number in any real range). Numbers written with `+` and a
 * country code are found whatever the defaults; national ones (`(415) 555-2671`, `020 7946 0958`)
 * in the country or countries given, tried in order.
 */
// findNumbers' default leniency is VALID: a number in a range the country's plan assigns.
const HAS_DIGIT_RUN = /\d[\d ()./-]{5,}\d/;

const PHONE_WORD = /(?:phone|tel|mobile|cell|fax|call|sms|whatsapp|contact|dial|number|handy|telefon|téléphone|portable)[^\n]{0,24}$/i;

/**
 * A run of digits written as phone numbers are (separators: ( ) . - / and a single space before a
 * digit, `(` or `+`). findNumbers costs 20–60 µs a call however short its input, and scans its
 * whole input with heavy expressions: it is given only these runs, with a little text either side
 * for its own boundary rules, and only those that can be a number by the rules below.
 */
const CANDIDATE = /[+(]?\d[\d ()./-]{5,}\d\)?/g;
/**
 * Inside a candidate, two spaces or more end a number (columns of `ps`, `df`, tables), and so
 * does a sentence's full stop (`+49-2047-343473. 123 connections`).
 */
const NUMBER_BREAK = / {2,}|\.\s/g;
/** A product's version before a dotted run: `Version 122.0.5798.206`, `Chrome 122.0.6445.142`. */
const VERSION_BEFORE = /\b(?:version|ver|v|chrome|chromium|firefox|safari|edge|opera|build|release)\s*[/:]?\s*$/i;
/**
 * Whether a number starting at `at` is glued to what is before it — inside a word, a path, a
 * dotted version or a longer digit run — and so is not one. `+` and `(` open a number whatever
 * precedes them; an escaped line break (`\n` in JSON text) ends a word.
 */
function gluedBefore(text: string, at: number): boolean {
  if (text[at] === "+" || text[at] === "(") return false;
  if (!/[\w./]/.test(text[at - 1] ?? "")) return false;
  return !/\\[nrt]$/.test(text.slice(Math.max(0, at - 2), at));
}
/** A run's first group of digits and the separators after it. */
const FIRST_GROUP = /^\d+[ ()./-]+(?=[\d(+])/;
/** Where a window's context stops: the next field of a record (`…,+48 75 824 42 07,2a00:1450:…`), a sentence's end. */
const FIELD_END = /[,;]|\.\s/;
/** Fewer digits than any number with its area code. */
const MIN_DIGITS = 7;
const CONTEXT = 12;
/** Runs that are something else: an ISO or US date, a dotted quad, a decimal number. */
const NOT_A_NUMBER = [
  // 2024-03-18, 2024-03-18 09 (its hour, before the colon), 03/18/2024
  /^\d{4}([-/.])\d{1,2}\1\d{1,2}(?: \d{1,2})?$/,
  /^\d{1,2}([-/.])\d{1,2}\1\d{4}(?: \d{1,2})?$/,
  /^\d{1,3}(?:\.\d{1,3}){3}$/,
  /^\d+\.\d+$/,
  // A column of decimals (`ps`, `top`, `df`): a short decimal standing alone among the groups.
  /(?:^| )\d{1,3}\.\d{1,2}(?: |$)/,
];

/** Whether a candidate run can hold a phone number findPhones would keep. */
function worthParsing(text: string, run: string, at: number): boolean {
  let digits = 0;
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  if (digits < MIN_DIGITS) return false;
  // A bare run of digits is kept only after a phone word (see findPhones): ask only then. Two
  // long groups (`519894 51586`: the VSZ and RSS columns of `ps`) likewise.
  if (/^\d+$/.test(run) || /^\d{5,} \d{5,}$/.test(run)) return PHONE_WORD.test(text.slice(Math.max(0, at - 40), at));
  if (NOT_A_NUMBER.some((shape) => shape.test(run))) return false;
  // Dotted groups with a one-digit group after the first (122.0.5798.206) are a version, not 1.415.555.2671.
  if (
    /^\d+(?:\.\d+){2,}$/.test(run) &&
    run
      .split(".")
      .slice(1)
      .some((group) => group.length === 1)
  )
    return false;
  return !VERSION_BEFORE.test(text.slice(Math.max(0, at - 12), at));
}

/** The windows of `text` findNumbers is given: each candidate run with CONTEXT characters either side, overlaps merged. */
function candidateWindows(text: string): [number, number][] {
  const windows: [number, number][] = [];
  const add = (whole: string, from: number) => {
    // A run glued to a word, a path or a hash (`3585b64 100644`, `/srv/99999999`) cannot start a
    // number there (findPhones drops such matches): only what follows its first group can.
    let run = whole;
    let at = from;
    if (gluedBefore(text, at)) {
      const next = FIRST_GROUP.exec(run);
      if (!next) return;
      run = run.slice(next[0].length);
      at += next[0].length;
    }
    if (!worthParsing(text, run, at)) return;
    // The context either side stops at a field separator: libphonenumber would read on across it.
    const before = text.slice(Math.max(0, at - CONTEXT), at);
    const after = text.slice(at + run.length, at + run.length + CONTEXT);
    const cutBefore = Math.max(before.lastIndexOf(","), before.lastIndexOf(";"));
    const cutAfter = after.search(FIELD_END);
    const start = at - before.length + (cutBefore + 1);
    const end = at + run.length + (cutAfter < 0 ? after.length : cutAfter);
    const last = windows[windows.length - 1];
    if (last && start <= last[1]) last[1] = end;
    else windows.push([start, end]);
  };
  for (const m of text.matchAll(CANDIDATE)) {
    if (!m[0].includes("  ") && !/\.\s/.test(m[0])) {
      add(m[0], m.index);
      continue;
    }
    let from = 0;
    for (const gap of m[0].matchAll(NUMBER_BREAK)) {
      add(m[0].slice(from, gap.index), m.index + from);
      from = gap.index + gap[0].length;
    }
    add(m[0].slice(from), m.index + from);
  }
  return windows;
}

export function findPhones(text: string, countries: readonly string[]): PiiSpan[] {
  if (!HAS_DIGIT_RUN.test(text)) return [];
  const spans: PiiSpan[] = [];
  const taken: Array<[number, number]> = [];
  const list = countries.length > 0 ? countries : [undefined];
  const windows = candidateWindows(text);
  for (const country of list) {
    const found = windows.flatMap(([from, to]) =>
      findNumbers(text.slice(from, to), { defaultCountry: country as CountryCode | undefined, v2: true }).map((m) => ({
        ...m,
        startsAt: m.startsAt + from,
        endsAt: m.endsAt + from,
      })),
    );
    for (const m of found) {
      let end = m.endsAt;
      // libphonenumber can run a match on past a comma into the next number's first digits.
      const cut = text.slice(m.startsAt, end).search(/[,;]/);
      if (cut > 0) end = m.startsAt + cut;
      while (end > m.startsAt && /\s/.test(text[end - 1] ?? "")) end--;
      const start = m.startsAt;
      if (gluedBefore(text, start)) continue;
      // A bare run of digits (8589934592: a size, an id) is a national number only next to a phone word.
      if (/^\d+$/.test(text.slice(start, end)) && !PHONE_WORD.test(text.slice(Math.max(0, start - 40), start))) continue;
      if (/\w/.test(text[end] ?? "") || /^\.\d/.test(text.slice(end, end + 2))) continue;
      if (taken.some(([s, e]) => start < e && end > s)) continue;
      taken.push([start, end]);
      spans.push({ kind: "phone", start, end, key: m.number.number });
    }
  }
  return spans;
}
