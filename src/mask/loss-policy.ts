import type { Trajectory } from "../core/trajectory.ts";
import type { ChatMessage } from "../render/chat-template.ts";

/**
 * Decides which messages carry the loss. The hook for turn-level masking from
 * information-theoretic statistics: a policy may switch off observations that teach nothing
 * (echoes, boilerplate) while they stay in the sequence as context.
 */
export interface LossPolicy {
  name: string;
  apply(trajectory: Trajectory, messages: ChatMessage[]): ChatMessage[];
}

/** Every observation is trained; system prompt and actions are context. */
export const allObservationsPolicy: LossPolicy = {
  name: "all-observations",
  apply: (_trajectory, messages) => messages.map((message) => ({ ...message, loss: message.role === "assistant" })),
};

export const LOSS_POLICIES: Record<string, LossPolicy> = { [allObservationsPolicy.name]: allObservationsPolicy };
