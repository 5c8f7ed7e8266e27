import { relative } from "node:path";
import { expect, it } from "vitest";
import { redactSecrets } from "../../src/normalize/secrets.ts";
import { filesUnder, readSampleText } from "../support/sample-files.ts";
import { expectSameRedaction, textsOf } from "../support/secrets-reference.ts";
import { describeThirdParty, haveThirdParty, THIRD_PARTY_DIR } from "./support.ts";

/**
 * Samples that hold a real credential, which redaction must find. serpstack echoes the request in
 * its response's `search_parameters`, API key included (`"access_key": "<32 hex digits>"`).
 */
const REAL_CREDENTIALS: Record<string, Record<string, number>> = {
  "formats-2026/search/open-webui__serpstack.json": { "secrets.generic_secret": 1 },
};

const files = haveThirdParty ? filesUnder(THIRD_PARTY_DIR) : [];
const named = files.map((path) => relative(THIRD_PARTY_DIR, path));

describeThirdParty("secret redaction on the third-party samples", () => {
  it("holds samples to check", () => {
    expect(files.length).toBeGreaterThan(40);
  });

  // Real agent recordings hold hashes, ids, base64 and keys that only look like secrets; the few
  // real credentials a sample holds are listed with where they are.
  it.each(named)("finds no secret in %s but the credentials it really holds", (path) => {
    const counters = new Map<string, number>();
    redactSecrets(readSampleText(`${THIRD_PARTY_DIR}/${path}`), counters);
    expect(Object.fromEntries(counters)).toEqual(REAL_CREDENTIALS[path] ?? {});
  });

  it.each(named)("the fast redaction equals the rule-by-rule reference on %s, whole and line by line", (path) => {
    for (const text of textsOf(readSampleText(`${THIRD_PARTY_DIR}/${path}`))) expectSameRedaction(text);
  });
});
