import type { SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { isChatRow } from "./chat-rows/conversation.ts";
import { quarantine, rowItems } from "./chat-rows/row-item.ts";
import { inspectLogReader } from "./inspect-log.ts";
import { jsonFileLayout } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { langfuseTracesReader } from "./langfuse-traces.ts";
import { langsmithRunsReader } from "./langsmith-runs.ts";
import { miniSweAgentReader } from "./mini-swe-agent.ts";
import { firstLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, isRecord, jsonObjectLines, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";
import { sweSmithReader } from "./swe-smith.ts";
import { tau2BenchReader } from "./tau2-bench.ts";

// Each row is read in chat-rows/ (row-item.ts: dialects → messages → steps → turns); isChatRow stays importable from here.
export { isChatRow } from "./chat-rows/conversation.ts";

const FORMAT = "chat-tool-rows";

/**
 * Chat rows with tool calls, as SFT / agent corpora ship them (SWE-rebench-OpenHands, SWE-Gym,
 * tau-bench, Toucan-1.5M, Hermes function calling, LLaMA-Factory ShareGPT, APIGen-MT, ToolBench,
 * Glaive, Qwen-Agent, Anthropic Messages API, Vercel AI SDK and OpenAI Responses API logs): one conversation per
 * JSONL line, per element of a top-level JSON array (streamed element by element with stream-json),
 * or one pretty-printed JSON object (a file whose first line is `{` alone).
 *
 * The conversation is the row's `messages`, `conversations`, `traj` (tau-bench) or `trajectory`
 * (SWE-rebench) — an array, or a JSON string of one (Toucan). Messages are OpenAI-style
 * (`role` system/developer/user/assistant/tool, assistant `tool_calls[].function{name, arguments}`
 * with arguments a JSON string or an object, legacy `function_call` and role `function`,
 * `tool_call_id`, content a string, null or text parts; a tool content that is a JSON object or a
 * list of values is its JSON text) or ShareGPT-style (`from` system/human/gpt/function_call/
 * observation/tool, `value`). Hermes calls are `<tool_call>{json}</tool_call>` blocks in an
 * assistant text and `<tool_response>…</tool_response>` blocks in a tool text (or in a user text
 * that holds nothing else). Tool results given as content parts are their text parts, a media
 * part `[image]` / `[file]` / … (typed parts, and Qwen-Agent's `{text}` / `{image}` items).
 * Other dialects:
 * - Vercel AI SDK messages (chat-rows/ai-sdk-parts.ts): `tool-call` parts of an assistant message
 *   → the `tool-result` parts of the `tool` message after it, by `toolCallId`; `reasoning` parts
 *   are reasoning.
 * - Anthropic Messages API: `tool_use` blocks {id, name, input} of an assistant message are its
 *   calls, the `tool_result` blocks {tool_use_id, content} of the next user message their results
 *   (that message's own text is the user's words); `thinking` blocks are reasoning; server-tool
 *   blocks (`server_tool_use`, `web_search_tool_result`, …) and `redacted_thinking` are counted.
 * - OpenAI Responses API: a row with `input` (a string or a list of items) and/or `output` items
 *   (lists, or JSON strings of them). `function_call` / `custom_tool_call` / `local_shell_call`
 *   → their `*_output` by `call_id`; `mcp_call` holds its own output; a `reasoning` item's
 *   summary is the next assistant message's reasoning; `instructions` is the system; hosted-tool
 *   items whose results the log lacks (`web_search_call`, `computer_call`, …) are counted.
 * - Google Gemini API `contents` (chat-rows/gemini-contents.ts): `functionCall` parts of a model
 *   turn → the `functionResponse` parts of the next (by id, else name, else order); `thought`
 *   parts are reasoning; `systemInstruction`, `tools[].functionDeclarations`.
 * - Batch API lines (chat-rows/batch-envelopes.ts): an OpenAI Batch input line's `body` (with its
 *   output's `response` when joined), a Gemini batch-prediction line's `request` (its first
 *   candidate appended); an output line without its request is quarantined with the reason.
 * - ToolBench: with role `function` results, an assistant text "Thought: … Action: NAME
 *   Action Input: {…}" is a call (the thought its text); `Action: Finish` is the final answer.
 * - Glaive: `system` + a `chat` transcript of "USER:", "ASSISTANT:" (a call is
 *   `<functioncall> {"name", "arguments": '{…}'}`) and "FUNCTION RESPONSE:" parts.
 * - xLAM / APIGen rows (`query`, `answers`, `tools`: calls and no results) are claimed and each
 *   quarantined with that reason, never read as turns.
 * - Search agents trained with RL (Search-R1 and its forks, ReSearch, R1-Searcher, Search-o1,
 *   WebThinker; chat-rows/tagged-search.ts): calls as tags in the model's text (`<search>`,
 *   `<|begin_of_query|>`, `<|begin_search_query|>`, `<|begin_click_link|>`, or a Hermes
 *   `<tool_call>` answered in the same text), each answered by the result block the rollout loop
 *   wrote right after it (`<information>`, `<result>`, `<|begin_of_documents|>`, …) or sent as the
 *   next message. Also flat rollout rows: a prompt (`prompt`, `question`, …) and the model's text
 *   (`response`, `output` / `Output`, `gen_text_store`, …); a list of several rollouts
 *   (`responses`, `completions`, `outputs`) is one trajectory per rollout (`<id>/rollout-<i>`).
 *
 * - Action: the tool calls of one assistant step — one message's `tool_calls`, or consecutive
 *   assistant messages that each carry one call before any result (Toucan's parallel calls). A
 *   shell tool's call (bash, execute_bash, shell, run_command, …) is its `command` itself; any
 *   other call is `{"name": …, "arguments": {…}}` (arguments parsed when they are a JSON string).
 *   A Hermes block that is not JSON (Python-dict quoting) is kept as written.
 * - Observation: the tool results, matched to the calls by `tool_call_id` (`tool_use_id`,
 *   `call_id`), else by the function's `name` (legacy role `function`), else in order. With
 *   several calls in one step, the action is `[call i/N]` + each call and the observation
 *   `[result i/N]` + each result, in call order (a call without result shows `[no result]`).
 *   `turn.meta`: `tool` (or `tools` and `parallel_calls`), `observation_format: "json"` when the
 *   one result of a non-shell call is a JSON object or array.
 * - Thinking: the assistant's text beside its calls, and a text-only assistant message directly
 *   before a calling one, is `turn.meta.agent_thought`; `reasoning_content` / `reasoning` is
 *   `turn.meta.agent_reasoning`. Context, never observation.
 * - Not environment turns: assistant messages to the user (no call) and the user's replies. They
 *   go, in order, to the next turn's `meta.dialogue` ([{role, text}]); the last assistant text
 *   with no call after it is `meta.final_answer`. Calls never answered, results matching no call
 *   and unknown roles are counted in `meta.skipped`.
 * - Task: the first user message. `meta.agent_system`: the system message(s) and then the tools (`tools`,
 *   `available_tools` or `functions`, a list or a JSON string of one; a top-level `system` — a
 *   string or text blocks, Glaive's without its "SYSTEM:" label — or Responses `instructions`
 *   too), one spec per line under `## Tools`.
 * - Outcome / provenance in `meta`: `outcome` {resolved, success, reward, failure_mode} where the
 *   row has them, `agent`, `model`, `task_id` (`instance_id`, else `task_id`), `attempt`
 *   (`attempt`, else `trial`), and `repo`, `exit_status`, `subset_name`, `category`, `dataset`.
 * - Id: `trajectory_id`, `traj_id`, `id` or `uuid`; else, with only an `instance_id`, that id
 *   plus a hash of the row (attempts of one instance stay apart); else a hash of the row.
 * - Domain (unless set): a shell or file-editing tool → `swe` when the row shows a repository
 *   (an editing tool, a `repo`/`instance_id`/patch field, a git command), else `terminal`; a
 *   browser tool → `web`; a web-search tool → `search`; any other function tools → `mcp`.
 *
 * A row with no answered call is quarantined. Rows in Parquet are not read here (see the notes).
 */
export const chatToolRowsReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "OpenAI / Hermes / ShareGPT chat rows with tool calls (messages or conversations, tools), one per JSONL line or JSON-array element",

  sniff(head, path) {
    // LangSmith runs and Langfuse observations hold chat messages in their inputs, τ²-bench results
    // in their simulations (a results file, or SimulationRuns one per file, line or array element): their readers read them.
    if (langsmithRunsReader.sniff(head, path) || langfuseTracesReader.sniff(head, path) || tau2BenchReader.sniff(head, path)) return false;
    const text = head.replace(/^\uFEFF/, "");
    const start = text.trimStart();
    if (start.startsWith("[")) {
      // An array of rows, not a bare message array (mini-swe-agent, OpenHands events).
      if (/^\[\s*\{\s*"(role|from|content|action|observation)"/.test(start)) return false;
      if (!/^\[\s*\{/.test(start)) return false;
      // (A search agent's results file, as Search-o1 writes it, whose first element is longer than the head: told by its tags.)
      return (CONVERSATION_KEY.test(start) && TOOL_EVIDENCE.test(start)) || TAGGED_SEARCH_PAIR.test(start);
    }
    if (!start.startsWith("{")) return false;
    // SWE-smith rows (`messages` with `<function=…>` XML calls) and mini-swe-agent files are theirs.
    // (An Inspect AI eval log holds chat messages too, per sample: inspect-log reads it.)
    if (sweSmithReader.sniff(head, path) || miniSweAgentReader.sniff(head, path) || inspectLogReader.sniff(head, path)) return false;
    const parsed = parseSniffedJson(firstLine(text));
    if (parsed.ok) return isRecord(parsed.value) && isChatRow(parsed.value);
    // A pretty-printed row, or a first line longer than the head: the keys tell.
    if (/"trajectory_format"\s*:/.test(start)) return false;
    return (CONVERSATION_KEY.test(start) && TOOL_EVIDENCE.test(start)) || TAGGED_SEARCH_PAIR.test(start);
  },

  // JSONL is cut by byte range like any line-per-record file; a JSON array or a single document
  // is read whole by the task whose range starts the file (the others yield nothing).
  splittable: true,

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const layout = await jsonFileLayout(path);
    if (layout === "jsonl") {
      for await (const line of jsonObjectLines(path, options, FORMAT)) {
        if (line.kind === "quarantine") yield line;
        else yield* rowItems(line.record, line.source, line.source.offset === 0 ? line.text.replace(/^\uFEFF/, "") : line.text, options);
      }
      return;
    }
    if (options.range && options.range.start > 0) return;
    yield* readDocument(path, layout, options);
  },
};

/** A conversation in the head: a conversation key before its first message (or a JSON string of messages), Responses items or a Glaive chat. */
const CONVERSATION_KEY = new RegExp(
  [
    // (nebius' SWE-agent rows, as the Hub's Parquet export orders them, open each message with `cutoff_date`.)
    String.raw`"(messages|conversations|traj|trajectory)"\s*:\s*(\[\s*\{\s*"(role|from|content|value|name|tool_calls|tool_call_id|reasoning_content|type|text|cutoff_date)"|"\s*\[\s*\{\s*\\"(role|from|content|type)\\")`,
    // OpenAI Responses API items.
    String.raw`"(input|output)"\s*:\s*\[\s*\{\s*"(type|role|id)"`,
    // Glaive's `chat` transcript.
    String.raw`"chat"\s*:\s*"(SYSTEM|USER|ASSISTANT): `,
  ].join("|"),
);

/** Signs of tool use in a head too long to parse (quotes may be escaped: Toucan's messages are a JSON string). */
const TOOL_EVIDENCE = new RegExp(
  [
    String.raw`\\?"tool_calls\\?"\s*:\s*\[\s*\{`,
    String.raw`\\?"function_call\\?"\s*:\s*[{"\\]`,
    String.raw`\\?"role\\?"\s*:\s*\\?"(tool|function|ipython)\\?"`,
    String.raw`\\?"from\\?"\s*:\s*\\?"(function_call|observation|tool|function|tool_call|tool_response)\\?"`,
    // Anthropic content blocks, OpenAI Responses items.
    String.raw`\\?"type\\?"\s*:\s*\\?"(tool_use|tool_result|function_call|function_call_output)\\?"`,
    "<tool_call>",
    "<functioncall>",
    // SWE-agent's state footer ending an observation (fenced-commands.ts).
    String.raw`\(Current directory: [^\n)"]*\)(\\n|\s)*bash-\$`,
    String.raw`"(tools|available_tools|functions)"\s*:\s*(\[\s*\{|"\s*\[)`,
  ].join("|"),
);

/**
 * A search agent's call answered in place, in a row's JSON text (chat-rows/tagged-search.ts): a
 * closing call tag, then only whitespace (or its JSON escapes), then the result block's opening tag.
 */
const TAGGED_SEARCH_PAIR =
  /<\/(?:search|access)>(?:\s|\\[nrt])*<(?:information|result)>|<\/?\|end_of_query\|>(?:\s|\\[nrt])*<\|begin_of_documents\|>|<\|end_search_query\|>(?:\s|\\[nrt])*<\|begin_search_result\|>|<\|end_click_link\|>(?:\s|\\[nrt])*<\|begin_click_result\|>/;

/** A top-level array of rows (each element assembled on its own) or one pretty-printed row. */
async function* readDocument(path: string, layout: "array" | "document", options: ReaderOptions): AsyncGenerator<ReadItem> {
  const wanted =
    layout === "array"
      ? (at: JsonPath, _kind: JsonKind) => at.length === 1 && typeof at[0] === "number"
      : (at: JsonPath, _kind: JsonKind) => at.length === 0;
  const { stream } = await openDecompressed(path);
  let index = 0;
  try {
    for await (const { path: at, value } of selectJson(stream, wanted)) {
      // Offset 0: the whole document belongs to the task whose byte range starts the file; the
      // element's index names it.
      const source: SourceRef =
        layout === "array" ? { uri: path, offset: 0, row: at[0] as number, format: FORMAT } : { uri: path, offset: 0, format: FORMAT };
      const where = layout === "array" ? `element ${at[0]}: ` : "";
      index += 1;
      if (!isRecord(value)) {
        yield quarantine(source, { reason: `${where}expected a JSON object (a chat row), got ${describeType(value)}` });
        continue;
      }
      // Checked before stringifying: a row nested thousands deep would overflow the stack.
      if (nestsTooDeep(value)) {
        yield quarantine(source, { reason: `${where}the row nests deeper than ${MAX_JSON_DEPTH} levels` });
        continue;
      }
      yield* rowItems(value, source, JSON.stringify(value), options, where);
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const what = layout === "array" ? `the JSON array breaks after element ${index - 1}` : "the file is not one JSON document";
    yield quarantine({ uri: path, format: FORMAT }, { reason: `${what}: ${err.message}` });
  }
}
