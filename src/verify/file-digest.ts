import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readAhead } from "../io/read-ahead.ts";

export interface FileDigest {
  bytes: number;
  sha256: string;
  /** Newline characters: the entries of a JSONL file whose every line ends with one. */
  lines: number;
  /** Whether the file is empty or ends with a newline (a cut JSONL file usually does not). */
  endsWithNewline: boolean;
}

const NEWLINE = 0x0a;

function countNewlines(chunk: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) count += 1;
  return count;
}

/** Size, sha256 and line count of a file in one streamed pass: shards can be far larger than memory. */
export async function fileDigest(path: string): Promise<FileDigest> {
  const hash = createHash("sha256");
  let bytes = 0;
  let lines = 0;
  let last = NEWLINE;
  for await (const chunk of createReadStream(path, { highWaterMark: await readAhead(path) }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
    lines += countNewlines(chunk);
    last = chunk[chunk.length - 1] ?? last;
  }
  return { bytes, sha256: hash.digest("hex"), lines, endsWithNewline: last === NEWLINE };
}
