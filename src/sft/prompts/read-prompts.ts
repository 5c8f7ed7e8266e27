import type { JobConfig } from "../../config/schema.ts";
import { detectControls } from "../../controls/detect-controls.ts";
import { type QuarantineEntry, RecordError } from "../../core/errors.ts";
import type { Counters } from "../../normalize/normalizer.ts";
import { redactLabel, redactQuarantineEntry } from "../../normalize/redact-output.ts";
import type { JobPlan } from "../../pipeline/plan.ts";
import { recordSource } from "../../pipeline/record-labels.ts";
import { type Draft, RECORD_STAGES, stageContext } from "../../pipeline/stages.ts";
import { taskItems } from "../../pipeline/task-items.ts";
import { type ReadFilter, readFilterOf } from "../../read/read-filter.ts";
import { selectTurns } from "./select-turns.ts";
import { buildPrompt, type SftPrompt } from "./sft-prompt.ts";

/** What reading the job's inputs into prompts gives, record by record, in input order. */
export type PromptItem =
  | {
      kind: "prompts";
      trajectoryId: string;
      prompts: SftPrompt[];
      /** Set when the record's reader filtered it (`meta.read_filter`): it gives no prompts. */
      readFilter?: ReadFilter & { domain: string };
    }
  | { kind: "quarantine"; entry: QuarantineEntry };

/**
 * The job's trajectories (every task, in plan order) through the same stages as a CPT run, then
 * turned into prompts for the selected turns. `select: kept` runs the whole CPT record pipeline
 * to get the turn-level masking decisions; otherwise only validation and normalization run.
 * Every record ends as prompts (possibly none), a quarantine entry with its reason, or (filtered
 * by its reader) no prompts and the reader's rule and reason.
 */
export async function* readPrompts(plan: JobPlan, counters: Counters): AsyncGenerator<PromptItem> {
  const sft = plan.config.sft;
  if (sft.select === "kept" && plan.config.mask.policy !== "turn-stats")
    throw new Error(`sft.select: kept needs mask.policy: turn-stats (this job uses ${plan.config.mask.policy})`);
  const stages =
    sft.select === "kept" ? plan.pipeline.recordStages : plan.pipeline.recordStages.filter((s) => s === "validate" || s === "normalize");
  const context = stageContext(plan, counters);
  // Quarantine entries and source labels quote raw input: redacted like the text.
  const options = { secrets: plan.config.normalize.redact_secrets, pii: plan.config.normalize.pii };
  for (const task of plan.tasks) {
    for await (const { item, file } of taskItems(plan, task)) {
      if (item.kind === "quarantine") {
        yield { kind: "quarantine", entry: redactQuarantineEntry(item.entry, options) };
        continue;
      }
      // A text document has no turns to predict: it is CPT text, never an SFT prompt.
      if (item.kind === "document") continue;
      // A record its reader filtered (a harness-only trial, an output-only terminal recording)
      // holds no agent turn to predict: no prompts, and the screen reports it with its rule.
      const readFilter = readFilterOf(item);
      if (readFilter) {
        const { trajectory } = item;
        yield { kind: "prompts", trajectoryId: trajectory.id, prompts: [], readFilter: { ...readFilter, domain: trajectory.domain } };
        continue;
      }
      const draft: Draft = { trajectory: item.trajectory };
      let stage = "validate";
      try {
        for (stage of stages) await RECORD_STAGES[stage]?.(draft, context);
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        const { trajectory } = item;
        const entry = {
          source: trajectory.source,
          id: trajectory.id,
          stage,
          ...(err.field ? { field: err.field } : {}),
          reason: err.message,
        };
        yield { kind: "quarantine", entry: redactQuarantineEntry(entry, options) };
        continue;
      }
      const trajectory = draft.trajectory;
      const label = recordSource(file.displayPath, trajectory.source);
      const source = redactLabel(label, options);
      const labelled = sft.select === "labelled" ? detectControls(trajectory).map((label) => label.turn) : undefined;
      const turns = selectTurns(trajectory.id, trajectory.turns.length, selectSettings(sft), draft.decisions, labelled);
      yield {
        kind: "prompts",
        trajectoryId: trajectory.id,
        prompts: turns.map((turn) =>
          buildPrompt(trajectory, turn, source, plan.systemPrompts, {
            maxHistoryTurns: sft.max_history_turns,
          }),
        ),
      };
    }
  }
}

function selectSettings(sft: JobConfig["sft"]) {
  return { mode: sft.select, perTrajectory: sft.per_trajectory, seed: sft.seed };
}
