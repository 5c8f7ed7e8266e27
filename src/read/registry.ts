import { UserError } from "../core/errors.ts";
import { openDecompressed } from "../io/open-input.ts";
import { agentWorldBenchReader } from "./agentworldbench-jsonl.ts";
import { asciicastReader } from "./asciicast.ts";
import { browserGymReader } from "./browsergym.ts";
import { canonicalJsonlReader } from "./canonical-jsonl.ts";
import { droidBotReader } from "./droidbot.ts";
import { mcpJsonRpcReader } from "./mcp-jsonrpc.ts";
import { miniSweAgentReader } from "./mini-swe-agent.ts";
import { openHandsReader } from "./openhands.ts";
import { osA11yReader } from "./os-a11y.ts";
import type { Reader } from "./reader.ts";
import { searchApiReader } from "./search-api.ts";
import { sweAgentTrajReader } from "./swe-agent-traj.ts";
import { sweSmithReader } from "./swe-smith.ts";
import { tmuxLogReader } from "./tmux-log.ts";
import { uiautomatorReader } from "./uiautomator-xml.ts";

/** Every reader, in the order `format: auto` tries them. Adding a format = one line here. */
export const READERS: readonly Reader[] = [
  agentWorldBenchReader,
  // os-a11y lines also have turns[] of action/observation: it must be tried before canonical.
  osA11yReader,
  canonicalJsonlReader,
  asciicastReader,
  tmuxLogReader,
  sweAgentTrajReader,
  miniSweAgentReader,
  openHandsReader,
  sweSmithReader,
  browserGymReader,
  uiautomatorReader,
  droidBotReader,
  mcpJsonRpcReader,
  searchApiReader,
];

export const FORMAT_NAMES = READERS.map((reader) => reader.name);

export function readerByName(name: string): Reader {
  const reader = READERS.find((candidate) => candidate.name === name);
  if (!reader) throw new UserError(`unknown input format "${name}"; known formats: auto, ${FORMAT_NAMES.join(", ")}`);
  return reader;
}

const HEAD_BYTES = 64 << 10;

/** The first bytes of a file's decompressed content, as text. */
export async function readHead(path: string, bytes = HEAD_BYTES): Promise<string> {
  const { stream } = await openDecompressed(path);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= bytes) break;
    }
  } catch {
    // A damaged file still gets its readable start sniffed; reading it reports the damage.
  } finally {
    stream.destroy();
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks).subarray(0, bytes));
}

/** Picks a reader by looking at the file's content (after decompression), not its name. */
export async function detectReader(path: string): Promise<Reader> {
  const head = await readHead(path);
  if (head.trim() === "") throw new UserError(`${path}: cannot detect the input format: the file is empty`);
  const reader = READERS.find((candidate) => candidate.sniff(head, path));
  if (reader) return reader;
  throw new UserError(
    `${path}: cannot detect the input format from its first ${Math.min(head.length, HEAD_BYTES)} characters; set inputs[].format to one of ${FORMAT_NAMES.join(", ")}`,
  );
}
