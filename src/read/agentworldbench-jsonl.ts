import { z } from "zod";
import type { QuarantineEntry } from "../core/errors.ts";
import { DOMAINS, type SourceRef, type Turn } from "../core/trajectory.ts";
import { describeZodError } from "../core/trajectory-schema.ts";
import { excerpt, firstLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem, recordLines } from "./reader.ts";
import { isRecord } from "./record-helpers.ts";

const FORMAT = "agentworldbench-jsonl";

/**
 * One AgentWorldBench row (Qwen/AgentWorldBench `*_test.jsonl`). Each row evaluates one turn
 * (`turn_idx`, 1-based) of a trajectory; rows sharing an `id` are the same trajectory.
 */
const rowSchema = z.object({
  task: z.enum(DOMAINS, { message: `unknown domain; expected one of ${DOMAINS.join(", ")}` }),
  id: z.union([z.string().min(1), z.number().int()]).transform(String),
  prompt: z.array(z.string()).min(1),
  response: z.array(z.string()).min(1),
  current_prompt: z.string().optional(),
  system_str: z.string(),
  turn_idx: z.number().int().min(1),
  total_turns: z.number().int().min(1),
});
type Row = z.infer<typeof rowSchema>;

// The benchmark wraps each action and observation in its own eval markup; the template
// supplies structure, so only the content is kept.
const ACTION_HEADER = /^### Turn \d+\s*\n\*\*Action:\*\*[ \t]*\n?/;
const OBSERVATION_HEADER = /^\*\*Environment Observation:\*\*[ \t]*\n?/;

/** JSON.parse that keeps integer ids exactly: AgentWorldBench ids can exceed 2^53. */
function parseRow(text: string): unknown {
  const reviver = function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
    return key === "id" && typeof value === "number" && context?.source !== undefined ? context.source : value;
  };
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
}

interface Group {
  id: string;
  source: SourceRef;
  rows: Row[];
}

function groupToTrajectory(group: Group): ReadItem {
  // Rows of one trajectory are cuts of the same history; the row with the most
  // (action, observation) pairs carries all of them.
  let best = group.rows[0] as Row;
  for (const row of group.rows) {
    if (Math.min(row.prompt.length, row.response.length) > Math.min(best.prompt.length, best.response.length)) best = row;
  }
  const conflicting = group.rows.find((row) => row.task !== best.task || row.system_str !== best.system_str);
  if (conflicting) {
    const entry: QuarantineEntry = {
      source: group.source,
      id: group.id,
      stage: "read",
      field: conflicting.task !== best.task ? "task" : "system_str",
      reason: `rows of trajectory ${group.id} disagree on ${conflicting.task !== best.task ? "task" : "system_str"}`,
    };
    return { kind: "quarantine", entry };
  }
  const pairs = Math.min(best.prompt.length, best.response.length);
  const turns: Turn[] = [];
  for (let i = 0; i < pairs; i++) {
    turns.push({
      action: (best.prompt[i] as string).replace(ACTION_HEADER, ""),
      observation: (best.response[i] as string).replace(OBSERVATION_HEADER, ""),
    });
  }
  return {
    kind: "trajectory",
    trajectory: {
      id: group.id,
      domain: best.task,
      source: group.source,
      system: best.system_str,
      turns,
      meta: { total_turns: best.total_turns, rows: group.rows.length },
    },
  };
}

/**
 * AgentWorldBench-style JSONL: `task, id, prompt[], response[], system_str, turn_idx,
 * total_turns`. One trajectory per distinct id; a trajectory's rows must be contiguous, so the
 * reader holds one trajectory at a time (an id seen again later is quarantined, not merged).
 */
export const agentWorldBenchReader: Reader = {
  name: FORMAT,
  domain: "from each row's task",
  description: "AgentWorldBench rows (task, id, prompt[], response[], system_str, turn_idx); one trajectory per id",

  sniff(head) {
    const line = firstLine(head);
    const parsed = parseSniffedJson(line);
    if (parsed.ok) {
      const row = parsed.value;
      return isRecord(row) && Array.isArray(row.prompt) && Array.isArray(row.response) && "turn_idx" in row;
    }
    // A first line longer than the head cannot be parsed; look for the keys instead.
    return !head.includes("\n") && line.startsWith("{") && /"prompt"\s*:\s*\[/.test(line) && /"turn_idx"\s*:/.test(line);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const finishedIds = new Set<string>();
    let group: Group | undefined;
    for await (const line of recordLines(path, options, FORMAT)) {
      if (line.kind === "quarantine") {
        yield line;
        continue;
      }
      const { source } = line;
      let raw: unknown;
      try {
        raw = parseRow(line.text);
      } catch (err) {
        const reason = `invalid JSON: ${(err as Error).message}`;
        yield { kind: "quarantine", entry: { source, stage: "read", reason, excerpt: excerpt(line.text) } };
        continue;
      }
      const parsed = rowSchema.safeParse(raw);
      if (!parsed.success) {
        const { field, reason } = describeZodError(parsed.error);
        yield { kind: "quarantine", entry: { source, stage: "read", ...(field ? { field } : {}), reason, excerpt: excerpt(line.text) } };
        continue;
      }
      const row = parsed.data;
      if (group && group.id === row.id) {
        group.rows.push(row);
        continue;
      }
      if (group) {
        finishedIds.add(group.id);
        yield groupToTrajectory(group);
      }
      if (finishedIds.has(row.id)) {
        const reason = `rows of trajectory ${row.id} are not contiguous: this id was already read earlier in the file`;
        yield { kind: "quarantine", entry: { source, id: row.id, stage: "read", field: "id", reason } };
        group = undefined;
        continue;
      }
      group = { id: row.id, source, rows: [row] };
    }
    if (group) yield groupToTrajectory(group);
  },
};
