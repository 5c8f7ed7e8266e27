import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { SECRET_TYPES } from "../src/normalize/secrets.ts";
import { secretShapes } from "./fixtures/secrets/secret-shapes.ts";
import { ROOT } from "./helpers.ts";
import { writePlantedCorpus } from "./support/planted-secrets.ts";
import { filesUnder, readSampleText } from "./support/sample-files.ts";
import { expectSameRedaction, textsOf } from "./support/secrets-reference.ts";

const same = expectSameRedaction;

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** Every `\s` character, plus some that are not (NEL, zero-width space). */
const WHITESPACE = [
  "\t",
  "\n",
  "\r\n",
  "\v",
  "\f",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u200a",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u3000",
  "\ufeff",
  "\u0085",
  "\u200b",
];

/** Pieces a secret is made of or hides in: prefixes, near-misses, keys, separators, quotes, values. */
const FRAGMENTS: readonly string[] = [
  // vendor prefixes and near-misses
  "eyJ",
  ".eyJ",
  "eyJhbGciOiJIUzI1NiJ9",
  "sk-",
  "sk-ant-api03-",
  "sk-ant-xyz03-",
  "sk-proj-",
  "sk-None-",
  "T3BlbkFJ",
  "ghp_",
  "gho_",
  "ghx_",
  "github_pat_",
  "glpat-",
  "hf_",
  "xoxb-",
  "xoxz-",
  "xapp-1-",
  "https://hooks.slack.com/services/",
  "T0ABC123/B0DEF456/",
  "sk_live_",
  "rk_test_",
  "pk_live_",
  "whsec_",
  "AIza",
  "GOCSPX-",
  "ya29.",
  "AKIA",
  "ASIA",
  "A3TX",
  "AKIB",
  "8Q~",
  "Q~",
  "AccountKey=",
  "SharedAccessKey=",
  "?sig=",
  "&sig=",
  "&amp;sig=",
  "&#38;sig=",
  "\\u0026sig=",
  "npm_",
  "pypi-AgE",
  "dckr_pat_",
  "SG.",
  "dop_v1_",
  "dox_v1_",
  "shpat_",
  "shpxx_",
  "gsk_",
  "r8_",
  "dapi",
  "1234567890:AA",
  ":AA",
  "AGE-SECRET-KEY-1",
  "-----BEGIN RSA PRIVATE KEY-----",
  "-----BEGIN PRIVATE KEY-----",
  "-----END RSA PRIVATE KEY-----",
  "-----END PRIVATE KEY-----",
  "-----BEGIN CERTIFICATE-----",
  "-----BEGIN ",
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
  "<SECRET:github_token>",
  // positions: URLs, headers, keys
  "postgres://",
  "redis://:",
  "https://",
  "://",
  "app_user:",
  "@db.internal:5432/app",
  "@",
  "Authorization",
  "authorization",
  "Proxy-Authorization: ",
  "AUTHORIZATION=",
  "Bearer ",
  "Basic ",
  "Token ",
  "SSWS ",
  "x-api-key",
  "X-Api-Key: ",
  "x-goog-api-key",
  "Ocp-Apim-Subscription-Key",
  "private-token",
  "X-Auth-Token",
  "x-access-token",
  "aws_secret_access_key",
  "AWS_SECRET_ACCESS_KEY",
  "SecretAccessKey",
  "secret_key",
  "private_key_id",
  "private_key",
  "azure_client_secret",
  "AZURE_STORAGE_KEY",
  "AzurePassword",
  "auth",
  "Auth",
  "password",
  "PASSWORD",
  "DB_PASSWORD",
  "db.password",
  "user[password]",
  "passwd",
  "pwd",
  "api_key",
  "apiKey",
  "API key",
  "api-key",
  "client_secret",
  "clientSecret",
  "Client secret",
  "secret",
  "token",
  "access_token",
  "next_token",
  "page_token",
  "description",
  "name",
  "id",
  "key",
  // separators and quotes (also escaped, also HTML entities)
  "=",
  ":",
  " = ",
  ": ",
  "  :  ",
  "&#61;",
  "&#x3d;",
  "&#x3D;",
  "&#x3a;",
  '"',
  "'",
  '\\"',
  '\\\\"',
  '\\\\\\"',
  '\\\\\\\\"',
  "\\'",
  "\\",
  "\\n",
  "\\t",
  "\\r",
  "\\x",
  ",",
  ", ",
  ";",
  "&",
  ")",
  "}",
  "]",
  "[",
  "{",
  "(",
  "<",
  ">",
  "/",
  "-",
  "_",
  ".",
  "~",
  "+",
  "%",
  "#",
  "*",
  // whitespace, all of `\s` and some that is not
  " ",
  ...WHITESPACE,
  // colour codes, paths, ids
  "\u001b[1;32m",
  "[01;31m",
  "\u001b[K",
  "/var/secrets/",
  "job-",
  "ci-run-",
  "run_",
  "-21e2b49035be",
  // HTML form fields and accessibility-tree labels
  '<input name="api_key" value="',
  "<input type='password' value='",
  '<input id="password" autocomplete="off" type="text" value="',
  ' name="',
  " id=",
  " type=password",
  ' value="',
  " VALUE=",
  "value",
  "value=",
  "value: ",
  "textbox 'DB_PASSWORD', value='",
  '[12] textbox "API key" value=',
  "'Client secret': '",
  // values
  "xK9mQ2pL7vN4wR8t",
  "s3cr3tP4ssw0rd!",
  "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI",
  "0123456789abcdef0123456789abcdef01234567",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "Zm9vYmFyYmF6cXV4",
  b64("user:p4ssw0rd"),
  b64("deploy:s3cret-Tok3n"),
  "==",
  "changeme",
  `\${PASSWORD}`,
  "********",
  "os.environ",
  "self.password",
  "12345678",
  "abcdefgh",
  "é",
  "😀",
];

/** Random text: fragments in random order, some with their case changed, glued by random characters. */
const pieces = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FRAGMENTS) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...FRAGMENTS), fc.constantFrom("upper", "lower"))
      .map(([f, c]) => (c === "upper" ? f.toUpperCase() : f.toLowerCase())),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9]{1,70}$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9+/_~.-]{1,100}={0,2}$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-f0-9]{8,70}$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
);
const texts = fc.array(pieces, { minLength: 1, maxLength: 40 }).map((parts) => parts.join(""));

// Structured text: what each rule looks for, with its parts varied around every bound and case.
const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const chars = (alphabet: string, min: number, max: number) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: min, maxLength: max }).map((c) => c.join(""));
const cat = (...parts: fc.Arbitrary<string>[]) => fc.tuple(...parts).map((p) => p.join(""));
const lit = (value: string) => fc.constant(value);
const maybe = (arbitrary: fc.Arbitrary<string>) => fc.oneof(lit(""), arbitrary);
const anyCase = (arbitrary: fc.Arbitrary<string>) =>
  fc
    .tuple(arbitrary, pick("as is", "upper", "lower", "title"))
    .map(([text, c]) =>
      c === "upper"
        ? text.toUpperCase()
        : c === "lower"
          ? text.toLowerCase()
          : c === "title"
            ? text.replace(/\b[a-z]/g, (x) => x.toUpperCase())
            : text,
    );
/** A token body of `alphabet`, its length around the rule's bounds. */
const body = (alphabet: string, min: number, max = min + 12) => chars(alphabet, Math.max(0, min - 2), max + 2);
/** A random-looking value (letters and digits), of VALUE characters. */
const value = (min: number, max: number) =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: cat(
        chars("abcdefghijklmnopqrstuvwxyz", 1, 1),
        chars("0123456789", 1, 1),
        body(`${ALNUM}_-+/=.~!@#$%^*`, min - 2, max - 2),
      ),
    },
    { weight: 1, arbitrary: body(`${ALNUM}_-+/=.~!@#$%^*`, min, max) },
    {
      weight: 1,
      arbitrary: pick("changeme", `\${PASSWORD}`, "********", "os.environ", "self.password", "<SECRET:generic_password>", "aaaaaaaaaa"),
    },
  );
const SPACES = pick("", "", " ", "  ", ...WHITESPACE);
const BLANKS = pick("", "", " ", "\t", " \t ", "\n");
const QUOTE = pick("", "", '"', "'", '\\"', "\\'", '\\\\"', '\\\\\\"', '\\\\\\\\"', "\\");
const SEPARATOR = pick(":", "=", ":", "=", "&#61;", "&#x3d;", "&#x3D;", "&#x3a;", "==", ":=", "=>");
const BEFORE = pick(
  "",
  "",
  " ",
  "\n",
  "\\n",
  "\\t",
  "\\r",
  "\\x",
  "x",
  "_",
  "-",
  ".",
  "\\",
  '"',
  "{",
  "(",
  "[",
  "<",
  "/",
  "//",
  "=",
  ":",
  "job-",
  "run_",
  "\u001b[1;32m",
  "[01;31m",
  "é",
);
const AFTER = pick(
  "",
  "",
  " ",
  "\n",
  '"',
  "'",
  ",",
  ";",
  "&",
  ")",
  "}",
  "]",
  "\\",
  "<",
  ">",
  "-",
  "_",
  ".",
  "/",
  "x",
  "=",
  "\u00a0",
  "\u2028",
  "é",
);
const SECRET_WORD = pick(
  "password",
  "passwd",
  "passphrase",
  "pwd",
  "api_key",
  "apikey",
  "ApiKey",
  "secret",
  "client_secret",
  "secret_key",
  "access_key",
  "private_key",
  "token",
  "access_token",
  "auth_token",
  "bot_token",
  "next_token",
  "page_token",
  "key",
  "Password",
  "SECRET",
  "TOKEN",
);
/** `length` characters (at least the word's): a letter, characters of `alphabet`, then the secret word. */
const sized = (alphabet: string, lengths: fc.Arbitrary<number>) =>
  fc
    .tuple(lengths, SECRET_WORD, chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 1, 1), chars(alphabet, 80, 80))
    .map(([length, word, first, filler]) => (first + filler).slice(0, Math.max(0, length - word.length)) + word);
/** A key name: any key characters, often ending in a secret word, its length around 64. */
const keyName = fc.oneof(
  sized(`${ALNUM}_.-`, fc.integer({ min: 60, max: 68 })),
  cat(maybe(chars(`${ALNUM}_.-`, 0, 70)), maybe(pick("_", ".", "-")), SECRET_WORD),
  cat(chars("abcdefghijklmnopqrstuvwxyz", 1, 1), chars(`${ALNUM}_.-`, 50, 70), SECRET_WORD),
  cat(chars("abcdefghijklmnopqrstuvwxyz", 1, 1), chars(`${ALNUM}_.-`, 0, 70)),
  pick(
    "DB_PASSWORD",
    "db.password",
    "x.y.password",
    "user[password]",
    "API key",
    "Client secret",
    "aws.secret-key",
    "9password",
    "_password",
  ),
);
/** A label of the accessibility-tree rule (spaces allowed), its length around 41. */
const label = fc.oneof(
  sized(`${ALNUM} _.-`, fc.integer({ min: 37, max: 45 })),
  sized(`${ALNUM}    `, fc.integer({ min: 37, max: 45 })),
  cat(maybe(chars(`${ALNUM} _.-`, 0, 42)), maybe(pick(" ", "_")), SECRET_WORD),
  cat(chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1, 1), chars(`${ALNUM} _.-`, 30, 45)),
  pick("DB_PASSWORD", "API key", "Client secret", "Password", "name"),
);
const assignment = cat(BEFORE, QUOTE, keyName, QUOTE, SPACES, SEPARATOR, SPACES, QUOTE, value(6, 210), QUOTE, AFTER);
const labelled = fc
  .tuple(
    BEFORE,
    QUOTE,
    label,
    pick(true, true, false),
    QUOTE,
    BLANKS,
    pick("", ","),
    BLANKS,
    pick(":", "value=", "value :", "value\t:", "value=", "Value=", "=", "value"),
    BLANKS,
    QUOTE,
    value(6, 210),
    AFTER,
  )
  .map(([before, q, name, sameQuote, otherQuote, b1, comma, b2, sep, b3, q3, v, after]) =>
    [before, q, name, sameQuote ? q : otherQuote, b1, comma, b2, sep, b3, q3, v, after].join(""),
  );
const htmlField = cat(
  pick("<input ", "<input\n  ", "<textarea ", " ", "-"),
  fc.oneof(
    cat(
      anyCase(pick("name", "id", "ID")),
      BLANKS,
      lit("="),
      BLANKS,
      pick('"', "'", '\\"', '\\\\"'),
      keyName,
      pick('"', "'", '\\"', '\\\\"', ""),
    ),
    cat(anyCase(lit("type")), BLANKS, lit("="), BLANKS, QUOTE, anyCase(lit("password")), QUOTE),
  ),
  fc
    .array(pick(' type="text"', " autocomplete=off", " class='x y'", ' data-x="1"', ' placeholder="<b>"', " required"), { maxLength: 6 })
    .map((a) => a.join("")),
  pick(" ", "\n", "", "  "),
  anyCase(lit("value")),
  BLANKS,
  lit("="),
  BLANKS,
  pick('"', "'", '\\"', '\\\\\\"', ""),
  value(4, 205),
  pick('"', "'", '\\"', "", ">"),
);
const SCHEME = pick("postgres", "https", "redis", "mongodb+srv", "git+ssh", "x", "1http", "a".repeat(32), "a".repeat(33), "_db");
const urlCredentials = cat(
  BEFORE,
  SCHEME,
  lit("://"),
  maybe(chars(`${ALNUM}._-`, 1, 12)),
  pick(":", "", "::"),
  maybe(value(1, 30)),
  pick("@", "@@", "", "@/"),
  maybe(pick("db.internal:5432/app", "host", " host", "h@h")),
);
const authorization = cat(
  BEFORE,
  anyCase(pick("Authorization", "Proxy-Authorization", "authorization", "XAuthorization")),
  QUOTE,
  BLANKS,
  pick(":", "=", " : ", "&#61;"),
  BLANKS,
  QUOTE,
  maybe(cat(anyCase(pick("Bearer", "Basic", "Token", "Bot", "ApiKey", "Api-Key", "SSWS", "Digest")), pick(" ", "  ", "\t", ""))),
  value(6, 60),
  AFTER,
);
const header = cat(
  BEFORE,
  QUOTE,
  anyCase(
    pick(
      "x-api-key",
      "api-key",
      "x-goog-api-key",
      "ocp-apim-subscription-key",
      "private-token",
      "x-auth-token",
      "x-access-token",
      "x-apikey",
      "Ocp-Apim-Key",
    ),
  ),
  QUOTE,
  SPACES,
  SEPARATOR,
  SPACES,
  QUOTE,
  value(14, 40),
  AFTER,
);
const awsSecret = cat(
  BEFORE,
  QUOTE,
  anyCase(
    pick(
      "aws_secret_access_key",
      "awssecretaccesskey",
      "aws_secret_key",
      "secret_access_key",
      "SecretAccessKey",
      "secretkey",
      "aws_secret",
    ),
  ),
  QUOTE,
  SPACES,
  SEPARATOR,
  SPACES,
  QUOTE,
  body(`${ALNUM}/+`, 40, 40),
  AFTER,
);
const gcpKeyId = cat(QUOTE, lit("private_key_id"), QUOTE, BLANKS, lit(":"), BLANKS, QUOTE, body("0123456789abcdef", 40, 40), QUOTE);
const azureKey = cat(
  BEFORE,
  QUOTE,
  anyCase(cat(lit("azure"), chars(`${ALNUM}_`, 0, 12), pick("key", "secret", "password", "Key"))),
  QUOTE,
  SPACES,
  SEPARATOR,
  SPACES,
  QUOTE,
  value(18, 40),
  AFTER,
);
const dockerAuth = cat(
  BEFORE,
  QUOTE,
  pick("auth", "Auth", "auth", "xauth", "oauth"),
  QUOTE,
  SPACES,
  SEPARATOR,
  SPACES,
  QUOTE,
  fc.oneof(
    fc.tuple(chars(ALNUM, 1, 20), chars(`${ALNUM}:!@ `, 1, 30)).map(([user, pass]) => b64(`${user}:${pass}`)),
    body(`${ALNUM}+/`, 8, 40),
  ),
  pick("", "=", "=="),
  AFTER,
);
const hex = "0123456789abcdef";
const b64url = `${ALNUM}_-`;
/** Every vendor-prefix rule, every alternative of its prefix, bodies around their bounds. */
const vendorToken = fc.oneof(
  cat(lit("eyJ"), body(b64url, 10), pick(".eyJ", ".eyj", "eyJ"), body(b64url, 10), pick(".", ""), body(b64url, 0)),
  cat(lit("sk-ant-"), pick("api", "admin", "oat", "ort", "sid", "xyz"), chars("0123456789", 2, 2), lit("-"), body(b64url, 20)),
  cat(lit("sk-"), pick("proj", "svcacct", "admin", "None", "none"), lit("-"), body(b64url, 20)),
  cat(lit("sk-"), body(ALNUM, 20, 20), lit("T3BlbkFJ"), body(ALNUM, 20, 20)),
  cat(lit("sk-"), body(ALNUM, 32)),
  cat(lit("gh"), pick("p", "o", "u", "s", "r", "x"), lit("_"), body(ALNUM, 30)),
  cat(lit("github_pat_"), body(`${ALNUM}_`, 50)),
  cat(lit("glpat-"), body(b64url, 20)),
  cat(lit("hf_"), body(ALNUM, 30)),
  cat(lit("xox"), pick("a", "b", "p", "o", "s", "r", "e", "x"), lit("-"), body(`${ALNUM}-`, 10)),
  cat(lit("xapp-"), chars("0123456789", 1, 1), lit("-"), body(`${ALNUM}-`, 20)),
  cat(
    lit("https://hooks.slack.com/services/T"),
    body("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 2, 10),
    lit("/B"),
    body("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 2, 10),
    lit("/"),
    body(ALNUM, 16),
  ),
  cat(pick("s", "r", "p"), lit("k_"), pick("live", "test"), lit("_"), body(ALNUM, 16)),
  cat(lit("whsec_"), body(ALNUM, 24)),
  cat(lit("AIza"), body(b64url, 35, 35)),
  cat(lit("GOCSPX-"), body(b64url, 28)),
  cat(lit("ya29."), body(b64url, 30)),
  cat(pick("AKIA", "ASIA", "ABIA", "ACCA", "A3T", "A3TX", "AKIB"), body("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16, 16)),
  cat(body(`${ALNUM}_~.`, 3, 3), chars("0123456789", 1, 1), lit("Q~"), body(`${ALNUM}_~.-`, 31, 34), pick("", ".", ". ")),
  cat(lit("AccountKey="), body(`${ALNUM}+/`, 86, 86), pick("==", "=", "")),
  cat(lit("SharedAccessKey="), body(`${ALNUM}+/`, 42, 43), pick("=", "")),
  cat(pick("?", "&", "&amp;", "&#38;", "\\u0026", ""), lit("sig="), body(`${ALNUM}%+/=`, 30)),
  cat(lit("npm_"), body(ALNUM, 36, 36)),
  cat(lit("pypi-AgE"), body(b64url, 50)),
  cat(lit("dckr_pat_"), body(b64url, 20)),
  cat(lit("SG."), body(b64url, 22, 22), lit("."), body(b64url, 43, 43)),
  cat(lit("do"), pick("o", "p", "r", "x"), lit("_v1_"), body(hex, 64, 64)),
  cat(lit("shp"), pick("at", "ss", "ca", "pa", "xx"), lit("_"), body("0123456789abcdefABCDEF", 32, 32)),
  cat(lit("gsk_"), body(ALNUM, 48)),
  cat(lit("r8_"), body(ALNUM, 37, 37)),
  cat(lit("dapi"), body(hex, 32, 32), pick("", "-1", "-x")),
  cat(body("0123456789", 8, 10), lit(":AA"), body(b64url, 33, 33)),
  cat(lit("AGE-SECRET-KEY-1"), body("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 58, 58)),
  cat(
    pick("-----BEGIN ", "-----BEGIN RSA ", "-----BEGIN EC "),
    pick("PRIVATE KEY-----", "PRIVATE KEY BLOCK-----", "CERTIFICATE-----"),
    pick("\n", "\\n"),
    body(`${ALNUM}+/=\n`, 20, 200),
    maybe(cat(pick("\n", "\\n"), pick("-----END ", "-----END RSA "), pick("PRIVATE KEY-----", "CERTIFICATE-----"))),
  ),
);
const vendorInContext = cat(BEFORE, vendorToken, AFTER);
const unit = fc.oneof(
  { weight: 4, arbitrary: assignment },
  { weight: 2, arbitrary: labelled },
  { weight: 2, arbitrary: htmlField },
  { weight: 2, arbitrary: urlCredentials },
  { weight: 1, arbitrary: authorization },
  { weight: 1, arbitrary: header },
  { weight: 1, arbitrary: awsSecret },
  { weight: 1, arbitrary: gcpKeyId },
  { weight: 1, arbitrary: azureKey },
  { weight: 1, arbitrary: dockerAuth },
  { weight: 4, arbitrary: vendorInContext },
  { weight: 3, arbitrary: pieces },
);
const structured = fc
  .array(fc.tuple(unit, pick("", " ", "\n", ", ", "\\n", ";", "&", '", "', "=", ":")), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.flat().join(""));

const typesSeen = new Set<string>();
const note = (types: string[]) => {
  for (const type of types) typesSeen.add(type);
};

/** Both paths agree on `arbitrary`: a fixed seed (reproducible), then fresh ones (new inputs every run). */
function agreeOn(arbitrary: fc.Arbitrary<string>, seeded: { runs: number; seed: number }, freshRuns: number): void {
  const property = fc.property(arbitrary, (text) => {
    note(same(text));
  });
  fc.assert(property, { numRuns: seeded.runs, seed: seeded.seed });
  fc.assert(property, { numRuns: freshRuns });
}

describe("redactSecrets (prefilters, separator search) = redactSecretsUnfiltered (every regex everywhere)", () => {
  it("on structured random text: each rule's context, its parts varied around every bound", () => {
    agreeOn(structured, { runs: 20000, seed: 4242 }, 5000);
  });

  it("on random text made of near-misses and hits of every rule", () => {
    agreeOn(texts, { runs: 6000, seed: 20250601 }, 3000);
  });

  it("on every realistic secret shape (many seeds), bare, in context, in all of them at once, and changed", () => {
    for (let seed = 1; seed <= 25; seed++) {
      const shapes = secretShapes(seed);
      for (const shape of shapes) {
        note(same(shape.text));
        same(shape.secret);
        same(shape.text.toUpperCase());
        same(shape.text.toLowerCase());
        same(JSON.stringify(shape.text));
        same(JSON.stringify(JSON.stringify(shape.text)));
        same(shape.text.replaceAll(": ", ":\u00a0").replaceAll("=", " &#61; "));
        same(shape.text.replaceAll('"', "'").replaceAll("\n", "\\n"));
      }
      note(same(shapes.map((s) => s.text).join("\n---\n")));
      note(same(shapes.map((s) => s.text).join(" ")));
    }
  });

  const plantedDir = mkdtempSync(join(tmpdir(), "secrets-speed-"));
  afterAll(() => rmSync(plantedDir, { recursive: true, force: true }));

  it("on the planted-secret corpus of the e2e test: every file, whole and line by line, and every planted value", () => {
    const corpus = writePlantedCorpus(plantedDir);
    for (const secret of corpus.secrets) note(same(secret.value));
    const files = filesUnder(plantedDir);
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) for (const text of textsOf(readFileSync(file, "utf8"))) note(same(text));
  });

  it("on every fixture file and recorded demo file (test/fixtures, data/demo), whole and line by line", () => {
    const files = [...filesUnder(join(ROOT, "test/fixtures")), ...filesUnder(join(ROOT, "data/demo"))];
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) for (const text of textsOf(readSampleText(file))) note(same(text));
  });

  it("was compared on hits of every secret type", () => {
    expect(SECRET_TYPES.filter((type) => !typesSeen.has(type))).toEqual([]);
  });
});
