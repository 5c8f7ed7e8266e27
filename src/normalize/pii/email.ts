import type { PiiSpan } from "./types.ts";

/**
 * An email address: a dot-atom local part, `@`, a domain of at least two labels whose last is a
 * letters-only TLD. Not preceded by a local-part character (so `git@github.com:org/repo` is an
 * address, but `pkg@1.2.3` and `@decorator` are not); an escaped line break (`\n` in JSON text)
 * ends a word, so `Recipients:\nana@example.com` gives `ana@…`, not `nana@…`.
 */
const EMAIL =
  /(?:(?<![A-Za-z0-9._%+\\-])|(?<=\\[nrt]))[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;

/** Domains that are examples or code, not someone's mailbox. */
const NOT_A_MAILBOX_TLD = new Set(["png", "jpg", "jpeg", "gif", "svg", "webp", "js", "ts", "py", "css", "json", "lock"]);

export function findEmails(text: string): PiiSpan[] {
  if (!text.includes("@")) return [];
  const spans: PiiSpan[] = [];
  for (const m of text.matchAll(EMAIL)) {
    const value = m[0];
    const tld = value.slice(value.lastIndexOf(".") + 1).toLowerCase();
    // image@2x.png, module@types.ts: file names, not mailboxes.
    if (NOT_A_MAILBOX_TLD.has(tld)) continue;
    const start = m.index;
    spans.push({ kind: "email", start, end: start + value.length, key: value.toLowerCase() });
  }
  return spans;
}
