import { relative } from "node:path";
import { it } from "vitest";
import { filesUnder, readSampleText } from "../support/sample-files.ts";
import { expectSameWordsAsIcu, wordSplitCases } from "../support/word-split-reference.ts";
import { describeThirdParty, haveThirdParty, THIRD_PARTY_DIR } from "./support.ts";

describeThirdParty("words: the fast path matches ICU on every third-party sample", () => {
  const files = haveThirdParty ? filesUnder(THIRD_PARTY_DIR) : [];
  it.each(files.map((path) => relative(THIRD_PARTY_DIR, path)))("matches ICU on %s", (path) => {
    for (const text of wordSplitCases(readSampleText(`${THIRD_PARTY_DIR}/${path}`))) expectSameWordsAsIcu(text);
  });
});
