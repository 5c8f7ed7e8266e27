import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findNationalIds } from "../src/normalize/pii/national-id.ts";
import { nhsValid } from "../src/normalize/pii/national-ids/formats.ts";
import { ROOT } from "./helpers.ts";
import { parseLabelledCorpus, scoreCorpus } from "./support/pii-corpus.ts";

/** The ids found in `text`, as written, with their keys. */
function found(text: string): Array<[string, string]> {
  return findNationalIds(text).map((s) => [text.slice(s.start, s.end), s.key]);
}

describe("national ids: true positives per country", () => {
  it.each([
    // Standing alone: letters, or the format's own punctuation.
    ["ES DNI", "DNI del titular: 47764484Q.", "47764484Q", "ES:47764484Q"],
    ["ES DNI with a dash", "documento 04912701-Q", "04912701-Q", "ES:04912701Q"],
    ["ES DNI that reads as a date, after its name", "DNI: 20240517B", "20240517B", "ES:20240517B"],
    ["ES NIE", "NIE X3006987J (residente)", "X3006987J", "ES:X3006987J"],
    ["IT codice fiscale", "Codice fiscale: RSSMRA85T10A562S", "RSSMRA85T10A562S", "IT:RSSMRA85T10A562S"],
    ["MX CURP", '{"curp":"SUCD750521HDFCRT08"}', "SUCD750521HDFCRT08", "MX:SUCD750521HDFCRT08"],
    ["FI HETU with a check letter", "hetu 131052-308T", "131052-308T", "FI:131052-308T"],
    ["FI HETU, 2023 century sign", "| Emma | 010594Y9032 |", "010594Y9032", "FI:010594Y9032"],
    ["CN resident id", '"身份证号":"110105197409010146"', "110105197409010146", "CN:110105197409010146"],
    ["CN resident id ending in X", "ID 32010220030717155X ok", "32010220030717155X", "CN:32010220030717155X"],
    ["FR NIR grouped", "N° SS : 2 97 07 49 579 668 51", "2 97 07 49 579 668 51", "FR:297074957966851"],
    ["FR NIR compact", "nir;183018180415094;", "183018180415094", "FR:183018180415094"],
    ["BR CPF punctuated", "cliente 599.957.014-05 ativo", "599.957.014-05", "BR:59995701405"],
    ["BE national number punctuated", "Numéro national 85.09.17-865.85", "85.09.17-865.85", "BE:85091786585"],
    ["CH AHV dotted", "AHV-Nr. 756.5651.4316.25", "756.5651.4316.25", "CH:7565651431625"],
    ["CL RUN dotted", "--rut 16.896.595-8", "16.896.595-8", "CL:168965958"],
    ["KR resident registration number", '"rrn":"870523-1399210"', "870523-1399210", "KR:8705231399210"],
    ["IN Aadhaar grouped", 'value="6369 3030 2013"', "6369 3030 2013", "IN:636930302013"],
    ["DE Steuer-IdNr grouped", "IdNr 64 936 721 804", "64 936 721 804", "DE:64936721804"],
    // Digit-only shapes: after their name.
    ["BR CPF bare after CPF", "Emitindo NF-e para CPF 72545247928", "72545247928", "BR:72545247928"],
    ["BR CPF as a key", "cpf=54003862457 valor=R$ 1.299,90", "54003862457", "BR:54003862457"],
    ["BE national number bare", '{"insz":"93070329862"}', "93070329862", "BE:93070329862"],
    ["CH AHV bare", "AHV 7561185889192", "7561185889192", "CH:7561185889192"],
    ["CL RUN undotted", "RUT: 5680989-9", "5680989-9", "CL:56809899"],
    ["IN Aadhaar bare", "aadhaar_no: 807167173921", "807167173921", "IN:807167173921"],
    ["DE Steuer-ID bare", "Steuer-ID: 43962076151", "43962076151", "DE:43962076151"],
    ["CA SIN spaced", "SIN:        486 520 729", "486 520 729", "CA:486520729"],
    ["CA SIN dashed in JSON", '{"sin":"324-363-407"}', "324-363-407", "CA:324363407"],
    ["GB NHS number", "Your NHS number is 409 922 3787.", "409 922 3787", "GB:4099223787"],
    ["GB NHS number as a key", '"nhs_number":"6291885875"', "6291885875", "GB:6291885875"],
    ["NL BSN", "BSN: 565778729", "565778729", "NL:565778729"],
    ["NL BSN dotted", "Burgerservicenummer 1760.30.311", "1760.30.311", "NL:176030311"],
    ["PL PESEL", "PESEL 95070937804 OK", "95070937804", "PL:95070937804"],
    ["SE personnummer", "personnummer: 760607-5377", "760607-5377", "SE:760607-5377"],
    ["SE personnummer with century", "Personnummer 19800326-5546", "19800326-5546", "SE:800326-5546"],
    ["FI HETU all digits, after its name", "Henkilötunnus: 121271-2582", "121271-2582", "FI:121271-2582"],
    ["NO fødselsnummer", "fødselsnummer 130459 34572", "130459 34572", "NO:13045934572"],
    ["TR T.C. Kimlik No", '"tc_kimlik_no":"51478061338"', "51478061338", "TR:51478061338"],
    ["RO CNP", "Ion Popescu, CNP 1881123267876, domiciliat", "1881123267876", "RO:1881123267876"],
    ["KR bare after its name", "주민등록번호 7502261312791", "7502261312791", "KR:7502261312791"],
    ["a generic name: national id", "national_id=84110661753 verified", "84110661753", "PL:84110661753"],
    ["a generic name: tax id, for a strong checksum", "Tax ID (DE): 76214898037", "76214898037", "DE:76214898037"],
  ])("%s", (_name, text, value, key) => {
    expect(found(text)).toEqual([[value, key]]);
    expect(findNationalIds(text)[0]?.kind).toBe("national_id");
  });

  it("two spellings of one id share a key", () => {
    const keys = (text: string) => findNationalIds(text).map((s) => s.key);
    expect(keys("CPF 390.533.447-05 / cpf: 39053344705 / CPF 390533447-05")).toEqual([
      "BR:39053344705",
      "BR:39053344705",
      "BR:39053344705",
    ]);
    expect(keys("personnummer 19800326-5546, personnummer 800326-5546, personnummer 8003265546")).toEqual([
      "SE:800326-5546",
      "SE:800326-5546",
      "SE:800326-5546",
    ]);
    expect(keys("NIR 2 97 07 49 579 668 51 = 297074957966851")).toEqual(["FR:297074957966851", "FR:297074957966851"]);
  });

  it("a table column's header names the ids under it", () => {
    const psql = [
      " id |     name      |    bsn    | city",
      "----+---------------+-----------+---------",
      "  1 | Jan de Vries  | 565778729 | Utrecht",
      "  2 | Eva Bakker    | 117931846 | Delft",
      "  3 | Piet Jansen   | 265624411 | Gouda",
    ].join("\n");
    expect(found(psql).map(([v]) => v)).toEqual(["565778729", "117931846", "265624411"]);
    const csv =
      "imie,nazwisko,pesel,telefon\nJan,Kowalski,86080811316,+48 600 123 456\nAnna,Nowak,98110878891,+48 601 234 567\nEwa,Wójcik,95070937804,+48 603 456 789";
    expect(found(csv).map(([v]) => v)).toEqual(["86080811316", "98110878891", "95070937804"]);
    const aligned =
      "NAME              PERSONNUMMER     GROSS\nAnna Lindqvist    19800326-5546    48200\nErik Johansson    750928-2724      51900";
    expect(found(aligned).map(([v]) => v)).toEqual(["19800326-5546", "750928-2724"]);
    // The same numbers under another column's header are not ids.
    expect(found(psql.replace("bsn ", "kvk "))).toEqual([]);
  });

  it("the NHS number's mod 11 check", () => {
    expect(nhsValid("9434765919")).toBe(true);
    expect(nhsValid("9434765918")).toBe(false);
    expect(nhsValid("1111111111")).toBe(false);
  });
});

describe("national ids: false positives", () => {
  it.each([
    [
      "timestamps and epoch times",
      "2024-05-17T14:12:05Z 2024-05-17 14:12:05.123 epoch=1715955005 ms=1715955005123 20240517141205 202405171412",
    ],
    ["date stamps that are valid DNIs", "build 20240517B, release 19991231E"],
    ["order, invoice and tracking numbers", "order 5000123456 · invoice INV-2024-000481 · Amazon 112-3456789-1234567 · 1Z999AA10123456784"],
    ["phone numbers", "+1 (415) 555-2671, 415 555 2671, +44 20 7946 0958, 020 7946 0958, +34 612 345 678, +55 11 98765-4321, 11987654321"],
    ["card numbers", "4111 1111 1111 1111 · 5555555555554444 · 3782 822463 10005 · 6011-0009-9013-9424"],
    ["hashes and UUIDs", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 550e8400-e29b-41d4-a716-446655440000 e3b0c442"],
    ["versions", "v2024.05.123 Chrome/125.0.6422.141 protobuf 4.25.3.0 2.4.18-rc1 1760.30.311-beta"],
    ["ports, pids, sizes", "pid 48213 port 52144 size 2147483648 bytes inode 131074 -rw-r--r-- 1 app app 390533447 part.parquet"],
    [
      "valid ids as bare numbers, no name",
      "users/123456782/orders 44051401359 bytes 39053344705 rows 565778729 cache 4048699954 x 760607-5377",
    ],
    [
      "valid ids inside paths, file names, URLs",
      "/srv/dump-565778729.sql.gz s3://b/47764484Q/x https://x.y/?id=390.533.447-05x 47764484Q.pdf",
    ],
    ["valid ids inside longer tokens", "A47764484Q X3006987JX 1756.5651.4316.25 0x12345678E abc390.533.447-05 12345678Za"],
    ["an AWS account id and meeting ids", "aws account 6369-3030-2013 region eu-west-1 · Zoom 812 345 678 · meeting 486-520-729"],
    ["a 12-digit number grouped like Aadhaar inside a card", "card 4111 6369 3030 2013"],
    ["EAN, IMEI, ISBN", "EAN 4006381333931 IMEI 356938035643809 ISBN 978-3-16-148410-0 UPC 036000291452"],
    ["snowflake ids", "discord user 175928847299117063 guild 81384788765712384 tweet 1790512345678901248"],
    ["date-time stamps of 15 and 18 digits", "run 202405171412051 · trade 202405171412051234 · batch 202511300945127"],
    ["thousands-grouped counts", "Total: 486 520 729 requests, 64 936 721 804 bytes"],
    [
      "a name of the id, but an invalid checksum",
      "BSN: 123456789 · PESEL 44051401358 · NHS 943 476 5918 · SIN 046 454 287 · CPF 111.111.111-11 · DNI 12345678A",
    ],
    ["the name belongs to another field", '{"cpf": null, "telefone": "72545247928"} · NHS number: (not recorded)\nPhone: 4048699954'],
    ["the name is far away", `PESEL ${"x".repeat(60)} 95070937804`],
    ["another number sits between the name and the candidate", "PESEL field 2024, ref 95070937804"],
    ["the Spanish word sin and the German nie are not acronyms", "sin 486520729 IVA · nie 324363407 wieder"],
    ["US SSN: no checksum, not covered", "SSN 123-45-6789 · ssn: 078-05-1120"],
    ["a generic name is not enough for a one-in-ten checksum", "tax id: 565778729 · national id 486 520 729 · SSN 4048699954"],
  ])("%s: nothing found", (_name, text) => {
    expect(found(text)).toEqual([]);
  });
});

describe("national ids: precision and recall on the labelled corpus", () => {
  const docs = parseLabelledCorpus(readFileSync(join(ROOT, "test/fixtures/pii/corpus-national-ids.txt"), "utf8"));

  it("the corpus is the size the measurement needs", () => {
    const marked = docs.flatMap((d) => d.spans.filter((s) => s.kind === "national_id").map((s) => d.text.slice(s.start, s.end)));
    const countries = new Set(docs.flatMap((d) => findNationalIds(d.text).map((s) => s.key.slice(0, 2))));
    expect(docs.length).toBeGreaterThanOrEqual(25);
    expect(marked.length).toBeGreaterThanOrEqual(40);
    expect(countries.size).toBeGreaterThanOrEqual(8);
  });

  it("recall >= 0.98 and precision >= 0.95", () => {
    const { report, errors } = scoreCorpus(docs, ["national_id"], findNationalIds);
    console.log("National-id corpus:", JSON.stringify(report), errors.length ? `\n${errors.join("\n")}` : "");
    const score = report.national_id;
    expect(score?.recall).toBeGreaterThanOrEqual(0.98);
    expect(score?.precision).toBeGreaterThanOrEqual(0.95);
  });

  it("finds nothing in the general PII corpus, which has no national ids", () => {
    const general = parseLabelledCorpus(readFileSync(join(ROOT, "test/fixtures/pii/corpus.txt"), "utf8"));
    const findings = general.flatMap((d) => found(d.text).map(([v, k]) => `${d.name}: ${v} (${k})`));
    expect(findings).toEqual([]);
  });
});
