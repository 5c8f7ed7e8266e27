import { createRequire } from "node:module";
import { moduleFile } from "../../core/package-files.ts";
import { type Counters, count } from "../normalizer.ts";
import { findCreditCards } from "./credit-card.ts";
import { findEmails } from "./email.ts";
import { findIbans } from "./iban.ts";
import { findIps } from "./ip.ts";
import { findPhones } from "./phone.ts";
import type { ResolvedPii } from "./pii-settings.ts";
import type { PiiKind, PiiSpan } from "./types.ts";

export {
  type PiiSettings,
  piiActive,
  type ResolvedPii,
  resolvePii,
  resolvePiiAnyDomain,
} from "./pii-settings.ts";
export { PII_KINDS, type PiiKind, type PiiSpan } from "./types.ts";

/**
 * Which finding wins where two overlap: an IBAN's digits can look like a phone number, an NHS
 * number is shaped like a US one (and is only found after its name), an address holds a name
 * (`Flat 4, Baker House`) and a house number.
 */
const PRIORITY: Record<PiiKind, number> = {
  email: 0,
  iban: 1,
  credit_card: 2,
  national_id: 3,
  ip: 4,
  phone: 5,
  postal_address: 6,
  person_name: 7,
};

const PLACEHOLDER_NAME: Record<PiiKind, string> = {
  email: "EMAIL",
  phone: "PHONE",
  ip: "IP",
  credit_card: "CREDIT_CARD",
  iban: "IBAN",
  national_id: "NATIONAL_ID",
  postal_address: "ADDRESS",
  person_name: "PERSON",
};

/**
 * Detectors with heavy imports (stdnum's validators, compromise's lexicon: 0.15–0.35 s), loaded on
 * first use: a job, a test or a CLI command that does not look for their kinds does not pay for them.
 */
const require = createRequire(import.meta.url);
let nationalIds: typeof import("./national-id.ts").findNationalIds | undefined;
let postalAddresses: typeof import("./postal-address.ts").findPostalAddresses | undefined;
let personNames: typeof import("./person-name.ts").findPersonNames | undefined;

function findOfKind(kind: Exclude<PiiKind, "ip" | "phone">, text: string): readonly PiiSpan[] {
  switch (kind) {
    case "email":
      return findEmails(text);
    case "iban":
      return findIbans(text);
    case "credit_card":
      return findCreditCards(text);
    case "national_id":
      nationalIds ??= (require(moduleFile("normalize/pii/national-id")) as typeof import("./national-id.ts")).findNationalIds;
      return nationalIds(text);
    case "postal_address":
      postalAddresses ??= (require(moduleFile("normalize/pii/postal-address")) as typeof import("./postal-address.ts")).findPostalAddresses;
      return postalAddresses(text);
    case "person_name":
      personNames ??= (require(moduleFile("normalize/pii/person-name")) as typeof import("./person-name.ts")).findPersonNames;
      return personNames(text);
  }
}

/** Every finding in `text` of the given kinds, without overlaps, in text order. */
export function findPii(text: string, pii: ResolvedPii, counters?: Counters, scope = "any"): PiiSpan[] {
  const all: PiiSpan[] = [];
  for (const kind of pii.kinds) {
    let found: readonly PiiSpan[];
    if (kind === "phone") found = findPhones(text, pii.phoneCountries);
    else if (kind !== "ip") found = findOfKind(kind, text);
    else {
      const kept = { private: 0, documentation: 0 };
      found = findIps(text, pii.ip, kept);
      // (Keys built only when there is something to count: this runs for every text field.)
      if (counters && kept.private > 0) count(counters, `pii_kept.${scope}.ip_private`, kept.private);
      if (counters && kept.documentation > 0) count(counters, `pii_kept.${scope}.ip_documentation`, kept.documentation);
    }
    for (const span of found) all.push(span);
  }
  if (all.length === 0) return all;
  all.sort((a, b) => PRIORITY[a.kind] - PRIORITY[b.kind] || a.start - b.start);
  const chosen: PiiSpan[] = [];
  for (const span of all) if (!chosen.some((c) => span.start < c.end && span.end > c.start)) chosen.push(span);
  return chosen.sort((a, b) => a.start - b.start);
}

/**
 * Replaces personal data with typed placeholders numbered per value: one redactor per
 * trajectory, so `<EMAIL_1>` is the same address in every turn (the model still learns that the
 * contact clicked in turn 2 is the one whose mail opens in turn 3), and different ones differ.
 *
 * Counts, per `scope` (the record's domain, `text` for documents): `pii.<scope>.<kind>`
 * replacements, `pii_values.<scope>.<kind>` distinct values, `pii_records.<scope>` records with
 * any, `pii_kept.<scope>.ip_private|ip_documentation` addresses the range policy left
 * (src/normalize/pii/pii-summary.ts turns them into the manifest's `pii` block).
 */
export class PiiRedactor {
  private readonly numbers = new Map<string, number>();
  private readonly next = new Map<PiiKind, number>();

  readonly pii: ResolvedPii;
  private readonly counters: Counters;
  private readonly scope: string;

  constructor(pii: ResolvedPii, counters: Counters, scope = "any") {
    this.pii = pii;
    this.counters = counters;
    this.scope = scope;
  }

  placeholder(kind: PiiKind, key: string): string {
    const id = `${kind}\u0000${key}`;
    let n = this.numbers.get(id);
    if (n === undefined) {
      if (this.numbers.size === 0) count(this.counters, `pii_records.${this.scope}`);
      n = (this.next.get(kind) ?? 0) + 1;
      this.next.set(kind, n);
      this.numbers.set(id, n);
      count(this.counters, `pii_values.${this.scope}.${kind}`);
    }
    return `<${PLACEHOLDER_NAME[kind]}_${n}>`;
  }

  /** `text` with its personal data replaced; counts `pii.<kind>` per replacement. */
  redact(text: string): string {
    const spans = findPii(text, this.pii, this.counters, this.scope);
    if (spans.length === 0) return text;
    let out = "";
    let at = 0;
    for (const span of spans) {
      out += text.slice(at, span.start) + this.placeholder(span.kind, span.key);
      at = span.end;
      count(this.counters, `pii.${this.scope}.${span.kind}`);
    }
    return out + text.slice(at);
  }
}

/** One text on its own (a quarantine excerpt, a source label): numbering starts afresh. */
export function redactPii(text: string, pii: ResolvedPii | null, counters: Counters = new Map(), scope = "any"): string {
  return pii ? new PiiRedactor(pii, counters, scope).redact(text) : text;
}
