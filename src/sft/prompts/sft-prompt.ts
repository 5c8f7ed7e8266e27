import type { Domain, Trajectory } from "../../core/trajectory.ts";
import type { SystemPrompts } from "../../render/system-prompts.ts";
import type { ChatMessage } from "../teacher/chat-types.ts";

/**
 * One world-model request: for turn `turn_index` of a trajectory, the model sees the system
 * prompt, the history as user(action) / assistant(observation) pairs and the current action,
 * and must predict `ground_truth`. This is also the JSONL line `lwm-data sft prompts` writes.
 */
export interface SftPrompt {
  /** `<trajectory id>#<turn index>`: stable across runs, the key candidates are matched by. */
  prompt_id: string;
  trajectory_id: string;
  domain: Domain;
  turn_index: number;
  /** `file:line` (or `file@offset`) of the source record. */
  source: string;
  /** What the student sees, in OpenAI chat format; the last message is the action. */
  messages: ChatMessage[];
  /** The observation the environment really returned. */
  ground_truth: string;
}

export interface PromptSettings {
  /** History turns carried before the predicted one; 0 = all. */
  maxHistoryTurns: number;
}

export interface TeacherSettings {
  /** The answer format, appended to the teacher's system message. */
  instructions: string;
  /** Show the teacher the real observation. */
  hints: boolean;
}

export function promptId(trajectoryId: string, turnIndex: number): string {
  return `${trajectoryId}#${turnIndex}`;
}

/** The prompt for one turn of a normalized trajectory. */
export function buildPrompt(
  trajectory: Trajectory,
  turnIndex: number,
  source: string,
  systemPrompts: SystemPrompts,
  settings: PromptSettings,
): SftPrompt {
  const parts = [trajectory.system ?? systemPrompts[trajectory.domain]];
  if (trajectory.task) parts.push(`## Agent task\n\n${trajectory.task}`);
  if (trajectory.initialObservation) parts.push(`## Initial observation\n\n${trajectory.initialObservation}`);
  const messages: ChatMessage[] = [{ role: "system", content: parts.join("\n\n") }];
  const first = settings.maxHistoryTurns > 0 ? Math.max(0, turnIndex - settings.maxHistoryTurns) : 0;
  for (const turn of trajectory.turns.slice(first, turnIndex)) {
    messages.push({ role: "user", content: turn.action }, { role: "assistant", content: turn.observation });
  }
  const current = trajectory.turns[turnIndex];
  if (!current) throw new Error(`turn ${turnIndex} is outside trajectory ${trajectory.id} (${trajectory.turns.length} turns)`);
  messages.push({ role: "user", content: current.action });
  return {
    prompt_id: promptId(trajectory.id, turnIndex),
    trajectory_id: trajectory.id,
    domain: trajectory.domain,
    turn_index: turnIndex,
    source,
    messages,
    ground_truth: current.observation,
  };
}

/**
 * What the teacher is sent: the student's prompt with the answer format spelled out in the
 * system message (the student learns the format from its training answers, so its prompt stays
 * the CPT world-model prompt, free of tag strings the tokenizer would read as added tokens),
 * plus, with hints, the real observation after the action so the teacher can write reasoning
 * that arrives at it. The leakage rule then checks that the reasoning does not simply quote it.
 */
export function teacherMessages(prompt: SftPrompt, settings: TeacherSettings): ChatMessage[] {
  const [system, ...rest] = prompt.messages as [ChatMessage, ...ChatMessage[]];
  const instructions = settings.instructions.trim();
  const messages = instructions === "" ? [system, ...rest] : [{ ...system, content: `${system.content}\n\n${instructions}` }, ...rest];
  if (!settings.hints) return messages;
  const last = messages.at(-1) as ChatMessage;
  const hint =
    "\n\n---\nReference (for you only): the environment really returned the observation below. Reason your way to it " +
    "from the history and the action; do not quote it in your thinking.\n<reference_observation>\n" +
    `${prompt.ground_truth}\n</reference_observation>`;
  return [...messages.slice(0, -1), { ...last, content: last.content + hint }];
}
