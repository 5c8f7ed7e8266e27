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
 * Not secrets, never touched: hashes (git SHAs, sha256, npm `integrity`), UUIDs, base64 data
 * (images), public keys and certificates, Stripe publishable keys. Vendor-prefix rules refuse a
 * match glued to base64/hex characters on either side, so they cannot fire inside a long
 * base64 or hex run; unprefixed random strings are only redacted under a secret-named key.
 * Redaction is idempotent: a placeholder is never matched again.
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
}

type Groups = Record<string, string | undefined>;

/**
 * Not glued to base64 / token characters (keeps prefix rules out of base64 and hex runs). A `/`
 * before is allowed only as the end of `//` (`https://ghp_…@github.com`), not inside base64.
 */
const START = `(?<![A-Za-z0-9+_-])(?<![A-Za-z0-9+_-]/)`;
const END = `(?![A-Za-z0-9+/_-])`;
const prefixed = (body: string) => new RegExp(`${START}(?:${body})${END}`, "g");

/** A header or key name, then `:` or `=`, then an optional quote: kept in front of the secret. */
const assigned = (name: string) => String.raw`(?<p>(?<![A-Za-z0-9_])["']?(?:${name})["']?\s*[:=]\s*["']?)`;

const PEM = `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`;
/** Longer than any real key block (an RSA-4096 PEM is ~3.3 KB); bounds the search for its END. */
const MAX_PEM_CHARS = 16384;
const PEM_END = `-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`;

const RULES: readonly Rule[] = [
  // Whole PEM blocks, also inside JSON strings (newlines written as \n), e.g. a GCP
  // service-account file's "private_key". A block cut off before its END line is still redacted.
  { type: pemType, pattern: new RegExp(String.raw`${PEM}[\s\S]{0,${MAX_PEM_CHARS}}?${PEM_END}`, "g") },
  { type: pemType, pattern: new RegExp(String.raw`${PEM}(?:\\[nr]|[\sA-Za-z0-9+/=:,-])*`, "g") },
  { type: "jwt", pattern: prefixed(String.raw`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`) },
  { type: "anthropic_api_key", pattern: prefixed(String.raw`sk-ant-(?:api|admin|oat|ort|sid)\d{2}-[A-Za-z0-9_-]{20,}`) },
  {
    type: "openai_api_key",
    pattern: prefixed(`sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{32,}`),
  },
  { type: "github_token", pattern: prefixed(`gh[pousr]_[A-Za-z0-9]{30,}`) },
  { type: "github_fine_grained_pat", pattern: prefixed(`github_pat_[A-Za-z0-9_]{50,}`) },
  { type: "gitlab_token", pattern: prefixed(`glpat-[A-Za-z0-9_-]{20,}`) },
  { type: "hf_token", pattern: prefixed(`hf_[A-Za-z0-9]{30,}`) },
  { type: "slack_token", pattern: prefixed(`xox[abposre]-[A-Za-z0-9-]{10,}`) },
  { type: "slack_app_token", pattern: prefixed(String.raw`xapp-\d-[A-Za-z0-9-]{20,}`) },
  { type: "slack_webhook", pattern: /(?<p>https:\/\/hooks\.slack\.com\/services\/)(?<s>T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]{16,})/g },
  {
    type: (g) => (g.s?.startsWith("rk") ? "stripe_restricted_key" : "stripe_secret_key"),
    pattern: prefixed(`(?<s>[sr]k_(?:live|test)_[A-Za-z0-9]{16,})`),
  },
  { type: "stripe_webhook_secret", pattern: prefixed(`whsec_[A-Za-z0-9]{24,}`) },
  { type: "gcp_api_key", pattern: prefixed(`AIza[0-9A-Za-z_-]{35}`) },
  { type: "google_oauth_client_secret", pattern: prefixed(`GOCSPX-[A-Za-z0-9_-]{28,}`) },
  { type: "google_oauth_access_token", pattern: prefixed(String.raw`ya29\.[A-Za-z0-9_-]{30,}`) },
  { type: "aws_access_key_id", pattern: prefixed(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`) },
  { type: "azure_client_secret", pattern: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g },
  { type: "azure_storage_account_key", pattern: /(?<p>AccountKey=)(?<s>[A-Za-z0-9+/]{86}==)/g },
  { type: "azure_shared_access_key", pattern: /(?<p>SharedAccessKey=)(?<s>[A-Za-z0-9+/]{42,43}=)/g },
  { type: "azure_sas_signature", pattern: /(?<p>[?&]sig=)(?<s>[A-Za-z0-9%+/=]{30,})/g },
  { type: "npm_token", pattern: prefixed(`npm_[A-Za-z0-9]{36}`) },
  { type: "pypi_token", pattern: prefixed(`pypi-AgE[A-Za-z0-9_-]{50,}`) },
  { type: "docker_pat", pattern: prefixed(`dckr_pat_[A-Za-z0-9_-]{20,}`) },
  { type: "sendgrid_api_key", pattern: prefixed(String.raw`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`) },
  { type: "digitalocean_token", pattern: prefixed(`do[opr]_v1_[a-f0-9]{64}`) },
  { type: "shopify_token", pattern: prefixed(`shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`) },
  { type: "groq_api_key", pattern: prefixed(`gsk_[A-Za-z0-9]{48,}`) },
  { type: "replicate_api_token", pattern: prefixed(`r8_[A-Za-z0-9]{37}`) },
  { type: "databricks_token", pattern: prefixed(String.raw`dapi[a-f0-9]{32}(?:-\d)?`) },
  { type: "telegram_bot_token", pattern: /(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g },
  { type: "age_secret_key", pattern: prefixed(`AGE-SECRET-KEY-1[0-9A-Z]{58}`) },

  // --- secrets by position ---
  // scheme://user:PASSWORD@host — user and host stay.
  {
    type: "url_password",
    pattern: /(?<p>\b[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s:/?#@"'<>]*:)(?<s>[^\s/?#@"'<>]+)(?=@[^\s@/"'<>]+)/g,
    accept: (s) => !isPlaceholder(s),
  },
  {
    type: (g) => authType(g.scheme),
    pattern:
      /(?<p>\b(?:Proxy-)?Authorization["']?\s*[:=]\s*["']?(?:(?<scheme>Bearer|Basic|Token|Bot|ApiKey|Api-Key|SSWS)\s+)?)(?<s>[A-Za-z0-9._~+/=:-]{8,})/gi,
    // Without a scheme word, `authorization: required` in prose is not a credential.
    accept: (s, g) => !isPlaceholder(s) && (g.scheme !== undefined || (looksRandom(s) && s.length >= 16)),
  },
  {
    type: (g) => (/ocp-apim/i.test(g.p ?? "") ? "azure_api_key" : "api_key_header"),
    pattern: new RegExp(
      `${assigned("x-api-key|api-key|x-goog-api-key|ocp-apim-subscription-key|private-token|x-auth-token|x-access-token")}(?<s>[A-Za-z0-9._~+/=-]{16,})`,
      "gi",
    ),
    accept: (s) => !isPlaceholder(s) && looksRandom(s),
  },
  {
    type: "aws_secret_access_key",
    pattern: new RegExp(
      `${assigned("aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key")}(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
      "gi",
    ),
  },
  { type: "gcp_private_key_id", pattern: /(?<p>"private_key_id"\s*:\s*")(?<s>[a-f0-9]{40})(?=")/g },
  {
    type: "azure_key",
    pattern: new RegExp(`${assigned("azure[A-Za-z0-9_]*?(?:key|secret|password)")}(?<s>[A-Za-z0-9+/=._~-]{20,})`, "gi"),
    accept: (s) => !isPlaceholder(s) && looksRandom(s),
  },
  // Any key whose name ends in a secret word (see genericType), with a random-looking value.
  {
    type: (g) => genericType(g.key ?? "") ?? "generic_secret",
    pattern:
      /(?<p>(?<![A-Za-z0-9_])["']?(?<key>[A-Za-z][A-Za-z0-9_.-]{0,63})["']?\s*[:=]\s*["']?)(?<s>[A-Za-z0-9_\-+/=.~!@#$%^*]{8,200})(?=["'\s,;&)}\]]|$)/g,
    accept: (s, g) => genericType(g.key ?? "") !== undefined && !isPlaceholder(s) && looksRandom(s) && !isDottedName(s),
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

/** `text` with every recognised secret replaced by its typed placeholder; counts `secrets.<type>`. */
export function redactSecrets(text: string, counters: Counters): string {
  let result = text;
  for (const rule of RULES) {
    result = result.replace(rule.pattern, (...args: unknown[]) => {
      const match = args[0] as string;
      const groups = (typeof args.at(-1) === "object" ? args.at(-1) : {}) as Groups;
      const offset = args.at(typeof args.at(-1) === "object" ? -3 : -2) as number;
      const whole = args.at(typeof args.at(-1) === "object" ? -2 : -1) as string;
      const secret = groups.s ?? match;
      if (rule.accept && !rule.accept(secret, groups)) return match;
      const type = typeof rule.type === "string" ? rule.type : rule.type(groups, whole.slice(Math.max(0, offset - 40), offset));
      count(counters, `secrets.${type}`);
      return (groups.p ?? "") + secretPlaceholder(type);
    });
  }
  return result;
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

/** The generic type for a key name (`DB_PASSWORD`, `clientSecret`, `api-key`), or undefined. */
function genericType(key: string): string | undefined {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[.-]/g, "_");
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
