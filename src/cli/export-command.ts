import { dirname, join } from "node:path";
import { UserError } from "../core/errors.ts";
import { exportAgentWorldBench } from "../export/awb-export.ts";
import { exportSettings } from "../export/export-settings.ts";
import { exportMegatron } from "../export/megatron-export.ts";
import { exportRl, type RlFormat } from "../export/rl-export.ts";
import { exportSwift, type LiteralsMode } from "../export/swift-export.ts";
import { type LiteralsMode as RlLiteralsMode, type TurnSelection, turnSourceKind } from "../export/world-model-turns.ts";
import { shownPath } from "./shown-path.ts";

/** `lwm-data export swift`: messages with per-message loss for trainers that tokenize themselves. */
export async function exportSwiftCommand(outputDir: string, options: { out?: string; literals?: LiteralsMode }): Promise<void> {
  const dir = options.out ?? join(outputDir, "export", "swift");
  const { files, refusedPath, literals } = await exportSwift(outputDir, dir, { literals: options.literals ?? "refuse" });
  const shown = shownPath;
  const refused = files.reduce((sum, f) => sum + f.refused, 0);
  const escaped = files.reduce((sum, f) => sum + f.escaped, 0);
  console.log(
    [
      `lwm-data export swift: ${files.map((f) => `${f.split} ${f.rows}`).join(", ")} conversation(s) → ${shown(dir)}`,
      ...files.map((f) => `  ${shown(f.path)}`),
      refused > 0
        ? `  refused: ${refused} sample(s) (${files.map((f) => `${f.split} ${f.refused}`).join(", ")}), each with its reason in ${shown(refusedPath)}${literals === "refuse" ? "; --literals escape exports those refused for special-token text, neutralized" : ""}`
        : `  refused: none (${shown(refusedPath)} is empty)`,
      ...(escaped > 0
        ? [`  neutralized: ${escaped} sample(s) exported with special-token literals escaped (their ids differ from the shards' there)`]
        : []),
      `  ms-swift:       swift sft --dataset ${files.map((f) => shown(f.path)).join(" ")} --loss_scale last_round --preserve_thinking true …  (assistant "loss" flags = our masking decisions; Qwen3: --template qwen3; docs/exports.md "Training with ms-swift")`,
      `  LLaMA-Factory:  --dataset_dir ${shown(dir)} --dataset lwm_train  (dataset_info.json; it ignores per-message loss)`,
    ].join("\n"),
  );
}

/** `lwm-data export rl`: prompts + ground truths for verl (Parquet) or OpenRLHF (JSONL), scored by python/lwm_reward. */
export async function exportRlCommand(
  source: string,
  options: { format: RlFormat; out?: string; config?: string; turns: TurnSelection; literals: RlLiteralsMode; validationFraction?: string },
): Promise<void> {
  const settings = exportSettings(options.config);
  const kind = await turnSourceKind(source);
  const dir =
    options.out ?? (kind === "output" ? join(source, "export", "rl", options.format) : join(dirname(source), "rl", options.format));
  let validationFraction = settings.validationFraction;
  if (options.validationFraction !== undefined) {
    validationFraction = Number(options.validationFraction);
    if (!(validationFraction >= 0 && validationFraction < 1))
      throw new UserError(`--validation-fraction: expected a number in [0, 1), got ${options.validationFraction}`);
  }
  const result = await exportRl(source, dir, {
    format: options.format,
    thresholds: settings.thresholds,
    turns: options.turns,
    literals: options.literals,
    validationFraction,
    splitSeed: settings.splitSeed,
    escaper: settings.escaper,
  });
  const shown = shownPath;
  const skipped = Object.entries(result.skipped).map(([reason, n]) => `${n} ${reason}`);
  const files = result.files.map((f) => shown(f.path));
  const trainer =
    options.format === "verl"
      ? `  verl:  data.train_files=${files[0] ?? "…"}${files[1] ? ` data.val_files=${files[1]}` : ""} reward.custom_reward_function.path=python/lwm_reward/reward.py reward.custom_reward_function.name=compute_score`
      : `  OpenRLHF (≥ 0.10.2):  --data.prompt_dataset ${files[0] ?? "…"} --data.input_key input --data.label_key label --data.apply_chat_template --data.max_len 12288 --reward.remote_url python/lwm_reward/reward.py`;
  console.log(
    [
      `lwm-data export rl (${options.format}): ${result.files.map((f) => `${f.split} ${f.rows}`).join(", ") || "no"} prompt(s) → ${shown(dir)}`,
      ...files.map((path) => `  ${path}`),
      `  by domain: ${Object.entries(result.byDomain)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([domain, n]) => `${domain} ${n}`)
        .join(", ")}`,
      result.refused > 0
        ? `  refused: ${result.refused} prompt(s), each with its reason in ${shown(result.refusedPath)}: ${[
            result.refused - result.conflicts > 0
              ? `${result.refused - result.conflicts} with special-token literals${options.literals === "refuse" ? " (--literals escape exports them neutralized)" : ""}`
              : "",
            result.conflicts > 0 ? `${result.conflicts} identical to another prompt whose observation differs` : "",
          ]
            .filter((part) => part !== "")
            .join("; ")}`
        : `  refused: none (${shown(result.refusedPath)} is empty)`,
      ...(skipped.length > 0 ? [`  skipped: ${skipped.join(", ")}`] : []),
      `  rewards: python/lwm_reward/reward.py applies the SFT verifier's format and fidelity rules (${options.config ? `thresholds of ${shown(options.config)}` : "default thresholds"}, in extra_info)`,
      trainer,
    ].join("\n"),
  );
}

/** `lwm-data export megatron`: Megatron-LM indexed datasets (.bin/.idx) of input_ids and of the loss mask. */
export async function exportMegatronCommand(outputDir: string, options: { out?: string; appendEod?: string }): Promise<void> {
  const dir = options.out ?? join(outputDir, "export", "megatron");
  let appendEod: number | undefined;
  if (options.appendEod !== undefined) {
    appendEod = Number(options.appendEod);
    if (!Number.isInteger(appendEod) || appendEod < 0) throw new UserError(`--append-eod: expected a token id, got ${options.appendEod}`);
  }
  const result = await exportMegatron(outputDir, dir, appendEod !== undefined ? { appendEod } : {});
  const shown = shownPath;
  console.log(
    [
      `lwm-data export megatron: ${result.splits.map((s) => `${s.split} ${s.documents} document(s), ${s.tokens} tokens (${s.dtype})`).join("; ")} → ${shown(dir)}`,
      ...result.splits.map(
        (s) =>
          `  ${shown(s.prefix)}.{bin,idx}  ${shown(s.prefix)}_loss_mask.{bin,idx}${s.files.some((f) => f.path.endsWith("_loss_weight.bin")) ? `  ${shown(s.prefix)}_loss_weight.{bin,idx} (float32 weights)` : ""}`,
      ),
      `  ${shown(result.metadataPath)}: splits, dtypes, tokenizer, sha256 of every file`,
      `  Megatron-LM:  --data-path ${shown(result.splits[0]?.prefix ?? join(dir, "train"))}   with python/lwm_megatron's MaskedGPTDataset to train the loss mask (docs/exports.md "Megatron-LM")`,
    ].join("\n"),
  );
}

/** `lwm-data export agentworldbench`: held-out trajectories as AgentWorldBench rows for Qwen-AgentWorld's eval/eval.py. */
export async function exportAgentWorldBenchCommand(
  outputDir: string,
  options: { out?: string; split: string; turns: TurnSelection; literals: RlLiteralsMode; controls?: boolean },
): Promise<void> {
  if (options.controls) {
    const { exportControlPrompts } = await import("../export/awb-controls-export.ts");
    const target = options.out ?? join(outputDir, "export", "agentworldbench-controls");
    const made = await exportControlPrompts(outputDir, target, { literals: options.literals });
    const kinds = Object.entries(made.kinds).map(([kind, n]) => `${kind} ${n}`);
    console.log(
      [
        `lwm-data export agentworldbench --controls: ${made.files.reduce((sum, f) => sum + f.rows, 0)} controllable prompt(s) of the validation split → ${shownPath(target)} (${kinds.join(", ") || "none"})`,
        ...made.files.map((f) => `  ${shownPath(f.path)}  ${f.rows} prompt(s)`),
        `  refused: ${made.refused} (${shownPath(made.refusedPath)})`,
      ].join("\n"),
    );
    return;
  }
  const dir = options.out ?? join(outputDir, "export", "agentworldbench");
  const result = await exportAgentWorldBench(outputDir, dir, { split: options.split, turns: options.turns, literals: options.literals });
  const shown = shownPath;
  const rows = result.files.reduce((sum, f) => sum + f.rows, 0);
  console.log(
    [
      `lwm-data export agentworldbench: ${rows} evaluated turn(s) of the ${result.split} split → ${shown(dir)}`,
      ...result.files.map((f) => `  ${shown(f.path)}  ${f.rows} turn(s) of ${f.trajectories} trajectory(ies)`),
      result.refused > 0
        ? `  refused: ${result.refused} turn(s) with special-token literals, each with its reason in ${shown(result.refusedPath)}`
        : `  refused: none (${shown(result.refusedPath)} is empty)`,
      `  eval:  python eval.py infer --data-dir ${shown(dir)} --model-base-url … --model-name …   (then judge, score)`,
    ].join("\n"),
  );
}
