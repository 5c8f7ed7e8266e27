/**
 * Views rendered as one `uiautomator dump` document, so the android normalizer reads a tree from
 * any Android dataset (AndroidControl's accessibility forests, Android-in-the-Wild's UI
 * annotations) as it reads a real dump (`turn.meta.tree_format: "uiautomator-xml"`).
 */
import { MAX_XML_DEPTH } from "./uiautomator-xml.ts";

/** A view for a rendered dump: uiautomator attribute names and values, and its children. */
export interface ViewNode {
  attributes: Record<string, string>;
  children: ViewNode[];
}

/**
 * Nesting the rendered dump may reach: below the XML reader's MAX_XML_DEPTH (with room for the
 * `<hierarchy>` root), since a dump the android normalizer cannot parse would stay as read. Deeper
 * trees are refused at read time.
 */
export const MAX_DUMP_DEPTH = MAX_XML_DEPTH - 10;

// Not allowed in XML 1.0 at all (not even as character references): C0 controls but tab/CR/LF,
// lone surrogates, U+FFFE/U+FFFF. Replaced with U+FFFD.
const XML_INVALID =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what XML 1.0 forbids.
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function xmlAttribute(value: string): string {
  return value
    .replace(XML_INVALID, "\ufffd")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;")
    .replace(/\t/g, "&#9;");
}

function attributesText(attributes: Record<string, string>): string {
  return Object.entries(attributes)
    .map(([name, value]) => ` ${name}="${xmlAttribute(value)}"`)
    .join("");
}

/** The nodes as one `uiautomator dump` document; throws when they nest deeper than MAX_DUMP_DEPTH. */
export function renderDump(rootAttributes: Record<string, string>, nodes: readonly ViewNode[]): string {
  const out: string[] = [`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy${attributesText(rootAttributes)}>`];
  const write = (node: ViewNode, depth: number): void => {
    if (depth > MAX_DUMP_DEPTH) throw new Error(`views nest deeper than ${MAX_DUMP_DEPTH} levels`);
    if (node.children.length === 0) {
      out.push(`<node${attributesText(node.attributes)} />`);
      return;
    }
    out.push(`<node${attributesText(node.attributes)}>`);
    for (const child of node.children) write(child, depth + 1);
    out.push("</node>");
  };
  for (const node of nodes) write(node, 1);
  out.push("</hierarchy>");
  return out.join("");
}

export function boundsAttribute(left: number, top: number, right: number, bottom: number): string {
  return `[${Math.round(left)},${Math.round(top)}][${Math.round(right)},${Math.round(bottom)}]`;
}
