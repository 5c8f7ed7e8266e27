import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { detectControls } from "../controls/detect-controls.ts";
import { UserError } from "../core/errors.ts";
import { DOMAINS, type Domain, type Trajectory } from "../core/trajectory.ts";
import { readJsonFile } from "../io/json-file.ts";
import { type AwbRow, actionMarkup, awbRow, observationMarkup } from "./awb-export.ts";
import { openTextFormShard } from "./text-form-shard.ts";
import type { LiteralsMode, WorldModelTurn } from "./world-model-turns.ts";

/**
 * `lwm-data export agentworldbench --controls` (issue 37, item 6): held-out controllable prompts in
 * the AgentWorldBench layout, so a trained world model's instruction-following can be measured.
 * From the validation split only (trajectories no training row came from), the samples whose system
 * message carries a control instruction: natural edge cases stated (`instructed`), synthesized ones
 * (`synthesized`), and the normal halves (`normal`, `counterfactual`: told to behave normally). Each
 * row is an `AwbRow` (eval.py reads it as it reads the plain export) plus `lwm_control`: what the
 * model was told, and what its answer must show at the evaluated turn, checkable with the project's
 * own detectors (`controlFollowed`).
 */
export interface AwbControl {
  kind: "instructed" | "synthesized" | "normal" | "counterfactual";
  /** The instruction in the system message (also inside `system_str`). */
  instruction: string;
  /** `edge_case`: the observation must show `labels`' kinds; `normal`: it must show none. */
  expect: "edge_case" | "normal";
  /** The expected observation's edge cases at this turn: kind and evidence span (code points of the observation). */
  labels: { label: string; start: number; end: number }[];
}

export interface AwbControlRow extends AwbRow {
  lwm_control: AwbControl;
}

const EDGE_KINDS = new Set(["instructed", "synthesized"]);
const NORMAL_KINDS = new Set(["normal", "counterfactual"]);

interface ShardMessage {
  role: string;
  content: string;
}

interface ControlCell {
  label: string;
  turn: number;
  start: number;
  end: number;
}

/**
 * The evaluated turns of one controlled sample: each turn its instruction states an edge case at
 * (a synthesized sample's is its last), or for a normal one its last turn.
 */
export function controlTurns(
  kind: string,
  controls: readonly ControlCell[],
  turns: number,
): { turn: number; control: Omit<AwbControl, "instruction"> }[] {
  if (NORMAL_KINDS.has(kind))
    return turns > 0 ? [{ turn: turns - 1, control: { kind: kind as AwbControl["kind"], expect: "normal", labels: [] } }] : [];
  if (!EDGE_KINDS.has(kind)) return [];
  const byTurn = new Map<number, AwbControl["labels"]>();
  for (const { label, turn, start, end } of controls) {
    const list = byTurn.get(turn) ?? [];
    list.push({ label, start, end });
    byTurn.set(turn, list);
  }
  return [...byTurn]
    .sort(([a], [b]) => a - b)
    .map(([turn, labels]) => ({ turn, control: { kind: kind as AwbControl["kind"], expect: "edge_case", labels } }));
}

export interface AwbControlsResult {
  dir: string;
  files: { domain: string; path: string; rows: number }[];
  /** Rows by control kind. */
  kinds: Record<string, number>;
  refused: number;
  refusedPath: string;
  /** Samples passed over: no instruction (`none`, `uninstructed`), mixture repeats, text documents. */
  skipped: Record<string, number>;
}

async function writeLine(stream: WriteStream, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, "drain");
}

/** Writes `<dir>/<domain>_test.jsonl` of controllable prompts from an output folder's validation split. */
export async function exportControlPrompts(
  outputDir: string,
  dir: string,
  options: { literals?: LiteralsMode } = {},
): Promise<AwbControlsResult> {
  const literals = options.literals ?? "refuse";
  const manifest = await readJsonFile<{ shards?: { path: string; split?: string }[]; controls?: unknown }>(
    join(outputDir, "manifest.json"),
  );
  if (!manifest?.shards)
    throw new UserError(`${outputDir} has no manifest.json with shards: export agentworldbench reads a finished lwm-data output folder`);
  if (manifest.controls === undefined)
    throw new UserError(
      `${outputDir} was made without controls: --controls needs a job with controls.enabled (e.g. configs/demo-rephrase.yaml)`,
    );
  const shards = manifest.shards.filter((shard) => (shard.split ?? "train") === "validation").sort((a, b) => a.path.localeCompare(b.path));
  if (shards.length === 0)
    throw new UserError(
      `${outputDir} has no validation split: run the job with output.validation_fraction > 0, so the prompts are held out`,
    );
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(dir)) if (name.endsWith("_test.jsonl")) await rm(join(dir, name));
  const result: AwbControlsResult = { dir, files: [], kinds: {}, refused: 0, refusedPath: join(dir, "refused.jsonl"), skipped: {} };
  const streams = new Map<string, { stream: WriteStream; path: string; rows: number }>();
  const refused = createWriteStream(`${result.refusedPath}.tmp`);
  const skip = (reason: string) => {
    result.skipped[reason] = (result.skipped[reason] ?? 0) + 1;
  };
  for (const shard of shards) {
    const path = join(outputDir, shard.path);
    const { table, escaper } = await openTextFormShard(path, "to export its turns");
    try {
      if (!table.schema.fields.some((field) => field.name === "control_kind"))
        throw new UserError(`${path} has no control columns: --controls needs a job with controls.enabled`);
      let row = 0;
      for (let group = 0; group < table.rowGroupRows.length; group++) {
        const names = ["id", "domain", "source", "messages", "control_kind", "control_instruction", "controls"];
        const batch = await table.readRowGroup(group, names);
        const [ids, domains, sources, messagesColumn, kinds, instructions, controlsColumn] = names.map((name) => batch.getChild(name));
        for (let i = 0; i < batch.numRows; i++, row++) {
          const id = String(ids?.get(i) ?? "");
          if (/#copy\d+$/.test(id)) {
            skip("mixture repeat");
            continue;
          }
          const kind = String(kinds?.get(i) ?? "none");
          const messages = ((messagesColumn?.get(i) as { toArray(): { toJSON(): ShardMessage }[] } | null)?.toArray() ?? []).map((m) =>
            m.toJSON(),
          );
          const domain = String(domains?.get(i) ?? "");
          if (!(DOMAINS as readonly string[]).includes(domain) || messages[0]?.role !== "system") {
            skip("text document");
            continue;
          }
          const cells = ((controlsColumn?.get(i) as { toArray(): { toJSON(): ControlCell }[] } | null)?.toArray() ?? []).map((c) =>
            c.toJSON(),
          );
          const original = messages.map((m) => ({ role: m.role, content: escaper.unescape(m.content) }));
          const [system, ...rest] = original;
          const total = Math.floor(rest.length / 2);
          const evaluated = controlTurns(kind, cells, total);
          if (evaluated.length === 0) skip(`control_kind ${kind}`);
          for (const { turn, control } of evaluated) {
            const turnOf: WorldModelTurn = {
              prompt_id: `${id}#${turn}`,
              trajectory_id: id,
              domain: domain as Domain,
              turn_index: turn,
              total_turns: total,
              source: String(sources?.get(i) ?? ""),
              split: "validation",
              messages: [
                { role: "system", content: system?.content ?? "" },
                ...rest.slice(0, 2 * turn + 1).map((m) => ({ role: m.role as "user" | "assistant", content: m.content })),
              ],
              ground_truth: rest[2 * turn + 1]?.content ?? "",
              origin: `${shard.path}#row=${row}`,
            };
            const made = awbRow(turnOf, literals, escaper);
            if ("reason" in made) {
              result.refused += 1;
              await writeLine(refused, `${JSON.stringify({ prompt_id: turnOf.prompt_id, origin: turnOf.origin, reason: made.reason })}\n`);
              continue;
            }
            const out: AwbControlRow = { ...made.row, lwm_control: { ...control, instruction: String(instructions?.get(i) ?? "") } };
            let file = streams.get(domain);
            if (!file) {
              const target = join(dir, `${domain}_test.jsonl`);
              file = { stream: createWriteStream(`${target}.tmp`), path: target, rows: 0 };
              streams.set(domain, file);
            }
            file.rows += 1;
            result.kinds[control.kind] = (result.kinds[control.kind] ?? 0) + 1;
            await writeLine(file.stream, `${JSON.stringify(out)}\n`);
          }
        }
      }
    } finally {
      table.close();
    }
  }
  for (const [domain, file] of [...streams].sort(([a], [b]) => a.localeCompare(b))) {
    file.stream.end();
    await once(file.stream, "finish");
    await rename(`${file.path}.tmp`, file.path);
    result.files.push({ domain, path: file.path, rows: file.rows });
  }
  refused.end();
  await once(refused, "finish");
  await rename(`${result.refusedPath}.tmp`, result.refusedPath);
  return result;
}

const stripPrefix = (text: string, prefix: RegExp): string => text.replace(prefix, "");

/** The trajectory a row holds, its evaluated turn's observation replaced by `observation`. */
export function rowTrajectory(row: AwbControlRow, observation: string): Trajectory {
  const turns = row.prompt.map((action, k) => ({
    action: stripPrefix(action, /^### Turn \d+\n\*\*Action:\*\*\n/),
    observation: k === row.prompt.length - 1 ? observation : stripPrefix(row.response[k] ?? "", /^\*\*Environment Observation:\*\*\n/),
  }));
  return { id: row.id, domain: row.task, source: { uri: row.lwm_source, format: "agentworldbench-controls" }, turns };
}

/**
 * Whether a model's predicted observation follows the row's control, by the project's own
 * detectors: for `edge_case`, every expected kind is detected at the evaluated turn; for `normal`,
 * none is. `found` lists the kinds detected there.
 */
export function controlFollowed(row: AwbControlRow, predicted: string): { followed: boolean; found: string[] } {
  const trajectory = rowTrajectory(row, predicted);
  const at = trajectory.turns.length - 1;
  const found = [
    ...new Set(
      detectControls(trajectory)
        .filter((label) => label.turn === at)
        .map((label) => label.label),
    ),
  ].sort();
  if (row.lwm_control.expect === "normal") return { followed: found.length === 0, found };
  const expected = new Set(row.lwm_control.labels.map((label) => label.label));
  return { followed: [...expected].every((kind) => (found as string[]).includes(kind)), found };
}

export { actionMarkup, observationMarkup };
