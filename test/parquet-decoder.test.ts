import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { afterAll, describe, expect, it } from "vitest";
import { acquireDecoder, type Decoder, type DecoderReply, releaseDecoder } from "../src/io/parquet-decoder.ts";
import { openParquetTable } from "../src/io/parquet-table.ts";
import { ROOT, tempDir } from "./helpers.ts";

/**
 * The Parquet decoder threads (src/io/parquet-decoder.ts): a released decoder is kept for the next
 * file unless parquet-wasm panicked in it, and what it hands back is the file's rows.
 */

const EXPLAINERS = join(ROOT, "data/knowledge/explainers.parquet");
const HUB_SHARD = join(ROOT, "test/fixtures/generated/hf-datasets/hub-snapshot/data/train-00000-of-00001.parquet");

/** A row as plain JSON (nested Arrow values too; 64-bit integers as text). */
const plain = (row: { toJSON(): unknown }): unknown =>
  JSON.parse(JSON.stringify(row.toJSON(), (_key, value) => (typeof value === "bigint" ? value.toString() : value)));

/** Every row of every group of `path`, read through `decoder`, as plain JSON. */
async function rowsThrough(decoder: Decoder, path: string): Promise<unknown[]> {
  const opened = await decoder.request({ kind: "open", path });
  if (opened.kind !== "opened") throw new Error(`open: ${JSON.stringify(opened)}`);
  const rows: unknown[] = [];
  for (const group of opened.rowGroupRows.keys()) {
    const reply = await decoder.request({ kind: "read", group });
    if (reply.kind !== "group") throw new Error(`group ${group}: ${JSON.stringify(reply)}`);
    rows.push(...tableFromIPC(reply.ipc).toArray().map(plain));
  }
  return rows;
}

/** The same rows read on this thread, without a decoder (the reference). */
async function rowsHere(path: string): Promise<unknown[]> {
  const table = await openParquetTable(path);
  try {
    const rows: unknown[] = [];
    for (const group of table.rowGroupRows.keys()) rows.push(...(await table.readRowGroup(group)).toArray().map(plain));
    return rows;
  } finally {
    table.close();
  }
}

/** `EXPLAINERS` with one byte inverted at `at` (written to a temporary file). */
function damaged(at: number): string {
  const bytes = new Uint8Array(readFileSync(EXPLAINERS));
  bytes[at] = (bytes[at] as number) ^ 0xff;
  const path = join(tempDir(), `damaged-at-${at}.parquet`);
  writeFileSync(path, bytes);
  return path;
}

afterAll(async () => {
  // Ends the idle decoder this file's tests leave behind.
  await acquireDecoder().close();
});

describe("Parquet decoder threads", () => {
  it("a released decoder serves the next file: the same thread, that file's rows, the first file closed", async () => {
    const first = acquireDecoder();
    expect(await rowsThrough(first, EXPLAINERS)).toEqual(await rowsHere(EXPLAINERS));
    await releaseDecoder(first);

    const second = acquireDecoder();
    expect(second).toBe(first);
    // The file it had open was closed on release: reading before the next open is refused.
    const stale: DecoderReply = await second.request({ kind: "read", group: 0 });
    expect(stale).toMatchObject({ kind: "failed", error: "no file is open" });
    const hubRows = await rowsThrough(second, HUB_SHARD);
    expect(hubRows.length).toBeGreaterThan(0);
    expect(hubRows).toEqual(await rowsHere(HUB_SHARD));
    await releaseDecoder(second);
    // While one file is being read, another reader gets a thread of its own.
    const third = acquireDecoder();
    const fourth = acquireDecoder();
    expect(third).toBe(first);
    expect(fourth).not.toBe(first);
    await releaseDecoder(fourth); // kept: no decoder is idle
    await releaseDecoder(third); // ended: one is idle already
    expect(acquireDecoder()).toBe(fourth);
  });

  it("a decoder in which parquet-wasm panicked is ended, not kept: the next file gets a fresh thread", async () => {
    const decoder = acquireDecoder();
    // A damaged page: parquet-wasm aborts (`RuntimeError: unreachable`) decoding it.
    const opened = await decoder.request({ kind: "open", path: damaged(100) });
    expect(opened.kind).toBe("opened");
    const replies: DecoderReply["kind"][] = [];
    for (let group = 0; group < 3; group++) replies.push((await decoder.request({ kind: "read", group })).kind);
    expect(replies).toContain("died");
    expect(decoder.reusable).toBe(false);
    await releaseDecoder(decoder);
    const next = acquireDecoder();
    expect(next).not.toBe(decoder);
    expect(await rowsThrough(next, EXPLAINERS)).toEqual(await rowsHere(EXPLAINERS));
    await releaseDecoder(next);
  });

  it("an error parquet-wasm returns (a damaged footer) leaves the decoder sound and kept", async () => {
    const decoder = acquireDecoder();
    const { size } = statSync(EXPLAINERS);
    const opened = await decoder.request({ kind: "open", path: damaged(size - 20) });
    expect(opened).toMatchObject({ kind: "failed", error: expect.stringMatching(/Parquet error/) });
    expect(decoder.reusable).toBe(true);
    await releaseDecoder(decoder);
    const next = acquireDecoder();
    expect(next).toBe(decoder);
    expect(await rowsThrough(next, EXPLAINERS)).toEqual(await rowsHere(EXPLAINERS));
    await releaseDecoder(next);
  });
});
