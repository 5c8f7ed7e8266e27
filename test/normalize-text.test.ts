import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RecordError } from "../src/core/errors.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { mcpNormalizer } from "../src/normalize/domains/mcp.ts";
import { searchNormalizer } from "../src/normalize/domains/search.ts";
import { sweNormalizer } from "../src/normalize/domains/swe.ts";
import { decodeEntities, snippetText, stripHighlightTags } from "../src/normalize/html-text.ts";
import { canonicalJson } from "../src/normalize/json-canonical.ts";
import type { Counters, NormalizeSettings } from "../src/normalize/normalizer.ts";
import { capLength, elisionMarker } from "../src/normalize/truncate.ts";
import { checkUnicode } from "../src/normalize/utf8.ts";
import { countVolatile, findVolatile } from "../src/normalize/volatile.ts";
import { mcpJsonRpcReader } from "../src/read/mcp-jsonrpc.ts";
import { searchApiReader } from "../src/read/search-api.ts";
import { collect, ROOT } from "./helpers.ts";

// The project's recordings (scripts/record-demo/mcp.ts, search.ts); the third-party samples are
// normalized by test/third-party/normalize-text.test.ts.
const MCP_SESSION = join(ROOT, "data/demo/mcp/everything-tools.jsonl");
const HTTP_304 = join(ROOT, "data/demo/search/brave-web-http-304.json");
const GIT_RESET = join(ROOT, "data/demo/search/brave-web-git-reset.json");
const TRACE = join(ROOT, "data/demo/search/agent-trace.jsonl");
const SETTINGS = {} as NormalizeSettings; // the mcp/search/swe normalizers read no setting
const counters = (): Counters => new Map();

async function readFirst(reader: typeof mcpJsonRpcReader, path: string): Promise<Trajectory> {
  const [item] = await collect(reader.read(path, { maxLineBytes: 1 << 20 }));
  if (item?.kind !== "trajectory") throw new Error(`no trajectory from ${path}`);
  return item.trajectory;
}

describe("canonical JSON", () => {
  it("is JSON.stringify(JSON.parse(x), null, 2) for the recorded search responses and every recorded MCP message", () => {
    // 4-space and one-line responses as the recorder wrote them; each MCP message tab-indented and compact.
    const texts = [readFileSync(HTTP_304, "utf8"), readFileSync(GIT_RESET, "utf8")];
    for (const line of readFileSync(MCP_SESSION, "utf8").trimEnd().split("\n")) {
      const { message } = JSON.parse(line);
      texts.push(JSON.stringify(message, null, "\t"), JSON.stringify(message));
    }
    expect(texts).toHaveLength(2 + 2 * 33);
    for (const text of texts) expect(canonicalJson(text)).toBe(JSON.stringify(JSON.parse(text), null, 2));
  });

  it("keeps the environment's key order (also integer-like keys), number literals and duplicate keys", () => {
    expect(canonicalJson('{"b":1,"2":2,"a":{"10":true,"9":null}}')).toBe(
      '{\n  "b": 1,\n  "2": 2,\n  "a": {\n    "10": true,\n    "9": null\n  }\n}',
    );
    expect(canonicalJson("[1.0, 1e3, -0, 12345678901234567890123]")).toBe("[\n  1.0,\n  1e3,\n  -0,\n  12345678901234567890123\n]");
    expect(canonicalJson('{"k":1,"k":2}')).toBe('{\n  "k": 1,\n  "k": 2\n}');
  });

  it("re-escapes strings minimally and keeps empty containers compact", () => {
    expect(canonicalJson('{"s":"caf\\u00e9 \\u003cb\\u003e \\/ \\"q\\"","e":[],"o":{ }}')).toBe(
      '{\n  "s": "café <b> / \\"q\\"",\n  "e": [],\n  "o": {}\n}',
    );
  });

  it("refuses anything that is not exactly one JSON object or array", () => {
    for (const text of [
      "",
      "42",
      '"str"',
      "true",
      "hello {",
      '{"a":1} trailing',
      '{"a":1,}',
      "[1 2]",
      "{'a':1}",
      '{"a":01}',
      '{"a":"\t"}',
      "[",
      '{"a":tru}',
      "[NaN]",
    ]) {
      expect([text, canonicalJson(text)]).toEqual([text, undefined]);
    }
  });

  it("property: for any JSON value, formatting JSON.stringify(v) at any indentation gives JSON.stringify(v, null, 2)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 1, 4, "\t"), (value, indent) => {
        if (typeof value !== "object" || value === null) return;
        expect(canonicalJson(JSON.stringify(value, null, indent))).toBe(JSON.stringify(value, null, 2));
      }),
      { numRuns: 300 },
    );
  });
});

describe("HTML snippet text", () => {
  it("strips highlighting tags before decoding, so escaped markup stays literal", () => {
    const c = counters();
    expect(
      snippetText(
        "<strong>Hello</strong> &lt;strong&gt;x&lt;/strong&gt; <B class='h'>b</B> <em>e</em> <mark>m</mark> <a href='#'>kept</a>",
        c,
      ),
    ).toBe("Hello <strong>x</strong> b e m <a href='#'>kept</a>");
    expect(Object.fromEntries(c)).toEqual({ "html.tags_stripped": 8, "html.entities_decoded": 4 });
  });

  it("decodes named, decimal and hex references strictly (only with ';')", () => {
    const c = counters();
    expect(decodeEntities("AT&T &amp; K&amp;R &quot;x&#x27;s&#39; &copy 2024 &nbsp;&notanentity; ?a=1&copy=2", c)).toBe(
      "AT&T & K&R \"x's' &copy 2024 \u00a0&notanentity; ?a=1&copy=2",
    );
    expect(c.get("html.entities_decoded")).toBe(6);
    expect(stripHighlightTags("no tags", c)).toBe("no tags");
  });

  it("turns the recorded Brave-layout descriptions back into the sentences of the pages they came from", () => {
    const results = (file: string) => JSON.parse(readFileSync(file, "utf8")).web.results as { description: string }[];
    const c = counters();
    // scripts/record-demo/search-docs/http-etag.md, http-status-codes.md and git-reflog.md (inline-code backticks dropped)
    expect(snippetText(results(HTTP_304)[0]?.description ?? "", c)).toBe(
      'If the resource hasn\'t changed, the server answers "304 Not Modified" with no body, and the client keeps using its copy.',
    );
    expect(snippetText(results(HTTP_304)[1]?.description ?? "", c)).toBe(
      "3xx redirects: 301 & 308 are permanent, 302 & 307 temporary; 304 Not Modified answers a conditional request.",
    );
    expect(snippetText(results(GIT_RESET)[0]?.description ?? "", c)).toBe(
      "After a bad git reset --hard or a rebase you regret, find the line from before it and point a branch back there: git branch rescue HEAD@{3} or git reset --hard HEAD@{3}.",
    );
    // <strong> pairs: 3 + 5 + 8; entities: &#x27; and 2 &quot;, then 2 &amp;
    expect(Object.fromEntries(c)).toEqual({ "html.tags_stripped": 32, "html.entities_decoded": 5 });
  });
});

describe("volatile values", () => {
  it("finds timestamps, epoch ms, UUIDs and request ids, one kind per value, in text order", () => {
    const text = [
      '{"created_at": "2025-06-18T15:04:05.123Z", "request_id": "9b2f1c6e-8d4a-4f0b-b6a1-2c3d4e5f6a7b",',
      ' "id": "123e4567-e89b-12d3-a456-426614174000", "ts_ms": 1717171717171, "created": 1717171717}',
      "Date: Tue, 03 Jun 2025 10:00:00 GMT",
      "x-request-id: req_8f3a2b1c9d0e",
      "log 2024-01-02 03:04:05 started",
    ].join("\n");
    expect(findVolatile(text).map((s) => [s.kind, text.slice(s.start, s.end)])).toEqual([
      ["timestamp", "2025-06-18T15:04:05.123Z"],
      ["request_id", "9b2f1c6e-8d4a-4f0b-b6a1-2c3d4e5f6a7b"],
      ["uuid", "123e4567-e89b-12d3-a456-426614174000"],
      ["epoch_ms", "1717171717171"],
      ["epoch_s", "1717171717"],
      ["timestamp", "Tue, 03 Jun 2025 10:00:00 GMT"],
      ["request_id", "req_8f3a2b1c9d0e"],
      ["timestamp", "2024-01-02 03:04:05"],
    ]);
  });

  it("ignores bare dates (protocol versions), git SHAs, sha256 sums, long numbers and hex", () => {
    const text =
      '"protocolVersion": "2024-11-05" 1c3f38f777421774329bc81aefec0e8c0caffdb0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 12345678901234567 id=1717171717 v1.1717171717171';
    expect(findVolatile(text)).toEqual([]);
  });

  it("counts per kind without changing anything", () => {
    const c = counters();
    expect(countVolatile("a 2025-06-18T15:04:05Z b 2025-06-19T15:04:05Z c 123e4567-e89b-12d3-a456-426614174000", c)).toBe(3);
    expect(Object.fromEntries(c)).toEqual({ "volatile.timestamp": 2, "volatile.uuid": 1 });
  });
});

describe("length cap", () => {
  it("keeps head and tail and says exactly how many characters were cut", () => {
    const text = `${"a".repeat(5000)}${"b".repeat(5000)}`;
    const c = counters();
    const capped = capLength(text, 1000, c);
    expect(capped.length).toBeLessThanOrEqual(1000);
    const marker = /\n\[… (\d+) characters elided …\]\n/.exec(capped);
    expect(marker).not.toBeNull();
    const elided = Number(marker?.[1]);
    const [head, tail] = capped.split(marker?.[0] ?? "");
    expect((head?.length ?? 0) + elided + (tail?.length ?? 0)).toBe(text.length);
    expect(text.startsWith(head ?? "x")).toBe(true);
    expect(text.endsWith(tail ?? "x")).toBe(true);
    expect(Object.fromEntries(c)).toEqual({ "truncated.observations": 1, "truncated.chars": elided });
  });

  it("leaves short texts alone; 0 or Infinity means no cap; never splits a surrogate pair", () => {
    const c = counters();
    expect(capLength("short", 5, c)).toBe("short");
    expect(capLength("x".repeat(100), 0, c)).toBe("x".repeat(100));
    expect(capLength("x".repeat(100), Number.POSITIVE_INFINITY, c)).toBe("x".repeat(100));
    expect(c.size).toBe(0);
    const emoji = "😀".repeat(1000);
    for (const cap of [100, 101, 102, 103]) expect(capLength(emoji, cap, c).isWellFormed()).toBe(true);
    expect(capLength("x".repeat(100), 3, c)).toBe(elisionMarker(100)); // cap below the marker's size
  });

  it("property: head + elided + tail = original length, output within the cap, marker exact", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 3000 }), fc.integer({ min: 1, max: 400 }), (text, cap) => {
        const c = counters();
        const capped = capLength(text, cap, c);
        if (text.length <= cap) {
          expect(capped).toBe(text);
          return;
        }
        const elided = c.get("truncated.chars") ?? -1;
        const marker = elisionMarker(elided);
        const at = capped.indexOf(marker);
        expect(at).toBeGreaterThanOrEqual(0);
        const head = capped.slice(0, at);
        const tail = capped.slice(at + marker.length);
        expect(head.length + elided + tail.length).toBe(text.length);
        expect(text.slice(0, head.length)).toBe(head);
        expect(text.slice(text.length - tail.length)).toBe(tail);
        if (marker.length <= cap) expect(capped.length).toBeLessThanOrEqual(cap);
        expect(capped.isWellFormed()).toBe(text.isWellFormed());
      }),
      { numRuns: 400 },
    );
  });
});

describe("Unicode check", () => {
  it("repair: lone surrogates become U+FFFD and are counted; valid text is returned as is", () => {
    const c = counters();
    expect(checkUnicode("ok 😀", "repair", "turns.0.observation", c)).toBe("ok 😀");
    expect(checkUnicode("a\ud800b\udc00c", "repair", "turns.0.observation", c)).toBe("a\ufffdb\ufffdc");
    expect(Object.fromEntries(c)).toEqual({ "utf8.repaired": 2 });
  });

  it("counts U+FFFD already present (invalid bytes decoded upstream) in both modes", () => {
    const c = counters();
    expect(checkUnicode("bad \ufffd\ufffd byte", "repair", "turns.1.observation", c)).toBe("bad \ufffd\ufffd byte");
    expect(Object.fromEntries(c)).toEqual({ "utf8.replacement_chars": 2 });
  });

  it("quarantine: throws a RecordError naming the field", () => {
    const c = counters();
    expect(() => checkUnicode("x\udc00", "quarantine", "turns.2.observation", c)).toThrow(RecordError);
    try {
      checkUnicode("x\ufffd", "quarantine", "task", c);
    } catch (err) {
      expect(err).toBeInstanceOf(RecordError);
      expect((err as RecordError).field).toBe("task");
      expect((err as RecordError).message).toMatch(/^task: invalid Unicode: 1 U\+FFFD replacement character/);
    }
    expect(checkUnicode("fine", "quarantine", "task", c)).toBe("fine");
  });
});

describe("domain normalizers", () => {
  it("mcp: canonical JSON of requests and replies (idempotent on reader output), volatile values counted", async () => {
    const t = await readFirst(mcpJsonRpcReader, MCP_SESSION);
    expect(t.turns).toHaveLength(12);
    const c = counters();
    const normalized = await mcpNormalizer.normalize(t, SETTINGS, c);
    expect(normalized.turns).toEqual(t.turns);
    // The recorded session has no timestamps, ids or epoch numbers: nothing to count, nothing reformatted.
    expect(Object.fromEntries(c)).toEqual({});
    const tabbed: Trajectory = {
      ...t,
      turns: [
        {
          action: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
          observation: '{\n\t"jsonrpc": "2.0",\n\t"id": 1,\n\t"result": {"at": "2026-01-15T12:00:00Z"}\n}',
        },
      ],
    };
    const c2 = counters();
    expect((await mcpNormalizer.normalize(tabbed, SETTINGS, c2)).turns[0]).toEqual({
      action: '{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "method": "ping"\n}',
      observation: '{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": {\n    "at": "2026-01-15T12:00:00Z"\n  }\n}',
    });
    expect(Object.fromEntries(c2)).toEqual({ "json.reformatted": 2, "volatile.timestamp": 1 });
  });

  it("search: recorded snippets decoded, 22 <strong> tags and 6 entities, 5 page_age timestamps; URLs untouched", async () => {
    const t = await readFirst(searchApiReader, HTTP_304);
    const c = counters();
    const observation = (await searchNormalizer.normalize(t, SETTINGS, c)).turns[0]?.observation ?? "";
    expect(observation).not.toMatch(/<\/?strong>|&quot;|&#x27;|&amp;/);
    expect(observation).toContain(
      '"description": "3xx redirects: 301 & 308 are permanent, 302 & 307 temporary; 304 Not Modified answers a conditional request."',
    );
    expect(observation).toContain('"url": "https://web.example.test/guides/http/etag"');
    // grep -o '<strong>\|</strong>' → 11 + 11; '&quot;' 2, '&#x27;' 2, '&amp;' 2; '"page_age": "…T…"' 5
    expect(Object.fromEntries(c)).toEqual({
      "html.tags_stripped": 22,
      "html.entities_decoded": 6,
      "json.reformatted": 1,
      "volatile.timestamp": 5,
    });
    expect(JSON.parse(observation).web.results).toHaveLength(5);
    // A URL is an address, not text: an escaped "&amp;" in one stays as it is.
    const links: Trajectory = {
      ...t,
      turns: [{ action: "{}", observation: '[{"url": "https://example.test/?a=1&amp;b=2", "description": "Q&amp;A"}]' }],
    };
    expect((await searchNormalizer.normalize(links, SETTINGS, counters())).turns[0]?.observation).toBe(
      '[\n  {\n    "url": "https://example.test/?a=1&amp;b=2",\n    "description": "Q&A"\n  }\n]',
    );
    // Extracted page text (not JSON) is left as it is: the recorded extract, and a page about HTML.
    const [trace] = await collect(searchApiReader.read(TRACE, { maxLineBytes: 1 << 20 }));
    const extract = trace?.kind === "trajectory" ? trace.trajectory.turns[1] : undefined;
    expect(extract?.observation).toMatch(/^# Recovering "lost" commits with the reflog\n/);
    expect(
      (await searchNormalizer.normalize({ ...t, turns: [extract as Trajectory["turns"][number]] }, SETTINGS, counters())).turns[0],
    ).toEqual(extract);
    const page: Trajectory = { ...t, turns: [{ action: "{}", observation: "Use &lt;b&gt; for <strong>bold</strong>." }] };
    expect((await searchNormalizer.normalize(page, SETTINGS, counters())).turns[0]?.observation).toBe(
      "Use &lt;b&gt; for <strong>bold</strong>.",
    );
  });

  it("swe: shell output is never reformatted, even when it is JSON; marked JSON tool results are", async () => {
    const cat = '{\n    "name": "lwm-data",\n    "private": true\n}\n';
    const t: Trajectory = {
      id: "x",
      domain: "swe",
      source: { uri: "x", format: "test" },
      turns: [
        { action: "cat package.json", observation: cat },
        {
          action: "github.get_issue(1)",
          observation: '{"number":1,"created_at":"2025-06-01T00:00:00Z"}',
          meta: { observation_format: "json" },
        },
      ],
    };
    const c = counters();
    const normalized = await sweNormalizer.normalize(t, SETTINGS, c);
    expect(normalized.turns[0]).toBe(t.turns[0]);
    expect(normalized.turns[1]?.observation).toBe('{\n  "number": 1,\n  "created_at": "2025-06-01T00:00:00Z"\n}');
    expect(Object.fromEntries(c)).toEqual({ "json.reformatted": 1, "volatile.timestamp": 1 });
  });
});
