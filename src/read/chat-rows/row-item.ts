import type { QuarantineEntry } from "../../core/errors.ts";
import type { SourceRef, Trajectory } from "../../core/trajectory.ts";
import { excerpt, type ReaderOptions, type ReadItem } from "../reader.ts";
import { describeType, FieldError, isRecord, MAX_JSON_DEPTH, nestsTooDeep } from "../record-helpers.ts";
import { batchEnvelope } from "./batch-envelopes.ts";
import { conversationOf, isXlamRow } from "./conversation.ts";
import { inferDomain } from "./domain.ts";
import { isFencedCommandChat } from "./fenced-commands.ts";
import { type Message, TOOL_ROLES } from "./message.ts";
import { type Dialect, normalizeMessage } from "./normalize-message.ts";
import { rowId, rowMeta, systemText } from "./row-meta.ts";
import { StepPairer } from "./step-pairer.ts";
import { isTaggedSearchConversation, taggedAnswer, taggedSearchRollouts } from "./tagged-search.ts";
import { isEditTool, isSearchTool, isShellTool, specName, toolSpecs } from "./tools.ts";

/**
 * One parsed row as a read item: its conversation normalized message by message, paired into
 * turns, and given its id, domain, task and meta — or quarantined with the reason (no
 * conversation, a bad field, an xLAM row, no answered call).
 */

/**
 * A parsed row as its read items: one, or one per rollout for a row of several rollouts of one
 * prompt (`responses: [text, …]`, tagged-search.ts), each with its index after the row's id.
 */
export function* rowItems(
  line: Record<string, unknown>,
  source: SourceRef,
  text: string,
  options: ReaderOptions,
  where = "",
): Generator<ReadItem> {
  const rollouts = taggedSearchRollouts(line);
  // Only where the rollouts are the row's conversation (not beside its `messages`, nor in a Batch API line).
  if (!rollouts || batchEnvelope(line) || !conversationOf(line)?.key.startsWith(`${rollouts.key}.`)) {
    yield rowItem(line, source, text, options, where);
    return;
  }
  for (let i = 0; i < rollouts.count; i += 1) yield rowItem(line, source, text, options, where, { index: i, count: rollouts.count });
}

export function rowItem(
  line: Record<string, unknown>,
  source: SourceRef,
  text: string,
  options: ReaderOptions,
  where = "",
  rollout?: { index: number; count: number },
): ReadItem {
  // A Batch API line is read as the chat row it wraps, its fields named as the line has them.
  const envelope = batchEnvelope(line);
  const row = envelope?.row ?? line;
  const outer = envelope?.field ?? ((field: string) => field);
  const rowOwnId = rowId(row, text);
  // A rollout of a row of several: the row's id and the rollout's index.
  const id = rollout ? `${rowOwnId}/rollout-${rollout.index}` : rowOwnId;
  const fail = (field: string | undefined, reason: string): ReadItem =>
    quarantine(source, { id, ...(field ? { field } : {}), reason: `${where}${reason}` }, text);
  if (envelope?.refusal) return fail(envelope.refusal.field, envelope.refusal.reason);
  const found = conversationOf(row, rollout?.index);
  if (!found && isXlamRow(row)) {
    return fail(
      "answers",
      "an xLAM / APIGen function-calling row (query, answers, tools): it holds the calls a model should make but no tool results, " +
        "so there is no environment output to learn from; not read",
    );
  }
  if (!found) {
    const keys = Object.keys(row).slice(0, 12).join(", ");
    return fail(
      "messages",
      `no conversation: expected "messages", "conversations", "traj" or "trajectory" (an array of messages), Responses API "input" / "output" items or a Glaive "chat"; the row has keys ${keys}`,
    );
  }
  const key = outer(found.key);
  if (found.parseError) return fail(key, `${key}: a string that is not a JSON list of messages (${found.parseError})`);
  if (!Array.isArray(found.value)) return fail(key, `${key}: expected an array of messages, got ${describeType(found.value)}`);
  // Calls and tool specs are written back as JSON: refuse what JSON.stringify cannot recurse through.
  // (The conversation too: a JSON string column parsed here is not part of the row's own depth.)
  if (nestsTooDeep(line) || nestsTooDeep(found.value)) return fail(undefined, `the row nests deeper than ${MAX_JSON_DEPTH} levels`);
  const pairer = new StepPairer();
  for (const what of envelope?.skipped ?? []) pairer.count(what);
  // ToolBench answers a ReAct "Action:" with a role `function` message: only then is such text a call.
  const dialect: Dialect = {
    react: found.value.some((m) => isRecord(m) && TOOL_ROLES.has(String(m.role ?? m.from).toLowerCase())),
    fencedCommands: isFencedCommandChat(found.value),
    taggedSearch: isTaggedSearchConversation(found.value),
  };
  // In a SWE-agent transcript the user message after a command is that command's output.
  let awaitingOutput = false;
  const asResult = (message: Message): Message => {
    const commandOutput = dialect.fencedCommands && awaitingOutput && message.role === "user";
    if (message.role === "assistant" || message.role === "user") awaitingOutput = message.role === "assistant" && message.calls.length > 0;
    return commandOutput ? { ...message, role: "tool", results: [message.text] } : message;
  };
  try {
    // A Responses reasoning item is the thinking of the assistant message after it.
    let reasoning: string[] = [];
    for (const [i, raw] of found.value.entries()) {
      for (const normalized of normalizeMessage(raw, outer(found.fields?.[i] ?? `${found.key}.${i}`), dialect)) {
        const message = asResult(normalized);
        if (message.role === "reasoning") {
          reasoning.push(message.text);
          continue;
        }
        if (reasoning.length > 0 && message.role === "assistant") {
          pairer.add({ ...message, reasoning: [...reasoning, ...(message.reasoning ? [message.reasoning] : [])].join("\n\n") });
          reasoning = [];
          continue;
        }
        if (reasoning.length > 0 && message.role !== "other") {
          pairer.count("reasoning_without_reply", reasoning.length);
          reasoning = [];
        }
        pairer.add(message);
      }
    }
    if (reasoning.length > 0) pairer.count("reasoning_without_reply", reasoning.length);
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    return fail(err.field, err.message);
  }
  pairer.finish();
  // A search agent's closing text: its `<answer>` is the final answer.
  if (dialect.taggedSearch && pairer.finalAnswer !== undefined) pairer.finalAnswer = taggedAnswer(pairer.finalAnswer);
  if (pairer.turns.length === 0) {
    const counts = Object.entries(pairer.skipped)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    return fail(key, `${key}: no tool call was followed by its result${counts ? ` (${counts})` : ""}`);
  }
  const specs = toolSpecs(row);
  const toolNames = [...specs.map(specName).filter((n): n is string => n !== undefined), ...pairer.calledNames];
  // A tagged-search rollout searches the web (and reads the pages it found, DeepResearcher's
  // `browse_webpage` included): the search domain, unless it also runs shell or editing tools.
  const searchOnly =
    dialect.taggedSearch &&
    // (A rollout that only opened pages — ASearcher's `<access>`, a WebThinker click — is the same search agent.)
    pairer.calledNames.some((name) => isSearchTool(name) || name === "web_extract") &&
    !pairer.calledNames.some((name) => isShellTool(name) || isEditTool(name));
  const domain = options.domain ?? (searchOnly ? "search" : inferDomain(row, toolNames, pairer.commands));
  // The agent's system prompt and tools describe the agent, not the environment: kept in meta, so
  // the world model trains with its domain's own system prompt (as for every agent-log reader).
  const agentSystem = systemText(row, found.key, pairer.systems, specs);
  const base = rowMeta(row, pairer);
  const meta = {
    ...base,
    ...(rollout ? rolloutMeta(row, rollout, base.outcome) : {}),
    ...(agentSystem !== undefined ? { agent_system: agentSystem } : {}),
  };
  const trajectory: Trajectory = {
    id,
    domain,
    source,
    ...(pairer.task !== undefined ? { task: pairer.task } : {}),
    turns: pairer.turns,
    ...(Object.keys(meta).length > 0 ? { meta } : {}),
  };
  return { kind: "trajectory", trajectory };
}

/** A rollout's index and count, and its own reward where the row lists one per rollout (`rewards` / `scores`). */
function rolloutMeta(row: Record<string, unknown>, rollout: { index: number; count: number }, outcome: unknown): Record<string, unknown> {
  const meta: Record<string, unknown> = { rollout: rollout.index, rollouts: rollout.count };
  const rewards = Array.isArray(row.rewards) ? row.rewards : Array.isArray(row.scores) ? row.scores : undefined;
  const reward = rewards?.length === rollout.count ? rewards[rollout.index] : undefined;
  if (typeof reward === "number" && Number.isFinite(reward)) meta.outcome = { ...(isRecord(outcome) ? outcome : {}), reward };
  return meta;
}

/** A row (or a document) refused at the read stage, with an excerpt of its text when there is one. */
export function quarantine(source: SourceRef, entry: Omit<QuarantineEntry, "source" | "stage">, text?: string): ReadItem {
  return { kind: "quarantine", entry: { source, stage: "read", ...entry, ...(text !== undefined ? { excerpt: excerpt(text) } : {}) } };
}
