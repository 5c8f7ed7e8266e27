import type { Reader, ReadItem } from "./reader.ts";

/**
 * Stand-ins `planJob` gives a file that `format: auto` could not hand to a real reader, so the file
 * still belongs to a task and its outcome is written deterministically by that task:
 *
 *   empty         the decompressed content is empty or blank: 0 records, nothing written (a note
 *                 in `validate` and `run`, not an error)
 *   unrecognized  no reader's sniff accepted it: one quarantine entry (stage `detect`) naming the
 *                 file, why, and what the content looks like. It counts as one record in and one
 *                 quarantined, so records in = samples out + quarantined + filtered still holds.
 *
 * Neither is in READERS: no config can ask for them by name.
 */
export const EMPTY_FORMAT = "empty";
export const UNRECOGNIZED_FORMAT = "unrecognized";

export const emptyFileReader: Reader = {
  name: EMPTY_FORMAT,
  description: "an empty input file: no records",
  domain: "from no record (the file is empty)",
  sniff: () => false,
  async *read(): AsyncGenerator<ReadItem> {},
};

/** A reader for one unrecognized file: yields its single quarantine entry. */
export function unrecognizedFileReader(reason: string, excerpt: string): Reader {
  return {
    name: UNRECOGNIZED_FORMAT,
    description: "an input file no reader recognizes: quarantined whole, as one entry",
    domain: "from no record (no reader recognizes the file)",
    sniff: () => false,
    async *read(path: string): AsyncGenerator<ReadItem> {
      yield {
        kind: "quarantine",
        entry: { source: { uri: path, format: UNRECOGNIZED_FORMAT }, stage: "detect", reason, ...(excerpt ? { excerpt } : {}) },
      };
    },
  };
}
