/**
 * The pieces the planted corpus (planted-corpus.ts) is made of: the synthetic domain generators
 * (bench/synthetic), volatile values planted into observations, word edits for near copies,
 * shared boilerplate turns for hard negatives, and benchmark episodes.
 *
 * Volatile values are written as slots (`⟪ts⟫`, `⟪pid⟫`, …) into a trajectory's text and filled
 * by `renderVolatile` with values drawn from a seeded Rng: an original and its exact copy share
 * every slot and differ in every value, the way two runs of the same task in the same image do.
 * The forms (what curation has to canonicalize for hashing, see VOLATILE_FORMS):
 *
 *   ts    ISO 8601 with milliseconds and Z        2025-03-14T09:26:53.123Z
 *   tsp   ISO date and time with a space          2025-03-14 09:26:53
 *   pid   process id after `pid `, `pid=`, `[`    pid 48211, worker[48211]
 *   port  TCP port after `host:` or `port `        127.0.0.1:39211, port 39211
 *   tmp   Python tempfile directory               /tmp/tmpk2x9_a1b
 *   hex   16 hex digits (request / trace id)       3fa9c2e1d4b5a697
 *   sha   40 hex digits (git commit)               9f1c…(40)
 *   uuid  RFC 4122 v4                             1b4e28ba-2fa1-41d2-883f-0016d3cca427
 *   dur   duration in s or ms                      0.53s, 231ms
 */
import type { Domain } from "../../src/core/trajectory.ts";
import { androidTrajectory } from "../synthetic/domains/android.ts";
import { mcpTrajectory } from "../synthetic/domains/mcp.ts";
import { osTrajectory } from "../synthetic/domains/os.ts";
import { searchTrajectory } from "../synthetic/domains/search.ts";
import { sweTrajectory } from "../synthetic/domains/swe.ts";
import { terminalTrajectory } from "../synthetic/domains/terminal.ts";
import { webTrajectory } from "../synthetic/domains/web.ts";
import type { CanonicalRecord, DomainParams } from "../synthetic/params.ts";
import type { Rng } from "../synthetic/random.ts";
import { capitalize, identifier, paragraph, sentence, techWord, word, words } from "../synthetic/text.ts";

export type Turn = CanonicalRecord["turns"][number];

export const GENERATORS: Record<Domain, (rng: Rng, id: string, p: DomainParams) => CanonicalRecord> = {
  swe: sweTrajectory,
  terminal: terminalTrajectory,
  web: webTrajectory,
  search: searchTrajectory,
  mcp: mcpTrajectory,
  android: androidTrajectory,
  os: osTrajectory,
};

/** The volatile forms planted (documentation and truth.json). */
export const VOLATILE_FORMS: Record<string, string> = {
  ts: "ISO 8601 timestamp with milliseconds and Z (2025-03-14T09:26:53.123Z)",
  tsp: "ISO date and time with a space (2025-03-14 09:26:53)",
  pid: "process id (pid 48211, pid=48211, worker[48211])",
  port: "TCP port (127.0.0.1:39211, localhost:39211, port 39211)",
  tmp: "Python tempfile directory (/tmp/tmpk2x9_a1b)",
  hex: "16 hex digits, request/trace id (3fa9c2e1d4b5a697)",
  sha: "40 hex digits, git commit",
  uuid: "UUID v4",
  dur: "duration (0.53s, 231ms)",
};

// ---------------------------------------------------------------------------------------------
// Counting words

/** Whitespace-separated tokens of a text. */
export function tokenCount(text: string): number {
  let n = 0;
  let inToken = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || c === 10 || c === 9 || c === 13;
    if (!space && !inToken) n += 1;
    inToken = !space;
  }
  return n;
}

/** Words of a trajectory's turns (actions and observations): what dedup and decontamination compare. */
export function turnWords(turns: readonly Turn[]): number {
  let n = 0;
  for (const turn of turns) n += tokenCount(turn.action) + tokenCount(turn.observation);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Volatile values

const SLOT = /⟪(\w+)⟫/g;

function hexDigits(rng: Rng, n: number): string {
  return rng.hex(n);
}

function volatileValue(kind: string, rng: Rng): string {
  switch (kind) {
    case "ts":
    case "tsp": {
      const ms = Date.UTC(2025, 0, 1) + rng.int(0, 364 * 86400) * 1000 + rng.int(0, 999);
      const iso = new Date(ms).toISOString();
      return kind === "ts" ? iso : iso.slice(0, 19).replace("T", " ");
    }
    case "pid":
      return String(rng.int(1000, 65535));
    case "port":
      return String(rng.int(1024, 65535));
    case "tmp": {
      const chars = "abcdefghijklmnopqrstuvwxyz0123456789_";
      let name = "";
      for (let i = 0; i < 8; i++) name += chars[rng.int(0, chars.length - 1)];
      return `/tmp/tmp${name}`;
    }
    case "hex":
      return hexDigits(rng, 16);
    case "sha":
      return hexDigits(rng, 40);
    case "uuid":
      return `${hexDigits(rng, 8)}-${hexDigits(rng, 4)}-4${hexDigits(rng, 3)}-${rng.pick(["8", "9", "a", "b"])}${hexDigits(rng, 3)}-${hexDigits(rng, 12)}`;
    case "dur":
      return rng.chance(0.5) ? `${(0.01 + rng.next() * 9.9).toFixed(2)}s` : `${rng.int(1, 999)}ms`;
    default:
      throw new Error(`planted corpus: unknown volatile slot ${kind}`);
  }
}

/** Fills every volatile slot of `text` with a value drawn from `rng`. */
export function renderVolatile(text: string, rng: Rng): string {
  return text.includes("⟪") ? text.replace(SLOT, (_, kind: string) => volatileValue(kind, rng)) : text;
}

export function renderTurns(turns: readonly Turn[], rng: Rng): Turn[] {
  return turns.map((turn) => ({ ...turn, action: renderVolatile(turn.action, rng), observation: renderVolatile(turn.observation, rng) }));
}

/** Log lines with volatile values, as servers, test runners and build tools print them. */
const SHELL_LINES = [
  "[⟪ts⟫] INFO server started (pid ⟪pid⟫) on http://127.0.0.1:⟪port⟫",
  "wrote ⟪tmp⟫/report.json in ⟪dur⟫",
  "request ⟪hex⟫ completed in ⟪dur⟫",
  "⟪tsp⟫ worker[⟪pid⟫]: cache dir ⟪tmp⟫, session ⟪uuid⟫",
  "Listening on localhost:⟪port⟫ (pid=⟪pid⟫)",
  "commit ⟪sha⟫ checked out at ⟪ts⟫",
  "done in ⟪dur⟫, temporary files in ⟪tmp⟫",
];
const STATUS_TEXTS = [
  "Last synced ⟪tsp⟫ · request ⟪hex⟫ · rendered in ⟪dur⟫",
  "Autosaved ⟪tsp⟫ (pid ⟪pid⟫)",
  "Session ⟪uuid⟫ · updated ⟪tsp⟫",
  "Connected to port ⟪port⟫ in ⟪dur⟫",
];

function androidStatusNode(text: string): string {
  return `<node index="9" text="${text}" resource-id="" class="android.widget.TextView" package="com.android.systemui" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,1794][1080,1830]" />`;
}

/** The observation with one volatile line planted in the form its domain writes, or unchanged where no place fits. */
function plantLine(domain: Domain, observation: string, rng: Rng): string {
  switch (domain) {
    case "terminal":
      return observation.endsWith("\n") ? `${observation}${rng.pick(SHELL_LINES)}` : `${observation}\n${rng.pick(SHELL_LINES)}`;
    case "swe": {
      const at = observation.lastIndexOf("</output>");
      return at < 0
        ? `${observation}\n${rng.pick(SHELL_LINES)}`
        : `${observation.slice(0, at)}${rng.pick(SHELL_LINES)}\n${observation.slice(at)}`;
    }
    case "web":
      return `${observation}\n\t\t[${rng.int(9000, 9999)}] StaticText '${rng.pick(STATUS_TEXTS)}'`;
    case "android": {
      const at = observation.lastIndexOf("</node></hierarchy>");
      return at < 0 ? observation : `${observation.slice(0, at)}${androidStatusNode(rng.pick(STATUS_TEXTS))}${observation.slice(at)}`;
    }
    case "os": {
      const text = rng.pick(STATUS_TEXTS);
      if (observation.startsWith("<desktop-frame")) {
        const at = observation.lastIndexOf("    </frame>");
        if (at < 0) return observation;
        const label = `      <label name="${text}" st:enabled="true" st:showing="true" st:visible="true" cp:screencoord="(70, 1050)" cp:size="(400, 30)"/>\n`;
        return `${observation.slice(0, at)}${label}${observation.slice(at)}`;
      }
      return `${observation}\nlabel\t${text}\t\t\t\t(70, 1050)\t(400, 30)`;
    }
    case "mcp":
    case "search": {
      let value: unknown;
      try {
        value = JSON.parse(observation);
      } catch {
        return observation;
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) return observation;
      const object = value as Record<string, unknown>;
      if (domain === "search") {
        Object.assign(object, { request_id: "⟪hex⟫", served_at: "⟪ts⟫", took: "⟪dur⟫" });
      } else {
        const meta = { requestId: "⟪uuid⟫", timestamp: "⟪ts⟫", elapsed: "⟪dur⟫", worker: "pid ⟪pid⟫ port ⟪port⟫" };
        const target = (object.result ?? object.error) as Record<string, unknown> | undefined;
        if (target === null || typeof target !== "object" || Array.isArray(target)) return observation;
        if (object.result !== undefined) target._meta = meta;
        else target.data = meta;
      }
      return JSON.stringify(object, null, 2);
    }
  }
}

/**
 * Plants volatile slots into about `share` of the turns with an observation (at least one):
 * one log line, status node or JSON field per chosen turn, placed where the domain's format has
 * room for it, so every record still parses as its format.
 */
export function plantVolatile(domain: Domain, turns: readonly Turn[], rng: Rng, chooseBy: readonly Turn[] = turns, share = 0.4): Turn[] {
  // The turns are chosen on `chooseBy` (the unedited original of a near copy), so a copy gets the same slots.
  const candidates = chooseBy.flatMap((turn, i) => (turn.observation.length > 0 ? [i] : []));
  const chosen = new Set(candidates.filter(() => rng.chance(share)));
  if (chosen.size === 0 && turns.length > 0) chosen.add(candidates.length > 0 ? rng.pick(candidates) : turns.length - 1);
  return turns.map((turn, i) => (chosen.has(i) ? { ...turn, observation: plantLine(domain, turn.observation, rng) } : turn));
}

// ---------------------------------------------------------------------------------------------
// Word edits (near copies)

/** Lowercase words that are JSON or Python literals: editing them could break a record's format. */
const LITERALS = new Set(["true", "false", "null", "none"]);
const EDITABLE = /^[a-z]{2,}$/;

export interface EditResult {
  turns: Turn[];
  edits: number;
  /** Words an edit could touch: lowercase prose words (not JSON keys, markup, code punctuation, volatile values). */
  words: number;
}

/**
 * Edits `rate` of a trajectory's prose words (at least one): each edit inserts a word after it,
 * deletes it, or substitutes another word, one of the three at random. Prose words are whole
 * lowercase words that follow a single space (never JSON keys or literals, XML attribute names,
 * numbers, punctuation, a table's cells or a line's first word), so the record keeps its format
 * and parses as before; on those words the edit rate is exact.
 */
export function editWords(turns: readonly Turn[], rate: number, rng: Rng): EditResult {
  const fields: string[][] = [];
  const eligible: [number, number][] = [];
  for (const turn of turns) {
    for (const text of [turn.action, turn.observation]) {
      const parts = text.split(/(\s+)/);
      const field = fields.push(parts) - 1;
      // A word after a single space: inside a phrase, never the first cell of a table row or line.
      for (let j = 2; j < parts.length; j += 2) {
        const token = parts[j] as string;
        if (parts[j - 1] === " " && EDITABLE.test(token) && !LITERALS.has(token)) eligible.push([field, j]);
      }
    }
  }
  const edits = Math.min(eligible.length, Math.max(1, Math.round(rate * eligible.length)));
  for (let i = 0; i < edits; i++) {
    const pick = rng.int(i, eligible.length - 1);
    [eligible[i], eligible[pick]] = [eligible[pick] as [number, number], eligible[i] as [number, number]];
    const [field, j] = eligible[i] as [number, number];
    const parts = fields[field] as string[];
    const token = parts[j] as string;
    const op = rng.pick(["insert", "delete", "substitute"] as const);
    if (op === "insert") {
      parts[j] = `${token} ${otherWord(rng, token)}`;
    } else if (op === "delete" && parts[j + 1] === " ") {
      parts[j] = "";
      parts[j + 1] = "";
    } else if (op === "delete") {
      parts[j] = "";
      parts[j - 1] = "";
    } else {
      parts[j] = otherWord(rng, token);
    }
  }
  let field = 0;
  const edited = turns.map((turn) => {
    const action = (fields[field++] as string[]).join("");
    const observation = (fields[field++] as string[]).join("");
    return { ...turn, action, observation };
  });
  return { turns: edited, edits, words: eligible.length };
}

function otherWord(rng: Rng, not: string): string {
  for (;;) {
    const w = word(rng);
    if (w !== not && EDITABLE.test(w) && !LITERALS.has(w)) return w;
  }
}

// ---------------------------------------------------------------------------------------------
// Substance and boilerplate

/** mcp `initialize` and `tools/list`: the setup every transcript of a server repeats. */
export function isSetupTurn(domain: Domain, turn: Turn): boolean {
  return domain === "mcp" && /"method": "(initialize|tools\/list)"/.test(turn.action);
}

/**
 * Turns of `domain` from fresh synthetic trajectories, until they hold `minWords` words and
 * `minTurns` turns; turns whose observation has fewer than `minObservationWords` words are
 * skipped (benchmark episodes keep only turns with something to match).
 */
export function substanceTurns(
  domain: Domain,
  rng: Rng,
  p: DomainParams,
  {
    minWords,
    minTurns = 1,
    maxTurns = Number.POSITIVE_INFINITY,
    minObservationWords = 0,
  }: {
    minWords: number;
    minTurns?: number;
    maxTurns?: number;
    minObservationWords?: number;
  },
): Turn[] {
  const turns: Turn[] = [];
  let total = 0;
  for (let round = 0; (total < minWords || turns.length < minTurns) && turns.length < maxTurns; round++) {
    if (round > 200) throw new Error(`planted corpus: cannot find ${minWords} words of ${domain} turns`);
    for (const turn of GENERATORS[domain](rng, "", p).turns) {
      if (isSetupTurn(domain, turn) || tokenCount(turn.observation) < minObservationWords) continue;
      turns.push(turn);
      total += tokenCount(turn.action) + tokenCount(turn.observation);
      if ((total >= minWords && turns.length >= minTurns) || turns.length >= maxTurns) break;
    }
  }
  return turns;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

function listing(rng: Rng, lines: number): string {
  const out = [`total ${rng.int(40, 400)}`, "drwxr-xr-x  9 root root 4096 Mar  3 11:02 .", "drwxr-xr-x 21 root root 4096 Mar  3 10:58 .."];
  for (let i = 0; i < lines; i++) {
    const dir = rng.chance(0.3);
    const name = dir ? techWord(rng) : `${identifier(rng)}.${rng.pick(["py", "md", "toml", "cfg", "txt", "json", "sh"])}`;
    out.push(
      `${dir ? "drwxr-xr-x" : "-rw-r--r--"} ${rng.int(1, 9)} root root ${String(dir ? 4096 : rng.int(60, 99999)).padStart(5)} Mar  ${rng.int(1, 3)} ${String(rng.int(0, 23)).padStart(2, "0")}:${String(rng.int(0, 59)).padStart(2, "0")} ${name}`,
    );
  }
  return out.join("\n");
}

function readme(rng: Rng, words: number): string {
  const parts = [`# ${capitalize(techWord(rng))} ${capitalize(word(rng))}`, "", paragraph(rng, 3)];
  let count = tokenCount(parts.join("\n"));
  while (count < words) {
    const part = rng.chance(0.3) ? `## ${capitalize(words2(rng))}` : paragraph(rng, rng.int(2, 4));
    parts.push("", part);
    count += tokenCount(part);
  }
  return parts.join("\n");
}

const words2 = (rng: Rng) => words(rng, 2);

function mcpSetup(rng: Rng, targetWords: number): Turn[] {
  const server = `${techWord(rng)}-${word(rng)}-server`;
  const initialize: Turn = {
    action: json({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ExampleClient", version: "1.0.0" } },
    }),
    observation: json({
      jsonrpc: "2.0",
      id: 1,
      result: {
        capabilities: { logging: {}, tools: { listChanged: true } },
        protocolVersion: "2025-06-18",
        serverInfo: { name: server, version: `v${rng.int(1, 3)}.${rng.int(0, 9)}.0` },
      },
    }),
  };
  const tools: unknown[] = [];
  let count = tokenCount(initialize.observation);
  while (count < targetWords) {
    const args = Array.from({ length: rng.int(1, 4) }, () => identifier(rng));
    const tool = {
      name: `${word(rng)}_${techWord(rng)}`,
      description: `${sentence(rng, 8, 20)} ${sentence(rng, 6, 14)}`,
      inputSchema: {
        type: "object",
        required: args.slice(0, 1),
        properties: Object.fromEntries(
          args.map((a) => [a, { type: rng.pick(["string", "integer", "boolean"]), description: sentence(rng, 4, 10) }]),
        ),
      },
    };
    tools.push(tool);
    count += tokenCount(json(tool));
  }
  const list: Turn = {
    action: json({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    observation: json({ jsonrpc: "2.0", id: 2, result: { tools } }),
  };
  return [initialize, list];
}

/**
 * Boilerplate turns every member of a group starts with: what a sandbox shows before the work
 * begins. terminal / swe: `ls -la` of the workspace and its README; mcp: `initialize` and a long
 * `tools/list`; web / android / os / search: the environment's first screen or response.
 * terminal, swe and mcp are sized to about `targetWords`; the others have their natural size.
 */
export function boilerplateTurns(domain: Domain, rng: Rng, p: DomainParams, targetWords: number): Turn[] {
  const wrap = (output: string) => `<returncode>0</returncode>\n<output>\n${output}\n</output>`;
  switch (domain) {
    case "terminal":
    case "swe": {
      const lines = Math.max(6, Math.round((targetWords * 0.4) / 9));
      const list = listing(rng, lines);
      const text = readme(rng, targetWords - tokenCount(list));
      return domain === "swe"
        ? [
            { action: "cd /testbed && ls -la", observation: wrap(list) },
            { action: "cd /testbed && cat README.md", observation: wrap(text) },
          ]
        : [
            { action: "ls -la", observation: list },
            { action: "cat README.md", observation: text },
          ];
    }
    case "mcp":
      return mcpSetup(rng, targetWords);
    case "web": {
      const first = webTrajectory(rng, "", p);
      return [{ action: `goto('https://portal.example.org/${word(rng)}')`, observation: first.initialObservation ?? "" }];
    }
    case "android": {
      const first = androidTrajectory(rng, "", p);
      const pkg = String(first.meta?.package ?? "com.example.app");
      return [
        {
          action: JSON.stringify({ event_type: "intent", intent: `am start -n ${pkg}/.MainActivity` }),
          observation: first.initialObservation ?? "",
        },
      ];
    }
    case "os": {
      const first = osTrajectory(rng, "", p);
      return [{ action: "pyautogui.hotkey('super')", observation: first.initialObservation ?? "" }];
    }
    case "search":
      return searchTrajectory(rng, "", p).turns.slice(0, 1);
  }
}

/** A long system prompt for an environment (shared by a hard-negative group or a benchmark's episodes). */
export function environmentPrompt(domain: Domain, rng: Rng, name: string): string {
  return [
    `You are an agent working in the ${domain} environment "${name}". Each of your messages is one action; the environment answers with what it shows.`,
    paragraph(rng, 4),
    `Rules: ${sentence(rng, 8, 16)} ${sentence(rng, 8, 16)} ${sentence(rng, 8, 16)}`,
  ].join("\n\n");
}

// ---------------------------------------------------------------------------------------------
// AgentWorldBench layout

export interface BenchmarkEpisode {
  id: string;
  domain: Domain;
  system: string;
  turns: Turn[];
  /** How many leading turns are the environment's boilerplate (shared by every episode of the domain). */
  boilerplate: number;
}

/** The AgentWorldBench rows of one episode: one per evaluated turn, each carrying the history up to it. */
export function agentWorldBenchRows(episode: BenchmarkEpisode): string[] {
  const prompts = episode.turns.map((turn, i) => `### Turn ${i + 1}\n**Action:**\n${turn.action}`);
  const responses = episode.turns.map((turn) => `**Environment Observation:**\n${turn.observation}`);
  return episode.turns.map((_, i) =>
    JSON.stringify({
      task: episode.domain,
      id: episode.id,
      prompt: prompts.slice(0, i + 1),
      response: responses.slice(0, i + 1),
      current_prompt: prompts[i],
      system_str: episode.system,
      turn_idx: i + 1,
      total_turns: episode.turns.length,
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Similarity (the generator's own measure, to keep negatives apart)

/**
 * Word 5-gram shingles of a trajectory's turns, hashed to 32 bits: lowercase alphanumeric words,
 * every word holding a digit read as "0" (so volatile values, ids and sizes do not count).
 * An approximation of what near-dedup compares, good enough to keep negatives well apart.
 */
export function shingles(turns: readonly Turn[], n = 5): Set<number> {
  const out = new Set<number>();
  for (const turn of turns) {
    const tokens = `${turn.action}\n${turn.observation}`
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((t) => t.length > 0)
      .map((t) => (/\d/.test(t) ? "0" : t));
    for (let i = 0; i + n <= tokens.length; i++) {
      let h = 0x811c9dc5;
      for (let k = i; k < i + n; k++) {
        const t = tokens[k] as string;
        for (let c = 0; c < t.length; c++) h = Math.imul(h ^ t.charCodeAt(c), 0x01000193);
        h = Math.imul(h ^ 32, 0x01000193);
      }
      out.add(h >>> 0);
    }
  }
  return out;
}

export function jaccard(a: Set<number>, b: Set<number>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const x of small) if (large.has(x)) shared += 1;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}
