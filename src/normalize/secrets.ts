import { detachedString } from "../core/detached-string.ts";
import { type Counters, count } from "./normalizer.ts";

/**
 * Secret redaction, run on every text before anything is written. A secret becomes a TYPED
 * placeholder, `<SECRET:github_token>`, and is counted as `secrets.<type>`: the model still sees
 * that a token stood there (and of which kind), the data set never holds the value.
 *
 * Two kinds of rules, in this order:
 * 1. shapes that are secrets wherever they appear, recognised by a vendor prefix or structure
 *    (PEM private-key blocks, JWTs, `ghp_…`, `sk-proj-…`, `AKIA…`, `AIza…`, `xoxb-…`, …);
 * 2. values that are secrets because of where they stand: the password of a URL
 *    (`scheme://user:PASS@host`), an `Authorization:` header, and a value assigned to a
 *    secret-named key (`password=`, `"api_key": …`, `DB_PASSWORD:`) when the value looks random.
 *
 * Only what identifies the secret is replaced: `postgres://app:<SECRET:url_password>@db:5432`,
 * `Authorization: Bearer <SECRET:bearer_token>`, `api_key=<SECRET:generic_api_key>`.
 *
 * Where a key name or a token hides in real outputs, and is still found: after an ANSI colour
 * code (`\x1b[1;32mghp_…`), in JSON written inside a JSON string (`\"api_key\": \"…\"`, after
 * a literal `\n`), inside another key's value (`"description": "DB_PASSWORD=…"`), as a path
 * segment (`/var/secrets/ghp_…/key.pem`), glued into an id (`job-xapp-1-…`, `run_ghp_…`), in an
 * HTML form field (`name="api_key" value="…"`), as an accessibility-tree label with its value
 * (`textbox 'DB_PASSWORD', value='…'`), and as a Docker `"auth": "<base64 of user:pass>"`.
 *
 * Not secrets, never touched: hashes (git SHAs, sha256, npm `integrity`), UUIDs, base64 data
 * (images), public keys and certificates, Stripe publishable keys. Vendor-prefix rules refuse a
 * match glued to base64/hex characters on either side, so they cannot fire inside a long
 * base64 or hex run; unprefixed random strings are only redacted under a secret-named key.
 * Redaction is idempotent: a placeholder is never matched again.
 *
 * Not found: the body lines of a private key without its BEGIN/END lines (a tree diff that holds
 * only the changed lines of a regenerated key). Line-wrapped base64 looks the same whether it is
 * a key, a certificate or an image, so such text must be redacted before it is diffed.
 */

interface Rule {
  /** The secret type, or a function of the named groups and context that picks it. */
  type: string | ((groups: Groups, before: string) => string);
  /**
   * Global regex. Named group `s` is the secret (default: the whole match); `p` is kept before it.
   * Repetitions that can start anywhere are bounded, so a long run of key-like text stays linear.
   */
  pattern: RegExp;
  /** Extra test on the secret; false leaves the match as it is. */
  accept?: (secret: string, groups: Groups) => boolean;
  /**
   * A vendor token whose prefix holds `_`, `-` or `.` (never all three of base64's `+/`, base64url's
   * `-_`): it may also stand after `/` (a path segment) or glued into an id by `-`/`_`; see glueOk.
   */
  glue?: boolean;
  /**
   * A rejected match is searched again from its value on (`p` is skipped, not the value), so an
   * assignment inside another key's value is still found: `"description": "DB_PASSWORD=…"`.
   */
  rescanValue?: boolean;
  /**
   * Speed only (redactSecretsUnfiltered ignores it): a regex that matches in every text `pattern`
   * matches in, being what every match of `pattern` requires in a row (its atoms, or what its
   * lookahead requires after it), written as in `pattern` and with its flags (`i` included, so it
   * matches the same letters). A text it does not match holds no match and is skipped.
   */
  need?: RegExp;
  /**
   * Speed only (redactSecretsUnfiltered ignores it): strings, one of which every match of `pattern`
   * holds, read off the pattern (compared ignoring ASCII case where the pattern has the `i` flag,
   * which matches no other letters). A text holding none is skipped, before `need` is tried. The
   * strings of all rules are looked for in one pass over the text (see findStrings).
   */
  holds?: readonly string[];
  /**
   * Speed only (redactSecretsUnfiltered ignores it): the positions, ascending, where `pattern` can
   * start a match, found back from the text's separators (see findSeparators); `pattern` (sticky)
   * is tried at those only, which finds the same leftmost match as its global search.
   */
  starts?: (text: string, separators: readonly number[]) => number[];
}

type Groups = Record<string, string | undefined>;

/**
 * An ANSI escape sequence (colour, erase line) ending right before a token, also with its ESC byte
 * lost (`[01;31m`): `m` or `K` before a token is then not a glued letter.
 */
const ANSI_BEFORE = String.raw`(?<=\x1b\[[0-9;?]{0,16}[A-Za-z]|\[[0-9;]{1,16}m)`;
/**
 * Not glued to base64 / token characters (keeps prefix rules out of base64 and hex runs). A `/`
 * before is allowed only as the end of `//` (`https://ghp_…@github.com`), not inside base64.
 */
const START = `(?:${ANSI_BEFORE}|(?<![A-Za-z0-9+_-])(?<![A-Za-z0-9+_-]/))`;
const END = `(?![A-Za-z0-9+/_-])`;
const prefixed = (body: string) => new RegExp(`${START}(?:${body})${END}`, "g");
/** The longest id part glued to a token by `-`/`_` (a longer run is base64url, not words). */
const MAX_GLUE_RUN = 64;
/**
 * For tokens with `_`, `-` or `.` in their prefix (`ghp_`, `sk-proj-`, `xapp-`, `ya29.`): base64
 * never holds `/` together with `_` or `-`, so `/` on either side is a path separator, and `-`/`_`
 * on either side is accepted when glueOk finds words around it (an id), not a base64url run.
 */
const START_GLUE = `(?:${ANSI_BEFORE}|(?<![A-Za-z0-9+_-])|(?<=(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{0,${MAX_GLUE_RUN}}[-_]))`;
const END_GLUE = "(?![A-Za-z0-9+])";
/** `holds`: strings one of which every match of `body` holds (see Rule.holds), read off its prefix. */
const vendor = (type: Rule["type"], body: string, holds: readonly string[]): Rule => ({
  type,
  pattern: new RegExp(`${START_GLUE}(?:${body})${END_GLUE}`, "g"),
  glue: true,
  holds,
});

/** A quote, also backslash-escaped (JSON written inside a JSON string, up to twice). */
const Q = String.raw`(?:\\{0,3}["'])`;
/** A key name starts after a non-word character or after a literal `\n` / `\t` / `\r` (escaped text). */
const KEY_START = String.raw`(?:(?<![A-Za-z0-9_\\])|(?<=\\[nrt]))`;
/** `:` or `=`, also as an HTML entity (`&#61;`, `&#x3D;`). */
const SEP = String.raw`\s*(?:[:=]|&#61;|&#x3[dD];)\s*`;
/** After a value: a quote (maybe escaped), a space, a separator, or the end. */
const VALUE_END = String.raw`(?=["'\s,;&)}\]\\]|$)`;
/** Characters of an unquoted or quoted password / key value. */
const VALUE = String.raw`[A-Za-z0-9_\-+/=.~!@#$%^*]`;

/** A header or key name, then `:` or `=`, then an optional quote: kept in front of the secret. */
const assigned = (name: string) => `(?<p>${KEY_START}${Q}?(?:${name})${Q}?${SEP}${Q}?)`;

/** One more attribute of an HTML tag (`type="text"`, `autocomplete=off`), between a field's name and its value. */
const HTML_ATTR = String.raw`(?:\s+[A-Za-z][A-Za-z0-9_:-]{0,31}\s*=\s*(?:\\{0,3}"[^"<>]{0,200}"|'[^'<>]{0,200}'|[^\s"'<>]{1,200}))`;

const PEM = `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`;
/** Longer than any real key block (an RSA-4096 PEM is ~3.3 KB); bounds the search for its END. */
const MAX_PEM_CHARS = 16384;
const PEM_END = `-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`;

const RULES: readonly Rule[] = [
  // Whole PEM blocks, also inside JSON strings (newlines written as \n), e.g. a GCP
  // service-account file's "private_key". A block cut off before its END line is still redacted.
  // The search for END stops at the next BEGIN, so a run of headers stays linear.
  {
    type: pemType,
    pattern: new RegExp(String.raw`${PEM}(?:(?!-----BEGIN )[\s\S]){0,${MAX_PEM_CHARS}}?${PEM_END}`, "g"),
    holds: ["-----BEGIN "],
  },
  // Bounded: an unbounded repetition over megabytes of base64 overflows the regex engine's stack.
  { type: pemType, pattern: new RegExp(String.raw`${PEM}(?:\\[nr]|[\sA-Za-z0-9+/=:,-]){0,${MAX_PEM_CHARS}}`, "g"), holds: ["-----BEGIN "] },
  vendor("jwt", String.raw`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`, [".eyJ"]),
  vendor("anthropic_api_key", String.raw`sk-ant-(?:api|admin|oat|ort|sid)\d{2}-[A-Za-z0-9_-]{20,}`, ["sk-ant-"]),
  vendor(
    "openai_api_key",
    `sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{32,}`,
    ["sk-"],
  ),
  vendor("github_token", `gh[pousr]_[A-Za-z0-9]{30,}`, ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]),
  vendor("github_fine_grained_pat", `github_pat_[A-Za-z0-9_]{50,}`, ["github_pat_"]),
  vendor("gitlab_token", `glpat-[A-Za-z0-9_-]{20,}`, ["glpat-"]),
  vendor("hf_token", `hf_[A-Za-z0-9]{30,}`, ["hf_"]),
  vendor("slack_token", `xox[abposre]-[A-Za-z0-9-]{10,}`, ["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"]),
  vendor("slack_app_token", String.raw`xapp-\d-[A-Za-z0-9-]{20,}`, ["xapp-"]),
  {
    type: "slack_webhook",
    pattern: /(?<p>https:\/\/hooks\.slack\.com\/services\/)(?<s>T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]{16,})/g,
    holds: ["hooks.slack.com"],
  },
  vendor((g) => (g.s?.startsWith("rk") ? "stripe_restricted_key" : "stripe_secret_key"), `(?<s>[sr]k_(?:live|test)_[A-Za-z0-9]{16,})`, [
    "k_live_",
    "k_test_",
  ]),
  vendor("stripe_webhook_secret", `whsec_[A-Za-z0-9]{24,}`, ["whsec_"]),
  { type: "gcp_api_key", pattern: prefixed(`AIza[0-9A-Za-z_-]{35}`), holds: ["AIza"] },
  vendor("google_oauth_client_secret", `GOCSPX-[A-Za-z0-9_-]{28,}`, ["GOCSPX-"]),
  vendor("google_oauth_access_token", String.raw`ya29\.[A-Za-z0-9_-]{30,}`, ["ya29."]),
  {
    type: "aws_access_key_id",
    pattern: prefixed(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`),
    holds: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
  },
  {
    // A sentence's full stop after the secret is not part of it ("… the secret is 8Xy4Q~….").
    type: "azure_client_secret",
    pattern: new RegExp(
      String.raw`(?:${ANSI_BEFORE}|(?<![A-Za-z0-9_~.-]))[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~-]|\.[A-Za-z0-9_~.-])`,
      "g",
    ),
    holds: ["0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~", "9Q~"],
  },
  { type: "azure_storage_account_key", pattern: /(?<p>AccountKey=)(?<s>[A-Za-z0-9+/]{86}==)/g, holds: ["AccountKey="] },
  { type: "azure_shared_access_key", pattern: /(?<p>SharedAccessKey=)(?<s>[A-Za-z0-9+/]{42,43}=)/g, holds: ["SharedAccessKey="] },
  // `&sig=`, also HTML-escaped in a link (`&amp;sig=`) or JSON-escaped (`\u0026sig=`).
  { type: "azure_sas_signature", pattern: /(?<p>(?:[?&]|&amp;|&#38;|\\u0026)sig=)(?<s>[A-Za-z0-9%+/=]{30,})/g, holds: ["sig="] },
  vendor("npm_token", `npm_[A-Za-z0-9]{36}`, ["npm_"]),
  vendor("pypi_token", `pypi-AgE[A-Za-z0-9_-]{50,}`, ["pypi-AgE"]),
  vendor("docker_pat", `dckr_pat_[A-Za-z0-9_-]{20,}`, ["dckr_pat_"]),
  vendor("sendgrid_api_key", String.raw`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`, ["SG."]),
  vendor("digitalocean_token", `do[opr]_v1_[a-f0-9]{64}`, ["_v1_"]),
  vendor("shopify_token", `shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`, ["shpat_", "shpss_", "shpca_", "shppa_"]),
  vendor("groq_api_key", `gsk_[A-Za-z0-9]{48,}`, ["gsk_"]),
  vendor("replicate_api_token", `r8_[A-Za-z0-9]{37}`, ["r8_"]),
  { type: "databricks_token", pattern: prefixed(String.raw`dapi[a-f0-9]{32}(?:-\d)?`), holds: ["dapi"] },
  { type: "telegram_bot_token", pattern: /(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g, holds: [":AA"] },
  vendor("age_secret_key", `AGE-SECRET-KEY-1[0-9A-Z]{58}`, ["AGE-SECRET-KEY-1"]),

  // --- secrets by position ---
  // scheme://user:PASSWORD@host — user and host stay.
  {
    type: "url_password",
    pattern: /(?<p>\b[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s:/?#@"'<>]*:)(?<s>[^\s/?#@"'<>]+)(?=@[^\s@/"'<>]+)/g,
    accept: (s) => !isPlaceholder(s),
    holds: ["://"],
    need: /:\/\/[^\s:/?#@"'<>]*:[^\s/?#@"'<>]+@[^\s@/"'<>]/,
  },
  {
    type: (g) => authType(g.scheme),
    pattern: new RegExp(
      String.raw`(?<p>\b(?:Proxy-)?Authorization${Q}?\s*[:=]\s*${Q}?(?:(?<scheme>Bearer|Basic|Token|Bot|ApiKey|Api-Key|SSWS)\s+)?)(?<s>[A-Za-z0-9._~+/=:-]{8,})`,
      "gi",
    ),
    // Without a scheme word, `authorization: required` in prose is not a credential.
    accept: (s, g) => !isPlaceholder(s) && (g.scheme !== undefined || (looksRandom(s) && s.length >= 16)),
    holds: ["authorization"],
  },
  {
    type: (g) => (/ocp-apim/i.test(g.p ?? "") ? "azure_api_key" : "api_key_header"),
    pattern: new RegExp(
      `${assigned("x-api-key|api-key|x-goog-api-key|ocp-apim-subscription-key|private-token|x-auth-token|x-access-token")}(?<s>[A-Za-z0-9._~+/=-]{16,})`,
      "gi",
    ),
    accept: (s) => !isPlaceholder(s) && looksRandom(s),
    // Each header name holds one of these.
    holds: ["-key", "-token"],
  },
  {
    type: "aws_secret_access_key",
    pattern: new RegExp(
      `${assigned("aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key")}(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
      "gi",
    ),
    // Each key name holds these (in a row): `secret_?access_?key` or `secret_?key`.
    holds: ["secret"],
    need: /secret_?(?:access_?)?key/i,
  },
  {
    type: "gcp_private_key_id",
    pattern: new RegExp(String.raw`(?<p>${Q}private_key_id${Q}\s*:\s*${Q})(?<s>[a-f0-9]{40})(?=${Q})`, "g"),
    holds: ["private_key_id"],
  },
  {
    type: "azure_key",
    pattern: new RegExp(`${assigned("azure[A-Za-z0-9_]*?(?:key|secret|password)")}(?<s>[A-Za-z0-9+/=._~-]{20,})`, "gi"),
    accept: (s) => !isPlaceholder(s) && looksRandom(s),
    holds: ["azure"],
  },
  // Docker's config.json: `"auth": "<base64 of user:password>"` (the base64 must decode to that).
  {
    type: "docker_auth",
    pattern: new RegExp(`${assigned("auth")}(?<s>[A-Za-z0-9+/]{8,1024}={0,2})(?![A-Za-z0-9+/=])`, "g"),
    accept: isBase64UserPass,
    holds: ["auth"],
    need: new RegExp(`auth${Q}?${SEP}`),
  },
  // An HTML form field: `<input name="api_key" value="…">` (or id=, with attributes between), and
  // the value of any `<input type="password" … value="…">`.
  {
    type: (g) => (g.pw !== undefined ? "generic_password" : (genericType(g.key ?? "") ?? "generic_secret")),
    pattern: new RegExp(
      String.raw`(?<p>(?<![A-Za-z0-9_-])(?:(?:name|id)\s*=\s*(?<q>\\{0,3}["'])(?<key>[A-Za-z][A-Za-z0-9_.:\[\]-]{0,63})\k<q>|(?<pw>type\s*=\s*${Q}password${Q}))${HTML_ATTR}{0,4}?\s+value\s*=\s*${Q})(?<s>[^"'\\<>\s]{6,200})(?=${Q})`,
      "gi",
    ),
    accept: (s, g) => (g.pw !== undefined || genericType(g.key ?? "") !== undefined) && !isPlaceholder(s) && looksRandom(s),
    holds: ["value"],
    need: new RegExp(String.raw`value\s*=\s*${Q}[^"'\\<>\s]{6}`, "i"),
  },
  // An accessibility-tree node whose quoted label names a secret, then its value:
  // `textbox 'DB_PASSWORD', value='…'`, `[12] textbox "API key" value=…`, `'Client secret': '…'`.
  {
    type: (g) => genericType(g.key ?? "") ?? "generic_secret",
    pattern: new RegExp(
      String.raw`(?<p>(?<q>\\{0,3}["'])(?<key>[A-Za-z][A-Za-z0-9 _.-]{0,40})\k<q>[ \t]*,?[ \t]*(?:value[ \t]*[=:]|:)[ \t]*${Q}?)(?<s>${VALUE}{8,200})${VALUE_END}`,
      "g",
    ),
    accept: (s, g) => genericType(g.key ?? "") !== undefined && !isPlaceholder(s) && looksRandom(s) && !isDottedName(s),
    rescanValue: true,
    starts: labelStarts,
  },
  // Any key whose name ends in a secret word (see genericType), with a random-looking value.
  {
    type: (g) => genericType(g.key ?? "") ?? "generic_secret",
    pattern: new RegExp(
      `(?<p>${KEY_START}${Q}?(?<key>[A-Za-z][A-Za-z0-9_.-]{0,63})${Q}?${SEP}${Q}?)(?<s>${VALUE}{8,200})${VALUE_END}`,
      "g",
    ),
    accept: (s, g) => genericType(g.key ?? "") !== undefined && !isPlaceholder(s) && looksRandom(s) && !isDottedName(s),
    rescanValue: true,
    starts: assignmentStarts,
  },
];

/** Every type a placeholder can name (for documentation and tests). */
export const SECRET_TYPES: readonly string[] = [
  "private_key",
  "gcp_service_account_private_key",
  "jwt",
  "anthropic_api_key",
  "openai_api_key",
  "github_token",
  "github_fine_grained_pat",
  "gitlab_token",
  "hf_token",
  "slack_token",
  "slack_app_token",
  "slack_webhook",
  "stripe_secret_key",
  "stripe_restricted_key",
  "stripe_webhook_secret",
  "gcp_api_key",
  "google_oauth_client_secret",
  "google_oauth_access_token",
  "aws_access_key_id",
  "aws_secret_access_key",
  "gcp_private_key_id",
  "azure_client_secret",
  "azure_storage_account_key",
  "azure_shared_access_key",
  "azure_sas_signature",
  "azure_api_key",
  "azure_key",
  "docker_auth",
  "npm_token",
  "pypi_token",
  "docker_pat",
  "sendgrid_api_key",
  "digitalocean_token",
  "shopify_token",
  "groq_api_key",
  "replicate_api_token",
  "databricks_token",
  "telegram_bot_token",
  "age_secret_key",
  "url_password",
  "bearer_token",
  "basic_auth",
  "authorization",
  "api_key_header",
  "generic_password",
  "generic_api_key",
  "generic_token",
  "generic_secret",
];

export function secretPlaceholder(type: string): string {
  return `<SECRET:${type}>`;
}

/** Whether any of the strings `held` was found. A loop, not a callback made per call: V8 recompiled those after every major GC. */
function anyPresent(held: readonly number[], present: ArrayLike<number>): boolean {
  for (const id of held) if (present[id] === 1) return true;
  return false;
}

/** `text` with every recognised secret replaced by its typed placeholder; counts `secrets.<type>`. */
export function redactSecrets(text: string, counters: Counters, found?: FoundSecret[]): string {
  let result = text;
  // Rules that change nothing return the same text: these are found once, and again after a change.
  const strings = new ForLastText(findStrings);
  const separators = new ForLastText(findSeparators);
  for (let r = 0; r < RULES.length; r++) {
    const rule = RULES[r] as Rule;
    const held = RULE_STRINGS[r];
    if (held !== undefined) {
      const present = strings.of(result);
      if (!anyPresent(held, present)) continue;
    }
    if (rule.need && !rule.need.test(result)) continue;
    const search = rule.starts ? new StartsSearch(stickyPattern(rule), rule.starts(result, separators.of(result))) : rule.pattern;
    result = applyRule(rule, result, counters, found, search);
  }
  return result;
}

/**
 * redactSecrets the plain way: every rule's global regex over the whole text, no `need`, no
 * `starts`. The same result, counters and `found` (test/secrets-speed.test.ts compares them).
 */
export function redactSecretsUnfiltered(text: string, counters: Counters, found?: FoundSecret[]): string {
  let result = text;
  for (const rule of RULES) result = applyRule(rule, result, counters, found, rule.pattern);
  return result;
}

/** A secret redactSecrets replaced: its type and the text it replaced. */
export interface FoundSecret {
  type: string;
  secret: string;
}

/** Lines shorter than this are not scrubbed on their own (too likely to be ordinary text). */
const MIN_SCRUBBED_LINE = 16;

/** The secrets redaction would replace in `text` (nothing is counted). */
export function findSecrets(text: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  redactSecrets(text, new Map(), found);
  return found;
}

/**
 * Removes from `text` every line (of at least 16 characters) of the given secrets. For derived
 * text that lost a secret's context: a tree diff holds the changed body lines of a private key
 * without its BEGIN/END lines, which no rule can tell from a certificate's.
 */
export function scrubSecretLines(text: string, secrets: readonly FoundSecret[]): string {
  let result = text;
  for (const { type, secret } of secrets)
    for (const line of secret.split(/\r?\n|\\[nr]/)) {
      const piece = line.trim();
      if (piece.length >= MIN_SCRUBBED_LINE) result = result.replaceAll(piece, secretPlaceholder(type));
    }
  return result;
}

/** What applyRule searches with: a rule's global regex, or a StartsSearch that finds the same matches. */
interface Search {
  lastIndex: number;
  exec(text: string): RegExpExecArray | null;
}

function applyRule(rule: Rule, text: string, counters: Counters, found: FoundSecret[] | undefined, pattern: Search): string {
  pattern.lastIndex = 0;
  let out = "";
  let copied = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const match = m[0];
    const groups: Groups = m.groups ?? {};
    const secret = groups.s ?? match;
    const end = m.index + match.length;
    if (match === "") {
      pattern.lastIndex++;
      continue;
    }
    if ((rule.accept && !rule.accept(secret, groups)) || (rule.glue && !glueOk(text, m.index, end, secret))) {
      if (rule.rescanValue && groups.p) pattern.lastIndex = m.index + groups.p.length;
      continue;
    }
    const type = typeof rule.type === "string" ? rule.type : rule.type(groups, text.slice(Math.max(0, m.index - 40), m.index));
    count(counters, `secrets.${type}`);
    found?.push({ type, secret });
    out += text.slice(copied, m.index) + (groups.p ?? "") + secretPlaceholder(type);
    copied = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * A global search that tries its sticky regex only at `starts` (ascending, holding every position
 * where the regex can match): the first of them at or after lastIndex where it matches is the
 * leftmost match there, the one the global regex finds. Same lastIndex protocol as a global regex.
 */
class StartsSearch implements Search {
  lastIndex = 0;
  readonly #sticky: RegExp;
  readonly #starts: readonly number[];
  #next = 0;

  constructor(sticky: RegExp, starts: readonly number[]) {
    this.#sticky = sticky;
    this.#starts = starts;
  }

  exec(text: string): RegExpExecArray | null {
    const starts = this.#starts;
    for (; this.#next < starts.length; this.#next++) {
      const start = starts[this.#next] as number;
      if (start < this.lastIndex) continue;
      this.#sticky.lastIndex = start;
      const m = this.#sticky.exec(text);
      if (m !== null) {
        // applyRule only moves lastIndex forward, never before m.index: #next stays valid.
        this.lastIndex = this.#sticky.lastIndex;
        return m;
      }
    }
    this.lastIndex = 0;
    return null;
  }
}

const STICKY = new WeakMap<Rule, RegExp>();

/** The rule's pattern (same source and flags) matching only at lastIndex. */
function stickyPattern(rule: Rule): RegExp {
  let sticky = STICKY.get(rule);
  if (sticky === undefined) {
    sticky = new RegExp(rule.pattern.source, rule.pattern.flags.replace("g", "y"));
    STICKY.set(rule, sticky);
  }
  return sticky;
}

// Character classes of the two assignment rules, by UTF-16 code unit (all ASCII but `\s`).
const CHAR_LETTER = 1; // [A-Za-z]
const CHAR_KEY = 2; // [A-Za-z0-9_.-]: a key name of the generic rule
const CHAR_LABEL = 4; // [A-Za-z0-9 _.-]: a quoted label of the accessibility-tree rule
const CHAR_NO_KEY_BEFORE = 8; // [A-Za-z0-9_\\]: KEY_START refuses a key start after it
const CHAR_CLASSES = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  const char = String.fromCharCode(code);
  const classes: [RegExp, number][] = [
    [/[A-Za-z]/, CHAR_LETTER],
    [/[A-Za-z0-9_.-]/, CHAR_KEY],
    [/[A-Za-z0-9 _.-]/, CHAR_LABEL],
    [/[A-Za-z0-9_\\]/, CHAR_NO_KEY_BEFORE],
  ];
  for (const [re, flag] of classes) if (re.test(char)) CHAR_CLASSES[code] = (CHAR_CLASSES[code] ?? 0) | flag;
}
const NON_ASCII_SPACE = /\s/;

function has(text: string, i: number, flag: number): boolean {
  const code = text.charCodeAt(i); // NaN out of range: no class
  return code < 128 && ((CHAR_CLASSES[code] as number) & flag) !== 0;
}

/** A space or tab at i. */
function isBlank(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  return code === 32 || code === 9;
}

/** `\s` at i (false out of range). */
function isSpace(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return code >= 128 && NON_ASCII_SPACE.test(text[i] as string);
}

function isQuote(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  return code === 34 || code === 39;
}

/** Backslashes right before i (counting at most 4). */
function backslashesBefore(text: string, i: number): number {
  let n = 0;
  while (n < 4 && i - n > 0 && text.charCodeAt(i - n - 1) === 92) n++;
  return n;
}

/**
 * Start positions, ascending, of the separators of SEP (`:`, `=`, `&#61;`, `&#x3d;`) that a value
 * can follow: `\s*`, maybe a quote, then 8 VALUE characters. Every match of the generic rule holds
 * one (`SEP Q? VALUE{8,200}`), and every match of the accessibility-tree rule a `:` or `=` of them
 * (`[=:] [ \t]* Q? VALUE{8,200}`).
 */
function findSeparators(text: string): number[] {
  const found: number[] = [];
  SEPARATOR.lastIndex = 0;
  for (let m = SEPARATOR.exec(text); m !== null; m = SEPARATOR.exec(text)) found.push(m.index);
  return found;
}
const SEPARATOR = new RegExp(String.raw`(?:[:=]|&#61;|&#x3[dD];)(?=\s*${Q}?${VALUE}{8})`, "g");

/**
 * `find`, computed again only for a text other than the last one. A class, not a closure made
 * per call: V8 recompiled per-call closures after every major GC.
 */
class ForLastText<T> {
  private last: string | undefined;
  private result: T | undefined;
  private readonly find: (text: string) => T;

  constructor(find: (text: string) => T) {
    this.find = find;
  }

  of(text: string): T {
    if (text !== this.last || this.result === undefined) {
      this.result = this.find(text);
      this.last = text;
    }
    return this.result;
  }
}

/** Every rule's `holds` strings, in lower case where the rule's pattern ignores case. */
const STRINGS: { text: string; ignoreCase: boolean }[] = [];
/** For each rule (by index in RULES), the indexes in STRINGS of its `holds` strings. */
const RULE_STRINGS: (readonly number[] | undefined)[] = RULES.map((rule) => {
  const ignoreCase = rule.pattern.flags.includes("i");
  return rule.holds?.map((text) => {
    if (!/^[\x20-\x7e]{3,}$/.test(text)) throw new Error(`holds: not 3+ printable ASCII characters: ${text}`);
    return STRINGS.push({ text: ignoreCase ? text.toLowerCase() : text, ignoreCase }) - 1;
  });
});

/**
 * findStrings looks at the pairs of characters that start at even positions. A string is looked up
 * by both pairs of 3 of its characters (its anchor): one of them starts at an even position wherever
 * the string stands. PAIR_BUCKET[(first << 7) | second] is 1 + the index in BUCKETS of the strings
 * (and offsets of the pair in them) looked up by that pair, under both cases of a letter where the
 * string ignores case; 0 for none.
 */
const PAIR_BUCKET = new Uint8Array(128 * 128);
const BUCKETS: { ids: number[]; offsets: number[] }[] = [];
/** Speed only, for picking anchors of rare pairs: lower-case letters and space, the most common first… */
const COMMON_CHARS = " etaoinsrhldcumfpgwybvkxjqz";
/** …and the most common pairs of letters in English. */
const COMMON_PAIRS = new Set(
  "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur".split(
    " ",
  ),
);
STRINGS.forEach(({ text, ignoreCase }, id) => {
  const folded = ignoreCase ? text : text.replace(/[A-Z]/g, "#"); // an upper-case letter is no common one
  const commonness = (i: number) => {
    const at = COMMON_CHARS.indexOf(folded[i] as string);
    return at >= 0 ? COMMON_CHARS.length - at : 8;
  };
  const pairCommonness = (i: number) => (COMMON_PAIRS.has(folded.slice(i, i + 2)) ? 100 : 0) + commonness(i) + commonness(i + 1);
  const score = (a: number) => pairCommonness(a) + pairCommonness(a + 1);
  let anchor = 0;
  for (let a = 1; a + 3 <= text.length; a++) if (score(a) < score(anchor)) anchor = a;
  const cases = (code: number) => (ignoreCase && code >= 97 && code <= 122 ? [code, code - 32] : [code]);
  for (const offset of [anchor, anchor + 1])
    for (const first of cases(text.charCodeAt(offset)))
      for (const second of cases(text.charCodeAt(offset + 1))) {
        const pair = (first << 7) | second;
        if (PAIR_BUCKET[pair] === 0) PAIR_BUCKET[pair] = BUCKETS.push({ ids: [], offsets: [] });
        const bucket = BUCKETS[(PAIR_BUCKET[pair] as number) - 1] as (typeof BUCKETS)[number];
        bucket.ids.push(id);
        bucket.offsets.push(offset);
      }
});
if (BUCKETS.length > 255) throw new Error("too many character pairs for PAIR_BUCKET");

/**
 * Which STRINGS the text holds (1 at their index), in one pass over the pairs of characters that
 * start at even positions: where a pair is an anchor pair of a string, the string is compared there
 * (ASCII letters folded to lower case for a case-ignoring string: an `i` regex without the `u` flag
 * matches an ASCII letter with no other character).
 */
function findStrings(text: string): Uint8Array {
  const present = new Uint8Array(STRINGS.length);
  for (let i = 1; i < text.length; i += 2) {
    const first = text.charCodeAt(i - 1);
    const second = text.charCodeAt(i);
    if ((first | second) >= 128) continue;
    const b = PAIR_BUCKET[(first << 7) | second] as number;
    if (b !== 0) lookUp(text, i - 1, BUCKETS[b - 1] as (typeof BUCKETS)[number], present);
  }
  return present;
}

/** Marks in `present` the strings of the bucket that stand where their pair starts at `at`. */
function lookUp(text: string, at: number, bucket: (typeof BUCKETS)[number], present: Uint8Array): void {
  const { ids, offsets } = bucket;
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k] as number;
    if (present[id] !== 0) continue;
    const { text: wanted, ignoreCase } = STRINGS[id] as (typeof STRINGS)[number];
    const start = at - (offsets[k] as number);
    if (start < 0 || start + wanted.length > text.length) continue;
    let j = 0;
    for (; j < wanted.length; j++) {
      let code = text.charCodeAt(start + j);
      if (ignoreCase && code >= 65 && code <= 90) code += 32;
      if (code !== wanted.charCodeAt(j)) break;
    }
    if (j === wanted.length) present[id] = 1;
  }
}

/** KEY_START at i: not after [A-Za-z0-9_\\], or after a literal `\n` / `\r` / `\t`. */
function keyStartAt(text: string, i: number): boolean {
  if (i === 0 || !has(text, i - 1, CHAR_NO_KEY_BEFORE)) return true;
  const escaped = text.charCodeAt(i - 1);
  return i >= 2 && text.charCodeAt(i - 2) === 92 && (escaped === 110 || escaped === 114 || escaped === 116);
}

/**
 * Where the generic `key = value` rule can match:
 * `KEY_START Q? (?<key>[A-Za-z][A-Za-z0-9_.-]{0,63}) Q? \s* SEP Q? VALUE{8,200} VALUE_END`.
 * Read back from each separator a value can follow (findSeparators): the key is followed by Q,
 * `\s` or the separator, none of them a key character, so it ends where the key characters before
 * `Q? \s*` end (a quote there must be Q, with all the backslashes before it: the key holds none);
 * it starts at most 64 characters back, at a letter where KEY_START holds, or the match starts at
 * the Q (a quote after at most 3 backslashes) before the run of key characters. The text between a
 * start and its separator holds no other separator, so the starts come out ascending.
 */
function assignmentStarts(text: string, separators: readonly number[]): number[] {
  const starts: number[] = [];
  for (const s of separators) {
    let end = s;
    while (end > 0 && isSpace(text, end - 1)) end--;
    if (isQuote(text, end - 1)) {
      const backslashes = backslashesBefore(text, end - 1);
      if (backslashes > 3) continue;
      end -= 1 + backslashes;
    }
    if (!has(text, end - 1, CHAR_KEY)) continue;
    let first = end - 1;
    while (first > 0 && end - first < 64 && has(text, first - 1, CHAR_KEY)) first--;
    // A Q before the key: only at the start of the run of key characters.
    if (isQuote(text, first - 1) && has(text, first, CHAR_LETTER)) {
      const quote = first - 1;
      for (let b = Math.min(3, backslashesBefore(text, quote)); b >= 0; b--) if (keyStartAt(text, quote - b)) starts.push(quote - b);
    }
    for (let k = first; k < end; k++) if (has(text, k, CHAR_LETTER) && keyStartAt(text, k)) starts.push(k);
  }
  return starts;
}

/**
 * Where the accessibility-tree rule can match: `(?<q>\\{0,3}["']) (?<key>[A-Za-z][A-Za-z0-9 _.-]{0,40})
 * \k<q> [ \t]*,?[ \t]* (?:value[ \t]*[=:]|:) [ \t]* Q? VALUE{8,200} VALUE_END`.
 * Read back from each `:` / `=` a value can follow (findSeparators): `value` (for `=` the only
 * way), then the closing quote after `[ \t]*,?[ \t]*`, the closing q (the quote with all the
 * backslashes before it: the label holds neither), then the label, which is the whole run of label
 * characters before it (the opening quote is none), and the opening q, the same text as the
 * closing one. One start per separator, between it and the one before: ascending.
 */
function labelStarts(text: string, separators: readonly number[]): number[] {
  const starts: number[] = [];
  for (const s of separators) {
    const code = text.charCodeAt(s);
    if (code !== 58 && code !== 61) continue;
    // The separator is followed by `\s*` and a value (findSeparators): here `[ \t]*` and a value.
    let v = s + 1;
    while (isBlank(text, v)) v++;
    if (isSpace(text, v)) continue;
    let end = s;
    while (end > 0 && isBlank(text, end - 1)) end--;
    if (end >= 5 && text.startsWith("value", end - 5)) {
      end -= 5;
    } else if (code !== 58) continue;
    while (end > 0 && isBlank(text, end - 1)) end--;
    if (text.charCodeAt(end - 1) === 44) end--;
    while (end > 0 && isBlank(text, end - 1)) end--;
    if (!isQuote(text, end - 1)) continue;
    const quote = text.charCodeAt(end - 1);
    const backslashes = backslashesBefore(text, end - 1);
    if (backslashes > 3) continue;
    const labelEnd = end - 1 - backslashes;
    let first = labelEnd;
    while (first > 0 && labelEnd - first < 41 && has(text, first - 1, CHAR_LABEL)) first--;
    if (first === labelEnd || !has(text, first, CHAR_LETTER) || text.charCodeAt(first - 1) !== quote) continue;
    const start = first - 1 - backslashes;
    if (start < 0 || backslashesBefore(text, first - 1) < backslashes) continue;
    starts.push(start);
  }
  return starts;
}

/**
 * A vendor token glued by `-`/`_` stands in an id made of words (`job-`, `ci-run-`, `run_`,
 * `-21e2b49035be`), not in a base64url run, and is itself random (two of upper, lower, digits
 * after its prefix), so `load_hf_checkpointfromdiskwithoutconversion` is code, not a token.
 */
function glueOk(text: string, start: number, end: number, secret: string): boolean {
  const before = text[start - 1];
  const after = text[end];
  const gluedBefore = before === "-" || before === "_";
  const gluedAfter = after === "-" || after === "_";
  if (!gluedBefore && !gluedAfter) return true;
  if (gluedBefore) {
    let i = start - 1;
    while (i > 0 && start - i <= MAX_GLUE_RUN && /[A-Za-z0-9_-]/.test(text[i - 1] as string)) i--;
    if (start - i > MAX_GLUE_RUN || !isWords(text.slice(i, start))) return false;
  }
  if (gluedAfter) {
    let i = end + 1;
    while (i < text.length && i - end <= MAX_GLUE_RUN && /[A-Za-z0-9_-]/.test(text[i] as string)) i++;
    if (i - end > MAX_GLUE_RUN || !isWords(text.slice(end, i))) return false;
  }
  const body = secret.slice(4);
  return [/[A-Z]/, /[a-z]/, /[0-9]/].filter((c) => c.test(body)).length >= 2;
}

/** `ci-run-`, `_2024_`, `-21e2b49035be`: words of one case (or capitalised) between `-`/`_`. */
function isWords(run: string): boolean {
  return run.split(/[-_]+/).every((w) => w === "" || (w.length <= 24 && /^(?:[a-z0-9]+|[A-Z0-9]+|[A-Z][a-z0-9]+)$/.test(w)));
}

/** Docker's `auth`: base64 of `user:password`. */
function isBase64UserPass(value: string): boolean {
  if (value.length % 4 !== 0) return false;
  const decoded = Buffer.from(value, "base64").toString("utf8");
  return /^[^\p{Cc}\s:\ufffd]{1,256}:[^\p{Cc}\ufffd]{1,512}$/u.test(decoded);
}

/** A GCP service-account key file holds its PEM block under "private_key". */
function pemType(_groups: Groups, before: string): string {
  return /"private_key"\s*:\s*"$/.test(before) ? "gcp_service_account_private_key" : "private_key";
}

function authType(scheme: string | undefined): string {
  const lower = scheme?.toLowerCase();
  if (lower === "bearer") return "bearer_token";
  if (lower === "basic") return "basic_auth";
  return "authorization";
}

/** Words a secret-holding key name ends with → the placeholder type. */
const GENERIC_KEYS: readonly [RegExp, string][] = [
  [/(?:^|_)(?:password|passwd|passphrase|pwd)$/, "generic_password"],
  [/(?:^|_)api_?key$/, "generic_api_key"],
  [/(?:^|_)(?:client_secret|secret_key|secret_access_key|access_key|private_key|secret)$/, "generic_secret"],
  [/(?:^|_)(?:auth|access|refresh|bearer|session|id|api|bot|oauth|csrf)?_?token$/, "generic_token"],
];

/** Key names that end in "token" but hold no credential (pagination, progress, counts). */
const NOT_SECRET_KEY = /(?:^|_)(?:next|prev|previous|page|continuation|progress|cancellation|sync|cursor|max|num|total)_token$/;

/** genericType's answers (null: none) for the key names seen last; key names repeat a lot (JSON). */
const GENERIC_TYPES = new Map<string, string | null>();
const MAX_GENERIC_TYPES = 4096;

/** The generic type for a key name (`DB_PASSWORD`, `clientSecret`, `api-key`, `API key`, `user[password]`), or undefined. */
function genericType(key: string): string | undefined {
  let type = GENERIC_TYPES.get(key);
  if (type === undefined) {
    if (GENERIC_TYPES.size >= MAX_GENERIC_TYPES) GENERIC_TYPES.clear();
    type = keyType(key) ?? null;
    // Detached: a key name cut from the text would keep the whole text alive with the cache.
    GENERIC_TYPES.set(detachedString(key), type);
  }
  return type ?? undefined;
}

function keyType(key: string): string | undefined {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[.\-\s[\]:]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (NOT_SECRET_KEY.test(words)) return undefined;
  return GENERIC_KEYS.find(([pattern]) => pattern.test(words))?.[1];
}

/** Template variables, masks and documentation stand-ins, which are not secrets. */
function isPlaceholder(value: string): boolean {
  return (
    /^(?:\$|<|\{|%[sd(]|\*\*\*|\.\.\.)/.test(value) ||
    /^(.)\1+$/.test(value) ||
    /^(?:password|passwd|pass|secret|token|pwd|user|username|admin|root|test|example)$/i.test(value) ||
    /(?:changeme|placeholder|redacted|your[_-]?(?:api|secret|token|key|pass))/i.test(value)
  );
}

/** Random enough to be a credential: letters and digits, and at least 3 bits of entropy per character. */
function looksRandom(value: string): boolean {
  return /[A-Za-z]/.test(value) && /[0-9]/.test(value) && shannonEntropy(value) >= 3;
}

/** `os.environ`, `config.api_key`, `self.password`: code, not a value. */
function isDottedName(value: string): boolean {
  return /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value);
}

function shannonEntropy(value: string): number {
  const frequency = new Map<string, number>();
  for (const char of value) frequency.set(char, (frequency.get(char) ?? 0) + 1);
  let entropy = 0;
  for (const n of frequency.values()) {
    const p = n / value.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}
