import type { SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId, describeType, isRecord } from "./record-helpers.ts";
import { type Json, jsonRecords, quarantineItem, str, webAction } from "./webarena.ts";

const FORMAT = "mind2web";

/**
 * Mind2Web in its three public shapes. A file is one JSON document, a JSON array of records
 * (streamed element by element with stream-json; the raw dataset's `train_*.json` are arrays of
 * tasks) or JSONL.
 *
 * 1. **Raw Mind2Web tasks** (osunlp/Mind2Web `data/*.json`): `{annotation_id, website, domain,
 *    subdomain, confirmed_task, action_reprs: ["[link]  Flights -> CLICK", …], actions: [{action_uid,
 *    raw_html, cleaned_html, operation: {op, value, original_op}, pos_candidates: [{tag,
 *    backend_node_id, attributes, is_original_target}], neg_candidates}]}`. Each action's HTML is
 *    the page BEFORE that action.
 *    - **Action**: canonical JSON `{"name": op lowercased (click / type / select), "arguments":
 *      {element: the action_repr's target (`[link]  Flights`), backend_node_id: the (original)
 *      positive candidate's, value: for TYPE / SELECT}}`. `original_op` (HOVER, ENTER) when it
 *      differs from `op` goes to `turn.meta.original_op`; `action_uid` to `turn.meta.action_uid`.
 *    - **Observation**: the next action's `cleaned_html` (else `raw_html`): the page after the
 *      action. The first action's page is `initialObservation`; the last action's page after is
 *      not recorded: `meta.unobserved_final_action`. A one-action task yields no turn and
 *      `meta.read_filter` {stage: "no-observation-after-action"}.
 *    - **Task**: `confirmed_task`; `meta.task_id` = `annotation_id`; `meta.website`,
 *      `meta.website_domain` (Mind2Web's `domain`, e.g. Travel), `meta.subdomain`. These are
 *      human demonstrations: no outcome is recorded, none is set.
 * 2. **Multimodal-Mind2Web rows** (one row per action: the fields above flattened, `operation`
 *    and `pos_candidates` as JSON strings, `target_action_index`, `target_action_reprs`,
 *    `screenshot`): consecutive rows of one `annotation_id` with consecutive
 *    `target_action_index` are ONE record (trajectory), mapped as a raw task. A gap in the
 *    index starts a new record (`<annotation_id>-run2`).
 * 3. **AgentInstruct Mind2Web conversations** (THUDM/AgentInstruct, ADP `agenttuning_mind2web`):
 *    `{id, conversations: [{role|from, content|value}]}`, the user message `'''<html>…</html>'''`
 *    + `Task:` + `Previous actions:` + lettered choices, the assistant `Thought: …\nAnswer: B.\n
 *    Action: CLICK\nValue: …`. Action: `{"name": click|type|select, "arguments": {choice: "B",
 *    element: the choice's HTML, value?}}`, `Thought` as thinking. Page i is user message i's
 *    HTML; the page after the last answer is not recorded, so the usual one-question row has no
 *    turn and gets `meta.read_filter` {stage: "no-observation-after-action"}, its answer in
 *    `meta.unobserved_final_action` and the choices in `meta.choices`.
 *
 * Id: `annotation_id` (row shapes: plus `-runN` for a restart), AgentInstruct `id`; else a hash.
 * Domain: `web` (or `--domain`).
 */
export const mind2WebReader: Reader = {
  name: FORMAT,
  domain: "web",
  description: "Mind2Web tasks (raw dataset JSON), Multimodal-Mind2Web rows and AgentInstruct Mind2Web conversations",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    if (!/^[[{]/.test(text)) return false;
    if (/"annotation_id"\s*:/.test(text) && /"(confirmed_task|action_reprs|action_uid)"\s*:/.test(text)) return true;
    return /"(conversations|messages)"\s*:/.test(text) && (AGENTINSTRUCT_PROMPT.test(text) || /"id"\s*:\s*"mind2web_\d+"/.test(text));
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const domain = options.domain ?? "web";
    const seen = new Map<string, number>();
    let run: RowRun | undefined;
    const finishRun = function* (): Generator<ReadItem> {
      if (run) yield runItem(run, domain, seen);
      run = undefined;
    };
    for await (const item of jsonRecords(path, options, FORMAT)) {
      if (item.kind === "quarantine") {
        yield* finishRun();
        yield item;
        continue;
      }
      const { value, source, where, text } = item;
      if ("action_uid" in value && "annotation_id" in value && !Array.isArray(value.actions)) {
        const key = String(value.annotation_id);
        const index = Number(value.target_action_index);
        const last = run?.rows.at(-1);
        if (run && (run.key !== key || !Number.isInteger(index) || last === undefined || index !== last.index + 1)) yield* finishRun();
        run ??= { key, source, text, rows: [] };
        run.rows.push({ value, where, index });
        continue;
      }
      yield* finishRun();
      if (Array.isArray(value.actions) || "confirmed_task" in value) yield taskItem(value, source, where, text, domain);
      else if ("conversations" in value || "messages" in value) yield conversationItem(value, source, where, text, domain);
      else
        yield quarantineItem(
          source,
          `${where}not a Mind2Web record: no "actions", "action_uid" or "conversations" (keys: ${Object.keys(value).slice(0, 12).join(", ")})`,
          { text },
        );
    }
    yield* finishRun();
  },
};

const AGENTINSTRUCT_PROMPT =
  /Based on the HTML webpage above, try to complete the following task|What should be the next action\? Please select from the following choices/;

// ---------------------------------------------------------------------------------------------
// Raw tasks and Multimodal-Mind2Web rows

interface RowRun {
  key: string;
  source: SourceRef;
  text: string;
  rows: { value: Json; where: string; index: number }[];
}

/** A value that may be JSON text of an object (Multimodal-Mind2Web stores them so). */
function objectOf(value: unknown): Json | undefined {
  if (isRecord(value)) return value;
  if (typeof value !== "string") return undefined;
  const parsed = parseJsonLine(value);
  return parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
}

interface M2WStep {
  html: string;
  htmlKind: "cleaned_html" | "raw_html";
  action: string;
  meta: Json;
}

/** One Mind2Web action record (a task's `actions[i]` or a row) → its page and action, or why not. */
function m2wStep(action: Json, repr: string | undefined, field: string): M2WStep | { error: string; field: string } {
  const html = str(action.cleaned_html) ?? str(action.raw_html);
  if (html === undefined) return { error: `${field} has no cleaned_html or raw_html (string)`, field: `${field}.cleaned_html` };
  const operation = objectOf(action.operation);
  if (!operation)
    return {
      error: `${field}.operation must be an object {op, value}, got ${describeType(action.operation)}`,
      field: `${field}.operation`,
    };
  const op = str(operation.op) ?? str(operation.original_op);
  if (op === undefined) return { error: `${field}.operation has no op`, field: `${field}.operation.op` };
  const candidates = Array.isArray(action.pos_candidates)
    ? action.pos_candidates.map(objectOf).filter((c): c is Json => c !== undefined)
    : [];
  const target = candidates.find((c) => c.is_original_target === true) ?? candidates[0];
  const args: Json = {};
  const element = repr?.split(" -> ")[0]?.trim();
  if (element) args.element = element;
  if (target && target.backend_node_id !== undefined) args.backend_node_id = String(target.backend_node_id);
  const name = op.toLowerCase();
  if ((name === "type" || name === "select") && typeof operation.value === "string") args.value = operation.value;
  const meta: Json = {};
  if (str(action.action_uid)) meta.action_uid = action.action_uid;
  if (str(operation.original_op) && operation.original_op !== op) meta.original_op = operation.original_op;
  return { html, htmlKind: str(action.cleaned_html) !== undefined ? "cleaned_html" : "raw_html", action: webAction(name, args), meta };
}

function taskMeta(value: Json): Json {
  const meta: Json = {};
  if (value.annotation_id !== undefined) meta.task_id = String(value.annotation_id);
  if (str(value.website)) meta.website = value.website;
  if (str(value.domain)) meta.website_domain = value.domain;
  if (str(value.subdomain)) meta.subdomain = value.subdomain;
  return meta;
}

/** Pages and actions (action i taken on page i) → the trajectory. */
function stepsTrajectory(
  id: string,
  source: SourceRef,
  task: string | undefined,
  steps: M2WStep[],
  meta: Json,
  domain: Trajectory["domain"],
): ReadItem {
  const turns: Turn[] = [];
  for (let i = 0; i + 1 < steps.length; i++) {
    const step = steps[i] as M2WStep;
    const next = steps[i + 1] as M2WStep;
    turns.push({ action: step.action, observation: next.html, meta: { ...step.meta, observation_format: next.htmlKind } });
  }
  const first = steps[0] as M2WStep;
  const last = steps.at(-1) as M2WStep;
  meta.initial_observation_format = first.htmlKind;
  meta.unobserved_final_action = last.action;
  if (turns.length === 0)
    meta.read_filter = {
      stage: "no-observation-after-action",
      reason: "the record holds one action and the page before it, not the page after it, so there is no observation to learn",
    };
  return {
    kind: "trajectory",
    trajectory: { id, domain, source, ...(task !== undefined ? { task } : {}), initialObservation: first.html, turns, meta },
  };
}

function taskItem(value: Json, source: SourceRef, where: string, text: string, domain: Trajectory["domain"]): ReadItem {
  const id = value.annotation_id !== undefined ? String(value.annotation_id) : contentId("mind2web", text);
  const fail = (reason: string, field: string) => quarantineItem(source, `${where}${reason}`, { id, field, text });
  if (!Array.isArray(value.actions)) return fail(`"actions" must be an array, got ${describeType(value.actions)}`, "actions");
  if (value.actions.length === 0) return fail('"actions" is empty', "actions");
  const reprs = Array.isArray(value.action_reprs) ? value.action_reprs : [];
  const steps: M2WStep[] = [];
  for (const [i, action] of value.actions.entries()) {
    if (!isRecord(action)) return fail(`actions.${i} must be an object, got ${describeType(action)}`, `actions.${i}`);
    const step = m2wStep(action, str(reprs[i]), `actions.${i}`);
    if ("error" in step) return fail(step.error, step.field);
    steps.push(step);
  }
  return stepsTrajectory(id, source, str(value.confirmed_task), steps, taskMeta(value), domain);
}

function runItem(run: RowRun, domain: Trajectory["domain"], seen: Map<string, number>): ReadItem {
  const count = (seen.get(run.key) ?? 0) + 1;
  seen.set(run.key, count);
  const id = count === 1 ? run.key : `${run.key}-run${count}`;
  const steps: M2WStep[] = [];
  for (const row of run.rows) {
    const reprs = Array.isArray(row.value.action_reprs) ? row.value.action_reprs : [];
    const repr = str(row.value.target_action_reprs) ?? str(reprs[row.index]);
    const step = m2wStep(row.value, repr, `row ${row.index}`);
    if ("error" in step)
      return quarantineItem(run.source, `${row.where}${step.error}`, { id, field: step.field.replace(/^row \d+\./, ""), text: run.text });
    steps.push(step);
  }
  const first = (run.rows[0] as { value: Json }).value;
  const meta = taskMeta(first);
  meta.rows = run.rows.length;
  if ((run.rows[0] as { index: number }).index !== 0) meta.first_action_index = (run.rows[0] as { index: number }).index;
  return stepsTrajectory(id, run.source, str(first.confirmed_task), steps, meta, domain);
}

// ---------------------------------------------------------------------------------------------
// AgentInstruct conversations

interface Question {
  html: string;
  task?: string;
  previous: string[];
  choices: Map<string, string>;
}

function parseQuestion(content: string): Question | undefined {
  const fence = /'''\n?([\s\S]*?)\n?'''/.exec(content);
  const at = content.search(AGENTINSTRUCT_PROMPT);
  if (!fence || at < 0) return undefined;
  const rest = content.slice(at);
  const task = /\nTask: ([^\n]*)/.exec(rest)?.[1]?.trim();
  const previousBlock = /\nPrevious actions:\n([\s\S]*?)\nWhat should be the next action\?/.exec(rest)?.[1] ?? "";
  const previous = previousBlock.split("\n").filter((line) => line.trim() !== "" && line.trim() !== "None");
  const choices = new Map<string, string>();
  const list = rest.slice(rest.indexOf("What should be the next action?"));
  for (const m of list.matchAll(/^([A-Z])\. (.*)$/gm)) choices.set(m[1] as string, m[2] as string);
  return { html: (fence[1] as string).trim(), ...(task ? { task } : {}), previous, choices };
}

function parseAnswer(content: string, question: Question): { action: string; thinking?: string } | undefined {
  const answer = /(?:^|\n)Answer: ([A-Z])\.?/.exec(content)?.[1];
  if (answer === undefined) return undefined;
  const op = /(?:^|\n)Action: ([A-Z_]+)/.exec(content)?.[1];
  const value = /(?:^|\n)Value: ([^\n]*)/.exec(content)?.[1];
  const thought = /(?:^|\n)Thought: ([\s\S]*?)\n(?:Answer|Action):/.exec(content)?.[1]?.trim();
  const args: Json = { choice: answer };
  const element = question.choices.get(answer);
  if (element !== undefined) args.element = element;
  if (value !== undefined) args.value = value;
  const name = op ? op.toLowerCase() : answer === "A" ? "none_of_the_above" : "answer";
  return { action: webAction(name, args), ...(thought ? { thinking: thought } : {}) };
}

function conversationItem(value: Json, source: SourceRef, where: string, text: string, domain: Trajectory["domain"]): ReadItem {
  const id = str(value.id) ?? (typeof value.id === "number" ? String(value.id) : contentId("mind2web", text));
  const key = "conversations" in value ? "conversations" : "messages";
  const fail = (reason: string, field: string) => quarantineItem(source, `${where}${reason}`, { id, field, text });
  const messages = value[key];
  if (!Array.isArray(messages)) return fail(`"${key}" must be an array, got ${describeType(messages)}`, key);
  const pages: Question[] = [];
  const answers: ({ action: string; thinking?: string } | undefined)[] = [];
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m)) return fail(`${key}.${i} must be an object, got ${describeType(m)}`, `${key}.${i}`);
    const role = String(m.role ?? m.from ?? "").toLowerCase();
    const content = typeof m.content === "string" ? m.content : typeof m.value === "string" ? m.value : undefined;
    if (content === undefined) return fail(`${key}.${i} has no content (string)`, `${key}.${i}.content`);
    if (role === "user" || role === "human") {
      const question = parseQuestion(content);
      if (!question)
        return fail(`${key}.${i} is not a Mind2Web question ('''<html>''' then "Based on the HTML webpage above…")`, `${key}.${i}.content`);
      pages.push(question);
      answers.push(undefined);
    } else if (role === "assistant" || role === "gpt") {
      const page = pages.at(-1);
      if (!page) return fail(`${key}.${i}: an answer before any question`, `${key}.${i}`);
      const answer = parseAnswer(content, page);
      if (!answer) return fail(`${key}.${i} has no "Answer: <letter>"`, `${key}.${i}.content`);
      answers[pages.length - 1] = answer;
    }
  }
  if (pages.length === 0) return fail(`"${key}" holds no Mind2Web question`, key);
  const turns: Turn[] = [];
  for (let i = 0; i + 1 < pages.length; i++) {
    const answer = answers[i];
    if (!answer) return fail(`question ${i} has no answer before the next question`, key);
    const next = pages[i + 1] as Question;
    turns.push({
      action: answer.action,
      observation: next.html,
      ...(answer.thinking ? { thinking: answer.thinking } : {}),
      meta: { observation_format: "cleaned_html", choices: Object.fromEntries(next.choices) },
    });
  }
  const first = pages[0] as Question;
  const last = pages.at(-1) as Question;
  const meta: Json = { initial_observation_format: "cleaned_html", choices: Object.fromEntries(first.choices) };
  if (first.previous.length > 0) meta.previous_actions = first.previous;
  const final = answers[pages.length - 1];
  if (final) {
    meta.unobserved_final_action = final.action;
    if (final.thinking) meta.unobserved_final_thinking = final.thinking;
  }
  if (last !== first) meta.final_choices = Object.fromEntries(last.choices);
  if (turns.length === 0)
    meta.read_filter = {
      stage: "no-observation-after-action",
      reason: "a one-question multiple-choice row: it records the page and the chosen action, not the page after it",
    };
  return {
    kind: "trajectory",
    trajectory: { id, domain, source, ...(first.task ? { task: first.task } : {}), initialObservation: first.html, turns, meta },
  };
}
