import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { jsonFileLayout } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import {
  canonicalAction,
  describeType,
  FieldError,
  isRecord,
  jsonObjectLines,
  jsonTextOr,
  MAX_JSON_DEPTH,
  nestsTooDeep,
} from "./record-helpers.ts";
import { boundsAttribute, renderDump, type ViewNode } from "./uiautomator-render.ts";
import { UIAUTOMATOR_TREE_FORMAT } from "./uiautomator-xml.ts";

/**
 * Android-in-the-Wild (google-research `android_in_the_wild`) step rows, as its TFRecord examples
 * come out flattened to JSON (one row per step: `episode_id`, `step_id`, `episode_length`,
 * `goal_info`, `current_activity`, `results/action_type`, `results/yx_touch`, `results/yx_lift`,
 * `results/type_action`, `image/ui_annotations_positions|text|ui_types`, `image/encoded`,
 * `image/width|height`, `device_type`, `android_api_level`): JSONL, or a top-level JSON array
 * streamed element by element. A value left as the TFRecord feature's list (`"step_id": [3]`,
 * positions as one flat list of 4·n numbers) is read like the unwrapped one; the features spelled
 * with `_` for `/` (`results_action_type`, `image_ui_annotations_positions`, the episode as `ep_id`,
 * as Hugging Face exports name the columns) are read as the features. Android-in-the-Zoo (AITZ)
 * episode files — a JSON array of one episode's steps, AitW's fields under AITZ's names (see
 * `stepView`) — are read the same way, its `coat_action_think` as the turn's thinking.
 *
 * - Grouping: consecutive rows of one `episode_id` are one trajectory, in `step_id` order (rows
 *   of an episode may come in any order inside their run). Only the current episode's rows are
 *   held (memory bounded per episode; an episode over `input.max_line_bytes` of JSON is
 *   quarantined). Episodes are not merged across other episodes' rows: a later run of rows of an
 *   episode already read (interleaved episodes) is quarantined, naming the rows, never joined.
 * - Each row's screen is seen BEFORE its action (AitW records the screenshot the action was taken
 *   on). So the initial observation is the first row's screen, the turn for row i is its action
 *   with row i+1's screen as observation, and the last row's action (often a status) saw no screen
 *   after it: `meta.unobserved_final_action`. Step ids must be consecutive (a gap would pair an
 *   action with a screen it did not lead to): an episode with a gap or a repeated step is
 *   quarantined. An episode cut short (fewer rows than `episode_length`, as samples are) is read.
 * - Observation: the screen's UI annotations rendered as a `uiautomator dump` (one `<node>` per
 *   annotation, in the recorded order: class = the ui type (`TEXT`, `ICON_HOME`, …), text, bounds
 *   in pixels from the (y, x, height, width) fractions and `image/width|height` — per-mille of the
 *   screen when the size is missing, `meta.bounds_unit`); the root carries `activity`
 *   (`current_activity`). `turn.meta.tree_format: "uiautomator-xml"`; the screenshot path
 *   (`image/encoded`, when it is a path) is `turn.meta.screenshot`.
 * - Action: canonical `{"name", "arguments"}` JSON, named after AitW's ActionType:
 *   `dual_point` {touch_yx, lift_yx} (4; taps and swipes alike, as recorded), `type` {text} (3),
 *   `press_back` (5), `press_home` (6), `press_enter` (7), `status_task_complete` (10),
 *   `status_task_impossible` (11). Integer codes, the enum names and the Agent Data Protocol's
 *   strings ("dual-point gesture", "go_back", "task_complete", …) are all read.
 * - Task: `goal_info`. Outcome (`meta.outcome`): a last action STATUS_TASK_COMPLETE is
 *   `{success: true}`, STATUS_TASK_IMPOSSIBLE `{success: false, failure_mode: "task_impossible"}`;
 *   none otherwise. Id: `episode_id`. Domain: android.
 */
const FORMAT = "android-in-the-wild";

type Json = Record<string, unknown>;

const ACTION_NAMES: Record<number, string> = {
  3: "type",
  4: "dual_point",
  5: "press_back",
  6: "press_home",
  7: "press_enter",
  10: "status_task_complete",
  11: "status_task_impossible",
};

/** Other spellings of the action types: the enum's names, and the Agent Data Protocol's strings. */
const ACTION_ALIASES: Record<string, string> = {
  type: "type",
  dual_point: "dual_point",
  "dual-point gesture": "dual_point",
  press_back: "press_back",
  go_back: "press_back",
  press_home: "press_home",
  go_home: "press_home",
  press_enter: "press_enter",
  enter: "press_enter",
  status_task_complete: "status_task_complete",
  task_complete: "status_task_complete",
  status_task_impossible: "status_task_impossible",
  task_impossible: "status_task_impossible",
};

/** A TFRecord feature left as its one-value list is read as that value. */
function one(value: unknown): unknown {
  return Array.isArray(value) && value.length === 1 ? value[0] : value;
}

function actionName(value: unknown): string | undefined {
  const v = one(value);
  if (typeof v === "number") return ACTION_NAMES[v];
  if (typeof v !== "string") return undefined;
  if (/^\d+$/.test(v.trim())) return ACTION_NAMES[Number(v)];
  return ACTION_ALIASES[v.trim().toLowerCase()];
}

function episodeIdOf(row: Json): string | undefined {
  const v = one(row.episode_id);
  if (typeof v === "string" && v !== "") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
}

/** Is this parsed row an AitW (or AITZ) step? */
function isStepRow(row: Json): boolean {
  return (
    "episode_id" in row &&
    ("results/action_type" in row || "image/ui_annotations_positions" in row || "result_action_type" in row || "ui_positions" in row)
  );
}

/**
 * The TFRecord feature names as Hugging Face exports of AitW spell them (`/` is not allowed in a
 * column name there: `results_action_type`, `image_ui_annotations_positions`, …, the episode as
 * `ep_id`), renamed to the feature names. A row that has both spellings keeps the feature's.
 */
const UNDERSCORE_FEATURES = [
  "results/action_type",
  "results/yx_touch",
  "results/yx_lift",
  "results/type_action",
  "image/ui_annotations_positions",
  "image/ui_annotations_text",
  "image/ui_annotations_ui_types",
  "image/width",
  "image/height",
  "image/channels",
  "image/encoded",
];

function withFeatureNames(row: Json): Json {
  let out: Json | undefined;
  for (const feature of UNDERSCORE_FEATURES) {
    const underscored = feature.replace("/", "_");
    if (!(underscored in row) || feature in row) continue;
    out ??= { ...row };
    out[feature] = row[underscored];
    delete out[underscored];
  }
  if (!("episode_id" in row) && "ep_id" in row) {
    out ??= { ...row };
    out.episode_id = row.ep_id;
    delete out.ep_id;
  }
  return out ?? row;
}

/**
 * An Android-in-the-Zoo (AITZ, IMNearth/CoAT) step as an AitW step: AITZ keeps AitW's episodes,
 * action codes and screen annotations under its own names, with the lists as JSON text —
 * `result_action_type`, `result_touch_yx` / `result_lift_yx` ("[y, x]" fractions),
 * `result_action_text`, `ui_positions` ("[[y, x, h, w], …]" in PIXELS of the screenshot, not
 * fractions), `ui_text`, `ui_types`, `instruction`, `image_path` — and adds its chain-of-action-
 * thought annotations: `coat_action_think` (the thinking behind the step's action),
 * `coat_action_desc` and `coat_action_result` (turn meta `coat`; `coat_screen_desc`, GPT's
 * description of the screen the action was taken on, is not kept).
 */
interface StepView {
  row: Json;
  /** The boxes are pixels already (AITZ), not fractions of the screen. */
  pixelBoxes: boolean;
  thinking?: string;
  coat?: Json;
}

const AITZ_FIELDS: [aitz: string, aitw: string, json: boolean][] = [
  ["result_action_type", "results/action_type", false],
  ["result_touch_yx", "results/yx_touch", true],
  ["result_lift_yx", "results/yx_lift", true],
  ["result_action_text", "results/type_action", false],
  ["ui_positions", "image/ui_annotations_positions", true],
  ["ui_text", "image/ui_annotations_text", true],
  ["ui_types", "image/ui_annotations_ui_types", true],
  ["instruction", "goal_info", false],
  ["image_path", "image/encoded", false],
];

function stepView(row: Json): StepView {
  if (!("result_action_type" in row || "ui_positions" in row) || "results/action_type" in row) return { row, pixelBoxes: false };
  const out: Json = { ...row };
  for (const [aitz, aitw, json] of AITZ_FIELDS) {
    if (!(aitz in row)) continue;
    let value = row[aitz];
    if (json && typeof value === "string") {
      try {
        value = JSON.parse(value);
      } catch (err) {
        throw new FieldError(aitz, `${aitz}: not JSON text (${(err as Error).message})`);
      }
      if (nestsTooDeep(value)) throw new FieldError(aitz, `${aitz}: nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    delete out[aitz];
    out[aitw] = value;
  }
  const coat: Json = {};
  for (const [key, name] of [
    ["coat_action_desc", "action_description"],
    ["coat_action_result", "action_result"],
  ] as const)
    if (typeof row[key] === "string" && row[key] !== "") coat[name] = row[key];
  const think = row.coat_action_think;
  return {
    row: out,
    pixelBoxes: true,
    ...(typeof think === "string" && think !== "" ? { thinking: think } : {}),
    ...(Object.keys(coat).length > 0 ? { coat } : {}),
  };
}

/** AITZ field names for the AitW names its errors use. */
const AITZ_NAME: Record<string, string> = Object.fromEntries(AITZ_FIELDS.map(([aitz, aitw]) => [aitw, aitz]));

interface Row {
  row: Json;
  source: SourceRef;
}

function numberPair(value: unknown, field: string): [number, number] {
  if (!Array.isArray(value) || value.length !== 2 || !value.every((n) => typeof n === "number"))
    throw new FieldError(field, `${field}: expected [y, x], got ${excerpt(JSON.stringify(value) ?? "nothing")}`);
  return value as [number, number];
}

function action(row: Json): { name: string; text: string } {
  const name = actionName(row["results/action_type"]);
  if (!name)
    throw new FieldError(
      "results/action_type",
      `results/action_type: unknown action type ${excerpt(JSON.stringify(row["results/action_type"]) ?? "nothing")}`,
    );
  if (name === "dual_point") {
    const touch = numberPair(row["results/yx_touch"], "results/yx_touch");
    const lift = numberPair(row["results/yx_lift"], "results/yx_lift");
    return { name, text: canonicalAction(name, { touch_yx: touch, lift_yx: lift }) };
  }
  if (name === "type") {
    const text = one(row["results/type_action"]);
    if (typeof text !== "string")
      throw new FieldError("results/type_action", `results/type_action: expected a string, got ${describeType(text)}`);
    return { name, text: canonicalAction(name, { text }) };
  }
  return { name, text: canonicalAction(name, {}) };
}

/** The annotations' boxes, each (y, x, height, width) as fractions of the screen. */
function positions(value: unknown): number[][] {
  if (!Array.isArray(value)) throw new FieldError("image/ui_annotations_positions", `expected a list of boxes, got ${describeType(value)}`);
  if (value.every((n) => typeof n === "number")) {
    if (value.length % 4 !== 0)
      throw new FieldError("image/ui_annotations_positions", `a flat list of ${value.length} numbers is not (y, x, h, w) boxes`);
    const boxes: number[][] = [];
    for (let i = 0; i < value.length; i += 4) boxes.push(value.slice(i, i + 4) as number[]);
    return boxes;
  }
  return value.map((box, i) => {
    if (!Array.isArray(box) || box.length !== 4 || !box.every((n) => typeof n === "number"))
      throw new FieldError("image/ui_annotations_positions", `box ${i} is not four numbers (y, x, h, w)`);
    return box as number[];
  });
}

function strings(value: unknown, field: string, length: number): string[] {
  if (value === undefined) return Array.from({ length }, () => "");
  if (!Array.isArray(value) || !value.every((s) => typeof s === "string"))
    throw new FieldError(field, `${field}: expected a list of strings, got ${describeType(value)}`);
  if (value.length !== length) throw new FieldError(field, `${field}: ${value.length} values for ${length} boxes`);
  return value as string[];
}

/** One step's screen as a uiautomator dump, and whether its bounds are pixels. */
function screen(row: Json, pixelBoxes = false): { dump: string; pixels: boolean } {
  // A missing (or null) annotations key is no screen recorded, not an empty screen (an empty
  // screen is present-but-empty lists): pairing the action with a blank screen would invent one.
  const recorded = row["image/ui_annotations_positions"];
  if (recorded === undefined || recorded === null)
    throw new FieldError(
      "image/ui_annotations_positions",
      "image/ui_annotations_positions: missing, so the step's screen was not recorded (an empty screen is an empty list)",
    );
  const boxes = positions(recorded);
  const texts = strings(row["image/ui_annotations_text"], "image/ui_annotations_text", boxes.length);
  const types = strings(row["image/ui_annotations_ui_types"], "image/ui_annotations_ui_types", boxes.length);
  const width = one(row["image/width"]);
  const height = one(row["image/height"]);
  const sized = typeof width === "number" && typeof height === "number" && width > 0 && height > 0;
  const pixels = pixelBoxes || sized;
  const [w, h] = pixelBoxes ? [1, 1] : sized ? [width, height] : [1000, 1000];
  const nodes: ViewNode[] = boxes.map(([y, x, bh, bw], i) => ({
    attributes: {
      class: types[i] || "node",
      text: texts[i] as string,
      bounds: boundsAttribute(
        (x as number) * w,
        (y as number) * h,
        ((x as number) + (bw as number)) * w,
        ((y as number) + (bh as number)) * h,
      ),
    },
    children: [],
  }));
  const activity = one(row.current_activity);
  return { dump: renderDump(typeof activity === "string" && activity !== "" ? { activity } : {}, nodes), pixels };
}

function stepId(row: Json): number {
  const v = one(row.step_id);
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0)
    throw new FieldError("step_id", `step_id: expected a step number, got ${describeType(v)}`);
  return n;
}

/** A screenshot value kept in meta only when it is a path, not the image bytes. */
const MAX_PATH_CHARS = 1024;

/** One episode's rows (in file order) as a trajectory, or why not. */
function episodeItem(id: string, rows: Row[]): ReadItem {
  const first = rows[0] as Row;
  const source: SourceRef = { ...first.source };
  const span = rowSpan(rows);
  const fail = (reason: string, field: string | undefined, at: Row = first): ReadItem => ({
    kind: "quarantine",
    entry: { source, id, stage: "read", field, reason: `episode ${id} (${span}): ${reason}${at === first ? "" : ` [at ${rowName(at)}]`}` },
  });
  let steps: { step: number; at: Row }[];
  try {
    steps = rows.map((at) => ({ step: stepId(at.row), at }));
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    const at = rows.find((r) => {
      try {
        stepId(r.row);
        return false;
      } catch {
        return true;
      }
    });
    return fail(err.message, err.field, at);
  }
  steps.sort((a, b) => a.step - b.step);
  for (let i = 1; i < steps.length; i++) {
    const [prev, cur] = [steps[i - 1], steps[i]] as [{ step: number; at: Row }, { step: number; at: Row }];
    if (cur.step === prev.step) return fail(`step_id ${cur.step} appears twice`, "step_id", cur.at);
    if (cur.step !== prev.step + 1)
      return fail(
        `step_id ${prev.step + 1}${cur.step - prev.step > 2 ? `–${cur.step - 1}` : ""} missing: the action of step ${prev.step} has no screen after it`,
        "step_id",
        cur.at,
      );
  }
  if (steps.length < 2) return fail("one step only: its action has no screen after it, so nothing is observed", "step_id");

  const screens: string[] = [];
  const actions: { name: string; text: string }[] = [];
  const views: StepView[] = [];
  let pixels = true;
  for (const { at } of steps) {
    let view: StepView | undefined;
    try {
      if (nestsTooDeep(at.row)) throw new FieldError("row", `the row nests deeper than ${MAX_JSON_DEPTH} levels`);
      view = stepView(at.row);
      views.push(view);
      const shown = screen(view.row, view.pixelBoxes);
      pixels &&= shown.pixels;
      screens.push(shown.dump);
      actions.push(action(view.row));
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      // An AITZ row's error names its own field, not the AitW feature it stands for.
      const { field } = err;
      const own = view?.pixelBoxes && field !== undefined ? AITZ_NAME[field] : undefined;
      if (own === undefined || field === undefined) return fail(err.message, field, at);
      return fail(err.message.startsWith(field) ? own + err.message.slice(field.length) : err.message, own, at);
    }
  }
  const stepMeta = (row: Json): Json => {
    const meta: Json = { step_id: stepId(row) };
    const shot = one(row["image/encoded"]);
    if (typeof shot === "string" && shot.length <= MAX_PATH_CHARS) meta.screenshot = shot;
    return meta;
  };
  const turns: Turn[] = [];
  for (let i = 0; i + 1 < steps.length; i++) {
    const view = views[i] as StepView;
    const next = (views[i + 1] as StepView).row;
    turns.push({
      action: (actions[i] as { text: string }).text,
      observation: screens[i + 1] as string,
      ...(view.thinking !== undefined ? { thinking: view.thinking } : {}),
      meta: { tree_format: UIAUTOMATOR_TREE_FORMAT, ...stepMeta(next), ...(view.coat ? { coat: view.coat } : {}) },
    });
  }
  const firstRow = (views[0] as StepView).row;
  const last = actions.at(-1) as { name: string; text: string };
  const meta: Json = { initial_tree_format: UIAUTOMATOR_TREE_FORMAT, unobserved_final_action: last.text };
  const lastView = views.at(-1) as StepView;
  if (lastView.thinking !== undefined) meta.unobserved_final_thinking = lastView.thinking;
  if (lastView.pixelBoxes) meta.source_layout = "aitz";
  const initialShot = stepMeta(firstRow).screenshot;
  if (initialShot !== undefined) meta.initial_screenshot = initialShot;
  if (last.name === "status_task_complete") meta.outcome = { success: true };
  else if (last.name === "status_task_impossible") meta.outcome = { success: false, failure_mode: "task_impossible" };
  const length = one(firstRow.episode_length);
  if (typeof length === "number") meta.episode_length = length;
  meta.steps_read = steps.length;
  if (steps[0]?.step !== 0) meta.first_step_id = steps[0]?.step;
  if (!pixels) meta.bounds_unit = "per-mille";
  for (const key of ["device_type", "android_api_level"]) {
    const v = one(firstRow[key]);
    if (typeof v === "string" || typeof v === "number") meta[key] = v;
  }
  const goal = one(firstRow.goal_info);
  const trajectory: Trajectory = {
    id,
    domain: "android",
    source,
    ...(typeof goal === "string" && goal !== "" ? { task: goal } : {}),
    initialObservation: screens[0] as string,
    turns,
    meta,
  };
  return { kind: "trajectory", trajectory };
}

function rowName(at: Row): string {
  return at.source.line !== undefined ? `line ${at.source.line}` : `element ${at.source.row}`;
}

function rowSpan(rows: Row[]): string {
  const a = rows[0] as Row;
  const b = rows.at(-1) as Row;
  if (a.source.line === b.source.line && a.source.row === b.source.row) return rowName(a);
  return a.source.line !== undefined ? `lines ${a.source.line}–${b.source.line}` : `elements ${a.source.row}–${b.source.row}`;
}

/**
 * Groups consecutive rows by episode and yields one item per episode run (and one per row that
 * is no step at all). Holds one episode's rows; remembers only the ids of episodes already read.
 */
class EpisodeGrouper {
  private rows: Row[] = [];
  private id: string | undefined;
  private bytes = 0;
  private oversized = false;
  private first: SourceRef | undefined;
  private last: SourceRef | undefined;
  private readonly done = new Map<string, string>();

  private readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  *add(raw: Json, source: SourceRef, size: number): Generator<ReadItem> {
    const row = withFeatureNames(raw);
    const id = episodeIdOf(row);
    if (!isStepRow(row) || id === undefined) {
      const reason = !isStepRow(row)
        ? "not an Android-in-the-Wild step row: no episode_id beside results/action_type or image/ui_annotations_positions"
        : `episode_id: expected a string or number, got ${describeType(one(row.episode_id))}`;
      yield { kind: "quarantine", entry: { source, stage: "read", field: "episode_id", reason, excerpt: excerpt(jsonTextOr(row, "")) } };
      return;
    }
    if (id !== this.id) yield* this.flush();
    this.id = id;
    this.bytes += size;
    this.last = source;
    if (this.rows.length === 0) this.first = source;
    else if (this.oversized) return;
    if (this.bytes > this.maxBytes) {
      // Over the limit: the rows are let go; the rest of the run is only counted.
      this.oversized = true;
      this.rows = [{ row: {}, source }];
      return;
    }
    this.rows.push({ row, source });
  }

  *flush(): Generator<ReadItem> {
    const id = this.id;
    const rows = this.rows;
    if (id === undefined || rows.length === 0) return;
    this.rows = [];
    this.id = undefined;
    const source = { ...(this.first as SourceRef) };
    const span = rowSpan([
      { row: {}, source },
      { row: {}, source: this.last as SourceRef },
    ]);
    const oversized = this.oversized;
    this.oversized = false;
    this.bytes = 0;
    const earlier = this.done.get(id);
    if (earlier !== undefined) {
      const reason = `episode ${id} (${span}): its rows are apart from its earlier rows (${earlier}), which were read as a trajectory of their own; interleaved episodes are not merged`;
      yield { kind: "quarantine", entry: { source, id, stage: "read", field: "episode_id", reason } };
      return;
    }
    this.done.set(id, span);
    if (oversized) {
      const reason = `episode ${id} (${span}): its rows are over ${this.maxBytes} bytes of JSON, the per-record limit (input.max_line_bytes)`;
      yield { kind: "quarantine", entry: { source, id, stage: "read", reason } };
      return;
    }
    yield episodeItem(id, rows);
  }
}

export const androidInTheWildReader: Reader = {
  name: FORMAT,
  domain: "android",
  description: "Android-in-the-Wild step rows (episode_id, step_id, results/action_type, image/ui_annotations_*), grouped into episodes",

  sniff(head) {
    const start = head.replace(/^\uFEFF/, "").trimStart();
    if (!start.startsWith("{") && !start.startsWith("[")) return false;
    if (/"episode_id"\s*:/.test(start) && /"(result_action_type|ui_positions)"\s*:/.test(start) && /"result_touch_yx"\s*:/.test(start))
      return true; // AITZ
    return (
      /"(episode_id|ep_id)"\s*:/.test(start) &&
      /"(results[/_]action_type|image[/_]ui_annotations_positions|results[/_]yx_touch)"\s*:/.test(start)
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const grouper = new EpisodeGrouper(options.maxLineBytes);
    const layout = await jsonFileLayout(path);
    if (layout === "jsonl") {
      for await (const line of jsonObjectLines(path, options, FORMAT)) {
        if (line.kind === "quarantine") yield line;
        else yield* grouper.add(line.record, line.source, line.text.length);
      }
      yield* grouper.flush();
      return;
    }
    // A JSON array of rows (or one pretty-printed row): each element assembled on its own.
    const wanted = (at: JsonPath, _kind: JsonKind) => (layout === "array" ? at.length === 1 && typeof at[0] === "number" : at.length === 0);
    const { stream } = await openDecompressed(path);
    let last = -1;
    try {
      for await (const { path: at, value } of selectJson(stream, wanted)) {
        const index = layout === "array" ? (at[0] as number) : 0;
        last = index;
        const source: SourceRef =
          layout === "array" ? { uri: path, offset: 0, row: index, format: FORMAT } : { uri: path, offset: 0, format: FORMAT };
        if (!isRecord(value) || nestsTooDeep(value)) {
          yield* grouper.flush();
          const what = isRecord(value) ? `a row nested deeper than ${MAX_JSON_DEPTH} levels` : describeType(value);
          const reason = `element ${index}: expected a JSON object (a step row), got ${what}`;
          yield { kind: "quarantine", entry: { source, stage: "read", reason } };
          continue;
        }
        yield* grouper.add(value, source, JSON.stringify(value).length);
      }
      yield* grouper.flush();
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
      // The rows before the break are whole: the episode they belong to is read as far as it goes.
      yield* grouper.flush();
      const entry: QuarantineEntry = {
        source: { uri: path, format: FORMAT },
        stage: "read",
        reason: `${layout === "array" ? `the JSON array breaks after element ${last}` : "the file is not one JSON document"}: ${err.message}`,
      };
      yield { kind: "quarantine", entry };
    }
  },
};
