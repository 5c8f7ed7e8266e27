import type { Trajectory } from "../core/trajectory.ts";
import type { ChatMessage } from "./chat-template.ts";
import type { SystemPrompts } from "./system-prompts.ts";

/**
 * The CPT conversation for a trajectory: system · (user = action → assistant = observation)*.
 * The task and the initial observation are context the world model needs before the first
 * action, so they go into the system message, after a control instruction when there is one.
 * Loss flags start off; the mask policy sets them.
 */
export function trajectoryMessages(trajectory: Trajectory, systemPrompts: SystemPrompts, instruction = ""): ChatMessage[] {
  const parts = [trajectory.system ?? systemPrompts[trajectory.domain]];
  // A control instruction (docs/controls.md "Controls"): how the environment is to behave in this episode.
  if (instruction !== "") parts.push(`## Environment behaviour\n\n${instruction}`);
  if (trajectory.task !== undefined && trajectory.task !== "") parts.push(`## Agent task\n\n${trajectory.task}`);
  if (trajectory.initialObservation !== undefined && trajectory.initialObservation !== "")
    parts.push(`## Initial observation\n\n${trajectory.initialObservation}`);
  const messages: ChatMessage[] = [{ role: "system", content: parts.join("\n\n"), loss: false }];
  for (const turn of trajectory.turns) {
    messages.push({ role: "user", content: turn.action, loss: false });
    messages.push({ role: "assistant", content: turn.observation, loss: false });
  }
  return messages;
}
