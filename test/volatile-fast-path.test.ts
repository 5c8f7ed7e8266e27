import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findVolatile, findVolatileByAllRules, type VolatileKind } from "../src/normalize/volatile.ts";

/**
 * findVolatile skips the rules whose necessary conditions a text lacks (one pass over its
 * characters); findVolatileByAllRules runs every rule. They must agree on every text.
 */

/** Fragments that build near-misses and hits of every rule: keys, separators, digit and hex runs. */
const FRAGMENTS = [
  "request_id",
  "x-Request-Id",
  "amzn-RequestId",
  "TRACE_ID",
  "correlation-id",
  "cf-ray",
  "created_at",
  "ts",
  "exp",
  "time",
  "ts: 1717171717 ",
  '"created_at":"1717171717"',
  "req_",
  "req_8f3a2b1c9d0e",
  "chatcmpl-",
  "chatcmpl-abcdefghij",
  "GMT",
  " GMT",
  "Tue, ",
  "Jun",
  ":",
  "=",
  '"',
  "'",
  " ",
  "\n",
  "\t",
  "-",
  ".",
  "_",
  "T",
  "Z",
  "+02:00",
  "1",
  "12",
  "2025",
  "123456789",
  "1717171717",
  "1717171717171",
  "17171717171712",
  "deadbeef",
  "DEADBEEF",
  "abc123",
  "9b2f1c6e-8d4a-4f0b-b6a1-2c3d4e5f6a7b",
  "2025-06-18T15:04:05.123Z",
  "2024-01-02 03:04",
  "Tue, 03 Jun 2025 10:00:00 GMT",
  "é",
  "日本",
  "😀",
  "word",
];

const text = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 4 })), { maxLength: 40 })
  .map((parts) => parts.join(""));

describe("findVolatile's fast path", () => {
  it("finds exactly what running every rule finds", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(findVolatile(t)).toEqual(findVolatileByAllRules(t));
      }),
      { numRuns: 3000 },
    );
  });

  it("is tested on texts where every kind occurs (the property above is not vacuous)", () => {
    const seen = new Map<VolatileKind, number>();
    fc.assert(
      fc.property(text, (t) => {
        for (const span of findVolatileByAllRules(t)) seen.set(span.kind, (seen.get(span.kind) ?? 0) + 1);
      }),
      { numRuns: 3000, seed: 1 },
    );
    for (const kind of ["request_id", "timestamp", "epoch_ms", "epoch_s", "uuid"] as const)
      expect(seen.get(kind) ?? 0, kind).toBeGreaterThan(10);
  });

  it("agrees on hand-picked edges of the pre-check (runs that just reach or miss each condition)", () => {
    const cases = [
      "id: 1717171717", // epoch_s needs a time key: nothing
      "ts: 1717171717",
      "ts:\n1717171717",
      "ts 1717171717171",
      "x 1717171717171.5",
      "abcdef12-3456-7890-abcd-ef1234567890",
      "abcdef1-3456-7890-abcd-ef1234567890",
      "2025-06-18 15:04",
      "025-06-18 15:04",
      "Request-Id=abcdef",
      "request-id = 'abcde'",
      "chatcmpl-abcdefghij",
      "req_abcdefg",
      "Tue, 03 Jun 2025 10:00:00 GMT",
      "Tue, 03 Jun 2025 10:00:00GMT",
      "",
    ];
    for (const t of cases) expect(findVolatile(t), t).toEqual(findVolatileByAllRules(t));
    expect(findVolatile("ts: 1717171717").map((s) => s.kind)).toEqual(["epoch_s"]);
    expect(findVolatile("ts:\n1717171717").map((s) => s.kind)).toEqual(["epoch_s"]);
  });
});
