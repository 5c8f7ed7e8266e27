/** The five AgentWorldBench dimensions, in the order they are reported (and stored as `judge_<dimension>`). */
export const JUDGE_DIMENSIONS = ["format", "factuality", "consistency", "realism", "quality"] as const;
export type JudgeDimension = (typeof JUDGE_DIMENSIONS)[number];
export type JudgeScores = Record<JudgeDimension, number>;
