import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { DottedOverride } from "../config/dotted-overrides.ts";
import { type LoadedConfig, loadConfig, stableStringify } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { packagePath, sourceAsset } from "../core/package-files.ts";
import { exportAgentWorldBench } from "../export/awb-export.ts";
import { TURN_CLASSES } from "../mask/turn-classes.ts";
import { meanInterval, pairedDifference } from "./confidence.ts";
import { inputRootOverrides } from "./input-root.ts";
import { type AblationReport, ablationMarkdown } from "./report.ts";
import { buildSeenOnce } from "./seen-once.ts";
import { cartesianVariants, type Variant, type Vary } from "./variants.ts";

export const TRAINER_SCRIPT = sourceAsset("ablate/train_proxy.py");
/** The project's test environment (test/python/ensure-venv.sh): torch (CPU), transformers, pyarrow. */
export const DEFAULT_PYTHON = packagePath(".venv/bin/python");

export type ProxyModel = "tiny" | "small";

export interface AblationOptions {
  configPath: string;
  varies: Vary[];
  outDir: string;
  /** Seeds 0 … seeds−1. */
  seeds: number;
  /** Input tokens each proxy model trains on. */
  tokens: number;
  model: ProxyModel;
  python: string;
  /** Validation share of every build when the config has none (the held-out set needs one). */
  validationFraction: number;
  /** Read the config's inputs from this folder instead of its input root (src/ablate/input-root.ts). */
  inputRoot?: string;
  /** Runs the pipeline for one loaded config (the CLI passes the runner: src/ablate never imports it). */
  build: (loaded: LoadedConfig) => Promise<void>;
  log?: (line: string) => void;
}

/** What a proxy run's JSON line carries (src/ablate/train_proxy.py). */
export interface ProxyResult {
  seed: number;
  eval_loss: number;
  eval_tokens: number;
  /** Loss and tokens of the informative observations alone (absent when the validation split has none). */
  eval_subset_loss?: number;
  eval_subset_tokens?: number;
  /**
   * Loss and tokens of the held-out observations seen once in the whole corpus (src/ablate/seen-once.ts):
   * tokens 0 and no loss when every held-out observation repeats; both absent when the subset could not be built.
   */
  eval_seen_once_loss?: number;
  eval_seen_once_tokens?: number;
  /**
   * The AgentWorldBench-layout export of the evaluation build: the mean over its rows (one per
   * evaluated turn) of each row's mean token loss on the row's expected observation; rows scored,
   * tokens scored, rows that could not be placed in the shards (absent when the export has no rows).
   */
  awb_loss?: number;
  awb_rows?: number;
  awb_tokens?: number;
  awb_unscored?: number;
  train_tokens: number;
  trained_weight: number;
  steps: number;
  vocab: number;
  unknown_tokens: number;
  weight_column: string;
  parameters: number;
  cpu_seconds: number;
}

/** Fixed trainer settings, part of every result's key. */
const TRAINER = { seq_len: 128, batch_size: 8, lr: 3e-3 };
const SPLIT_KEYS = ["output.validation_fraction", "output.split_seed"];
const INFORMATIVE_MASK: DottedOverride[] = [
  { key: "mask.policy", value: "turn-stats" },
  { key: "mask.domain_keep", value: {} },
  { key: "mask.keep", value: Object.fromEntries(TURN_CLASSES.map((name) => [name, name === "Echo" || name === "Boilerplate" ? 0 : 1])) },
];

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

interface PlannedVariant extends Variant {
  loaded: LoadedConfig;
  dir: string;
}

/**
 * Builds every variant and the evaluation set, trains the proxy model on each (variant, seed) not
 * already recorded under the same key, and writes DIR/ablate.json and DIR/ablate.md.
 */
export async function runAblation(options: AblationOptions): Promise<AblationReport> {
  const log = options.log ?? (() => {});
  const outDir = resolve(options.outDir);
  const variants = cartesianVariants(options.varies);
  const baseline = variants[0] as Variant;
  for (const vary of options.varies)
    if (SPLIT_KEYS.includes(vary.key))
      throw new UserError(`--vary ${vary.key}: the split must be the same in every variant, or the held-out set would leak into training`);

  // The held-out set needs a validation split: the config's, else one drawn here (same in every build).
  const base = loadConfig(options.configPath, { set: baseline.set });
  const common: DottedOverride[] = [
    ...(options.inputRoot ? inputRootOverrides(options.configPath, options.inputRoot) : []),
    ...(base.config.output.validation_fraction > 0 ? [] : [{ key: "output.validation_fraction", value: options.validationFraction }]),
  ];

  const load = (dir: string, set: DottedOverride[]) => loadConfig(options.configPath, { output: dir, set: [...common, ...set] });
  // The evaluation builds are unpacked and carry the text form: the AgentWorldBench export reads it,
  // and each turn's observation is placed in its own trajectory's row (both no-ops on the demo).
  // Their labels are 0/1 (float weights are a variant's training choice, and all-observations
  // refuses them), so a baseline with mask.weights on still gets an evaluation set.
  const evalLayout: DottedOverride[] = [
    { key: "output.include_messages", value: true },
    { key: "pack.enabled", value: false },
    { key: "mask.weights.enabled", value: false },
  ];
  const planned: PlannedVariant[] = variants.map((variant) => {
    const dir = join(outDir, "variants", variant.name);
    return { ...variant, dir, loaded: load(dir, variant.set) };
  });
  // Labels of the evaluation: every observation token of the baseline's validation split.
  const evalDir = join(outDir, "eval");
  const evalLoaded = load(evalDir, [...baseline.set, ...evalLayout, { key: "mask.policy", value: "all-observations" }]);
  // A subset scored alone: the observations the config's own classes call informative (every class
  // but Echo and Boilerplate, kept whole: no random draw), where mask policies differ the most.
  const informativeDir = join(outDir, "eval-informative");
  const informativeLoaded = load(informativeDir, [...baseline.set, ...evalLayout, ...INFORMATIVE_MASK]);
  // The same held-out turns as AgentWorldBench rows (what `lwm-data export agentworldbench` writes
  // from the evaluation build), scored one turn at a time: the benchmark's weighting, not tokens'.
  const awbDir = join(outDir, "eval-agentworldbench");

  log(`ablate: building the evaluation set (${evalDir})`);
  await options.build(evalLoaded);
  await options.build(informativeLoaded);
  // A third subset: the held-out observations seen once in the corpus (the others can be memorised).
  const seenOnce = await buildSeenOnce(outDir, (dir, mask) => load(dir, [...baseline.set, ...evalLayout, ...mask]), options.build);
  if (!seenOnce.available) log(`ablate: no seen-once column: ${seenOnce.reason}`);
  const awb = await exportAgentWorldBench(evalDir, awbDir, { split: "validation" });
  const awbRows = awb.files.reduce((sum, file) => sum + file.rows, 0);
  log(`ablate: ${awbRows} AgentWorldBench row(s) of the held-out turns (${awbDir}), ${awb.refused} refused`);
  for (const variant of planned) {
    log(`ablate: building variant ${variant.name}`);
    await options.build(variant.loaded);
  }

  const scriptSha = sha256(readFileSync(TRAINER_SCRIPT, "utf8"));
  // The AgentWorldBench rows are part of the evaluation: an export that writes other rows retrains.
  const awbSha = sha256(awb.files.map((file) => readFileSync(file.path, "utf8")).join("\n"));
  const evalSha = sha256(
    stableStringify([evalLoaded.config, informativeLoaded.config, awbSha, seenOnce.available ? seenOnce.loaded.config : null]),
  );
  const keyOf = (variant: PlannedVariant, seed: number) =>
    sha256(
      stableStringify({
        variant: sha256(stableStringify(variant.loaded.config)),
        eval: evalSha,
        trainer: { ...TRAINER, tokens: options.tokens, model: options.model, script: scriptSha },
        seed,
      }),
    );
  const resultPath = (variant: PlannedVariant, seed: number) => join(outDir, "results", variant.name, `seed-${seed}.json`);
  const readResult = (variant: PlannedVariant, seed: number): ProxyResult | undefined => {
    const path = resultPath(variant, seed);
    if (!existsSync(path)) return undefined;
    const stored = JSON.parse(readFileSync(path, "utf8")) as { key: string; result: ProxyResult };
    return stored.key === keyOf(variant, seed) ? stored.result : undefined;
  };

  const seeds = Array.from({ length: options.seeds }, (_, seed) => seed);
  const pending = planned.flatMap((variant) => seeds.filter((seed) => !readResult(variant, seed)).map((seed) => ({ variant, seed })));
  const done = planned.length * seeds.length - pending.length;
  log(`ablate: ${pending.length} proxy run(s) to train, ${done} already recorded`);
  if (pending.length > 0)
    await trainProxies(
      options,
      { evalDir, informativeDir, awbDir, seenOnceDir: seenOnce.available ? seenOnce.dir : undefined },
      pending,
      (variant, seed, result) => {
        mkdirSync(join(outDir, "results", variant.name), { recursive: true });
        writeFileSync(resultPath(variant, seed), `${JSON.stringify({ key: keyOf(variant, seed), result }, null, 2)}\n`);
        log(`ablate: ${variant.name} seed ${seed}: held-out loss ${result.eval_loss.toFixed(4)} (${result.cpu_seconds} CPU s)`);
      },
    );

  const bySeed = (variant: PlannedVariant, pick: (result: ProxyResult) => number) =>
    new Map(seeds.map((seed) => [seed, pick(readResult(variant, seed) as ProxyResult)]));
  const losses = planned.map((variant) => bySeed(variant, (result) => result.eval_loss));
  const informative = planned.map((variant) => bySeed(variant, (result) => result.eval_subset_loss ?? Number.NaN));
  const awbLosses = planned.map((variant) => bySeed(variant, (result) => result.awb_loss ?? Number.NaN));
  const seenOnceLosses = planned.map((variant) => bySeed(variant, (result) => result.eval_seen_once_loss ?? Number.NaN));
  // No number where no held-out observation is seen once (or the subset could not be built): n/a, not NaN.
  const seenOnceTokens = planned[0] ? (readResult(planned[0], 0)?.eval_seen_once_tokens ?? 0) : 0;
  const seenOnceScored = seenOnce.available && seenOnceTokens > 0;
  const report: AblationReport = {
    config: resolve(options.configPath),
    command: { varies: options.varies, seeds: options.seeds, tokens: options.tokens, model: options.model },
    trainer: { ...TRAINER, script_sha256: scriptSha },
    eval: {
      dir: evalDir,
      split: "validation",
      labels: "mask.policy all-observations of the baseline",
      informative: { dir: informativeDir, labels: "turn-stats classes of the baseline, Echo and Boilerplate left out, no random draw" },
      agentworldbench: {
        dir: awbDir,
        rows: awbRows,
        refused: awb.refused,
        scoring:
          "each row's expected observation (response[turn_idx - 1]) scored on the evaluation build's tokens; the mean over rows of each row's mean token loss",
      },
      seen_once: seenOnce.available
        ? {
            dir: seenOnce.dir,
            counts_dir: seenOnce.countsDir,
            observations: seenOnce.observations,
            tokens: seenOnceTokens,
            labels: "held-out observations whose canonical form occurs once in the corpus (mask.corpus_novelty count 1)",
          }
        : { unavailable: seenOnce.reason },
    },
    common_overrides: common,
    baseline: baseline.name,
    variants: planned.map((variant, index) => {
      const results = seeds.map((seed) => readResult(variant, seed) as ProxyResult);
      const byseed = losses[index] as Map<number, number>;
      return {
        name: variant.name,
        set: variant.set,
        dir: variant.dir,
        loss: meanInterval([...byseed.values()]),
        difference: index === 0 ? null : pairedDifference(byseed, losses[0] as Map<number, number>),
        informative_loss: meanInterval([...(informative[index] as Map<number, number>).values()]),
        informative_difference:
          index === 0 ? null : pairedDifference(informative[index] as Map<number, number>, informative[0] as Map<number, number>),
        ...(awbRows > 0
          ? {
              awb_loss: meanInterval([...(awbLosses[index] as Map<number, number>).values()]),
              awb_difference:
                index === 0 ? null : pairedDifference(awbLosses[index] as Map<number, number>, awbLosses[0] as Map<number, number>),
            }
          : {}),
        seen_once_loss: seenOnceScored ? meanInterval([...(seenOnceLosses[index] as Map<number, number>).values()]) : null,
        seen_once_difference:
          seenOnceScored && index > 0
            ? pairedDifference(seenOnceLosses[index] as Map<number, number>, seenOnceLosses[0] as Map<number, number>)
            : null,
        trained_weight: meanInterval(results.map((result) => result.trained_weight)).mean,
        runs: results,
      };
    }),
  };
  writeFileSync(join(outDir, "ablate.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, "ablate.md"), ablationMarkdown(report));
  return report;
}

/** One Python process for every pending run (torch's import is paid once); each JSON line is recorded as it arrives. */
async function trainProxies(
  options: AblationOptions,
  dirs: { evalDir: string; informativeDir: string; awbDir: string; seenOnceDir: string | undefined },
  pending: { variant: PlannedVariant; seed: number }[],
  record: (variant: PlannedVariant, seed: number, result: ProxyResult) => void,
): Promise<void> {
  const args = [
    TRAINER_SCRIPT,
    "--eval-dir",
    dirs.evalDir,
    "--subset-dir",
    dirs.informativeDir,
    "--awb-dir",
    dirs.awbDir,
    ...(dirs.seenOnceDir ? ["--seen-once-dir", dirs.seenOnceDir] : []),
    "--tokens",
    String(options.tokens),
    "--model",
    options.model,
    "--seq-len",
    String(TRAINER.seq_len),
    "--batch-size",
    String(TRAINER.batch_size),
    "--lr",
    String(TRAINER.lr),
    ...pending.flatMap(({ variant, seed }) => ["--run", variant.dir, String(seed)]),
  ];
  const child = spawn(options.python, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, OMP_NUM_THREADS: "1" } });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolveExit, reject) => {
    child.on("error", (err) => reject(new UserError(`cannot start the proxy trainer with ${options.python}: ${err.message} (--python)`)));
    child.on("close", (code) => resolveExit(code));
  });
  let next = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    if (!line.startsWith("{")) continue;
    const run = pending[next++];
    if (!run) break;
    record(run.variant, run.seed, JSON.parse(line) as ProxyResult);
  }
  const code = await exited;
  if (code !== 0 || next !== pending.length)
    throw new UserError(
      `the proxy trainer (${options.python} ${TRAINER_SCRIPT}) exited ${code} after ${next} of ${pending.length} run(s):\n${stderr.trim()}`,
    );
}
