import fc from "fast-check";
import { DOMAINS, type Domain, type Trajectory, type Turn } from "../../src/core/trajectory.ts";
import type { NormalizeSettings } from "../../src/normalize/normalizer.ts";
import { DEFAULT_SETTINGS } from "./support.ts";

/**
 * Arbitrary trajectories for the domain normalizers: synthetic ones built from hostile text and
 * generated trees / recordings / JSON per domain, and real ones (read from the fixtures) with
 * their texts mutated.
 */

// Pieces of hostile text: controls, lone surrogates, escapes, markup, and secret-looking shapes.
const PIECES = [
  "\0",
  "\ud800",
  "\udc00",
  "\ud83d\ude00",
  "\u001b",
  "\u009b",
  "\r",
  "\n",
  "\r\n",
  "\t",
  "\ufffd",
  "\ufeff",
  "\u200b",
  "\u2028",
  "é",
  "e\u0301",
  "<",
  ">",
  "&",
  "&amp;",
  "&#xD800;",
  "&#0;",
  "&#1114112;",
  "<strong>",
  "</b>",
  '"',
  "\\",
  "'",
  "{",
  "}",
  "[",
  "]",
  ":",
  ",",
  " ",
  "a",
  "1",
  "AKIAIOSFODNN7EXAMPLE",
  "ghp_0123456789abcdefghijABCDEFGHIJ012345",
  "-----BEGIN RSA PRIVATE KEY-----",
  "password=Xy7#kq9!Lm2@vB4$",
  "postgres://app:s3cr3tP4ss@db:5432",
  "Authorization: Bearer abc.def.ghi",
  "2025-06-11T10:00:00Z",
  "550e8400-e29b-41d4-a716-446655440000",
];

/** Short hostile text (inside trees, events, JSON). */
const nastyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: fc.constantFrom(...PIECES), maxLength: 30 }),
);

/** Hostile text, sometimes huge: the size cap, the secret scanner's bounded repetitions, quadratic paths. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: nastyText },
  // Up to 1M characters: large, yet a clear margin under the per-record time limit for linear code.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...PIECES, "ab\n", "x"), fc.integer({ min: 1_000, max: 1_000_000 }))
      .map(([s, n]) => s.repeat(Math.ceil(n / s.length))),
  },
);

const depth = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 50 }) },
  { weight: 1, arbitrary: fc.integer({ min: 50, max: 5_000 }) },
);

const nested = (open: string, close: string, n: number, inner = "1") => open.repeat(n) + inner + close.repeat(n);

/** JSON texts: random values (nasty strings and keys), pretty or compact, deeply nested, or cut. */
export const jsonText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.jsonValue({ maxDepth: 4, stringUnit: fc.constantFrom(...PIECES) }), fc.constantFrom(undefined, 2, "\t"))
      .map(([value, indent]) => JSON.stringify(value, null, indent)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(["[", "]"], ['{"a":', "}"]), depth)
      .map(([[open, close], n]) => nested(open as string, close as string, n)),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat(), fc.constantFrom(...PIECES)).map(([value, at, piece]) => {
      const text = JSON.stringify(value, null, 2);
      const i = at % (text.length + 1);
      return text.slice(0, i) + piece + text.slice(i);
    }),
  },
);

/** A Brave-style search response with HTML snippets (highlighting tags, entities). */
const searchResponse: fc.Arbitrary<string> = fc
  .tuple(nastyText, fc.array(fc.tuple(nastyText, nastyString, fc.webUrl()), { maxLength: 4 }))
  .map(([query, results]) =>
    JSON.stringify({
      type: "search",
      query: { original: query },
      web: { results: results.map(([title, description, url]) => ({ title: `<strong>${title}</strong>`, url, description })) },
    }),
  );

const xmlEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
// Attribute values: escaped nasty text, or raw (malformed XML is a case too).
const attrValue = fc.oneof({ weight: 4, arbitrary: nastyText.map(xmlEscape) }, { weight: 1, arbitrary: nastyText });

interface TreeShape {
  label: string;
  attrs: [string, string][];
  children: TreeShape[];
}

/** A random tree, or a chain `depth` levels deep. */
function treeShape(labels: fc.Arbitrary<string>, attrs: fc.Arbitrary<[string, string][]>): fc.Arbitrary<TreeShape> {
  const level = (below: number): fc.Arbitrary<TreeShape> =>
    fc.record({ label: labels, attrs, children: below === 0 ? fc.constant([]) : fc.array(level(below - 1), { maxLength: 3 }) });
  const tree = level(4);
  const chain = fc.tuple(labels, attrs, depth).map(([label, a, n]) => {
    let node: TreeShape = { label, attrs: a, children: [] };
    for (let i = 0; i < n; i++) node = { label, attrs: a, children: [node] };
    return node;
  });
  return fc.oneof({ weight: 4, arbitrary: tree }, { weight: 1, arbitrary: chain });
}

const bounds = fc.oneof(
  fc
    .tuple(fc.integer({ min: -5, max: 3000 }), fc.integer({ min: -5, max: 3000 }), fc.nat(3000), fc.nat(3000))
    .map(([a, b, c, d]) => `[${a},${b}][${c},${d}]`),
  nastyText.map(xmlEscape),
);

function xml(node: TreeShape, tag: (n: TreeShape) => string): string {
  // Iterative: chains are thousands deep.
  const out: string[] = [];
  const stack: { node: TreeShape; closing: boolean }[] = [{ node, closing: false }];
  while (stack.length > 0) {
    const { node: n, closing } = stack.pop() as { node: TreeShape; closing: boolean };
    const name = tag(n);
    if (closing) {
      out.push(`</${name}>`);
      continue;
    }
    out.push(`<${name}${n.attrs.map(([k, v]) => ` ${k}="${v}"`).join("")}>`);
    stack.push({ node: n, closing: true });
    for (let i = n.children.length - 1; i >= 0; i--) stack.push({ node: n.children[i] as TreeShape, closing: false });
  }
  return out.join("");
}

const uiautomatorXml: fc.Arbitrary<string> = treeShape(
  fc.constantFrom("android.widget.FrameLayout", "android.widget.TextView", "android.view.View", "node x"),
  fc
    .tuple(
      attrValue,
      attrValue,
      fc.constantFrom("android.widget.Button", "android.widget.TextView", ""),
      bounds,
      fc.constantFrom("true", "false", "maybe"),
    )
    .map(([text, id, cls, b, flag]): [string, string][] => [
      ["index", "0"],
      ["text", text],
      ["resource-id", id],
      ["class", cls],
      ["bounds", b],
      ["clickable", flag],
    ]),
).map((tree) => `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">${xml(tree, () => "node")}</hierarchy>`);

const atspiXml: fc.Arbitrary<string> = treeShape(
  fc.constantFrom("push-button", "panel", "label", "text", "frame"),
  fc
    .tuple(attrValue, attrValue, fc.integer({ min: -10, max: 4000 }), fc.nat(4000), fc.constantFrom("true", "false"))
    .map(([name, id, x, w, flag]): [string, string][] => [
      ["name", name],
      ["attr:id", id],
      ["st:focused", flag],
      ["cp:screencoord", `(${x}, ${x})`],
      ["cp:size", `(${w}, ${w})`],
    ]),
).map((tree) => xml(tree, (n) => n.label));

const TABLE_HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)";
const osworldTable: fc.Arbitrary<string> = fc
  .array(fc.array(fc.oneof(nastyText, fc.constantFrom('"a ""b"" c"', "(1, 2)", "(3, 4)", "")), { minLength: 5, maxLength: 8 }), {
    maxLength: 6,
  })
  .map((rows) => [TABLE_HEADER, ...rows.map((fields) => fields.join("\t"))].join("\n"));

const pyString = fc
  .string({
    unit: fc.constantFrom("a", " ", "é", "\\'", '\\"', "\\n", "\\x41", "\\u00e9", "\\U0001F600", "\\U00110000", "\\xZZ", "\\q", "\\"),
    maxLength: 10,
  })
  .map((s) => `'${s}'`);

/** BrowserGym AXTree text: `[bid] role 'name', prop=value`, a tab per level. */
const axTree: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(
        fc.record({
          indent: fc.nat(3),
          bid: fc.option(fc.stringMatching(/^[a-z0-9]{1,4}$/), { nil: undefined }),
          role: fc.constantFrom("RootWebArea", "link", "button", "generic", "StaticText", "heading"),
          name: fc.option(pyString, { nil: undefined }),
          props: fc.array(
            fc.tuple(
              fc.constantFrom("focused", "url", "value", "checked", "level"),
              fc.option(fc.oneof(pyString, fc.constantFrom("True", "12", "['a', 'b']", "(1, 2")), { nil: undefined }),
            ),
            { maxLength: 3 },
          ),
        }),
        { minLength: 1, maxLength: 12 },
      )
      .map((lines) => {
        let level = 0;
        return lines
          .map((line, i) => {
            level = i === 0 ? 0 : Math.min(line.indent, level + 1);
            const props = line.props.map(([k, v]) => (v === undefined ? `, ${k}` : `, ${k}=${v}`)).join("");
            return `${"\t".repeat(level)}${line.bid !== undefined ? `[${line.bid}] ` : ""}${line.role}${line.name !== undefined ? ` ${line.name}` : ""}${props}`;
          })
          .join("\n");
      }),
  },
  {
    weight: 1,
    arbitrary: depth.map((n) =>
      Array.from({ length: n }, (_, i) => `${"\t".repeat(i)}[${i}] generic 'g'`)
        .join("\n")
        .replace(/^/, "[root] RootWebArea 'r'\n"),
    ),
  },
);

/** DroidBot views linked by temp_id / parent / children, including broken and cyclic links. */
const droidBotState: fc.Arbitrary<string> = fc
  .array(
    fc.record({
      parent: fc.oneof(fc.constant(-1), fc.constant(null), fc.nat(8)),
      children: fc.array(fc.oneof(fc.nat(8), fc.constant("x")), { maxLength: 3 }),
      text: fc.oneof(nastyText, fc.constant(null), fc.integer()),
      cls: fc.constantFrom("android.widget.Button", "android.view.View", ""),
      bounds: fc.oneof(
        fc.constant([
          [0, 0],
          [10, 10],
        ] as unknown),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    }),
    { maxLength: 8 },
  )
  .chain((views) =>
    fc.oneof(
      fc.constant(
        views.map((v, i) => ({ temp_id: i, parent: v.parent, children: v.children, text: v.text, class: v.cls, bounds: v.bounds })),
      ),
      // A chain thousands of views deep (past 10000 the recursive tree code overflowed a worker's stack).
      fc.oneof(depth, fc.integer({ min: 5_000, max: 20_000 })).map((n) =>
        Array.from({ length: n }, (_, i) => ({
          temp_id: i,
          parent: i === 0 ? -1 : i - 1,
          children: i + 1 < n ? [i + 1] : [],
          class: "v",
        })),
      ),
    ),
  )
  .map((views) => JSON.stringify({ views, foreground_activity: "com.example/.Main", state_str: "s" }));

const ESCAPE_FINALS = ["A", "B", "C", "D", "E", "H", "J", "K", "L", "M", "P", "S", "T", "X", "@", "b", "d", "r", "m", "I", "Z"];
/** Terminal output: text, control sequences, and sequences with absurd counts. */
const terminalOutput: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      nastyText,
      fc.constantFrom(
        "\u001b[2J",
        "\u001b[H",
        "\u001b[?1049h",
        "\u001b[?1049l",
        "\u001b[31m",
        "\u001b[0m",
        "\u001b]0;title\u0007",
        "\u001bc",
        "\b",
        "\r",
        "\u001bM",
        "\u001b#8",
        "\u001b[?3h",
      ),
      // Absurd counts are rare: even clamped (terminal.ts MAX_CSI_PARAM) each costs the emulator ~0.1 s.
      fc
        .tuple(
          fc.constantFrom(...ESCAPE_FINALS),
          fc.oneof({ weight: 6, arbitrary: fc.nat(200) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 ** 31 }) }),
        )
        .map(([f, n]) => `\u001b[${n}${f}`),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(""));

const termSize = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 300 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(0, -1, 1.5, 100_000, 2 ** 32, "80") },
);

const termEvents = fc.array(
  fc.oneof(
    terminalOutput.map((data) => ["o", data] as unknown),
    fc.tuple(termSize, termSize).map(([c, r]) => ["r", `${c}x${r}`] as unknown),
  ),
  { maxLength: 4 },
);

function observation(domain: Domain): fc.Arbitrary<string> {
  switch (domain) {
    case "mcp":
      return fc.oneof(jsonText, nastyString);
    case "search":
      return fc.oneof(searchResponse, jsonText, nastyString);
    case "swe":
    case "terminal":
      return fc.oneof(nastyString, jsonText);
    case "web":
      return fc.oneof({ weight: 3, arbitrary: axTree }, { weight: 1, arbitrary: nastyString });
    case "android":
      return fc.oneof(
        { weight: 2, arbitrary: uiautomatorXml },
        { weight: 2, arbitrary: droidBotState },
        { weight: 1, arbitrary: nastyString },
      );
    case "os":
      return fc.oneof({ weight: 2, arbitrary: atspiXml }, { weight: 2, arbitrary: osworldTable }, { weight: 1, arbitrary: nastyString });
  }
}

/** Turn meta a reader would leave: tree format hints, the swe JSON marker, a terminal stream. */
function turnMeta(domain: Domain): fc.Arbitrary<Record<string, unknown> | undefined> {
  const hint = (...formats: string[]) =>
    fc.option(
      fc.constantFrom(...formats).map((tree_format) => ({ tree_format })),
      { nil: undefined },
    );
  switch (domain) {
    case "swe":
      return fc.option(fc.constant({ observation_format: "json" }), { nil: undefined });
    case "android":
      return hint("uiautomator-xml", "droidbot-state", "bogus");
    case "os":
      return hint("atspi-xml", "osworld-table");
    case "terminal":
      return fc.option(fc.record({ terminal: fc.record({ cols: termSize, rows: termSize, typing: termEvents, events: termEvents }) }), {
        nil: undefined,
      });
    default:
      return fc.constant(undefined);
  }
}

const optional = (arb: fc.Arbitrary<string>) => fc.option(arb, { nil: undefined });

function turn(domain: Domain): fc.Arbitrary<Turn> {
  return fc
    .record({
      action: fc.oneof(nastyString, jsonText),
      observation: observation(domain),
      thinking: optional(nastyString),
      meta: turnMeta(domain),
    })
    .map(({ action, observation: obs, thinking, meta }) => ({
      action,
      observation: obs,
      ...(thinking !== undefined ? { thinking } : {}),
      ...(meta !== undefined ? { meta } : {}),
    }));
}

export function syntheticTrajectory(domain: Domain): fc.Arbitrary<Trajectory> {
  const recording =
    domain === "terminal"
      ? fc.option(fc.record({ terminal: fc.record({ cols: termSize, rows: termSize, events: termEvents }) }), { nil: undefined })
      : fc.constant(undefined);
  return fc
    .record({
      id: fc.string({ minLength: 1, maxLength: 12 }),
      system: optional(nastyString),
      task: optional(nastyString),
      initialObservation: optional(observation(domain)),
      turns: fc.array(turn(domain), { minLength: 1, maxLength: 4 }),
      meta: recording,
    })
    .map(({ id, system, task, initialObservation, turns, meta }) => ({
      id,
      domain,
      source: { uri: "fuzz.jsonl", line: 1, offset: 0, format: "canonical-jsonl" },
      ...(system !== undefined ? { system } : {}),
      ...(task !== undefined ? { task } : {}),
      ...(initialObservation !== undefined ? { initialObservation } : {}),
      turns,
      ...(meta !== undefined ? { meta } : {}),
    }));
}

/** An edit of one text (or terminal size) in a real trajectory. */
export type TextEdit =
  | { op: "insert"; slot: number; at: number; text: string }
  | { op: "truncate"; slot: number; at: number }
  | { op: "dupLine"; slot: number; line: number }
  | { op: "set"; slot: number; text: string }
  | { op: "resize"; slot: number; cols: unknown; rows: unknown };

export const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  fc.record({ op: fc.constant("insert" as const), slot: fc.nat(), at: fc.nat(), text: fc.oneof(nastyString, terminalOutput) }),
  fc.record({ op: fc.constant("truncate" as const), slot: fc.nat(), at: fc.nat() }),
  fc.record({ op: fc.constant("dupLine" as const), slot: fc.nat(), line: fc.nat() }),
  fc.record({ op: fc.constant("set" as const), slot: fc.nat(), text: fc.oneof(nastyString, jsonText) }),
  fc.record({ op: fc.constant("resize" as const), slot: fc.nat(), cols: termSize, rows: termSize }),
);

type Slot = { get: () => string; set: (text: string) => void };

/** Every text of a trajectory an edit can reach, terminal event data included. */
function textSlots(t: Trajectory): Slot[] {
  const slots: Slot[] = [];
  const field = <K extends string>(o: Partial<Record<K, unknown>>, k: K) => {
    if (typeof o[k] === "string") slots.push({ get: () => o[k] as string, set: (s) => Object.assign(o, { [k]: s }) });
  };
  const events = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const event of list)
      if (Array.isArray(event) && typeof event[1] === "string") slots.push({ get: () => event[1], set: (s) => (event[1] = s) });
  };
  field(t, "system");
  field(t, "task");
  field(t, "initialObservation");
  events((t.meta?.terminal as { events?: unknown } | undefined)?.events);
  for (const turn of t.turns) {
    field(turn, "action");
    field(turn, "observation");
    field(turn, "thinking");
    const terminal = turn.meta?.terminal as { typing?: unknown; events?: unknown } | undefined;
    events(terminal?.typing);
    events(terminal?.events);
  }
  return slots;
}

/** The objects holding a terminal size (`{cols, rows}`): the recording's and each turn's. */
function sizeSlots(t: Trajectory): Record<string, unknown>[] {
  return [t.meta?.terminal, ...t.turns.map((turn) => turn.meta?.terminal)].filter(
    (x): x is Record<string, unknown> => typeof x === "object" && x !== null,
  );
}

export function applyTextEdits(trajectory: Trajectory, edits: readonly TextEdit[]): Trajectory {
  const t = structuredClone(trajectory);
  for (const edit of edits) {
    if (edit.op === "resize") {
      const holders = sizeSlots(t);
      const holder = holders[edit.slot % Math.max(holders.length, 1)];
      if (holder) Object.assign(holder, { cols: edit.cols, rows: edit.rows });
      continue;
    }
    const slots = textSlots(t);
    const slot = slots[edit.slot % slots.length];
    if (!slot) continue;
    const text = slot.get();
    if (edit.op === "set") slot.set(edit.text);
    else if (edit.op === "truncate") slot.set(text.slice(0, edit.at % (text.length + 1)));
    else if (edit.op === "insert") {
      const i = edit.at % (text.length + 1);
      slot.set(text.slice(0, i) + edit.text + text.slice(i));
    } else {
      const lines = text.split("\n");
      const i = edit.line % lines.length;
      slot.set([...lines.slice(0, i + 1), ...lines.slice(i)].join("\n"));
    }
  }
  return t;
}

const cap = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(0, 1, 40, 64, 100, 1_000) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 200_000 }) },
);

export const settingsArb: fc.Arbitrary<NormalizeSettings> = fc.record({
  tree_target: fc.constantFrom("full" as const, "diff" as const),
  collapse_empty_wrappers: fc.boolean(),
  redact_secrets: fc.boolean(),
  invalid_utf8: fc.constantFrom("repair" as const, "quarantine" as const),
  max_observation_chars: fc.oneof(
    fc.constant(DEFAULT_SETTINGS.max_observation_chars),
    fc.record(Object.fromEntries(DOMAINS.map((d) => [d, cap])) as Record<Domain, fc.Arbitrary<number>>),
  ),
});
