import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRawInput } from "../src/io/input-bytes.ts";
import { readAhead } from "../src/io/read-ahead.ts";
import { tempDir } from "./helpers.ts";

describe("readAhead: a local file stream's read size", () => {
  it("is what is left of a small file (at least 4 KiB), 1 MiB for a large one, and 1 MiB for a file it cannot stat", async () => {
    const dir = tempDir();
    const small = join(dir, "small.jsonl");
    writeFileSync(small, "x".repeat(100_000));
    const large = join(dir, "large.bin");
    writeFileSync(large, Buffer.alloc(3 << 20));
    expect(await readAhead(small)).toBe(100_000);
    expect(await readAhead(small, 60_000)).toBe(40_000);
    expect(await readAhead(small, 99_000)).toBe(4096);
    expect(await readAhead(large)).toBe(1 << 20);
    expect(await readAhead(join(dir, "missing"))).toBe(1 << 20);
  });

  it("openRawInput reads every byte of a file, whole or from an offset, a small one in reads of its own size, not 1 MiB", async () => {
    const dir = tempDir();
    const path = join(dir, "lines.jsonl");
    const text = Array.from({ length: 5000 }, (_, i) => `{"i":${i}}`).join("\n");
    writeFileSync(path, text);
    const read = async (start?: number) => {
      const stream = await openRawInput(path, start === undefined ? {} : { start });
      const chunks: Buffer[] = [];
      for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
      return { text: Buffer.concat(chunks).toString(), highWaterMark: stream.readableHighWaterMark };
    };
    const whole = await read();
    expect(whole.text).toBe(text);
    expect(whole.highWaterMark).toBe(Buffer.byteLength(text));
    expect((await read(1234)).text).toBe(text.slice(1234));
    // A missing file still fails as a stream does, naming the file.
    const missing = await openRawInput(join(dir, "missing.jsonl"));
    await expect(missing.toArray()).rejects.toThrow(/missing\.jsonl/);
  });
});
