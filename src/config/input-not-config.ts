import { closeSync, openSync, readSync } from "node:fs";
import { extname, isAbsolute, relative } from "node:path";
import { packedFileKind } from "../read/packed-file-kind.ts";

/**
 * A new user's first command is often `lwm-data run data.jsonl`: an input file where the job
 * config goes. YAML's own error for that ("Implicit keys need to be on a single line") says
 * nothing useful, and a 2 GB Parquet file would be read whole first. This module recognizes such
 * a file from its first bytes (and its name) and says how to read it instead.
 */

/** No config is this large; a file past it is not read as one. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

const HEAD_BYTES = 64 * 1024;

/** Magic numbers of the binary inputs lwm-data reads (packed-file-kind.ts names the others). */
const MAGIC: readonly { bytes: readonly number[]; what: string }[] = [
  { bytes: [0x1f, 0x8b], what: "a gzip-compressed file" },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], what: "a zstd-compressed file" },
  { bytes: [0x50, 0x41, 0x52, 0x31], what: "a Parquet file" },
];

/** Names that are data, whatever their content turns out to be. */
const DATA_EXTENSIONS: Readonly<Record<string, string>> = {
  ".jsonl": "a JSON Lines file",
  ".ndjson": "a JSON Lines file",
  ".parquet": "a Parquet file",
  ".cast": "an asciicast recording",
  ".traj": "a SWE-agent trajectory",
  ".xml": "an XML file",
  ".log": "a log file",
  ".md": "a Markdown file",
  ".arrow": "an Arrow file",
};

/** The first bytes of `path` (at most 64 KiB). */
export function readHeadBytes(path: string): Buffer {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    return head.subarray(0, readSync(fd, head, 0, HEAD_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/** What binary file `head` starts, or undefined for text. */
export function binaryKind(head: Uint8Array): string | undefined {
  for (const { bytes, what } of MAGIC) if (bytes.every((byte, i) => head[i] === byte)) return what;
  const packed = packedFileKind(new TextDecoder().decode(head.subarray(0, 1024)));
  if (packed) return packed.what;
  return head.subarray(0, 1024).includes(0) ? "a binary file" : undefined;
}

/**
 * What input file `path` looks like (`"a JSON Lines file"`), from its name and first bytes;
 * undefined when it may well be a config. For a file that failed to load as one.
 */
export function inputFileKind(path: string, head: Uint8Array): string | undefined {
  const binary = binaryKind(head);
  if (binary) return binary;
  const byName = DATA_EXTENSIONS[extname(path.replace(/\.(gz|zst|bz2|xz)$/i, "")).toLowerCase()];
  if (byName) return byName;
  const text = Buffer.from(head)
    .toString("utf8")
    .replace(/^\uFEFF/, "");
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const first = lines[0]?.trimStart() ?? "";
  if (first.startsWith("{") && (lines[1]?.trimStart().startsWith("{") ?? false)) return "a JSON Lines file";
  if (first.startsWith("[")) return "a JSON array";
  if (first.startsWith("{")) return "a JSON document";
  if (first.startsWith("<")) return "an XML or HTML file";
  return undefined;
}

/** The message for an input file given as the config: what it looks like and the commands that read it. */
export function inputNotConfigMessage(path: string, kind: string, defaultsPath: string): string {
  const shown = (p: string) => {
    const rel = relative(process.cwd(), p);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : p;
  };
  const file = shown(path);
  const defaults = shown(defaultsPath);
  return (
    `${file} is not a job config: it looks like an input file (${kind}).\n` +
    `A config (YAML) names the inputs; to read this file with the default settings:\n` +
    `  lwm-data validate ${defaults} --input ${file}\n` +
    `  lwm-data run ${defaults} --input ${file} --output <dir>\n` +
    `(docs/configuration.md "Config reference" lists every setting; docs/input-formats.md the formats read.)`
  );
}
