import { UserError } from "../core/errors.ts";
import { adpReader } from "./adp.ts";
import { isSqliteHead } from "./agent-log/sqlite-snapshot.ts";
import { agentWorldBenchReader } from "./agentworldbench-jsonl.ts";
import { aiderHistoryReader } from "./aider-history.ts";
import { androidControlReader } from "./android-control.ts";
import { androidInTheWildReader } from "./android-in-the-wild.ts";
import { arrowShape, isArrowIpcFile, isArrowIpcHead } from "./arrow-ipc.ts";
import { asciicastReader } from "./asciicast.ts";
import { atifReader } from "./atif.ts";
import { browserUseReader } from "./browser-use.ts";
import { browserGymReader } from "./browsergym.ts";
import { canonicalJsonlReader } from "./canonical-jsonl.ts";
import { chatMessageLinesReader } from "./chat-message-lines.ts";
import { chatToolRowsReader } from "./chat-tool-rows.ts";
import { claudeCodeReader } from "./claude-code.ts";
import { clineReader } from "./cline.ts";
import { codexRolloutReader } from "./codex-rollout.ts";
import { continueSessionReader } from "./continue-session.ts";
import { copilotChatReader } from "./copilot-chat.ts";
import { copilotCliReader } from "./copilot-cli.ts";
import { crushDatabaseKind, crushDbReader } from "./crush-db.ts";
import { type CsvShape, csvShapeOf, headerOnlyNote, utf16CsvRefusal } from "./csv-rows.ts";
import { cursorDatabaseKind, cursorDbReader } from "./cursor-db.ts";
import { droidBotReader } from "./droidbot.ts";
import { droidBotUtgReader } from "./droidbot-utg.ts";
import { factoryDroidReader } from "./factory-droid.ts";
import { geminiCliReader } from "./gemini-cli.ts";
import { gooseReader } from "./goose.ts";
import { hfDatasetMetadataReader } from "./hf-dataset-metadata.ts";
import { isInspectEvalArchive } from "./inspect-eval.ts";
import { inspectLogReader } from "./inspect-log.ts";
import {
  ARRAY_ELEMENT_FORMATS,
  arrayElementsInHead,
  describeArray,
  describeDocument,
  describeRows,
  documentAsLine,
  elementsAsLines,
  extendedRowsShape,
  firstArrayElements,
  type HeadElements,
  isJsonValueLine,
  LAYOUT_HEAD_BYTES,
  layoutOfHead,
  pandasValuesNote,
  readHead,
  rowsAsJsonlHint,
  type WrappedRowsHead,
  wrappedRowsInHead,
} from "./json-array.ts";
import { langfuseTracesReader } from "./langfuse-traces.ts";
import { langsmithRunsReader } from "./langsmith-runs.ts";
import { mcpCassetteReader } from "./mcp-cassette.ts";
import { mcpJsonRpcReader } from "./mcp-jsonrpc.ts";
import { mcpServerLogReader } from "./mcp-server-log.ts";
import { mind2WebReader } from "./mind2web.ts";
import { miniSweAgentReader } from "./mini-swe-agent.ts";
import { openCodeReader } from "./opencode.ts";
import { openCodeDatabaseKind } from "./opencode-db.ts";
import { openHandsReader } from "./openhands.ts";
import { osA11yReader } from "./os-a11y.ts";
import { osworldReader } from "./osworld.ts";
import { isOtlpProtoHead, otlpFramingOfFile } from "./otel/otlp-proto.ts";
import { otelTracesReader } from "./otel-traces.ts";
import { packedFileAdvice, packedFileKind } from "./packed-file-kind.ts";
import { isParquetFile, isParquetHead, type ParquetShape, PROBE_ROWS, parquetShape } from "./parquet-rows.ts";
import { piSessionReader } from "./pi-session.ts";
import { excerpt, type Reader } from "./reader.ts";
import { nestsTooDeep } from "./record-helpers.ts";
import { scriptReader } from "./script.ts";
import { searchApiReader } from "./search-api.ts";
import { sweAgentTrajReader } from "./swe-agent-traj.ts";
import { sweSmithReader } from "./swe-smith.ts";
import { tau2BenchReader } from "./tau2-bench.ts";
import { terminalBenchReader } from "./terminal-bench.ts";
import { textJsonlReader } from "./text-jsonl.ts";
import { textParquetReader } from "./text-parquet.ts";
import { tmuxLogReader } from "./tmux-log.ts";
import { isTtyrecFile, isTtyrecHead, ttyrecReader } from "./ttyrec.ts";
import { uiautomatorReader } from "./uiautomator-xml.ts";
import { warpDatabaseKind, warpDbReader } from "./warp-db.ts";
import { webArenaReader } from "./webarena.ts";
import { zedDatabaseKind, zedThreadsReader } from "./zed-threads.ts";

/** Every reader, in the order `format: auto` tries them. Adding a format = one line here. */
export const READERS: readonly Reader[] = [
  agentWorldBenchReader,
  // os-a11y lines also have turns[] of action/observation: it must be tried before canonical.
  osA11yReader,
  osworldReader,
  canonicalJsonlReader,
  asciicastReader,
  tmuxLogReader,
  scriptReader,
  // Binary frames: told by the head's raw bytes in `detectFormat` (the head the sniffs get is decoded text); its sniff claims nothing.
  ttyrecReader,
  terminalBenchReader,
  atifReader,
  // τ²-bench results (`{timestamp, info: {git_commit, …}, …}`) and SimulationRun files: before the chat readers, whose sniffs read their messages.
  tau2BenchReader,
  // Coding-agent logs before the generic chat rows: an older Codex rollout's bare lines are Responses-API items.
  codexRolloutReader,
  claudeCodeReader,
  geminiCliReader,
  // GitHub Copilot CLI event logs (`{"type": "session.start", "data": {…}, "id", "timestamp", "parentId"}`).
  copilotCliReader,
  // VS Code Copilot Chat sessions: `{"version": 3, "requesterUsername", …, "requests": […]}` documents and `{"kind": 0, "v": {…}}` operation logs.
  copilotChatReader,
  // Continue sessions: `{"sessionId", "title", "workspaceDirectory", "history": [{"message": {…}, "toolCallStates"}]}`.
  continueSessionReader,
  aiderHistoryReader,
  // A Cline task's message array: before chat-tool-rows and mini-swe-agent, which read other arrays of messages.
  clineReader,
  gooseReader,
  // pi coding-agent sessions: a `{"type": "session", "version", "id", "cwd"}` header line, then an id/parentId tree.
  piSessionReader,
  // Factory Droid sessions: a `session_start` line, then `message` lines of Anthropic blocks.
  factoryDroidReader,
  // OpenCode exports (`{"info": {"id": "ses_…"}, "messages": […]}`) and storage files (told by their ses_/msg_/prt_ ids).
  openCodeReader,
  // Crush's SQLite session store: told by its tables in detectFormat (its sniff claims nothing).
  crushDbReader,
  // Cursor's conversation store (globalStorage/state.vscdb): told by its cursorDiskKV table in detectFormat (its sniff claims nothing).
  cursorDbReader,
  // Zed's agent threads (threads/threads.db): told by its threads table in detectFormat (its sniff claims nothing).
  zedThreadsReader,
  // The Warp terminal's warp.sqlite: told by its blocks table in detectFormat (its sniff claims nothing).
  warpDbReader,
  inspectLogReader,
  // OTLP trace exports (`{"resourceSpans": …}`): told by their first key alone.
  otelTracesReader,
  // LangSmith runs (`run_type`) and Langfuse observations / traces: before chat-tool-rows, whose sniff reads a cut line's message keys.
  langsmithRunsReader,
  langfuseTracesReader,
  // ADP items carry web pages (`axtree`) and other datasets' fields: before the web readers, whose sniffs look for such keys.
  adpReader,
  // WebArena's alternating state/action `trajectory` list would pass swe-agent-traj's sniff.
  webArenaReader,
  mind2WebReader,
  // A browser-use AgentHistoryList: `{"history": [{"model_output", "result", "state"}]}`.
  browserUseReader,
  // Before swe-agent-traj, whose sniff claims any object with a `trajectory` array (SWE-rebench rows).
  chatToolRowsReader,
  sweAgentTrajReader,
  // One conversation written a message per line (Kimi CLI's context.jsonl): after the row readers, which read a conversation per line.
  chatMessageLinesReader,
  miniSweAgentReader,
  openHandsReader,
  sweSmithReader,
  browserGymReader,
  uiautomatorReader,
  droidBotReader,
  droidBotUtgReader,
  androidControlReader,
  androidInTheWildReader,
  mcpCassetteReader,
  mcpJsonRpcReader,
  mcpServerLogReader,
  searchApiReader,
  // `datasets`' metadata files and Hub dataset cards: they stand for the data files they describe.
  hfDatasetMetadataReader,
  // Told by the Parquet magic alone: no other format starts with it.
  textParquetReader,
  // Any JSON object with a string `text`: last, so every trajectory reader is tried first.
  textJsonlReader,
];

export const FORMAT_NAMES = READERS.map((reader) => reader.name);

export function readerByName(name: string): Reader {
  const reader = READERS.find((candidate) => candidate.name === name);
  if (!reader) throw new UserError(`unknown input format "${name}"; known formats: auto, ${FORMAT_NAMES.join(", ")}`);
  return reader;
}

const HEAD_BYTES = LAYOUT_HEAD_BYTES;
/** A pretty-printed document longer than the head is read whole for detection up to this size. */
const DOCUMENT_DETECT_BYTES = 16 << 20;

export { readHead };

/**
 * How a file's format was told from its content. `lines` are the probed lines (1-based, non-empty)
 * and what each looked like; `skipped` are the ones before the first line of the chosen format
 * that looked like none (or another) — the reader quarantines them like any bad line.
 */
export type Detection =
  | {
      kind: "format";
      reader: Reader;
      lines: ProbedLine[];
      skipped: ProbedLine[];
      /**
       * Set for a JSON array the reader reads element by element (its sniff accepted an element, not
       * the file), for a Parquet or Arrow IPC file of rows the reader reads row by row (src/read/parquet-rows.ts,
       * src/read/arrow-ipc.ts),
       * and for a CSV / TSV file of rows (`csv-rows`: src/read/csv-rows.ts).
       */
      layout?: "json-array" | "wrapped-rows" | "parquet-rows" | "arrow-rows" | "csv-rows";
      /**
       * Set by `detectFormat`: whether the content (its head) can be cut into byte-range tasks —
       * lines or Parquet row groups, not a JSON array or one pretty-printed document.
       */
      cuttable?: boolean;
    }
  /** No record in the content; `note` says why when the file is not simply blank (a CSV header and no data row). */
  | { kind: "empty"; note?: string }
  | { kind: "unrecognized"; reason: string; excerpt: string; lines: ProbedLine[] };

export interface ProbedLine {
  line: number;
  /** The reader whose sniff claimed the content from this line on (first in READERS order), if any. */
  format?: string;
}

/** Lines probed at most: a damaged first record or a few stray log lines still leave a vote. */
export const PROBE_LINES = 8;

/**
 * Picks a format from a file head by a vote over its first non-empty lines. Each probed line votes
 * for the first reader (READERS order) whose sniff accepts the head from that line on. A first
 * line that is recognized and is not a JSON value of its own (`{` of a pretty-printed document, an
 * XML declaration, a Markdown title) decides alone, as the whole document's start. Otherwise the
 * first format two lines vote for wins; when none gets two votes among PROBE_LINES lines, the
 * first line that got a vote decides. Deterministic: the same head always gives the same answer.
 */
export function detectFromHead(head: string, path: string): Detection {
  if (head.trim() === "") return { kind: "empty" };
  // A bzip2/xz/zip/tar/UTF-16 file: what it is and how to make it readable, before any line of it
  // votes (a tar of JSONL would otherwise pass for JSONL with a damaged first line).
  const packed = packedFileKind(head);
  if (packed) {
    const reason = `${packed.what}, which lwm-data does not unpack: ${packedFileAdvice(packed, path.split("/").pop() ?? path)}`;
    return { kind: "unrecognized", reason, excerpt: "", lines: [{ line: 1 }] };
  }
  const layout = layoutOfHead(head).kind;
  if (layout === "array") return detectArray(head, path, arrayElementsInHead(head));
  // One JSON document whose rows are under a container key (`{"version": …, "data": [row, …]}`).
  const wrapped = layout === "text" ? undefined : detectWrapped(head, path);
  if (wrapped) return wrapped;
  const byLines = detectLines(head, path);
  if (byLines.kind === "format" || layout !== "document") return withRowsNote(byLines, head);
  const document = wholeDocument(head);
  return withRowsNote(document === undefined ? byLines : detectDocument(head, path, document), head);
}

/**
 * The rows of a document that holds them under one container key (src/read/json-array.ts
 * `wrappedRowsInHead`), and the reader their elements vote for as JSONL lines — unless a reader
 * takes the document as one record (a trajectory that holds a `data` array): one whose sniff
 * accepts the whole document from its start, or the document as one line, and is not the rows'
 * reader (whose sniff may have matched the rows inside it), or any reader's sniff on the document
 * as one line without its rows. Format-independent: detection and reading (`recordLayout`) both ask it.
 */
export function wrappedRowsOf(
  head: string,
  path: string,
  /** The shape when the head alone does not show it (json-array.ts `extendedRowsShape`). */
  shape: WrappedRowsHead | undefined = wrappedRowsInHead(head),
): { shape: WrappedRowsHead; reader: Reader } | undefined {
  if (!shape) return undefined;
  const byElement = detectLines(elementsAsLines(shape.elements.elements), path);
  if (byElement.kind !== "format") return undefined;
  const { reader } = byElement;
  const whole = READERS.find((candidate) => candidate.sniff(head, path));
  if (whole && whole !== reader) return undefined;
  const asLine = detectLines(shape.documentLine, path);
  if (asLine.kind === "format" && asLine.reader !== reader) return undefined;
  if (detectLines(shape.bareLine, path).kind === "format") return undefined;
  return { shape, reader };
}

/** A wrapped-rows document: read by its rows' reader element by element, or refused when that reader reads no arrays. */
function detectWrapped(head: string, path: string, known?: WrappedRowsHead): Detection | undefined {
  const found = wrappedRowsOf(head, path, known ?? wrappedRowsInHead(head));
  if (!found) return undefined;
  const { shape, reader } = found;
  if (ARRAY_ELEMENT_FORMATS.has(reader.name)) return { kind: "format", reader, lines: [], skipped: [], layout: "wrapped-rows" };
  const reason =
    `the file is ${describeRows(shape)}: its ${shape.orient ? "rows" : "elements"} look like ${reader.name} records, ` +
    `but the ${reader.name} reader does not read JSON arrays; write the ${shape.orient ? "rows" : "elements"} one per line (e.g. ${rowsAsJsonlHint(shape)}) and read that JSONL file`;
  return { kind: "unrecognized", reason, excerpt: excerpt(head.trimStart()), lines: [{ line: 1 }] };
}

/** An unrecognized document that holds rows under a container key: the reason says its rows were offered too. */
function withRowsNote(detection: Detection, head: string): Detection {
  if (detection.kind !== "unrecognized") return detection;
  const shape = wrappedRowsInHead(head);
  if (!shape) {
    // pandas orient="values" on one line (a compact array of arrays).
    const values = head.trimStart().startsWith("[") ? pandasValuesNote(arrayElementsInHead(head)) : undefined;
    return values ? { ...detection, reason: `${detection.reason}${values}` } : detection;
  }
  const what = shape.orient ? `it is ${describeRows(shape)}` : `its "${shape.key}" member is ${describeArray(shape.elements)}`;
  const note = ` (${what}; offered to the sniffs as rows, one per JSONL line, they were not recognized either)`;
  return { ...detection, reason: `${detection.reason}${note}` };
}

/**
 * The JSON object a head holds whole (a pretty-printed document that ends inside it), else
 * undefined. Not one nested past MAX_JSON_DEPTH: offering it to the sniffs writes it back as a
 * line, and JSON.stringify recurses (a hostile `[[[[…` would overflow the stack and end the run).
 */
function wholeDocument(head: string): object | undefined {
  try {
    const value: unknown = JSON.parse(head.replace(/^\uFEFF/, ""));
    return typeof value === "object" && value !== null && !Array.isArray(value) && !nestsTooDeep(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A pretty-printed single JSON document (`{` alone on its first line, as `json.dump(row, indent=2)`
 * writes one row) that no reader claims as a whole: the document votes as one compact JSONL line,
 * and a reader that reads its records one per line reads it as one record (src/read/json-array.ts).
 * Another reader's claim is a refusal that says how to make the file readable.
 */
function detectDocument(head: string, path: string, document: object): Detection {
  const byLine = detectLines(documentAsLine(document), path);
  if (byLine.kind !== "format") {
    const reason =
      `no reader recognizes the content: the file is ${describeDocument(head)}, and every format's sniff said no to it as one record ` +
      `[formats tried in order: ${FORMAT_NAMES.join(", ")}]. Set inputs[].format (or --format) to read it as one of them`;
    return { kind: "unrecognized", reason, excerpt: excerpt(head.trimStart()), lines: [{ line: 1 }] };
  }
  const { reader } = byLine;
  if (ARRAY_ELEMENT_FORMATS.has(reader.name)) return { kind: "format", reader, lines: [{ line: 1, format: reader.name }], skipped: [] };
  const reason =
    `the file is ${describeDocument(head)}: it looks like one ${reader.name} record, but the ${reader.name} reader does not read a pretty-printed document; ` +
    "write it on one line (e.g. jq -c . FILE) and read that JSONL file";
  return { kind: "unrecognized", reason, excerpt: excerpt(head.trimStart()), lines: [{ line: 1 }] };
}

/**
 * A JSON array file: a reader that reads arrays itself (its sniff accepts the file's start) reads
 * it whole; else the elements vote as JSONL lines, and the winner reads the file element by element
 * (src/read/json-array.ts). The lines of a pretty-printed array are never probed one by one.
 */
function detectArray(head: string, path: string, found: HeadElements): Detection {
  const whole = READERS.find((candidate) => candidate.sniff(head, path));
  if (whole) return { kind: "format", reader: whole, lines: [{ line: 1, format: whole.name }], skipped: [] };
  if (found.elements.length > 0) {
    const byElement = detectLines(elementsAsLines(found.elements), path);
    if (byElement.kind === "format") {
      const { reader } = byElement;
      if (ARRAY_ELEMENT_FORMATS.has(reader.name)) return { kind: "format", reader, lines: [], skipped: [], layout: "json-array" };
      const reason =
        `the file is ${describeArray(found)}: its elements look like ${reader.name} records, but the ${reader.name} reader does not read JSON arrays; ` +
        "write the elements one per line (e.g. jq -c '.[]') and read that JSONL file";
      return { kind: "unrecognized", reason, excerpt: excerpt(head.trimStart()), lines: [{ line: 1 }] };
    }
  }
  const reason =
    `no reader recognizes the content: the file is ${describeArray(found)}; no format reads such a file whole, and every format's sniff said no to its elements ` +
    `[formats tried in order: ${FORMAT_NAMES.join(", ")}]${pandasValuesNote(found) ?? ""}. Set inputs[].format (or --format) to read it as one of them`;
  return { kind: "unrecognized", reason, excerpt: excerpt(head.trimStart()), lines: [{ line: 1 }] };
}

function detectLines(head: string, path: string): Detection {
  const lines: ProbedLine[] = [];
  const votes = new Map<string, number>();
  let winner: Reader | undefined;
  let first: Reader | undefined;
  let start = 0;
  for (let lineNo = 1; start < head.length && lines.length < PROBE_LINES; lineNo++) {
    const end = head.indexOf("\n", start);
    const stop = end === -1 ? head.length : end;
    const text = head.slice(start, stop);
    if (text.trim() !== "") {
      const from = start === 0 ? head : head.slice(start);
      const reader = READERS.find((candidate) => candidate.sniff(from, path));
      lines.push({ line: lineNo, ...(reader ? { format: reader.name } : {}) });
      if (reader) {
        first ??= reader;
        const count = (votes.get(reader.name) ?? 0) + 1;
        votes.set(reader.name, count);
        if (count >= 2 || (lines.length === 1 && !isJsonValueLine(text))) {
          winner = reader;
          break;
        }
      }
    }
    if (end === -1) break;
    start = end + 1;
  }
  winner ??= first;
  if (!winner) {
    const text = isBinary(head) ? "" : excerpt(head.trimStart());
    return { kind: "unrecognized", reason: unrecognizedReason(head, lines), excerpt: text, lines };
  }
  const chosen = winner.name;
  const firstOwn = lines.findIndex((probe) => probe.format === chosen);
  return { kind: "format", reader: winner, lines, skipped: lines.slice(0, firstOwn) };
}

/** More than a few control bytes or invalid UTF-8 sequences in the first 4 KiB. */
function isBinary(head: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: binary content is told by its control bytes.
  return (head.slice(0, 4096).match(/[\u0000-\u0008\u000e-\u001a\u001c-\u001f\ufffd]/g) ?? []).length > 8;
}

/** What the start of an unrecognized file looks like, for its quarantine entry. */
function describeStart(head: string): string {
  const line = head.split("\n").find((text) => text.trim() !== "") ?? "";
  if (isBinary(head)) return "binary data (control bytes or invalid UTF-8 in the first 4 KiB)";
  const trimmed = line.trim();
  if (layoutOfHead(head).kind === "document") return describeDocument(head);
  if (/^[[{]/.test(trimmed)) {
    try {
      const value: unknown = JSON.parse(trimmed);
      if (Array.isArray(value)) return `a JSON array of ${value.length} item(s)`;
      if (typeof value === "object" && value !== null) {
        const keys = Object.keys(value);
        return `a JSON object with keys ${keys.slice(0, 12).join(", ")}${keys.length > 12 ? ", …" : ""}`;
      }
    } catch (err) {
      return `JSON that does not parse (${(err as Error).message}), starting ${JSON.stringify(trimmed.slice(0, 60))}`;
    }
  }
  return `text starting ${JSON.stringify(trimmed.slice(0, 60))}`;
}

function unrecognizedReason(head: string, lines: readonly ProbedLine[]): string {
  const probed = lines.map((probe) => probe.line);
  const where = probed.length === 1 ? `line ${probed[0]}` : `lines ${probed.join(", ")}`;
  return (
    `no reader recognizes the content: every format's sniff said no from each of the first ${probed.length} non-empty line(s) (${where}) ` +
    `[formats tried in order: ${FORMAT_NAMES.join(", ")}]; the first line is ${describeStart(head)}. ` +
    "Set inputs[].format (or --format) to read it as one of them"
  );
}

/**
 * A Parquet file of rows (not text-parquet's `text` documents), or an Arrow IPC file (`arrow`): its
 * first rows, as JSON objects, vote like JSONL lines among the readers that read arrays element by
 * element; the winner reads the file row by row (src/read/parquet-rows.ts, src/read/arrow-ipc.ts).
 */
function detectParquetRows(path: string, shape: Extract<ParquetShape, { kind: "rows" }>, arrow = false): Detection {
  if (shape.rows.length === 0) return { kind: "empty" };
  const byRow = detectLines(elementsAsLines(shape.rows), path);
  if (byRow.kind === "format") {
    const { reader } = byRow;
    if (ARRAY_ELEMENT_FORMATS.has(reader.name))
      return { kind: "format", reader, lines: [], skipped: [], layout: arrow ? "arrow-rows" : "parquet-rows" };
    const reason =
      `the file is ${shape.description}: its rows look like ${reader.name} records, but the ${reader.name} reader does not read rows ` +
      "one by one from Parquet, Arrow or JSON arrays; write the rows one per line as JSONL and read that file";
    return { kind: "unrecognized", reason, excerpt: excerpt(JSON.stringify(shape.rows[0])), lines: [{ line: 1 }] };
  }
  const reason =
    `no reader recognizes the content: the file is ${shape.description}${arrow ? "" : `, not text-parquet's (a "text" string column)`}, ` +
    `and every format's sniff said no to its first ${Math.min(shape.rows.length, PROBE_ROWS)} row(s) as JSON objects ` +
    `[formats tried in order: ${FORMAT_NAMES.join(", ")}]. Set inputs[].format (or --format) to read it as one of them`;
  return { kind: "unrecognized", reason, excerpt: excerpt(JSON.stringify(shape.rows[0])), lines: [{ line: 1 }] };
}

/**
 * A CSV / TSV file of rows: a `text` column and no trajectory column is text-jsonl's (as a Parquet
 * file's is text-parquet's); otherwise its first rows, as JSON objects, vote like JSONL lines among
 * the readers that read rows one by one. The file is read row by row by one task (src/read/csv-rows.ts).
 */
function detectCsvRows(path: string, shape: CsvShape): Detection {
  const refused = (reason: string, row?: unknown): Detection => ({
    kind: "unrecognized",
    reason,
    excerpt: row === undefined ? "" : excerpt(JSON.stringify(row)),
    lines: [{ line: 1 }],
  });
  if (shape.kind === "refused") return refused(shape.reason);
  // A header and no data row (an empty split, a DataFrame with no rows): 0 records, whatever reader would read them.
  if (shape.rows.length === 0) return { kind: "empty", note: headerOnlyNote(shape) };
  if (shape.textOnly) return { kind: "format", reader: textJsonlReader, lines: [], skipped: [], layout: "csv-rows", cuttable: false };
  const byRow = detectLines(elementsAsLines(shape.rows), path);
  if (byRow.kind === "format") {
    const { reader } = byRow;
    if (ARRAY_ELEMENT_FORMATS.has(reader.name))
      return { kind: "format", reader, lines: [], skipped: [], layout: "csv-rows", cuttable: false };
    return refused(
      `the file is ${shape.description}: its rows look like ${reader.name} records, but the ${reader.name} reader does not read rows ` +
        "one by one from CSV, Parquet, Arrow or JSON arrays; write the rows one per line as JSONL and read that file",
      shape.rows[0],
    );
  }
  return refused(
    `no reader recognizes the content: the file is ${shape.description}, and every format's sniff said no to its first ` +
      `${shape.rows.length} row(s) as JSON objects [formats tried in order: ${FORMAT_NAMES.join(", ")}]. ` +
      "Set inputs[].format (or --format) to read it as one of them",
    shape.rows[0],
  );
}

/** Tells a file's format from its content (after decompression), not its name. */
export async function detectFormat(path: string): Promise<Detection> {
  const head = await readHead(path);
  // Parquet: its footer, and unless it is text-parquet's, the first rows of its first row group.
  // A file whose footer cannot be read stays text-parquet's, which reports the damage when read.
  if (isParquetHead(head) && (await isParquetFile(path))) {
    const shape = await parquetShape(path);
    if (shape.kind === "rows") return detectParquetRows(path, shape);
  }
  // Arrow IPC (`datasets`' save_to_disk and cache files): the first rows vote, as Parquet's do; the
  // file is read by one task. One whose schema cannot be read is refused here, saying so.
  if (isArrowIpcHead(head) && (await isArrowIpcFile(path))) {
    const shape = await arrowShape(path);
    if (shape.kind === "unreadable") return { kind: "unrecognized", reason: shape.reason, excerpt: "", lines: [{ line: 1 }] };
    const detection = detectParquetRows(path, shape, true);
    return detection.kind === "format" ? { ...detection, cuttable: false } : detection;
  }
  // An Inspect AI `.eval` log is a zip archive, told by the entry names in its central directory;
  // any other zip is refused below as an archive lwm-data does not unpack.
  if (head.startsWith("PK\u0003\u0004") && (await isInspectEvalArchive(path)))
    return { kind: "format", reader: inspectLogReader, lines: [{ line: 1, format: inspectLogReader.name }], skipped: [], cuttable: false };
  // OTLP protobuf (the Collector's file exporter with `format: proto`, an OTLP/HTTP request body):
  // told by its first message checking as trace or log data at the wire level (src/read/otel/otlp-proto.ts).
  if (isOtlpProtoHead(head) && (await otlpFramingOfFile(path)))
    return { kind: "format", reader: otelTracesReader, lines: [{ line: 1, format: otelTracesReader.name }], skipped: [], cuttable: false };
  // A ttyrec recording: binary frame headers, told by the head's bytes (decompressed, read again
  // only when a NUL shows in its first 12 bytes), which the decoded text head has lost.
  if (isTtyrecHead(head) && (await isTtyrecFile(path)))
    return { kind: "format", reader: ttyrecReader, lines: [{ line: 1, format: ttyrecReader.name }], skipped: [], cuttable: false };
  // OpenCode ≥ 1.2's SQLite session store, told by its tables (src/read/opencode-db.ts); any other
  // SQLite file is refused below (packed-file-kind.ts), saying to export the records.
  if (isSqliteHead(head)) {
    const database = await openCodeDatabaseKind(path, head);
    if (database === "empty") return { kind: "empty", note: "an OpenCode database with no session" };
    if (database === "sessions")
      return { kind: "format", reader: openCodeReader, lines: [{ line: 1, format: openCodeReader.name }], skipped: [], cuttable: false };
    // Crush's `.crush/crush.db` (and the Go OpenCode's `.opencode/opencode.db`): sessions and messages with JSON parts.
    const crush = await crushDatabaseKind(path, head);
    if (crush === "empty") return { kind: "empty", note: "a Crush database with no session" };
    if (crush === "sessions")
      return { kind: "format", reader: crushDbReader, lines: [{ line: 1, format: crushDbReader.name }], skipped: [], cuttable: false };
    // Cursor's `globalStorage/state.vscdb`: conversations and messages as JSON rows of a key-value table.
    const cursor = await cursorDatabaseKind(path, head);
    if (cursor === "empty")
      return {
        kind: "empty",
        note: "a Cursor database with no conversation (a workspace's state.vscdb; they are in globalStorage/state.vscdb)",
      };
    if (cursor === "sessions")
      return { kind: "format", reader: cursorDbReader, lines: [{ line: 1, format: cursorDbReader.name }], skipped: [], cuttable: false };
    // Zed's `threads/threads.db`: a thread per row, its JSON zstd-compressed.
    const zed = await zedDatabaseKind(path, head);
    if (zed === "empty") return { kind: "empty", note: "a Zed threads database with no thread" };
    if (zed === "sessions")
      return {
        kind: "format",
        reader: zedThreadsReader,
        lines: [{ line: 1, format: zedThreadsReader.name }],
        skipped: [],
        cuttable: false,
      };
    // The Warp terminal's `warp.sqlite`: each pane's command blocks.
    const warp = await warpDatabaseKind(path, head);
    if (warp === "empty") return { kind: "empty", note: "a Warp database with no command block" };
    if (warp === "sessions")
      return { kind: "format", reader: warpDbReader, lines: [{ line: 1, format: warpDbReader.name }], skipped: [], cuttable: false };
    if (database === "unconfirmed") {
      const reason =
        "an SQLite database, compressed or remote, whose start shows no OpenCode, Crush, Cursor, Zed or Warp table: lwm-data reads OpenCode's `opencode.db` " +
        "(told by its session, message and part tables), Crush's `crush.db` (sessions, messages), Cursor's `state.vscdb` (cursorDiskKV), Zed's `threads.db` (threads) " +
        "and Warp's `warp.sqlite` (blocks) but looks into a compressed or remote database only at its start; " +
        "set inputs[].format (or --format) to opencode, crush, cursor, zed or warp to read it as one (it is copied to a local file and its tables read), " +
        "or export its records as JSON or JSONL";
      return { kind: "unrecognized", reason, excerpt: "", lines: [{ line: 1 }] };
    }
  }
  // Rows in one document the head does not show: a first row past the head, a pandas frame by columns.
  const extended = await extendedRowsShape(head, path);
  const wrapped = extended && detectWrapped(head, path, extended);
  if (wrapped) return wrapped.kind === "format" ? { ...wrapped, cuttable: false } : wrapped;
  const detection = detectFromHead(head, path);
  // CSV / TSV rows (src/read/csv-rows.ts): only a text file no reader recognizes is looked at as CSV.
  if (detection.kind === "unrecognized") {
    const csv = await csvShapeOf(head, path);
    if (csv) return detectCsvRows(path, csv);
    // UTF-16 CSV / TSV (Excel's "Unicode Text" export): refused, saying what it is and how to convert it.
    const utf16 = await utf16CsvRefusal(head, path);
    if (utf16) return { ...detection, reason: utf16 };
  }
  if (detection.kind === "format") {
    const layout = layoutOfHead(head).kind;
    const whole = layout === "array" || layout === "document" || detection.layout === "wrapped-rows";
    return { ...detection, cuttable: isParquetHead(head) || !whole };
  }
  // A pretty-printed document the head does not hold whole: the document, read whole up to a bound.
  // (Told by parsing, not the head's length: 64 KiB of multi-byte text is fewer characters.)
  if (detection.kind === "unrecognized" && layoutOfHead(head).kind === "document" && wholeDocument(head) === undefined) {
    const document = wholeDocument(await readHead(path, DOCUMENT_DETECT_BYTES));
    if (document !== undefined) {
      const byDocument = detectDocument(head, path, document);
      return byDocument.kind === "format" ? { ...byDocument, cuttable: false } : byDocument;
    }
  }
  // A JSON array whose first element is longer than the head: its first elements, streamed.
  if (detection.kind === "unrecognized" && layoutOfHead(head).kind === "array") {
    const inHead = arrayElementsInHead(head);
    if (inHead.elements.length === 0 && !inHead.closed) {
      const elements = await firstArrayElements(path);
      if (elements.length > 0) return detectArray(head, path, { elements, closed: false });
    }
  }
  return detection;
}

/** Picks a reader by looking at the file's content (after decompression), not its name; throws when none fits. */
export async function detectReader(path: string): Promise<Reader> {
  const head = await readHead(path);
  const detection = await detectFormat(path);
  if (detection.kind === "format") return detection.reader;
  if (detection.kind === "empty")
    throw new UserError(`${path}: cannot detect the input format: the file is empty${detection.note ? ` (${detection.note})` : ""}`);
  throw new UserError(
    `${path}: cannot detect the input format from its first ${Math.min(head.length, HEAD_BYTES)} characters; set inputs[].format to one of ${FORMAT_NAMES.join(", ")}`,
  );
}
