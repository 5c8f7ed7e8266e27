/**
 * The BPE rank table (src/tokenize/rank-table.ts) against the plain reference it replaces: a
 * Map from `atob(base64)` to rank, built from the same rank text. Every entry of tiktoken's
 * bundled encodings is looked up, in both of tiktoken's text forms, with text that is no entry.
 */

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RankTable } from "../src/tokenize/rank-table.ts";
import { cachedRankTable } from "../src/tokenize/rank-table-cache.ts";
import { tempDir } from "./helpers.ts";

const require = createRequire(import.meta.url);

/** What piece-bpe.ts built before: the reference. */
function referenceRanks(ranksText: string): Map<string, number> {
  const ranks = new Map<string, number>();
  for (const line of ranksText.split("\n")) {
    if (line.startsWith("! ")) {
      const fields = line.split(" ");
      let rank = Number(fields[1]);
      for (let i = 2; i < fields.length; i++) ranks.set(atob(fields[i] as string), rank++);
    } else if (line.length > 0) {
      const space = line.indexOf(" ");
      if (space < 0) ranks.set(atob(line), Number.NaN);
      else ranks.set(atob(line.slice(0, space)), Number(line.slice(space + 1)));
    }
  }
  return ranks;
}

const get = (table: RankTable, key: string) => table.get(`<${key}>`, 1, key.length + 1);

function expectSame(ranksText: string, table = RankTable.parse(ranksText)): void {
  const reference = referenceRanks(ranksText);
  expect(reference.size).toBeGreaterThan(0);
  let mismatches = 0;
  for (const [key, rank] of reference) if (!Object.is(get(table, key), rank)) mismatches++;
  expect(mismatches).toBe(0);
}

/** tiktoken's packed form, `! <first rank> <base64> …`, of a per-line rank text with consecutive ranks. */
function packed(ranksText: string, perLine: number): string {
  const lines = ranksText.split("\n").filter(Boolean);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += perLine) {
    const chunk = lines.slice(i, i + perLine).map((line) => line.split(" "));
    out.push(`! ${chunk[0]?.[1]} ${chunk.map(([base64]) => base64).join(" ")}`);
  }
  return out.join("\n");
}

describe("BPE rank table", () => {
  const ranksOf = (encoding: string) =>
    (JSON.parse(readFileSync(require.resolve(`tiktoken/encoders/${encoding}.json`), "utf8")) as { bpe_ranks: string }).bpe_ranks;

  it("o200k_base: every entry has the reference's rank", () => expectSame(ranksOf("o200k_base")));

  it("cl100k_base: every entry has the reference's rank, in tiktoken's file, one rank per line and packed anew", () => {
    const ranks = ranksOf("cl100k_base");
    expectSame(ranks);
    const perLine = [...referenceRanks(ranks)].map(([key, rank]) => `${btoa(key)} ${rank}`).join("\n");
    expectSame(perLine);
    expectSame(packed(perLine, 1000));
  });

  it("text that is no entry is undefined; a range is looked up without the text around it", () => {
    const table = RankTable.parse(["YQ== 0", "Yg== 1", "YWI= 2", "YWJj 3"].join("\n"));
    expect(table.get("xaby", 1, 3)).toBe(2);
    expect(table.get("xabc", 1, 4)).toBe(3);
    expect(table.get("xabc", 1, 1)).toBeUndefined();
    expect(table.get("ba", 0, 2)).toBeUndefined();
    expect(table.get("\u00ff", 0, 1)).toBeUndefined();
  });

  it("odd lines read as the reference reads them: a key listed twice, no rank, CRLF, empty packed fields", () => {
    expectSame(["YQ== 0", "YQ== 7", "Yg==", "YWI= 2\r", "YWJj 3", ""].join("\n"));
    expectSame(["! 5 YQ== Yg==  YWI= ", "! 9 YWJj\r", "! 12", "! "].join("\n"));
  });

  it("property: random byte strings, in either form, read as the reference reads them", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.uint8Array({ minLength: 1, maxLength: 12 }), {
          minLength: 1,
          maxLength: 60,
          selector: (b) => Buffer.from(b).toString("latin1"),
        }),
        (keys) => {
          const perLine = keys.map((key, rank) => `${Buffer.from(key).toString("base64")} ${rank}`).join("\n");
          expectSame(perLine);
          expectSame(packed(perLine, 7));
          const table = RankTable.parse(perLine);
          const known = new Set(keys.map((key) => Buffer.from(key).toString("latin1")));
          for (const key of keys) {
            const longer = `${Buffer.from(key).toString("latin1")}\u0000`;
            if (!known.has(longer)) expect(table.get(longer, 0, longer.length)).toBeUndefined();
          }
        },
      ),
    );
  });

  it("kept as bytes: the table read back from toBytes has the reference's rank for every entry; changed or cut bytes are refused", () => {
    const ranks = ranksOf("o200k_base");
    const bytes = RankTable.parse(ranks).toBytes();
    expectSame(ranks, RankTable.fromBytes(bytes));
    // A Buffer from a pool may start at any offset: the copy is read the same.
    const shifted = Buffer.alloc(bytes.length + 3);
    shifted.set(bytes, 3);
    expectSame(ranks, RankTable.fromBytes(shifted.subarray(3)));
    for (const at of [40, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const changed = bytes.slice();
      changed[at] = (changed[at] as number) ^ 0x10;
      expect(RankTable.fromBytes(changed), `byte ${at} changed`).toBeUndefined();
    }
    expect(RankTable.fromBytes(bytes.subarray(0, bytes.length - 4))).toBeUndefined();
    expect(RankTable.fromBytes(new Uint8Array(16))).toBeUndefined();
    // Negative control: the unchanged bytes are accepted.
    expect(RankTable.fromBytes(bytes.slice())).toBeDefined();
  });

  it("the on-disk cache: built and written once, then read back; a damaged file is rebuilt; no folder, no cache", () => {
    const dir = tempDir("lwm-rank-cache-");
    const ranks = ["YQ== 0", "Yg== 1", "YWI= 2", "YWJj 3"].join("\n");
    const first = cachedRankTable(ranks, { dir, key: "k" });
    const [file] = readdirSync(dir);
    expect(file).toMatch(/^rank-table-k-\d+\.bin$/);
    const path = join(dir, file as string);
    expect(get(first, "ab")).toBe(2);
    // The file is what a later process reads: plant another table's bytes there and it is served.
    writeFileSync(path, RankTable.parse(["YQ== 5", "Yg== 6", "YWI= 7", "YWJj 8"].join("\n")).toBytes());
    expect(get(cachedRankTable(ranks, { dir, key: "k" }), "ab")).toBe(7);
    // A damaged file is refused, rebuilt from the text and written anew.
    const damaged = readFileSync(path);
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] as number) ^ 1;
    writeFileSync(path, damaged);
    expect(get(cachedRankTable(ranks, { dir, key: "k" }), "ab")).toBe(2);
    expect(get(RankTable.fromBytes(readFileSync(path)) as RankTable, "ab")).toBe(2);
    // Other ranks under the same key (a different text length) do not meet this file.
    expect(get(cachedRankTable(["YQ== 0", "YWI= 9"].join("\n"), { dir, key: "k" }), "ab")).toBe(9);
    // A folder that cannot be made (under a file) only means no cache.
    const notADir = join(dir, file as string, "sub");
    expect(get(cachedRankTable(ranks, { dir: notADir, key: "k" }), "ab")).toBe(2);
    expect(existsSync(notADir)).toBe(false);
  });
});
