import { luhnValid } from "./luhn.ts";
import type { PiiSpan } from "./types.ts";

/**
 * A payment card number: 13-19 digits, written plain, in groups of four, or 4-6-5 (American
 * Express, Diners) separated by one space or dash, not inside a longer run of digits, letters or
 * dots (a version, a hash, an id) nor after a `+` (`+4941260009759` is a phone number). It must
 * pass the Luhn check and start with an issuer prefix (Visa, Mastercard, Amex, Discover, Diners,
 * JCB, UnionPay, Maestro): a random 16-digit id passes Luhn one time in ten, a prefix as well far less.
 */
const CARD =
  /(?:(?<![\w.:/+-])|(?<=\\[nrt]))(?:\d{4}[ -]){2,4}\d{1,7}(?![\w.:/-]*\w)|(?:(?<![\w.:/+-])|(?<=\\[nrt]))\d{4}[ -]\d{6}[ -]\d{4,5}(?![\w.:/-]*\w)|(?:(?<![\w.:/+-])|(?<=\\[nrt]))\d{13,19}(?![\w.:/-]*\w)/g;

function issuerKnown(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p3 = Number(d.slice(0, 3));
  const p4 = Number(d.slice(0, 4));
  const p6 = Number(d.slice(0, 6));
  if (d[0] === "4") return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p6 >= 222100 && p6 <= 272099)) return n === 16; // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15; // American Express
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) return n >= 16; // Discover
  if (p2 === 36 || p2 === 38 || p2 === 39 || (p3 >= 300 && p3 <= 305)) return n >= 14; // Diners Club
  if (p4 >= 3528 && p4 <= 3589) return n >= 16; // JCB
  if (p2 === 62) return n >= 16; // UnionPay
  if (p2 === 50 || (p2 >= 56 && p2 <= 69) || p2 === 67) return n >= 12; // Maestro
  return false;
}

/** Eight digits close together: every card spelling has them; most texts do not (a cheap test first). */
const EIGHT_DIGITS = /\d{4}[ -]?\d{4}/;

export function findCreditCards(text: string): PiiSpan[] {
  if (!EIGHT_DIGITS.test(text)) return [];
  const spans: PiiSpan[] = [];
  for (const m of text.matchAll(CARD)) {
    const raw = m[0];
    const digits = raw.replace(/[ -]/g, "");
    if (digits.length < 13 || digits.length > 19) continue;
    // One separator style per number: "1234 5678-9012 3456" is not how a card is written.
    if (raw.includes(" ") && raw.includes("-")) continue;
    if (/^(\d)\1+$/.test(digits)) continue;
    if (!issuerKnown(digits) || !luhnValid(digits)) continue;
    spans.push({ kind: "credit_card", start: m.index, end: m.index + raw.length, key: digits });
  }
  return spans;
}
