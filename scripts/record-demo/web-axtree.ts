/**
 * BrowserGym's observation of a page, taken from a real Chromium: every element gets a `bid`
 * attribute (as BrowserGym's frame_mark_elements.js does: kept once given, new elements numbered
 * on from a per-page counter), the accessibility tree comes from CDP `Accessibility.getFullAXTree`,
 * each node finds its bid through its DOM node, and the tree is flattened as BrowserGym's
 * `flatten_axtree_to_str` does with its defaults: a tab per level, `[bid] role 'name'`, Python
 * reprs, nameless and ignored nodes skipped (their children moved up), generic nodes without
 * properties skipped, StaticText that repeats its parent's name skipped.
 */
import type { CDPSession, Page } from "playwright-core";

/** BrowserGym's defaults (browsergym/utils/obs.py); InlineTextBox too: older Chromium did not return those nodes. */
const IGNORED_ROLES = new Set(["LineBreak", "InlineTextBox"]);
const IGNORED_PROPERTIES = new Set(["editable", "readonly", "level", "settable", "multiline", "invalid", "focusable"]);
const FLAG_PROPERTIES = new Set(["required", "focused", "atomic"]);

/** What markElements touches in the page (this project compiles without the DOM types). */
interface MarkedPage {
  lwmNextBid?: number;
  document: {
    querySelectorAll(
      selector: string,
    ): Iterable<{ getAttribute(name: string): string | null; setAttribute(name: string, value: string): void }>;
  };
}

/** Gives every element a `bid`, keeping the ones it already has; new elements continue the page's count. */
export async function markElements(page: Page): Promise<void> {
  await page.evaluate(() => {
    const win = globalThis as unknown as MarkedPage;
    win.lwmNextBid ??= 0;
    const seen = new Set<string>();
    for (const element of win.document.querySelectorAll("*")) {
      let bid = element.getAttribute("bid");
      if (bid === null || seen.has(bid)) {
        bid = String(win.lwmNextBid++);
        element.setAttribute("bid", bid);
      }
      seen.add(bid);
    }
  });
}

interface AxValue {
  type: string;
  value?: unknown;
}
interface AxNode {
  nodeId: string;
  ignored: boolean;
  role?: AxValue;
  name?: AxValue;
  value?: AxValue;
  properties?: { name: string; value: AxValue }[];
  childIds?: string[];
  backendDOMNodeId?: number;
}
interface DomNode {
  backendNodeId: number;
  attributes?: string[];
  children?: DomNode[];
  shadowRoots?: DomNode[];
  contentDocument?: DomNode;
}

/** A flattened node kept for the breadcrumb: its printed head and its ancestors among printed nodes. */
export interface PrintedNode {
  bid?: string;
  role: string;
  name: string;
  path: PrintedNode[];
}

export interface AxTreeText {
  text: string;
  /** Printed nodes by bid, for "DOM Tree Breadcrumb" paths. */
  byBid: Map<string, PrintedNode>;
  /** Printed nodes in order, to find an element by role and name as an agent reading the text would. */
  nodes: PrintedNode[];
}

async function bidsByBackendId(cdp: CDPSession): Promise<Map<number, string>> {
  const { root } = (await cdp.send("DOM.getDocument", { depth: -1, pierce: true })) as { root: DomNode };
  const bids = new Map<number, string>();
  const walk = (node: DomNode) => {
    const attributes = node.attributes ?? [];
    for (let i = 0; i + 1 < attributes.length; i += 2)
      if (attributes[i] === "bid") bids.set(node.backendNodeId, attributes[i + 1] as string);
    for (const child of [...(node.children ?? []), ...(node.shadowRoots ?? []), ...(node.contentDocument ? [node.contentDocument] : [])])
      walk(child);
  };
  walk(root);
  return bids;
}

/** The page's AXTree as BrowserGym prints it. Call markElements first. */
export async function axTreeText(cdp: CDPSession): Promise<AxTreeText> {
  const bids = await bidsByBackendId(cdp);
  const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as { nodes: AxNode[] };
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  const lines: string[] = [];
  const printed: PrintedNode[] = [];
  const byBid = new Map<string, PrintedNode>();

  const visit = (node: AxNode, depth: number, parentName: string, path: PrintedNode[]) => {
    const role = String(node.role?.value ?? "");
    let skip = IGNORED_ROLES.has(role) || node.name === undefined;
    const name = IGNORED_ROLES.has(role) ? "" : String(node.name?.value ?? "");
    // Only elements carry a bid; text nodes (StaticText) have none, as in BrowserGym.
    const bid = node.backendDOMNodeId !== undefined ? bids.get(node.backendDOMNodeId) : undefined;
    let childPath = path;
    if (!skip) {
      const attributes: string[] = [];
      for (const property of node.properties ?? []) {
        if (!("value" in property.value) || IGNORED_PROPERTIES.has(property.name)) continue;
        if (FLAG_PROPERTIES.has(property.name)) {
          if (property.value.value) attributes.push(property.name);
        } else attributes.push(`${property.name}=${pyRepr(property.value.value)}`);
      }
      if (role === "generic" && attributes.length === 0) skip = true;
      if (role === "StaticText" && parentName.includes(name)) skip = true;
      if (!skip) {
        let head = role === "generic" && !name ? role : `${role} ${pyRepr(name.trim())}`;
        if (bid !== undefined) head = `[${bid}] ${head}`;
        if (node.value && "value" in node.value) head += ` value=${pyRepr(node.value.value)}`;
        lines.push(`${"\t".repeat(depth)}${[head, ...attributes].join(", ")}`);
        const entry: PrintedNode = { ...(bid !== undefined ? { bid } : {}), role, name: name.trim(), path };
        printed.push(entry);
        if (entry.bid !== undefined) byBid.set(entry.bid, entry);
        childPath = [...path, entry];
      }
    }
    for (const childId of node.childIds ?? []) {
      const child = byId.get(childId);
      if (child && childId !== node.nodeId) visit(child, skip ? depth : depth + 1, name, childPath);
    }
  };
  visit(nodes[0] as AxNode, 0, "", []);
  return { text: lines.join("\n"), byBid, nodes: printed };
}

/** Python's `repr()` of what CDP returns: strings, booleans, numbers. */
export function pyRepr(value: unknown): string {
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return String(value);
  if (value === null || value === undefined) return "None";
  const text = String(value);
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === "\\" || char === quote) out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char !== " " && /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}]/u.test(char))
      out += code < 0x100 ? `\\x${hex(code, 2)}` : code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
    else out += char;
  }
  return out + quote;
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}
