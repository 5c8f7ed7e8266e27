import { UserError } from "../core/errors.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readLines } from "../io/read-lines.ts";
import { agentWorldBenchReader } from "./agentworldbench-jsonl.ts";
import { canonicalJsonlReader } from "./canonical-jsonl.ts";
import type { Reader } from "./reader.ts";

/** Every reader, in the order `format: auto` tries them. Adding a format = one line here. */
export const READERS: readonly Reader[] = [agentWorldBenchReader, canonicalJsonlReader];

export const FORMAT_NAMES = READERS.map((reader) => reader.name);

export function readerByName(name: string): Reader {
  const reader = READERS.find((candidate) => candidate.name === name);
  if (!reader) throw new UserError(`unknown input format "${name}"; known formats: auto, ${FORMAT_NAMES.join(", ")}`);
  return reader;
}

const SNIFF_LINE_LIMIT = 64 << 20;
/** A few bad lines at the top of a file should not defeat detection. */
const SNIFF_LINES = 5;

/** Picks a reader by looking at the file's content (after decompression), not its name. */
export async function detectReader(path: string): Promise<Reader> {
  const { stream } = await openDecompressed(path);
  try {
    let tried = 0;
    for await (const line of readLines(stream, SNIFF_LINE_LIMIT)) {
      if (line.oversizedBytes !== undefined || line.text.trim() === "") continue;
      const reader = READERS.find((candidate) => candidate.sniff(line.text));
      if (reader) return reader;
      tried += 1;
      if (tried >= SNIFF_LINES) break;
    }
    const what = tried === 0 ? "it has no non-empty lines" : `none of its first ${tried} non-empty lines matches a known format`;
    throw new UserError(`${path}: cannot detect the input format: ${what}; set inputs[].format to one of ${FORMAT_NAMES.join(", ")}`);
  } finally {
    stream.destroy();
  }
}
