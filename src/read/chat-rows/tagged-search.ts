import { messageText } from "../chat-turns.ts";
import { isRecord } from "../record-helpers.ts";
import { textCall } from "./calls.ts";
import { type Call, type Message, makeMessage } from "./message.ts";

/**
 * Search agents trained with RL whose calls are tags in the model's own text and whose results the
 * rollout loop writes into that text right after the call (or sends as the next user message),
 * with no tool-calling API:
 *
 * - Search-R1 (PeterGriffinJin/Search-R1 `search_r1/llm_agent/generation.py`: the reply is cut at
 *   `</search>`, then `\n\n<information>…</information>\n\n` is appended; `<answer>` ends it) and
 *   the forks that keep its tags (ZeroSearch);
 * - ReSearch / ReCall (Agent-RL/ReSearch: `<search>` … `</search>` then `<result>` … `</result>`);
 * - R1-Searcher (RUCAIBox/R1-Searcher: `<|begin_of_query|>` … `<|end_of_query|>` then
 *   `<|begin_of_documents|>` … `<|end_of_documents|>`; some of its scripts write the closers as
 *   `</|end_of_query|>` / `</|end_of_documents|>`);
 * - Search-o1 and WebThinker (RUC-NLPIR: `<|begin_search_query|>` … `<|end_search_query|>` then
 *   `<|begin_search_result|>` … `<|end_search_result|>`; WebThinker's page opens
 *   `<|begin_click_link|>` URL `<|end_click_link|>` then `<|begin_click_result|>` …
 *   `<|end_click_result|>`);
 * - ASearcher (inclusionAI/ASearcher `agent/asearcher.py`): `<search>` answered by `<information>`
 *   as Search-R1, and `<access>` URL `</access>` answered by the page in `<information>` (its first
 *   part, `>>>> Page 1 >>>>`; later parts come after more thinking and stay in the thought);
 * - Hermes `<tool_call>{json}</tool_call>` answered by `<tool_response>…</tool_response>` in the
 *   same text (DeepResearcher's and newer Search-R1's rollouts dumped as one string).
 *
 * Each call → the result block right after it (only whitespace, or a chat template's turn tokens,
 * between them) is one turn: a query is `{"name": "web_search", "arguments": {"query": …}}`, a
 * clicked link `{"name": "web_extract", "arguments": {"url": …}}` (as search-api names a page
 * fetch), a Hermes block its JSON call; the observation is the block's text. The model's text
 * before a call is the turn's thought. A call with no result after it is never a turn: a rollout
 * cut after its last call leaves that call unanswered (`call_without_result`), one answered by
 * nothing in the middle of the text (Search-o1 skips short queries) is counted
 * (`query_without_result`) and stays in the thought.
 */

interface ActionTag {
  open: string;
  closes: readonly string[];
  /** The result blocks that answer it: [open, closes]. */
  results: readonly (readonly [string, readonly string[]])[];
  call: (inner: string) => Call;
  /** Hermes blocks are read by the Hermes code unless a response follows them in the same text. */
  hermes?: boolean;
}

const search = (query: string): Call => ({ name: "web_search", args: { query } });
const extract = (url: string): Call => ({ name: "web_extract", args: { url } });

const ACTIONS: readonly ActionTag[] = [
  {
    open: "<search>",
    closes: ["</search>"],
    results: [
      ["<information>", ["</information>"]],
      ["<result>", ["</result>"]],
    ],
    call: search,
  },
  // ASearcher (inclusionAI/ASearcher): a page visit, answered by its page in `<information>` (`>>>> Page 1 >>>>` …).
  {
    open: "<access>",
    closes: ["</access>"],
    results: [["<information>", ["</information>"]]],
    call: extract,
  },
  {
    open: "<|begin_of_query|>",
    closes: ["<|end_of_query|>", "</|end_of_query|>"],
    results: [["<|begin_of_documents|>", ["<|end_of_documents|>", "</|end_of_documents|>"]]],
    call: search,
  },
  {
    open: "<|begin_search_query|>",
    closes: ["<|end_search_query|>"],
    results: [["<|begin_search_result|>", ["<|end_search_result|>"]]],
    call: search,
  },
  {
    open: "<|begin_click_link|>",
    closes: ["<|end_click_link|>"],
    results: [["<|begin_click_result|>", ["<|end_click_result|>"]]],
    call: extract,
  },
  { open: "<tool_call>", closes: ["</tool_call>"], results: [["<tool_response>", ["</tool_response>"]]], call: textCall, hermes: true },
];

/** What may stand between a call and its result: whitespace, and a chat template's turn tokens in a decoded rollout. */
const GAP =
  /(?:\s|<\|im_end\|>|<\|im_start\|>(?:user|tool)\b|<\|eot_id\|>|<\|start_header_id\|>(?:user|ipython|tool)<\|end_header_id\|>)*/y;
const NON_SPACE = /\S/g;

/** One call in the text: the thought before it, the call, and its result when one follows. */
interface Segment {
  thought: string;
  call: Call;
  result?: string;
}

interface Scan {
  segments: Segment[];
  /** The text after the last call (with its result). */
  trailing: string;
  /** Calls answered by a result block. */
  answered: number;
  /** Calls with nothing after them but whitespace (a rollout cut at its call). */
  endsWithCall: boolean;
  skipped: string[];
}

/**
 * The first of `needles` in the text from a position, each needle's next place remembered: the
 * scan only moves forward, so a tag absent from the rest of a long text is looked for once, not
 * once per call (a hostile row of many calls would otherwise cost its length times their number).
 */
class Finder {
  private readonly next = new Map<string, number>();
  private readonly text: string;
  constructor(text: string) {
    this.text = text;
  }

  first(needles: readonly string[], from: number): { at: number; length: number } | undefined {
    let best: { at: number; length: number } | undefined;
    for (const needle of needles) {
      let at = this.next.get(needle);
      if (at === undefined || (at !== -1 && at < from)) {
        at = this.text.indexOf(needle, from);
        this.next.set(needle, at);
      }
      if (at !== -1 && (best === undefined || at < best.at)) best = { at, length: needle.length };
    }
    return best;
  }
}

const OPENS = ACTIONS.map((a) => a.open);

/**
 * Search-R1's answer to a reply with neither a search nor an answer (generation.py
 * `execute_predictions`): it names the tags, and is no search result. Taken out of the text, counted.
 */
const INVALID_ACTION_NOTICE =
  /\n?My previous action is invalid\. If I want to search, I should put the query between <search> and <\/search>\. If I want to give the final answer, I should put the answer between <answer> and <\/answer>\. Let me try again\.\n?/g;

/** The text's calls in order, each with its result where one follows it at once. */
function scan(raw: string): Scan {
  const segments: Segment[] = [];
  const skipped: string[] = [];
  let text = raw;
  if (raw.includes("My previous action is invalid.")) {
    text = raw.replace(INVALID_ACTION_NOTICE, () => {
      skipped.push("invalid_action_notice");
      return "\n";
    });
  }
  const finder = new Finder(text);
  let thoughtStart = 0;
  let pos = 0;
  let answered = 0;
  let endsWithCall = false;
  for (;;) {
    const first = finder.first(OPENS, pos);
    if (!first) break;
    const action = ACTIONS.find((a) => text.startsWith(a.open, first.at)) as ActionTag;
    const close = finder.first(action.closes, first.at + first.length);
    // An opened call never closed: prose, or a rollout cut inside its query; left as text.
    if (!close) break;
    // The tag named in the thought before the call ("I will use <search> …"): the call opens at its last open tag.
    const open = { at: text.lastIndexOf(action.open, close.at - action.open.length), length: action.open.length };
    const innerStart = open.at + open.length;
    const inner = text.slice(innerStart, close.at).trim();
    const after = close.at + close.length;
    GAP.lastIndex = after;
    const gap = GAP.exec(text)?.[0].length ?? 0;
    const result = action.results.find(([resultOpen]) => text.startsWith(resultOpen, after + gap));
    const thought = text.slice(thoughtStart, open.at).trim();
    if (result) {
      const [resultOpen, resultCloses] = result;
      const bodyStart = after + gap + resultOpen.length;
      const end = finder.first(resultCloses, bodyStart);
      if (!end) {
        // A result cut off before its end (a rollout truncated inside the injected text).
        segments.push({ thought, call: action.call(inner) });
        skipped.push("result_without_end");
        thoughtStart = text.length;
        break;
      }
      segments.push({ thought, call: action.call(inner), result: text.slice(bodyStart, end.at).trim() });
      answered += 1;
      pos = thoughtStart = end.at + end.length;
      continue;
    }
    NON_SPACE.lastIndex = after;
    if (NON_SPACE.exec(text) === null) {
      segments.push({ thought, call: action.call(inner) });
      endsWithCall = true;
      thoughtStart = text.length;
      break;
    }
    // Answered by nothing, text going on after it: the call stays in the thought.
    skipped.push("query_without_result");
    pos = after;
  }
  return { segments, trailing: text.slice(thoughtStart), answered, endsWithCall, skipped };
}

/** Whether a model text holds a tagged call answered in place, or ends with a tagged (non-Hermes) call. */
export function hasTaggedSearch(text: string): boolean {
  if (!OPENS.some((tag) => text.includes(tag))) return false;
  const found = scan(text);
  if (found.answered > 0) return true;
  const last = found.segments.at(-1);
  return found.endsWithCall && last !== undefined && !isHermesCall(text);
}

/** Whether the text's last call is a Hermes block (a text ending in one is the Hermes dialect's, answered by the next message). */
function isHermesCall(text: string): boolean {
  return text.trimEnd().endsWith("</tool_call>");
}

/** A message whose whole text is one result block (the loop sent it as the user's turn): the block's text. */
export function resultBlock(text: string): string | undefined {
  const trimmed = text.trim();
  for (const action of ACTIONS) {
    if (action.hermes) continue;
    for (const [open, closes] of action.results) {
      if (!trimmed.startsWith(open)) continue;
      for (const close of closes) {
        if (trimmed.endsWith(close) && trimmed.indexOf(close) === trimmed.length - close.length)
          return trimmed.slice(open.length, trimmed.length - close.length).trim();
      }
    }
  }
  return undefined;
}

const ASSISTANT_ROLES = new Set(["assistant", "gpt", "model", "ai", "chatgpt"]);
const ANSWERING_ROLES = new Set(["user", "human", "tool", "observation", "function", "ipython"]);

function roleOf(message: Record<string, unknown>): string {
  return String(message.role ?? message.from).toLowerCase();
}

function textOf(message: Record<string, unknown>): string {
  return messageText(message.content ?? message.value ?? message.text ?? null) ?? "";
}

/**
 * Whether a conversation is a tagged-search rollout: a reply with a call answered in its own text,
 * a reply ending in a tagged call (cut there, or answered by the next message's result block).
 * Calls are looked for only in the model's replies: the prompt that teaches the tags
 * ("…call a search engine by <search> query </search> and it will return … between <information>
 * and </information>") is never read as calls.
 */
export function isTaggedSearchConversation(messages: readonly unknown[]): boolean {
  for (const [i, message] of messages.entries()) {
    if (!isRecord(message) || !ASSISTANT_ROLES.has(roleOf(message))) continue;
    const text = textOf(message);
    if (hasTaggedSearch(text)) return true;
    const next = messages[i + 1];
    if (
      isRecord(next) &&
      ANSWERING_ROLES.has(roleOf(next)) &&
      resultBlock(textOf(next)) !== undefined &&
      OPENS.some((t) => text.includes(t))
    )
      return true;
  }
  return false;
}

/**
 * A reply of a tagged-search rollout as messages: per call, the assistant's thought with the call,
 * then its result as a tool message; the text after the last call as an assistant message (the
 * closing answer). Undefined when the text holds no tagged call to read (left to the other dialects).
 */
export function taggedSearchMessages(text: string, base: Partial<Message>): Message[] | undefined {
  if (!OPENS.some((tag) => text.includes(tag))) return undefined;
  const found = scan(text);
  if (found.segments.length === 0) return undefined;
  // A reply whose only calls are Hermes blocks answered elsewhere is the Hermes dialect's.
  if (found.answered === 0 && isHermesCall(text)) return undefined;
  const messages: Message[] = [];
  for (const [i, segment] of found.segments.entries()) {
    messages.push(
      makeMessage("assistant", segment.thought, {
        calls: [segment.call],
        ...(i === 0 && base.reasoning ? { reasoning: base.reasoning } : {}),
        ...(i === 0 && base.skipped ? { skipped: base.skipped } : {}),
      }),
    );
    if (segment.result !== undefined) messages.push(makeMessage("tool", segment.result, { results: [segment.result] }));
  }
  if (found.trailing.trim() !== "") messages.push(makeMessage("assistant", found.trailing.trim()));
  // Counts ride on an element that is no message (the pairer counts them and moves on).
  if (found.skipped.length > 0) messages.push(makeMessage("other", "", { skipped: found.skipped }));
  return messages;
}

/** The closing answer of a tagged-search rollout: the last `<answer>…</answer>`'s text, else the text as it is. */
export function taggedAnswer(text: string): string {
  const answers = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/g)];
  const last = answers.at(-1)?.[1];
  return last !== undefined && last.trim() !== "" ? last.trim() : text;
}

/** Where a flat rollout row keeps the model's text, and its prompt, in the order they are looked for. */
const RESPONSE_KEYS = [
  "response",
  "responses",
  "output",
  "Output",
  "completion",
  "completions",
  "outputs",
  "generated_text",
  "gen_text_store",
  "generation",
];
const PROMPT_KEYS = ["prompt", "question", "Question", "input", "query", "problem"];

/**
 * A row of several rollouts for one prompt (an RL rollout dump: `responses`, `completions`,
 * `outputs`, … as a list of two or more texts, at least one with a tagged call): the key and how
 * many. Each rollout is read as its own trajectory (row-item.ts `rowItems`).
 */
export function taggedSearchRollouts(row: Record<string, unknown>): { key: string; count: number } | undefined {
  for (const key of RESPONSE_KEYS) {
    const list = row[key];
    if (!Array.isArray(list) || list.length < 2 || !list.every((r) => typeof r === "string")) continue;
    if (list.some((r) => hasTaggedSearch(r as string))) return { key, count: list.length };
  }
  return undefined;
}

/**
 * A flat rollout row — a prompt (`prompt` as a string or chat messages, `question`, `input`, …) and
 * the model's text with its tagged calls and their results (`response`, `output` / Search-o1's
 * `Output`, R1-Searcher's `gen_text_store`, …) — as a conversation: the prompt, then the reply.
 * Undefined when no such text holds a tagged call. With several rollouts in a list, `rollout` picks
 * one (its key `responses.i`), read even when it made no call (it is then quarantined as such);
 * without it, the first rollout with a tagged call stands for the row (detection).
 */
export function taggedSearchRow(
  row: Record<string, unknown>,
  rollout?: number,
): { key: string; value: unknown[]; fields: string[] } | undefined {
  for (const key of RESPONSE_KEYS) {
    let response = row[key];
    let field = key;
    let picked = false;
    if (Array.isArray(response) && response.length === 1) response = response[0];
    else if (Array.isArray(response) && response.length > 1) {
      const at = rollout ?? response.findIndex((r) => typeof r === "string" && hasTaggedSearch(r));
      if (at < 0 || at >= response.length) continue;
      response = response[at];
      field = `${key}.${at}`;
      picked = rollout !== undefined;
    }
    if (typeof response !== "string" || (!picked && !hasTaggedSearch(response))) continue;
    const value: unknown[] = [];
    const fields: string[] = [];
    for (const promptKey of PROMPT_KEYS) {
      const prompt = row[promptKey];
      if (typeof prompt === "string" && prompt.trim() !== "") {
        value.push({ role: "user", content: prompt });
        fields.push(promptKey);
        break;
      }
      if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((m) => isRecord(m) && typeof m.role === "string")) {
        for (const [i, message] of prompt.entries()) {
          value.push(message);
          fields.push(`${promptKey}.${i}`);
        }
        break;
      }
    }
    value.push({ role: "assistant", content: response });
    fields.push(field);
    return { key: field, value, fields };
  }
  return undefined;
}
