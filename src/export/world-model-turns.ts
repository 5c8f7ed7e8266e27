import { createReadStream, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UserError } from "../core/errors.ts";
import { DOMAINS, type Domain } from "../core/trajectory.ts";
import { readJsonFile } from "../io/json-file.ts";
import { readLines } from "../io/read-lines.ts";
import { splitForTrajectory } from "../output/split-assignment.ts";
import type { ChatMessage } from "../sft/teacher/chat-types.ts";
import type { LiteralEscaper } from "./special-literals.ts";
import { openTextFormShard } from "./text-form-shard.ts";

/**
 * World-model turns for the exports that hand a trainer or an evaluator prompts with their real
 * observation (`export rl`, `export agentworldbench`): for turn t of a trajectory, the system
 * message, turns 0…t−1 as user(action) / assistant(observation) pairs, the action of turn t, and
 * the observation it really got. Two sources give them:
 *
 * - a prompts file from `lwm-data sft prompts --format chat` (one `SftPrompt` per line: the SFT
 *   stage's own prompts, its turn selection and `max_history_turns`);
 * - a finished output folder whose shards carry the text form (`output.include_messages: true`, not
 *   packed): every conversation's observation turns, or only those the turn-level masking trained.
 *
 * Texts are the originals (the messages column un-escaped). Whether a special-token literal in a
 * text may go out is the caller's `literals` policy (see `literalVerdict`).
 */
export interface WorldModelTurn {
  /** `<trajectory id>#<turn index>`, as `sft prompts` names it. */
  prompt_id: string;
  trajectory_id: string;
  domain: Domain;
  /** 0-based turn of the trajectory whose observation is predicted. */
  turn_index: number;
  /** Turns in the whole trajectory, when the source holds it (an output folder). */
  total_turns?: number;
  /** `file:line` of the source record. */
  source: string;
  split: string;
  /** system, (user = action, assistant = observation)*, user = the action of `turn_index`. */
  messages: ChatMessage[];
  /** The observation the environment returned. */
  ground_truth: string;
  /** Where the turn was read: `<prompts file>:<line>` or `<shard>#row=<n>`. */
  origin: string;
}

/** `trained`: only turns whose observation carries the loss in the output (the masking kept them); `all`: every turn. */
export type TurnSelection = "all" | "trained";

export interface TurnSourceOptions {
  /** Output folder: which observation turns become prompts (default `all`). */
  turns?: TurnSelection;
  /** Output folder: only these splits (default: every split). */
  splits?: readonly string[];
  /** Prompts file: the split of a trajectory, as `output.validation_fraction` / `split_seed` draw it (default: all train). */
  validationFraction?: number;
  splitSeed?: number;
}

/** What was read: turns, and what was passed over (mixture repeats, text documents), counted. */
export type TurnItem = { kind: "turn"; turn: WorldModelTurn; escaper?: LiteralEscaper } | { kind: "skip"; reason: string };

const promptSchema = z.object({
  prompt_id: z.string().min(1),
  trajectory_id: z.string().min(1),
  domain: z.enum(DOMAINS),
  turn_index: z.number().int().nonnegative(),
  source: z.string().optional(),
  messages: z
    .array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() }))
    .min(2)
    .refine((messages) => messages.at(-1)?.role === "user", "the last message must be the action (role user)"),
  ground_truth: z.string(),
});

export type TurnSourceKind = "prompts" | "output";

/** Which source a path is: a folder with manifest.json, or a prompts JSONL file. */
export async function turnSourceKind(path: string): Promise<TurnSourceKind> {
  if (!existsSync(path)) throw new UserError(`${path} does not exist`);
  if (!statSync(path).isDirectory()) return "prompts";
  const manifest = await readJsonFile<{ format?: string }>(join(path, "manifest.json"));
  if (!manifest) throw new UserError(`${path} has no manifest.json: expected a finished lwm-data output folder or a prompts file`);
  if (manifest.format === "lwm-data/sft")
    throw new UserError(
      `${path} is an SFT output: its shards hold the teacher's kept answers, not the real observations. ` +
        "Export from the prompts of the same job instead (lwm-data sft prompts <config> --out prompts.jsonl), or from its CPT output (output.include_messages: true)",
    );
  return "output";
}

/** Reads turns from a prompts file or an output folder (see `WorldModelTurn`). */
export async function* readWorldModelTurns(path: string, options: TurnSourceOptions = {}): AsyncGenerator<TurnItem> {
  if ((await turnSourceKind(path)) === "prompts") yield* promptsFileTurns(path, options);
  else yield* outputTurns(path, options);
}

async function* promptsFileTurns(path: string, options: TurnSourceOptions): AsyncGenerator<TurnItem> {
  const fraction = options.validationFraction ?? 0;
  const seed = options.splitSeed ?? 0;
  for await (const line of readLines(createReadStream(path), 1 << 30)) {
    if (line.text.trim() === "") continue;
    const where = `${path}:${line.lineNo}`;
    let raw: unknown;
    try {
      raw = JSON.parse(line.text);
    } catch (err) {
      throw new UserError(`${where}: not JSON (${(err as Error).message})`);
    }
    if (typeof raw === "object" && raw !== null && "custom_id" in raw)
      throw new UserError(
        `${where}: an OpenAI Batch request (sft prompts --format openai-batch: the teacher's prompt, with its instructions and hints); write the prompts with --format chat`,
      );
    const parsed = promptSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UserError(`${where}: not an lwm-data prompt (${issue?.path.join(".") || "line"}: ${issue?.message})`);
    }
    const prompt = parsed.data;
    yield {
      kind: "turn",
      turn: {
        prompt_id: prompt.prompt_id,
        trajectory_id: prompt.trajectory_id,
        domain: prompt.domain,
        turn_index: prompt.turn_index,
        source: prompt.source ?? "",
        split: splitForTrajectory(prompt.trajectory_id, fraction, seed),
        messages: prompt.messages,
        ground_truth: prompt.ground_truth,
        origin: where,
      },
    };
  }
}

interface ShardMessage {
  role: string;
  content: string;
  loss: boolean;
}

async function* outputTurns(dir: string, options: TurnSourceOptions): AsyncGenerator<TurnItem> {
  const manifest = await readJsonFile<{ shards?: { path: string; split?: string }[] }>(join(dir, "manifest.json"));
  const shards = [...(manifest?.shards ?? [])]
    .filter((shard) => !options.splits || options.splits.includes(shard.split ?? "train"))
    .sort((a, b) => (a.split ?? "train").localeCompare(b.split ?? "train") || a.path.localeCompare(b.path));
  const selection = options.turns ?? "all";
  for (const shard of shards) {
    const path = join(dir, shard.path);
    const { table, escaper } = await openTextFormShard(path, "to export its turns");
    try {
      let row = 0;
      for (let group = 0; group < table.rowGroupRows.length; group++) {
        const batch = await table.readRowGroup(group, ["id", "domain", "source", "messages"]);
        const [ids, domains, sources, messagesColumn] = ["id", "domain", "source", "messages"].map((name) => batch.getChild(name));
        for (let i = 0; i < batch.numRows; i++, row++) {
          const id = String(ids?.get(i) ?? "");
          // A mixture's repeat of a record (`<id>#copy<N>`) would be the same prompts again.
          if (/#copy\d+$/.test(id)) {
            yield { kind: "skip", reason: "mixture repeat" };
            continue;
          }
          const cell = messagesColumn?.get(i) as { toArray(): { toJSON(): ShardMessage }[] } | null;
          const messages = (cell?.toArray() ?? []).map((message) => message.toJSON());
          if (messages.some((message) => message.role === "text")) {
            yield { kind: "skip", reason: "text document" };
            continue;
          }
          const domain = String(domains?.get(i) ?? "");
          if (!(DOMAINS as readonly string[]).includes(domain)) throw new UserError(`${path} row ${row}: unknown domain ${domain}`);
          const original = messages.map((message) => ({ ...message, content: escaper.unescape(message.content) }));
          yield* conversationTurns(original, {
            id,
            domain: domain as Domain,
            source: String(sources?.get(i) ?? ""),
            split: shard.split ?? "train",
            origin: `${shard.path}#row=${row}`,
            selection,
            escaper,
          });
        }
      }
    } finally {
      table.close();
    }
  }
}

/** The observation turns of one CPT conversation (system, (user, assistant)*) as prompts. */
function* conversationTurns(
  messages: ShardMessage[],
  context: { id: string; domain: Domain; source: string; split: string; origin: string; selection: TurnSelection; escaper: LiteralEscaper },
): Generator<TurnItem> {
  const [system, ...rest] = messages;
  const shapeError = (why: string) => new UserError(`${context.origin} (${context.id}): ${why}; is this an lwm-data CPT output?`);
  if (system?.role !== "system") throw shapeError("the conversation does not start with a system message");
  const total = Math.floor(rest.length / 2);
  if (rest.length % 2 !== 0) throw shapeError("the conversation is not (action, observation) pairs");
  for (let t = 0; t < total; t++) {
    const [action, observation] = [rest[2 * t] as ShardMessage, rest[2 * t + 1] as ShardMessage];
    if (action.role !== "user" || observation.role !== "assistant") throw shapeError(`turn ${t} is not a user then an assistant message`);
    if (context.selection === "trained" && !observation.loss) continue;
    const history = rest.slice(0, 2 * t + 1).map(({ role, content }) => ({ role: role as ChatMessage["role"], content }));
    yield {
      kind: "turn",
      turn: {
        prompt_id: `${context.id}#${t}`,
        trajectory_id: context.id,
        domain: context.domain,
        turn_index: t,
        total_turns: total,
        source: context.source,
        split: context.split,
        messages: [{ role: "system", content: system.content }, ...history],
        ground_truth: observation.content,
        origin: context.origin,
      },
      escaper: context.escaper,
    };
  }
}

/**
 * What to do with texts that hold a special-token literal (`<|im_start|>`, `</think>`, …) the
 * trainer's tokenizer or template would read as a control token (docs/output.md "Text form"): `refuse`
 * leaves the turn out with its reason; `escape` sends the texts neutralized by the text form's
 * rule (a U+200D after the literal's first character). A literal the rule cannot neutralize is
 * refused either way.
 */
export type LiteralsMode = "refuse" | "escape";

/** The verdict on a set of texts: go out as they are, go out escaped, or be refused with the reason. */
export function literalVerdict(
  texts: readonly { where: string; text: string }[],
  escaper: LiteralEscaper,
  mode: LiteralsMode,
): { ok: true; escape: boolean } | { ok: false; reason: string } {
  const quoted = (list: string[]) => list.map((literal) => JSON.stringify(literal)).join(", ");
  let neutralize = false;
  for (const { where, text } of texts) {
    const raw = escaper.unescapableIn(text);
    if (raw.length > 0)
      return {
        ok: false,
        reason: `${where} holds ${quoted(raw)}, a special token the text rule cannot neutralize: a trainer's tokenizer would read it as the control token`,
      };
    const found = escaper.literals.escaped.filter((literal) => text.includes(literal));
    if (found.length === 0) continue;
    if (mode === "refuse")
      return {
        ok: false,
        reason: `${where} holds the special-token literal ${quoted(found)} as text: a trainer's tokenizer would read it as the control token (--literals escape exports it neutralized)`,
      };
    neutralize = true;
  }
  return { ok: true, escape: neutralize };
}
