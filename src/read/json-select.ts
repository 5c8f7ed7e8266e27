import type { Readable } from "node:stream";
import type Assembler from "stream-json/assembler.js";
import type { Token } from "stream-json/parser.js";
import { openDecompressed } from "../io/open-input.ts";

/** Keys and array indices from the document root to a value, e.g. `["trajectory", 3]`. */
export type JsonPath = readonly (string | number)[];

/** What starts at a path: an object, an array, or a string / number / boolean / null. */
export type JsonKind = "object" | "array" | "scalar";

export interface SelectedValue {
  path: JsonPath;
  value: unknown;
}

/** The bytes were read but are not one well-formed JSON document: a record-level problem. */
export class JsonSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JsonSyntaxError";
  }
}

function scalarOf(token: Token): unknown {
  switch (token.name) {
    case "stringValue":
      return token.value;
    case "numberValue":
      return Number(token.value);
    case "trueValue":
      return true;
    case "falseValue":
      return false;
    default:
      return null;
  }
}

/**
 * Streams one JSON document with stream-json and yields, in document order, only the values whose
 * path (and kind) `wanted` accepts, each assembled on its own. Everything else is skipped token by
 * token, so a multi-megabyte file never exists as one string or one object graph: memory holds the
 * selected value being assembled plus the path. `wanted` sees each value's path and kind when the
 * value starts; once a value is selected, nothing inside it is offered again.
 *
 * Errors of the byte source (I/O, a truncated archive) are rethrown as they are; a malformed
 * document throws `JsonSyntaxError`, so callers can quarantine the record and still fail loudly on
 * broken files.
 */
export async function* selectJson(source: Readable, wanted: (path: JsonPath, kind: JsonKind) => boolean): AsyncGenerator<SelectedValue> {
  let sourceError: Error | undefined;
  let tokens: ReturnType<typeof import("stream-json/parser.js").default.asStream> | undefined;
  // Listening before anything is awaited: the source's errors are never unhandled.
  source.on("error", (err: Error) => {
    sourceError = err;
    tokens?.destroy(err);
  });
  // stream-json loads with the first document streamed: planning (which imports this module) never needs it.
  const [{ default: AssemblerClass }, { default: parser }] = await Promise.all([
    import("stream-json/assembler.js"),
    import("stream-json/parser.js"),
  ]);
  // Packed tokens only (keyValue, stringValue, numberValue): what the Assembler reads, and fewer tokens.
  tokens = parser.asStream({ streamValues: false });
  if (sourceError) tokens.destroy(sourceError);
  source.pipe(tokens);

  // One slot per open container: the key or index of the child being read.
  const path: (string | number)[] = [];
  const containers: ("object" | "array")[] = [];
  let assembler: Assembler | undefined;
  let assembledPath: JsonPath = [];
  try {
    for await (const token of tokens as AsyncIterable<Token>) {
      if (assembler) {
        assembler.consume(token);
        if (assembler.done) {
          yield { path: assembledPath, value: assembler.current };
          assembler = undefined;
        }
        continue;
      }
      if (token.name === "keyValue") {
        path[path.length - 1] = token.value;
        continue;
      }
      if (token.name === "endObject" || token.name === "endArray") {
        containers.pop();
        path.pop();
        continue;
      }
      const top = containers.length - 1;
      if (containers[top] === "array") path[top] = (path[top] as number) + 1;
      const kind: JsonKind = token.name === "startObject" ? "object" : token.name === "startArray" ? "array" : "scalar";
      const opens = kind !== "scalar";
      if (wanted(path, kind)) {
        if (opens) {
          assembler = new AssemblerClass();
          assembler.consume(token);
          assembledPath = [...path];
        } else {
          yield { path: [...path], value: scalarOf(token) };
        }
        continue;
      }
      if (kind === "object" || kind === "array") {
        containers.push(kind);
        path.push(kind === "object" ? "" : -1);
      }
    }
  } catch (err) {
    if (sourceError) throw sourceError;
    throw new JsonSyntaxError(`invalid JSON: ${(err as Error).message}`);
  } finally {
    tokens.destroy();
    source.destroy();
  }
}

/**
 * Streams the selected values of one (plain, gzip or zstd) JSON file into `take`, in document
 * order. Returns the reason when the file is not one well-formed JSON document; I/O errors throw.
 */
export async function forEachSelected(
  path: string,
  wanted: (path: JsonPath, kind: JsonKind) => boolean,
  take: (selected: SelectedValue) => void,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const { stream } = await openDecompressed(path);
  try {
    for await (const selected of selectJson(stream, wanted)) take(selected);
    return { ok: true };
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false, reason: err.message };
    throw err;
  }
}
