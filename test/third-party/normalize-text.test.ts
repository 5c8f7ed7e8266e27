/**
 * Text normalization on third-party samples (../shared/fixtures/real): canonical JSON of the MCP
 * spec examples and a Brave Search API response, Brave's snippet HTML, and the mcp/search domain
 * normalizers on a go-sdk conformance transcript and the Brave response. Expected values were
 * read off the sample files by a person (the comments say where). The same code is covered on the
 * project's own recordings by test/normalize-text.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Trajectory } from "../../src/core/trajectory.ts";
import { mcpNormalizer } from "../../src/normalize/domains/mcp.ts";
import { searchNormalizer } from "../../src/normalize/domains/search.ts";
import { snippetText } from "../../src/normalize/html-text.ts";
import { canonicalJson } from "../../src/normalize/json-canonical.ts";
import type { Counters, NormalizeSettings } from "../../src/normalize/normalizer.ts";
import { mcpJsonRpcReader } from "../../src/read/mcp-jsonrpc.ts";
import { searchApiReader } from "../../src/read/search-api.ts";
import { collect } from "../helpers.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

const GO_SDK = thirdParty("mcp/go-sdk-conformance");
const SPEC = thirdParty("mcp/mcp-spec-examples");
const BRAVE = thirdParty("search/brave/brave_web.json");
const SETTINGS = {} as NormalizeSettings; // the mcp/search normalizers read no setting
const counters = (): Counters => new Map();

async function readFirst(reader: typeof mcpJsonRpcReader, path: string): Promise<Trajectory> {
  const [item] = await collect(reader.read(path, { maxLineBytes: 1 << 20 }));
  if (item?.kind !== "trajectory") throw new Error(`no trajectory from ${path}`);
  return item.trajectory;
}

describeThirdParty("canonical JSON", () => {
  it("is JSON.stringify(JSON.parse(x), null, 2) for every real MCP / Brave sample", () => {
    const files = [
      BRAVE,
      ...["CallToolResultResponse__call-tool-result-response", "ListToolsResultResponse__list-tools-result-response"].map((n) =>
        join(SPEC, `${n}.json`),
      ),
    ];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(canonicalJson(text)).toBe(JSON.stringify(JSON.parse(text), null, 2));
    }
  });
});

describeThirdParty("HTML snippet text", () => {
  it("turns the Brave descriptions into what a reader sees (brave_web.json lines 239, 502, 534)", () => {
    const results = JSON.parse(readFileSync(BRAVE, "utf8")).web.results as { description: string }[];
    const c = counters();
    expect(snippetText(results[0]?.description ?? "", c)).toBe(
      'A "Hello, World!" program is usually a simple computer program that emits (or displays) to the screen (often the console) a message similar to "Hello, World!". A small piece of code in most general-purpose programming languages, this program is used to illustrate a language\'s basic syntax.',
    );
    expect(snippetText(results[8]?.description ?? "", c)).toMatch(/^It's far less depressing than Goodbye World\. \.\.\. .* K&R C book/);
    expect(snippetText(results[9]?.description ?? "", c)).toBe("Follow this Hello World exercise to learn GitHub's pull request workflow.");
  });
});

describeThirdParty("domain normalizers", () => {
  it("mcp: canonical JSON of requests and replies (idempotent on reader output), volatile values counted", async () => {
    const t = await readFirst(mcpJsonRpcReader, join(GO_SDK, "v1.0.0__tools.txtar"));
    const c = counters();
    const normalized = await mcpNormalizer.normalize(t, SETTINGS, c);
    expect(normalized.turns).toEqual(t.turns);
    // id 9: `"text": "{\"Tomorrow\":\"2025-06-19T15:04:05Z\"}"` and `"Tomorrow": "2025-06-19T15:04:05Z"`
    expect(Object.fromEntries(c)).toEqual({ "volatile.timestamp": 2 });
  });

  it("search: Brave snippets decoded, URLs untouched, 74 <strong> tags and 11 entities, 19 page_age timestamps", async () => {
    const t = await readFirst(searchApiReader, BRAVE);
    const c = counters();
    const observation = (await searchNormalizer.normalize(t, SETTINGS, c)).turns[0]?.observation ?? "";
    expect(observation).not.toMatch(/<\/?strong>|&quot;|&#x27;|&amp;/);
    expect(observation).toContain('"description": "Follow this Hello World exercise to learn GitHub\'s pull request workflow."');
    expect(observation).toContain('"url": "https://en.wikipedia.org/wiki/%22Hello,_World!%22_program"');
    expect(observation).toContain(
      "shophelloworld.com/cdn/shop/files/Hello-World-Modern-Mercantile-Storefront.jpg?crop=center&height=1200&v=1711388853&width=1200",
    );
    // grep -o '<strong>\|</strong>' → 37 + 37; '&quot;' 6, '&#x27;' 4, '&amp;' 1; '"page_age": "…T…"' 19
    expect(Object.fromEntries(c)).toEqual({
      "html.tags_stripped": 74,
      "html.entities_decoded": 11,
      "json.reformatted": 1,
      "volatile.timestamp": 19,
    });
    expect(JSON.parse(observation).web.results).toHaveLength(20);
  });
});
