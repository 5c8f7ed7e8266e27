import type { Domain } from "../../core/trajectory.ts";
import { openDecompressed } from "../../io/open-input.ts";
import { readWholeText } from "../../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf, sideFileExists, sideFolderExists } from "../../io/side-files.ts";
import { type JsonKind, type JsonPath, selectJson } from "../json-select.ts";
import { isRecord } from "../record-helpers.ts";
import { type Header, optionalString } from "./step-fields.ts";
import { BROWSER_TOOL, type Built, SEARCH_TOOL, SHELL_TOOLS } from "./terminal-turns.ts";

/**
 * What an ATIF trajectory's meta holds beyond its steps: the domain from the tools called, the
 * document's own fields, and the Harbor trial around the file (result.json, the verifier's reward).
 */

const SWE_TASK = /<uploaded_files>|<pr_description>|<issue_description>|\b(?:uploaded|a) (?:python )?code repository\b|\/testbed\b/i;
const SWE_DATASET = /^(?:[\w.-]+\/)?(?:swe[-_]?(?:bench|gym|smith|rebench|lancer|polybench)|swebench)/i;
const TERMINAL_TOOL = (name: string) => SHELL_TOOLS.has(name.toLowerCase()) || /keystroke|tmux|terminal|shell|bash/i.test(name);

export function inferDomain(toolNames: readonly string[], task: string | undefined, taskName: string | undefined): Domain {
  const swe = (task !== undefined && SWE_TASK.test(task)) || (taskName !== undefined && SWE_DATASET.test(taskName));
  if (toolNames.some(TERMINAL_TOOL)) return swe ? "swe" : "terminal";
  if (toolNames.some((name) => /edit|write_file|create_file|apply_patch|str_replace/i.test(name))) return swe ? "swe" : "terminal";
  if (toolNames.some((name) => BROWSER_TOOL.test(name))) return "web";
  if (toolNames.some((name) => SEARCH_TOOL.test(name))) return "search";
  return swe ? "swe" : "terminal";
}

export function trajectoryMeta(header: Header, built: Built, trial: TrialContext | undefined): Record<string, unknown> {
  const { agent } = header;
  const atif: Record<string, unknown> = {
    schema_version: header.version,
    ...(header.sessionId !== undefined ? { session_id: header.sessionId } : {}),
    ...(header.trajectoryId !== undefined ? { trajectory_id: header.trajectoryId } : {}),
    agent: Object.fromEntries(Object.entries(agent).filter(([key]) => key !== "tool_definitions")),
    ...(header.finalMetrics ? { final_metrics: header.finalMetrics } : {}),
    ...(header.notes !== undefined ? { notes: header.notes } : {}),
    ...(header.extra ? { extra: header.extra } : {}),
    ...(header.continued !== undefined ? { continued_trajectory_ref: header.continued } : {}),
    tools: built.toolNames,
  };
  if (Array.isArray(agent.tool_definitions)) {
    atif.tool_definitions = agent.tool_definitions
      .map((tool) => (isRecord(tool) && isRecord(tool.function) ? tool.function.name : isRecord(tool) ? tool.name : undefined))
      .filter((name) => typeof name === "string");
  }
  const model = built.model ?? trial?.model;
  const meta: Record<string, unknown> = {
    agent: agent.name,
    agent_version: agent.version,
    ...(model !== undefined ? { model } : {}),
    ...(trial?.taskName !== undefined ? { task_id: trial.taskName } : {}),
    ...(trial?.trialName !== undefined ? { attempt: trial.trialName } : {}),
    ...(trial?.outcome ? { outcome: trial.outcome } : {}),
    atif,
  };
  if (trial) meta.harbor = { side_files: trial.files };
  if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
  return meta;
}

/** `<trial>` when `path` is `<trial>/agent/<file>`: where Harbor writes result.json and verifier/. */
function trialDirOf(path: string): string | undefined {
  const agentDir = parentOf(path);
  return baseName(agentDir) === "agent" ? parentOf(agentDir) : undefined;
}

/** A Harbor trial (for companions): `<trial>/agent/<file>` with result.json or verifier/ beside agent/. */
export async function harborTrialDir(path: string): Promise<string | undefined> {
  const trial = trialDirOf(path);
  if (!trial) return undefined;
  const [result, verifier] = await Promise.all([sideFileExists(beside(trial, "result.json")), sideFolderExists(beside(trial, "verifier"))]);
  return result || verifier ? trial : undefined;
}

export async function outcomeFiles(trial: string): Promise<string[]> {
  const files = [beside(trial, "result.json"), beside(trial, "verifier", "reward.txt"), beside(trial, "verifier", "reward.json")];
  const present = await Promise.all(files.map((file) => sideFileExists(file)));
  return files.filter((_, i) => present[i]);
}

/** Terminus' `agent/episode-<n>/` folders. */
export async function episodeDirs(agentDir: string): Promise<string[]> {
  const { dirs } = await listFolder(agentDir);
  return [...dirs]
    .filter((name) => /^episode-\d+$/.test(name))
    .sort()
    .map((name) => beside(agentDir, name));
}

export interface TrialContext {
  taskName: string | undefined;
  trialName: string | undefined;
  model: string | undefined;
  outcome: Record<string, unknown> | undefined;
  /** Which side files were read. */
  files: string[];
}

const RESULT_FIELDS = new Set(["task_name", "trial_name", "verifier_result", "exception_info", "agent_info"]);

/**
 * The trial's result.json (streamed: it can hold the agent's whole message log) and reward files,
 * opened as the input itself is (a local path or an `s3://` URI); a side file that is absent or
 * unreadable gives nothing, never a failure of the trajectory.
 */
export async function trialContext(path: string): Promise<TrialContext | undefined> {
  const trial = trialDirOf(path);
  if (!trial) return undefined;
  const files: string[] = [];
  const result: Record<string, unknown> = {};
  try {
    const resultPath = beside(trial, "result.json");
    if (!(await sideFileExists(resultPath))) throw new Error("no result.json");
    const { stream } = await openDecompressed(resultPath);
    const pick = (at: JsonPath, kind: JsonKind) =>
      at.length === 0 ? kind !== "object" : at.length === 1 && RESULT_FIELDS.has(at[0] as string);
    const found: Record<string, unknown> = {};
    for await (const { path: at, value } of selectJson(stream, pick)) if (at.length === 1) found[at[0] as string] = value;
    Object.assign(result, found);
    files.push("result.json");
  } catch {
    // Absent or damaged: no outcome from it.
  }
  let rewards: Record<string, number> | undefined;
  const verifier = result.verifier_result;
  if (isRecord(verifier) && isRecord(verifier.rewards)) rewards = numbers(verifier.rewards);
  if (!rewards) rewards = await rewardFile(trial, files);
  if (files.length === 0) return undefined;
  const outcome: Record<string, unknown> = {};
  if (rewards) {
    const reward = rewards.reward ?? (Object.keys(rewards).length === 1 ? Object.values(rewards)[0] : undefined);
    if (reward !== undefined) {
      outcome.reward = reward;
      if (reward === 0 || reward === 1) outcome.success = reward === 1;
    }
    if (Object.keys(rewards).length > 1) outcome.rewards = rewards;
  }
  const exception = isRecord(result.exception_info) ? result.exception_info : undefined;
  if (exception && typeof exception.exception_type === "string") {
    outcome.failure_mode = exception.exception_type;
    if (typeof exception.exception_message === "string") outcome.failure_message = exception.exception_message.slice(0, 500);
  }
  const info = isRecord(result.agent_info) ? result.agent_info : undefined;
  const modelInfo = info && isRecord(info.model_info) ? info.model_info : undefined;
  const modelName = modelInfo && typeof modelInfo.name === "string" ? modelInfo.name : undefined;
  const provider = modelInfo && typeof modelInfo.provider === "string" ? modelInfo.provider : undefined;
  return {
    taskName: optionalString(result.task_name),
    trialName: optionalString(result.trial_name),
    model: modelName && provider && !modelName.startsWith(`${provider}/`) ? `${provider}/${modelName}` : modelName,
    outcome: Object.keys(outcome).length > 0 ? outcome : undefined,
    files,
  };
}

function numbers(value: Record<string, unknown>): Record<string, number> | undefined {
  const entries = Object.entries(value).filter(
    (entry): entry is [string, number] => typeof entry[1] === "number" && Number.isFinite(entry[1]),
  );
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

const REWARD_FILE_BYTES = 1 << 20;

/** `verifier/reward.txt` (one number) or `verifier/reward.json` ({name: number}), as Harbor's verifier reads them. */
async function rewardFile(trial: string, files: string[]): Promise<Record<string, number> | undefined> {
  const txt = await readWholeText(beside(trial, "verifier", "reward.txt"), REWARD_FILE_BYTES);
  if ("text" in txt) {
    const text = txt.text.trim();
    if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text)) {
      files.push("verifier/reward.txt");
      return { reward: Number(text) };
    }
  }
  const json = await readWholeText(beside(trial, "verifier", "reward.json"), REWARD_FILE_BYTES);
  if ("text" in json) {
    try {
      const parsed: unknown = JSON.parse(json.text);
      const rewards = isRecord(parsed) ? numbers(parsed) : undefined;
      if (rewards) {
        files.push("verifier/reward.json");
        return rewards;
      }
    } catch {
      // Not a reward file Harbor could read either.
    }
  }
  return undefined;
}
