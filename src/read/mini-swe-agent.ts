import type { Domain, SourceRef } from "../core/trajectory.ts";
import { type ChatAction, ChatTurnPairer, messageText } from "./chat-turns.ts";
import type { JsonKind, JsonPath, SelectedValue } from "./json-select.ts";
import type { Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, fileStem, isRecord, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";
import { attemptId, forEachSelectedHashed } from "./swe-attempt.ts";
import { dropObservation } from "./swe-null-observation.ts";

const FORMAT = "mini-swe-agent";

/**
 * mini-swe-agent `.traj.json`: one trajectory per file, either a bare JSON array of chat messages
 * (the test fixtures) or the saved form `{info, messages, trajectory_format: "mini-swe-agent-1…"}`.
 *
 * Turns: each assistant message's command paired with the next user/tool message (the command's
 * output, `<returncode>…</returncode><output>…</output>` in 1.x templates). The command is, in
 * order of preference: `extra.actions[].command` (2.x records the parsed actions), the `command`
 * argument of OpenAI `tool_calls` (2.x tool calling), or the single fenced block of the text
 * (```` ```mswea_bash_command ```` in 2.x, ```` ```bash ```` in 1.x); like mini-swe-agent itself, a
 * reply with zero or several blocks has no action (the harness answered it with a format error,
 * counted in `meta.skipped`). The text around the block is `turn.meta.agent_thought`.
 * Task: the first user message.
 *
 * Instance and attempt: mini-swe-agent names each file after its instance (`<instance_id>.traj.json`;
 * the SWE-bench runner also saves `instance_id` at the top level), so every run of an instance
 * writes a file of the same name. `meta.task_id` is the top-level `instance_id`, else the file name
 * without `.traj.json`; the id is that instance id plus a hash of the file's content
 * (`<instance>-<16 hex digits of sha256>`, src/read/swe-attempt.ts): two runs are two records, and
 * one file has one id wherever it lives and however it is compressed. A quarantined file is named
 * by its instance id alone. Meta: `agent: "mini-swe-agent"`, `model` (`info.config.model.model_name`),
 * `exit_status` (`info.exit_status`), and an exit other than `Submitted` as `outcome.failure_mode`;
 * the file records no verdict and no attempt number. Streamed with stream-json.
 */
export const miniSweAgentReader: Reader = {
  name: FORMAT,
  domain: "swe",
  description: "mini-swe-agent .traj.json (message array or {info, messages}), one trajectory per file",

  sniff(head, path) {
    const marker =
      /mswea_bash_command|MINI_SWE_AGENT_FINAL_OUTPUT|COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT/.test(head) || /\.traj\.json/i.test(path);
    if (/^\uFEFF?\s*\[\s*\{\s*"(role|content)"\s*:/.test(head)) return marker;
    return (
      /^\uFEFF?\s*\{/.test(head) &&
      /"messages"\s*:\s*\[/.test(head) &&
      (/"trajectory_format"\s*:\s*"mini-swe-agent/.test(head) || /"mini_version"\s*:/.test(head))
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source: SourceRef = { uri: path, format: FORMAT };
    const document = new MiniDocument();
    const parsed = await forEachSelectedHashed(path, wanted, (selected) => document.take(selected));
    const instance = document.instanceId ?? fileStem(path, /(\.traj)?\.json$/i);
    if (!parsed.ok) {
      yield { kind: "quarantine", entry: { source, id: instance, stage: "read", reason: parsed.reason } };
      return;
    }
    yield document.finish(source, instance, attemptId(instance, parsed.digest), options.domain ?? "swe");
  },
};

/** Messages of either layout, the message list if it has a wrong type, the instance id, and info fields. */
function wanted(path: JsonPath, kind: JsonKind): boolean {
  const [first, second] = path;
  if (path.length === 0) return kind === "scalar";
  if (path.length === 1)
    return (
      typeof first === "number" ||
      (first === "messages" && kind !== "array") ||
      first === "trajectory_format" ||
      (first === "instance_id" && kind === "scalar")
    );
  if (path.length === 4)
    return kind === "scalar" && first === "info" && second === "config" && path[2] === "model" && path[3] === "model_name";
  return path.length === 2 && ((first === "messages" && typeof second === "number") || (first === "info" && second === "exit_status"));
}

class MiniDocument {
  private readonly pairer = new ChatTurnPairer();
  private problem: { field?: string; reason: string } | undefined;
  private sawMessages = false;
  private sawAssistant = false;
  private readonly meta: Record<string, unknown> = {};
  /** The top-level `instance_id`, where the file has one. */
  instanceId: string | undefined;

  take({ path, value }: SelectedValue): void {
    const [first, second] = path;
    // The instance names a quarantined file too.
    if (first === "instance_id" && path.length === 1) {
      if ((typeof value === "string" && value !== "") || (typeof value === "number" && Number.isFinite(value)))
        this.instanceId = String(value);
      return;
    }
    if (this.problem) return;
    if (path.length === 0)
      this.problem = { reason: `expected a JSON array of messages or an object with messages, got ${describeType(value)}` };
    else if (typeof first === "number") this.takeMessage(value, `${first}`);
    else if (first === "messages" && typeof second === "number") this.takeMessage(value, `messages.${second}`);
    else if (first === "messages") this.problem = { field: "messages", reason: `messages: expected an array, got ${describeType(value)}` };
    else if (first === "trajectory_format" && typeof value === "string") this.meta.trajectory_format = value;
    else if (first === "info" && path.length === 4 && typeof value === "string" && value !== "") this.meta.model = value;
    else if (first === "info" && path.length === 2 && typeof value === "string") this.meta.exit_status = value;
  }

  finish(source: SourceRef, instance: string, id: string, domain: Domain): ReadItem {
    if (!this.problem && !this.sawMessages) this.problem = { field: "messages", reason: "no messages" };
    if (this.problem) return { kind: "quarantine", entry: { source, id: instance, stage: "read", ...this.problem } };
    this.pairer.finish();
    const { turns, task, skipped } = this.pairer;
    if (turns.length === 0) {
      return {
        kind: "quarantine",
        entry: { source, id: instance, stage: "read", field: "messages", reason: "no assistant command was followed by an observation" },
      };
    }
    const meta: Record<string, unknown> = {
      agent: "mini-swe-agent",
      task_id: instance,
      ...this.meta,
      ...(Object.keys(skipped).length > 0 ? { skipped } : {}),
    };
    // An exit other than "Submitted" (LimitsExceeded, TimeoutError, FormatError…) is how the run failed;
    // a submission carries no verdict of its own (the benchmark's evaluation decides).
    const exit = this.meta.exit_status;
    if (typeof exit === "string" && exit !== "" && exit !== "Submitted") meta.outcome = { failure_mode: exit };
    return {
      kind: "trajectory",
      trajectory: { id, domain, source, ...(task !== undefined ? { task } : {}), turns, ...(Object.keys(meta).length > 0 ? { meta } : {}) },
    };
  }

  private takeMessage(value: unknown, field: string): void {
    this.sawMessages = true;
    if (!isRecord(value) || typeof value.role !== "string") {
      this.problem = { field: `${field}.role`, reason: `${field}: expected a message with a string role` };
      return;
    }
    // Tool-call arguments are written into the action as JSON (toolCallCommand).
    if (nestsTooDeep(value)) {
      this.problem = { field, reason: `${field}: nested deeper than ${MAX_JSON_DEPTH} levels` };
      return;
    }
    if (value.role === "assistant") this.sawAssistant = true;
    else if ((value.role === "user" || value.role === "tool") && value.content == null && this.sawAssistant) {
      dropObservation(this.pairer, value.role);
      return;
    }
    const text = messageText(value.content);
    if (text === undefined) {
      this.problem = {
        field: `${field}.content`,
        reason: `${field}.content: expected a string or text parts, got ${describeType(value.content)}`,
      };
      return;
    }
    this.pairer.add(value.role, text, value.role === "assistant" ? assistantActions(value, text) : []);
  }
}

const FENCED_BLOCK = /```(mswea_bash_command|bash)[ \t]*\r?\n([\s\S]*?)\r?\n```/g;

/** The commands of one assistant message (see the reader's comment for the order of sources). */
function assistantActions(message: Record<string, unknown>, text: string): ChatAction[] {
  // The reasoning is the reply without its command block (tool-calling replies have none).
  const rest = text.replace(FENCED_BLOCK, "").trim();
  const thought = rest === "" ? {} : { thought: rest };
  const extra = isRecord(message.extra) ? message.extra : {};
  if (Array.isArray(extra.actions) && extra.actions.length > 0) {
    const commands = extra.actions.map((a) => (isRecord(a) && typeof a.command === "string" ? a.command : undefined));
    if (commands.every((c) => c !== undefined)) return commands.map((action) => ({ action, ...thought }));
  }
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
    return message.tool_calls.map((call) => ({ action: toolCallCommand(call), ...thought }));
  }
  const blocks = [...text.matchAll(FENCED_BLOCK)];
  // 2.x prompts use mswea_bash_command so that bash examples in a reply are not actions.
  const preferred = blocks.some((b) => b[1] === "mswea_bash_command") ? blocks.filter((b) => b[1] === "mswea_bash_command") : blocks;
  const only = preferred.length === 1 ? preferred[0] : undefined;
  return only ? [{ action: (only[2] as string).trim(), ...thought }] : [];
}

/** A tool call's `command` argument (the bash tool), else its raw arguments under the tool's name. */
function toolCallCommand(call: unknown): string {
  const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
  const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
  try {
    const parsed: unknown = JSON.parse(args);
    if (isRecord(parsed) && typeof parsed.command === "string") return parsed.command;
  } catch {
    // Not JSON: keep the raw text below.
  }
  return `${typeof fn.name === "string" ? fn.name : "tool"} ${args}`;
}
