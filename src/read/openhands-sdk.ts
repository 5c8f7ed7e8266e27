import type { Domain, SourceRef } from "../core/trajectory.ts";
import { readSideJsonObject, readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf } from "../io/side-files.ts";
import { answerCall, type OpenCall, SessionTurns } from "./agent-log/session-turns.ts";
import type { Companions, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, isRecord, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

/*
 * OpenHands V1 conversations (OpenHands/software-agent-sdk, the `openhands` CLI and app since late
 * 2025), one event per file, read by the openhands reader (src/read/openhands.ts):
 * - the SDK and CLI: `~/.openhands/conversations/<conversation id hex>/events/event-<idx>-<event
 *   uuid>.json` (`persistence_const.py`: `EVENT_FILE_PATTERN`, idx 0-based, 5 digits or more),
 *   beside `base_state.json`; ordered by idx;
 * - the app server: `…/v1_conversations/<conversation id hex>/<event id hex>.json`; ordered by
 *   `timestamp`.
 * Each file is `Event.model_dump_json()`: `{kind, id, timestamp, source, …}`, `kind` the class name.
 *
 * - **Action**: an `ActionEvent`'s `action` (`{kind: TerminalAction | ExecuteBashAction, command}` →
 *   the command; any other tool → `tool_name {the action's fields}`; an action the SDK could not
 *   build → `tool_name {tool_call.arguments}`), its `thought` and `reasoning_content` the thinking.
 * - **Observation**: the `ObservationEvent` whose `action_id` is the action's `id`: its
 *   `observation.content` (text parts joined, images `[image]`; the pre-release `output`), a
 *   command's `exit_code` in `turn.meta.exit_code` (`[exit code N, no output]` when it printed
 *   nothing and failed), `is_error` → `turn.meta.is_error`. An `AgentErrorEvent` for the call (by
 *   `tool_call_id`) is its observation, marked as an error. A `UserRejectObservation` means the call
 *   never ran: no turn (`rejected_call`).
 * - `MessageEvent`s: the user's first is the task, later ones the next turn's user messages; the
 *   agent's are its text (the last one `meta.final_message`). Other kinds (system prompt,
 *   condensation, state updates, pauses, tokens…) are counted.
 * - **Id**: the conversation folder's name. **Meta**: `agent: "openhands"`, `layout:
 *   "sdk-conversation"`, `conversation_id`, `model` (`base_state.json`'s `agent.llm.model`), `skipped`.
 */

const SDK_KINDS =
  "ActionEvent|ObservationEvent|MessageEvent|SystemPromptEvent|UserRejectObservation|AgentErrorEvent|Condensation|CondensationRequest|CondensationSummaryEvent|ConversationStateUpdateEvent|ConversationErrorEvent|PauseEvent|InterruptEvent|TokenEvent|HookExecutionEvent|LLMCompletionLogEvent";
const SDK_KIND = new RegExp(`"kind"\\s*:\\s*"(?:${SDK_KINDS})"`);

/** One V1 event as its own file: an object naming an SDK event kind, with its source and time. */
export function isSdkEventHead(head: string): boolean {
  const text = head.replace(/^\uFEFF/, "").trimStart();
  return (
    text.startsWith("{") &&
    SDK_KIND.test(text) &&
    /"source"\s*:\s*"(?:agent|user|environment|hook)"/.test(text) &&
    /"timestamp"\s*:\s*"/.test(text)
  );
}

/** The SDK's event file name (`event-00012-<uuid>.json`) and the app server's (`<32 hex>.json`). */
const SDK_EVENT_FILE = /^event-(\d{5,})-[0-9a-fA-F-]{8,}\.json(?:\.gz|\.zst)?$/;
const SERVER_EVENT_FILE = /^[0-9a-f]{32}\.json(?:\.gz|\.zst)?$/;

interface Conversation {
  /** The conversation's folder (what its first event file claims). */
  folder: string;
  /** The folder holding the event files. */
  events: string;
  /** Event file names: by index for the SDK's, by name (then by timestamp, once read) for the server's. */
  files: string[];
  layout: "sdk" | "server";
}

/** The conversation an event file belongs to, with its event files; undefined for a file of neither layout. */
async function conversationOf(path: string): Promise<Conversation | undefined> {
  const name = baseName(path);
  const dir = parentOf(path);
  if (SDK_EVENT_FILE.test(name) && baseName(dir) === "events") {
    const files = [...(await listFolder(dir)).files.keys()]
      .filter((file) => SDK_EVENT_FILE.test(file))
      .map((file) => ({ file, idx: Number((SDK_EVENT_FILE.exec(file) as RegExpExecArray)[1]) }))
      .sort((a, b) => a.idx - b.idx || (a.file < b.file ? -1 : 1))
      .map(({ file }) => file);
    return { folder: parentOf(dir), events: dir, files, layout: "sdk" };
  }
  if (SERVER_EVENT_FILE.test(name)) {
    const files = [...(await listFolder(dir)).files.keys()].filter((file) => SERVER_EVENT_FILE.test(file)).sort();
    return { folder: dir, events: dir, files, layout: "server" };
  }
  return undefined;
}

/** The first event file of a conversation claims its folder (base_state.json, the other events). */
export async function sdkCompanions(path: string): Promise<Companions | undefined> {
  const conversation = await conversationOf(path);
  if (!conversation || conversation.files[0] !== baseName(path)) return undefined;
  const listing = await listFolder(conversation.events);
  const bytes = conversation.files.reduce((sum, file) => sum + (listing.files.get(file) ?? 0), 0);
  return { dirs: [conversation.folder], files: [], bytes, label: `OpenHands conversation ${baseName(conversation.folder)}` };
}

class Problem extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** A V1 conversation, read from any of its event files (see the comment at the top). */
export async function readSdkConversation(path: string, options: ReaderOptions, domain: Domain | undefined): Promise<ReadItem> {
  const source: SourceRef = { uri: path, line: 1, offset: 0, format: "openhands" };
  const conversation = await conversationOf(path);
  const id = conversation ? baseName(conversation.folder) : baseName(path).replace(/\.json.*$/, "");
  const files = conversation ? conversation.files.map((file) => beside(conversation.events, file)) : [path];
  const events: { event: Record<string, unknown>; field: string }[] = [];
  try {
    for (const file of files) {
      const field = conversation?.layout === "sdk" ? `events/${baseName(file)}` : baseName(file);
      const read = await readWholeText(file, options.maxLineBytes);
      if ("error" in read) throw new Problem(field, read.error);
      let event: unknown;
      try {
        event = JSON.parse(read.text);
      } catch (err) {
        throw new Problem(field, `invalid JSON: ${(err as Error).message}`);
      }
      if (!isRecord(event)) throw new Problem(field, `expected an event object, got ${describeType(event)}`);
      if (nestsTooDeep(event)) throw new Problem(field, `nested deeper than ${MAX_JSON_DEPTH} levels`);
      events.push({ event, field });
    }
    // The app server names files by event id: their order is their time.
    if (conversation?.layout === "server") events.sort((a, b) => timeOf(a.event).localeCompare(timeOf(b.event)));
    const built = pairEvents(events);
    const meta: Record<string, unknown> = { agent: "openhands", layout: "sdk-conversation", conversation_id: id };
    const state = conversation ? await readSideJsonObject(beside(conversation.folder, "base_state.json"), options.maxLineBytes) : undefined;
    const llm = isRecord(state?.agent) && isRecord(state.agent.llm) ? state.agent.llm : undefined;
    if (typeof llm?.model === "string" && llm.model !== "") meta.model = llm.model;
    if (built.finalMessage !== undefined) meta.final_message = built.finalMessage;
    if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
    if (built.turns.length === 0) {
      const counts = Object.entries(built.skipped).map(([what, n]) => `${n} ${what}`);
      const reason = `no tool call with a result in the conversation (${[`${events.length} events`, ...counts].join(", ")}): a chat without actions`;
      return { kind: "quarantine", entry: { source, id, stage: "read", field: "events", reason } };
    }
    return {
      kind: "trajectory",
      trajectory: {
        id,
        domain: domain ?? "swe",
        source,
        ...(built.task !== undefined ? { task: built.task } : {}),
        turns: built.turns,
        meta,
      },
    };
  } catch (err) {
    if (!(err instanceof Problem)) throw err;
    return { kind: "quarantine", entry: { source, id, stage: "read", field: err.field, reason: `${err.field}: ${err.message}` } };
  }
}

const timeOf = (event: Record<string, unknown>): string => (typeof event.timestamp === "string" ? event.timestamp : "");

const TERMINAL_ACTIONS = new Set(["TerminalAction", "ExecuteBashAction", "BashAction"]);

function pairEvents(events: readonly { event: Record<string, unknown>; field: string }[]) {
  const turns = new SessionTurns();
  const calls = new Map<string, OpenCall>();
  const byToolCall = new Map<string, string>();
  for (const { event, field } of events) {
    switch (event.kind) {
      case "MessageEvent": {
        const message = isRecord(event.llm_message) ? event.llm_message : undefined;
        const text = contentText(message?.content);
        if (message?.role === "user" || event.source === "user") turns.user(text);
        else turns.text(text);
        break;
      }
      case "ActionEvent": {
        const id = typeof event.id === "string" && event.id !== "" ? event.id : undefined;
        const tool = typeof event.tool_name === "string" && event.tool_name !== "" ? event.tool_name : undefined;
        if (id === undefined) throw new Problem(`${field}.id`, `expected an event id, got ${describeType(event.id)}`);
        if (tool === undefined) throw new Problem(`${field}.tool_name`, `expected a tool name, got ${describeType(event.tool_name)}`);
        if (typeof event.reasoning_content === "string") turns.thinking(event.reasoning_content);
        turns.text(contentText(event.thought));
        calls.set(id, turns.call(id, tool, actionText(event, tool)));
        if (typeof event.tool_call_id === "string") byToolCall.set(event.tool_call_id, id);
        break;
      }
      case "ObservationEvent": {
        const call = typeof event.action_id === "string" ? calls.get(event.action_id) : undefined;
        if (!call || call.answered) {
          turns.count("observation_without_action");
          break;
        }
        if (!isRecord(event.observation))
          throw new Problem(`${field}.observation`, `expected an observation object, got ${describeType(event.observation)}`);
        observe(call, event.observation);
        break;
      }
      case "AgentErrorEvent": {
        const actionId = typeof event.tool_call_id === "string" ? byToolCall.get(event.tool_call_id) : undefined;
        const call = actionId !== undefined ? calls.get(actionId) : undefined;
        if (!call || call.answered) turns.count("agent_error");
        else answerCall(call, typeof event.error === "string" ? event.error : jsonTextOr(event.error, "[error]"), true);
        break;
      }
      case "UserRejectObservation":
        if (typeof event.action_id !== "string" || !turns.drop(event.action_id, "rejected_call")) turns.count("rejection_without_action");
        break;
      default:
        turns.count(typeof event.kind === "string" ? event.kind : "event_without_kind");
    }
  }
  return turns.finish();
}

/** An action as its command (terminal actions) or `tool {fields}`; an action the SDK could not build, by its call's arguments. */
function actionText(event: Record<string, unknown>, tool: string): string {
  const action = event.action;
  if (isRecord(action)) {
    if (TERMINAL_ACTIONS.has(String(action.kind)) && typeof action.command === "string") return action.command;
    const { kind: _kind, ...fields } = action;
    return `${tool} ${jsonTextOr(fields, "{}")}`;
  }
  const call = isRecord(event.tool_call) ? event.tool_call : undefined;
  return `${tool} ${typeof call?.arguments === "string" ? call.arguments : "{}"}`;
}

function observe(call: OpenCall, observation: Record<string, unknown>): void {
  const text =
    observation.content !== undefined ? contentText(observation.content) : typeof observation.output === "string" ? observation.output : "";
  const metadata = isRecord(observation.metadata) ? observation.metadata : undefined;
  const exit = [observation.exit_code, metadata?.exit_code].find((value): value is number => typeof value === "number");
  const meta = call.turn.meta as Record<string, unknown>;
  if (exit !== undefined) meta.exit_code = exit;
  const silent = text.trim() === "" && exit !== undefined && exit !== 0;
  answerCall(call, silent ? `[exit code ${exit}, no output]` : text, observation.is_error === true || observation.error === true);
}

/** SDK content: a string, or `[{type: "text", text} | {type: "image"}]`. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : isRecord(part) && part.type === "image" ? "[image]" : ""))
    .filter((text) => text !== "")
    .join("\n");
}
