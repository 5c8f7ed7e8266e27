import { relative } from "node:path";
import { expect, it } from "vitest";
import { redactSecrets } from "../../src/normalize/secrets.ts";
import { filesUnder, readSampleText } from "../support/sample-files.ts";
import { expectSameRedaction, textsOf } from "../support/secrets-reference.ts";
import { describeThirdParty, haveThirdParty, THIRD_PARTY_DIR } from "./support.ts";

const files = haveThirdParty ? filesUnder(THIRD_PARTY_DIR) : [];
const named = files.map((path) => relative(THIRD_PARTY_DIR, path));

describeThirdParty("secret redaction on the third-party samples", () => {
  it("holds samples to check", () => {
    expect(files.length).toBeGreaterThan(40);
  });

  // Real agent recordings hold hashes, ids, base64 and keys that only look like secrets.
  it.each(named)("finds no secret in %s", (path) => {
    const counters = new Map<string, number>();
    redactSecrets(readSampleText(`${THIRD_PARTY_DIR}/${path}`), counters);
    expect(Object.fromEntries(counters)).toEqual({});
  });

  it.each(named)("the fast redaction equals the rule-by-rule reference on %s, whole and line by line", (path) => {
    for (const text of textsOf(readSampleText(`${THIRD_PARTY_DIR}/${path}`))) expectSameRedaction(text);
  });
});
