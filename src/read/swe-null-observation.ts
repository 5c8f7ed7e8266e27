import type { ChatTurnPairer } from "./chat-turns.ts";

/**
 * An observation message without content (null or missing: the command crashed before it
 * returned) answers its action with nothing to learn. The action is taken off the pairer and both
 * are counted in `skipped` (`action_without_observation`, `observation_without_content`), never
 * turned into an empty observation. A message that answers no action is counted by the pairer.
 */
export function dropObservation(pairer: ChatTurnPairer, role: string): void {
  const before = pairer.turns.length;
  pairer.add(role, "", []);
  if (pairer.turns.length === before) return;
  pairer.turns.pop();
  pairer.count("action_without_observation");
  pairer.count("observation_without_content");
}
