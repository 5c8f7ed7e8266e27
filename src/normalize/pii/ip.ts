import { BlockList, isIP } from "node:net";
import type { IpPolicy, PiiSpan } from "./types.ts";

/**
 * IPv4: four dotted octets, not inside a longer dotted run (an OID, a 5-part version) or a
 * word; a port (`:8080`) or prefix length (`/24`) may follow and is kept. A dotted quad right
 * after a version word (`version 1.2.3.4`, `v1.2.3.4`, `==1.2.3.4`, `@1.2.3.4`) is a version.
 */
// An escaped line break or tab (`\n` in JSON text an MCP tool returned) ends a word too.
const IPV4 = /(?:(?<![\w.])|(?<=\\[nrt]))(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d|\.\w|\w)/g;
// Package-version operators (`==`, `>=`, `~=`, `~>`, `^`), not a bare `=` (`ip=`, `SRC=` in logs)
// nor `@` (`deploy@81.2.69.142` is a host).
const VERSION_BEFORE =
  /(?:\b(?:v|ver|vers|version|versions|release|rel|build|firmware|fw|sdk|kernel|tag|rev|revision)\b[\s:=#-]*|(?:[=<>~!]=|~>|\^)\s*)$/i;

/**
 * A word on the same line, shortly before, that makes a dotted quad a version
 * (`version_tuple("1.2.3.4")`), not inside a host name (`release-notes.example.org,81.2.69.142`) or
 * across a field separator.
 */
const VERSION_WORD_ON_LINE = /(?<![A-Za-z0-9.@-])(?:version|release|build|firmware|kernel)(?![\w.-]*\.[a-z]{2,}\b)[^\n,;]{0,24}$/i;

/**
 * `name@1.2.3.4` is a package's version where the line reads like package output (a scoped name,
 * npm/yarn/pip, a bump, a dependency tree) and a host elsewhere (`ssh deploy@81.2.69.142`).
 */
const PACKAGE_AT = /[\w.-]+@$/;
const PACKAGE_LINE = /\b(?:npm|npx|yarn|pnpm|pip|gem|bump|bumps|bumped|upgrade|install|dependencies|deps)\b|[├└│]|@[\w.-]+\/[\w.-]+@$/i;

/**
 * A dotted quad that is more likely a version than a host: after a version word or operator, a
 * quad of single digits (1.2.3.4, 2.0.1.5: versions far more often than hosts, and the public
 * hosts of that shape are resolvers like 1.1.1.1 and 8.8.8.8, nobody's personal address), or a
 * quad ending in .0 with no prefix length (4.25.3.0: a network address identifies no host).
 */
function looksLikeVersion(text: string, start: number, quad: string): boolean {
  const before = text.slice(Math.max(0, start - 40), start);
  if (VERSION_BEFORE.test(before) || VERSION_WORD_ON_LINE.test(before)) return true;
  if (PACKAGE_AT.test(before)) {
    const line = text.slice(text.lastIndexOf("\n", start) + 1, start);
    if (PACKAGE_LINE.test(line)) return true;
  }
  if (/^\d\.\d\.\d\.\d$/.test(quad)) return true;
  return quad.endsWith(".0") && text[start + quad.length] !== "/";
}

/** Characters an IPv6 address is written with (hex groups, colons, an embedded dotted quad). */
function isV6Char(c: number): boolean {
  return (c >= 48 && c <= 58) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102) || c === 46;
}

const WORD_CHAR = /\w/;

/**
 * IPv6 candidates: around each colon, the run of hex digits, colons and dots, with at least two
 * colons, not inside a word (an escaped line break, `\n` in JSON text, ends one). A scan from
 * colon to colon: a regex that may start a match at any colon or hex digit of a JSON text or a
 * log costs several times more.
 */
function ipv6Candidates(text: string): { candidate: string; start: number }[] {
  const found: { candidate: string; start: number }[] = [];
  for (let colon = text.indexOf(":"); colon !== -1; ) {
    let start = colon;
    while (start > 0 && isV6Char(text.charCodeAt(start - 1))) start--;
    let end = colon + 1;
    let colons = 1;
    for (; end < text.length && isV6Char(text.charCodeAt(end)); end++) if (text.charCodeAt(end) === 58) colons++;
    colon = text.indexOf(":", end);
    // A sentence's full stop after the address is not part of it.
    while (end > start && text.charCodeAt(end - 1) === 46) end--;
    if (colons < 2) continue;
    const before = text[start - 1];
    const escaped = before !== undefined && "nrt".includes(before) && text[start - 2] === "\\";
    if (before !== undefined && WORD_CHAR.test(before) && !escaped) continue;
    if (WORD_CHAR.test(text[end] ?? "")) continue;
    found.push({ candidate: text.slice(start, end), start });
  }
  return found;
}

function blockList(v4: string[], v6: string[]): BlockList {
  const list = new BlockList();
  for (const range of v4) {
    const [net, prefix] = range.split("/") as [string, string];
    list.addSubnet(net, Number(prefix), "ipv4");
  }
  for (const range of v6) {
    const [net, prefix] = range.split("/") as [string, string];
    list.addSubnet(net, Number(prefix), "ipv6");
  }
  return list;
}

/** Not an address on the public internet: private, loopback, link-local, CGNAT, multicast, reserved, netmasks. */
const PRIVATE = blockList(
  [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "224.0.0.0/4",
    "240.0.0.0/4",
  ],
  ["::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8"],
);
/** RFC 5737 and RFC 3849: addresses for examples and documentation. */
const DOCUMENTATION = blockList(["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"], ["2001:db8::/32"]);

export function ipRange(address: string): "private" | "documentation" | "public" {
  const type = isIP(address) === 6 ? "ipv6" : "ipv4";
  if (DOCUMENTATION.check(address, type)) return "documentation";
  if (PRIVATE.check(address, type)) return "private";
  return "public";
}

/** Found IPs; `kept` counts the ones the range policy left in place, by range. */
export function findIps(text: string, policy: IpPolicy, kept?: { private: number; documentation: number }): PiiSpan[] {
  const spans: PiiSpan[] = [];
  const consider = (address: string, start: number) => {
    const range = ipRange(address);
    if (range !== "public" && policy[range] === "keep") {
      if (kept) kept[range]++;
      return;
    }
    spans.push({ kind: "ip", start, end: start + address.length, key: address.toLowerCase() });
  };
  if (text.includes(".")) {
    for (const m of text.matchAll(IPV4)) {
      if (isIP(m[0]) !== 4) continue;
      if (looksLikeVersion(text, m.index, m[0])) continue;
      consider(m[0], m.index);
    }
  }
  if (text.includes(":")) {
    for (const { candidate, start } of ipv6Candidates(text)) {
      if (isIP(candidate) !== 6) continue;
      // `a::b`, `dead::beef` in code are valid IPv6 too: a compressed address needs at least three groups.
      const groups = candidate.split(":").filter((g) => g !== "").length;
      if (candidate.includes("::") ? groups < 3 && candidate !== "::1" : groups < 8 && !candidate.includes(".")) continue;
      consider(candidate, start);
    }
  }
  return spans;
}
