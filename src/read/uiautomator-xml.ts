import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import type { Turn } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { type A11yNode, type Bounds, makeNode, type TreeParseOptions, withKeys } from "../normalize/tree/a11y-tree.ts";
import { excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";

const FORMAT = "uiautomator-xml";
export const UIAUTOMATOR_TREE_FORMAT = "uiautomator-xml";

export function contentId(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** A tree observation that does not parse; readers quarantine it, normalizers leave it as read. */
export class TreeParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TreeParseError";
  }
}

/** The deepest element nesting a tree document may have (fast-xml-parser's own default is 100). */
export const MAX_XML_DEPTH = 1000;

type FastXmlParser = typeof import("fast-xml-parser");
interface XmlTools {
  parser: InstanceType<FastXmlParser["XMLParser"]>;
  validator: FastXmlParser["XMLValidator"];
  decodeXML: typeof import("entities")["decodeXML"];
}
let tools: XmlTools | undefined;

/**
 * fast-xml-parser and `entities`, loaded by the first XML parsed (synchronously, by require): the
 * reader registry imports this module in every stage process, and most of them parse no XML.
 * `require` picks fast-xml-parser's CommonJS build (lib/fxp.cjs, the same version bundled into
 * one file), not the ESM sources an `import` loads; both parse alike.
 */
function xmlTools(): XmlTools {
  if (tools) return tools;
  const require = createRequire(import.meta.url);
  const { XMLParser, XMLValidator } = require("fast-xml-parser") as FastXmlParser;
  // Order-preserving parse; entities are decoded by `entities` (fast-xml-parser leaves &#10; as is).
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    preserveOrder: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    processEntities: false,
    commentPropName: "#comment",
    // fast-xml-parser rejects nesting past 100 elements by default; real view hierarchies and
    // AT-SPI trees (WebView and browser content) go deeper. The limit stays, well above them.
    maxNestedTags: MAX_XML_DEPTH,
  });
  tools = { parser, validator: XMLValidator, decodeXML: (require("entities") as typeof import("entities")).decodeXML };
  return tools;
}

/** One element of fast-xml-parser's preserveOrder output. */
export interface XmlElement {
  tag: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (its direct text nodes, joined). */
  text: string;
}

/** Parses one XML document into its root element; throws TreeParseError when it is not well-formed. */
export function parseXmlDocument(xml: string): XmlElement {
  return strictParse(xml) ?? lenientParse(xml);
}

type Saxes = typeof import("saxes");
let saxes: Saxes | undefined;

/**
 * The common case in one pass: saxes, a strict XML 1.0 parser, reads a document in about a third
 * of fast-xml-parser's validate-then-parse time. The two give the same element tree except where
 * XML normalizes whitespace (a raw tab or line break in an attribute value becomes a space, CR LF
 * becomes LF), so a document with a carriage return, or a tab or line feed inside an attribute
 * value, is not taken (a `uiautomator dump` is one line; an AT-SPI tree breaks lines between tags). Anything
 * saxes refuses (a control character, `&nbsp;`, `&#1;`, malformed markup) or nests deeper than
 * MAX_XML_DEPTH is left to `lenientParse`, which reads or refuses it as before
 * (test/xml-strict-path.test.ts holds the two equal).
 */
export function strictParse(xml: string): XmlElement | undefined {
  if (xml.includes("\r") || ((xml.includes("\n") || xml.includes("\t")) && breakInAttributeValue(xml))) return undefined;
  saxes ??= createRequire(import.meta.url)("saxes") as Saxes;
  const parser = new saxes.SaxesParser();
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let refused = false;
  parser.on("error", () => {
    refused = true;
  });
  parser.on("opentag", (tag) => {
    if (refused) return;
    if (stack.length >= MAX_XML_DEPTH) {
      refused = true;
      return;
    }
    const element: XmlElement = { tag: tag.name, attributes: { ...(tag.attributes as Record<string, string>) }, children: [], text: "" };
    const parent = stack.at(-1);
    if (parent) parent.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on("closetag", () => {
    stack.pop();
  });
  const addText = (text: string) => {
    const parent = stack.at(-1);
    if (parent) parent.text += text;
  };
  parser.on("text", addText);
  parser.on("cdata", addText);
  try {
    parser.write(xml).close();
  } catch {
    return undefined;
  }
  return refused ? undefined : root;
}

/**
 * Whether a tab or line feed stands raw inside an attribute value (XML reads it as a space, the
 * lenient path keeps it), or the document has a DOCTYPE (whose internal subset could declare
 * anything): then the strict pass is not taken. Line breaks between tags and in text are read
 * alike by both (a pretty-printed AT-SPI tree). Comments, CDATA and processing instructions are
 * skipped whole: quotes in them open no value.
 */
function breakInAttributeValue(xml: string): boolean {
  let at = xml.indexOf("<");
  while (at !== -1) {
    let end: number;
    if (xml.startsWith("<!--", at)) end = endOf(xml, "-->", at + 4);
    else if (xml.startsWith("<![CDATA[", at)) end = endOf(xml, "]]>", at + 9);
    else if (xml.startsWith("<?", at)) end = endOf(xml, "?>", at + 2);
    else if (xml.startsWith("<!", at)) return true;
    else {
      let quote = 0;
      for (end = at + 1; end < xml.length; end++) {
        const c = xml.charCodeAt(end);
        if (quote !== 0) {
          if (c === quote) quote = 0;
          else if (c === 9 || c === 10) return true;
        } else if (c === 34 || c === 39) quote = c;
        else if (c === 62) break;
      }
    }
    if (end < 0) return true;
    at = xml.indexOf("<", end);
  }
  return false;
}

/** The index just past the first `close` at or after `from`, or -1. */
function endOf(xml: string, close: string, from: number): number {
  const at = xml.indexOf(close, from);
  return at === -1 ? -1 : at + close.length;
}

/** fast-xml-parser: validates, then parses; reads what the strict parser refuses but still parses. */
export function lenientParse(xml: string): XmlElement {
  const { parser, validator, decodeXML } = xmlTools();
  const valid = validator.validate(xml);
  if (valid !== true) throw new TreeParseError(`malformed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  let parsed: Record<string, unknown>[];
  try {
    parsed = parser.parse(xml) as Record<string, unknown>[];
  } catch (err) {
    const message = (err as Error).message;
    if (/maximum nested tags/i.test(message))
      throw new TreeParseError(`XML nested deeper than ${MAX_XML_DEPTH} elements (the most a tree is read with)`);
    // The validator lets a few unterminated tags through (`<think/`) that the parser then rejects.
    throw new TreeParseError(`malformed XML: ${message}`);
  }
  const roots: XmlElement[] = [];
  for (const item of parsed) {
    const element = xmlElement(item, decodeXML);
    if (element) roots.push(element);
  }
  if (roots.length !== 1) throw new TreeParseError(`expected one root element, found ${roots.length}`);
  return roots[0] as XmlElement;
}

// The tree helpers in this file are module-level, not closures made per call: V8 keeps a
// function's optimized code only while a function object using it is alive.

/** One item of fast-xml-parser's preserveOrder output as an element; undefined for text, comments and `<?…?>`. */
function xmlElement(item: Record<string, unknown>, decodeXML: XmlTools["decodeXML"]): XmlElement | undefined {
  let tag: string | undefined;
  for (const k of Object.keys(item)) {
    if (k === ":@") continue;
    tag = k;
    break;
  }
  if (tag === undefined || tag === "#text" || tag === "#comment" || tag.startsWith("?")) return undefined;
  const raw = (item[":@"] ?? {}) as Record<string, string>;
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) attributes[name] = decodeXML(String(value));
  const children: XmlElement[] = [];
  let text = "";
  for (const child of item[tag] as Record<string, unknown>[]) {
    if ("#text" in child) text += decodeXML(String(child["#text"]));
    else {
      const element = xmlElement(child, decodeXML);
      if (element) children.push(element);
    }
  }
  return { tag, attributes, children, text };
}

const BOUNDS = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/;

export function parseAndroidBounds(text: string): Bounds | undefined {
  const m = BOUNDS.exec(text.trim());
  return m ? { left: Number(m[1]), top: Number(m[2]), right: Number(m[3]), bottom: Number(m[4]) } : undefined;
}

// Boolean view properties that are true unless said otherwise; every other boolean defaults to false.
const DEFAULT_TRUE = new Set(["enabled", "visible-to-user", "visible", "important-for-accessibility"]);
const BOOLEAN = /^(true|false)$/;

/**
 * A view-hierarchy node from uiautomator attribute names (DroidBot's are mapped to these first).
 * role = class, name = text; `index` (the sibling position) and empty values are dropped,
 * booleans at their default are dropped (what remains is a flag, or `enabled=false`), and
 * `package` is dropped where it equals the parent's, so the tree shows what differs.
 */
export function androidViewNode(
  attributes: Record<string, string>,
  parentPackage: string | undefined,
  bounds: Bounds | undefined,
): A11yNode {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "class" || name === "text" || name === "index" || name === "bounds" || value === "") continue;
    if (name === "package" && value === parentPackage) continue;
    if (BOOLEAN.test(value) && (value === "true") === DEFAULT_TRUE.has(name)) continue;
    kept[name] = value;
  }
  return makeNode(attributes.class || "node", attributes.text ?? "", kept, bounds ? { bounds } : {});
}

/** Android keys: a resource-id unique in the tree, else a path of short class names. */
export function assignAndroidKeys(root: A11yNode, options: TreeParseOptions = {}): A11yNode {
  return withKeys(root, options, resourceIdOf, shortClassName);
}

function resourceIdOf(node: A11yNode): string | undefined {
  return node.attributes["resource-id"];
}

function shortClassName(node: A11yNode): string {
  return node.role.split(".").at(-1) ?? node.role;
}

/** Parses one `uiautomator dump` document (`<hierarchy rotation=…>` of nested `<node>`s). */
export function parseUiautomatorXml(xml: string, options: TreeParseOptions = {}): A11yNode {
  const hierarchy = parseXmlDocument(xml);
  if (hierarchy.tag !== "hierarchy") throw new TreeParseError(`expected a <hierarchy> root, found <${hierarchy.tag}>`);
  const root = makeNode("hierarchy", "", { ...hierarchy.attributes });
  root.children = androidViewNodes(hierarchy.children, undefined);
  return assignAndroidKeys(root, options);
}

function androidViewNodes(elements: XmlElement[], parentPackage: string | undefined): A11yNode[] {
  const nodes: A11yNode[] = [];
  for (const element of elements) {
    const node = androidViewNode(element.attributes, parentPackage, parseAndroidBounds(element.attributes.bounds ?? ""));
    node.children = androidViewNodes(element.children, element.attributes.package || parentPackage);
    nodes.push(node);
  }
  return nodes;
}

const DUMP = /<hierarchy\b[^>]*?(?:\/>|>[\s\S]*?<\/hierarchy\s*>)/g;
const ACTION_COMMENT = /<!--\s*action:([\s\S]*?)-->/g;

/** The dumps in a file, each with the action named by the last `<!-- action: … -->` before it. */
export function splitDumps(text: string): { action: string; xml: string; offset: number }[] {
  const dumps: { action: string; xml: string; offset: number }[] = [];
  let last = 0;
  for (const match of text.matchAll(DUMP)) {
    const between = text.slice(last, match.index);
    const actions = [...between.matchAll(ACTION_COMMENT)];
    dumps.push({ action: actions.at(-1)?.[1]?.trim() ?? "", xml: match[0], offset: match.index });
    last = match.index + match[0].length;
  }
  return dumps;
}

/**
 * `adb shell uiautomator dump` output. One file is one trajectory: several dumps may be
 * concatenated (as `uiautomator dump /dev/tty` appends them), each optionally preceded by
 * `<!-- action: TEXT -->` naming the action that led to it; each dump is one turn's observation.
 * The first dump, when no action comment comes before it and dumps follow it, is the screen the
 * run started on: the initial observation, not a turn with an empty action (a world model would
 * be trained to produce a screen from nothing), as the Android readers of runs treat a run's
 * first screen. A lone dump stays a one-turn trajectory whose action is "" (as a lone DroidBot
 * state). Tool chatter between dumps ("UI hierchary dumped to: …") is ignored.
 */
export const uiautomatorReader: Reader = {
  name: FORMAT,
  domain: "android",
  description: "uiautomator dump view hierarchies (<hierarchy><node …/>); a file is a trajectory, a dump a turn",

  sniff(head) {
    const start = head.trimStart();
    return start.startsWith("<") && /<hierarchy[\s>/]/.test(head);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source = { uri: path, format: FORMAT };
    const whole = await readWholeText(path, options.maxLineBytes);
    if ("error" in whole) {
      yield { kind: "quarantine", entry: { source, stage: "read", reason: whole.error } };
      return;
    }
    const dumps = splitDumps(whole.text);
    const id = contentId(whole.text);
    if (dumps.length === 0) {
      const reason = "no <hierarchy> document in the file";
      yield { kind: "quarantine", entry: { source, id, stage: "read", reason, excerpt: excerpt(whole.text) } };
      return;
    }
    const turns: Turn[] = [];
    let initialObservation: string | undefined;
    for (const [i, dump] of dumps.entries()) {
      try {
        parseUiautomatorXml(dump.xml);
      } catch (err) {
        const field = `turns.${i}.observation`;
        const entry = { source, id, stage: "read", field, reason: `${field}: ${(err as Error).message}`, excerpt: excerpt(dump.xml) };
        yield { kind: "quarantine", entry };
        return;
      }
      if (i === 0 && dump.action === "" && dumps.length > 1) initialObservation = dump.xml;
      else turns.push({ action: dump.action, observation: dump.xml, meta: { tree_format: UIAUTOMATOR_TREE_FORMAT } });
    }
    yield {
      kind: "trajectory",
      trajectory: {
        id,
        domain: "android",
        source,
        ...(initialObservation !== undefined ? { initialObservation } : {}),
        turns,
        ...(initialObservation !== undefined ? { meta: { initial_tree_format: UIAUTOMATOR_TREE_FORMAT } } : {}),
      },
    };
  },
};
