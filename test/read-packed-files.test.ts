import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectFormat } from "../src/read/registry.ts";
import { tempDir } from "./helpers.ts";

/**
 * Files lwm-data does not unpack (bzip2, xz, zip, tar, UTF-16 text) are refused at detection
 * saying what they are and what to do. The archives are written by Python's standard library
 * (real bz2/lzma/zipfile/tarfile encoders), around JSONL lines the chat-tool-rows reader reads.
 */
const ROW = JSON.stringify({
  messages: [
    { role: "user", content: "list the files" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }],
    },
    { role: "tool", tool_call_id: "c1", content: "README.md" },
  ],
});
const JSONL = `${ROW}\n${ROW}\n`;

const PACK = `
import bz2, lzma, sys, tarfile, zipfile
src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
open(out + "/rows.jsonl.bz2", "wb").write(bz2.compress(data))
open(out + "/rows.jsonl.xz", "wb").write(lzma.compress(data))
with zipfile.ZipFile(out + "/rows.zip", "w", zipfile.ZIP_DEFLATED) as z: z.write(src, "rows.jsonl")
with tarfile.open(out + "/rows.tar", "w") as t: t.add(src, "rows.jsonl")
`;

describe("packed files at detection", () => {
  const dir = tempDir();
  const plain = join(dir, "rows.jsonl");
  writeFileSync(plain, JSONL);
  execFileSync("python3", ["-c", PACK, plain, dir]);
  writeFileSync(join(dir, "rows-utf16le.jsonl"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSONL, "utf16le")]));
  writeFileSync(join(dir, "rows-utf16be.jsonl"), Buffer.from(JSONL, "utf16le").swap16()); // no BOM, big-endian

  it("negative control: the same rows as plain JSONL are read", async () => {
    const detection = await detectFormat(plain);
    expect(detection.kind === "format" && detection.reader.name).toBe("chat-tool-rows");
  });

  it.each([
    ["rows.jsonl.bz2", /^a bzip2-compressed file, which lwm-data does not unpack: .*bunzip2 -k rows\.jsonl\.bz2.*zstd -o rows\.jsonl\.zst/],
    ["rows.jsonl.xz", /^an xz-compressed file, .*unxz -k rows\.jsonl\.xz/],
    ["rows.zip", /^a zip archive, .*unzip rows\.zip -d DIR/],
    // A tar of JSONL would otherwise pass for JSONL whose first line (the tar header) is damaged.
    ["rows.tar", /^a tar archive, .*tar -xf rows\.tar/],
    ["rows-utf16le.jsonl", /^UTF-16 text, .*iconv -f UTF-16 -t UTF-8 rows-utf16le\.jsonl/],
    ["rows-utf16be.jsonl", /^UTF-16 text, /],
  ])("%s: refused naming what it is and how to read it", async (name, reason) => {
    const detection = await detectFormat(join(dir, name));
    expect(detection.kind).toBe("unrecognized");
    expect(detection.kind === "unrecognized" && detection.reason).toMatch(reason);
  });
});
