import { createHash } from "node:crypto";
import { type FakeScoreServer, startFakeScoreServer } from "./fake-score-server.ts";

const SPELLED: Record<string, string> = { "1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth", "5th": "fifth" };

/**
 * A deterministic teacher for `controls.rephrase` (configs/demo-rephrase.yaml): it rewords the
 * instruction it is sent, keeping every fact, with a thinking block first; except about one prompt
 * in five (by a hash of the prompt), which it rewords badly, as teachers do: an ordinal spelled out
 * ("the 3rd call" → "the third call", a number dropped), or, with no ordinal, a count added. The
 * checks must keep the template for those.
 */
export function fakeRephrasing(instruction: string): string {
  const bad = (createHash("sha256").update(instruction).digest()[0] as number) < 52;
  if (bad) {
    const ordinal = /\b(\d+)(st|nd|rd|th)\b/.exec(instruction);
    if (ordinal && SPELLED[ordinal[0]]) return instruction.replace(ordinal[0], SPELLED[ordinal[0]] as string);
    return `${instruction} This happens 2 times.`;
  }
  const first = instruction.charAt(0);
  const body = `${first.toLowerCase()}${instruction.slice(1)}`;
  return `<think>Keep every number and quoted value.</think>\nIn this episode, ${body.replace(/ returns /g, " gives back ")}`;
}

/** The fake teacher as an OpenAI-compatible server: the answer to a rephrase prompt's user message. */
export function startFakeRephraser(): Promise<FakeScoreServer> {
  return startFakeScoreServer((_request, _attempt, prompt) => ({ content: fakeRephrasing(prompt) }));
}
