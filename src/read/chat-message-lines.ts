import { readSideJsonObject } from "../io/read-whole-text.ts";
import { baseName, beside, parentOf, sideFileSize } from "../io/side-files.ts";
import { rowItem } from "./chat-rows/row-item.ts";
import { type CutNote, truncatedLineMeta } from "./cut-last-line.ts";
import { type Companions, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { fileStem, isRecord, jsonObjectLines } from "./record-helpers.ts";

const FORMAT = "chat-message-lines";

/*
 * One conversation written one chat message per line: the file is the conversation, each line an
 * OpenAI-style message `{role, content, tool_calls?, tool_call_id?}` (or Anthropic content blocks,
 * or ShareGPT `{from, value}`). Kimi CLI keeps its sessions so (`~/.kimi/sessions/<work dir
 * hash>/<session id>/context.jsonl`, with pseudo-messages of its own: `_checkpoint`, `_usage`,
 * `_system_prompt`), Mistral Vibe too (`~/.vibe/logs/session/<session>/messages.jsonl`, with
 * `meta.json` beside it and the messages it adds itself marked `injected: true`), and so do many
 * agents' `messages.jsonl` dumps.
 *
 * The lines are gathered into one conversation and read as the chat-tool-rows reader reads a row's
 * `messages` (chat-rows/row-item.ts): calls paired with their results by id, reasoning and `think`
 * parts as thinking, the first user message as the task. Lines whose role starts with `_` are
 * counted in `meta.pseudo_messages`, not read, as are Kimi's `<system>CHECKPOINT n</system>` notes
 * to the model (`checkpoint_note`); a Kimi `_system_prompt` line is the system prompt.
 * Injected messages are counted (`injected`), not read. Id: `<folder>/<file stem>` (Kimi:
 * `<session id>/context`). Beside a Kimi `context.jsonl`, its `metadata.json` and `wire.jsonl` (the
 * same session as wire events), beside a Vibe `messages.jsonl` its `meta.json`, are companions: a
 * glob over the folder reads the session once. Meta: `agent: "kimi-cli"` when Kimi's
 * pseudo-messages are there; `agent: "mistral-vibe"`, `session_id`, `cwd`, `model`, `title`,
 * `git_branch` from a Vibe `meta.json`.
 *
 * Quarantined: a line that is not a JSON object (naming it); a conversation over `max_line_bytes`
 * in all (it is held whole); whatever the row reader refuses (a message field of the wrong type,
 * no answered call), naming the message as `messages.<n>`. A last line cut mid-write is left out.
 */
export const chatMessageLinesReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "one conversation, one chat message per line (Kimi CLI context.jsonl, messages.jsonl dumps): calls → their results",

  sniff(head) {
    let seen = 0;
    for (const raw of head.replace(/^\uFEFF/, "").split("\n", 8)) {
      const line = raw.trim();
      if (line === "") continue;
      const parsed = parseSniffedJson(line);
      // A cut last line of the head says nothing.
      if (!parsed.ok) return seen > 0 && raw === head.split("\n").at(-1);
      if (!isMessageLine(parsed.value)) return false;
      seen += 1;
    }
    return seen > 0;
  },

  async companions(path: string): Promise<Companions> {
    const own = (await sideFileSize(path)) ?? 0;
    const name = baseName(path).replace(/\.(gz|zst|zstd)$/i, "");
    const layout = SESSION_LAYOUTS.find((candidate) => candidate.file === name);
    if (!layout) return { dirs: [], files: [], bytes: own, label: `conversation ${baseName(parentOf(path))}/${baseName(path)}` };
    const files: string[] = [];
    let bytes = own;
    for (const sideName of layout.sideFiles) {
      const side = beside(parentOf(path), sideName);
      const size = await sideFileSize(side);
      if (size === undefined) continue;
      files.push(side);
      bytes += size;
    }
    return { dirs: [], files, bytes, label: `${layout.agent} session ${baseName(parentOf(path))}` };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    const source = { uri: path, format: FORMAT };
    const id = `${baseName(parentOf(path))}/${fileStem(path, /\.jsonl?$/i)}`;
    const messages: unknown[] = [];
    const pseudo: Record<string, number> = {};
    let system: string | undefined;
    let bytes = 0;
    const cut: CutNote = {};
    for await (const line of jsonObjectLines(path, whole, FORMAT, cut)) {
      if (line.kind === "quarantine") {
        yield { kind: "quarantine", entry: { ...line.entry, id, reason: `line ${line.entry.source.line}: ${line.entry.reason}` } };
        return;
      }
      bytes += line.text.length + 1;
      if (bytes > options.maxLineBytes) {
        const reason = `the conversation is over ${options.maxLineBytes} bytes (max_line_bytes) by line ${line.source.line}: it is read whole, so it is refused`;
        yield { kind: "quarantine", entry: { source, id, stage: "read", reason } };
        return;
      }
      const role = line.record.role;
      if (typeof role === "string" && role.startsWith("_")) {
        pseudo[role] = (pseudo[role] ?? 0) + 1;
        if (role === "_system_prompt" && typeof line.record.content === "string") system = line.record.content;
        continue;
      }
      if (isCheckpointNote(line.record)) {
        pseudo.checkpoint_note = (pseudo.checkpoint_note ?? 0) + 1;
        continue;
      }
      // Mistral Vibe marks what it adds to the conversation itself (reminders, context) as injected: not the user's words.
      if (line.record.injected === true) {
        pseudo.injected = (pseudo.injected ?? 0) + 1;
        continue;
      }
      messages.push(line.record);
    }
    const row: Record<string, unknown> = { id, messages, ...(system !== undefined ? { system } : {}) };
    const item = rowItem(row, source, "", options);
    if (item.kind !== "trajectory") {
      yield item.kind === "quarantine" ? { kind: "quarantine", entry: { ...item.entry, source, id } } : item;
      return;
    }
    const kimi = Object.keys(pseudo).some((role) => KIMI_ROLES.has(role));
    item.trajectory.meta = {
      ...(kimi ? { agent: "kimi-cli" } : {}),
      ...(await vibeMeta(path)),
      ...item.trajectory.meta,
      ...(Object.keys(pseudo).length > 0 ? { pseudo_messages: pseudo } : {}),
      ...truncatedLineMeta(cut),
    };
    yield item;
  },
};

/** Agents that keep a session as a folder with the conversation file and files beside it, which that file's record covers. */
const SESSION_LAYOUTS = [
  { agent: "Kimi CLI", file: "context.jsonl", sideFiles: ["metadata.json", "wire.jsonl"] },
  { agent: "Mistral Vibe", file: "messages.jsonl", sideFiles: ["meta.json"] },
];

/**
 * What a Mistral Vibe session's `meta.json` beside `messages.jsonl` says (`session_id`,
 * `environment.working_directory`, `config.active_model`, `title`, `git_branch`); nothing for
 * another file or one that is not Vibe's.
 */
async function vibeMeta(path: string): Promise<Record<string, unknown>> {
  if (baseName(path).replace(/\.(gz|zst|zstd)$/i, "") !== "messages.jsonl") return {};
  const value = await readSideJsonObject(beside(parentOf(path), "meta.json"), 1 << 20);
  if (!value || typeof value.session_id !== "string" || !isRecord(value.environment)) return {};
  const meta: Record<string, unknown> = { agent: "mistral-vibe", session_id: value.session_id };
  if (typeof value.environment.working_directory === "string") meta.cwd = value.environment.working_directory;
  if (isRecord(value.config) && typeof value.config.active_model === "string") meta.model = value.config.active_model;
  if (typeof value.title === "string" && value.title !== "") meta.title = value.title;
  if (typeof value.git_branch === "string" && value.git_branch !== "") meta.git_branch = value.git_branch;
  return meta;
}

const KIMI_ROLES = new Set(["_checkpoint", "_usage", "_system_prompt"]);
const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

/** Kimi's note to the model at a checkpoint (`<system>CHECKPOINT 3</system>` as a user message): bookkeeping, not the user's words. */
function isCheckpointNote(record: Record<string, unknown>): boolean {
  if (record.role !== "user") return false;
  const parts = Array.isArray(record.content) ? record.content : [record.content];
  return (
    parts.length === 1 &&
    /^\s*<system>CHECKPOINT \d+<\/system>\s*$/.test(isRecord(parts[0]) ? String(parts[0].text ?? "") : String(parts[0] ?? ""))
  );
}

/** A chat message on a line of its own (not a row holding a conversation), or a `_` pseudo-message. */
function isMessageLine(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (typeof value.role === "string" && value.role.startsWith("_")) return true;
  if (!ROLES.has(value.role as string) || !("content" in value || "tool_calls" in value)) return false;
  // A row of a conversation (`messages`, …) or a trajectory is another reader's.
  return !("messages" in value || "conversations" in value || "turns" in value || "trajectory" in value);
}
