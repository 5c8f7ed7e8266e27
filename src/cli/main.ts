import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { UserError } from "../core/errors.ts";
import { packagePath } from "../core/package-files.ts";
import { DOMAINS } from "../core/trajectory.ts";

/**
 * A command's action, its module loaded only when it runs: start-up skips the other commands'
 * dependencies (DuckDB, Arrow readers, the Hub client, …).
 */
// biome-ignore lint/suspicious/noExplicitAny: commander hands actions untyped arguments.
function lazy<K extends string, M extends Record<K, (...args: any[]) => unknown>>(load: () => Promise<M>, name: K) {
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  return async (...args: any[]) => {
    await (await load())[name](...args);
  };
}

const program = new Command()
  .name("lwm-data")
  .description(
    "Config-driven CPT/SFT data pipeline for language world models: reads agent trajectories, " +
      "renders them with the model's chat template, tokenizes with the trainer's tokenizer, builds " +
      "loss masks and writes sharded Parquet that trainers load directly.",
  )
  .version((JSON.parse(readFileSync(packagePath("package.json"), "utf8")) as { version: string }).version)
  .showHelpAfterError()
  .exitOverride();

const collect = (value: string, previous: string[]) => [...previous, value];

/** `--format` / `--domain`: how the `--input` globs are read, as `inputs[].format` / `inputs[].domain`. */
const inputFormatOptions = (command: Command) =>
  command
    .option(
      "--format <name>",
      "reader for the --input files, as inputs[].format (without --input: for every input of the config): auto (detect from content) or a format of docs/input-formats.md 'Input formats'",
    )
    .addOption(
      new Option("--domain <domain>", "domain for records that name none, for the --input files (as inputs[].domain)").choices([
        ...DOMAINS,
      ]),
    );

inputFormatOptions(
  program
    .command("run")
    .description("run a pipeline job: read inputs, render, tokenize, mask, write shards + manifest")
    .argument("<config>", "job config (YAML); see configs/demo.yaml and docs/configuration.md 'Config reference'")
    .option("-i, --input <glob>", "input file, folder or glob, replacing the config's inputs (repeatable)", collect, []),
)
  .option("-o, --output <dir>", "output folder, replacing output.dir")
  .addOption(
    new Option("--progress <mode>", "progress on stderr: a bar on a terminal (auto), bar, json lines for cluster logs, none")
      .choices(["auto", "bar", "json", "none"])
      .default("auto"),
  )
  .option("-w, --workers <n>", "worker threads running tasks in parallel (default: all cores)", "auto")
  .option(
    "--rank <r>",
    "run only this rank's tasks (every world-size-th task from r); default from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX",
  )
  .option(
    "--world-size <n>",
    "number of ranks sharing the job (default from SLURM_ARRAY_TASK_COUNT, or LWM_WORLD_SIZE with JOB_COMPLETION_INDEX)",
  )
  .option("--overwrite", "replace an output folder that holds a different job's output (otherwise refused)")
  .option(
    "-b, --benchmark <glob>",
    "benchmark file or glob to decontaminate against, added to decontaminate.benchmarks (repeatable)",
    collect,
    [],
  )
  .addOption(
    new Option(
      "--stage <stage[,stage…]>",
      "run only this stage's units (this rank's share): one of the job's stages, which `validate` lists (signatures, clusters, select, score, facts, selection, count, weights, records); a cluster runs each stage as its own array. A comma-separated list runs those stages in turn in this one process, in the job's order (e.g. signatures,clusters,select: one start-up instead of three). Default: every stage in turn",
    ),
  )
  .addHelpText(
    "after",
    `
Stages (docs/contributing.md "Job stages"): the config decides which run, in this order: curation (dedup,
decontaminate: signatures → clusters → select), scoring (scorers: score), selection (select: facts →
selection), mixture shares (count → weights), then records (per task, always). \`validate\` lists a
job's stages. Each stage's units leave completion markers; a stage starts when the one before it is
complete. Records left out go to <dir>/filtered/task-NNNNN.jsonl with the stage, rule and reason.

Resume: finished tasks leave tasks/task-NNNNN.done.json and long tasks checkpoint at shard
boundaries, so rerunning the same command after a crash redoes only unfinished work. The same
config and inputs give byte-identical shards whatever --workers, --rank or --world-size.

Output: <dir>/data/SPLIT-BUCKET-TASK-SEGMENT.parquet (SPLIT: train, validation), <dir>/stats/turns-TASK-SEGMENT.parquet,
<dir>/quarantine/task-NNNNN.jsonl (records rejected, with file/line/offset/reason),
<dir>/filtered/task-NNNNN.jsonl (records left out: stage read/exact/near/decontaminate/filter/selection, rule, reason),
<dir>/manifest.json (written once every task is done; with ranks, by the last one or \`lwm-data finalize\`).
Exit status: 0 on success (also when records were quarantined), 1 on a config or I/O error.`,
  )
  .action(lazy(() => import("./run-command.ts"), "runCommand"));

inputFormatOptions(
  program
    .command("plan")
    .description("print the tasks a job is cut into (input.task_bytes) and which rank runs each, without processing data")
    .argument("<config>", "job config (YAML)")
    .option("-i, --input <glob>", "input file, folder or glob, replacing the config's inputs (repeatable)", collect, []),
)
  .option("-o, --output <dir>", "output folder, replacing output.dir (to show which tasks are already done)")
  .option("--world-size <n>", "show the rank of each task for this many ranks", "1")
  .option("-b, --benchmark <glob>", "benchmark file or glob, added to decontaminate.benchmarks (repeatable)", collect, [])
  .option("--json", "print the plan as JSON")
  .action(lazy(() => import("./plan-command.ts"), "planCommand"));

const launch = program
  .command("launch")
  .description(
    "write (and for Slurm, submit) the cluster job that runs a config's tasks as ranks: Slurm job array or Kubernetes Indexed Job",
  )
  .addHelpText(
    "after",
    "\nBoth claim the output folder first (tasks/plan.json), then every rank runs `lwm-data run --rank i --world-size N`;\nthe last rank to finish writes the manifest, and the finalize job checks that every task finished.\nWith more stages than records (curation, scorers, select, mixture shares), one array per stage\n(e.g. signatures → clusters → select → records), each started after the previous one succeeded, each rank running `lwm-data run --stage S --rank i --world-size N`.",
  );

const clusterOptions = (command: Command) =>
  inputFormatOptions(
    command
      .argument("<config>", "job config (YAML); inputs, config and output must be on storage every node sees, at the same path")
      .option(
        "-i, --input <glob>",
        "input file, folder or glob, replacing the config's inputs (repeatable); passed on to every rank",
        collect,
        [],
      ),
  )
    .option("-o, --output <dir>", "output folder, replacing output.dir")
    .option("-b, --benchmark <glob>", "benchmark file or glob to decontaminate against (repeatable); passed on to every rank", collect, [])
    .option(
      "--world-size <n>",
      "ranks (array tasks / completions); default: one per unit of the largest stage (per task without curation), at most 1000",
    )
    .option("-w, --workers <n>", "worker threads per rank", "1")
    .option("--job-name <name>", "job name", "lwm-data")
    .option("--launch-dir <dir>", "folder for the files written (default: <output>/launch; ./lwm-launch/<job-name> for an s3:// output)")
    .option("--overwrite", "replace an output folder that holds a different job's output");

clusterOptions(launch.command("slurm"))
  .description(
    "write <output>/launch/slurm-array.sbatch (+ slurm-finalize.sbatch), or with curation one slurm-<stage>.sbatch per stage chained afterok; --submit runs sbatch",
  )
  .option("--cpus-per-task <n>", "CPUs per array task (default: --workers)")
  .option("--partition <name>", "Slurm partition")
  .option("--time <limit>", "time limit per array task, e.g. 04:00:00")
  .option("--mem <size>", "memory per array task, e.g. 16G")
  .option("--max-concurrent <n>", "at most this many array tasks at once (--array=0-N%K)")
  .option("--sbatch <directive>", "extra #SBATCH directive, e.g. --account=proj (repeatable)", collect, [])
  .option("--submit", "submit both jobs with sbatch and print their ids")
  .action(lazy(() => import("./launch-command.ts"), "launchSlurmCommand"));

clusterOptions(launch.command("k8s"))
  .description(
    "write <output>/launch/k8s-job.yaml (Indexed Job), or with curation one k8s-<stage>.yaml per stage, and k8s-finalize.yaml, with the kubectl steps",
  )
  .requiredOption("--image <image>", "container image with lwm-data installed")
  .option("--pvc <claim>", "ReadWriteMany PersistentVolumeClaim holding inputs, config and output")
  .option("--host-path <dir>", "node directory instead of a PVC (single-node clusters)")
  .option("--mount-path <dir>", "where the volume is mounted in the pods (same paths as here)", "/data")
  .option(
    "--object-storage",
    "no volume: config in a ConfigMap, inputs as URIs or absolute paths in the image, output s3:// (the default for an s3:// output without --pvc/--host-path)",
  )
  .option(
    "--secret <name>",
    "Secret whose keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, HF_TOKEN…) become the pods' environment",
  )
  .option("--no-secret", "no credentials Secret although S3 is used: the cluster grants access (IRSA, workload identity, node role)")
  .option("--staging-size <size>", "size limit of each pod's emptyDir staging folder for an s3:// output", "20Gi")
  .option("--namespace <ns>", "namespace")
  .option("--parallelism <n>", "pods at once (default: all ranks)")
  .option("--memory <size>", "memory request and limit per pod, e.g. 8Gi")
  .option("--lwm-data <argv>", "command that starts lwm-data in the image", "lwm-data")
  .action(lazy(() => import("./launch-command.ts"), "launchK8sCommand"));

program
  .command("finalize")
  .description("merge the per-task completion markers of an output folder into manifest.json; fails naming every unfinished task")
  .argument("<output-dir>", "an output folder written by `lwm-data run` (all ranks)")
  .action(lazy(() => import("./finalize-command.ts"), "finalizeCommand"));

const validate = program
  .command("validate")
  .description(
    "check a config and print the resolved plan (inputs and detected formats, tokenizer, template, shards) without processing data",
  )
  .argument("<config>", "job config (YAML)")
  .option("-i, --input <glob>", "input file, folder or glob, replacing the config's inputs (repeatable)", collect, [])
  .option("-o, --output <dir>", "output folder, replacing output.dir")
  .option("-b, --benchmark <glob>", "benchmark file or glob, added to decontaminate.benchmarks (repeatable)", collect, [])
  .action(lazy(() => import("./validate-command.ts"), "validateCommand"));
inputFormatOptions(validate);

program
  .command("inspect")
  .description("print one sample of a shard with its loss mask visible: trained tokens highlighted, masked tokens dim")
  .argument("<shard>", "a .parquet shard written by `lwm-data run`")
  .option("-r, --row <n>", "row number in the shard (0-based)", "0")
  .option("--id <id>", "select the row by sample id instead of --row")
  .option("--tokens", "list every token: position, id, mask bit and text")
  .option("--max-chars <n>", "truncate the printed text after this many characters (0 = no limit)", "0")
  .addOption(new Option("--color <when>", "colour output").choices(["auto", "always", "never"]).default("auto"))
  .option("--no-color", "no colour (the same as --color never; so is the NO_COLOR environment variable with auto)")
  .addHelpText(
    "after",
    "\nWithout colour, trained spans are wrapped in ⟦ ⟧ so the mask stays visible in logs and pipes.\n" +
      "Before each observation, a ▸ line gives the turn's class and keep/mask decision (draw, keep ratio, statistics)\n" +
      "from the run's stats table (<output>/stats/*.parquet, beside <output>/data/).",
  )
  .action(lazy(() => import("./inspect-command.ts"), "inspectCommand"));

program
  .command("verify")
  .description("check an output folder against its manifest.json: checksums, rows, tokens, schema, metadata, totals; prints every mismatch")
  .argument("<output-dir>", "an output folder written by `lwm-data run` or `lwm-data sft sample` (holds manifest.json)")
  .option("--json", "print the report as JSON (manifestFormat, filesChecked, shardsChecked, tokens, problems)")
  .addHelpText(
    "after",
    `
Checks every file the manifest lists (shards, stats tables, quarantine and filtered files, the SFT candidates table): present,
bytes and sha256 (streamed). Shards are read a row group at a time: rows, tokens and loss tokens equal the manifest,
len(input_ids) = num_tokens, len(loss_mask) = len(input_ids), sum(loss_mask) = num_loss_tokens on every row; the
schema (column names, Arrow types) and the lwm_data metadata (tokenizer, vocab/template/config sha256) match. Files in
data/, stats/, sft/, quarantine/, filtered/ that the manifest does not list are reported, and the manifest's totals must add up
(records in = samples out + quarantined + filtered).
Output: one line per problem, "path: check: message (expected X, got Y)".
Exit status: 0 when everything matches, 1 on any problem.`,
  )
  .action(lazy(() => import("./verify-command.ts"), "verifyCommand"));

program
  .command("stats")
  .description(
    "print the per-domain / per-class masking table of a finished run (turns, kept share, trained observation tokens), and what curation filtered",
  )
  .argument("<output-dir>", "an output folder written by `lwm-data run` (holds manifest.json)")
  .addHelpText("after", "\nThe per-turn rows behind it are in <output-dir>/stats/turns-*.parquet; `lwm-data dashboard` charts them.")
  .action(lazy(() => import("./stats-command.ts"), "statsCommand"));

const pii = program.command("pii").description("personal data: what normalize.pii would replace in a job's inputs, before a run");
inputFormatOptions(
  pii
    .command("scan")
    .description(
      "read a job's inputs as `run` would and list the personal data the PII detectors find, with the text around each value, and a per-domain × kind count; nothing is written",
    )
    .argument(
      "<config>",
      "job config (YAML): its normalize.pii kinds, phone_countries, ip policy and per-domain overrides are used, with the top-level enabled taken as true",
    )
    .option("-i, --input <glob>", "input file, folder or glob, replacing the config's inputs (repeatable)", collect, [])
    .option("--limit <n>", "findings printed per kind", "20")
    .option("--max-records <n>", "stop after this many records (a sample of a large corpus)")
    .option("--json <file>", "write every finding as JSONL (source, id, domain, field, kind, value, before, after)")
    .addHelpText(
      "after",
      `
Each finding is printed as: source  field  kind  …text before[value]text after…
Review it for false positives (a version or an id taken for a phone number) and for misses, then set normalize.pii
(kinds, phone_countries, ip.private / ip.documentation, domains.<domain>) and run. The values are printed as they are in
the inputs: keep the output where the inputs are allowed to be.`,
    )
    .action(lazy(() => import("./pii-command.ts"), "piiScanCommand")),
);

program
  .command("dashboard")
  .description(
    "mask-statistics dashboard of a finished run: histograms with thresholds, class mix, kept shares, tokens, examples; curation's filtered records and cluster sizes",
  )
  .argument("<output-dir>", "an output folder written by `lwm-data run` (holds manifest.json and stats/)")
  .option("--compare <output-dir>", "a second run to show side by side (e.g. other thresholds over the same inputs)")
  .option("--out <file>", "write one self-contained HTML file (libraries and data inline) instead of serving")
  .option("-p, --port <port>", "port to serve on (0 picks a free one)", "8050")
  .option("--host <host>", "address to listen on (0.0.0.0 to reach it from other machines)", "127.0.0.1")
  .option("--examples <n>", "example turns embedded per (domain, class, decision)", "6")
  .addHelpText(
    "after",
    `
Aggregates <output-dir>/stats/*.parquet (the files the manifest lists) with DuckDB, so it stays quick on millions of
turns, and draws the charts with Observable Plot:
  - histograms of overlap, novelty, Jaccard, length ratio and history novelty per domain, with the class rules' bounds;
  - the cumulative share of observation tokens under each threshold (how much loss a bound moves);
  - class mix per domain, kept share per class (realised vs configured), tokens per domain before/after masking;
  - shard counts per split and quarantine reasons; an example browser showing a turn's tokens with the loss mask.
Served (the default), the example browser queries every turn; with --out, a sample of each group is embedded.
--compare matches turns by (id, turn index) and shows how classes and decisions changed, and which rules differ.

Examples:
  lwm-data dashboard out/demo                       # http://127.0.0.1:8050/
  lwm-data dashboard out/run-a --compare out/run-b --out compare.html`,
  )
  .action(lazy(() => import("./dashboard-command.ts"), "dashboardCommand"));

const sft = program
  .command("sft")
  .description('SFT: world-model prompts per turn, teacher thinking traces, rejection sampling (docs/sft.md "SFT workflow")');

sft
  .command("prompts")
  .description("write one world-model prompt per selected turn (sft.select) as JSONL, for any external batch system")
  .argument("<config>", "job config (YAML); its sft: section selects turns and phrases the prompt")
  .option("-i, --input <glob>", "input file or glob, replacing the config's inputs (repeatable)", collect, [])
  .requiredOption("-o, --out <file>", "JSONL file to write")
  .addOption(
    new Option(
      "--format <format>",
      "chat: our prompt records (messages, ground_truth); openai-batch: Batch API requests (custom_id = prompt_id)",
    )
      .choices(["chat", "openai-batch"])
      .default("chat"),
  )
  .action(lazy(() => import("./sft-command.ts"), "sftPromptsCommand"));

sft
  .command("sample")
  .description("get candidates (teacher endpoint or --candidates files), verify them, keep the best per prompt; write SFT shards")
  .argument("<config>", "job config (YAML) with an sft: section (teacher endpoint, thresholds, judge)")
  .option("-i, --input <glob>", "input file or glob, replacing the config's inputs (repeatable)", collect, [])
  .option("-o, --output <dir>", "output folder (default: output.dir + '-sft')")
  .option("-c, --candidates <file>", "read candidates from a JSONL file instead of the teacher (repeatable)", collect, [])
  .option("--overwrite", "replace an output folder that holds other files")
  .option(
    "--resample-rejected",
    "on an existing output: one more round (seed sft.seed + round) for the prompts no round so far gave a passing candidate; the rest are kept as they are",
  )
  .addOption(new Option("--progress <mode>", "progress lines on stderr").choices(["auto", "json", "none"]).default("auto"))
  .addHelpText(
    "after",
    '\nCandidate files: one JSON object per line, {"prompt_id": …, "candidates": ["<think>…</think><predicted_observation>…</predicted_observation>", …]},\n' +
      "or OpenAI Batch API output lines (custom_id = prompt_id). The API key is read from the variable named by\n" +
      "sft.teacher.api_key_env and never written anywhere. Requests are cached under sft.teacher.cache_dir: a rerun pays nothing.\n" +
      "Output: data/*.parquet (kept samples, loss on the answer only), sft/candidates.parquet (every candidate's scores and reasons),\n" +
      "quarantine/prompts.jsonl, manifest.json (prompts = kept + rejected + failed).",
  )
  .action(lazy(() => import("./sft-command.ts"), "sftSampleCommand"));

const exportCommand = program
  .command("export")
  .description("export a finished output for other trainers and evaluators: ms-swift, verl/OpenRLHF, Megatron-LM, AgentWorldBench");

exportCommand
  .command("swift")
  .description("ms-swift JSONL (messages with a per-message loss flag on assistant turns) + LLaMA-Factory dataset_info.json")
  .argument("<output-dir>", "a finished output whose shards carry messages (output.include_messages: true, not packed; SFT outputs always)")
  .option("--out <dir>", "where to write <split>.jsonl, refused.jsonl and dataset_info.json (default: <output-dir>/export/swift)")
  .addOption(
    new Option("--literals <mode>", "samples whose text holds special-token literals (<|im_start|>, </think>, … as text)")
      .choices(["refuse", "escape"])
      .default("refuse"),
  )
  .addHelpText(
    "after",
    '\nEach line: {"messages": [{"role": "system", …}, {"role": "user", "content": <action>}, {"role": "assistant", "content": <observation>, "loss": true|false}, …]}.\n' +
      "The loss flags are the run's turn-level masking decisions, so ms-swift trains exactly the observations lwm-data kept.\n" +
      "Contents holding a special token's text (a tool printing <|im_start|>) are neutralized in the messages column (a U+200D\n" +
      'after its first character, reversible; docs/output.md "Text form"). --literals refuse (default) leaves such samples out, listed with\n' +
      "the reason in refused.jsonl, so every exported sample re-tokenizes to exactly the shard's ids; --literals escape exports them\n" +
      "neutralized (safe, but their ids differ from the shard's at each literal).",
  )
  .action(lazy(() => import("./export-command.ts"), "exportSwiftCommand"));

const literalsOption = (what: string) =>
  new Option("--literals <mode>", `${what} whose text holds special-token literals (<|im_start|>, </think>, … as text)`)
    .choices(["refuse", "escape"])
    .default("refuse");

exportCommand
  .command("rl")
  .description("RL prompts with the real observation as ground truth: verl Parquet or OpenRLHF JSONL, rewarded by python/lwm_reward")
  .argument("<source>", "a prompts file from `lwm-data sft prompts` (--format chat), or a finished CPT output whose shards carry messages")
  .addOption(
    new Option("--format <trainer>", "verl: <split>.parquet; openrlhf: <split>.jsonl").choices(["verl", "openrlhf"]).makeOptionMandatory(),
  )
  .option(
    "--out <dir>",
    "where to write the split files and refused.jsonl (default: <output-dir>/export/rl/<format>, or rl/<format> beside a prompts file)",
  )
  .option(
    "--config <config>",
    "job config whose sft.verify thresholds, output.validation_fraction/split_seed and tokenizer apply (default: configs/defaults.yaml's, Qwen3)",
  )
  .addOption(
    new Option(
      "--turns <which>",
      "output folder: trained = the turns whose observation carries the loss (kept by the masking); all = every turn",
    )
      .choices(["trained", "all"])
      .default("trained"),
  )
  .option(
    "--validation-fraction <f>",
    "prompts file: share of trajectories for validation.<ext> (default: the config's output.validation_fraction, else 0)",
  )
  .addOption(literalsOption("prompts"))
  .addHelpText(
    "after",
    '\nverl row: {data_source: "lwm-data/<domain>", prompt: [messages], ability: "world_model", reward_model: {style: "rule",\n' +
      "ground_truth: <observation>}, extra_info: {index, split, prompt_id, trajectory_id, domain, turn_index, source, fidelity_rule,\n" +
      "fidelity_threshold, think_min_chars, think_max_chars, prediction_min_chars, prediction_max_chars, quotable_tags, literals_escaped}}.\n" +
      'OpenRLHF line: {"input": [messages], "label": <JSON: ground_truth, data_source, extra_info>, "datasource": "lwm-data/<domain>"}.\n' +
      "python/lwm_reward/reward.py (compute_score for verl, reward_func for OpenRLHF) gives 1 where the SFT verifier would keep the\n" +
      'answer (format and per-domain fidelity rules, same thresholds), else 0 (docs/exports.md "RL: verl and OpenRLHF").',
  )
  .action(lazy(() => import("./export-command.ts"), "exportRlCommand"));

exportCommand
  .command("megatron")
  .description(
    "Megatron-LM indexed datasets: <split>.bin/.idx (input_ids) and <split>_loss_mask.bin/.idx (uint8), one document per sample; <split>_loss_weight.bin/.idx (float32) for shards with loss_weight",
  )
  .argument("<output-dir>", "a finished output (packed or not; a packed row's documents are cut at cu_seqlens)")
  .option("--out <dir>", "where to write them and megatron.json (default: <output-dir>/export/megatron)")
  .option("--append-eod <id>", "append this token id (e.g. 151643, Qwen's <|endoftext|>) to every document, with loss mask 0")
  .addHelpText(
    "after",
    "\nThe MMapIndexedDataset layout megatron.core.datasets.indexed_dataset.IndexedDataset reads: token ids uint16 below a 65,500-entry\n" +
      'vocabulary, else int32; the loss mask in a second dataset with the same documents (docs/exports.md "Megatron-LM"). Streams shard by shard.',
  )
  .action(lazy(() => import("./export-command.ts"), "exportMegatronCommand"));

exportCommand
  .command("agentworldbench")
  .description("held-out trajectories as AgentWorldBench rows (<domain>_test.jsonl) for Qwen-AgentWorld's eval/eval.py")
  .argument("<output-dir>", "a finished CPT output whose shards carry messages (output.include_messages: true, not packed)")
  .option("--out <dir>", "where to write <domain>_test.jsonl and refused.jsonl (default: <output-dir>/export/agentworldbench)")
  .option("--split <split>", "the split to export", "validation")
  .addOption(
    new Option("--turns <which>", "which turns are evaluated: all, or trained (kept by the masking)")
      .choices(["all", "trained"])
      .default("all"),
  )
  .addOption(literalsOption("turns"))
  .option(
    "--controls",
    "controllable prompts only (validation split, needs controls.enabled): samples whose system message carries a control instruction, each edge-case turn (or a normal sample's last) with lwm_control {kind, instruction, expect, labels} (default --out: <output-dir>/export/agentworldbench-controls)",
  )
  .addHelpText(
    "after",
    "\nOne row per evaluated turn: task, id, prompt[] (### Turn N / **Action:**), response[] (**Environment Observation:**),\n" +
      "current_prompt, system_str, turn_idx (1-based), total_turns, with the whole history before the turn in every row\n" +
      "(QwenLM/Qwen-AgentWorld#7). Run: python eval.py infer --data-dir <out> … then judge and score.",
  )
  .action(lazy(() => import("./export-command.ts"), "exportAgentWorldBenchCommand"));

program
  .command("score-controls")
  .description(
    "instruction following of a world model on `export agentworldbench --controls` rows: per domain and expected edge case, how often its predicted observation shows it (or, for normal rows, none)",
  )
  .argument("<export-dir>", "the folder export agentworldbench --controls wrote (<domain>_test.jsonl with lwm_control)")
  .argument(
    "<predictions>",
    'JSON lines matched by lwm_prompt_id: {"lwm_prompt_id", "prediction"}, or eval.py infer\'s predictions.jsonl (the row with `gen`)',
  )
  .option("--json", "print the scores as JSON")
  .action(lazy(() => import("./score-controls-command.ts"), "scoreControlsCommand"));

program
  .command("ablate")
  .description(
    "compare configs by training: build each --vary variant's shards, train the same tiny proxy model on each, report held-out loss with CIs",
  )
  .argument("<config>", "the base job config (YAML); every variant is it plus its --vary settings")
  .requiredOption(
    "--vary <key=values>",
    "a config key (dotted, as in the YAML) and the values to try, comma-separated, each read as YAML, e.g. mask.policy=all-observations,turn-stats; repeatable (the variants are the cartesian product; the first values make the baseline)",
    collect,
    [],
  )
  .option("--out <dir>", "where variants/, eval/, results/, ablate.json and ablate.md go", "ablate")
  .option("--seeds <n>", "seeds per variant (0 … n-1): each fixes the proxy model's init and data order", "3")
  .option("--tokens <n>", "input tokens each proxy model trains on (the same budget for every variant)", "65536")
  .addOption(
    new Option("--model <size>", "proxy model: tiny (hidden 64, 2 layers) or small (hidden 128, 4 layers)")
      .choices(["tiny", "small"])
      .default("tiny"),
  )
  .option("--python <path>", "Python with torch, transformers and pyarrow (default: the project's .venv, from test/python/ensure-venv.sh)")
  .option("--validation-fraction <f>", "validation share of every build when the config sets none (the held-out set)", "0.25")
  .option("-w, --workers <n>", "worker threads of each build (default: all cores)")
  .option(
    "--input-root <dir>",
    "read the config's inputs from this folder: each input under the config's input.root (else its folder) is taken from the same place under <dir>",
  )
  .addHelpText(
    "after",
    `
Example:
  lwm-data ablate configs/demo.yaml --vary mask.policy=all-observations,turn-stats --seeds 3 --tokens 65536 --out out/ablate-demo

Each variant is built with the normal pipeline into <out>/variants/<name>/ (a finished build is not redone).
The held-out set is <out>/eval/: the baseline (first variant) built with mask.policy all-observations; its
validation split's observation tokens are the labels every variant is scored on, whatever the variant's mask.
A proxy causal LM (Qwen3 architecture, random init, vocabulary remapped to the ids the data uses) trains on each
variant's train split for --tokens input tokens on one CPU thread (src/ablate/train_proxy.py, deterministic).
Results are kept in <out>/results/ under a key of the variant's config, the evaluation set and the trainer
settings: a rerun trains only what is missing.

The table (stdout and <out>/ablate.md; everything in <out>/ablate.json): per variant, the mean held-out
cross-entropy over seeds with its 95% t-interval, and the difference from the baseline paired by seed with its
interval; then the same on the informative observations alone (the turns the config's classes call neither
Echo nor Boilerplate, built into <out>/eval-informative/), where mask policies differ the most. Lower is better;
an interval of the difference that contains 0: no difference beyond seed noise.`,
  )
  .action(lazy(() => import("./ablate-command.ts"), "ablateCommand"));

const hub = program
  .command("hub")
  .description("Hugging Face Hub: pull raw trajectory files from a dataset repo, push a finished output (shards, manifest, card)")
  .addHelpText(
    "after",
    "\nThe token is read from $HF_TOKEN (or $HUGGING_FACE_HUB_TOKEN), never from a flag, and never printed.\n" +
      "The endpoint is --hub-url, else $HF_ENDPOINT, else https://huggingface.co (a mirror or a local server works too).",
  );

const hubOptions = (command: Command) =>
  command
    .option("--hub-url <url>", "Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)")
    .option("--revision <rev>", "branch or commit (default: main)")
    .option("--no-progress", "no per-file lines on stderr");

hubOptions(hub.command("pull"))
  .description("download a dataset repo's files (or those matching --include) into the input cache; reruns fetch only what is missing")
  .argument("<repo>", "dataset repo, e.g. my-org/agent-trajectories")
  .option("--include <glob>", "only files matching this glob, e.g. '**/*.jsonl.gz' (repeatable)", collect, [])
  .option("--dest <dir>", "where to put them (default: <cache>/hub/datasets/<repo>; cache = $LWM_DATA_CACHE_DIR or ~/.cache/lwm-data)")
  .addHelpText(
    "after",
    "\nEach file is checked against the repo's size and sha256 after download, and written under a temporary name first.",
  )
  .action(lazy(() => import("./hub-command.ts"), "hubPullCommand"));

hubOptions(hub.command("push"))
  .description("upload a finished output folder (data/, stats/, quarantine/, filtered/, README.md card, manifest.json) to a dataset repo")
  .argument("<output-dir>", "an output folder with manifest.json (from `lwm-data run`, `finalize` or `sft sample`)")
  .argument("<repo>", "dataset repo, created if missing, e.g. my-org/lwm-cpt-v1")
  .option("--private", "create the repo private")
  .option("--batch-size <n>", "files per commit", "50")
  .option("--no-verify", "skip `lwm-data verify` before uploading (it checks every file against the manifest)")
  .addHelpText(
    "after",
    "\nResumable: files already on the repo with the same sha256 are skipped, so rerun the same command after an interruption.\n" +
      "manifest.json and README.md go up in the last commit, after every shard: a repo with a manifest is complete.",
  )
  .action(lazy(() => import("./hub-command.ts"), "hubPushCommand"));

/** Disk full, quota, I/O or read-only errors, by their code or (from a worker thread) their message. */
function isStorageError(err: unknown): boolean {
  const codes = ["ENOSPC", "EDQUOT", "EIO", "EROFS", "EFBIG"];
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const message = err instanceof Error ? err.message : "";
  return codes.includes(code ?? "") || codes.some((c) => message.includes(`${c}:`));
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  if (err instanceof UserError) {
    console.error(`lwm-data: ${err.message}`);
    process.exit(1);
  }
  if (isStorageError(err)) {
    // A full disk or a failing device is the operator's to fix; the run can be resumed.
    console.error(`lwm-data: ${(err as Error).message}`);
    console.error(
      "lwm-data: nothing partial is visible (unfinished files are temporary and removed) and finished tasks are kept: fix the disk, then rerun the same command to resume",
    );
    process.exit(1);
  }
  throw err;
}
