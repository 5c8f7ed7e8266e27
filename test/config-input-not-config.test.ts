import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { UserError } from "../src/core/errors.ts";
import { tempDir } from "./helpers.ts";

/** A new user's first command: an input file where the job config goes. */
function loadError(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  try {
    loadConfig(path);
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as Error).message;
  }
  throw new Error("the file was accepted as a config");
}

const ROW = JSON.stringify({ messages: [{ role: "user", content: "ls" }], tools: [] });
const readWith = (file: string) => new RegExp(`lwm-data run \\S*defaults\\.yaml --input \\S*${file.replace(".", "\\.")} --output`);

describe("an input file given as the config", () => {
  it("JSON Lines: named as an input file, with the commands that read it (not YAML's own error)", () => {
    const message = loadError("rows.jsonl", `${ROW}\n${ROW}\n`);
    expect(message).toMatch(/rows\.jsonl is not a job config: it looks like an input file \(a JSON Lines file\)/);
    expect(message).toMatch(readWith("rows.jsonl"));
    expect(message).not.toMatch(/Implicit keys/);
  });

  it("JSON Lines under another name: told from its lines", () => {
    expect(loadError("rows.txt", `${ROW}\n${ROW}\n`)).toMatch(/looks like an input file \(a JSON Lines file\)/);
  });

  it("a compressed file: told from its magic number, not read as text", () => {
    expect(loadError("rows.jsonl.gz", gzipSync(`${ROW}\n`))).toMatch(/rows\.jsonl\.gz is not a job config: .*\(a gzip-compressed file\)/);
    expect(loadError("data", Buffer.from([0x50, 0x41, 0x52, 0x31, 0, 0, 0]))).toMatch(/\(a Parquet file\)/);
  });

  it("a pretty-printed JSON trajectory (a YAML mapping too): the schema's errors, then what it is", () => {
    const message = loadError("trajectory.json", JSON.stringify({ schema_version: "ATIF-v1.6", steps: [] }, null, 2));
    expect(message).toMatch(/invalid config:[\s\S]*schema_version/);
    expect(message).toMatch(/trajectory\.json is not a job config: it looks like an input file \(a JSON document\)/);
  });

  it("a file larger than any config is refused before it is read whole", () => {
    const message = loadError("big.yaml", `# ${"x".repeat(5 * 1024 * 1024)}\n`);
    expect(message).toMatch(/big\.yaml is not a job config: .*more than any config/);
  });

  it("negative control: a broken YAML config keeps YAML's error, with line and column, and no hint", () => {
    const message = loadError("job.yaml", "inputs:\n  - path: [unclosed\n");
    expect(message).toMatch(/job\.yaml:\d+:\d+: invalid YAML/);
    expect(message).not.toMatch(/not a job config/);
    const unknownKey = loadError("job.yaml", "inputs:\n  - path: a.jsonl\noutput:\n  shard_count: 3\n");
    expect(unknownKey).toMatch(/output: .*shard_count/);
    expect(unknownKey).not.toMatch(/not a job config/);
  });
});
