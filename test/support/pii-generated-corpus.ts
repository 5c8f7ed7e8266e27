/**
 * A generated labelled PII corpus (test/pii-generated.test.ts): observations in the shapes
 * trajectories have — web and android accessibility trees, MCP JSON results, terminal output,
 * search snippets, code diffs — filled with @faker-js/faker values from several locales, the
 * personal ones labelled, and negatives that look like numbers, addresses or mailboxes
 * (versions, hashes, UUIDs, timestamps, sizes, pids, ports, private IPs, MACs, package specs,
 * decorators, `icon@2x.png`) left unlabelled in the same documents.
 *
 * Labels are the truth, not what a detector does: a phone is labelled only when libphonenumber's
 * full metadata says the number is valid (national formats only for the US, `+CC` otherwise), a
 * card only when it passes Luhn and starts with an issuer's prefix, an IBAN only when its length
 * and layout match its country's registry entry and mod-97 gives 1, an IP only when it is in no
 * special-purpose range (private, loopback, link-local, CGNAT, documentation, benchmarking,
 * multicast, reserved); IPv6 labels come from allocated global-unicast prefixes.
 * Deterministic for a seed: every random choice comes from Faker instances seeded from it.
 */
import { BlockList, isIP } from "node:net";
import {
  base,
  de,
  en,
  en_AU,
  en_GB,
  en_IN,
  en_US,
  es,
  Faker,
  fr,
  it as italian,
  ja,
  type LocaleDefinition,
  nl,
  pl,
  pt_BR,
  sv,
} from "@faker-js/faker";
import { type CountryCode, isValidPhoneNumber, type PhoneNumber, parsePhoneNumberWithError } from "libphonenumber-js/max";
import type { LabelledDocument, LabelledSpan } from "./pii-corpus.ts";

export type GeneratedPiiKind = "email" | "phone" | "ip" | "credit_card" | "iban";

/** A labelled value in a document under construction. */
interface Mark {
  readonly mark: GeneratedPiiKind;
  readonly value: string;
}
type Piece = string | Mark | readonly Piece[];

const mark = (kind: GeneratedPiiKind, value: string): Mark => ({ mark: kind, value });

function assemble(name: string, pieces: Piece): LabelledDocument {
  let text = "";
  const spans: LabelledSpan[] = [];
  const walk = (p: Piece): void => {
    if (typeof p === "string") text += p;
    else if ("mark" in p) {
      spans.push({ kind: p.mark, start: text.length, end: text.length + p.value.length });
      text += p.value;
    } else for (const q of p) walk(q);
  };
  walk(pieces);
  return { name, text, spans };
}

/** Tagged template: literal text with labelled values (and plain strings, numbers, lists of pieces) between. */
function t(strings: TemplateStringsArray, ...values: Array<Piece | number>): Piece[] {
  const out: Piece[] = [];
  strings.forEach((s, i) => {
    out.push(s);
    if (i < values.length) {
      const v = values[i] as Piece | number;
      out.push(typeof v === "number" ? String(v) : v);
    }
  });
  return out;
}

/** The text of pieces, labels dropped (for widths). */
const plain = (p: Piece): string => (typeof p === "string" ? p : "mark" in p ? p.value : p.map(plain).join(""));

/** `p` padded with spaces to `width` characters. */
const padded = (p: Piece, width: number): Piece[] => [p, " ".repeat(Math.max(0, width - plain(p).length))];

const lines = (rows: readonly Piece[]): Piece[] => rows.flatMap((r, i) => (i === 0 ? [r] : ["\n", r]));

// ---------------------------------------------------------------------------------------------
// JSON with labelled values (a Mark serialises as a JSON string).

type Json = string | number | boolean | null | Mark | readonly Json[] | { readonly [key: string]: Json };

function json(value: Json, indent: number, depth = 0): Piece[] {
  if (value === null || typeof value === "number" || typeof value === "boolean" || typeof value === "string")
    return [JSON.stringify(value)];
  if ("mark" in value && typeof value.mark === "string") return ['"', value as Mark, '"'];
  const pad = indent ? `\n${" ".repeat(indent * (depth + 1))}` : "";
  const close = indent ? `\n${" ".repeat(indent * depth)}` : "";
  const sep = indent ? ": " : ":";
  if (Array.isArray(value)) {
    if (value.length === 0) return ["[]"];
    const items = (value as readonly Json[]).map((v) => [pad, ...json(v, indent, depth + 1)]);
    return ["[", ...items.flatMap((item, i) => (i === 0 ? item : [",", ...item])), close, "]"];
  }
  const entries = Object.entries(value as { readonly [key: string]: Json });
  if (entries.length === 0) return ["{}"];
  const items = entries.map(([k, v]) => [pad, JSON.stringify(k), sep, ...json(v, indent, depth + 1)]);
  return ["{", ...items.flatMap((item, i) => (i === 0 ? item : [",", ...item])), close, "}"];
}

/** Pieces as the body of a JSON string (an MCP `content[].text`): text escaped, labelled values as they are. */
function jsonString(pieces: Piece): Piece[] {
  const out: Piece[] = ['"'];
  const walk = (p: Piece): void => {
    if (typeof p === "string") out.push(JSON.stringify(p).slice(1, -1));
    else if ("mark" in p) out.push(p);
    else for (const q of p) walk(q);
  };
  walk(pieces);
  out.push('"');
  return out;
}

// ---------------------------------------------------------------------------------------------
// Independent ground-truth checks (not the detectors').

/** Luhn (mod 10) over a digit string. */
export function luhnOk(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return /^\d+$/.test(digits) && sum % 10 === 0;
}

/** Issuer identification: the brand whose published IIN range and length `digits` fall in, or null. */
export function cardBrand(digits: string): string | null {
  const n = digits.length;
  const p = (k: number) => Number(digits.slice(0, k));
  if (digits.startsWith("4") && (n === 13 || n === 16 || n === 19)) return "visa";
  if (((p(2) >= 51 && p(2) <= 55) || (p(4) >= 2221 && p(4) <= 2720)) && n === 16) return "mastercard";
  if ((p(2) === 34 || p(2) === 37) && n === 15) return "amex";
  if ((p(4) === 6011 || p(2) === 65 || (p(3) >= 644 && p(3) <= 649)) && n >= 16 && n <= 19) return "discover";
  if (p(4) >= 3528 && p(4) <= 3589 && n >= 16 && n <= 19) return "jcb";
  if (((p(3) >= 300 && p(3) <= 305) || p(2) === 36) && n >= 14 && n <= 19) return "diners";
  if (p(2) === 62 && n >= 16 && n <= 19) return "unionpay";
  if ([5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763].includes(p(4)) && n >= 12 && n <= 19) return "maestro";
  return null;
}

/** ISO 13616 registry: length and BBAN layout (n digits, a letters, c alphanumerics) of the countries generated. */
const IBAN_LAYOUT: Record<string, string> = {
  AT: "16n",
  BE: "12n",
  BR: "23n 1a 1c",
  CH: "5n 12c",
  CZ: "20n",
  DE: "18n",
  DK: "14n",
  ES: "20n",
  FI: "14n",
  FR: "10n 11c 2n",
  GB: "4a 14n",
  IE: "4a 14n",
  IT: "1a 10n 12c",
  LU: "3n 13c",
  NL: "4a 10n",
  NO: "11n",
  PL: "24n",
  PT: "21n",
  SE: "20n",
  TR: "6n 16c",
};

const layoutRegex = (layout: string) =>
  new RegExp(
    `^${layout
      .split(" ")
      .map((part) => {
        const count = part.slice(0, -1);
        const cls = { n: "[0-9]", a: "[A-Z]", c: "[A-Z0-9]" }[part.slice(-1) as "n" | "a" | "c"];
        return `${cls}{${count}}`;
      })
      .join("")}$`,
  );

/** An IBAN (spaces allowed) of a generated country with its registry layout and a mod-97 remainder of 1. */
export function ibanOk(value: string): boolean {
  const compact = value.replace(/ /g, "");
  const layout = IBAN_LAYOUT[compact.slice(0, 2)];
  if (!layout || !/^[A-Z]{2}\d{2}/.test(compact) || !layoutRegex(layout).test(compact.slice(4))) return false;
  const numeric = (compact.slice(4) + compact.slice(0, 4)).replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  return BigInt(numeric) % 97n === 1n;
}

/**
 * IANA special-purpose address registries (RFC 6890 and successors): no one's address on the
 * internet. Two lists: a BlockList checks an IPv4 address against IPv6 rules too (as ::ffff:a.b.c.d).
 */
const SPECIAL_V4 = new BlockList();
const SPECIAL_V6 = new BlockList();
for (const net of [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.31.196.0/24",
  "192.52.193.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "192.175.48.0/24",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
]) {
  const [address, prefix] = net.split("/") as [string, string];
  SPECIAL_V4.addSubnet(address, Number(prefix), "ipv4");
}
for (const net of ["::/8", "64:ff9b::/96", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8"]) {
  const [address, prefix] = net.split("/") as [string, string];
  SPECIAL_V6.addSubnet(address, Number(prefix), "ipv6");
}

/** A public address: a valid IP in no special-purpose range, and (IPv6) in global unicast 2000::/3. */
export function publicIpOk(value: string): boolean {
  const v = isIP(value);
  if (v === 0) return false;
  if (v === 4 ? SPECIAL_V4.check(value, "ipv4") : SPECIAL_V6.check(value, "ipv6")) return false;
  return v === 4 || /^[23][0-9a-f]{3}:/i.test(value);
}

/** An address the RFC 5322 dot-atom grammar accepts, with a letters-only TLD. */
const EMAIL_OK =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;
export const emailOk = (value: string): boolean => EMAIL_OK.test(value) && value.length <= 254;

/** Valid in the numbering plan, read as the detectors are configured (national numbers as US). */
export const phoneOk = (value: string): boolean => isValidPhoneNumber(value, "US");

// ---------------------------------------------------------------------------------------------
// The generator.

const REF_DATE = new Date("2024-06-02T14:05:33Z");

interface Region {
  id: string;
  locale: LocaleDefinition[];
  phone: CountryCode;
  weight: number;
  /** Writes `+CC (0)…` in business contexts. */
  trunkZero: boolean;
  providers: string[];
}

const REGIONS: Region[] = [
  { id: "en_US", locale: [en_US, en, base], phone: "US", weight: 36, trunkZero: false, providers: [] },
  { id: "en_GB", locale: [en_GB, en, base], phone: "GB", weight: 9, trunkZero: true, providers: ["btinternet.com", "hotmail.co.uk"] },
  { id: "de", locale: [de, en, base], phone: "DE", weight: 9, trunkZero: true, providers: ["web.de", "gmx.de", "t-online.de"] },
  { id: "fr", locale: [fr, en, base], phone: "FR", weight: 8, trunkZero: true, providers: ["orange.fr", "free.fr", "laposte.net"] },
  { id: "ja", locale: [ja, en, base], phone: "JP", weight: 6, trunkZero: false, providers: ["yahoo.co.jp", "docomo.ne.jp"] },
  { id: "pt_BR", locale: [pt_BR, en, base], phone: "BR", weight: 6, trunkZero: false, providers: ["uol.com.br", "bol.com.br"] },
  { id: "es", locale: [es, en, base], phone: "ES", weight: 5, trunkZero: false, providers: ["telefonica.net"] },
  { id: "it", locale: [italian, en, base], phone: "IT", weight: 5, trunkZero: false, providers: ["libero.it", "virgilio.it"] },
  { id: "nl", locale: [nl, en, base], phone: "NL", weight: 4, trunkZero: true, providers: ["ziggo.nl", "kpnmail.nl"] },
  { id: "en_AU", locale: [en_AU, en, base], phone: "AU", weight: 4, trunkZero: false, providers: ["bigpond.com"] },
  { id: "en_IN", locale: [en_IN, en, base], phone: "IN", weight: 4, trunkZero: false, providers: ["rediffmail.com"] },
  { id: "pl", locale: [pl, en, base], phone: "PL", weight: 2, trunkZero: false, providers: ["wp.pl", "o2.pl"] },
  { id: "sv", locale: [sv, en, base], phone: "SE", weight: 2, trunkZero: false, providers: ["telia.com"] },
];

/** Allocated global-unicast IPv6 prefixes (Google, Facebook, Cloudflare, Amazon, Hetzner, ISPs). */
const IPV6_PREFIXES = [
  "2001:4860",
  "2a03:2880",
  "2606:4700",
  "2a00:1450",
  "2600:1f18",
  "2a01:4f8",
  "2400:cb00",
  "2804:14c",
  "2a02:26f0",
  "2607:f8b0",
  "240e:3b7",
  "2c0f:fb50",
  "2405:200",
  "2003:e2",
  "2a01:e0a",
  "2601:647",
];

const IBAN_COUNTRIES: Array<{ weight: number; value: string }> = [
  { weight: 14, value: "DE" },
  { weight: 10, value: "FR" },
  { weight: 10, value: "GB" },
  { weight: 7, value: "ES" },
  { weight: 7, value: "IT" },
  { weight: 6, value: "NL" },
  { weight: 4, value: "BE" },
  { weight: 4, value: "AT" },
  { weight: 4, value: "CH" },
  { weight: 4, value: "PL" },
  { weight: 3, value: "PT" },
  { weight: 3, value: "SE" },
  { weight: 3, value: "IE" },
  { weight: 2, value: "DK" },
  { weight: 2, value: "NO" },
  { weight: 2, value: "FI" },
  { weight: 3, value: "BR" },
  { weight: 2, value: "TR" },
  { weight: 2, value: "LU" },
  { weight: 2, value: "CZ" },
];

/** faker.finance.creditCardNumber issuers (names, or faker patterns for the brands it has no name for). */
const CARD_ISSUERS: Array<{ weight: number; value: string }> = [
  { weight: 34, value: "visa" },
  { weight: 28, value: "mastercard" },
  { weight: 12, value: "american_express" },
  { weight: 8, value: "discover" },
  { weight: 5, value: "jcb" },
  { weight: 4, value: "diners_club" },
  { weight: 2, value: "6759-####-####-###L" }, // Maestro (UK)
  { weight: 2, value: "5018-####-####-###L" }, // Maestro
  { weight: 3, value: "62##-####-####-###L" }, // UnionPay
  { weight: 2, value: "3589-####-####-###L" }, // JCB, top of range
];

interface Person {
  name: string;
  first: string;
  last: string;
  email: Mark;
  phone: Mark;
  region: Region;
}

class Gen {
  readonly f: Faker;
  private readonly locales: Map<string, Faker>;

  constructor(seed: number) {
    this.f = new Faker({ locale: [en_US, en, base], seed });
    this.f.setDefaultRefDate(REF_DATE);
    this.locales = new Map(
      REGIONS.map((r, i) => {
        const f = new Faker({ locale: r.locale, seed: seed * 31 + i + 1 });
        f.setDefaultRefDate(REF_DATE);
        return [r.id, f];
      }),
    );
  }

  private loc(region: Region): Faker {
    return this.locales.get(region.id) as Faker;
  }

  pick<T>(xs: readonly T[]): T {
    return this.f.helpers.arrayElement(xs);
  }
  int(min: number, max: number): number {
    return this.f.number.int({ min, max });
  }
  chance(probability: number): boolean {
    return this.f.datatype.boolean({ probability });
  }
  times<T>(min: number, max: number, make: (i: number) => T): T[] {
    return Array.from({ length: this.int(min, max) }, (_, i) => make(i));
  }
  region(): Region {
    return this.f.helpers.weightedArrayElement(REGIONS.map((r) => ({ weight: r.weight, value: r })));
  }

  // --- personal data (labelled) ---

  person(region = this.region()): Person {
    const f = this.loc(region);
    const first = f.person.firstName();
    const last = f.person.lastName();
    const name = region.id === "ja" ? `${last} ${first}` : `${first} ${last}`;
    return { name, first, last, email: this.email(region, first, last), phone: this.phone(region), region };
  }

  email(region = this.region(), first?: string, last?: string): Mark {
    const f = this.loc(region);
    for (let attempt = 0; attempt < 20; attempt++) {
      const firstName = first ?? f.person.firstName();
      const lastName = last ?? f.person.lastName();
      const style = this.int(0, 9);
      let value: string;
      if (style <= 3) value = f.internet.email({ firstName, lastName });
      else if (style <= 5) value = f.internet.email({ firstName, lastName, provider: this.f.internet.domainName() });
      else if (style === 6 && region.providers.length > 0)
        value = f.internet.email({ firstName, lastName, provider: this.pick(region.providers) });
      else if (style === 7) value = f.internet.exampleEmail({ firstName, lastName });
      else if (style === 8) {
        const [local, domain] = f.internet.email({ firstName, lastName }).split("@") as [string, string];
        value = `${local}+${this.pick(["work", "news", "shop", "github", "2024", "aws", "billing"])}@${domain}`;
      } else
        value = `${this.f.helpers.slugify(firstName).toLowerCase().slice(0, 1) || "j"}.${this.f.helpers.slugify(lastName).toLowerCase() || "doe"}@${this.pick(["mail", "corp", "eu", "us"])}.${this.f.internet.domainName()}`;
      if (emailOk(value)) return mark("email", value);
      first = undefined;
      last = undefined;
    }
    return mark("email", this.f.internet.email());
  }

  phone(region = this.region()): Mark {
    return region.phone === "US" ? this.phoneUS() : this.phoneIntl(region);
  }

  /** A valid US number in one of the ways people write them (national formats: phone_countries is [US]). */
  phoneUS(): Mark {
    const f = this.loc(REGIONS[0] as Region);
    for (;;) {
      const parsed = tryParse(f.phone.number({ style: "national" }), "US");
      if (!parsed?.isValid() || parsed.country !== "US") continue;
      const n = parsed.nationalNumber;
      const [a, b, c] = [n.slice(0, 3), n.slice(3, 6), n.slice(6)];
      const value = this.pick([
        `(${a}) ${b}-${c}`,
        `(${a}) ${b}-${c}`,
        `${a}-${b}-${c}`,
        `${a}-${b}-${c}`,
        `${a}.${b}.${c}`,
        `${a} ${b} ${c}`,
        `+1 ${a}-${b}-${c}`,
        `+1 (${a}) ${b}-${c}`,
        `+1 ${a} ${b} ${c}`,
        `+1${n}`,
        `1-${a}-${b}-${c}`,
      ]);
      if (phoneOk(value)) return mark("phone", value);
    }
  }

  /** A valid number of `region`, written internationally: `+44 20 7946 0958`, E.164, dashed, or `+44 (0)20 …`. */
  phoneIntl(region: Region): Mark {
    const f = this.loc(region);
    for (let attempt = 0; attempt < 200; attempt++) {
      const parsed = tryParse(f.phone.number({ style: this.pick(["international", "national", "human"] as const) }), region.phone);
      if (!parsed?.isValid() || parsed.country !== region.phone) continue;
      const intl = parsed.formatInternational();
      const style = this.int(0, 19);
      let value = intl;
      if (style >= 11 && style <= 14) value = parsed.number;
      else if (style >= 15 && style <= 17) value = intl.replace(/ /g, "-");
      else if (style >= 18 && region.trunkZero) value = intl.replace(/^(\+\d+) /, "$1 (0)");
      if (phoneOk(value)) return mark("phone", value);
    }
    return this.phoneUS();
  }

  ip(): Mark {
    return this.chance(0.8) ? this.ipv4() : this.ipv6();
  }

  /** A public host address: not special-purpose, not a network address (.0), not a 1.2.3.4-style quad. */
  ipv4(): Mark {
    for (;;) {
      const value = this.f.internet.ipv4();
      if (!publicIpOk(value) || value.endsWith(".0") || /^\d\.\d\.\d\.\d$/.test(value)) continue;
      return mark("ip", value);
    }
  }

  /** faker's random groups under an allocated prefix; full or `::`-compressed. */
  ipv6(): Mark {
    for (;;) {
      const groups = this.f.internet
        .ipv6()
        .split(":")
        .map((g) => g.replace(/^0+(?=.)/, ""));
      const prefix = this.pick(IPV6_PREFIXES);
      const value = this.chance(0.4)
        ? [prefix, ...groups.slice(0, 6)].join(":")
        : `${[prefix, ...groups.slice(0, this.int(0, 2))].join(":")}::${groups.slice(6, 6 + this.int(1, 2)).join(":")}`;
      if (!publicIpOk(value)) continue;
      return mark("ip", value);
    }
  }

  /** A card number: plain, or grouped as printed (4-4-4-4, Amex/Diners 4-6-5/4-6-4) unless `compact`. */
  card(compact = false): Mark {
    for (;;) {
      const issuer = this.f.helpers.weightedArrayElement(CARD_ISSUERS);
      const digits = this.f.finance.creditCardNumber({ issuer }).replace(/\D/g, "");
      if (!luhnOk(digits) || cardBrand(digits) === null) continue;
      const n = digits.length;
      const style = compact ? 9 : this.int(0, 9);
      let value = digits;
      if (n === 16 && style <= 5) {
        const sep = style <= 4 ? " " : "-";
        value = digits.match(/\d{4}/g)?.join(sep) ?? digits;
      } else if ((n === 15 || n === 14) && style <= 5) {
        const sep = style <= 4 ? " " : "-";
        value = [digits.slice(0, 4), digits.slice(4, 10), digits.slice(10)].join(sep);
      }
      return mark("credit_card", value);
    }
  }

  iban(): Mark {
    for (;;) {
      const countryCode = this.f.helpers.weightedArrayElement(IBAN_COUNTRIES);
      const value = this.f.finance.iban({ countryCode, formatted: this.chance(0.55) });
      if (ibanOk(value)) return mark("iban", value);
    }
  }

  // --- negatives (unlabelled) ---

  date(days = 30): Date {
    return this.f.date.recent({ days });
  }
  iso(): string {
    return this.date().toISOString();
  }
  sqlTime(): string {
    return this.iso()
      .replace("T", " ")
      .slice(0, this.chance(0.5) ? 19 : 23);
  }
  epoch(): number {
    return Math.floor(this.date().getTime() / 1000);
  }
  semver(): string {
    return this.f.system.semver();
  }
  sha(length = 40): string {
    return this.f.git.commitSha({ length });
  }
  sha256(): string {
    return this.f.string.hexadecimal({ length: 64, casing: "lower", prefix: "" });
  }
  uuid(): string {
    return this.f.string.uuid();
  }
  pid(): number {
    return this.int(300, 4_000_000);
  }
  port(): number {
    return this.int(1024, 65535);
  }
  bytes(): number {
    return this.int(0, 12_000_000_000);
  }
  mac(): string {
    return this.f.internet.mac();
  }
  /** A decimal 64-bit id (Datadog trace ids, Snowflake ids): up to 20 digits. */
  u64(): string {
    return this.f.number.bigInt({ min: 0n, max: 18_446_744_073_709_551_615n }).toString();
  }
  /** A private, loopback, CGNAT or link-local address, IPv4 only or either family. */
  privateIp(v4Only = false): string {
    return this.pick([
      () => `10.${this.int(0, 255)}.${this.int(0, 255)}.${this.int(1, 254)}`,
      () => `172.${this.int(16, 31)}.${this.int(0, 255)}.${this.int(1, 254)}`,
      () => `192.168.${this.int(0, 255)}.${this.int(1, 254)}`,
      () => `100.${this.int(64, 127)}.${this.int(0, 255)}.${this.int(1, 254)}`,
      () => "127.0.0.1",
      () => `169.254.${this.int(0, 255)}.${this.int(1, 254)}`,
      ...(v4Only
        ? []
        : [
            () =>
              `fe80::${this.f.string.hexadecimal({ length: 4, casing: "lower", prefix: "" })}:${this.f.string.hexadecimal({ length: 2, casing: "lower", prefix: "" })}ff:fe${this.f.string.hexadecimal({ length: 2, casing: "lower", prefix: "" })}:${this.int(1, 9999)}`,
            () =>
              `fd${this.f.string.hexadecimal({ length: 2, casing: "lower", prefix: "" })}:${this.f.string.hexadecimal({ length: 4, casing: "lower", prefix: "" })}::${this.int(1, 99)}`,
          ]),
    ])();
  }
  docIp(): string {
    return this.pick([
      () => `192.0.2.${this.int(1, 254)}`,
      () => `198.51.100.${this.int(1, 254)}`,
      () => `203.0.113.${this.int(1, 254)}`,
      () => `2001:db8::${this.int(1, 255).toString(16)}`,
      () => `2001:db8:${this.int(1, 4095).toString(16)}::${this.int(1, 255).toString(16)}`,
    ])();
  }
  userAgent(): string {
    return this.pick([
      () =>
        `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${this.int(110, 131)}.0.${this.int(5000, 6800)}.${this.int(0, 250)} Safari/537.36`,
      () =>
        `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${this.int(110, 131)}.0.${this.int(5000, 6800)}.${this.int(0, 250)} Safari/537.36 Edg/${this.int(110, 131)}.0.${this.int(1000, 2800)}.${this.int(0, 99)}`,
      () => `Mozilla/5.0 (X11; Linux x86_64; rv:${this.int(115, 128)}.0) Gecko/20100101 Firefox/${this.int(115, 128)}.0`,
      () =>
        `Mozilla/5.0 (iPhone; CPU iPhone OS 17_${this.int(0, 5)}_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.${this.int(0, 5)} Mobile/15E148 Safari/604.1`,
      () => `curl/8.${this.int(0, 9)}.${this.int(0, 1)}`,
      () => `python-requests/2.${this.int(25, 32)}.${this.int(0, 3)}`,
      () => `okhttp/4.${this.int(9, 12)}.0`,
      () => `Go-http-client/1.1`,
      () => `kube-probe/1.${this.int(25, 30)}`,
    ])();
  }
  pkgSpec(): string {
    const name = this.pick([
      "lodash",
      "react",
      "express",
      "@types/node",
      "@babel/core",
      "@angular/core",
      "typescript",
      "zod",
      "@aws-sdk/client-s3",
      "left-pad",
      "webpack",
    ]);
    return `${name}@${this.pick([this.semver(), `^${this.semver()}`, `${this.int(1, 20)}.${this.int(0, 30)}.${this.int(0, 9)}.${this.int(1, 99)}`])}`;
  }
  retina(): string {
    return `${this.pick(["icon", "logo", "avatar", "sprite", "hero", "badge"])}@${this.int(2, 3)}x.${this.pick(["png", "jpg", "webp", "svg", "gif"])}`;
  }
  money(): string {
    const amount = this.f.finance.amount({ min: 1, max: 9999, dec: 2 });
    return this.pick([
      `$${Number(amount).toLocaleString("en-US", { minimumFractionDigits: 2 })}`,
      `€${amount.replace(".", ",")}`,
      `£${amount}`,
    ]);
  }
  orderId(): string {
    return this.pick([
      () => `ORD-${this.int(100000, 999999)}`,
      () => `#${this.int(10000, 999999)}`,
      () => `${this.int(111, 114)}-${this.int(1000000, 9999999)}-${this.int(1000000, 9999999)}`,
      () => `INV-2024-${String(this.int(1, 99999)).padStart(5, "0")}`,
      () => `pi_${this.f.string.alphanumeric(24)}`,
    ])();
  }
  shortDate(d = this.date()): string {
    const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    const hms = d.toISOString().slice(11, 19);
    return `${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, " ")} ${hms}`;
  }
  clf(d = this.date()): string {
    const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    return `${String(d.getUTCDate()).padStart(2, "0")}/${months[d.getUTCMonth()]}/${d.getUTCFullYear()}:${d.toISOString().slice(11, 19)} +0000`;
  }
  host(): string {
    return `${this.pick(["web", "api", "db", "worker", "edge", "bastion"])}-${String(this.int(1, 12)).padStart(2, "0")}`;
  }
  domain(): string {
    return this.f.internet.domainName();
  }
  word(): string {
    return this.f.word.noun();
  }
}

function tryParse(text: string, country: CountryCode): PhoneNumber | undefined {
  try {
    return parsePhoneNumberWithError(text, country);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Templates: one observation each, named `<domain> <template>`.

type Template = (g: Gen) => Piece[];

const webContacts: Template = (g) => {
  const people = g.times(2, 5, () => g.person());
  return lines([
    `[RootWebArea] "Contacts – ${g.pick(["Mail", "Google Contacts", "Outlook", "CRM"])}"`,
    `  [navigation] "Sidebar"`,
    `    [link] "Inbox (${g.int(1, 999)})"`,
    `    [img] "${g.retina()}"`,
    `  [list] "Contacts"`,
    ...people.flatMap((p) => [
      `    [listitem] "${p.name}"`,
      `      [img] "avatar@2x.png"`,
      t`      [StaticText] "${p.email}"`,
      t`      [StaticText] "${g.pick(["Mobile: ", "Work: ", "", "Phone: ", "Home · "])}${p.phone}"`,
      ...(g.chance(0.3) ? [t`      [link] "mailto:${g.email(p.region)}"`] : []),
    ]),
    `  [button] "Add contact"`,
    `  [StaticText] "Last synced ${g.sqlTime()} · ${people.length} of ${g.int(10, 900)} contacts · v${g.semver()}"`,
  ]);
};

const webInbox: Template = (g) => {
  const owner = g.email();
  const rows = g.times(3, 6, () => {
    const p = g.person();
    const snippet = g.pick([
      () => t`call me at ${p.phone} when you land`,
      () => t`build #${g.int(1000, 99999)} passed in ${g.int(1, 59)}m ${g.int(0, 59)}s (commit ${g.sha(7)})`,
      () => t`please reply to ${g.email()} instead`,
      () => t`your order ${g.orderId()} of ${g.money()} has shipped`,
      () => t`new sign-in from ${g.ip()} on Chrome ${g.int(110, 131)}.0.${g.int(5000, 6800)}.${g.int(0, 250)}`,
      () => t`invoice ${g.orderId()} – pay to IBAN ${g.iban()} by Friday`,
      () => t`release ${g.semver()} is out, see CHANGELOG`,
    ])();
    return t`    [row] "${g.chance(0.4) ? "unread, " : ""}${p.name} <${p.email}>, ${g.f.lorem.words(3)}, ${g.shortDate().slice(0, 6)}, ${snippet}"`;
  });
  return lines([
    t`[RootWebArea] "Inbox (${g.int(1, 500)}) - ${owner} - Mail"`,
    `  [searchbox] "Search mail"`,
    `  [grid] "Messages"`,
    ...rows,
    `  [StaticText] "1–${rows.length} of ${g.int(50, 9000)} · ${g.int(1, 15)}.${g.int(0, 99)} GB of 15 GB used"`,
  ]);
};

const webCheckout: Template = (g) => {
  const p = g.person();
  const sepa = g.chance(0.35);
  return lines([
    `[RootWebArea] "Checkout – ${g.f.company.name()}"`,
    `  [heading] "Contact"`,
    t`  [textbox] "Email" value="${p.email}"`,
    t`  [textbox] "Phone" value="${p.phone}"`,
    `  [heading] "Payment"`,
    sepa ? t`  [textbox] "IBAN" value="${g.iban()}"` : t`  [textbox] "Card number" value="${g.card()}"`,
    `  [textbox] "MM / YY" value="${String(g.int(1, 12)).padStart(2, "0")} / ${g.int(25, 31)}"`,
    `  [textbox] "CVC" value="${g.int(100, 999)}"`,
    `  [textbox] "ZIP" value="${g.f.location.zipCode("#####")}"`,
    `  [StaticText] "Saved card •••• •••• •••• ${g.int(1000, 9999)} · expires ${String(g.int(1, 12)).padStart(2, "0")}/${g.int(2025, 2031)}"`,
    `  [StaticText] "Order ${g.orderId()} · ${g.int(1, 9)} items · Total ${g.money()}"`,
    ...(g.chance(0.4) ? [t`  [StaticText] "Gift card for ${g.email()} · ${g.card()}"`] : []),
    `  [button] "Pay now" [${g.int(0, 900)},${g.int(0, 2000)}][${g.int(900, 1080)},${g.int(2000, 2400)}]`,
  ]);
};

const webAccount: Template = (g) => {
  const p = g.person();
  return lines([
    `[RootWebArea] "Account settings"`,
    `  [heading] "Security"`,
    t`  [StaticText] "Signed in as ${p.email}"`,
    t`  [StaticText] "Recovery email: ${g.email(p.region)}"`,
    t`  [StaticText] "Recovery phone: ${p.phone}"`,
    `  [table] "Recent activity"`,
    ...g.times(2, 4, () =>
      g.chance(0.75)
        ? t`    [row] "${g.userAgent().slice(0, 60)} · ${g.ip()} · ${g.sqlTime()}"`
        : `    [row] "Safari 17.4.1 on macOS 14.4.1 · ${g.privateIp()} · ${g.sqlTime()}"`,
    ),
    `  [StaticText] "Session ${g.uuid()} · expires in ${g.int(1, 59)} min"`,
    `  [StaticText] "2-step verification: on since ${g.iso().slice(0, 10)} · app v${g.semver()}"`,
    ...(g.chance(0.5) ? [t`  [StaticText] "Payout account ${g.iban()}"`] : []),
    ...(g.chance(0.3)
      ? [
          `  [StaticText] "Chrome is up to date · Version ${g.int(110, 131)}.0.${g.int(5000, 6800)}.${g.int(0, 250)} (Official Build) (64-bit)"`,
        ]
      : []),
  ]);
};

const androidContacts: Template = (g) => {
  const pkg = g.pick(["com.android.contacts", "com.google.android.dialer", "com.whatsapp", "com.samsung.android.app.contacts"]);
  let y = 200;
  const node = (text: Piece, id: string) => {
    y += g.int(60, 120);
    return t`  <node index="${g.int(0, 9)}" text="${text}" resource-id="${pkg}:id/${id}" class="android.widget.TextView" package="${pkg}" clickable="true" bounds="[48,${y}][${g.int(600, 1032)},${y + 56}]" />`;
  };
  const people = g.times(2, 4, () => g.person());
  return lines([
    `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>`,
    `<hierarchy rotation="0">`,
    `  <!-- ${pkg} versionName=${g.int(1, 30)}.${g.int(0, 40)}.${g.int(0, 99)}.${g.int(100, 999)} versionCode=${g.int(100000, 999999999)} -->`,
    ...people.flatMap((p) => [node(p.name, "name"), node(p.phone, "phone_number"), ...(g.chance(0.6) ? [node(p.email, "email")] : [])]),
    node(`Last seen ${g.int(1, 59)} min ago`, "status"),
    `</hierarchy>`,
  ]);
};

const androidBanking: Template = (g) => {
  const p = g.person();
  const bounds = () => `[${g.int(0, 100)},${g.int(100, 2000)}][${g.int(500, 1080)},${g.int(2000, 2400)}]`;
  return lines([
    `FrameLayout ${bounds()}`,
    `  TextView "Transfer to ${p.name}" ${bounds()}`,
    t`  TextView "IBAN ${g.iban()}" ${bounds()}`,
    `  TextView "BIC ${g.f.finance.bic()}" ${bounds()}`,
    `  TextView "Amount ${g.money()}" ${bounds()}`,
    `  TextView "Reference ${g.orderId()}" ${bounds()}`,
    `  TextView "Card •••• ${g.int(1000, 9999)}" ${bounds()}`,
    ...(g.chance(0.5) ? [t`  TextView "${g.card()}" ${bounds()} (revealed)`] : []),
    ...(g.chance(0.5) ? [t`  TextView "Sent from ${g.iban()}" ${bounds()}`] : []),
    t`  TextView "Notify ${p.phone}" ${bounds()}`,
    `  TextView "Transaction ${g.uuid()} · ${g.sqlTime()}" ${bounds()}`,
    `  ImageButton id=com.bank.app:id/fab ${bounds()} v${g.semver()}`,
  ]);
};

const mcpCustomers: Template = (g) => {
  const rows = g.times(2, 5, () => {
    const p = g.person();
    const row: Record<string, Json> = {
      id: g.int(1000, 99999),
      name: p.name,
      email: p.email,
      phone: p.phone,
      created_at: g.iso(),
      uuid: g.uuid(),
      last_login_ip: g.chance(0.8) ? g.ip() : g.privateIp(),
      plan: g.pick(["free", "pro", "team"]),
      app_version: g.semver(),
    };
    if (g.chance(0.3)) row.iban = g.iban();
    if (g.chance(0.35)) row.card_number = g.card();
    if (g.chance(0.3)) row.secondary_email = g.email();
    return row;
  });
  const body: Json = { rows, count: rows.length, took_ms: g.int(1, 900), query_id: g.sha(12) };
  return json(body, g.chance(0.5) ? 2 : 0);
};

const mcpPayments: Template = (g) => {
  const p = g.person();
  const card = g.card();
  const body: Json = {
    payment_id: `pay_${g.f.string.alphanumeric(14)}`,
    amount_cents: g.int(100, 999999),
    currency: g.pick(["EUR", "USD", "GBP", "JPY", "BRL"]),
    card: { number: card, exp_month: g.int(1, 12), exp_year: g.int(2025, 2031), last4: card.value.slice(-4), brand: "card" },
    billing: { name: p.name, email: p.email, phone: p.phone, payer_iban: g.iban() },
    client_ip: g.ip(),
    user_agent: g.userAgent(),
    risk: { score: g.int(0, 99), checked_at: g.epoch(), rules_version: `${g.int(1, 9)}.${g.int(0, 30)}.${g.int(0, 9)}.${g.int(1, 250)}` },
    idempotency_key: g.uuid(),
    receipt_sha256: g.sha256(),
    trace_id: g.chance(0.5) ? g.u64() : g.sha(32),
    created: g.sqlTime(),
  };
  return json(body, g.chance(0.5) ? 2 : 0);
};

const mcpNested: Template = (g) => {
  const people = g.times(2, 4, () => g.person());
  const body: Json = {
    data: {
      account: {
        id: g.uuid(),
        owner: { name: people[0]?.name ?? "", contact: { emails: people.map((p) => p.email), phones: people.map((p) => p.phone) } },
        devices: g.times(1, 3, () => ({ mac: g.mac(), ip: g.chance(0.6) ? g.ip() : g.privateIp(), seen: g.epoch() * 1000 })),
        payout: { iban: g.iban(), verified: g.chance(0.5) },
      },
    },
    meta: { api_version: g.semver(), request_id: g.uuid(), elapsed: `${g.int(1, 999)}ms`, server: `${g.host()}:${g.port()}` },
  };
  return json(body, 2);
};

/** An MCP tool result: text content inside a JSON string, newlines escaped. */
const mcpTextContent: Template = (g) => {
  const people = g.times(2, 4, () => g.person());
  const inner: Piece[] = [
    `Found ${people.length} matching contacts (query took ${g.int(1, 500)} ms):\n`,
    ...people.flatMap((p, i) => [
      `${i + 1}. ${p.name}\n   email: `,
      p.email,
      `\n   phone: `,
      p.phone,
      g.chance(0.4) ? t`\n   card on file: ${g.card()}` : "",
      `\n   updated ${g.iso()}\n`,
    ]),
    t`Login history for ${people[0]?.email ?? g.email()}:\n`,
    ...g.times(1, 3, () => t`- ${g.ip()} at ${g.sqlTime()} (${g.userAgent().slice(0, 40)})\n`),
  ];
  // Values at the start of a line: in the JSON text they follow an escaped newline (`\n81.2.69.142`).
  if (g.chance(0.3)) inner.push("Blocked addresses:\n", ...g.times(1, 3, () => [g.ip(), "\n"]));
  if (g.chance(0.3)) inner.push("Recipients:\n", ...g.times(1, 3, () => [g.email(), "\n"]));
  return t`{"jsonrpc":"2.0","id":${g.int(1, 999)},"result":{"content":[{"type":"text","text":${jsonString(inner)}}],"isError":false}}`;
};

const mcpCrmSearch: Template = (g) => {
  const hits = g.times(2, 4, () => {
    const p = g.person();
    return {
      id: `cus_${g.f.string.alphanumeric(14)}`,
      display_name: p.name,
      contacts: [
        { type: "email", value: p.email, primary: true },
        { type: "phone", value: p.phone, primary: false },
      ],
      tags: [g.pick(["vip", "churn-risk", "trial"]), `cohort-${g.iso().slice(0, 7)}`],
      score: Number((g.int(0, 1000) / 10).toFixed(1)),
      version: g.int(1, 40),
    };
  });
  return json({ total: g.int(hits.length, 5000), hits, next_cursor: g.f.string.alphanumeric(20), build: g.sha(7) }, 0);
};

const termAuthLog: Template = (g) => {
  const host = g.host();
  const entry = (): Piece =>
    g.pick([
      () =>
        t`${g.shortDate()} ${host} sshd[${g.pid()}]: Accepted publickey for ${g.pick(["deploy", "ubuntu", "git"])} from ${g.ipv4()} port ${g.port()} ssh2: ED25519 SHA256:${g.f.string.alphanumeric(43)}`,
      () =>
        t`${g.shortDate()} ${host} sshd[${g.pid()}]: Failed password for invalid user ${g.pick(["admin", "oracle", "test"])} from ${g.ip()} port ${g.port()} ssh2`,
      () => t`${g.shortDate()} ${host} sshd[${g.pid()}]: Disconnected from authenticating user root ${g.ip()} port ${g.port()} [preauth]`,
      () => `${g.shortDate()} ${host} sshd[${g.pid()}]: Connection from ${g.privateIp()} port ${g.port()} on ${g.privateIp()} port 22`,
      () => `${g.shortDate()} ${host} CRON[${g.pid()}]: pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)`,
      () =>
        `${g.shortDate()} ${host} sudo:   deploy : TTY=pts/${g.int(0, 9)} ; PWD=/srv/app/releases/${g.iso().slice(0, 10).replace(/-/g, "")}${g.int(100000, 235959)} ; USER=root ; COMMAND=/usr/bin/systemctl restart nginx`,
      () =>
        t`${g.iso().slice(0, 10)} ${g.iso().slice(11, 23).replace(".", ",")} fail2ban.actions [${g.pid()}]: NOTICE [sshd] Ban ${g.ip()}`,
      () => `${g.shortDate()} ${host} kernel: [${g.int(1, 9999999)}.${g.int(100000, 999999)}] eth0: link up, 1000 Mbps`,
      () =>
        t`${g.shortDate()} ${host} kernel: [${g.int(1, 9999999)}.${g.int(100000, 999999)}] [UFW BLOCK] IN=eth0 OUT= MAC=${g.mac()}:${g.mac()}:08:00 SRC=${g.ipv4()} DST=${g.privateIp()} LEN=${g.int(40, 60)} TTL=${g.int(30, 250)} ID=${g.int(1, 65535)} PROTO=TCP SPT=${g.port()} DPT=${g.pick([22, 23, 3389, 5900])} WINDOW=${g.int(1000, 65535)} SYN URGP=0`,
    ])();
  return lines([`$ sudo tail -n 20 /var/log/auth.log`, ...g.times(4, 9, entry)]);
};

const termNginx: Template = (g) => {
  const access = (): Piece => {
    const client = g.chance(0.85) ? g.ip() : g.chance(0.5) ? g.privateIp() : g.docIp();
    const path = g.pick([
      `/api/v${g.int(1, 3)}.${g.int(0, 9)}/users?page=${g.int(1, 99)}`,
      `/static/${g.retina()}`,
      `/assets/app.${g.sha(8)}.js`,
      `/healthz`,
      `/download/pkg-${g.semver()}.tar.gz`,
    ]);
    const xff = g.chance(0.3) ? t` xff="${g.ip()}, ${g.privateIp()}"` : "";
    return t`${client} - - [${g.clf()}] "${g.pick(["GET", "POST", "PUT"])} ${path} HTTP/${g.pick(["1.1", "2.0"])}" ${g.pick([200, 200, 204, 301, 404, 502])} ${g.int(0, 99999)} "-" "${g.userAgent()}" rt=${g.int(0, 9)}.${String(g.int(0, 999)).padStart(3, "0")}${xff}`;
  };
  const error = (): Piece =>
    t`${g.iso().slice(0, 19).replace("T", " ").replace(/-/g, "/")} [error] ${g.pid()}#${g.pid()}: *${g.int(1, 999999)} connect() failed (111: Connection refused) while connecting to upstream, client: ${g.ip()}, server: ${g.domain()}, request: "GET / HTTP/1.1", upstream: "http://127.0.0.1:${g.port()}/", host: "${g.domain()}"`;
  return lines([
    `$ tail -n 8 /var/log/nginx/access.log`,
    ...g.times(3, 7, access),
    `$ tail -n 2 /var/log/nginx/error.log`,
    ...g.times(1, 2, error),
  ]);
};

const termSockets: Template = (g) => {
  const v6 = () => {
    const ip = g.ipv6();
    return t`[${ip}]:${g.port()}`;
  };
  const row = (): Piece =>
    g.pick([
      () =>
        t`ESTAB  0      0      ${g.privateIp()}:22          ${g.ipv4()}:${g.port()}  users:(("sshd",pid=${g.pid()},fd=${g.int(3, 40)}))`,
      () => t`ESTAB  0      ${g.int(0, 512)}     [::ffff:${g.privateIp(true)}]:443   [::ffff:${g.ipv4()}]:${g.port()}`,
      () => t`ESTAB  0      0      [${g.ipv6()}]:443   ${v6()}`,
      () =>
        `LISTEN 0      ${g.pick([128, 511, 4096])}    0.0.0.0:${g.pick([80, 443, 8080, 5432])}   0.0.0.0:*   users:(("nginx",pid=${g.pid()},fd=6))`,
      () => `LISTEN 0      4096   [::]:22   [::]:*`,
      () => `TIME-WAIT 0   0      127.0.0.1:${g.port()}   127.0.0.1:6379`,
    ])();
  const netstat = (): Piece =>
    t`tcp        0      0 ${g.privateIp()}:${g.pick([443, 22, 5432])}            ${g.ipv4()}:${g.port()}        ESTABLISHED ${g.pid()}/${g.pick(["nginx", "sshd", "postgres"])}`;
  return lines([
    `$ ss -tnp`,
    `State  Recv-Q Send-Q Local Address:Port   Peer Address:Port Process`,
    ...g.times(3, 6, row),
    `$ netstat -tnp | grep ESTAB`,
    ...g.times(1, 3, netstat),
    `$ ip -br addr`,
    `eth0  UP  ${g.privateIp(true)}/${g.pick([16, 20, 24])} fe80::${g.int(1, 9)}:acff:fe11:${g.int(1, 9)}/64  link/ether ${g.mac()}`,
  ]);
};

const termGitLog: Template = (g) => {
  const commits = g.times(2, 4, () => {
    const p = g.person();
    const d = g.date(400);
    const body = [
      t`commit ${g.sha()}`,
      t`Author: ${p.name} <${p.email}>`,
      `Date:   ${d.toUTCString().replace(",", "").replace(" GMT", "")} +0000`,
      "",
      `    ${g.pick(["fix", "feat", "chore"])}(${g.word()}): bump ${g.pkgSpec()} (#${g.int(100, 9999)})`,
    ];
    if (g.chance(0.4)) {
      const co = g.person();
      body.push("", t`    Co-authored-by: ${co.name} <${co.email}>`);
    }
    if (g.chance(0.3)) body.push(t`    Signed-off-by: ${p.name} <${p.email}>`);
    return lines(body);
  });
  const shortlog = g.times(1, 3, () => {
    const p = g.person();
    return t`${String(g.int(1, 400)).padStart(6, " ")}\t${p.name} <${p.email}>`;
  });
  return lines([`$ git log -n ${commits.length}`, ...commits.flatMap((c) => [c, ""]), `$ git shortlog -sne | head -3`, ...shortlog]);
};

const termCsv: Template = (g) => {
  const withCard = g.chance(0.5);
  const withIban = g.chance(0.4);
  const header = ["id", "first_name", "last_name", "email", "phone", "signup_ip", "created_at", "plan"];
  if (withCard) header.push("card_number");
  if (withIban) header.push("iban");
  const rows = g.times(3, 7, () => {
    const p = g.person();
    const cells: Piece[] = [
      String(g.int(1000, 99999)),
      p.first,
      p.last,
      p.email,
      p.phone,
      g.chance(0.85) ? g.ip() : g.privateIp(),
      g.iso(),
      g.pick(["free", "pro"]),
    ];
    if (withCard) cells.push(g.card());
    if (withIban) cells.push(g.iban());
    return cells.flatMap((c, i) => (i === 0 ? [c] : [",", c]));
  });
  return lines([
    `$ head -n ${rows.length + 1} exports/customers-${g.iso().slice(0, 10)}.csv`,
    header.join(","),
    ...rows,
    `$ wc -l exports/customers-*.csv`,
    `  ${g.int(1000, 999999)} total`,
    `$ sha256sum exports/customers-*.csv`,
    `${g.sha256()}  exports/customers.csv`,
  ]);
};

const termDig: Template = (g) => {
  const domain = g.domain();
  const answers = g.times(1, 3, () => {
    const v6 = g.chance(0.3);
    return t`${domain}.\t\t${g.pick([60, 300, 3600])}\tIN\t${v6 ? "AAAA" : "A"}\t${v6 ? g.ipv6() : g.ipv4()}`;
  });
  return lines([
    `$ dig ${domain}`,
    ``,
    `; <<>> DiG 9.18.${g.int(10, 30)}-1-Debian <<>> ${domain}`,
    `;; global options: +cmd`,
    `;; Got answer:`,
    `;; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: ${g.int(1, 65535)}`,
    `;; flags: qr rd ra; QUERY: 1, ANSWER: ${answers.length}, AUTHORITY: 0, ADDITIONAL: 1`,
    ``,
    `;; ANSWER SECTION:`,
    ...answers,
    ``,
    `;; Query time: ${g.int(1, 200)} msec`,
    `;; SERVER: 127.0.0.53#53(127.0.0.53) (UDP)`,
    `;; WHEN: ${g.date().toUTCString()}`,
    `;; MSG SIZE  rcvd: ${g.int(40, 300)}`,
    `$ dig +short MX ${domain}`,
    `10 mx${g.int(1, 3)}.${domain}.`,
    `$ whois ${domain} | grep -i abuse`,
    t`Registrar Abuse Contact Email: ${g.email()}`,
    t`Registrar Abuse Contact Phone: ${g.phoneIntl(g.pick(REGIONS.slice(1)))}`,
  ]);
};

const termSystem: Template = (g) => {
  const logins = g.times(2, 4, () => {
    const user = g.pick(["deploy", "root", "ubuntu", "alice"]);
    return t`${user.padEnd(8, " ")} pts/${g.int(0, 9)}        ${g.chance(0.8) ? g.ipv4() : g.privateIp()}  ${g.date().toUTCString().slice(0, 22)}   still logged in`;
  });
  const ps = g.times(3, 5, () => {
    const cpu = `${g.int(0, 99)}.${g.int(0, 9)}`;
    return `${g.pick(["root", "www-data", "postgres"])}  ${String(g.pid()).padStart(7, " ")}  ${cpu}  ${g.int(0, 9)}.${g.int(0, 9)} ${String(g.int(10000, 9999999)).padStart(8, " ")} ${String(g.int(1000, 999999)).padStart(7, " ")} ?  Ss   ${g.iso().slice(11, 16)}   ${g.int(0, 99)}:${String(g.int(0, 59)).padStart(2, "0")} ${g.pick(["nginx: worker process", "/usr/lib/postgresql/16/bin/postgres", "node dist/server.js --port 8080"])}`;
  });
  return lines([
    `$ last -i | head -n ${logins.length}`,
    ...logins,
    `$ ps aux --sort=-%cpu | head -n ${ps.length + 1}`,
    `USER         PID %CPU %MEM      VSZ     RSS TTY STAT START   TIME COMMAND`,
    ...ps,
    `$ df -k /`,
    `Filesystem     1K-blocks     Used Available Use% Mounted on`,
    `/dev/nvme0n1p1 ${g.int(10000000, 99999999)} ${g.int(1000000, 9999999)} ${g.int(1000000, 99999999)}  ${g.int(1, 99)}% /`,
    `$ uptime`,
    ` ${g.iso().slice(11, 19)} up ${g.int(1, 400)} days, ${g.int(0, 23)}:${String(g.int(0, 59)).padStart(2, "0")},  ${logins.length} users,  load average: ${g.int(0, 9)}.${g.int(10, 99)}, ${g.int(0, 9)}.${g.int(10, 99)}, ${g.int(0, 9)}.${g.int(10, 99)}`,
    `$ git config user.email`,
    t`${g.email()}`,
  ]);
};

const termVersions: Template = (g) =>
  lines([
    `$ pip list | head -n 5`,
    `numpy        ${g.semver()}`,
    `torch        ${g.int(1, 2)}.${g.int(0, 5)}.${g.int(0, 3)}+cu${g.pick([118, 121, 124])}`,
    `protobuf     ${g.int(3, 5)}.${g.int(20, 29)}.${g.int(0, 9)}.0`,
    `$ npm ls --depth=0`,
    `app@${g.semver()} /srv/app`,
    `├── ${g.pkgSpec()}`,
    `├── ${g.pkgSpec()}`,
    `└── ${g.pkgSpec()}`,
    `$ docker ps --format '{{.ID}} {{.Image}} {{.Ports}}'`,
    `${g.sha(12)} nginx@sha256:${g.sha256()} 0.0.0.0:${g.port()}->80/tcp, [::]:${g.port()}->80/tcp`,
    `${g.sha(12)} postgres:16.${g.int(0, 4)} 127.0.0.1:5432->5432/tcp`,
    `$ dotnet --info | grep Version`,
    ` Version:   ${g.int(6, 9)}.${g.int(0, 9)}.${g.int(1, 99)}.${g.int(1, 9)}`,
    ` OS Version: 10.0.${g.int(19041, 26100)}`,
    `$ curl -s localhost:8080/healthz`,
    `{"status":"ok","uptime_s":${g.int(1, 9999999)},"pid":${g.pid()},"mem":"${g.int(10, 999)} MiB","commit":"${g.sha(7)}","ts":${g.epoch()}${String(g.int(0, 999)).padStart(3, "0")}}`,
    `$ ls -l assets/`,
    `-rw-r--r-- 1 deploy deploy ${String(g.bytes() % 9999999).padStart(8, " ")} ${g.shortDate().slice(0, 12)} ${g.retina()}`,
    `-rw-r--r-- 1 deploy deploy ${String(g.bytes() % 9999999).padStart(8, " ")} ${g.shortDate().slice(0, 12)} ${g.retina()}`,
  ]);

const searchSnippets: Template = (g) => {
  const result = (i: number): Piece =>
    g.pick([
      () => {
        const company = g.f.company.name();
        return lines([
          `[${i}] ${company} – Contact us`,
          `https://${g.domain()}/contact`,
          t`Call us at ${g.phone()} or email ${g.email()}. Open Mon–Fri 8:00–17:00. © 2024 ${company}.`,
        ]);
      },
      () => {
        const p = g.person(g.pick(REGIONS.filter((r) => ["de", "fr", "nl", "it", "es"].includes(r.id))));
        return lines([
          `[${i}] Impressum – ${g.f.company.name()}`,
          `https://${g.domain()}/impressum`,
          t`Geschäftsführer: ${p.name} · Telefon: ${p.phone} · E-Mail: ${p.email} · IBAN: ${g.iban()} · USt-IdNr. DE${g.int(100000000, 999999999)}`,
        ]);
      },
      () =>
        lines([
          `[${i}] Release ${g.semver()} · ${g.word()}/${g.word()} · GitHub`,
          `https://github.com/${g.word()}/${g.word()}/releases/tag/v${g.semver()}`,
          `Released ${g.iso().slice(0, 10)} · ${g.int(1, 999)} commits · sha ${g.sha(7)} · requires node >=${g.int(14, 22)}.${g.int(0, 9)}.0`,
        ]),
      () =>
        lines([
          t`[${i}] ${g.ip()} – IP address lookup`,
          `https://ipinfo.io/`,
          t`ASN AS${g.int(1000, 65000)} · ${g.f.location.city()} · abuse contact ${g.email()} · updated ${g.iso().slice(0, 10)}`,
        ]),
      () => {
        const p = g.person();
        return lines([
          `[${i}] ${p.name} – ${g.f.person.jobTitle()} – LinkedIn`,
          `https://www.linkedin.com/in/${g.f.helpers.slugify(p.name).toLowerCase()}-${g.sha(8)}`,
          t`${p.name}. ${g.f.location.city()}. Contact: ${p.email} · ${p.phone}. ${g.int(1, 500)}+ connections.`,
        ]);
      },
    ])();
  return lines([
    `Search results for "${g.f.lorem.words(3)}" (${g.int(1, 99)},${g.int(100, 999)},000 results, 0.${g.int(10, 99)} s)`,
    ...g.times(3, 5, (i) => [result(i + 1), "\n"]),
  ]);
};

const sweAuthorsDiff: Template = (g) => {
  const existing = g.times(1, 3, () => g.person());
  const added = g.times(1, 3, () => g.person());
  const author = g.person();
  return lines([
    `diff --git a/AUTHORS b/AUTHORS`,
    `index ${g.sha(7)}..${g.sha(7)} 100644`,
    `--- a/AUTHORS`,
    `+++ b/AUTHORS`,
    `@@ -${g.int(1, 90)},${existing.length} +${g.int(1, 90)},${existing.length + added.length} @@`,
    ...existing.map((p) => t` ${p.name} <${p.email}>`),
    ...added.map((p) => t`+${p.name} <${p.email}>`),
    `diff --git a/package.json b/package.json`,
    `--- a/package.json`,
    `+++ b/package.json`,
    `@@ -2,7 +2,7 @@`,
    `   "name": "@${g.word()}/${g.word()}",`,
    `-  "version": "${g.semver()}",`,
    `+  "version": "${g.semver()}",`,
    t`   "author": "${author.name} <${author.email}>",`,
    `   "dependencies": {`,
    `-    "lodash": "^4.17.20",`,
    `+    "lodash": "^4.17.21",`,
    `     "@types/node": "^${g.int(18, 22)}.${g.int(0, 19)}.${g.int(0, 9)}"`,
    `   },`,
    `diff --git a/src/app.component.ts b/src/app.component.ts`,
    `@@ -1,6 +1,9 @@`,
    ` import { Component, Input } from "@angular/core";`,
    ` @Component({ selector: "app-root", templateUrl: "./app.component.html" })`,
    ` export class AppComponent {`,
    `+  @Input() maxRetries = ${g.int(1, 9)};`,
    `+  readonly logo = "assets/${g.retina()}";`,
    t`+  readonly supportEmail = "${g.email()}";`,
    `   private readonly MOD = 1_000_000_007;`,
  ]);
};

const sweCode: Template = (g) => {
  const p = g.person();
  return lines([
    `$ cat tests/fixtures/users.py`,
    `import pytest`,
    ``,
    `@pytest.fixture`,
    `def user():`,
    t`    return User(id=${g.int(1, 9999)}, email="${p.email}", phone="${p.phone}", created=${g.epoch()})`,
    ``,
    `@app.route("/users/<int:user_id>")`,
    `def show(user_id: int) -> str:  # v${g.semver()}`,
    `    return render("user.html", ts=${g.epoch()}, build="${g.sha(7)}")`,
    `$ cat .env.example`,
    t`ADMIN_EMAIL=${g.email()}`,
    t`ALLOWED_IPS=${g.ip()},${g.privateIp()}`,
    `# example: ALLOWED_IPS=${g.docIp()},${g.docIp()}`,
    `DATABASE_URL=postgres://app@localhost:5432/app`,
    `REDIS_URL=redis://127.0.0.1:6379/0`,
    `$ cat src/styles.css`,
    `@media (max-width: ${g.pick([600, 768, 1024])}px) { .logo { background: url("${g.retina()}"); } }`,
    `@import url("https://fonts.example.com/css?family=Inter:400,700");`,
    `$ grep -rn "0x" src/hash.c`,
    `src/hash.c:${g.int(1, 300)}: #define FNV_PRIME 0x01000193 /* ${g.int(10000000, 99999999)} */`,
    `src/hash.c:${g.int(1, 300)}: uint64_t seed = ${g.u64()}ULL; // from ${g.iso()}`,
    `$ npm view ${g.pkgSpec()} dist.shasum`,
    g.sha(),
  ]);
};

const webHelpdesk: Template = (g) => {
  const p = g.person();
  const card = g.card();
  return lines([
    `[RootWebArea] "Ticket #${g.int(10000, 99999)} – ${g.pick(["Refund request", "Double charge", "Card declined"])} – Support"`,
    t`  [StaticText] "Requester: ${p.name} <${p.email}>"`,
    t`  [StaticText] "Phone: ${p.phone}"`,
    t`  [StaticText] "Submitted via web widget v${g.semver()} from ${g.ip()} · ${g.iso()}"`,
    `  [article] "${p.name}, ${g.int(2, 23)} hours ago"`,
    g.pick([
      () =>
        t`    [StaticText] "Hi, I was charged twice on my card ${card} (order ${g.orderId()}). Please refund to ${g.iban()} or call me on ${p.phone}."`,
      () => t`    [StaticText] "My card ${card} was declined at ${g.sqlTime()} but the ${g.money()} still shows as pending."`,
      () =>
        t`    [StaticText] "Card: ${card}\nExp: ${String(g.int(1, 12)).padStart(2, "0")}/${g.int(25, 31)}\nPlease cancel my subscription."`,
    ])(),
    `  [article] "Agent ${g.f.person.firstName()}, ${g.int(1, 59)} min ago"`,
    t`    [StaticText] "Thanks! Refund ${g.money()} issued, ref ${g.uuid()}. The card ending ${card.value.slice(-4)} will see it in 5–10 days. CC ${g.email()}"`,
    `  [StaticText] "Macros v${g.semver()} · SLA ${g.int(1, 23)}h ${g.int(0, 59)}m · ${g.int(1, 99)} KB attachments"`,
  ]);
};

const termPsql: Template = (g) => {
  const withIban = g.chance(0.5);
  const header = ["id", "email", "card_number", ...(withIban ? ["iban"] : []), "amount", "created_at"];
  const rows: Piece[][] = g.times(3, 7, () => [
    String(g.int(10000, 99999)),
    g.email(),
    g.card(),
    ...(withIban ? [g.iban()] : []),
    `${g.int(1, 9999)}.${String(g.int(0, 99)).padStart(2, "0")}`,
    `${g.sqlTime()}+00`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => plain(r[i] ?? "").length)));
  const row = (cells: readonly Piece[]): Piece[] => cells.flatMap((c, i) => [i === 0 ? " " : " | ", ...padded(c, widths[i] ?? 0)]);
  return lines([
    `$ psql -d shop -c "SELECT ${header.join(", ")} FROM payments ORDER BY id DESC LIMIT ${rows.length};"`,
    row(header),
    widths.map((w) => "-".repeat(w + 2)).join("+"),
    ...rows.map(row),
    `(${rows.length} rows)`,
    ``,
    `Time: ${g.int(0, 99)}.${g.int(100, 999)} ms`,
  ]);
};

const termPaymentLogs: Template = (g) => {
  const line = (): Piece =>
    g.pick([
      () =>
        t`ts=${g.iso()} level=info msg="charge created" charge=ch_${g.f.string.alphanumeric(12)} amount=${g.int(100, 99999)} currency=EUR card=${g.card(true)} ip=${g.ipv4()} trace_id=${g.u64()} dur=${g.int(1, 999)}ms`,
      () =>
        t`{"level":"warn","ts":${g.epoch()}.${g.int(100, 999)},"msg":"sepa mandate created","iban":"${g.iban()}","email":"${g.email()}","client_ip":"${g.ip()}","pid":${g.pid()},"version":"${g.semver()}"}`,
      () =>
        t`time="${g.iso().slice(0, 19)}Z" level=error msg="card declined" pan=${g.card(true)} remote_addr=${g.ipv4()}:${g.port()} user=${g.email()} attempt=${g.int(1, 5)}`,
      () => t`${g.iso()} INFO  [payments-${g.sha(5)}] refund ${g.orderId()} to ${g.iban()} for ${g.email()} (${g.int(1, 999)} ms)`,
      () => t`${g.iso()} WARN  [fraud] velocity check: card ${g.card()} used from ${g.ip()} and ${g.ip()} within ${g.int(1, 59)}s`,
      () =>
        `${g.iso()} DEBUG [pool] acquired conn ${g.int(1, 64)}/${g.int(64, 128)} to 10.0.${g.int(0, 9)}.${g.int(2, 254)}:5432 in ${g.int(0, 99)}.${g.int(0, 9)}ms`,
    ])();
  return lines([`$ kubectl logs deploy/payments --since=10m | tail -n 8`, ...g.times(4, 8, line)]);
};

const sweTestCards: Template = (g) => {
  const entries = g.times(
    3,
    6,
    (i) => t`+  ${["visa", "mastercard", "amex", "discover", "jcb", "unionpay"][i] ?? "other"}: "${g.card()}",`,
  );
  return lines([
    `diff --git a/test/fixtures/cards.ts b/test/fixtures/cards.ts`,
    `new file mode 100644`,
    `index 0000000..${g.sha(7)}`,
    `--- /dev/null`,
    `+++ b/test/fixtures/cards.ts`,
    `@@ -0,0 +1,${entries.length + 4} @@`,
    `+// Numbers from the sandbox, generated ${g.iso()} (fixtures v${g.semver()})`,
    `+export const CARDS = {`,
    ...entries,
    `+} as const;`,
    t`+export const CUSTOMER = { email: "${g.email()}", iban: "${g.iban()}", createdAt: ${g.epoch()}000 };`,
    `diff --git a/src/pay.ts b/src/pay.ts`,
    `@@ -${g.int(10, 99)},6 +${g.int(10, 99)},7 @@ export class PaymentService {`,
    `   @Retry({ attempts: ${g.int(2, 5)}, backoffMs: ${g.int(100, 5000)} })`,
    `   async charge(card: CardNumber, amountCents: number): Promise<ChargeId> {`,
    `+    assert(luhn(card), "invalid card");`,
    `     return this.client.post("/v${g.int(1, 3)}/charges", { card, amountCents, idempotencyKey: "${g.uuid()}" });`,
  ]);
};

const TEMPLATES: Array<[string, Template]> = [
  ["web contacts", webContacts],
  ["web inbox", webInbox],
  ["web checkout", webCheckout],
  ["web account", webAccount],
  ["android contacts", androidContacts],
  ["android banking", androidBanking],
  ["mcp customers", mcpCustomers],
  ["mcp payments", mcpPayments],
  ["mcp nested", mcpNested],
  ["mcp text-content", mcpTextContent],
  ["mcp crm-search", mcpCrmSearch],
  ["terminal auth-log", termAuthLog],
  ["terminal nginx", termNginx],
  ["terminal sockets", termSockets],
  ["terminal git-log", termGitLog],
  ["terminal csv", termCsv],
  ["terminal dig", termDig],
  ["terminal system", termSystem],
  ["terminal versions", termVersions],
  ["search snippets", searchSnippets],
  ["swe authors-diff", sweAuthorsDiff],
  ["swe code", sweCode],
  ["web helpdesk", webHelpdesk],
  ["terminal psql", termPsql],
  ["terminal payment-logs", termPaymentLogs],
  ["swe test-cards", sweTestCards],
];

/**
 * `documents` observations (default 660), templates taken in turn so every shape is equally
 * represented; the same `seed` (default 20240602) gives the same documents.
 */
export function generatePiiCorpus(options: { documents?: number; seed?: number } = {}): LabelledDocument[] {
  const { documents = 660, seed = 20240602 } = options;
  const g = new Gen(seed);
  const docs: LabelledDocument[] = [];
  for (let i = 0; i < documents; i++) {
    const [name, template] = TEMPLATES[i % TEMPLATES.length] as [string, Template];
    docs.push(assemble(`${name} #${i}`, template(g)));
  }
  return docs;
}
