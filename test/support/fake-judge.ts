import { createHash } from "node:crypto";
import { type FakeScoreServer, startFakeScoreServer } from "./fake-score-server.ts";

/**
 * A deterministic judge for jobs with scorers (configs/select-resolved.yaml): every prompt gets
 * 0.9, except about one in six (by a hash of the prompt) that gets 0.3 — so a `scores.judge ≥ 0.7`
 * filter keeps most records and drops a few, the same ones on every run.
 */
export function startFakeJudge(): Promise<FakeScoreServer> {
  return startFakeScoreServer((_request, _attempt, prompt) => {
    const low = (createHash("sha256").update(prompt).digest()[0] as number) < 40;
    return { content: JSON.stringify({ score: low ? 0.3 : 0.9, reason: low ? "mostly harness noise" : "informative observations" }) };
  });
}
