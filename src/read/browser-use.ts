import { createHash, type Hash } from "node:crypto";
import type { Domain, SourceRef, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { jsonFileLayout } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import type { Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, FieldError, isRecord, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";
import { jsonRecords, quarantineItem, webAction } from "./webarena.ts";

const FORMAT = "browser-use";

/**
 * browser-use agent histories (github.com/browser-use/browser-use): what
 * `agent.history.save_to_file(path)` writes, `AgentHistoryList.model_dump()` as JSON —
 * `{"history": [{model_output, result, state, metadata}, …]}`, one run per file (a pretty-printed
 * document, streamed step by step with stream-json), or one run per JSONL line / JSON-array
 * element. Every generation of the schema is read:
 *
 * - `model_output`: 0.1.x `{current_state: {evaluation_previous_goal, memory, next_goal, …},
 *   action}`; 0.5+ flattened `{thinking?, evaluation_previous_goal, memory, next_goal, action}`;
 *   null when the model's reply could not be parsed (that step is no turn: `meta.skipped`).
 *   `action` is a list of one-key objects `{"<action name>": {params}}`.
 * - `result`: one `ActionResult` per executed action, in order (`is_done`, `success`,
 *   `extracted_content`, `error`, `long_term_memory`, `include_in_memory`, `attachments`, …).
 *   Fewer results than actions: browser-use stopped the step early (an error, a page change).
 * - `state`: the page BEFORE the step's actions (`url`, `title`, `tabs`, `interacted_element` — one
 *   element or null in the earliest versions, a list per action later — and the screenshot as
 *   base64 `screenshot` up to 0.1.x, `screenshot_path` later). browser-use does not save the page's
 *   DOM or text in the history: the URL, title and tabs are all there is of the page.
 * - `metadata`: `step_number`, `step_start_time`, `step_end_time`, `input_tokens` (or null).
 *
 * Mapping (domain `web`): step i's actions → one turn. Action: each `{"name", "arguments"}` as
 * canonical JSON (the web readers' convention), several numbered `[call i/N]`. Observation: what
 * the browser returned — each result's `extracted_content` (else `long_term_memory`), its `error`
 * as `Error: …`, `[no output]` when it says nothing (counted `meta.browser_use.empty_results`),
 * `[not executed]` for an action after the step was cut short (several as `[result i/N]`), then
 * the page after the step: step i+1's `URL:`, `Title:` and open tabs when more than one. The first
 * step's page is the `initialObservation`. A last step of only `done` is no turn: its action is
 * `meta.unobserved_final_action`, its text `meta.final_result`. `thinking` and the
 * evaluation / memory / next-goal fields are the turn's `thinking` (labelled lines).
 * The last result's `is_done` with a boolean `success` (the agent's own verdict) →
 * `meta.outcome.success`. Screenshots never enter text: a path is `turn.meta.screenshot` (of the
 * page after), base64 is dropped and counted (`meta.browser_use.screenshots_omitted`).
 *
 * Id: `browser-use-<16 hex of the sha256 of the run's content>` (deterministic, layout-free); task:
 * a top-level `task` string when a wrapper saved one (the history itself does not record it).
 * A wrong-typed field quarantines the run (the whole file for a document), naming the step and field.
 */
export const browserUseReader: Reader = {
  name: FORMAT,
  domain: "web",
  description: "browser-use AgentHistoryList JSON (save_to_file): model_output actions → results + next URL/title",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    if (!/^[[{]/.test(text)) return false;
    return HISTORY_START.test(text) && /"model_output"\s*:\s*(\{|null)/.test(text);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const domain = options.domain ?? "web";
    const layout = await jsonFileLayout(path);
    if (layout !== "document") {
      for await (const item of jsonRecords(path, options, FORMAT)) {
        if (item.kind === "quarantine") {
          yield item;
          continue;
        }
        const run = new RunBuilder(item.source, domain, item.where);
        for (const [key, value] of Object.entries(item.value)) {
          if (key === "history" && Array.isArray(value)) {
            run.historySeen();
            for (const [i, step] of value.entries()) if (!run.step(i, step)) break;
          } else run.field(key, value);
          if (run.failed) break;
        }
        yield run.finish();
      }
      return;
    }
    const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
    const run = new RunBuilder(source, domain, "");
    const { stream } = await openDecompressed(path);
    try {
      const pick = (at: JsonPath, kind: JsonKind) => {
        // An empty `history: []` selects nothing: its start is what says the run has a history.
        if (at.length === 1 && at[0] === "history" && kind === "array") run.historySeen();
        return wanted(at, kind);
      };
      for await (const { path: at, value } of selectJson(stream, pick)) {
        if (at.length === 0) {
          run.fail(`expected a JSON object (a browser-use AgentHistoryList), got ${describeType(value)}`);
          break;
        }
        if (at.length === 2) run.step(at[1] as number, value);
        else run.field(at[0] as string, value);
        if (run.failed) break;
      }
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
      run.fail(`the file is not one JSON document: ${err.message}`);
    }
    yield run.finish();
  },
};

/** `"history": [ {` with a step's first key (model_dump writes model_output, result, state, metadata). */
const HISTORY_START = /"history"\s*:\s*\[\s*\{\s*"(model_output|result|state|metadata)"\s*:/;

/** The streamed document's values: each top-level member, but each `history` step on its own. */
function wanted(at: JsonPath, kind: JsonKind): boolean {
  if (at.length === 0) return kind !== "object";
  if (at.length === 1) return !(at[0] === "history" && kind === "array");
  return at.length === 2 && at[0] === "history";
}

type Json = Record<string, unknown>;

interface Action {
  name: string;
  args: Json;
}

interface Result {
  text: string;
  empty: boolean;
  error: boolean;
  isDone: boolean;
  success?: boolean;
  extracted?: string;
  attachments?: string[];
  imagesOmitted: number;
}

interface Page {
  url?: string;
  title?: string;
  tabs: { url?: string; title?: string }[];
  screenshotPath?: string;
  screenshotInline: boolean;
}

interface Step {
  index: number;
  /** Undefined when the model's output could not be parsed (`model_output: null`). */
  actions?: Action[];
  thinking?: string;
  results: Result[];
  page?: Page;
  interacted: unknown[];
  meta: Json;
}

/** Type checks that name the field: `history.3.result.0.error`. */
function optString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new FieldError(field, `expected a string or null, got ${describeType(value)}`);
  return value;
}

function optBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new FieldError(field, `expected true, false or null, got ${describeType(value)}`);
  return value;
}

function optNumber(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new FieldError(field, `expected a number or null, got ${describeType(value)}`);
  return value;
}

function optObject(value: unknown, field: string): Json | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new FieldError(field, `expected an object or null, got ${describeType(value)}`);
  return value;
}

function optArray(value: unknown, field: string): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new FieldError(field, `expected a list or null, got ${describeType(value)}`);
  return value;
}

/** Reasoning fields in the order browser-use asks for them, with the labels the thinking text uses. */
const BRAIN_FIELDS: readonly [string, string][] = [
  ["evaluation_previous_goal", "Evaluation of the previous goal"],
  ["memory", "Memory"],
  ["next_goal", "Next goal"],
];

/** `thinking` first, then each other reasoning field as a labelled line (0.1.x `current_state`, 0.5+ flattened). */
function brainText(output: Json, at: string): string | undefined {
  const nested = optObject(output.current_state, `${at}.current_state`);
  const brain = nested ?? output;
  const brainAt = nested ? `${at}.current_state` : at;
  const parts: string[] = [];
  const thinking = optString(brain.thinking ?? (nested ? output.thinking : undefined), `${brainAt}.thinking`);
  if (thinking?.trim()) parts.push(thinking.trim());
  const known = new Set(["thinking", "action", "current_state", ...BRAIN_FIELDS.map(([key]) => key)]);
  const labelled: [string, string][] = [
    ...BRAIN_FIELDS,
    // Fields some versions or forks add (`page_summary`, `current_status`, `persistent_notes`…).
    ...Object.keys(brain)
      .filter((key) => !known.has(key))
      .map((key): [string, string] => [key, key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase())]),
  ];
  for (const [key, label] of labelled) {
    const value = brain[key];
    if (!BRAIN_FIELDS.some(([k]) => k === key) && typeof value !== "string") continue;
    const text = optString(value, `${brainAt}.${key}`);
    if (text?.trim()) parts.push(`${label}: ${text.trim()}`);
  }
  return parts.length > 0 ? parts.join("\n") : undefined;
}

function parseActions(value: unknown, at: string): Action[] {
  if (!Array.isArray(value)) throw new FieldError(at, `expected a list of actions, got ${describeType(value)}`);
  return value.map((entry, k): Action => {
    const field = `${at}.${k}`;
    if (!isRecord(entry)) throw new FieldError(field, `expected an action object {"<name>": {params}}, got ${describeType(entry)}`);
    const keys = Object.keys(entry);
    if (keys.length !== 1) throw new FieldError(field, `expected one action name as the only key, got ${keys.length} keys`);
    const name = keys[0] as string;
    const params = entry[name];
    if (params !== null && !isRecord(params))
      throw new FieldError(`${field}.${name}`, `expected the action's parameters as an object, got ${describeType(params)}`);
    return { name, args: params ?? {} };
  });
}

function parseResult(value: unknown, at: string): Result {
  if (!isRecord(value)) throw new FieldError(at, `expected an ActionResult object, got ${describeType(value)}`);
  const extracted = optString(value.extracted_content, `${at}.extracted_content`);
  const error = optString(value.error, `${at}.error`);
  const memory = optString(value.long_term_memory, `${at}.long_term_memory`);
  const isDone = optBoolean(value.is_done, `${at}.is_done`) === true;
  const success = optBoolean(value.success, `${at}.success`);
  optBoolean(value.include_in_memory, `${at}.include_in_memory`);
  const attachments = optArray(value.attachments, `${at}.attachments`)?.map((item, k) => {
    if (typeof item !== "string") throw new FieldError(`${at}.attachments.${k}`, `expected a file path, got ${describeType(item)}`);
    return item;
  });
  // Newer results may carry base64 images: never text.
  const images = optArray(value.images, `${at}.images`) ?? [];
  const lines: string[] = [];
  const content = extracted?.trim() ? extracted : memory?.trim() ? memory : undefined;
  if (content !== undefined) lines.push(content.trimEnd());
  if (error?.trim()) lines.push(`Error: ${error.trimEnd()}`);
  for (const file of attachments ?? []) lines.push(`Attachment: ${file}`);
  const empty = lines.length === 0;
  return {
    text: empty ? "[no output]" : lines.join("\n"),
    empty,
    error: error !== undefined,
    isDone,
    ...(success !== undefined ? { success } : {}),
    ...(extracted !== undefined ? { extracted } : {}),
    ...(attachments && attachments.length > 0 ? { attachments } : {}),
    imagesOmitted: images.length,
  };
}

function parsePage(value: unknown, at: string): Page | undefined {
  const state = optObject(value, at);
  if (!state) return undefined;
  const tabs = (optArray(state.tabs, `${at}.tabs`) ?? []).map((tab, k) => {
    const field = `${at}.tabs.${k}`;
    if (!isRecord(tab)) throw new FieldError(field, `expected a tab object, got ${describeType(tab)}`);
    const url = optString(tab.url, `${field}.url`);
    const title = optString(tab.title, `${field}.title`);
    return { ...(url !== undefined ? { url } : {}), ...(title !== undefined ? { title } : {}) };
  });
  const url = optString(state.url, `${at}.url`);
  const title = optString(state.title, `${at}.title`);
  const screenshotPath = optString(state.screenshot_path, `${at}.screenshot_path`);
  const screenshot = optString(state.screenshot, `${at}.screenshot`);
  return {
    ...(url !== undefined ? { url } : {}),
    ...(title !== undefined ? { title } : {}),
    tabs,
    ...(screenshotPath ? { screenshotPath } : {}),
    screenshotInline: screenshot !== undefined && screenshot !== "",
  };
}

/** The element an action targeted: its tag, XPath and attributes (0.1.x DOMHistoryElement, later DOMInteractedElement). */
function elementSummary(value: unknown, at: string): unknown {
  if (value === null || value === undefined) return null;
  if (!isRecord(value)) throw new FieldError(at, `expected an element object or null, got ${describeType(value)}`);
  const tag = optString(value.tag_name ?? value.node_name, `${at}.${"tag_name" in value ? "tag_name" : "node_name"}`);
  const xpath = optString(value.xpath ?? value.x_path, `${at}.${"xpath" in value ? "xpath" : "x_path"}`);
  const attributes = optObject(value.attributes, `${at}.attributes`);
  const index = optNumber(value.highlight_index, `${at}.highlight_index`);
  return {
    ...(tag !== undefined ? { tag } : {}),
    ...(index !== undefined ? { index } : {}),
    ...(xpath !== undefined ? { xpath } : {}),
    ...(attributes && Object.keys(attributes).length > 0 ? { attributes } : {}),
  };
}

function parseStep(value: unknown, index: number): Step {
  const at = `history.${index}`;
  if (!isRecord(value)) throw new FieldError(at, `expected a history step object, got ${describeType(value)}`);
  const output = optObject(value.model_output, `${at}.model_output`);
  let actions: Action[] | undefined;
  let thinking: string | undefined;
  if (output) {
    actions = parseActions(output.action, `${at}.model_output.action`);
    thinking = brainText(output, `${at}.model_output`);
  }
  if (!Array.isArray(value.result))
    throw new FieldError(`${at}.result`, `expected a list of action results, got ${describeType(value.result)}`);
  const results = value.result.map((result, k) => parseResult(result, `${at}.result.${k}`));
  if (!isRecord(value.state)) throw new FieldError(`${at}.state`, `expected the browser state object, got ${describeType(value.state)}`);
  const page = parsePage(value.state, `${at}.state`);
  const rawElements = value.state.interacted_element;
  const interacted = Array.isArray(rawElements)
    ? rawElements.map((el, k) => elementSummary(el, `${at}.state.interacted_element.${k}`))
    : [elementSummary(rawElements, `${at}.state.interacted_element`)];
  const metadata = optObject(value.metadata, `${at}.metadata`) ?? {};
  const meta: Json = {};
  const stepNumber = optNumber(metadata.step_number, `${at}.metadata.step_number`);
  const start = optNumber(metadata.step_start_time, `${at}.metadata.step_start_time`);
  const end = optNumber(metadata.step_end_time, `${at}.metadata.step_end_time`);
  const tokens = optNumber(metadata.input_tokens, `${at}.metadata.input_tokens`);
  if (stepNumber !== undefined) meta.step_number = stepNumber;
  if (start !== undefined && end !== undefined) meta.duration_s = Math.round((end - start) * 1000) / 1000;
  if (tokens !== undefined) meta.input_tokens = tokens;
  return {
    index,
    ...(actions !== undefined ? { actions } : {}),
    ...(thinking !== undefined ? { thinking } : {}),
    results,
    ...(page ? { page } : {}),
    interacted,
    meta,
  };
}

/** A page as text: `URL:`, `Title:` and, when more than one tab is open, each tab. */
function pageText(page: Page): string[] {
  const lines: string[] = [];
  if (page.url !== undefined) lines.push(`URL: ${page.url}`);
  if (page.title !== undefined && page.title !== "") lines.push(`Title: ${page.title}`);
  if (page.tabs.length > 1)
    for (const [k, tab] of page.tabs.entries()) lines.push(`Tab ${k}: ${tab.title ?? ""}${tab.url !== undefined ? ` (${tab.url})` : ""}`);
  return lines;
}

const actionText = (actions: Action[]) =>
  actions.length === 1
    ? webAction((actions[0] as Action).name, (actions[0] as Action).args)
    : actions.map((a, k) => `[call ${k + 1}/${actions.length}]\n${webAction(a.name, a.args)}`).join("\n");

/** Builds one run from its top-level fields and its steps in order; one item comes out of `finish`. */
class RunBuilder {
  private readonly hash: Hash = createHash("sha256");
  private problem: { reason: string; field?: string } | undefined;
  private sawHistory = false;
  private task: string | undefined;
  private readonly top: Json = {};
  private pending: Step | undefined;
  private first: Page | undefined;
  private steps = 0;
  private readonly turns: Turn[] = [];
  private readonly skipped: Record<string, number> = {};
  private readonly counts = { empty_results: 0, unexecuted_actions: 0, screenshots_omitted: 0, images_omitted: 0 };
  private lastStep: Step | undefined;
  private finalAction: string | undefined;

  private readonly source: SourceRef;
  private readonly domain: Domain;
  private readonly where: string;

  constructor(source: SourceRef, domain: Domain, where: string) {
    this.source = source;
    this.domain = domain;
    this.where = where;
  }

  get failed(): boolean {
    return this.problem !== undefined;
  }

  fail(reason: string, field?: string): void {
    this.problem ??= { reason, ...(field !== undefined ? { field } : {}) };
  }

  historySeen(): void {
    this.sawHistory = true;
  }

  field(key: string, value: unknown): void {
    if (nestsTooDeep(value)) {
      this.fail(`"${key}" nests deeper than ${MAX_JSON_DEPTH} levels`, key);
      return;
    }
    this.hash.update(`${JSON.stringify(key)}:${JSON.stringify(value) ?? "null"}\n`);
    if (key === "history") this.fail(`"history" must be a list of steps, got ${describeType(value)}`, "history");
    else if (key === "task") {
      if (value !== null && typeof value !== "string") this.fail(`"task" must be a string, got ${describeType(value)}`, "task");
      else if (typeof value === "string" && value.trim() !== "") this.task = value;
    } else if ((key === "task_id" || key === "model" || key === "agent") && (typeof value === "string" || typeof value === "number")) {
      this.top[key] = String(value);
    }
  }

  /** Takes step `index`; false once the run has failed. */
  step(index: number, value: unknown): boolean {
    this.sawHistory = true;
    if (this.problem) return false;
    if (nestsTooDeep(value)) {
      this.fail(`history step ${index} nests deeper than ${MAX_JSON_DEPTH} levels`, `history.${index}`);
      return false;
    }
    this.hash.update(`history.${index}:${JSON.stringify(value)}\n`);
    let step: Step;
    try {
      step = parseStep(value, index);
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      this.fail(`history step ${index}: ${err.field?.split(".").slice(2).join(".") || "the step"}: ${err.message}`, err.field);
      return false;
    }
    this.steps += 1;
    if (step.page?.screenshotInline) this.counts.screenshots_omitted += 1;
    for (const result of step.results) this.counts.images_omitted += result.imagesOmitted;
    if (index === 0) this.first = step.page;
    if (this.pending) this.close(this.pending, step.page);
    this.pending = step;
    this.lastStep = step;
    return true;
  }

  /** Step `step` becomes a turn, its observation ending with the page `after` it (the next step's). */
  private close(step: Step, after: Page | undefined): void {
    if (step.actions === undefined) {
      this.skip("step_without_model_output");
      return;
    }
    if (step.actions.length === 0) {
      this.skip("step_without_action");
      return;
    }
    const { actions, results } = step;
    const n = Math.max(actions.length, results.length);
    const texts: string[] = [];
    for (let k = 0; k < n; k++) {
      const result = results[k];
      if (!result) this.counts.unexecuted_actions += 1;
      else if (result.empty) this.counts.empty_results += 1;
      const text = result ? result.text : "[not executed]";
      if (n === 1) texts.push(result?.error && !result.extracted ? text : `Result: ${text}`);
      else texts.push(`[result ${k + 1}/${n}] ${text}`);
    }
    const lines = [...texts, ...(after ? pageText(after) : [])];
    const meta: Json = { ...step.meta };
    if (actions.length === 1) meta.tool = (actions[0] as Action).name;
    else {
      meta.tools = actions.map((a) => a.name);
      meta.parallel_calls = actions.length;
    }
    const failed = results.flatMap((r, k) => (r.error ? [k + 1] : []));
    if (failed.length > 0) meta.is_error = true;
    if (failed.length > 0 && n > 1) meta.error_results = failed;
    if (results.length < actions.length) meta.unexecuted_actions = actions.length - results.length;
    if (after?.url !== undefined) meta.url = after.url;
    if (after?.title !== undefined) meta.title = after.title;
    if (after?.screenshotPath) meta.screenshot = after.screenshotPath;
    if (step.interacted.some((el) => el !== null)) meta.interacted_elements = step.interacted;
    this.turns.push({
      action: actionText(actions),
      observation: lines.join("\n"),
      ...(step.thinking !== undefined ? { thinking: step.thinking } : {}),
      meta,
    });
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  finish(): ReadItem {
    const id = `browser-use-${this.hash.digest("hex").slice(0, 16)}`;
    if (!this.problem && !this.sawHistory) this.fail('no "history" list: not a browser-use AgentHistoryList', "history");
    if (this.problem)
      return quarantineItem(this.source, `${this.where}${this.problem.reason}`, {
        id,
        ...(this.problem.field !== undefined ? { field: this.problem.field } : {}),
      });
    const last = this.lastStep;
    const meta: Json = { agent: "browser-use", ...this.top };
    if (this.pending) {
      const step = this.pending;
      // A last step of only `done` reports the agent's answer: nothing of the browser answers it.
      if (step.actions && step.actions.length > 0 && step.actions.every((a) => a.name === "done")) {
        this.finalAction = actionText(step.actions);
        const answer = step.results.find((r) => r.isDone)?.extracted;
        if (answer !== undefined) meta.final_result = answer;
      } else this.close(step, undefined);
    }
    const lastResult = last?.results.at(-1);
    if (lastResult?.isDone && lastResult.success !== undefined) meta.outcome = { success: lastResult.success };
    const browserUse: Json = { steps: this.steps, is_done: lastResult?.isDone === true };
    for (const [key, count] of Object.entries(this.counts)) if (count > 0) browserUse[key] = count;
    meta.browser_use = browserUse;
    if (this.finalAction !== undefined) meta.unobserved_final_action = this.finalAction;
    if (Object.keys(this.skipped).length > 0) meta.skipped = this.skipped;
    const initial = this.first ? pageText(this.first) : [];
    if (this.turns.length === 0)
      meta.read_filter = {
        stage: "no-observations",
        reason: "the browser-use history has no step whose actions the browser answered, so there is no observation to learn",
      };
    return {
      kind: "trajectory",
      trajectory: {
        id,
        domain: this.domain,
        source: this.source,
        ...(this.task !== undefined ? { task: this.task } : {}),
        ...(initial.length > 0 ? { initialObservation: initial.join("\n") } : {}),
        turns: this.turns,
        meta,
      },
    };
  }
}
