import type { VerifierResult } from "./result.ts";

/**
 * The `truncated` rule: a candidate the server stopped because it ran out of tokens
 * (`finish_reason: "length"`, the `max_tokens` limit or the context) is not the answer the
 * teacher meant, even when its tags happen to close: score 0. Evaluated only when the server
 * reported a finish reason (candidate files in our own format carry none).
 */
export function truncationRule(finishReason: string): VerifierResult {
  const truncated = finishReason === "length";
  return {
    rule: "truncated",
    score: truncated ? 0 : 1,
    passed: !truncated,
    reason: truncated
      ? 'finish_reason "length": the server cut the answer at its token limit (raise sft.teacher.max_tokens)'
      : `finish_reason ${JSON.stringify(finishReason)}`,
  };
}
