import type { Readable } from "node:stream";

export interface Line {
  /** The line's text without its line ending; empty when the line was over the size limit. */
  text: string;
  /** 1-based line number (counted from where the stream starts). */
  lineNo: number;
  /** Byte offset of the line's first byte in the decompressed stream. */
  offset: number;
  /** Set when the line exceeded the limit: its full length in bytes. Its text was not kept. */
  oversizedBytes?: number;
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder("utf-8", { fatal: false });

function decodeLine(bytes: Uint8Array): string {
  // Drop the \r of CRLF files so readers see the same text either way.
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
  return decoder.decode(bytes.subarray(0, end));
}

/**
 * Splits a byte stream into lines, keeping each line's byte offset so errors can point at it.
 * Only the current line is held in memory. A line longer than `maxLineBytes` is skipped to its
 * end and reported with `oversizedBytes`, so the caller can quarantine it and go on.
 */
export async function* readLines(stream: Readable, maxLineBytes: number, startOffset = 0): AsyncGenerator<Line> {
  let pending: Buffer[] = [];
  let lineBytes = 0;
  let oversized = false;
  let lineNo = 1;
  let lineStart = startOffset;
  let position = startOffset;

  const finishLine = (): Line => {
    const line: Line = oversized
      ? { text: "", lineNo, offset: lineStart, oversizedBytes: lineBytes }
      : { text: decodeLine(pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending)), lineNo, offset: lineStart };
    pending = [];
    lineBytes = 0;
    oversized = false;
    return line;
  };

  const keep = (piece: Buffer) => {
    lineBytes += piece.length;
    if (lineBytes > maxLineBytes) {
      oversized = true;
      pending = [];
    } else if (!oversized) {
      pending.push(piece);
    }
  };

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl === -1) break;
      const piece = chunk.subarray(from, nl);
      keep(piece);
      yield finishLine();
      lineNo += 1;
      lineStart = position + nl + 1;
      from = nl + 1;
    }
    if (from < chunk.length) keep(chunk.subarray(from));
    position += chunk.length;
  }
  if (lineBytes > 0 || oversized) yield finishLine();
}
