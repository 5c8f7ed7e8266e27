import { openDecompressed } from "./open-input.ts";

/** A whole (decompressed) file as text, or why it could not be read: records that are whole files. */
export async function readWholeText(path: string, maxBytes: number): Promise<{ text: string } | { error: string }> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const { stream } = await openDecompressed(path);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) {
        stream.destroy();
        return { error: `file is over the ${maxBytes}-byte record limit (input.max_line_bytes)` };
      }
      chunks.push(chunk);
    }
  } catch (err) {
    return { error: `cannot read the file: ${(err as Error).message}` };
  }
  return { text: new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks)) };
}

/**
 * A metadata file beside a record (a settings or meta JSON file) as a JSON object, or undefined when
 * it is missing, over `maxBytes`, not JSON or not an object: such files only add facts, so their
 * absence or damage never refuses the record.
 */
export async function readSideJsonObject(path: string, maxBytes: number): Promise<Record<string, unknown> | undefined> {
  const read = await readWholeText(path, maxBytes);
  if ("error" in read) return undefined;
  try {
    const value: unknown = JSON.parse(read.text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
