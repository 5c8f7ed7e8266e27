import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import type { Domain } from "../core/trajectory.ts";
import { readJsonFile } from "../io/json-file.ts";
import { type LiteralsMode, literalVerdict, readWorldModelTurns, type TurnSelection, type WorldModelTurn } from "./world-model-turns.ts";

/**
 * `lwm-data export agentworldbench`: held-out trajectories as AgentWorldBench rows, so a team can
 * run Qwen-AgentWorld's `eval/eval.py` (infer → judge → score) on its own data. One row per
 * evaluated turn, in `<dir>/<domain>_test.jsonl` (the files `eval.py --data-dir` globs):
 *
 *   task           the domain (mcp, search, terminal, swe, android, web, os)
 *   id             the trajectory id
 *   prompt         the actions of turns 1…turn_idx, each "### Turn N\n**Action:**\n<action>"
 *   response       their observations, each "**Environment Observation:**\n<observation>";
 *                  response[turn_idx − 1] is the ground truth the judge compares against
 *   current_prompt prompt[turn_idx − 1], the action whose observation is predicted
 *   system_str     the world model's system message (system prompt, task, initial observation)
 *   turn_idx       1-based position of the evaluated turn in prompt/response
 *   total_turns    turns in the whole trajectory
 *
 * plus `lwm_prompt_id`, `lwm_turn_index` (0-based turn in the trajectory) and `lwm_source`, which
 * eval.py carries through to its predictions. Every row holds the whole history before its turn:
 * eval.py's inference step once sent only `current_prompt` while its judge saw the history
 * (QwenLM/Qwen-AgentWorld#7, fixed by #8); rows with the history serve both versions, and the
 * reader (`agentworldbench-jsonl`) reads them back as the trajectories they came from.
 */
export interface AwbRow {
  task: Domain;
  id: string;
  prompt: string[];
  response: string[];
  current_prompt: string;
  system_str: string;
  turn_idx: number;
  total_turns: number;
  lwm_prompt_id: string;
  lwm_turn_index: number;
  lwm_source: string;
}

export interface AwbExportOptions {
  /** The split to export (default `validation`). */
  split?: string;
  /** Which turns are evaluated (default `all`). */
  turns?: TurnSelection;
  literals?: LiteralsMode;
}

export interface AwbExportResult {
  dir: string;
  split: string;
  files: { domain: string; path: string; rows: number; trajectories: number }[];
  refused: number;
  refusedPath: string;
  skipped: Record<string, number>;
}

export const actionMarkup = (turnNumber: number, action: string) => `### Turn ${turnNumber}\n**Action:**\n${action}`;
export const observationMarkup = (observation: string) => `**Environment Observation:**\n${observation}`;

/** The row for one turn; a reason instead when its texts may not go out. */
export function awbRow(
  turn: WorldModelTurn,
  literals: LiteralsMode,
  escaper: Parameters<typeof literalVerdict>[1],
): { row: AwbRow } | { reason: string } {
  // Everything goes to a model: history and action to the world model, the ground truth to the judge.
  const verdict = literalVerdict(
    [
      ...turn.messages.map((message, k) => ({ where: `message ${k} (${message.role})`, text: message.content })),
      { where: "the observation", text: turn.ground_truth },
    ],
    escaper,
    literals,
  );
  if (!verdict.ok) return { reason: verdict.reason };
  const text = (value: string) => (verdict.escape ? escaper.escape(value) : value);
  const [system, ...rest] = turn.messages;
  const history = Math.floor(rest.length / 2);
  const first = turn.turn_index - history;
  const prompt: string[] = [];
  const response: string[] = [];
  for (let i = 0; i < history; i++) {
    prompt.push(actionMarkup(first + i + 1, text(rest[2 * i]?.content ?? "")));
    response.push(observationMarkup(text(rest[2 * i + 1]?.content ?? "")));
  }
  prompt.push(actionMarkup(turn.turn_index + 1, text(rest.at(-1)?.content ?? "")));
  response.push(observationMarkup(text(turn.ground_truth)));
  return {
    row: {
      task: turn.domain,
      id: turn.trajectory_id,
      prompt,
      response,
      current_prompt: prompt.at(-1) as string,
      system_str: text(system?.content ?? ""),
      turn_idx: prompt.length,
      total_turns: turn.total_turns ?? turn.turn_index + 1,
      lwm_prompt_id: turn.prompt_id,
      lwm_turn_index: turn.turn_index,
      lwm_source: turn.source,
    },
  };
}

async function writeLine(stream: WriteStream, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, "drain");
}

/** Writes `<dir>/<domain>_test.jsonl` from an output folder's `split` (see `AwbRow`). */
export async function exportAgentWorldBench(outputDir: string, dir: string, options: AwbExportOptions = {}): Promise<AwbExportResult> {
  const split = options.split ?? "validation";
  const literals = options.literals ?? "refuse";
  const manifest = await readJsonFile<{ format?: string; shards?: { split?: string }[] }>(join(outputDir, "manifest.json"));
  if (!manifest?.shards)
    throw new UserError(`${outputDir} has no manifest.json with shards: export agentworldbench reads a finished lwm-data output folder`);
  const splits = new Set(manifest.shards.map((shard) => shard.split ?? "train"));
  if (!splits.has(split))
    throw new UserError(
      `${outputDir} has no ${split} split (it has ${[...splits].join(", ") || "no shards"}): ${split === "validation" ? "run the job with output.validation_fraction > 0 for held-out trajectories, or pass --split train" : `pass --split ${[...splits][0]}`}`,
    );
  await mkdir(dir, { recursive: true });
  // A file of an earlier export for a domain this one does not have would be evaluated too.
  for (const name of await readdir(dir)) if (name.endsWith("_test.jsonl")) await rm(join(dir, name));
  // Rows of a trajectory come together, so trajectories are counted where the id changes.
  const streams = new Map<string, { stream: WriteStream; path: string; rows: number; trajectories: number; last: string }>();
  const refusedPath = join(dir, "refused.jsonl");
  const refused = createWriteStream(`${refusedPath}.tmp`);
  const result: AwbExportResult = { dir, split, files: [], refused: 0, refusedPath, skipped: {} };
  try {
    for await (const item of readWorldModelTurns(outputDir, { turns: options.turns ?? "all", splits: [split] })) {
      if (item.kind === "skip") {
        result.skipped[item.reason] = (result.skipped[item.reason] ?? 0) + 1;
        continue;
      }
      const { turn, escaper } = item;
      if (!escaper) throw new Error("export agentworldbench: a turn without its shard's text rule");
      const made = awbRow(turn, literals, escaper);
      if ("reason" in made) {
        result.refused += 1;
        await writeLine(refused, `${JSON.stringify({ prompt_id: turn.prompt_id, origin: turn.origin, reason: made.reason })}\n`);
        continue;
      }
      let file = streams.get(turn.domain);
      if (!file) {
        const path = join(dir, `${turn.domain}_test.jsonl`);
        file = { stream: createWriteStream(`${path}.tmp`), path, rows: 0, trajectories: 0, last: "" };
        streams.set(turn.domain, file);
      }
      file.rows += 1;
      if (file.trajectories === 0 || file.last !== turn.trajectory_id) file.trajectories += 1;
      file.last = turn.trajectory_id;
      await writeLine(file.stream, `${JSON.stringify(made.row)}\n`);
    }
  } catch (err) {
    for (const file of streams.values()) {
      file.stream.destroy();
      await rm(`${file.path}.tmp`, { force: true });
    }
    refused.destroy();
    await rm(`${refusedPath}.tmp`, { force: true });
    throw err;
  }
  for (const [domain, file] of [...streams].sort(([a], [b]) => a.localeCompare(b))) {
    file.stream.end();
    await once(file.stream, "finish");
    await rename(`${file.path}.tmp`, file.path);
    result.files.push({ domain, path: file.path, rows: file.rows, trajectories: file.trajectories });
  }
  refused.end();
  await once(refused, "finish");
  await rename(`${refusedPath}.tmp`, refusedPath);
  return result;
}
