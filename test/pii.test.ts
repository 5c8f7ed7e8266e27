import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { normalizeTrajectory } from "../src/normalize/normalize-trajectory.ts";
import { ibanValid } from "../src/normalize/pii/iban.ts";
import { ipRange } from "../src/normalize/pii/ip.ts";
import { luhnValid } from "../src/normalize/pii/luhn.ts";
import { findPii, PII_KINDS, PiiRedactor, type PiiSettings, resolvePii } from "../src/normalize/pii/pii.ts";
import { redactQuarantineEntry } from "../src/normalize/redact-output.ts";
import { DEMO_CONFIG, ROOT, UNCAPPED_NORMALIZE_SETTINGS } from "./helpers.ts";
import { parseLabelledCorpus, scoreCorpus } from "./support/pii-corpus.ts";

const SETTINGS: PiiSettings = {
  enabled: true,
  // Every kind but names (off by default; the corpus test below turns them on too).
  kinds: Object.fromEntries(PII_KINDS.map((kind) => [kind, kind !== "person_name"])) as PiiSettings["kinds"],
  phone_countries: ["US"],
  ip: { private: "keep", documentation: "keep" },
  domains: {},
};
const ALL = resolvePii({ ...SETTINGS, kinds: { ...SETTINGS.kinds, person_name: true } }) ?? (undefined as never);

function redact(text: string, settings: PiiSettings = SETTINGS) {
  const counters = new Map<string, number>();
  const pii = resolvePii(settings);
  const out = pii ? new PiiRedactor(pii, counters).redact(text) : text;
  return { text: out, counters: Object.fromEntries(counters) };
}

describe("PII detectors: true positives", () => {
  it.each([
    ["email", "mail alice.martin@example.com today", "mail <EMAIL_1> today"],
    ["email in angle brackets", "From: Sarah <sarah.kim@protonmail.com>", "From: Sarah <<EMAIL_1>>"],
    ["email with plus and subdomain", "bob.chen+work@mail.corp-x.co.uk,", "<EMAIL_1>,"],
    ["international phone", "call +44 20 7946 0958 now", "call <PHONE_1> now"],
    ["US national phone", "tel (415) 555-2671.", "tel <PHONE_1>."],
    ["French mobile", "+33 6 12 34 56 78", "<PHONE_1>"],
    ["public IPv4 with port", "from 185.199.108.153:443", "from <IP_1>:443"],
    ["public IPv4 with prefix", "route 81.2.69.0/24", "route <IP_1>/24"],
    ["public IPv6", "addr 2001:4860:4860::8888 ok", "addr <IP_1> ok"],
    ["bracketed IPv6", "http://[2606:4700:4700::1111]:53/", "http://[<IP_1>]:53/"],
    ["Visa test card spaced", "card 4111 1111 1111 1111 exp", "card <CREDIT_CARD_1> exp"],
    ["Amex test card", "amex 378282246310005", "amex <CREDIT_CARD_1>"],
    ["Mastercard dashed", "5555-5555-5555-4444", "<CREDIT_CARD_1>"],
    ["IBAN compact", "iban=GB29NWBK60161331926819;", "iban=<IBAN_1>;"],
    ["IBAN grouped, next word kept", "DE89 3704 0044 0532 0130 00 EUR", "<IBAN_1> EUR"],
    // Shapes the generated corpus (test/pii-generated.test.ts) found missed or mangled:
    [
      "IPv4 after a bare = (logfmt, .env, kernel logs)",
      "ip=44.200.35.98 SRC=65.216.90.174 DST=10.0.0.2",
      "ip=<IP_1> SRC=<IP_2> DST=10.0.0.2",
    ],
    [
      "values after an escaped line break in JSON text",
      '"Blocked:\\n133.123.146.246\\nana@example.com\\n2a02:26f0::ff44:8c98"',
      '"Blocked:\\n<IP_1>\\n<EMAIL_1>\\n<IP_2>"',
    ],
    ["a host after user@", "ssh deploy@81.2.69.142 -p 22", "ssh deploy@<IP_1> -p 22"],
    ["a version word inside a host name is not a version", "a@valuable-version.org,65.216.90.174", "<EMAIL_1>,<IP_1>"],
    ["a phone before a comma and a hex column", "+48 75 824 42 07,2a00:1450:4001:82a::200e", "<PHONE_1>,<IP_1>"],
    ["a phone at a sentence's end", "Contact: +49-2047-343473. 123+ connections", "Contact: <PHONE_1>. 123+ connections"],
    ["E.164 digits are a phone, not a card", "phone: +4941260009759", "phone: <PHONE_1>"],
  ])("%s", (_name, input, expected) => {
    expect(redact(input).text).toBe(expected);
  });

  it("checksums: Luhn and mod-97", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(ibanValid("GB29NWBK60161331926819")).toBe(true);
    expect(ibanValid("GB28NWBK60161331926819")).toBe(false);
  });

  it("IP ranges: private and documentation kept by default, redacted on request", () => {
    expect(ipRange("10.1.2.3")).toBe("private");
    expect(ipRange("fe80::1")).toBe("private");
    expect(ipRange("192.0.2.10")).toBe("documentation");
    expect(ipRange("2001:db8::1")).toBe("documentation");
    expect(ipRange("93.184.216.34")).toBe("public");
    const text = "10.0.0.5 192.168.1.1 127.0.0.1 192.0.2.10 2001:db8::1 93.184.216.34";
    const kept = redact(text);
    expect(kept.text).toBe("10.0.0.5 192.168.1.1 127.0.0.1 192.0.2.10 2001:db8::1 <IP_1>");
    expect(kept.counters).toMatchObject({ "pii.any.ip": 1, "pii_kept.any.ip_private": 3, "pii_kept.any.ip_documentation": 2 });
    const all = redact(text, { ...SETTINGS, ip: { private: "redact", documentation: "redact" } });
    expect(all.text).toBe("<IP_1> <IP_2> <IP_3> <IP_4> <IP_5> <IP_6>");
  });
});

describe("PII detectors: false positives", () => {
  it.each([
    ["dotted versions", "Version: 8.0.1.5, protobuf 4.25.3.0, v1.2.3.4, numpy==1.26.4.0, app@1.2.3.4"],
    ["OIDs and long dotted runs", "oid 1.3.6.1.4.1.311 and 1.2.3.4.5"],
    ["timestamps", "2024-01-15T12:30:45Z 2024-06-02 14:05:33.123 ts=1700000000 1717336800000 [02/Jun/2024:14:07:01 +0000]"],
    ["ports and pids", "0.0.0.0:8080->80/tcp pid 23817 port 52144 sshd[23930]"],
    ["UUIDs and hashes", "550e8400-e29b-41d4-a716-446655440000 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 e3b0c442"],
    ["MAC addresses and code", "link/ether 02:42:ac:11:00:02 std::vector<int> a::b dead::beef Foo::Bar::baz"],
    ["numbers in code", "MOD = 1000000007; x % 4294967296; size 8589934592"],
    ["package specs and decorators", "lodash@4.17.21 @types/node image@2x.png user@host"],
    ["ISBN, DOI, ISSN", "ISBN 978-3-16-148410-0 DOI 10.1000/182 ISSN 2049-3630"],
    ["a random 16-digit id that fails Luhn", "order 4000123412341235"],
    ["a browser version in a user agent", "Mozilla/5.0 Chrome/125.0.6422.141 Safari/537.36"],
    ["a bare 10-digit number without a phone word", "size 8589934592 bytes"],
    ["browser versions outside a user agent", "Version 122.0.5798.206 (Official Build) (64-bit) on Chrome 122.0.6445.142"],
    ["4-part versions in package output", '├── @types/node@11.23.7.76\nbump webpack@15.16.2.95 (#9078)\n"rules_version": "8.6.6.203"'],
  ])("%s: untouched", (_name, input) => {
    expect(redact(input).text).toBe(input);
  });
});

describe("PII placeholders: consistent within a trajectory", () => {
  const trajectory: Trajectory = {
    id: "t1",
    domain: "web",
    source: { uri: "x.jsonl", line: 1, format: "canonical" },
    task: "Email Alice at alice@example.com",
    turns: [
      { action: "click('Alice')", observation: "Alice <alice@example.com> Bob <bob@example.org> +1 202-555-0143" },
      { action: "type('ALICE@example.com')", observation: "To: alice@example.com, phone +1 (202) 555-0143, from 81.2.69.142" },
    ],
  };

  it("the same value keeps its number across fields and turns, spellings included", async () => {
    const counters = new Map<string, number>();
    const settings = { ...UNCAPPED_NORMALIZE_SETTINGS, pii: SETTINGS };
    const out = await normalizeTrajectory({ ...trajectory, domain: "search" }, settings, counters);
    expect(out.task).toBe("Email Alice at <EMAIL_1>");
    expect(out.turns[0]?.observation).toBe("Alice <<EMAIL_1>> Bob <<EMAIL_2>> <PHONE_1>");
    expect(out.turns[1]?.action).toBe("type('<EMAIL_1>')");
    expect(out.turns[1]?.observation).toBe("To: <EMAIL_1>, phone <PHONE_1>, from <IP_1>");
    expect(counters.get("pii.search.email")).toBe(5);
    expect(counters.get("pii_values.search.email")).toBe(2);
    expect(counters.get("pii.search.phone")).toBe(2);
    expect(counters.get("pii_records.search")).toBe(1);
    // A second trajectory starts its numbering afresh.
    const again = await normalizeTrajectory({ ...trajectory, id: "t2", domain: "search", task: "bob@example.org" }, settings, counters);
    expect(again.task).toBe("<EMAIL_1>");
  });

  it("off by default, and per domain", async () => {
    const counters = new Map<string, number>();
    const plain = { ...trajectory, domain: "search" as const };
    const off = await normalizeTrajectory(plain, UNCAPPED_NORMALIZE_SETTINGS, counters);
    expect(off.turns).toEqual(plain.turns);
    const perDomain: PiiSettings = { ...SETTINGS, enabled: false, domains: { mcp: { enabled: true, kinds: { phone: false } } } };
    const settings = { ...UNCAPPED_NORMALIZE_SETTINGS, pii: perDomain };
    expect((await normalizeTrajectory(plain, settings, counters)).turns).toEqual(plain.turns);
    const { task: _task, ...untasked } = plain;
    const mcp = await normalizeTrajectory(
      { ...untasked, domain: "mcp", turns: [{ action: "q", observation: "a@b.io +1 202-555-0143" }] },
      settings,
      counters,
    );
    expect(mcp.turns[0]?.observation).toBe("<EMAIL_1> +1 202-555-0143");
  });

  it("quarantine entries: personal data gone from the excerpt, reason and source", () => {
    const entry = redactQuarantineEntry(
      {
        source: { uri: "dumps/alice@example.com.jsonl", line: 3, format: "canonical" },
        stage: "validate",
        reason: "bad turn",
        excerpt: '{"email":"alice@example.com","phone":"+44 20 7946 0958","x":"bob@exa…',
      },
      { secrets: true, pii: SETTINGS },
    );
    expect(JSON.stringify(entry)).not.toMatch(/alice|7946|bob@/);
    expect(entry.excerpt).toContain("<EMAIL_1>");
  });

  it("defaults.yaml: the pii block parses, off", () => {
    const { config } = loadConfig(DEMO_CONFIG);
    expect(config.normalize.pii.enabled).toBe(false);
    expect(Object.keys(config.normalize.pii.kinds).sort()).toEqual([...PII_KINDS].sort());
  });
});

/**
 * Errors the detectors are known to make on the corpus, kept in it so the measurement is honest.
 * A 16-digit id with a Visa prefix that passes Luhn (one random id in ten) is a card to any
 * checksum detector; telling them apart needs context no detector here looks at.
 */
const KNOWN_ERRORS = ['terminal uuid-hash: false positive credit_card "4000123412341234"'];

describe("PII: precision and recall on the labelled corpus", () => {
  const docs = parseLabelledCorpus(readFileSync(join(ROOT, "test/fixtures/pii/corpus.txt"), "utf8"));
  const { report, errors } = scoreCorpus(docs, PII_KINDS, (text) => findPii(text, ALL));

  it("has every kind labelled but national ids and addresses (their own corpora), in at least 10 documents", () => {
    expect(docs.length).toBeGreaterThanOrEqual(10);
    const labelled = new Set(docs.flatMap((d) => d.spans.map((s) => s.kind)));
    expect([...labelled].sort()).toEqual(PII_KINDS.filter((k) => k !== "national_id" && k !== "postal_address").sort());
  });

  it("recall >= 0.98 for every kind, precision >= 0.95 (cards: see KNOWN_ERRORS)", () => {
    console.log("PII corpus:", JSON.stringify(report), errors.length ? `\n${errors.join("\n")}` : "");
    expect(errors).toEqual(KNOWN_ERRORS);
    for (const [kind, { precision, recall, tp, fn }] of Object.entries(report)) {
      // Kinds with no value here (national ids, addresses): any finding is in `errors` above.
      if (tp + fn === 0) continue;
      expect(recall, kind).toBeGreaterThanOrEqual(0.98);
      // Cards: 4 true ones and the known false positive above.
      expect(precision, kind).toBeGreaterThanOrEqual(kind === "credit_card" ? 0.75 : 0.95);
    }
  });
});
