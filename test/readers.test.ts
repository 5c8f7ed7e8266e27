import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { agentWorldBenchReader } from "../src/read/agentworldbench-jsonl.ts";
import { canonicalJsonlReader } from "../src/read/canonical-jsonl.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectReader } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 20 };
const MIXED = join(ROOT, "test/fixtures/records/mixed-bad.jsonl");

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
/** The record without where it came from, to compare the same data read from different files. */
const content = (t: Trajectory) => ({ ...t, source: undefined });

describe("canonical JSONL reader", () => {
  it("reads good records and quarantines each bad one with line, offset, field and reason", async () => {
    const items = await collect(canonicalJsonlReader.read(MIXED, OPTIONS));
    expect(items).toHaveLength(7); // 8 lines, one empty
    expect(trajectories(items).map((t) => t.id)).toEqual(["good-1", "lone-surrogate", "good-2"]);
    const bad = quarantined(items);
    expect(bad.map((q) => q.source.line)).toEqual([2, 3, 4, 5]);
    expect(bad[0]?.reason).toMatch(/invalid JSON/);
    expect(bad[1]).toMatchObject({ id: "no-turns", field: "turns" });
    expect(bad[2]).toMatchObject({ id: "wrong-type", field: "turns.0.observation" });
    expect(bad[2]?.reason).toMatch(/expected string/);
    expect(bad[3]).toMatchObject({ id: "unknown-domain", field: "domain" });
    const text = readFileSync(MIXED, "utf8");
    const lineStart = text.split("\n").slice(0, 1).join("\n").length + 1;
    expect(bad[0]?.source.offset).toBe(lineStart);
    // The lone surrogate is valid JSON; the validate stage rejects it (see pipeline tests).
    expect(items.at(-2)).toMatchObject({ kind: "trajectory", trajectory: { id: "lone-surrogate" } });
  });

  it("reads .gz and .zst by their content, to the same records as the plain file", async () => {
    const dir = tempDir();
    const raw = readFileSync(MIXED);
    // Misleading names on purpose: compression is detected from magic bytes.
    writeFileSync(join(dir, "a.jsonl"), gzipSync(raw));
    writeFileSync(join(dir, "b.data"), zstdCompressSync(raw));
    const plain = trajectories(await collect(canonicalJsonlReader.read(MIXED, OPTIONS))).map(content);
    for (const name of ["a.jsonl", "b.data"]) {
      const items = await collect(canonicalJsonlReader.read(join(dir, name), OPTIONS));
      expect(trajectories(items).map(content)).toEqual(plain);
      expect(quarantined(items)).toHaveLength(4);
    }
  });

  it("reads null optional fields as absent, an integer id past 2^53 as written, and drops unknown fields (probe 8)", async () => {
    const dir = tempDir();
    const path = join(dir, "nulls.jsonl");
    const lines = [
      '{"id":"t2","domain":"terminal","system":null,"task":null,"initialObservation":null,"meta":null,"turns":[{"action":"ls","observation":"a.txt","thinking":null,"meta":null}]}',
      '{"id":12345678901234567890,"domain":"terminal","task":"big id","meta":{"id":1},"turns":[{"action":"pwd","observation":"/home"}]}',
      '{"id":"t3","domain":"terminal","extra":{"x":1},"turns":[{"action":"ls","observation":"a","reward":1}]}',
      '{"id":"t4","domain":"terminal","turns":[{"action":null,"observation":"a"}]}',
    ];
    writeFileSync(path, `${lines.join("\n")}\n`);
    const items = await collect(canonicalJsonlReader.read(path, OPTIONS));
    expect(trajectories(items).map(content)).toEqual([
      { id: "t2", domain: "terminal", source: undefined, turns: [{ action: "ls", observation: "a.txt" }] },
      {
        id: "12345678901234567890",
        domain: "terminal",
        source: undefined,
        task: "big id",
        meta: { id: 1 },
        turns: [{ action: "pwd", observation: "/home" }],
      },
      { id: "t3", domain: "terminal", source: undefined, turns: [{ action: "ls", observation: "a" }] },
    ]);
    // A null required field is still refused.
    expect(quarantined(items)).toMatchObject([{ id: "t4", field: "turns.0.action" }]);
  });

  it("handles CRLF line endings and a last line without newline", async () => {
    const dir = tempDir();
    const path = join(dir, "crlf.jsonl");
    writeFileSync(path, readFileSync(MIXED, "utf8").trimEnd().replaceAll("\n", "\r\n"));
    const items = await collect(canonicalJsonlReader.read(path, OPTIONS));
    expect(trajectories(items).map((t) => t.id)).toEqual(["good-1", "lone-surrogate", "good-2"]);
  });

  it("quarantines a line over the size limit without holding it, and goes on", async () => {
    const dir = tempDir();
    const path = join(dir, "long.jsonl");
    const good = JSON.stringify({ id: "ok", domain: "os", turns: [{ action: "click", observation: "tree" }] });
    const huge = JSON.stringify({ id: "huge", domain: "os", turns: [{ action: "x", observation: "y".repeat(5000) }] });
    writeFileSync(path, `${huge}\n${good}\n`);
    const items = await collect(canonicalJsonlReader.read(path, { maxLineBytes: 1000 }));
    expect(quarantined(items)[0]).toMatchObject({ source: { line: 1, offset: 0 } });
    expect(quarantined(items)[0]?.reason).toMatch(/over the 1000-byte limit/);
    expect(trajectories(items).map((t) => t.id)).toEqual(["ok"]);
  });

  it("a truncated gzip file ends in an error naming the problem, not silence", async () => {
    const dir = tempDir();
    const path = join(dir, "cut.jsonl.gz");
    const whole = gzipSync(readFileSync(MIXED));
    writeFileSync(path, whole.subarray(0, whole.length - 20));
    await expect(collect(canonicalJsonlReader.read(path, OPTIONS))).rejects.toThrow(/unexpected end of file/i);
  });
});

describe("AgentWorldBench reader", () => {
  const DEMO = join(ROOT, "data/demo/mcp/everything-agentworldbench.jsonl");

  it("makes one trajectory per id from its rows, with the eval markup stripped", async () => {
    const items = await collect(agentWorldBenchReader.read(DEMO, OPTIONS));
    expect(items).toHaveLength(1);
    const [trajectory] = trajectories(items);
    // The id is beyond 2^53 and must survive exactly.
    expect(trajectory?.id).toBe("14502100000000000123");
    expect(trajectory?.domain).toBe("mcp");
    const rows = readFileSync(DEMO, "utf8").trim().split("\n");
    expect(trajectory?.turns).toHaveLength(rows.length);
    expect(trajectory?.turns[0]?.action.startsWith("```json\n{")).toBe(true);
    // The server's reply to `initialize` (id 1), as the recording's JSON (the server puts `result` first).
    expect(JSON.parse(trajectory?.turns[0]?.observation ?? "")).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: { protocolVersion: "2025-11-25" },
    });
    expect(trajectory?.turns.some((t) => t.observation.includes("Environment Observation"))).toBe(false);
  });

  it("quarantines bad rows and non-contiguous repeats of an id", async () => {
    const dir = tempDir();
    const path = join(dir, "awb.jsonl");
    const row = (id: number, turn: number, task = "terminal") =>
      JSON.stringify({
        task,
        id,
        prompt: Array.from({ length: turn }, (_, i) => `### Turn ${i + 1}\n**Action:**\nls ${i}`),
        response: Array.from({ length: turn }, (_, i) => `**Environment Observation:**\nfile${i}`),
        system_str: "sys",
        turn_idx: turn,
        total_turns: 3,
      });
    writeFileSync(path, [row(1, 1), row(1, 2), row(1, 3), row(2, 1, "spreadsheet"), "{oops", row(3, 1), row(1, 1)].join("\n"));
    const items = await collect(agentWorldBenchReader.read(path, OPTIONS));
    const good = trajectories(items);
    expect(good.map((t) => [t.id, t.turns.length])).toEqual([
      ["1", 3],
      ["3", 1],
    ]);
    expect(good[0]?.turns[2]).toEqual({ action: "ls 2", observation: "file2" });
    const bad = quarantined(items);
    expect(bad.map((q) => [q.source.line, q.field])).toEqual([
      [4, "task"],
      [5, undefined],
      [7, "id"],
    ]);
    expect(bad[0]?.reason).toMatch(/unknown domain/);
    expect(bad[2]?.reason).toMatch(/not contiguous/);
  });
});

describe("format detection", () => {
  it("detects by content, whatever the extension or compression", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "x.txt"), zstdCompressSync(readFileSync(join(ROOT, "data/demo/mcp/everything-agentworldbench.jsonl"))));
    writeFileSync(join(dir, "y.bin"), readFileSync(MIXED));
    expect((await detectReader(join(dir, "x.txt"))).name).toBe("agentworldbench-jsonl");
    expect((await detectReader(join(dir, "y.bin"))).name).toBe("canonical-jsonl");
  });

  it("says why it cannot detect a format", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "z.jsonl"), '{"hello": "world"}\n');
    await expect(detectReader(join(dir, "z.jsonl"))).rejects.toThrow(
      /z\.jsonl: cannot detect the input format from its first \d+ characters; set inputs\[\]\.format/,
    );
  });
});
