import { z } from "zod";
import { describeZodError } from "../core/trajectory-schema.ts";
import { type A11yNode, type Bounds, makeNode, type TreeParseOptions, withKeys } from "../normalize/tree/a11y-tree.ts";
import {
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
import { parseXmlDocument, TreeParseError, type XmlElement } from "./uiautomator-xml.ts";

const FORMAT = "os-a11y";
export const ATSPI_TREE_FORMAT = "atspi-xml";
export const OSWORLD_TABLE_FORMAT = "osworld-table";

const PAIR = /^\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)$/;

/** OSWorld's `(x, y)` position and `(w, h)` size strings as a rectangle. */
function boundsFrom(position: string | undefined, size: string | undefined): Bounds | undefined {
  const p = PAIR.exec(position?.trim() ?? "");
  const s = PAIR.exec(size?.trim() ?? "");
  if (!p || !s) return undefined;
  const [left, top, width, height] = [p[1], p[2], s[1], s[2]].map(Number) as [number, number, number, number];
  return { left, top, right: left + width, bottom: top + height };
}

const POSITION = "cp:screencoord";
const SIZE = "cp:size";

/**
 * Parses an AT-SPI accessibility tree as OSWorld's desktop server serializes it: the tag is the
 * role (spaces as hyphens: `push-button`), `name` the accessible name, states as
 * `st:<state>="true"`, `attr:*` object attributes, `cp:screencoord="(x, y)"` + `cp:size="(w, h)"`
 * the screen rectangle (kept as bounds), the element's own text its text content (kept, trimmed,
 * as attribute `text`). `xmlns:*` declarations are dropped. Keys: `attr:id` when unique, else
 * the role path from the root (the AT-SPI child-index path, spelled with roles).
 */
export function parseAtspiXml(xml: string, options: TreeParseOptions = {}): A11yNode {
  return withKeys(atspiNode(parseXmlDocument(xml)), options, atspiId);
}

// The tree helpers here are module-level, not closures made per call: V8 keeps a function's
// optimized code only while a function object using it is alive.

function atspiNode(element: XmlElement): A11yNode {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(element.attributes)) {
    if (name === "name" || name === POSITION || name === SIZE || name === "xmlns" || name.startsWith("xmlns:")) continue;
    attributes[name] = value;
  }
  const text = element.text.trim();
  if (text !== "") attributes.text = text;
  const bounds = boundsFrom(element.attributes[POSITION], element.attributes[SIZE]);
  const node = makeNode(element.tag, element.attributes.name ?? "", attributes, bounds ? { bounds } : {});
  node.children = element.children.map(atspiNode);
  return node;
}

function atspiId(node: A11yNode): string | undefined {
  return node.attributes["attr:id"];
}

const TABLE_HEADER = /^tag\tname\ttext\tclass\tdescription\tposition/;
const TRIM_MARK = /\[\.\.\.\]\r?\n?$/;

/**
 * Rows of OSWorld's table: tab-separated, one row per line. The text column is written raw, or
 * `"…"`-quoted with `""` escapes when it holds a quote; raw text may hold a newline, so a line
 * break before the sixth tab continues the row.
 */
function tableRows(body: string, cut = false): string[][] {
  const rows: string[][] = [];
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let fieldStart = true;
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (quoted) {
      if (c !== '"') field += c;
      else if (body[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
      continue;
    }
    if (c === '"' && fieldStart && fields.length === 2) {
      quoted = true;
      fieldStart = false;
    } else if (c === "\t") {
      fields.push(field);
      field = "";
      fieldStart = true;
    } else if (c === "\n" && fields.length === 0 && field.replace(/\r$/, "") === "") {
      field = ""; // blank line
    } else if (c === "\n" && fields.length >= 6) {
      rows.push([...fields, field.replace(/\r$/, "")]);
      fields = [];
      field = "";
      fieldStart = true;
    } else {
      field += c;
      fieldStart = false;
    }
  }
  // A table cut short may end inside a quoted text: that last row is incomplete, and dropped.
  if (quoted && !cut) throw new TreeParseError("unterminated quoted text in the accessibility table");
  if (fields.length > 0 || field.replace(/\r$/, "") !== "") rows.push([...fields, field.replace(/\r$/, "")]);
  return rows;
}

/**
 * Parses OSWorld's linearized accessibility tree (`linearize_accessibility_tree`): a header
 * `tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)` and one row per
 * kept node. The table is flat, so the tree is a `table` root with one child per row (role =
 * tag, name, attributes text / class / description when not empty, bounds from position and
 * size). Keys: `tag:name` when unique, else the row's role path. A table that ends in the
 * `[...]` OSWorld's `trim_accessibility_tree` appends after cutting it at a token budget loses
 * its last row when that row was cut short, and its root gets `truncated="true"`.
 */
export function parseOsworldTable(text: string, options: TreeParseOptions = {}): A11yNode {
  const newline = text.indexOf("\n");
  const header = (newline < 0 ? text : text.slice(0, newline)).replace(/\r$/, "");
  if (!TABLE_HEADER.test(header))
    throw new TreeParseError(
      "not an OSWorld accessibility table: the header must start with tag\\tname\\ttext\\tclass\\tdescription\\tposition",
    );
  let body = newline < 0 ? "" : text.slice(newline + 1);
  // OSWorld's agents cut a long table at a token budget (`trim_accessibility_tree`: the first
  // max_tokens tokens, then "[...]\n"), so its last row may stop anywhere: that row is dropped,
  // and the root says the table was cut (`truncated`).
  const mark = TRIM_MARK.exec(body);
  if (mark) body = body.slice(0, mark.index);
  const rows = tableRows(body, mark !== null);
  const last = rows.at(-1);
  if (mark && last && (last.length !== 7 || !PAIR.test((last[6] as string).trim()))) rows.pop();
  const root = makeNode("table", "", mark ? { truncated: "true" } : {});
  for (const [i, row] of rows.entries()) {
    if (row.length !== 7) throw new TreeParseError(`row ${i + 1} has ${row.length} fields, not 7`);
    const [tag, name, rowText, cls, description, position, size] = row as [string, string, string, string, string, string, string];
    const attributes: Record<string, string> = {};
    if (rowText !== "") attributes.text = rowText;
    if (cls !== "") attributes.class = cls;
    if (description !== "") attributes.description = description;
    const bounds = boundsFrom(position, size);
    root.children.push(makeNode(tag, name, attributes, bounds ? { bounds } : {}));
  }
  return withKeys(root, options, tableRowId);
}

/** A row's `tag:name`; never the `table` root's, which has no name. */
function tableRowId(node: A11yNode): string | undefined {
  return node.name !== "" ? `${node.role}:${node.name}` : undefined;
}

/** Which of the two desktop forms a text is, by its first characters. */
export function osTreeFormat(text: string): typeof ATSPI_TREE_FORMAT | typeof OSWORLD_TABLE_FORMAT | undefined {
  const start = text.trimStart();
  if (TABLE_HEADER.test(start)) return OSWORLD_TABLE_FORMAT;
  if (/^<(\?xml|[A-Za-z][\w-]*[\s>/])/.test(start)) return ATSPI_TREE_FORMAT;
  return undefined;
}

/** Parses either desktop form; throws TreeParseError when the text is neither. */
export function parseOsObservation(text: string, options: TreeParseOptions = {}): A11yNode {
  const format = osTreeFormat(text);
  if (format === OSWORLD_TABLE_FORMAT) return parseOsworldTable(text.trimStart(), options);
  if (format === ATSPI_TREE_FORMAT) return parseAtspiXml(text, options);
  throw new TreeParseError("neither AT-SPI XML nor an OSWorld accessibility table");
}

const recordSchema = z.object({
  id: z.union([z.string().min(1), z.number().int()]).transform(String),
  domain: z.literal("os").optional(),
  system: z.string().optional(),
  task: z.string().optional(),
  initialObservation: z.string().optional(),
  turns: z
    .array(z.object({ action: z.string(), observation: z.string(), thinking: z.string().optional() }))
    .min(1, "a trajectory needs at least one turn"),
  meta: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Desktop trajectories, a JSONL format of ours (no public sample exists): one trajectory per line,
 * `{"id", "task"?, "system"?, "initialObservation"?, "turns": [{"action", "observation",
 * "thinking"?}], "meta"?}` where each action is pyautogui code (`pyautogui.click(960, 540)`) and
 * each observation an AT-SPI XML tree (OSWorld's `accessibility_tree`) or OSWorld's linearized
 * `tag\tname\ttext\tclass\tdescription\tposition\tsize` table. `domain` may be omitted (always
 * `os`). Each observation must parse, else the line is quarantined.
 */
export const osA11yReader: Reader = {
  name: FORMAT,
  domain: "os",
  description: "desktop trajectories, one per line: pyautogui actions, AT-SPI XML or OSWorld table observations",

  sniff(head) {
    const line = firstLine(head);
    const parsed = parseSniffedJson(line);
    if (!parsed.ok) return line.startsWith("{") && /"turns"\s*:\s*\[/.test(line) && /"observation"\s*:\s*"\s*(<|tag\\t)/.test(line);
    const record = parsed.value as { domain?: unknown; turns?: { observation?: unknown }[] } | null;
    const observation = Array.isArray(record?.turns) ? record.turns[0]?.observation : undefined;
    return (
      (record?.domain === undefined || record.domain === "os") && typeof observation === "string" && osTreeFormat(observation) !== undefined
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    for await (const line of recordLines(path, options, FORMAT)) {
      if (line.kind === "quarantine") {
        yield line;
        continue;
      }
      const { source } = line;
      const item = readRecord(line.text, source);
      yield item;
    }
  },
};

function readRecord(text: string, source: LineSource): ReadItem {
  const parsed = parseJsonLine(text);
  if (!parsed.ok) return { kind: "quarantine", entry: { source, stage: "read", reason: parsed.reason, excerpt: excerpt(text) } };
  const result = recordSchema.safeParse(parsed.value);
  const rawId = (parsed.value as { id?: unknown } | null)?.id;
  const id = typeof rawId === "string" || typeof rawId === "number" ? { id: String(rawId) } : {};
  if (!result.success) {
    const { field, reason } = describeZodError(result.error);
    return { kind: "quarantine", entry: { source, ...id, stage: "read", ...(field ? { field } : {}), reason, excerpt: excerpt(text) } };
  }
  const record = result.data;
  const observations: [string, string][] = record.turns.map((turn, i) => [`turns.${i}.observation`, turn.observation]);
  if (record.initialObservation !== undefined) observations.unshift(["initialObservation", record.initialObservation]);
  for (const [field, observation] of observations) {
    try {
      parseOsObservation(observation);
    } catch (err) {
      const reason = `${field}: ${(err as Error).message}`;
      return { kind: "quarantine", entry: { source, ...id, stage: "read", field, reason, excerpt: excerpt(text) } };
    }
  }
  return {
    kind: "trajectory",
    trajectory: {
      id: record.id,
      domain: "os",
      source,
      ...(record.system !== undefined ? { system: record.system } : {}),
      ...(record.task !== undefined ? { task: record.task } : {}),
      ...(record.initialObservation !== undefined ? { initialObservation: record.initialObservation } : {}),
      turns: record.turns.map((turn) => ({
        action: turn.action,
        observation: turn.observation,
        ...(turn.thinking !== undefined ? { thinking: turn.thinking } : {}),
        meta: { tree_format: osTreeFormat(turn.observation) },
      })),
      ...(record.meta !== undefined ? { meta: record.meta } : {}),
    },
  };
}
