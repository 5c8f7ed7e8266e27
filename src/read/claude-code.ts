import type { Domain, SourceRef, Turn } from "../core/trajectory.ts";
import { toolResultText } from "./chat-rows/anthropic-blocks.ts";
import { excerpt, firstLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, fileStem, isRecord, jsonObjectLines, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "claude-code";

/**
 * Claude Code session logs (`~/.claude/projects/<project>/<sessionId>.jsonl`, sub-agent runs in
 * `agent-<agentId>.jsonl` beside it or under `<sessionId>/subagents/`), and the same entries as
 * `claude -p --output-format stream-json` prints them.
 *
 * One line = one entry: `type` user / assistant (a `message` with `content`: a string or blocks
 * `text`, `thinking`, `tool_use {id, name, input}`, `tool_result {tool_use_id, content, is_error}`),
 * or bookkeeping (`summary`, `system`, `file-history-snapshot`, `queue-operation`, `progress`, …).
 * Entries are linked by `uuid` / `parentUuid` into a tree (a rewind starts a new branch; a
 * `compact_boundary` has no parent but a `logicalParentUuid`, followed). Streamed twice, line by
 * line: a first pass keeps only the links (uuid, parent, line number), a second builds the turns
 * from the chosen lines, so memory grows with the number of lines, never with abandoned content.
 *
 * - **Record**: the file's main conversation (entries with `isSidechain` not true) is one
 *   trajectory: the chain from its last user/assistant entry back to the root. Entries off that
 *   chain (abandoned branches after a rewind) are counted in `meta.chain.off_chain`; a tool result
 *   off the chain that answers a tool call on it is still used (Claude Code writes the results of
 *   parallel calls as side branches). Sidechains (`isSidechain: true`, sub-agent / Task runs) are
 *   kept apart: each is a trajectory of its own, grouped by `agentId` (else by the sidechain's
 *   root); an `agent-*.jsonl` file is such a sidechain. Sessions concatenated into one file
 *   (unconnected trees whose roots name different `sessionId`s) are one main conversation each,
 *   id = their `sessionId`. Stream-json entries (no `uuid`) are read
 *   in file order, sub-agent messages (`parent_tool_use_id` set) grouped apart the same way.
 * - **Action**: a `tool_use` block: for Bash the `command`; for every other tool (Read, Edit,
 *   Write, Grep, Glob, WebFetch, WebSearch, Task, `mcp__server__tool`, …) the name and the input
 *   as JSON, `Edit {"file_path": …}`. Parallel calls in one message are turns in call order; a
 *   call repeated with the same id (a compaction replay) is counted, not repeated.
 * - **Observation**: the `tool_result` with that `tool_use_id`: its text (text blocks joined by
 *   newlines, an image as `[image]`), with the `<system-reminder>` blocks Claude Code appends for
 *   the model taken off (counted). An empty result reads `[exit code 0, no output]` for Bash,
 *   `[no output]` for other tools. `is_error` is `turn.meta.is_error`. A call never answered
 *   (interrupted) makes no turn (counted).
 * - **Thinking**: the assistant's `thinking` and `text` blocks since the previous tool call,
 *   joined by a blank line. Text after the last call is `meta.final_message`.
 * - **Task**: the first real user prompt: not a tool result, not `isMeta` / `isCompactSummary`,
 *   not a slash command or its output (`<command-name>`, `<local-command-stdout>`, `<bash-input>`,
 *   …), not `[Request interrupted by user]`. Without one, the first slash command with its
 *   arguments. Later prompts are context: `turn.meta.user_messages` of the next turn.
 * - **Id**: the `sessionId` (`session_id`), else the file name; a sidechain's is
 *   `<sessionId>/agent-<agentId>` (or `<sessionId>/sidechain-<root uuid>`).
 * - **Domain**: `options.domain`, else from the tools called: mostly `mcp__*` → mcp; mostly
 *   WebFetch / WebSearch → web (search when searches are most of them); any edit tool (Edit,
 *   MultiEdit, Write, NotebookEdit), or a git branch and file tools (Read, Grep, Glob, LS) → swe;
 *   Bash and no file tools → terminal; otherwise swe.
 * - **Meta**: `agent: "claude-code"`, `model` (the assistant messages' most used, `<synthetic>`
 *   left out; all in `models`), `version`, `cwd`, `git_branch`, `session_id`, `sidechain`
 *   (`{agent_id?, group}`), `chain` (`off_chain`, `missing_parent`, `bridged`: over a parent
 *   lost with an unreadable line, `duplicate_uuids`), `skipped` (entries and blocks that made no
 *   turn, by kind), `final_message`,
 *   `bad_lines` (`{count, first: [{line, reason}]}`: lines that are not JSON objects with a string
 *   `type` are skipped and reported here, not fatal: a session cut by a crash keeps its turns).
 *   `meta.outcome`: only stream-json's `result` line records one (`{success, failure_mode?}`,
 *   `num_turns`, `total_cost_usd` beside it in `meta.result`); session files record none.
 *
 * Quarantined (one entry for the conversation, naming the line and field): a user/assistant
 * entry on the chosen chain whose `message`, content blocks, tool ids, names or inputs have the
 * wrong type; a conversation without a tool call that got a result (a chat, or a Warmup
 * sub-agent; the reason names the lines the file could not give, which may have held results);
 * a file with no user/assistant entry at all.
 */
export const claudeCodeReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Claude Code session JSONL (~/.claude/projects/…/<session>.jsonl, agent-*.jsonl, stream-json): tool_use → tool_result",

  sniff(head) {
    const line = firstLine(head);
    if (!/^\uFEFF?\s*\{/.test(line)) return false;
    // The entry's own type (its message's blocks have types of other names: text, tool_use, message).
    const type = [...line.matchAll(/"type"\s*:\s*"([a-z-]+)"/g)].map((match) => match[1] as string).find((name) => ENTRY_TYPES.has(name));
    if (type === undefined) return false;
    // Qwen Code's records have the same links, but Gemini contents (`message: {role, parts}`) and system payloads: gemini-cli's.
    if (/"message"\s*:\s*\{\s*"role"\s*:\s*"(user|model)"\s*,\s*"parts"\s*:/.test(line) || /"systemPayload"\s*:/.test(line)) return false;
    // A session entry: linked by uuids and named by its session.
    if (/"parentUuid"\s*:/.test(line) && /"sessionId"\s*:/.test(line)) return true;
    if (type === "summary") return /"leafUuid"\s*:/.test(line);
    if (type === "file-history-snapshot") return /"messageId"\s*:/.test(line) && /"snapshot"\s*:/.test(line);
    if (type === "queue-operation" || type === "permission-mode") return /"sessionId"\s*:/.test(line);
    // stream-json: snake-case session ids, sub-agent messages marked by parent_tool_use_id.
    if (!/"session_id"\s*:/.test(line)) return false;
    if (type === "system") return /"subtype"\s*:\s*"init"/.test(line) && /"tools"\s*:\s*\[/.test(line);
    if (type === "result") return /"subtype"\s*:/.test(line) && /"(num_turns|total_cost_usd|duration_api_ms)"\s*:/.test(line);
    return (type === "user" || type === "assistant") && /"parent_tool_use_id"\s*:/.test(line) && /"message"\s*:/.test(line);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range: _range, ...whole } = options;
    const index = await indexFile(path, whole);
    const chains = chooseChains(index);
    if (chains.length === 0) {
      const reason =
        index.badLines.count > 0
          ? `no Claude Code user or assistant entry among the file's lines (${index.badLines.count} not read: ${describeBadLines(index.badLines)})`
          : `no user or assistant entry: only ${describeCounts(index.entryTypes) || "nothing"}`;
      yield { kind: "quarantine", entry: { source: { uri: path, format: FORMAT }, stage: "read", reason } };
      return;
    }
    const builders = chains.map((chain) => new ChainBuilder(chain));
    const lineOwners = new Map<number, ChainBuilder>();
    for (const builder of builders) for (const line of builder.chain.lines) lineOwners.set(line, builder);
    for await (const line of jsonObjectLines(path, whole, FORMAT)) {
      if (line.kind === "quarantine") continue;
      const lineNo = line.source.line as number;
      const owner = lineOwners.get(lineNo);
      if (owner) owner.take(line.record, lineNo);
      // A result off every chain may still answer a call on one (parallel calls are side branches).
      else if (line.record.type === "user") for (const builder of builders) builder.stitch(line.record, lineNo);
    }
    for (const builder of builders) yield builder.finish(path, index, options.domain);
  },
};

const ENTRY_TYPES = new Set([
  "user",
  "assistant",
  "summary",
  "system",
  "file-history-snapshot",
  "queue-operation",
  "progress",
  "permission-mode",
  "result",
  "attachment",
]);

/** Lines kept per file to name in `meta.bad_lines.first` (all are counted). */
const BAD_LINES_KEPT = 10;

interface BadLines {
  count: number;
  first: { line: number; reason: string }[];
}

/** What the first pass keeps of an entry: its links and where it is. */
interface IndexNode {
  line: number;
  parent: string | undefined;
  /** `logicalParentUuid` of a compact boundary: the chain before the compaction. */
  logicalParent: string | undefined;
  conversational: boolean;
  sidechain: boolean;
  agentId: string | undefined;
  session: string | undefined;
}

interface FileIndex {
  /** Entries with a uuid, in file order (a Map keeps insertion order). */
  nodes: Map<string, IndexNode>;
  /** stream-json entries (no uuid) by group key, lines in file order. */
  linear: Map<string, number[]>;
  entryTypes: Record<string, number>;
  duplicateUuids: number;
  badLines: BadLines;
  /** stream-json `result` lines (the outcome of the main conversation). */
  result: Record<string, unknown> | undefined;
  /** stream-json's `system` `init` line names the working directory. */
  initCwd: string | undefined;
}

/** First pass: the links between entries, nothing of their content. */
async function indexFile(path: string, options: ReaderOptions): Promise<FileIndex> {
  const index: FileIndex = {
    nodes: new Map(),
    linear: new Map(),
    entryTypes: {},
    duplicateUuids: 0,
    badLines: { count: 0, first: [] },
    result: undefined,
    initCwd: undefined,
  };
  const bad = (line: number, reason: string) => {
    index.badLines.count += 1;
    if (index.badLines.first.length < BAD_LINES_KEPT) index.badLines.first.push({ line, reason });
  };
  for await (const item of jsonObjectLines(path, options, FORMAT)) {
    if (item.kind === "quarantine") {
      bad(item.entry.source.line ?? 0, item.entry.reason);
      continue;
    }
    const { record } = item;
    const line = item.source.line as number;
    if (typeof record.type !== "string") {
      bad(line, `"type": expected a string, got ${describeType(record.type)}`);
      continue;
    }
    index.entryTypes[record.type] = (index.entryTypes[record.type] ?? 0) + 1;
    if (record.type === "result" && record.parent_tool_use_id == null) index.result = resultSummary(record);
    const conversational = record.type === "user" || record.type === "assistant";
    const agentId = typeof record.agentId === "string" && record.agentId !== "" ? record.agentId : undefined;
    if (record.type === "system" && record.subtype === "init" && typeof record.cwd === "string") index.initCwd ??= record.cwd;
    // Session entries always carry parentUuid (null at a root); stream-json messages never do.
    if (typeof record.uuid === "string" && record.uuid !== "" && "parentUuid" in record) {
      if (index.nodes.has(record.uuid)) {
        index.duplicateUuids += 1;
        continue;
      }
      index.nodes.set(record.uuid, {
        line,
        parent: typeof record.parentUuid === "string" && record.parentUuid !== "" ? record.parentUuid : undefined,
        logicalParent: typeof record.logicalParentUuid === "string" ? record.logicalParentUuid : undefined,
        conversational,
        sidechain: record.isSidechain === true,
        agentId,
        session: typeof record.sessionId === "string" && record.sessionId !== "" ? record.sessionId : undefined,
      });
    } else if (conversational) {
      // stream-json: no links; sub-agent messages carry the Task call's id.
      const parentTool = record.parent_tool_use_id;
      const key = typeof parentTool === "string" && parentTool !== "" ? `task-${parentTool}` : MAIN;
      const lines = index.linear.get(key) ?? [];
      lines.push(line);
      index.linear.set(key, lines);
    }
  }
  return index;
}

const MAIN = "main";

interface Chain {
  /** `main` (`main-<sessionId>` for each session of a file that holds several), `agent-<id>`, `sidechain-<root uuid>` or `task-<tool use id>`. */
  key: string;
  /** A main conversation, not a sidechain. */
  main: boolean;
  lines: Set<number>;
  firstLine: number;
  /** Conversational entries of the group left off the chain (abandoned branches). */
  offChain: number;
  /** The chain reached an entry whose parent is not in the file (a resumed session's start). */
  missingParent: string | undefined;
  /** Times the walk stepped over a parent lost with an unreadable line. */
  bridged: number;
  root: string | undefined;
  agentId: string | undefined;
}

/** The chain of each conversation in the file: the main one first, then the sidechains by first line. */
function chooseChains(index: FileIndex): Chain[] {
  const groups = new Map<string, { members: string[]; agentId: string | undefined }>();
  // A sidechain without agentId (Claude Code 1.x) is grouped by the root its parents lead to.
  const sidechainRoot = rootFinder((uuid) => {
    const parent = index.nodes.get(uuid)?.parent;
    return parent !== undefined && index.nodes.get(parent)?.sidechain ? parent : undefined;
  });
  const mainKeyOf = mainSessionKeys(index);
  for (const [uuid, node] of index.nodes) {
    const key = !node.sidechain
      ? (mainKeyOf(uuid) ?? MAIN)
      : node.agentId !== undefined
        ? `agent-${node.agentId}`
        : `sidechain-${sidechainRoot(uuid)}`;
    const group = groups.get(key) ?? { members: [], agentId: node.agentId };
    group.members.push(uuid);
    groups.set(key, group);
  }
  const chains: Chain[] = [];
  for (const [key, group] of groups) {
    const chain = walkChain(index, key, group.members, group.agentId, isMainKey(key));
    if (chain) chains.push(chain);
  }
  for (const [key, lines] of index.linear) {
    chains.push({
      key,
      main: key === MAIN,
      lines: new Set(lines),
      firstLine: lines[0] as number,
      offChain: 0,
      missingParent: undefined,
      bridged: 0,
      root: undefined,
      agentId: undefined,
    });
  }
  chains.sort((a, b) => (a.main !== b.main ? (a.main ? -1 : 1) : a.firstLine - b.firstLine));
  return chains;
}

function isMainKey(key: string): boolean {
  return key === MAIN || key.startsWith(`${MAIN}-`);
}

/**
 * Sessions written one after the other into one file (`cat *.jsonl`): the main entries form
 * unconnected trees whose roots carry different `sessionId`s. Each such session is a main
 * conversation of its own (`main-<sessionId>`). Trees of one session (a compaction without a
 * logical parent, a resume) stay one conversation, as do the entries of a file with one session.
 * Returns undefined for every entry when the file holds at most one session.
 */
function mainSessionKeys(index: FileIndex): (uuid: string) => string | undefined {
  const rootFor = rootFinder((uuid) => {
    const node = index.nodes.get(uuid) as IndexNode;
    const next = node.parent ?? node.logicalParent;
    return next !== undefined && index.nodes.has(next) ? next : undefined;
  });
  const sessions = new Set<string>();
  for (const [uuid, node] of index.nodes) {
    if (node.sidechain) continue;
    const session = index.nodes.get(rootFor(uuid))?.session;
    if (session !== undefined) sessions.add(session);
  }
  if (sessions.size < 2) return () => undefined;
  const first = [...sessions][0];
  return (uuid) => {
    const session = index.nodes.get(rootFor(uuid))?.session;
    return session === undefined || session === first ? MAIN : `${MAIN}-${session}`;
  };
}

/**
 * The root an entry's links lead to (`next` gives the link to follow, undefined at a root), each
 * path walked once: the entries on it remember their root. A cycle ends at the entry it returns to.
 */
function rootFinder(next: (uuid: string) => string | undefined): (uuid: string) => string {
  const rootOf = new Map<string, string>();
  return (uuid) => {
    const path = new Set<string>();
    let current = uuid;
    for (;;) {
      const known = rootOf.get(current);
      if (known !== undefined) {
        current = known;
        break;
      }
      path.add(current);
      const link = next(current);
      if (link === undefined || path.has(link)) break;
      current = link;
    }
    for (const member of path) rootOf.set(member, current);
    return current;
  };
}

/** From the group's last user/assistant entry back to its root; undefined when the group has none. */
function walkChain(
  index: FileIndex,
  key: string,
  members: readonly string[],
  agentId: string | undefined,
  main: boolean,
): Chain | undefined {
  let leaf: string | undefined;
  for (const uuid of members) if (index.nodes.get(uuid)?.conversational) leaf = uuid;
  if (leaf === undefined) return undefined;
  const memberSet = new Set(members);
  const lines = new Set<number>();
  const visited = new Set<string>();
  let bridged = 0;
  let missingParent: string | undefined;
  let root: string | undefined;
  let current: string | undefined = leaf;
  while (current !== undefined && !visited.has(current)) {
    visited.add(current);
    const node = index.nodes.get(current) as IndexNode;
    lines.add(node.line);
    root = current;
    const next: string | undefined = node.parent ?? node.logicalParent;
    if (next === undefined || index.nodes.has(next)) {
      current = next;
      continue;
    }
    // The parent is not in the file: lost with an unreadable line before this one, or (no such
    // line) in another file, as when a session was resumed. Only the first is stepped over.
    const lost = lastBadLineBefore(index.badLines, node.line);
    const bridge = lost === undefined ? undefined : lastMemberBefore(index, members, lost, visited);
    if (bridge === undefined) {
      missingParent = next;
      break;
    }
    bridged += 1;
    current = bridge;
  }
  let offChain = 0;
  let firstLine = Number.POSITIVE_INFINITY;
  for (const uuid of memberSet) {
    const node = index.nodes.get(uuid) as IndexNode;
    firstLine = Math.min(firstLine, node.line);
    if (node.conversational && !visited.has(uuid)) offChain += 1;
  }
  return { key, main, lines, firstLine, offChain, missingParent, bridged, root, agentId };
}

/** The last unreadable line before `line` (only the first BAD_LINES_KEPT are known). */
function lastBadLineBefore(badLines: BadLines, line: number): number | undefined {
  let found: number | undefined;
  for (const bad of badLines.first) if (bad.line < line) found = bad.line;
  return found;
}

function lastMemberBefore(index: FileIndex, members: readonly string[], line: number, visited: Set<string>): string | undefined {
  let found: string | undefined;
  for (const uuid of members) {
    const node = index.nodes.get(uuid) as IndexNode;
    if (node.line < line && !visited.has(uuid)) found = uuid;
  }
  return found;
}

/** The outcome a stream-json `result` line records. */
function resultSummary(record: Record<string, unknown>): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  for (const key of ["subtype", "is_error", "num_turns", "duration_ms", "total_cost_usd", "stop_reason"])
    if (record[key] !== undefined && !isRecord(record[key])) summary[key] = record[key];
  return summary;
}

// User text that Claude Code writes, not the person: slash commands, their output, `!` shell mode, hooks.
const HARNESS_PROMPT =
  /^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|user-prompt-submit-hook|system-reminder|task-notification)>/;
const SLASH_COMMAND = /<command-name>([^<]*)<\/command-name>/;
const COMMAND_ARGS = /<command-args>([\s\S]*?)<\/command-args>/;
const INTERRUPTED = /^\s*\[Request interrupted by user/;
const SYSTEM_REMINDER_AT_END = /\n?<system-reminder>[\s\S]*?<\/system-reminder>\s*$/;

const SHELL_TOOLS = new Set(["Bash", "bash", "shell"]);
const EDIT_TOOLS = new Set(["Edit", "MultiEdit", "Write", "NotebookEdit", "str_replace_based_edit_tool"]);
const FILE_TOOLS = new Set(["Read", "Grep", "Glob", "LS", "NotebookRead"]);

interface Problem {
  line: number;
  field: string;
  reason: string;
}

interface OpenTurn {
  turn: Turn;
  observed: boolean;
  tool: string;
}

/** Second pass, one conversation: its chain's entries in file order become turns. */
class ChainBuilder {
  readonly chain: Chain;
  private readonly turns: OpenTurn[] = [];
  private readonly pending = new Map<string, OpenTurn>();
  private readonly seenCalls = new Set<string>();
  private readonly skipped: Record<string, number> = {};
  private readonly models: Record<string, number> = {};
  private reasoning: string[] = [];
  private userMessages: string[] = [];
  private task: string | undefined;
  private slashCommand: string | undefined;
  private lastReply: string | undefined;
  private problem: Problem | undefined;
  private sessionId: string | undefined;
  private version: string | undefined;
  private cwd: string | undefined;
  private gitBranch: string | undefined;
  private remindersRemoved = 0;
  private chainEntries = 0;
  /** Off-chain entries whose tool results answered calls of this chain. */
  private stitched = 0;

  constructor(chain: Chain) {
    this.chain = chain;
  }

  take(record: Record<string, unknown>, line: number): void {
    if (this.problem) return;
    this.chainEntries += 1;
    this.context(record);
    const type = record.type as string;
    if (type === "assistant") this.assistant(record, line);
    else if (type === "user") this.user(record, line);
    else this.count(type === "system" && typeof record.subtype === "string" ? `system_${record.subtype}` : `${type}_entry`);
  }

  /** A user entry off the chain: only its tool results that answer a call of this chain. */
  stitch(record: Record<string, unknown>, line: number): void {
    if (this.problem || this.pending.size === 0) return;
    const message = record.message;
    if (!isRecord(message) || !Array.isArray(message.content)) return;
    let answered = false;
    for (const [i, block] of message.content.entries()) {
      if (isRecord(block) && block.type === "tool_result" && typeof block.tool_use_id === "string" && this.pending.has(block.tool_use_id)) {
        this.result(block, record, `message.content.${i}`, line);
        answered = true;
      }
    }
    if (answered) this.stitched += 1;
  }

  private context(record: Record<string, unknown>): void {
    const session = record.sessionId ?? record.session_id;
    if (typeof session === "string" && session !== "") this.sessionId ??= session;
    if (typeof record.version === "string") this.version = record.version;
    if (typeof record.cwd === "string" && record.cwd !== "") this.cwd ??= record.cwd;
    if (typeof record.gitBranch === "string" && record.gitBranch !== "") this.gitBranch = record.gitBranch;
  }

  private fail(line: number, field: string, reason: string): void {
    this.problem ??= { line, field, reason: `${field}: ${reason}` };
  }

  private message(record: Record<string, unknown>, line: number): unknown[] | undefined {
    const message = record.message;
    if (!isRecord(message)) {
      this.fail(line, "message", `expected an object, got ${describeType(message)}`);
      return undefined;
    }
    // Tool inputs are written into actions as JSON.
    if (nestsTooDeep(message)) {
      this.fail(line, "message", `nested deeper than ${MAX_JSON_DEPTH} levels`);
      return undefined;
    }
    const { content } = message;
    if (typeof content === "string") return [{ type: "text", text: content }];
    if (Array.isArray(content)) return content;
    this.fail(line, "message.content", `expected a string or an array of blocks, got ${describeType(content)}`);
    return undefined;
  }

  private assistant(record: Record<string, unknown>, line: number): void {
    const blocks = this.message(record, line);
    if (!blocks) return;
    const model = (record.message as Record<string, unknown>).model;
    if (record.isApiErrorMessage === true || model === "<synthetic>") {
      // Claude Code's own stand-in for a failed API call, not the model's words.
      this.count(record.isApiErrorMessage === true ? "api_error_message" : "synthetic_message");
      return;
    }
    if (typeof model === "string" && model !== "") this.models[model] = (this.models[model] ?? 0) + 1;
    for (const [i, block] of blocks.entries()) {
      const field = `message.content.${i}`;
      if (!isRecord(block) || typeof block.type !== "string") {
        this.fail(line, field, `expected a content block with a string type, got ${describeType(block)}`);
        return;
      }
      if (block.type === "text" || block.type === "thinking") {
        const key = block.type;
        const text = block[key];
        if (typeof text !== "string") {
          this.fail(line, `${field}.${key}`, `expected a string, got ${describeType(text)}`);
          return;
        }
        if (text.trim() !== "") this.reasoning.push(text.trim());
      } else if (block.type === "tool_use" || block.type === "server_tool_use") this.toolUse(block, field, line);
      else this.count(`assistant_${block.type}_block`);
      if (this.problem) return;
    }
  }

  private toolUse(block: Record<string, unknown>, field: string, line: number): void {
    const { id, name, input } = block;
    if (typeof id !== "string" || id === "") {
      this.fail(line, `${field}.id`, `expected a tool use id, got ${describeType(id)}`);
      return;
    }
    if (typeof name !== "string" || name === "") {
      this.fail(line, `${field}.name`, `expected a tool name, got ${describeType(name)}`);
      return;
    }
    if (!isRecord(input)) {
      this.fail(line, `${field}.input`, `expected an object, got ${describeType(input)}`);
      return;
    }
    if (this.seenCalls.has(id)) {
      this.count("repeated_tool_use");
      return;
    }
    this.seenCalls.add(id);
    const command = input.command;
    const action = SHELL_TOOLS.has(name) && typeof command === "string" ? command : `${name} ${JSON.stringify(input)}`;
    const meta: Record<string, unknown> = { tool: name, tool_use_id: id };
    if (this.userMessages.length > 0) meta.user_messages = this.userMessages;
    const thinking = this.reasoning.join("\n\n");
    const turn: Turn = { action, observation: "", ...(thinking !== "" ? { thinking } : {}), meta };
    const open = { turn, observed: false, tool: name };
    this.turns.push(open);
    this.pending.set(id, open);
    this.reasoning = [];
    this.userMessages = [];
  }

  private user(record: Record<string, unknown>, line: number): void {
    const blocks = this.message(record, line);
    if (!blocks) return;
    if (record.isMeta === true || record.isCompactSummary === true || record.isVisibleInTranscriptOnly === true) {
      this.count(record.isCompactSummary === true ? "compact_summary" : "meta_message");
      return;
    }
    const texts: string[] = [];
    for (const [i, block] of blocks.entries()) {
      const field = `message.content.${i}`;
      if (!isRecord(block) || typeof block.type !== "string") {
        this.fail(line, field, `expected a content block with a string type, got ${describeType(block)}`);
        return;
      }
      if (block.type === "tool_result") {
        if (typeof block.tool_use_id !== "string") {
          this.fail(line, `${field}.tool_use_id`, `expected a string, got ${describeType(block.tool_use_id)}`);
          return;
        }
        this.result(block, record, field, line);
        if (this.problem) return;
      } else if (block.type === "text") {
        if (typeof block.text !== "string") {
          this.fail(line, `${field}.text`, `expected a string, got ${describeType(block.text)}`);
          return;
        }
        texts.push(block.text);
      } else if (block.type === "image" || block.type === "document") texts.push(`[${block.type}]`);
      else this.count(`user_${block.type}_block`);
    }
    if (texts.length > 0) this.prompt(texts.join("\n"));
  }

  private prompt(text: string): void {
    if (text.trim() === "") return;
    if (INTERRUPTED.test(text)) {
      this.count("interruption");
      return;
    }
    if (HARNESS_PROMPT.test(text)) {
      const command = SLASH_COMMAND.exec(text)?.[1]?.trim();
      if (command) {
        const args = COMMAND_ARGS.exec(text)?.[1]?.trim();
        this.slashCommand ??= args ? `${command} ${args}` : command;
        this.count("slash_command");
      } else this.count("harness_message");
      return;
    }
    // Assistant words the person answered: a reply, not reasoning for the next call.
    if (this.reasoning.length > 0) {
      this.lastReply = this.reasoning.join("\n\n");
      this.count("assistant_reply");
      this.reasoning = [];
    }
    if (this.task === undefined) this.task = text;
    else this.userMessages.push(text);
  }

  private result(block: Record<string, unknown>, record: Record<string, unknown>, field: string, line: number): void {
    const id = block.tool_use_id as string;
    const open = this.pending.get(id);
    if (!open) {
      this.count(this.seenCalls.has(id) ? "repeated_tool_result" : "result_without_call");
      return;
    }
    const text = toolResultText(block.content, { bareStrings: true });
    if (text === undefined) {
      this.fail(line, `${field}.content`, `expected a string or an array of blocks, got ${describeType(block.content)}`);
      return;
    }
    let observation = text;
    for (let match = SYSTEM_REMINDER_AT_END.exec(observation); match; match = SYSTEM_REMINDER_AT_END.exec(observation)) {
      observation = observation.slice(0, match.index);
      this.remindersRemoved += 1;
    }
    if (observation === "")
      observation = SHELL_TOOLS.has(open.tool) && block.is_error !== true ? "[exit code 0, no output]" : "[no output]";
    open.turn.observation = observation;
    open.observed = true;
    const meta = open.turn.meta as Record<string, unknown>;
    if (block.is_error === true) meta.is_error = true;
    const structured = record.toolUseResult;
    if (isRecord(structured) && structured.interrupted === true) meta.interrupted = true;
    // A Task call's sub-agent: its trajectory is `<sessionId>/agent-<agentId>`.
    if (isRecord(structured) && typeof structured.agentId === "string") meta.agent_id = structured.agentId;
    if (open.tool.startsWith("mcp__") && isJsonText(observation)) meta.observation_format = "json";
    this.pending.delete(id);
  }

  finish(path: string, index: FileIndex, domain: Domain | undefined): ReadItem {
    const { chain } = this;
    const sidechain = !chain.main;
    const session = this.sessionId ?? fileStem(path, /\.jsonl$/i);
    const id = sidechain ? `${session}/${chain.key}` : session;
    if (this.problem) {
      const { line, field, reason } = this.problem;
      return { kind: "quarantine", entry: { source: { uri: path, line, format: FORMAT }, id, stage: "read", field, reason } };
    }
    const source: SourceRef = { uri: path, format: FORMAT, ...(sidechain ? { line: chain.firstLine } : {}) };
    if (this.pending.size > 0) this.count("call_without_result", this.pending.size);
    const turns = this.turns.filter((open) => open.observed).map((open) => open.turn);
    if (turns.length === 0) {
      if (this.reasoning.length > 0) this.count("assistant_text");
      const prompt = this.task ?? this.slashCommand;
      const what = [
        prompt !== undefined ? `the prompt ${JSON.stringify(excerpt(prompt))}` : "no prompt",
        describeCounts(this.skipped),
      ].filter(Boolean);
      // Lines the file could not give (over input.max_line_bytes, cut, not JSON) may have held the results.
      const unread = index.badLines.count > 0 ? `; ${index.badLines.count} line(s) not read: ${describeBadLines(index.badLines)}` : "";
      const reason = `no tool call with a result in the ${sidechain ? `sidechain ${chain.key}` : "conversation"} (${this.chainEntries} entries on its chain: ${what.join(", ")}): a chat without actions${unread}`;
      return { kind: "quarantine", entry: { source, id, stage: "read", field: "message.content", reason } };
    }
    const task = this.task ?? this.slashCommand;
    const meta = this.meta(index, session, sidechain);
    if (this.reasoning.length > 0) meta.final_message = this.reasoning.join("\n\n");
    else if (this.lastReply !== undefined) meta.final_message = this.lastReply;
    const trajectory = {
      id,
      domain:
        domain ??
        inferDomain(
          this.turns.map((open) => open.tool),
          this.gitBranch,
        ),
      source,
      ...(task !== undefined ? { task } : {}),
      turns,
      meta,
    };
    return { kind: "trajectory", trajectory };
  }

  private meta(index: FileIndex, session: string, sidechain: boolean): Record<string, unknown> {
    const { chain } = this;
    const meta: Record<string, unknown> = { agent: "claude-code" };
    const models = Object.entries(this.models).sort((a, b) => b[1] - a[1]);
    if (models[0]) meta.model = models[0][0];
    if (models.length > 1) meta.models = Object.fromEntries(models);
    if (this.version !== undefined) meta.version = this.version;
    const cwd = this.cwd ?? index.initCwd;
    if (cwd !== undefined) meta.cwd = cwd;
    if (this.gitBranch !== undefined) meta.git_branch = this.gitBranch;
    meta.session_id = session;
    if (sidechain) meta.sidechain = { ...(chain.agentId !== undefined ? { agent_id: chain.agentId } : {}), group: chain.key };
    const chainMeta: Record<string, unknown> = {};
    if (chain.offChain - this.stitched > 0) chainMeta.off_chain = chain.offChain - this.stitched;
    if (chain.missingParent !== undefined) chainMeta.missing_parent = chain.missingParent;
    if (chain.bridged > 0) chainMeta.bridged = chain.bridged;
    if (index.duplicateUuids > 0) chainMeta.duplicate_uuids = index.duplicateUuids;
    if (Object.keys(chainMeta).length > 0) meta.chain = chainMeta;
    if (this.remindersRemoved > 0) this.count("system_reminder", this.remindersRemoved);
    if (Object.keys(this.skipped).length > 0) meta.skipped = this.skipped;
    if (index.badLines.count > 0) meta.bad_lines = index.badLines;
    if (!sidechain && index.result) {
      meta.result = index.result;
      const subtype = index.result.subtype;
      meta.outcome = {
        success: index.result.is_error !== true && subtype === "success",
        ...(typeof subtype === "string" && subtype !== "success" ? { failure_mode: subtype } : {}),
      };
    }
    return meta;
  }

  private count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }
}

function isJsonText(text: string): boolean {
  if (!/^\s*[[{]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The domain of a conversation from the tools it called (see the reader's comment). */
export function inferDomain(tools: readonly string[], gitBranch: string | undefined): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (share((tool) => tool.startsWith("mcp__")) > 0.5) return "mcp";
  if (share((tool) => tool === "WebFetch" || tool === "WebSearch") > 0.5) {
    // Fetching pages is browsing; only a run of mostly searches is search.
    return share((tool) => tool === "WebSearch") > 0.5 ? "search" : "web";
  }
  if (tools.some((tool) => EDIT_TOOLS.has(tool))) return "swe";
  if (gitBranch !== undefined && tools.some((tool) => FILE_TOOLS.has(tool))) return "swe";
  if (tools.some((tool) => SHELL_TOOLS.has(tool)) && !tools.some((tool) => FILE_TOOLS.has(tool))) return "terminal";
  return "swe";
}

function describeCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([key, n]) => `${n} ${key}`)
    .join(", ");
}

function describeBadLines(badLines: BadLines): string {
  return badLines.first.map((bad) => `line ${bad.line}: ${bad.reason}`).join("; ");
}
