import type { SourceRef } from "../../core/trajectory.ts";
import { reactStep } from "../chat-rows/react-steps.ts";
import { quarantine, rowItem } from "../chat-rows/row-item.ts";
import type { ChatMessage } from "../otel/messages.ts";
import { withThinking } from "../otel-traces.ts";
import type { ReaderOptions, ReadItem } from "../reader.ts";
import { isRecord } from "../record-helpers.ts";
import { conversation as chatOf } from "../trace/conversation.ts";
import { messageList, replyMessage, taskText, toolInputArguments, toolOutput } from "./messages.ts";

/*
 * One trace of runs (LangSmith) or observations (Langfuse) as one trajectory: the runs in execution
 * order, each tool run a call and its result, each model call's reply the thinking before the next
 * call, read as chat-tool-rows reads an OpenAI chat (src/read/chat-rows/). The readers
 * (src/read/langsmith-runs.ts, src/read/langfuse-traces.ts) turn their records into `TraceRun`s.
 */

export type RunKind = "tool" | "llm" | "other";

/** Where a run's record is in the file. */
export interface RunWhere {
  line?: number;
  row?: number;
  offset: number;
}

export interface TraceRun {
  id: string;
  /** Undefined when the record names none: resolved through the run's parents. */
  traceId?: string;
  parentId?: string;
  kind: RunKind;
  name: string;
  /** Start, in microseconds since the epoch. */
  start?: number;
  /** LangSmith's `dotted_order` (`<start>Z<id>.<start>Z<id>…`): execution order when times are missing. */
  dotted?: string;
  /** Position in the file, across its records. */
  order: number;
  inputs: unknown;
  /** Undefined when the run recorded none. */
  outputs: unknown;
  /** The run failed: its error text. */
  error?: string;
  where: RunWhere;
  model?: string;
  /** Tool specs the model was offered (a model call's). */
  tools: unknown[];
  conversationId?: string;
  /** Trace-level meta a root run gives (`project_id`, `example_id`). */
  meta?: Record<string, unknown>;
}

/** What a trace's own record says (Langfuse's trace object), besides its runs. */
export interface TraceInfo {
  name?: string;
  input?: unknown;
  output?: unknown;
  conversationId?: string;
  where?: RunWhere;
}

export interface TraceOptions {
  format: string;
  path: string;
  options: ReaderOptions;
}

/** A time as microseconds since the epoch: ISO 8601 text (`T` or a space, any fraction, `Z` or an offset, none = UTC) or epoch s / ms / µs / ns. */
export function parseTime(value: unknown): number | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) return undefined;
    const abs = Math.abs(value);
    return abs < 1e11 ? value * 1e6 : abs < 1e14 ? value * 1e3 : abs < 1e17 ? value : value / 1e3;
  }
  if (typeof value !== "string") return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/.exec(
    value.trim(),
  );
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 60) return undefined;
  const fraction = m[7] ? Number((m[7] as string).padEnd(6, "0").slice(0, 6)) : 0;
  let offset = 0;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== "Z") {
    const digits = zone.replace(":", "");
    offset = (digits[0] === "-" ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || 0));
  }
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) - offset * 60_000;
  return Number.isFinite(ms) ? ms * 1000 + fraction : undefined;
}

const DOTTED_SEGMENT = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{1,6})Z(.+)$/;

/** The start time of the run a `dotted_order` ends with (µs), and the id of the trace's root run it starts with. */
export function dottedParts(dotted: string): { start?: number; rootId?: string } {
  const segments = dotted.split(".");
  const first = DOTTED_SEGMENT.exec(segments[0] as string);
  const last = DOTTED_SEGMENT.exec(segments[segments.length - 1] as string);
  const start = last
    ? parseTime(`${last[1]}-${last[2]}-${last[3]}T${last[4]}:${last[5]}:${last[6]}.${(last[7] as string).padStart(6, "0")}Z`)
    : undefined;
  return { ...(start !== undefined ? { start } : {}), ...(first ? { rootId: first[8] as string } : {}) };
}

/** A Python traceback (what LangChain records as a run's error) as its last line, the exception; any other error text as it is. */
export function errorText(error: string): string {
  if (!error.includes("Traceback (most recent call last):")) return error.trim();
  const lines = error.split("\n").filter((line) => line.trim() !== "");
  return (lines[lines.length - 1] as string).trim();
}

function sourceOf(where: RunWhere, options: TraceOptions): SourceRef {
  return {
    uri: options.path,
    ...(where.line !== undefined ? { line: where.line } : {}),
    ...(where.row !== undefined ? { row: where.row } : {}),
    offset: where.offset,
    format: options.format,
  };
}

/**
 * Traces of runs that name no trace id: each takes its root's (its top ancestor's trace id, else
 * that ancestor's id). Every run on a walked path is resolved with it, so each is walked once.
 */
function resolveTraceIds(runs: TraceRun[]): void {
  const byId = new Map<string, TraceRun>();
  for (const run of runs) if (!byId.has(run.id)) byId.set(run.id, run);
  for (const run of runs) {
    if (run.traceId !== undefined) continue;
    const path: TraceRun[] = [run];
    const seen = new Set<string>([run.id]);
    let top = run;
    let parent = run.parentId !== undefined ? byId.get(run.parentId) : undefined;
    while (parent && !seen.has(parent.id) && parent.traceId === undefined) {
      seen.add(parent.id);
      path.push(parent);
      top = parent;
      parent = parent.parentId !== undefined ? byId.get(parent.parentId) : undefined;
    }
    const traceId = parent?.traceId ?? (top.parentId !== undefined && !byId.has(top.parentId) ? top.parentId : top.id);
    for (const walked of path) walked.traceId = traceId;
  }
}

/** Runs grouped by trace (`resolveTraceIds` first), in the order their traces first appear. */
export function tracesOf(runs: TraceRun[]): Map<string, TraceRun[]> {
  resolveTraceIds(runs);
  const traces = new Map<string, TraceRun[]>();
  for (const run of runs) {
    const key = run.traceId as string;
    const list = traces.get(key);
    if (list) list.push(run);
    else traces.set(key, [run]);
  }
  return traces;
}

/** One trace's runs as its read item. */
export function traceItem(traceId: string, unsorted: TraceRun[], options: TraceOptions, info?: TraceInfo): ReadItem {
  const first = unsorted.length > 0 ? unsorted.reduce((a, b) => (b.order < a.order ? b : a)).where : undefined;
  const source = sourceOf(info?.where ?? first ?? { offset: 0 }, options);
  const fail = (field: string | undefined, reason: string): ReadItem =>
    quarantine(source, { id: traceId, ...(field ? { field } : {}), reason });
  const skipped: Record<string, number> = {};
  const count = (what: string) => {
    skipped[what] = (skipped[what] ?? 0) + 1;
  };
  // A run written twice (a run posted, then patched with its outputs; two exports in one file) is read once, its fullest copy.
  const byId = new Map<string, TraceRun>();
  for (const run of unsorted) {
    const known = byId.get(run.id);
    if (!known) byId.set(run.id, run);
    else {
      count("duplicate_run");
      if (known.outputs === undefined && known.error === undefined && (run.outputs !== undefined || run.error !== undefined))
        byId.set(run.id, { ...run, order: Math.min(known.order, run.order) });
    }
  }
  const runs = executionOrder([...byId.values()]);
  // Runs inside a tool run are that tool's own work (a sub-agent, a retriever, an MCP client).
  const insideTool = toolDescendants(byId);
  const tools = runs.filter((run) => run.kind === "tool");
  const llms = runs.filter((run) => run.kind === "llm" && !insideTool(run));
  let messages: ChatMessage[] | undefined;
  let definitions = llms.map((run) => run.tools).find((found) => found.length > 0) ?? [];
  if (tools.length > 0) {
    // (Its counts are kept only when the chat is read from the tool runs.)
    const counts: Record<string, number> = {};
    messages = conversation(runs, insideTool, counts);
    if (!messages.some((m) => m.role === "tool")) messages = undefined;
    else for (const [key, n] of Object.entries(counts)) skipped[key] = (skipped[key] ?? 0) + n;
  }
  if (messages === undefined) {
    const history = historyMessages(runs, insideTool, info);
    if (history) {
      messages = history.messages;
      if (definitions.length === 0) definitions = history.tools;
      if (tools.length > 0) skipped.tool_run_without_output = tools.length;
    }
  }
  if (messages === undefined) {
    if (tools.length > 0)
      return fail(
        "outputs",
        `${tools.length} tool run(s), none with an output or an error, and no model call whose messages hold their results`,
      );
    if (runs.length === 0) return fail(undefined, "no runs, and the trace's own input and output hold no tool call answered by its result");
    const names = [...new Set(runs.map((run) => JSON.stringify(run.name)))].slice(0, 5).join(", ");
    return fail(
      undefined,
      `no tool run, and no model call or chain whose messages hold a tool call answered by its result (its ${runs.length} run(s): ${names})`,
    );
  }
  const roots = runs.filter((run) => run.parentId === undefined || !byId.has(run.parentId));
  const root = roots[0] ?? runs[0];
  if (!messages.some((m) => m.role === "user")) {
    const task = [info?.input, ...roots.map((run) => run.inputs)].map(taskText).find((text) => text !== undefined);
    if (task !== undefined) messages.splice(messages[0]?.role === "system" ? 1 : 0, 0, { role: "user", content: task });
  }
  // The agent: the trace's name, else its root run's (not a model call traced alone, which names the model client).
  const agent = info?.name ?? (root !== undefined && root.kind !== "llm" && root.name !== "" ? root.name : undefined);
  const model = llms.map((run) => run.model).find((name) => name !== undefined);
  const failure = root?.error !== undefined ? errorText(root.error) : undefined;
  const row: Record<string, unknown> = {
    id: traceId,
    messages,
    ...(definitions.length > 0 ? { tools: definitions } : {}),
    ...(agent !== undefined ? { agent } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(failure !== undefined && failure !== "" ? { failure_mode: failure } : {}),
  };
  const item = rowItem(row, source, JSON.stringify(row), options.options);
  if (item.kind !== "trajectory") return item;
  const { trajectory } = item;
  const conversationId = info?.conversationId ?? runs.map((run) => run.conversationId).find((id) => id !== undefined);
  const rowSkipped = isRecord(trajectory.meta?.skipped) ? (trajectory.meta.skipped as Record<string, number>) : {};
  const allSkipped = { ...rowSkipped };
  for (const [key, n] of Object.entries(skipped)) allSkipped[key] = (allSkipped[key] ?? 0) + n;
  const meta: Record<string, unknown> = {
    ...trajectory.meta,
    ...root?.meta,
    ...(conversationId !== undefined ? { conversation_id: conversationId } : {}),
    runs: runs.length,
    ...(Object.keys(allSkipped).length > 0 ? { skipped: allSkipped } : {}),
  };
  return { kind: "trajectory", trajectory: { ...trajectory, turns: trajectory.turns.map(withThinking), meta } };
}

/** Whether a run has a tool run among its ancestors, each run's answer found once (a parent cycle ends the walk). */
function toolDescendants(byId: Map<string, TraceRun>): (run: TraceRun) => boolean {
  const known = new Map<string, boolean>();
  return (run) => {
    const path: TraceRun[] = [];
    const seen = new Set<string>([run.id]);
    let answer = false;
    let parent = run.parentId !== undefined ? byId.get(run.parentId) : undefined;
    let child = run;
    for (;;) {
      if (!parent || seen.has(parent.id)) break;
      const cached = known.get(child.id);
      if (cached !== undefined) {
        answer = cached;
        break;
      }
      path.push(child);
      if (parent.kind === "tool") {
        answer = true;
        break;
      }
      seen.add(parent.id);
      child = parent;
      parent = parent.parentId !== undefined ? byId.get(parent.parentId) : undefined;
    }
    for (const walked of path) known.set(walked.id, answer);
    return answer;
  };
}

/**
 * Runs in the order they ran: by start time (`start_time`, else the time `dotted_order` ends with),
 * runs that start together by `dotted_order` (a parent's is a prefix of its child's; its times are
 * microseconds where a JS SDK's `start_time` has milliseconds); when some run has neither time, as
 * the file lists them.
 */
function executionOrder(runs: TraceRun[]): TraceRun[] {
  if (!runs.every((run) => run.start !== undefined)) return runs.sort((a, b) => a.order - b.order);
  return runs.sort((a, b) => (a.start as number) - (b.start as number) || compareText(a.dotted ?? "", b.dotted ?? "") || a.order - b.order);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The chat a trace with tool runs shows (src/read/trace/conversation.ts), each tool run a call and
 * its result (the call's id and arguments as the model wrote them when the reply before it named the tool).
 */
function conversation(runs: TraceRun[], insideTool: (run: TraceRun) => boolean, skipped: Record<string, number>): ChatMessage[] {
  const count = (what: string, n = 1) => {
    skipped[what] = (skipped[what] ?? 0) + n;
  };
  return chatOf(runs, {
    kind: (run) => (run.kind === "tool" ? "tool" : run.kind === "llm" ? "model" : undefined),
    insideTool,
    nested: { tool: "nested_tool_run", model: "nested_llm_run" },
    count,
    toolAnswer(run, asked) {
      const output = toolOutput(run.outputs);
      if (output === undefined && run.error === undefined) return "tool_run_without_output";
      let id = output?.callId;
      let known = id !== undefined ? asked.byId.get(id) : undefined;
      if (!known) known = asked.unanswered.find((call) => call.function.name === run.name);
      if (known) {
        asked.unanswered = asked.unanswered.filter((call) => call !== known);
        id ??= known.id;
      }
      const callId = id ?? `run-${run.id}`;
      const name = known?.function.name ?? run.name;
      const args = known ? known.function.arguments : toolInputArguments(run.inputs);
      const text = output !== undefined && (output.text !== "" || run.error === undefined) ? output.text : errorText(run.error ?? "");
      return {
        call: { id: callId, type: "function", function: { name, arguments: args } },
        result: text,
        isError: run.error !== undefined || Boolean(output?.error),
      };
    },
    modelTurn(run) {
      const input = messageList(run.inputs);
      if (input.unread > 0) count("unread_message", input.unread);
      const reply = replyMessage(run.outputs);
      if (!reply && run.error !== undefined) count("failed_llm_run");
      return {
        system: input.messages.filter((m) => m.role === "system").map((m) => m.content),
        users: input.messages.filter((m) => m.role === "user").map((m) => m.content),
        reply:
          reply && isRecord(run.inputs) && Array.isArray(run.inputs.prompts) ? { ...reply, content: completionText(reply.content) } : reply,
      };
    },
  });
}

/**
 * A completion model's reply in a ReAct loop (LangChain's AgentExecutor over `prompts`): the
 * thought before its `Action:` (the tool run is the call), or its `Final Answer:`.
 */
function completionText(text: string): string {
  const step = reactStep(text);
  if (step) return step.text;
  const final = /(?:^|\n)[ \t]*Final Answer:[ \t]*([\s\S]*)$/.exec(text);
  return (final ? (final[1] as string) : text).trim();
}

/**
 * A trace whose tool runs are missing (a model client traced alone, a LangGraph root run exported
 * alone): the fullest chat a model call held (its input messages and reply), or a chain's (or the
 * trace's) messages, when it holds a tool call answered by its result.
 */
function historyMessages(
  runs: TraceRun[],
  insideTool: (run: TraceRun) => boolean,
  info: TraceInfo | undefined,
): { messages: ChatMessage[]; tools: unknown[] } | undefined {
  let best: { messages: ChatMessage[]; tools: unknown[] } | undefined;
  const offer = (messages: ChatMessage[], tools: unknown[]) => {
    if (!messages.some((m) => m.role === "tool")) return;
    if (!best || messages.length > best.messages.length) best = { messages, tools };
  };
  for (const run of runs) {
    if (insideTool(run)) continue;
    if (run.kind === "llm") {
      const input = messageList(run.inputs);
      const reply = replyMessage(run.outputs);
      offer([...input.messages, ...(reply ? [reply] : [])], input.tools);
    } else {
      for (const value of [run.outputs, run.inputs]) {
        const found = messageList(value);
        offer(found.messages, found.tools);
      }
    }
  }
  for (const value of [info?.output, info?.input]) {
    const found = messageList(value);
    offer(found.messages, found.tools);
  }
  return best;
}
