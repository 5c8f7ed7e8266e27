import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findPersonNames } from "../src/normalize/pii/person-name.ts";
import { findPostalAddresses } from "../src/normalize/pii/postal-address.ts";
import { ROOT } from "./helpers.ts";
import { type LabelledSpan, parseLabelledCorpus, scoreCorpus } from "./support/pii-corpus.ts";

const KINDS = ["person_name", "postal_address"];
const findBoth = (text: string) => [...findPersonNames(text), ...findPostalAddresses(text)];
const names = (text: string) => findPersonNames(text).map((s) => text.slice(s.start, s.end));
const addresses = (text: string) => findPostalAddresses(text).map((s) => text.slice(s.start, s.end));

describe("person names: true positives", () => {
  it.each([
    ["a contact in a tree", '[listitem] "Alice Martin"', ["Alice Martin"]],
    ["an Android text view", 'TextView "Dana Whitfield" [160,360][900,420]', ["Dana Whitfield"]],
    ["a name-part key", '{"first_name":"Oluwaseun","last_name":"Adeyemi"}', ["Oluwaseun", "Adeyemi"]],
    ["a full-name key, no lexicon needed", '{"full_name":"Kwame Mensah"}', ["Kwame Mensah"]],
    ["a name key with a known given name", '{"id":7,"name":"Sarah O\'Brien"}', ["Sarah O'Brien"]],
    ["camelCase key", '{"displayName":"Laura Nguyen"}', ["Laura Nguyen"]],
    ["a form field value", '[textbox] "Full name" value="Nguyễn Thị Lan"', ["Nguyễn Thị Lan"]],
    ["a Python keyword argument", '    name="Rosa Delgado",', ["Rosa Delgado"]],
    ["an npm author with address", '"author": "John-David Dalton <jdd@example.com>"', ["John-David Dalton"]],
    [
      "git author and trailers",
      "Author: Linus Ekström <l@example.se>\n    Signed-off-by: Mei-Ling Chou <m@example.tw>",
      ["Linus Ekström", "Mei-Ling Chou"],
    ],
    ["git blame", "8a1b2c3d (Olusegun Bakare 2024-05-20 09:30:55 +0100 42)   return x;", ["Olusegun Bakare"]],
    ["git shortlog", "   142\tMei-Ling Chou\n    31\tdependabot[bot]", ["Mei-Ling Chou"]],
    ["passwd GECOS", "dwhitfield:x:1003:1003:Dana Whitfield,Room 214,,:/home/dwhitfield:/bin/bash", ["Dana Whitfield"]],
    ["a display name before an address", "From: Elena Petrova <elena@example.net>", ["Elena Petrova"]],
    ["titles are not part of the name", "Dr. Samuel Okonkwo, MD; Dear Ms. Thompson,", ["Samuel Okonkwo", "Thompson"]],
    ["greeting and sign-off", "Hi Laura, the keys are at the office. Best,\nElena", ["Laura", "Elena"]],
    ["a byline with two names", "By Rebecca Liu and Omar Haddad · June 10, 2024", ["Rebecca Liu", "Omar Haddad"]],
    ["a labelled list", "Geschäftsführer: Klaus Vogel, Sabine Vogel-Brandt", ["Klaus Vogel", "Sabine Vogel-Brandt"]],
    ["prose, possessive dropped", "chiefly known for her work on Charles Babbage's engine", ["Charles Babbage"]],
    [
      "a surname found again after the full name",
      "Supervisor Ana Morales spoke. Later Morales told reporters.",
      ["Ana Morales", "Morales"],
    ],
  ])("%s", (_name, input, expected) => {
    expect(names(input)).toEqual(expected);
  });

  it("keys: lower case, whitespace collapsed, so spellings share a placeholder", () => {
    const [a, b] = findPersonNames('{"name":"Alice  Martin"} and ALICE MARTIN? no: "Alice Martin"');
    expect(a?.key).toBe("alice martin");
    expect(b?.key).toBe("alice martin");
  });
});

describe("person names: false positives", () => {
  it.each([
    ["UI labels", '[button] "Sign In"\n[button] "New Message"\nTextView "Mark As Read"\n[heading] "Grace Period Ends Soon"'],
    ["code identifiers", "class UserService extends BaseService { getUserName() { return this.user.firstName; } }"],
    ["packages and products in name keys", '{"name":"lodash","version":"4.17.21"} {"name":"Acme Open Source"} {"name":"Keychron K8 Pro"}'],
    ["generic name keys need a known name", '{"name":"Image Classification"} {"name":"Apache Arrow"} {"name":"Max Retries"}'],
    ["companies and services before an address", "To: Property Management <leasing@example.com>\nCommit: GitHub <noreply@github.com>"],
    ["places named like people", "Austin, TX · Victoria Station · Charlotte Douglas International Airport · São Paulo"],
    ["organisations named after people", "Bäckerei Vogel GmbH · Anne Frank House · Harry Potter Shop"],
    ["a name inside a street", "88 Colin P Kelly Jr St, San Francisco, CA 94107"],
    ["commit messages and logs", "Merge pull request #812 from alice/fix-timeout\nBump Express from 4.18.2 to 4.19.2\nHTTP/1.1 200 OK"],
    ["greetings without a name", "Hi team, Dear Customer, Thanks, Team"],
    ["headings and version strings", "## Getting Started\nVisual Studio Code 1.89 · Ruby on Rails 7.1 Release Notes"],
  ])("%s: nothing found", (_name, input) => {
    expect(names(input)).toEqual([]);
  });
});

describe("postal addresses: true positives", () => {
  it.each([
    [
      "US with directional, city, state, ZIP",
      "The White House, 1600 Pennsylvania Ave NW, Washington, DC 20500.",
      ["1600 Pennsylvania Ave NW, Washington, DC 20500"],
    ],
    ["US with unit", "Work: 500 W Madison St #1200, Chicago, IL 60661", ["500 W Madison St #1200, Chicago, IL 60661"]],
    ["US street alone", '"line1": "742 Evergreen Terrace"', ["742 Evergreen Terrace"]],
    ["a street named by its type", "at 200 Broadway, Cambridge, MA 02139.", ["200 Broadway, Cambridge, MA 02139"]],
    ["a weak type with locality", "1 Infinite Loop, Cupertino, CA 95014", ["1 Infinite Loop, Cupertino, CA 95014"]],
    ["Canada", "123 Queen St W, Suite 500, Toronto, ON M5H 2M9", ["123 Queen St W, Suite 500, Toronto, ON M5H 2M9"]],
    ["UK", "10 Downing Street, London SW1A 2AA", ["10 Downing Street, London SW1A 2AA"]],
    ["UK with the flat first", "Flat 4, 27 Kingsley Road, Manchester M21 9GH ·", ["Flat 4, 27 Kingsley Road, Manchester M21 9GH"]],
    ["German", "Filiale: Unter den Linden 77, 10117 Berlin", ["Unter den Linden 77, 10117 Berlin"]],
    ["German compound, no postcode", "Leopoldstraße 77", ["Leopoldstraße 77"]],
    ["French", "12 rue de Rivoli, 75001 Paris", ["12 rue de Rivoli, 75001 Paris"]],
    ["Dutch", "Prinsengracht 263-267, 1016 GV Amsterdam", ["Prinsengracht 263-267, 1016 GV Amsterdam"]],
    ["Spanish", "Calle de Alcalá 42, 28014 Madrid", ["Calle de Alcalá 42, 28014 Madrid"]],
    ["Italian", "Via del Corso 12, 00186 Roma", ["Via del Corso 12, 00186 Roma"]],
    ["a block over two lines", "Hauptstraße 12\n80331 München\nTel", ["Hauptstraße 12\n80331 München"]],
    ["a PO box block", "PO Box 1234\nAustin, TX 78701\n", ["PO Box 1234\nAustin, TX 78701"]],
  ])("%s", (_name, input, expected) => {
    expect(addresses(input)).toEqual(expected);
  });

  it("keys: lower case, punctuation and whitespace collapsed", () => {
    const [a, b] = findPostalAddresses("221B Baker St., London NW1 6XE / 221b  baker st london nw1 6xe");
    expect(a?.key).toBe("221b baker st london nw1 6xe");
    expect(findPostalAddresses("221b Baker St, London NW1 6XE")[0]?.key).toBe(a?.key);
    expect(b).toBeUndefined();
  });
});

describe("postal addresses: false positives", () => {
  it.each([
    ["git stat", " 3 files changed, 47 insertions(+), 12 deletions(-)"],
    ["HTTP status and ports", "HTTP/1.1 200 OK\nServer listening on 8080 port, 4 workers\nLISTEN 0 511 0.0.0.0:8080"],
    ["a street word in a title", "version 2 Street Fighter edition; Fix Street Fighter 6 input lag on Route 53"],
    [
      "numbered things that are not streets",
      "Building 42, Floor 3 · Conference Room 4B · Terminal 5 · Row 12 Column 3 · Section 12 of the lease",
    ],
    ["headings with a number", "Top 10 Central Park Restaurants · Chapter 3 The Long Way Home · Step 3 Of 10"],
    ["weak street types without a locality", "1 Infinite Loop · found 12 Way to go · sprint 12 Square demo"],
    ["a street without a number", "Head south on Hacker Way toward Bayfront Expy; Turn right onto Willow Rd"],
    ["code", "const street = tokens.find((t) => STREET_TYPES.has(t));\nfor (let i = 0; i < 3; i++) Spring(5);\nString 12"],
    [
      "docker, kubectl and apt",
      "[+] Running 3/3\n ✔ Container app-db-1   Started   0.6s\n0 upgraded, 4 newly installed, 0 to remove and 12 not upgraded.",
    ],
    ["versions and dates", "Spring Boot 3.2.5 · Offering 3 new plans · June 3, 2024 · Python 3.12 Release"],
  ])("%s: nothing found", (_name, input) => {
    expect(addresses(input)).toEqual([]);
  });
});

/**
 * Names and addresses in the corpus of the other kinds (test/fixtures/pii/corpus.txt): unlabelled
 * there because they were not kinds then. These are all the new detectors find in it, and each is
 * a person's name.
 */
const CORPUS_TXT_FINDINGS = [
  "web contacts-tree: person_name Alice Martin",
  "web contacts-tree: person_name Bob Chen",
  "web contacts-tree: person_name Claire Dubois",
  "mcp customers-json: person_name Dana Whitfield",
  "mcp customers-json: person_name Erik Larsen",
  "os mail-tree: person_name Sarah Kim",
];

describe("names and addresses: precision and recall on the labelled corpus", () => {
  const docs = parseLabelledCorpus(readFileSync(join(ROOT, "test/fixtures/pii/corpus-names-addresses.txt"), "utf8"));
  const { report, errors } = scoreCorpus(docs, KINDS, findBoth);

  it("has at least 25 documents, 60 names and 30 addresses", () => {
    expect(docs.length).toBeGreaterThanOrEqual(25);
    const count = (kind: string) => docs.reduce((n, d) => n + d.spans.filter((s) => s.kind === kind).length, 0);
    expect(count("person_name")).toBeGreaterThanOrEqual(60);
    expect(count("postal_address")).toBeGreaterThanOrEqual(30);
  });

  /**
   * Thresholds are the measured values less a small margin (measured when written: names
   * precision 95/99 = 0.960, recall 95/107 = 0.888; addresses 59/59 for both). Names missed are
   * those no context vouches for and whose given name compromise's lexicon doesn't know (Kenji
   * Watanabe in prose, Kwame Mensah in a table cell, Priya Raghunathan under a bare "name" key,
   * Frank DeLuca: "frank" is an adjective to it), a name in a shortlog with spaces for its tab,
   * lone surnames and given names in prose (Powell, Klay, Priya, Kenji), "Martin, Alice" in a CSV
   * cell, and "Augusta Ada King" found as "Ada King"; the other false positives are companies named
   * like people (Morgan Stanley, Jack Daniel's) and a title (Countess of Lovelace). The addresses
   * are in formats the rules were written for, so their score says little about other formats.
   */
  it("names: precision >= 0.95, recall >= 0.87; addresses: precision and recall >= 0.97", () => {
    console.log("Names/addresses corpus:", JSON.stringify(report), errors.length ? `\n${errors.join("\n")}` : "");
    expect(report.person_name?.precision).toBeGreaterThanOrEqual(0.95);
    expect(report.person_name?.recall).toBeGreaterThanOrEqual(0.87);
    expect(report.postal_address?.precision).toBeGreaterThanOrEqual(0.97);
    expect(report.postal_address?.recall).toBeGreaterThanOrEqual(0.97);
  });

  it("compromise's tagger alone (nlp(text).people()) does much worse on these shapes", async () => {
    const { default: nlp } = await import("compromise");
    type Term = { tags: string[]; offset: { start: number; length: number } };
    const people = (text: string): LabelledSpan[] =>
      (
        nlp(text)
          .people()
          .json({ offset: true, terms: { offset: true } }) as { terms: Term[] }[]
      ).flatMap((p) => {
        const terms = p.terms.filter((t) => !t.tags.includes("Honorific"));
        const first = terms[0];
        const last = terms[terms.length - 1];
        return first && last ? [{ kind: "person_name", start: first.offset.start, end: last.offset.start + last.offset.length }] : [];
      });
    const baseline = scoreCorpus(docs, ["person_name"], people).report.person_name;
    console.log("compromise people() on the corpus:", JSON.stringify(baseline));
    // Measured when written: precision 0.59, recall 0.56 (it takes "Thomas Okafor (Spouse", misses JSON values).
    expect(baseline?.precision).toBeLessThan(report.person_name?.precision ?? 0);
    expect(baseline?.recall).toBeLessThan(report.person_name?.recall ?? 0);
  });

  it("on corpus.txt: only the names that are really there", () => {
    const old = parseLabelledCorpus(readFileSync(join(ROOT, "test/fixtures/pii/corpus.txt"), "utf8"));
    const found = old.flatMap((d) => findBoth(d.text).map((s) => `${d.name}: ${s.kind} ${d.text.slice(s.start, s.end)}`));
    expect(found).toEqual(CORPUS_TXT_FINDINGS);
  });
});
