import { createHash } from "node:crypto";
import type { Trajectory, Turn } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, parentOf, sideFileExists, sideFileSize } from "../io/side-files.ts";
import { type CutNote, truncatedLineMeta, withoutCutLastRecordLine } from "./cut-last-line.ts";
import { osTreeFormat, parseOsObservation } from "./os-a11y.ts";
import {
  type Companions,
  excerpt,
  firstLine,
  type LineSource,
  parseJsonLine,
  parseSniffedJson,
  type Reader,
  type ReaderOptions,
  type ReadItem,
  recordLines,
} from "./reader.ts";
import { describeType, FieldError, isRecord, nestsTooDeep } from "./record-helpers.ts";

/**
 * OSWorld result folders (xlang-ai/OSWorld `run.py` + `lib_run_single.py`):
 * `results/<action_space>/<observation_type>/<model>/<domain>/<example_id>/` holds `traj.jsonl`
 * (one line per executed action: `step_num`, `action_timestamp` (`%Y%m%d@%H%M%S`), `action`,
 * `response`, `reward`, `done`, `info`, `screenshot_file`; some agents' variants add
 * `instruction` or `action_num`), `result.txt` (the evaluator's score, a float in [0, 1]),
 * `step_*.png` screenshots, `recording.mp4`, `runtime.log`. One `traj.jsonl` = one trajectory;
 * the folder's other files are its companions.
 *
 * - action: the executed `action` — pyautogui code or `WAIT` / `DONE` / `FAIL` as written, a
 *   dict (`computer_13`, tool-use agents) as its JSON.
 * - thinking: `response` when it is text (the model's reply the action was parsed from); a
 *   structured response goes to turn meta `response`.
 * - observation: OSWorld writes NO text observation: the state after an action is only the
 *   screenshot file (`run_single_example` keeps the accessibility tree in memory, whatever the
 *   observation type). When a line carries a tree (`accessibility_tree`, `a11y_tree` or
 *   `linearized_accessibility_tree`, at top level or under `obs` / `observation` — forks that log
 *   it) that is AT-SPI XML or OSWorld's table, it is the observation (domain os conventions of
 *   os-a11y.ts, turn meta `tree_format`; one that starts like a tree and does not parse is still
 *   the observation, as the agent saw it, and the normalizer counts it `tree.unparsed`). Otherwise the observation is
 *   `[screenshot <file>]` and, when no step has a tree, the trajectory is yielded with
 *   `meta.read_filter` (stage `osworld-screenshot-only`): nothing to train a text world model on.
 * - task: the instruction is not in the result folder (it is in
 *   `evaluation_examples/examples/<domain>/<id>.json`): read from an optional copy of that config
 *   beside traj.jsonl (`<example_id>.json`, `task.json`, `config.json` or `example.json`, its
 *   `instruction`; `task_id` = its `id`), else from a line's `instruction`, else unknown.
 * - outcome: `result.txt` → `meta.outcome.reward`; `success` only for a score of exactly 1 or 0.
 *   No result.txt (a run stopped before evaluation): no outcome.
 * - model, task_id: from the path when it has OSWorld's layout (the observation-type folder is one of
 *   screenshot / a11y_tree / screenshot_a11y_tree / som); `meta.osworld` keeps action_space,
 *   observation_type and the app domain (chrome, gimp, os, …). Domain: os.
 * - id: `<example folder>-<sha256 of traj.jsonl, 12 hex>`.
 *
 * run.py's `{"Error": "Time limit exceeded in …"}` line (appended when the example raised) ends
 * the run: the steps before it are read, the error is `meta.osworld.error` (a file with only that
 * line is quarantined saying so; a step after it fails the file).
 * A line that is not a JSON object, has no `action`, or a non-integer `step_num` fails the whole
 * file (quarantined with its line and field): a trajectory missing a step is not kept. The one
 * exception is a last line cut while run.py wrote it (cut-last-line.ts): the steps before it are
 * read, `meta.truncated_line` says which line was left out, and the id hashes the lines read.
 */

const FORMAT = "osworld";
const OBSERVATION_TYPES = new Set(["screenshot", "a11y_tree", "screenshot_a11y_tree", "som"]);
const CONFIG_NAMES = ["task.json", "config.json", "example.json"];
const TREE_KEYS = ["accessibility_tree", "a11y_tree", "linearized_accessibility_tree"];
const TIMESTAMP = /"action_timestamp"\s*:\s*"\d{8}@\d{6}/;
const READ_FILTER = {
  stage: "osworld-screenshot-only",
  reason:
    "OSWorld traj.jsonl records each step's result only as a screenshot file; no step has a text observation (accessibility tree) to train on",
};

/** A field problem of one step, with the step's line (its source and text, for the quarantine entry). */
class StepError extends FieldError {
  readonly source: LineSource;
  readonly text: string | undefined;
  constructor(message: string, source: LineSource, field?: string, text?: string) {
    super(field, message);
    this.source = source;
    this.text = text;
  }
}

export const osworldReader: Reader = {
  name: FORMAT,
  domain: "os",
  description: "OSWorld result folders: an example's traj.jsonl (+ result.txt, config) → one desktop trajectory",

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, ""));
    const parsed = parseSniffedJson(line);
    if (!parsed.ok) return /^\s*\{/.test(line) && /"step_num"\s*:\s*\d/.test(line) && TIMESTAMP.test(line);
    const value = parsed.value;
    return (
      isRecord(value) &&
      typeof value.step_num === "number" &&
      "action" in value &&
      (typeof value.screenshot_file === "string" ||
        (typeof value.action_timestamp === "string" && /^\d{8}@\d{6}/.test(value.action_timestamp)))
    );
  },

  async companions(path: string): Promise<Companions> {
    const dir = parentOf(path);
    const files = [path, beside(dir, "result.txt"), ...configCandidates(dir)];
    const sizes = await Promise.all(files.map(async (file) => (await sideFileSize(file)) ?? 0));
    const bytes = sizes.reduce((sum, size) => sum + size, 0);
    return { dirs: [dir], files: [], bytes, label: `OSWorld example ${baseName(dir)}` };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const dir = parentOf(path);
    const hash = createHash("sha256");
    const id = () => `${baseName(dir)}-${hash.copy().digest("hex").slice(0, 12)}`;
    const turns: Turn[] = [];
    let firstSource: LineSource | undefined;
    let instruction: string | undefined;
    let lastDone: unknown;
    let aborted: { text: string; source: LineSource } | undefined;
    const cut: CutNote = {};
    try {
      for await (const line of withoutCutLastRecordLine(recordLines(path, options, FORMAT), cut)) {
        if (line.kind === "quarantine") throw new StepError(line.entry.reason, line.entry.source as LineSource);
        firstSource ??= line.source;
        hash.update(line.text).update("\n");
        const failure = errorLine(line.text);
        if (failure !== undefined) {
          // run.py appends `{"Error": …}` when the example raised (time limit, env crash): the run
          // stopped there; the steps before it are kept, the error said in meta.
          aborted ??= { text: failure, source: line.source };
          continue;
        }
        if (aborted)
          throw new StepError(
            `line ${line.source.line ?? "?"}: a step after the run's {"Error"} line (line ${aborted.source.line ?? "?"}); the steps cannot be ordered`,
            line.source,
            "Error",
            line.text,
          );
        const step = readStep(line.text, line.source);
        turns.push(step.turn);
        instruction ??= step.instruction;
        lastDone = step.done;
      }
    } catch (err) {
      if (!(err instanceof StepError)) throw err;
      const field = err.field ? { field: err.field } : {};
      yield {
        kind: "quarantine",
        entry: {
          source: err.source,
          id: id(),
          stage: "read",
          ...field,
          reason: err.message,
          ...(err.text ? { excerpt: excerpt(err.text) } : {}),
        },
      };
      return;
    }
    if (!firstSource || turns.length === 0) {
      // An empty traj.jsonl: no step was run, no record. Only an Error line: say why.
      if (aborted)
        yield {
          kind: "quarantine",
          entry: {
            source: aborted.source,
            id: id(),
            stage: "read",
            field: "Error",
            reason: `the run stopped before its first step: ${excerpt(aborted.text)}`,
          },
        };
      return;
    }
    const layout = pathLayout(dir);
    const config = await readConfig(dir, options.maxLineBytes);
    const outcome = await readOutcome(dir);
    const task = config.instruction ?? instruction;
    const taskId = config.id ?? layout?.example_id;
    const hasTree = turns.some((turn) => turn.meta?.tree_format !== undefined);
    const trajectory: Trajectory = {
      id: id(),
      domain: options.domain ?? "os",
      source: { uri: path, line: 1, offset: 0, format: FORMAT },
      ...(task !== undefined ? { task } : {}),
      turns,
      meta: {
        ...(outcome.outcome ? { outcome: outcome.outcome } : {}),
        ...(layout ? { model: layout.model } : {}),
        ...(taskId !== undefined ? { task_id: taskId } : {}),
        osworld: {
          ...(layout ? { action_space: layout.action_space, observation_type: layout.observation_type, app_domain: layout.domain } : {}),
          task_source: config.file ? baseName(config.file) : instruction !== undefined ? "traj.jsonl" : "unknown",
          ...(outcome.note ? { result: outcome.note } : {}),
          ...(aborted ? { error: aborted.text } : {}),
          ...(typeof lastDone === "boolean" ? { done: lastDone } : {}),
          observation: hasTree ? "a11y_tree" : "screenshot",
        },
        ...(hasTree ? {} : { read_filter: READ_FILTER }),
        ...truncatedLineMeta(cut),
      },
    };
    yield { kind: "trajectory", trajectory };
  },
};

function readStep(text: string, source: LineSource): { turn: Turn; instruction?: string; done: unknown } {
  const where = `line ${source.line ?? "?"}`;
  const parsed = parseJsonLine(text);
  if (!parsed.ok) throw new StepError(`${where}: ${parsed.reason}`, source, undefined, text);
  const step = parsed.value;
  if (!isRecord(step)) throw new StepError(`${where}: expected a JSON object, got ${describeType(step)}`, source, undefined, text);
  if (nestsTooDeep(step)) throw new StepError(`${where}: JSON nested too deep`, source, undefined, text);
  if (step.step_num !== undefined && !Number.isInteger(step.step_num))
    throw new StepError(`${where}: step_num: expected an integer, got ${describeType(step.step_num)}`, source, "step_num", text);
  const { action } = step;
  if (typeof action !== "string" && !isRecord(action))
    throw new StepError(`${where}: action: expected a string or an object, got ${describeType(action)}`, source, "action", text);
  const tree = treeOf(step);
  const screenshot = typeof step.screenshot_file === "string" ? step.screenshot_file : undefined;
  const meta: Record<string, unknown> = {};
  for (const key of ["step_num", "action_num", "action_timestamp", "reward", "done"]) if (step[key] !== undefined) meta[key] = step[key];
  if (screenshot !== undefined) meta.screenshot_file = screenshot;
  if (isRecord(step.info) && Object.keys(step.info).length > 0) meta.info = step.info;
  if (step.response !== undefined && step.response !== null && typeof step.response !== "string") meta.response = step.response;
  if (tree) meta.tree_format = tree.format;
  const thinking = typeof step.response === "string" && step.response.trim() !== "" ? step.response : undefined;
  const turn: Turn = {
    action: typeof action === "string" ? action : JSON.stringify(action),
    observation: tree ? tree.text : `[screenshot ${screenshot ?? "not recorded"}]`,
    ...(thinking !== undefined ? { thinking } : {}),
    meta,
  };
  return { turn, ...(typeof step.instruction === "string" ? { instruction: step.instruction } : {}), done: step.done };
}

/** The text of run.py's `{"Error": "…"}` line (an object with an `Error` string and no `action`). */
function errorLine(text: string): string | undefined {
  if (!/"Error"\s*:/.test(text)) return undefined;
  const parsed = parseJsonLine(text);
  if (!parsed.ok || !isRecord(parsed.value) || "action" in parsed.value) return undefined;
  return typeof parsed.value.Error === "string" ? parsed.value.Error : undefined;
}

/**
 * A text accessibility tree logged on the line: the first that parses as one of the desktop forms,
 * else the first that only looks like one (AT-SPI XML or a table header, then damaged): that text
 * is what the agent saw, so it is the observation all the same — the os normalizer leaves it as
 * read and counts it `tree.unparsed` — never replaced by the screenshot without a trace.
 */
function treeOf(step: Record<string, unknown>): { text: string; format: string } | undefined {
  const holders = [step, step.obs, step.observation].filter(isRecord);
  let unparsed: { text: string; format: string } | undefined;
  for (const holder of holders)
    for (const key of TREE_KEYS) {
      const text = holder[key];
      if (typeof text !== "string") continue;
      const format = osTreeFormat(text);
      if (!format) continue;
      try {
        parseOsObservation(text);
        return { text, format };
      } catch {
        unparsed ??= { text, format };
      }
    }
  return unparsed;
}

interface Layout {
  action_space: string;
  observation_type: string;
  model: string;
  domain: string;
  example_id: string;
}

/** `…/<action_space>/<observation_type>/<model>/<domain>/<example_id>` when the path has that shape. */
function pathLayout(dir: string): Layout | undefined {
  const parts = dir.split(/[\\/]/);
  if (parts.length < 6) return undefined;
  const [action_space, observation_type, model, domain, example_id] = parts.slice(-5) as [string, string, string, string, string];
  if (!OBSERVATION_TYPES.has(observation_type) || !action_space || !model || !domain || !example_id) return undefined;
  return { action_space, observation_type, model, domain, example_id };
}

function configCandidates(dir: string): string[] {
  return [beside(dir, `${baseName(dir)}.json`), ...CONFIG_NAMES.map((name) => beside(dir, name))];
}

/** The example's config beside traj.jsonl, when one is there and is an OSWorld example (has `instruction`). */
async function readConfig(dir: string, maxBytes: number): Promise<{ instruction?: string; id?: string; file?: string }> {
  for (const file of configCandidates(dir)) {
    if (!(await sideFileExists(file))) continue;
    const read = await readWholeText(file, maxBytes);
    if ("error" in read) continue;
    const parsed = parseJsonLine(read.text.replace(/^\uFEFF/, ""));
    if (!parsed.ok || !isRecord(parsed.value) || typeof parsed.value.instruction !== "string") continue;
    const { instruction, id } = parsed.value;
    return { instruction, ...(typeof id === "string" ? { id } : {}), file };
  }
  return {};
}

/** result.txt: the evaluator's score. `note` says why there is no outcome when there is none. */
async function readOutcome(dir: string): Promise<{ outcome?: { reward: number; success?: boolean }; note?: string }> {
  const file = beside(dir, "result.txt");
  if (!(await sideFileExists(file))) return { note: "no result.txt (not evaluated)" };
  const read = await readWholeText(file, 1 << 20);
  if ("error" in read) return { note: `result.txt cannot be read: ${read.error}` };
  const text = read.text.trim();
  const reward = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(reward)) return { note: `result.txt is not a number: ${JSON.stringify(excerpt(text))}` };
  return { outcome: { reward, ...(reward === 1 ? { success: true } : reward === 0 ? { success: false } : {}) } };
}
