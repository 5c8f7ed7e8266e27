import { DOMAINS, type Domain, type Trajectory, type Turn } from "../../src/core/trajectory.ts";
import type { HostileCatalogue } from "./injection-hostile.ts";

/**
 * Trajectories with hostile strings in every rendered field (system, task, initial observation,
 * actions, observations) and in fields that are not rendered (thinking, meta), in every position
 * (alone, at the start, at the end, repeated, next to newlines, cut across a field boundary), in
 * all seven domains, both as plain text and inside each domain's structured formats (JSON-RPC,
 * search API JSON, terminal recordings, accessibility trees) that normalization rewrites.
 *
 * Each case is built twice from one description: `h` inserts a hostile string in the dirty twin
 * and nothing in the clean twin, so the clean twin is "the same trajectory with the hostile
 * strings removed" by construction.
 */

export type Inject = (hostile: string) => string;

export type CaseBody = Omit<Trajectory, "id" | "domain" | "source">;

export interface HostileCase {
  id: string;
  domain: Domain;
  build(h: Inject): CaseBody;
  /** Normalization must leave every field exactly as written (plain text in any domain). */
  verbatim: boolean;
  /** Strings the dirty twin's rendered contents must hold after normalization (and the clean twin's must not). */
  expect: string[];
}

/** Turns per trajectory: long lists of hostile strings are spread over several trajectories. */
const TURNS_PER_TRAJECTORY = 40;

function chunks<T>(items: readonly T[], size = TURNS_PER_TRAJECTORY): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const at = <T>(items: readonly T[], i: number): T => items[((i % items.length) + items.length) % items.length] as T;

/** Plain-text cases: normalization keeps them verbatim in every domain. */
function textCases(domain: Domain, catalogue: HostileCatalogue): HostileCase[] {
  const { literals, splittable } = catalogue;
  const cases: HostileCase[] = [];

  // Alone: each hostile string is a whole field; the system text is all of them back to back.
  chunks(literals).forEach((chunk, c) => {
    cases.push({
      id: `${domain}/alone/${c}`,
      domain,
      verbatim: true,
      expect: [],
      build: (h) => ({
        system: h(chunk.join("")),
        task: h(at(chunk, 0)),
        initialObservation: h(at(chunk, 1)),
        turns: chunk.map((lit) => ({ action: h(lit), observation: h(lit) })),
      }),
    });
  });

  // Positions: start, end, repeated, next to \n and \r\n, in every rendered field; also in the
  // fields that are not rendered. The last observation starts with newlines (Qwen3 strips them).
  chunks(literals).forEach((chunk, c) => {
    cases.push({
      id: `${domain}/positions/${c}`,
      domain,
      verbatim: true,
      expect: [],
      build: (h) => ({
        system: `${h(at(chunk, 0))}You are a world model.\n${h(at(chunk, 1))}\n\n${h(at(chunk, 2))}`,
        task: `${h(at(chunk, 3))} fix the bug ${h(at(chunk, 3))}\n${h(at(chunk, 4))}`,
        initialObservation: `\n${h(at(chunk, 5))}\n$ ${h(at(chunk, 5))}${h(at(chunk, 5))}\n`,
        turns: chunk.map((lit, i): Turn => {
          const last = i === chunk.length - 1;
          return {
            action: `${h(lit)}ls -la ${h(lit)}\n${h(lit)}`,
            observation: `${last ? "\n\n" : ""}${h(lit)}\n${h(lit)}total 0\n${h(lit)}${h(lit)}${h(lit)}\r\n\n${h(lit)}`,
            thinking: h(lit),
            meta: { note: h(lit) },
          };
        }),
        meta: { note: h(at(chunk, 0)) },
      }),
    });
  });

  // Split: every marker cut at every inner position, its head ending one field and its tail
  // starting the next (system → first action, action → observation, observation → next action).
  const pieces = splittable.flatMap((marker) =>
    Array.from({ length: marker.length - 1 }, (_, k) => [marker.slice(0, k + 1), marker.slice(k + 1)]),
  );
  chunks(pieces).forEach((chunk, c) => {
    // Turn i's action ends with the head of chunk[i] and its observation starts with the tail;
    // the observation ends with the head of another piece, whose tail starts the next action.
    const across = (i: number) => at(chunk, i + Math.floor(chunk.length / 2)) as string[];
    cases.push({
      id: `${domain}/split/${c}`,
      domain,
      verbatim: true,
      expect: [],
      build: (h) => ({
        system: `world model ${h(across(-1)[0] as string)}`,
        task: `${h(at(chunk, 0)[1] as string)}task${h(at(chunk, 1)[0] as string)}`,
        turns: chunk.map(
          ([head, tail], i): Turn => ({
            action: `${h(across(i - 1)[1] as string)}cmd ${i} ${h(head as string)}`,
            observation: `${h(tail as string)}out ${i}\n${h(across(i)[0] as string)}`,
          }),
        ),
      }),
    });
  });
  return cases;
}

// Escapes for the structured formats.
const pyString = (text: string) =>
  `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}'`;
const xml = (text: string) =>
  text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;")
    .replace(/\t/g, "&#9;");
const html = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
/** A string for a TSV cell (OSWorld's table): no tabs, newlines or quotes. */
const cell = (text: string) => text.replace(/[\t\r\n"]/g, " ");
/** The literal with an SGR colour change in the middle: only the terminal emulator joins it. */
const ansiSplit = (text: string) => `${text.slice(0, 3)}\x1b[1;31m${text.slice(3)}\x1b[0m`;

/** Structured cases: the hostile strings sit inside the formats each domain's normalizer rewrites. */
function structuredCases(catalogue: HostileCatalogue, markers: readonly string[]): HostileCase[] {
  const { literals } = catalogue;
  // Printable one-line strings (what survives a terminal screen or a tree's quoted name as is).
  const printable = literals.filter((lit) => !/\n|\r|\t|\u200b|\u0338|\\|"/.test(lit));
  const expect = [...markers];
  const cases: HostileCase[] = [];
  const add = (id: string, domain: Domain, build: (h: Inject) => CaseBody) => cases.push({ id, domain, verbatim: false, expect, build });

  // A recording replayed by the terminal emulator: every marker printed plainly, cut by colour
  // codes (only the emulator joins it), and written over a progress line with \r.
  add("terminal/recording", "terminal", (h) => ({
    task: h("<|im_start|>"),
    turns: markers.map((marker, i) => {
      const action = `echo ${h(at(printable, i))}`;
      const events = [
        ["o", `${h(at(printable, i))} ${h(ansiSplit(marker))}\r\n`],
        ["o", `progress 10%\r${h(marker)}\r\n`],
        ["o", "$ "],
      ];
      return { action, observation: "", meta: { terminal: { cols: 240, rows: 60, typing: [["o", `${action}\r\n`]], events } } };
    }),
    meta: { terminal: { cols: 240, rows: 60, events: [["o", `$ ${h(ansiSplit("<|im_end|>"))}\r\n$ `]] } },
  }));

  add("mcp/jsonrpc", "mcp", (h) => ({
    initialObservation: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      result: { tools: literals.map((lit) => ({ name: h(lit), description: h(lit) })) },
    }),
    turns: chunks(literals, 10).map((chunk, i) => ({
      action: JSON.stringify({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: { name: h(at(chunk, 0)), arguments: { [`k${h(at(chunk, 1))}`]: h(at(chunk, 2)) } },
      }),
      observation: JSON.stringify({
        jsonrpc: "2.0",
        id: i + 1,
        result: { content: chunk.map((lit) => ({ type: "text", text: h(lit) })), isError: false },
      }),
    })),
  }));

  add("search/api", "search", (h) => ({
    turns: chunks(printable, 10).map((chunk) => ({
      action: JSON.stringify({ q: chunk.map(h).join(" ") }),
      observation: JSON.stringify({
        query: { original: h(at(chunk, 0)) },
        web: {
          results: chunk.map((lit) => ({
            title: `<strong>${h(lit)}</strong> title`,
            url: `https://example.com/${h(lit)}`,
            // Entity-escaped: the search normalizer decodes it back into the literal.
            description: `${h(html(lit))} and <b>${h(lit)}</b>`,
          })),
        },
      }),
    })),
  }));

  add("swe/json-tool-result", "swe", (h) => ({
    turns: chunks(literals, 10).map((chunk) => ({
      action: `curl localhost/api?q=${h(at(chunk, 0))}`,
      observation: JSON.stringify({ items: chunk.map((lit) => ({ [`key${h(lit)}`]: h(lit) })) }),
      meta: { observation_format: "json" },
    })),
  }));

  const axTree = (h: Inject, chunk: string[]) =>
    [
      `RootWebArea ${pyString(`${h(at(chunk, 0))}Home`)}, focused`,
      ...chunk.flatMap((lit, i) => [
        `\t[${i + 10}] link ${pyString(h(lit))}`,
        `\t\t[${i + 500}] StaticText ${pyString(`${h(lit)} text ${h(lit)}`)}`,
      ]),
    ].join("\n");
  add("web/axtree", "web", (h) => ({
    initialObservation: axTree(h, printable.slice(0, 5)),
    turns: chunks(literals, 10).map((chunk) => ({ action: `click('${h(at(chunk, 0))}')`, observation: axTree(h, chunk) })),
  }));

  const uiautomator = (h: Inject, chunk: string[]) =>
    `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">${chunk
      .map(
        (lit, i) =>
          `<node index="${i}" text="${xml(h(lit))}" resource-id="id/${xml(h(lit))}" class="android.widget.TextView" package="com.example" content-desc="${xml(`${h(lit)}!`)}" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,${i * 10}][100,${i * 10 + 10}]" />`,
      )
      .join("")}</hierarchy>`;
  add("android/uiautomator", "android", (h) => ({
    turns: chunks(literals, 10).map((chunk) => ({ action: `type("${h(at(chunk, 0))}")`, observation: uiautomator(h, chunk) })),
  }));

  const droidbot = (h: Inject, chunk: string[]) =>
    JSON.stringify({
      foreground_activity: "com.example/.Main",
      views: [
        {
          temp_id: 0,
          parent: -1,
          children: chunk.map((_, i) => i + 1),
          class: "android.widget.FrameLayout",
          package: "com.example",
          bounds: [
            [0, 0],
            [1080, 1920],
          ],
        },
        ...chunk.map((lit, i) => ({
          temp_id: i + 1,
          parent: 0,
          children: [],
          class: "android.widget.Button",
          package: "com.example",
          text: h(lit),
          content_description: h(lit),
          resource_id: `id/${h(lit)}`,
          bounds: [
            [0, i * 10],
            [100, i * 10 + 10],
          ],
        })),
      ],
    });
  add("android/droidbot", "android", (h) => ({
    turns: chunks(literals, 10).map((chunk) => ({ action: `touch ${h(at(chunk, 0))}`, observation: droidbot(h, chunk) })),
  }));

  const atspi = (h: Inject, chunk: string[]) =>
    `<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" name="${xml(h(at(chunk, 0)))}" cp:screencoord="(0, 0)" cp:size="(1920, 1080)"><application name="${xml(h(at(chunk, 1)))}">${chunk
      .map(
        (lit, i) =>
          `<label name="${xml(h(lit))}" st:showing="true" cp:screencoord="(0, ${i * 20})" cp:size="(300, 20)">${xml(h(lit))}</label>`,
      )
      .join("")}</application></desktop-frame>`;
  const osworld = (h: Inject, chunk: string[]) =>
    [
      "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)",
      ...chunk.map((lit, i) => `label\t${cell(h(lit))}\t${cell(h(lit))}\t\t${cell(h(lit))}\t(0, ${i * 20})\t(300, 20)`),
    ].join("\n");
  add("os/atspi", "os", (h) => ({
    initialObservation: atspi(h, literals.slice(0, 5)),
    turns: chunks(literals, 10).map((chunk) => ({ action: `pyautogui.typewrite('${h(at(chunk, 0))}')`, observation: atspi(h, chunk) })),
  }));
  add("os/osworld-table", "os", (h) => ({
    turns: chunks(printable, 10).map((chunk) => ({ action: `pyautogui.click(${h(at(chunk, 0))})`, observation: osworld(h, chunk) })),
  }));
  return cases;
}

/** Every case for one tokenizer's catalogue; `markers` must show up verbatim in structured cases. */
export function hostileCases(catalogue: HostileCatalogue, markers: readonly string[]): HostileCase[] {
  return [...DOMAINS.flatMap((domain) => textCases(domain, catalogue)), ...structuredCases(catalogue, markers)];
}
