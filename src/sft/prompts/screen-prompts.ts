import { createHash } from "node:crypto";
import type { QuarantineEntry } from "../../core/errors.ts";
import type { Counters } from "../../normalize/normalizer.ts";
import type { JobPlan } from "../../pipeline/plan.ts";
import { type StopSignal, stopRequested } from "../../pipeline/stop-signal.ts";
import type { SystemPrompts } from "../../render/system-prompts.ts";
import { readPrompts } from "./read-prompts.ts";
import type { SftPrompt } from "./sft-prompt.ts";

/**
 * Which selected turns must not become SFT prompts, and why (docs/sft.md "SFT workflow", step 1):
 *
 * - `no_context`: the prompt carries nothing to predict from. Precisely: its system message is
 *   exactly the domain's world-model system prompt (so the trajectory has no task, no initial
 *   observation and no system prompt of its own: those are added to or replace it) and every
 *   later message (history actions and observations, the action) is blank (empty or whitespace
 *   only). The first screen of an Android recording or the first output of an output-only
 *   terminal recording: a trace for it teaches "produce this exact screen from nothing".
 * - `conflict`: prompts with identical messages (what the student sees) but different real
 *   observations. Trained together they teach contradicting answers to one input, and a teacher
 *   asked once answers both alike, so at most one could ever pass. Every prompt of such a group is
 *   skipped (none is the right one); prompts with identical messages and an identical
 *   observation are kept (`duplicates`): sharing one teacher answer is then correct.
 *
 * Without hints the teacher's request is the student's messages plus fixed instructions, so two
 * requests left after screening are identical only when their real observations are; with
 * hints, the observation is in the request itself.
 *
 * Records their reader filtered (`meta.read_filter`: an output-only terminal recording with
 * nothing to split at, a terminal-bench trial where only the harness typed) have no turn to
 * select: they give no prompt and are counted apart (`read_filtered`), per domain and rule, with
 * example ids, so every record read is accounted for. Either way a request's cached or merged
 * answer is only ever verified against the observation it belongs to.
 */

export const SKIP_REASONS = ["no_context", "conflict"] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** Prompt ids of one group of prompts with identical messages and different real observations. */
export interface ConflictExample {
  domain: string;
  /** Prompts in the group (all skipped). */
  prompts: number;
  /** Distinct real observations among them. */
  observations: number;
  /** The first prompt ids of the group, in input order. */
  prompt_ids: string[];
}

/** The selection report: in the SFT manifest (`selection`) and printed by `sft prompts` / `sft sample`. */
export interface SelectionReport {
  /** Turns `sft.select` picked = prompts + skipped. */
  turns: number;
  /** Prompts that go to the teacher (or are looked up in candidate files). */
  prompts: number;
  /** Skipped turns per reason. */
  skipped: Record<SkipReason, number>;
  /** Per domain: turns picked, prompts, skipped per reason. */
  by_domain: Record<string, { turns: number; prompts: number } & Record<SkipReason, number>>;
  /** The first `no_context` prompt ids, in input order. */
  no_context_examples: string[];
  conflicts: { groups: number; prompts: number; examples: ConflictExample[] };
  /** Prompts whose messages and real observation equal an earlier prompt's (kept; they share the teacher's answer). */
  duplicates: number;
  /** Records their reader filtered (`meta.read_filter`): no turn selected, no prompt. */
  read_filtered: {
    records: number;
    by_domain: Record<string, number>;
    /** Per read-filter rule (`terminal-no-action`, `harness-only`, …). */
    by_rule: Record<string, number>;
    /** The first such trajectory ids, in input order. */
    examples: string[];
  };
}

const MAX_CONFLICT_EXAMPLES = 10;
const MAX_IDS_PER_EXAMPLE = 5;
const MAX_NO_CONTEXT_EXAMPLES = 10;
const MAX_READ_FILTERED_EXAMPLES = 10;

/** True when the prompt carries nothing to predict from (see the `no_context` rule above). */
export function lacksContext(prompt: Pick<SftPrompt, "domain" | "messages">, systemPrompts: SystemPrompts): boolean {
  const [system, ...rest] = prompt.messages;
  return system?.content === systemPrompts[prompt.domain] && rest.every((message) => message.content.trim() === "");
}

/** 128 bits of sha256, base64: collision-safe for any prompt count, small in memory. */
function digest(text: string): string {
  return createHash("sha256").update(text).digest().subarray(0, 16).toString("base64");
}

const messagesKey = (prompt: SftPrompt) => digest(JSON.stringify(prompt.messages));

interface Group {
  /** The first member's real observation (digest). */
  truth: string;
  /** Every distinct observation (digests), once a second one is seen: the group is a conflict. */
  truths?: Set<string>;
  members: number;
  /** Members met in the second pass. */
  seen: number;
  /** Index in the report's conflict examples, once the second pass met the group. */
  example?: number;
}

/** What reading the inputs gives after screening: the same items as `readPrompts`, skipped prompts left out. */
export type ScreenedItem = { kind: "prompts"; trajectoryId: string; prompts: SftPrompt[] } | { kind: "quarantine"; entry: QuarantineEntry };

export interface ScreenedPrompts {
  /** Input order; quarantine entries included (the caller counts them). Read once. */
  items: AsyncIterable<ScreenedItem>;
  /** Complete once `items` has been read to the end. */
  report(): SelectionReport;
  /** The first pass was stopped (`stop`): `items` yields nothing. */
  stopped: boolean;
}

/**
 * Screens the job's prompts in two passes over the inputs: the first groups prompts by their
 * messages (a 128-bit digest per distinct prompt and its observation's, nothing else kept), so a
 * twin found late in the input still vetoes one met early; the second yields the prompts that
 * stay and counts the report. Both passes read the same prompts in the same order (reading is
 * deterministic). A stop request is honoured between records of the first pass.
 */
export async function screenPrompts(plan: JobPlan, counters: Counters = new Map(), stop?: StopSignal): Promise<ScreenedPrompts> {
  const groups = new Map<string, Group>();
  for await (const item of readPrompts(plan, new Map())) {
    if (stopRequested(stop)) return { items: (async function* () {})(), report: () => emptyReport(), stopped: true };
    if (item.kind !== "prompts") continue;
    for (const prompt of item.prompts) {
      if (lacksContext(prompt, plan.systemPrompts)) continue;
      const key = messagesKey(prompt);
      const truth = digest(prompt.ground_truth);
      const group = groups.get(key);
      if (!group) {
        groups.set(key, { truth, members: 1, seen: 0 });
        continue;
      }
      group.members += 1;
      if (group.truths) group.truths.add(truth);
      else if (truth !== group.truth) group.truths = new Set([group.truth, truth]);
    }
  }

  const report = emptyReport();
  const skip = (prompt: SftPrompt): SkipReason | undefined => {
    let domain = report.by_domain[prompt.domain];
    if (!domain) {
      domain = { turns: 0, prompts: 0, no_context: 0, conflict: 0 };
      report.by_domain[prompt.domain] = domain;
    }
    report.turns += 1;
    domain.turns += 1;
    let reason: SkipReason | undefined;
    if (lacksContext(prompt, plan.systemPrompts)) {
      reason = "no_context";
      if (report.no_context_examples.length < MAX_NO_CONTEXT_EXAMPLES) report.no_context_examples.push(prompt.prompt_id);
    } else {
      const group = groups.get(messagesKey(prompt));
      if (!group) throw new Error(`sft prompts: ${prompt.prompt_id} was not read in the first pass (is reading the inputs deterministic?)`);
      group.seen += 1;
      if (group.truths) {
        reason = "conflict";
        if (group.example === undefined && report.conflicts.examples.length < MAX_CONFLICT_EXAMPLES) {
          group.example = report.conflicts.examples.length;
          report.conflicts.examples.push({
            domain: prompt.domain,
            prompts: group.members,
            observations: group.truths.size,
            prompt_ids: [],
          });
        }
        const ids = group.example === undefined ? undefined : report.conflicts.examples[group.example]?.prompt_ids;
        if (ids && ids.length < MAX_IDS_PER_EXAMPLE) ids.push(prompt.prompt_id);
        if (group.seen === 1) report.conflicts.groups += 1;
        report.conflicts.prompts += 1;
      } else if (group.seen > 1) report.duplicates += 1;
    }
    if (reason) {
      report.skipped[reason] += 1;
      domain[reason] += 1;
    } else {
      report.prompts += 1;
      domain.prompts += 1;
    }
    return reason;
  };

  async function* items(): AsyncGenerator<ScreenedItem> {
    for await (const item of readPrompts(plan, counters)) {
      if (item.kind !== "prompts") {
        yield item;
        continue;
      }
      if (item.readFilter) {
        const filtered = report.read_filtered;
        const { domain, rule } = item.readFilter;
        filtered.records += 1;
        filtered.by_domain[domain] = (filtered.by_domain[domain] ?? 0) + 1;
        filtered.by_rule[rule] = (filtered.by_rule[rule] ?? 0) + 1;
        if (filtered.examples.length < MAX_READ_FILTERED_EXAMPLES) filtered.examples.push(item.trajectoryId);
      }
      yield { kind: "prompts", trajectoryId: item.trajectoryId, prompts: item.prompts.filter((prompt) => skip(prompt) === undefined) };
    }
  }
  return {
    items: items(),
    report: () => ({
      ...report,
      by_domain: sortedKeys(report.by_domain),
      read_filtered: {
        ...report.read_filtered,
        by_domain: sortedKeys(report.read_filtered.by_domain),
        by_rule: sortedKeys(report.read_filtered.by_rule),
      },
    }),
    stopped: false,
  };
}

function emptyReport(): SelectionReport {
  return {
    turns: 0,
    prompts: 0,
    skipped: { no_context: 0, conflict: 0 },
    by_domain: {},
    no_context_examples: [],
    conflicts: { groups: 0, prompts: 0, examples: [] },
    duplicates: 0,
    read_filtered: { records: 0, by_domain: {}, by_rule: {}, examples: [] },
  };
}

function sortedKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

/** The report as the lines `sft prompts` and `sft sample` print (two-space indent, a label column of 14). */
export function selectionLines(report: SelectionReport): string[] {
  const lines = [
    `  selected      ${report.turns} turn(s) → ${report.prompts} prompt(s); skipped ${report.skipped.no_context} without context, ${report.skipped.conflict} in conflict`,
  ];
  const skippedDomains = Object.entries(report.by_domain).filter(([, d]) => d.no_context + d.conflict > 0);
  if (skippedDomains.length > 0)
    lines.push(
      `  skipped       by domain: ${skippedDomains
        .map(
          ([domain, d]) =>
            `${domain} ${[d.no_context > 0 ? `${d.no_context} no context` : "", d.conflict > 0 ? `${d.conflict} conflict` : ""].filter(Boolean).join(" + ")}`,
        )
        .join(", ")}`,
    );
  if (report.skipped.no_context > 0)
    lines.push(
      `  no context    blank action and history, the domain's bare system prompt, e.g. ${report.no_context_examples.slice(0, 3).join(", ")}`,
    );
  const filtered = report.read_filtered;
  if (filtered.records > 0)
    lines.push(
      `  read filtered ${filtered.records} record(s) with no turn to predict (${Object.entries(filtered.by_rule)
        .map(([rule, n]) => `${rule} ${n}`)
        .join(", ")}; by domain: ${Object.entries(filtered.by_domain)
        .map(([domain, n]) => `${domain} ${n}`)
        .join(", ")}), e.g. ${filtered.examples.slice(0, 3).join(", ")}`,
    );
  if (report.conflicts.groups > 0) {
    const first = report.conflicts.examples[0] as ConflictExample;
    lines.push(
      `  conflicts     ${report.conflicts.groups} group(s) of identical prompts with different real observations (${report.conflicts.prompts} prompts, none kept), e.g. ${first.prompt_ids.join(" = ")}`,
    );
  }
  return lines;
}
