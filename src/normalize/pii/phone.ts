import type { CountryCode } from "libphonenumber-js/max";
import { findNumbers } from "libphonenumber-js/max";
import type { PiiSpan } from "./types.ts";

/**
 * Phone numbers by libphonenumber (the `max` metadata: validity per number range, so a
 * 10-digit epoch or a pid is not a number in any real range). Numbers written with `+` and a
 * country code are found whatever the defaults; national ones (`(415) 555-2671`, `020 7946 0958`)
 * in the country or countries given, tried in order.
 */
// findNumbers' default leniency is VALID: a number in a range the country's plan assigns.
const HAS_DIGIT_RUN = /\d[\d ()./-]{5,}\d/;

const PHONE_WORD = /(?:phone|tel|mobile|cell|fax|call|sms|whatsapp|contact|dial|number|handy|telefon|téléphone|portable)[^\n]{0,24}$/i;

export function findPhones(text: string, countries: readonly string[]): PiiSpan[] {
  if (!HAS_DIGIT_RUN.test(text)) return [];
  const spans: PiiSpan[] = [];
  const taken: Array<[number, number]> = [];
  const list = countries.length > 0 ? countries : [undefined];
  for (const country of list) {
    const found = findNumbers(text, { defaultCountry: country as CountryCode | undefined, v2: true });
    for (const m of found) {
      let end = m.endsAt;
      // libphonenumber can run a match on past a comma into the next number's first digits.
      const cut = text.slice(m.startsAt, end).search(/[,;]/);
      if (cut > 0) end = m.startsAt + cut;
      while (end > m.startsAt && /\s/.test(text[end - 1] ?? "")) end--;
      const start = m.startsAt;
      // Inside a word, a path, a dotted version or a longer digit run: not a phone number.
      if (/[\w./]/.test(text[start - 1] ?? "") && text[start] !== "+" && text[start] !== "(") continue;
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
