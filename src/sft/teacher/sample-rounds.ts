import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../../core/errors.ts";
import { writeJsonFile } from "../../io/json-file.ts";

/**
 * Sampling rounds. Round 0 asks for every prompt's candidates (seed `sft.seed`, or reads them from
 * `--candidates` files); each `sft sample --resample-rejected` adds a round r that asks again, with
 * seed `sft.seed + r`, only for the prompts that no earlier round gave a passing candidate (every
 * candidate rejected, or no candidates: the teacher failed). A run replays all its rounds in order
 * through the request cache, so earlier rounds cost nothing and the output is a function of the
 * config, the rounds and the cache: the same whether a run was interrupted and resumed or not.
 */
export interface SampleRound {
  round: number;
  /** The request seed; null for a round read from candidate files. */
  seed: number | null;
  source: "endpoint" | "files";
}

/** A round as the manifest records it: how many prompts it asked for and what came back. */
export interface SampleRoundCounts extends SampleRound {
  /** Prompts asked in this round (round 0: all of them). */
  prompts: number;
  /** Of those, prompts that got no candidates (teacher failure, nothing in the files). */
  failed: number;
  /** Of those, prompts that got at least one candidate passing the rules (and the judge gate). */
  passed: number;
  /** Candidates received. */
  candidates: number;
}

/** While a run is in progress: which rounds it replays (removed once the manifest is written). */
export const ROUNDS_STATE_FILE = "sft/rounds-in-progress.json";

interface RoundsState {
  rounds: number;
  /** The run in progress was asked to add a round: resuming it (with or without the flag) adds none. */
  resample: boolean;
  /** Its round 0 read these candidate files. */
  files?: string[];
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** What an existing output says about its rounds, read before the run clears the folder. */
export interface PreviousRounds {
  /** Rounds the previous run did (manifest) or was doing (an interrupted run's state file); 0 = no output. */
  rounds: number;
  /** The state was an interrupted run that was already adding a round. */
  resample: boolean;
  /** Round 0 of the previous output came from these candidate files. */
  filesRound0?: string[];
}

export async function readPreviousRounds(outputDir: string): Promise<PreviousRounds> {
  // A manifest means a complete output: its rounds are done (a state file beside it is a leftover
  // of a run that ended between writing the manifest and removing the state).
  const manifest = (await readJson(join(outputDir, "manifest.json"))) as
    | { format?: unknown; rounds?: unknown; teacher?: { source?: unknown; files?: unknown } }
    | undefined;
  if (manifest?.format === "lwm-data/sft") {
    const rounds = Array.isArray(manifest.rounds) && manifest.rounds.length > 0 ? manifest.rounds.length : 1;
    const files =
      manifest.teacher?.source === "files" && Array.isArray(manifest.teacher.files) ? (manifest.teacher.files as string[]) : undefined;
    return { rounds, resample: false, ...(files ? { filesRound0: files } : {}) };
  }
  // No manifest: an interrupted run's state says which rounds the folder was being rebuilt with.
  const state = (await readJson(join(outputDir, ROUNDS_STATE_FILE))) as Partial<RoundsState> | undefined;
  if (state && Number.isInteger(state.rounds) && (state.rounds as number) > 0)
    return {
      rounds: state.rounds as number,
      resample: state.resample === true,
      ...(Array.isArray(state.files) ? { filesRound0: state.files } : {}),
    };
  return { rounds: 0, resample: false };
}

/**
 * The rounds this run replays: the previous output's, plus one when `--resample-rejected` asks for
 * it — unless the previous run was an interrupted resample, which this run completes instead.
 */
export function planRounds(
  previous: PreviousRounds,
  options: { resample: boolean; seed: number; candidateFiles: string[] | undefined; outputDir: string },
): { rounds: SampleRound[]; state: RoundsState } {
  if (options.resample && previous.rounds === 0)
    throw new UserError(
      `--resample-rejected resamples an existing SFT output, and ${options.outputDir} holds none: run \`lwm-data sft sample\` without it first`,
    );
  if (options.resample && previous.filesRound0 && !options.candidateFiles)
    throw new UserError(
      `${options.outputDir}: its first round read candidates from files (${previous.filesRound0.join(", ")}); pass them again with --candidates so only the new round asks the teacher`,
    );
  const adds = options.resample && !previous.resample;
  const count = Math.max(1, previous.rounds) + (adds ? 1 : 0);
  const rounds = Array.from({ length: count }, (_, round): SampleRound => {
    const files = round === 0 && options.candidateFiles !== undefined;
    return { round, seed: files ? null : options.seed + round, source: files ? "files" : "endpoint" };
  });
  return {
    rounds,
    state: {
      rounds: count,
      resample: options.resample || previous.resample,
      ...(options.candidateFiles ? { files: options.candidateFiles } : {}),
    },
  };
}

export async function writeRoundsState(outputDir: string, state: RoundsState): Promise<void> {
  await writeJsonFile(join(outputDir, ROUNDS_STATE_FILE), state, { indent: 2 });
}

export async function clearRoundsState(outputDir: string): Promise<void> {
  await rm(join(outputDir, ROUNDS_STATE_FILE), { force: true });
}

type RoundResult<T> = { ok: true; outcomes: T[] } | { ok: false; reason: string };

/**
 * A prompt's candidates over the rounds: round 0, then each later round only while no candidate
 * so far passed. Candidates are numbered across rounds (`index`) and carry their `round`; the
 * prompt fails only when no round gave it a candidate (the reasons of each round, joined).
 */
export async function sampleOverRounds<T extends { index: number; passed: boolean }>(
  rounds: readonly SampleRound[],
  counts: SampleRoundCounts[],
  ask: (round: SampleRound) => Promise<RoundResult<T>>,
): Promise<RoundResult<T & { round: number }>> {
  const outcomes: (T & { round: number })[] = [];
  const reasons: string[] = [];
  for (const [i, round] of rounds.entries()) {
    if (outcomes.some((outcome) => outcome.passed)) break;
    const tally = counts[i] as SampleRoundCounts;
    tally.prompts += 1;
    const got = await ask(round);
    if (!got.ok) {
      tally.failed += 1;
      reasons.push(rounds.length > 1 ? `round ${round.round}: ${got.reason}` : got.reason);
      continue;
    }
    const offset = outcomes.length;
    for (const outcome of got.outcomes) outcomes.push({ ...outcome, index: offset + outcome.index, round: round.round });
    tally.candidates += got.outcomes.length;
    if (got.outcomes.some((outcome) => outcome.passed)) tally.passed += 1;
  }
  return outcomes.length > 0 ? { ok: true, outcomes } : { ok: false, reason: reasons.join("; ") };
}

export function zeroRoundCounts(rounds: readonly SampleRound[]): SampleRoundCounts[] {
  return rounds.map((round) => ({ ...round, prompts: 0, failed: 0, passed: 0, candidates: 0 }));
}
