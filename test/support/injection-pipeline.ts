import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load-config.ts";
import type { Domain, Trajectory } from "../../src/core/trajectory.ts";
import type { LossPolicy } from "../../src/mask/loss-policy.ts";
import { parseAndroidObservation } from "../../src/normalize/domains/android.ts";
import { parseWebObservation } from "../../src/normalize/domains/web.ts";
import { canonicalJson } from "../../src/normalize/json-canonical.ts";
import { type JobPlan, planJob } from "../../src/pipeline/plan.ts";
import { type Draft, RECORD_STAGES, type StageContext, stageContext } from "../../src/pipeline/stages.ts";
import { parseOsObservation } from "../../src/read/os-a11y.ts";
import type { Segment } from "../../src/render/chat-template.ts";
import type { TokenizerSpec } from "../../src/tokenize/load-tokenizer.ts";
import type { Tokenizer } from "../../src/tokenize/tokenizer.ts";
import { collect } from "../helpers.ts";

/**
 * The real CPT path for the injection tests: a job config naming the tokenizer, canonical JSONL
 * input read by the pipeline's own reader, and the per-record stages of `pipelines/cpt.yaml`
 * (validate → normalize → render → tokenize → mask) run exactly as `record-results.ts` runs them.
 */

export interface InjectionJob {
  plan: JobPlan;
  context: StageContext;
  /** Writes the records as the job's canonical JSONL input and reads them back with the plan's reader, by id. */
  read(records: readonly object[]): Promise<Map<string, Trajectory>>;
}

/** A job config over one canonical JSONL input in `dir`, planned (tokenizer, template, prompts, stages). */
export async function injectionJob(dir: string, tokenizer: TokenizerSpec): Promise<InjectionJob> {
  const input = join(dir, "hostile.jsonl");
  writeFileSync(input, "");
  const config = {
    inputs: [{ path: input, format: "canonical-jsonl" }],
    tokenizer,
    // Every observation trained: the mask must cover every turn, dirty or clean.
    mask: { policy: "all-observations" },
    output: { dir: join(dir, "out") },
  };
  // JSON is YAML: the special-token names need no quoting rules.
  const configPath = join(dir, "job.yaml");
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const plan = await planJob(loadConfig(configPath));
  const context = stageContext(plan, new Map());
  const read = async (records: readonly object[]) => {
    writeFileSync(input, `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);
    const byId = new Map<string, Trajectory>();
    for (const file of plan.files) {
      for (const item of await collect(file.reader.read(file.path, { maxLineBytes: 1 << 26 }))) {
        if (item.kind !== "trajectory") throw new Error(`reader did not read a hostile record as a trajectory: ${JSON.stringify(item)}`);
        byId.set(item.trajectory.id, item.trajectory);
      }
    }
    return byId;
  };
  return { plan, context, read };
}

export interface Processed extends Required<Omit<Draft, "decisions" | "controls" | "counterfactual">> {
  decisions: Draft["decisions"];
}

/** Runs the plan's record stages on one trajectory, as `processRecord` in src/pipeline/record-results.ts does. */
export async function processTrajectory(job: InjectionJob, trajectory: Trajectory, lossPolicy?: LossPolicy): Promise<Processed> {
  const context = lossPolicy ? { ...job.context, lossPolicy } : job.context;
  const draft: Draft = { trajectory };
  for (const stage of job.plan.pipeline.recordStages) {
    const run = RECORD_STAGES[stage];
    if (!run) throw new Error(`unknown stage ${stage}`);
    await run(draft, context);
  }
  const { messages, segments, encoded, lossMask } = draft;
  if (!messages || !segments || !encoded || !lossMask)
    throw new Error(`pipeline ${job.plan.pipeline.name} did not render, tokenize and mask`);
  return { trajectory: draft.trajectory, messages, segments, encoded, lossMask, decisions: draft.decisions };
}

export interface Analysis {
  /** Every added/special token of the sequence, in order, with the message it belongs to (`id@owner`). */
  control: string[];
  /** Maximal runs of loss-mask 1. */
  maskRuns: number;
  /** The text between two control tokens and our ids for it, for the independent reference. */
  runs: { text: string; ids: number[] }[];
  /** Everything wrong with the sequence, one readable line each (empty when sound). */
  problems: string[];
}

const byteCache = new WeakMap<Tokenizer, Map<number, Buffer>>();

function tokenBytes(tokenizer: Tokenizer, id: number): Buffer {
  let cache = byteCache.get(tokenizer);
  if (!cache) {
    cache = new Map();
    byteCache.set(tokenizer, cache);
  }
  let bytes = cache.get(id);
  if (!bytes) {
    bytes = Buffer.from(tokenizer.decodeBytes([id]));
    cache.set(id, bytes);
  }
  return bytes;
}

const show = (text: string, max = 120) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * Checks one processed record: the ids decode to exactly the rendered text; no added/special id
 * covers a single byte of content; every message's content is in the sequence verbatim (as
 * normalized) and equals the trajectory's field; each run of trained tokens is one observation
 * followed by its end-of-turn control token, and nothing else of the sequence is trained.
 */
export function analyze(processed: Processed, tokenizer: Tokenizer): Analysis {
  const { segments, messages, encoded, lossMask, trajectory } = processed;
  const problems: string[] = [];
  const added = new Set(tokenizer.addedTokens.values());
  const ids = Array.from(encoded.inputIds);

  // The rendered text as bytes, and where each message's content lies in it.
  const content: { start: number; end: number; segment: Extract<Segment, { kind: "content" }> }[] = [];
  const renderedParts: Buffer[] = [];
  let offset = 0;
  for (const segment of segments) {
    const bytes = Buffer.from(tokenizer.normalize(segment.text));
    if (segment.kind === "content") content.push({ start: offset, end: offset + bytes.length, segment });
    renderedParts.push(bytes);
    offset += bytes.length;
  }
  const rendered = Buffer.concat(renderedParts);
  const decoded = Buffer.concat(ids.map((id) => tokenBytes(tokenizer, id)));
  if (!decoded.equals(rendered)) {
    let at = 0;
    while (at < rendered.length && decoded[at] === rendered[at]) at++;
    problems.push(
      `ids do not decode to the rendered text: first difference at byte ${at}: ${show(decoded.subarray(at, at + 40).toString())} vs ${show(rendered.subarray(at, at + 40).toString())}`,
    );
  }

  // No added/special id may cover any byte of any content.
  const control: string[] = [];
  const runs: { text: string; ids: number[] }[] = [];
  let run: number[] = [];
  const endRun = () => {
    if (run.length > 0) runs.push({ text: Buffer.concat(run.map((id) => tokenBytes(tokenizer, id))).toString("utf8"), ids: run });
    run = [];
  };
  let position = 0;
  let next = 0;
  ids.forEach((id, i) => {
    const end = position + tokenBytes(tokenizer, id).length;
    while (next < content.length && (content[next] as { end: number }).end <= position) next++;
    if (added.has(id)) {
      control.push(`${id}@${encoded.owner[i]}`);
      endRun();
      for (let k = next; k < content.length && (content[k] as { start: number }).start < end; k++) {
        const span = content[k] as (typeof content)[number];
        if (span.end > position && span.start < end) {
          const message = messages[span.segment.messageIndex];
          problems.push(
            `control token ${id} ${show(tokenizer.addedTokenContent(id) ?? "?")} at token ${i} (bytes ${position}-${end}) lies in the content of message ${span.segment.messageIndex} (${message?.role}): ${show(span.segment.text)}`,
          );
        }
      }
    } else run.push(id);
    position = end;
  });
  endRun();

  // Content is verbatim: every message exactly once, its text the message's (leading newlines
  // stripped only where the template strips them), and the messages are the trajectory's fields.
  if (content.length !== messages.length) problems.push(`${content.length} content segments for ${messages.length} messages`);
  for (const { start, end, segment } of content) {
    const message = messages[segment.messageIndex];
    if (!message) continue;
    if (segment.text !== message.content && segment.text !== message.content.replace(/^\n+/, ""))
      problems.push(`message ${segment.messageIndex} rendered as ${show(segment.text)}, its content is ${show(message.content)}`);
    const back = decoded.subarray(start, end).toString("utf8");
    if (back !== tokenizer.normalize(segment.text))
      problems.push(
        `content of message ${segment.messageIndex} decodes to ${show(back)}, expected ${show(tokenizer.normalize(segment.text))}`,
      );
  }
  trajectory.turns.forEach((turn, k) => {
    if (messages[1 + 2 * k]?.content !== turn.action) problems.push(`turn ${k}: the user message is not the action`);
    if (messages[2 + 2 * k]?.content !== turn.observation) problems.push(`turn ${k}: the assistant message is not the observation`);
  });
  for (const field of ["task", "initialObservation"] as const) {
    const text = trajectory[field];
    if (text && !messages[0]?.content.includes(text)) problems.push(`${field} is missing from the system message`);
  }

  // Trained runs: one per kept observation, each `[template tail] observation <end token>`. A
  // token may span the end of the template text and the start of the content (BPE over the
  // joined text, as the reference tokenizes it); it is the content's, so it is trained.
  const before = new Map<number, string>();
  const renderedContent = new Map<number, string>();
  let templateTail = "";
  for (const segment of segments) {
    if (segment.kind === "template") {
      templateTail += tokenizer.normalize(segment.text);
      continue;
    }
    before.set(segment.messageIndex, templateTail);
    renderedContent.set(segment.messageIndex, tokenizer.normalize(segment.text));
    templateTail = "";
  }
  const trained: string[] = [];
  let start = -1;
  for (let i = 0; i <= lossMask.length; i++) {
    if (i < lossMask.length && lossMask[i] === 1) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0) {
      const last = ids[i - 1] as number;
      if (!added.has(last)) problems.push(`trained run at tokens ${start}-${i - 1} does not end with a control token`);
      trained.push(Buffer.concat(ids.slice(start, i - 1).map((id) => tokenBytes(tokenizer, id))).toString("utf8"));
      start = -1;
    }
  }
  const kept = messages.flatMap((message, i) => (message.loss ? [i] : []));
  if (trained.length !== kept.length) problems.push(`${trained.length} trained runs for ${kept.length} messages with loss`);
  trained.forEach((text, r) => {
    const index = kept[r] as number;
    const expected = renderedContent.get(index) ?? "";
    const lead = text.slice(0, text.length - expected.length);
    if (!text.endsWith(expected) || !(before.get(index) ?? "").endsWith(lead))
      problems.push(`trained run ${r} is ${show(text)}, expected message ${index}'s content ${show(expected)} (after template text only)`);
  });

  return { control, maskRuns: trained.length, runs, problems };
}

const parses = (parse: () => unknown) => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

/**
 * Whether the domain's normalizer may legitimately rewrite a plain-text field: an observation
 * that parses as the domain's tree (web/android/os; any well-formed XML is an AT-SPI tree), or
 * an MCP/search action or observation that is one JSON object or array. Everything else must
 * reach the template exactly as written.
 */
export function normalizerMayRewrite(domain: Domain, field: "action" | "observation", text: string): boolean {
  if (domain === "mcp" || domain === "search") return canonicalJson(text) !== undefined;
  if (field === "action") return false;
  if (domain === "web") return parses(() => parseWebObservation(text));
  if (domain === "android") return parses(() => parseAndroidObservation(text, undefined));
  if (domain === "os") return parses(() => parseOsObservation(text));
  return false;
}
