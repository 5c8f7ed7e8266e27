import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lenientParse, parseXmlDocument, splitDumps, strictParse, TreeParseError } from "../src/read/uiautomator-xml.ts";
import { ROOT } from "./helpers.ts";

/**
 * XML trees are parsed in one strict pass (saxes) when the strict parser accepts the document and
 * it has no tab or line break, else by fast-xml-parser (validate, then parse) as before. Where the
 * strict pass accepts, both must give the same element tree; where it refuses, the lenient path
 * decides (reads or refuses) exactly as before.
 */
function xmlFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...xmlFilesUnder(path));
    else if (entry.name.endsWith(".xml")) found.push(path);
  }
  return found;
}

/** Every XML document of the project's fixtures and demo data (and the shared real samples, when present). */
function documents(): { name: string; xml: string }[] {
  const files = [
    ...xmlFilesUnder(join(ROOT, "test/fixtures")),
    ...xmlFilesUnder(join(ROOT, "data/demo")),
    ...xmlFilesUnder(join(ROOT, "../shared/fixtures/real")),
  ];
  return files.flatMap((file) => {
    const text = readFileSync(file, "utf8");
    const dumps = splitDumps(text);
    return dumps.length > 0 ? dumps.map((dump, i) => ({ name: `${file}#${i}`, xml: dump.xml })) : [{ name: file, xml: text.trim() }];
  });
}

/** What the lenient path makes of a document: its tree, or the refusal. */
function lenient(xml: string): unknown {
  try {
    return lenientParse(xml);
  } catch (err) {
    if (err instanceof TreeParseError) return { refused: true };
    throw err;
  }
}

// Documents built from pieces where XML parsers tend to differ: entities (defined, numeric, control
// characters, HTML-only), CDATA, comments, processing instructions, quotes, markup characters.
// Mostly pieces both parsers read, with a few where XML parsers tend to differ or refuse.
const SAFE_PIECES = [
  "a",
  "Hello",
  " ",
  "\n",
  "\n  ",
  "\t",
  "&amp;",
  "&lt;",
  "&gt;",
  "&quot;",
  "&apos;",
  "&#65;",
  "&#x1F600;",
  "&#10;",
  ">",
  "'",
  '"',
  "é",
  "日本",
];
const RISKY_PIECES = ["&#1;", "&nbsp;", "&", "\u0001", "&#xD800;", "]]>", "\r\n", "\r"];
const MARKUP_PIECES = ["<![CDATA[x<y&z]]>", "<!-- note -->", "<?pi data?>"];
const pieceArb = (markup: boolean) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...SAFE_PIECES) },
    { weight: 1, arbitrary: fc.constantFrom(...RISKY_PIECES) },
    { weight: markup ? 2 : 0, arbitrary: fc.constantFrom(...MARKUP_PIECES) },
  );
const textArb = fc.array(pieceArb(true), { maxLength: 4 }).map((parts) => parts.join(""));
const attrValueArb = fc.array(pieceArb(false), { maxLength: 3 }).map((parts) => parts.join(""));
const nameArb = fc.constantFrom("node", "hierarchy", "a", "b:c", "x-y", "_z");
const elementArb: fc.Memo<string> = fc.memo((depth) =>
  fc
    .tuple(
      nameArb,
      fc.uniqueArray(
        fc.tuple(fc.constantFrom("text", "bounds", "class", "resource-id", "content-desc"), attrValueArb, fc.constantFrom('"', "'")),
        {
          maxLength: 3,
          selector: ([key]) => key,
        },
      ),
      depth > 1 ? fc.array(fc.oneof(textArb, elementArb(depth - 1)), { maxLength: 3 }) : fc.constant([] as string[]),
      fc.boolean(),
    )
    .map(([name, attributes, children, selfClosing]) => {
      // A quote inside a value: mostly escaped, as a serializer writes it; now and then raw (not well-formed).
      const quoted = (value: string, quote: string) =>
        value.length % 5 === 0 ? value : value.replaceAll(quote, quote === '"' ? "&quot;" : "&apos;");
      const attrs = attributes.map(([key, value, quote]) => ` ${key}=${quote}${quoted(value, quote)}${quote}`).join("");
      return selfClosing && children.length === 0 ? `<${name}${attrs}/>` : `<${name}${attrs}>${children.join("")}</${name}>`;
    }),
);
const documentArb = fc
  .tuple(
    fc.constantFrom("", "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", "<!DOCTYPE hierarchy>"),
    elementArb(4),
    fc.constantFrom("", " ", "<!-- end -->", "text after the root"),
  )
  .map(([prolog, root, trailing]) => `${prolog}${root}${trailing}`);

describe("XML: the strict one-pass parser and the lenient path agree", () => {
  it("on every XML document of the fixtures and demo data, and the strict pass reads the one-line dumps", () => {
    const docs = documents();
    expect(docs.length).toBeGreaterThan(3);
    let strictRead = 0;
    for (const { name, xml } of docs) {
      const strict = strictParse(xml);
      if (strict === undefined) continue;
      strictRead += 1;
      expect(strict, name).toEqual(lenientParse(xml));
    }
    // uiautomator dumps are one line: the demo recording's take the strict pass.
    expect(strictRead).toBeGreaterThan(0);
  });

  it("on generated documents: wherever the strict pass reads one, the lenient path reads the same tree", () => {
    fc.assert(
      fc.property(documentArb, (xml) => {
        const strict = strictParse(xml);
        if (strict !== undefined) expect(strict).toEqual(lenient(xml));
        // The public entry point gives what the lenient path alone gives.
        let entry: unknown;
        try {
          entry = parseXmlDocument(xml);
        } catch (err) {
          if (!(err instanceof TreeParseError)) throw err;
          entry = { refused: true };
        }
        expect(entry).toEqual(lenient(xml));
      }),
      { numRuns: 3000 },
    );
  });

  it("leaves to the lenient path what the strict one refuses or must not normalize", () => {
    // A control character, an HTML entity, a numeric reference to a control character: fast-xml-parser reads them.
    for (const xml of ['<hierarchy><node text="a\u0001b"/></hierarchy>', '<hierarchy><node text="&nbsp;"/></hierarchy>', '<a b="&#1;"/>'])
      expect(strictParse(xml), xml).toBeUndefined();
    // A raw line break or tab in an attribute: XML makes it a space, the lenient path keeps it; so never the strict pass.
    for (const [raw, text] of [
      ['<hierarchy>\n  <node text="two\nlines"/>\n</hierarchy>', "two\nlines"],
      ["<hierarchy><node text='a\tb'/></hierarchy>", "a\tb"],
      ['<hierarchy><!-- " --><node text="x\ny"/></hierarchy>', "x\ny"],
    ] as const) {
      expect(strictParse(raw), raw).toBeUndefined();
      expect(parseXmlDocument(raw).children[0]?.attributes.text).toBe(text);
    }
    // Line breaks between tags (a pretty-printed AT-SPI tree) take the strict pass, with the same tree.
    const pretty =
      '<desktop-frame name="main">\n  <application name="gedit">\n    <frame name="Untitled"/>\n  </application>\n</desktop-frame>';
    expect(strictParse(pretty)).toBeDefined();
    expect(strictParse(pretty)).toEqual(lenientParse(pretty));
    // Nesting past the limit: the lenient path's refusal, worded as before.
    const deep = `${"<a>".repeat(1200)}${"</a>".repeat(1200)}`;
    expect(strictParse(deep)).toBeUndefined();
    expect(() => parseXmlDocument(deep)).toThrow(/nested deeper than 1000/);
  });
});
