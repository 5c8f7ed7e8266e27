import type { Domain, Turn } from "../core/trajectory.ts";
import type { ReadItem } from "./reader.ts";
import { describeType, FieldError, isRecord, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

/*
 * One OpenCode session (sst/opencode, `packages/opencode/src/session/message-v2.ts`) as one
 * trajectory, however it was stored: the messages of an `opencode export` document, or the
 * message and part files of its storage folder (src/read/opencode.ts reads both and hands the
 * messages here in id order).
 *
 * A message is `{info, parts}`: `info` is a UserMessage `{id, sessionID, role: "user", time, agent,
 * model}` or an AssistantMessage `{id, sessionID, role: "assistant", parentID, modelID, providerID,
 * mode / agent, path: {cwd, root}, cost, tokens, error?, summary?, finish?}`; parts are tagged by
 * `type`: `text` (`synthetic` / `ignored` ones are OpenCode's own), `reasoning`, `tool {callID,
 * tool, state}`, `step-start`, `step-finish`, `file`, `patch`, `snapshot`, `agent`, `subtask`,
 * `retry`, `compaction`. A tool state is `{status: pending | running | completed | error, input,
 * output (completed), error (error), title, metadata, time}`. The first OpenCode versions (June
 * 2025) kept each message whole with its parts (`MessageV1`: `metadata`, `tool-invocation` parts):
 * `fromV1` turns such a message into this shape, as OpenCode's own migration did.
 */

const FORMAT = "opencode";

/**
 * A problem with a message or part: the JSON path of the field to blame, and why (the message
 * starts with the path). Its own class: the readers' catches convert it (src/read/opencode.ts, opencode-db.ts).
 */
export class OpenCodeProblem extends FieldError {
  declare readonly field: string;
  constructor(field: string, message: string) {
    super(field, `${field}: ${message}`);
  }
}

export interface OpenCodeMessage {
  info: Record<string, unknown>;
  parts: Record<string, unknown>[];
}

const ROLES = new Set(["user", "assistant"]);
const STATUSES = new Set(["pending", "running", "completed", "error"]);

/**
 * A message's info checked: an object with a string `id` and a `user` / `assistant` role.
 * `at` is its JSON path (`messages.3.info`, or `` for a message file of its own).
 */
export function checkInfo(raw: unknown, at: string): Record<string, unknown> {
  const field = (name: string) => (at === "" ? name : `${at}.${name}`);
  if (!isRecord(raw)) throw new OpenCodeProblem(at || "info", `expected a message object, got ${describeType(raw)}`);
  if (nestsTooDeep(raw)) throw new OpenCodeProblem(at || "info", `nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (typeof raw.id !== "string" || raw.id === "")
    throw new OpenCodeProblem(field("id"), `expected a message id, got ${describeType(raw.id)}`);
  if (!ROLES.has(raw.role as string))
    throw new OpenCodeProblem(field("role"), `expected "user" or "assistant", got ${jsonTextOr(raw.role, describeType(raw.role))}`);
  return raw;
}

/** A part checked: an object with a string `type`; a tool part with a tool name and a known state. */
export function checkPart(raw: unknown, at: string): Record<string, unknown> {
  const field = (name: string) => (at === "" ? name : `${at}.${name}`);
  if (!isRecord(raw)) throw new OpenCodeProblem(at || "part", `expected a part object, got ${describeType(raw)}`);
  if (nestsTooDeep(raw)) throw new OpenCodeProblem(at || "part", `nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (typeof raw.type !== "string" || raw.type === "")
    throw new OpenCodeProblem(field("type"), `expected a part type, got ${describeType(raw.type)}`);
  if ((raw.type === "text" || raw.type === "reasoning") && typeof raw.text !== "string")
    throw new OpenCodeProblem(field("text"), `expected a string, got ${describeType(raw.text)}`);
  if (raw.type !== "tool") return raw;
  if (typeof raw.tool !== "string" || raw.tool === "")
    throw new OpenCodeProblem(field("tool"), `expected a tool name, got ${describeType(raw.tool)}`);
  const state = raw.state;
  if (!isRecord(state)) throw new OpenCodeProblem(field("state"), `expected a tool state object, got ${describeType(state)}`);
  if (!STATUSES.has(state.status as string))
    throw new OpenCodeProblem(
      field("state.status"),
      `expected pending, running, completed or error, got ${jsonTextOr(state.status, describeType(state.status))}`,
    );
  if (state.input !== undefined && state.input !== null && !isRecord(state.input))
    throw new OpenCodeProblem(field("state.input"), `expected an object, got ${describeType(state.input)}`);
  if (state.status === "completed" && typeof state.output !== "string")
    throw new OpenCodeProblem(field("state.output"), `expected a string, got ${describeType(state.output)}`);
  if (state.status === "error" && typeof state.error !== "string")
    throw new OpenCodeProblem(field("state.error"), `expected a string, got ${describeType(state.error)}`);
  return raw;
}

/** Is this a MessageV1 (OpenCode ≤ 0.1: `metadata` with the session id, parts inline)? */
export function isV1Message(raw: Record<string, unknown>): boolean {
  return isRecord(raw.metadata) && Array.isArray(raw.parts) && raw.sessionID === undefined;
}

/**
 * A MessageV1 as a message of today's shape, as OpenCode's `MessageV2.fromV1` migrated it:
 * `metadata.assistant` becomes the assistant's fields, a `tool-invocation` part a tool part
 * (`result` → completed, with `metadata.tool[callId]` as its metadata; `call` → running;
 * `partial-call` → pending), a file part's `mediaType` its `mime`.
 */
export function fromV1(raw: Record<string, unknown>, at: string): OpenCodeMessage {
  const metadata = raw.metadata as Record<string, unknown>;
  const assistant = isRecord(metadata.assistant) ? metadata.assistant : {};
  const tools = isRecord(metadata.tool) ? metadata.tool : {};
  const info: Record<string, unknown> = {
    id: raw.id,
    role: raw.role,
    sessionID: metadata.sessionID,
    time: metadata.time,
    ...(raw.role === "assistant"
      ? {
          modelID: assistant.modelID,
          providerID: assistant.providerID,
          path: assistant.path,
          cost: assistant.cost,
          tokens: assistant.tokens,
          summary: assistant.summary,
        }
      : {}),
    ...(metadata.error !== undefined ? { error: metadata.error } : {}),
  };
  const parts = (raw.parts as unknown[]).map((part, i): unknown => {
    if (!isRecord(part) || part.type !== "tool-invocation") {
      if (isRecord(part) && part.type === "file") return { ...part, mime: part.mime ?? part.mediaType };
      return part;
    }
    const call = part.toolInvocation;
    const field = `${at === "" ? "" : `${at}.`}parts.${i}.toolInvocation`;
    if (!isRecord(call)) throw new OpenCodeProblem(field, `expected a tool invocation object, got ${describeType(call)}`);
    const id = typeof call.toolCallId === "string" ? call.toolCallId : undefined;
    const meta = id !== undefined && isRecord(tools[id]) ? (tools[id] as Record<string, unknown>) : {};
    const { title, time, ...rest } = meta;
    const input = isRecord(call.args) ? call.args : {};
    const state =
      call.state === "result"
        ? { status: "completed", input, output: call.result, title, metadata: rest, time }
        : call.state === "call"
          ? { status: "running", input, time }
          : call.state === "partial-call"
            ? { status: "pending", input }
            : { status: call.state };
    return { type: "tool", callID: id, tool: call.toolName, state };
  });
  return { info: checkInfo(info, at), parts: parts.map((part, i) => checkPart(part, `${at === "" ? "" : `${at}.`}parts.${i}`)) };
}

const SHELL_TOOLS = new Set(["bash", "shell"]);
const EDIT_TOOLS = new Set(["edit", "write", "patch", "multiedit", "apply_patch"]);
const FILE_TOOLS = new Set(["read", "glob", "grep", "list", "ls", "lsp_diagnostics", "lsp_hover", "lsp"]);
const NEUTRAL_TOOLS = new Set([
  "task",
  "todowrite",
  "todoread",
  "skill",
  "question",
  "batch",
  "invalid",
  "plan_enter",
  "plan_exit",
  "codesearch",
]);
const BUILT_IN = new Set([...SHELL_TOOLS, ...EDIT_TOOLS, ...FILE_TOOLS, ...NEUTRAL_TOOLS, "webfetch", "websearch"]);

/** The domain of a session from the tools it called (see the reader's comment in opencode.ts). */
export function inferOpenCodeDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (share((tool) => !BUILT_IN.has(tool)) > 0.5) return "mcp";
  if (share((tool) => tool === "webfetch" || tool === "websearch") > 0.5)
    return share((tool) => tool === "websearch") > 0.5 ? "search" : "web";
  if (tools.some((tool) => EDIT_TOOLS.has(tool) || FILE_TOOLS.has(tool))) return "swe";
  if (tools.some((tool) => SHELL_TOOLS.has(tool))) return "terminal";
  return "swe";
}

/** A tool call as an action: a shell tool's command itself, any other tool `name {input as JSON}`. */
export function openCodeAction(tool: string, input: Record<string, unknown>): string {
  if (SHELL_TOOLS.has(tool) && typeof input.command === "string") return input.command;
  return `${tool} ${jsonTextOr(input, "{}")}`;
}

// The permission system's refusals (`permission/index.ts`, `permission/next.ts`): no environment answered.
const REJECTED = /^The user rejected permission to use this specific tool call\b/;
const CORRECTED = /^The user rejected permission to use this specific tool call with the following feedback: ([\s\S]*)$/;
const DENIED =
  /^(The user has specified a rule which prevents you from using this specific tool call|The user has specifically restricted access to this command)/;
const ABORTED = /^Tool execution aborted\b/;
/** The bash tool's output before OpenCode 0.3: `<stdout>…</stdout>` and `<stderr>…</stderr>` blocks. */
const FRAMED_START = "<stdout>\n";
const FRAMED_MIDDLE = "\n</stdout>\n<stderr>\n";
const FRAMED_END = "\n</stderr>";

/** The old bash framing taken off: stdout, then stderr when there is any. */
function unframedShellOutput(output: string): string {
  if (!output.startsWith(FRAMED_START) || !output.endsWith(FRAMED_END)) return output;
  const middle = output.lastIndexOf(FRAMED_MIDDLE);
  if (middle < FRAMED_START.length - 1) return output;
  const stdout = output.slice(FRAMED_START.length, middle);
  const stderr = output.slice(middle + FRAMED_MIDDLE.length, output.length - FRAMED_END.length);
  if (stderr.trim() === "") return stdout;
  if (stdout.trim() === "") return stderr;
  return stdout.endsWith("\n") ? `${stdout}${stderr}` : `${stdout}\n${stderr}`;
}

interface Counts {
  [what: string]: number;
}

/**
 * Builds one trajectory from a session's messages, given in id order (`message`), then `finish`.
 * Memory holds the turns built so far and the text waiting for the next call.
 */
export class OpenCodeSessionBuilder {
  private readonly turns: Turn[] = [];
  private readonly tools: string[] = [];
  private readonly skipped: Counts = {};
  private readonly models: Counts = {};
  private readonly modes: Counts = {};
  private readonly errors: Counts = {};
  private readonly tokens = { input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0 };
  private cost = 0;
  private task: string | undefined;
  private pending: string[] = [];
  private userMessages: string[] = [];
  private assistantMessages: string[] = [];
  private lastReply: string | undefined;
  private cwd: string | undefined;
  private root: string | undefined;
  private sessionFromMessages: string | undefined;
  private revert: { messageID: string; partID?: string } | undefined;
  private session: Record<string, unknown> = {};
  messages = 0;

  /** The session info (`Session.Info`): id, title, version, projectID, directory, parentID, revert. */
  sessionInfo(info: Record<string, unknown>): void {
    this.session = info;
    const revert = info.revert;
    if (isRecord(revert) && typeof revert.messageID === "string")
      this.revert = { messageID: revert.messageID, ...(typeof revert.partID === "string" ? { partID: revert.partID } : {}) };
  }

  get sessionId(): string | undefined {
    const id = this.session.id;
    return typeof id === "string" && id !== "" ? id : this.sessionFromMessages;
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }

  message({ info, parts }: OpenCodeMessage): void {
    this.messages += 1;
    const id = info.id as string;
    if (this.sessionFromMessages === undefined && typeof info.sessionID === "string" && info.sessionID !== "")
      this.sessionFromMessages = info.sessionID;
    // A revert the user has not undone yet: OpenCode hides (and later deletes) what comes after it.
    if (this.revert && id >= this.revert.messageID) {
      const partID = this.revert.partID;
      if (id !== this.revert.messageID || partID === undefined) {
        this.count("reverted_message");
        return;
      }
      const kept = parts.filter((part) => !(typeof part.id === "string" && part.id >= partID));
      if (kept.length < parts.length) this.count("reverted_part", parts.length - kept.length);
      parts = kept;
    }
    if (info.role === "user") this.user(parts);
    else this.assistant(info, parts);
  }

  private user(parts: Record<string, unknown>[]): void {
    const texts: string[] = [];
    for (const part of parts) {
      if (part.type === "text") {
        if (part.synthetic === true || part.ignored === true) this.count("synthetic_text");
        else if ((part.text as string).trim() !== "") texts.push((part.text as string).trim());
      } else if (part.type === "compaction") this.count("compaction");
      else if (part.type === "subtask") this.count("subtask");
      else if (part.type !== "file" && part.type !== "agent") this.count(`user_${part.type}`);
    }
    const text = texts.join("\n");
    if (text === "") return;
    if (this.pending.length > 0) this.assistantMessages.push(this.pending.join("\n\n"));
    this.pending = [];
    this.lastReply = undefined;
    if (this.task === undefined && this.turns.length === 0) this.task = text;
    else this.userMessages.push(text);
  }

  private assistant(info: Record<string, unknown>, parts: Record<string, unknown>[]): void {
    const model = typeof info.modelID === "string" && info.modelID !== "" ? info.modelID : undefined;
    if (model !== undefined) {
      const key = typeof info.providerID === "string" && info.providerID !== "" ? `${info.providerID}/${model}` : model;
      this.models[key] = (this.models[key] ?? 0) + 1;
    }
    const mode = typeof info.agent === "string" && info.agent !== "" ? info.agent : typeof info.mode === "string" ? info.mode : undefined;
    if (mode !== undefined && mode !== "") this.modes[mode] = (this.modes[mode] ?? 0) + 1;
    if (isRecord(info.path)) {
      if (this.cwd === undefined && typeof info.path.cwd === "string") this.cwd = info.path.cwd;
      if (this.root === undefined && typeof info.path.root === "string") this.root = info.path.root;
    }
    if (typeof info.cost === "number" && Number.isFinite(info.cost)) this.cost += info.cost;
    if (isRecord(info.tokens)) {
      const t = info.tokens;
      const add = (key: keyof typeof this.tokens, value: unknown) => {
        if (typeof value === "number" && Number.isFinite(value)) this.tokens[key] += value;
      };
      add("input", t.input);
      add("output", t.output);
      add("reasoning", t.reasoning);
      if (isRecord(t.cache)) {
        add("cache_read", t.cache.read);
        add("cache_write", t.cache.write);
      }
    }
    if (isRecord(info.error)) {
      const name = typeof info.error.name === "string" && info.error.name !== "" ? info.error.name : "error";
      this.errors[name] = (this.errors[name] ?? 0) + 1;
    }
    // A compaction's summary (`summary: true`, the `compaction` agent) is OpenCode's note to itself.
    if (info.summary === true || mode === "compaction") {
      this.count("compaction_summary");
      return;
    }
    for (const part of parts) {
      if (part.type === "reasoning" || part.type === "text") {
        const text = (part.text as string).trim();
        if (text === "") continue;
        this.pending.push(text);
        if (part.type === "text") this.lastReply = text;
      } else if (part.type === "tool") this.tool(part);
      else if (part.type !== "step-start" && part.type !== "step-finish") this.count(part.type as string);
    }
  }

  private tool(part: Record<string, unknown>): void {
    const name = part.tool as string;
    const state = part.state as Record<string, unknown>;
    const input = isRecord(state.input) ? state.input : {};
    const thinking = this.pending.join("\n\n");
    this.pending = [];
    this.lastReply = undefined;
    const metadata = isRecord(state.metadata) ? state.metadata : {};
    const meta: Record<string, unknown> = { tool: name };
    if (typeof part.callID === "string" && part.callID !== "") meta.call_id = part.callID;
    let observation: string;
    if (state.status === "pending" || state.status === "running") {
      // Never answered: the session was interrupted while the call was in flight.
      this.count(`${state.status}_call`);
      return;
    }
    if (state.status === "error") {
      const error = state.error as string;
      const corrected = CORRECTED.exec(error);
      if (corrected || REJECTED.test(error) || DENIED.test(error)) {
        this.count("denied_call");
        const feedback = corrected?.[1]?.trim();
        if (feedback) this.userMessages.push(feedback);
        return;
      }
      if (ABORTED.test(error)) {
        // Aborted by the user: only what a command printed before it was stopped was observed.
        const partial = typeof metadata.output === "string" ? metadata.output : "";
        if (partial.trim() === "") {
          this.count("aborted_call");
          return;
        }
        observation = SHELL_TOOLS.has(name) ? unframedShellOutput(partial) : partial;
        meta.interrupted = true;
      } else observation = error;
      meta.is_error = true;
    } else {
      const output = state.output as string;
      observation = SHELL_TOOLS.has(name) ? unframedShellOutput(output) : output;
      const attachments = Array.isArray(state.attachments) ? state.attachments.filter(isRecord) : [];
      for (const file of attachments) {
        const mime = typeof file.mime === "string" ? file.mime : "";
        const label = mime.startsWith("image/") ? "[image]" : `[file${typeof file.filename === "string" ? `: ${file.filename}` : ""}]`;
        observation = observation === "" ? label : `${observation}\n${label}`;
      }
      if (isRecord(state.time) && typeof state.time.compacted === "number") meta.compacted = true;
    }
    if (SHELL_TOOLS.has(name) && typeof metadata.exit === "number") meta.exit_code = metadata.exit;
    if (name === "task" && typeof metadata.sessionId === "string") meta.child_session_id = metadata.sessionId;
    if (observation.trim() === "")
      observation = typeof meta.exit_code === "number" ? `[exit code ${meta.exit_code}, no output]` : "[no output]";
    if (this.userMessages.length > 0) meta.user_messages = this.userMessages;
    if (this.assistantMessages.length > 0) meta.assistant_messages = this.assistantMessages;
    this.userMessages = [];
    this.assistantMessages = [];
    this.tools.push(name);
    this.turns.push({ action: openCodeAction(name, input), observation, ...(thinking !== "" ? { thinking } : {}), meta });
  }

  finish(source: { uri: string; format: string }, fallbackId: string, domain: Domain | undefined): ReadItem {
    const id = this.sessionId ?? fallbackId;
    const meta: Record<string, unknown> = { agent: "opencode", session_id: id };
    const session = this.session;
    const names: [string, string][] = [
      ["title", "title"],
      ["version", "version"],
      ["projectID", "project_id"],
      ["directory", "directory"],
      ["parentID", "parent_session_id"],
      ["slug", "slug"],
    ];
    for (const [key, name] of names) if (typeof session[key] === "string" && session[key] !== "") meta[name] = session[key];
    const ranked = Object.entries(this.models).sort((a, b) => b[1] - a[1]);
    const top = ranked[0]?.[0];
    if (top !== undefined) {
      const slash = top.indexOf("/");
      meta.model = slash === -1 ? top : top.slice(slash + 1);
      if (slash !== -1) meta.provider = top.slice(0, slash);
    }
    if (ranked.length > 1) meta.models = Object.fromEntries(ranked);
    const modes = Object.entries(this.modes).sort((a, b) => b[1] - a[1]);
    if (modes[0]) meta.mode = modes[0][0];
    if (modes.length > 1) meta.modes = Object.fromEntries(modes);
    if (this.cwd !== undefined) meta.cwd = this.cwd;
    if (this.root !== undefined && this.root !== this.cwd) meta.root = this.root;
    if (this.cost > 0) meta.cost = Math.round(this.cost * 1e6) / 1e6;
    if (Object.values(this.tokens).some((n) => n > 0)) meta.tokens = { ...this.tokens };
    if (Object.keys(this.errors).length > 0) meta.assistant_errors = this.errors;
    if (this.lastReply !== undefined) meta.final_message = this.lastReply;
    if (this.userMessages.length > 0) this.count("user_message_after_last_call", this.userMessages.length);
    if (Object.keys(this.skipped).length > 0) meta.skipped = this.skipped;
    if (this.turns.length === 0) {
      // A chat (or a session cut before its first call came back): well-formed, nothing to train a world model on.
      const counts = Object.entries(this.skipped).map(([key, n]) => `${n} ${key}`);
      const what = [
        this.task !== undefined ? `the prompt ${JSON.stringify(this.task.slice(0, 200))}` : "no prompt",
        `${this.messages} messages`,
        ...counts,
      ];
      meta.read_filter = {
        stage: "no-tool-calls",
        reason: `no tool call with a result in the session (${what.join(", ")}): a chat without actions`,
      };
    }
    return {
      kind: "trajectory",
      trajectory: {
        id,
        domain: domain ?? inferOpenCodeDomain(this.tools),
        source: { uri: source.uri, format: FORMAT },
        ...(this.task !== undefined ? { task: this.task } : {}),
        turns: this.turns,
        meta,
      },
    };
  }
}
