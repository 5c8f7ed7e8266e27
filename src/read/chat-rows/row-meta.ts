import { messageText } from "../chat-turns.ts";
import { contentId, isRecord } from "../record-helpers.ts";
import { geminiSystem } from "./gemini-contents.ts";
import type { StepPairer } from "./step-pairer.ts";

/**
 * What a trajectory takes from its row besides the turns: its id, the agent's system text (system
 * messages, a top-level `system` or `instructions`, and the tool specs), and `meta` (outcome,
 * provenance, final answer, skipped counts).
 */

function nonEmptyString(value: unknown): string | undefined {
  if (typeof value === "string" && value.trim() !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

export function rowId(row: Record<string, unknown>, text: string): string {
  const own = nonEmptyString(row.trajectory_id) ?? nonEmptyString(row.traj_id) ?? nonEmptyString(row.id) ?? nonEmptyString(row.uuid);
  if (own !== undefined) return own;
  const instance = nonEmptyString(row.instance_id);
  return contentId(instance ?? "chat", text);
}

/**
 * The row's own system text: `system` (ShareGPT, APIGen-MT, Glaive less its "SYSTEM:" label; a
 * string or Anthropic's list of text blocks), else `instructions` (Responses API); Gemini's
 * `systemInstruction`.
 */
function topSystem(row: Record<string, unknown>, key: string): string | undefined {
  if (key === "contents") return geminiSystem(row);
  const value = row.system ?? row.instructions;
  const text = messageText(value ?? null);
  if (text === undefined || text.trim() === "") return undefined;
  return key === "chat" ? text.replace(/^\s*SYSTEM:[ \t]?/, "") : text;
}

export function systemText(
  row: Record<string, unknown>,
  key: string,
  systems: readonly string[],
  specs: readonly unknown[],
): string | undefined {
  const parts = [...systems];
  const top = topSystem(row, key);
  if (top !== undefined) parts.unshift(top);
  if (specs.length > 0)
    parts.push(`## Tools\n\n${specs.map((spec) => (typeof spec === "string" ? spec : JSON.stringify(spec))).join("\n")}`);
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

export function rowMeta(row: Record<string, unknown>, pairer: StepPairer): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const outcome: Record<string, unknown> = {};
  if (typeof row.resolved === "boolean") outcome.resolved = row.resolved;
  else if (row.resolved === 0 || row.resolved === 1) outcome.resolved = row.resolved === 1;
  // nebius/SWE-agent-trajectories: `target` is whether the generated patch passed the tests.
  if (outcome.resolved === undefined && typeof row.target === "boolean" && typeof row.generated_patch === "string")
    outcome.resolved = row.target;
  if (typeof row.success === "boolean") outcome.success = row.success;
  const info = isRecord(row.info) ? row.info : {};
  const rewardInfo = isRecord(info.reward_info) ? info.reward_info : {};
  const reward = typeof row.reward === "number" ? row.reward : rewardInfo.reward;
  if (typeof reward === "number" && Number.isFinite(reward)) outcome.reward = reward;
  if (typeof row.failure_mode === "string") outcome.failure_mode = row.failure_mode;
  if (Object.keys(outcome).length > 0) meta.outcome = outcome;
  const agent = nonEmptyString(row.agent) ?? nonEmptyString(row.agent_name);
  const model = nonEmptyString(row.model) ?? nonEmptyString(row.model_name);
  const taskId = nonEmptyString(row.instance_id) ?? nonEmptyString(row.task_id);
  const attempt = row.attempt ?? row.trial;
  if (agent !== undefined) meta.agent = agent;
  if (model !== undefined) meta.model = model;
  if (taskId !== undefined) meta.task_id = taskId;
  if ((typeof attempt === "number" && Number.isFinite(attempt)) || (typeof attempt === "string" && attempt !== "")) meta.attempt = attempt;
  for (const key of ["repo", "exit_status", "subset_name", "category", "subcategory", "dataset"]) {
    const value = nonEmptyString(row[key]);
    if (value !== undefined) meta[key] = value;
  }
  // An Amp thread (a `T-…` id beside `agentMode` or `env`): the agent, its title, the model its messages name.
  if (typeof row.id === "string" && row.id.startsWith("T-") && ("agentMode" in row || isRecord(row.env))) {
    meta.agent ??= "amp";
    const title = nonEmptyString(row.title);
    if (title !== undefined) meta.title = title;
    const ampModel = ampThreadModel(row);
    if (ampModel !== undefined) meta.model ??= ampModel;
  }
  if (pairer.finalAnswer !== undefined) meta.final_answer = pairer.finalAnswer;
  if (Object.keys(pairer.skipped).length > 0) meta.skipped = { ...pairer.skipped };
  return meta;
}

/** The model an Amp thread's assistant messages name (`usage.model`), else its `env.initial.tags` `model:…` tag. */
function ampThreadModel(row: Record<string, unknown>): string | undefined {
  if (Array.isArray(row.messages))
    for (const message of row.messages)
      if (isRecord(message) && isRecord(message.usage) && typeof message.usage.model === "string" && message.usage.model !== "")
        return message.usage.model;
  const initial = isRecord(row.env) && isRecord(row.env.initial) ? row.env.initial : undefined;
  const tag = Array.isArray(initial?.tags)
    ? initial.tags.find((t): t is string => typeof t === "string" && t.startsWith("model:"))
    : undefined;
  return tag?.slice("model:".length);
}
