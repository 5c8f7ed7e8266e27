import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadHfByteLevelBpe } from "../src/tokenize/hf-byte-level-bpe.ts";
import { bundledQwen3Dir } from "../src/tokenize/load-tokenizer.ts";
import type { Tokenizer } from "../src/tokenize/tokenizer.ts";
import { ROOT } from "./helpers.ts";

const qwen3Json = () => join(bundledQwen3Dir(), "tokenizer.json");
// A hand-made terminal recording (escape sequences, UTF-8, CJK, an emoji), Chinese, a special token's text, an apostrophe.
const sample = `${readFileSync(join(ROOT, "test/fixtures/handmade/terminal/shell-session.v2.cast"), "utf8")} 数据 <|im_end|> don't`;

/** Everything a run uses from a tokenizer, for one text. */
function behaviour(tokenizer: Tokenizer) {
  const ids = Array.from(tokenizer.encodeOrdinary(tokenizer.normalize(sample)));
  return {
    identity: tokenizer.identity,
    added: [...tokenizer.addedTokens],
    ids,
    lengths: ids.map((id) => tokenizer.tokenByteLength(id)),
    addedLengths: [...tokenizer.addedTokens.values()].map((id) => tokenizer.tokenByteLength(id)),
    decoded: Buffer.from(tokenizer.decodeBytes(ids)).toString("utf8"),
  };
}

describe("vocabulary cache", () => {
  const reference = behaviour(loadHfByteLevelBpe(qwen3Json(), "qwen3", { vocabCacheDir: false }));

  it("a cached load behaves exactly like a fresh conversion", () => {
    expect(reference.decoded).toBe(sample);
    const dir = mkdtempSync(join(tmpdir(), "lwm-vocab-"));
    expect(behaviour(loadHfByteLevelBpe(qwen3Json(), "qwen3", { vocabCacheDir: dir }))).toEqual(reference); // builds the entry
    // The converted vocabulary, and the rank table the JS encoder built from it (rank-table-cache.ts).
    const entries = readdirSync(dir).sort();
    expect(entries).toEqual([
      `byte-level-bpe-${reference.identity.vocabSha256}.json`,
      expect.stringMatching(new RegExp(`^rank-table-1-${reference.identity.vocabSha256}-\\d+\\.bin$`)),
    ]);
    const written = entries.map((entry) => readFileSync(join(dir, entry)));
    expect(behaviour(loadHfByteLevelBpe(qwen3Json(), "qwen3", { vocabCacheDir: dir }))).toEqual(reference); // reads them
    expect(entries.map((entry) => readFileSync(join(dir, entry)))).toEqual(written);
  });

  it("a damaged or mismatched entry is rebuilt, never trusted", () => {
    const dir = mkdtempSync(join(tmpdir(), "lwm-vocab-"));
    const entry = join(dir, `byte-level-bpe-${reference.identity.vocabSha256}.json`);
    writeFileSync(entry, '{"format":1,"sha256":"');
    expect(behaviour(loadHfByteLevelBpe(qwen3Json(), "qwen3", { vocabCacheDir: dir }))).toEqual(reference);
    expect(JSON.parse(readFileSync(entry, "utf8")).sha256).toBe(reference.identity.vocabSha256);
    // An entry naming another file's hash (a copied or renamed file) is not used either.
    const good = JSON.parse(readFileSync(entry, "utf8"));
    writeFileSync(entry, JSON.stringify({ ...good, sha256: "0".repeat(64), data: { ...good.data, ranks: "" } }));
    expect(behaviour(loadHfByteLevelBpe(qwen3Json(), "qwen3", { vocabCacheDir: dir }))).toEqual(reference);
  });

  it("a cache folder that cannot be created means no cache, not an error", () => {
    const notADir = join(mkdtempSync(join(tmpdir(), "lwm-vocab-")), "file");
    writeFileSync(notADir, "");
    expect(behaviour(loadHfByteLevelBpe(qwen3Json(), "qwen3", { vocabCacheDir: join(notADir, "cache") }))).toEqual(reference);
  });
});
