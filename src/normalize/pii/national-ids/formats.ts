import { createRequire } from "node:module";
import type { Validator } from "stdnum";

/**
 * The national-id formats the detector knows: each has a checksum (validated by the `stdnum`
 * package, the UK NHS number's mod 11 here), a candidate pattern, and a rule for when a match
 * that passes the checksum is a finding on its own and when it needs a context word just before it.
 *
 * Why context: a random 9–11 digit number passes a mod-11 or Luhn check about one time in ten,
 * and trajectories are full of such numbers (pids, epoch seconds, sizes, order ids, phone numbers).
 * So a format written with letters (DNI `12345678Z`, NIE, codice fiscale, CURP, HETU with a letter)
 * or with its own distinctive punctuation (CPF `390.533.447-05`, Belgian `85.07.30-033.28`, AHV
 * `756.9217.0769.85`, RUN `12.531.909-2`) stands alone; a bare digit run, or a shape other numbers
 * share (SIN `046 454 286` is also a meeting id or a thousands-grouped count, NHS `943 476 5919` a US phone),
 * is an id only after its own name ("PESEL", "BSN", "NHS number"...) within the 40 characters
 * before it with no other value in between, or under it as its table column's header; a generic
 * name ("national id", "tax id", "social security"...) will do for the formats whose checksum is
 * stronger than one in eleven.
 *
 * Not covered, deliberately: the US SSN and the UK National Insurance number have no checksum (the
 * issue asks for ids where one exists; `\d{3}-\d{2}-\d{4}` alone is as likely a part number), nor the
 * Danish CPR (its mod-11 check was dropped in 2007).
 */

export interface IdFormat {
  /** ISO country code: the key's prefix (`ES:12345678Z`). */
  country: string;
  /**
   * The whole candidate token (see the detector's tokens): anchored by the detector. It must have a
   * digit with at least seven characters of the token after it (the detector looks for tokens
   * around those), and no backreference (it tests all patterns as one regex first).
   */
  pattern: string;
  /** The compact form when the candidate is a valid id of this format, else null. */
  check: (raw: string) => string | null;
  /**
   * When a valid candidate needs a context word: "never", "always", or a predicate on the raw
   * candidate (DNI bodies that read as a date, HETUs without a letter).
   */
  needsContext: "never" | "always" | ((raw: string) => boolean);
  /**
   * A checksum one random number in ten or eleven passes (Luhn, mod 11, Verhoeff): only the
   * format's own name will do, not a generic one ("tax id: 123456789" is as likely a US EIN).
   */
  weak?: true;
  /** This format's own names, tested on the lower-cased text before the candidate. */
  words?: RegExp;
  /** Acronyms (BSN, SIN, CPF), tested on the text as written: upper case, or lower case as a key (`"cpf":`, `sin=`). */
  acronyms?: RegExp;
}

/**
 * stdnum loads every country's validators (about 0.1 s): on the first checksum, not on import, so
 * a text with no candidate of an id's shape, or a process that meets none, does not pay for it.
 */
const require = createRequire(import.meta.url);
let stdnum: typeof import("stdnum").stdnum | undefined;

function validator(country: string, name: string): Validator {
  stdnum ??= (require("stdnum") as typeof import("stdnum")).stdnum;
  const v = stdnum[country]?.[name];
  if (!v) throw new Error(`stdnum has no validator ${country}.${name}`);
  return v;
}

/**
 * stdnum answers an invalid number with a new Error, and capturing its stack trace was most of
 * the detector's time: most candidates are invalid. No stack is captured while it validates.
 */
function quietly<T>(run: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return run();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A check through a stdnum validator, rejecting numbers of one repeated digit (111.111.111-11 passes CPF's checksum). */
function viaStdnum(
  country: string,
  name: string,
  extra?: (compact: string) => boolean,
  prepare: (raw: string) => string = (raw) => raw,
): (raw: string) => string | null {
  let v: Validator | undefined;
  return (raw) => {
    v ??= validator(country, name);
    const check = v;
    const r = quietly(() => check.validate(prepare(raw)));
    if (!r.isValid) return null;
    const digits = r.compact.replace(/\D/g, "");
    if (/^(\d)\1*$/.test(digits)) return null;
    if (extra && !extra(r.compact)) return null;
    return r.compact;
  };
}

/**
 * Acronyms that are also words (Spanish "sin", German "nie"): as written in upper case anywhere;
 * in any case only as a key (`"sin":`, `sin=`, `sin_number`, `"sin"` as a field name, `sin no.`).
 */
function acronyms(...names: string[]): RegExp {
  const upper = names.join("|");
  const any = names.map((n) => `${n.toLowerCase()}|${n[0]}${n.slice(1).toLowerCase()}`).join("|");
  return new RegExp(
    `(?<![A-Za-z])(?:(?:${upper})(?![A-Za-z])|(?:${any})(?=_|["']?\\s*[:=]|\\s+(?:no|nr|number|n[º°o])\\b)|(?<=["'])(?:${any})(?=["']))`,
  );
}

/** UK NHS number: weights 10..2 over the first nine digits, check = 11 - sum mod 11 (11 → 0, 10 never issued). */
export function nhsValid(digits: string): boolean {
  if (!/^\d{10}$/.test(digits) || /^(\d)\1*$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += Number(digits[i]) * (10 - i);
  const check = (11 - (sum % 11)) % 11;
  return check !== 10 && check === Number(digits[9]);
}

/**
 * German Steuer-IdNr structure (since 2016): in the first ten digits exactly one digit occurs
 * twice or three times (three not all adjacent), every other at most once. stdnum's version of
 * this rule lets most random numbers through; with it only about one 11-digit number in 500 passes.
 */
function idnrStructure(compact: string): boolean {
  const counts = new Array<number>(10).fill(0);
  for (const ch of compact.slice(0, 10)) counts[Number(ch)] = (counts[Number(ch)] ?? 0) + 1;
  const repeated = counts.filter((c) => c > 1);
  if (repeated.length !== 1 || (repeated[0] !== 2 && repeated[0] !== 3)) return false;
  return !/(\d)\1\1/.test(compact.slice(0, 10));
}

/** A valid calendar date yyyymmdd between 1900 and 2099. */
function isYyyymmdd(s: string): boolean {
  const m = /^(19|20)(\d\d)(\d\d)(\d\d)$/.exec(s);
  if (!m) return false;
  const y = Number(m[1] + (m[2] as string));
  const mo = Number(m[3]);
  const d = Number(m[4]);
  return mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** Chinese province codes (first two digits of a resident id). */
const CN_PROVINCES = new Set([
  11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42, 43, 44, 45, 46, 50, 51, 52, 53, 54, 61, 62, 63, 64, 65, 71, 81, 82,
  83,
]);

/**
 * Month field of a French NIR: 01-12; 20, 30-42 and 50-99 for incomplete civil records. Compact,
 * only 01-12: the others would let 15-digit stamps that start 2022… or 2024… (a 2, a "year" 02,
 * a "month" 20 or 40) through on the 1-in-97 key alone.
 */
function nirMonthCompact(compact: string): boolean {
  const mm = Number(compact.slice(3, 5));
  return mm >= 1 && mm <= 12;
}

function nirMonthGrouped(compact: string): boolean {
  const mm = Number(compact.slice(3, 5));
  return (mm >= 1 && mm <= 12) || mm === 20 || (mm >= 30 && mm <= 42) || mm >= 50;
}

const dni = viaStdnum("ES", "dni");
const sin = viaStdnum("CA", "sin");
const bsn = viaStdnum("NL", "bsn", (c) => c.length === 9);
const cpf = viaStdnum("BR", "cpf");
const pesel = viaStdnum("PL", "pesel");
const beNn = viaStdnum("BE", "nn");
const idnr = viaStdnum("DE", "idnr", idnrStructure);
const fnr = viaStdnum("NO", "fodselsnummer");
const tckn = viaStdnum("TR", "tckimlik");
const aadhaar = viaStdnum("IN", "aadhaar");
const ahv = viaStdnum("CH", "ssn");
const cnp = viaStdnum("RO", "cnp");
const rrn = viaStdnum("KR", "rrn");
/** stdnum reads a personnummer only with its `-`/`+`: a compact one gets the dash before the last four digits. */
const personnummer = viaStdnum("SE", "personnummer", undefined, (raw) =>
  /^\d+$/.test(raw) ? `${raw.slice(0, -4)}-${raw.slice(-4)}` : raw,
);
const hetu = viaStdnum("FI", "hetu");
/** Chilean RUN: persons are numbered below 50 million; a RUT above is a company's. */
const run = viaStdnum(
  "CL",
  "rut",
  (c) => Number(c.slice(0, -1)) < 50_000_000,
  (raw) => raw.replace(/\./g, ""),
);
const nhs = (raw: string): string | null => {
  const d = raw.replace(/[ -]/g, "");
  return nhsValid(d) ? d : null;
};

/** Names and unambiguous acronyms, matched in the lower-cased text, not inside a longer word (`nhs_number` counts, `ahvnummer` too). */
const W = {
  ES: /(?<![a-z])(?:dni|nif)(?![a-z])|documento nacional|n[úu]mero de identidad/,
  FI: /henkil[öo]tunnus|(?<![a-z])(?:hetu|sotu)(?![a-z])|personal identity code|personbeteckning/,
  SE: /personnummer|personnr|pers\.?\s?nr|personal identity number|samordningsnummer/,
  NL: /(?<![a-z])bsn(?![a-z])|burgerservicenummer|sofi-?nummer|citizen service number/,
  DE: /steuer-?id|steueridentifikationsnummer|identifikationsnummer|steuerliche id|(?<![a-z])(?:st)?idnr(?![a-z])/,
  BR: /(?<![a-z])cpf(?![a-z])|cadastro de pessoas/,
  IN: /aadhaa?r|(?<![a-z])uidai(?![a-z])|आधार/,
  PL: /pesel/,
  CA: /social insurance|assurance sociale/,
  BE: /rijksregister|registre national|num[ée]ro national|national (?:register|number)|(?<![a-z])(?:insz|niss|rrn)(?![a-z])/,
  GB: /(?<![a-z])nhs(?![a-z])/,
  CH: /(?<![a-z])ahv|sozialversicherungsnummer|(?<![a-z])oasi(?![a-z])|num[ée]ro avs/,
  NO: /f[øo]dselsnummer|personnummer|(?<![a-z])fnr(?![a-z])/,
  TR: /kimlik|(?<![a-z])tckn(?![a-z])|t\.c\./,
  RO: /(?<![a-z])cnp(?![a-z])|cod numeric personal/,
  CL: /(?<![a-z])rut(?![a-z])|r\.u\.[tn]\.|rol [úu]nico/,
  KR: /주민등록번호|resident registration|(?<![a-z])rrn(?![a-z])/,
  FR: /(?<![a-z])(?:nir|insee)(?![a-z])|s[ée]curit[ée] sociale|num[ée]ro de s[ée]cu|n° ?ss(?![a-z])/,
} as const;

/** Acronyms that are also words or other things' names (`sin`, `nie`, `nn`, `tc`, `run`): upper case, or lower case as a key. */
const A = {
  ES: acronyms("NIE"),
  SE: acronyms("PNR"),
  CA: acronyms("SIN", "NAS"),
  BE: acronyms("NN"),
  CH: acronyms("AVS"),
  TR: acronyms("TC"),
  CL: acronyms("RUN"),
} as const;

/** Generic names of a national id: context enough for the formats that need one and are not weak. */
export const GENERIC_WORDS =
  /national[\s_-]?(?:id|identity|identification|number)|nationalid|personal[\s_-]?(?:id|identity|number|code)|citizen[\s_-]?id|identity[\s_-]?(?:number|card|no)|id[\s_-]?card|tax[\s_-]?(?:id|identification|number)|taxpayer|social[\s_-]?security|(?<![a-z])ssn(?![a-z])/;
export const GENERIC_ACRONYMS = acronyms("TIN");

const d = (n: number) => `\\d{${n}}`;

export const FORMATS: readonly IdFormat[] = [
  // Spain. DNI: 8 digits and a letter (mod 23); NIE: X/Y/Z, 7 digits, a letter. A DNI whose
  // digits read as a date (20240517B: a build stamp) needs context.
  {
    country: "ES",
    pattern: `${d(8)}-?[TRWAGMYFPDXBNJZSQVHLCKE]`,
    check: dni,
    needsContext: (raw) => isYyyymmdd(raw.slice(0, 8)),
    words: W.ES,
    acronyms: A.ES,
  },
  { country: "ES", pattern: `[XYZ]-?${d(7)}-?[TRWAGMYFPDXBNJZSQVHLCKE]`, check: viaStdnum("ES", "nie"), needsContext: "never" },
  // Italy: codice fiscale, 16 characters of a fixed letter/digit shape and a mod-26 check letter.
  // The year digits must be digits (omocodia replaces them last, almost never).
  {
    country: "IT",
    pattern: "[A-Z]{6}\\d\\d[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]",
    check: viaStdnum("IT", "codicefiscale"),
    needsContext: "never",
  },
  // Mexico: CURP, 18 characters with a birth date, sex, state code and a check digit.
  { country: "MX", pattern: `[A-Z]{4}${d(6)}[HMX][A-Z]{5}[0-9A-Z]\\d`, check: viaStdnum("MX", "curp"), needsContext: "never" },
  // Finland: HETU ddmmyy, century sign, 3 digits, mod-31 check character. Alone when it carries a
  // letter (century A–F/U–Y or a letter check); 131052-3081 shapes (date-dash-digits) need context.
  {
    country: "FI",
    pattern: `${d(6)}[-+A-FU-Y]${d(3)}[0-9A-FHJ-NPR-Y]`,
    check: hetu,
    needsContext: (raw) => /^[\d+-]+$/.test(raw),
    words: W.FI,
  },
  // China: resident id, 18 characters (province, birth date yyyymmdd, sequence, mod-11 check 0-9/X).
  {
    country: "CN",
    pattern: `[1-8]${d(16)}[\\dX]`,
    check: viaStdnum("CN", "ric", (c) => CN_PROVINCES.has(Number(c.slice(0, 2)))),
    needsContext: "never",
  },
  // France: NIR (sécurité sociale), 15 digits (sex 1/2, yy, mm, department incl. 2A/2B, commune,
  // order, mod-97 key). A 1-in-97 key: stands alone, grouped 1 84 12 76 451 089 46 or compact; the
  // compact one only with a calendar month, and after a name when its first eight digits read as
  // a yyyymmdd date (a 15-digit time stamp, 202110091114311; about one real NIR in a hundred).
  {
    country: "FR",
    pattern: "[12] \\d\\d \\d\\d (?:\\d\\d|2[AB]) \\d{3} \\d{3} \\d\\d",
    check: viaStdnum("FR", "nir", nirMonthGrouped),
    needsContext: "never",
  },
  {
    country: "FR",
    pattern: "[12]\\d{4}(?:\\d\\d|2[AB])\\d{8}",
    check: viaStdnum("FR", "nir", nirMonthCompact),
    needsContext: (raw) => isYyyymmdd(raw.slice(0, 8)),
    words: W.FR,
  },
  // Brazil: CPF, two mod-11 check digits. 390.533.447-05 alone; 39053344705 or 390533447-05 after "CPF".
  { country: "BR", pattern: `${d(3)}\\.${d(3)}\\.${d(3)}-${d(2)}`, check: cpf, needsContext: "never" },
  { country: "BR", pattern: `${d(9)}-?${d(2)}`, check: cpf, needsContext: "always", words: W.BR },
  // Belgium: national number yymmdd-sss-cc, mod-97 check. 85.07.30-033.28 alone; other spellings after a name.
  { country: "BE", pattern: `${d(2)}\\.${d(2)}\\.${d(2)}-${d(3)}\\.${d(2)}`, check: beNn, needsContext: "never" },
  { country: "BE", pattern: `${d(6)}(?:-${d(3)}-?${d(2)}|${d(5)})`, check: beNn, needsContext: "always", words: W.BE, acronyms: A.BE },
  // Switzerland: AHV/AVS number 756.xxxx.xxxx.xx, EAN-13 check. Dotted alone; 13 digits after a name.
  { country: "CH", pattern: `756\\.${d(4)}\\.${d(4)}\\.${d(2)}`, check: ahv, needsContext: "never" },
  { country: "CH", pattern: `756${d(10)}`, check: ahv, needsContext: "always", words: W.CH, acronyms: A.CH },
  // Chile: RUN 12.531.909-2 (mod-11 check 0-9/K) alone; 12531909-2 after "RUT"/"RUN".
  { country: "CL", pattern: `\\d{1,2}\\.${d(3)}\\.${d(3)}-[\\dK]`, check: run, needsContext: "never" },
  { country: "CL", pattern: "\\d{7,8}-[\\dK]", check: run, needsContext: "always", weak: true, words: W.CL, acronyms: A.CL },
  // South Korea: resident registration number yymmdd-sxxxxxx, a mod-11 check. The dash form alone.
  { country: "KR", pattern: `${d(6)}-[1-8]${d(6)}`, check: rrn, needsContext: "never" },
  { country: "KR", pattern: d(13), check: rrn, needsContext: "always", words: W.KR },
  // India: Aadhaar, 12 digits (first 2-9), Verhoeff check. 2341 2341 2346 alone; dashed (an AWS account
  // id's shape, 1234-5678-9012) or compact after a name.
  { country: "IN", pattern: `[2-9]${d(3)} ${d(4)} ${d(4)}`, check: aadhaar, needsContext: "never" },
  { country: "IN", pattern: `[2-9]${d(3)}(?:-${d(4)}-|${d(4)})${d(4)}`, check: aadhaar, needsContext: "always", weak: true, words: W.IN },
  // Germany: Steuer-IdNr, 11 digits, ISO 7064 mod 11,10 plus the digit-repetition rule (about 1 in 500
  // random numbers pass both); 36 574 261 809 is also how an 11-digit count is grouped: after a name.
  { country: "DE", pattern: `[1-9]\\d(?: ${d(3)} ${d(3)} |${d(6)})${d(3)}`, check: idnr, needsContext: "always", words: W.DE },
  // Canada: SIN, 9 digits, Luhn (1 in 10): 046 454 286 and 123-456-782 are also how 9-digit meeting ids,
  // confirmation numbers and thousands-grouped counts are written, so always after a name.
  {
    country: "CA",
    pattern: `${d(3)}(?:${d(3)}| ${d(3)} |-${d(3)}-)${d(3)}`,
    check: sin,
    needsContext: "always",
    weak: true,
    words: W.CA,
    acronyms: A.CA,
  },
  // UK: NHS number, 10 digits, mod 11. Written 943 476 5919 — a US phone number's shape — so always after "NHS".
  { country: "GB", pattern: `${d(3)}(?:${d(3)}| ${d(3)} |-${d(3)}-)${d(4)}`, check: nhs, needsContext: "always", weak: true, words: W.GB },
  // Netherlands: BSN, 9 digits, the "11-proef" (1 in 11 random numbers pass): always after a name.
  { country: "NL", pattern: `${d(4)}\\.${d(2)}\\.${d(3)}|${d(9)}`, check: bsn, needsContext: "always", weak: true, words: W.NL },
  // Poland: PESEL, 11 digits with a birth date, mod-10 check: always after "PESEL".
  { country: "PL", pattern: d(11), check: pesel, needsContext: "always", words: W.PL },
  // Sweden: personnummer (yy)yymmdd-nnnn, Luhn: the shape of date-stamped names, so always after a name.
  {
    country: "SE",
    pattern: `(?:19|20)?${d(6)}[-+]?${d(4)}`,
    check: personnummer,
    needsContext: "always",
    words: W.SE,
    acronyms: A.SE,
  },
  // Norway: fødselsnummer, 11 digits with a birth date and two mod-11 checks: after a name.
  { country: "NO", pattern: `${d(6)} ?${d(5)}`, check: fnr, needsContext: "always", words: W.NO },
  // Turkey: T.C. Kimlik No, 11 digits, two check digits: after a name.
  { country: "TR", pattern: `[1-9]${d(10)}`, check: tckn, needsContext: "always", words: W.TR, acronyms: A.TR },
  // Romania: CNP, 13 digits with a birth date, county and mod-11 check: after a name.
  { country: "RO", pattern: `[1-8]${d(12)}`, check: cnp, needsContext: "always", words: W.RO },
];
