import { basename, dirname } from "node:path";
import type { Domain, SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { AXTREE_TREE_FORMAT } from "./browsergym.ts";
import { isBrowserTool, isEditTool, isSearchTool, isShellTool } from "./chat-rows/tools.ts";
import { jsonFileLayout } from "./json-array.ts";
import { firstLine, parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { canonicalAction, contentId, describeType, FieldError, isRecord, jsonTextOr } from "./record-helpers.ts";
import { type Json, jsonRecords, quarantineItem } from "./webarena.ts";

const FORMAT = "adp";

/**
 * Agent Data Protocol (neulab/agent-data-protocol, `schema/`): the standardized trajectories of the
 * neulab/agent-data-collection Hub dataset (`<dataset>/full_std.jsonl`; the repository's
 * `sample_std.json` is a JSON array of them; the Hub's Parquet conversion has one row each).
 *
 * A trajectory is `{schema_version?, id, content: [...], details?, available_apis? |
 * available_custom_tools?, available_code_languages?}`; each content item names its class in
 * `class_` (PascalCase `TextObservation` is read as `text_observation`):
 *
 * - actions: `api_action` {function, kwargs, description?, function_call?}, `code_action`
 *   {language, content, description}, `message_action` {content, description?}; each may carry
 *   `reasoning_content`, `reward`, `tool_call_id` (schema 1.3+);
 * - observations: `text_observation` {content, source: user | agent | environment (older data:
 *   `user_msg`), name?}, `web_observation` {html, axtree, url, image_observation, viewport_size},
 *   `image_observation` {content: a path, annotations?: [{text, element_type, bounding_box}],
 *   source}, `json_observation` {content: an object, source}; each may carry `tool_call_id`,
 *   `reward`.
 *
 * World-model turns: an action the environment executes (`api_action`, `code_action`; consecutive
 * ones before any result are one step, parallel calls) → the observations that answer it: matched
 * by `tool_call_id`, else in order. A `text_observation` from `user` directly after an unanswered
 * action is its result (ADP's own `backfill_adjacent_tool_call_links` and `std_to_sft` read it so:
 * older converters wrote tool output as user text), counted in `meta.skipped`. Observations that
 * come after every call of the step is answered are joined to the last result (counted).
 *
 * - Action: a shell tool's `command` (`execute_bash`, `bash`, …) or `execute_ipython_cell`'s `code`
 *   as written; a `code_action`'s code (`turn.meta.language`); any other call
 *   `{"name": function, "arguments": kwargs}` as compact JSON, a kwarg value that is itself a
 *   JSON string literal (`"\"149\""`, as ADP's web converters quote them) decoded. Several calls:
 *   `[call i/N]` each, results `[result i/N]` (`[no result]` for one never answered).
 * - Observation: text as written; a web page's `axtree` (`turn.meta.tree_format:
 *   "browsergym-axtree"`), else its `html` (`observation_format: "html"`), its `url` and screenshot
 *   path in `turn.meta`; an image's annotations one per line (`[element_type] text @ x,y wxh`), else
 *   `[image]` (its path in `turn.meta.image`); a JSON observation's JSON text
 *   (`observation_format: "json"`). Rewards go to `turn.meta.reward` / `action_reward`.
 * - Thinking: the calls' `reasoning_content`, then `description`.
 * - Not turns: the first user message is the task; later user messages and the agent's messages
 *   (`message_action`, agent text) go, in order, to the next turn's `meta.dialogue`; the last
 *   agent message after the last turn is `meta.final_answer`. Environment text before the task and
 *   before any action (older SWE converters put the agent's system prompt there) is
 *   `meta.agent_system`; environment observations after the task and before the first action are
 *   the `initialObservation`. A trailing action nothing answered (`finish`, `send_msg_to_user`) is
 *   `meta.unobserved_final_action`; other unanswered calls and unknown classes are counted in
 *   `meta.skipped`.
 * - Domain (unless set): `web` with a web observation or a BrowserGym action; else `swe` for code or
 *   shell/editing tools when the trajectory shows a repository (an editing tool, a git command, a
 *   `repo`/`instance_id`/patch detail, a SWE-bench-style id), `terminal` without; `search` for
 *   web-search tools; `mcp` for other function tools; `terminal` with no action at all.
 * - Id: `id`; else a hash. `meta.adp`: schema_version, dataset (the Hub folder the file is in),
 *   available tools/languages; `meta.details`: `details`; `meta.outcome` from its `resolved` /
 *   `success` / `reward`, `meta.task_id` from its `instance_id` / `task_id`.
 *
 * A trajectory with no answered action is read with `meta.read_filter` (`no-tool-calls` when it
 * has no action at all, a chat; `no-observation-after-action` otherwise). A content item of a known
 * class with a missing or mistyped field quarantines the trajectory, naming `content.N.<field>`.
 */
export const adpReader: Reader = {
  name: FORMAT,
  domain: "from the content (web pages, code and tools)",
  description:
    "Agent Data Protocol standardized trajectories ({id, content: [class_ items], details}; neulab/agent-data-collection std), one per JSONL line, JSON-array element or Parquet row",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    if (!/^[[{]/.test(text)) return false;
    const parsed = parseSniffedJson(firstLine(text));
    if (parsed.ok) {
      const value = parsed.value;
      return Array.isArray(value) ? value.some(isAdpRecord) : isAdpRecord(value);
    }
    // A pretty-printed record or array, or a first line longer than the head: the keys tell.
    return CONTENT_KEY.test(text) && CLASS_KEY.test(text);
  },

  // JSONL is cut by byte range (and Parquet by row group); a JSON array or document is read whole
  // by the task whose range starts the file.
  splittable: true,

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const layout = await jsonFileLayout(path);
    if (layout !== "jsonl" && options.range && options.range.start > 0) return;
    const dataset = datasetOf(path);
    for await (const item of jsonRecords(path, options, FORMAT)) {
      if (item.kind === "quarantine") yield item;
      else yield recordItem(item.value, item.source, item.text, options.domain, dataset);
    }
  },
};

const CLASSES = new Set([
  "api_action",
  "code_action",
  "message_action",
  "text_observation",
  "web_observation",
  "image_observation",
  "json_observation",
]);
const CONTENT_KEY = /"content"\s*:\s*\[\s*\{/;
const CLASS_KEY =
  /"class_"\s*:\s*"(api_action|code_action|message_action|text_observation|web_observation|image_observation|json_observation)"/;

/** `TextObservation` → `text_observation`; snake case as it is. */
function className(value: string): string {
  return value.includes("_") ? value : value.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function isAdpRecord(value: unknown): boolean {
  if (!isRecord(value) || !Array.isArray(value.content)) return false;
  return value.content.some((item) => isRecord(item) && typeof item.class_ === "string" && CLASSES.has(className(item.class_)));
}

/** The Hub dataset a file belongs to: `<dataset>/full_std.jsonl`, `<dataset>/sample_std.json`, `<dataset>/std/0000.parquet`. */
function datasetOf(path: string): string | undefined {
  const name = basename(path).replace(/\.(gz|zst|zstd)$/i, "");
  const parent = basename(dirname(path));
  if (/^(full|sample)_std\.(jsonl|json|parquet)$/.test(name)) return parent || undefined;
  if (parent === "std" && /\.parquet$/.test(name)) return basename(dirname(dirname(path))) || undefined;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Content items

type Source = "user" | "agent" | "environment" | "system";

interface Call {
  id?: string;
  name: string;
  action: string;
  language?: string;
  thinking: string[];
  reward?: number;
  /** The command it ran (shell code or a shell tool), for the domain's repository evidence. */
  command?: string;
}

interface Result {
  text: string;
  meta: Json;
}

type Item =
  | { kind: "call"; call: Call }
  | { kind: "message"; text: string }
  | { kind: "text"; source: Source; text: string; id?: string; reward?: number }
  | { kind: "observation"; result: Result; id?: string; web: boolean }
  | { kind: "unknown"; what: string };

const SOURCES: Record<string, Source> = {
  user: "user",
  user_msg: "user",
  human: "user",
  agent: "agent",
  assistant: "agent",
  gpt: "agent",
  environment: "environment",
  system: "system",
};

function optionalString(item: Json, key: string, field: string): string | undefined {
  const value = item[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new FieldError(`${field}.${key}`, `${field}.${key} must be a string, got ${describeType(value)}`);
  return value;
}

function requiredString(item: Json, key: string, field: string, cls: string): string {
  const value = item[key];
  if (typeof value !== "string")
    throw new FieldError(`${field}.${key}`, `${field} (${cls}) needs a string "${key}", got ${describeType(value)}`);
  return value;
}

function optionalNumber(item: Json, key: string, field: string): number | undefined {
  const value = item[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new FieldError(`${field}.${key}`, `${field}.${key} must be a number, got ${describeType(value)}`);
  return value;
}

/** kwargs: an object (or a JSON string of one; absent or null is no arguments). */
function kwargsOf(item: Json, field: string): Json {
  let value = item.kwargs;
  if (value === undefined || value === null) return {};
  if (typeof value === "string") {
    const parsed = parseJsonLine(value);
    if (parsed.ok && isRecord(parsed.value)) value = parsed.value;
  }
  if (!isRecord(value)) throw new FieldError(`${field}.kwargs`, `${field}.kwargs must be an object, got ${describeType(item.kwargs)}`);
  const decoded: Json = {};
  for (const [key, arg] of Object.entries(value)) decoded[key] = typeof arg === "string" ? stringLiteral(arg) : arg;
  return decoded;
}

/** A value written as a JSON string literal (`"\"149\""`: ADP's web converters quote them as code), decoded. */
function stringLiteral(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  const parsed = parseJsonLine(value);
  return parsed.ok && typeof parsed.value === "string" ? parsed.value : value;
}

const PYTHON_TOOLS = new Set(["execute_ipython_cell", "ipython", "python", "run_python", "execute_python"]);

function apiCall(item: Json, field: string, thinking: string[], id: string | undefined, reward: number | undefined): Call {
  const name = requiredString(item, "function", field, "api_action");
  if (name === "") throw new FieldError(`${field}.function`, `${field}.function is empty`);
  const args = kwargsOf(item, field);
  const base = { ...(id !== undefined ? { id } : {}), name, thinking, ...(reward !== undefined ? { reward } : {}) };
  const command = args.command ?? args.cmd;
  if (isShellTool(name) && typeof command === "string") return { ...base, action: command, command };
  if (PYTHON_TOOLS.has(name) && typeof args.code === "string") return { ...base, action: args.code, language: "python" };
  return { ...base, action: canonicalAction(name, args) };
}

const SHELL_LANGUAGES = new Set(["bash", "sh", "shell", "zsh", "console", "commandline", "cmd", "powershell", "bat", "batch"]);

/** One content item, checked against its class's schema. */
function parseItem(raw: unknown, field: string): Item {
  if (!isRecord(raw)) throw new FieldError(field, `${field} must be an object, got ${describeType(raw)}`);
  if (typeof raw.class_ !== "string")
    throw new FieldError(`${field}.class_`, `${field} has no "class_" (string), got ${describeType(raw.class_)}`);
  const cls = className(raw.class_);
  const id = optionalString(raw, "tool_call_id", field);
  const reward = optionalNumber(raw, "reward", field);
  switch (cls) {
    case "api_action":
    case "code_action": {
      const thinking = [optionalString(raw, "reasoning_content", field), optionalString(raw, "description", field)].filter(
        (text): text is string => text !== undefined && text.trim() !== "",
      );
      if (cls === "api_action") return { kind: "call", call: apiCall(raw, field, thinking, id, reward) };
      const code = requiredString(raw, "content", field, cls);
      const language = optionalString(raw, "language", field) ?? "";
      const shell = SHELL_LANGUAGES.has(language.toLowerCase());
      const name = shell ? "execute_bash" : `execute_${language || "code"}`;
      return {
        kind: "call",
        call: {
          ...(id !== undefined ? { id } : {}),
          name,
          action: code,
          language,
          thinking,
          ...(reward !== undefined ? { reward } : {}),
          ...(shell ? { command: code } : {}),
        },
      };
    }
    case "message_action":
      return { kind: "message", text: requiredString(raw, "content", field, cls) };
    case "text_observation": {
      const text = requiredString(raw, "content", field, cls);
      const sourceName = requiredString(raw, "source", field, cls);
      const source = SOURCES[sourceName.toLowerCase()];
      if (source === undefined)
        throw new FieldError(`${field}.source`, `${field}.source "${sourceName.slice(0, 40)}" is none of user, agent, environment`);
      return { kind: "text", source, text, ...(id !== undefined ? { id } : {}), ...(reward !== undefined ? { reward } : {}) };
    }
    case "web_observation":
      return { kind: "observation", result: webResult(raw, field, reward), ...(id !== undefined ? { id } : {}), web: true };
    case "image_observation":
      return { kind: "observation", result: imageResult(raw, field, reward), ...(id !== undefined ? { id } : {}), web: false };
    case "json_observation": {
      const content = raw.content;
      if (content === undefined || content === null)
        throw new FieldError(`${field}.content`, `${field} (json_observation) has no "content"`);
      const meta: Json = { observation_format: "json", ...(reward !== undefined ? { reward } : {}) };
      return {
        kind: "observation",
        result: { text: jsonTextOr(content, String(content)), meta },
        ...(id !== undefined ? { id } : {}),
        web: false,
      };
    }
    default:
      return { kind: "unknown", what: cls };
  }
}

function webResult(item: Json, field: string, reward: number | undefined): Result {
  const axtree = optionalString(item, "axtree", field);
  const html = optionalString(item, "html", field);
  const url = optionalString(item, "url", field);
  const image = item.image_observation;
  if (image !== undefined && image !== null && !isRecord(image))
    throw new FieldError(`${field}.image_observation`, `${field}.image_observation must be an object, got ${describeType(image)}`);
  const viewport = item.viewport_size;
  if (viewport !== undefined && viewport !== null && !Array.isArray(viewport))
    throw new FieldError(`${field}.viewport_size`, `${field}.viewport_size must be a list [width, height], got ${describeType(viewport)}`);
  const meta: Json = {};
  let text: string;
  if (axtree !== undefined && axtree.trim() !== "") {
    text = axtree;
    meta.tree_format = AXTREE_TREE_FORMAT;
  } else if (html !== undefined && html.trim() !== "") {
    text = html;
    meta.observation_format = "html";
  } else {
    text = url !== undefined ? `[page ${url}: no accessibility tree or HTML recorded]` : "[page: no accessibility tree or HTML recorded]";
    meta.observation_format = "none";
  }
  if (url !== undefined) meta.url = url;
  if (isRecord(image) && typeof image.content === "string") meta.screenshot = image.content;
  if (Array.isArray(viewport)) meta.viewport_size = viewport;
  if (reward !== undefined) meta.reward = reward;
  return { text, meta };
}

function imageResult(item: Json, field: string, reward: number | undefined): Result {
  const path = requiredString(item, "content", field, "image_observation");
  const annotations = item.annotations;
  if (annotations !== undefined && annotations !== null && !Array.isArray(annotations))
    throw new FieldError(`${field}.annotations`, `${field}.annotations must be a list, got ${describeType(annotations)}`);
  const lines: string[] = [];
  for (const [i, annotation] of (annotations ?? []).entries()) {
    const at = `${field}.annotations.${i}`;
    if (!isRecord(annotation)) throw new FieldError(at, `${at} must be an object, got ${describeType(annotation)}`);
    const text = typeof annotation.text === "string" ? annotation.text : "";
    const type = typeof annotation.element_type === "string" ? annotation.element_type : "element";
    const box = isRecord(annotation.bounding_box) ? annotation.bounding_box : {};
    const n = (key: string) => (typeof box[key] === "number" ? String(box[key]) : "?");
    lines.push(`[${type}] ${text} @ ${n("x")},${n("y")} ${n("width")}x${n("height")}`);
  }
  const meta: Json = {
    image: path,
    observation_format: lines.length > 0 ? "image-annotations" : "image",
    ...(reward !== undefined ? { reward } : {}),
  };
  return { text: lines.length > 0 ? lines.join("\n") : "[image]", meta };
}

// ---------------------------------------------------------------------------------------------
// Pairing actions with observations

interface Step {
  calls: Call[];
  results: (Result | undefined)[];
  dialogue: Dialogue[];
}

interface Dialogue {
  role: string;
  text: string;
}

class Pairer {
  readonly turns: Turn[] = [];
  readonly skipped: Record<string, number> = {};
  readonly agentSystem: string[] = [];
  readonly initial: Result[] = [];
  readonly calls: Call[] = [];
  task: string | undefined;
  /** The last step no observation answered, while no turn came after it: `meta.unobserved_final_action`. */
  private unanswered: { action: string; calls: number } | undefined;
  sawWeb = false;
  private step: Step | undefined;
  private dialogue: Dialogue[] = [];
  private sawAction = false;
  private sawUser = false;
  /** The index of the last call that got a result (extra observations join it). */
  private lastAnswered = -1;

  add(item: Item): void {
    switch (item.kind) {
      case "call":
        if (this.step?.results.some((r) => r !== undefined)) this.closeStep();
        this.step ??= { calls: [], results: [], dialogue: this.takeDialogue() };
        this.step.calls.push(item.call);
        this.step.results.push(undefined);
        this.calls.push(item.call);
        this.sawAction = true;
        return;
      case "message":
        this.closeStep();
        this.dialogue.push({ role: "assistant", text: item.text });
        return;
      case "unknown":
        this.count(`unknown_class:${item.what.slice(0, 60)}`);
        return;
      case "observation":
        if (item.web) this.sawWeb = true;
        this.observe(item.result, item.id);
        return;
      case "text":
        this.text(item);
        return;
    }
  }

  private text(item: Extract<Item, { kind: "text" }>): void {
    const result: Result = { text: item.text, meta: item.reward !== undefined ? { reward: item.reward } : {} };
    if (item.source === "environment") {
      this.observe(result, item.id);
      return;
    }
    if (item.source === "user" && this.openCall(item.id) !== -1) {
      this.count("user_text_as_result");
      this.observe(result, item.id);
      return;
    }
    this.closeStep();
    if (item.source === "system" && !this.sawAction) {
      this.agentSystem.push(item.text);
      return;
    }
    if (item.source === "user" && !this.sawAction && this.task === undefined) {
      this.task = item.text;
      this.sawUser = true;
      return;
    }
    this.dialogue.push({ role: item.source === "agent" ? "assistant" : item.source, text: item.text });
  }

  /** An unanswered call of the open step: the one with this id, else the first. -1 when none. */
  private openCall(id: string | undefined): number {
    const step = this.step;
    if (!step) return -1;
    const byId = id === undefined ? -1 : step.calls.findIndex((c, i) => c.id === id && step.results[i] === undefined);
    return byId !== -1 ? byId : step.results.indexOf(undefined);
  }

  private observe(result: Result, id: string | undefined): void {
    const step = this.step;
    if (!step) {
      if (this.sawAction) {
        // After a message to the user, before the next action: context, not a result.
        this.count("observation_without_action");
        this.dialogue.push({ role: "environment", text: result.text });
      } else if (!this.sawUser && result.meta.tree_format === undefined && result.meta.observation_format === undefined) {
        // Environment text before the task: the agent's system prompt (older SWE converters).
        this.agentSystem.push(result.text);
      } else this.initial.push(result);
      return;
    }
    const index = this.openCall(id);
    if (index !== -1) {
      // A command that printed nothing (ADP keeps "" as its output), as the other readers write it.
      step.results[index] = result.text.trim() === "" ? { ...result, text: "[no output]" } : result;
      this.lastAnswered = index;
      return;
    }
    // Every call answered: a further observation belongs to the last one answered.
    const last = step.results[this.lastAnswered];
    if (!last) return;
    this.count("extra_observation_joined");
    step.results[this.lastAnswered] = { text: `${last.text}\n\n${result.text}`, meta: { ...result.meta, ...last.meta } };
  }

  finish(): { finalAnswer?: string } {
    this.closeStep();
    const assistant = this.dialogue.filter((d) => d.role === "assistant");
    const finalAnswer = assistant.at(-1)?.text;
    if (this.dialogue.length > 0) this.count("dialogue_after_last_turn", this.dialogue.length);
    return finalAnswer !== undefined ? { finalAnswer } : {};
  }

  private closeStep(): void {
    const step = this.step;
    if (!step) return;
    this.step = undefined;
    this.lastAnswered = -1;
    const answered = step.results.filter((r) => r !== undefined).length;
    this.countUnanswered();
    if (answered === 0) {
      this.unanswered = { action: renderActions(step.calls), calls: step.calls.length };
      this.dialogue = [...step.dialogue, ...this.dialogue];
      return;
    }
    if (answered < step.calls.length) this.count("call_without_result", step.calls.length - answered);
    this.turns.push(stepTurn(step));
  }

  /** An unanswered step followed by more steps was not the final action: counted. */
  private countUnanswered(): void {
    if (this.unanswered) this.count("call_without_result", this.unanswered.calls);
    this.unanswered = undefined;
  }

  get unobservedFinal(): string | undefined {
    return this.unanswered?.action;
  }

  private takeDialogue(): Dialogue[] {
    const dialogue = this.dialogue;
    this.dialogue = [];
    return dialogue;
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }
}

function renderActions(calls: readonly Call[]): string {
  const n = calls.length;
  return n === 1 ? (calls[0] as Call).action : calls.map((c, i) => `[call ${i + 1}/${n}]\n${c.action}`).join("\n");
}

function stepTurn(step: Step): Turn {
  const n = step.calls.length;
  const action = renderActions(step.calls);
  const observation =
    n === 1
      ? (step.results[0] as Result).text
      : step.results.map((r, i) => `[result ${i + 1}/${n}]\n${r?.text ?? "[no result]"}`).join("\n");
  const meta: Json = n === 1 ? { tool: (step.calls[0] as Call).name } : { tools: step.calls.map((c) => c.name), parallel_calls: n };
  if (n === 1) {
    const call = step.calls[0] as Call;
    if (call.language) meta.language = call.language;
    if (call.reward !== undefined) meta.action_reward = call.reward;
    Object.assign(meta, (step.results[0] as Result).meta);
  } else {
    const rewards = step.results.map((r) => r?.meta.reward);
    if (rewards.some((r) => r !== undefined)) meta.rewards = rewards.map((r) => r ?? null);
  }
  const thinking = step.calls.flatMap((c) => c.thinking).join("\n\n");
  if (step.dialogue.length > 0) meta.dialogue = step.dialogue;
  return { action, observation, ...(thinking !== "" ? { thinking } : {}), meta };
}

// ---------------------------------------------------------------------------------------------
// Records

const BROWSERGYM_ACTIONS = new Set([
  "click",
  "dblclick",
  "fill",
  "select_option",
  "hover",
  "press",
  "focus",
  "clear",
  "drag_and_drop",
  "upload_file",
  "goto",
  "go_back",
  "go_forward",
  "new_tab",
  "tab_close",
  "tab_focus",
  "scroll",
  "send_msg_to_user",
  "report_infeasible",
  "mouse_click",
  "keyboard_type",
  "keyboard_press",
]);
const REPO_DETAILS = ["repo", "instance_id", "model_patch", "patch", "git_patch"];
const SWE_INSTANCE_ID = /^[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-\d+$/;

function inferDomain(pairer: Pairer, id: string, details: Json): Domain {
  const names = pairer.calls.map((c) => c.name);
  if (pairer.sawWeb || names.some((n) => BROWSERGYM_ACTIONS.has(n))) return "web";
  const code = pairer.calls.some((c) => c.language !== undefined) || names.some(isShellTool) || names.some(isEditTool);
  if (code) {
    const repository =
      names.some(isEditTool) ||
      REPO_DETAILS.some((key) => typeof details[key] === "string" && details[key] !== "") ||
      SWE_INSTANCE_ID.test(id) ||
      pairer.calls.some((c) => c.command !== undefined && (/(^|[\s;&|(])git\s/.test(c.command) || c.command.includes("diff --git")));
    return repository ? "swe" : "terminal";
  }
  if (names.some(isBrowserTool)) return "web";
  if (names.some(isSearchTool)) return "search";
  return names.length > 0 ? "mcp" : "terminal";
}

function outcomeOf(details: Json): Json | undefined {
  const outcome: Json = {};
  if (typeof details.resolved === "boolean") {
    outcome.resolved = details.resolved;
    outcome.success = details.resolved;
  }
  if (typeof details.success === "boolean") outcome.success = details.success;
  if (typeof details.reward === "number" && Number.isFinite(details.reward)) outcome.reward = details.reward;
  return Object.keys(outcome).length > 0 ? outcome : undefined;
}

function recordItem(value: Json, source: SourceRef, text: string, domain: Domain | undefined, dataset: string | undefined): ReadItem {
  const rawId = value.id;
  const idOk = typeof rawId === "string" ? rawId !== "" : typeof rawId === "number" && Number.isFinite(rawId);
  const id = idOk ? String(rawId) : contentId("adp", text);
  // The source names the line (or element); the reason says what is wrong.
  const fail = (reason: string, field: string | undefined) => quarantineItem(source, reason, { id, field, text });
  if (rawId !== undefined && rawId !== null && !idOk) return fail(`"id" must be a string, got ${describeType(rawId)}`, "id");
  const content = value.content;
  if (!Array.isArray(content))
    return fail(`"content" must be a list of ADP actions and observations, got ${describeType(content)}`, "content");
  if (content.length === 0) return fail('"content" is empty', "content");
  const details = value.details;
  if (details !== undefined && details !== null && !isRecord(details))
    return fail(`"details" must be an object, got ${describeType(details)}`, "details");
  const pairer = new Pairer();
  try {
    for (const [i, raw] of content.entries()) pairer.add(parseItem(raw, `content.${i}`));
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    return fail(err.message, err.field);
  }
  const { finalAnswer } = pairer.finish();
  const detailsObject: Json = isRecord(details) ? details : {};

  const adp: Json = {};
  if (typeof value.schema_version === "string") adp.schema_version = value.schema_version;
  if (dataset !== undefined) adp.dataset = dataset;
  for (const key of ["available_apis", "available_custom_tools", "available_code_languages"]) {
    if (Array.isArray(value[key])) adp[key] = value[key];
  }
  const meta: Json = Object.keys(adp).length > 0 ? { adp } : {};
  if (Object.keys(detailsObject).length > 0) meta.details = detailsObject;
  const outcome = outcomeOf(detailsObject);
  if (outcome) meta.outcome = outcome;
  const taskId = detailsObject.instance_id ?? detailsObject.task_id;
  if (typeof taskId === "string" && taskId !== "") meta.task_id = taskId;
  if (pairer.agentSystem.length > 0) meta.agent_system = pairer.agentSystem.join("\n\n");
  if (finalAnswer !== undefined) meta.final_answer = finalAnswer;
  if (pairer.unobservedFinal !== undefined) meta.unobserved_final_action = pairer.unobservedFinal;
  if (Object.keys(pairer.skipped).length > 0) meta.skipped = pairer.skipped;

  const initial = pairer.initial;
  const first = initial[0];
  if (initial.length === 1 && first) {
    if (first.meta.tree_format !== undefined) meta.initial_tree_format = first.meta.tree_format;
    if (first.meta.observation_format !== undefined) meta.initial_observation_format = first.meta.observation_format;
    if (first.meta.url !== undefined) meta.initial_url = first.meta.url;
  }
  if (pairer.turns.length === 0) {
    meta.read_filter =
      pairer.calls.length === 0
        ? {
            stage: "no-tool-calls",
            reason: "the trajectory holds no api_action or code_action: messages only, nothing an environment returned",
          }
        : {
            stage: "no-observation-after-action",
            reason: `none of its ${pairer.calls.length} action(s) is followed by an observation`,
          };
  }
  const trajectory: Trajectory = {
    id,
    domain: domain ?? inferDomain(pairer, id, detailsObject),
    source,
    ...(pairer.task !== undefined ? { task: pairer.task } : {}),
    ...(initial.length > 0 ? { initialObservation: initial.map((r) => r.text).join("\n\n") } : {}),
    turns: pairer.turns,
    meta,
  };
  return { kind: "trajectory", trajectory };
}
