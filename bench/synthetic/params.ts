/**
 * Shape of the synthetic corpus per domain. Every number marked "measured" comes from
 * `node bench/synthetic/measure.ts` over the third-party samples (then in test/fixtures/real, now
 * read from ../shared/fixtures/real) and the demo data of the time (59 files, duplicates once):
 * the project's own readers and normalizer, lengths in characters of the text as read
 * (tree domains: the raw XML / AXTree before canonicalization). Where the fixtures are too thin
 * to measure (a single trajectory, or toy recordings) the comment says what was assumed instead.
 */
import type { Domain } from "../../src/core/trajectory.ts";
import type { Quantiles } from "./random.ts";

export interface DomainParams {
  /** Share of the corpus bytes (a choice, not a measurement: no real corpus mix is public). */
  share: number;
  turns: Quantiles;
  action: Quantiles;
  observation: Quantiles;
  /** Agent instruction length; a draw under 20 means the record has no task. */
  task: Quantiles;
}

export const PARAMS: Record<Domain, DomainParams> = {
  // measured on 17 real trajectories (SWE-agent .traj, mini-swe-agent, OpenHands, SWE-smith),
  // 182 turns: turns p10 2 / p50 10 / p90 21 / max 36; actions p50 93, p90 832 (heredoc file
  // writes); observations p10 40 (an empty <output>) / p50 587 / p90 3007 / max 20740; task p50 2462.
  swe: {
    share: 0.3,
    turns: { min: 2, p10: 2, p50: 10, p90: 21, max: 36 },
    action: { min: 8, p10: 18, p50: 93, p90: 832, max: 5880 },
    observation: { min: 40, p10: 40, p50: 587, p90: 3007, max: 20740 },
    task: { min: 300, p10: 324, p50: 2462, p90: 4591, max: 5653 },
  },
  // The terminal fixtures measured were asciinema-player test casts (1 turn, p50 13 chars): toys, not
  // sessions. Assumed instead: sessions as long as the measured SWE ones, commands shorter than
  // an agent's (no heredocs), outputs like the measured SWE shell outputs without the wrapper.
  terminal: {
    share: 0.15,
    turns: { min: 1, p10: 2, p50: 8, p90: 20, max: 36 },
    action: { min: 2, p10: 6, p50: 22, p90: 80, max: 300 },
    observation: { min: 1, p10: 12, p50: 540, p90: 2960, max: 20000 },
    task: { min: 0, p10: 0, p50: 0, p90: 120, max: 300 },
  },
  // measured on 1 real BrowserGym WorkArena run (3 turns): actions 11-27 chars (click('79')),
  // AXTree observations 9324 / 11950 / 12641, task 74. Turn-count spread around 3 assumed.
  web: {
    share: 0.15,
    turns: { min: 1, p10: 2, p50: 3, p90: 6, max: 10 },
    action: { min: 8, p10: 11, p50: 12, p90: 27, max: 60 },
    observation: { min: 4000, p10: 9324, p50: 11950, p90: 12641, max: 20000 },
    task: { min: 40, p10: 60, p50: 74, p90: 120, max: 200 },
  },
  // measured on 1 real Brave web-search response (the demo's two records): action 54-75 chars,
  // observation 48545 (pretty JSON, 20 results + videos). Spread of ±35% and up to 4 queries assumed.
  search: {
    share: 0.12,
    turns: { min: 1, p10: 1, p50: 1, p90: 2, max: 4 },
    action: { min: 40, p10: 54, p50: 65, p90: 75, max: 120 },
    observation: { min: 24000, p10: 32000, p50: 48545, p90: 56000, max: 64000 },
    task: { min: 0, p10: 0, p50: 35, p90: 60, max: 120 },
  },
  // measured on 9 real MCP transcripts (go-sdk conformance), 54 turns: turns p50 6 / p90 12;
  // requests p10 59 / p50 97 / p90 221 / max 432; replies p10 68 / p50 186 / p90 276 / max 2190.
  mcp: {
    share: 0.1,
    turns: { min: 1, p10: 1, p50: 6, p90: 12, max: 16 },
    action: { min: 40, p10: 59, p50: 97, p90: 221, max: 432 },
    observation: { min: 50, p10: 68, p50: 186, p90: 276, max: 2190 },
    task: { min: 0, p10: 0, p50: 184, p90: 520, max: 600 },
  },
  // measured on 3 real screens (uiautomator dump, DroidBot states): raw XML/JSON 5076 / 7032 /
  // 18386 chars. The fixtures are single screens; a 1-10 step episode (p50 3) is assumed.
  android: {
    share: 0.1,
    turns: { min: 1, p10: 1, p50: 3, p90: 6, max: 10 },
    action: { min: 30, p10: 40, p50: 55, p90: 110, max: 160 },
    observation: { min: 3000, p10: 5076, p50: 7032, p90: 18386, max: 24000 },
    task: { min: 0, p10: 0, p50: 40, p90: 90, max: 160 },
  },
  // measured on the 2 hand-made OS trajectories (AT-SPI XML, OSWorld table), 5 turns: turns 2-3,
  // actions p50 29 / max 67 (pyautogui), observations 402 / 1784 / 2418 raw, task ~54.
  os: {
    share: 0.08,
    turns: { min: 1, p10: 2, p50: 3, p90: 5, max: 8 },
    action: { min: 15, p10: 25, p50: 29, p90: 67, max: 120 },
    observation: { min: 300, p10: 402, p50: 1784, p90: 2418, max: 6000 },
    task: { min: 30, p10: 51, p50: 54, p90: 80, max: 150 },
  },
};

/** One canonical JSONL record (src/core/trajectory.ts without `source`, which readers add). */
export interface CanonicalRecord {
  id: string;
  domain: Domain;
  task?: string;
  initialObservation?: string;
  turns: { action: string; observation: string; meta?: Record<string, unknown> }[];
  meta?: Record<string, unknown>;
}
